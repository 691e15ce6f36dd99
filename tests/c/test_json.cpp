// Partial JSON through the C ABI: every function, every error path.
#include <gtest/gtest.h>

#include "common.hpp"

namespace {

struct Seen {
  std::vector<std::string> log;  // "kind path payload"
  std::string content;           // string_append text at path ["content"]
  static void callback(void *user_data, const ssefold_path_event *e) {
    auto *s = static_cast<Seen *>(user_data);
    std::string path;
    for (size_t i = 0; i < e->path_len; i++) {
      const ssefold_path_segment &seg = e->path[i];
      path += seg.key.ptr ? "." + S(seg.key) : "[" + std::to_string(seg.index) + "]";
    }
    switch (e->kind) {
      case SSEFOLD_PATH_EVENT_KIND_CONTAINER_START:
        s->log.push_back("start " + path + (e->container == SSEFOLD_CONTAINER_KIND_ARRAY ? " array" : " object"));
        break;
      case SSEFOLD_PATH_EVENT_KIND_STRING_APPEND:
        s->log.push_back("append " + path + " " + S(e->text));
        if (path == ".content") s->content += S(e->text);
        break;
      case SSEFOLD_PATH_EVENT_KIND_VALUE_COMPLETE:
        s->log.push_back("complete " + path + " " + (e->value_json.ptr ? S(e->value_json) : "<absent>"));
        break;
    }
  }
};

struct Pj {
  ssefold_partial_json *p = nullptr;
  explicit Pj(const ssefold_partial_json_limits *l = nullptr) {
    EXPECT_EQ(ssefold_partial_json_new(l, &p), SSEFOLD_RESULT_OK);
  }
  ~Pj() { ssefold_partial_json_free(p); }
  ssefold_result push(const std::string &s) { return ssefold_partial_json_push(p, B(s), s.size()); }
  std::optional<std::string> value(bool partial_strings = true) {
    bool has = false;
    ssefold_str json{nullptr, 0};
    EXPECT_EQ(ssefold_partial_json_value(p, partial_strings, &has, &json), SSEFOLD_RESULT_OK);
    if (!has) return std::nullopt;
    return S(json);
  }
  std::string error() {
    ssefold_str s{nullptr, 0};
    EXPECT_EQ(ssefold_partial_json_last_error(p, &s), SSEFOLD_RESULT_OK);
    return S(s);
  }
};

}  // namespace

