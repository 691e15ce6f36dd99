"""Run a turn's tools while the answer streams: ``run_turn`` (asyncio) and
``run_turn_sync`` (a thread pool), thin IO shells over :class:`TurnCore`.

The turn itself (which calls run, which get an error result and why, in
what order the results come back, the next request) is decided by
:class:`TurnCore`, the core's sans-IO agent turn; these shells only read
the source, run the tool functions on tasks or threads and hand back what
happened.

A turn has two views: an iterator of events (the stream's normalized
:class:`StreamEvent` objects and the :class:`ToolExecutionEvent` objects,
interleaved in the order they happened) and its result (:class:`TurnResult`:
the folded message, every call and its result, and the next request).

Each tool call starts as soon as its arguments are complete, not when the
answer ends (``start="ready"``); a tool with side effects can wait for the
answer to end normally (``start="turn_end"``, the default of an
``exclusive`` tool): if the answer stops for its length, a content filter,
a refusal, the call never runs and gets a ``skipped`` result. Calls run in
parallel unless the tool is ``exclusive``; results come back in call order.
A tool with ``needs_approval`` waits for the ``approve`` callback (a denial
is its ``denied`` result). An unknown tool, an unnamed call, invalid or cut
arguments get an error result without running; a tool that raises gets its
exception's text as an error result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import queue
import threading
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
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
    Literal,
    Mapping,
    Optional,
    Tuple,
    TypeVar,
    Union,
)

from ._http import AsyncEventStream, EventStream, _now_ms
from ._ssefold import (
    NextRequest,
    SchedulerError,
    Stream,
    StreamEvent,
    ToolExecutionEvent,
    ToolResult,
    TurnAction,
    TurnCall,
    TurnCore,
    TurnOutcome,
)

if TYPE_CHECKING:
    from ._ssefold import _TurnTelemetry, _TurnTimings

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
    * ``start``: when a ready call may start: ``"ready"`` (as soon as its
      arguments are complete), ``"turn_end"`` (once the answer ended with a
      normal or tool-use stop; after ``length``, a content filter, a
      refusal it gets a ``skipped`` result and never runs) or ``"auto"``
      (``turn_end`` for an ``exclusive`` tool, else ``ready``).
    * ``needs_approval``: a ready call waits for the shell's ``approve``
      callback (without one it is denied); a denial is its result.
    """

    fn: F
    exclusive: bool = False
    abort_siblings_on_error: bool = False
    start: Literal["auto", "ready", "turn_end"] = "auto"
    needs_approval: bool = False


@dataclass
class ToolCall:
    """One call, as the tool function sees it."""

    id: str
    name: str
    input: Any
    """The input: the parsed arguments for a JSON call (a dict for
    well-formed calls), the text itself for a free-text call."""
    arguments: str = ""
    """The input as the model wrote it (JSON text, or the free text)."""
    _update: Callable[[str, str], None] = field(repr=False, default=lambda _id, _text: None)

    def update(self, text: str) -> None:
        """Reports progress (a ``tool_execution_update`` event). Thread-safe."""
        self._update(self.id, text)


@dataclass(frozen=True)
class TurnResult:
    """What a finished (or aborted, or failed) turn gives the agent."""

    message: Optional[Dict[str, Any]]
    """The folded message, as the provider's non-streaming endpoint returns it."""
    provider: str
    """The dialect (``anthropic``, ``openai_chat``, ``openai_responses``,
    ``gemini``, ``ollama``, ``bedrock``, ``bedrock_converse``)."""
    results: List[ToolResult]
    """One result per call the host answers (every call but those the
    provider runs itself), in call order."""
    tool_results: Any
    """``results`` shaped for the next request (``None`` without results):
    ``next.tool_results``."""
    aborted: bool = False
    next: Optional[NextRequest] = None
    """What to append to the conversation to continue: ``next.append`` (the
    assistant turn, then the results), in the provider's request shape;
    ``None`` when there is no answer to continue."""
    calls: List[TurnCall] = field(default_factory=list)
    """Every tool call of the answer, in part order (with how it ended)."""
    failure: Optional[BaseException] = None
    """Why the turn failed (what ``run_turn`` raised), if it did."""
    stop_reason: Optional[str] = None
    """The answer's stop reason (``"aborted"`` after an abort)."""
    gave_up: Optional[str] = None
    """Why no reconnection followed the last connection, when one was
    wanted: ``not_resumable`` (output had started and the provider cannot
    resume: ``message`` is what was folded; the request was not sent
    again), ``retries_exhausted`` or ``not_retryable``."""
    output_started: bool = False
    """Whether content reached the host (sending the request again now would
    bill and show a second answer)."""
    timings: "Optional[_TurnTimings]" = None
    """The turn's timings (milliseconds of ``time.monotonic``): time to
    first content, the gaps between contents, duration, output tokens per
    second, the attempts (``TurnOutcome.timings``)."""
    telemetry: "Optional[_TurnTelemetry]" = None
    """What the turn reports to OpenTelemetry, named by the core after the
    GenAI semantic conventions: ``{"attributes": {...}, "metrics": [...]}``
    (``TurnOutcome.telemetry``; :func:`ssefold.otel.record_turn` records
    it)."""


