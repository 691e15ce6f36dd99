// Version, status strings, threads, and the C++ RAII wrappers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "common.hpp"
#include "ssefold.hpp"

TEST(Version, MatchesTheHeader) {
  EXPECT_STREQ(ssefold_version(), SSEFOLD_VERSION);
  std::string v = std::to_string(SSEFOLD_VERSION_MAJOR) + "." + std::to_string(SSEFOLD_VERSION_MINOR) + "." +
                  std::to_string(SSEFOLD_VERSION_PATCH);
  EXPECT_EQ(v, SSEFOLD_VERSION);
}

TEST(ResultStr, EveryStatusHasADistinctMessage) {
  const uint32_t all[] = {
      SSEFOLD_RESULT_OK, SSEFOLD_RESULT_STOPPED, SSEFOLD_RESULT_NULL_PARAMETER, SSEFOLD_RESULT_INVALID_ARGUMENT,
      SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT, SSEFOLD_RESULT_BAD_STATE, SSEFOLD_RESULT_POISONED, SSEFOLD_RESULT_PANIC,
      SSEFOLD_RESULT_SSE_LINE_TOO_LONG, SSEFOLD_RESULT_SSE_EVENT_TOO_LARGE, SSEFOLD_RESULT_SSE_INVALID_UTF8,
      SSEFOLD_RESULT_SSE_ID_TOO_LONG,
      SSEFOLD_RESULT_ENCODE_LINE_BREAK, SSEFOLD_RESULT_ENCODE_NUL_IN_ID, SSEFOLD_RESULT_JSON_INVALID,
      SSEFOLD_RESULT_JSON_DEPTH_LIMIT, SSEFOLD_RESULT_JSON_SIZE_LIMIT, SSEFOLD_RESULT_JSON_INCOMPLETE,
      SSEFOLD_RESULT_STREAM_INVALID_JSON, SSEFOLD_RESULT_STREAM_LIMIT_EXCEEDED, SSEFOLD_RESULT_STREAM_PROVIDER_ERROR,
      SSEFOLD_RESULT_STREAM_UNKNOWN_DIALECT, SSEFOLD_RESULT_STREAM_INCOMPLETE, SSEFOLD_RESULT_STREAM_CLOSED,
      SSEFOLD_RESULT_STREAM_RETRYABLE_PROVIDER_ERROR, SSEFOLD_RESULT_STREAM_DIALECT_MISMATCH};
  std::set<std::string> seen;
  for (uint32_t r : all) {
    std::string s = ssefold_result_str(r);
    EXPECT_NE(s, "unknown ssefold_result") << r;
    EXPECT_TRUE(seen.insert(s).second) << s;
  }
  EXPECT_EQ(SSEFOLD_RESULT_OK, 0u);
  EXPECT_EQ(SSEFOLD_RESULT_SSE_LINE_TOO_LONG, 200u);
  EXPECT_STREQ(ssefold_result_str(4242), "unknown ssefold_result");
  EXPECT_STREQ(ssefold_result_str(UINT32_MAX), "unknown ssefold_result");
}

