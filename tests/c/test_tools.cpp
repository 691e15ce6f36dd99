// ssefold_tool_scheduler: the flow through the C API, every misuse status,
// the next-request shapes, and the C++ wrapper.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common.hpp"
#include "ssefold.hpp"

namespace {

struct Sched {
  ssefold_tool_scheduler *p = nullptr;
  explicit Sched(const ssefold_tool_scheduler_config *config = nullptr) {
    EXPECT_EQ(ssefold_tool_scheduler_new(config, &p), SSEFOLD_RESULT_OK);
  }
  ~Sched() { ssefold_tool_scheduler_free(p); }
  std::vector<std::string> startable() {
    const ssefold_str *ids = nullptr;
    size_t n = 99;
    EXPECT_EQ(ssefold_tool_scheduler_startable(p, &ids, &n), SSEFOLD_RESULT_OK);
    std::vector<std::string> out;
    for (size_t i = 0; i < n; i++) out.push_back(S(ids[i]));
    return out;
  }
  ssefold_result finish(const char *id, const char *output, bool is_error, bool *recorded = nullptr,
                        std::vector<std::string> *cancel = nullptr) {
    bool rec = false;
    const ssefold_str *ids = nullptr;
    size_t n = 0;
    ssefold_result rc = ssefold_tool_scheduler_finish(p, V(id), V(output), is_error, &rec, &ids, &n);
    if (recorded) *recorded = rec;
    if (cancel && rc == SSEFOLD_RESULT_OK)
      for (size_t i = 0; i < n; i++) cancel->push_back(S(ids[i]));
    return rc;
  }
  std::vector<std::string> results() {
    const ssefold_tool_result *r = nullptr;
    size_t n = 0;
    EXPECT_EQ(ssefold_tool_scheduler_results(p, &r, &n), SSEFOLD_RESULT_OK);
    std::vector<std::string> out;
    for (size_t i = 0; i < n; i++) out.push_back(S(r[i].call_id) + "=" + S(r[i].output));
    return out;
  }
  std::vector<std::string> events() {
    std::vector<std::string> out;
    for (;;) {
      ssefold_tool_event e;
      bool has = true;
      EXPECT_EQ(ssefold_tool_scheduler_next_event(p, &e, &has), SSEFOLD_RESULT_OK);
      if (!has) return out;
      out.push_back(S(e.name) + ":" + S(e.call_id));
    }
  }
  std::string error() {
    ssefold_str s{nullptr, 0};
    EXPECT_EQ(ssefold_tool_scheduler_last_error(p, &s), SSEFOLD_RESULT_OK);
    return S(s);
  }
};

const ssefold_tool_options SAFE{false, false, SSEFOLD_TOOL_START_AUTO, false};
const ssefold_tool_options EXCLUSIVE{true, false, SSEFOLD_TOOL_START_AUTO, false};

}  // namespace

