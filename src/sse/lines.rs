//! Layer 1: bytes → lines.
//!
//! Lines end with CR, LF or CRLF (WHATWG "event stream" grammar). Bytes
//! arrive in arbitrary chunks, so a CR at the end of one chunk followed by an
//! LF at the start of the next is one line ending, and a line may be split
//! anywhere (also inside a multi-byte UTF-8 character: lines are bytes here).
//!
//! A line that lies whole inside the chunk is handed on borrowed, as a range
//! of the chunk; only the unfinished tail of a chunk is copied, into a buffer
//! that is reused from line to line. One leading U+FEFF (the UTF-8 BOM,
//! `EF BB BF`) is stripped at stream start only, even when it is split across
//! chunks.
//!
//! The splitter never holds more than `max_line_len` bytes: a longer line is
//! reported once as [`LineRef::TooLong`] and its bytes are skipped up to its
//! line ending.

use core::ops::Range;

use super::buffer::release_large;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Where the line handed out by [`LineSplitter::next_line`] lies.
///
/// Ranges (not references) keep the splitter free of self-borrows; resolve
/// them against the chunk or the splitter's tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineRef {
    /// The line (without its terminator) is `chunk[range]`: no copy was made.
    Chunk(Range<usize>),
    /// The line was assembled from several chunks and lies in the splitter's
    /// tail buffer, valid until the next call on the splitter.
    Tail,
    /// The line is longer than the limit. Reported once, when that is first
    /// known; the rest of the line is skipped without being buffered.
    TooLong,
}

/// A line handed out by the splitter, with the stream offset of its first
/// byte (counted from the start of the stream, BOM included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Where the line's bytes are.
    pub at: LineRef,
    /// Stream offset of the line's first byte.
    pub start: u64,
}

/// A position in one chunk, with what is known about the chunk ahead of it.
///
/// Most streams use LF only: the position of the next CR is searched for
/// once and cached, and the LF bytes ahead are found a window at a time
/// ([`LfFinder`]), so that a line costs a few instructions.
#[derive(Debug, Clone, Default)]
pub struct Cursor {
    /// Offset of the next byte of the chunk to consume.
    pub pos: usize,
    /// Offset of the next CR at or after `pos` (or the chunk's length when
    /// there is none), once searched for.
    next_cr: Option<usize>,
    lf: LfFinder,
}

impl Cursor {
    /// A cursor at the start of a chunk.
    pub fn new() -> Self {
        Cursor::default()
    }

    /// The offset of the first CR at or after `start` (the chunk's length
    /// when there is none): searched for once and cached.
    #[inline(always)]
    pub fn cr_bound(&mut self, chunk: &[u8], start: usize) -> usize {
        match self.next_cr {
            Some(cr) if cr >= start => cr,
            _ => {
                let rest = chunk.get(start..).unwrap_or_default();
                let cr = memchr::memchr(b'\r', rest).map_or(chunk.len(), |i| start + i);
                self.next_cr = Some(cr);
                cr
            }
        }
    }

    /// The offset of the first LF in `chunk[from..to]` (`to` at most
    /// the chunk's length); successive calls search one chunk front to back.
    #[inline(always)]
    pub fn find_lf(&mut self, chunk: &[u8], from: usize, to: usize) -> Option<usize> {
        self.lf.find(chunk, from, to)
    }
}

/// Finds LF bytes in one chunk, front to back.
///
/// On x86-64 it keeps a bit mask of the LF bytes in a 64-byte window of the
/// chunk, made with four SSE2 compares (SSE2 is part of x86-64: no runtime
/// detection), so that the many short lines of an event stream cost a shift
/// and a bit count each instead of a `memchr` call. A search that starts past
/// the window makes a new one there; the rest of a line that runs past the
/// window, and the chunk's last bytes (less than a window), are searched with
/// `memchr`'s AVX2 searcher, built once per chunk (skipping `memchr`'s
/// per-call CPU dispatch). Elsewhere it is plain `memchr`.
#[derive(Debug, Clone, Copy)]
struct LfFinder {
    /// Chunk offset of the window's first byte.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    start: usize,
    /// Length of the window: 64, or 0 when there is none.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    len: usize,
    /// Bit `i` set when `chunk[start + i]` is LF.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    mask: u64,
    #[cfg(target_arch = "x86_64")]
    avx2: Option<memchr::arch::x86_64::avx2::memchr::One>,
}

