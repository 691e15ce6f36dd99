"""ssefold.TurnCore, the core's sans-IO agent turn, driven by hand: its
actions, its outcome and next request, its typed failures and misuse, the
reconnection policy and the idle deadline, an abort, and the host-stream
mode (apply_event / end_of_events) against the turn that folds the body."""

from __future__ import annotations

import json
from typing import Any, List, Tuple

import pytest

import ssefold
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
INTERLEAVED = (FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes()

CHAT = (
    b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
    b'"id":"call_1","type":"function","function":{"name":"add","arguments":"{\\"a\\":1}"}}]}}]}\n\n'
    b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
    b'"finish_reason":"tool_calls"}]}\n\n'
    b"data: [DONE]\n\n"
)


def drain(core: ssefold.TurnCore) -> List[ssefold.TurnAction]:
    return core.poll_actions()


def test_a_turn_starts_each_ready_call_and_writes_the_next_request() -> None:
    core = ssefold.TurnCore()
    core.add_tool("add")
    events = core.feed(CHAT, now_ms=0)
    assert [e.type for e in events][:2] == ["message_start", "part_start"]
    assert core.provider == "openai_chat"
    (action,) = drain(core)
    assert (action.kind, action.call_id, action.name, action.arguments, action.input_format) == (
        "start_tool", "call_1", "add", '{"a":1}', "json"
    )
    assert action.delay_ms is None and action.cursor is None and "start_tool" in repr(action)
    assert [e.type for e in events][-1] == "tool_execution_started", "shown when the turn starts it"
    assert core.is_stream_ended and not core.is_finished and core.running == 1
    assert core.end_of_body() == [] and drain(core) == []
    assert core.results() == []
    events = core.tool_result("call_1", "1")
    assert [(e.type, e.call_id, e.is_error) for e in events if isinstance(e, ssefold.ToolExecutionEvent)] == [
        ("tool_execution_finished", "call_1", False)
    ]
    assert len(events) == 1
    assert core.is_finished and core.running == 0
    assert [(r.call_id, r.output, r.kind, r.id_synthesized) for r in core.results()] == [("call_1", "1", "ran", False)]
    outcome = core.outcome()
    assert (outcome.provider, outcome.stop_reason, outcome.aborted, outcome.failure, outcome.retryable) == (
        "openai_chat", "tool_calls", False, None, False
    )
    assert [(c.id, c.name, c.outcome, c.arguments, c.provider_type) for c in outcome.calls] == [
        ("call_1", "add", "complete", '{"a":1}', "function")
    ]
    assert outcome.message["choices"][0]["finish_reason"] == "tool_calls"
    assert outcome.next is not None
    assert outcome.next.append == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a":1}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "1"},
    ]
    assert outcome.next.assistant == outcome.next.append[0] and outcome.next.tool_results == outcome.next.append[1:]
    assert repr(outcome).startswith('TurnOutcome(provider="openai_chat", stop_reason="tool_calls", aborted=False')
    assert "NextRequest(" in repr(outcome.next)


def test_calls_that_must_not_run_get_their_error_result_in_call_order() -> None:
    # toolu_X's arguments are cut by an invalid token, toolu_Y's are invalid
    # JSON; a third call would name a tool the host lacks.
    core = ssefold.TurnCore("anthropic")
    core.add_tool("write")
    core.feed((FIXTURES / "anthropic" / "invalid_tool_arguments.sse").read_bytes())
    core.end_of_body()
    assert drain(core) == [], "nothing runs"
    outcome = core.outcome()
    assert [(r.call_id, r.kind, r.is_error) for r in outcome.results] == [
        ("toolu_X", "invalid_input", True),
        ("toolu_Y", "invalid_input", True),
    ]
    assert outcome.results[1].output.startswith("Not run: invalid arguments for read: ")
    # Gemini never sends ids: each call gets a synthesized one; an unknown tool its error.
    core = ssefold.TurnCore()
    core.add_tool("get_weather")
    core.feed((FIXTURES / "gemini" / "function_calls.sse").read_bytes())
    core.end_of_body()
    started = [a.call_id for a in drain(core) if a.kind == "start_tool" and a.call_id is not None]
    for call_id in started:
        core.tool_result(call_id, "sunny")
    outcome = core.outcome()
    assert started == ["ssefold_call_0"]
    assert [r.id_synthesized for r in outcome.results] == [True, True, True, False]  # the last has Vertex's id
    assert {r.kind for r in outcome.results} == {"ran", "unknown_tool"}
    assert [r.call_id for r in outcome.results] == [c.id for c in outcome.calls]
    assert outcome.next is not None and outcome.next.tool_results["role"] == "user"


