// Hostile input through the C ABI (the cases of tests/hostile.rs): a 1 MiB
// id then 20 000 events, ids at and past max_id_len, huge server retry.
#include <gtest/gtest.h>

#include <string>

#include "common.hpp"

namespace {

std::string long_id_then_events(size_t id_len, int events) {
  std::string s = "id: " + std::string(id_len, 'x') + "\n";
  for (int i = 0; i < events; i++) s += "data: " + std::to_string(i) + "\n\n";
  return s;
}

/// Counts events and distinct (id pointer, id length, id_generation) triples.
struct IdWatch {
  int events = 0;
  int generations = 0;
  uint64_t last_generation = UINT64_MAX;
  size_t id_len = 0;
  bool id_absent = true;
  static int callback(void *user_data, const ssefold_sse_event *e) {
    auto *w = static_cast<IdWatch *>(user_data);
    w->events++;
    if (e->id_generation != w->last_generation) {
      w->generations++;
      w->last_generation = e->id_generation;
    }
    w->id_absent = e->id.ptr == nullptr;
    w->id_len = e->id.len;
    return 0;
  }
};

}  // namespace

TEST(Hostile, LongIdIsRefusedByDefaultAndDecodingGoesOn) {
  ssefold_sse_decoder_config cfg;
  ASSERT_EQ(ssefold_sse_decoder_config_default(&cfg), SSEFOLD_RESULT_OK);
  EXPECT_EQ(cfg.max_id_len, 4096u);
  ssefold_sse_decoder *d = nullptr;
  ASSERT_EQ(ssefold_sse_decoder_new(&cfg, &d), SSEFOLD_RESULT_OK);
  IdWatch w;
  ASSERT_EQ(ssefold_sse_decoder_set_callback(d, &IdWatch::callback, &w), SSEFOLD_RESULT_OK);
  std::string input = long_id_then_events(1 << 20, 20000);
  std::vector<ssefold_result> errors = feed_chunks(d, input, 64 << 10);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], SSEFOLD_RESULT_SSE_ID_TOO_LONG);
  EXPECT_EQ(w.events, 19999);
  EXPECT_TRUE(w.id_absent);
  EXPECT_STRNE(ssefold_result_str(SSEFOLD_RESULT_SSE_ID_TOO_LONG), "unknown ssefold_result");
  ssefold_sse_decoder_free(d);
}

TEST(Hostile, RaisedIdLimitSharesOneGeneration) {
  ssefold_sse_decoder_config cfg;
  ssefold_sse_decoder_config_default(&cfg);
  cfg.max_id_len = 2 << 20;
  ssefold_sse_decoder *d = nullptr;
  ASSERT_EQ(ssefold_sse_decoder_new(&cfg, &d), SSEFOLD_RESULT_OK);
  IdWatch w;
  ssefold_sse_decoder_set_callback(d, &IdWatch::callback, &w);
  EXPECT_TRUE(feed_chunks(d, long_id_then_events(1 << 20, 2000), 4096).empty());
  EXPECT_EQ(w.events, 2000);
  EXPECT_EQ(w.generations, 1) << "the id did not change: one generation";
  EXPECT_EQ(w.id_len, 1u << 20);
  EXPECT_TRUE(feed_chunks(d, "id: 1\ndata: a\n\nid: 2\ndata: b\n\ndata: c\n\n", 7).empty());
  EXPECT_EQ(w.generations, 3);
  ssefold_sse_decoder_free(d);
}

TEST(Hostile, IdAtTheLimitIsAcceptedAndZeroLimitIsInvalid) {
  ssefold_sse_decoder_config cfg;
  ssefold_sse_decoder_config_default(&cfg);
  cfg.max_id_len = 0;
  ssefold_sse_decoder *d = nullptr;
  EXPECT_EQ(ssefold_sse_decoder_new(&cfg, &d), SSEFOLD_RESULT_INVALID_ARGUMENT);
  cfg.max_id_len = 3;
  ASSERT_EQ(ssefold_sse_decoder_new(&cfg, &d), SSEFOLD_RESULT_OK);
  Collector c;
  ssefold_sse_decoder_set_callback(d, &Collector::callback, &c);
  std::vector<ssefold_result> errors = feed_chunks(d, "id: abc\ndata: 1\n\nid: abcd\ndata: 2\n\ndata: 3\n\n", 1 << 10);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], SSEFOLD_RESULT_SSE_ID_TOO_LONG);
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].data, "3");
  EXPECT_EQ(c.events[1].id, std::optional<std::string>("abc")) << "the id in force is kept";
  ssefold_sse_decoder_free(d);
}

