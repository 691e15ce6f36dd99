// The reconnection policy and reconnector through the C ABI.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "common.hpp"

namespace {
struct Rec {
  ssefold_reconnector *r = nullptr;
  explicit Rec(const ssefold_reconnect_policy *p = nullptr) {
    EXPECT_EQ(ssefold_reconnector_new(p, &r), SSEFOLD_RESULT_OK);
  }
  ~Rec() { ssefold_reconnector_free(r); }
  ssefold_reconnect_decision end(uint32_t kind, const char *error_type = nullptr, const char *message = nullptr) {
    ssefold_stream_end e{kind, error_type ? V(error_type) : ABSENT(), message ? V(message) : ABSENT(), 0, {}};
    ssefold_reconnect_decision d;
    std::memset(&d, 0xAB, sizeof d);
    EXPECT_EQ(ssefold_reconnector_on_end(r, &e, &d), SSEFOLD_RESULT_OK);
    return d;
  }
  std::pair<ssefold_connection_state, uint32_t> state() {
    ssefold_connection_state s;
    uint32_t attempts = 99;
    EXPECT_EQ(ssefold_reconnector_state(r, &s, &attempts), SSEFOLD_RESULT_OK);
    return {s, attempts};
  }
};
}  // namespace

TEST(Policy, DefaultsAndDelays) {
  ssefold_reconnect_policy p;
  ASSERT_EQ(ssefold_reconnect_policy_default(&p), SSEFOLD_RESULT_OK);
  EXPECT_EQ(p.initial_delay_ms, 1000u);
  EXPECT_EQ(p.growth, 1.5);
  EXPECT_EQ(p.max_delay_ms, 30000u);
  EXPECT_EQ(p.max_retries, 2u);
  EXPECT_EQ(p.jitter, 0.2);
  EXPECT_EQ(p.idle_timeout_ms, 0u);
  EXPECT_EQ(p.max_server_retry_ms, 600000u);
  EXPECT_EQ(p.max_retry_after_ms, 60000u);
  EXPECT_FALSE(p.restart_after_output);
  EXPECT_EQ(p.first_content_timeout_ms, 300000u);
  EXPECT_EQ(p.content_timeout_ms, 120000u);
  const uint64_t want[] = {1000, 1500, 2250, 3375};
  for (uint32_t a = 0; a < 4; a++) {
    uint64_t ms = 0;
    ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, a, nullptr, 0.5, &ms), SSEFOLD_RESULT_OK);
    EXPECT_EQ(ms, want[a]);
  }
  uint64_t ms = 0;
  ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, 40, nullptr, 0.5, &ms), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ms, 30000u);
  uint64_t server = 250;
  p.jitter = 0.5;
  ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, 3, &server, 0.99, &ms), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ms, 250u) << "a server retry wins and is not jittered";
  ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, nullptr, 0.0, &ms), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ms, 500u);
  ASSERT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, nullptr, 1.0, &ms), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ms, 1500u);
}

