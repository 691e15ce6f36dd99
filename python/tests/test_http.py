"""The httpx helpers against a real HTTP server on loopback that drops the
connection mid-stream, answers with API errors, and honours or ignores
Last-Event-ID. (python/tests/test_policies.py has the issue 27 policies:
statuses retried, no second request after output, stalls.)"""

from __future__ import annotations

import asyncio
import http.server
import pathlib
import threading
import time
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import ssefold

httpx = pytest.importorskip("httpx")

FAST = ssefold.ReconnectPolicy(initial_delay_ms=10, max_retries=2)
# FAST, and a body cut after output is sent again (the server starts over).
RESTART = ssefold.ReconnectPolicy(initial_delay_ms=10, max_retries=2, restart_after_output=True)
EVENTS = [b"id: 1\ndata: a\n\n", b"id: 2\ndata: b\n\n", b"id: 3\ndata: c\n\n", b"event: done\ndata: end\n\n"]
STATUS_BODIES = {
    "/status": (529, b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    "/status-429": (429, b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'),
    "/status-503": (503, b"upstream unavailable"),
    "/status-400": (400, b'{"error":{"message":"bad model","type":"invalid_request_error","code":null}}'),
}
ERROR = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'


FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests"
BASIC = FIXTURES / "peer-fixtures" / "anthropic-sdk-python" / "basic_response.txt"
ERROR_FIXTURE = FIXTURES / "fixtures" / "anthropic" / "error_mid_stream.sse"
# Bodies whose answer is whole but whose terminal event never comes.
COMPLETE_AT_END = {
    "/chat-no-done": FIXTURES / "fixtures" / "openai_chat" / "no_done_vllm.sse",
    "/chat-usage-missing": FIXTURES / "fixtures" / "openai_chat" / "no_done_usage_missing.sse",
    "/gemini": FIXTURES / "fixtures" / "gemini" / "text.sse",
}


class Handler(http.server.BaseHTTPRequestHandler):
    """Scenarios by path; every request's Last-Event-ID is recorded."""

    protocol_version = "HTTP/1.1"
    server: "Server"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def send_events(self, chunks: List[bytes], truncate: bytes = b"", chunked: bool = True) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        # Every response closes its connection, and says so: a client that
        # took it for kept alive could send its next request on a socket the
        # server is closing (a transport error, an attempt spent, that no
        # request reached the server: a race seen once in CI).
        self.send_header("Connection", "close")
        self.end_headers()
        for c in chunks:
            self.write(c, chunked)
        if truncate:
            # Part of an event, then the connection is cut: the chunked
            # body is left unfinished (a transport error for the client),
            # the close-delimited one just ends (an early end of body).
            self.write(truncate, chunked)
        elif chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True

    def write(self, data: bytes, chunked: bool) -> None:
        if chunked:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        else:
            self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self) -> None:
        srv = self.server
        with srv.lock:
            srv.requests.append((self.path, self.headers.get("Last-Event-ID")))
            n = sum(1 for p, _ in srv.requests if p == self.path)
        last = self.headers.get("Last-Event-ID")
        if self.path in ("/honour", "/ignore", "/honour-close"):
            chunked = self.path != "/honour-close"
            if n == 1:
                self.send_events(EVENTS[:2], truncate=b"id: 3\ndata: c", chunked=chunked)
            elif self.path == "/ignore" or last is None:
                self.send_events(EVENTS, chunked=chunked)
            else:
                self.send_events(EVENTS[int(last) :], chunked=chunked)
        elif self.path == "/anthropic":
            body = BASIC.read_bytes()
            if n == 1:
                # Cut inside the third event: no ids, so the client restarts.
                cut = body.index(b"event: content_block_delta")
                self.send_events([body[:cut]], truncate=body[cut : cut + 30])
            else:
                self.send_events([body + b"\n\n"])
        elif self.path == "/anthropic-always-drop":
            body = BASIC.read_bytes()
            cut = body.index(b"event: content_block_stop")
            self.send_events([body[:cut]], truncate=body[cut : cut + 10])
        elif self.path == "/anthropic-error":
            self.send_events([ERROR_FIXTURE.read_bytes()])
        elif self.path in COMPLETE_AT_END:
            self.send_events([COMPLETE_AT_END[self.path].read_bytes()])
        elif self.path == "/slow-anthropic":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            body = BASIC.read_bytes()
            try:
                self.write(body[: body.index(b"event: content_block_start")], True)
                for _ in range(200):  # at most 2 s of keep-alives
                    time.sleep(0.01)
                    self.write(b":\n", True)
            except OSError:
                pass
            self.close_connection = True
        elif self.path == "/always-drop":
            self.send_events([b"retry: 20\n\n"], truncate=b"data: never")
        elif self.path == "/error":
            self.send_events([EVENTS[0], ERROR])
        elif self.path.startswith("/status"):
            status, body = STATUS_BODIES[self.path]
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/slow":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                self.write(EVENTS[0], True)
                for _ in range(200):  # at most 2 s of keep-alives
                    time.sleep(0.01)
                    self.write(b":\n", True)
            except OSError:
                pass
            self.close_connection = True
        else:
            self.send_error(404)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    requests: List[Tuple[str, Any]]
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


def is_done(ev: ssefold.ServerSentEvent) -> bool:
    return ev.event == "done"


def datas(events: List[ssefold.ServerSentEvent]) -> List[str]:
    return [e.data for e in events]


@pytest.mark.parametrize("path", ["/honour", "/ignore", "/honour-close"])
def test_sync_reconnects_with_last_event_id_and_never_repeats(server: Server, path: str) -> None:
    with httpx.Client() as client:
        events = list(ssefold.stream_events(client, "GET", url(server, path), policy=FAST, terminal=is_done))
    assert datas(events) == ["a", "b", "c", "end"]
    assert [e.id for e in events] == ["1", "2", "3", "3"]
    assert server.requests == [(path, None), (path, "2")]


def test_async_reconnects_with_last_event_id(server: Server) -> None:
    async def run() -> List[ssefold.ServerSentEvent]:
        async with httpx.AsyncClient() as client:
            return [e async for e in ssefold.astream_events(client, "GET", url(server, "/ignore"), policy=FAST, terminal=is_done)]

    assert datas(asyncio.run(run())) == ["a", "b", "c", "end"]
    assert server.requests == [("/ignore", None), ("/ignore", "2")]


def test_gives_up_after_the_retries_with_the_server_retry_delay(server: Server) -> None:
    reconnector = ssefold.Reconnector(FAST)
    started = time.monotonic()
    with httpx.Client() as client:
        with pytest.raises(ssefold.IncompleteStreamError) as info:
            list(ssefold.stream_events(client, "GET", url(server, "/always-drop"), reconnector=reconnector))
    # Two waits of the server's retry: 20 ms (not the policy's 10 ms).
    assert time.monotonic() - started >= 0.04
    assert len(server.requests) == 3
    assert info.value.last is not None and info.value.last.kind == "transport_error"
    assert isinstance(info.value.__cause__, httpx.TransportError)
    assert reconnector.state == "disconnected"


def test_an_error_event_raises_provider_error_without_retrying(server: Server) -> None:
    seen: List[ssefold.ServerSentEvent] = []
    with httpx.Client() as client:
        with pytest.raises(ssefold.ProviderError) as info:
            for ev in ssefold.stream_events(client, "GET", url(server, "/error"), policy=FAST):
                seen.append(ev)
    assert (info.value.type, info.value.message) == ("overloaded_error", "Overloaded")
    assert isinstance(info.value, ssefold.RetryableProviderError) and info.value.status_code is None
    assert datas(seen) == ["a"]
    assert len(server.requests) == 1


def test_an_error_status_raises_provider_error(server: Server) -> None:
    async def run() -> None:
        async with httpx.AsyncClient() as client:
            async for _ in ssefold.astream_events(client, "GET", url(server, "/status"), policy=FAST):
                pass

    with pytest.raises(ssefold.ProviderError) as info:
        asyncio.run(run())
    assert info.value.type == "overloaded_error"
    assert info.value.status_code == 529
    assert isinstance(info.value, ssefold.Error)


@pytest.mark.parametrize(
    "path, retryable, etype",
    [
        ("/status", True, "overloaded_error"),
        ("/status-429", True, "rate_limit_error"),
        ("/status-503", True, "http_error"),
        ("/status-400", False, "invalid_request_error"),
    ],
)
def test_http_status_errors_are_typed(server: Server, path: str, retryable: bool, etype: str) -> None:
    status, body = STATUS_BODIES[path]
    with httpx.Client() as client:
        # A broad `except ValueError` (parsing code) does not swallow it.
        with pytest.raises(ssefold.ProviderError) as info:
            try:
                list(ssefold.stream_events(client, "GET", url(server, path), provider="anthropic", policy=FAST))
            except ValueError:
                pytest.fail("a provider error is not a ValueError")
    err = info.value
    assert isinstance(err, ssefold.RetryableProviderError) == retryable == err.retryable
    assert (err.status_code, err.type, err.body) == (status, etype, body.decode())
    assert str(status) in str(err)
    # A transient status is sent again (the core's decision) until the
    # retries run out; another never.
    assert len(server.requests) == (1 + FAST.max_retries if retryable else 1)
    assert err.gave_up == ("retries_exhausted" if retryable else "not_retryable")


def test_data_errors_stay_value_errors() -> None:
    for cls in (ssefold.DecodeError, ssefold.InvalidEventError, ssefold.PartialJSONError, ssefold.EncodeError):
        assert issubclass(cls, ValueError) and issubclass(cls, ssefold.Error)
    for cls in (ssefold.ProviderError, ssefold.RetryableProviderError, ssefold.IncompleteStreamError):
        assert not issubclass(cls, ValueError) and issubclass(cls, ssefold.Error)
    with pytest.raises(ssefold.InvalidEventError):
        ssefold.AnthropicStream().feed(b"event: message_start\ndata: {nope\n\n")


def test_a_refused_connection_says_so() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    policy = ssefold.ReconnectPolicy(initial_delay_ms=1, max_retries=1)
    with httpx.Client() as client:
        with pytest.raises(ssefold.IncompleteStreamError) as info:
            list(ssefold.stream_events(client, "GET", f"http://127.0.0.1:{port}/", provider="anthropic", policy=policy))
    assert str(info.value).startswith("could not connect: ConnectError"), str(info.value)
    assert "terminal event" not in str(info.value)
    assert info.value.last is not None and info.value.last.kind == "transport_error"
    assert isinstance(info.value.__cause__, httpx.ConnectError)


@pytest.mark.parametrize("restart", [False, True])
def test_giving_up_carries_expected_and_events(server: Server, restart: bool) -> None:
    with httpx.Client() as client:
        with pytest.raises(ssefold.IncompleteStreamError) as info:
            path = url(server, "/anthropic-always-drop")
            list(ssefold.stream_events(client, "GET", path, provider="anthropic", policy=RESTART if restart else FAST))
    err = info.value
    assert err.expected == "message_stop"
    assert [(e.type, e.outcome) for e in err.events if e.type == "part_end"] == [("part_end", "incomplete")]
    assert str(err).startswith("the connection failed: "), str(err)
    if restart:
        assert "gave up after 2 reconnection(s)" in str(err) and err.gave_up == "retries_exhausted"
        assert len(server.requests) == 3
    else:
        # Output had started and Anthropic gives no id to resume from: the
        # request is not sent again.
        assert "not sent again" in str(err) and err.gave_up == "not_resumable"
        assert len(server.requests) == 1


def test_abort_from_another_thread(server: Server) -> None:
    abort = threading.Event()
    seen: List[ssefold.ServerSentEvent] = []
    started = time.monotonic()
    with httpx.Client() as client:
        for ev in ssefold.stream_events(client, "GET", url(server, "/slow"), policy=FAST, abort=abort):
            seen.append(ev)
            threading.Timer(0.05, abort.set).start()
    assert datas(seen) == ["a"]
    assert time.monotonic() - started < 1.5
    assert len(server.requests) == 1


def test_abort_from_another_task(server: Server) -> None:
    async def run() -> List[ssefold.ServerSentEvent]:
        abort = asyncio.Event()
        seen = []
        async with httpx.AsyncClient() as client:
            async for ev in ssefold.astream_events(client, "GET", url(server, "/slow"), policy=FAST, abort=abort):
                seen.append(ev)
                asyncio.get_running_loop().call_later(0.05, abort.set)
        return seen

    assert datas(asyncio.run(run())) == ["a"]


def test_idle_timeout_reconnects(server: Server) -> None:
    # /slow sends keep-alives every 10 ms: a 500 ms idle timeout never fires,
    # but 1 ms does, and the stream is retried then given up.
    policy = ssefold.ReconnectPolicy(initial_delay_ms=5, max_retries=1, idle_timeout_ms=1)
    with httpx.Client() as client:
        with pytest.raises(ssefold.IncompleteStreamError) as info:
            list(ssefold.stream_events(client, "GET", url(server, "/slow"), policy=policy, terminal=is_done))
    assert info.value.last is not None and info.value.last.kind == "idle_timeout"


def test_provider_mode_restarts_the_fold_and_keeps_the_message(server: Server) -> None:
    with httpx.Client() as client:
        it = ssefold.stream_events(client, "GET", url(server, "/anthropic"), provider="anthropic", policy=RESTART)
        types = [e.type for e in it]
    # The first connection's start, a reset, then the restarted answer.
    assert types.count("message_start") == 2 and types.count("turn_reset") == 1
    assert types.index("turn_reset") > types.index("message_start")
    assert types[-1] == "turn_end"
    assert it.stream is not None and it.stream.is_terminated
    assert it.stream.message["content"] == [{"type": "text", "text": "Hello there!"}]
    assert server.requests == [("/anthropic", None), ("/anthropic", None)]


def test_provider_mode_async_error_event(server: Server) -> None:
    async def run() -> List[str]:
        seen: List[str] = []
        async with httpx.AsyncClient() as client:
            async for ev in ssefold.astream_events(client, "GET", url(server, "/anthropic-error"), provider="auto"):
                seen.append(ev.type)
        return seen

    with pytest.raises(ssefold.ProviderError) as info:
        asyncio.run(run())
    assert info.value.type == "overloaded_error"
    assert isinstance(info.value, ssefold.RetryableProviderError) and info.value.retryable
    assert (info.value.status_code, info.value.body) == (None, None)
    assert len(server.requests) == 1


def test_provider_mode_abort_gives_an_aborted_turn_end(server: Server) -> None:
    abort = threading.Event()
    seen: List[Any] = []
    with httpx.Client() as client:
        it = ssefold.stream_events(client, "GET", url(server, "/slow-anthropic"), provider="anthropic", abort=abort)
        for ev in it:
            seen.append(ev)
            if ev.type == "message_start":
                threading.Timer(0.05, abort.set).start()
    assert seen[-1].type == "turn_end" and seen[-1].stop_reason == "aborted"
    assert it.stream is not None and it.stream.is_aborted


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_provider_mode_chat_without_done_is_complete_in_one_request(server: Server, mode: str) -> None:
    """A Chat body that ends after finish_reason without data: [DONE] (vLLM,
    TGI, proxies): the complete message, no error, never reconnected."""
    target = url(server, "/chat-no-done")
    if mode == "sync":
        with httpx.Client() as client:
            it = ssefold.stream_events(client, "GET", target, provider="openai_chat", policy=FAST)
            seen = list(it)
        stream = it.stream
    else:

        async def run() -> Tuple[List[Any], Any]:
            async with httpx.AsyncClient() as client:
                ait = ssefold.astream_events(client, "GET", target, provider="auto", policy=FAST)
                return [e async for e in ait], ait.stream

        seen, stream = asyncio.run(run())
    assert [e.code for e in seen if e.type == "warning"] == ["terminal_missing"]
    assert seen[-1].type == "turn_end" and seen[-1].stop_reason == "stop"
    assert stream is not None and stream.is_terminated and stream.is_complete_at_end
    assert stream.message["choices"][0]["message"]["content"] == "Hello there!"
    assert server.requests == [("/chat-no-done", None)]


def test_provider_mode_gemini_body_ending_at_eof_is_complete(server: Server) -> None:
    """Gemini has no terminal event: its body ending after every finishReason
    is complete, not an early end reconnected."""
    with httpx.Client() as client:
        it = ssefold.stream_events(client, "GET", url(server, "/gemini"), provider="gemini", policy=FAST)
        seen = list(it)
    assert seen[-1].type == "turn_end" and seen[-1].stop_reason == "STOP"
    assert "turn_reset" not in [e.type for e in seen]
    assert it.stream is not None and it.stream.is_complete_at_end
    assert server.requests == [("/gemini", None)]


@pytest.mark.parametrize("policy", [FAST, RESTART])
def test_provider_mode_chat_missing_its_announced_usage_is_an_early_end(
    server: Server, policy: ssefold.ReconnectPolicy
) -> None:
    """Announced ("usage": null) but the usage chunk never came: not whole,
    so an early end after output: not sent again (Chat has no ids to
    resume from), or restarted until given up when the policy says so."""
    with httpx.Client() as client:
        with pytest.raises(ssefold.IncompleteStreamError) as info:
            list(ssefold.stream_events(client, "GET", url(server, "/chat-usage-missing"), provider="openai_chat", policy=policy))
    assert info.value.last is not None and info.value.last.kind == "ended_early"
    if policy.restart_after_output:
        assert len(server.requests) == 1 + policy.max_retries and info.value.gave_up == "retries_exhausted"
    else:
        assert len(server.requests) == 1 and info.value.gave_up == "not_resumable"