TEST(Hostile, HugeServerRetryIsCappedByThePolicy) {
  ssefold_reconnect_policy p;
  ASSERT_EQ(ssefold_reconnect_policy_default(&p), SSEFOLD_RESULT_OK);
  EXPECT_EQ(p.max_server_retry_ms, 600000u);
  for (const char *text : {"99999999999", "18446744073709551615", "99999999999999999999999999"}) {
    ssefold_sse_decoder *d = nullptr;
    ASSERT_EQ(ssefold_sse_decoder_new(nullptr, &d), SSEFOLD_RESULT_OK);
    Collector c;
    ssefold_sse_decoder_set_callback(d, &Collector::callback, &c);
    EXPECT_TRUE(feed_chunks(d, std::string("retry: ") + text + "\ndata: x\n\n", 1 << 10).empty());
    bool has = false;
    uint64_t retry = 0;
    ASSERT_EQ(ssefold_sse_decoder_reconnection_time(d, &has, &retry), SSEFOLD_RESULT_OK);
    ASSERT_TRUE(has);
    uint64_t ms = 0;
    ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, &retry, 0.5, &ms), SSEFOLD_RESULT_OK);
    EXPECT_EQ(ms, 600000u) << text;
    ssefold_sse_decoder_free(d);
  }
  uint64_t huge = UINT64_MAX, ms = 0;
  p.max_server_retry_ms = 5000;
  ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, &huge, 0.5, &ms), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ms, 5000u);
  p.max_server_retry_ms = 0;  // 0: the default
  ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, &huge, 0.5, &ms), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ms, 600000u);
  uint64_t small = 250;
  ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, 3, &small, 0.5, &ms), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ms, 250u) << "below the cap the server's value wins";
}

// Lone surrogate escapes and stray terminal events (tests/hostile.rs).
namespace {

std::string anthropic_turn(const std::string &lit) {
  return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\","
         "\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"usage\":{}}}\n\n"
         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
         "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
         "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
         "\"delta\":{\"type\":\"text_delta\",\"text\":" +
         lit +
         "}}\n\n"
         "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
         "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
}

std::string chat_turn(const std::string &lit) {
  const std::string head = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":";
  return head + "[{\"index\":0,\"delta\":{\"content\":" + lit + "},\"finish_reason\":null}]}\n\n" + head +
         "[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
}

struct Folded {
  std::string text;
  std::vector<std::string> warnings;  // the warning events' JSON
  bool finished = false;
  static void callback(void *user_data, const ssefold_stream_event *e) {
    auto *f = static_cast<Folded *>(user_data);
    if (e->kind == SSEFOLD_STREAM_EVENT_KIND_TEXT_DELTA) f->text += S(e->text);
    if (e->kind == SSEFOLD_STREAM_EVENT_KIND_WARNING) f->warnings.push_back(S(e->json));
  }
};

Folded fold(uint32_t provider, const std::string &body) {
  ssefold_stream *s = nullptr;
  Folded f;
  EXPECT_EQ(ssefold_stream_new(provider, nullptr, &s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_stream_set_callback(s, &Folded::callback, &f, true), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_stream_feed(s, B(body), body.size()), SSEFOLD_RESULT_OK);
  f.finished = ssefold_stream_finish(s) == SSEFOLD_RESULT_OK;
  ssefold_stream_free(s);
  return f;
}

bool has_code(const Folded &f, const std::string &code) {
  return f.warnings.size() == 1 && f.warnings[0].find("\"code\":\"" + code + "\"") != std::string::npos;
}

}  // namespace

TEST(Hostile, LoneSurrogateInATextDeltaIsReplacementCharacterWithAWarning) {
  const std::string lit = "\"broken emoji: \\ud83d\"";
  for (const auto &[provider, body] : {std::pair{SSEFOLD_PROVIDER_ANTHROPIC, anthropic_turn(lit)},
                                       std::pair{SSEFOLD_PROVIDER_OPENAI_CHAT, chat_turn(lit)},
                                       std::pair{SSEFOLD_PROVIDER_AUTO, chat_turn(lit)}}) {
    Folded f = fold(provider, body);
    EXPECT_TRUE(f.finished) << provider;
    EXPECT_EQ(f.text, "broken emoji: \xEF\xBF\xBD") << provider;
    EXPECT_TRUE(has_code(f, "lone_surrogate")) << provider;
  }
}

TEST(Hostile, StrayTerminalFirstIsAWarningNotTheEnd) {
  const std::string stop = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  for (const auto &[provider, body] :
       {std::pair{SSEFOLD_PROVIDER_ANTHROPIC, stop + anthropic_turn("\"hi\"")},
        std::pair{SSEFOLD_PROVIDER_OPENAI_CHAT, "data: [DONE]\n\n" + chat_turn("\"hi\"")},
        std::pair{SSEFOLD_PROVIDER_AUTO, "data: [DONE]\n\n" + anthropic_turn("\"hi\"")}}) {
    Folded f = fold(provider, body);
    EXPECT_TRUE(f.finished) << provider;
    EXPECT_EQ(f.text, "hi") << provider;
    EXPECT_TRUE(has_code(f, "terminal_before_start")) << provider;
  }
  EXPECT_FALSE(fold(SSEFOLD_PROVIDER_OPENAI_CHAT, "data: [DONE]\n\n").finished);
}
