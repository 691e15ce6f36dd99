"""ssefold.Relay: provider bytes and pushed events give the same browser
bytes; host events, keep-alive, replay, headers and the typed errors."""

from __future__ import annotations

import json
import pathlib
from typing import Any, Dict, List

import pytest

import ssefold
from conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "anthropic" / "interleaved_tools.sse"
GOLDEN = sorted(p for p in (ROOT / "tests" / "fixtures").glob("*/*") if p.suffix in (".sse", ".ndjson", ".bin"))


def frames(data: bytes) -> List[Dict[str, Any]]:
    """The SSE frames of relayed bytes, through ssefold's own decoder:
    ``{"id", "event", "data"}`` with ``data`` parsed when it is JSON."""
    out = []
    for ev in ssefold.SSEDecoder().feed(data):
        try:
            payload: Any = json.loads(ev.data)
        except ValueError:
            payload = ev.data
        out.append({"id": ev.id, "event": ev.event, "data": payload})
    return out


def relay_bytes(relay: ssefold.Relay, body: bytes, chunk: int) -> bytes:
    out = b"".join(relay.feed(body[i : i + chunk]) for i in range(0, len(body), chunk))
    return out + relay.end_of_input() + relay.finish()


def test_feed_in_any_chunking_gives_the_ui_message_stream() -> None:
    body = FIXTURE.read_bytes()
    whole = relay_bytes(ssefold.Relay(), body, len(body))
    for chunk in (1, 9, 100):
        assert relay_bytes(ssefold.Relay(), body, chunk) == whole
    got = frames(whole)
    types = [f["data"]["type"] for f in got if isinstance(f["data"], dict)]
    assert types[:2] == ["start", "start-step"]
    assert types.count("tool-input-available") == 4  # two host tools, a server tool, an MCP tool
    assert types[-2:] == ["finish-step", "finish"]
    assert got[-1]["data"] == "[DONE]"
    ids = [int(f["id"]) for f in got if isinstance(f["data"], dict)]
    assert ids == list(range(1, len(ids) + 1))
    calls = {f["data"]["toolCallId"]: f["data"]["input"] for f in got if f["data"] != "[DONE]"
             and f["data"]["type"] == "tool-input-available"}
    assert set(calls) == {"toolu_A", "toolu_B", "srvtoolu_1", "mcptoolu_1"}
    assert calls["toolu_A"] == {"city": "Paris", "days": [1, 2]}


def test_pushed_stream_events_and_dicts_give_the_bytes_of_feed() -> None:
    body = FIXTURE.read_bytes()
    stream = ssefold.Stream()
    events = stream.feed(body) + stream.finish()
    for make in (lambda e: e, lambda e: e.to_dict()):
        relay = ssefold.Relay(provider=None)
        pushed = b"".join(relay.push(make(e)) for e in events) + relay.finish()
        assert pushed == relay_bytes(ssefold.Relay(), body, 50)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_golden_pushed_as_stream_events_relays_like_feed(path: pathlib.Path) -> None:
    # A StreamEvent is pushed as the core event it was made from (rebuilt in
    # Rust, no JSON): every event type of every dialect, bytes as feed's.
    body = path.read_bytes()
    stream = ssefold.Stream(path.parent.name)
    failed = False
    try:
        events = stream.feed(body) + stream.finish()
    except ssefold.Error as err:
        events, failed = list(getattr(err, "events", [])), True
    pushed = []
    for make in (lambda e: e, lambda e: e.to_dict()):
        relay = ssefold.Relay(provider=None)
        pushed.append(b"".join(relay.push(make(e)) for e in events) + relay.finish())
    assert pushed[0] == pushed[1], path.name
    if failed:  # (a failed body's relay also writes the failure, which no event carries)
        return
    fed = relay_bytes(ssefold.Relay(provider=path.parent.name), body, 50)
    if path.parent.name == "gemini":
        # A Gemini answer's grounding and citations are in its folded
        # message, not in any event: only a relay with its own stream shows
        # them (source chunks after the turn). Everything else is the same.
        def shown(data: bytes) -> List[Any]:
            return [f["data"] for f in frames(data)
                    if not (isinstance(f["data"], dict) and f["data"]["type"].startswith("source-"))]
        assert shown(pushed[0]) == shown(fed), path.name
        return
    assert pushed[0] == fed, path.name