TEST(PartialJson, StreamsEventsAndFinishesStrictly) {
  Pj t;
  Seen seen;
  ASSERT_EQ(ssefold_partial_json_set_callback(t.p, &Seen::callback, &seen, false), SSEFOLD_RESULT_OK);
  const char *fragments[] = {"{\"path\": \"src/ma", "in.rs\", \"content\": \"fn main() {\\n", "}\", \"n\": [1, tr",
                             "ue]}"};
  EXPECT_EQ(t.value(), std::nullopt);
  for (const char *f : fragments) ASSERT_EQ(t.push(f), SSEFOLD_RESULT_OK) << t.error();
  EXPECT_EQ(seen.content, "fn main() {\n}");
  std::vector<std::string> want = {
      "start  object",
      "append .path src/ma",
      "append .path in.rs",
      "complete .path \"src/main.rs\"",
      "append .content fn main() {\n",
      "append .content }",
      "complete .content \"fn main() {\\n}\"",
      "start .n array",
      "complete .n[0] 1",
      "complete .n[1] true",
      "complete .n <absent>",
      "complete  <absent>",
  };
  EXPECT_EQ(seen.log, want);
  bool complete = false;
  uint64_t pushed = 0;
  ASSERT_EQ(ssefold_partial_json_status(t.p, &complete, &pushed), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(complete);
  size_t total = 0;
  for (const char *f : fragments) total += std::char_traits<char>::length(f);
  EXPECT_EQ(pushed, total);
  ssefold_str json{nullptr, 0};
  ASSERT_EQ(ssefold_partial_json_finish(t.p, &json), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(json), "{\"path\":\"src/main.rs\",\"content\":\"fn main() {\\n}\",\"n\":[1,true]}");
}

TEST(PartialJson, ContainerValuesOnRequest) {
  Pj t;
  Seen seen;
  ASSERT_EQ(ssefold_partial_json_set_callback(t.p, &Seen::callback, &seen, true), SSEFOLD_RESULT_OK);
  ASSERT_EQ(t.push("[{\"a\":1}]"), SSEFOLD_RESULT_OK);
  EXPECT_EQ(seen.log.back(), "complete  [{\"a\":1}]");
  EXPECT_EQ(seen.log[seen.log.size() - 2], "complete [0] {\"a\":1}");
  // Unregistering: pushing without a callback is fine.
  ASSERT_EQ(ssefold_partial_json_set_callback(t.p, nullptr, nullptr, false), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_partial_json_reset(t.p), SSEFOLD_RESULT_OK);
  size_t before = seen.log.size();
  ASSERT_EQ(t.push("[1]"), SSEFOLD_RESULT_OK);
  EXPECT_EQ(seen.log.size(), before);
}

TEST(PartialJson, BestEffortValueAtEveryPrefix) {
  const std::string doc = "{\"a\": \"text\", \"b\": [1, 2.5, null], \"c\": {\"d\": false}}";
  for (size_t i = 0; i <= doc.size(); i++) {
    Pj t;
    ASSERT_EQ(t.push(doc.substr(0, i)), SSEFOLD_RESULT_OK) << i;
    std::optional<std::string> v = t.value();
    if (i == 0) {
      EXPECT_EQ(v, std::nullopt);
    } else {
      ASSERT_TRUE(v.has_value()) << i;
    }
  }
  Pj t;
  ASSERT_EQ(t.push("{\"a\": \"te"), SSEFOLD_RESULT_OK);
  EXPECT_EQ(t.value(true), std::optional<std::string>("{\"a\":\"te\"}"));
  EXPECT_EQ(t.value(false), std::optional<std::string>("{}"));
  ssefold_str json;
  EXPECT_EQ(ssefold_partial_json_finish(t.p, &json), SSEFOLD_RESULT_JSON_INCOMPLETE);
  EXPECT_NE(t.error().find("incomplete JSON at byte 9"), std::string::npos) << t.error();
}

TEST(PartialJson, ErrorsAreStickyAndTyped) {
  Pj t;
  ASSERT_EQ(t.push("{\"a\": 1,"), SSEFOLD_RESULT_OK);
  EXPECT_EQ(t.push(" ]"), SSEFOLD_RESULT_JSON_INVALID);
  EXPECT_NE(t.error().find("invalid JSON"), std::string::npos) << t.error();
  EXPECT_EQ(t.push("\"b\": 2}"), SSEFOLD_RESULT_JSON_INVALID) << "sticky";
  ssefold_str json;
  EXPECT_EQ(ssefold_partial_json_finish(t.p, &json), SSEFOLD_RESULT_JSON_INVALID);
  EXPECT_EQ(t.value(), std::optional<std::string>("{\"a\":1}")) << "the value before the error";
  ASSERT_EQ(ssefold_partial_json_reset(t.p), SSEFOLD_RESULT_OK);
  ASSERT_EQ(t.push("7 "), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_partial_json_finish(t.p, &json), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(json), "7");

  ssefold_partial_json_limits limits;
  ASSERT_EQ(ssefold_partial_json_limits_default(&limits), SSEFOLD_RESULT_OK);
  EXPECT_EQ(limits.max_depth, 512u);
  EXPECT_EQ(limits.max_bytes, 64u << 20);
  limits.max_depth = 2;
  Pj deep(&limits);
  EXPECT_EQ(deep.push("[[["), SSEFOLD_RESULT_JSON_DEPTH_LIMIT);
  limits.max_depth = 512;
  limits.max_bytes = 4;
  Pj big(&limits);
  EXPECT_EQ(big.push("[1,2,3]"), SSEFOLD_RESULT_JSON_SIZE_LIMIT);
  EXPECT_NE(big.error().find("size limit"), std::string::npos) << big.error();
}

TEST(PartialJson, OneShotParse) {
  Pj t;
  bool has = true;
  ssefold_str json{nullptr, 0};
  ASSERT_EQ(ssefold_partial_json_parse(t.p, V("[1, 2,"), false, &has, &json), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has);
  EXPECT_EQ(S(json), "[1,2]");
  ASSERT_EQ(ssefold_partial_json_parse(t.p, V("{\"a\": \"te"), true, &has, &json), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(json), "{\"a\":\"te\"}");
  ASSERT_EQ(ssefold_partial_json_parse(t.p, V("  "), true, &has, &json), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(has);
  EXPECT_EQ(ssefold_partial_json_parse(t.p, V("[1}"), true, &has, &json), SSEFOLD_RESULT_JSON_INVALID);
  EXPECT_EQ(ssefold_partial_json_parse(t.p, ssefold_str{"\xff", 1}, true, &has, &json),
            SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
}

TEST(PartialJson, ArgumentErrors) {
  Pj t;
  bool b;
  uint64_t u;
  ssefold_str s;
  EXPECT_EQ(ssefold_partial_json_limits_default(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_new(nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_set_callback(nullptr, nullptr, nullptr, false), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_push(nullptr, nullptr, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_push(t.p, nullptr, 2), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_push(t.p, B("x"), SIZE_MAX), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ssefold_partial_json_push(t.p, nullptr, 0), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_partial_json_value(nullptr, true, &b, &s), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_value(t.p, true, nullptr, &s), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_value(t.p, true, &b, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_finish(nullptr, &s), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_finish(t.p, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_reset(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_status(nullptr, &b, &u), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_status(t.p, nullptr, &u), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_status(t.p, &b, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_parse(nullptr, V("1"), true, &b, &s), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_parse(t.p, V("1"), true, nullptr, &s), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_parse(t.p, V("1"), true, &b, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_last_error(nullptr, &s), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_partial_json_last_error(t.p, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_partial_json_free(nullptr);
}

namespace {
struct ReentrantJson {
  ssefold_partial_json *p;
  std::vector<ssefold_result> seen;
  static void callback(void *user_data, const ssefold_path_event *) {
    auto *r = static_cast<ReentrantJson *>(user_data);
    bool b;
    uint64_t u;
    r->seen.push_back(ssefold_partial_json_push(r->p, nullptr, 0));
    r->seen.push_back(ssefold_partial_json_status(r->p, &b, &u));
  }
};
}  // namespace

TEST(PartialJson, CallsFromTheCallbackAreRefused) {
  ReentrantJson r{nullptr, {}};
  ASSERT_EQ(ssefold_partial_json_new(nullptr, &r.p), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_partial_json_set_callback(r.p, &ReentrantJson::callback, &r, false), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_partial_json_push(r.p, B("[1]"), 3), SSEFOLD_RESULT_OK);
  ASSERT_FALSE(r.seen.empty());
  for (ssefold_result rc : r.seen) EXPECT_EQ(rc, SSEFOLD_RESULT_BAD_STATE);
  ssefold_partial_json_free(r.p);
}
