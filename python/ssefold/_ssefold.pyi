"""Type stubs of the ssefold extension module (checked by mypy.stubtest)."""

from typing import Any, Generic, Iterable, Literal, Mapping, Optional, TypedDict, Union, final, overload

from typing_extensions import TypeVar, Unpack, disjoint_base

__version__: str
__all__ = [
    "__version__",
    "Error",
    "DecodeError",
    "LineTooLongError",
    "EventTooLargeError",
    "IdTooLongError",
    "InvalidUtf8Error",
    "EncodeError",
    "ProviderError",
    "RetryableProviderError",
    "IncompleteStreamError",
    "PartialJSONError",
    "InvalidEventError",
    "LimitExceededError",
    "UnknownDialectError",
    "DialectMismatchError",
    "StreamClosedError",
    "ServerSentEvent",
    "SSEDecoder",
    "SSEEncoder",
    "ReconnectPolicy",
    "StreamEnd",
    "ResumeCursor",
    "Decision",
    "Reconnector",
    "is_retryable_error_type",
    "_provider_error",
    "_incomplete_error",
    "PathEvent",
    "PartialJSON",
    "parse_partial_json",
    "resume_point",
    "CATALOG_EVENT_NAMES",
    "StreamConfig",
    "StreamEvent",
    "ToolCallStart",
    "ToolCallEnd",
    "Stream",
    "UiState",
    "AnthropicStream",
    "OpenAIChatStream",
    "OpenAIResponsesStream",
    "SchedulerError",
    "ToolScheduler",
    "ToolResult",
    "ToolExecutionEvent",
    "Finished",
    "Relay",
    "RelayError",
    "TurnCore",
    "TurnAction",
    "TurnCall",
    "NextRequest",
    "TurnOutcome",
    "GeminiStream",
    "OllamaStream",
    "BedrockStream",
    "BedrockConverseStream",
    "EventStreamError",
]

_Bytes = Union[bytes, bytearray, memoryview]

class Error(Exception):
    """Base class of every error raised by ssefold."""

class DecodeError(Error, ValueError):
    offset: int
    events: list[ServerSentEvent]
    errors: list[DecodeError]

class LineTooLongError(DecodeError):
    limit: int

class EventTooLargeError(DecodeError):
    limit: int

class IdTooLongError(DecodeError):
    limit: int

class InvalidUtf8Error(DecodeError):
    field: str

class EventStreamError(DecodeError):
    reason: str

class EncodeError(Error, ValueError):
    field: str

class ProviderError(Error):
    """The provider reported an error (not a ``ValueError``)."""

    type: str
    message: str
    request_id: Optional[str]
    output_emitted: bool
    retryable: bool
    status_code: Optional[int]
    body: Optional[str]
    retry_after_ms: Optional[int]
    """The HTTP response's ``retry-after-ms`` or ``Retry-After`` (seconds or
    an HTTP date), in milliseconds; ``None`` without one."""
    gave_up: Optional[Literal["retries_exhausted", "not_resumable", "not_retryable"]]
    """A refused response the HTTP helpers did not retry (again): why."""
    events: list[StreamEvent]

class RetryableProviderError(ProviderError):
    """An HTTP status the core retries (408, 409, 429, 500, 502, 503, 504,
    529) or an error
    event of a transient type: sending the request again may work."""

class IncompleteStreamError(Error):
    """The stream ended before its terminal event (not a ``ValueError``)."""

    expected: str
    last: Optional[StreamEnd]
    """How the last connection ended (from a connection: the HTTP helpers, a
    turn's failed or stalled connection)."""
    stall: Optional[Literal["idle", "first_content", "content"]]
    """Which timeout found the connection stalled (``last`` an idle timeout)."""
    after_ms: Optional[int]
    """That timeout's length, in ms."""
    gave_up: Optional[Literal["retries_exhausted", "not_resumable", "not_retryable"]]
    """Why no reconnection followed: ``not_resumable`` when output had
    started and the provider gave no cursor to resume from."""
    events: list[StreamEvent]

@final
class ServerSentEvent:
    """One dispatched Server-Sent Event (immutable, hashable)."""

    def __new__(
        cls, event: str = "message", data: str = "", id: Optional[str] = None, retry: Optional[int] = None
    ) -> ServerSentEvent: ...
    @property
    def event(self) -> str: ...
    @property
    def data(self) -> str: ...
    @property
    def id(self) -> Optional[str]: ...
    @property
    def retry(self) -> Optional[int]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class SSEDecoder:
    """The incremental SSE decoder (WHATWG rules, any chunking)."""

    def __new__(
        cls,
        *,
        max_line_len: int = 16777216,
        max_event_size: int = 16777216,
        max_id_len: int = 4096,
        utf8: Literal["replace", "strict"] = "replace",
    ) -> SSEDecoder: ...
    def feed(self, data: _Bytes) -> list[ServerSentEvent]: ...
    def finish(self) -> list[ServerSentEvent]: ...
    def reset(self) -> None: ...
    @property
    def discarded_bytes(self) -> int: ...
    @property
    def unterminated(self) -> Optional[ServerSentEvent]: ...
    @property
    def last_event_id(self) -> Optional[str]: ...
    @property
    def reconnection_time(self) -> Optional[int]: ...
    @property
    def max_line_len(self) -> int: ...
    @property
    def max_event_size(self) -> int: ...
    @property
    def max_id_len(self) -> int: ...
    @property
    def utf8(self) -> Literal["replace", "strict"]: ...

