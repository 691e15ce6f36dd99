//! The one status enum every fallible function returns, with stable numbers.

use core::ffi::c_char;

use crate::sse::{DecodeError, EncodeError};

/// The status of a call. The numbers are part of the ABI and never change
/// meaning; retired numbers stay reserved. Ranges: 0–99 success-like
/// outcomes, 100–199 misuse of the API (caller bugs), 200–299 SSE decoding,
/// 300–399 SSE encoding, 400–499 partial JSON, 500–599 provider
/// streams, 600–699 the tool scheduler, 700–799 relays.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)]
pub enum ssefold_result {
    /// Success.
    Ok = 0,
    /// The event callback returned non-zero: the call stopped early. Out-
    /// parameters that say how far it got (`consumed`) are written.
    Stopped = 1,
    /// A required pointer argument was NULL (or a view had `ptr == NULL`
    /// with `len > 0`).
    NullParameter = 100,
    /// An argument was out of range: a length over `PTRDIFF_MAX`, an unknown
    /// enum number, a NaN where a number is required.
    InvalidArgument = 101,
    /// A string argument was not valid UTF-8.
    InvalidUtf8Argument = 102,
    /// The handle cannot do this now: called again from its own callback,
    /// or a required callback is not set.
    BadState = 103,
    /// A panic happened earlier inside this handle: it refuses all work.
    /// Free it.
    Poisoned = 104,
    /// A Rust panic was caught at the boundary (a bug in ssefold). The handle
    /// involved is poisoned.
    Panic = 105,
    /// SSE: a line was longer than the configured limit. Decoding goes on
    /// after the next blank line.
    SseLineTooLong = 200,
    /// SSE: an event's data grew past the configured limit. Decoding goes on
    /// after the next blank line.
    SseEventTooLarge = 201,
    /// SSE: invalid UTF-8 in strict mode. The event is dropped.
    SseInvalidUtf8 = 202,
    /// SSE: an `id` longer than the configured `max_id_len`. The id in force
    /// is kept; decoding goes on after the next blank line.
    SseIdTooLong = 203,
    /// SSE encoder: a CR or LF in an event name or id.
    EncodeLineBreak = 300,
    /// SSE encoder: a NUL in an id.
    EncodeNulInId = 301,
    /// Partial JSON: the input is not a prefix of any JSON document (sticky).
    JsonInvalid = 400,
    /// Partial JSON: too many nested containers (sticky).
    JsonDepthLimit = 401,
    /// Partial JSON: the document is larger than the limit (sticky).
    JsonSizeLimit = 402,
    /// Partial JSON: `finish` before the document was complete.
    JsonIncomplete = 403,
    /// Provider stream: an event's data was not JSON (the stream is closed).
    StreamInvalidJson = 500,
    /// Provider stream: a configured limit was exceeded (the stream is closed).
    StreamLimitExceeded = 501,
    /// Provider stream: the provider reported an error inside the stream,
    /// of a type not worth retrying (e.g. `invalid_request_error`). The
    /// retryable types give `StreamRetryableProviderError`.
    StreamProviderError = 502,
    /// Provider stream: `AUTO` could not tell the dialect from the first event.
    StreamUnknownDialect = 503,
    /// Provider stream: the body ended before the terminal event.
    StreamIncomplete = 504,
    /// Provider stream: already closed by an error or by `finish`.
    StreamClosed = 505,
    /// Provider stream: the provider reported an error inside the stream of
    /// a transient type (`overloaded_error`, `rate_limit_error`,
    /// `api_error`, `server_error`, ...: see
    /// `ssefold_reconnect_is_retryable_error_type`): sending the request
    /// again may work. A provider error like `StreamProviderError`: test
    /// for both.
    StreamRetryableProviderError = 506,
    /// Provider stream: given one dialect, the first event is another's
    /// (the message names the dialect seen; `AUTO` detects it).
    StreamDialectMismatch = 507,
    /// Provider stream: the AWS event-stream framing (Bedrock) is broken (a
    /// CRC mismatch, bad lengths or headers, a message over the limits).
    StreamEventStream = 508,
    /// Tool scheduler: no call has this id.
    ToolUnknownCallId = 600,
    /// Tool scheduler: a call with this id was already added.
    ToolDuplicateCallId = 601,
    /// Tool scheduler: the call already has its result from the host.
    ToolAlreadyFinished = 602,
    /// Tool scheduler: the call was never handed out by `startable`.
    ToolNotStarted = 603,
    /// Tool scheduler: `add` after `discard`.
    ToolAddAfterDiscard = 604,
    /// Tool scheduler: more calls than the configured `max_calls`.
    ToolTooManyCalls = 605,
    /// Tool scheduler: results asked for while a call has none yet.
    ToolUnfinished = 606,
    /// Tool scheduler: results asked for after `discard`.
    ToolDiscarded = 607,
    /// Tool scheduler: no tool result shape for this provider (`AUTO`).
    ToolUnsupportedProvider = 608,
    /// Tool scheduler / agent turn: no call waits for this approval id
    /// (unknown, or already answered).
    ToolNotAwaitingApproval = 609,
    /// Relay: `finish` was called; nothing more can be sent.
    RelayFinished = 700,
    /// Relay: `feed` on a relay made without a provider stream.
    RelayNoStream = 701,
    /// Relay: the `Last-Event-ID` is older than the oldest event kept
    /// (reload the whole message).
    RelayReplayTooOld = 702,
    /// Relay: the `Last-Event-ID` was never sent by this relay.
    RelayUnknownEventId = 703,
    /// Relay: a pushed event is not a normalized event in its JSON form.
    RelayInvalidEvent = 704,
}

