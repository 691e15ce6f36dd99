"""httpx integration: run a streaming request, decode its body with ssefold
and reconnect per the core's policy (a refused status retried as its
``Retry-After`` says, backoff, server ``retry:``, ``Last-Event-ID``, stalls,
abort; after output, a resume and never a second request unless the policy
says ``restart_after_output``).

The reconnection *decisions* come from :class:`ssefold.Reconnector` (and
the retry hints of a response's headers from the core); this module only
does the I/O (httpx), tells the reconnector what happened and waits.
``httpx`` is imported lazily: ``import ssefold`` never needs it.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import random
import time
import zlib
from collections import deque
from typing import (
    Any,
    AsyncIterator,
    Callable,
    Deque,
    Dict,
    Generic,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Protocol,
    Tuple,
    TypeVar,
    Union,
    cast,
    overload,
)

from ._ssefold import (
    Decision,
    Error,
    IncompleteStreamError,
    ProviderError,
    ReconnectPolicy,
    Reconnector,
    ResumeCursor,
    ServerSentEvent,
    SSEDecoder,
    Stream,
    StreamEnd,
    StreamEvent,
    _incomplete_error,
    _provider_error,
)

Event = Union[ServerSentEvent, StreamEvent]
# How to resume from a cursor that is a request parameter: (method, url, request kwargs).
_Resume = Callable[[ResumeCursor], Tuple[str, str, Dict[str, Any]]]
_StallKind = Literal["idle", "first_content", "content"]
_GiveUpReason = Literal["retries_exhausted", "not_resumable", "not_retryable"]
_E = TypeVar("_E", ServerSentEvent, StreamEvent)

__all__ = ["stream_events", "astream_events", "EventStream", "AsyncEventStream"]


class _Flag(Protocol):
    def is_set(self) -> bool: ...


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


def _error_fields(payload: Any) -> Tuple[str, str]:
    """(type, message) of an Anthropic or OpenAI error body or event."""
    err = payload.get("error", payload) if isinstance(payload, dict) else None
    if not isinstance(err, dict):
        return "error", str(payload)
    etype = err.get("type") or err.get("code") or "error"
    return str(etype), str(err.get("message", ""))


def _error_from_text(text: str, status: Optional[int] = None, retry_after_ms: Optional[int] = None) -> ProviderError:
    """The ``ProviderError`` of an error event's data or of an HTTP error
    response's body (``status``): ``RetryableProviderError`` for 408, 429,
    529 and 5xx, or a transient error type."""
    try:
        etype, message = _error_fields(json.loads(text))
    except ValueError:
        etype, message = ("http_error" if status else "error"), text
    return _provider_error(etype, message, status, text if status is not None else None, retry_after_ms)


# An HTTP error body is read only this far (decoded bytes; Go reads 4 KiB):
# enough for a provider's JSON error, and a hostile body (a gzip bomb, one
# that never ends) costs no more. At most _BODY_RAW_LIMIT bytes are read off
# the wire for it.
_BODY_LIMIT = 4096
_BODY_RAW_LIMIT = 65536


class _BodyPrefix:
    """The start of a response body, decoded per its ``Content-Encoding``
    (identity, gzip, deflate) with zlib's ``max_length``: never more than
    ``_BODY_LIMIT`` bytes unpacked, whatever the body (httpx's own decoder
    unpacks each read whole: a 64 KiB read of a gzip bomb is 64 MiB)."""

    def __init__(self, response: Any) -> None:
        codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
        codings = [c for c in codings if c and c != "identity"]
        self.coding = ", ".join(codings)
        self.supported = codings in ([], ["gzip"], ["x-gzip"], ["deflate"])
        # gzip; "deflate" is zlib's format, or a raw deflate stream (as httpx allows).
        wbits = zlib.MAX_WBITS | 16 if codings != ["deflate"] else zlib.MAX_WBITS
        self._z: Any = zlib.decompressobj(wbits) if self.supported and codings else None
        # "deflate" as zlib's format until that fails; the bytes read until
        # then are kept to read them again as a raw deflate stream.
        self._zlib_read: Optional[bytearray] = bytearray() if codings == ["deflate"] else None
        self.data = bytearray()
        self.raw = 0

    @classmethod
    def of_content(cls, response: Any) -> "_BodyPrefix":
        """The prefix of a body already read (a transport that hands over
        whole responses, such as ``httpx.MockTransport``), decoded by httpx."""
        prefix = cls(response)
        prefix.supported, prefix._z = True, None
        prefix.feed(bytes(response.content[:_BODY_LIMIT]))
        return prefix

    def feed(self, raw: bytes) -> bool:
        """Takes the next bytes read; True once nothing more is wanted."""
        self.raw += len(raw)
        room = _BODY_LIMIT - len(self.data)
        if self._z is None:
            self.data += raw[:room]
        else:
            if self._zlib_read is not None:
                self._zlib_read += raw
            try:
                self.data += self._z.decompress(raw, room)
            except zlib.error:
                if self._zlib_read is None:
                    return True  # corrupt: what was unpacked is kept
                again, self._zlib_read = bytes(self._zlib_read), None
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                self.data = bytearray()
                self.raw -= len(again)
                return self.feed(again)
            if self.data:
                self._zlib_read = None  # it is zlib's format
        return len(self.data) >= _BODY_LIMIT or self.raw >= _BODY_RAW_LIMIT

    def text(self) -> str:
        """The prefix as text (UTF-8, errors replaced; a character cut by the
        limit is left out)."""
        if not self.supported:
            return f"({self.coding}-encoded body not decoded)"
        final = len(self.data) < _BODY_LIMIT
        return codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(self.data), final=final)


def _read_prefix(response: Any) -> _BodyPrefix:
    """The start of ``response``'s body (read off the wire, only that far)."""
    if getattr(response, "is_stream_consumed", False):
        return _BodyPrefix.of_content(response)
    prefix = _BodyPrefix(response)
    if prefix.supported:
        for raw in response.iter_raw():
            if prefix.feed(raw):
                break
    return prefix


