//! Layer 2: lines → events, the WHATWG HTML "event stream" interpretation.
//!
//! The decoder implements, exactly:
//! * one leading U+FEFF stripped at stream start only;
//! * `:` comment lines; a line with no colon is a field name with an empty
//!   value; exactly one space after the colon is removed;
//! * `data` lines joined with LF; the event type defaults to `message`;
//! * an `id` containing NUL is ignored; the last event ID persists across
//!   events and an empty `id` resets it to the empty string;
//! * `retry` only when all ASCII digits; unknown fields ignored;
//! * a blank line dispatches; no dispatch when the data buffer is empty (the
//!   event type is still reset);
//! * at end of stream an unterminated event is discarded, and
//!   [`Decoder::finish`] reports how many bytes were, so a truncated stream is
//!   detectable;
//! * invalid UTF-8 is decoded with U+FFFD replacement, or refused with
//!   [`DecodeError::InvalidUtf8`] under [`Utf8Mode::Strict`].
//!
//! Limits: a line longer than [`DecoderConfig::max_line_len`], an event
//! whose data exceeds [`DecoderConfig::max_event_size`] or an `id` longer
//! than [`DecoderConfig::max_id_len`] gives a typed error; the decoder then
//! skips to the next blank line and goes on. Memory stays within the limits
//! plus a constant whatever the input.

use core::ops::Range;

use super::buffer::{release_large, KEEP_CAPACITY};
use super::event::{Event, OwnedEvent};
use super::fields::{parse_field, parse_retry, Field};
use super::lines::{Cursor, LineRef, LineSplitter};

/// Default for [`DecoderConfig::max_line_len`] and
/// [`DecoderConfig::max_event_size`]: 16 MiB.
pub const DEFAULT_LIMIT: usize = 16 << 20;

/// Default for [`DecoderConfig::max_id_len`]: 4 KiB.
///
/// The last event ID is carried by every event dispatched after it (a
/// binding that copies it per event multiplies it by the event count) and
/// is sent back as the `Last-Event-ID` request header, where servers cap a
/// header line at a few KiB (8 KiB is common). Real ids — counters, UUIDs,
/// opaque cursors — are well under 200 bytes.
pub const DEFAULT_MAX_ID_LEN: usize = 4 << 10;

/// How invalid UTF-8 in field values is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Utf8Mode {
    /// Replace each maximal invalid sequence with U+FFFD (the spec).
    #[default]
    Replace,
    /// Refuse the event with [`DecodeError::InvalidUtf8`].
    Strict,
}

impl Utf8Mode {
    /// The wire name: `replace` or `strict` (Python's `utf8=`).
    pub fn name(self) -> &'static str {
        match self {
            Utf8Mode::Replace => "replace",
            Utf8Mode::Strict => "strict",
        }
    }

    /// The mode of a wire name; an unknown one is a
    /// [`ConfigError::UnknownValue`](crate::config::ConfigError::UnknownValue).
    pub fn from_name(name: &str) -> Result<Self, crate::config::ConfigError> {
        match name {
            "replace" => Ok(Utf8Mode::Replace),
            "strict" => Ok(Utf8Mode::Strict),
            _ => Err(crate::config::ConfigError::UnknownValue {
                field: "utf8",
                value: name.to_owned(),
                allowed: "replace, strict",
            }),
        }
    }
}

/// Limits and options of a [`Decoder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecoderConfig {
    /// Longest line accepted, in bytes, terminator excluded.
    pub max_line_len: usize,
    /// Largest data buffer of one event, in bytes.
    pub max_event_size: usize,
    /// Longest `id` value accepted, in bytes (default
    /// [`DEFAULT_MAX_ID_LEN`], 4 KiB). A longer one gives
    /// [`DecodeError::IdTooLong`]: the id in force is kept and the block is
    /// skipped, like the other limits.
    pub max_id_len: usize,
    /// What to do with invalid UTF-8.
    pub utf8: Utf8Mode,
}

impl DecoderConfig {
    /// Checks every limit against its range ([`crate::config`]: each must
    /// be at least 1).
    pub fn validate(&self) -> Result<(), crate::config::ConfigError> {
        crate::providers::StreamConfig { sse: self.clone(), ..Default::default() }.validate()
    }
}

impl Default for DecoderConfig {
    fn default() -> Self {
        DecoderConfig {
            max_line_len: DEFAULT_LIMIT,
            max_event_size: DEFAULT_LIMIT,
            max_id_len: DEFAULT_MAX_ID_LEN,
            utf8: Utf8Mode::Replace,
        }
    }
}

/// A decoding error. The decoder stays usable: after a limit error it skips
/// to the next blank line; after a UTF-8 error the event is dropped.
///
/// Offsets are stream byte offsets (from the first byte fed since the last
/// [`Decoder::finish`]), the same for every chunking of the same bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A line was longer than the limit. `offset` is where the line starts.
    #[error("SSE line longer than {limit} bytes at offset {offset}")]
    LineTooLong {
        /// The configured limit.
        limit: usize,
        /// Stream offset of the line.
        offset: u64,
    },
    /// An event's data grew past the limit. `offset` is where the data line
    /// that crossed it starts.
    #[error("SSE event data larger than {limit} bytes at offset {offset}")]
    EventTooLarge {
        /// The configured limit.
        limit: usize,
        /// Stream offset of the line that crossed the limit.
        offset: u64,
    },
    /// An `id` value was longer than the limit: the id in force is kept and
    /// the block is skipped. `offset` is where the `id` line starts.
    #[error("SSE id longer than {limit} bytes at offset {offset}")]
    IdTooLong {
        /// The configured limit.
        limit: usize,
        /// Stream offset of the `id` line.
        offset: u64,
    },
    /// Invalid UTF-8 under [`Utf8Mode::Strict`]. `field` is `"data"`,
    /// `"event"` or `"id"`; `offset` is where the event block (for data and
    /// event) or the id line starts.
    #[error("invalid UTF-8 in SSE field {field:?} at offset {offset}")]
    InvalidUtf8 {
        /// Which field held it.
        field: &'static str,
        /// Stream offset of the block or line.
        offset: u64,
    },
}

