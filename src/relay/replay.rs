//! The relay's one byte buffer: the frames of the current call (what the
//! host sends now) are written straight after the last frames sent (what a
//! browser reconnecting with `Last-Event-ID` gets again), so a frame is
//! written once and never copied for the replay.

use std::collections::VecDeque;

/// Frames kept by id, at most `limit` bytes of them once the current
/// call's output is sent, followed by the current call's output.
///
/// Dropping the oldest frames only advances `start`; the dead prefix is cut
/// away once it is as large as the limit, so each byte is moved at most
/// once: O(1) amortized per frame. The buffer never holds more than twice
/// the limit plus one call's output.
#[derive(Debug)]
pub(crate) struct ReplayBuffer {
    bytes: Vec<u8>,
    /// Bytes before `start` are dropped frames.
    start: usize,
    /// Where the current call's output begins.
    call_start: usize,
    /// (event id, offset of its frame in `bytes`), oldest first.
    frames: VecDeque<(u64, usize)>,
    limit: usize,
}

/// Why frames cannot be replayed after an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gap {
    /// The id is older than the oldest frame kept.
    TooOld { oldest: Option<u64> },
    /// The id was never sent.
    Unknown,
}

impl ReplayBuffer {
    #[cfg(test)]
    pub(crate) fn new(limit: usize) -> Self {
        Self::with_capacity(limit, 0)
    }

    /// Room for `capacity` bytes before the buffer first grows.
    pub(crate) fn with_capacity(limit: usize, capacity: usize) -> Self {
        let bytes = Vec::with_capacity(capacity);
        ReplayBuffer { bytes, start: 0, call_start: 0, frames: VecDeque::with_capacity(capacity / 64), limit }
    }

    /// Starts a call's output (empty): the frames beyond the limit are
    /// dropped, oldest first (a frame larger than the whole limit is not
    /// kept).
    pub(crate) fn begin_call(&mut self) {
        while self.len() > self.limit {
            self.frames.pop_front();
            self.start = self.frames.front().map_or(self.bytes.len(), |&(_, offset)| offset);
        }
        if self.start > 0 && self.start >= self.limit {
            let cut = self.start;
            self.bytes.drain(..cut);
            for frame in &mut self.frames {
                frame.1 -= cut;
            }
            self.start = 0;
        }
        self.call_start = self.bytes.len();
    }

    /// Starts frame `id` (ids increase) at the end of the output; the
    /// caller writes it whole into the buffer returned.
    pub(crate) fn frame(&mut self, id: u64) -> &mut Vec<u8> {
        self.frames.push_back((id, self.bytes.len()));
        &mut self.bytes
    }

    /// The end of the output, for bytes that are part of no frame of their
    /// own (the AI SDK's `[DONE]` after the last frame: replayed with it).
    pub(crate) fn tail(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    /// The current call's output.
    pub(crate) fn output(&self) -> &[u8] {
        &self.bytes[self.call_start..]
    }

    /// The frames after event `id` (empty when `id` is the newest), and
    /// what follows them. `newest` is the last id sent (None before the
    /// first). Starts a call (its output stays empty).
    pub(crate) fn after(&mut self, id: u64, newest: Option<u64>) -> Result<&[u8], Gap> {
        self.begin_call();
        let Some(newest) = newest.filter(|&n| id <= n) else { return Err(Gap::Unknown) };
        if id == newest {
            return Ok(&[]);
        }
        let oldest = self.frames.front().map(|&(first, _)| first);
        // Ids are consecutive: the frame after `id` is found by arithmetic.
        let index = oldest.and_then(|first| (id + 1).checked_sub(first)).and_then(|i| usize::try_from(i).ok());
        match index.and_then(|i| self.frames.get(i)) {
            Some(&(frame_id, offset)) if frame_id == id + 1 => Ok(&self.bytes[offset..]),
            _ => Err(Gap::TooOld { oldest }),
        }
    }

    /// Bytes of the frames kept (with the current call's output).
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() - self.start
    }

    /// The frames of the current call's output, oldest first; the last
    /// one ends `trailer` bytes before the output does (the AI SDK's
    /// `[DONE]`, part of no frame).
    pub(crate) fn call_frames(&self, trailer: usize) -> Frames<'_> {
        let first = self.frames.partition_point(|&(_, offset)| offset < self.call_start);
        let end = self.bytes.len().saturating_sub(trailer).max(self.call_start);
        Frames { bytes: &self.bytes[..end], frames: &self.frames, front: first, back: self.frames.len() }
    }
}

/// The frames of a relay call's output as (event id, frame bytes), oldest
/// first: what a host appends to a replay store shared across processes.
/// From [`Relay::frames`](super::Relay::frames).
#[derive(Debug, Clone)]
pub struct Frames<'a> {
    /// The buffer up to the end of the last frame.
    bytes: &'a [u8],
    frames: &'a VecDeque<(u64, usize)>,
    /// The frames not yet iterated: `frames[front..back]`.
    front: usize,
    back: usize,
}