@final
class SSEEncoder:
    """Writes SSE events into a buffer."""

    def __new__(cls) -> SSEEncoder: ...
    def event(
        self, data: str, *, event: Optional[str] = None, id: Optional[str] = None, retry: Optional[int] = None
    ) -> None: ...
    def write_event(self, event: ServerSentEvent) -> None: ...
    def retry(self, ms: int) -> None: ...
    def comment(self, text: str) -> None: ...
    def keep_alive(self) -> None: ...
    def take_bytes(self) -> bytes: ...
    def getvalue(self) -> bytes: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...

@final
class ReconnectPolicy:
    """Backoff, server retry and retry budget (immutable)."""

    def __new__(
        cls,
        *,
        initial_delay_ms: int = 1000,
        growth: float = 1.5,
        max_delay_ms: int = 30000,
        max_retries: int = 2,
        jitter: float = 0.2,
        idle_timeout_ms: Optional[int] = None,
        max_server_retry_ms: int = 600000,
        max_retry_after_ms: int = 60000,
        restart_after_output: bool = False,
        first_content_timeout_ms: Optional[int] = 300000,
        content_timeout_ms: Optional[int] = 120000,
    ) -> ReconnectPolicy: ...
    def next_delay_ms(self, attempt: int, server_retry_ms: Optional[int] = None) -> int: ...
    def jittered_delay_ms(self, attempt: int, server_retry_ms: Optional[int], random_unit: float) -> int: ...
    @property
    def initial_delay_ms(self) -> int: ...
    @property
    def growth(self) -> float: ...
    @property
    def max_delay_ms(self) -> int: ...
    @property
    def max_retries(self) -> int: ...
    @property
    def jitter(self) -> float: ...
    @property
    def idle_timeout_ms(self) -> Optional[int]: ...
    @property
    def max_server_retry_ms(self) -> int: ...
    @property
    def max_retry_after_ms(self) -> int: ...
    @property
    def restart_after_output(self) -> bool: ...
    @property
    def first_content_timeout_ms(self) -> Optional[int]: ...
    @property
    def content_timeout_ms(self) -> Optional[int]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

_StreamEndKind = Literal[
    "completed", "ended_early", "transport_error", "idle_timeout", "provider_error", "aborted", "http_status"
]
_StallKind = Literal["idle", "first_content", "content"]
_Headers = Union[Mapping[str, str], Iterable[tuple[Union[str, bytes], Union[str, bytes]]]]

@final
class StreamEnd:
    """How one connection ended."""

    @staticmethod
    def completed() -> StreamEnd: ...
    @staticmethod
    def ended_early() -> StreamEnd: ...
    @staticmethod
    def transport_error(message: str) -> StreamEnd: ...
    @staticmethod
    def idle_timeout() -> StreamEnd: ...
    @staticmethod
    def provider_error(error_type: str, message: str) -> StreamEnd: ...
    @staticmethod
    def aborted() -> StreamEnd: ...
    @staticmethod
    def http_status(
        status: int,
        headers: Optional[_Headers] = None,
        *,
        retry_after_ms: Optional[int] = None,
        should_retry: Optional[bool] = None,
    ) -> StreamEnd:
        """A response refused with ``status`` (not 2xx); its ``headers`` give
        the retry hints the core parses (``retry-after-ms``, ``Retry-After``,
        ``x-should-retry``)."""
    @property
    def kind(self) -> _StreamEndKind: ...
    @property
    def message(self) -> Optional[str]: ...
    @property
    def error_type(self) -> Optional[str]: ...
    @property
    def status(self) -> Optional[int]: ...
    @property
    def retry_after_ms(self) -> Optional[int]: ...
    @property
    def should_retry(self) -> Optional[bool]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class ResumeCursor:
    """What to send on the next connection so the server can resume."""

    @property
    def kind(self) -> Literal["none", "last_event_id", "starting_after"]: ...
    @property
    def last_event_id(self) -> Optional[str]: ...
    @property
    def starting_after(self) -> Optional[int]: ...
    def headers(self) -> dict[str, str]: ...
    def __bool__(self) -> bool: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

_Replay = Literal["retry", "resume", "restart"]
_GiveUpReason = Literal["retries_exhausted", "not_resumable", "not_retryable"]