impl DecodeError {
    /// The stream offset the error names (see each variant).
    pub fn offset(&self) -> u64 {
        match *self {
            DecodeError::LineTooLong { offset, .. }
            | DecodeError::EventTooLarge { offset, .. }
            | DecodeError::IdTooLong { offset, .. }
            | DecodeError::InvalidUtf8 { offset, .. } => offset,
        }
    }
}

/// What [`Decoder::finish`] found at end of stream.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EndOfStream {
    /// Bytes after the last event boundary (blank line) that were discarded:
    /// an unterminated event, comment or partial line. Zero for a stream that
    /// ends cleanly.
    pub discarded_bytes: u64,
    /// The event the discarded bytes would have dispatched had a blank line
    /// followed (the partial last line counted as a line), if they held data.
    /// Per the spec it is **not** dispatched; it is shown so that a layer above
    /// can decide (the provider streams do, see their docs).
    pub unterminated: Option<OwnedEvent>,
}

/// Where a block value currently lies.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Empty,
    /// In the chunk being decoded (spilled to the buffer at chunk end).
    Chunk(Range<usize>),
    /// In the block's own buffer.
    Buf,
}

/// The event block being collected.
#[derive(Debug, Clone)]
struct Block {
    data: Slot,
    data_buf: Vec<u8>,
    event_type: Slot,
    type_buf: Vec<u8>,
    retry: Option<u64>,
    /// An `id` field was accepted in this block (commit it at the blank line).
    id_changed: bool,
    /// Stream offset of the block's first line; `None` before it.
    start: Option<u64>,
    /// A limit error happened in this block: skip to the next blank line.
    skipping: bool,
    /// The last call dispatched from the buffers: clear them on the next.
    dispatched: bool,
    /// U+FFFD-replacement output for data and event type.
    data_scratch: String,
    type_scratch: String,
}

impl Block {
    fn new() -> Self {
        Block {
            data: Slot::Empty,
            data_buf: Vec::new(),
            event_type: Slot::Empty,
            type_buf: Vec::new(),
            retry: None,
            id_changed: false,
            start: None,
            skipping: false,
            dispatched: false,
            data_scratch: String::new(),
            type_scratch: String::new(),
        }
    }

    /// Forgets the block's fields (not the id, which lives in the decoder).
    /// A buffer a large event grew is released, not kept for the stream's life.
    #[inline]
    fn clear(&mut self) {
        // Values borrowed from the chunk (nearly every event) left the
        // buffers untouched: only a buffered value has one to clear.
        if matches!(self.data, Slot::Buf) {
            release_large(&mut self.data_buf);
        }
        if self.data_scratch.capacity() > KEEP_CAPACITY {
            self.data_scratch = String::new();
        }
        self.data = Slot::Empty;
        self.event_type = Slot::Empty;
        self.retry = None;
        self.id_changed = false;
    }

    fn capacity(&self) -> usize {
        self.data_buf.capacity()
            + self.type_buf.capacity()
            + self.data_scratch.capacity()
            + self.type_scratch.capacity()
    }
}

/// The incremental SSE decoder: feed it chunks, get borrowed events.
///
/// Sans-IO: it never reads or waits; every chunking of the same bytes gives
/// the same events, errors and end-of-stream report. In steady state it makes
/// no heap allocation per event: a single-line event lying whole in a chunk
/// is borrowed from it, anything else is assembled in buffers that are
/// reused.
///
/// ```
/// use ssefold::sse::Decoder;
///
/// let mut d = Decoder::new();
/// let mut events = d.feed(b"id: 7\ndata: a\ndata: b\n\n: comment\n");
/// let e = events.next_event().unwrap().unwrap();
/// assert_eq!((e.event(), e.data(), e.id()), ("message", "a\nb", Some("7")));
/// assert!(events.next_event().is_none());
/// assert_eq!(d.finish().discarded_bytes, 10); // the comment line
/// ```
#[derive(Debug, Clone)]
pub struct Decoder {
    lines: LineSplitter,
    block: Block,
    /// Known to hold nothing between events: no block started or being
    /// skipped, nothing dispatched from the buffers, a clean splitter. Only
    /// the whole-event path runs while it is set (it changes none of that);
    /// anything else clears it, and the next call looks again.
    pending_nothing: bool,
    config: DecoderConfig,
    /// The last event ID buffer (may hold an uncommitted value mid-block).
    id_buf: String,
    has_id: bool,
    /// The last event ID string, committed at each blank line.
    committed_id: String,
    has_committed_id: bool,
    /// Bumped whenever `id_buf` may have changed (see [`Event::id_generation`]).
    id_generation: u64,
    reconnection_time: Option<u64>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder with the default limits (16 MiB lines and events) and
    /// U+FFFD replacement.
    pub fn new() -> Self {
        Decoder::with_config(DecoderConfig::default())
    }