// One handle per thread, used concurrently: each thread gets exactly the
// events a single-threaded run gets (run under valgrind/helgrind-free too).
TEST(Threads, SeparateHandlesOnSeparateThreadsAreIndependent) {
  std::string stream;
  for (int i = 0; i < 2000; i++)
    stream += "event: delta\nid: " + std::to_string(i) + "\ndata: {\"text\":\"chunk " + std::to_string(i) + "\"}\n\n";
  auto run = [&stream](size_t chunk, std::vector<OwnedEvent> *out, std::string *encoded) {
    ssefold_sse_decoder *d = nullptr;
    ssefold_sse_encoder *e = nullptr;
    Collector c;
    c.stop_every = static_cast<int>(chunk % 3);  // some threads stop and resume
    if (ssefold_sse_decoder_new(nullptr, &d) != SSEFOLD_RESULT_OK) return;
    ssefold_sse_decoder_set_callback(d, &Collector::callback, &c);
    feed_chunks(d, stream, chunk);
    ssefold_sse_encoder_new(&e);
    for (const OwnedEvent &ev : c.events)
      ssefold_sse_encoder_event(e, V(ev.event), V(ev.data), ev.id ? V(*ev.id) : ABSENT(), nullptr);
    ssefold_bytes b;
    ssefold_sse_encoder_bytes(e, &b);
    encoded->assign(reinterpret_cast<const char *>(b.ptr), b.len);
    ssefold_sse_encoder_free(e);
    ssefold_sse_decoder_free(d);
    *out = std::move(c.events);
  };
  std::vector<OwnedEvent> want;
  std::string want_encoded;
  run(stream.size(), &want, &want_encoded);
  ASSERT_EQ(want.size(), 2000u);
  EXPECT_EQ(want_encoded, stream);
  const size_t chunks[] = {1, 5, 64, 4096};
  std::vector<std::vector<OwnedEvent>> got(4);
  std::vector<std::string> encoded(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 4; i++) threads.emplace_back(run, chunks[i], &got[i], &encoded[i]);
  for (std::thread &t : threads) t.join();
  for (size_t i = 0; i < 4; i++) {
    EXPECT_EQ(got[i], want) << "thread " << i;
    EXPECT_EQ(encoded[i], stream) << "thread " << i;
  }
}

// One handle handed between threads (one at a time) is fine too.
TEST(Threads, OneHandleUsedByOneThreadAtATime) {
  ssefold_sse_decoder *d = nullptr;
  Collector c;
  ASSERT_EQ(ssefold_sse_decoder_new(nullptr, &d), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_sse_decoder_set_callback(d, &Collector::callback, &c), SSEFOLD_RESULT_OK);
  for (int i = 0; i < 8; i++) {
    std::thread t([d, i] {
      std::string s = "data: " + std::to_string(i) + "\n";
      size_t consumed = 0;
      ssefold_sse_decoder_feed(d, B(s), s.size(), &consumed);
      s = "\n";
      ssefold_sse_decoder_feed(d, B(s), s.size(), &consumed);
    });
    t.join();
  }
  ssefold_sse_decoder_free(d);
  ASSERT_EQ(c.events.size(), 8u);
  EXPECT_EQ(c.events[7].data, "7");
}

// Two threads on one handle at once break the threading rule; the call that
// loses the race must get BAD_STATE, never a second reference to the handle
// (issue 26, item 17: the busy flag was a plain Cell, and heap corruption
// followed). While a call runs on one thread, every other call on the handle
// from another thread is refused and a free is ignored.
TEST(Threads, ACallFromAnotherThreadDuringACallIsBadState) {
  struct Gate {
    std::mutex m;
    std::condition_variable cv;
    bool inside = false, tried = false;
  } gate;
  ssefold_stream *s = nullptr;
  ASSERT_EQ(ssefold_stream_new(SSEFOLD_PROVIDER_ANTHROPIC, nullptr, &s), SSEFOLD_RESULT_OK);
  auto cb = [](void *user_data, const ssefold_stream_event *) {
    auto *g = static_cast<Gate *>(user_data);
    std::unique_lock<std::mutex> lock(g->m);
    if (g->inside) return;  // only the first event waits
    g->inside = true;
    g->cv.notify_all();
    g->cv.wait(lock, [g] { return g->tried; });
  };
  ASSERT_EQ(ssefold_stream_set_callback(s, cb, &gate, false), SSEFOLD_RESULT_OK);
  const std::string start =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":"
      "\"assistant\",\"content\":[],\"usage\":{}}}\n\n";
  ssefold_result fed = SSEFOLD_RESULT_PANIC;
  std::thread a([&] { fed = ssefold_stream_feed(s, B(start), start.size()); });
  {
    std::unique_lock<std::mutex> lock(gate.m);
    gate.cv.wait(lock, [&] { return gate.inside; });
  }
  ssefold_str out{nullptr, 0};
  EXPECT_EQ(ssefold_stream_feed(s, B(start), start.size()), SSEFOLD_RESULT_BAD_STATE);
  EXPECT_EQ(ssefold_stream_message_json(s, &out), SSEFOLD_RESULT_BAD_STATE);
  EXPECT_EQ(ssefold_stream_last_error(s, &out), SSEFOLD_RESULT_BAD_STATE);
  ssefold_stream_free(s);  // ignored: the call on the other thread goes on
  {
    std::lock_guard<std::mutex> lock(gate.m);
    gate.tried = true;
  }
  gate.cv.notify_all();
  a.join();
  EXPECT_EQ(fed, SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_message_json(s, &out), SSEFOLD_RESULT_OK);
  EXPECT_NE(S(out).find("\"id\":\"m\""), std::string::npos) << S(out);
  ssefold_stream_free(s);
}

