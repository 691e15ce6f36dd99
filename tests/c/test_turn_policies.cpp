// The production policies of an agent turn (issue 27) through the C ABI:
// HTTP statuses retried or failed (Retry-After from the headers), tool
// calls that wait for the turn's end or for the host's approval, a call
// still running when the answer stopped badly, keep-alives that are not
// content, an answer with output that cannot be resumed, the outcome's
// timings; then the reconnector's new functions on their own, the retry
// hints of the headers and the C++ wrappers of all of it.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "json_dom.hpp"
#include "ssefold.hpp"

namespace {

// ------------------------------------------------------------ bodies

/// An OpenAI Chat chunk whose choice 0 has `delta` (JSON) and, when not
/// empty, `finish_reason`.
std::string chat_chunk(const std::string &delta, const std::string &finish_reason = "") {
  std::string choice = "{\"index\":0,\"delta\":" + delta;
  if (!finish_reason.empty()) choice += ",\"finish_reason\":\"" + finish_reason + "\"";
  return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[" + choice + "}]}\n\n";
}

const std::string CHAT_DONE = "data: [DONE]\n\n";

/// A Chat text answer, whole (no SSE ids).
const std::string CHAT_TEXT =
    chat_chunk("{\"content\":\"Hello\"}") + chat_chunk("{}", "stop") + CHAT_DONE;

/// The chunk of a Chat call of `add` (id call_1, arguments {"a":1}).
const std::string CHAT_CALL = chat_chunk(
    "{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":"
    "{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}}]}");

/// An Anthropic answer that calls `add` (id toolu_1, arguments {"a":1})
/// and stops with `stop_reason`.
std::string anthropic_call(const std::string &stop_reason) {
  const std::string events[][2] = {
      {"message_start",
       R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}})"},
      {"content_block_start",
       R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"add","input":{}}})"},
      {"content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}})"},
      {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
      {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":")" + stop_reason +
                            R"(","stop_sequence":null},"usage":{"output_tokens":9}})"},
      {"message_stop", R"({"type":"message_stop"})"},
  };
  std::string out;
  for (const auto &e : events) out += "event: " + e[0] + "\ndata: " + e[1] + "\n\n";
  return out;
}

/// The prefix of an Anthropic body up to (not including) its first `event`.
std::string until_event(const std::string &body, const std::string &event) {
  return body.substr(0, body.find("event: " + event + "\n"));
}

/// What keeps an Anthropic connection alive without content: `ping`
/// events and comment lines.
const std::string PING = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
const std::string COMMENT = ": keep-alive\n\n";

// ------------------------------------------------------------ a turn

/// A tool event, copied.
struct ToolEvent {
  ssefold_tool_event_kind kind;
  std::string name, call_id, tool_name, text, approval_id;
  bool is_error;
  bool approval_id_absent;
};

/// An action, copied.
struct Action {
  ssefold_agent_turn_action_kind kind;
  std::string call_id, name, arguments;
  uint64_t delay_ms;
  uint32_t attempt;
  ssefold_cursor_kind cursor;
  std::string last_event_id;
  ssefold_replay replay;
};

/// The configuration of the tests: the default with `provider`, exact
/// delays (no jitter) and reconnection as given.
ssefold_agent_turn_config config(uint32_t provider, bool reconnect = true) {
  ssefold_agent_turn_config c;
  EXPECT_EQ(ssefold_agent_turn_config_default(&c), SSEFOLD_RESULT_OK);
  c.provider = provider;
  c.reconnect = reconnect;
  c.reconnect_policy.jitter = 0;
  return c;
}

ssefold_tool_options tool(ssefold_tool_start start = SSEFOLD_TOOL_START_AUTO, bool needs_approval = false) {
  return ssefold_tool_options{false, false, static_cast<uint32_t>(start), needs_approval};
}

/// A turn freed at the end of the scope; what its callback saw and the
/// actions drained after every input.
struct Turn {
  ssefold_agent_turn *t = nullptr;
  std::vector<ToolEvent> tool_events;
  std::vector<std::string> stream_events;  // wire names
  int content_events = 0;
  std::vector<Action> actions;

  explicit Turn(const ssefold_agent_turn_config &c) {
    EXPECT_EQ(ssefold_agent_turn_new(&c, &t), SSEFOLD_RESULT_OK);
    EXPECT_EQ(ssefold_agent_turn_set_callback(t, &Turn::callback, this, false), SSEFOLD_RESULT_OK);
  }
  ~Turn() { ssefold_agent_turn_free(t); }
  Turn(const Turn &) = delete;
  Turn &operator=(const Turn &) = delete;

  static void callback(void *user_data, const ssefold_stream_event *s, const ssefold_tool_event *e) {
    auto *turn = static_cast<Turn *>(user_data);
    if (s) {
      turn->stream_events.push_back(S(s->name));
      turn->content_events += s->is_content;
    }
    if (e) {
      turn->tool_events.push_back(ToolEvent{e->kind, S(e->name), S(e->call_id), S(e->tool_name), S(e->text),
                                            S(e->approval_id), e->is_error, e->approval_id.ptr == nullptr});
    }
  }

  void add_tool(const char *name, ssefold_tool_options options) {
    ASSERT_EQ(ssefold_agent_turn_add_tool(t, V(name), options), SSEFOLD_RESULT_OK) << error();
  }
  void feed(const std::string &bytes, uint64_t now) {
    ASSERT_EQ(ssefold_agent_turn_feed(t, B(bytes), bytes.size(), now), SSEFOLD_RESULT_OK) << error();
    drain();
  }
  /// Takes every action queued, copied.
  void drain() {
    for (;;) {
      ssefold_agent_turn_action a;
      bool has = false;
      ASSERT_EQ(ssefold_agent_turn_poll_action(t, &a, &has), SSEFOLD_RESULT_OK) << error();
      if (!has) return;
      actions.push_back(Action{a.kind, S(a.call_id), S(a.name), S(a.arguments), a.delay_ms, a.attempt, a.cursor.kind,
                               S(a.cursor.last_event_id), a.replay});
    }
  }
  std::vector<ssefold_agent_turn_action_kind> kinds() const {
    std::vector<ssefold_agent_turn_action_kind> out;
    for (const Action &a : actions) out.push_back(a.kind);
    return out;
  }
  /// The tool events of `kind`.
  std::vector<ToolEvent> events(ssefold_tool_event_kind kind) const {
    std::vector<ToolEvent> out;
    for (const ToolEvent &e : tool_events)
      if (e.kind == kind) out.push_back(e);
    return out;
  }
  bool finished() {
    bool f = false;
    EXPECT_EQ(ssefold_agent_turn_is_finished(t, &f), SSEFOLD_RESULT_OK);
    return f;
  }
  ssefold_turn_failure failure() {
    ssefold_turn_failure f;
    EXPECT_EQ(ssefold_agent_turn_failure(t, &f), SSEFOLD_RESULT_OK);
    return f;
  }
  std::string outcome_text() {
    ssefold_str out{nullptr, 0};
    EXPECT_EQ(ssefold_agent_turn_outcome_json(t, &out), SSEFOLD_RESULT_OK);
    return S(out);
  }
  json::Value outcome() { return json::parse(outcome_text()); }
  std::string error() {
    ssefold_str s{nullptr, 0};
    if (ssefold_agent_turn_last_error(t, &s) != SSEFOLD_RESULT_OK) return "<last_error failed>";
    return S(s);
  }
};