AsyncToolFn = Callable[[ToolCall], Awaitable[Any]]
SyncToolFn = Callable[[ToolCall], Any]
Verdict = Union[bool, str]
"""An approval callback's answer: ``True`` approves; ``False`` or a reason
(a ``str``) denies."""
AsyncApproveFn = Callable[[ToolCall], Union[Verdict, Awaitable[Verdict]]]
SyncApproveFn = Callable[[ToolCall], Verdict]

# The denial of a call that needs approval when the shell was given no
# callback to ask.
_NO_APPROVER = "the tool needs approval and the turn was given no approve callback"


def _output_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _tools(tools: Mapping[str, Any]) -> Dict[str, "Tool[Any]"]:
    return {name: t if isinstance(t, Tool) else Tool(t) for name, t in tools.items()}


def _core(
    provider: str, tools: Mapping[str, "Tool[Any]"], max_concurrency: int, approval_timeout_ms: Optional[int]
) -> TurnCore:
    core = TurnCore(provider, max_concurrency=max_concurrency, approval_timeout_ms=approval_timeout_ms)
    for name, tool in tools.items():
        core.add_tool(
            name,
            exclusive=tool.exclusive,
            abort_siblings_on_error=tool.abort_siblings_on_error,
            start=tool.start,
            needs_approval=tool.needs_approval,
        )
    return core


def _approval_call(event: ToolExecutionEvent) -> ToolCall:
    """The :class:`ToolCall` an approval callback is asked about (its input
    parsed when it is JSON, else its text)."""
    arguments = event.arguments or ""
    try:
        value: Any = json.loads(arguments)
    except ValueError:
        value = arguments
    return ToolCall(event.call_id, event.name or "", value, arguments)


def _answer(core: TurnCore, approval_id: str, verdict: Any) -> List["TurnEvent"]:
    """Hands an approval callback's verdict to the turn (a call no longer
    waiting, its approval timed out or the turn ended, takes none)."""
    try:
        if verdict is True:
            return list(core.approve(approval_id))
        return list(core.deny(approval_id, verdict if isinstance(verdict, str) else ""))
    except SchedulerError:
        return []


def _tool_call(action: TurnAction, update: Callable[[str, str], None]) -> ToolCall:
    """The :class:`ToolCall` a ``start_tool`` action asks to run (its input
    parsed when the tool starts: see :func:`_parsed`)."""
    assert action.call_id is not None and action.name is not None and action.arguments is not None
    return ToolCall(action.call_id, action.name, _TEXT if action.input_format == "text" else None, action.arguments, update)


# The input of a free-text call is its text; a JSON call's is parsed on the
# tool's task or thread (where a failure is the tool's error result).
_TEXT = object()


def _parsed(call: ToolCall) -> ToolCall:
    call.input = call.arguments if call.input is _TEXT else json.loads(call.arguments)
    return call