impl Default for LfFinder {
    fn default() -> Self {
        LfFinder {
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            start: 0,
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            len: 0,
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            mask: 0,
            #[cfg(target_arch = "x86_64")]
            avx2: memchr::arch::x86_64::avx2::memchr::One::new(b'\n'),
        }
    }
}

impl LfFinder {
    /// The offset of the first LF in `chunk[from..to]`. Successive calls
    /// of one finder are for the same chunk.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(always)]
    fn find(&mut self, chunk: &[u8], from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        let mut into = from.wrapping_sub(self.start);
        if into >= self.len {
            // A search that starts past the window makes a new one there.
            match chunk.get(from..from + 64).and_then(|w| <&[u8; 64]>::try_from(w).ok()) {
                Some(window) => {
                    self.start = from;
                    self.len = 64;
                    self.mask = lf_mask_64(window);
                    into = 0;
                }
                // The chunk's last bytes.
                None => return self.search(&chunk[from..to]).map(|i| from + i),
            }
        }
        let ahead = self.mask >> into;
        if ahead != 0 {
            let at = from + ahead.trailing_zeros() as usize;
            return (at < to).then_some(at);
        }
        // The line goes on past the window: the rest is faster to search
        // with `memchr` than window by window.
        let past = self.start + self.len;
        if past >= to {
            return None;
        }
        self.search(&chunk[past..to]).map(|i| past + i)
    }

    /// The offset of the first LF in `chunk[from..to]`.
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    #[inline(always)]
    fn find(&mut self, chunk: &[u8], from: usize, to: usize) -> Option<usize> {
        self.search(&chunk[from..to]).map(|i| from + i)
    }

    /// The first LF of `haystack`, by `memchr`.
    #[inline(always)]
    fn search(&self, haystack: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(one) = &self.avx2 {
            return one.find(haystack);
        }
        memchr::memchr(b'\n', haystack)
    }
}

/// Bit `i` set when `window[i]` is LF: four SSE2 compares.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn lf_mask_64(window: &[u8; 64]) -> u64 {
    use safe_arch::{cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i};
    let lf = set_splat_i8_m128i(b'\n' as i8);
    let mut mask = 0;
    for (i, part) in window.chunks_exact(16).enumerate() {
        let part: &[u8; 16] = part.try_into().unwrap_or(&[0; 16]);
        let bits = move_mask_i8_m128i(cmp_eq_mask_i8_m128i(load_unaligned_m128i(part), lf)) as u16;
        mask |= u64::from(bits) << (16 * i);
    }
    mask
}

/// Splits a stream of byte chunks into lines, across chunk boundaries.
///
/// Guarantees: the sequence of lines is the same for every chunking of the
/// same bytes; memory is bounded by `max_line_len` plus a constant.
#[derive(Debug, Clone)]
pub struct LineSplitter {
    /// Bytes of the current unfinished line (at most `max_line_len`).
    tail: Vec<u8>,
    /// The tail was handed out as a finished line: clear it on the next call.
    tail_handed_out: bool,
    /// The previous chunk ended in CR: an LF first in the next chunk is part
    /// of that line ending.
    skip_lf: bool,
    /// The current line went over the limit; its bytes are being skipped.
    overflowing: bool,
    /// Still at stream start: how many BOM bytes were matched so far, or
    /// `None` once the start is past.
    bom_matched: Option<u8>,
    /// Stream offset of the next byte to be consumed.
    offset: u64,
    /// Stream offset of the current line's first byte.
    line_start: u64,
    max_line_len: usize,
}

impl LineSplitter {
    /// A splitter for a new stream, refusing lines longer than `max_line_len`
    /// bytes (terminator excluded).
    pub fn new(max_line_len: usize) -> Self {
        LineSplitter {
            tail: Vec::new(),
            tail_handed_out: false,
            skip_lf: false,
            overflowing: false,
            bom_matched: Some(0),
            offset: 0,
            line_start: 0,
            max_line_len,
        }
    }

    /// Forgets the current stream: the next byte is the start of a new one
    /// (a BOM is stripped again). Buffers keep their capacity up to
    /// [`KEEP_CAPACITY`](super::buffer::KEEP_CAPACITY).
    pub fn reset(&mut self) {
        release_large(&mut self.tail);
        self.tail_handed_out = false;
        self.skip_lf = false;
        self.overflowing = false;
        self.bom_matched = Some(0);
        self.offset = 0;
        self.line_start = 0;
    }

    /// Stream offset of the next byte to be consumed.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes of an unfinished line held (or being skipped) at this point,
    /// including a partial BOM at stream start.
    pub fn pending_len(&self) -> u64 {
        if self.tail_handed_out {
            0
        } else {
            self.offset - self.line_start
        }
    }