/// The hints of one header.
ssefold_retry_hints hints_of(const char *name, const char *value, uint64_t now_unix_ms = 0) {
  ssefold_str names[] = {V(name)};
  ssefold_str values[] = {V(value)};
  ssefold_retry_hints h{};
  EXPECT_EQ(ssefold_retry_hints_from_headers(names, values, 1, now_unix_ms, &h), SSEFOLD_RESULT_OK);
  return h;
}

}  // namespace

// ------------------------------------------------------------ HTTP statuses

TEST(TurnPolicies, A429WithRetryAfterIsRetriedAfterItsDelayThenSucceeds) {
  ssefold_retry_hints hints = hints_of("Retry-After", "2");
  ASSERT_TRUE(hints.has_retry_after);
  ASSERT_EQ(hints.retry_after_ms, 2000u);
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  ASSERT_EQ(ssefold_agent_turn_request_sent(turn.t, 0), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_http_status(turn.t, 429, &hints, 40), SSEFOLD_RESULT_OK) << turn.error();
  turn.drain();
  ASSERT_EQ(turn.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT});
  const Action &a = turn.actions[0];
  EXPECT_EQ(a.delay_ms, 2000u) << "the Retry-After, not the 1000 ms backoff";
  EXPECT_EQ(a.attempt, 1u);
  EXPECT_EQ(a.replay, SSEFOLD_REPLAY_RETRY) << "nothing was shown: the same request again";
  EXPECT_EQ(a.cursor, SSEFOLD_CURSOR_KIND_NONE);
  EXPECT_FALSE(turn.finished());
  EXPECT_EQ(turn.failure().kind, SSEFOLD_TURN_FAILURE_KIND_NONE);

  ASSERT_EQ(ssefold_agent_turn_request_sent(turn.t, 2040), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 2100), SSEFOLD_RESULT_OK);
  turn.feed(CHAT_TEXT, 2150);
  EXPECT_EQ(turn.actions.size(), 1u) << "no further action";
  EXPECT_TRUE(turn.finished());
  EXPECT_EQ(turn.failure().kind, SSEFOLD_TURN_FAILURE_KIND_NONE);
  json::Value out = turn.outcome();
  EXPECT_TRUE(out["failure"].is_null());
  EXPECT_TRUE(out["gave_up"].is_null());
  EXPECT_EQ(out["message"]["choices"][0]["message"]["content"].text, "Hello") << turn.outcome_text();
  // Both attempts are timed: the refused one with its status.
  const json::Value &attempts = out["timings"]["attempts"];
  ASSERT_EQ(attempts.items.size(), 2u) << turn.outcome_text();
  EXPECT_EQ(attempts[0]["outcome"].text, "http_status");
  EXPECT_EQ(attempts[0]["status"].number, 429);
  EXPECT_EQ(attempts[0]["started_ms"].number, 0);
  EXPECT_EQ(attempts[0]["ended_ms"].number, 40);
  EXPECT_EQ(attempts[1]["outcome"].text, "completed");
  EXPECT_EQ(attempts[1]["started_ms"].number, 2040);
}

TEST(TurnPolicies, A400FailsTheTurnWithItsStatusAndNoAction) {
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  ASSERT_EQ(ssefold_agent_turn_http_status(turn.t, 400, nullptr, 5), SSEFOLD_RESULT_OK) << turn.error();
  turn.drain();
  EXPECT_TRUE(turn.actions.empty());
  EXPECT_TRUE(turn.finished());
  ssefold_turn_failure f = turn.failure();
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_HTTP);
  EXPECT_EQ(f.http_status, 400u);
  EXPECT_EQ(f.status, SSEFOLD_RESULT_OK);
  EXPECT_FALSE(f.retryable);
  EXPECT_NE(S(f.message).find("400"), std::string::npos) << S(f.message);
  json::Value out = turn.outcome();
  EXPECT_EQ(out["failure"]["kind"].text, "http");
  EXPECT_EQ(out["failure"]["status"].number, 400);
  EXPECT_TRUE(out["failure"]["retry_after_ms"].is_null());
  EXPECT_EQ(out["gave_up"].text, "not_retryable");
  EXPECT_FALSE(out["output_started"].boolean);
  // Later inputs change nothing.
  ASSERT_EQ(ssefold_agent_turn_http_status(turn.t, 429, nullptr, 6), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_TRUE(turn.actions.empty());
  EXPECT_EQ(turn.failure().http_status, 400u);
}

TEST(TurnPolicies, XShouldRetryOverridesTheStatusAndTheRetryAfterIsCapped) {
  ssefold_retry_hints no = hints_of("x-should-retry", "false");
  ASSERT_EQ(no.should_retry, 2u);
  Turn refused(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  ASSERT_EQ(ssefold_agent_turn_http_status(refused.t, 503, &no, 1), SSEFOLD_RESULT_OK);
  refused.drain();
  EXPECT_TRUE(refused.actions.empty());
  EXPECT_EQ(refused.failure().kind, SSEFOLD_TURN_FAILURE_KIND_HTTP);
  EXPECT_EQ(refused.failure().http_status, 503u);
  EXPECT_EQ(refused.outcome()["gave_up"].text, "not_retryable");

  ssefold_retry_hints yes = hints_of("X-Should-Retry", "true");
  ASSERT_EQ(yes.should_retry, 1u);
  Turn retried(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  ASSERT_EQ(ssefold_agent_turn_http_status(retried.t, 400, &yes, 1), SSEFOLD_RESULT_OK);
  retried.drain();
  ASSERT_EQ(retried.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT});
  EXPECT_EQ(retried.actions[0].delay_ms, 1000u) << "no Retry-After: the backoff";

  ssefold_agent_turn_config c = config(SSEFOLD_PROVIDER_OPENAI_CHAT);
  c.reconnect_policy.max_retry_after_ms = 5000;
  Turn capped(c);
  ssefold_retry_hints far = hints_of("retry-after-ms", "90000");
  ASSERT_EQ(ssefold_agent_turn_http_status(capped.t, 529, &far, 1), SSEFOLD_RESULT_OK);
  capped.drain();
  ASSERT_EQ(capped.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT});
  EXPECT_EQ(capped.actions[0].delay_ms, 5000u);

  // Without reconnection a transient status ends the turn at once.
  Turn once(config(SSEFOLD_PROVIDER_OPENAI_CHAT, false));
  ssefold_retry_hints soon = hints_of("Retry-After", "1");
  ASSERT_EQ(ssefold_agent_turn_http_status(once.t, 429, &soon, 1), SSEFOLD_RESULT_OK);
  once.drain();
  EXPECT_TRUE(once.actions.empty());
  ssefold_turn_failure f = once.failure();
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_HTTP);
  EXPECT_EQ(f.http_status, 429u);
  EXPECT_TRUE(f.retryable);
  EXPECT_EQ(once.outcome()["failure"]["retry_after_ms"].number, 1000);
}