@final
class Decision:
    """What to do after a connection ended."""

    @property
    def kind(self) -> Literal["done", "reconnect", "give_up", "fail", "stop"]: ...
    @property
    def delay_ms(self) -> Optional[int]: ...
    @property
    def attempt(self) -> Optional[int]: ...
    @property
    def cursor(self) -> Optional[ResumeCursor]: ...
    @property
    def replay(self) -> Optional[_Replay]:
        """``reconnect``: ``retry`` (no output yet), ``resume`` (with the
        cursor) or ``restart`` (``restart_after_output``)."""
    @property
    def last(self) -> Optional[StreamEnd]: ...
    @property
    def reason(self) -> Optional[_GiveUpReason]:
        """``give_up``: why no reconnection follows."""
    @property
    def error_type(self) -> Optional[str]: ...
    @property
    def message(self) -> Optional[str]: ...
    @property
    def retryable(self) -> Optional[bool]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Reconnector:
    """The reconnection state machine of one logical stream."""

    def __new__(cls, policy: Optional[ReconnectPolicy] = None) -> Reconnector: ...
    @property
    def policy(self) -> ReconnectPolicy: ...
    @property
    def state(self) -> Literal["disconnected", "connecting", "connected", "reconnecting"]: ...
    @property
    def attempts(self) -> int: ...
    def on_connected(self, now_ms: int) -> None: ...
    def on_activity(self, now_ms: int) -> None: ...
    def on_event(
        self, id: Optional[str] = None, sequence_number: Optional[int] = None, retry_ms: Optional[int] = None
    ) -> None: ...
    def on_content(self, now_ms: int) -> None: ...
    @property
    def output_started(self) -> bool: ...
    @property
    def replay_safe(self) -> bool: ...
    def seed_jitter(self, seed: int) -> None: ...
    @property
    def idle_deadline_ms(self) -> Optional[int]: ...
    def is_idle(self, now_ms: int) -> bool: ...
    def stall(self, now_ms: int) -> Optional[_StallKind]: ...
    def stall_timeout_ms(self, stall: _StallKind) -> Optional[int]: ...
    @property
    def cursor(self) -> ResumeCursor: ...
    def on_end(self, end: StreamEnd) -> Decision: ...

def is_retryable_error_type(error_type: str) -> bool: ...
def _provider_error(
    error_type: str,
    message: str,
    status_code: Optional[int] = None,
    body: Optional[str] = None,
    retry_after_ms: Optional[int] = None,
) -> ProviderError: ...
def _incomplete_error(message: str, expected: str) -> IncompleteStreamError: ...

# --- partial JSON --------------------------------------------------------------

class PartialJSONError(Error, ValueError):
    kind: Literal["incomplete", "invalid", "depth_limit", "size_limit"]
    reason: Optional[str]
    offset: int
    events: list[PathEvent]

_Json = Any
_PathSegment = Union[str, int]

@final
class PathEvent:
    """One path-level event of an incremental JSON parse."""

    @property
    def type(self) -> Literal["container_start", "string_append", "value_complete"]: ...
    @property
    def path(self) -> tuple[_PathSegment, ...]: ...
    @property
    def depth(self) -> int: ...
    @property
    def last(self) -> Optional[_PathSegment]: ...
    @property
    def kind(self) -> Optional[Literal["object", "array"]]:
        """A container_start's kind, or a closing container's (value_complete)."""
    @property
    def text(self) -> Optional[str]: ...
    @property
    def value(self) -> _Json: ...
    def to_dict(self) -> dict[str, Any]:
        """The wire form, O(1) however deep: ``{"type", "depth", "key" | "index"
        (the last path segment, absent at the root), then "kind" | "text" |
        "value"}``; a closing container gives its ``kind``, not its value."""
    def __eq__(self, other: object, /) -> bool: ...

def parse_partial_json(text: Union[str, bytes], *, partial_strings: bool = True) -> _Json: ...

@final
class PartialJSON:
    """The incremental partial-JSON parser."""

    def __new__(cls, *, max_depth: int = 512, max_bytes: int = 67108864) -> PartialJSON: ...
    def push(self, fragment: Union[str, _Bytes]) -> list[PathEvent]: ...
    @property
    def value(self) -> _Json: ...
    def value_with(self, partial_strings: bool) -> _Json: ...
    def finish(self) -> _Json: ...
    def reset(self) -> None: ...
    @property
    def bytes_pushed(self) -> int: ...
    @property
    def is_complete(self) -> bool: ...

# --- provider streams ------------------------------------------------------------

class InvalidEventError(Error, ValueError):
    event_type: str
    reason: str
    events: list[StreamEvent]

class LimitExceededError(Error, ValueError):
    limit: str
    max: int
    events: list[StreamEvent]

class UnknownDialectError(Error, ValueError):
    events: list[StreamEvent]

class DialectMismatchError(Error, ValueError):
    expected: str
    detected: str
    events: list[StreamEvent]

class StreamClosedError(Error, ValueError): ...

_StreamEventType = Literal[
    "message_start",
    "part_start",
    "text_delta",
    "media_delta",
    "tool_args_delta",
    "tool_args_path",
    "part_metadata",
    "part_end",
    "usage",
    "stop_reason",
    "turn_end",
    "turn_reset",
    "error",
    "warning",
    "unknown",
]

_PartKind = Literal["text", "reasoning", "tool_call", "refusal", "media", "other"]
_InputFormat = Literal["json", "text"]