    /// A decoder with the given limits and options.
    pub fn with_config(config: DecoderConfig) -> Self {
        Decoder {
            lines: LineSplitter::new(config.max_line_len),
            block: Block::new(),
            pending_nothing: false,
            config,
            id_buf: String::new(),
            has_id: false,
            committed_id: String::new(),
            has_committed_id: false,
            id_generation: 0,
            reconnection_time: None,
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &DecoderConfig {
        &self.config
    }

    /// Decodes `chunk`: iterate the result with [`Events::next_event`].
    ///
    /// Bytes are consumed as the iteration goes; if the [`Events`] is
    /// dropped before it returned `None`, the bytes from
    /// [`Events::consumed`] on were not decoded and must be fed again.
    #[must_use = "events are decoded as the iterator is driven"]
    pub fn feed<'a>(&'a mut self, chunk: &'a [u8]) -> Events<'a> {
        // One SIMD pass validates the chunk: values inside its valid prefix
        // are then sliced from it as `&str` without validating them again.
        let text = match simdutf8::basic::from_utf8(chunk) {
            Ok(s) => s,
            // Slower, but tells where the valid prefix ends (invalid input or
            // a character split at the chunk's end).
            Err(_) => match simdutf8::compat::from_utf8(chunk) {
                Ok(s) => s,
                Err(e) => core::str::from_utf8(&chunk[..e.valid_up_to()]).unwrap_or_default(),
            },
        };
        Events { decoder: self, chunk, text, cur: Cursor::new() }
    }

    /// Decodes all of `chunk`, calling `on_event` for each event or error.
    pub fn feed_each(&mut self, chunk: &[u8], mut on_event: impl FnMut(Result<Event<'_>, DecodeError>)) {
        let mut events = self.feed(chunk);
        while let Some(e) = events.next_event() {
            on_event(e);
        }
    }

    /// The last event ID string: the value of the last accepted `id` field
    /// as of the last blank line, sent as `Last-Event-ID` on reconnection.
    /// Kept across [`finish`](Self::finish).
    pub fn last_event_id(&self) -> Option<&str> {
        self.has_committed_id.then_some(self.committed_id.as_str())
    }

    /// The stream's reconnection time in milliseconds: the last valid `retry`
    /// field seen, if any. Kept across [`finish`](Self::finish).
    pub fn reconnection_time(&self) -> Option<u64> {
        self.reconnection_time
    }

    /// Bytes the decoder holds in its buffers (capacity) plus its own size:
    /// its memory footprint.
    pub fn memory_footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.lines.buffer_capacity()
            + self.block.capacity()
            + self.id_buf.capacity()
            + self.committed_id.capacity()
    }

    /// Ends the stream: the unterminated event, if any, is discarded (per
    /// the spec) and reported. The decoder is then ready for a new stream
    /// (a reconnection): the last event ID and reconnection time are kept.
    pub fn finish(&mut self) -> EndOfStream {
        self.pending_nothing = false;
        if self.block.dispatched {
            self.block.dispatched = false;
            self.block.clear();
        }
        let discarded_bytes = match self.block.start {
            Some(start) => self.lines.offset() - start,
            None => self.lines.pending_len(),
        };
        let mut unterminated = None;
        if !self.block.skipping {
            if let Some(partial) = self.lines.pending_line() {
                if !partial.is_empty() {
                    let partial = partial.to_vec();
                    let start = self.lines.offset() - partial.len() as u64;
                    // An error here only means the would-be event is invalid.
                    self.block.start.get_or_insert(start);
                    let _ = self.on_field(&partial, None, &[], start);
                }
            }
            if !matches!(self.block.data, Slot::Empty) && !self.block.skipping {
                if let Ok(e) = self.build_event(&[], "", self.block.start.unwrap_or(0)) {
                    unterminated = Some(e.to_owned_event());
                }
            }
        }
        self.block.clear();
        self.block.dispatched = false;
        self.block.skipping = false;
        self.block.start = None;
        self.lines.reset();
        // The unterminated block's id, if any, is discarded with it.
        if self.id_buf != self.committed_id || self.has_id != self.has_committed_id {
            self.id_buf.clone_from(&self.committed_id);
            self.has_id = self.has_committed_id;
            self.id_generation += 1;
        }
        EndOfStream { discarded_bytes, unterminated }
    }

    /// Forgets everything, including the last event ID and reconnection
    /// time: a fresh decoder with the same configuration and buffers.
    pub fn reset(&mut self) {
        self.finish();
        self.id_buf.clear();
        self.committed_id.clear();
        self.has_id = false;
        self.has_committed_id = false;
        self.id_generation += 1;
        self.reconnection_time = None;
    }

    #[inline(always)]
    fn next_in<'s>(
        &'s mut self,
        chunk: &'s [u8],
        text: &'s str,
        cur: &mut Cursor,
    ) -> Option<Result<Event<'s>, DecodeError>> {
        if !self.pending_nothing {
            if self.block.dispatched {
                self.block.dispatched = false;
                self.block.clear();
            }
            self.pending_nothing = self.block.start.is_none() && !self.block.skipping && self.lines.is_clean();
            // An event whose `data:` line the last chunk's end cut.
            if !self.pending_nothing && cur.pos == 0 && self.data_line_completes(chunk, cur) {
                let block_start = self.block.start.take().unwrap_or_default();
                self.block.dispatched = true;
                return Some(self.build_event(chunk, text, block_start));
            }
        }
        // Fastest path: nearly every event, read whole when nothing is
        // pending (no block started, nothing skipped, a clean splitter).
        if self.pending_nothing {
            if let Some((event, data, after)) = self.whole_event(chunk, text, cur) {
                // Stream offset of chunk[0].
                let base = self.lines.offset() - cur.pos as u64;
                cur.pos = after;
                self.lines.sync_offset(base + after as u64);
                let id = self.has_id.then_some(self.id_buf.as_str());
                return Some(Ok(Event { event, data, id, retry: None, id_generation: self.id_generation }));
            }
            // Anything else changes the state: looked at again on the next
            // call.
            self.pending_nothing = false;
            // The event the chunk's end cuts, most often.
            if self.unfinished_event_kept(chunk, cur) {
                return None;
            }
        }
        self.next_by_lines(chunk, text, cur)
    }

