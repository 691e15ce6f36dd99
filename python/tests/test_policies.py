"""Issue 27's production policies end to end: the httpx helpers
(``stream_events``, ``astream_events``) and the turn shells (``run_turn``
over ``astream_events``, ``run_turn_sync`` over ``stream_events``) against
a misbehaving HTTP server on loopback that counts the POSTs it receives.

* a refused status is retried as its headers say (``Retry-After``,
  ``retry-after-ms``, ``x-should-retry``) before any output;
* a connection reset before the first byte is retried;
* after output the request is never sent again without a resume cursor
  (``IncompleteStreamError``, ``gave_up="not_resumable"``, the text so far
  kept), and resumed with ``Last-Event-ID`` when the server gives ids;
* a connection that sends only keep-alives stalls (``first_content``);
* a Chat body that ends after its finish_reason without ``[DONE]`` is
  complete;
* a side-effecting tool never runs after a ``length`` stop (``skipped``);
* approvals through the shells.

Every wait is tens of milliseconds (the policies' timeouts are set small)."""

from __future__ import annotations

import asyncio
import http.server
import json
import socket
import struct
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import ssefold

httpx = pytest.importorskip("httpx")

# Fast retries, no jitter: waits of a few ms.
FAST = ssefold.ReconnectPolicy(initial_delay_ms=5, max_retries=2, jitter=0)


def chat(delta: Dict[str, Any], finish: Optional[str] = None, event_id: Optional[int] = None) -> bytes:
    """One OpenAI Chat chunk as an SSE event (with an SSE id if given)."""
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    head = b"id: %d\n" % event_id if event_id is not None else b""
    return head + b"data: " + json.dumps(chunk).encode() + b"\n\n"


WORDS = ["Hello", " there", ", how", " are", " you?"]


def text_events(ids: bool) -> List[bytes]:
    """A Chat answer of WORDS, one event each, then its stop and [DONE]."""
    out = [chat({"role": "assistant", "content": ""}, event_id=0 if ids else None)]
    out += [chat({"content": w}, event_id=i + 1 if ids else None) for i, w in enumerate(WORDS)]
    out.append(chat({}, "stop", event_id=len(WORDS) + 1 if ids else None))
    out.append((b"id: %d\n" % (len(WORDS) + 2) if ids else b"") + b"data: [DONE]\n\n")
    return out


def tool_call_events(name: str, finish: str) -> List[bytes]:
    """A Chat answer with one complete call of ``name``, stopped with
    ``finish`` (no [DONE]: complete after the finish_reason)."""
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": '{"path": "a"}'}}
    return [chat({"role": "assistant", "content": None, "tool_calls": [call]}), chat({}, finish), b"data: [DONE]\n\n"]


