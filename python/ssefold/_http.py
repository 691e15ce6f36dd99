"""httpx integration: run a streaming request, decode its body with ssefold
and reconnect per the core's policy (backoff, server ``retry:``,
``Last-Event-ID``, abort).

The reconnection *decisions* come from :class:`ssefold.Reconnector`; this
module only does the I/O (httpx) and the waiting. ``httpx`` is imported
lazily: ``import ssefold`` never needs it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Mapping, Optional, Protocol, Tuple

from ._ssefold import (
    Decision,
    IncompleteStreamError,
    ReconnectPolicy,
    Reconnector,
    ServerSentEvent,
    SSEDecoder,
    StreamEnd,
    _provider_error,
)

__all__ = ["stream_events", "astream_events"]


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


def _error_from_text(text: str, status: Optional[int] = None) -> BaseException:
    try:
        etype, message = _error_fields(json.loads(text))
    except ValueError:
        etype, message = ("http_error" if status else "error"), text
    exc = _provider_error(etype, message)
    if status is not None:
        exc.status_code = status  # type: ignore[attr-defined]
    return exc


class _Session:
    """The I/O-free part shared by the sync and async drivers: headers to
    send, events to pass on, how a connection ended, what to do next."""

    def __init__(
        self,
        policy: Optional[ReconnectPolicy],
        terminal: Optional[Callable[[ServerSentEvent], bool]],
        reconnector: Optional[Reconnector],
        decoder: Optional[SSEDecoder],
    ) -> None:
        self.reconnector = reconnector if reconnector is not None else Reconnector(policy)
        self.decoder = decoder if decoder is not None else SSEDecoder()
        self.terminal = terminal
        self.completed = False
        self.error: Optional[BaseException] = None
        # Events passed on, per last-event-ID in force: a server that ignores
        # Last-Event-ID replays them, and the replay is skipped.
        self._yielded: Counter[Optional[str]] = Counter()
        self._replay: Optional[Counter[Optional[str]]] = None

    def request_headers(self, base: Optional[Mapping[str, str]]) -> Dict[str, str]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        headers.update(base or {})
        cursor = self.reconnector.cursor
        headers.update(cursor.headers())
        self._replay = Counter() if cursor.kind == "last_event_id" else None
        return headers

    def on_connected(self) -> None:
        self.reconnector.on_connected(_now_ms())

    def on_chunk(self, chunk: bytes) -> List[ServerSentEvent]:
        """The events of ``chunk`` to pass on (after a terminal or error
        event, nothing more)."""
        self.reconnector.on_activity(_now_ms())
        out = []
        for ev in self.decoder.feed(chunk):
            if self.completed or self.error is not None:
                break
            if self._replay is not None:
                self._replay[ev.id] += 1
                if self._replay[ev.id] <= self._yielded[ev.id]:
                    continue
                self._replay = None
            self.reconnector.on_event(ev.id, None, self.decoder.reconnection_time)
            if ev.event == "error":
                self.error = _error_from_text(ev.data)
                break
            self._yielded[ev.id] += 1
            out.append(ev)
            if self.terminal is not None and self.terminal(ev):
                self.completed = True
        return out

    @property
    def done(self) -> bool:
        return self.completed or self.error is not None

    def end_of_body(self) -> StreamEnd:
        self.decoder.finish()
        if self.error is not None:
            etype = getattr(self.error, "type", "error")
            return StreamEnd.provider_error(etype, getattr(self.error, "message", ""))
        if self.completed:
            return StreamEnd.completed()
        if self.terminal is None and self.decoder.discarded_bytes == 0:
            return StreamEnd.completed()
        return StreamEnd.ended_early()

    def transport_failed(self, exc: BaseException, idle: bool) -> StreamEnd:
        self.decoder.finish()
        if idle:
            return StreamEnd.idle_timeout()
        return StreamEnd.transport_error(f"{type(exc).__name__}: {exc}")

    def decide(self, end: StreamEnd, cause: Optional[BaseException]) -> Decision:
        """The decision; raises for ``fail`` and ``give_up``."""
        decision = self.reconnector.on_end(end)
        if decision.kind == "fail":
            assert self.error is not None
            raise self.error
        if decision.kind == "give_up":
            exc = IncompleteStreamError(
                f"the stream ended before its terminal event ({end!r}) after "
                f"{self.reconnector.policy.max_retries} reconnection(s)"
            )
            exc.last = end  # type: ignore[attr-defined]
            raise exc from cause
        return decision


def _request_kwargs(session: _Session, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    idle = session.reconnector.policy.idle_timeout_ms
    if idle is not None and "timeout" not in kwargs:
        import httpx

        kwargs = dict(kwargs, timeout=httpx.Timeout(10.0, read=idle / 1000))
    return kwargs


def stream_events(
    client: Any,
    method: str,
    url: str,
    *,
    policy: Optional[ReconnectPolicy] = None,
    terminal: Optional[Callable[[ServerSentEvent], bool]] = None,
    abort: Optional[_Flag] = None,
    headers: Optional[Mapping[str, str]] = None,
    reconnector: Optional[Reconnector] = None,
    decoder: Optional[SSEDecoder] = None,
    **request: Any,
) -> Iterator[ServerSentEvent]:
    """Runs ``client.stream(method, url, ...)`` (an ``httpx.Client``) and
    yields its events, reconnecting when the body ends early, the transport
    fails or it goes idle, per ``policy`` (default: ``ReconnectPolicy()``).

    * ``terminal(event)`` says which event completes the answer; without it
      a clean end of body (no unterminated event) completes it.
    * On reconnection ``Last-Event-ID`` is sent when the server gave ids;
      events a server replays anyway (it ignored the header) are skipped.
    * An ``error`` event or an HTTP error status raises
      :class:`ssefold.ProviderError` (never retried); running out of retries
      raises :class:`ssefold.IncompleteStreamError` (``.last``: how the last
      connection ended).
    * ``abort`` (e.g. a ``threading.Event``) set from another thread stops
      the stream at the next chunk or during a backoff wait.
    """
    import httpx

    session = _Session(policy, terminal, reconnector, decoder)
    request = _request_kwargs(session, request)
    while True:
        if abort is not None and abort.is_set():
            session.decide(StreamEnd.aborted(), None)
            return
        cause: Optional[BaseException] = None
        try:
            with client.stream(method, url, headers=session.request_headers(headers), **request) as response:
                if response.status_code >= 400:
                    response.read()
                    session.error = _error_from_text(response.text, response.status_code)
                    raise session.error
                session.on_connected()
                for chunk in response.iter_bytes():
                    yield from session.on_chunk(chunk)
                    if session.done or (abort is not None and abort.is_set()):
                        break
            if abort is not None and abort.is_set() and not session.done:
                session.decoder.finish()
                session.decide(StreamEnd.aborted(), None)
                return
            end = session.end_of_body()
        except httpx.TransportError as exc:
            cause = exc
            end = session.transport_failed(exc, isinstance(exc, httpx.ReadTimeout))
        decision = session.decide(end, cause)
        if decision.kind in ("done", "stop"):
            return
        delay = (decision.delay_ms or 0) / 1000
        if abort is not None and hasattr(abort, "wait"):
            abort.wait(delay)
        else:
            time.sleep(delay)


async def astream_events(
    client: Any,
    method: str,
    url: str,
    *,
    policy: Optional[ReconnectPolicy] = None,
    terminal: Optional[Callable[[ServerSentEvent], bool]] = None,
    abort: Optional[_Flag] = None,
    headers: Optional[Mapping[str, str]] = None,
    reconnector: Optional[Reconnector] = None,
    decoder: Optional[SSEDecoder] = None,
    **request: Any,
) -> AsyncIterator[ServerSentEvent]:
    """The async twin of :func:`stream_events` over an
    ``httpx.AsyncClient``; ``abort`` may be an ``asyncio.Event`` set from
    another task (cancelling the consuming task works too)."""
    import httpx

    session = _Session(policy, terminal, reconnector, decoder)
    request = _request_kwargs(session, request)
    while True:
        if abort is not None and abort.is_set():
            session.decide(StreamEnd.aborted(), None)
            return
        cause: Optional[BaseException] = None
        try:
            async with client.stream(method, url, headers=session.request_headers(headers), **request) as response:
                if response.status_code >= 400:
                    await response.aread()
                    session.error = _error_from_text(response.text, response.status_code)
                    raise session.error
                session.on_connected()
                async for chunk in response.aiter_bytes():
                    for event in session.on_chunk(chunk):
                        yield event
                    if session.done or (abort is not None and abort.is_set()):
                        break
            if abort is not None and abort.is_set() and not session.done:
                session.decoder.finish()
                session.decide(StreamEnd.aborted(), None)
                return
            end = session.end_of_body()
        except httpx.TransportError as exc:
            cause = exc
            end = session.transport_failed(exc, isinstance(exc, httpx.ReadTimeout))
        decision = session.decide(end, cause)
        if decision.kind in ("done", "stop"):
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