    /// The next event or error, line by line: every case
    /// [`whole_event`](Self::whole_event) leaves.
    #[inline(never)]
    fn next_by_lines<'s>(
        &'s mut self,
        chunk: &'s [u8],
        text: &'s str,
        cur: &mut Cursor,
    ) -> Option<Result<Event<'s>, DecodeError>> {
        // Stream offset of chunk[0].
        let base = self.lines.offset() - cur.pos as u64;
        loop {
            // Fast path: whole LF-terminated lines lying in the chunk, while
            // the splitter holds nothing (no tail, no pending CR, BOM settled).
            if self.lines.is_clean() {
                while let Some(end) = self.lines.lf_line_end(chunk, cur) {
                    let start = cur.pos;
                    cur.pos = end + 1;
                    if end == start {
                        self.lines.sync_offset(base + cur.pos as u64);
                        if let Some(block_start) = self.on_blank_line(base + start as u64) {
                            return Some(self.build_event(chunk, text, block_start));
                        }
                        continue;
                    }
                    self.block.start.get_or_insert(base + start as u64);
                    if self.block.skipping {
                        continue;
                    }
                    // The two lines of nearly every event, handled in place:
                    // `event: …`, and the first `data: …` of a block.
                    let line = &chunk[start..end];
                    if let Some(value) = value_of(line, b"event:") {
                        self.block.event_type = Slot::Chunk(start + value..end);
                        continue;
                    }
                    if matches!(self.block.data, Slot::Empty) && end - start <= self.config.max_event_size {
                        if let Some(value) = value_of(line, b"data:") {
                            self.block.data = Slot::Chunk(start + value..end);
                            continue;
                        }
                    }
                    if let Err(e) = self.on_field(line, Some(start), chunk, base + start as u64) {
                        self.lines.sync_offset(base + cur.pos as u64);
                        return Some(Err(e));
                    }
                }
                self.lines.sync_offset(base + cur.pos as u64);
            }
            // Slow path: one line through the splitter (tails across chunks,
            // CR endings, the BOM, over-long lines).
            let Some(line) = self.lines.next_line(chunk, cur) else {
                self.spill(chunk);
                return None;
            };
            let range = match line.at {
                LineRef::TooLong => {
                    self.block.start.get_or_insert(line.start);
                    self.skip_block();
                    return Some(Err(DecodeError::LineTooLong { limit: self.config.max_line_len, offset: line.start }));
                }
                LineRef::Chunk(r) => Some(r),
                LineRef::Tail => None,
            };
            if range.as_ref().is_some_and(Range::is_empty) {
                if let Some(block_start) = self.on_blank_line(line.start) {
                    return Some(self.build_event(chunk, text, block_start));
                }
                continue;
            }
            self.block.start.get_or_insert(line.start);
            if self.block.skipping {
                continue;
            }
            let result = match range {
                Some(r) => self.on_field(&chunk[r.clone()], Some(r.start), chunk, line.start),
                None => {
                    let result = self.on_field_tail(chunk, line.start);
                    // Applied: the splitter may be clean again, and the
                    // chunk's next lines taken on the fast path.
                    self.lines.release_handed_out();
                    result
                }
            };
            if let Err(e) = result {
                return Some(Err(e));
            }
        }
    }

    /// At a chunk's start: when the last chunk ended in the middle of a
    /// `data:` line, the first of its block, of a block with nothing but an
    /// `event:` line before it, and this chunk holds the rest of the line
    /// and then the blank line (LF endings, within the limits), the line is
    /// taken into the block's data and the blank line consumed: the block is
    /// then ready to dispatch, as the line-by-line path would leave it
    /// (`true`). Anything else changes nothing (`false`): the line-by-line
    /// path goes on. An unfinished `event:` line is completed by
    /// [`event_line_completes`](Self::event_line_completes).
    #[inline(never)]
    fn data_line_completes(&mut self, chunk: &[u8], cur: &mut Cursor) -> bool {
        let b = &self.block;
        if !matches!(b.data, Slot::Empty) || b.skipping || b.id_changed || b.retry.is_some() {
            return false;
        }
        let Some(head) = self.lines.unfinished_line() else {
            return false;
        };
        // At least one byte after the colon: a space first in the chunk would
        // be the one the field rule removes.
        let Some(value) = value_of(head, b"data:").filter(|_| head.len() > 5) else {
            return self.event_line_completes(chunk, cur);
        };
        let bound = cur.cr_bound(chunk, 0);
        let Some(end) = cur.find_lf(chunk, 0, bound) else {
            return false;
        };
        let limits = &self.config;
        let head_len = head.len();
        let line_len = head_len + end;
        if chunk.get(end + 1) != Some(&b'\n')
            || line_len > limits.max_line_len
            || line_len - value > limits.max_event_size
        {
            return false;
        }
        // The whole line in the tail first, as the line-by-line path
        // assembles it (so the tail's capacity follows the same lines).
        let line = self.lines.tail_mut();
        line.extend_from_slice(&chunk[..end]);
        let data = &mut self.block.data_buf;
        data.clear();
        data.extend_from_slice(&line[value..]);
        self.block.data = Slot::Buf;
        // A block whose first line this is starts where the line does.
        let line_start = self.lines.offset() - head_len as u64;
        self.block.start.get_or_insert(line_start);
        let offset = self.lines.offset() + end as u64 + 2;
        self.lines.take_unfinished(offset);
        cur.pos = end + 2;
        true
    }

    /// At the end of a chunk, with nothing pending before `cur.pos`: when
    /// the rest of the chunk is an unfinished line, after at most one whole
    /// `event:` line (LF endings, no CR, within the limits), the `event:`
    /// line is taken into the block and the unfinished line kept by the
    /// splitter, leaving both as the line-by-line path would; the chunk is
    /// used up (`true`). Anything else changes nothing (`false`).
    #[inline(never)]
    fn unfinished_event_kept(&mut self, chunk: &[u8], cur: &mut Cursor) -> bool {
        debug_assert!(matches!((&self.block.data, &self.block.event_type), (Slot::Empty, Slot::Empty)));
        debug_assert!(self.block.start.is_none() && !self.block.skipping && self.lines.is_clean());
        let start = cur.pos;
        let len = chunk.len();
        if start >= len || cur.cr_bound(chunk, start) != len {
            return false;
        }
        let max = self.config.max_line_len;
        let (event_line, rest) = match cur.find_lf(chunk, start, len) {
            None => (None, start),
            Some(end) => {
                let Some(value) = value_of(&chunk[start..end], b"event:") else {
                    return false;
                };
                if end - start > max || end + 1 == len || cur.find_lf(chunk, end + 1, len).is_some() {
                    return false;
                }
                (Some(start + value..end), end + 1)
            }
        };
        if len - rest > max {
            return false;
        }
        // Stream offset of chunk[0].
        let base = self.lines.offset() - start as u64;
        if let Some(value) = event_line {
            let b = &mut self.block;
            b.type_buf.clear();
            b.type_buf.extend_from_slice(&chunk[value]);
            b.event_type = Slot::Buf;
            b.start = Some(base + start as u64);
        }
        self.lines.keep_unfinished_line(base + rest as u64, &chunk[rest..]);
        cur.pos = len;
        true
    }

    /// The event that starts at `cur.pos` when it has the shape nearly every
    /// provider sends, all of it in this chunk: an optional `event:` line, one
    /// `data:` line and the blank line, each ending in a lone LF, within the
    /// limits and in the chunk's valid UTF-8 prefix. Returns its type, its
    /// data and the chunk offset after the blank line; the event is what the
    /// line-by-line path gives for the same lines (there, the block would
    /// start and end within these lines and leave nothing behind). `None`
    /// changes nothing (the cursor only caches where the next CR is): the
    /// line-by-line path takes the event.
    ///
    /// Called only with an empty block (no line since the last blank line)
    /// and a clean splitter.
    #[inline(always)]
    fn whole_event<'t>(&self, chunk: &[u8], text: &'t str, cur: &mut Cursor) -> Option<(&'t str, &'t str, usize)> {
        debug_assert!(matches!((&self.block.data, &self.block.event_type), (Slot::Empty, Slot::Empty)));
        debug_assert!(self.block.retry.is_none() && !self.block.id_changed && !self.block.dispatched);
        let start = cur.pos;
        if matches!(chunk.get(start), None | Some(b'\n')) {
            return None;
        }
        // Both lines end before the next CR (a CR ends a line too).
        let bound = cur.cr_bound(chunk, start);
        let end = cur.find_lf(chunk, start, bound)?;
        let (event, data_start, data_end) = if chunk[start..end].starts_with(b"event:") {
            let value = if chunk.get(start + 6) == Some(&b' ') { 7 } else { 6 };
            (start + value..end, end + 1, cur.find_lf(chunk, end + 1, bound)?)
        } else {
            (0..0, start, end)
        };
        let line = &chunk[data_start..data_end];
        let limits = &self.config;
        if !line.starts_with(b"data:")
            || chunk.get(data_end + 1) != Some(&b'\n')
            || end - start > limits.max_line_len
            || line.len() > limits.max_line_len.min(limits.max_event_size)
        {
            return None;
        }
        let value = if line.get(5) == Some(&b' ') { 6 } else { 5 };
        // Sliced as `..end` then `start..`: two one-sided checks, small
        // enough to be inlined in every caller (the C ABI's feed loop kept
        // the two-sided `get` out of line: 40 instructions an event).
        let data = text.get(..data_end)?.get(data_start + value..)?;
        let event = match text.get(..event.end)?.get(event.start..)? {
            "" => "message",
            event => event,
        };
        Some((event, data, data_end + 2))
    }

    /// Whether `chunk[start..end]` (`end` an LF) is a `data:` line within
    /// the limits followed by the blank line: the chunk offset of its value.
    #[inline(always)]
    fn data_line_then_blank(&self, chunk: &[u8], start: usize, end: usize) -> Option<usize> {
        let line = &chunk[start..end];
        let limits = &self.config;
        if !line.starts_with(b"data:")
            || chunk.get(end + 1) != Some(&b'\n')
            || line.len() > limits.max_line_len.min(limits.max_event_size)
        {
            return None;
        }
        Some(start + if line.get(5) == Some(&b' ') { 6 } else { 5 })
    }

    /// At a chunk's start: when the last chunk ended in the middle of an
    /// `event:` line, the first of its block, and this chunk holds the rest
    /// of it, one `data:` line and the blank line (LF endings, within the
    /// limits), the block is made ready to dispatch as the line-by-line path
    /// would leave it, its data borrowed from the chunk (`true`). Anything
    /// else changes nothing (`false`).
    #[inline(always)]
    fn event_line_completes(&mut self, chunk: &[u8], cur: &mut Cursor) -> bool {
        let b = &self.block;
        if b.start.is_some() || b.skipping || !matches!((&b.data, &b.event_type), (Slot::Empty, Slot::Empty)) {
            return false;
        }
        let Some(head) = self.lines.unfinished_line().filter(|head| head.starts_with(b"event:")) else {
            return false;
        };
        let head_len = head.len();
        let bound = cur.cr_bound(chunk, 0);
        let Some(end) = cur.find_lf(chunk, 0, bound) else {
            return false;
        };
        let Some(data_end) = cur.find_lf(chunk, end + 1, bound) else {
            return false;
        };
        if head_len + end > self.config.max_line_len {
            return false;
        }
        let Some(value) = self.data_line_then_blank(chunk, end + 1, data_end) else {
            return false;
        };
        // The whole line in the tail first, as the line-by-line path
        // assembles it.
        let line = self.lines.tail_mut();
        line.extend_from_slice(&chunk[..end]);
        let event = value_of(line, b"event:").unwrap_or(line.len());
        let b = &mut self.block;
        b.type_buf.clear();
        b.type_buf.extend_from_slice(&line[event..]);
        b.event_type = Slot::Buf;
        b.data = Slot::Chunk(value..data_end);
        // The block starts where the line does.
        b.start = Some(self.lines.offset() - head_len as u64);
        let offset = self.lines.offset() + data_end as u64 + 2;
        self.lines.take_unfinished(offset);
        cur.pos = data_end + 2;
        true
    }

    /// A blank line at stream offset `at`: commits the id and ends the block.
    /// Returns the block's start when it holds data to dispatch (the block is
    /// then cleared lazily, once the event view is gone).
    #[inline]
    fn on_blank_line(&mut self, at: u64) -> Option<u64> {
        if self.block.skipping {
            self.block.skipping = false;
        } else if self.block.id_changed {
            self.committed_id.clone_from(&self.id_buf);
            self.has_committed_id = self.has_id;
        }
        let block_start = self.block.start.take().unwrap_or(at);
        if !matches!(self.block.data, Slot::Empty) {
            self.block.dispatched = true;
            return Some(block_start);
        }
        self.block.clear();
        None
    }

    fn on_field_tail(&mut self, chunk: &[u8], start: u64) -> Result<(), DecodeError> {
        // The tail is cleared on the next splitter call only, so it can be
        // moved out and back to satisfy the borrow of `self`.
        let tail = core::mem::take(self.lines.tail_mut());
        let result = self.on_field(&tail, None, chunk, start);
        *self.lines.tail_mut() = tail;
        result
    }

    /// Applies one non-empty line. `line_at` is the line's offset in `chunk`
    /// when it lies there (so values can stay borrowed).
    #[inline]
    fn on_field(&mut self, line: &[u8], line_at: Option<usize>, chunk: &[u8], start: u64) -> Result<(), DecodeError> {
        let in_chunk = |r: &Range<usize>| line_at.map(|at| at + r.start..at + r.end);
        match parse_field(line) {
            Field::Data(r) => {
                let value = &line[r.clone()];
                let limit = self.config.max_event_size;
                let b = &mut self.block;
                let new_len = match &b.data {
                    Slot::Empty => value.len(),
                    Slot::Chunk(c) => c.len() + 1 + value.len(),
                    Slot::Buf => b.data_buf.len() + 1 + value.len(),
                };
                if new_len > limit {
                    self.skip_block();
                    return Err(DecodeError::EventTooLarge { limit, offset: start });
                }
                match core::mem::replace(&mut b.data, Slot::Buf) {
                    Slot::Empty => match in_chunk(&r) {
                        Some(c) => b.data = Slot::Chunk(c),
                        None => {
                            b.data_buf.clear();
                            b.data_buf.extend_from_slice(value);
                        }
                    },
                    Slot::Chunk(c) => {
                        b.data_buf.clear();
                        b.data_buf.extend_from_slice(&chunk[c]);
                        b.data_buf.push(b'\n');
                        b.data_buf.extend_from_slice(value);
                    }
                    Slot::Buf => {
                        b.data_buf.push(b'\n');
                        b.data_buf.extend_from_slice(value);
                    }
                }
            }
            Field::Event(r) => {
                let b = &mut self.block;
                match in_chunk(&r) {
                    Some(c) => b.event_type = Slot::Chunk(c),
                    None => {
                        b.type_buf.clear();
                        b.type_buf.extend_from_slice(&line[r]);
                        b.event_type = Slot::Buf;
                    }
                }
            }
            Field::Id(r) => {
                let value = &line[r];
                if value.len() > self.config.max_id_len {
                    self.skip_block();
                    return Err(DecodeError::IdTooLong { limit: self.config.max_id_len, offset: start });
                }
                if memchr::memchr(0, value).is_none() {
                    self.id_generation += 1;
                    match core::str::from_utf8(value) {
                        Ok(s) => {
                            self.id_buf.clear();
                            self.id_buf.push_str(s);
                        }
                        Err(_) if self.config.utf8 == Utf8Mode::Strict => {
                            self.skip_block();
                            return Err(DecodeError::InvalidUtf8 { field: "id", offset: start });
                        }
                        Err(_) => replace_invalid(value, &mut self.id_buf),
                    }
                    self.has_id = true;
                    self.block.id_changed = true;
                }
            }
            Field::Retry(r) => {
                if let Some(ms) = parse_retry(&line[r]) {
                    self.reconnection_time = Some(ms);
                    self.block.retry = Some(ms);
                }
            }
            Field::Comment(_) | Field::Unknown => {}
        }
        Ok(())
    }

    /// Moves block values that point into `chunk` into the block's buffers,
    /// before the chunk goes away.
    fn spill(&mut self, chunk: &[u8]) {
        let b = &mut self.block;
        if let Slot::Chunk(r) = &b.data {
            b.data_buf.clear();
            b.data_buf.extend_from_slice(&chunk[r.clone()]);
            b.data = Slot::Buf;
        }
        if let Slot::Chunk(r) = &b.event_type {
            b.type_buf.clear();
            b.type_buf.extend_from_slice(&chunk[r.clone()]);
            b.event_type = Slot::Buf;
        }
    }

    /// Drops the current block after an error and skips to the next blank
    /// line.
    fn skip_block(&mut self) {
        self.block.clear();
        self.block.skipping = true;
    }

    /// The event of the current block. The block's slots are left for the
    /// caller to clear (lazily, on the next call).
    ///
    /// `text` is the valid UTF-8 prefix of `chunk`: values inside it are
    /// sliced from it, anything else is validated (or replaced) here.
    #[inline(always)]
    fn build_event<'s>(
        &'s mut self,
        chunk: &'s [u8],
        text: &'s str,
        block_start: u64,
    ) -> Result<Event<'s>, DecodeError> {
        let strict = self.config.utf8 == Utf8Mode::Strict;
        let Block { data, data_buf, event_type, type_buf, retry, data_scratch, type_scratch, .. } = &mut self.block;
        let (data_buf, type_buf): (&'s Vec<u8>, &'s Vec<u8>) = (data_buf, type_buf);
        let data = match data {
            Slot::Chunk(r) => text.get(r.clone()).or_else(|| decode_utf8(&chunk[r.clone()], data_scratch, strict)),
            _ => decode_utf8(data_buf, data_scratch, strict),
        }
        .ok_or(DecodeError::InvalidUtf8 { field: "data", offset: block_start })?;
        let mut event = match event_type {
            Slot::Chunk(r) => text.get(r.clone()).or_else(|| decode_utf8(&chunk[r.clone()], type_scratch, strict)),
            Slot::Buf => decode_utf8(type_buf, type_scratch, strict),
            Slot::Empty => Some(""),
        }
        .ok_or(DecodeError::InvalidUtf8 { field: "event", offset: block_start })?;
        if event.is_empty() {
            event = "message";
        }
        let id = self.has_id.then_some(self.id_buf.as_str());
        Ok(Event { event, data, id, retry: *retry, id_generation: self.id_generation })
    }
}

