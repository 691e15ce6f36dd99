//! The bounded replay buffer: the last frames sent, by event id, so that a
//! browser reconnecting with `Last-Event-ID` gets what it missed.

use std::collections::VecDeque;

/// Frames kept by id, at most `limit` bytes in all.
///
/// Frames are appended to one buffer; dropping the oldest only advances
/// `start`, and the dead prefix is cut away once it is as large as the
/// limit, so each byte is moved at most once: O(1) amortized per frame.
#[derive(Debug)]
pub(crate) struct ReplayBuffer {
    bytes: Vec<u8>,
    /// Bytes before `start` are dropped frames.
    start: usize,
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
    pub(crate) fn new(limit: usize) -> Self {
        ReplayBuffer { bytes: Vec::new(), start: 0, frames: VecDeque::new(), limit }
    }

    /// Keeps `frame` as event `id` (ids increase), dropping the oldest frames
    /// beyond the limit. A frame larger than the whole limit is not kept.
    pub(crate) fn push(&mut self, id: u64, frame: &[u8]) {
        if self.limit == 0 {
            return;
        }
        if frame.len() > self.limit {
            self.bytes.clear();
            self.start = 0;
            self.frames.clear();
            return;
        }
        while self.len() + frame.len() > self.limit {
            self.frames.pop_front();
            self.start = self.frames.front().map_or(self.bytes.len(), |&(_, offset)| offset);
        }
        if self.start >= self.limit {
            let cut = self.start;
            self.bytes.drain(..cut);
            for frame in &mut self.frames {
                frame.1 -= cut;
            }
            self.start = 0;
        }
        self.frames.push_back((id, self.bytes.len()));
        self.bytes.extend_from_slice(frame);
    }

    /// The frames after event `id` (empty when `id` is the newest).
    /// `newest` is the last id sent (None before the first).
    pub(crate) fn after(&self, id: u64, newest: Option<u64>) -> Result<&[u8], Gap> {
        let Some(newest) = newest.filter(|&n| id <= n) else { return Err(Gap::Unknown) };
        if id == newest {
            return Ok(&[]);
        }
        let oldest = self.frames.front().map(|&(first, _)| first);
        match self.frames.iter().position(|&(frame_id, _)| frame_id == id + 1) {
            Some(i) => Ok(&self.bytes[self.frames[i].1..]),
            None => Err(Gap::TooOld { oldest }),
        }
    }

    /// Bytes of the frames kept.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() - self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_frames_within_the_limit() {
        let mut r = ReplayBuffer::new(10);
        r.push(1, b"aaaa");
        r.push(2, b"bbbb");
        assert_eq!(r.after(0, Some(2)), Ok(&b"aaaabbbb"[..]));
        r.push(3, b"cccc");
        assert_eq!(r.len(), 8);
        assert_eq!(r.after(1, Some(3)), Ok(&b"bbbbcccc"[..]));
        assert_eq!(r.after(0, Some(3)), Err(Gap::TooOld { oldest: Some(2) }));
        assert_eq!(r.after(3, Some(3)), Ok(&b""[..]));
        assert_eq!(r.after(4, Some(3)), Err(Gap::Unknown));
        // Many frames: the window slides, compaction keeps offsets right,
        // and the memory held stays under twice the limit.
        let mut r = ReplayBuffer::new(64);
        for id in 1..=1000u64 {
            let frame = format!("frame {id}\n");
            r.push(id, frame.as_bytes());
            assert!(r.len() <= 64 && r.bytes.len() <= 128);
            if id > 2 {
                let tail = r.after(id - 2, Some(id)).unwrap();
                assert_eq!(tail, format!("frame {}\nframe {id}\n", id - 1).as_bytes());
            }
        }
        let mut r = ReplayBuffer::new(10);
        r.push(3, b"cccc");
        r.push(4, b"a frame over the limit");
        assert_eq!(r.len(), 0);
        assert_eq!(r.after(3, Some(4)), Err(Gap::TooOld { oldest: None }));
    }
}