async def _aread_prefix(response: Any) -> _BodyPrefix:
    """The start of ``response``'s body (read off the wire, only that far)."""
    if getattr(response, "is_stream_consumed", False):
        return _BodyPrefix.of_content(response)
    prefix = _BodyPrefix(response)
    if prefix.supported:
        async for raw in response.aiter_raw():
            if prefix.feed(raw):
                break
    return prefix


# Response types that are certainly not a stream: a proxy's, a captive
# portal's or a login page. Anything else is left to the stream to judge.
_PAGE_TYPES = ("text/html", "application/xhtml+xml")


def _refused(response: Any) -> bool:
    """Whether the response is an answer the stream cannot read: a status
    other than 2xx (a 3xx is one that was not followed), or a web page."""
    if not 200 <= response.status_code < 300:
        return True
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return media in _PAGE_TYPES


def _refusal_error(response: Any, prefix: _BodyPrefix, end: Optional[StreamEnd]) -> ProviderError:
    """The ``ProviderError`` of a refused response (see :func:`_refused`),
    from the start of its body: ``.status_code``, ``.body`` (at most 4 KiB),
    ``.retry_after_ms`` (the hints the core read from its headers: ``end``,
    its ``StreamEnd.http_status``); retryable as its status says."""
    status = response.status_code
    text = prefix.text()
    retry_after = end.retry_after_ms if end is not None else None
    if 300 <= status < 400:
        location = response.headers.get("location")
        where = f" to {location}" if location else ""
        message = f"redirect{where} not followed (httpx follows redirects with follow_redirects=True)"
        return _provider_error("http_error", message, status, text, retry_after)
    if 200 <= status < 300:
        media = response.headers.get("content-type", "").split(";")[0].strip().lower()
        message = f"the response is a web page ({media}), not a stream"
        return _provider_error("unexpected_content_type", message, status, text, retry_after)
    return _error_from_text(text, status, retry_after)


def _redirects_error(exc: BaseException) -> ProviderError:
    """``httpx.TooManyRedirects`` as a ``ProviderError`` (not retried: the
    same request is redirected the same way)."""
    return _provider_error("too_many_redirects", str(exc) or type(exc).__name__)


def _read_timeout_ms(exc: BaseException) -> Optional[int]:
    """The read timeout (ms) of the request that timed out, as httpx had it."""
    try:
        timeout = exc.request.extensions.get("timeout", {}).get("read")  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # httpx: RuntimeError when it has no request
        return None
    return None if timeout is None else round(timeout * 1000)