// Two threads hammering one decoder for 300 ms, started together: each call
// is OK or BAD_STATE, and the events are exactly one per feed that returned
// OK (a call that lost the race changed nothing). With the old non-atomic
// flag both threads got in (a wrong count, or a crash under ASan/valgrind).
TEST(Threads, TwoThreadsOnOneHandleGetOkOrBadStateNeverBoth) {
  ssefold_sse_decoder *d = nullptr;
  ASSERT_EQ(ssefold_sse_decoder_new(nullptr, &d), SSEFOLD_RESULT_OK);
  struct Count {
    uint64_t events = 0, bytes = 0;  // written only inside a call that holds the handle
  } count;
  auto cb = [](void *user_data, const ssefold_sse_event *e) {
    auto *c = static_cast<Count *>(user_data);
    c->events++;
    c->bytes += e->data.len;
    return 0;
  };
  ASSERT_EQ(ssefold_sse_decoder_set_callback(d, cb, &count), SSEFOLD_RESULT_OK);
  std::atomic<int> ready{0};
  auto run = [&](int who, uint64_t *ok, uint64_t *refused, uint64_t *other) {
    const std::string ev = "id: " + std::to_string(who) + "\ndata: " + std::string(40 + who, 'x') + "\n\n";
    ready++;
    while (ready.load() < 2) std::this_thread::yield();
    auto start = std::chrono::steady_clock::now();
    for (uint64_t i = 0;; i++) {
      if (i % 256 == 0 && std::chrono::steady_clock::now() - start > std::chrono::milliseconds(300)) break;
      // One call in four feeds an event; the others are quick (an empty feed, two reads), so that the
      // claims are dense.
      size_t consumed = 0;
      ssefold_str view{nullptr, 0};
      ssefold_result r;
      switch (i % 4) {
        case 0:
          r = ssefold_sse_decoder_feed(d, B(ev), ev.size(), &consumed);
          break;
        case 1:
          r = ssefold_sse_decoder_feed(d, nullptr, 0, &consumed);
          break;
        case 2:
          r = ssefold_sse_decoder_last_event_id(d, &view);
          break;
        default:
          r = ssefold_sse_decoder_last_error(d, &view);
      }
      if (r == SSEFOLD_RESULT_OK && i % 4 == 0)
        (*ok)++;
      else if (r == SSEFOLD_RESULT_BAD_STATE)
        (*refused)++;
      else if (r != SSEFOLD_RESULT_OK)
        (*other)++;
    }
  };
  uint64_t ok[2] = {0, 0}, refused[2] = {0, 0}, other[2] = {0, 0};
  std::thread t0(run, 0, &ok[0], &refused[0], &other[0]);
  std::thread t1(run, 1, &ok[1], &refused[1], &other[1]);
  t0.join();
  t1.join();
  EXPECT_EQ(other[0] + other[1], 0u);
  EXPECT_EQ(count.events, ok[0] + ok[1]) << "refused " << refused[0] + refused[1];
  EXPECT_EQ(count.bytes, ok[0] * 40 + ok[1] * 41);
  EXPECT_GT(ok[0] + ok[1], 0u);
  ssefold_sse_decoder_free(d);
}

