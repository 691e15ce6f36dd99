"""Run a turn's tools while the answer streams: ``run_turn`` (asyncio) and
``run_turn_sync`` (a thread pool), over :class:`ToolScheduler`.

A turn has two views: an iterator of events (the stream's normalized
:class:`StreamEvent` objects and the :class:`ToolExecutionEvent` objects,
interleaved in the order they happened) and its result (:class:`TurnResult`:
the folded message plus the tool results shaped for the next request).

Each tool call starts as soon as its arguments are complete (``part_end``
of a tool call), not when the answer ends; calls run in parallel unless the
tool is ``exclusive``; results come back in call order. An unknown tool or
invalid arguments get an error result without running; a tool that raises
gets its exception's text as an error result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import queue
import threading
from dataclasses import dataclass, field
from typing import (
    Any,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Dict,
    Generator,
    Generic,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Tuple,
    TypeVar,
    Union,
)

from ._http import AsyncEventStream, EventStream
from ._ssefold import Stream, StreamEvent, ToolExecutionEvent, ToolResult, ToolScheduler

__all__ = [
    "AgentTurn",
    "SyncAgentTurn",
    "Tool",
    "ToolCall",
    "TurnResult",
    "run_turn",
    "run_turn_sync",
]

F = TypeVar("F")

TurnEvent = Union[StreamEvent, ToolExecutionEvent]


@dataclass(frozen=True)
class Tool(Generic[F]):
    """A tool function and how it is scheduled. ``fn`` takes a
    :class:`ToolCall` and returns the output text (other values are sent as
    JSON); an exception is an error result with its text.

    * ``exclusive``: not safe beside other tools (an edit, a shell command):
      it runs alone, and later calls wait for it.
    * ``abort_siblings_on_error``: its failure cancels the running siblings
      and the calls still to run in this turn.
    """

    fn: F
    exclusive: bool = False
    abort_siblings_on_error: bool = False


@dataclass
class ToolCall:
    """One call, as the tool function sees it."""

    id: str
    name: str
    input: Any
    """The parsed arguments (a dict for well-formed calls)."""
    _update: Callable[[str, str], None] = field(repr=False, default=lambda _id, _text: None)

    def update(self, text: str) -> None:
        """Reports progress (a ``tool_execution_update`` event). Thread-safe."""
        self._update(self.id, text)


@dataclass(frozen=True)
class TurnResult:
    """What a finished (or aborted) turn gives the agent."""

    message: Optional[Dict[str, Any]]
    """The folded message, as the provider's non-streaming endpoint returns it."""
    provider: str
    """The dialect (``anthropic``, ``openai_chat``, ``openai_responses``)."""
    results: List[ToolResult]
    """Every tool call's result, in call order."""
    tool_results: Any
    """``results`` shaped for the next request (``None`` without tool calls):
    Anthropic, one user message; OpenAI Chat, a list of ``tool`` messages;
    Responses, a list of ``function_call_output`` items."""
    aborted: bool = False


AsyncToolFn = Callable[[ToolCall], Awaitable[Any]]
SyncToolFn = Callable[[ToolCall], Any]


# Tool calls the provider runs itself: Anthropic server tools (web search,
# code execution, ...) and MCP calls, OpenAI Responses MCP calls.
_PROVIDER_EXECUTED = frozenset({"server_tool_use", "mcp_tool_use", "mcp_call"})


