//! How [`Provider::Auto`](super::Provider::Auto) tells the framing of a body
//! (SSE, newline-delimited JSON, the AWS event stream) from its first bytes,
//! the same way for every chunking: the undecided start, until the byte that
//! picks the [`Framing`](super::framing::Framing).
//!
//! The rules are the table "Framing" of the [`providers`](super) module
//! docs.
//!
//! Until the byte that decides comes, the undecided start is fed to the SSE
//! decoder and to a newline-delimited framer alike (neither makes an event
//! of blank bytes), and its first 12 bytes are kept for an event-stream
//! decoder; each framer's error, if any, is held until its framing is
//! picked. The framing picked then goes on from where the undecided start
//! left it: the result is the one the whole body fed at once gives.

use super::{ndjson, StreamError};
use crate::eventstream::{Decoder as FrameDecoder, EventStreamError};
use crate::sse::{DecodeError, Decoder};

/// The UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// An event-stream prelude's length: the most of the undecided start an
/// event-stream decoder reads (no 12 bytes of a BOM and blanks pass a
/// prelude's CRC: see the tests).
const PRELUDE_LEN: usize = 12;

/// The framing the first deciding byte picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Picked {
    Sse,
    Lines,
    EventStream,
}

/// The undecided start of an auto body: a BOM (or the start of one) and
/// blank bytes, as each framing took it.
#[derive(Debug)]
pub(crate) struct Prefix {
    /// BOM bytes matched at the body's start; `None` once past the BOM.
    bom: Option<u8>,
    /// The first bytes, for an event-stream decoder.
    head: [u8; PRELUDE_LEN],
    head_len: usize,
    /// The start as newline-delimited JSON, and the first error it gave.
    lines: ndjson::Lines,
    lines_error: Option<StreamError>,
    /// The first error the SSE decoder gave for the start.
    sse_error: Option<DecodeError>,
}

impl Default for Prefix {
    fn default() -> Self {
        Prefix {
            bom: Some(0),
            head: [0; PRELUDE_LEN],
            head_len: 0,
            lines: ndjson::Lines::default(),
            lines_error: None,
            sse_error: None,
        }
    }
}

impl Prefix {
    /// Splits `chunk` into the part that continues the undecided start and
    /// the rest, with the framing the rest's first byte picks (none: the
    /// whole chunk is undecided). `prefix`: the start so far, if any.
    pub(crate) fn scan(prefix: Option<&Prefix>, chunk: &[u8]) -> (usize, Option<Picked>) {
        let mut bom = prefix.map_or(Some(0), |p| p.bom);
        for (i, &b) in chunk.iter().enumerate() {
            if let Some(matched) = bom {
                if b == BOM[matched as usize] {
                    bom = (matched < 2).then_some(matched + 1);
                    continue;
                }
                if matched > 0 {
                    // The start of a BOM, not a BOM: a line starts with it.
                    return (i, Some(Picked::Sse));
                }
                bom = None;
            }
            match b {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                b'{' => return (i, Some(Picked::Lines)),
                0 => return (i, Some(Picked::EventStream)),
                _ => return (i, Some(Picked::Sse)),
            }
        }
        (chunk.len(), None)
    }

    /// Takes `bytes`, the next part of the undecided start: the SSE decoder
    /// and the line framer read them (errors held), the first 12 are kept.
    pub(crate) fn take(&mut self, bytes: &[u8], sse: &mut Decoder) {
        for &b in bytes {
            self.bom = match self.bom {
                Some(matched) if b == BOM[matched as usize] && matched < 2 => Some(matched + 1),
                _ => None,
            };
        }
        let n = (PRELUDE_LEN - self.head_len).min(bytes.len());
        self.head[self.head_len..self.head_len + n].copy_from_slice(&bytes[..n]);
        self.head_len += n;
        let sse_error = &mut self.sse_error;
        sse.feed_each(bytes, |r| {
            if let Err(e) = r {
                sse_error.get_or_insert(e);
            }
        });
        if self.lines_error.is_none() {
            let max = sse.config().max_line_len;
            if let Err(e) = self.lines.feed(bytes, max, &mut |_| Ok(())) {
                self.lines_error = Some(e);
            }
        }
    }

    /// The SSE decoder's error for the start, if it gave one.
    pub(crate) fn sse_error(&mut self) -> Option<DecodeError> {
        self.sse_error.take()
    }

    /// The line framer that read the start, or its error.
    pub(crate) fn into_lines(self) -> Result<ndjson::Lines, StreamError> {
        match self.lines_error {
            Some(e) => Err(e),
            None => Ok(self.lines),
        }
    }

    /// Feeds the start to an event-stream decoder (its error: the bytes
    /// before a prelude fail the prelude's CRC).
    pub(crate) fn into_frames(self, frames: &mut FrameDecoder) -> Result<(), EventStreamError> {
        // A message is at least 16 bytes: none comes out of 12.
        frames.feed(&self.head[..self.head_len], |_| {})
    }

    /// Bytes held.
    pub(crate) fn footprint(&self) -> usize {
        core::mem::size_of::<Self>() + self.lines.footprint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 12 bytes of blanks, with or without a BOM first, fail an
    /// event-stream prelude's CRC: the event-stream decoder never needs
    /// more of an undecided start than its first 12 bytes.
    #[test]
    fn no_blank_prelude_passes_its_crc() {
        const BLANK: [u8; 4] = [b' ', b'\t', b'\r', b'\n'];
        let passes = |first: &[u8]| {
            let crc = crc32fast::hash(first).to_be_bytes();
            crc.iter().all(|b| BLANK.contains(b))
        };
        let mut tried = 0;
        for n in 0..(1u32 << 16) {
            let bytes: Vec<u8> = (0..8).map(|i| BLANK[(n >> (2 * i)) as usize & 3]).collect();
            assert!(!passes(&bytes), "{bytes:?}");
            tried += 1;
        }
        for n in 0..(1u32 << 10) {
            let mut bytes = BOM.to_vec();
            bytes.extend((0..5).map(|i| BLANK[(n >> (2 * i)) as usize & 3]));
            assert!(!passes(&bytes), "{bytes:?}");
            tried += 1;
        }
        assert_eq!(tried, 65_536 + 1024);
    }

    #[test]
    fn the_first_deciding_byte_picks_the_framing() {
        let cases: [(&[u8], usize, Option<Picked>); 9] = [
            (b"data: x", 0, Some(Picked::Sse)),
            (b"\r\n \t{", 4, Some(Picked::Lines)),
            (b"\xef\xbb\xbf{", 3, Some(Picked::Lines)),
            (b"\xef\xbb\xbf\n\x00", 4, Some(Picked::EventStream)),
            (b"\x00\x00", 0, Some(Picked::EventStream)),
            (b" \n", 2, None),
            (b"\xef\xbb", 2, None),
            (b"\xef\xbb{", 2, Some(Picked::Sse)),
            (b" \xef\xbb\xbf{", 1, Some(Picked::Sse)),
        ];
        for (chunk, len, picked) in cases {
            assert_eq!(Prefix::scan(None, chunk), (len, picked), "{chunk:?}");
        }
        // Split: the BOM's state carries over.
        let mut p = Prefix::default();
        let mut sse = Decoder::new();
        p.take(b"\xef", &mut sse);
        assert_eq!(Prefix::scan(Some(&p), b"\xbb\xbf{"), (2, Some(Picked::Lines)));
        assert_eq!(Prefix::scan(Some(&p), b"\xbb{"), (1, Some(Picked::Sse)));
    }
}