impl ssefold_result {
    /// Every status, in number order (for `ssefold_result_str` and tests).
    pub(crate) const ALL: [ssefold_result; 42] = [
        ssefold_result::Ok,
        ssefold_result::Stopped,
        ssefold_result::NullParameter,
        ssefold_result::InvalidArgument,
        ssefold_result::InvalidUtf8Argument,
        ssefold_result::BadState,
        ssefold_result::Poisoned,
        ssefold_result::Panic,
        ssefold_result::SseLineTooLong,
        ssefold_result::SseEventTooLarge,
        ssefold_result::SseInvalidUtf8,
        ssefold_result::SseIdTooLong,
        ssefold_result::EncodeLineBreak,
        ssefold_result::EncodeNulInId,
        ssefold_result::JsonInvalid,
        ssefold_result::JsonDepthLimit,
        ssefold_result::JsonSizeLimit,
        ssefold_result::JsonIncomplete,
        ssefold_result::StreamInvalidJson,
        ssefold_result::StreamLimitExceeded,
        ssefold_result::StreamProviderError,
        ssefold_result::StreamUnknownDialect,
        ssefold_result::StreamIncomplete,
        ssefold_result::StreamClosed,
        ssefold_result::StreamRetryableProviderError,
        ssefold_result::StreamDialectMismatch,
        ssefold_result::StreamEventStream,
        ssefold_result::ToolUnknownCallId,
        ssefold_result::ToolDuplicateCallId,
        ssefold_result::ToolAlreadyFinished,
        ssefold_result::ToolNotStarted,
        ssefold_result::ToolAddAfterDiscard,
        ssefold_result::ToolTooManyCalls,
        ssefold_result::ToolUnfinished,
        ssefold_result::ToolDiscarded,
        ssefold_result::ToolUnsupportedProvider,
        ssefold_result::ToolNotAwaitingApproval,
        ssefold_result::RelayFinished,
        ssefold_result::RelayNoStream,
        ssefold_result::RelayReplayTooOld,
        ssefold_result::RelayUnknownEventId,
        ssefold_result::RelayInvalidEvent,
    ];

    /// The status with number `n`, if there is one. C may pass any number.
    pub fn from_u32(n: u32) -> Option<ssefold_result> {
        ssefold_result::ALL.iter().copied().find(|r| *r as u32 == n)
    }