@final
class ToolCallStart:
    """What a ``tool_call`` part's ``part_start`` says of its call."""

    @property
    def id(self) -> Optional[str]:
        """The provider's id, when it came with the start."""
    @property
    def name(self) -> Optional[str]:
        """The tool's name, when it came with the start."""
    @property
    def input_format(self) -> _InputFormat: ...
    @property
    def provider_executed(self) -> bool:
        """The provider runs the call itself: a host never runs it."""
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class ToolCallEnd:
    """A tool call as its ``part_end`` gives it, provider-neutral."""

    @property
    def id(self) -> str:
        """The provider's id, or ``ssefold_call_<part>`` (``id_synthesized``)."""
    @property
    def id_synthesized(self) -> bool: ...
    @property
    def name(self) -> str:
        """The tool's name (``""`` when the provider sent none)."""
    @property
    def arguments(self) -> str:
        """JSON text (``input_format`` ``json``) or free text (``text``); the
        raw text received when the part did not end complete."""
    @property
    def input_format(self) -> _InputFormat: ...
    @property
    def provider_executed(self) -> bool:
        """The provider runs the call itself: a host never runs it."""
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class StreamEvent:
    """One normalized event: ``.type`` plus the fields of its type (see the
    table in the README); reading a field its type lacks raises
    ``AttributeError``."""

    @property
    def type(self) -> _StreamEventType: ...
    @property
    def is_content(self) -> bool:
        """Whether the event is content (the core's ``is_content``): not a
        ``message_start``, keep-alive (``unknown``), ``error`` or ``warning``."""
    @property
    def provider(self) -> _Provider:
        """``message_start``: the dialect."""
    @property
    def message(self) -> Any:
        """``message_start``: the folded message skeleton (a dict); ``error``,
        ``warning``: the message text (a str)."""
    @property
    def part(self) -> int:
        """``part_*``, ``text_delta``, ``media_delta``, ``tool_args_*``: the part id."""
    @property
    def kind(self) -> _PartKind:
        """``part_start``, ``part_end``: the part's kind."""
    @property
    def choice(self) -> int:
        """``part_start``, ``stop_reason``: the choice index."""
    @property
    def index(self) -> int:
        """``part_start``: the provider's index of the part."""
    @property
    def provider_type(self) -> str:
        """``part_start``, ``unknown``: the provider's type name."""
    @property
    def text(self) -> str:
        """``text_delta``: the text appended (a ``media`` part's: its transcript)."""
    @property
    def json(self) -> str:
        """``tool_args_delta``: a raw fragment of the arguments."""
    @property
    def path_event(self) -> PathEvent:
        """``tool_args_path``: the partial-JSON path event."""
    @property
    def key(self) -> str:
        """``part_metadata``: the metadata key."""
    @property
    def value(self) -> _Json:
        """``part_metadata``: the metadata value."""
    @property
    def outcome(self) -> Literal["complete", "invalid_arguments", "incomplete"]:
        """``part_end``: how the part ended."""
    @property
    def content(self) -> dict[str, Any]:
        """``part_end``: the part as it appears in the folded message."""
    @property
    def error(self) -> str:
        """``part_end`` with ``invalid_arguments``: why."""
    @property
    def raw(self) -> str:
        """``part_end`` with ``invalid_arguments``: the raw arguments."""
    @property
    def usage(self) -> dict[str, Any]:
        """``usage``: the usage object folded so far."""
    @property
    def reason(self) -> str:
        """``stop_reason``: the provider's stop / finish reason."""
    @property
    def stop_reason(self) -> str:
        """``turn_end``: the stop reason (``"aborted"`` after an abort)."""
    @property
    def error_type(self) -> str:
        """``error``: the provider's error type."""
    @property
    def request_id(self) -> Optional[str]:
        """``error``: the request id, when given."""
    @property
    def output_emitted(self) -> bool:
        """``error``: whether a part had started."""
    @property
    def code(self) -> str:
        """``warning``: the warning code."""
    @property
    def scope(self) -> Literal["event", "delta"]:
        """``unknown``: an unknown event or delta."""
    @property
    def data(self) -> Union[str, bytes]:
        """``unknown``: its data (a str); ``media_delta``: the decoded bytes
        appended to the media part (a bytes object)."""
    @property
    def mime_type(self) -> str:
        """``media_delta``: the media's MIME type (``audio/pcm``, ``image/png``, …)."""
    @property
    def tool_call(self) -> Union[ToolCallStart, ToolCallEnd, None]:
        """``part_start`` (a :class:`ToolCallStart`) and ``part_end`` (a
        :class:`ToolCallEnd`) of a ``tool_call`` part: its call; ``None`` for
        every other event."""
    def to_dict(self) -> dict[str, Any]:
        """``{"event": type, **fields}``: the JSON form every binding writes
        (the key was ``"type"`` before 0.2)."""
    def fields(self) -> list[str]: ...
    def __eq__(self, other: object, /) -> bool: ...

_ConnectionState = Literal["disconnected", "connecting", "connected", "reconnecting"]

@final
class UiState:
    """The UI state of a stream (``Stream(..., ui=True).ui``)."""

    def snapshot(self) -> dict[str, Any]: ...
    def set_connection(self, state: _ConnectionState) -> None: ...
    def set_tool_progress(self, id: str, value: Any) -> None: ...
    @property
    def connection(self) -> _ConnectionState: ...
    @property
    def stop_reason(self) -> Optional[str]: ...
    @property
    def is_ended(self) -> bool: ...

_Provider = Literal[
    "anthropic", "openai_chat", "openai_responses", "gemini", "ollama", "bedrock", "bedrock_converse", "auto"
]

_U = TypeVar("_U", bound=Optional[UiState], covariant=True, default=Optional[UiState])