TEST(Policy, ArgumentErrors) {
  ssefold_reconnect_policy p;
  ssefold_reconnect_policy_default(&p);
  uint64_t ms = 7;
  EXPECT_EQ(ssefold_reconnect_policy_default(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnect_next_delay_ms(nullptr, 0, nullptr, 0.5, &ms), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, nullptr, 0.5, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, nullptr, NAN, &ms), SSEFOLD_RESULT_INVALID_ARGUMENT);
  p.growth = NAN;
  EXPECT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, nullptr, 0.5, &ms), SSEFOLD_RESULT_INVALID_ARGUMENT);
  p.growth = 0.5;
  EXPECT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, nullptr, 0.5, &ms), SSEFOLD_RESULT_INVALID_ARGUMENT);
  ssefold_reconnector *r = reinterpret_cast<ssefold_reconnector *>(0x1);
  EXPECT_EQ(ssefold_reconnector_new(&p, &r), SSEFOLD_RESULT_INVALID_ARGUMENT);
  ssefold_reconnect_policy_default(&p);
  p.jitter = 2;
  EXPECT_EQ(ssefold_reconnect_next_delay_ms(&p, 0, nullptr, 0.5, &ms), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(ssefold_reconnector_new(&p, &r), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(r, reinterpret_cast<ssefold_reconnector *>(0x1));
  EXPECT_EQ(ssefold_reconnector_new(nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ms, 7u);
}

TEST(Policy, RetryableErrorTypesAndStateNames) {
  bool out = false;
  ASSERT_EQ(ssefold_reconnect_is_retryable_error_type(V("overloaded_error"), &out), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(out);
  ASSERT_EQ(ssefold_reconnect_is_retryable_error_type(V("invalid_request_error"), &out), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(out);
  ASSERT_EQ(ssefold_reconnect_is_retryable_error_type(ABSENT(), &out), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(out);
  EXPECT_EQ(ssefold_reconnect_is_retryable_error_type(V("x"), nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_str bad{"\xc3", 1};
  EXPECT_EQ(ssefold_reconnect_is_retryable_error_type(bad, &out), SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  EXPECT_STREQ(ssefold_connection_state_name(SSEFOLD_CONNECTION_STATE_DISCONNECTED), "disconnected");
  EXPECT_STREQ(ssefold_connection_state_name(SSEFOLD_CONNECTION_STATE_CONNECTING), "connecting");
  EXPECT_STREQ(ssefold_connection_state_name(SSEFOLD_CONNECTION_STATE_CONNECTED), "connected");
  EXPECT_STREQ(ssefold_connection_state_name(SSEFOLD_CONNECTION_STATE_RECONNECTING), "reconnecting");
  EXPECT_STREQ(ssefold_connection_state_name(42), "unknown");
}

TEST(Reconnector, ReconnectsWithTheCursorThenGivesUp) {
  Rec t;
  EXPECT_EQ(t.state(), std::make_pair(SSEFOLD_CONNECTION_STATE_CONNECTING, 0u));
  ASSERT_EQ(ssefold_reconnector_on_connected(t.r, 0), SSEFOLD_RESULT_OK);
  EXPECT_EQ(t.state().first, SSEFOLD_CONNECTION_STATE_CONNECTED);
  uint64_t retry = 250;
  ASSERT_EQ(ssefold_reconnector_on_event(t.r, V("e1"), nullptr, &retry), SSEFOLD_RESULT_OK);
  ssefold_reconnect_decision d = t.end(SSEFOLD_STREAM_END_KIND_ENDED_EARLY);
  EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
  EXPECT_EQ(d.delay_ms, 250u);
  EXPECT_EQ(d.attempt, 1u);
  EXPECT_EQ(d.cursor.kind, SSEFOLD_CURSOR_KIND_LAST_EVENT_ID);
  EXPECT_EQ(S(d.cursor.last_event_id), "e1");
  EXPECT_EQ(d.error_type.ptr, nullptr);
  EXPECT_EQ(t.state(), std::make_pair(SSEFOLD_CONNECTION_STATE_RECONNECTING, 1u));
  ssefold_resume_cursor c;
  ASSERT_EQ(ssefold_reconnector_cursor(t.r, &c), SSEFOLD_RESULT_OK);
  EXPECT_EQ(c.kind, SSEFOLD_CURSOR_KIND_LAST_EVENT_ID);
  EXPECT_EQ(S(c.last_event_id), "e1");
  ASSERT_EQ(ssefold_reconnector_on_connected(t.r, 10), SSEFOLD_RESULT_OK);
  uint64_t seq = 17;
  ASSERT_EQ(ssefold_reconnector_on_event(t.r, ABSENT(), &seq, nullptr), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_reconnector_cursor(t.r, &c), SSEFOLD_RESULT_OK);
  EXPECT_EQ(c.kind, SSEFOLD_CURSOR_KIND_STARTING_AFTER);
  EXPECT_EQ(c.starting_after, 17u);
  EXPECT_EQ(c.last_event_id.ptr, nullptr);
  d = t.end(SSEFOLD_STREAM_END_KIND_TRANSPORT_ERROR, nullptr, "reset");
  EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
  EXPECT_EQ(d.attempt, 2u) << "max_retries bounds the whole answer: events do not reset the count";
  ASSERT_EQ(ssefold_reconnector_on_connected(t.r, 20), SSEFOLD_RESULT_OK);
  d = t.end(SSEFOLD_STREAM_END_KIND_TRANSPORT_ERROR, nullptr, "refused");
  EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_GIVE_UP);
  EXPECT_EQ(d.last_end, SSEFOLD_STREAM_END_KIND_TRANSPORT_ERROR);
  EXPECT_EQ(S(d.message), "refused");
  EXPECT_EQ(t.state().first, SSEFOLD_CONNECTION_STATE_DISCONNECTED);
}

TEST(Reconnector, DecisionTable) {
  struct Row {
    uint32_t kind;
    const char *type;
    const char *msg;
    ssefold_decision_kind want;
  } rows[] = {
      {SSEFOLD_STREAM_END_KIND_COMPLETED, nullptr, nullptr, SSEFOLD_DECISION_KIND_DONE},
      {SSEFOLD_STREAM_END_KIND_ABORTED, nullptr, nullptr, SSEFOLD_DECISION_KIND_STOP},
      {SSEFOLD_STREAM_END_KIND_PROVIDER_ERROR, "overloaded_error", "busy", SSEFOLD_DECISION_KIND_FAIL},
      {SSEFOLD_STREAM_END_KIND_ENDED_EARLY, nullptr, nullptr, SSEFOLD_DECISION_KIND_RECONNECT},
      {SSEFOLD_STREAM_END_KIND_TRANSPORT_ERROR, nullptr, "x", SSEFOLD_DECISION_KIND_RECONNECT},
      {SSEFOLD_STREAM_END_KIND_IDLE_TIMEOUT, nullptr, nullptr, SSEFOLD_DECISION_KIND_RECONNECT},
  };
  ssefold_reconnect_policy exact;
  ASSERT_EQ(ssefold_reconnect_policy_default(&exact), SSEFOLD_RESULT_OK);
  exact.jitter = 0;  // exact delays
  for (const Row &row : rows) {
    Rec t(&exact);
    ssefold_reconnector_on_connected(t.r, 0);
    ssefold_reconnect_decision d = t.end(row.kind, row.type, row.msg);
    EXPECT_EQ(d.kind, row.want) << row.kind;
    if (row.want == SSEFOLD_DECISION_KIND_FAIL) {
      EXPECT_EQ(S(d.error_type), "overloaded_error");
      EXPECT_EQ(S(d.message), "busy");
      EXPECT_TRUE(d.retryable);
    }
    if (row.want == SSEFOLD_DECISION_KIND_RECONNECT) {
      EXPECT_EQ(d.delay_ms, 1000u);
      EXPECT_EQ(d.cursor.kind, SSEFOLD_CURSOR_KIND_NONE);
    }
  }
}

TEST(Reconnector, IdleDeadline) {
  ssefold_reconnect_policy p;
  ssefold_reconnect_policy_default(&p);
  p.idle_timeout_ms = 100;
  Rec t(&p);
  bool has = true, idle = true;
  uint64_t deadline = 5;
  ASSERT_EQ(ssefold_reconnector_idle_deadline_ms(t.r, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(has);
  EXPECT_EQ(deadline, 0u);
  ssefold_reconnector_on_connected(t.r, 1000);
  ASSERT_EQ(ssefold_reconnector_idle_deadline_ms(t.r, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has);
  EXPECT_EQ(deadline, 1100u);
  ASSERT_EQ(ssefold_reconnector_on_activity(t.r, 1050), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_reconnector_is_idle(t.r, 1149, &idle), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(idle);
  ASSERT_EQ(ssefold_reconnector_is_idle(t.r, 1150, &idle), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(idle);
}

TEST(Reconnector, ArgumentErrors) {
  Rec t;
  ssefold_stream_end bad{77, ABSENT(), ABSENT(), 0, {}};
  ssefold_reconnect_decision d;
  ssefold_resume_cursor c;
  ssefold_connection_state s;
  uint32_t attempts;
  bool b;
  uint64_t u;
  ssefold_str str;
  EXPECT_EQ(ssefold_reconnector_on_end(t.r, &bad, &d), SSEFOLD_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(ssefold_reconnector_last_error(t.r, &str), SSEFOLD_RESULT_OK);
  EXPECT_NE(S(str).find("77"), std::string::npos) << S(str);
  ssefold_stream_end bad_utf8{SSEFOLD_STREAM_END_KIND_TRANSPORT_ERROR, ABSENT(), ssefold_str{"\xff", 1}, 0, {}};
  EXPECT_EQ(ssefold_reconnector_on_end(t.r, &bad_utf8, &d), SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  ssefold_stream_end ok{SSEFOLD_STREAM_END_KIND_COMPLETED, ABSENT(), ABSENT(), 0, {}};
  EXPECT_EQ(ssefold_reconnector_on_end(t.r, nullptr, &d), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_on_end(t.r, &ok, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_on_end(nullptr, &ok, &d), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_on_connected(nullptr, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_on_activity(nullptr, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_on_event(nullptr, ABSENT(), nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_on_event(t.r, ssefold_str{"\xff", 1}, nullptr, nullptr),
            SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  EXPECT_EQ(ssefold_reconnector_cursor(nullptr, &c), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_cursor(t.r, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_idle_deadline_ms(nullptr, &b, &u), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_idle_deadline_ms(t.r, nullptr, &u), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_idle_deadline_ms(t.r, &b, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_is_idle(nullptr, 0, &b), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_is_idle(t.r, 0, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_state(nullptr, &s, &attempts), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_state(t.r, nullptr, &attempts), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_state(t.r, &s, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_last_error(nullptr, &str), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_last_error(t.r, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  // The failures above did not change the machine.
  EXPECT_EQ(t.state(), std::make_pair(SSEFOLD_CONNECTION_STATE_CONNECTING, 0u));
  EXPECT_EQ(t.end(SSEFOLD_STREAM_END_KIND_COMPLETED).kind, SSEFOLD_DECISION_KIND_DONE);
  ASSERT_EQ(ssefold_reconnector_last_error(t.r, &str), SSEFOLD_RESULT_OK);
  EXPECT_EQ(S(str), "");
  ssefold_reconnector_free(nullptr);
}