class _Session:
    """The I/O-free part shared by the sync and async drivers: headers to
    send, events to pass on, how a connection ended, what to do next."""

    def __init__(
        self,
        policy: Optional[ReconnectPolicy],
        terminal: Optional[Callable[[ServerSentEvent], bool]],
        reconnector: Optional[Reconnector],
        decoder: Optional[SSEDecoder],
        provider: Union[None, str, "Stream[Any]"],
        resume: Optional["_Resume"] = None,
    ) -> None:
        # How to ask for a resume whose cursor is a request parameter
        # (Responses `starting_after`): the request to send instead.
        self.resume = resume
        if reconnector is None:
            reconnector = Reconnector(policy)
            # Two clients retrying after the same outage wait different times.
            reconnector.seed_jitter(random.getrandbits(64))
        self.reconnector = reconnector
        self.decoder = decoder if decoder is not None else SSEDecoder()
        self.terminal = terminal
        self.stream: Optional[Stream[Any]] = Stream(provider) if isinstance(provider, str) else provider
        self.completed = False
        self.connected = False
        self.error: Optional[BaseException] = None
        # The error of the last refused response (raised if it is not retried).
        self.refusal: Optional[ProviderError] = None
        # Which timeout found the connection stalled (a Reconnector.stall
        # kind), and its length in ms.
        self.stall: Optional[_StallKind] = None
        self.stall_ms: Optional[int] = None
        # Raw mode's replay skipping, in constant memory: a server that
        # ignores Last-Event-ID sends the stream again from its start, one
        # that resends the last event from that event, one that honours it
        # from the next. What was passed on is known by how many events
        # (_passed), its first event and where each of the last _RUNS ids
        # came into force (_runs: id, the event's digest, its position). A
        # new body's first event says where it starts when it is one of
        # those events (same id in force, type and data), and the events
        # before _passed are skipped.
        self._passed = 0
        self._first: Optional[Tuple[Optional[str], int]] = None
        self._runs: Deque[Tuple[Optional[str], int, int]] = deque(maxlen=self._RUNS)
        self._body_start = False
        self._skip = 0

    _RUNS = 16

    def request_headers(self, base: Optional[Mapping[str, str]]) -> Dict[str, str]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        headers.update(base or {})
        cursor = self.reconnector.cursor
        headers.update(cursor.headers())
        self._body_start = cursor.kind == "last_event_id" and self.stream is None and self._passed > 0
        self._skip = 0
        self.refusal = None
        self.stall = self.stall_ms = None
        if self.stream is not None and self.reconnector.attempts > 0:
            # The provider stream decides restart (a turn_reset event, then
            # the answer from the start) or resume from the new body.
            self.stream.reconnect()
        return headers

    def on_connected(self) -> None:
        self.connected = True
        self.reconnector.on_connected(_now_ms())

    def refused(self, response: Any, prefix: _BodyPrefix) -> StreamEnd:
        """A response that is not a stream (see :func:`_refused`): a status
        other than 2xx ends the connection as ``StreamEnd.http_status`` with
        its headers' hints (the core decides whether it is retried; its
        error is raised if not); a web page with a 2xx status raises now."""
        status = response.status_code
        if 200 <= status < 300:
            self.error = _refusal_error(response, prefix, None)
            raise self.error
        end = StreamEnd.http_status(status, response.headers)
        self.refusal = _refusal_error(response, prefix, end)
        return end

    def _check_stall(self, now: int) -> None:
        """Notes a stall (keep-alives, no content) found at ``now``."""
        stall = self.reconnector.stall(now)
        if stall is not None:
            self.stall, self.stall_ms = stall, self.reconnector.stall_timeout_ms(stall)

    def on_chunk(self, chunk: bytes) -> List[Event]:
        """The events of ``chunk`` to pass on (after a terminal or error
        event, nothing more). Content tells the reconnector (the answer has
        output); a connection that sends only keep-alives past the policy's
        content timeouts is stalled (``done``)."""
        now = _now_ms()
        self.reconnector.on_activity(now)
        if self.stream is not None:
            out = self._on_chunk_provider(self.stream, chunk, now)
        else:
            out = self._on_chunk_raw(chunk, now)
        if not self.done:
            self._check_stall(now)
        return out

    def _on_chunk_raw(self, chunk: bytes, now: int) -> List[Event]:
        out: List[Event] = []
        for ev in self.decoder.feed(chunk):
            if self.completed or self.error is not None:
                break
            if self._body_start:
                self._body_start = False
                self._skip = self._replayed(ev)
            if self._skip > 0:
                self._skip -= 1
                continue
            self.reconnector.on_event(ev.id, None, self.decoder.reconnection_time)
            self._passing(ev)
            if ev.event == "error":
                self.error = _error_from_text(ev.data)
                break
            # Raw SSE: every event passed on is content (comments are not).
            self.reconnector.on_content(now)
            out.append(ev)
            if self.terminal is not None and self.terminal(ev):
                self.completed = True
        return out

    @staticmethod
    def _digest(ev: ServerSentEvent) -> int:
        return hash((ev.event, ev.data))

    def _passing(self, ev: ServerSentEvent) -> None:
        if self._passed == 0:
            self._first = (ev.id, self._digest(ev))
        if not self._runs or self._runs[-1][0] != ev.id:
            self._runs.append((ev.id, self._digest(ev), self._passed))
        self._passed += 1

    def _replayed(self, ev: ServerSentEvent) -> int:
        """How many events of a new body that starts with ``ev`` were passed
        on already: from where ``ev`` was passed on (the last place its id
        came into force with that event, or the stream's first event), to
        the last event passed on; 0 for an event not among those (the
        server resumed after the last one)."""
        digest = self._digest(ev)
        start = next((pos for eid, d, pos in reversed(self._runs) if (eid, d) == (ev.id, digest)), None)
        if start is None and self._first is not None:
            first_id, first_digest = self._first
            # An id-less first event comes again with the id still in force.
            if digest == first_digest and first_id in (ev.id, None):
                start = 0
        return 0 if start is None else self._passed - start

    def _on_chunk_provider(self, stream: "Stream[Any]", chunk: bytes, now: int) -> List[Event]:
        out: List[StreamEvent] = []
        try:
            out += stream.feed(chunk)
        except Error as exc:  # the stream is closed; its events still count
            out += getattr(exc, "events", [])
            self.error = exc
        if out:
            self.reconnector.on_event(stream.last_event_id, stream.last_sequence_number, stream.reconnection_time)
            if any(e.is_content for e in out):
                self.reconnector.on_content(now)
        if stream.is_terminated:
            self.completed = True
        return cast(List[Event], out)

    def abort_events(self) -> List[StreamEvent]:
        """The provider stream's ``turn_end`` (``aborted``), if any."""
        return self.stream.abort() if self.stream is not None else []

    def final_events(self) -> List[StreamEvent]:
        """The provider stream's last events, once the answer is complete."""
        return self.stream.finish() if self.stream is not None else []

    @property
    def done(self) -> bool:
        """Nothing more to read from this connection: the answer completed,
        an error came, or it stalled."""
        return self.completed or self.error is not None or self.stall is not None

    def end_of_body(self) -> StreamEnd:
        self.decoder.finish()
        if self.error is not None:
            if not isinstance(self.error, ProviderError):
                raise self.error  # bad data or a limit: nothing to retry
            return StreamEnd.provider_error(self.error.type, self.error.message)
        if self.completed:
            return StreamEnd.completed()
        if self.stall is not None:
            return StreamEnd.idle_timeout()
        if self.stream is not None and self.stream.is_complete_at_end:
            # The answer is whole without its terminal event (OpenAI Chat
            # without [DONE], Gemini after every finishReason): complete,
            # never reconnected; finish() ends the turn.
            self.completed = True
            return StreamEnd.completed()
        if self.stream is None and self.terminal is None and self.decoder.discarded_bytes == 0:
            return StreamEnd.completed()
        return StreamEnd.ended_early()

    def transport_failed(self, exc: BaseException, idle: bool) -> StreamEnd:
        self.decoder.finish()
        if idle:
            # The read timeout is the shortest of the policy's timeouts: the
            # one that has passed, else (the client's own read timeout) no
            # bytes for that long.
            self._check_stall(_now_ms())
            if self.stall is None:
                self.stall, self.stall_ms = "idle", _read_timeout_ms(exc)
            return StreamEnd.idle_timeout()
        return StreamEnd.transport_error(f"{type(exc).__name__}: {exc}")

    def decide(self, end: StreamEnd, cause: Optional[BaseException]) -> Decision:
        """The decision; raises for ``fail`` and ``give_up`` (a refused
        response not retried: its ``ProviderError``)."""
        decision = self.reconnector.on_end(end)
        if (
            decision.kind == "reconnect"
            and decision.replay == "resume"
            and self.resume is None
            and self.reconnector.cursor.kind == "starting_after"
        ):
            # The cursor is a request parameter this helper cannot send: the
            # same request again would be a second answer, never sent.
            raise self.give_up_error(end, "not_resumable", parameter=True) from cause
        if decision.kind == "fail":
            assert self.error is not None
            raise self.error
        if decision.kind == "give_up":
            if self.refusal is not None:
                self.error = self.refusal
                self.refusal.gave_up = decision.reason
                raise self.refusal from cause
            raise self.give_up_error(end, decision.reason) from cause
        return decision

    def target(self, method: str, url: str, request: Dict[str, Any]) -> Tuple[str, str, Dict[str, Any]]:
        """The request to send now: the caller's, or the ``resume`` hook's
        for a resume from a ``starting_after`` cursor."""
        cursor = self.reconnector.cursor
        if self.resume is not None and self.reconnector.attempts > 0 and cursor.kind == "starting_after":
            r_method, r_url, r_request = self.resume(cursor)
            return r_method, r_url, dict(request, **r_request)
        return method, url, request

    def give_up_error(
        self, end: StreamEnd, reason: Optional[_GiveUpReason], parameter: bool = False
    ) -> IncompleteStreamError:
        """The ``IncompleteStreamError`` when no reconnection follows: what
        the last connection did, in words, and why it is not sent again
        (``.gave_up``: ``not_resumable`` when output had started and the
        provider cannot resume it), with ``.expected``, ``.events`` (the
        provider stream's open parts, committed as incomplete), ``.last``
        and, for a stall, ``.stall`` and ``.after_ms``."""
        events: List[StreamEvent] = []
        expected = "the terminal event" if self.terminal is not None else "the end of the last event"
        if self.stream is not None:
            try:
                events = self.stream.finish()
            except IncompleteStreamError as exc:
                expected, events = exc.expected, exc.events
            except Error:
                pass
        retries = self.reconnector.policy.max_retries
        if end.kind == "transport_error":
            what = "the connection failed" if self.connected else "could not connect"
            text = f"{what}: {end.message}"
        elif end.kind == "idle_timeout":
            ms = self.stall_ms
            if self.stall == "first_content":
                text = f"no content for {ms} ms before the first (keep-alives only)"
            elif self.stall == "content":
                text = f"no content for {ms} ms (keep-alives only)"
            else:
                text = f"no data for {ms} ms" if ms is not None else "no data within the client's read timeout"
        else:
            text = f"the stream ended before its terminal event (expected {expected})"
        if reason == "not_resumable" and parameter:
            why = (
                "output had started and the provider resumes from a request parameter (starting_after) "
                "that needs a resume= hook: not sent again"
            )
        elif reason == "not_resumable":
            why = (
                "output had started and the provider cannot resume it (no event id to send as Last-Event-ID): "
                "not sent again (ReconnectPolicy(restart_after_output=True) would)"
            )
        else:
            why = f"gave up after {retries} reconnection(s)"
        err = _incomplete_error(f"{text}; {why}", expected)
        err.events = events
        err.last = end
        err.gave_up = reason
        err.stall = self.stall
        err.after_ms = self.stall_ms
        return err