// ------------------------------------------------------------ tools and the stop reason

TEST(TurnPolicies, ATurnEndCallIsSkippedAfterALengthStopAndNeverStarts) {
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT, false));
  turn.add_tool("add", tool(SSEFOLD_TOOL_START_TURN_END));
  turn.feed(CHAT_CALL + chat_chunk("{}", "length") + CHAT_DONE, 1);
  for (const Action &a : turn.actions) EXPECT_NE(a.kind, SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL) << a.call_id;
  EXPECT_TRUE(turn.events(SSEFOLD_TOOL_EVENT_KIND_STARTED).empty());
  EXPECT_TRUE(turn.finished()) << "the skipped call has its result";
  json::Value out = turn.outcome();
  EXPECT_EQ(out["stop_reason"].text, "length");
  EXPECT_TRUE(out["failure"].is_null());
  ASSERT_EQ(out["results"].items.size(), 1u);
  const json::Value &r = out["results"][0];
  EXPECT_EQ(r["call_id"].text, "call_1");
  EXPECT_EQ(r["kind"].text, "skipped");
  EXPECT_TRUE(r["is_error"].boolean);
  EXPECT_EQ(r["output"].text.rfind("Not run: the answer stopped with length", 0), 0u) << r["output"].text;
  std::vector<ToolEvent> finished = turn.events(SSEFOLD_TOOL_EVENT_KIND_FINISHED);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_TRUE(finished[0].is_error);
}

TEST(TurnPolicies, ATurnEndCallStartsOnlyOnceTheAnswerEndedWithToolUse) {
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT, false));
  turn.add_tool("add", tool(SSEFOLD_TOOL_START_TURN_END));
  turn.feed(CHAT_CALL + chat_chunk("{}", "tool_calls"), 1);
  EXPECT_TRUE(turn.actions.empty()) << "the call is ready, the turn has not ended";
  turn.feed(CHAT_DONE, 2);
  ASSERT_EQ(turn.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL});
  EXPECT_EQ(turn.actions[0].call_id, "call_1");
  EXPECT_EQ(turn.actions[0].arguments, "{\"a\":1}");
  ASSERT_EQ(ssefold_agent_turn_tool_result(turn.t, V("call_1"), V("2"), false), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(turn.finished());
  EXPECT_EQ(turn.outcome()["results"][0]["kind"].text, "ran");
}

TEST(TurnPolicies, AReadyCallRunningAtABadStopIsReportedAndTheHostMayCancelIt) {
  const std::string body = anthropic_call("max_tokens");
  Turn turn(config(SSEFOLD_PROVIDER_ANTHROPIC, false));
  turn.add_tool("add", tool(SSEFOLD_TOOL_START_READY));
  turn.feed(until_event(body, "message_delta"), 1);
  ASSERT_EQ(turn.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL})
      << "a ready call starts at its block's end";
  EXPECT_EQ(turn.actions[0].call_id, "toolu_1");
  EXPECT_TRUE(turn.events(SSEFOLD_TOOL_EVENT_KIND_RUNNING_AFTER_STOP).empty());
  turn.feed(body.substr(until_event(body, "message_delta").size()), 2);
  std::vector<ToolEvent> after = turn.events(SSEFOLD_TOOL_EVENT_KIND_RUNNING_AFTER_STOP);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].name, "tool_running_after_stop");
  EXPECT_EQ(after[0].call_id, "toolu_1");
  EXPECT_EQ(after[0].tool_name, "add");
  EXPECT_EQ(after[0].text, "max_tokens");
  EXPECT_TRUE(after[0].approval_id_absent);
  EXPECT_EQ(turn.actions.size(), 1u) << "the turn cancels nothing itself";
  EXPECT_FALSE(turn.finished()) << "the call runs on";

  ASSERT_EQ(ssefold_agent_turn_cancel_tool(turn.t, V("toolu_1")), SSEFOLD_RESULT_OK) << turn.error();
  turn.drain();
  EXPECT_TRUE(turn.finished());
  json::Value out = turn.outcome();
  ASSERT_EQ(out["results"].items.size(), 1u);
  EXPECT_EQ(out["results"][0]["output"].text, "Cancelled by the host");
  EXPECT_EQ(out["results"][0]["kind"].text, "cancelled");
  EXPECT_TRUE(out["results"][0]["is_error"].boolean);
  EXPECT_EQ(ssefold_agent_turn_tool_result(turn.t, V("toolu_1"), V("late"), false), SSEFOLD_RESULT_OK)
      << "a late result is dropped";
  EXPECT_EQ(turn.outcome()["results"][0]["output"].text, "Cancelled by the host");
  EXPECT_EQ(ssefold_agent_turn_cancel_tool(turn.t, V("toolu_1")), SSEFOLD_RESULT_OK) << "not running: left as it is";
  EXPECT_EQ(ssefold_agent_turn_cancel_tool(turn.t, V("nope")), SSEFOLD_RESULT_TOOL_UNKNOWN_CALL_ID);
  EXPECT_NE(turn.error().find("nope"), std::string::npos) << turn.error();
  EXPECT_EQ(ssefold_agent_turn_cancel_tool(turn.t, ABSENT()), SSEFOLD_RESULT_NULL_PARAMETER);

  // Or the host lets it finish: its result is the tool's.
  Turn let(config(SSEFOLD_PROVIDER_ANTHROPIC, false));
  let.add_tool("add", tool(SSEFOLD_TOOL_START_READY));
  let.feed(body, 1);
  EXPECT_EQ(let.events(SSEFOLD_TOOL_EVENT_KIND_RUNNING_AFTER_STOP).size(), 1u);
  ASSERT_EQ(ssefold_agent_turn_tool_result(let.t, V("toolu_1"), V("2"), false), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(let.finished());
  EXPECT_EQ(let.outcome()["results"][0]["kind"].text, "ran");
}

// ------------------------------------------------------------ approvals