impl<'a> Frames<'a> {
    /// Frame `index` of the call (0: its first), without iterating.
    fn at(&self, index: usize) -> (u64, &'a [u8]) {
        let (id, start) = self.frames[index];
        let end = self.frames.get(index + 1).map_or(self.bytes.len(), |&(_, next)| next);
        (id, &self.bytes[start..end])
    }
}

impl<'a> Iterator for Frames<'a> {
    type Item = (u64, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        self.nth(0)
    }

    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        let index = self.front.checked_add(n).filter(|&i| i < self.back);
        let Some(index) = index else {
            self.front = self.back;
            return None;
        };
        self.front = index + 1;
        Some(self.at(index))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.back - self.front, Some(self.back - self.front))
    }
}

impl DoubleEndedIterator for Frames<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.at(self.back))
    }
}

impl ExactSizeIterator for Frames<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(r: &mut ReplayBuffer, frames: &[(u64, &[u8])]) -> Vec<u8> {
        r.begin_call();
        for (id, frame) in frames {
            r.frame(*id).extend_from_slice(frame);
        }
        r.output().to_vec()
    }

    #[test]
    fn keeps_the_newest_frames_within_the_limit() {
        let mut r = ReplayBuffer::new(10);
        assert_eq!(call(&mut r, &[(1, b"aaaa"), (2, b"bbbb")]), b"aaaabbbb");
        assert_eq!(r.after(0, Some(2)), Ok(&b"aaaabbbb"[..]));
        assert_eq!(call(&mut r, &[(3, b"cccc")]), b"cccc");
        assert_eq!(r.after(1, Some(3)), Ok(&b"bbbbcccc"[..]));
        assert_eq!(r.len(), 8);
        assert_eq!(r.after(0, Some(3)), Err(Gap::TooOld { oldest: Some(2) }));
        assert_eq!(r.after(3, Some(3)), Ok(&b""[..]));
        assert_eq!(r.after(4, Some(3)), Err(Gap::Unknown));
        // Many frames: the window slides, compaction keeps offsets right,
        // and the memory held stays under twice the limit plus one output.
        let mut r = ReplayBuffer::new(64);
        for id in 1..=1000u64 {
            let frame = format!("frame {id}\n");
            assert_eq!(call(&mut r, &[(id, frame.as_bytes())]), frame.as_bytes());
            assert!(r.bytes.len() <= 128 + frame.len());
            if id > 2 {
                let tail = r.after(id - 2, Some(id)).unwrap();
                assert_eq!(tail, format!("frame {}\nframe {id}\n", id - 1).as_bytes());
                assert!(r.len() <= 64);
            }
        }
        // A frame over the limit is sent, not kept.
        let mut r = ReplayBuffer::new(10);
        call(&mut r, &[(3, b"cccc")]);
        assert_eq!(call(&mut r, &[(4, b"a frame over the limit")]), b"a frame over the limit");
        assert_eq!(r.after(3, Some(4)), Err(Gap::TooOld { oldest: None }));
        assert_eq!(r.len(), 0);
        // No replay at all: the buffer holds one call's output.
        let mut r = ReplayBuffer::new(0);
        assert_eq!(call(&mut r, &[(1, b"ab"), (2, b"cd")]), b"abcd");
        assert_eq!(call(&mut r, &[(3, b"ef")]), b"ef");
        assert_eq!(r.bytes.len(), 2);
        assert_eq!(r.after(1, Some(3)), Err(Gap::TooOld { oldest: None }));
    }

    #[test]
    fn call_frames_are_the_current_outputs_frames() {
        let mut r = ReplayBuffer::new(6);
        call(&mut r, &[(1, b"aaaa"), (2, b"bbbb")]);
        let frames: Vec<_> = r.call_frames(0).collect();
        assert_eq!(frames, [(1, &b"aaaa"[..]), (2, &b"bbbb"[..])]);
        // The next call's frames only, after the window slid and the
        // buffer was compacted; a trailer is cut from the last one.
        r.begin_call();
        r.frame(3).extend_from_slice(b"cc");
        r.frame(4).extend_from_slice(b"dd");
        r.tail().extend_from_slice(b"!");
        let mut frames = r.call_frames(1);
        assert_eq!(frames.len(), 2);
        assert_eq!(frames.clone().nth(1), Some((4, &b"dd"[..])));
        assert_eq!(frames.next_back(), Some((4, &b"dd"[..])));
        assert_eq!(frames.next(), Some((3, &b"cc"[..])));
        assert_eq!(frames.next(), None);
        // A call without frames (a replay) has none.
        r.begin_call();
        assert_eq!(r.call_frames(0).count(), 0);
    }
}
