"""python/examples/relay_server.py end to end on loopback: the fake provider
and the chat endpoint each under uvicorn on 127.0.0.1 (ephemeral ports); the
browser side is httpx reading the relayed UI message stream."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

import ssefold
from conftest import ROOT

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

spec = importlib.util.spec_from_file_location("relay_server", ROOT / "python" / "examples" / "relay_server.py")
assert spec and spec.loader
relay_server = importlib.util.module_from_spec(spec)
sys.modules["relay_server"] = relay_server
spec.loader.exec_module(relay_server)


class Served:
    """An ASGI app under uvicorn in a thread, on an ephemeral loopback port."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
        assert not self.thread.is_alive()


# When each tool started (time.monotonic()), by tool name.
TOOL_STARTS: Dict[str, float] = {}


def timed_tools() -> Dict[str, Any]:
    def timed(name: str, fn: Any) -> Any:
        async def run(**kwargs: Any) -> Any:
            TOOL_STARTS[name] = time.monotonic()
            return await fn(**kwargs)

        return run

    return {name: timed(name, fn) for name, fn in relay_server.TOOLS.items()}


@pytest.fixture
def servers() -> Iterator[Dict[str, Served]]:
    bodies = [p.read_bytes() for p in relay_server.RECORDED_TURNS]
    # Paced like a model: the tools' arguments are complete well before the
    # end of the first answer, so a scheduler starts them while it streams.
    provider = Served(relay_server.provider_app(bodies, delay_s=0.01))
    TOOL_STARTS.clear()
    chat = Served(relay_server.chat_app(provider.url("/v1/messages"), timed_tools()))
    try:
        yield {"provider": provider, "chat": chat}
    finally:
        chat.stop()
        provider.stop()


def read_chat(chat: Served) -> "tuple[httpx.Headers, List[Any]]":
    """The relayed stream as the browser reads it: each ``data:`` payload."""
    payloads: List[Any] = []
    decoder = ssefold.SSEDecoder()
    with httpx.Client(timeout=httpx.Timeout(20.0), trust_env=False) as client:
        with client.stream("POST", chat.url("/api/chat"), json={"messages": []}) as response:
            assert response.status_code == 200
            headers = response.headers
            for chunk in response.iter_raw():
                for ev in decoder.feed(chunk):
                    payloads.append(ev.data if ev.data == "[DONE]" else json.loads(ev.data))
    return headers, payloads


def test_the_agent_loop_is_relayed_as_the_ui_message_stream(servers: Dict[str, Served]) -> None:
    started = time.monotonic()
    headers, payloads = read_chat(servers["chat"])
    assert time.monotonic() - started < 20
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert payloads[-1] == "[DONE]"
    chunks = [p for p in payloads if isinstance(p, dict)]
    types = [c["type"] for c in chunks]
    assert types[0] == "start" and types[-1] == "finish"
    assert types.count("start-step") == 2 and types.count("finish-step") == 2, types
    # Turn 1: both host tools ran and their outputs reached the browser.
    inputs = {c["toolCallId"]: c["input"] for c in chunks if c["type"] == "tool-input-available"}
    assert inputs["toolu_A"] == {"city": "Paris", "days": [1, 2]}
    assert inputs["toolu_B"] == {"tz": "Europe/Paris"}
    outputs = {
        c["toolCallId"]: c["output"]
        for c in chunks
        if c["type"] == "tool-output-available" and not c.get("providerExecuted")
    }
    assert outputs == {
        "toolu_A": {"city": "Paris", "forecast": [{"day": 1, "temp_c": 19}, {"day": 2, "temp_c": 20}]},
        "toolu_B": {"tz": "Europe/Paris", "time": "12:00"},
    }
    # Turn 2: the answer text, in the second step, after the tool outputs.
    second = types.index("start-step", types.index("start-step") + 1)
    assert max(i for i, t in enumerate(types) if t == "tool-output-available") < second
    text = "".join(c["delta"] for c in chunks[second:] if c["type"] == "text-delta")
    assert text
    assert chunks[-1]["finishReason"] == "stop"
    # Each turn's timings, from the host, as message metadata.
    metadata = [c["messageMetadata"] for c in chunks if c["type"] == "message-metadata"]
    timings = [m["timings"] for m in metadata if "timings" in m]
    assert len(timings) == 2 and all(t["time_to_first_content_ms"] is not None for t in timings), timings
    # The tool scheduler ran them: both started while the first answer was
    # still streaming (not after it), and the results went back in call order.
    state = servers["provider"].server.config.app.state
    assert set(TOOL_STARTS) == {"get_weather", "get_time"}
    assert max(TOOL_STARTS.values()) < state.ended[0], (TOOL_STARTS, state.ended)
    # The model got the tool results back, in its own format.
    requests = state.requests
    assert len(requests) == 2
    results = requests[1]["messages"][-1]["content"]
    # Call order: the order their arguments were complete (this fixture's
    # blocks interleave, and toolu_B's ends first), whichever finished first.
    ready = [c["toolCallId"] for c in chunks if c["type"] == "tool-input-available" and not c.get("providerExecuted")]
    assert ready == ["toolu_B", "toolu_A"]
    assert [r["tool_use_id"] for r in results] == ready
    assert all(r["type"] == "tool_result" and not r.get("is_error") for r in results)
    assert requests[1]["messages"][-2]["role"] == "assistant"
    # The provider's own web search is relayed with its result, not run here.
    server = [c for c in chunks if c.get("toolCallId") == "srvtoolu_1"]
    assert [c["type"] for c in server if c["type"] != "tool-input-delta"] == [
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
    ]
    assert all(c["providerExecuted"] for c in server if c["type"] != "tool-input-delta")