    /// A static, NUL-terminated description.
    pub fn description(self) -> &'static str {
        match self {
            ssefold_result::Ok => "ok\0",
            ssefold_result::Stopped => "stopped by the callback\0",
            ssefold_result::NullParameter => "a required pointer argument was NULL\0",
            ssefold_result::InvalidArgument => "an argument was out of range\0",
            ssefold_result::InvalidUtf8Argument => "a string argument was not valid UTF-8\0",
            ssefold_result::BadState => "the handle cannot do this in its current state\0",
            ssefold_result::Poisoned => "the handle was poisoned by an earlier panic\0",
            ssefold_result::Panic => "a panic was caught at the C boundary\0",
            ssefold_result::SseLineTooLong => "SSE line longer than the limit\0",
            ssefold_result::SseEventTooLarge => "SSE event data larger than the limit\0",
            ssefold_result::SseInvalidUtf8 => "invalid UTF-8 in an SSE field (strict mode)\0",
            ssefold_result::SseIdTooLong => "SSE id longer than the limit\0",
            ssefold_result::EncodeLineBreak => "the SSE event name or id contains CR or LF\0",
            ssefold_result::EncodeNulInId => "the SSE id contains NUL\0",
            ssefold_result::JsonInvalid => "invalid JSON\0",
            ssefold_result::JsonDepthLimit => "JSON nesting depth limit exceeded\0",
            ssefold_result::JsonSizeLimit => "JSON size limit exceeded\0",
            ssefold_result::JsonIncomplete => "incomplete JSON\0",
            ssefold_result::StreamInvalidJson => "an event's data was not JSON\0",
            ssefold_result::StreamLimitExceeded => "a stream limit was exceeded\0",
            ssefold_result::StreamProviderError => "the provider reported an error in the stream\0",
            ssefold_result::StreamUnknownDialect => "cannot detect the provider dialect\0",
            ssefold_result::StreamIncomplete => "the stream ended before its terminal event\0",
            ssefold_result::StreamClosed => "the stream is closed\0",
            ssefold_result::StreamRetryableProviderError => {
                "the provider reported a retryable error (rate limit, overload, server error) in the stream\0"
            }
            ssefold_result::StreamDialectMismatch => "the stream is another provider dialect than the one given\0",
            ssefold_result::StreamEventStream => "the AWS event-stream framing is broken\0",
            ssefold_result::ToolUnknownCallId => "no tool call has this id\0",
            ssefold_result::ToolDuplicateCallId => "a tool call with this id was already added\0",
            ssefold_result::ToolAlreadyFinished => "the tool call already finished\0",
            ssefold_result::ToolNotStarted => "the tool call was never started\0",
            ssefold_result::ToolAddAfterDiscard => "no tool call can be added after discard\0",
            ssefold_result::ToolTooManyCalls => "more tool calls than max_calls\0",
            ssefold_result::ToolUnfinished => "a tool call has no result yet\0",
            ssefold_result::ToolDiscarded => "the turn's tool work was discarded\0",
            ssefold_result::ToolUnsupportedProvider => "no tool result shape for this provider\0",
            ssefold_result::ToolNotAwaitingApproval => "no tool call waits for this approval\0",
            ssefold_result::RelayFinished => "the relay has finished\0",
            ssefold_result::RelayNoStream => "the relay has no provider stream to feed\0",
            ssefold_result::RelayReplayTooOld => "the event id is no longer held for replay\0",
            ssefold_result::RelayUnknownEventId => "the event id was never sent by this relay\0",
            ssefold_result::RelayInvalidEvent => "not a normalized stream event\0",
        }
    }
}

impl From<&DecodeError> for ssefold_result {
    fn from(e: &DecodeError) -> Self {
        match e {
            DecodeError::LineTooLong { .. } => ssefold_result::SseLineTooLong,
            DecodeError::EventTooLarge { .. } => ssefold_result::SseEventTooLarge,
            DecodeError::InvalidUtf8 { .. } => ssefold_result::SseInvalidUtf8,
            DecodeError::IdTooLong { .. } => ssefold_result::SseIdTooLong,
        }
    }
}

impl From<&EncodeError> for ssefold_result {
    fn from(e: &EncodeError) -> Self {
        match e {
            EncodeError::LineBreak { .. } => ssefold_result::EncodeLineBreak,
            EncodeError::NulInId => ssefold_result::EncodeNulInId,
        }
    }
}

/// A static, NUL-terminated description of a status number. Takes the
/// number, not the enum, because C may pass any value: unknown numbers give
/// `"unknown ssefold_result"`. Never fails; the string lives forever.
#[no_mangle]
pub extern "C" fn ssefold_result_str(result: u32) -> *const c_char {
    ffi_panic_boundary! {
        let s = match ssefold_result::from_u32(result) {
            Some(r) => r.description(),
            None => "unknown ssefold_result\0",
        };
        s.as_ptr().cast::<c_char>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_and_descriptions_are_nul_terminated() {
        for r in ssefold_result::ALL {
            assert_eq!(ssefold_result::from_u32(r as u32), Some(r));
            let d = r.description();
            assert!(d.ends_with('\0') && !d[..d.len() - 1].contains('\0'), "{r:?}");
        }
        assert_eq!(ssefold_result::from_u32(7), None);
        assert_eq!(ssefold_result::Ok as u32, 0);
        assert_eq!(ssefold_result::SseLineTooLong as u32, 200);
    }
}
