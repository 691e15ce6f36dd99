//! [`StreamError`]: what ends a [`Stream`](super::Stream).

use super::{Provider, ProviderError, StreamLimit};
use crate::eventstream::EventStreamError;
use crate::sse::DecodeError;

/// A fatal stream error. After one the stream is closed; the folded message
/// stays available through [`Stream::message`](super::Stream::message).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The SSE layer refused the bytes.
    #[error("SSE: {0}")]
    Sse(#[from] DecodeError),
    /// The AWS event-stream framing (Bedrock) is broken: a CRC mismatch,
    /// bad lengths or headers, a message over the limits.
    #[error("event stream: {0}")]
    EventStream(#[from] EventStreamError),
    /// An event's data was not JSON.
    #[error("event {event_type:?}: data is not JSON: {message}")]
    InvalidJson {
        /// The SSE event type.
        event_type: String,
        /// The parser's message.
        message: String,
    },
    /// A limit of [`StreamConfig`](super::StreamConfig) was exceeded.
    #[error("limit exceeded: {limit} ({max})")]
    LimitExceeded {
        /// Which limit.
        limit: StreamLimit,
        /// Its value.
        max: usize,
    },
    /// The provider reported an error inside the stream.
    #[error("provider error {}: {}", .0.error_type, .0.message)]
    Provider(ProviderError),
    /// [`Provider::Auto`] could not tell the dialect from the first event.
    #[error("cannot detect the provider dialect from the first event")]
    UnknownDialect,
    /// The stream was given one dialect but its first event is clearly
    /// another's (see "Dialects" in the module docs).
    #[error("the stream is {}, not {}: wrong provider (auto detects it)", .detected.name(), .expected.name())]
    DialectMismatch {
        /// The dialect the stream was given.
        expected: Provider,
        /// The dialect the first event belongs to.
        detected: Provider,
    },
    /// The stream ended before its terminal event (`expected`).
    #[error("stream ended before {expected}")]
    Incomplete {
        /// The missing terminal event.
        expected: &'static str,
    },
    /// The stream was already closed by an error or by `finish`.
    #[error("stream closed")]
    Closed,
}