    /// The pending unfinished line as bytes, for end-of-stream handling, or
    /// `None` when it overflowed the limit.
    pub fn pending_line(&self) -> Option<&[u8]> {
        if self.overflowing {
            None
        } else if self.tail_handed_out {
            Some(&[])
        } else {
            Some(&self.tail)
        }
    }

    /// Whether the splitter holds nothing between lines: no tail, no pending
    /// CR, no overflow, the BOM question settled. Then whole lines of a chunk
    /// may be taken with [`lf_line_end`](Self::lf_line_end).
    #[inline]
    pub fn is_clean(&self) -> bool {
        self.tail.is_empty() && !self.skip_lf && !self.overflowing && self.bom_matched.is_none()
    }

    /// The unfinished line the last chunk ended in, when nothing else is
    /// pending (no pending CR, no overflow, the BOM question settled) and the
    /// next chunk has not been looked at yet: the line's first bytes, to be
    /// completed with [`take_unfinished`](Self::take_unfinished).
    #[inline]
    pub fn unfinished_line(&self) -> Option<&[u8]> {
        let only_a_tail = !self.tail_handed_out && !self.skip_lf && !self.overflowing && self.bom_matched.is_none();
        (only_a_tail && !self.tail.is_empty()).then_some(&self.tail)
    }

    /// Completes the [`unfinished_line`](Self::unfinished_line) with the
    /// chunk's first `end` bytes (its LF at `end`, which the caller checked):
    /// the tail is emptied and the splitter is clean, at stream offset
    /// `offset` (after the line and whatever else the caller consumed).
    pub fn take_unfinished(&mut self, offset: u64) {
        debug_assert!(self.unfinished_line().is_some());
        release_large(&mut self.tail);
        self.sync_offset(offset);
    }

    /// Fast path for a clean splitter: the offset of the LF ending the line
    /// that starts at `cur.pos`, when that line ends with a lone LF (no CR
    /// before it), lies whole in the chunk and is within the limit. `None`
    /// sends the caller to [`next_line`](Self::next_line). The caller moves
    /// the cursor and then calls [`sync_offset`](Self::sync_offset).
    #[inline]
    pub fn lf_line_end(&self, chunk: &[u8], cur: &mut Cursor) -> Option<usize> {
        let start = cur.pos;
        match chunk.get(start) {
            None => return None,
            // A blank line (every event ends with one): no search needed.
            Some(b'\n') => return Some(start),
            Some(_) => {}
        }
        let next_cr = cur.cr_bound(chunk, start);
        let end = cur.find_lf(chunk, start, next_cr)?;
        (end - start <= self.max_line_len).then_some(end)
    }

    /// Records that the caller consumed whole lines up to stream offset
    /// `offset` on the fast path.
    #[inline]
    pub fn sync_offset(&mut self, offset: u64) {
        self.offset = offset;
        self.line_start = offset;
    }

    /// The tail buffer, so a caller may move a [`LineRef::Tail`] line out
    /// and back while it applies it (its contents are cleared on the next
    /// [`next_line`](Self::next_line) call either way).
    pub fn tail_mut(&mut self) -> &mut Vec<u8> {
        &mut self.tail
    }

    /// Capacity of the reused tail buffer, in bytes (for memory accounting).
    pub fn buffer_capacity(&self) -> usize {
        self.tail.capacity()
    }

    /// The bytes of a line returned by [`next_line`](Self::next_line) for
    /// the same `chunk`.
    #[cfg(test)]
    pub fn line_bytes<'a>(&'a self, chunk: &'a [u8], at: &LineRef) -> &'a [u8] {
        match at {
            LineRef::Chunk(r) => &chunk[r.clone()],
            LineRef::Tail => &self.tail,
            LineRef::TooLong => &[],
        }
    }

    /// Lets go of a [`LineRef::Tail`] line the caller is done with, so that
    /// the splitter may be clean again before the next
    /// [`next_line`](Self::next_line) call (which does it otherwise).
    #[inline]
    pub fn release_handed_out(&mut self) {
        if self.tail_handed_out {
            release_large(&mut self.tail);
            self.tail_handed_out = false;
        }
    }