def _request_kwargs(session: _Session, client: Any, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """The request's keyword arguments with the read timeout at most the
    shortest of the policy's timeouts (idle, first content, between
    contents), so that a silent connection wakes the driver up (a stall is
    judged by the reconnector); the client's own timeouts otherwise (a
    shorter read timeout of its own stays); ``timeout=`` given by the caller
    wins."""
    policy = session.reconnector.policy
    configured = (policy.idle_timeout_ms, policy.first_content_timeout_ms, policy.content_timeout_ms)
    timeouts = [t / 1000 for t in configured if t is not None]
    if timeouts and "timeout" not in kwargs:
        import httpx

        own = getattr(client, "timeout", None)
        if not isinstance(own, httpx.Timeout):
            own = httpx.Timeout(10.0)
        read = min(timeouts) if own.read is None else min(own.read, *timeouts)
        kwargs = dict(kwargs, timeout=httpx.Timeout(connect=own.connect, read=read, write=own.write, pool=own.pool))
    return kwargs


def _stream_events(
    session: "_Session",
    client: Any,
    first_method: str,
    first_url: str,
    abort: Optional[_Flag],
    headers: Optional[Mapping[str, str]],
    first_request: Dict[str, Any],
) -> Iterator[Event]:
    """The sync driver of :func:`stream_events`: I/O and waiting only."""
    import httpx

    while True:
        method, url, request = session.target(first_method, first_url, first_request)
        if abort is not None and abort.is_set():
            session.decide(StreamEnd.aborted(), None)
            yield from session.abort_events()
            return
        cause: Optional[BaseException] = None
        refused: Optional[StreamEnd] = None
        try:
            with client.stream(method, url, headers=session.request_headers(headers), **request) as response:
                if _refused(response):
                    refused = session.refused(response, _read_prefix(response))
                else:
                    session.on_connected()
                    for chunk in response.iter_bytes():
                        yield from session.on_chunk(chunk)
                        if session.done or (abort is not None and abort.is_set()):
                            break
            if refused is not None:
                end = refused
            elif abort is not None and abort.is_set() and not session.done:
                session.decoder.finish()
                session.decide(StreamEnd.aborted(), None)
                yield from session.abort_events()
                return
            else:
                end = session.end_of_body()
        except httpx.TooManyRedirects as exc:
            session.error = _redirects_error(exc)
            raise session.error from exc
        except (httpx.TransportError, httpx.DecodingError) as exc:
            cause = exc
            end = session.transport_failed(exc, isinstance(exc, httpx.ReadTimeout))
        decision = session.decide(end, cause)
        if decision.kind == "done":
            yield from session.final_events()
            return
        if decision.kind == "stop":
            return
        delay = (decision.delay_ms or 0) / 1000
        if abort is not None and hasattr(abort, "wait"):
            abort.wait(delay)
        else:
            time.sleep(delay)


async def _astream_events(
    session: "_Session",
    client: Any,
    first_method: str,
    first_url: str,
    abort: Optional[_Flag],
    headers: Optional[Mapping[str, str]],
    first_request: Dict[str, Any],
) -> AsyncIterator[Event]:
    """The async driver of :func:`astream_events`."""
    import httpx

    while True:
        method, url, request = session.target(first_method, first_url, first_request)
        if abort is not None and abort.is_set():
            session.decide(StreamEnd.aborted(), None)
            for event in session.abort_events():
                yield event
            return
        cause: Optional[BaseException] = None
        refused: Optional[StreamEnd] = None
        try:
            async with client.stream(method, url, headers=session.request_headers(headers), **request) as response:
                if _refused(response):
                    refused = session.refused(response, await _aread_prefix(response))
                else:
                    session.on_connected()
                    async for chunk in response.aiter_bytes():
                        for item in session.on_chunk(chunk):
                            yield item
                        if session.done or (abort is not None and abort.is_set()):
                            break
            if refused is not None:
                end = refused
            elif abort is not None and abort.is_set() and not session.done:
                session.decoder.finish()
                session.decide(StreamEnd.aborted(), None)
                for event in session.abort_events():
                    yield event
                return
            else:
                end = session.end_of_body()
        except httpx.TooManyRedirects as exc:
            session.error = _redirects_error(exc)
            raise session.error from exc
        except (httpx.TransportError, httpx.DecodingError) as exc:
            cause = exc
            end = session.transport_failed(exc, isinstance(exc, httpx.ReadTimeout))
        decision = session.decide(end, cause)
        if decision.kind == "done":
            for event in session.final_events():
                yield event
            return
        if decision.kind == "stop":
            return
        delay = (decision.delay_ms or 0) / 1000
        waiter = getattr(abort, "wait", None)
        if waiter is not None and asyncio.iscoroutinefunction(waiter):
            try:
                await asyncio.wait_for(waiter(), delay)
            except asyncio.TimeoutError:
                pass
        else:
            await asyncio.sleep(delay)


class EventStream(Generic[_E]):
    """The iterator :func:`stream_events` returns: events as they come
    (``StreamEvent`` with a ``provider``, else ``ServerSentEvent``), and the
    session's state (``.stream``: the provider stream whose ``message`` is
    the folded answer; ``.reconnector``; ``.decoder``)."""

    def __init__(self, session: _Session, events: Iterator[_E]) -> None:
        self._session = session
        self._events: Iterator[_E] = events

    def __iter__(self) -> "EventStream[_E]":
        return self

    def __next__(self) -> _E:
        return next(self._events)

    def close(self) -> None:
        """Stops the stream (closes the response if one is open)."""
        close = getattr(self._events, "close", None)
        if close is not None:
            close()

    @property
    def stream(self: "EventStream[StreamEvent]") -> "Stream[Any]":
        """The provider stream (with a ``provider`` only)."""
        return cast("Stream[Any]", self._session.stream)

    @property
    def reconnector(self) -> Reconnector:
        return self._session.reconnector

    @property
    def decoder(self) -> SSEDecoder:
        return self._session.decoder


class AsyncEventStream(Generic[_E]):
    """The async iterator :func:`astream_events` returns (see
    :class:`EventStream`)."""

    def __init__(self, session: _Session, events: AsyncIterator[_E]) -> None:
        self._session = session
        self._events: AsyncIterator[_E] = events

    def __aiter__(self) -> "AsyncEventStream[_E]":
        return self

    async def __anext__(self) -> _E:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stops the stream (closes the response if one is open)."""
        aclose = getattr(self._events, "aclose", None)
        if aclose is not None:
            await aclose()

    @property
    def stream(self: "AsyncEventStream[StreamEvent]") -> "Stream[Any]":
        """The provider stream (with a ``provider`` only)."""
        return cast("Stream[Any]", self._session.stream)

    @property
    def reconnector(self) -> Reconnector:
        return self._session.reconnector

    @property
    def decoder(self) -> SSEDecoder:
        return self._session.decoder


@overload
def stream_events(
    client: Any,
    method: str,
    url: str,
    *,
    provider: None = None,
    policy: Optional[ReconnectPolicy] = None,
    terminal: Optional[Callable[[ServerSentEvent], bool]] = None,
    abort: Optional[_Flag] = None,
    headers: Optional[Mapping[str, str]] = None,
    reconnector: Optional[Reconnector] = None,
    decoder: Optional[SSEDecoder] = None,
    resume: Optional["_Resume"] = None,
    **request: Any,
) -> EventStream[ServerSentEvent]: ...
@overload
def stream_events(
    client: Any,
    method: str,
    url: str,
    *,
    provider: Union[str, "Stream[Any]"],
    policy: Optional[ReconnectPolicy] = None,
    terminal: Optional[Callable[[ServerSentEvent], bool]] = None,
    abort: Optional[_Flag] = None,
    headers: Optional[Mapping[str, str]] = None,
    reconnector: Optional[Reconnector] = None,
    decoder: Optional[SSEDecoder] = None,
    resume: Optional["_Resume"] = None,
    **request: Any,
) -> EventStream[StreamEvent]: ...


def stream_events(
    client: Any,
    method: str,
    url: str,
    *,
    provider: Union[None, str, "Stream[Any]"] = None,
    policy: Optional[ReconnectPolicy] = None,
    terminal: Optional[Callable[[ServerSentEvent], bool]] = None,
    abort: Optional[_Flag] = None,
    headers: Optional[Mapping[str, str]] = None,
    reconnector: Optional[Reconnector] = None,
    decoder: Optional[SSEDecoder] = None,
    resume: Optional["_Resume"] = None,
    **request: Any,
) -> "EventStream[Any]":
    """Runs ``client.stream(method, url, ...)`` (an ``httpx.Client``) and
    yields its events, sending the request again when the response is
    refused with a transient status, the body ends early, the transport
    fails or the connection stalls, per ``policy`` (default:
    ``ReconnectPolicy()``): before any output the same request (a retry);
    after output only a resume (``Last-Event-ID``), never a second answer
    unless the policy says ``restart_after_output=True``.

    * ``provider`` (``"anthropic"``, ``"openai_chat"``,
      ``"openai_responses"``, ``"auto"`` or a :class:`ssefold.Stream`):
      yield its normalized events instead of raw SSE events; the provider's
      terminal event completes the answer. Reconnection goes through
      ``Stream.reconnect()``: a server that starts the answer over gives a
      ``turn_reset`` event, then the answer again; an abort gives a
      ``turn_end`` with ``stop_reason="aborted"``. The folded answer:
      ``.stream.message``.
    * ``resume(cursor)`` says how to resume from a cursor that is a request
      parameter, not a header (the Responses API's ``starting_after``:
      ``GET /v1/responses/{id}?stream=true&starting_after=N`` for a
      background response): it returns ``(method, url, request_kwargs)`` to
      send instead of the first request. Without it such an answer is not
      resumable: after output a cut raises ``IncompleteStreamError``
      (``.gave_up == "not_resumable"``), never a second POST.
    * ``terminal(event)`` (raw mode) says which event completes the answer;
      without it a clean end of body (no unterminated event) completes it.
    * On reconnection ``Last-Event-ID`` is sent when the server gave ids;
      events a server replays anyway (it ignored the header, or resent the
      last events) are skipped, in constant memory.
    * An HTTP status other than 2xx goes to the reconnector as
      :meth:`StreamEnd.http_status` with its headers' hints (the core reads
      ``retry-after-ms``, ``Retry-After`` capped at ``max_retry_after_ms``,
      ``x-should-retry``): 408, 409, 429, 500, 502, 503, 504 and 529 are
      sent again after that wait; any other status, ``x-should-retry:
      false`` or the last retry raises :class:`ssefold.ProviderError`
      (``.status_code``, ``.body``, the first 4 KiB of the body, ``.type``
      from it, ``.retry_after_ms``, ``.gave_up``):
      :class:`ssefold.RetryableProviderError` for a status the core retries.
      A redirect is one too, unless the client follows it
      (``follow_redirects=True``; too many: type ``too_many_redirects``),
      and so is a web page (``text/html``) with status 200 (type
      ``unexpected_content_type``). An ``error`` event raises a
      ``ProviderError`` too (never retried).
    * Stalls: the read timeout is the shortest of the policy's
      ``idle_timeout_ms``, ``first_content_timeout_ms`` and
      ``content_timeout_ms`` (unless ``timeout=`` is given), and after
      every chunk the reconnector judges whether content (not keep-alives:
      ``StreamEvent.is_content``; in raw mode any event) came in time.
    * No reconnection following raises
      :class:`ssefold.IncompleteStreamError` saying how the last connection
      ended (``could not connect: ...`` when none ever did; ``no content for
      N ms ...`` for a stall, with ``.stall`` and ``.after_ms``) and why
      (``.gave_up``: ``retries_exhausted``, or ``not_resumable`` when
      output had started and the provider gave no id to resume from: the
      request is not sent again), with ``.last``, the :class:`StreamEnd`;
      ``.expected``; ``.events``, the provider stream's open parts
      committed as incomplete (the folded answer: ``.stream.message``).
    * ``abort`` (e.g. a ``threading.Event``) set from another thread stops
      the stream at the next chunk or during a backoff wait.
    """
    session = _Session(policy, terminal, reconnector, decoder, provider, resume)
    request = _request_kwargs(session, client, request)
    events = _stream_events(session, client, method, url, abort, headers, request)
    return EventStream(session, cast(Iterator[Any], events))


@overload
def astream_events(
    client: Any,
    method: str,
    url: str,
    *,
    provider: None = None,
    policy: Optional[ReconnectPolicy] = None,
    terminal: Optional[Callable[[ServerSentEvent], bool]] = None,
    abort: Optional[_Flag] = None,
    headers: Optional[Mapping[str, str]] = None,
    reconnector: Optional[Reconnector] = None,
    decoder: Optional[SSEDecoder] = None,
    resume: Optional["_Resume"] = None,
    **request: Any,
) -> AsyncEventStream[ServerSentEvent]: ...
@overload
def astream_events(
    client: Any,
    method: str,
    url: str,
    *,
    provider: Union[str, "Stream[Any]"],
    policy: Optional[ReconnectPolicy] = None,
    terminal: Optional[Callable[[ServerSentEvent], bool]] = None,
    abort: Optional[_Flag] = None,
    headers: Optional[Mapping[str, str]] = None,
    reconnector: Optional[Reconnector] = None,
    decoder: Optional[SSEDecoder] = None,
    resume: Optional["_Resume"] = None,
    **request: Any,
) -> AsyncEventStream[StreamEvent]: ...


def astream_events(
    client: Any,
    method: str,
    url: str,
    *,
    provider: Union[None, str, "Stream[Any]"] = None,
    policy: Optional[ReconnectPolicy] = None,
    terminal: Optional[Callable[[ServerSentEvent], bool]] = None,
    abort: Optional[_Flag] = None,
    headers: Optional[Mapping[str, str]] = None,
    reconnector: Optional[Reconnector] = None,
    decoder: Optional[SSEDecoder] = None,
    resume: Optional["_Resume"] = None,
    **request: Any,
) -> "AsyncEventStream[Any]":
    """The async twin of :func:`stream_events` over an
    ``httpx.AsyncClient``; ``abort`` may be an ``asyncio.Event`` set from
    another task (cancelling the consuming task works too)."""
    session = _Session(policy, terminal, reconnector, decoder, provider, resume)
    request = _request_kwargs(session, client, request)
    events = _astream_events(session, client, method, url, abort, headers, request)
    return AsyncEventStream(session, cast(AsyncIterator[Any], events))