def _ready_call(event: StreamEvent) -> Optional[Tuple[str, str, str, bool]]:
    """``(call_id, name, arguments JSON, complete)`` of a tool call's
    ``part_end``, in any of the three dialects' shapes."""
    if event.type != "part_end" or event.kind != "tool_call" or event.outcome == "incomplete":
        return None
    content = event.content
    if not isinstance(content, dict):
        return None
    if content.get("type") in _PROVIDER_EXECUTED:
        return None  # the provider runs it; its result is in the stream
    if "function" in content:  # OpenAI Chat
        function = content["function"] or {}
        call_id, name, args = content.get("id"), function.get("name"), function.get("arguments")
    elif "call_id" in content:  # OpenAI Responses
        call_id, name, args = content.get("call_id"), content.get("name"), content.get("arguments")
    else:  # Anthropic
        call_id, name = content.get("id"), content.get("name")
        args = json.dumps(content.get("input", {}))
    if not isinstance(call_id, str) or not isinstance(name, str):
        return None
    if event.outcome == "invalid_arguments":
        raw = event.raw
        return call_id, name, raw if isinstance(raw, str) else "", False
    return call_id, name, args if isinstance(args, str) else json.dumps(args), True


def _output_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class _TurnCore:
    """The host logic shared by the async and sync turns, IO-free: feeds
    stream events to the scheduler and says which calls to start and cancel.
    Only one thread (or the event loop) calls it."""

    def __init__(self, stream: Optional[Stream], tools: Mapping[str, Any], max_concurrency: int) -> None:
        self.stream = stream
        self.tools: Dict[str, Tool[Any]] = {
            name: t if isinstance(t, Tool) else Tool(t) for name, t in tools.items()
        }
        self.max_concurrency = max_concurrency
        self.scheduler = ToolScheduler(max_concurrency=max_concurrency)
        self.calls: Dict[str, Tuple[str, Any]] = {}
        self.provider = stream.provider if stream is not None else "auto"
        self.aborted = False

    def on_stream_events(self, events: Iterable[StreamEvent]) -> Tuple[List[TurnEvent], List[ToolCall], List[str]]:
        """Output events, calls to start, ids to cancel."""
        out: List[TurnEvent] = []
        cancel: List[str] = []
        for event in events:
            out.append(event)
            if event.type == "message_start":
                self.provider = event.provider
            elif event.type == "turn_reset":
                # The answer restarts: throw the turn's tool work away.
                cancel.extend(self.scheduler.discard())
                self._drain(out)
                self.scheduler = ToolScheduler(max_concurrency=self.max_concurrency)
                self.calls.clear()
            ready = _ready_call(event)
            if ready is not None:
                call_id, name, args, complete = ready
                tool = self.tools.get(name)
                if tool is None:
                    self.scheduler.add_unknown(call_id, name)
                else:
                    parsed: Any = None
                    if complete:
                        try:
                            parsed = json.loads(args)
                        except ValueError:
                            complete = False
                    self.calls[call_id] = (name, parsed)
                    self.scheduler.add(
                        call_id,
                        name,
                        args if complete else "",
                        exclusive=tool.exclusive,
                        abort_siblings_on_error=tool.abort_siblings_on_error,
                    )
        start = self._start()
        self._drain(out)
        return out, start, cancel

    def on_tool_done(self, call_id: str, output: str, is_error: bool) -> Tuple[List[TurnEvent], List[ToolCall], List[str]]:
        finished = self.scheduler.finish(call_id, output, is_error)
        start = self._start()
        out: List[TurnEvent] = []
        self._drain(out)
        return out, start, list(finished.cancel)

    def on_update(self, call_id: str, text: str) -> List[TurnEvent]:
        self.scheduler.update(call_id, text)
        out: List[TurnEvent] = []
        self._drain(out)
        return out

    def abort(self, reason: str) -> Tuple[List[TurnEvent], List[str]]:
        self.aborted = True
        out: List[TurnEvent] = []
        if self.stream is not None and not self.stream.is_terminated and not self.stream.is_aborted:
            out.extend(self.stream.abort())
        cancel = self.scheduler.abort(reason)
        self._drain(out)
        return out, cancel

    def _start(self) -> List[ToolCall]:
        return [ToolCall(i, *self.calls.pop(i)) for i in self.scheduler.startable()]

    def _drain(self, out: List[TurnEvent]) -> None:
        while True:
            e = self.scheduler.next_event()
            if e is None:
                return
            out.append(e)

    def result(self) -> TurnResult:
        results = self.scheduler.all_results()
        message = self.stream.message if self.stream is not None else None
        if self.stream is not None and self.stream.provider != "auto":
            self.provider = self.stream.provider
        shaped = self.scheduler.tool_results(self.provider) if results and self.provider != "auto" else None
        return TurnResult(message, self.provider, results, shaped, self.aborted)


