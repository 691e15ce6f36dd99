// The relay through the C ABI: provider bytes and pushed JSON events give
// the same browser bytes, host events, replay, keep-alive, headers, and
// every error path; plus the ssefold.hpp wrapper.
#include <algorithm>
#include <gtest/gtest.h>

#include "common.hpp"
#include "ssefold.hpp"

namespace {

std::string Bytes(ssefold_bytes b) { return b.len ? std::string(reinterpret_cast<const char *>(b.ptr), b.len) : ""; }

std::string Fixture() { return read_file(std::string(SSEFOLD_ROOT) + "/tests/fixtures/anthropic/interleaved_tools.sse"); }

std::string RelayLastError(const ssefold_relay *r) {
  ssefold_str s{nullptr, 0};
  EXPECT_EQ(ssefold_relay_last_error(r, &s), SSEFOLD_RESULT_OK);
  return S(s);
}

struct JsonEvents {
  std::vector<std::string> json;
  static void callback(void *user_data, const ssefold_stream_event *e) {
    static_cast<JsonEvents *>(user_data)->json.push_back(S(e->json));
  }
};

/// The browser bytes of `body` fed in `chunk`-byte pieces, then finished.
std::string RelayBytes(const std::string &body, size_t chunk, uint32_t format) {
  ssefold_relay_config config;
  EXPECT_EQ(ssefold_relay_config_default(format, &config), SSEFOLD_RESULT_OK);
  ssefold_relay *r = nullptr;
  EXPECT_EQ(ssefold_relay_new_with_stream(&config, SSEFOLD_PROVIDER_AUTO, nullptr, &r), SSEFOLD_RESULT_OK);
  std::string out;
  ssefold_bytes b{nullptr, 0};
  ssefold_result status = SSEFOLD_RESULT_PANIC;
  for (size_t at = 0; at < body.size(); at += chunk) {
    size_t n = std::min(chunk, body.size() - at);
    EXPECT_EQ(ssefold_relay_feed(r, B(body) + at, n, &b, &status), SSEFOLD_RESULT_OK);
    EXPECT_EQ(status, SSEFOLD_RESULT_OK);
    out += Bytes(b);
  }
  EXPECT_EQ(ssefold_relay_end_of_input(r, &b, &status), SSEFOLD_RESULT_OK);
  EXPECT_EQ(status, SSEFOLD_RESULT_OK);
  out += Bytes(b);
  EXPECT_EQ(ssefold_relay_finish(r, ABSENT(), &b), SSEFOLD_RESULT_OK);
  out += Bytes(b);
  ssefold_relay_free(r);
  return out;
}

}  // namespace