TEST(ToolScheduler, ParallelCallsRunTogetherAndResultsComeBackInCallOrder) {
  Sched s;
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("c1"), V("read"), V("{\"p\":1}"), SAFE), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("c2"), V("grep"), V("{}"), SAFE), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("c3"), V("bash"), V("{}"), EXCLUSIVE), SSEFOLD_RESULT_OK);
  EXPECT_EQ(s.startable(), (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(s.finish("c2", "two", false), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(s.results().empty()) << "c1 is first and unfinished";
  EXPECT_TRUE(s.startable().empty()) << "the exclusive call waits for c1";
  EXPECT_EQ(s.finish("c1", "one", false), SSEFOLD_RESULT_OK);
  EXPECT_EQ(s.results(), (std::vector<std::string>{"c1=one", "c2=two"}));
  EXPECT_EQ(s.startable(), (std::vector<std::string>{"c3"}));
  size_t calls = 0, running = 0;
  bool settled = true;
  ASSERT_EQ(ssefold_tool_scheduler_status(s.p, &calls, &running, &settled), SSEFOLD_RESULT_OK);
  EXPECT_EQ(calls, 3u);
  EXPECT_EQ(running, 1u);
  EXPECT_FALSE(settled);
  EXPECT_EQ(s.finish("c3", "exit 2", true), SSEFOLD_RESULT_OK);
  EXPECT_EQ(s.results(), (std::vector<std::string>{"c3=exit 2"}));
  EXPECT_EQ(s.events(), (std::vector<std::string>{
                            "tool_execution_started:c1", "tool_execution_started:c2", "tool_execution_finished:c2",
                            "tool_execution_finished:c1", "tool_execution_started:c3", "tool_execution_finished:c3"}));
  ASSERT_EQ(ssefold_tool_scheduler_status(s.p, nullptr, nullptr, &settled), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(settled);
}

TEST(ToolScheduler, EventsAreTypedAndCarryTheirJson) {
  Sched s;
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("c1"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_OK);
  s.startable();
  ASSERT_EQ(ssefold_tool_scheduler_update(s.p, V("c1"), V("10%")), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_tool_scheduler_update(s.p, V("c1"), V("50%")), SSEFOLD_RESULT_OK);
  ASSERT_EQ(s.finish("c1", "done", true), SSEFOLD_RESULT_OK);
  ssefold_tool_event e;
  bool has = false;
  ASSERT_EQ(ssefold_tool_scheduler_next_event(s.p, &e, &has), SSEFOLD_RESULT_OK);
  ASSERT_TRUE(has);
  EXPECT_EQ(e.kind, SSEFOLD_TOOL_EVENT_KIND_STARTED);
  EXPECT_EQ(S(e.tool_name), "read");
  EXPECT_EQ(S(e.json), R"({"event":"tool_execution_started","call_id":"c1","name":"read"})");
  ASSERT_EQ(ssefold_tool_scheduler_next_event(s.p, &e, &has), SSEFOLD_RESULT_OK);
  EXPECT_EQ(e.kind, SSEFOLD_TOOL_EVENT_KIND_UPDATE);
  EXPECT_EQ(S(e.text), "50%") << "a queued update of the same call is replaced";
  EXPECT_EQ(e.tool_name.ptr, nullptr);
  ASSERT_EQ(ssefold_tool_scheduler_next_event(s.p, &e, &has), SSEFOLD_RESULT_OK);
  EXPECT_EQ(e.kind, SSEFOLD_TOOL_EVENT_KIND_FINISHED);
  EXPECT_TRUE(e.is_error);
  EXPECT_EQ(S(e.name), "tool_execution_finished");
  ASSERT_EQ(ssefold_tool_scheduler_next_event(s.p, &e, &has), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(has);
}

TEST(ToolScheduler, MisuseIsATypedStatusWithAMessageAndChangesNothing) {
  ssefold_tool_scheduler_config config = ssefold_tool_scheduler_config_default();
  EXPECT_EQ(config.max_concurrency, 0u);
  EXPECT_EQ(config.max_calls, 4096u);
  config.max_calls = 2;
  Sched s(&config);
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("a"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_tool_scheduler_add(s.p, V("a"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_TOOL_DUPLICATE_CALL_ID);
  EXPECT_NE(s.error().find("\"a\""), std::string::npos) << s.error();
  EXPECT_EQ(s.finish("a", "x", false), SSEFOLD_RESULT_TOOL_NOT_STARTED);
  EXPECT_EQ(s.finish("nope", "x", false), SSEFOLD_RESULT_TOOL_UNKNOWN_CALL_ID);
  EXPECT_EQ(ssefold_tool_scheduler_update(s.p, V("a"), V("x")), SSEFOLD_RESULT_TOOL_NOT_STARTED);
  const ssefold_tool_result *r = nullptr;
  size_t n = 0;
  EXPECT_EQ(ssefold_tool_scheduler_all_results(s.p, &r, &n), SSEFOLD_RESULT_TOOL_UNFINISHED);
  s.startable();
  EXPECT_EQ(s.finish("a", "x", false), SSEFOLD_RESULT_OK);
  EXPECT_EQ(s.error(), "") << "success clears the last error";
  EXPECT_EQ(s.finish("a", "x", false), SSEFOLD_RESULT_TOOL_ALREADY_FINISHED);
  EXPECT_EQ(ssefold_tool_scheduler_update(s.p, V("a"), V("x")), SSEFOLD_RESULT_TOOL_ALREADY_FINISHED);
  ASSERT_EQ(ssefold_tool_scheduler_add_unknown(s.p, V("b"), V("nosuch")), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_tool_scheduler_add(s.p, V("c"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_TOOL_TOO_MANY_CALLS);
  ssefold_str json{nullptr, 0};
  EXPECT_EQ(ssefold_tool_scheduler_tool_results(s.p, SSEFOLD_PROVIDER_AUTO, &json),
            SSEFOLD_RESULT_TOOL_UNSUPPORTED_PROVIDER);
  EXPECT_EQ(ssefold_tool_scheduler_tool_results(s.p, 77, &json), SSEFOLD_RESULT_INVALID_ARGUMENT);
  const ssefold_str *ids = nullptr;
  EXPECT_EQ(ssefold_tool_scheduler_discard(s.p, &ids, &n), SSEFOLD_RESULT_OK);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(ssefold_tool_scheduler_add(s.p, V("d"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_TOOL_ADD_AFTER_DISCARD);
  EXPECT_EQ(ssefold_tool_scheduler_all_results(s.p, &r, &n), SSEFOLD_RESULT_TOOL_DISCARDED);
  EXPECT_STREQ(ssefold_result_str(SSEFOLD_RESULT_TOOL_ADD_AFTER_DISCARD), "no tool call can be added after discard");
}

TEST(ToolScheduler, NullAndInvalidArgumentsAreRefused) {
  ssefold_tool_scheduler *p = nullptr;
  EXPECT_EQ(ssefold_tool_scheduler_new(nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_tool_scheduler_config zero{0, 0};
  EXPECT_EQ(ssefold_tool_scheduler_new(&zero, &p), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(ssefold_tool_scheduler_add(nullptr, V("a"), V("b"), V("{}"), SAFE), SSEFOLD_RESULT_NULL_PARAMETER);
  Sched s;
  EXPECT_EQ(ssefold_tool_scheduler_add(s.p, ABSENT(), V("b"), V("{}"), SAFE), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_tool_scheduler_add(s.p, V("a"), ABSENT(), V("{}"), SAFE), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_tool_scheduler_add(s.p, V("\xff"), V("b"), V("{}"), SAFE), SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  EXPECT_EQ(ssefold_tool_scheduler_startable(s.p, nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_tool_scheduler_next_event(s.p, nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  bool rec;
  size_t n;
  EXPECT_EQ(ssefold_tool_scheduler_finish(s.p, V("a"), V(""), false, &rec, nullptr, &n), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_tool_scheduler_free(nullptr);
}

TEST(ToolScheduler, InvalidInputAbortAndSiblingCancel) {
  Sched s;
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("bad"), V("read"), V("{\"p\":"), SAFE), SSEFOLD_RESULT_OK);
  ssefold_tool_options fails_all{false, true, SSEFOLD_TOOL_START_AUTO, false};
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("sh"), V("bash"), V("{}"), fails_all), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("rd"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_OK);
  EXPECT_EQ(s.startable(), (std::vector<std::string>{"sh", "rd"}));
  std::vector<std::string> cancel;
  EXPECT_EQ(s.finish("sh", "exit 1", true, nullptr, &cancel), SSEFOLD_RESULT_OK);
  EXPECT_EQ(cancel, std::vector<std::string>{"rd"});
  bool recorded = true;
  EXPECT_EQ(s.finish("rd", "late", false, &recorded), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(recorded) << "a cancelled call takes no late result";
  const ssefold_tool_result *r = nullptr;
  size_t n = 0;
  ASSERT_EQ(ssefold_tool_scheduler_all_results(s.p, &r, &n), SSEFOLD_RESULT_OK);
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(r[0].kind, SSEFOLD_TOOL_RESULT_KIND_INVALID_INPUT);
  EXPECT_EQ(r[1].kind, SSEFOLD_TOOL_RESULT_KIND_RAN);
  EXPECT_EQ(r[2].kind, SSEFOLD_TOOL_RESULT_KIND_CANCELLED);
  EXPECT_TRUE(r[2].is_error);

  Sched a;
  ASSERT_EQ(ssefold_tool_scheduler_add(a.p, V("x"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_OK);
  a.startable();
  const ssefold_str *ids = nullptr;
  ASSERT_EQ(ssefold_tool_scheduler_abort(a.p, V("user"), &ids, &n), SSEFOLD_RESULT_OK);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(S(ids[0]), "x");
  ASSERT_EQ(ssefold_tool_scheduler_add(a.p, V("y"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(a.startable().empty());
  EXPECT_EQ(a.results(), (std::vector<std::string>{"x=Aborted: user", "y=Aborted: user"}));
}

TEST(ToolScheduler, NextRequestShapes) {
  Sched s;
  ASSERT_EQ(ssefold_tool_scheduler_add(s.p, V("t1"), V("read"), V("{}"), SAFE), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_tool_scheduler_add_unknown(s.p, V("t2"), V("nosuch")), SSEFOLD_RESULT_OK);
  s.startable();
  ASSERT_EQ(s.finish("t1", "ok", false), SSEFOLD_RESULT_OK);
  ssefold_str json{nullptr, 0};
  ASSERT_EQ(ssefold_tool_scheduler_tool_results(s.p, SSEFOLD_PROVIDER_ANTHROPIC, &json), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(json),
            R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},)"
            R"({"type":"tool_result","tool_use_id":"t2","content":"No such tool available: nosuch","is_error":true}]})");
  ASSERT_EQ(ssefold_tool_scheduler_tool_results(s.p, SSEFOLD_PROVIDER_OPENAI_CHAT, &json), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(json), R"([{"role":"tool","tool_call_id":"t1","content":"ok"},)"
                     R"({"role":"tool","tool_call_id":"t2","content":"Error: No such tool available: nosuch"}])");
  ASSERT_EQ(ssefold_tool_scheduler_tool_results(s.p, SSEFOLD_PROVIDER_OPENAI_RESPONSES, &json), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(json), R"([{"type":"function_call_output","call_id":"t1","output":"ok"},)"
                     R"({"type":"function_call_output","call_id":"t2","output":"Error: No such tool available: nosuch"}])");
}

TEST(ToolScheduler, CppWrapperCopiesAndThrowsTypedErrors) {
  ssefold::ToolScheduler s;
  s.add("a", "read", "{}");
  s.add("b", "edit", "{}", /*exclusive=*/true);
  EXPECT_EQ(s.startable(), std::vector<std::string>{"a"});
  EXPECT_EQ(s.running(), 1u);
  auto f = s.finish("a", "A", false);
  EXPECT_TRUE(f.recorded);
  EXPECT_TRUE(f.cancel.empty());
  try {
    s.finish("a", "A", false);
    FAIL() << "finishing twice must throw";
  } catch (const ssefold::Error &e) {
    EXPECT_EQ(e.code(), SSEFOLD_RESULT_TOOL_ALREADY_FINISHED);
    EXPECT_NE(std::string(e.what()).find("already finished"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.startable(), std::vector<std::string>{"b"});
  s.update("b", "half");
  s.finish("b", "B", false);
  EXPECT_TRUE(s.is_settled());
  auto results = s.results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].output, "B");
  int events = 0;
  while (auto e = s.next_event()) events++;
  EXPECT_EQ(events, 5);
  EXPECT_EQ(s.tool_results(SSEFOLD_PROVIDER_OPENAI_CHAT).substr(0, 9), R"([{"role":)");
  s.discard();
  EXPECT_THROW(s.add("c", "read", "{}"), ssefold::Error);
}
