"""The UI state model through the wheel: `Stream(..., ui=True).ui`."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

import ssefold
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


def answer() -> bytes:
    """An Anthropic answer with SSE ids on every event."""
    events = [
        (
            "message_start",
            '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m",'
            '"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}',
        ),
        ("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}',
        ),
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}',
        ),
        ("content_block_stop", '{"type":"content_block_stop","index":0}'),
        (
            "message_delta",
            '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
            '"usage":{"output_tokens":3}}',
        ),
        ("message_stop", '{"type":"message_stop"}'),
    ]
    out = "retry: 250\n\n"
    for i, (name, data) in enumerate(events, 1):
        out += f"id: {i}\nevent: {name}\ndata: {data}\n\n"
    return out.encode()


def before_id(body: bytes, n: int) -> bytes:
    return body[: body.index(f"id: {n}\n".encode())]


def ui_of(s: ssefold.Stream) -> ssefold.UiState:
    ui = s.ui
    assert ui is not None
    return ui


def test_ui_is_off_by_default() -> None:
    assert ssefold.Stream().ui is None
    assert ssefold.AnthropicStream().ui is None
    assert isinstance(ssefold.AnthropicStream(ui=True).ui, ssefold.UiState)


def test_snapshot_after_every_prefix_agrees_with_the_events() -> None:
    data = (FIXTURES / "anthropic" / "thinking_text_citations.sse").read_bytes()
    s = ssefold.Stream(ui=True)
    ui = ui_of(s)
    texts: Dict[int, str] = {}
    kinds: Dict[int, str] = {}
    ended: Dict[int, str] = {}
    for i in range(0, len(data), 7):
        for e in s.feed(data[i : i + 7], now_ms=i):
            if e.type == "part_start":
                kinds[e.part] = e.kind
                texts[e.part] = ""
            elif e.type == "text_delta":
                texts[e.part] += e.text
            elif e.type == "part_end":
                ended[e.part] = e.outcome
        snap = ui.snapshot()
        assert [p["part"] for p in snap["parts"]] == sorted(texts)
        for p in snap["parts"]:
            assert p["kind"] == kinds[p["part"]]
            assert p["text"] == texts[p["part"]]
            assert "".join(seg["text"] for seg in p["segments"]) == p["text"]
            assert all(seg["at_ms"] <= i for seg in p["segments"])
            assert (p["status"] == "streaming") == (p["part"] not in ended)
    s.finish(now_ms=len(data))
    snap = ui.snapshot()
    assert snap["ended"] and ui.is_ended and not snap["aborted"]
    assert snap["stop_reason"] == ui.stop_reason == s.message["stop_reason"]
    assert snap["usage"] is not None
    assert snap["connection"] == ui.connection == "connected"


def test_abort_is_applied_to_the_ui_state() -> None:
    s = ssefold.AnthropicStream(ui=True)
    s.feed(before_id(answer(), 4), now_ms=1)
    (end,) = s.abort(now_ms=2)
    assert (end.type, end.stop_reason) == ("turn_end", "aborted")
    snap = ui_of(s).snapshot()
    assert snap["aborted"] and snap["ended"] and snap["stop_reason"] == "aborted"
    assert [p["status"] for p in snap["parts"]] == ["incomplete"]
    assert s.abort() == []


def test_restart_gives_turn_reset_and_the_snapshot_clears() -> None:
    body = answer()
    s = ssefold.AnthropicStream(ui=True)
    ui = ui_of(s)
    s.feed(before_id(body, 5), now_ms=100)
    assert ui.snapshot()["parts"][0]["text"] == "Hello, world"
    cursor = s.resume_cursor
    assert cursor.headers() == {"Last-Event-ID": "4"}
    assert s.reconnection_time == 250
    s.reconnect()
    again = s.feed(before_id(body, 2), now_ms=200)  # the server started over
    assert again[0].type == "turn_reset"
    snap = ui.snapshot()
    assert snap["parts"] == [] and snap["stop_reason"] is None and not snap["ended"]
    s.feed(body[len(before_id(body, 2)) :], now_ms=300)
    s.finish(now_ms=300)
    snap = ui.snapshot()
    assert snap["parts"][0]["text"] == "Hello, world"
    assert {seg["at_ms"] for seg in snap["parts"][0]["segments"]} == {300}
    assert snap["ended"]


def test_resume_keeps_the_ui_state() -> None:
    body = answer()
    s = ssefold.AnthropicStream(ui=True)
    first = before_id(body, 4)
    s.feed(first + b"id: 4\nevent: content_block_delta\ndata: {", now_ms=1)
    s.reconnect()
    events = s.feed(body[len(first) :], now_ms=2)
    assert all(e.type != "turn_reset" for e in events)
    segments = ui_of(s).snapshot()["parts"][0]["segments"]
    assert segments == [{"text": "Hello", "at_ms": 1}, {"text": ", world", "at_ms": 2}]


def test_connection_and_tool_progress() -> None:
    s = ssefold.Stream(ui=True)
    ui = ui_of(s)
    assert ui.connection == "connecting"
    ui.set_connection("reconnecting")
    assert ui.snapshot()["connection"] == "reconnecting"
    with pytest.raises(ValueError):
        ui.set_connection("sideways")  # type: ignore[arg-type]
    progress: List[Any] = [{"pct": 50}, 1, "x", None]
    for value in progress:
        ui.set_tool_progress("toolu_1", value)
        assert ui.snapshot()["tool_progress"] == {"toolu_1": value}
    with pytest.raises(TypeError):
        ui.set_tool_progress("toolu_1", object())
    assert repr(ui).startswith("UiState(connection=")


def test_default_time_is_monotonic_milliseconds() -> None:
    import time

    s = ssefold.AnthropicStream(ui=True)
    before = int(time.monotonic() * 1000)
    s.feed(answer())
    after = int(time.monotonic() * 1000)
    (seg,) = ui_of(s).snapshot()["parts"][0]["segments"]
    assert before <= seg["at_ms"] <= after


def test_the_ui_keeps_the_stream_alive() -> None:
    s = ssefold.AnthropicStream(ui=True)
    ui = ui_of(s)
    s.feed(answer())
    del s
    assert ui.snapshot()["parts"][0]["text"] == "Hello, world"