def test_media_events_relay_like_feed() -> None:
    body = (FIXTURE.parent.parent / "openai_chat" / "audio_stream.sse").read_bytes()
    stream = ssefold.Stream()
    events = stream.feed(body) + stream.finish()
    assert any(e.type == "media_delta" for e in events)
    for make in (lambda e: e, lambda e: e.to_dict()):
        relay = ssefold.Relay(provider=None)
        pushed = b"".join(relay.push(make(e)) for e in events) + relay.finish()
        assert pushed == relay_bytes(ssefold.Relay(), body, 50)


def test_catalog_format_and_host_events() -> None:
    relay = ssefold.Relay("catalog", provider=None, keep_alive_ms=1000)
    assert relay.format == "catalog"
    # The seed's catalog payloads, member for member (a call never shown has
    # no name).
    out = relay.tool_result("call_1", {"temp": 21.5, "ok": True, "tags": ("a", None)}, duration_ms=7)
    assert out == (
        b'id: 1\nevent: tool-result\ndata: {"id":"call_1","name":"","result":{"temp":21.5,"ok":true,"tags":["a",null]},'
        b'"duration":7}\n\n'
    )
    assert frames(relay.approval_required("ap1", "call_2", "rm", {"path": "/"}, message="Remove /?"))[0]["data"] == {
        "approvalId": "ap1", "toolName": "rm", "input": {"path": "/"}, "message": "Remove /?", "toolCallId": "call_2",
    }
    log = relay.log("info", "line\nbreak", timestamp=1_736_937_000_000, trace_id="trace-abc", metadata={"pageId": "p1"})
    assert frames(log)[0]["data"] == {
        "level": "info", "message": "line\nbreak", "metadata": {"pageId": "p1"},
        "timestamp": "2025-01-15T10:30:00.000Z", "traceId": "trace-abc",
    }
    assert frames(relay.error("tool failed", code="tool_error", recoverable=True))[0]["data"] == {
        "error": "tool failed", "code": "tool_error", "recoverable": True,
    }
    assert relay.finish_step() == b"", "no provider turn opened a step: none is closed"
    assert relay.keep_alive(0) == b""
    assert relay.keep_alive(999) == b""
    assert relay.keep_alive(1000) == b": keep-alive\n\n"
    assert relay.last_event_id == 4
    assert [f["id"] for f in frames(relay.replay_after("2"))] == ["3", "4"]
    done = frames(relay.finish(usage={"input_tokens": 3}))
    assert done[-1]["event"] == "finish" and done[-1]["data"] == {
        "finishReason": "stop", "usage": {"promptTokens": 3, "completionTokens": 0, "totalTokens": 3}, "stepCount": 0,
    }
    assert relay.is_finished
    assert ("content-type", "text/event-stream") in relay.headers()


def test_headers_of_the_ai_sdk_format() -> None:
    assert ("x-vercel-ai-ui-message-stream", "v1") in ssefold.Relay().headers()
    assert all(name != "x-vercel-ai-ui-message-stream" for name, _ in ssefold.Relay("catalog").headers())


def test_relay_errors_are_typed() -> None:
    relay = ssefold.Relay(provider=None, replay_bytes=200)
    with pytest.raises(ssefold.RelayError) as no_stream:
        relay.feed(b"data: {}\n\n")
    assert no_stream.value.kind == "no_stream"
    with pytest.raises(ssefold.RelayError) as invalid:
        relay.push({"event": "text_delta", "part": 0})
    assert invalid.value.kind == "invalid_event" and "text" in str(invalid.value)
    with pytest.raises(ssefold.RelayError) as unknown:
        relay.replay_after("7")
    assert unknown.value.kind == "unknown_event_id" and unknown.value.requested == "7"
    for _ in range(20):
        relay.log("info", "a log line", timestamp="2025-01-15T10:30:00.000Z", trace_id="t")
    with pytest.raises(ssefold.RelayError) as too_old:
        relay.replay_after("1")
    assert too_old.value.kind == "replay_too_old" and too_old.value.oldest > 2
    assert isinstance(too_old.value, ssefold.Error) and isinstance(too_old.value, ValueError)
    relay.finish()
    with pytest.raises(ssefold.RelayError) as finished:
        relay.log("info", "late", timestamp=0, trace_id="t")
    assert finished.value.kind == "finished"
    assert relay.push({"event": "turn_reset"}) == b""  # ignored after finish, as in the core