def _failed(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _Deadlines:
    """When the shells tick the turn: at its next deadline (an approval
    timeout, a stalled body), also while inputs keep coming (keep-alives do
    not hold off a stall), once per deadline."""

    def __init__(self) -> None:
        self._ticked: Optional[int] = None

    def next(self, core: TurnCore) -> Optional[int]:
        """Milliseconds until the next tick (0 or less: tick now), or
        ``None`` without a deadline."""
        deadline = core.deadline_ms
        if deadline is None:
            return None
        left = deadline - _now_ms()
        if left <= 0:
            if self._ticked == deadline:
                return 1  # ticked for it already: the turn moved on
            self._ticked = deadline
        return left


def _cancel(core: TurnCore, call_id: str) -> List["TurnEvent"]:
    """Cancels a call still running after a bad stop (its result is
    ``Cancelled by the host``; one that ended meanwhile keeps its own)."""
    try:
        return list(core.cancel_tool(call_id))
    except SchedulerError:
        return []


def _result(outcome: TurnOutcome, error: Optional[BaseException]) -> TurnResult:
    """The turn's result; ``error`` (what the shell raises) is its failure
    (the HTTP helpers' error says why they gave up)."""
    failure = error if error is not None else outcome.failure
    gave_up = outcome.gave_up or getattr(failure, "gave_up", None)
    next_request = outcome.next
    return TurnResult(
        message=outcome.message,
        provider=outcome.provider,
        results=list(outcome.results),
        tool_results=next_request.tool_results if next_request is not None else None,
        aborted=outcome.aborted,
        next=next_request,
        calls=list(outcome.calls),
        failure=failure,
        stop_reason=outcome.stop_reason,
        gave_up=gave_up,
        output_started=outcome.output_started,
        timings=outcome.timings,
        telemetry=outcome.telemetry,
    )


def _raise_with(error: BaseException, result: TurnResult) -> None:
    """Raises the turn's failure, its :class:`TurnResult` as ``.result``
    (every call has its result there: the next request can still be
    written)."""
    try:
        setattr(error, "result", result)
    except AttributeError:  # an exception type with slots: no result then
        pass
    raise error


def _step(
    core: TurnCore, external: Optional["Stream[Any]"], running: Dict[str, Any], kind: str, value: Any
) -> List[TurnEvent]:
    """What both shells do with one thing that happened but an abort: hand
    it to the turn (``running``: the calls the shell runs, by id); what to
    show. The time is the shells' (``time.monotonic``)."""
    now = _now_ms()
    if kind == "chunk":
        return list(core.feed(value, now))
    if kind == "event":
        return [value, *core.apply_event(value, now)]
    if kind == "end":
        if external is not None:
            return [*core.tick(now), *core.end_of_events()]
        return list(core.end_of_body(now))
    if kind == "error":
        if external is not None:
            return [*core.tick(now), *core.end_of_events(value)]
        return list(core.connection_failed(_failed(value), now))
    if kind == "tick":
        return list(core.tick(now))
    if kind == "approval":
        approval_id, verdict = value
        return _answer(core, approval_id, verdict)
    if kind == "done":
        call_id, output, is_error = value
        if running.pop(call_id, None) is None:
            return []  # cancelled: the turn already gave it a result
        return list(core.tool_result(call_id, output, is_error))
    if kind == "update":
        call_id, text = value
        if call_id not in running:
            return []  # the call already ended
        try:
            return list(core.tool_update(call_id, text))
        except SchedulerError:
            return []  # the turn already gave the call its result
    raise ValueError(f"unknown turn input {kind!r}")


# --------------------------------------------------------------------- asyncio


class AgentTurn:
    """One turn run by :func:`run_turn`: ``async for event in turn`` gives
    the events as they happen; ``await turn`` gives the :class:`TurnResult`
    (iterate first if you want the events: awaiting alone runs the turn
    without keeping them). ``abort()`` stops the stream and cancels the
    running tools; every call still gets a result. A failed turn raises its
    error (the stream's, or the source's) once every call has its result;
    the error's ``.result`` is the :class:`TurnResult`."""

    def __init__(
        self,
        source: Union[AsyncIterable[bytes], AsyncEventStream[StreamEvent]],
        tools: Mapping[str, Union[Tool[AsyncToolFn], AsyncToolFn]],
        provider: str,
        max_concurrency: int,
        approve: Optional[AsyncApproveFn] = None,
        approval_timeout_ms: Optional[int] = None,
        cancel_running_on_bad_stop: bool = False,
    ) -> None:
        self._source = source
        self._external: Optional[Stream[Any]] = source.stream if isinstance(source, AsyncEventStream) else None
        self._tools = _tools(tools)
        self._core = _core(provider, self._tools, max_concurrency, approval_timeout_ms)
        self._approve = approve
        self._cancel_running_on_bad_stop = cancel_running_on_bad_stop
        self._deadlines = _Deadlines()
        self._asking: List["asyncio.Task[None]"] = []
        self._source_done = False
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

    def _emit(self, events: Iterable[TurnEvent]) -> None:
        if self._events is not None:
            for e in events:
                self._events.put_nowait(e)

    def _react(self, events: List[TurnEvent]) -> List[TurnEvent]:
        """``events`` and what the shell's answers to them add: an approval
        asked for (the callback runs on its own task), a call still running
        when the answer stopped badly (cancelled with
        ``cancel_running_on_bad_stop``, else left to finish)."""
        out = list(events)
        i = 0
        while i < len(out):
            e = out[i]
            i += 1
            if not isinstance(e, ToolExecutionEvent):
                continue
            if e.type == "tool_approval_requested" and e.approval_id is not None:
                if self._approve is None:
                    out += _answer(self._core, e.approval_id, _NO_APPROVER)
                else:
                    self._asking.append(asyncio.ensure_future(self._ask(self._approve, e.approval_id, _approval_call(e))))
            elif e.type == "tool_running_after_stop" and self._cancel_running_on_bad_stop:
                out += _cancel(self._core, e.call_id)
                self._cancel_task(e.call_id)
        return out

    async def _ask(self, approve: AsyncApproveFn, approval_id: str, call: ToolCall) -> None:
        try:
            verdict = approve(call)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:  # a failed callback denies, saying why
            verdict = f"the approval callback failed: {_failed(exc)}"
        self._inbox.put_nowait(("approval", (approval_id, verdict)))

    def _cancel_task(self, call_id: str) -> None:
        task = self._tasks.pop(call_id, None)
        if task is not None:
            task.cancel()
            self._cancelled.append(task)

    def _act(self, reader: "asyncio.Future[None]") -> None:
        """Carries out what the turn asks: start and cancel tools, stop
        reading a connection that stalled."""
        for action in self._core.poll_actions():
            if action.kind == "start_tool":
                call = _tool_call(action, lambda i, t: self._inbox.put_nowait(("update", (i, t))))
                fn = self._tools[call.name].fn
                self._tasks[call.id] = asyncio.ensure_future(self._run_tool(fn, call))
            elif action.kind == "cancel_tool" and action.call_id is not None:
                self._cancel_task(action.call_id)
            elif action.kind == "close_connection":
                self._source_done = True
                reader.cancel()

    async def _next_input(self) -> Tuple[str, Any]:
        """The next thing that happened, or a ``tick`` at the turn's next
        deadline (an approval timeout, a stalled body)."""
        deadline = self._deadlines.next(self._core)
        if deadline is None:
            return await self._inbox.get()
        if deadline <= 0:
            return ("tick", None)
        if not self._inbox.empty():
            return self._inbox.get_nowait()
        try:
            return await asyncio.wait_for(self._inbox.get(), deadline / 1000)
        except asyncio.TimeoutError:
            return ("tick", None)

    async def _run_tool(self, fn: AsyncToolFn, call: ToolCall) -> None:
        try:
            output, is_error = _output_text(await fn(_parsed(call))), False
        except Exception as exc:  # a tool's failure is its error result
            output, is_error = str(exc) or type(exc).__name__, True
        self._inbox.put_nowait(("done", (call.id, output, is_error)))

    async def _read(self) -> None:
        try:
            source = self._source
            if isinstance(source, AsyncEventStream):
                async for event in source:
                    if isinstance(event, StreamEvent):
                        self._inbox.put_nowait(("event", event))
            else:
                async for chunk in source:
                    self._inbox.put_nowait(("chunk", chunk))
            self._inbox.put_nowait(("end", None))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._inbox.put_nowait(("error", exc))

    def _step(self, kind: str, value: Any) -> List[TurnEvent]:
        """Hands one thing that happened to the turn; what to show."""
        if kind != "abort":
            return _step(self._core, self._external, self._tasks, kind, value)
        out: List[TurnEvent] = []
        stream = self._external
        if stream is not None and not stream.is_terminated and not stream.is_aborted:
            out += stream.abort()  # the helper's stream is ours to end (one event loop: not running now)
        return out + list(self._core.abort(value))

    async def _drive(self) -> TurnResult:
        core = self._core
        # The helper sends the request when it is first read; a body handed
        # over was connected already (its stall timeouts count from now).
        if self._external is not None:
            core.request_sent(_now_ms())
        else:
            core.connected(_now_ms())
        reader = asyncio.ensure_future(self._read())
        error: Optional[BaseException] = None
        # The source is read to its end (the connection stays reusable;
        # bytes after the answer's end change nothing) unless it fails, it
        # stalls or the turn is aborted.
        try:
            while not (core.is_finished and self._source_done):
                kind, value = await self._next_input()
                if kind == "error":
                    error = value
                if kind in ("end", "error", "abort"):
                    self._source_done = True
                    reader.cancel()
                self._emit(self._react(self._step(kind, value)))
                self._act(reader)
        finally:
            reader.cancel()
            for task in [*self._tasks.values(), *self._asking]:
                task.cancel()
            await asyncio.gather(
                reader, *self._tasks.values(), *self._cancelled, *self._asking, return_exceptions=True
            )
            if self._events is not None:
                self._events.put_nowait(None)
        outcome = core.outcome(self._external)
        result = _result(outcome, error)
        if result.failure is not None:
            _raise_with(result.failure, result)
        return result


def run_turn(
    source: Union[AsyncIterable[bytes], AsyncEventStream[StreamEvent]],
    tools: Mapping[str, Union[Tool[AsyncToolFn], AsyncToolFn]],
    *,
    provider: str = "auto",
    max_concurrency: int = 0,
    approve: Optional[AsyncApproveFn] = None,
    approval_timeout_ms: Optional[int] = None,
    cancel_running_on_bad_stop: bool = False,
) -> AgentTurn:
    """Runs one streamed turn and its tools on the running event loop.

    ``source``: the response body as an async iterable of bytes (e.g.
    ``response.aiter_bytes()``), folded by the turn as ``provider``; or the
    :func:`astream_events` helper's stream (built with a provider; it
    reconnects by itself, and the turn follows its events). A body that
    stalls (keep-alives only for the default policy's
    ``first_content_timeout_ms`` / ``content_timeout_ms``) ends the turn
    with an ``IncompleteStreamError`` (``.stall``, ``.after_ms``).
    ``tools``: name -> async function (or :class:`Tool` with its flags).
    ``max_concurrency``: most tools at once (0: no limit).
    ``approve``: asked (on a task of its own) about each call of a tool with
    ``needs_approval``: ``(ToolCall) -> bool | str`` (or a coroutine of
    it): ``True`` runs it, ``False`` or a reason denies it (its result is
    ``Denied by the user[: reason]``). Without it such a call is denied.
    ``approval_timeout_ms``: an approval not answered in time is denied.
    ``cancel_running_on_bad_stop``: a call still running when the answer
    stopped with a reason that lets no tool start (``length``, a content
    filter, ...; a ``tool_running_after_stop`` event) is cancelled (result
    ``Cancelled by the host``); by default it runs to its result.
    """
    return AgentTurn(
        source, tools, provider, max_concurrency, approve, approval_timeout_ms, cancel_running_on_bad_stop
    )


# ------------------------------------------------------------------ threads


class SyncAgentTurn:
    """One turn run by :func:`run_turn_sync`: ``for event in turn`` gives
    the events as they happen; ``turn.result()`` runs the turn to its end
    (what iteration left) and gives the :class:`TurnResult`. ``abort()``
    (from any thread) stops the stream; running tools are not interrupted
    (threads cannot be) but their results are dropped. A failed turn raises
    as :class:`AgentTurn` does."""

    def __init__(
        self,
        source: Union[Iterable[bytes], EventStream[StreamEvent]],
        tools: Mapping[str, Union[Tool[SyncToolFn], SyncToolFn]],
        provider: str,
        max_workers: int,
        max_concurrency: int,
        approve: Optional[SyncApproveFn] = None,
        approval_timeout_ms: Optional[int] = None,
        cancel_running_on_bad_stop: bool = False,
    ) -> None:
        self._source = source
        self._external: Optional[Stream[Any]] = source.stream if isinstance(source, EventStream) else None
        self._tools = _tools(tools)
        self._core = _core(provider, self._tools, max_concurrency, approval_timeout_ms)
        self._approve = approve
        self._cancel_running_on_bad_stop = cancel_running_on_bad_stop
        self._deadlines = _Deadlines()
        self._source_done = False
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
                        self._inbox.put(("event", event))
            else:
                for chunk in source:
                    if self._stop.is_set():
                        return
                    self._inbox.put(("chunk", chunk))
            self._inbox.put(("end", None))
        except BaseException as exc:
            self._inbox.put(("error", exc))

    def _act(self) -> None:
        """Carries out what the turn asks: start tools (cancelled ones
        cannot be stopped: their late results are dropped), stop reading a
        body that stalled."""
        for action in self._core.poll_actions():
            if action.kind == "start_tool":
                call = _tool_call(action, lambda i, t: self._inbox.put(("update", (i, t))))
                fn = self._tools[call.name].fn
                self._running[call.id] = self._pool.submit(self._run_tool, fn, call)
            elif action.kind == "cancel_tool" and action.call_id is not None:
                self._cancel_future(action.call_id)
            elif action.kind == "close_connection":
                self._source_done = True
                self._stop.set()

    def _cancel_future(self, call_id: str) -> None:
        future = self._running.pop(call_id, None)
        if future is not None:
            future.cancel()

    def _react(self, events: List[TurnEvent]) -> List[TurnEvent]:
        """``events`` and what the shell's answers add (see
        :meth:`AgentTurn._react`; the approval callback runs on a thread of
        its own)."""
        out = list(events)
        i = 0
        while i < len(out):
            e = out[i]
            i += 1
            if not isinstance(e, ToolExecutionEvent):
                continue
            if e.type == "tool_approval_requested" and e.approval_id is not None:
                if self._approve is None:
                    out += _answer(self._core, e.approval_id, _NO_APPROVER)
                else:
                    args = (self._approve, e.approval_id, _approval_call(e))
                    threading.Thread(target=self._ask, args=args, name="ssefold-approval", daemon=True).start()
            elif e.type == "tool_running_after_stop" and self._cancel_running_on_bad_stop:
                out += _cancel(self._core, e.call_id)
                self._cancel_future(e.call_id)
        return out

    def _ask(self, approve: SyncApproveFn, approval_id: str, call: ToolCall) -> None:
        try:
            verdict: Any = approve(call)
        except Exception as exc:  # a failed callback denies, saying why
            verdict = f"the approval callback failed: {_failed(exc)}"
        self._inbox.put(("approval", (approval_id, verdict)))

    def _next_input(self) -> Tuple[str, Any]:
        """The next thing that happened, or a ``tick`` at the turn's next
        deadline."""
        deadline = self._deadlines.next(self._core)
        if deadline is not None and deadline <= 0:
            return ("tick", None)
        try:
            return self._inbox.get(timeout=None if deadline is None else deadline / 1000)
        except queue.Empty:
            return ("tick", None)

    def _run_tool(self, fn: SyncToolFn, call: ToolCall) -> None:
        try:
            output, is_error = _output_text(fn(_parsed(call))), False
        except Exception as exc:  # a tool's failure is its error result
            output, is_error = str(exc) or type(exc).__name__, True
        self._inbox.put(("done", (call.id, output, is_error)))

    def _step(self, kind: str, value: Any) -> List[TurnEvent]:
        """Hands one thing that happened to the turn; what to show."""
        if kind != "abort":
            return _step(self._core, self._external, self._running, kind, value)
        # The helper's stream (if any) is its reader's; the reader stops at
        # its next event.
        return list(self._core.abort(value))

    def _run(self) -> Iterator[TurnEvent]:
        core = self._core
        if self._external is not None:
            core.request_sent(_now_ms())
        else:
            core.connected(_now_ms())
        self._reader = threading.Thread(target=self._read, name="ssefold-turn-reader", daemon=True)
        self._reader.start()
        error: Optional[BaseException] = None
        # Read to its end unless it fails, it stalls or the turn is aborted.
        try:
            while not (core.is_finished and self._source_done):
                kind, value = self._next_input()
                if kind == "error":
                    error = value
                if kind in ("end", "error", "abort"):
                    self._source_done = True
                out = self._react(self._step(kind, value))
                self._act()
                yield from out
        finally:
            self._stop.set()
            self._pool.shutdown(wait=False, cancel_futures=True)
        result = _result(core.outcome(self._external), error)
        if result.failure is not None:
            self._error = result.failure
            _raise_with(result.failure, result)
        self._result = result


def run_turn_sync(
    source: Union[Iterable[bytes], EventStream[StreamEvent]],
    tools: Mapping[str, Union[Tool[SyncToolFn], SyncToolFn]],
    *,
    provider: str = "auto",
    max_workers: int = 8,
    max_concurrency: int = 0,
    approve: Optional[SyncApproveFn] = None,
    approval_timeout_ms: Optional[int] = None,
    cancel_running_on_bad_stop: bool = False,
) -> SyncAgentTurn:
    """The thread-pool twin of :func:`run_turn`: ``source`` is an iterable
    of bytes (e.g. ``response.iter_bytes()``) or :func:`stream_events`'
    stream; tools are plain functions run on a pool of ``max_workers``
    threads; ``approve`` is a plain function ``(ToolCall) -> bool | str``,
    run on a thread of its own. A call cancelled after a bad stop
    (``cancel_running_on_bad_stop``) cannot be interrupted: its result is
    ``Cancelled by the host`` and its late result is dropped."""
    return SyncAgentTurn(
        source, tools, provider, max_workers, max_concurrency, approve, approval_timeout_ms, cancel_running_on_bad_stop
    )
