"""ssefold: the LLM streaming pipeline (bytes -> SSE events -> provider
events -> folded message), sans-IO, in Rust.

>>> import ssefold
>>> d = ssefold.SSEDecoder()
>>> d.feed(b"event: ping\\ndata: {}\\n\\n")
[ServerSentEvent(event='ping', data='{}', id=None, retry=None)]
"""

from ._ssefold import (
    AnthropicStream,
    Decision,
    DecodeError,
    EncodeError,
    Error,
    EventTooLargeError,
    IncompleteStreamError,
    InvalidEventError,
    InvalidUtf8Error,
    LimitExceededError,
    LineTooLongError,
    OpenAIChatStream,
    OpenAIResponsesStream,
    PartialJSON,
    PartialJSONError,
    PathEvent,
    ProviderError,
    ReconnectPolicy,
    Reconnector,
    ResumeCursor,
    ServerSentEvent,
    SSEDecoder,
    SSEEncoder,
    Stream,
    StreamClosedError,
    StreamEnd,
    StreamEvent,
    UnknownDialectError,
    __version__,
    is_retryable_error_type,
    parse_partial_json,
)
from ._iter import aiter_events, iter_events
from ._http import AsyncEventStream, EventStream, astream_events, stream_events

__all__ = [
    "AnthropicStream",
    "AsyncEventStream",
    "Decision",
    "DecodeError",
    "EncodeError",
    "Error",
    "EventStream",
    "EventTooLargeError",
    "IncompleteStreamError",
    "InvalidEventError",
    "InvalidUtf8Error",
    "LimitExceededError",
    "LineTooLongError",
    "OpenAIChatStream",
    "OpenAIResponsesStream",
    "PartialJSON",
    "PartialJSONError",
    "PathEvent",
    "ProviderError",
    "ReconnectPolicy",
    "Reconnector",
    "ResumeCursor",
    "SSEDecoder",
    "SSEEncoder",
    "ServerSentEvent",
    "Stream",
    "StreamClosedError",
    "StreamEnd",
    "StreamEvent",
    "UnknownDialectError",
    "__version__",
    "aiter_events",
    "astream_events",
    "is_retryable_error_type",
    "iter_events",
    "parse_partial_json",
    "stream_events",
]