# --------------------------------------------------------------------- asyncio


class AgentTurn:
    """One turn run by :func:`run_turn`: ``async for event in turn`` gives
    the events as they happen; ``await turn`` gives the :class:`TurnResult`
    (iterate first if you want the events: awaiting alone runs the turn
    without keeping them). ``abort()`` stops the stream and cancels the
    running tools; every call still gets a result."""

    def __init__(
        self,
        source: Union[AsyncIterable[bytes], AsyncEventStream],
        tools: Mapping[str, Union[Tool[AsyncToolFn], AsyncToolFn]],
        provider: str,
        max_concurrency: int,
    ) -> None:
        self._source = source
        stream = source.stream if isinstance(source, AsyncEventStream) else Stream(provider)
        self._core = _TurnCore(stream, tools, max_concurrency)
        self._tasks: Dict[str, "asyncio.Task[None]"] = {}
        self._cancelled: List["asyncio.Task[None]"] = []
        self._inbox: "asyncio.Queue[Tuple[str, Any]]" = asyncio.Queue()
        self._events: Optional["asyncio.Queue[Optional[TurnEvent]]"] = None
        self._driver: Optional["asyncio.Task[TurnResult]"] = None
        self._abort_reason: Optional[str] = None

    def _ensure_started(self) -> "asyncio.Task[TurnResult]":
        if self._driver is None:
            self._driver = asyncio.ensure_future(self._drive())
        return self._driver

    def __aiter__(self) -> AsyncIterator[TurnEvent]:
        if self._driver is not None and self._events is None:
            raise RuntimeError("iterate an AgentTurn before awaiting it")
        if self._events is None:
            self._events = asyncio.Queue()
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[TurnEvent]:
        driver = self._ensure_started()
        assert self._events is not None
        while True:
            get = asyncio.ensure_future(self._events.get())
            await asyncio.wait([get, driver], return_when=asyncio.FIRST_COMPLETED)
            if get.done():
                event = get.result()
                if event is None:
                    await driver  # raises the turn's error
                    return
                yield event
            else:
                get.cancel()
                while not self._events.empty():
                    event = self._events.get_nowait()
                    if event is None:
                        break
                    yield event
                driver.result()  # raises the turn's error
                return

    def __await__(self) -> Generator[Any, None, TurnResult]:
        return self._ensure_started().__await__()

    def abort(self, reason: str = "") -> None:
        """Stops the turn: the stream is aborted, running tools are
        cancelled, every call gets a result (``Aborted: REASON``)."""
        if self._abort_reason is None:
            self._abort_reason = reason
            self._inbox.put_nowait(("abort", reason))

    def _emit(self, events: List[TurnEvent]) -> None:
        if self._events is not None:
            for e in events:
                self._events.put_nowait(e)

    def _start(self, calls: List[ToolCall]) -> None:
        for call in calls:
            tool = self._core.tools[call.name]
            call._update = lambda i, t: self._inbox.put_nowait(("update", (i, t)))
            self._tasks[call.id] = asyncio.ensure_future(self._run_tool(tool.fn, call))

    def _cancel(self, ids: List[str]) -> None:
        for i in ids:
            task = self._tasks.pop(i, None)
            if task is not None:
                task.cancel()
                self._cancelled.append(task)

    async def _run_tool(self, fn: AsyncToolFn, call: ToolCall) -> None:
        try:
            output, is_error = _output_text(await fn(call)), False
        except Exception as exc:  # a tool's failure is its error result
            output, is_error = str(exc) or type(exc).__name__, True
        self._inbox.put_nowait(("done", (call.id, output, is_error)))

    async def _read(self) -> None:
        try:
            source = self._source
            if isinstance(source, AsyncEventStream):
                async for event in source:
                    if isinstance(event, StreamEvent):
                        self._inbox.put_nowait(("events", [event]))
            else:
                stream = self._core.stream
                assert stream is not None
                async for chunk in source:
                    self._inbox.put_nowait(("events", stream.feed(chunk)))
                self._inbox.put_nowait(("events", stream.finish()))
            self._inbox.put_nowait(("end", None))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._inbox.put_nowait(("error", exc))

    async def _drive(self) -> TurnResult:
        reader = asyncio.ensure_future(self._read())
        core = self._core
        stream_done = False
        error: Optional[BaseException] = None
        try:
            while not (stream_done and core.scheduler.is_settled and not self._running()):
                kind, value = await self._inbox.get()
                if kind == "events":
                    out, start, cancel = core.on_stream_events(value)
                    self._emit(out)
                    self._cancel(cancel)
                    self._start(start)
                elif kind == "done":
                    call_id, output, is_error = value
                    if self._tasks.pop(call_id, None) is None:
                        continue  # cancelled: the scheduler already gave it a result
                    out, start, cancel = core.on_tool_done(call_id, output, is_error)
                    self._emit(out)
                    self._cancel(cancel)
                    self._start(start)
                elif kind == "update":
                    try:
                        self._emit(core.on_update(*value))
                    except ValueError:
                        pass  # the call already ended
                elif kind == "end":
                    stream_done = True
                elif kind in ("abort", "error"):
                    if kind == "error":
                        error = value
                    reader.cancel()
                    out, cancel = core.abort(value if kind == "abort" else str(value))
                    self._emit(out)
                    self._cancel(cancel)
                    stream_done = True
        finally:
            reader.cancel()
            self._cancel(list(self._tasks))
            await asyncio.gather(reader, *self._cancelled, return_exceptions=True)
            if self._events is not None:
                self._events.put_nowait(None)
        if error is not None:
            raise error
        return core.result()

    def _running(self) -> bool:
        return bool(self._tasks)