TEST(TurnPolicies, AnApprovedCallStartsAndADeniedOneGetsItsDenial) {
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT, false));
  turn.add_tool("add", tool(SSEFOLD_TOOL_START_AUTO, true));
  turn.feed(CHAT_CALL + chat_chunk("{}", "tool_calls") + CHAT_DONE, 1);
  std::vector<ToolEvent> asked = turn.events(SSEFOLD_TOOL_EVENT_KIND_APPROVAL_REQUESTED);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].name, "tool_approval_requested");
  EXPECT_EQ(asked[0].call_id, "call_1");
  EXPECT_EQ(asked[0].approval_id, "approval_call_1");
  EXPECT_EQ(asked[0].tool_name, "add");
  EXPECT_EQ(asked[0].text, "{\"a\":1}") << "the arguments";
  EXPECT_TRUE(turn.actions.empty()) << "nothing starts before the approval";
  EXPECT_FALSE(turn.finished());
  ASSERT_EQ(ssefold_agent_turn_approve(turn.t, V(asked[0].approval_id)), SSEFOLD_RESULT_OK) << turn.error();
  turn.drain();
  ASSERT_EQ(turn.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL});
  EXPECT_EQ(turn.actions[0].call_id, "call_1");
  EXPECT_EQ(turn.events(SSEFOLD_TOOL_EVENT_KIND_STARTED).size(), 1u);
  EXPECT_EQ(ssefold_agent_turn_approve(turn.t, V("approval_call_1")), SSEFOLD_RESULT_TOOL_NOT_AWAITING_APPROVAL)
      << "answered already";
  ASSERT_EQ(ssefold_agent_turn_tool_result(turn.t, V("call_1"), V("2"), false), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(turn.finished());
  EXPECT_EQ(turn.outcome()["results"][0]["kind"].text, "ran");

  for (const char *reason : {"too risky", ""}) {
    Turn denied(config(SSEFOLD_PROVIDER_OPENAI_CHAT, false));
    denied.add_tool("add", tool(SSEFOLD_TOOL_START_AUTO, true));
    denied.feed(CHAT_CALL + chat_chunk("{}", "tool_calls") + CHAT_DONE, 1);
    ASSERT_EQ(denied.events(SSEFOLD_TOOL_EVENT_KIND_APPROVAL_REQUESTED).size(), 1u);
    ASSERT_EQ(ssefold_agent_turn_deny(denied.t, V("approval_call_1"), V(reason)), SSEFOLD_RESULT_OK) << denied.error();
    denied.drain();
    EXPECT_TRUE(denied.actions.empty()) << "a denied call never starts";
    EXPECT_TRUE(denied.events(SSEFOLD_TOOL_EVENT_KIND_STARTED).empty());
    EXPECT_TRUE(denied.finished());
    json::Value r = denied.outcome()["results"][0];
    EXPECT_EQ(r["kind"].text, "denied");
    EXPECT_TRUE(r["is_error"].boolean);
    EXPECT_EQ(r["output"].text, *reason ? "Denied by the user: too risky" : "Denied by the user");
    std::vector<ToolEvent> finished = denied.events(SSEFOLD_TOOL_EVENT_KIND_FINISHED);
    ASSERT_EQ(finished.size(), 1u);
    EXPECT_TRUE(finished[0].is_error);
    EXPECT_EQ(ssefold_agent_turn_deny(denied.t, V("approval_call_1"), ABSENT()),
              SSEFOLD_RESULT_TOOL_NOT_AWAITING_APPROVAL);
  }
}

TEST(TurnPolicies, AnApprovalTimesOutOnTheHostClock) {
  ssefold_agent_turn_config c = config(SSEFOLD_PROVIDER_OPENAI_CHAT, false);
  c.approval_timeout_ms = 5000;
  Turn turn(c);
  turn.add_tool("add", tool(SSEFOLD_TOOL_START_AUTO, true));
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 0), SSEFOLD_RESULT_OK);
  turn.feed(CHAT_CALL + chat_chunk("{}", "tool_calls") + CHAT_DONE, 100);
  ASSERT_EQ(turn.events(SSEFOLD_TOOL_EVENT_KIND_APPROVAL_REQUESTED).size(), 1u);
  bool has = false;
  uint64_t deadline = 0;
  ASSERT_EQ(ssefold_agent_turn_deadline_ms(turn.t, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has) << "the approval's deadline";
  EXPECT_EQ(deadline, 5100u);
  ASSERT_EQ(ssefold_agent_turn_tick(turn.t, 5099), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_FALSE(turn.finished());
  ASSERT_EQ(ssefold_agent_turn_tick(turn.t, 5100), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_TRUE(turn.actions.empty());
  EXPECT_TRUE(turn.finished());
  json::Value r = turn.outcome()["results"][0];
  EXPECT_EQ(r["kind"].text, "denied");
  EXPECT_EQ(r["output"].text, "Denied: no approval within 5000 ms");
  EXPECT_EQ(ssefold_agent_turn_approve(turn.t, V("approval_call_1")), SSEFOLD_RESULT_TOOL_NOT_AWAITING_APPROVAL)
      << "too late";
  ASSERT_EQ(ssefold_agent_turn_deadline_ms(turn.t, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(has);
}

TEST(TurnPolicies, AnUnknownApprovalIdIsATypedStatusAndChangesNothing) {
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT, false));
  turn.add_tool("add", tool(SSEFOLD_TOOL_START_AUTO, true));
  turn.feed(CHAT_CALL + chat_chunk("{}", "tool_calls") + CHAT_DONE, 1);
  EXPECT_EQ(ssefold_agent_turn_approve(turn.t, V("approval_nope")), SSEFOLD_RESULT_TOOL_NOT_AWAITING_APPROVAL);
  EXPECT_NE(turn.error().find("approval_nope"), std::string::npos) << turn.error();
  EXPECT_EQ(ssefold_agent_turn_deny(turn.t, V("call_1"), V("x")), SSEFOLD_RESULT_TOOL_NOT_AWAITING_APPROVAL)
      << "a call id is not an approval id";
  EXPECT_NE(std::string(ssefold_result_str(SSEFOLD_RESULT_TOOL_NOT_AWAITING_APPROVAL)).find("approval"),
            std::string::npos);
  EXPECT_EQ(ssefold_agent_turn_approve(turn.t, ABSENT()), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_approve(turn.t, ssefold_str{"\xff", 1}), SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
  EXPECT_EQ(ssefold_agent_turn_deny(turn.t, ABSENT(), V("x")), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_approve(nullptr, V("approval_call_1")), SSEFOLD_RESULT_NULL_PARAMETER);
  turn.drain();
  EXPECT_TRUE(turn.actions.empty());
  EXPECT_FALSE(turn.finished()) << "the call still waits";
  ASSERT_EQ(ssefold_agent_turn_approve(turn.t, V("approval_call_1")), SSEFOLD_RESULT_OK);
  EXPECT_EQ(turn.error(), "");
  turn.drain();
  EXPECT_EQ(turn.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL});
}

// ------------------------------------------------------------ stalls and output

TEST(TurnPolicies, KeepAlivesAreNotContentTheFirstContentTimeoutClosesThenReconnects) {
  ssefold_agent_turn_config c = config(SSEFOLD_PROVIDER_ANTHROPIC);
  c.reconnect_policy.first_content_timeout_ms = 1000;
  Turn turn(c);
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 0), SSEFOLD_RESULT_OK);
  turn.feed(PING, 100);
  turn.feed(PING + COMMENT, 400);
  turn.feed(COMMENT + PING, 800);
  EXPECT_EQ(turn.content_events, 0) << "pings and comments are no content";
  bool has = false;
  uint64_t deadline = 0;
  ASSERT_EQ(ssefold_agent_turn_deadline_ms(turn.t, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has);
  EXPECT_EQ(deadline, 1000u) << "bytes flowed, content did not: counted from the connection";
  ASSERT_EQ(ssefold_agent_turn_tick(turn.t, 999), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_TRUE(turn.actions.empty());
  ASSERT_EQ(ssefold_agent_turn_tick(turn.t, 1000), SSEFOLD_RESULT_OK);
  turn.drain();
  ASSERT_EQ(turn.kinds(), (std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_CLOSE_CONNECTION,
                                                                       SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT}));
  EXPECT_EQ(turn.actions[1].replay, SSEFOLD_REPLAY_RETRY) << "no output yet";
  EXPECT_EQ(turn.actions[1].delay_ms, 1000u);
  EXPECT_FALSE(turn.finished());

  // Without reconnection it is the turn's failure, saying which timeout.
  ssefold_agent_turn_config d = config(SSEFOLD_PROVIDER_ANTHROPIC, false);
  d.reconnect_policy.first_content_timeout_ms = 1000;
  Turn stalled(d);
  ASSERT_EQ(ssefold_agent_turn_connected(stalled.t, 0), SSEFOLD_RESULT_OK);
  stalled.feed(PING + COMMENT, 100);
  ASSERT_EQ(ssefold_agent_turn_tick(stalled.t, 1000), SSEFOLD_RESULT_OK);
  stalled.drain();
  EXPECT_EQ(stalled.kinds(),
            std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_CLOSE_CONNECTION});
  EXPECT_TRUE(stalled.finished());
  ssefold_turn_failure f = stalled.failure();
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_IDLE_TIMEOUT);
  EXPECT_EQ(f.stall, SSEFOLD_STALL_KIND_FIRST_CONTENT);
  EXPECT_EQ(f.after_ms, 1000u);
  json::Value out = stalled.outcome();
  EXPECT_EQ(out["failure"]["kind"].text, "idle_timeout");
  EXPECT_EQ(out["failure"]["stall"].text, "first_content");
  EXPECT_EQ(out["failure"]["after_ms"].number, 1000);
}

