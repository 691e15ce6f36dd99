// Stream lifecycle through the C ABI: abort, reconnect (restart / resume),
// the resume cursor, and the UI state attached to a stream. Every function
// and its error paths.
#include <gtest/gtest.h>

#include "common.hpp"
#include "ssefold.hpp"

namespace {

/// An Anthropic answer with SSE ids on every event (as tests/reconnect_flow.rs).
std::string answer() {
  const char *events[][2] = {
      {"message_start",
       R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}})"},
      {"content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
      {"content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}})"},
      {"content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}})"},
      {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
      {"message_delta",
       R"({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}})"},
      {"message_stop", R"({"type":"message_stop"})"},
  };
  std::string out = "retry: 250\n\n";
  int i = 1;
  for (auto &e : events) {
    out += "id: " + std::to_string(i++) + "\nevent: " + e[0] + "\ndata: " + e[1] + "\n\n";
  }
  return out;
}

/// The prefix of `body` up to (not including) event `id`.
std::string before_id(const std::string &body, int id) {
  return body.substr(0, body.find("id: " + std::to_string(id) + "\n"));
}

struct Seen {
  std::vector<ssefold_stream_event_kind> kinds;
  std::vector<std::string> texts;
  std::string text;
  static void callback(void *user_data, const ssefold_stream_event *e) {
    auto *s = static_cast<Seen *>(user_data);
    s->kinds.push_back(e->kind);
    s->texts.push_back(S(e->text));
    if (e->kind == SSEFOLD_STREAM_EVENT_KIND_TEXT_DELTA) s->text += S(e->text);
  }
};

struct Fixture : ::testing::Test {
  ssefold_stream *s = nullptr;
  Seen seen;
  void SetUp() override {
    ASSERT_EQ(ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, nullptr, &s), SSEFOLD_RESULT_OK);
    ASSERT_EQ(ssefold_stream_set_callback(s, &Seen::callback, &seen, false), SSEFOLD_RESULT_OK);
  }
  void TearDown() override { ssefold_stream_free(s); }
  ssefold_result feed(const std::string &b) { return ssefold_stream_feed(s, B(b), b.size()); }
  std::string snapshot() {
    ssefold_str v{nullptr, 0};
    EXPECT_EQ(ssefold_stream_ui_snapshot_json(s, &v), SSEFOLD_RESULT_OK);
    return S(v);
  }
  std::string last_error() {
    ssefold_str v{nullptr, 0};
    EXPECT_EQ(ssefold_stream_last_error(s, &v), SSEFOLD_RESULT_OK);
    return S(v);
  }
};

bool contains(const std::string &hay, const std::string &needle) { return hay.find(needle) != std::string::npos; }

using Abort = Fixture;