class _StreamOptions(TypedDict, total=False):
    """The keywords of ``StreamConfig``'s fields, which the stream
    constructors took before ``config=`` (deprecated: a ``DeprecationWarning``)."""

    max_line_len: int
    max_event_size: int
    max_id_len: int
    utf8: Literal["replace", "strict"]
    max_parts: int
    max_tool_args_bytes: int
    max_text_bytes: int
    max_choices: int
    tool_input_trailing_strings: bool
    max_memory_bytes: int
    max_path_events_per_feed: int
    max_event_stream_message_len: int
    max_event_stream_headers_len: int

@final
class StreamConfig:
    """The limits and options of a stream, immutable. Each field defaults to
    the core's value (the defaults below are checked against it) and the core
    checks its range: ``0`` is a ``ValueError`` for every limit but
    ``max_path_events_per_feed`` (no path events)."""

    def __new__(
        cls,
        *,
        max_line_len: int = 16777216,
        max_event_size: int = 16777216,
        max_id_len: int = 4096,
        utf8: Literal["replace", "strict"] = "replace",
        max_parts: int = 4096,
        max_tool_args_bytes: int = 16777216,
        max_text_bytes: int = 67108864,
        max_choices: int = 128,
        tool_input_trailing_strings: bool = False,
        max_memory_bytes: int = 134217728,
        max_path_events_per_feed: int = 16384,
        max_event_stream_message_len: int = 16777216,
        max_event_stream_headers_len: int = 131072,
    ) -> StreamConfig: ...
    def replace(self, **changes: Unpack[_StreamOptions]) -> StreamConfig:
        """A copy with the fields given changed."""
    def to_dict(self) -> dict[str, Any]: ...
    @property
    def max_line_len(self) -> int: ...
    @property
    def max_event_size(self) -> int: ...
    @property
    def max_id_len(self) -> int: ...
    @property
    def utf8(self) -> Literal["replace", "strict"]: ...
    @property
    def max_parts(self) -> int: ...
    @property
    def max_tool_args_bytes(self) -> int: ...
    @property
    def max_text_bytes(self) -> int: ...
    @property
    def max_choices(self) -> int: ...
    @property
    def tool_input_trailing_strings(self) -> bool: ...
    @property
    def max_memory_bytes(self) -> int: ...
    @property
    def max_path_events_per_feed(self) -> int: ...
    @property
    def max_event_stream_message_len(self) -> int: ...
    @property
    def max_event_stream_headers_len(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@disjoint_base
class Stream(Generic[_U]):
    """One streamed turn of a provider's API. ``Stream(..., ui=True)`` is a
    ``Stream[UiState]``: its ``.ui`` is never ``None``."""

    @overload
    def __new__(
        cls,
        provider: str = "auto",
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[False] = False,
        **options: Unpack[_StreamOptions],
    ) -> Stream[None]: ...
    @overload
    def __new__(
        cls,
        provider: str = "auto",
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[True],
        **options: Unpack[_StreamOptions],
    ) -> Stream[UiState]: ...
    @overload
    def __new__(
        cls,
        provider: str = "auto",
        *,
        config: Optional[StreamConfig] = None,
        ui: bool,
        **options: Unpack[_StreamOptions],
    ) -> Stream[Optional[UiState]]: ...
    def feed(self, data: _Bytes, now_ms: Optional[int] = None) -> list[StreamEvent]: ...
    def feed_event(self, event: ServerSentEvent, now_ms: Optional[int] = None) -> list[StreamEvent]: ...
    def finish(self, now_ms: Optional[int] = None) -> list[StreamEvent]: ...
    def abort(self, now_ms: Optional[int] = None) -> list[StreamEvent]: ...
    def reconnect(self) -> None: ...
    @property
    def resume_cursor(self) -> ResumeCursor: ...
    @property
    def last_event_id(self) -> Optional[str]: ...
    @property
    def reconnection_time(self) -> Optional[int]: ...
    @property
    def last_sequence_number(self) -> Optional[int]: ...
    @property
    def ui(self) -> _U: ...
    @property
    def is_aborted(self) -> bool: ...
    @property
    def message(self) -> Optional[dict[str, Any]]: ...
    def message_json(self) -> bytes: ...
    @property
    def provider(self) -> _Provider: ...
    @property
    def is_terminated(self) -> bool: ...
    @property
    def is_complete_at_end(self) -> bool: ...

class _Dialect(Stream[_U]): ...

@final
class AnthropicStream(_Dialect[_U]):
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[False] = False,
        **options: Unpack[_StreamOptions],
    ) -> AnthropicStream[None]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[True],
        **options: Unpack[_StreamOptions],
    ) -> AnthropicStream[UiState]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: bool,
        **options: Unpack[_StreamOptions],
    ) -> AnthropicStream[Optional[UiState]]: ...

@final
class OpenAIChatStream(_Dialect[_U]):
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[False] = False,
        **options: Unpack[_StreamOptions],
    ) -> OpenAIChatStream[None]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[True],
        **options: Unpack[_StreamOptions],
    ) -> OpenAIChatStream[UiState]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: bool,
        **options: Unpack[_StreamOptions],
    ) -> OpenAIChatStream[Optional[UiState]]: ...