def test_failures_are_typed_errors_in_the_outcome() -> None:
    def failed(body: bytes, provider: str, **config: Any) -> ssefold.TurnOutcome:
        core = ssefold.TurnCore(provider, **config)
        core.add_tool("get_weather")
        core.feed(body)
        core.end_of_body()
        for action in drain(core):
            if action.kind == "start_tool":
                assert action.call_id is not None
                core.tool_result(action.call_id, "x")
        assert core.is_finished
        return core.outcome()

    truncated = failed((FIXTURES / "anthropic" / "truncated.sse").read_bytes(), "anthropic")
    assert isinstance(truncated.failure, ssefold.IncompleteStreamError) and not truncated.retryable
    provider = failed((FIXTURES / "anthropic" / "error_mid_stream.sse").read_bytes(), "anthropic")
    assert isinstance(provider.failure, ssefold.RetryableProviderError)
    assert provider.failure.type == "overloaded_error" and provider.retryable
    many = failed((FIXTURES / "openai_chat" / "parallel_tools.sse").read_bytes(), "openai_chat", max_calls=1)
    assert isinstance(many.failure, ssefold.LimitExceededError)
    assert (many.failure.limit, many.failure.max) == ("max_calls", 1)

    core = ssefold.TurnCore("anthropic")
    core.add_tool("get_weather")
    core.add_tool("get_time")
    core.feed(INTERLEAVED[:1550])  # toolu_B is ready (and started), toolu_A still streams
    assert [a.call_id for a in drain(core)] == ["toolu_B"]
    events = core.connection_failed("ConnectionResetError: reset by peer")
    assert [a.kind for a in drain(core)] == ["cancel_tool"]
    outcome = core.outcome()
    assert isinstance(outcome.failure, ssefold.IncompleteStreamError) and outcome.retryable
    assert outcome.failure.last is not None and outcome.failure.last.kind == "transport_error"
    assert "reset by peer" in str(outcome.failure)
    assert [(r.call_id, r.kind) for r in outcome.results] == [("toolu_B", "aborted"), ("toolu_A", "incomplete")]
    assert outcome.results[0].output == "Aborted: connection failed: ConnectionResetError: reset by peer"
    assert outcome.results[1].output == "Not run: the arguments of get_weather were cut off before they were complete"
    tool_events = [(e.type, e.call_id) for e in events if isinstance(e, ssefold.ToolExecutionEvent)]
    assert tool_events == [("tool_execution_finished", "toolu_A"), ("tool_execution_finished", "toolu_B")]


def test_misuse_is_a_typed_error_and_changes_nothing() -> None:
    core = ssefold.TurnCore()
    core.add_tool("add")
    core.feed(CHAT)
    drain(core)
    with pytest.raises(ssefold.SchedulerError) as info:
        core.tool_result("nope", "x")
    assert info.value.kind == "unknown_call_id"
    with pytest.raises(ssefold.SchedulerError) as info:
        core.tool_update("nope", "x")
    assert info.value.kind == "unknown_call_id"
    assert core.running == 1
    with pytest.raises(TypeError):
        core.feed("text")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        core.apply_event({"type": "turn_reset"})  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ssefold.TurnCore("nope")
    with pytest.raises(ValueError, match="max_calls must be at least 1, got 0"):
        ssefold.TurnCore(max_calls=0)
    assert [(e.type, e.text) for e in core.tool_update("call_1", "half way")] == [("tool_execution_update", "half way")]
    assert [e.type for e in core.tool_result("call_1", "1")] == ["tool_execution_finished"]
    assert core.is_finished


def test_abort_cancels_the_running_calls_and_answers_every_call() -> None:
    core = ssefold.TurnCore("anthropic")
    core.add_tool("get_weather")
    core.add_tool("get_time")
    core.feed(INTERLEAVED[:1550])
    started = [a.call_id for a in drain(core) if a.kind == "start_tool" and a.call_id is not None]
    assert started == ["toolu_B"]
    events = core.abort("user pressed stop")
    assert [e.stop_reason for e in events if isinstance(e, ssefold.StreamEvent) and e.type == "turn_end"] == ["aborted"]
    assert [a.call_id for a in drain(core) if a.kind == "cancel_tool"] == started
    assert core.is_finished
    core.tool_result(started[0], "late")  # dropped
    outcome = core.outcome()
    assert outcome.aborted and outcome.failure is None
    assert [(r.call_id, r.kind, r.output) for r in outcome.results] == [
        ("toolu_B", "aborted", "Aborted: user pressed stop"),
        ("toolu_A", "incomplete", "Not run: the arguments of get_weather were cut off before they were complete"),
    ]
    assert core.abort("again") == []