/// Where the value of `line` starts if the line is field `name_colon`
/// (`b"data:"`, …): after the colon and one optional space.
#[inline]
fn value_of(line: &[u8], name_colon: &[u8]) -> Option<usize> {
    if !line.starts_with(name_colon) {
        return None;
    }
    let at = name_colon.len();
    Some(if line.get(at) == Some(&b' ') { at + 1 } else { at })
}

/// The bytes as `&str`: borrowed when valid, else replaced into `scratch`
/// (or `None` when `strict`).
fn decode_utf8<'s>(bytes: &'s [u8], scratch: &'s mut String, strict: bool) -> Option<&'s str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => Some(s),
        Err(_) if strict => None,
        Err(_) => {
            replace_invalid(bytes, scratch);
            Some(scratch)
        }
    }
}

/// Writes `bytes` into `out`, each maximal invalid sequence replaced by
/// U+FFFD (the WHATWG "UTF-8 decode" behaviour).
fn replace_invalid(bytes: &[u8], out: &mut String) {
    out.clear();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            out.push('\u{FFFD}');
        }
    }
}

/// The events of one chunk, decoded as they are asked for.
///
/// A lending iterator: each event borrows the iterator until the next call.
#[derive(Debug)]
pub struct Events<'a> {
    decoder: &'a mut Decoder,
    chunk: &'a [u8],
    /// The valid UTF-8 prefix of `chunk`.
    text: &'a str,
    cur: Cursor,
}

