// The SSE decoder through the C ABI: every function, every error path.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <dirent.h>

#include "common.hpp"

namespace {

struct Dec {
  ssefold_sse_decoder *d = nullptr;
  Collector c;
  explicit Dec(const ssefold_sse_decoder_config *cfg = nullptr) {
    EXPECT_EQ(ssefold_sse_decoder_new(cfg, &d), SSEFOLD_RESULT_OK);
    EXPECT_EQ(ssefold_sse_decoder_set_callback(d, &Collector::callback, &c), SSEFOLD_RESULT_OK);
  }
  ~Dec() { ssefold_sse_decoder_free(d); }
  ssefold_result feed(const std::string &s, size_t *consumed) {
    return ssefold_sse_decoder_feed(d, B(s), s.size(), consumed);
  }
};

}  // namespace

TEST(SseConfig, DefaultsAndNull) {
  ssefold_sse_decoder_config cfg;
  ASSERT_EQ(ssefold_sse_decoder_config_default(&cfg), SSEFOLD_RESULT_OK);
  EXPECT_EQ(cfg.max_line_len, 16u << 20);
  EXPECT_EQ(cfg.max_event_size, 16u << 20);
  EXPECT_EQ(cfg.utf8_mode, (uint32_t)SSEFOLD_UTF8_MODE_REPLACE);
  EXPECT_EQ(ssefold_sse_decoder_config_default(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
}

TEST(SseNew, ErrorsLeaveTheOutParameterAlone) {
  ssefold_sse_decoder *sentinel = reinterpret_cast<ssefold_sse_decoder *>(0x1);
  ssefold_sse_decoder *d = sentinel;
  EXPECT_EQ(ssefold_sse_decoder_new(nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_sse_decoder_config cfg;
  ssefold_sse_decoder_config_default(&cfg);
  cfg.utf8_mode = 7;
  EXPECT_EQ(ssefold_sse_decoder_new(&cfg, &d), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(d, sentinel);
  ssefold_sse_decoder_config_default(&cfg);
  cfg.max_line_len = 0;
  EXPECT_EQ(ssefold_sse_decoder_new(&cfg, &d), SSEFOLD_RESULT_INVALID_ARGUMENT);
  cfg.max_line_len = 10;
  cfg.max_event_size = 0;
  EXPECT_EQ(ssefold_sse_decoder_new(&cfg, &d), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(d, sentinel);
  ssefold_sse_decoder_free(nullptr);  // a no-op
}

TEST(SseFeed, DecodesEveryField) {
  Dec t;
  size_t consumed = 0;
  std::string s = "event: delta\nid: 7\nretry: 250\ndata: a\ndata: b\n\n: comment\ndata: c\n\n";
  ASSERT_EQ(t.feed(s, &consumed), SSEFOLD_RESULT_OK);
  EXPECT_EQ(consumed, s.size());
  ASSERT_EQ(t.c.events.size(), 2u);
  EXPECT_EQ(t.c.events[0], (OwnedEvent{"delta", "a\nb", std::string("7"), 250}));
  EXPECT_EQ(t.c.events[1], (OwnedEvent{"message", "c", std::string("7"), std::nullopt}));
  EXPECT_EQ(last_error(t.d), "");
}

TEST(SseFeed, IdIsAbsentUntilSetAndEmptyWhenReset) {
  Dec t;
  size_t consumed = 0;
  ASSERT_EQ(t.feed("data: x\n\nid\ndata: y\n\n", &consumed), SSEFOLD_RESULT_OK);
  ASSERT_EQ(t.c.events.size(), 2u);
  EXPECT_EQ(t.c.events[0].id, std::nullopt);
  EXPECT_EQ(t.c.events[1].id, std::optional<std::string>(""));
}

TEST(SseFeed, ArgumentErrors) {
  Dec t;
  size_t consumed = 12345;
  std::string s = "data: x\n\n";
  EXPECT_EQ(ssefold_sse_decoder_feed(nullptr, B(s), s.size(), &consumed), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_feed(t.d, B(s), s.size(), nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_feed(t.d, nullptr, 3, &consumed), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_feed(t.d, B(s), SIZE_MAX, &consumed), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(consumed, 12345u) << "out-parameters are written only when input was consumed";
  EXPECT_NE(last_error(t.d), "");
  EXPECT_EQ(ssefold_sse_decoder_feed(t.d, nullptr, 0, &consumed), SSEFOLD_RESULT_OK);
  EXPECT_EQ(consumed, 0u);
  EXPECT_EQ(last_error(t.d), "") << "a successful call clears the last error";
  EXPECT_TRUE(t.c.events.empty());
}

TEST(SseFeed, WithoutCallbackIsBadState) {
  ssefold_sse_decoder *d = nullptr;
  ASSERT_EQ(ssefold_sse_decoder_new(nullptr, &d), SSEFOLD_RESULT_OK);
  size_t consumed = 99;
  std::string s = "data: x\n\n";
  EXPECT_EQ(ssefold_sse_decoder_feed(d, B(s), s.size(), &consumed), SSEFOLD_RESULT_BAD_STATE);
  EXPECT_EQ(consumed, 99u);
  EXPECT_NE(last_error(d).find("callback"), std::string::npos) << last_error(d);
  // Registering, then unregistering, the callback.
  Collector c;
  ASSERT_EQ(ssefold_sse_decoder_set_callback(d, &Collector::callback, &c), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_decoder_feed(d, B(s), s.size(), &consumed), SSEFOLD_RESULT_OK);
  EXPECT_EQ(c.events.size(), 1u);
  ASSERT_EQ(ssefold_sse_decoder_set_callback(d, nullptr, nullptr), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_sse_decoder_feed(d, B(s), s.size(), &consumed), SSEFOLD_RESULT_BAD_STATE);
  EXPECT_EQ(ssefold_sse_decoder_set_callback(nullptr, nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_sse_decoder_free(d);
}

TEST(SseFeed, StoppedReportsConsumedAndNothingIsLost) {
  Dec t;
  t.c.stop_every = 1;
  std::string s = "data: one\n\ndata: two\n\n: c\ndata: three\n\ndata: par";
  size_t consumed = 0;
  ASSERT_EQ(t.feed(s, &consumed), SSEFOLD_RESULT_STOPPED);
  EXPECT_EQ(consumed, std::strlen("data: one\n\n"));
  EXPECT_EQ(last_error(t.d), "stopped by the callback");
  size_t at = consumed;
  ASSERT_EQ(ssefold_sse_decoder_feed(t.d, B(s) + at, s.size() - at, &consumed), SSEFOLD_RESULT_STOPPED);
  EXPECT_EQ(consumed, std::strlen("data: two\n\n"));
  at += consumed;
  ASSERT_EQ(ssefold_sse_decoder_feed(t.d, B(s) + at, s.size() - at, &consumed), SSEFOLD_RESULT_STOPPED);
  at += consumed;
  ASSERT_EQ(ssefold_sse_decoder_feed(t.d, B(s) + at, s.size() - at, &consumed), SSEFOLD_RESULT_OK);
  EXPECT_EQ(at + consumed, s.size());
  ASSERT_EQ(t.c.events.size(), 3u);
  EXPECT_EQ(t.c.events[2].data, "three");
  std::string rest = "tial\n\n";
  ASSERT_EQ(t.feed(rest, &consumed), SSEFOLD_RESULT_STOPPED);
  ASSERT_EQ(t.c.events.size(), 4u);
  EXPECT_EQ(t.c.events[3].data, "partial");
}

TEST(SseFeed, LineTooLongIsReportedAndDecodingGoesOn) {
  ssefold_sse_decoder_config cfg;
  ssefold_sse_decoder_config_default(&cfg);
  cfg.max_line_len = 16;
  Dec t(&cfg);
  std::string s = "data: " + std::string(40, 'x') + "\ndata: dropped\n\ndata: ok\n\n";
  size_t consumed = 0;
  ssefold_result rc = t.feed(s, &consumed);
  ASSERT_EQ(rc, SSEFOLD_RESULT_SSE_LINE_TOO_LONG);
  EXPECT_LE(consumed, s.size());
  EXPECT_NE(last_error(t.d).find("longer than 16"), std::string::npos) << last_error(t.d);
  ASSERT_EQ(ssefold_sse_decoder_feed(t.d, B(s) + consumed, s.size() - consumed, &consumed), SSEFOLD_RESULT_OK);
  ASSERT_EQ(t.c.events.size(), 1u);
  EXPECT_EQ(t.c.events[0].data, "ok");
}

TEST(SseFeed, EventTooLarge) {
  ssefold_sse_decoder_config cfg;
  ssefold_sse_decoder_config_default(&cfg);
  cfg.max_event_size = 8;
  Dec t(&cfg);
  std::string s = "data: 12345\ndata: 67890\n\ndata: ok\n\n";
  std::vector<ssefold_result> errors = feed_chunks(t.d, s, s.size());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], SSEFOLD_RESULT_SSE_EVENT_TOO_LARGE);
  ASSERT_EQ(t.c.events.size(), 1u);
  EXPECT_EQ(t.c.events[0].data, "ok");
}

TEST(SseFeed, StrictUtf8RefusesTheEventReplaceModeReplaces) {
  std::string s = "data: a\xff" "b\n\ndata: ok\n\n";
  ssefold_sse_decoder_config cfg;
  ssefold_sse_decoder_config_default(&cfg);
  cfg.utf8_mode = SSEFOLD_UTF8_MODE_STRICT;
  {
    Dec t(&cfg);
    std::vector<ssefold_result> errors = feed_chunks(t.d, s, 3);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0], SSEFOLD_RESULT_SSE_INVALID_UTF8);
    ASSERT_EQ(t.c.events.size(), 1u);
    EXPECT_EQ(t.c.events[0].data, "ok");
  }
  {
    Dec t;
    EXPECT_TRUE(feed_chunks(t.d, s, 3).empty());
    ASSERT_EQ(t.c.events.size(), 2u);
    EXPECT_EQ(t.c.events[0].data, "a\xef\xbf\xbd" "b");
  }
}

TEST(SseFinish, ReportsTheUnterminatedEvent) {
  Dec t;
  size_t consumed = 0;
  ASSERT_EQ(t.feed("data: done\n\nevent: e\ndata: cut", &consumed), SSEFOLD_RESULT_OK);
  ssefold_sse_end end;
  ASSERT_EQ(ssefold_sse_decoder_finish(t.d, &end), SSEFOLD_RESULT_OK);
  EXPECT_EQ(end.discarded_bytes, std::strlen("event: e\ndata: cut"));
  ASSERT_TRUE(end.has_unterminated);
  EXPECT_EQ(S(end.unterminated.event), "e");
  EXPECT_EQ(S(end.unterminated.data), "cut");
  EXPECT_EQ(end.unterminated.id.ptr, nullptr);
  ASSERT_EQ(t.c.events.size(), 1u) << "the unterminated event is not dispatched";
  // A clean end, and the decoder is ready for the next stream.
  ASSERT_EQ(ssefold_sse_decoder_finish(t.d, &end), SSEFOLD_RESULT_OK);
  EXPECT_EQ(end.discarded_bytes, 0u);
  EXPECT_FALSE(end.has_unterminated);
  EXPECT_EQ(end.unterminated.data.ptr, nullptr);
  ASSERT_EQ(t.feed("data: next\n\n", &consumed), SSEFOLD_RESULT_OK);
  EXPECT_EQ(t.c.events.back().data, "next");
  EXPECT_EQ(ssefold_sse_decoder_finish(t.d, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_finish(nullptr, &end), SSEFOLD_RESULT_NULL_PARAMETER);
}

TEST(SseState, LastEventIdReconnectionTimeAndReset) {
  Dec t;
  ssefold_str id{"junk", 4};
  ASSERT_EQ(ssefold_sse_decoder_last_event_id(t.d, &id), SSEFOLD_RESULT_OK);
  EXPECT_EQ(id.ptr, nullptr) << "absent before any id";
  bool has = true;
  uint64_t ms = 1;
  ASSERT_EQ(ssefold_sse_decoder_reconnection_time(t.d, &has, &ms), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(has);
  EXPECT_EQ(ms, 0u);
  size_t consumed = 0;
  ASSERT_EQ(t.feed("id: abc\nretry: 1500\ndata: x\n\nid: uncommitted\n", &consumed), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_decoder_last_event_id(t.d, &id), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(id), "abc");
  ASSERT_EQ(ssefold_sse_decoder_reconnection_time(t.d, &has, &ms), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has);
  EXPECT_EQ(ms, 1500u);
  ssefold_sse_end end;
  ASSERT_EQ(ssefold_sse_decoder_finish(t.d, &end), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_decoder_last_event_id(t.d, &id), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(id), "abc") << "kept across finish";
  ASSERT_EQ(ssefold_sse_decoder_reset(t.d), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_decoder_last_event_id(t.d, &id), SSEFOLD_RESULT_OK);
  EXPECT_EQ(id.ptr, nullptr) << "reset forgets it";
  ASSERT_EQ(ssefold_sse_decoder_reconnection_time(t.d, &has, &ms), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(has);
  // NULL arguments.
  EXPECT_EQ(ssefold_sse_decoder_last_event_id(t.d, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_last_event_id(nullptr, &id), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_reconnection_time(t.d, nullptr, &ms), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_reconnection_time(t.d, &has, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_reconnection_time(nullptr, &has, &ms), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_reset(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_NE(last_error(t.d), "") << "a failed read-only call sets the last error";
}

TEST(SseLastError, IsNulTerminatedAndChecksArguments) {
  Dec t;
  size_t consumed = 0;
  ASSERT_EQ(ssefold_sse_decoder_feed(t.d, nullptr, 1, &consumed), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_str s;
  ASSERT_EQ(ssefold_sse_decoder_last_error(t.d, &s), SSEFOLD_RESULT_OK);
  ASSERT_NE(s.ptr, nullptr);
  EXPECT_GT(s.len, 0u);
  EXPECT_EQ(s.ptr[s.len], '\0');
  EXPECT_EQ(std::strlen(s.ptr), s.len);
  EXPECT_EQ(ssefold_sse_decoder_last_error(t.d, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_sse_decoder_last_error(nullptr, &s), SSEFOLD_RESULT_NULL_PARAMETER);
}

namespace {
struct Reentrant {
  ssefold_sse_decoder *d;
  std::vector<ssefold_result> seen;
  static int callback(void *user_data, const ssefold_sse_event *) {
    auto *r = static_cast<Reentrant *>(user_data);
    size_t consumed = 0;
    ssefold_str s;
    r->seen.push_back(ssefold_sse_decoder_feed(r->d, nullptr, 0, &consumed));
    r->seen.push_back(ssefold_sse_decoder_last_event_id(r->d, &s));
    r->seen.push_back(ssefold_sse_decoder_last_error(r->d, &s));
    r->seen.push_back(ssefold_sse_decoder_set_callback(r->d, nullptr, nullptr));
    ssefold_sse_decoder_free(r->d);  // ignored while the handle is in use
    return 0;
  }
};
}  // namespace

TEST(SseCallback, CallsOnTheSameHandleFromTheCallbackAreRefused) {
  Reentrant r{nullptr, {}};
  ASSERT_EQ(ssefold_sse_decoder_new(nullptr, &r.d), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_decoder_set_callback(r.d, &Reentrant::callback, &r), SSEFOLD_RESULT_OK);
  std::string s = "data: x\n\n";
  size_t consumed = 0;
  ASSERT_EQ(ssefold_sse_decoder_feed(r.d, B(s), s.size(), &consumed), SSEFOLD_RESULT_OK);
  ASSERT_EQ(r.seen.size(), 4u);
  for (ssefold_result rc : r.seen) EXPECT_EQ(rc, SSEFOLD_RESULT_BAD_STATE);
  // Still alive and usable (valgrind would flag a use after free).
  ASSERT_EQ(ssefold_sse_decoder_feed(r.d, B(s), s.size(), &consumed), SSEFOLD_RESULT_OK);
  EXPECT_EQ(r.seen.size(), 8u);
  ssefold_sse_decoder_free(r.d);
}

// Every peer fixture: whole, in 1/2/3/7/64-byte chunks, and stopping after
// every event, gives the same events as one whole feed.
TEST(SseFixtures, EveryChunkingAndEveryStopGivesTheSameEvents) {
  std::vector<std::string> files;
  for (const char *sub : {"anthropic-sdk-go", "anthropic-sdk-python", "anthropic-sdk-typescript", "openai-python"}) {
    std::string dir = std::string(SSEFOLD_ROOT) + "/tests/peer-fixtures/" + sub;
    if (DIR *dp = opendir(dir.c_str())) {
      while (dirent *e = readdir(dp)) {
        std::string name = e->d_name;
        if (name.size() > 4 && (name.rfind(".sse") == name.size() - 4 || name.rfind(".txt") == name.size() - 4))
          files.push_back(dir + "/" + name);
      }
      closedir(dp);
    }
  }
  ASSERT_GE(files.size(), 20u);
  size_t total_events = 0;
  for (const std::string &f : files) {
    std::string bytes = read_file(f);
    Dec whole;
    ASSERT_TRUE(feed_chunks(whole.d, bytes, bytes.size()).empty()) << f;
    ssefold_sse_end end_whole;
    ASSERT_EQ(ssefold_sse_decoder_finish(whole.d, &end_whole), SSEFOLD_RESULT_OK);
    total_events += whole.c.events.size();
    for (size_t chunk : {1, 2, 3, 7, 64}) {
      for (int stop : {0, 1}) {
        Dec t;
        t.c.stop_every = stop;
        ASSERT_TRUE(feed_chunks(t.d, bytes, chunk).empty()) << f;
        ssefold_sse_end end;
        ASSERT_EQ(ssefold_sse_decoder_finish(t.d, &end), SSEFOLD_RESULT_OK);
        ASSERT_EQ(t.c.events, whole.c.events) << f << " chunk " << chunk << " stop " << stop;
        ASSERT_EQ(end.discarded_bytes, end_whole.discarded_bytes) << f;
      }
    }
  }
  EXPECT_GT(total_events, 200u);
}
