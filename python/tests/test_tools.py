"""ToolScheduler (the binding) and the turn helpers run_turn / run_turn_sync,
end to end on recorded parallel-tool-call streams replayed at a fixed pace.

The recordings carry no timestamps: they are replayed one SSE event per
chunk with a fixed delay between chunks (REPLAY_DELAY)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, AsyncIterator, Dict, Iterator, List

import pytest

import ssefold
from ssefold import SchedulerError, StreamEvent, Tool, ToolCall, ToolExecutionEvent, ToolScheduler

from conftest import ROOT

RECORDINGS = ROOT / "tests" / "recordings"
ANTHROPIC_PARALLEL = (
    RECORDINGS / "anthropic" / "magentic"
    / "chat_model__test_anthropic_chat_model__test_anthropic_chat_model_complete_parallel_function_call.sse"
)
OPENAI_CHAT_PARALLEL = (
    RECORDINGS / "openai_chat" / "openllmetry"
    / "opentelemetry-instrumentation-openai__tests__traces__test_functions__"
    "test_open_ai_function_calls_tools_streaming_parallel__i0.sse"
)
REPLAY_DELAY = 0.01


def sse_events(path: Any) -> List[bytes]:
    """The recording cut after every blank line: one SSE event per chunk."""
    data = path.read_bytes().replace(b"\r\n", b"\n")
    return [part + b"\n\n" for part in data.split(b"\n\n") if part.strip()]


async def areplay(chunks: List[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        await asyncio.sleep(REPLAY_DELAY)
        yield chunk


def replay(chunks: List[bytes]) -> Iterator[bytes]:
    for chunk in chunks:
        time.sleep(REPLAY_DELAY)
        yield chunk


def names(events: List[Any]) -> List[str]:
    """Event names with the call id of tool events and of tool part ends."""
    out = []
    for e in events:
        if isinstance(e, ToolExecutionEvent):
            out.append(f"{e.type}:{e.call_id}")
        elif e.type == "part_end" and isinstance(e.tool_call, ssefold.ToolCallEnd):
            out.append(f"part_end:{e.tool_call.id}")
        else:
            out.append(e.type)
    return out


# ------------------------------------------------------------- the binding


def test_scheduler_flow_events_and_results_in_call_order() -> None:
    s = ToolScheduler()
    s.add("c1", "read", '{"p": 1}')
    s.add("c2", "grep", "{}")
    s.add("c3", "bash", "{}", exclusive=True)
    assert len(s) == 3
    assert s.startable() == ["c1", "c2"]
    assert s.running == 2
    assert s.finish("c2", "two").recorded
    assert s.results() == []
    assert s.startable() == []
    s.finish("c1", "one")
    assert [(r.call_id, r.output, r.kind) for r in s.results()] == [("c1", "one", "ran"), ("c2", "two", "ran")]
    assert s.startable() == ["c3"]
    s.update("c3", "compiling")
    s.finish("c3", "exit 2", is_error=True)
    assert s.is_settled
    events = []
    while (e := s.next_event()) is not None:
        events.append(e)
    assert [(e.type, e.call_id) for e in events] == [
        ("tool_execution_started", "c1"),
        ("tool_execution_started", "c2"),
        ("tool_execution_finished", "c2"),
        ("tool_execution_finished", "c1"),
        ("tool_execution_started", "c3"),
        ("tool_execution_update", "c3"),
        ("tool_execution_finished", "c3"),
    ]
    assert events[5].text == "compiling" and events[5].name is None
    assert events[6].to_dict() == {"event": "tool_execution_finished", "call_id": "c3", "name": "bash", "is_error": True}
    assert s.tool_results("anthropic")["content"][2] == {
        "type": "tool_result",
        "tool_use_id": "c3",
        "content": "exit 2",
        "is_error": True,
    }
    assert s.tool_results("openai_chat")[2] == {"role": "tool", "tool_call_id": "c3", "content": "Error: exit 2"}
    assert s.tool_results("openai_responses")[0] == {"type": "function_call_output", "call_id": "c1", "output": "one"}


@pytest.mark.parametrize(
    "misuse, kind",
    [
        (lambda s: s.finish("nope", "x"), "unknown_call_id"),
        (lambda s: s.add("a", "read", "{}"), "duplicate_call_id"),
        (lambda s: s.finish("a", "x"), "not_started"),
        (lambda s: s.update("a", "x"), "not_started"),
        (lambda s: s.all_results(), "unfinished"),
        (lambda s: s.tool_results("auto"), "unfinished"),
    ],
)
def test_misuse_is_a_typed_error_with_its_kind(misuse: Any, kind: str) -> None:
    s = ToolScheduler()
    s.add("a", "read", "{}")
    with pytest.raises(SchedulerError) as info:
        misuse(s)
    assert info.value.kind == kind
    assert isinstance(info.value, ssefold.Error) and isinstance(info.value, ValueError)
    assert len(s) == 1 and not s.is_settled, "the failed call changed nothing"


def test_finishing_twice_adding_after_discard_and_too_many_calls() -> None:
    s = ToolScheduler(max_calls=2)
    s.add("a", "read", "{}")
    s.startable()
    s.finish("a", "x")
    with pytest.raises(SchedulerError) as info:
        s.finish("a", "x")
    assert info.value.kind == "already_finished"
    s.add_unknown("b", "nosuch")
    with pytest.raises(SchedulerError) as info:
        s.add("c", "read", "{}")
    assert info.value.kind == "too_many_calls"
    with pytest.raises(SchedulerError) as info:
        s.tool_results("auto")
    assert info.value.kind == "unsupported_provider"
    assert s.discard() == []
    assert s.is_discarded
    with pytest.raises(SchedulerError) as info:
        s.add("d", "read", "{}")
    assert info.value.kind == "add_after_discard"
    with pytest.raises(ValueError, match="max_calls must be at least 1, got 0"):
        ToolScheduler(max_calls=0)
    with pytest.raises(ValueError):
        s.tool_results("nope")  # type: ignore[arg-type]


def test_sibling_failure_cancels_and_late_results_are_dropped() -> None:
    s = ToolScheduler()
    s.add("sh", "bash", "{}", abort_siblings_on_error=True)
    s.add("rd", "read", "{}")
    assert s.startable() == ["sh", "rd"]
    finished = s.finish("sh", "exit 1", True)
    assert finished.recorded and finished.cancel == ["rd"]
    assert not s.finish("rd", "late").recorded
    assert [r.kind for r in s.all_results()] == ["ran", "cancelled"]
    a = ToolScheduler()
    a.add("x", "read", "{}")
    a.startable()
    assert a.abort("user") == ["x"]
    a.add("y", "read", "{}")
    assert [(r.output, r.kind) for r in a.results()] == [("Aborted: user", "aborted"), ("Aborted: user", "aborted")]


# ----------------------------------------------------------- the helpers


class Recorder:
    """Async tools that sleep, recording how many run at once."""

    def __init__(self, durations: Dict[str, float]) -> None:
        self.durations = durations
        self.running = 0
        self.most = 0
        self.calls: List[ToolCall] = []
        self.cancelled: List[str] = []

    def tool(self, name: str) -> Any:
        async def run(call: ToolCall) -> str:
            self.calls.append(call)
            self.running += 1
            self.most = max(self.most, self.running)
            try:
                call.update("working")
                await asyncio.sleep(self.durations[name])
            except asyncio.CancelledError:
                self.cancelled.append(call.id)
                raise
            finally:
                self.running -= 1
            return f"{name}({json.dumps(call.input, sort_keys=True)})"

        return run


def test_anthropic_replay_runs_tools_while_streaming() -> None:
    rec = Recorder({"plus": 0.001, "minus": 0.02})

    async def main() -> Any:
        # plus ends only after minus did (so both run at once): minus's result
        # is ready first, yet results come back in call order.
        minus_done = asyncio.Event()

        async def plus(call: ToolCall) -> str:
            await asyncio.wait_for(minus_done.wait(), 10)
            return str(await rec.tool("plus")(call))

        async def minus(call: ToolCall) -> str:
            try:
                return str(await rec.tool("minus")(call))
            finally:
                minus_done.set()

        turn = ssefold.run_turn(areplay(sse_events(ANTHROPIC_PARALLEL)), {"plus": plus, "minus": minus})
        events = [e async for e in turn]
        return events, await turn

    events, result = asyncio.run(main())
    seq = names(events)
    plus, minus = "toolu_01CM7Nqnu3tF2UqzksSCxsqt", "toolu_01MGZBHepZSnpCrVLDT34yxu"
    # plus starts as soon as its arguments are complete, while minus still streams.
    assert seq.index(f"tool_execution_started:{plus}") == seq.index(f"part_end:{plus}") + 1
    assert seq.index(f"tool_execution_started:{plus}") < seq.index(f"part_end:{minus}")
    assert seq.index(f"tool_execution_started:{minus}") < seq.index("turn_end")
    # minus (short) finishes first; results stay in call order.
    assert seq.index(f"tool_execution_finished:{minus}") < seq.index(f"tool_execution_finished:{plus}")
    assert seq.count("tool_execution_update:" + plus) == 1
    assert {c.id: c.input for c in rec.calls} == {plus: {"a": 1, "b": 2}, minus: {"a": 2, "b": 1}}
    assert result.provider == "anthropic" and not result.aborted
    assert [r.call_id for r in result.results] == [plus, minus]
    assert result.message["stop_reason"] == "tool_use"
    assert result.tool_results == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": plus, "content": 'plus({"a": 1, "b": 2})'},
            {"type": "tool_result", "tool_use_id": minus, "content": 'minus({"a": 2, "b": 1})'},
        ],
    }
    assert isinstance(events[0], StreamEvent) and events[0].type == "message_start"


def test_openai_chat_replay_and_exclusive_tools_run_alone() -> None:
    rec = Recorder({"get_current_weather": 0.05})
    # start="ready": an exclusive tool waits for the answer's end by default.
    tools = {"get_current_weather": Tool(rec.tool("get_current_weather"), exclusive=True, start="ready")}

    async def main() -> Any:
        turn = ssefold.run_turn(areplay(sse_events(OPENAI_CHAT_PARALLEL)), tools, provider="openai_chat")
        return [e async for e in turn], await turn

    events, result = asyncio.run(main())
    seq = names(events)
    ids = [r.call_id for r in result.results]
    assert len(ids) == 2 and rec.most == 1, "exclusive calls never overlap"
    assert seq.index(f"tool_execution_started:{ids[0]}") < seq.index("turn_end"), "started while streaming"
    assert seq.index(f"tool_execution_finished:{ids[0]}") < seq.index(f"tool_execution_started:{ids[1]}")
    assert [c.input["location"] for c in rec.calls] == [
        json.loads(m["function"]["arguments"])["location"] for m in result.message["choices"][0]["message"]["tool_calls"]
    ]
    assert [m["role"] for m in result.tool_results] == ["tool", "tool"]
    assert [m["tool_call_id"] for m in result.tool_results] == ids
    assert result.provider == "openai_chat"


def test_awaiting_alone_runs_the_turn_and_errors_become_results() -> None:
    async def boom(call: ToolCall) -> str:
        raise RuntimeError("disk full")

    async def main() -> Any:
        return await ssefold.run_turn(areplay(sse_events(ANTHROPIC_PARALLEL)), {"plus": boom})

    result = asyncio.run(main())
    assert [(r.kind, r.is_error, r.output) for r in result.results] == [
        ("ran", True, "disk full"),
        ("unknown_tool", True, "No such tool available: minus"),
    ]
    assert [b.get("is_error") for b in result.tool_results["content"]] == [True, True]


def test_abort_cancels_running_tools_and_every_call_gets_a_result() -> None:
    rec = Recorder({"plus": 30.0, "minus": 30.0})

    async def main() -> Any:
        turn = ssefold.run_turn(
            areplay(sse_events(ANTHROPIC_PARALLEL)), {"plus": rec.tool("plus"), "minus": rec.tool("minus")}
        )
        seen = []
        async for e in turn:
            seen.append(e)
            if isinstance(e, ToolExecutionEvent) and e.type == "tool_execution_started":
                turn.abort("user pressed stop")
        return seen, await turn

    started = time.monotonic()
    events, result = asyncio.run(main())
    assert time.monotonic() - started < 10, "the 30 s tools were cancelled"
    assert result.aborted
    assert rec.cancelled[0] == "toolu_01CM7Nqnu3tF2UqzksSCxsqt"
    assert result.results[0].call_id == "toolu_01CM7Nqnu3tF2UqzksSCxsqt"
    assert {(r.kind, r.output) for r in result.results} == {("aborted", "Aborted: user pressed stop")}
    assert names(events)[-1].startswith("tool_execution_finished:")
    assert "turn_end" in names(events), "the stream was aborted too"


def test_a_stream_error_is_raised_after_the_tools_are_settled() -> None:
    chunks = sse_events(ANTHROPIC_PARALLEL)[:9]  # cut after plus is complete
    rec = Recorder({"plus": 0.01, "minus": 0.01})

    async def main() -> Any:
        turn = ssefold.run_turn(areplay(chunks), {"plus": rec.tool("plus"), "minus": rec.tool("minus")})
        seen = []
        with pytest.raises(ssefold.IncompleteStreamError):
            async for e in turn:
                seen.append(e)
        return seen

    events = asyncio.run(main())
    assert "tool_execution_started:toolu_01CM7Nqnu3tF2UqzksSCxsqt" in names(events)


def test_sync_variant_runs_tools_on_a_thread_pool() -> None:
    minus_done = threading.Event()

    def plus_tool(call: ToolCall) -> Dict[str, Any]:
        assert minus_done.wait(10), "plus and minus run at once"
        return {"name": call.name, "input": call.input}

    def minus_tool(call: ToolCall) -> Dict[str, Any]:
        time.sleep(0.02)
        minus_done.set()
        return {"name": call.name, "input": call.input}

    turn = ssefold.run_turn_sync(replay(sse_events(ANTHROPIC_PARALLEL)), {"plus": plus_tool, "minus": minus_tool})
    seq = names(list(turn))
    result = turn.result()
    plus, minus = "toolu_01CM7Nqnu3tF2UqzksSCxsqt", "toolu_01MGZBHepZSnpCrVLDT34yxu"
    assert seq.index(f"tool_execution_started:{plus}") < seq.index(f"part_end:{minus}")
    # plus cannot finish before minus has run (it waits for it): both ran at
    # once. Which of the two *finishes* first after minus_done is set is a
    # race between two threads (on a free-threaded CPython, a real one).
    assert seq.index(f"tool_execution_started:{minus}") < seq.index(f"tool_execution_finished:{plus}")
    assert [r.call_id for r in result.results] == [plus, minus]
    assert json.loads(result.tool_results["content"][0]["content"]) == {"name": "plus", "input": {"a": 1, "b": 2}}

    turn = ssefold.run_turn_sync(replay(sse_events(OPENAI_CHAT_PARALLEL)), {}, provider="openai_chat")
    result = turn.result()
    assert [r.kind for r in result.results] == ["unknown_tool", "unknown_tool"]
    assert all(m["content"].startswith("Error: No such tool available") for m in result.tool_results)


def test_sync_stream_error_is_raised_by_iteration_and_by_result() -> None:
    chunks = sse_events(ANTHROPIC_PARALLEL)[:9]  # cut after plus is complete
    turn = ssefold.run_turn_sync(replay(chunks), {"plus": lambda call: "3"})
    with pytest.raises(ssefold.IncompleteStreamError):
        list(turn)
    with pytest.raises(ssefold.IncompleteStreamError):
        turn.result()


def test_tools_the_provider_runs_are_not_run_by_the_host() -> None:
    # A web search (server_tool_use) and an MCP call (mcp_tool_use) beside
    # two client calls: only the client calls get results.
    body = (ROOT / "tests" / "fixtures" / "anthropic" / "interleaved_tools.sse").read_bytes()
    result = ssefold.run_turn_sync(iter([body]), {"get_time": lambda call: "12:00"}).result()
    assert sorted(r.call_id for r in result.results) == ["toolu_A", "toolu_B"]


def test_scheduler_takes_the_streams_calls() -> None:
    # add_call / reject take the provider-neutral call of a part_end as it is:
    # a synthesized id stays marked so in the result.
    stream = ssefold.GeminiStream()
    events = stream.feed((ROOT / "tests" / "fixtures" / "gemini" / "function_calls.sse").read_bytes())
    calls = [e.tool_call for e in events if e.type == "part_end" and isinstance(e.tool_call, ssefold.ToolCallEnd)]
    assert [c.id_synthesized for c in calls] == [True, True, True, False]
    s = ToolScheduler()
    s.add_call(calls[0], exclusive=True)
    s.reject(calls[1], "Not run: no", "invalid_input")
    s.reject(calls[2], "Not run: cut", "incomplete")
    s.reject(calls[3], "Not run: unnamed", "unnamed")
    assert s.startable() == [calls[0].id]
    s.finish(calls[0].id, "sunny")
    results = s.all_results()
    assert [(r.call_id, r.id_synthesized, r.kind) for r in results] == [
        ("ssefold_call_0", True, "ran"),
        ("ssefold_call_1", True, "invalid_input"),
        ("ssefold_call_2", True, "incomplete"),
        ("call-7", False, "unnamed"),
    ]
    assert "id_synthesized=True" in repr(results[0])
    with pytest.raises(ValueError):
        s.reject(calls[0], "x", "ran")  # type: ignore[arg-type]
    # Gemini matches results by name and order: a synthesized id is left out.
    parts = s.tool_results("gemini")["parts"]
    assert "id" not in parts[0]["functionResponse"] and parts[3]["functionResponse"]["id"] == "call-7"


def test_the_shells_run_every_dialects_calls() -> None:
    # The calls the old shells missed: Gemini's (no ids), a Chat call sent
    # with `id: null`, a Responses custom tool (free-text input), Ollama's.
    seen: Dict[str, List[ToolCall]] = {}

    def tool(call: ToolCall) -> str:
        seen.setdefault(call.name, []).append(call)
        return "ok"

    def run(name: str, tools: List[str]) -> ssefold.TurnResult:
        body = (ROOT / "tests" / "fixtures" / name).read_bytes()
        return ssefold.run_turn_sync(iter([body]), {t: tool for t in tools}).result()

    gemini = run("gemini/function_calls.sse", ["get_weather", "get_time", "list_alarms", "set_alarm"])
    assert [(r.kind, r.call_id) for r in gemini.results] == [
        ("ran", "ssefold_call_0"), ("ran", "ssefold_call_1"), ("ran", "ssefold_call_2"), ("ran", "call-7")
    ]
    assert seen["get_weather"][0].input == {"city": "Paris", "days": [1, 2]}
    chat = run("openai_chat/index_zero_whole_calls.sse", ["add", "mul"])
    assert [(r.kind, r.call_id) for r in chat.results] == [("ran", "call_1"), ("ran", "call_2"), ("ran", "ssefold_call_3")]
    assert chat.next is not None and chat.next.assistant["tool_calls"][2]["id"] == "ssefold_call_3"
    responses = run("openai_responses/tool_streams.sse", ["apply_patch", "lookup"])
    patch = seen["apply_patch"][0]
    assert patch.input == patch.arguments == "*** Begin Patch\n+fn main() {}\n", "a custom tool's input is its text"
    assert responses.tool_results[-1] == {"type": "custom_tool_call_output", "call_id": "call_6", "output": "ok"}
    ollama = run("ollama/thinking_tools.ndjson", ["get_weather", "get_time", "as_string"])
    assert [r.kind for r in ollama.results] == ["ran", "ran", "ran"] and ollama.provider == "ollama"


def test_a_failed_turn_raises_with_its_result() -> None:
    body = (ROOT / "tests" / "fixtures" / "anthropic" / "truncated.sse").read_bytes()
    turn = ssefold.run_turn_sync(iter([body]), {})
    with pytest.raises(ssefold.IncompleteStreamError) as info:
        turn.result()
    result: ssefold.TurnResult = getattr(info.value, "result")
    assert result.failure is info.value and not result.aborted
    assert result.results and all(r.is_error for r in result.results)
    assert result.next is not None and result.next.tool_results is not None, "the calls are answered all the same"
    # A source that fails is the turn's failure: it is raised as it is.

    class Broken(Exception):
        pass

    def broken() -> Iterator[bytes]:
        yield body[:200]
        raise Broken("connection reset")

    with pytest.raises(Broken) as raised:
        ssefold.run_turn_sync(broken(), {}).result()
    assert getattr(raised.value, "result").failure is raised.value