impl Events<'_> {
    /// The next event or error of the chunk, or `None` once the chunk is
    /// used up (its unfinished tail is kept for the next chunk).
    #[allow(clippy::should_implement_trait)]
    #[inline]
    pub fn next_event(&mut self) -> Option<Result<Event<'_>, DecodeError>> {
        self.decoder.next_in(self.chunk, self.text, &mut self.cur)
    }

    /// How many bytes of the chunk have been decoded so far.
    pub fn consumed(&self) -> usize {
        self.cur.pos
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// (events as (type, data), end-of-stream report) for `chunks`.
    fn decode(config: DecoderConfig, chunks: &[&[u8]]) -> (Vec<Result<OwnedEvent, DecodeError>>, EndOfStream) {
        let mut d = Decoder::with_config(config);
        let mut out = Vec::new();
        for c in chunks {
            d.feed_each(c, |r| out.push(r.map(|e| e.to_owned_event())));
        }
        (out, d.finish())
    }

    #[test]
    fn the_common_shapes_are_read_whole() {
        fn read<'a>(d: &Decoder, input: &'a [u8]) -> Option<(&'a str, &'a str, usize)> {
            let text = match core::str::from_utf8(input) {
                Ok(text) => text,
                Err(e) => core::str::from_utf8(&input[..e.valid_up_to()]).unwrap_or_default(),
            };
            d.whole_event(input, text, &mut Cursor::new())
        }
        let d = Decoder::new();
        let whole = |input| read(&d, input);
        assert_eq!(whole(b"event: a\ndata: b\n\n"), Some(("a", "b", 18)));
        assert_eq!(whole(b"event:a\ndata:b\n\nnext"), Some(("a", "b", 16)));
        assert_eq!(whole(b"data: {\"x\": 1}\n\n"), Some(("message", "{\"x\": 1}", 16)));
        assert_eq!(whole(b"event:\ndata:  x\n\n"), Some(("message", " x", 17)));
        assert_eq!(whole(b"data\n\n"), None, "no colon: the line-by-line path");
        for other in [
            &b"data: a\ndata: b\n\n"[..],
            b"event: a\r\ndata: b\n\n",
            b"data: a\r\n\r\n",
            b"id: 1\ndata: x\n\n",
            b"data: x\nid: 1\n\n",
            b"event: a\n\n",
            b"data: x\n",
            b"data: x\n\r",
            b"\ndata: x\n\n",
            b": hi\ndata: x\n\n",
            b"data: \xFF\n\n",
        ] {
            assert_eq!(whole(other), None, "{:?}", String::from_utf8_lossy(other));
        }
        let tiny =
            Decoder::with_config(DecoderConfig { max_line_len: 8, max_event_size: 4, ..DecoderConfig::default() });
        let whole_tiny = |input| read(&tiny, input);
        assert_eq!(whole_tiny(b"data\n\n"), None);
        assert_eq!(whole_tiny(b"data: 123456\n\n"), None, "line over the limit");
        assert_eq!(whole_tiny(b"data:12\n\n"), None, "data line longer than the event limit: checked by the line path");
    }

    #[test]
    fn the_whole_event_path_resumes_after_finish_reset_and_errors() {
        let tiny = DecoderConfig { max_line_len: 16, ..DecoderConfig::default() };
        let mut d = Decoder::with_config(tiny);
        let mut seen = Vec::new();
        let mut feed = |d: &mut Decoder, bytes: &[u8]| {
            d.feed_each(bytes, |r| seen.push(r.map(|e| (e.event().to_owned(), e.data().to_owned()))));
        };
        feed(&mut d, b"data: a\n\nevent: t\ndata: cut");
        assert_eq!(d.finish().discarded_bytes, 18);
        feed(&mut d, b"data: b\n\ndata: a line far too long\n\ndata: c\n\nevent: u\ndata: d");
        d.reset();
        feed(&mut d, b"data: e\n\n");
        let ok = |t: &str, v: &str| Ok((t.to_owned(), v.to_owned()));
        assert_eq!(
            seen,
            [
                ok("message", "a"),
                ok("message", "b"),
                Err(DecodeError::LineTooLong { limit: 16, offset: 9 }),
                ok("message", "c"),
                ok("message", "e"),
            ]
        );
    }

    #[test]
    fn events_read_whole_or_completed_are_the_events_read_line_by_line() {
        // One-byte chunks never hold a whole event: they take the line path.
        // Cut anywhere, a stream's events are read whole, completed across
        // the cut, or read line by line.
        let inputs: [&[u8]; 20] = [
            b"event: abc\ndata: x\n\nevent:\ndata: y\n\nevent: q\n\ndata: z\n\n",
            b"event: abc\ndata: x\ndata: y\n\nevent: d\nid: 4\ndata: z\n\nevent: e\n: c\ndata: w\n\n",
            b"event: abcdefghij\ndata: x\n\nevent: t\r\ndata: y\n\nevent: \xC3\xA9\xFF\ndata: z\n\n",
            b"event: a\ndata: b\n\nevent:c\ndata:d\n\ndata: e\n\n",
            b"id: 7\nevent: a\ndata: b\n\nevent: x\ndata: y\n\n",
            b"retry: 5\ndata: a\n\ndata: b\n\n",
            b"data: a\ndata: b\n\nevent: t\ndata: c\n\n",
            b"event: t\n\ndata: after a typed empty block\n\n",
            b"data: 0123456789abcdef\n\ndata: ok\n\n",
            b"event: 0123456789abcdef\ndata: x\n\ndata: ok\n\n",
            b"data: \xFF\n\nevent: \xC3\xA9\ndata: \xE2\x82\xAC\n\n",
            b"\xEF\xBB\xBFdata: bom\n\ndata: a\r\n\r\ndata: b\n\n",
            b"data: x\n\n: comment\ndata: y\n\nid\ndata: z\n\n",
            b"event: t\ndata: {\"a\": 1}\n\nevent: u\ndata: x\n\n",
            b"data: hello world\n\ndata:  two spaces\n\ndata:\n\n",
            b"id: 1\ndata: abc\n\ndata: def\n\n",
            b"data: abc\r\n\r\ndata: abc\n\r\n",
            b"data: caf\xC3\xA9 \xFF\n\ndata: \xE2\x82\xAC\n\n",
            b"retry: 5\ndata: abc\n\n: c\ndata: abc\ndata: d\n\n",
            b"event: t\ndata: 0123456789\n\ndata: ok\n\n",
        ];
        let tiny = DecoderConfig { max_line_len: 14, max_event_size: 8, ..DecoderConfig::default() };
        let small = DecoderConfig { max_line_len: 16, max_event_size: 10, ..DecoderConfig::default() };
        let strict = DecoderConfig { utf8: Utf8Mode::Strict, ..DecoderConfig::default() };
        for config in [DecoderConfig::default(), tiny, small, strict] {
            for input in inputs {
                let line_by_line = decode(config.clone(), &input.chunks(1).collect::<Vec<_>>());
                for cut in 0..=input.len() {
                    let (a, b) = input.split_at(cut);
                    assert_eq!(decode(config.clone(), &[a, b]), line_by_line, "{input:?} cut at {cut}");
                }
            }
        }
        // The completion is taken (and declined where the field rule needs
        // the next chunk's first byte).
        let completes = |first: &[u8], next: &[u8]| {
            let mut d = Decoder::new();
            d.feed_each(first, |e| panic!("{e:?}"));
            d.data_line_completes(next, &mut Cursor::new())
        };
        assert!(completes(b"event: t\ndata: hel", b"lo\n\n"));
        assert!(completes(b"data: h", b"ello\n\ndata: next\n\n"));
        assert!(!completes(b"data:", b" x\n\n"));
        assert!(!completes(b"data: h", b"ello\ndata: two lines\n\n"));
        assert!(!completes(b"id: 1\ndata: h", b"ello\n\n"));
        assert!(!completes(b"data: h", b"ello\r\n\r\n"));
        assert!(completes(b"event: t", b"yp\ndata: x\n\n"));
        assert!(completes(b"event:", b" t\ndata: x\n\n"));
        assert!(!completes(b"event: t", b"\ndata: x\ndata: y\n\n"));
        assert!(!completes(b"event: t", b"\nid: 1\ndata: x\n\n"));
        assert!(!completes(b"event: t", b"\ndata: x\n"));
        // A chunk's last event is kept whole when it is an `event:` line and
        // an unfinished line, or an unfinished line alone.
        let kept = |chunk: &[u8]| {
            let mut d = Decoder::new();
            d.feed_each(b"data: settles the BOM question\n\n", |_| {});
            let kept = d.unfinished_event_kept(chunk, &mut Cursor::new());
            let tail = d.lines.unfinished_line().map(<[u8]>::to_vec);
            (kept, tail, d.block.type_buf.clone())
        };
        assert_eq!(kept(b"event: t\ndata: hel"), (true, Some(b"data: hel".to_vec()), b"t".to_vec()));
        assert_eq!(kept(b"data: hel"), (true, Some(b"data: hel".to_vec()), vec![]));
        assert_eq!(kept(b"id: 1"), (true, Some(b"id: 1".to_vec()), vec![]));
        assert!(!kept(b"event: t\n").0);
        assert!(!kept(b"data: x\ndata: y").0);
        assert!(!kept(b"event: t\ndata: hel\r").0);
    }

    #[test]
    fn a_large_event_does_not_pin_its_buffers() {
        let big = "x".repeat(3 << 20);
        // Split so that the line goes through the tail buffer and the data
        // through the event buffer (two data lines).
        let input = format!("data: {big}\ndata: {big}\n\ndata: small\n\n");
        let mut d = Decoder::new();
        let mut sizes = Vec::new();
        for c in input.as_bytes().chunks(64 << 10) {
            d.feed_each(c, |r| sizes.push(r.unwrap().data.len()));
        }
        assert_eq!(sizes, [2 * big.len() + 1, 5]);
        assert!(d.memory_footprint() < 2 * KEEP_CAPACITY, "{}", d.memory_footprint());
    }

    #[test]
    fn crlf_of_a_blank_line_split_across_chunks_is_not_counted_as_discarded() {
        // Found by tests/sse_chunking_fuzz.rs: the LF completing a blank
        // line's CRLF, arriving in the next chunk, was counted as discarded
        // (2 instead of 1 for "\r" + "\n:").
        for (input, discarded) in [(&b"data: x\n\r\n"[..], 0), (b"\r\n:", 1), (b"data: x\r\n\r\nda", 2)] {
            let whole = decode(DecoderConfig::default(), &[input]);
            assert_eq!(whole.1.discarded_bytes, discarded, "{input:?}");
            for cut in 0..=input.len() {
                let (a, b) = input.split_at(cut);
                assert_eq!(decode(DecoderConfig::default(), &[a, b]), whole, "{input:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn event_types_are_right_when_the_last_one_is_reused() {
        let input: &[u8] =
            b"event: a\ndata: 1\n\nevent: a\ndata: 2\n\nevent: b\ndata: 3\n\ndata: 4\n\nevent: \xFFa\ndata: 5\n\nevent: a\ndata: 6\n\nevent: \xC3\xA9\ndata: 7\n\nevent: \xC3\xA9\ndata: 8\n\n";
        let types = |config: DecoderConfig| -> Vec<Result<String, DecodeError>> {
            decode(config, &[input]).0.into_iter().map(|r| r.map(|e| e.event)).collect()
        };
        let ok = |s: &str| Ok(s.to_owned());
        assert_eq!(
            types(DecoderConfig::default()),
            [ok("a"), ok("a"), ok("b"), ok("message"), ok("\u{FFFD}a"), ok("a"), ok("é"), ok("é")]
        );
        let strict = DecoderConfig { utf8: Utf8Mode::Strict, ..DecoderConfig::default() };
        let bad = Err(DecodeError::InvalidUtf8 { field: "event", offset: 63 });
        assert_eq!(types(strict), [ok("a"), ok("a"), ok("b"), ok("message"), bad, ok("a"), ok("é"), ok("é")]);
    }

    #[test]
    fn invalid_utf8_offset_is_the_block_start_whatever_the_chunking() {
        // The offset used to be that of the byte after the blank line that
        // dispatched (20 here), not the block's start as documented.
        let strict = DecoderConfig { utf8: Utf8Mode::Strict, ..DecoderConfig::default() };
        let input: &[u8] = b"data: a\r\n\r\ndata: \xFF\n\n";
        let whole = decode(strict.clone(), &[input]);
        assert_eq!(whole.0[1], Err(DecodeError::InvalidUtf8 { field: "data", offset: 11 }));
        for cut in 0..=input.len() {
            let (a, b) = input.split_at(cut);
            assert_eq!(decode(strict.clone(), &[a, b]), whole, "cut at {cut}");
        }
    }
}
