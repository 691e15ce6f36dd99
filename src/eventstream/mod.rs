//! The AWS event-stream binary framing (`application/vnd.amazon.eventstream`),
//! the second framing next to SSE: Amazon Bedrock's
//! `InvokeModelWithResponseStream` and `ConverseStream` answer in it.
//!
//! A message is
//!
//! ```text
//! total length u32 BE | headers length u32 BE | prelude CRC32 u32 BE   (the 12-byte prelude)
//! headers: { name length u8 | name | type u8 | value }*
//! payload
//! message CRC32 u32 BE                                                 (over everything before it)
//! ```
//!
//! with header value types 0 `true`, 1 `false`, 2 byte, 3 short, 4 int,
//! 5 long, 6 bytes (u16 BE length), 7 string (u16 BE length, UTF-8),
//! 8 timestamp (i64 BE milliseconds), 9 UUID (16 bytes). Integers are big
//! endian; the CRC is CRC-32 (IEEE).
//!
//! Header rules, botocore's (`botocore/eventstream.py`,
//! `EventStreamHeaderParser`), checked against it in
//! `python/tests/test_eventstream_botocore.py`:
//!
//! | header | here | botocore |
//! | --- | --- | --- |
//! | a name used twice in one message | [`EventStreamError::DuplicateHeader`] | `DuplicateHeader` |
//! | an empty name (length 0) | a header like any other (`""`) | accepted |
//! | a name or string value that is not UTF-8 | [`EventStreamError::BadHeader`] | `UnicodeDecodeError` |
//! | a value type above 9 | [`EventStreamError::BadHeader`] | `KeyError` |
//! | a value running past the headers section | [`EventStreamError::BadHeader`] | a short value (bytes, string) or `struct.error` |
//!
//! Headers are checked in order: the first bad or repeated one is the error.
//!
//! A body starts with its first message's prelude: a byte before it (a
//! blank line, a BOM) is read as a prelude and fails its CRC
//! ([`EventStreamError::PreludeCrcMismatch`] at offset 0).
//!
//! [`Decoder`] is sans-IO and zero-copy like the SSE decoder: feed it bytes in
//! any chunking; a message that lies inside one chunk is handed out borrowed
//! from it, only a message split across chunks is assembled in a reused
//! buffer. Limits ([`DecoderLimits`]) bound the memory; every malformed input
//! is a typed [`EventStreamError`]. A framing error is fatal: after a bad
//! length or CRC the message boundaries can no longer be trusted, so the
//! decoder refuses further input.

mod decoder;
mod header;

pub use decoder::{Decoder, DecoderLimits, EndOfStream};
pub use header::{HeaderValue, Headers, Message};

/// A framing error of the event stream. Offsets count bytes from the start
/// of the stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EventStreamError {
    /// The prelude's CRC does not match its 8 length bytes.
    #[error("event-stream message at offset {offset}: prelude CRC mismatch (expected {expected:#010x}, computed {computed:#010x})")]
    PreludeCrcMismatch {
        /// Offset of the message.
        offset: u64,
        /// The CRC the prelude carries.
        expected: u32,
        /// The CRC of its bytes.
        computed: u32,
    },
    /// The message CRC does not match the message bytes.
    #[error("event-stream message at offset {offset}: message CRC mismatch (expected {expected:#010x}, computed {computed:#010x})")]
    MessageCrcMismatch {
        /// Offset of the message.
        offset: u64,
        /// The CRC the message carries.
        expected: u32,
        /// The CRC of its bytes.
        computed: u32,
    },
    /// The lengths in the prelude are impossible (total below 16 bytes, or
    /// headers longer than the message leaves room for).
    #[error("event-stream message at offset {offset}: bad lengths (total {total_len}, headers {headers_len})")]
    BadLength {
        /// Offset of the message.
        offset: u64,
        /// The total length of the prelude.
        total_len: u32,
        /// The headers length of the prelude.
        headers_len: u32,
    },
    /// A message longer than [`DecoderLimits::max_message_len`].
    #[error("event-stream message at offset {offset}: {total_len} bytes, over the limit of {limit}")]
    MessageTooLarge {
        /// Offset of the message.
        offset: u64,
        /// Its length.
        total_len: u32,
        /// The limit.
        limit: u32,
    },
    /// Headers longer than [`DecoderLimits::max_headers_len`].
    #[error("event-stream message at offset {offset}: headers of {headers_len} bytes, over the limit of {limit}")]
    HeadersTooLarge {
        /// Offset of the message.
        offset: u64,
        /// The headers length.
        headers_len: u32,
        /// The limit.
        limit: u32,
    },
    /// A header that does not parse (a value type above 9, a value running
    /// past the headers, a name or string that is not UTF-8).
    #[error("event-stream message at offset {offset}: bad header: {reason}")]
    BadHeader {
        /// Offset of the message.
        offset: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// Two headers of one message with the same name (botocore's
    /// `DuplicateHeader`).
    #[error("event-stream message at offset {offset}: duplicate header {name:?}")]
    DuplicateHeader {
        /// Offset of the message.
        offset: u64,
        /// The repeated name.
        name: String,
    },
    /// Input after a framing error.
    #[error("the event stream failed earlier: no more input is accepted")]
    Failed,
}

impl EventStreamError {
    /// The offset of the message at fault (`None` for [`EventStreamError::Failed`]).
    pub fn offset(&self) -> Option<u64> {
        match *self {
            EventStreamError::PreludeCrcMismatch { offset, .. }
            | EventStreamError::MessageCrcMismatch { offset, .. }
            | EventStreamError::BadLength { offset, .. }
            | EventStreamError::MessageTooLarge { offset, .. }
            | EventStreamError::HeadersTooLarge { offset, .. }
            | EventStreamError::BadHeader { offset, .. }
            | EventStreamError::DuplicateHeader { offset, .. } => Some(offset),
            EventStreamError::Failed => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