def two_calls() -> List[bytes]:
    calls = [
        {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i, name in enumerate(["read", "delete"])
    ]
    return [chat({"role": "assistant", "tool_calls": calls}), chat({}, "tool_calls"), b"data: [DONE]\n\n"]


def responses_events() -> List[Tuple[int, bytes]]:
    """A Responses answer "Hello there!" as (sequence_number, SSE event)."""
    item = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    done_part = dict(part, text="Hello there!")
    done_item = dict(item, status="completed", content=[done_part])
    response = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "m", "output": []}
    texts = ["Hello", " there", "!"]
    bodies: List[Dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": part},
        *(
            {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": t}
            for t in texts
        ),
        {"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
         "text": "Hello there!"},
        {"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
         "part": done_part},
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {"type": "response.completed",
         "response": dict(response, status="completed", output=[done_item],
                          usage={"input_tokens": 3, "output_tokens": 3, "total_tokens": 6})},
    ]
    out = []
    for n, body in enumerate(bodies):
        body = dict(body, sequence_number=n)
        out.append((n, b"event: %s\ndata: %s\n\n" % (body["type"].encode(), json.dumps(body).encode())))
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    """Scenarios by path; every POST is recorded with its Last-Event-ID."""

    protocol_version = "HTTP/1.1"
    server: "Server"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- the means

    def start(self, status: int = 200, headers: Optional[Dict[str, str]] = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        # Each stream's connection is closed after it, and the client told so
        # (else it may reuse a socket the server is closing: a spent attempt).
        self.send_header("Connection", "close")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def events(self, chunks: List[bytes]) -> None:
        self.start()
        for c in chunks:
            self.chunk(c)
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

    def refuse(self, status: int, headers: Dict[str, str]) -> None:
        body = json.dumps({"error": {"type": "rate_limit_error", "message": "slow down"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def reset(self) -> None:
        """Closes the connection with a TCP RST (no FIN, nothing more)."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    # -- the scenarios

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        srv = self.server
        path, _, query = self.path.partition("?")
        last = self.headers.get("Last-Event-ID")
        with srv.lock:
            srv.requests.append((path, last))
            n = sum(1 for p, _ in srv.requests if p == path)
        try:
            self.scenario(path, query, n, last)
        except OSError:  # the client went away
            self.close_connection = True

    def do_GET(self) -> None:
        """A Responses resume: ``/v1/responses/ID?stream=true&starting_after=N``."""
        srv = self.server
        path, _, query = self.path.partition("?")
        with srv.lock:
            srv.requests.append((path, query))
        params = dict(kv.split("=", 1) for kv in query.split("&") if kv)
        after = int(params.get("starting_after", "-1"))
        self.events([event for n, event in responses_events() if n > after])

    def scenario(self, path: str, query: str, n: int, last: Optional[str]) -> None:
        if path == "/responses-cut":
            self.start()
            for _, event in responses_events()[:5]:  # created … " there" (sequence 4)
                self.chunk(event)
            time.sleep(0.05)
            self.reset()
        elif path == "/refused-then-ok":
            # query: the refusal's headers, "name=value&..."
            headers = dict(kv.split("=", 1) for kv in query.split("&") if kv)
            if n == 1:
                self.refuse(int(headers.pop("status", "429")), headers)
            else:
                self.events(text_events(ids=False))
        elif path == "/reset-before-first-byte":
            if n == 1:
                self.reset()
            else:
                self.events(text_events(ids=False))
        elif path in ("/reset-after-output", "/reset-after-output-ids"):
            ids = path.endswith("-ids")
            events = text_events(ids)
            if n == 1:
                self.start()
                for c in events[:3]:  # the role, "Hello", " there"
                    self.chunk(c)
                time.sleep(0.05)  # the client has them before the reset
                self.reset()
            else:
                resume = int(last) + 1 if ids and last is not None else 0
                self.events(events[resume:])
        elif path == "/keep-alives":
            self.start()
            for _ in range(100):  # at most 5 s
                self.chunk(b": ping\n\n")
                time.sleep(0.05)
            self.close_connection = True
        elif path == "/chat-no-done":
            self.events(text_events(ids=False)[:-1])
        elif path.startswith("/tool-"):
            # /tool-NAME-FINISH
            _, name, finish = path.split("-", 2)
            self.events(tool_call_events(name, finish))
        elif path == "/two-calls":
            self.events(two_calls())
        else:
            self.send_error(404)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    requests: List[Tuple[str, Optional[str]]]
    lock: threading.Lock


@pytest.fixture()
def server() -> Iterator[Server]:
    srv = Server(("127.0.0.1", 0), Handler)
    srv.requests = []
    srv.lock = threading.Lock()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join()


def url(srv: Server, path: str) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}{path}"


def posts(srv: Server, path: str) -> List[Optional[str]]:
    """The Last-Event-ID of each POST to ``path``, in order."""
    return [last for p, last in srv.requests if p == path.partition("?")[0]]


BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def collect_sync(srv: Server, path: str, policy: ssefold.ReconnectPolicy) -> Tuple[List[Any], Any]:
    """The events ``stream_events`` yields and its provider stream."""
    with httpx.Client() as client:
        it = ssefold.stream_events(client, "POST", url(srv, path), provider="openai_chat", policy=policy, json=BODY)
        return list(it), it.stream


def collect_async(srv: Server, path: str, policy: ssefold.ReconnectPolicy) -> Tuple[List[Any], Any]:
    async def run() -> Tuple[List[Any], Any]:
        async with httpx.AsyncClient() as client:
            it = ssefold.astream_events(client, "POST", url(srv, path), provider="openai_chat", policy=policy, json=BODY)
            return [e async for e in it], it.stream

    return asyncio.run(run())


def turn_async(srv: Server, path: str, policy: ssefold.ReconnectPolicy, tools: Any, **kwargs: Any) -> Any:
    """``run_turn`` over ``astream_events``: the events and the result (also
    of a failed turn: the error's ``.result``), and the error."""

    async def run() -> Tuple[List[Any], Any, Optional[BaseException]]:
        async with httpx.AsyncClient() as client:
            source = ssefold.astream_events(client, "POST", url(srv, path), provider="openai_chat", policy=policy, json=BODY)
            turn = ssefold.run_turn(source, tools, **kwargs)
            events: List[Any] = []
            try:
                async for e in turn:
                    events.append(e)
                return events, await turn, None
            except ssefold.Error as err:
                return events, getattr(err, "result"), err

    return asyncio.run(run())


def turn_sync(srv: Server, path: str, policy: ssefold.ReconnectPolicy, tools: Any, **kwargs: Any) -> Any:
    with httpx.Client() as client:
        source = ssefold.stream_events(client, "POST", url(srv, path), provider="openai_chat", policy=policy, json=BODY)
        turn = ssefold.run_turn_sync(source, tools, **kwargs)
        events: List[Any] = []
        try:
            for e in turn:
                events.append(e)
            return events, turn.result(), None
        except ssefold.Error as err:
            return events, getattr(err, "result"), err


def text_of(message: Any) -> str:
    return str(message["choices"][0]["message"]["content"])


COLLECT = {"stream_events": collect_sync, "astream_events": collect_async}


# ----------------------------------------------------------- refused statuses


@pytest.mark.parametrize("how", list(COLLECT))
@pytest.mark.parametrize(
    "query, policy, wait",
    [
        # retry-after-ms (50) wins over Retry-After (1 s)
        ("status=429&Retry-After=1&retry-after-ms=50", FAST, 0.05),
        # Retry-After: 1, capped at max_retry_after_ms
        ("status=429&Retry-After=1", ssefold.ReconnectPolicy(max_retry_after_ms=50, jitter=0), 0.05),
        ("status=529&retry-after-ms=50", FAST, 0.05),
        ("status=503", FAST, 0.005),  # no hint: the backoff
    ],
)
def test_a_refused_status_is_retried_then_the_answer_is_complete(
    server: Server, how: str, query: str, policy: ssefold.ReconnectPolicy, wait: float
) -> None:
    path = "/refused-then-ok?" + query
    started = time.monotonic()
    events, stream = COLLECT[how](server, path, policy)
    assert len(posts(server, path)) == 2
    assert time.monotonic() - started >= wait * 0.9, "the Retry-After (or the backoff) was waited"
    assert time.monotonic() - started < 1, "not Retry-After: 1 s"
    assert stream.is_terminated and text_of(stream.message) == "".join(WORDS)
    assert events[-1].type == "turn_end" and events[-1].stop_reason == "stop"


@pytest.mark.parametrize("how", list(COLLECT))
@pytest.mark.parametrize(
    "query, gave_up",
    [("status=429&x-should-retry=false", "not_retryable"), ("status=400", "not_retryable")],
)
def test_a_status_not_to_retry_raises_the_providers_error_after_one_post(
    server: Server, how: str, query: str, gave_up: str
) -> None:
    path = "/refused-then-ok?" + query
    with pytest.raises(ssefold.ProviderError) as info:
        COLLECT[how](server, path, FAST)
    err = info.value
    assert len(posts(server, path)) == 1
    assert (err.status_code, err.type, err.message, err.gave_up) == (
        int(query.split("&")[0].split("=")[1]),
        "rate_limit_error",
        "slow down",
        gave_up,
    )
    assert err.body is not None and "slow down" in err.body


def test_a_refused_status_through_run_turn(server: Server) -> None:
    path = "/refused-then-ok?status=429&retry-after-ms=20"
    events, result, error = turn_async(server, path, FAST, {})
    assert error is None and len(posts(server, path)) == 2
    assert text_of(result.message) == "".join(WORDS) and result.output_started and result.gave_up is None
    timings = result.timings
    assert timings is not None and timings["time_to_first_content_ms"] is not None
    assert timings["time_to_first_content_ms"] >= 20, "counted from the first request"


# ---------------------------------------------------------- connection resets


@pytest.mark.parametrize("how", list(COLLECT))
def test_a_reset_before_the_first_byte_is_retried(server: Server, how: str) -> None:
    events, stream = COLLECT[how](server, "/reset-before-first-byte", FAST)
    assert len(posts(server, "/reset-before-first-byte")) == 2
    assert text_of(stream.message) == "".join(WORDS)
    assert "turn_reset" not in [e.type for e in events]


@pytest.mark.parametrize("how", list(COLLECT))
def test_a_reset_after_output_without_ids_is_never_sent_again(server: Server, how: str) -> None:
    seen: List[Any] = []

    def run() -> None:
        if how == "stream_events":
            with httpx.Client() as client:
                it = ssefold.stream_events(client, "POST", url(server, "/reset-after-output"), provider="openai_chat", policy=FAST, json=BODY)
                seen.append(it)
                for e in it:
                    seen.append(e)
        else:

            async def arun() -> None:
                async with httpx.AsyncClient() as client:
                    it = ssefold.astream_events(client, "POST", url(server, "/reset-after-output"), provider="openai_chat", policy=FAST, json=BODY)
                    seen.append(it)
                    async for e in it:
                        seen.append(e)

            asyncio.run(arun())

    with pytest.raises(ssefold.IncompleteStreamError) as info:
        run()
    err = info.value
    assert len(posts(server, "/reset-after-output")) == 1, "no second POST after output"
    assert err.gave_up == "not_resumable" and err.last is not None and err.last.kind == "transport_error"
    assert "output had started" in str(err) and "not sent again" in str(err), str(err)
    # The text so far: in the events passed on, the events of the error
    # (the open part committed) and the folded message.
    assert "".join(e.text for e in seen[1:] if e.type == "text_delta") == "Hello there"
    assert [e.content["text"] for e in err.events if e.type == "part_end"] == ["Hello there"]
    assert text_of(seen[0].stream.message) == "Hello there"


def test_a_reset_after_output_through_the_turns(server: Server) -> None:
    for run in (turn_async, turn_sync):
        server.requests.clear()
        events, result, error = run(server, "/reset-after-output", FAST, {})
        assert isinstance(error, ssefold.IncompleteStreamError) and result.failure is error
        assert len(posts(server, "/reset-after-output")) == 1, run.__name__
        assert result.gave_up == "not_resumable" and result.output_started
        assert text_of(result.message) == "Hello there"


@pytest.mark.parametrize("how", list(COLLECT))
def test_a_reset_after_output_with_ids_is_resumed_with_last_event_id(server: Server, how: str) -> None:
    events, stream = COLLECT[how](server, "/reset-after-output-ids", FAST)
    assert posts(server, "/reset-after-output-ids") == [None, "2"], "the second request carries Last-Event-ID"
    assert text_of(stream.message) == "".join(WORDS)
    assert "".join(e.text for e in events if e.type == "text_delta") == "".join(WORDS), "nothing twice"
    assert "turn_reset" not in [e.type for e in events]


def test_a_resumed_answer_through_run_turn(server: Server) -> None:
    events, result, error = turn_async(server, "/reset-after-output-ids", FAST, {})
    assert error is None and posts(server, "/reset-after-output-ids") == [None, "2"]
    assert text_of(result.message) == "".join(WORDS) and result.gave_up is None


# ------------------------------------------------------------------- stalls

# 600 ms against pings every 50 ms: a loaded machine (the suite runs beside
# builds) may hold the pinging thread back for a while, and a read silent for
# the whole timeout is an idle stall, not a first-content one.
STALL = ssefold.ReconnectPolicy(initial_delay_ms=5, max_retries=1, jitter=0, first_content_timeout_ms=600)


@pytest.mark.parametrize("how", list(COLLECT))
def test_keep_alives_only_is_a_stall_retried_then_given_up(server: Server, how: str) -> None:
    started = time.monotonic()
    with pytest.raises(ssefold.IncompleteStreamError) as info:
        COLLECT[how](server, "/keep-alives", STALL)
    elapsed = time.monotonic() - started
    err = info.value
    # Before output a stall is retried (the same request): 2 POSTs, each cut
    # at 600 ms although a ping came every 50 ms.
    assert len(posts(server, "/keep-alives")) == 2
    assert 1.15 <= elapsed < 5.0, elapsed
    assert (err.stall, err.after_ms, err.gave_up) == ("first_content", 600, "retries_exhausted")
    assert err.last is not None and err.last.kind == "idle_timeout"
    assert str(err).startswith("no content for 600 ms before the first (keep-alives only)"), str(err)


def test_keep_alives_only_through_run_turn(server: Server) -> None:
    policy = ssefold.ReconnectPolicy(max_retries=0, first_content_timeout_ms=600)
    events, result, error = turn_async(server, "/keep-alives", policy, {})
    assert isinstance(error, ssefold.IncompleteStreamError) and error.stall == "first_content"
    assert len(posts(server, "/keep-alives")) == 1
    assert not result.output_started and result.message is None


# ------------------------------------------------------ a body without [DONE]


@pytest.mark.parametrize("how", list(COLLECT))
def test_chat_without_done_after_its_finish_reason_is_complete(server: Server, how: str) -> None:
    events, stream = COLLECT[how](server, "/chat-no-done", FAST)
    assert len(posts(server, "/chat-no-done")) == 1
    assert [e.code for e in events if e.type == "warning"] == ["terminal_missing"]
    assert events[-1].type == "turn_end" and text_of(stream.message) == "".join(WORDS)


def test_chat_without_done_through_the_turns(server: Server) -> None:
    for run in (turn_async, turn_sync):
        server.requests.clear()
        events, result, error = run(server, "/chat-no-done", FAST, {})
        assert error is None and result.failure is None and len(posts(server, "/chat-no-done")) == 1
        assert text_of(result.message) == "".join(WORDS) and result.stop_reason == "stop"
        assert result.timings is not None and result.timings["content_gaps"]["count"] >= 1


# ------------------------------------------------- tools and the stop reason


@pytest.mark.parametrize(
    "tool",
    [
        ssefold.Tool(lambda call: "done", start="turn_end"),
        ssefold.Tool(lambda call: "done", exclusive=True),  # auto: turn_end for an exclusive tool
    ],
)
def test_a_side_effecting_tool_never_runs_after_a_length_stop(server: Server, tool: Any) -> None:
    ran: List[Any] = []

    def write(call: ssefold.ToolCall) -> str:
        ran.append(call)
        return "written"

    sync_tool = ssefold.Tool(write, exclusive=tool.exclusive, start=tool.start)

    async def awrite(call: ssefold.ToolCall) -> str:
        return write(call)

    async_tool = ssefold.Tool(awrite, exclusive=tool.exclusive, start=tool.start)
    for run, t in ((turn_async, async_tool), (turn_sync, sync_tool)):
        server.requests.clear()
        events, result, error = run(server, "/tool-write-length", FAST, {"write": t})
        assert error is None and len(posts(server, "/tool-write-length")) == 1
        assert ran == [], "never run"
        assert result.stop_reason == "length"
        (r,) = result.results
        assert (r.call_id, r.kind, r.is_error) == ("call_1", "skipped", True)
        assert r.output.startswith("Not run: the answer stopped with length"), r.output
        # The same call after a normal stop runs.
        server.requests.clear()
        events, result, error = run(server, "/tool-write-tool_calls", FAST, {"write": t})
        assert [r.kind for r in result.results] == ["ran"] and len(ran) == 1
        ran.clear()


def test_a_ready_tool_running_when_the_answer_stops_badly(server: Server) -> None:
    """start="ready": the call starts while the answer streams; the stop
    (length) finds it running: ``tool_running_after_stop``; by default it
    finishes, with ``cancel_running_on_bad_stop`` it is cancelled."""
    async def slow(call: ssefold.ToolCall) -> str:
        await asyncio.sleep(0.2)
        return "slow result"

    tools = {"write": ssefold.Tool(slow, start="ready")}
    events, result, error = turn_async(server, "/tool-write-length", FAST, tools)
    stops = [e for e in events if isinstance(e, ssefold.ToolExecutionEvent) and e.type == "tool_running_after_stop"]
    assert [(e.call_id, e.name, e.stop_reason) for e in stops] == [("call_1", "write", "length")]
    assert [(r.kind, r.output) for r in result.results] == [("ran", "slow result")]
    events, result, error = turn_async(server, "/tool-write-length", FAST, tools, cancel_running_on_bad_stop=True)
    assert [(r.kind, r.output) for r in result.results] == [("cancelled", "Cancelled by the host")]


# ----------------------------------------------------------------- approvals


def test_approvals_through_run_turn(server: Server) -> None:
    asked: List[Tuple[str, str, Any]] = []

    async def approve(call: ssefold.ToolCall) -> Any:
        asked.append((call.id, call.name, call.input))
        await asyncio.sleep(0.01)
        return True if call.name == "read" else "deleting is not allowed"

    async def tool(call: ssefold.ToolCall) -> str:
        return f"{call.name} ok"

    tools = {n: ssefold.Tool(tool, needs_approval=True) for n in ("read", "delete")}
    events, result, error = turn_async(server, "/two-calls", FAST, tools, approve=approve)
    assert error is None and len(posts(server, "/two-calls")) == 1
    assert sorted(asked) == [("call_0", "read", {}), ("call_1", "delete", {})]
    requested = [e for e in events if isinstance(e, ssefold.ToolExecutionEvent) and e.type == "tool_approval_requested"]
    assert [(e.call_id, e.approval_id, e.arguments) for e in requested] == [
        ("call_0", "approval_call_0", "{}"),
        ("call_1", "approval_call_1", "{}"),
    ]
    assert [(r.call_id, r.kind, r.output) for r in result.results] == [
        ("call_0", "ran", "read ok"),
        ("call_1", "denied", "Denied by the user: deleting is not allowed"),
    ]


def test_approvals_through_run_turn_sync_and_without_a_callback(server: Server) -> None:
    def approve(call: ssefold.ToolCall) -> bool:
        return call.name == "read"

    tools = {n: ssefold.Tool(lambda call: "ok", needs_approval=True) for n in ("read", "delete")}
    events, result, error = turn_sync(server, "/two-calls", FAST, tools, approve=approve)
    assert [(r.kind, r.output) for r in result.results] == [("ran", "ok"), ("denied", "Denied by the user")]
    # No callback: denied, saying why.
    events, result, error = turn_sync(server, "/two-calls", FAST, tools)
    assert [r.kind for r in result.results] == ["denied", "denied"]
    assert "no approve callback" in result.results[0].output


def test_an_approval_not_answered_in_time_is_denied(server: Server) -> None:
    async def never(call: ssefold.ToolCall) -> bool:
        await asyncio.sleep(5)
        return True

    async def tool(call: ssefold.ToolCall) -> str:
        return "ok"

    tools = {n: ssefold.Tool(tool, needs_approval=True) for n in ("read", "delete")}
    started = time.monotonic()
    events, result, error = turn_async(server, "/two-calls", FAST, tools, approve=never, approval_timeout_ms=100)
    assert time.monotonic() - started < 2
    assert [(r.kind, r.output) for r in result.results] == [("denied", "Denied: no approval within 100 ms")] * 2


def test_a_responses_answer_cut_after_output_is_resumed_only_through_the_resume_hook(server: Server) -> None:
    """The Responses cursor is a request parameter (``starting_after``):
    without a ``resume=`` hook the cut answer is not resumable and the POST
    is never sent again; with it the helper sends the hook's request (a GET
    from sequence 4) and the answer completes, nothing shown twice."""
    with httpx.Client() as client:
        it = ssefold.stream_events(
            client, "POST", url(server, "/responses-cut"), provider="openai_responses", policy=FAST, json=BODY
        )
        with pytest.raises(ssefold.IncompleteStreamError) as info:
            list(it)
    assert info.value.gave_up == "not_resumable"
    assert "starting_after" in str(info.value)
    assert [p for p, _ in server.requests] == ["/responses-cut"], "never sent again"

    server.requests.clear()
    resumes: List[int] = []

    def resume(cursor: ssefold.ResumeCursor) -> Tuple[str, str, Dict[str, Any]]:
        assert cursor.starting_after is not None
        resumes.append(cursor.starting_after)
        path = f"/v1/responses/resp_1?stream=true&starting_after={cursor.starting_after}"
        return "GET", url(server, path), {"json": None}

    with httpx.Client() as client:
        it = ssefold.stream_events(
            client, "POST", url(server, "/responses-cut"), provider="openai_responses", policy=FAST, json=BODY,
            resume=resume,
        )
        events = list(it)
    assert resumes == [4]
    assert server.requests == [("/responses-cut", None), ("/v1/responses/resp_1", "stream=true&starting_after=4")]
    text = "".join(e.text or "" for e in events if e.type == "text_delta")
    assert text == "Hello there!"
    assert not any(e.type == "turn_reset" for e in events)
    assert it.stream.message["output"][0]["content"][0]["text"] == "Hello there!"