    /// The next line of `chunk` from `cur.pos`, advancing the cursor past
    /// it and its terminator. `None` when the chunk is used up; its unfinished
    /// tail is then kept for the next chunk.
    #[inline]
    pub fn next_line(&mut self, chunk: &[u8], cur: &mut Cursor) -> Option<Line> {
        let pos = &mut cur.pos;
        self.release_handed_out();
        loop {
            if *pos >= chunk.len() {
                return None;
            }
            if self.skip_lf {
                self.skip_lf = false;
                if chunk[*pos] == b'\n' {
                    *pos += 1;
                    self.offset += 1;
                    self.line_start = self.offset;
                    continue;
                }
            }
            if let Some(matched) = self.bom_matched {
                if !self.match_bom(chunk, pos, matched) {
                    return None;
                }
                continue;
            }
            return self.scan(chunk, cur);
        }
    }

    /// Consumes BOM bytes at stream start. Returns false when the chunk ran
    /// out while the BOM could still be complete.
    fn match_bom(&mut self, chunk: &[u8], pos: &mut usize, mut matched: u8) -> bool {
        while *pos < chunk.len() {
            if chunk[*pos] == BOM[matched as usize] {
                matched += 1;
                *pos += 1;
                self.offset += 1;
                if matched == 3 {
                    self.bom_matched = None;
                    self.line_start = self.offset;
                    return true;
                }
            } else {
                // Not a BOM after all: the matched bytes start the first line.
                self.bom_matched = None;
                self.tail.extend_from_slice(&BOM[..matched as usize]);
                return true;
            }
        }
        self.bom_matched = Some(matched);
        false
    }

    /// The chunk's last bytes, a line without its end: kept for the next
    /// chunk within the limit (a line over it is reported once, then its
    /// bytes are skipped).
    #[inline]
    fn keep_unfinished(&mut self, rest: &[u8]) -> Option<Line> {
        self.offset += rest.len() as u64;
        if self.overflowing {
            return None;
        }
        if self.tail.len() + rest.len() > self.max_line_len {
            self.overflowing = true;
            self.tail.clear();
            return Some(Line { at: LineRef::TooLong, start: self.line_start });
        }
        self.tail.extend_from_slice(rest);
        None
    }

    /// Fast path for a clean splitter whose caller consumed whole lines up
    /// to stream offset `offset`: `rest`, the chunk's last bytes (no LF or
    /// CR in them, within the limit), starts a line the next chunk finishes.
    /// The splitter is left as [`next_line`](Self::next_line) leaves it at
    /// the same point.
    pub fn keep_unfinished_line(&mut self, offset: u64, rest: &[u8]) {
        debug_assert!(self.is_clean() && !rest.is_empty() && rest.len() <= self.max_line_len);
        self.sync_offset(offset);
        let report = self.keep_unfinished(rest);
        debug_assert!(report.is_none());
    }

    #[inline]
    fn scan(&mut self, chunk: &[u8], cur: &mut Cursor) -> Option<Line> {
        let start = cur.pos;
        let rest = &chunk[start..];
        let next_cr = cur.cr_bound(chunk, start);
        let end = match cur.find_lf(chunk, start, next_cr) {
            Some(end) => Some(end),
            None => (next_cr < chunk.len()).then_some(next_cr),
        };
        let pos = &mut cur.pos;
        let Some(end) = end else {
            *pos = chunk.len();
            return self.keep_unfinished(rest);
        };
        let i = end - start;
        let mut next = end + 1;
        if chunk[end] == b'\r' {
            if next < chunk.len() {
                if chunk[next] == b'\n' {
                    next += 1;
                }
            } else {
                self.skip_lf = true;
            }
        }
        *pos = next;
        self.offset += (next - start) as u64;
        let line_start = self.line_start;
        self.line_start = self.offset;
        if self.overflowing {
            // The end of a line already reported as too long.
            self.overflowing = false;
            self.tail.clear();
            return self.next_line(chunk, cur);
        }
        if self.tail.len() + i > self.max_line_len {
            self.tail.clear();
            return Some(Line { at: LineRef::TooLong, start: line_start });
        }
        if self.tail.is_empty() {
            return Some(Line { at: LineRef::Chunk(start..end), start: line_start });
        }
        self.tail.extend_from_slice(&rest[..i]);
        self.tail_handed_out = true;
        Some(Line { at: LineRef::Tail, start: line_start })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All lines of `chunks`, owned, with `None` for too-long lines.
    fn split(chunks: &[&[u8]], max: usize) -> Vec<Option<Vec<u8>>> {
        let mut s = LineSplitter::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            let mut cur = Cursor::new();
            while let Some(line) = s.next_line(chunk, &mut cur) {
                out.push(match line.at {
                    LineRef::TooLong => None,
                    ref at => Some(s.line_bytes(chunk, at).to_vec()),
                });
            }
        }
        out
    }

