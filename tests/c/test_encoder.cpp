// The SSE encoder through the C ABI.
#include <gtest/gtest.h>

#include "common.hpp"

namespace {
struct Enc {
  ssefold_sse_encoder *e = nullptr;
  Enc() { EXPECT_EQ(ssefold_sse_encoder_new(&e), SSEFOLD_RESULT_OK); }
  ~Enc() { ssefold_sse_encoder_free(e); }
  std::string bytes() const {
    ssefold_bytes b{nullptr, 0};
    EXPECT_EQ(ssefold_sse_encoder_bytes(e, &b), SSEFOLD_RESULT_OK);
    return std::string(reinterpret_cast<const char *>(b.ptr), b.len);
  }
  std::string error() const {
    ssefold_str s{nullptr, 0};
    EXPECT_EQ(ssefold_sse_encoder_last_error(e, &s), SSEFOLD_RESULT_OK);
    return S(s);
  }
};
}  // namespace

TEST(Encoder, WritesEventsCommentsKeepAlivesAndRetry) {
  Enc t;
  uint64_t retry = 3000;
  ASSERT_EQ(ssefold_sse_encoder_event(t.e, V("delta"), V("a\r\nb\rc"), V("42"), &retry), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_encoder_event(t.e, ABSENT(), ABSENT(), ABSENT(), nullptr), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_encoder_event(t.e, ABSENT(), V("x"), V(""), nullptr), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_encoder_comment(t.e, V("hi\nthere")), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_encoder_keep_alive(t.e), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_encoder_retry(t.e, 250), SSEFOLD_RESULT_OK);
  EXPECT_EQ(t.bytes(),
            "event: delta\nid: 42\nretry: 3000\ndata: a\ndata: b\ndata: c\n\n"
            "data:\n\n"
            "id:\ndata: x\n\n"
            ": hi\n: there\n"
            ":\n"
            "retry: 250\n\n");
  EXPECT_EQ(t.error(), "");
  ASSERT_EQ(ssefold_sse_encoder_clear(t.e), SSEFOLD_RESULT_OK);
  EXPECT_EQ(t.bytes(), "");
}

TEST(Encoder, RefusesInjectionAndWritesNothing) {
  Enc t;
  EXPECT_EQ(ssefold_sse_encoder_event(t.e, V("a\nb"), V("x"), ABSENT(), nullptr), SSEFOLD_RESULT_ENCODE_LINE_BREAK);
  EXPECT_NE(t.error().find("event"), std::string::npos) << t.error();
  EXPECT_EQ(ssefold_sse_encoder_event(t.e, ABSENT(), V("x"), V("1\r"), nullptr), SSEFOLD_RESULT_ENCODE_LINE_BREAK);
  EXPECT_NE(t.error().find("id"), std::string::npos) << t.error();
  std::string nul("1\0", 2);
  EXPECT_EQ(ssefold_sse_encoder_event(t.e, ABSENT(), V("x"), V(nul), nullptr), SSEFOLD_RESULT_ENCODE_NUL_IN_ID);
  EXPECT_NE(t.error().find("NUL"), std::string::npos) << t.error();
  EXPECT_EQ(t.bytes(), "");
}

TEST(Encoder, ArgumentErrors) {
  Enc t;
  ssefold_str bad_utf8{"\xff", 1};
  ssefold_str null_with_len{nullptr, 3};
  EXPECT_EQ(ssefold_sse_encoder_event(t.e, bad_utf8, V("x"), ABSENT(), nullptr),
            SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  EXPECT_EQ(ssefold_sse_encoder_event(t.e, ABSENT(), null_with_len, ABSENT(), nullptr),
            SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_str huge{"x", SIZE_MAX};
  EXPECT_EQ(ssefold_sse_encoder_comment(t.e, huge), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ssefold_sse_encoder_comment(t.e, bad_utf8), SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  EXPECT_NE(t.error(), "");
  EXPECT_EQ(t.bytes(), "");
  ssefold_bytes b;
  ssefold_str s;
  EXPECT_EQ(ssefold_sse_encoder_new(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_event(nullptr, ABSENT(), V("x"), ABSENT(), nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_comment(nullptr, V("x")), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_keep_alive(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_retry(nullptr, 1), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_clear(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_bytes(nullptr, &b), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_bytes(t.e, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_last_error(nullptr, &s), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_encoder_last_error(t.e, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_sse_encoder_free(nullptr);
}

TEST(Encoder, RoundTripsThroughTheDecoder) {
  Enc t;
  const std::vector<OwnedEvent> want = {
      {"message", "plain", std::nullopt, std::nullopt},
      {"delta", "multi\nline\n", std::string("id-1"), 10},
      {"message", "", std::string(""), std::nullopt},
  };
  for (const OwnedEvent &e : want) {
    uint64_t retry = e.retry.value_or(0);
    ASSERT_EQ(ssefold_sse_encoder_event(t.e, e.event == "message" ? ABSENT() : V(e.event), V(e.data),
                                        e.id ? V(*e.id) : ABSENT(), e.retry ? &retry : nullptr),
              SSEFOLD_RESULT_OK);
    ASSERT_EQ(ssefold_sse_encoder_keep_alive(t.e), SSEFOLD_RESULT_OK);
  }
  ssefold_sse_decoder *d = nullptr;
  Collector c;
  ASSERT_EQ(ssefold_sse_decoder_new(nullptr, &d), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_decoder_set_callback(d, &Collector::callback, &c), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(feed_chunks(d, t.bytes(), 5).empty());
  ssefold_sse_decoder_free(d);
  EXPECT_EQ(c.events, want);
}
