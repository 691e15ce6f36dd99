//! The sans-IO decoder: bytes in any chunking → messages.

use super::{EventStreamError, Headers, Message};

/// Bounds of a [`Decoder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecoderLimits {
    /// Longest message accepted (default 16 MiB, the AWS limit on one
    /// event-stream message).
    pub max_message_len: u32,
    /// Longest headers section accepted (default 128 KiB, the AWS limit).
    pub max_headers_len: u32,
}

impl Default for DecoderLimits {
    fn default() -> Self {
        DecoderLimits { max_message_len: 16 << 20, max_headers_len: 128 << 10 }
    }
}

/// What [`Decoder::finish`] found at the end of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndOfStream {
    /// Bytes of an unfinished message that were discarded (0: the stream
    /// ended on a message boundary).
    pub discarded_bytes: usize,
}

/// Decodes AWS event-stream messages from bytes fed in any chunking.
#[derive(Debug, Default)]
pub struct Decoder {
    limits: DecoderLimits,
    /// The start of a message split across chunks.
    buf: Vec<u8>,
    /// Bytes of the stream consumed before `buf` (for error offsets).
    offset: u64,
    failed: bool,
}

const PRELUDE_LEN: usize = 12;
/// Prelude and message CRC: the smallest message.
const MIN_MESSAGE_LEN: u32 = 16;

impl Decoder {
    /// A decoder with the default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder with `limits`.
    pub fn with_limits(limits: DecoderLimits) -> Self {
        Decoder { limits, ..Self::default() }
    }

    /// Feeds bytes; `on_message` gets each complete message in order. On a
    /// framing error the messages before it have been delivered and the
    /// decoder accepts no more input ([`EventStreamError::Failed`]).
    pub fn feed(&mut self, mut chunk: &[u8], mut on_message: impl FnMut(Message<'_>)) -> Result<(), EventStreamError> {
        if self.failed {
            return Err(EventStreamError::Failed);
        }
        let result = self.feed_inner(&mut chunk, &mut on_message);
        if result.is_err() {
            self.failed = true;
            self.buf = Vec::new();
        }
        result
    }

    fn feed_inner(
        &mut self,
        chunk: &mut &[u8],
        on_message: &mut impl FnMut(Message<'_>),
    ) -> Result<(), EventStreamError> {
        // First finish a message started in an earlier chunk.
        if !self.buf.is_empty() {
            let need = match self.buffered_len()? {
                Some(total) => total,
                None => {
                    let take = (PRELUDE_LEN - self.buf.len()).min(chunk.len());
                    self.buf.extend_from_slice(&chunk[..take]);
                    *chunk = &chunk[take..];
                    match self.buffered_len()? {
                        Some(total) => total,
                        None => return Ok(()),
                    }
                }
            };
            let take = (need - self.buf.len()).min(chunk.len());
            self.buf.extend_from_slice(&chunk[..take]);
            *chunk = &chunk[take..];
            if self.buf.len() < need {
                return Ok(());
            }
            let buf = std::mem::take(&mut self.buf);
            let message = parse_message(&buf, self.offset)?;
            on_message(message);
            self.offset += buf.len() as u64;
            self.buf = buf;
            self.buf.clear();
        }
        // Then every message that lies whole in the chunk, borrowed.
        loop {
            if chunk.len() < PRELUDE_LEN {
                break;
            }
            let total = self.check_prelude(&chunk[..PRELUDE_LEN])?;
            if chunk.len() < total {
                break;
            }
            let (message, rest) = chunk.split_at(total);
            on_message(parse_message(message, self.offset)?);
            self.offset += total as u64;
            *chunk = rest;
        }
        // Keep the start of the next message.
        self.buf.extend_from_slice(chunk);
        Ok(())
    }

    /// The total length of the buffered message, once its prelude is in.
    fn buffered_len(&self) -> Result<Option<usize>, EventStreamError> {
        if self.buf.len() < PRELUDE_LEN {
            return Ok(None);
        }
        self.check_prelude(&self.buf[..PRELUDE_LEN]).map(Some)
    }

    /// Checks a prelude's CRC, lengths and limits; returns the total length.
    fn check_prelude(&self, prelude: &[u8]) -> Result<usize, EventStreamError> {
        let offset = self.offset;
        let total_len = u32::from_be_bytes(prelude[0..4].try_into().expect("4 bytes"));
        let headers_len = u32::from_be_bytes(prelude[4..8].try_into().expect("4 bytes"));
        let expected = u32::from_be_bytes(prelude[8..12].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&prelude[..8]);
        if expected != computed {
            return Err(EventStreamError::PreludeCrcMismatch { offset, expected, computed });
        }
        if total_len < MIN_MESSAGE_LEN || u64::from(headers_len) > u64::from(total_len - MIN_MESSAGE_LEN) {
            return Err(EventStreamError::BadLength { offset, total_len, headers_len });
        }
        if total_len > self.limits.max_message_len {
            return Err(EventStreamError::MessageTooLarge { offset, total_len, limit: self.limits.max_message_len });
        }
        if headers_len > self.limits.max_headers_len {
            return Err(EventStreamError::HeadersTooLarge { offset, headers_len, limit: self.limits.max_headers_len });
        }
        Ok(total_len as usize)
    }

    /// The end of the input: reports the bytes of an unfinished message
    /// (they are dropped) and resets the decoder for a new stream.
    pub fn finish(&mut self) -> EndOfStream {
        let end = EndOfStream { discarded_bytes: self.buf.len() };
        self.buf.clear();
        self.offset = 0;
        self.failed = false;
        end
    }

    /// Bytes held for a message split across chunks.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

/// Parses one whole message whose prelude was checked.
fn parse_message(bytes: &[u8], offset: u64) -> Result<Message<'_>, EventStreamError> {
    let headers_len = u32::from_be_bytes(bytes[4..8].try_into().expect("4 bytes")) as usize;
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let expected = u32::from_be_bytes(crc.try_into().expect("4 bytes"));
    let computed = crc32fast::hash(body);
    if expected != computed {
        return Err(EventStreamError::MessageCrcMismatch { offset, expected, computed });
    }
    let headers = Headers::parse(&body[PRELUDE_LEN..PRELUDE_LEN + headers_len], offset)?;
    Ok(Message { headers, payload: &body[PRELUDE_LEN + headers_len..] })
}