@final
class OpenAIResponsesStream(_Dialect[_U]):
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[False] = False,
        **options: Unpack[_StreamOptions],
    ) -> OpenAIResponsesStream[None]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[True],
        **options: Unpack[_StreamOptions],
    ) -> OpenAIResponsesStream[UiState]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: bool,
        **options: Unpack[_StreamOptions],
    ) -> OpenAIResponsesStream[Optional[UiState]]: ...

_SchedulerErrorKind = Literal[
    "unknown_call_id",
    "duplicate_call_id",
    "already_finished",
    "not_started",
    "add_after_discard",
    "too_many_calls",
    "unfinished",
    "discarded",
    "unsupported_provider",
]

class SchedulerError(Error, ValueError):
    """Misuse of a ToolScheduler; the call changed nothing."""

    kind: _SchedulerErrorKind

_ToolResultKind = Literal[
    "ran",
    "unknown_tool",
    "invalid_input",
    "cancelled",
    "aborted",
    "discarded",
    "incomplete",
    "unnamed",
    "skipped",
    "denied",
]

@final
class ToolResult:
    """The result of one tool call."""

    @property
    def call_id(self) -> str: ...
    @property
    def id_synthesized(self) -> bool: ...
    @property
    def name(self) -> str: ...
    @property
    def output(self) -> str: ...
    @property
    def is_error(self) -> bool: ...
    @property
    def kind(self) -> _ToolResultKind: ...
    def __eq__(self, other: object, /) -> bool: ...

_ToolExecutionEventType = Literal[
    "tool_execution_started",
    "tool_execution_update",
    "tool_execution_finished",
    "tool_approval_requested",
    "tool_running_after_stop",
]

@final
class ToolExecutionEvent:
    """A ``tool_execution_*`` event: ``.type`` is its wire name."""

    @property
    def type(self) -> _ToolExecutionEventType: ...
    @property
    def call_id(self) -> str: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def text(self) -> Optional[str]: ...
    @property
    def is_error(self) -> Optional[bool]: ...
    @property
    def approval_id(self) -> Optional[str]:
        """``tool_approval_requested``: the id to ``approve`` / ``deny``."""
    @property
    def arguments(self) -> Optional[str]:
        """``tool_approval_requested``: the call's input as text."""
    @property
    def stop_reason(self) -> Optional[str]:
        """``tool_running_after_stop``: the answer's stop reason."""
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class Finished:
    """What ``ToolScheduler.finish`` did."""

    @property
    def recorded(self) -> bool: ...
    @property
    def cancel(self) -> list[str]: ...

@final
class ToolScheduler:
    """Which ready tool calls to run now; results handed back in call order."""

    def __new__(cls, *, max_concurrency: int = 0, max_calls: int = 4096) -> ToolScheduler: ...
    def add(
        self,
        call_id: str,
        name: str,
        input: Union[str, dict[str, Any], list[Any], int, float, bool, None],
        *,
        exclusive: bool = False,
        abort_siblings_on_error: bool = False,
    ) -> None: ...
    def add_call(self, call: ToolCallEnd, *, exclusive: bool = False, abort_siblings_on_error: bool = False) -> None: ...
    def reject(
        self, call: ToolCallEnd, output: str, kind: Literal["unknown_tool", "invalid_input", "incomplete", "unnamed"]
    ) -> None: ...
    def add_unknown(self, call_id: str, name: str) -> None: ...
    def startable(self) -> list[str]: ...
    def update(self, call_id: str, text: str) -> None: ...
    def finish(self, call_id: str, output: str, is_error: bool = False) -> Finished: ...
    def results(self) -> list[ToolResult]: ...
    def all_results(self) -> list[ToolResult]: ...
    def discard(self) -> list[str]: ...
    def abort(self, reason: str = "") -> list[str]: ...
    def next_event(self) -> Optional[ToolExecutionEvent]: ...
    def tool_results(self, provider: _Provider) -> Any: ...
    @property
    def running(self) -> int: ...
    @property
    def is_settled(self) -> bool: ...
    @property
    def is_discarded(self) -> bool: ...
    def __len__(self) -> int: ...

_RelayErrorKind = Literal["finished", "no_stream", "replay_too_old", "unknown_event_id", "invalid_event", "other"]

class RelayError(Error, ValueError):
    """A relay call that cannot be served; ``.kind`` says why."""

    kind: _RelayErrorKind
    requested: str
    oldest: Optional[int]

CATALOG_EVENT_NAMES: tuple[str, ...]
"""Every event name the ``catalog`` relay format sends (an ``EventSource``
hears a named event only through a listener for it)."""