def test_a_reconnection_policy_asks_to_reconnect_and_the_deadline_to_tick() -> None:
    # Anthropic gives no resume cursor: after output, only a policy that
    # opts in sends the request again (the server starts over).
    policy = ssefold.ReconnectPolicy(
        initial_delay_ms=10, max_retries=2, idle_timeout_ms=1000, jitter=0, restart_after_output=True
    )
    core = ssefold.TurnCore("anthropic", reconnect=policy)
    core.add_tool("get_weather")
    core.add_tool("get_time")
    core.connected(now_ms=0)
    assert core.deadline_ms == 1000
    core.feed(INTERLEAVED[:400], now_ms=10)
    assert core.tick(now_ms=500) == [] and drain(core) == []
    core.end_of_body(now_ms=20)  # ended before the answer did
    (reconnect,) = drain(core)
    assert (reconnect.kind, reconnect.attempt, reconnect.delay_ms, reconnect.replay) == ("reconnect", 1, 10, "restart")
    assert reconnect.cursor is not None and "reconnect" in repr(reconnect)
    assert core.deadline_ms is None, "no connection to watch while reconnecting"
    core.connected(now_ms=40)
    core.tick(now_ms=2000)  # idle: closed, reconnected
    assert [a.kind for a in drain(core)] == ["close_connection", "reconnect"]
    core.connected(now_ms=2100)
    events = core.feed(INTERLEAVED, now_ms=2100)  # the server starts over
    assert "turn_reset" in [e.type for e in events if isinstance(e, ssefold.StreamEvent)]
    for action in drain(core):
        if action.kind == "start_tool":
            assert action.call_id is not None
            core.tool_result(action.call_id, "ok")
    assert core.is_finished
    outcome = core.outcome()
    # Call order: the order the calls were complete (toolu_B's block ends first).
    assert outcome.failure is None and [r.call_id for r in outcome.results] == ["toolu_B", "toolu_A"]
    assert outcome.output_started and outcome.gave_up is None
    assert [a["outcome"] for a in outcome.timings["attempts"]] == ["ended_early", "idle_timeout", "completed"]


def events_of(body: bytes, provider: str) -> Tuple[List[ssefold.StreamEvent], ssefold.Stream, Any]:
    stream = ssefold.Stream(provider)
    events: List[ssefold.StreamEvent] = []
    try:
        events += stream.feed(body)
        events += stream.finish()
    except ssefold.Error as err:
        return events + list(getattr(err, "events", [])), stream, err
    return events, stream, None


@pytest.mark.parametrize(
    "name",
    ["anthropic/interleaved_tools.sse", "openai_chat/index_zero_whole_calls.sse", "openai_responses/tool_streams.sse",
     "gemini/function_calls.sse", "ollama/thinking_tools.ndjson", "bedrock_converse/tool_use.bin",
     "anthropic/truncated.sse", "openai_chat/truncated.sse", "bedrock_converse/incomplete.bin"],
)
def test_a_turn_fed_the_hosts_own_stream_equals_the_turn_that_folds(name: str) -> None:
    path = FIXTURES / name
    body, provider = path.read_bytes(), path.parent.name

    def answer(core: ssefold.TurnCore) -> None:
        for action in core.poll_actions():
            if action.kind == "start_tool":
                assert action.call_id is not None
                core.tool_result(action.call_id, f"ran {action.call_id}")

    def tools(core: ssefold.TurnCore) -> ssefold.TurnCore:
        for tool in ("get_weather", "get_time", "add", "mul", "apply_patch", "lookup", "get_current_weather"):
            core.add_tool(tool)
        return core

    owned = tools(ssefold.TurnCore(provider))
    owned.feed(body)
    answer(owned)
    owned.end_of_body()
    answer(owned)
    events, stream, error = events_of(body, provider)
    hosted = tools(ssefold.TurnCore(provider))
    for event in events:
        assert all(isinstance(e, ssefold.ToolExecutionEvent) for e in hosted.apply_event(event))
        answer(hosted)
    hosted.end_of_events(error)
    answer(hosted)
    assert owned.is_finished and hosted.is_finished
    a, b = owned.outcome(), hosted.outcome(stream)
    assert [(c.id, c.name, c.outcome, c.arguments) for c in a.calls] == [(c.id, c.name, c.outcome, c.arguments) for c in b.calls]
    assert [(r.call_id, r.kind, r.output) for r in a.results] == [(r.call_id, r.kind, r.output) for r in b.results]
    assert a.results, "the fixture has calls to answer"
    assert (a.provider, a.message, a.stop_reason) == (b.provider, b.message, b.stop_reason)
    assert (a.next is None) == (b.next is None)
    if a.next is not None and b.next is not None:
        assert json.dumps(a.next.append) == json.dumps(b.next.append)
    assert type(a.failure) is type(b.failure)