def test_a_failing_tool_is_a_tool_error_not_a_broken_stream() -> None:
    async def broken(**_: Any) -> Any:
        raise RuntimeError("weather service down")

    bodies = [p.read_bytes() for p in relay_server.RECORDED_TURNS]
    provider = Served(relay_server.provider_app(bodies))
    chat = Served(relay_server.chat_app(provider.url("/v1/messages"), {"get_time": broken}))
    try:
        _, payloads = read_chat(chat)
    finally:
        chat.stop()
        provider.stop()
    errors = {p["toolCallId"]: p["errorText"] for p in payloads if isinstance(p, dict) and p["type"] == "tool-output-error"}
    assert errors["toolu_B"] == "RuntimeError: weather service down"
    # An unknown tool never runs: the scheduler's own error result.
    assert "get_weather" in errors["toolu_A"], errors
    assert set(errors) == {"toolu_A", "toolu_B"}
    assert payloads[-1] == "[DONE]"


def test_silence_gets_keep_alive_comments(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(relay_server, "KEEP_ALIVE_TICK_S", 0.01)
    relay = ssefold.Relay(provider=None, keep_alive_ms=20)

    async def slow() -> Any:
        yield relay.log("info", "working", timestamp=0, trace_id="t")
        await asyncio.sleep(0.3)
        yield relay.finish()

    async def collect() -> List[bytes]:
        return [data async for data in relay_server.with_keep_alive(relay, slow())]

    out = asyncio.run(asyncio.wait_for(collect(), 10))
    assert out[0].startswith(b"id: 1\n") and out[-1].endswith(b"data: [DONE]\n\n")
    assert b": keep-alive\n\n" in out[1:-1]


def test_held_tool_input_is_sent_by_the_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(relay_server, "KEEP_ALIVE_TICK_S", 0.01)
    relay = ssefold.Relay(provider=None, tool_input_coalesce_ms=20)

    async def slow() -> Any:
        for event in (
            {"event": "part_start", "part": 0, "kind": "tool_call", "provider_type": "tool_use"},
            {"event": "part_metadata", "part": 0, "key": "id", "value": "call_1"},
            {"event": "part_metadata", "part": 0, "key": "name", "value": "f"},
        ):
            yield relay.push(event)
        yield relay.push({"event": "tool_args_delta", "part": 0, "json": "{\"a\": 1"})  # held: b""
        await asyncio.sleep(0.3)  # the provider is slow: the timer sends it
        yield relay.finish()

    async def collect() -> List[bytes]:
        return [data async for data in relay_server.with_keep_alive(relay, slow())]

    out = asyncio.run(asyncio.wait_for(collect(), 10))
    held = [i for i, data in enumerate(out) if b'"inputTextDelta":"{\\"a\\": 1"' in data]
    assert len(held) == 1 and b'"type":"finish' not in out[held[0]], out
    assert out[-1].endswith(b"data: [DONE]\n\n")