def test_bad_arguments_raise_python_errors() -> None:
    with pytest.raises(ValueError):
        ssefold.Relay("html")
    with pytest.raises(ValueError):
        ssefold.Relay(provider="no_such_provider")  # type: ignore[arg-type]
    relay = ssefold.Relay()
    with pytest.raises(TypeError):
        relay.tool_result("c", object())
    with pytest.raises(TypeError):
        relay.tool_result("c", {1: "x"})
    with pytest.raises(ValueError):
        relay.tool_result("c", float("nan"))
    nested: Any = []
    for _ in range(200):
        nested = [nested]
    with pytest.raises(ValueError):
        relay.tool_result("c", nested)
    with pytest.raises(TypeError):
        relay.feed("text")  # type: ignore[arg-type]
    assert relay.last_event_id == 0


def test_a_failing_provider_stream_is_relayed_and_reported() -> None:
    relay = ssefold.Relay(provider="anthropic")
    out = relay.feed(b"event: message_start\ndata: {not json}\n\n")
    assert [f["data"]["type"] for f in frames(out)][-1] == "error"
    assert isinstance(relay.stream_error, ssefold.InvalidEventError)
    truncated = ssefold.Relay()
    truncated.feed((ROOT / "tests" / "fixtures" / "anthropic" / "truncated.sse").read_bytes())
    assert b'"type":"error"' in truncated.end_of_input()
    assert isinstance(truncated.stream_error, ssefold.IncompleteStreamError)


def tool_input_deltas(data: bytes) -> List[str]:
    return [f["data"]["inputTextDelta"] for f in frames(data)
            if isinstance(f["data"], dict) and f["data"]["type"] == "tool-input-delta"]


def test_tool_input_is_coalesced_and_flushed_by_the_hosts_timer() -> None:
    # A call whose arguments come in several deltas in a row.
    body = (FIXTURE.parent.parent / "openai_responses" / "reasoning_text_tool.sse").read_bytes()
    plain = relay_bytes(ssefold.Relay(tool_input_coalesce_bytes=0), body, 40)
    big = ssefold.Relay(tool_input_coalesce_bytes=1 << 20, tool_input_coalesce_ms=10)
    assert big.tick(1000) == b""
    out = b""
    for i in range(0, len(body), 40):
        out += big.feed(body[i : i + 40])
        out += big.tick(1005)  # 5 ms: not due
    out += big.flush() + big.end_of_input() + big.finish()
    assert big.flush() == b"" and big.tick(10_000) == b""  # nothing after finish
    assert "".join(tool_input_deltas(out)) == "".join(tool_input_deltas(plain))
    assert 0 < len(tool_input_deltas(out)) < len(tool_input_deltas(plain))
    # The defaults coalesce too (4 KiB, 50 ms), with the same input.
    default = relay_bytes(ssefold.Relay(), body, 40)
    assert "".join(tool_input_deltas(default)) == "".join(tool_input_deltas(plain))


def test_a_timer_tick_writes_held_input_once_due() -> None:
    relay = ssefold.Relay(provider=None)
    for event in (
        {"event": "part_start", "part": 0, "kind": "tool_call", "provider_type": "tool_use"},
        {"event": "part_metadata", "part": 0, "key": "id", "value": "call_1"},
        {"event": "part_metadata", "part": 0, "key": "name", "value": "f"},
    ):
        relay.push(event)
    relay.keep_alive(0)
    assert relay.push({"event": "tool_args_delta", "part": 0, "json": "{\"a\":"}) == b""
    assert relay.tick(49) == b""
    assert tool_input_deltas(relay.tick(50)) == ["{\"a\":"]
    assert relay.tick(51) == b""


def test_abort_ends_the_run_with_abort_not_finish() -> None:
    body = FIXTURE.read_bytes()
    relay = ssefold.Relay()
    out = relay.feed(body[: len(body) // 2]) + relay.abort()
    types = [f["data"]["type"] if isinstance(f["data"], dict) else f["data"] for f in frames(out)]
    assert types[-2:] == ["abort", "[DONE]"] and "finish" not in types
    with pytest.raises(ssefold.RelayError) as err:
        relay.abort()
    assert err.value.kind == "finished"
    catalog = ssefold.Relay("catalog", provider=None).abort()
    assert b'"finishReason":"cancelled"' in catalog


def test_host_metadata_is_message_metadata() -> None:
    relay = ssefold.Relay("ai-sdk", provider=None)
    out = relay.message_metadata({"timings": {"ttfc_ms": 12}})
    assert b'{"type":"message-metadata","messageMetadata":{"timings":{"ttfc_ms":12}}}' in out
    with pytest.raises(TypeError):
        relay.message_metadata([1])  # type: ignore[arg-type]
    assert ssefold.Relay("catalog", provider=None).message_metadata({"a": 1}) == b""