def resume_point(last_event_id: str, oldest: Optional[int], newest: Optional[int]) -> int: ...
@final
class Relay:
    """Normalized events (or provider bytes) in, browser Server-Sent Events out."""

    def __new__(
        cls,
        format: Literal["ai-sdk", "ai_sdk", "catalog"] = "ai-sdk",
        *,
        provider: Optional[_Provider] = "auto",
        replay_bytes: int = 1048576,
        keep_alive_ms: int = 15000,
        tool_input_coalesce_bytes: int = 4096,
        tool_input_coalesce_ms: int = 50,
    ) -> Relay: ...
    def feed(self, data: _Bytes) -> bytes: ...
    def end_of_input(self) -> bytes: ...
    def push(self, event: Union[StreamEvent, dict[str, Any]]) -> bytes: ...
    def tool_result(
        self, call_id: str, output: _Json, *, is_error: bool = False, duration_ms: Optional[int] = None
    ) -> bytes: ...
    def approval_required(
        self, approval_id: str, call_id: str, name: str, input: _Json, *, message: Optional[str] = None
    ) -> bytes: ...
    def log(
        self, level: str, message: str, *, timestamp: Union[str, int], trace_id: str, metadata: Optional[_Json] = None
    ) -> bytes: ...
    def error(self, message: str, *, code: Optional[str] = None, recoverable: bool = False) -> bytes: ...
    def finish_step(self) -> bytes: ...
    def message_metadata(self, metadata: dict[str, Any]) -> bytes:
        """The host's metadata of the answer (e.g. a turn's timings): AI SDK
        ``message-metadata``; nothing in the catalog."""
    def finish(self, usage: Optional[_Json] = None) -> bytes: ...
    def abort(self) -> bytes: ...
    def keep_alive(self, now_ms: int) -> bytes: ...
    def tick(self, now_ms: int) -> bytes: ...
    def flush(self) -> bytes: ...
    def replay_after(self, last_event_id: str) -> bytes: ...
    def headers(self) -> list[tuple[str, str]]: ...
    def frames(self) -> list[tuple[int, bytes]]: ...
    @property
    def trailer(self) -> bytes: ...
    @property
    def format(self) -> Literal["ai-sdk", "catalog"]: ...
    @property
    def last_event_id(self) -> int: ...
    @property
    def is_finished(self) -> bool: ...
    @property
    def stream_error(self) -> Optional[Error]: ...
@final
class GeminiStream(_Dialect[_U]):
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[False] = False,
        **options: Unpack[_StreamOptions],
    ) -> GeminiStream[None]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[True],
        **options: Unpack[_StreamOptions],
    ) -> GeminiStream[UiState]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: bool,
        **options: Unpack[_StreamOptions],
    ) -> GeminiStream[Optional[UiState]]: ...

@final
class OllamaStream(_Dialect[_U]):
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[False] = False,
        **options: Unpack[_StreamOptions],
    ) -> OllamaStream[None]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[True],
        **options: Unpack[_StreamOptions],
    ) -> OllamaStream[UiState]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: bool,
        **options: Unpack[_StreamOptions],
    ) -> OllamaStream[Optional[UiState]]: ...

@final
class BedrockStream(_Dialect[_U]):
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[False] = False,
        **options: Unpack[_StreamOptions],
    ) -> BedrockStream[None]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[True],
        **options: Unpack[_StreamOptions],
    ) -> BedrockStream[UiState]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: bool,
        **options: Unpack[_StreamOptions],
    ) -> BedrockStream[Optional[UiState]]: ...

@final
class BedrockConverseStream(_Dialect[_U]):
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[False] = False,
        **options: Unpack[_StreamOptions],
    ) -> BedrockConverseStream[None]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: Literal[True],
        **options: Unpack[_StreamOptions],
    ) -> BedrockConverseStream[UiState]: ...
    @overload
    def __new__(
        cls,
        *,
        config: Optional[StreamConfig] = None,
        ui: bool,
        **options: Unpack[_StreamOptions],
    ) -> BedrockConverseStream[Optional[UiState]]: ...

# --- the agent turn ----------------------------------------------------------------

_TurnEvent = Union[StreamEvent, ToolExecutionEvent]