# ---- issue 27: statuses, approvals, the stop reason, stalls, timings ----------

POLICY = ssefold.ReconnectPolicy(initial_delay_ms=10, max_retries=1, jitter=0)


def chat_call(name: str, finish: str) -> bytes:
    """A Chat body with one complete call of ``name`` stopped with ``finish``."""
    return (
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
        b'"id":"call_1","type":"function","function":{"name":"' + name.encode() + b'","arguments":"{\\"a\\":1}"}}]}}]}\n\n'
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
        b'"finish_reason":"' + finish.encode() + b'"}]}\n\n'
        b"data: [DONE]\n\n"
    )


def test_a_refused_status_is_retried_as_its_headers_say_then_fails_typed() -> None:
    core = ssefold.TurnCore("openai_chat", reconnect=POLICY)
    core.request_sent(now_ms=0)
    assert core.http_status(429, {"Retry-After": "2"}, now_ms=5) == []
    (action,) = drain(core)
    assert (action.kind, action.delay_ms, action.replay, action.attempt) == ("reconnect", 2000, "retry", 1)
    assert "replay='retry'" in repr(action)
    core.request_sent(now_ms=2010)
    core.http_status(503, [("x-should-retry", "true")], now_ms=2020)
    assert drain(core) == [], "the retries are used up"
    outcome = core.outcome()
    assert outcome.failure_kind == "http" and outcome.gave_up == "retries_exhausted" and outcome.retryable
    assert isinstance(outcome.failure, ssefold.RetryableProviderError)
    assert (outcome.failure.status_code, outcome.failure.gave_up) == (503, "retries_exhausted")
    assert [(a["outcome"], a["status"]) for a in outcome.timings["attempts"]] == [
        ("http_status", 429),
        ("http_status", 503),
    ]
    assert outcome.timings["started_ms"] == 0
    # Not retryable: at once, no reconnection.
    core = ssefold.TurnCore("openai_chat", reconnect=POLICY)
    core.http_status(401, {}, now_ms=1)
    assert drain(core) == [] and core.is_finished
    outcome = core.outcome()
    assert (outcome.failure_kind, outcome.gave_up, outcome.retryable) == ("http", "not_retryable", False)
    assert type(outcome.failure) is ssefold.ProviderError and outcome.failure.status_code == 401


def test_approval_approve_deny_and_timeout() -> None:
    core = ssefold.TurnCore(approval_timeout_ms=100)
    core.add_tool("add", needs_approval=True)
    events = core.feed(CHAT, now_ms=0)
    (asked,) = [e for e in events if isinstance(e, ssefold.ToolExecutionEvent)]
    assert (asked.type, asked.call_id, asked.approval_id, asked.name, asked.arguments) == (
        "tool_approval_requested", "call_1", "approval_call_1", "add", '{"a":1}'
    )
    assert asked.stop_reason is None and drain(core) == [] and core.deadline_ms == 100
    events = core.approve("approval_call_1")
    assert [e.type for e in events] == ["tool_execution_started"]
    assert [a.kind for a in drain(core)] == ["start_tool"]
    with pytest.raises(ssefold.SchedulerError) as info:
        core.approve("approval_call_1")
    assert info.value.kind == "not_awaiting_approval"

    core = ssefold.TurnCore()
    core.add_tool("add", needs_approval=True)
    core.feed(CHAT)
    core.deny("approval_call_1", "not now")
    core.end_of_body()
    assert core.is_finished
    (result,) = core.outcome().results
    assert (result.kind, result.output, result.is_error) == ("denied", "Denied by the user: not now", True)

    core = ssefold.TurnCore(approval_timeout_ms=100)
    core.add_tool("add", needs_approval=True)
    core.feed(CHAT, now_ms=0)
    core.end_of_body(now_ms=1)
    core.tick(now_ms=99)
    assert not core.is_finished
    core.tick(now_ms=100)
    assert core.is_finished
    assert [(r.kind, r.output) for r in core.outcome().results] == [("denied", "Denied: no approval within 100 ms")]