    fn lines(v: &[&str]) -> Vec<Option<Vec<u8>>> {
        v.iter().map(|s| Some(s.as_bytes().to_vec())).collect()
    }

    #[test]
    fn the_lf_finder_finds_what_memchr_finds() {
        // Lines of every length around the 64-byte window and past several
        // of them (where `memchr` takes the rest), in rising and falling
        // order and long and short by turns, searched front to back with one
        // finder (windows reused), with and without a bound.
        let mut chunk = Vec::new();
        let turns = (0..40).flat_map(|i| [300 - i, i, 190 + i % 5, 64 * (i % 4)]);
        for len in (0..400).chain((0..400).rev()).chain(turns) {
            chunk.extend(std::iter::repeat(b'x').take(len));
            chunk.push(b'\n');
        }
        for cut in [chunk.len(), chunk.len() - 1, 1000, 63, 64, 65, 1] {
            let chunk = &chunk[..cut];
            for step in [1, 7, 64] {
                let mut finder = LfFinder::default();
                let mut from = 0;
                while from < chunk.len() {
                    let to = (from + step * 37).min(chunk.len());
                    let expected = memchr::memchr(b'\n', &chunk[from..to]).map(|i| from + i);
                    assert_eq!(finder.find(chunk, from, to), expected, "cut {cut}, from {from} to {to}");
                    from = expected.map_or(from + step, |at| at + 1);
                }
            }
        }
    }

    #[test]
    fn all_three_terminators() {
        assert_eq!(split(&[b"a\nb\rc\r\nd\n"], 100), lines(&["a", "b", "c", "d"]));
    }

    #[test]
    fn crlf_split_across_chunks_is_one_ending() {
        assert_eq!(split(&[b"a\r", b"\nb\n"], 100), lines(&["a", "b"]));
        assert_eq!(split(&[b"a\r", b"", b"\nb\n"], 100), lines(&["a", "b"]));
        // CR then CR is two endings; the second ends an empty line.
        assert_eq!(split(&[b"a\r", b"\rb\n"], 100), lines(&["a", "", "b"]));
    }

    #[test]
    fn line_in_chunk_is_borrowed_and_tail_is_joined() {
        let mut s = LineSplitter::new(100);
        let mut cur = Cursor::new();
        let first = s.next_line(b"abc\nde", &mut cur).unwrap();
        assert_eq!(first.at, LineRef::Chunk(0..3));
        assert!(s.next_line(b"abc\nde", &mut cur).is_none());
        let mut cur = Cursor::new();
        let joined = s.next_line(b"f\n", &mut cur).unwrap();
        assert_eq!(joined.at, LineRef::Tail);
        assert_eq!(s.line_bytes(b"f\n", &joined.at), b"def");
        assert_eq!(joined.start, 4);
    }

    #[test]
    fn bom_stripped_only_at_start_even_when_split() {
        assert_eq!(split(&[b"\xEF", b"\xBB", b"\xBFa\n"], 100), lines(&["a"]));
        assert_eq!(
            split(&[b"\xEF\xBB\xBFa\n\xEF\xBB\xBFb\n"], 100),
            vec![Some(b"a".to_vec()), Some(b"\xEF\xBB\xBFb".to_vec())]
        );
        // A partial BOM that turns out not to be one is kept as line bytes.
        assert_eq!(split(&[b"\xEF", b"\xBBx\n"], 100), vec![Some(b"\xEF\xBBx".to_vec())]);
    }

    #[test]
    fn too_long_lines_are_reported_once_and_skipped() {
        assert_eq!(split(&[b"abcdef\nab\n"], 3), vec![None, Some(b"ab".to_vec())]);
        assert_eq!(split(&[b"ab", b"cd", b"ef\nab\n"], 3), vec![None, Some(b"ab".to_vec())]);
        assert_eq!(split(&[b"abc\n"], 3), lines(&["abc"]));
    }

    #[test]
    fn every_chunking_gives_the_same_lines() {
        let input: &[u8] = b"\xEF\xBB\xBFdata: a\r\n\r\nevent: x\rdata: \xE2\x82\xAC\n\nid\n";
        let whole = split(&[input], 100);
        for a in 0..=input.len() {
            for b in a..=input.len() {
                assert_eq!(split(&[&input[..a], &input[a..b], &input[b..]], 100), whole, "{a} {b}");
            }
        }
    }
}