@final
class TurnAction:
    """What the host does next: ``start_tool`` (run ``name`` with
    ``arguments``, report ``TurnCore.tool_result``), ``cancel_tool``,
    ``close_connection`` or ``reconnect`` (after ``delay_ms``, with
    ``cursor``)."""

    @property
    def kind(self) -> Literal["start_tool", "cancel_tool", "close_connection", "reconnect"]: ...
    @property
    def call_id(self) -> Optional[str]: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def arguments(self) -> Optional[str]: ...
    @property
    def input_format(self) -> Optional[_InputFormat]: ...
    @property
    def delay_ms(self) -> Optional[int]: ...
    @property
    def attempt(self) -> Optional[int]: ...
    @property
    def cursor(self) -> Optional[ResumeCursor]: ...
    @property
    def replay(self) -> Optional[_Replay]: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class TurnCall:
    """One tool call of the answer (choice 0), as the turn kept it."""

    @property
    def part(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def id_synthesized(self) -> bool: ...
    @property
    def name(self) -> str: ...
    @property
    def provider_type(self) -> str: ...
    @property
    def input_format(self) -> _InputFormat: ...
    @property
    def provider_executed(self) -> bool: ...
    @property
    def outcome(self) -> Literal["complete", "invalid_arguments", "incomplete"]: ...
    @property
    def arguments(self) -> str: ...

@final
class NextRequest:
    """What to append to the conversation to continue, in the provider's
    request shape."""

    @property
    def assistant(self) -> Any:
        """The assistant turn: one message (a dict), or the Responses input items (a list)."""
    @property
    def tool_results(self) -> Any:
        """The tool results, shaped for the provider (``None`` without results)."""
    @property
    def append(self) -> list[Any]:
        """The assistant turn, then the results: what ``messages`` (Responses:
        ``input``; Gemini: ``contents``) is extended with."""

class _GapStats(TypedDict):
    count: int
    median_ms: int
    p95_ms: int
    max_ms: int

class _Attempt(TypedDict):
    started_ms: int
    ended_ms: Optional[int]
    outcome: str
    """``open`` while it runs, then how it ended (a ``StreamEnd`` kind)."""
    status: Optional[int]

class _TurnTimings(TypedDict):
    """``TurnOutcome.timings``: milliseconds of the host's clock."""

    started_ms: Optional[int]
    time_to_first_content_ms: Optional[int]
    content_gaps: _GapStats
    duration_ms: Optional[int]
    output_tokens: Optional[int]
    input_tokens: Optional[int]
    output_tokens_per_second: Optional[float]
    attempts: list[_Attempt]

_TelemetryValue = Union[str, int, float, bool, list[str], list[int], list[float], list[bool]]
"""A telemetry attribute's value as the core typed it (the finish reasons:
a list of strings; the token counts: ints)."""

class _TelemetryMetric(TypedDict):
    """One measurement of a GenAI client metric."""

    name: str
    unit: str
    """``s`` for the durations, ``{token}`` for the token usage."""
    value: Union[int, float]
    """Seconds (a float), or a count of tokens (an int)."""
    attributes: dict[str, _TelemetryValue]

class _TurnTelemetry(TypedDict):
    """``TurnOutcome.telemetry``: the span's attributes and the client
    metrics, named by the core after the OpenTelemetry GenAI semantic
    conventions."""

    attributes: dict[str, _TelemetryValue]
    metrics: list[_TelemetryMetric]

@final
class TurnOutcome:
    """What a finished (or aborted, or failed) turn gives the agent."""

    @property
    def provider(self) -> _Provider: ...
    @property
    def message(self) -> Any: ...
    @property
    def stop_reason(self) -> Optional[str]: ...
    @property
    def aborted(self) -> bool: ...
    @property
    def failure(self) -> Optional[Error]: ...
    @property
    def retryable(self) -> bool: ...
    @property
    def failure_kind(self) -> Optional[Literal["stream", "transport", "idle_timeout", "http", "too_many_calls"]]: ...
    @property
    def gave_up(self) -> Optional[_GiveUpReason]: ...
    @property
    def output_started(self) -> bool: ...
    @property
    def timings(self) -> _TurnTimings:
        """The timings on the host's clock, with the core's names."""
    @property
    def telemetry(self) -> _TurnTelemetry:
        """What the turn reports to OpenTelemetry (``ssefold.otel`` records it)."""
    @property
    def calls(self) -> list[TurnCall]: ...
    @property
    def results(self) -> list[ToolResult]: ...
    @property
    def next(self) -> Optional[NextRequest]: ...

@final
class TurnCore:
    """One agent turn, sans-IO: each input returns the events to show;
    ``poll_actions()`` says what to do."""

    def __new__(
        cls,
        provider: str = "auto",
        *,
        max_concurrency: int = 0,
        max_calls: int = 4096,
        reconnect: Optional[ReconnectPolicy] = None,
        approval_timeout_ms: Optional[int] = None,
        jitter_seed: Optional[int] = None,
    ) -> TurnCore: ...
    def add_tool(
        self,
        name: str,
        *,
        exclusive: bool = False,
        abort_siblings_on_error: bool = False,
        start: Literal["auto", "ready", "turn_end"] = "auto",
        needs_approval: bool = False,
    ) -> None: ...
    def request_sent(self, now_ms: Optional[int] = None) -> None: ...
    def connected(self, now_ms: Optional[int] = None) -> None: ...
    def http_status(
        self, status: int, headers: Optional[_Headers] = None, now_ms: Optional[int] = None
    ) -> list[_TurnEvent]: ...
    def feed(self, data: _Bytes, now_ms: Optional[int] = None) -> list[_TurnEvent]: ...
    def end_of_body(self, now_ms: Optional[int] = None) -> list[_TurnEvent]: ...
    def connection_failed(self, error: str, now_ms: Optional[int] = None) -> list[_TurnEvent]: ...
    def tick(self, now_ms: Optional[int] = None) -> list[_TurnEvent]: ...
    @property
    def deadline_ms(self) -> Optional[int]: ...
    def tool_update(self, call_id: str, text: str) -> list[_TurnEvent]: ...
    def tool_result(self, call_id: str, output: str, is_error: bool = False) -> list[_TurnEvent]: ...
    def approve(self, approval_id: str) -> list[_TurnEvent]: ...
    def deny(self, approval_id: str, reason: str = "") -> list[_TurnEvent]: ...
    def cancel_tool(self, call_id: str) -> list[_TurnEvent]: ...
    def abort(self, reason: str = "") -> list[_TurnEvent]: ...
    def apply_event(self, event: StreamEvent, now_ms: Optional[int] = None) -> list[ToolExecutionEvent]: ...
    def end_of_events(self, failure: Optional[BaseException] = None) -> list[ToolExecutionEvent]: ...
    def poll_actions(self) -> list[TurnAction]: ...
    def results(self) -> list[ToolResult]: ...
    @property
    def is_finished(self) -> bool: ...
    @property
    def is_stream_ended(self) -> bool: ...
    @property
    def running(self) -> int: ...
    @property
    def provider(self) -> _Provider: ...
    def outcome(self, stream: Optional[Stream[Any]] = None) -> TurnOutcome: ...
