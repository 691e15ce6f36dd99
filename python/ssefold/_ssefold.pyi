"""Type stubs of the ssefold extension module (checked by mypy.stubtest)."""

from typing import Any, Literal, Optional, Union, final

from typing_extensions import disjoint_base

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
    "IncompleteStreamError",
    "PartialJSONError",
    "InvalidEventError",
    "LimitExceededError",
    "UnknownDialectError",
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
    "_corpus",
    "_sse_decode_count",
    "_stream_fold_count",
    "PathEvent",
    "PartialJSON",
    "parse_partial_json",
    "StreamEvent",
    "Stream",
    "UiState",
    "AnthropicStream",
    "OpenAIChatStream",
    "OpenAIResponsesStream",
    "GeminiStream",
    "OllamaStream",
]

_Bytes = Union[bytes, bytearray, memoryview]

class Error(ValueError):
    """Base class of every error raised by ssefold."""

class DecodeError(Error):
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

class EncodeError(Error):
    field: str

class ProviderError(Error):
    type: str
    message: str
    request_id: Optional[str]
    output_emitted: bool
    events: list[StreamEvent]

class IncompleteStreamError(Error):
    expected: str
    last: StreamEnd
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
        jitter: float = 0.0,
        idle_timeout_ms: Optional[int] = None,
        max_server_retry_ms: int = 600000,
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
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

_StreamEndKind = Literal["completed", "ended_early", "transport_error", "idle_timeout", "provider_error", "aborted"]

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
    @property
    def kind(self) -> _StreamEndKind: ...
    @property
    def message(self) -> Optional[str]: ...
    @property
    def error_type(self) -> Optional[str]: ...
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
    def last(self) -> Optional[StreamEnd]: ...
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
    @property
    def idle_deadline_ms(self) -> Optional[int]: ...
    def is_idle(self, now_ms: int) -> bool: ...
    @property
    def cursor(self) -> ResumeCursor: ...
    def on_end(self, end: StreamEnd) -> Decision: ...

def is_retryable_error_type(error_type: str) -> bool: ...
def _provider_error(error_type: str, message: str) -> ProviderError: ...
def _corpus(name: str, target_bytes: int) -> bytes: ...
def _sse_decode_count(data: bytes, chunk: int) -> int: ...
def _stream_fold_count(data: bytes, chunk: int, provider: str) -> int: ...

# --- partial JSON --------------------------------------------------------------

class PartialJSONError(Error):
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
    def kind(self) -> Optional[Literal["object", "array"]]: ...
    @property
    def text(self) -> Optional[str]: ...
    @property
    def value(self) -> _Json: ...
    def to_dict(self) -> dict[str, Any]: ...
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

class InvalidEventError(Error):
    event_type: str
    reason: str
    events: list[StreamEvent]

class LimitExceededError(Error):
    limit: str
    max: int
    events: list[StreamEvent]

class UnknownDialectError(Error):
    events: list[StreamEvent]

class StreamClosedError(Error): ...

_StreamEventType = Literal[
    "message_start",
    "part_start",
    "text_delta",
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

@final
class StreamEvent:
    """One normalized event: ``.type`` plus its fields as attributes."""

    @property
    def type(self) -> _StreamEventType: ...
    def __getattr__(self, name: str) -> Any: ...
    def to_dict(self) -> dict[str, Any]: ...
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

_Provider = Literal["anthropic", "openai_chat", "openai_responses", "gemini", "ollama", "auto"]

@disjoint_base
class Stream:
    """One streamed turn of a provider's API."""

    def __new__(
        cls,
        provider: str = "auto",
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
        ui: bool = False,
    ) -> Stream: ...
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
    def ui(self) -> Optional[UiState]: ...
    @property
    def is_aborted(self) -> bool: ...
    @property
    def message(self) -> Optional[dict[str, Any]]: ...
    @property
    def provider(self) -> _Provider: ...
    @property
    def is_terminated(self) -> bool: ...

class _Dialect(Stream):
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
        ui: bool = False,
    ) -> _Dialect: ...

@final
class AnthropicStream(_Dialect): ...

@final
class OpenAIChatStream(_Dialect): ...

@final
class OpenAIResponsesStream(_Dialect): ...

@final
class GeminiStream(_Dialect): ...

@final
class OllamaStream(_Dialect): ...