TEST(Relay, ProviderBytesInAnyChunkingGiveTheSameUiMessageStream) {
  std::string body = Fixture();
  std::string whole = RelayBytes(body, body.size(), SSEFOLD_RELAY_FORMAT_AI_SDK);
  EXPECT_NE(whole.find("data: {\"type\":\"start\"}"), std::string::npos) << whole;
  EXPECT_NE(whole.find("\"type\":\"tool-input-available\""), std::string::npos) << whole;
  EXPECT_NE(whole.find("\"finishReason\":\"tool-calls\""), std::string::npos) << whole;
  EXPECT_EQ(whole.substr(whole.size() - 14), "data: [DONE]\n\n");
  for (size_t chunk : {1, 7, 64}) EXPECT_EQ(RelayBytes(body, chunk, SSEFOLD_RELAY_FORMAT_AI_SDK), whole) << chunk;
  std::string catalog = RelayBytes(body, 13, SSEFOLD_RELAY_FORMAT_CATALOG);
  EXPECT_NE(catalog.find("event: tool-call\n"), std::string::npos) << catalog;
  EXPECT_NE(catalog.find("event: finish\n"), std::string::npos) << catalog;
  // Every event the catalog sent is one of its listed names.
  std::vector<std::string_view> names = ssefold::Relay::catalog_event_names();
  EXPECT_EQ(names.size(), 12u);
  for (size_t at = catalog.find("event: "); at != std::string::npos; at = catalog.find("event: ", at + 1)) {
    std::string name = catalog.substr(at + 7, catalog.find('\n', at) - at - 7);
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  ssefold_str past{nullptr, 0};
  EXPECT_EQ(ssefold_relay_catalog_event_name(names.size(), &past), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ssefold_relay_catalog_event_name(0, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
}

/// The `inputTextDelta`s of `bytes`, concatenated, and their number.
std::pair<std::string, size_t> ToolInputDeltas(const std::string &bytes) {
  std::string input;
  size_t n = 0;
  const std::string key = "\"inputTextDelta\":\"";
  for (size_t at = bytes.find(key); at != std::string::npos; at = bytes.find(key, at)) {
    at += key.size();
    size_t end = bytes.find("\"}\n\n", at);
    input += bytes.substr(at, end - at);
    n++;
  }
  return {input, n};
}

TEST(Relay, ToolInputIsCoalescedAndFlushedByTheHostsTimer) {
  // A call whose arguments come in several deltas in a row.
  std::string body = read_file(std::string(SSEFOLD_ROOT) + "/tests/fixtures/openai_responses/reasoning_text_tool.sse");
  ssefold_relay_config config;
  ASSERT_EQ(ssefold_relay_config_default(SSEFOLD_RELAY_FORMAT_AI_SDK, &config), SSEFOLD_RESULT_OK);
  EXPECT_EQ(config.tool_input_coalesce_bytes, 4096u);
  EXPECT_EQ(config.tool_input_coalesce_ms, 50u);
  // Off: every delta as it came; on: fewer deltas, the same text.
  config.tool_input_coalesce_bytes = 0;
  std::string plain;
  {
    ssefold::Relay relay(&config, SSEFOLD_PROVIDER_AUTO);
    plain = relay.feed(body).bytes;
    plain += relay.end_of_input().bytes;
  }
  config.tool_input_coalesce_bytes = 1 << 20;
  config.tool_input_coalesce_ms = 10;
  ssefold_relay *r = nullptr;
  ASSERT_EQ(ssefold_relay_new_with_stream(&config, SSEFOLD_PROVIDER_AUTO, nullptr, &r), SSEFOLD_RESULT_OK);
  ssefold_bytes b{nullptr, 0};
  ssefold_result status = SSEFOLD_RESULT_PANIC;
  ASSERT_EQ(ssefold_relay_tick(r, 1000, &b), SSEFOLD_RESULT_OK);
  EXPECT_EQ(b.len, 0u);
  std::string coalesced;
  for (size_t at = 0; at < body.size(); at += 50) {
    ASSERT_EQ(ssefold_relay_feed(r, B(body) + at, std::min<size_t>(50, body.size() - at), &b, &status),
              SSEFOLD_RESULT_OK);
    coalesced += Bytes(b);
    ASSERT_EQ(ssefold_relay_tick(r, 1005, &b), SSEFOLD_RESULT_OK);
    coalesced += Bytes(b);
  }
  ASSERT_EQ(ssefold_relay_flush(r, &b), SSEFOLD_RESULT_OK);
  coalesced += Bytes(b);
  ASSERT_EQ(ssefold_relay_end_of_input(r, &b, &status), SSEFOLD_RESULT_OK);
  coalesced += Bytes(b);
  EXPECT_EQ(ssefold_relay_tick(r, 1, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_relay_flush(nullptr, &b), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_relay_free(r);
  auto [plain_input, plain_n] = ToolInputDeltas(plain);
  auto [input, n] = ToolInputDeltas(coalesced);
  EXPECT_EQ(input, plain_input);
  EXPECT_LT(n, plain_n);
  EXPECT_FALSE(plain_input.empty());
}

TEST(Relay, AbortEndsTheRunWithAbort) {
  std::string body = Fixture();
  ssefold_relay *r = nullptr;
  ASSERT_EQ(ssefold_relay_new_with_stream(nullptr, SSEFOLD_PROVIDER_AUTO, nullptr, &r), SSEFOLD_RESULT_OK);
  ssefold_bytes b{nullptr, 0};
  ssefold_result status = SSEFOLD_RESULT_PANIC;
  ASSERT_EQ(ssefold_relay_feed(r, B(body), body.size() / 2, &b, &status), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_relay_abort(r, &b), SSEFOLD_RESULT_OK);
  std::string end = Bytes(b);
  EXPECT_NE(end.find("data: {\"type\":\"abort\"}\n\ndata: [DONE]\n\n"), std::string::npos) << end;
  EXPECT_EQ(end.find("\"type\":\"finish\""), std::string::npos) << end;
  EXPECT_EQ(ssefold_relay_abort(r, &b), SSEFOLD_RESULT_RELAY_FINISHED);
  EXPECT_EQ(ssefold_relay_abort(r, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_relay_free(r);
  ssefold_relay_config config;
  ASSERT_EQ(ssefold_relay_config_default(SSEFOLD_RELAY_FORMAT_CATALOG, &config), SSEFOLD_RESULT_OK);
  ssefold::Relay cat(&config);
  EXPECT_NE(cat.abort().find("\"finishReason\":\"cancelled\""), std::string::npos);
}

TEST(Relay, PushedJsonEventsGiveTheBytesOfFeed) {
  std::string body = Fixture();
  ssefold_stream *s = nullptr;
  JsonEvents events;
  ASSERT_EQ(ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, nullptr, &s), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_set_callback(s, &JsonEvents::callback, &events, true), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_feed(s, B(body), body.size()), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_finish(s), SSEFOLD_RESULT_OK);
  ssefold_stream_free(s);
  ASSERT_GT(events.json.size(), 5u);

  ssefold_relay *r = nullptr;
  ASSERT_EQ(ssefold_relay_new(nullptr, &r), SSEFOLD_RESULT_OK);
  std::string out;
  ssefold_bytes b{nullptr, 0};
  for (const std::string &e : events.json) {
    ASSERT_EQ(ssefold_relay_push_json(r, V(e), &b), SSEFOLD_RESULT_OK) << e << RelayLastError(r);
    out += Bytes(b);
  }
  ASSERT_EQ(ssefold_relay_finish(r, ABSENT(), &b), SSEFOLD_RESULT_OK);
  out += Bytes(b);
  EXPECT_EQ(out, RelayBytes(body, body.size(), SSEFOLD_RELAY_FORMAT_AI_SDK));
  ssefold_result status;
  EXPECT_EQ(ssefold_relay_feed(r, B(body), 1, &b, &status), SSEFOLD_RESULT_RELAY_NO_STREAM);
  ssefold_relay_free(r);
}

TEST(Relay, HostEventsReplayAndKeepAlive) {
  ssefold_relay_config config;
  ASSERT_EQ(ssefold_relay_config_default(SSEFOLD_RELAY_FORMAT_CATALOG, &config), SSEFOLD_RESULT_OK);
  config.keep_alive_ms = 1000;
  ssefold_relay *r = nullptr;
  ASSERT_EQ(ssefold_relay_new(&config, &r), SSEFOLD_RESULT_OK);
  ssefold_bytes b{nullptr, 0};
  uint64_t ms = 12;
  ASSERT_EQ(ssefold_relay_tool_result(r, V("call_1"), V("{\"temp\":21}"), false, &ms, &b), SSEFOLD_RESULT_OK);
  // The seed's catalog payloads, member for member (a call never shown has
  // no name).
  EXPECT_EQ(Bytes(b),
            "id: 1\nevent: tool-result\ndata: "
            "{\"id\":\"call_1\",\"name\":\"\",\"result\":{\"temp\":21},\"duration\":12}\n\n");
  ASSERT_EQ(ssefold_relay_approval_required(r, V("ap1"), V("call_2"), V("rm"), V("{\"path\":\"/\"}"),
                                            V("Remove /?"), &b),
            SSEFOLD_RESULT_OK);
  EXPECT_EQ(Bytes(b),
            "id: 2\nevent: approval-required\ndata: "
            "{\"approvalId\":\"ap1\",\"toolName\":\"rm\",\"input\":{\"path\":\"/\"},\"message\":\"Remove /?\","
            "\"toolCallId\":\"call_2\"}\n\n");
  char ts[32];
  size_t ts_len = 0;
  ASSERT_EQ(ssefold_relay_iso_timestamp(1736937000000u, reinterpret_cast<uint8_t *>(ts), sizeof ts, &ts_len),
            SSEFOLD_RESULT_OK);
  ASSERT_EQ(std::string(ts, ts_len), "2025-01-15T10:30:00.000Z");
  EXPECT_EQ(ssefold_relay_iso_timestamp(0, reinterpret_cast<uint8_t *>(ts), 10, &ts_len),
            SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ts_len, 24u);
  ASSERT_EQ(ssefold_relay_log(r, V("info"), V("line\nbreak"), V("{\"pageId\":\"p1\"}"), V("2025-01-15T10:30:00.000Z"),
                              V("trace-abc"), &b),
            SSEFOLD_RESULT_OK);
  EXPECT_EQ(Bytes(b),
            "id: 3\nevent: log\ndata: "
            "{\"level\":\"info\",\"message\":\"line\\nbreak\",\"metadata\":{\"pageId\":\"p1\"},"
            "\"timestamp\":\"2025-01-15T10:30:00.000Z\",\"traceId\":\"trace-abc\"}\n\n");
  ASSERT_EQ(ssefold_relay_error(r, V("tool failed"), V("tool_error"), true, &b), SSEFOLD_RESULT_OK);
  EXPECT_EQ(Bytes(b),
            "id: 4\nevent: error\ndata: {\"error\":\"tool failed\",\"code\":\"tool_error\",\"recoverable\":true}\n\n");
  // No provider turn opened a step: none is closed.
  ASSERT_EQ(ssefold_relay_finish_step(r, &b), SSEFOLD_RESULT_OK);
  EXPECT_EQ(Bytes(b), "");

  // Keep-alive by the host's clock.
  ASSERT_EQ(ssefold_relay_keep_alive(r, 0, &b), SSEFOLD_RESULT_OK);
  EXPECT_EQ(Bytes(b), "");
  ASSERT_EQ(ssefold_relay_keep_alive(r, 999, &b), SSEFOLD_RESULT_OK);
  EXPECT_EQ(Bytes(b), "");
  ASSERT_EQ(ssefold_relay_keep_alive(r, 1000, &b), SSEFOLD_RESULT_OK);
  EXPECT_EQ(Bytes(b), ": keep-alive\n\n");

  // Replay after event 2: events 3 and 4.
  uint64_t last = 0;
  bool finished = true;
  ASSERT_EQ(ssefold_relay_status(r, &last, &finished), SSEFOLD_RESULT_OK);
  EXPECT_EQ(last, 4u);
  EXPECT_FALSE(finished);
  ASSERT_EQ(ssefold_relay_replay_after(r, V("2"), &b), SSEFOLD_RESULT_OK);
  std::string replay = Bytes(b);
  EXPECT_EQ(replay.rfind("id: 3\n", 0), 0u) << replay;
  EXPECT_NE(replay.find("id: 4\n"), std::string::npos);
  EXPECT_EQ(ssefold_relay_replay_after(r, V("99"), &b), SSEFOLD_RESULT_RELAY_UNKNOWN_EVENT_ID);
  EXPECT_NE(RelayLastError(r).find("99"), std::string::npos);

  ASSERT_EQ(ssefold_relay_finish(r, V("{\"input_tokens\":3}"), &b), SSEFOLD_RESULT_OK);
  EXPECT_EQ(Bytes(b),
            "id: 5\nevent: finish\ndata: {\"finishReason\":\"stop\",\"usage\":{\"promptTokens\":3,"
            "\"completionTokens\":0,\"totalTokens\":3},\"stepCount\":0}\n\n");
  EXPECT_EQ(ssefold_relay_log(r, V("info"), V("late"), ABSENT(), V("t"), V("x"), &b), SSEFOLD_RESULT_RELAY_FINISHED);
  EXPECT_EQ(ssefold_relay_finish(r, ABSENT(), &b), SSEFOLD_RESULT_RELAY_FINISHED);
  ASSERT_EQ(ssefold_relay_status(r, &last, &finished), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(finished);
  ssefold_relay_free(r);
}

TEST(Relay, ReplayTooOldWhenTheBufferDroppedIt) {
  ssefold_relay_config config;
  ASSERT_EQ(ssefold_relay_config_default(SSEFOLD_RELAY_FORMAT_AI_SDK, &config), SSEFOLD_RESULT_OK);
  config.replay_bytes = 200;
  ssefold_relay *r = nullptr;
  ASSERT_EQ(ssefold_relay_new(&config, &r), SSEFOLD_RESULT_OK);
  ssefold_bytes b{nullptr, 0};
  for (int i = 0; i < 20; i++) ASSERT_EQ(ssefold_relay_log(r, V("info"), V("a log line"), ABSENT(), V("t"), V("x"), &b), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_relay_replay_after(r, V("1"), &b), SSEFOLD_RESULT_RELAY_REPLAY_TOO_OLD);
  EXPECT_NE(RelayLastError(r).find("no longer held"), std::string::npos) << RelayLastError(r);
  ssefold_relay_free(r);
}

TEST(Relay, ErrorsAreValues) {
  ssefold_relay *r = nullptr;
  ssefold_relay_config config;
  EXPECT_EQ(ssefold_relay_config_default(7, &config), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ssefold_relay_config_default(0, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ASSERT_EQ(ssefold_relay_config_default(0, &config), SSEFOLD_RESULT_OK);
  config.format = 9;
  EXPECT_EQ(ssefold_relay_new(&config, &r), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ssefold_relay_new(nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_relay_new_with_stream(nullptr, 42, nullptr, &r), SSEFOLD_RESULT_INVALID_ARGUMENT);
  ssefold_bytes b{nullptr, 0};
  EXPECT_EQ(ssefold_relay_log(nullptr, V("a"), V("b"), ABSENT(), V("t"), V("x"), &b), SSEFOLD_RESULT_NULL_PARAMETER);
  ASSERT_EQ(ssefold_relay_new(nullptr, &r), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_relay_log(r, V("a"), V("b"), ABSENT(), V("t"), V("x"), nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_relay_log(r, V("a"), V("b"), V("{not json"), V("t"), V("x"), &b), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ssefold_relay_push_json(r, V("{not json"), &b), SSEFOLD_RESULT_RELAY_INVALID_EVENT);
  EXPECT_EQ(ssefold_relay_push_json(r, V("{\"event\":\"text_delta\"}"), &b), SSEFOLD_RESULT_RELAY_INVALID_EVENT);
  EXPECT_NE(RelayLastError(r).find("part"), std::string::npos) << RelayLastError(r);
  EXPECT_EQ(ssefold_relay_tool_result(r, V("c"), V("[1,"), false, nullptr, &b), SSEFOLD_RESULT_INVALID_ARGUMENT);
  const char bad_utf8[] = "\xff\xfe";
  EXPECT_EQ(ssefold_relay_log(r, V("info"), ssefold_str{bad_utf8, 2}, ABSENT(), V("t"), V("x"), &b),
            SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  EXPECT_EQ(ssefold_relay_replay_after(r, V("1"), &b), SSEFOLD_RESULT_RELAY_UNKNOWN_EVENT_ID);
  size_t n = 0;
  ASSERT_EQ(ssefold_relay_header_count(r, &n), SSEFOLD_RESULT_OK);
  ssefold_str name, value;
  EXPECT_EQ(ssefold_relay_header(r, n, &name, &value), SSEFOLD_RESULT_INVALID_ARGUMENT);
  for (uint32_t code = 700; code <= 704; code++) EXPECT_STRNE(ssefold_result_str(code), "unknown ssefold_result");
  ssefold_relay_free(r);
  ssefold_relay_free(nullptr);
}

TEST(Relay, TheStreamFailureIsRelayedAndReported) {
  ssefold_relay *r = nullptr;
  ASSERT_EQ(ssefold_relay_new_with_stream(nullptr, SSEFOLD_PROVIDER_ANTHROPIC, nullptr, &r), SSEFOLD_RESULT_OK);
  std::string body = "event: message_start\ndata: {not json}\n\n";
  ssefold_bytes b{nullptr, 0};
  ssefold_result status = SSEFOLD_RESULT_OK;
  ASSERT_EQ(ssefold_relay_feed(r, B(body), body.size(), &b, &status), SSEFOLD_RESULT_OK);
  EXPECT_EQ(status, SSEFOLD_RESULT_STREAM_INVALID_JSON);
  EXPECT_NE(Bytes(b).find("\"type\":\"error\""), std::string::npos) << Bytes(b);
  ssefold_relay_free(r);
}

TEST(Relay, CppWrapper) {
  std::string body = Fixture();
  ssefold::Relay relay(nullptr, SSEFOLD_PROVIDER_AUTO);
  std::string out;
  for (size_t at = 0; at < body.size(); at += 100) {
    ssefold::Relayed r = relay.feed(std::string_view(body).substr(at, 100));
    EXPECT_EQ(r.stream_status, SSEFOLD_RESULT_OK);
    out += r.bytes;
  }
  out += relay.end_of_input().bytes;
  out += relay.tool_result("toolu_A", "{\"ok\":true}", false, 5);
  std::string meta = relay.message_metadata("{\"timings\":{\"ttfc_ms\":12}}");
  EXPECT_NE(meta.find("{\"type\":\"message-metadata\",\"messageMetadata\":{\"timings\":{\"ttfc_ms\":12}}}"),
            std::string::npos)
      << meta;
  EXPECT_THROW(relay.message_metadata("[1]"), ssefold::Error);
  out += meta + relay.finish();
  EXPECT_TRUE(relay.is_finished());
  EXPECT_NE(out.find("\"type\":\"tool-output-available\""), std::string::npos);
  bool has_ui_header = false;
  for (auto [name, value] : relay.headers())
    has_ui_header |= name == "x-vercel-ai-ui-message-stream" && value == "v1";
  EXPECT_TRUE(has_ui_header);
  try {
    relay.log("info", "late", ssefold::Relay::iso_timestamp(0), "trace");
    FAIL() << "expected ssefold::Error";
  } catch (const ssefold::Error &e) {
    EXPECT_EQ(e.code(), SSEFOLD_RESULT_RELAY_FINISHED);
    EXPECT_NE(std::string(e.what()).find("finished"), std::string::npos);
  }
  ssefold::Relay pushed;
  EXPECT_THROW(pushed.push_json("[]"), ssefold::Error);
  EXPECT_EQ(pushed.keep_alive(0), "");
  ssefold::Relay moved = std::move(pushed);
  EXPECT_EQ(moved.last_event_id(), 0u);
}

// A host sharing the stream across processes: each call's frames, stored by
// id, are its output; resuming from the store (ssefold_relay_resume_point)
// sends what ssefold_relay_replay_after sends.
TEST(Relay, FramesAndResumePointForAReplayStore) {
  std::string body = Fixture();
  for (uint32_t format : {SSEFOLD_RELAY_FORMAT_AI_SDK, SSEFOLD_RELAY_FORMAT_CATALOG}) {
    ssefold_relay_config config;
    ASSERT_EQ(ssefold_relay_config_default(format, &config), SSEFOLD_RESULT_OK);
    ssefold_relay *r = nullptr;
    ASSERT_EQ(ssefold_relay_new_with_stream(&config, SSEFOLD_PROVIDER_AUTO, nullptr, &r), SSEFOLD_RESULT_OK);
    std::vector<std::string> store;  // frame of id i + 1 at index i
    ssefold_bytes trailer{nullptr, 0};
    ASSERT_EQ(ssefold_relay_trailer(r, &trailer), SSEFOLD_RESULT_OK);
    auto record = [&](ssefold_bytes out, bool last) {
      size_t n = 0;
      ASSERT_EQ(ssefold_relay_frame_count(r, &n), SSEFOLD_RESULT_OK);
      std::string joined;
      for (size_t i = 0; i < n; i++) {
        uint64_t id = 0;
        ssefold_bytes f{nullptr, 0};
        ASSERT_EQ(ssefold_relay_frame(r, i, &id, &f), SSEFOLD_RESULT_OK);
        EXPECT_EQ(id, store.size() + 1);
        store.push_back(Bytes(f));
        joined += Bytes(f);
      }
      uint64_t id = 0;
      ssefold_bytes f{nullptr, 0};
      EXPECT_EQ(ssefold_relay_frame(r, n, &id, &f), SSEFOLD_RESULT_INVALID_ARGUMENT);
      if (last) joined += Bytes(trailer);
      EXPECT_EQ(joined, Bytes(out));
    };
    ssefold_bytes b{nullptr, 0};
    ssefold_result status = SSEFOLD_RESULT_PANIC;
    for (size_t at = 0; at < body.size(); at += 50) {
      ASSERT_EQ(ssefold_relay_feed(r, B(body) + at, std::min<size_t>(50, body.size() - at), &b, &status),
                SSEFOLD_RESULT_OK);
      record(b, false);
    }
    ASSERT_EQ(ssefold_relay_end_of_input(r, &b, &status), SSEFOLD_RESULT_OK);
    record(b, false);
    ASSERT_EQ(ssefold_relay_finish(r, ABSENT(), &b), SSEFOLD_RESULT_OK);
    record(b, true);
    uint64_t after = 99;
    ASSERT_EQ(ssefold_relay_resume_point(V("3"), 1, store.size(), &after), SSEFOLD_RESULT_OK);
    EXPECT_EQ(after, 3u);
    std::string served;
    for (size_t i = after; i < store.size(); i++) served += store[i];
    served += Bytes(trailer);
    ASSERT_EQ(ssefold_relay_replay_after(r, V("3"), &b), SSEFOLD_RESULT_OK);
    EXPECT_EQ(served, Bytes(b));
    size_t n = 1;
    ASSERT_EQ(ssefold_relay_frame_count(r, &n), SSEFOLD_RESULT_OK);
    EXPECT_EQ(n, 0u) << "a replay writes no frame";
    EXPECT_EQ(ssefold_relay_resume_point(V("1"), 4, 9, &after), SSEFOLD_RESULT_RELAY_REPLAY_TOO_OLD);
    EXPECT_EQ(ssefold_relay_resume_point(V("4"), 0, 0, &after), SSEFOLD_RESULT_RELAY_REPLAY_TOO_OLD);
    EXPECT_EQ(ssefold_relay_resume_point(V("10"), 1, 9, &after), SSEFOLD_RESULT_RELAY_UNKNOWN_EVENT_ID);
    EXPECT_EQ(ssefold_relay_resume_point(V("x"), 1, 9, &after), SSEFOLD_RESULT_RELAY_UNKNOWN_EVENT_ID);
    EXPECT_EQ(ssefold_relay_resume_point(V("1"), 0, 9, &after), SSEFOLD_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(ssefold_relay_resume_point(V("1"), 1, 9, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
    EXPECT_EQ(ssefold_relay_frame_count(nullptr, &n), SSEFOLD_RESULT_NULL_PARAMETER);
    ssefold_relay_free(r);
  }
  ssefold::Relay relay(nullptr, SSEFOLD_PROVIDER_AUTO);
  std::string out = relay.feed(body).bytes;
  std::string joined;
  for (auto [id, frame] : relay.frames()) joined += frame;
  EXPECT_EQ(joined, out);
  EXPECT_EQ(relay.trailer(), "data: [DONE]\n\n");
  EXPECT_EQ(ssefold::Relay::resume_point("2", 1, 5), 2u);
  EXPECT_THROW(ssefold::Relay::resume_point("9", 1, 5), ssefold::Error);
}