TEST(Cpp, RaiiWrappers) {
  ssefold::SseDecoder dec;
  std::vector<std::string> data;
  dec.on_event([&](const ssefold::Event &e) {
    data.emplace_back(e.data);
    return true;
  });
  dec.feed_all("id: 1\ndata: a\n\ndata: b\n\n");
  EXPECT_EQ(data, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(dec.last_event_id(), std::optional<std::string_view>("1"));
  EXPECT_EQ(dec.reconnection_time(), std::nullopt);
  // Moving keeps the callback wired (its state lives on the heap).
  ssefold::SseDecoder moved = std::move(dec);
  moved.feed_all("data: c\n\n");
  EXPECT_EQ(data.back(), "c");
  // Exceptions in the callback do not cross C; they come back from feed.
  moved.on_event([](const ssefold::Event &) -> bool { throw std::runtime_error("from callback"); });
  EXPECT_THROW(moved.feed("data: d\n\n"), std::runtime_error);
  // Decode errors are values; misuse throws ssefold::Error.
  ssefold_sse_decoder_config cfg;
  ssefold_sse_decoder_config_default(&cfg);
  cfg.max_line_len = 4;
  ssefold::SseDecoder small(&cfg);
  std::vector<ssefold_result> errors;
  small.feed_all("data: toolong\n\n", [&](ssefold_result rc, std::string_view) { errors.push_back(rc); });
  EXPECT_EQ(errors, std::vector<ssefold_result>{SSEFOLD_RESULT_SSE_LINE_TOO_LONG});
  cfg.utf8_mode = 9;
  EXPECT_THROW(ssefold::SseDecoder bad(&cfg), ssefold::Error);

  ssefold::SseEncoder enc;
  enc.event("x", std::string_view("e"));
  EXPECT_EQ(enc.bytes(), "event: e\ndata: x\n\n");
  try {
    enc.event("x", std::string_view("a\nb"));
    FAIL() << "expected ssefold::Error";
  } catch (const ssefold::Error &e) {
    EXPECT_EQ(e.code(), SSEFOLD_RESULT_ENCODE_LINE_BREAK);
    EXPECT_NE(std::string(e.what()).find("CR or LF"), std::string::npos) << e.what();
  }

  ssefold::PartialJson pj;
  pj.push("{\"a\": [1, \"x");
  EXPECT_EQ(pj.value(), std::optional<std::string>("{\"a\":[1,\"x\"]}"));
  EXPECT_THROW(pj.finish(), ssefold::Error);
  pj.push("\"]}");
  EXPECT_EQ(pj.finish(), "{\"a\":[1,\"x\"]}");
  try {
    pj.push(",");
    FAIL() << "expected ssefold::Error";
  } catch (const ssefold::Error &e) {
    EXPECT_EQ(e.code(), SSEFOLD_RESULT_JSON_INVALID);
  }

  ssefold::Reconnector rec;
  rec.on_connected(0);
  rec.on_event(std::string_view("7"));
  ssefold_reconnect_decision d = rec.on_end(SSEFOLD_STREAM_END_KIND_ENDED_EARLY);
  EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
  EXPECT_EQ(ssefold::view(d.cursor.last_event_id), "7");
  EXPECT_EQ(rec.state(), SSEFOLD_CONNECTION_STATE_RECONNECTING);
}

// The C++ wrappers of the calls tests/parity.rs found unwrapped (each C
// function is called by ssefold.hpp or listed in tests/parity/not_wrapped.txt).
TEST(Cpp, StatusAndOneShotWrappers) {
  EXPECT_EQ(ssefold::connection_state_name(SSEFOLD_CONNECTION_STATE_RECONNECTING), "reconnecting");
  EXPECT_TRUE(ssefold::is_retryable_error_type("overloaded_error"));
  EXPECT_FALSE(ssefold::is_retryable_error_type("invalid_request_error"));
  EXPECT_THROW(ssefold::is_retryable_error_type(std::string_view("\xc3", 1)), ssefold::Error);
  ssefold_reconnect_policy policy;
  ssefold_reconnect_policy_default(&policy);
  EXPECT_EQ(ssefold::next_delay_ms(policy, 1, std::nullopt, 0.5), 1500u);
  EXPECT_EQ(ssefold::next_delay_ms(policy, 3, 250, 0.99), 250u);
  policy.jitter = 7;
  EXPECT_THROW(ssefold::next_delay_ms(policy, 0, std::nullopt, 0.5), ssefold::Error);

  ssefold::SseDecoder dec;
  dec.feed_all("id: 1\nretry: 5\ndata: a\n\n");
  EXPECT_EQ(dec.last_event_id(), std::optional<std::string_view>("1"));
  dec.reset();
  EXPECT_EQ(dec.last_event_id(), std::nullopt);
  EXPECT_EQ(dec.reconnection_time(), std::nullopt);

  ssefold::PartialJson pj;
  pj.push("[1, 2");
  EXPECT_FALSE(pj.is_complete());
  EXPECT_EQ(pj.bytes_pushed(), 5u);
  pj.push("]");
  EXPECT_TRUE(pj.is_complete());
  EXPECT_EQ(pj.parse("{\"a\": \"te"), std::optional<std::string>("{\"a\":\"te\"}"));
  EXPECT_EQ(pj.parse("  "), std::nullopt);
  EXPECT_THROW(pj.parse("[1}"), ssefold::Error);

  ssefold_reconnect_policy idle;
  ssefold_reconnect_policy_default(&idle);
  idle.idle_timeout_ms = 100;
  ssefold::Reconnector rec(&idle);
  EXPECT_EQ(rec.idle_deadline_ms(), std::nullopt);
  rec.on_connected(1000);
  EXPECT_EQ(rec.idle_deadline_ms(), std::optional<std::uint64_t>(1100));
  EXPECT_FALSE(rec.is_idle(1099));
  EXPECT_TRUE(rec.is_idle(1100));
  rec.on_event(std::string_view("7"));
  ssefold_resume_cursor c = rec.cursor();
  EXPECT_EQ(c.kind, SSEFOLD_CURSOR_KIND_LAST_EVENT_ID);
  EXPECT_EQ(ssefold::view(c.last_event_id), "7");

  ssefold::Stream s;
  EXPECT_EQ(s.provider(), SSEFOLD_PROVIDER_AUTO);
  s.feed(
      "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":"
      "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n");
  EXPECT_EQ(s.provider(), SSEFOLD_PROVIDER_OPENAI_CHAT);
  EXPECT_FALSE(s.is_terminated());
  s.feed("data: [DONE]\n\n");
  EXPECT_TRUE(s.is_terminated());
}

// Every class owns its handle through detail::Owned: moving leaves the
// source empty, assigning over a live handle frees it (valgrind's leak check
// sees a missed free), and `_free(NULL)` makes the empty ones' destruction a
// no-op.
TEST(Cpp, HandlesMoveAndFreeOnce) {
  ssefold::Stream a(SSEFOLD_PROVIDER_ANTHROPIC);
  ssefold::Stream b;
  ssefold_stream *held = a.get();
  b = std::move(a);
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.get(), held);
  EXPECT_EQ(b.provider(), SSEFOLD_PROVIDER_ANTHROPIC);
  ssefold::Relay r;
  ssefold::Relay moved(std::move(r));
  EXPECT_EQ(r.get(), nullptr);
  EXPECT_NE(moved.get(), nullptr);
  ssefold::AgentTurn t;
  t = ssefold::AgentTurn();
  EXPECT_NE(t.get(), nullptr);
}