TEST_F(Abort, DeliversOneTurnEndWithStopReasonAbortedThenNothing) {
  std::string body = answer();
  ASSERT_EQ(feed(before_id(body, 4)), SSEFOLD_RESULT_OK);
  bool aborted = true;
  ASSERT_EQ(ssefold_stream_is_aborted(s, &aborted), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(aborted);
  size_t before = seen.kinds.size();
  ASSERT_EQ(ssefold_stream_abort(s), SSEFOLD_RESULT_OK);
  ASSERT_EQ(seen.kinds.size(), before + 1);
  EXPECT_EQ(seen.kinds.back(), SSEFOLD_STREAM_EVENT_KIND_TURN_END);
  EXPECT_EQ(seen.texts.back(), "aborted");
  ASSERT_EQ(ssefold_stream_is_aborted(s, &aborted), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(aborted);
  // Twice: nothing more, still OK.
  EXPECT_EQ(ssefold_stream_abort(s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(seen.kinds.size(), before + 1);
  // Closed afterwards.
  EXPECT_EQ(feed(body.substr(before_id(body, 4).size())), SSEFOLD_RESULT_STREAM_CLOSED);
  EXPECT_EQ(ssefold_stream_reconnect(s), SSEFOLD_RESULT_STREAM_CLOSED);
  EXPECT_FALSE(last_error().empty());
  EXPECT_EQ(seen.kinds.size(), before + 1);
}

TEST_F(Abort, AfterFinishDeliversNothing) {
  ASSERT_EQ(feed(answer()), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_finish(s), SSEFOLD_RESULT_OK);
  size_t n = seen.kinds.size();
  EXPECT_EQ(ssefold_stream_abort(s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(seen.kinds.size(), n);
  bool aborted = true;
  ASSERT_EQ(ssefold_stream_is_aborted(s, &aborted), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(aborted);
}

TEST(AbortNull, NullHandleAndOutParams) {
  EXPECT_EQ(ssefold_stream_abort(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  bool b = false;
  EXPECT_EQ(ssefold_stream_is_aborted(nullptr, &b), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_stream *s = nullptr;
  ASSERT_EQ(ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, nullptr, &s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_stream_is_aborted(s, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_stream_free(s);
}

using CompleteAtEnd = Fixture;

/// An OpenAI Chat body that ends after its finish_reason without
/// data: [DONE] (vLLM, TGI): complete at its end, and finish ends the turn.
TEST_F(CompleteAtEnd, ChatWithoutDoneIsCompleteAndFinishEndsTheTurn) {
  const std::string head = R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":)";
  bool complete = true;
  ASSERT_EQ(ssefold_stream_is_complete_at_end(s, &complete), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(complete);
  ASSERT_EQ(feed("data: " + head + R"([{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]})" + "\n\n"),
            SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_is_complete_at_end(s, &complete), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(complete);
  ASSERT_EQ(feed("data: " + head + R"([{"index":0,"delta":{},"finish_reason":"stop"}]})" + "\n\n"),
            SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_is_complete_at_end(s, &complete), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(complete);
  ASSERT_EQ(ssefold_stream_finish(s), SSEFOLD_RESULT_OK);
  ASSERT_GE(seen.kinds.size(), 2u);
  EXPECT_EQ(seen.kinds[seen.kinds.size() - 2], SSEFOLD_STREAM_EVENT_KIND_WARNING);
  EXPECT_TRUE(contains(seen.texts[seen.texts.size() - 2], "without data: [DONE]"));
  EXPECT_EQ(seen.kinds.back(), SSEFOLD_STREAM_EVENT_KIND_TURN_END);
  EXPECT_EQ(seen.texts.back(), "stop");
  EXPECT_EQ(seen.text, "Hi");
  ASSERT_EQ(ssefold_stream_is_complete_at_end(s, &complete), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(complete);
}

TEST_F(CompleteAtEnd, FalseWhileTheAnswerIsNotWholeAndAfterAbort) {
  std::string body = answer();
  ASSERT_EQ(feed(before_id(body, 7)), SSEFOLD_RESULT_OK);
  bool complete = true;
  ASSERT_EQ(ssefold_stream_is_complete_at_end(s, &complete), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(complete);  // Anthropic: message_stop not yet
  ASSERT_EQ(ssefold_stream_abort(s), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_is_complete_at_end(s, &complete), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(complete);
  ssefold::Stream whole(SSEFOLD_PROVIDER_AUTO);
  whole.feed(body);
  EXPECT_TRUE(whole.is_complete_at_end());
}

TEST(CompleteAtEndNull, NullHandleAndOutParam) {
  bool b = false;
  EXPECT_EQ(ssefold_stream_is_complete_at_end(nullptr, &b), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_stream *s = nullptr;
  ASSERT_EQ(ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, nullptr, &s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_stream_is_complete_at_end(s, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_stream_free(s);
}

using Reconnect = Fixture;

TEST_F(Reconnect, ResumeWithLastEventIdContinuesTheTurn) {
  std::string body = answer();
  std::string first = before_id(body, 4);
  ASSERT_EQ(feed(first + "id: 4\nevent: content_block_delta\ndata: {\"ty"), SSEFOLD_RESULT_OK);
  ssefold_resume_cursor c;
  ASSERT_EQ(ssefold_stream_resume_cursor(s, &c), SSEFOLD_RESULT_OK);
  EXPECT_EQ(c.kind, SSEFOLD_CURSOR_KIND_LAST_EVENT_ID);
  EXPECT_EQ(S(c.last_event_id), "3");
  EXPECT_EQ(c.starting_after, 0u);
  bool has = false;
  uint64_t retry = 0;
  ASSERT_EQ(ssefold_stream_reconnection_time(s, &has, &retry), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(has);
  EXPECT_EQ(retry, 250u);
  ASSERT_EQ(ssefold_stream_reconnect(s), SSEFOLD_RESULT_OK);
  ASSERT_EQ(feed(body.substr(first.size())), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_finish(s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(seen.text, "Hello, world");
  for (auto k : seen.kinds) EXPECT_NE(k, SSEFOLD_STREAM_EVENT_KIND_TURN_RESET);
}

TEST_F(Reconnect, RestartDeliversTurnResetAndClearsTheUiState) {
  ASSERT_EQ(ssefold_stream_enable_ui(s), SSEFOLD_RESULT_OK);
  std::string body = answer();
  ASSERT_EQ(ssefold_stream_set_time(s, 100), SSEFOLD_RESULT_OK);
  ASSERT_EQ(feed(before_id(body, 5)), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(contains(snapshot(), "\"text\":\"Hello, world\""));
  ASSERT_EQ(ssefold_stream_reconnect(s), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_set_time(s, 200), SSEFOLD_RESULT_OK);
  ASSERT_EQ(feed(before_id(body, 3)), SSEFOLD_RESULT_OK);  // the server started over
  bool reset = false;
  for (auto k : seen.kinds) reset = reset || k == SSEFOLD_STREAM_EVENT_KIND_TURN_RESET;
  EXPECT_TRUE(reset);
  std::string snap = snapshot();
  EXPECT_FALSE(contains(snap, "Hello")) << snap;
  EXPECT_TRUE(contains(snap, "\"parts\":[{")) << snap;
  ASSERT_EQ(feed(body.substr(before_id(body, 3).size())), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_finish(s), SSEFOLD_RESULT_OK);
  snap = snapshot();
  EXPECT_TRUE(contains(snap, "\"text\":\"Hello, world\"")) << snap;
  EXPECT_TRUE(contains(snap, "\"at_ms\":200")) << snap;
  EXPECT_FALSE(contains(snap, "\"at_ms\":100")) << snap;
  EXPECT_TRUE(contains(snap, "\"ended\":true")) << snap;
}

TEST_F(Reconnect, AfterFinishIsClosed) {
  ASSERT_EQ(feed(answer()), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_finish(s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_stream_reconnect(s), SSEFOLD_RESULT_STREAM_CLOSED);
  EXPECT_FALSE(last_error().empty());
}

TEST_F(Reconnect, CursorNoneAndNoRetryBeforeAnything) {
  ssefold_resume_cursor c;
  ASSERT_EQ(ssefold_stream_resume_cursor(s, &c), SSEFOLD_RESULT_OK);
  EXPECT_EQ(c.kind, SSEFOLD_CURSOR_KIND_NONE);
  EXPECT_EQ(c.last_event_id.ptr, nullptr);
  bool has = true;
  uint64_t retry = 7;
  ASSERT_EQ(ssefold_stream_reconnection_time(s, &has, &retry), SSEFOLD_RESULT_OK);
  EXPECT_FALSE(has);
  EXPECT_EQ(retry, 0u);
}

TEST_F(Reconnect, ResponsesCursorIsStartingAfter) {
  std::string body =
      "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\","
      "\"object\":\"response\",\"status\":\"in_progress\",\"model\":\"m\",\"output\":[]}}\n\n";
  ASSERT_EQ(feed(body), SSEFOLD_RESULT_OK);
  ssefold_resume_cursor c;
  ASSERT_EQ(ssefold_stream_resume_cursor(s, &c), SSEFOLD_RESULT_OK);
  EXPECT_EQ(c.kind, SSEFOLD_CURSOR_KIND_STARTING_AFTER);
  EXPECT_EQ(c.starting_after, 0u);
}

TEST(ReconnectNull, NullHandleAndOutParams) {
  EXPECT_EQ(ssefold_stream_reconnect(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_resume_cursor c;
  EXPECT_EQ(ssefold_stream_resume_cursor(nullptr, &c), SSEFOLD_RESULT_NULL_PARAMETER);
  bool has;
  uint64_t ms;
  EXPECT_EQ(ssefold_stream_reconnection_time(nullptr, &has, &ms), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_stream *s = nullptr;
  ASSERT_EQ(ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, nullptr, &s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_stream_resume_cursor(s, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_stream_reconnection_time(s, nullptr, &ms), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_stream_reconnection_time(s, &has, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_stream_free(s);
}

using Ui = Fixture;

TEST_F(Ui, SnapshotAfterEveryPrefixAgreesWithTheEvents) {
  ASSERT_EQ(ssefold_stream_enable_ui(s), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_enable_ui(s), SSEFOLD_RESULT_OK);  // again: kept
  std::string body = answer();
  for (size_t i = 0; i < body.size(); ++i) {
    ASSERT_EQ(ssefold_stream_set_time(s, i), SSEFOLD_RESULT_OK);
    ASSERT_EQ(ssefold_stream_feed(s, B(body) + i, 1), SSEFOLD_RESULT_OK);
    std::string snap = snapshot();
    if (!seen.text.empty()) {
      EXPECT_TRUE(contains(snap, "\"text\":\"" + seen.text + "\"")) << snap;
    }
  }
  ASSERT_EQ(ssefold_stream_finish(s), SSEFOLD_RESULT_OK);
  std::string snap = snapshot();
  EXPECT_TRUE(contains(snap, "\"stop_reason\":\"end_turn\"")) << snap;
  EXPECT_TRUE(contains(snap, "\"ended\":true")) << snap;
  EXPECT_TRUE(contains(snap, "\"connection\":\"connected\"")) << snap;
}

TEST_F(Ui, AbortIsAppliedToTheUiState) {
  ASSERT_EQ(ssefold_stream_enable_ui(s), SSEFOLD_RESULT_OK);
  std::string body = answer();
  ASSERT_EQ(feed(before_id(body, 4)), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_abort(s), SSEFOLD_RESULT_OK);
  std::string snap = snapshot();
  EXPECT_TRUE(contains(snap, "\"aborted\":true")) << snap;
  EXPECT_TRUE(contains(snap, "\"stop_reason\":\"aborted\"")) << snap;
  EXPECT_TRUE(contains(snap, "\"status\":\"incomplete\"")) << snap;
}

TEST_F(Ui, ConnectionAndToolProgress) {
  ASSERT_EQ(ssefold_stream_enable_ui(s), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(contains(snapshot(), "\"connection\":\"connecting\""));
  ASSERT_EQ(ssefold_stream_set_connection(s, SSEFOLD_CONNECTION_STATE_RECONNECTING), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(contains(snapshot(), "\"connection\":\"reconnecting\""));
  EXPECT_EQ(ssefold_stream_set_connection(s, 99), SSEFOLD_RESULT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "99"));
  ASSERT_EQ(ssefold_stream_set_tool_progress(s, V("toolu_1"), V("{\"pct\":50}")), SSEFOLD_RESULT_OK);
  EXPECT_TRUE(contains(snapshot(), "\"tool_progress\":{\"toolu_1\":{\"pct\":50}}")) << snapshot();
  EXPECT_EQ(ssefold_stream_set_tool_progress(s, V("toolu_1"), V("{\"pct\":")), SSEFOLD_RESULT_JSON_INVALID);
  EXPECT_EQ(ssefold_stream_set_tool_progress(s, ABSENT(), V("1")), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_stream_set_tool_progress(s, V("a"), ABSENT()), SSEFOLD_RESULT_NULL_PARAMETER);
  std::string bad = "\xff";
  EXPECT_EQ(ssefold_stream_set_tool_progress(s, V(bad), V("1")), SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT);
}

TEST_F(Ui, NotEnabledIsBadState) {
  ssefold_str v{nullptr, 0};
  EXPECT_EQ(ssefold_stream_ui_snapshot_json(s, &v), SSEFOLD_RESULT_BAD_STATE);
  EXPECT_TRUE(contains(last_error(), "enable_ui"));
  EXPECT_EQ(ssefold_stream_set_connection(s, SSEFOLD_CONNECTION_STATE_CONNECTED), SSEFOLD_RESULT_BAD_STATE);
  EXPECT_EQ(ssefold_stream_set_tool_progress(s, V("a"), V("1")), SSEFOLD_RESULT_BAD_STATE);
  EXPECT_EQ(ssefold_stream_set_time(s, 5), SSEFOLD_RESULT_OK);
}

TEST(UiNull, NullHandleAndOutParams) {
  EXPECT_EQ(ssefold_stream_enable_ui(nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_stream_set_time(nullptr, 1), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_str v{nullptr, 0};
  EXPECT_EQ(ssefold_stream_ui_snapshot_json(nullptr, &v), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_stream_set_connection(nullptr, 0), SSEFOLD_RESULT_NULL_PARAMETER);
  EXPECT_EQ(ssefold_stream_set_tool_progress(nullptr, V("a"), V("1")), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_stream *s = nullptr;
  ASSERT_EQ(ssefold_stream_new(SSEFOLD_PROVIDER_AUTO, nullptr, &s), SSEFOLD_RESULT_OK);
  ASSERT_EQ(ssefold_stream_enable_ui(s), SSEFOLD_RESULT_OK);
  EXPECT_EQ(ssefold_stream_ui_snapshot_json(s, nullptr), SSEFOLD_RESULT_NULL_PARAMETER);
  ssefold_stream_free(s);
}

TEST(Cpp, StreamWrapperLifecycleAndUi) {
  ssefold::Stream st;
  std::vector<ssefold_stream_event_kind> kinds;
  st.on_event([&](const ssefold_stream_event &e) { kinds.push_back(e.kind); });
  st.enable_ui();
  st.set_time(42);
  std::string body = answer();
  st.feed(before_id(body, 4));
  auto c = st.resume_cursor();
  EXPECT_EQ(c.kind, SSEFOLD_CURSOR_KIND_LAST_EVENT_ID);
  EXPECT_EQ(c.last_event_id, "3");
  EXPECT_EQ(st.reconnection_time(), std::optional<std::uint64_t>(250));
  st.reconnect();
  st.feed(body.substr(before_id(body, 4).size()));
  st.set_connection(SSEFOLD_CONNECTION_STATE_DISCONNECTED);
  st.set_tool_progress("x", "true");
  std::string snap = st.ui_snapshot_json();
  EXPECT_TRUE(contains(snap, "\"text\":\"Hello, world\"")) << snap;
  EXPECT_TRUE(contains(snap, "\"at_ms\":42")) << snap;
  EXPECT_FALSE(st.is_aborted());
  st.abort();  // after the terminal event: nothing
  EXPECT_FALSE(st.is_aborted());
  EXPECT_THROW(st.reconnect(), ssefold::Error);
  EXPECT_THROW(st.set_tool_progress("x", "{"), ssefold::Error);

  ssefold::Stream st2;
  std::vector<ssefold_stream_event_kind> k2;
  st2.on_event([&](const ssefold_stream_event &e) { k2.push_back(e.kind); });
  st2.feed(before_id(body, 3));
  st2.abort();
  EXPECT_TRUE(st2.is_aborted());
  EXPECT_EQ(k2.back(), SSEFOLD_STREAM_EVENT_KIND_TURN_END);
  EXPECT_THROW(st2.ui_snapshot_json(), ssefold::Error);
}

}  // namespace