@pytest.mark.parametrize("start, exclusive", [("turn_end", False), ("auto", True)])
def test_a_call_waiting_for_the_turns_end_is_skipped_after_a_bad_stop(start: str, exclusive: bool) -> None:
    core = ssefold.TurnCore()
    core.add_tool("write", start=start, exclusive=exclusive)  # type: ignore[arg-type]
    core.feed(chat_call("write", "length"))
    core.end_of_body()
    assert drain(core) == [] and core.is_finished
    (result,) = core.outcome().results
    assert (result.kind, result.is_error) == ("skipped", True)
    assert result.output.startswith("Not run: the answer stopped with length")
    # After a normal stop it runs.
    core = ssefold.TurnCore()
    core.add_tool("write", start=start, exclusive=exclusive)  # type: ignore[arg-type]
    body = chat_call("write", "tool_calls")
    first = body.index(b"\n\n") + 2
    core.feed(body[:first])
    assert drain(core) == [], "the call is ready; it waits for the turn's end"
    core.feed(body[first:])
    assert [a.kind for a in drain(core)] == ["start_tool"]
    with pytest.raises(ValueError):
        core.add_tool("x", start="later")  # type: ignore[arg-type]


def test_a_call_running_when_the_answer_stops_badly_is_reported_and_can_be_cancelled() -> None:
    core = ssefold.TurnCore()
    core.add_tool("write", start="ready")
    events = core.feed(chat_call("write", "length"))
    assert [a.kind for a in drain(core)] == ["start_tool"]
    stops = [e for e in events if isinstance(e, ssefold.ToolExecutionEvent) and e.type == "tool_running_after_stop"]
    assert [(e.call_id, e.name, e.stop_reason, e.approval_id) for e in stops] == [("call_1", "write", "length", None)]
    events = core.cancel_tool("call_1")
    assert [(e.type, e.is_error) for e in events] == [("tool_execution_finished", True)]
    core.tool_result("call_1", "late")  # dropped
    (result,) = core.outcome().results
    assert (result.kind, result.output) == ("cancelled", "Cancelled by the host")
    with pytest.raises(ssefold.SchedulerError):
        core.cancel_tool("nope")


def test_a_stall_ends_the_turn_with_a_typed_error_and_the_timings_are_kept() -> None:
    policy = ssefold.ReconnectPolicy(max_retries=0, first_content_timeout_ms=300, content_timeout_ms=200)
    core = ssefold.TurnCore("anthropic", reconnect=policy)
    core.request_sent(now_ms=0)
    core.connected(now_ms=10)
    assert core.deadline_ms == 310
    for t in range(60, 310, 50):
        core.feed(b": ping\n\n", now_ms=t)
        assert core.tick(now_ms=t) == []
    core.tick(now_ms=310)
    assert [a.kind for a in drain(core)] == ["close_connection"]
    outcome = core.outcome()
    assert outcome.failure_kind == "idle_timeout" and not outcome.output_started
    assert isinstance(outcome.failure, ssefold.IncompleteStreamError)
    assert (outcome.failure.stall, outcome.failure.after_ms) == ("first_content", 300)
    assert outcome.failure.last is not None and outcome.failure.last.kind == "idle_timeout"
    assert "before the first" in str(outcome.failure)
    # Content, then silence between contents.
    core = ssefold.TurnCore("anthropic", reconnect=policy)
    core.request_sent(now_ms=0)
    core.connected(now_ms=10)
    core.feed(INTERLEAVED[:400], now_ms=50)
    core.tick(now_ms=250)
    outcome = core.outcome()
    assert (outcome.failure.stall, outcome.failure.after_ms) == ("content", 200)  # type: ignore[union-attr]
    assert outcome.output_started and outcome.gave_up == "not_resumable"
    timings = outcome.timings
    assert (timings["started_ms"], timings["time_to_first_content_ms"], timings["duration_ms"]) == (0, 50, 250)
    assert set(timings["content_gaps"]) == {"count", "median_ms", "p95_ms", "max_ms"}


def test_stream_events_say_whether_they_are_content() -> None:
    events = ssefold.Stream("anthropic").feed(INTERLEAVED)
    kinds = {(e.type, e.is_content) for e in events}
    assert ("message_start", False) in kinds and ("part_start", True) in kinds and ("text_delta", True) in kinds
    assert all(e.is_content for e in events if e.type in ("tool_args_delta", "part_end", "stop_reason", "turn_end"))
    assert not any(e.is_content for e in events if e.type in ("unknown", "warning"))
    assert "is_content" not in events[1].to_dict() and "is_content" not in events[1].fields()