def run_turn(
    source: Union[AsyncIterable[bytes], AsyncEventStream],
    tools: Mapping[str, Union[Tool[AsyncToolFn], AsyncToolFn]],
    *,
    provider: str = "auto",
    max_concurrency: int = 0,
) -> AgentTurn:
    """Runs one streamed turn and its tools on the running event loop.

    ``source``: the response body as an async iterable of bytes (e.g.
    ``response.aiter_bytes()``), folded here as ``provider``; or the
    :func:`astream_events` helper's stream (built with a provider).
    ``tools``: name -> async function (or :class:`Tool` with its flags).
    ``max_concurrency``: most tools at once (0: no limit).
    """
    return AgentTurn(source, tools, provider, max_concurrency)


# ------------------------------------------------------------------ threads


class SyncAgentTurn:
    """One turn run by :func:`run_turn_sync`: ``for event in turn`` gives
    the events as they happen; ``turn.result()`` runs the turn to its end
    (what iteration left) and gives the :class:`TurnResult`. ``abort()``
    (from any thread) stops the stream; running tools are not interrupted
    (threads cannot be) but their results are dropped."""

    def __init__(
        self,
        source: Union[Iterable[bytes], EventStream],
        tools: Mapping[str, Union[Tool[SyncToolFn], SyncToolFn]],
        provider: str,
        max_workers: int,
        max_concurrency: int,
    ) -> None:
        self._source = source
        stream = source.stream if isinstance(source, EventStream) else Stream(provider)
        self._core = _TurnCore(stream, tools, max_concurrency)
        self._inbox: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="ssefold-tool")
        self._running: Dict[str, "concurrent.futures.Future[None]"] = {}
        self._stop = threading.Event()
        self._reader: Optional[threading.Thread] = None
        self._events: Optional[Iterator[TurnEvent]] = None
        self._result: Optional[TurnResult] = None
        self._error: Optional[BaseException] = None

    def __iter__(self) -> Iterator[TurnEvent]:
        if self._events is None:
            self._events = self._run()
        return self._events

    def result(self) -> TurnResult:
        """Runs what is left of the turn; its result."""
        for _ in self:
            pass
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def abort(self, reason: str = "") -> None:
        """Stops the turn (thread-safe): every call gets a result."""
        self._stop.set()
        self._inbox.put(("abort", reason))

    def _read(self) -> None:
        try:
            source = self._source
            if isinstance(source, EventStream):
                for event in source:
                    if self._stop.is_set():
                        return
                    if isinstance(event, StreamEvent):
                        self._inbox.put(("events", [event]))
            else:
                stream = self._core.stream
                assert stream is not None
                for chunk in source:
                    if self._stop.is_set():
                        return
                    self._inbox.put(("events", stream.feed(chunk)))
                self._inbox.put(("events", stream.finish()))
            self._inbox.put(("end", None))
        except BaseException as exc:
            self._inbox.put(("error", exc))

    def _start(self, calls: List[ToolCall]) -> None:
        for call in calls:
            tool = self._core.tools[call.name]
            call._update = lambda i, t: self._inbox.put(("update", (i, t)))
            self._running[call.id] = self._pool.submit(self._run_tool, tool.fn, call)

    def _run_tool(self, fn: SyncToolFn, call: ToolCall) -> None:
        try:
            output, is_error = _output_text(fn(call)), False
        except Exception as exc:  # a tool's failure is its error result
            output, is_error = str(exc) or type(exc).__name__, True
        self._inbox.put(("done", (call.id, output, is_error)))

    def _cancel(self, ids: List[str]) -> None:
        for i in ids:
            future = self._running.pop(i, None)
            if future is not None:
                future.cancel()

    def _run(self) -> Iterator[TurnEvent]:
        core = self._core
        self._reader = threading.Thread(target=self._read, name="ssefold-turn-reader", daemon=True)
        self._reader.start()
        stream_done = False
        error: Optional[BaseException] = None
        try:
            while not (stream_done and core.scheduler.is_settled):
                kind, value = self._inbox.get()
                out: List[TurnEvent] = []
                if kind == "events":
                    out, start, cancel = core.on_stream_events(value)
                    self._cancel(cancel)
                    self._start(start)
                elif kind == "done":
                    call_id, output, is_error = value
                    if self._running.pop(call_id, None) is None:
                        continue  # cancelled: the scheduler already gave it a result
                    out, start, cancel = core.on_tool_done(call_id, output, is_error)
                    self._cancel(cancel)
                    self._start(start)
                elif kind == "update":
                    try:
                        out = core.on_update(*value)
                    except ValueError:
                        pass
                elif kind == "end":
                    stream_done = True
                elif kind in ("abort", "error"):
                    self._stop.set()
                    if kind == "error":
                        error = value
                    out, cancel = core.abort(value if kind == "abort" else str(value))
                    self._cancel(cancel)
                    stream_done = True
                yield from out
        finally:
            self._stop.set()
            self._pool.shutdown(wait=False, cancel_futures=True)
        if error is not None:
            self._error = error
            raise error
        self._result = core.result()


def run_turn_sync(
    source: Union[Iterable[bytes], EventStream],
    tools: Mapping[str, Union[Tool[SyncToolFn], SyncToolFn]],
    *,
    provider: str = "auto",
    max_workers: int = 8,
    max_concurrency: int = 0,
) -> SyncAgentTurn:
    """The thread-pool twin of :func:`run_turn`: ``source`` is an iterable
    of bytes (e.g. ``response.iter_bytes()``) or :func:`stream_events`'
    stream; tools are plain functions run on a pool of ``max_workers``
    threads."""
    return SyncAgentTurn(source, tools, provider, max_workers, max_concurrency)