TEST(TurnPolicies, ContentRestartsTheContentTimeout) {
  ssefold_agent_turn_config c = config(SSEFOLD_PROVIDER_OPENAI_CHAT, false);
  c.reconnect_policy.first_content_timeout_ms = 1000;
  c.reconnect_policy.content_timeout_ms = 300;
  Turn turn(c);
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 0), SSEFOLD_RESULT_OK);
  turn.feed(chat_chunk("{\"content\":\"Hel\"}"), 500);
  EXPECT_GT(turn.content_events, 0);
  bool has = false;
  uint64_t deadline = 0;
  ASSERT_EQ(ssefold_agent_turn_deadline_ms(turn.t, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has);
  EXPECT_EQ(deadline, 800u) << "the content timeout from the last content";
  ASSERT_EQ(ssefold_agent_turn_tick(turn.t, 800), SSEFOLD_RESULT_OK);
  turn.drain();
  ssefold_turn_failure f = turn.failure();
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_IDLE_TIMEOUT);
  EXPECT_EQ(f.stall, SSEFOLD_STALL_KIND_CONTENT);
  EXPECT_EQ(f.after_ms, 300u);
}

TEST(TurnPolicies, AfterOutputWithoutACursorAConnectionFailureEndsTheTurn) {
  const std::string partial = chat_chunk("{\"content\":\"Hel\"}");  // no SSE id: no cursor
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 0), SSEFOLD_RESULT_OK);
  turn.feed(partial, 10);
  ASSERT_EQ(ssefold_agent_turn_connection_failed(turn.t, V("reset by peer"), 20), SSEFOLD_RESULT_OK);
  turn.drain();
  EXPECT_TRUE(turn.actions.empty()) << "never sent again: the answer would be shown twice";
  EXPECT_TRUE(turn.finished());
  ssefold_turn_failure f = turn.failure();
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_TRANSPORT);
  EXPECT_NE(S(f.message).find("reset by peer"), std::string::npos) << S(f.message);
  const std::string text = turn.outcome_text();
  EXPECT_NE(text.find("\"gave_up\":\"not_resumable\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"output_started\":true"), std::string::npos) << text;

  // Before any output the same failure is retried, the same request again.
  Turn early(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  ASSERT_EQ(ssefold_agent_turn_connected(early.t, 0), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_connection_failed(early.t, V("reset by peer"), 20), SSEFOLD_RESULT_OK);
  early.drain();
  ASSERT_EQ(early.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT});
  EXPECT_EQ(early.actions[0].replay, SSEFOLD_REPLAY_RETRY);
  EXPECT_NE(early.outcome_text().find("\"output_started\":false"), std::string::npos);

  // A policy that opts in restarts it.
  ssefold_agent_turn_config c = config(SSEFOLD_PROVIDER_OPENAI_CHAT);
  c.reconnect_policy.restart_after_output = true;
  Turn restarted(c);
  ASSERT_EQ(ssefold_agent_turn_connected(restarted.t, 0), SSEFOLD_RESULT_OK);
  restarted.feed(partial, 10);
  ASSERT_EQ(ssefold_agent_turn_connection_failed(restarted.t, V("reset by peer"), 20), SSEFOLD_RESULT_OK);
  restarted.drain();
  ASSERT_EQ(restarted.kinds(),
            std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT});
  EXPECT_EQ(restarted.actions[0].replay, SSEFOLD_REPLAY_RESTART);
  EXPECT_EQ(restarted.actions[0].cursor, SSEFOLD_CURSOR_KIND_NONE);

  // With a cursor it is resumed.
  Turn resumed(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  ASSERT_EQ(ssefold_agent_turn_connected(resumed.t, 0), SSEFOLD_RESULT_OK);
  resumed.feed("id: 7\n" + partial, 10);
  ASSERT_EQ(ssefold_agent_turn_connection_failed(resumed.t, V("reset by peer"), 20), SSEFOLD_RESULT_OK);
  resumed.drain();
  ASSERT_EQ(resumed.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT});
  EXPECT_EQ(resumed.actions[0].replay, SSEFOLD_REPLAY_RESUME);
  EXPECT_EQ(resumed.actions[0].cursor, SSEFOLD_CURSOR_KIND_LAST_EVENT_ID);
  EXPECT_EQ(resumed.actions[0].last_event_id, "7");
}

TEST(TurnPolicies, TheOutcomeHasTimings) {
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  json::Value before = turn.outcome();
  ASSERT_TRUE(before.has("timings"));
  EXPECT_TRUE(before["timings"]["time_to_first_content_ms"].is_null());
  ASSERT_EQ(ssefold_agent_turn_request_sent(turn.t, 1000), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 1200), SSEFOLD_RESULT_OK);
  turn.feed(chat_chunk("{\"content\":\"Hel\"}"), 1500);
  turn.feed(chat_chunk("{\"content\":\"lo\"}"), 1600);
  turn.feed(chat_chunk("{}", "stop") + CHAT_DONE, 1900);
  ASSERT_TRUE(turn.finished());
  json::Value out = turn.outcome();
  const json::Value &t = out["timings"];
  EXPECT_EQ(t["started_ms"].number, 1000) << "from the request";
  EXPECT_EQ(t["time_to_first_content_ms"].number, 500) << turn.outcome_text();
  EXPECT_EQ(t["duration_ms"].number, 900);
  EXPECT_EQ(t["content_gaps"]["count"].number, 2);
  EXPECT_EQ(t["content_gaps"]["max_ms"].number, 300);
  ASSERT_EQ(t["attempts"].items.size(), 1u);
  EXPECT_EQ(t["attempts"][0]["outcome"].text, "completed");
  EXPECT_TRUE(out["output_started"].boolean);
  EXPECT_TRUE(out["gave_up"].is_null());
}

TEST(TurnPolicies, TheNewFunctionsRefuseBadArguments) {
  EXPECT_EQ(ssefold_agent_turn_request_sent(nullptr, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_http_status(nullptr, 429, nullptr, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_deny(nullptr, V("a"), V("b")), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_agent_turn_cancel_tool(nullptr, V("a")), SSEFOLD_RESULT_NULL_PARAMETER);
  Turn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  ssefold_retry_hints bad{false, 0, 3};
  EXPECT_EQ(ssefold_agent_turn_http_status(turn.t, 429, &bad, 0), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_NE(turn.error().find("should_retry"), std::string::npos) << turn.error();
  turn.drain();
  EXPECT_TRUE(turn.actions.empty()) << "refused: nothing changed";
  EXPECT_FALSE(turn.finished());
  EXPECT_EQ(ssefold_agent_turn_add_tool(turn.t, V("x"), ssefold_tool_options{false, false, 3, false}),
            SSEFOLD_RESULT_INVALID_ARGUMENT)
      << "an unknown start";
  ssefold_agent_turn_config c = config(SSEFOLD_PROVIDER_OPENAI_CHAT);
  c.reconnect_policy.jitter = 1.5;
  ssefold_agent_turn *t = nullptr;
  EXPECT_EQ(ssefold_agent_turn_new(&c, &t), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
}

// ------------------------------------------------------------ the reconnector

namespace {
struct Rec {
  ssefold_reconnector *r = nullptr;
  explicit Rec(const ssefold_reconnect_policy &p) { EXPECT_EQ(ssefold_reconnector_new(&p, &r), SSEFOLD_RESULT_OK); }
  ~Rec() { ssefold_reconnector_free(r); }
  Rec(const Rec &) = delete;
  Rec &operator=(const Rec &) = delete;
  ssefold_reconnect_decision end(ssefold_stream_end e) {
    ssefold_reconnect_decision d;
    EXPECT_EQ(ssefold_reconnector_on_end(r, &e, &d), SSEFOLD_RESULT_OK);
    return d;
  }
  ssefold_reconnect_decision end(uint32_t kind, const char *message = nullptr) {
    return end(ssefold_stream_end{kind, ABSENT(), message ? V(message) : ABSENT(), 0, {}});
  }
  ssefold_reconnect_decision http(uint16_t status, ssefold_retry_hints hints = {}) {
    return end(ssefold_stream_end{SSEFOLD_STREAM_END_KIND_HTTP_STATUS, ABSENT(), ABSENT(), status, hints});
  }
  /// Which timeout passed at `now` (has_value false: none), and whether
  /// output was delivered.
  std::pair<std::optional<ssefold_stall_kind>, bool> stall(uint64_t now) {
    bool stalled = true, started = false;
    ssefold_stall_kind kind;
    EXPECT_EQ(ssefold_reconnector_stall(r, now, &stalled, &kind, &started), SSEFOLD_RESULT_OK);
    return {stalled ? std::optional<ssefold_stall_kind>(kind) : std::nullopt, started};
  }
};

ssefold_reconnect_policy exact() {
  ssefold_reconnect_policy p;
  EXPECT_EQ(ssefold_reconnect_policy_default(&p), SSEFOLD_RESULT_OK);
  p.jitter = 0;
  return p;
}
}  // namespace

TEST(ReconnectorPolicies, ContentAndStalls) {
  ssefold_reconnect_policy p = exact();
  p.first_content_timeout_ms = 1000;
  p.content_timeout_ms = 500;
  p.idle_timeout_ms = 2000;
  Rec r(p);
  EXPECT_EQ(r.stall(1u << 30).first, std::nullopt) << "no connection, no stall";
  ASSERT_EQ(ssefold_reconnector_on_connected(r.r, 0), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_reconnector_on_activity(r.r, 900), SSEFOLD_RESULT_OK);  // a ping: bytes, no content
  EXPECT_EQ(r.stall(999), std::make_pair(std::optional<ssefold_stall_kind>(), false));
  EXPECT_EQ(r.stall(1000), std::make_pair(std::optional<ssefold_stall_kind>(SSEFOLD_STALL_KIND_FIRST_CONTENT), false));
  bool has = false;
  uint64_t deadline = 0;
  ASSERT_EQ(ssefold_reconnector_idle_deadline_ms(r.r, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has);
  EXPECT_EQ(deadline, 1000u) << "the earliest: first content before byte idle";
  ASSERT_EQ(ssefold_reconnector_on_content(r.r, 950), SSEFOLD_RESULT_OK);
  EXPECT_EQ(r.stall(1000), std::make_pair(std::optional<ssefold_stall_kind>(), true));
  EXPECT_EQ(r.stall(1450), std::make_pair(std::optional<ssefold_stall_kind>(SSEFOLD_STALL_KIND_CONTENT), true));
  ASSERT_EQ(ssefold_reconnector_idle_deadline_ms(r.r, &has, &deadline), SSEFOLD_RESULT_OK);
  EXPECT_EQ(deadline, 1450u);
  bool idle = false;
  ASSERT_EQ(ssefold_reconnector_is_idle(r.r, 1450, &idle), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(idle);
  ASSERT_EQ(ssefold_reconnector_on_content(r.r, 1400), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_reconnector_on_activity(r.r, 1400), SSEFOLD_RESULT_OK);
  EXPECT_EQ(r.stall(1899).first, std::nullopt);
  EXPECT_EQ(r.stall(1900).first, SSEFOLD_STALL_KIND_CONTENT);

  // Only the byte idle timeout: a ping keeps the connection alive.
  ssefold_reconnect_policy bytes = exact();
  bytes.first_content_timeout_ms = 0;
  bytes.content_timeout_ms = 0;
  bytes.idle_timeout_ms = 100;
  Rec b(bytes);
  ssefold_reconnector_on_connected(b.r, 0);
  ssefold_reconnector_on_activity(b.r, 90);
  EXPECT_EQ(b.stall(189).first, std::nullopt);
  EXPECT_EQ(b.stall(190).first, SSEFOLD_STALL_KIND_IDLE);

  bool stalled;
  ssefold_stall_kind kind;
  EXPECT_EQ(ssefold_reconnector_stall(r.r, 0, nullptr, &kind, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_stall(r.r, 0, &stalled, nullptr, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_stall(nullptr, 0, &stalled, &kind, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_stall(r.r, 0, &stalled, &kind, nullptr), SSEFOLD_RESULT_OK) << "output_started NULL";
  EXPECT_EQ(ssefold_reconnector_on_content(nullptr, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_reconnector_seed_jitter(nullptr, 1), SSEFOLD_RESULT_NULL_PARAMETER);
}

TEST(ReconnectorPolicies, DecisionsSayTheirReplayAndWhyTheyGiveUp) {
  ssefold_reconnect_policy p = exact();
  {
    Rec r(p);  // no output: the same request again
    ssefold_reconnector_on_connected(r.r, 0);
    ssefold_reconnect_decision d = r.end(SSEFOLD_STREAM_END_KIND_TRANSPORT_ERROR, "reset");
    EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
    EXPECT_EQ(d.replay, SSEFOLD_REPLAY_RETRY);
    EXPECT_EQ(d.delay_ms, 1000u);
  }
  {
    Rec r(p);  // output and a cursor: resumed
    ssefold_reconnector_on_connected(r.r, 0);
    ssefold_reconnector_on_event(r.r, V("e4"), nullptr, nullptr);
    ssefold_reconnector_on_content(r.r, 5);
    ssefold_reconnect_decision d = r.end(SSEFOLD_STREAM_END_KIND_ENDED_EARLY);
    EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
    EXPECT_EQ(d.replay, SSEFOLD_REPLAY_RESUME);
    EXPECT_EQ(d.cursor.kind, SSEFOLD_CURSOR_KIND_LAST_EVENT_ID);
    EXPECT_EQ(S(d.cursor.last_event_id), "e4");
  }
  {
    Rec r(p);  // output, no cursor: not resumable
    ssefold_reconnector_on_connected(r.r, 0);
    ssefold_reconnector_on_content(r.r, 5);
    ssefold_reconnect_decision d = r.end(SSEFOLD_STREAM_END_KIND_TRANSPORT_ERROR, "reset");
    EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_GIVE_UP);
    EXPECT_EQ(d.give_up_reason, SSEFOLD_GIVE_UP_REASON_NOT_RESUMABLE);
    EXPECT_EQ(d.last_end, SSEFOLD_STREAM_END_KIND_TRANSPORT_ERROR);
    EXPECT_EQ(S(d.message), "reset");
    EXPECT_EQ(d.status, 0u);
  }
  {
    ssefold_reconnect_policy restart = exact();
    restart.restart_after_output = true;
    Rec r(restart);  // unless the policy opted in
    ssefold_reconnector_on_connected(r.r, 0);
    ssefold_reconnector_on_content(r.r, 5);
    ssefold_reconnect_decision d = r.end(SSEFOLD_STREAM_END_KIND_IDLE_TIMEOUT);
    EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
    EXPECT_EQ(d.replay, SSEFOLD_REPLAY_RESTART);
  }
  {
    Rec r(p);  // HTTP: Retry-After, then a status not to retry
    ssefold_reconnect_decision d = r.http(429, hints_of("retry-after-ms", "2500"));
    EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
    EXPECT_EQ(d.delay_ms, 2500u);
    EXPECT_EQ(d.replay, SSEFOLD_REPLAY_RETRY);
    d = r.http(401);
    EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_GIVE_UP);
    EXPECT_EQ(d.give_up_reason, SSEFOLD_GIVE_UP_REASON_NOT_RETRYABLE);
    EXPECT_EQ(d.last_end, SSEFOLD_STREAM_END_KIND_HTTP_STATUS);
    EXPECT_EQ(d.status, 401u);
  }
  {
    Rec r(p);  // max_retries (2) reconnections, then retries exhausted
    for (uint32_t attempt = 1; attempt <= 2; attempt++) {
      ssefold_reconnect_decision d = r.http(503);
      ASSERT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
      EXPECT_EQ(d.attempt, attempt);
    }
    ssefold_reconnect_decision d = r.http(503);
    EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_GIVE_UP);
    EXPECT_EQ(d.give_up_reason, SSEFOLD_GIVE_UP_REASON_RETRIES_EXHAUSTED);
    EXPECT_EQ(d.status, 503u);
  }
  Rec r(p);
  ssefold_stream_end bad{SSEFOLD_STREAM_END_KIND_HTTP_STATUS, ABSENT(), ABSENT(), 429, {false, 0, 9}};
  ssefold_reconnect_decision d;
  EXPECT_EQ(ssefold_reconnector_on_end(r.r, &bad, &d), SSEFOLD_RESULT_INVALID_ARGUMENT);
  ssefold_str err{nullptr, 0};
  ASSERT_EQ(ssefold_reconnector_last_error(r.r, &err), SSEFOLD_RESULT_OK);
  EXPECT_NE(S(err).find("should_retry"), std::string::npos) << S(err);
}

TEST(ReconnectorPolicies, SeedJitterSpreadsTheDelaysDeterministically) {
  ssefold_reconnect_policy p = exact();
  p.jitter = 0.5;
  auto first_delay = [&](uint64_t seed) {
    Rec r(p);
    if (seed) {
      EXPECT_EQ(ssefold_reconnector_seed_jitter(r.r, seed), SSEFOLD_RESULT_OK);
    }
    ssefold_reconnector_on_connected(r.r, 0);
    return r.end(SSEFOLD_STREAM_END_KIND_ENDED_EARLY).delay_ms;
  };
  std::set<uint64_t> seen;
  for (uint64_t seed = 2; seed <= 40; seed += 2) {
    uint64_t ms = first_delay(seed);
    EXPECT_GE(ms, 500u);
    EXPECT_LE(ms, 1500u);
    EXPECT_EQ(ms, first_delay(seed)) << "the same seed, the same delay";
    seen.insert(ms);
  }
  EXPECT_GT(seen.size(), 5u) << "seeds spread the delays";

  // A turn's jitter_seed seeds its reconnector the same way.
  ssefold_agent_turn_config c = config(SSEFOLD_PROVIDER_OPENAI_CHAT);
  c.reconnect_policy.jitter = 0.5;
  c.jitter_seed = 1234;
  Turn turn(c);
  ASSERT_EQ(ssefold_agent_turn_connected(turn.t, 0), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_agent_turn_connection_failed(turn.t, V("reset"), 1), SSEFOLD_RESULT_OK);
  turn.drain();
  ASSERT_EQ(turn.kinds(), std::vector<ssefold_agent_turn_action_kind>{SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT});
  EXPECT_EQ(turn.actions[0].delay_ms, first_delay(1234));
}

TEST(RetryHints, FromHeaders) {
  ssefold_retry_hints h = hints_of("Retry-After", "2");
  EXPECT_TRUE(h.has_retry_after);
  EXPECT_EQ(h.retry_after_ms, 2000u);
  EXPECT_EQ(h.should_retry, 0u);
  h = hints_of("RETRY-AFTER-MS", "1500.5");
  EXPECT_EQ(h.retry_after_ms, 1500u);
  // An HTTP date, counted from the host's wall clock.
  const uint64_t date_ms = 1445412480000u;  // Wed, 21 Oct 2015 07:28:00 GMT
  h = hints_of("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT", date_ms - 3000);
  EXPECT_TRUE(h.has_retry_after);
  EXPECT_EQ(h.retry_after_ms, 3000u);
  h = hints_of("retry-after", "soon");
  EXPECT_FALSE(h.has_retry_after);
  EXPECT_EQ(hints_of("x-should-retry", "FALSE").should_retry, 2u);
  EXPECT_EQ(hints_of("x-should-retry", "maybe").should_retry, 0u);

  // retry-after-ms wins over Retry-After; other headers are ignored.
  ssefold_str names[] = {V("content-type"), V("Retry-After"), V("retry-after-ms"), V("x-should-retry")};
  ssefold_str values[] = {V("application/json"), V("30"), V("250"), V("true")};
  ASSERT_EQ(ssefold_retry_hints_from_headers(names, values, 4, 0, &h), SSEFOLD_RESULT_OK);
  EXPECT_EQ(h.retry_after_ms, 250u);
  EXPECT_EQ(h.should_retry, 1u);

  ssefold_retry_hints none{true, 7, 1};
  ASSERT_EQ(ssefold_retry_hints_from_headers(nullptr, nullptr, 0, 0, &none), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(none.has_retry_after);
  EXPECT_EQ(none.retry_after_ms, 0u);
  EXPECT_EQ(none.should_retry, 0u);
  EXPECT_EQ(ssefold_retry_hints_from_headers(nullptr, values, 1, 0, &h), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_retry_hints_from_headers(names, nullptr, 1, 0, &h), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_retry_hints_from_headers(names, values, 1, 0, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_str bad[] = {ssefold_str{"\xff", 1}};
  EXPECT_EQ(ssefold_retry_hints_from_headers(bad, values, 1, 0, &h), SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
}

// ------------------------------------------------------------ the C++ wrappers

TEST(TurnPolicies, CppWrappersOfThePolicies) {
  ssefold_retry_hints hints = ssefold::retry_hints_from_headers({{"Retry-After", "2"}}, 0);
  EXPECT_EQ(hints.retry_after_ms, 2000u);
  ssefold::AgentTurn turn(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  std::vector<ssefold_tool_event_kind> tool_kinds;
  std::string approval_id;
  turn.on_tool_event([&](const ssefold_tool_event &e) {
    tool_kinds.push_back(e.kind);
    if (e.kind == SSEFOLD_TOOL_EVENT_KIND_APPROVAL_REQUESTED) approval_id = S(e.approval_id);
  });
  turn.add_tool("add", ssefold::tool_options(false, false, SSEFOLD_TOOL_START_AUTO, true));
  turn.request_sent(0);
  turn.http_status(429, hints, 10);
  auto a = turn.poll_action();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, SSEFOLD_AGENT_TURN_ACTION_KIND_RECONNECT);
  EXPECT_EQ(a->delay_ms, 2000u);
  EXPECT_EQ(a->replay, SSEFOLD_REPLAY_RETRY);
  turn.connected(2010);
  turn.feed(CHAT_CALL + chat_chunk("{}", "tool_calls") + CHAT_DONE, 2020);
  EXPECT_EQ(approval_id, "approval_call_1");
  EXPECT_FALSE(turn.poll_action());
  try {
    turn.approve("approval_nope");
    FAIL() << "an unknown approval id must throw";
  } catch (const ssefold::Error &e) {
    EXPECT_EQ(e.code(), SSEFOLD_RESULT_TOOL_NOT_AWAITING_APPROVAL);
    EXPECT_NE(std::string(e.what()).find("approval_nope"), std::string::npos) << e.what();
  }
  turn.approve(approval_id);
  a = turn.poll_action();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, SSEFOLD_AGENT_TURN_ACTION_KIND_START_TOOL);
  turn.cancel_tool(a->call_id);
  EXPECT_TRUE(turn.is_finished());
  EXPECT_EQ(json::parse(turn.outcome_json())["results"][0]["output"].text, "Cancelled by the host");
  EXPECT_EQ(tool_kinds.front(), SSEFOLD_TOOL_EVENT_KIND_APPROVAL_REQUESTED);

  ssefold::AgentTurn denied(config(SSEFOLD_PROVIDER_OPENAI_CHAT, false));
  denied.add_tool("add", ssefold::tool_options(false, false, SSEFOLD_TOOL_START_AUTO, true));
  denied.feed(CHAT_CALL + chat_chunk("{}", "tool_calls") + CHAT_DONE, 1);
  denied.deny("approval_call_1", "no");
  EXPECT_TRUE(denied.is_finished());
  EXPECT_EQ(json::parse(denied.outcome_json())["results"][0]["output"].text, "Denied by the user: no");

  ssefold::AgentTurn refused(config(SSEFOLD_PROVIDER_OPENAI_CHAT));
  refused.http_status(404, std::nullopt, 1);
  ssefold::AgentTurn::Failure f = refused.failure();
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_HTTP);
  EXPECT_EQ(f.http_status, 404u);
  EXPECT_THROW(refused.http_status(429, ssefold_retry_hints{false, 0, 5}, 2), ssefold::Error);

  ssefold_agent_turn_config sc = config(SSEFOLD_PROVIDER_ANTHROPIC, false);
  sc.reconnect_policy.first_content_timeout_ms = 100;
  ssefold::AgentTurn stalled(sc);
  stalled.connected(0);
  stalled.tick(100);
  f = stalled.failure();
  EXPECT_EQ(f.kind, SSEFOLD_TURN_FAILURE_KIND_IDLE_TIMEOUT);
  EXPECT_EQ(f.stall, SSEFOLD_STALL_KIND_FIRST_CONTENT);
  EXPECT_EQ(f.after_ms, 100u);

  ssefold_reconnect_policy p = exact();
  p.first_content_timeout_ms = 1000;
  ssefold::Reconnector r(&p);
  r.seed_jitter(7);
  r.on_connected(0);
  EXPECT_EQ(r.stall(999), std::nullopt);
  EXPECT_EQ(r.stall(1000), SSEFOLD_STALL_KIND_FIRST_CONTENT);
  EXPECT_FALSE(r.output_started());
  EXPECT_TRUE(r.replay_safe());
  r.on_content(500);
  EXPECT_TRUE(r.output_started());
  EXPECT_FALSE(r.replay_safe()) << "output and no cursor";
  ssefold_reconnect_decision d = r.on_http_status(500);
  EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_GIVE_UP) << "output and no cursor";
  EXPECT_EQ(d.give_up_reason, SSEFOLD_GIVE_UP_REASON_NOT_RESUMABLE);
  ssefold::Reconnector fresh(&p);
  d = fresh.on_http_status(429, ssefold::retry_hints_from_headers({{"retry-after-ms", "20"}}, 0));
  EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_RECONNECT);
  EXPECT_EQ(d.delay_ms, 20u);
  d = fresh.on_end(SSEFOLD_STREAM_END_KIND_COMPLETED);
  EXPECT_EQ(d.kind, SSEFOLD_DECISION_KIND_DONE);
}
