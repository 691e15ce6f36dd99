//! The reuse policy of the SSE layer's scratch buffers, shared by the line
//! splitter ([`lines`](super::lines)) and the [`Decoder`](super::Decoder):
//! a buffer keeps its capacity from line to line and event to event, up to
//! [`KEEP_CAPACITY`], so a large line or event does not pin its memory for
//! the stream's life.

/// The capacity a reused buffer keeps once emptied (1 MiB): past it, the
/// memory a large line or event needed is released.
pub(crate) const KEEP_CAPACITY: usize = 1 << 20;

/// Empties `buf`, releasing its memory when it grew past [`KEEP_CAPACITY`].
pub(crate) fn release_large(buf: &mut Vec<u8>) {
    buf.clear();
    if buf.capacity() > KEEP_CAPACITY {
        *buf = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_buffer_past_the_kept_capacity_is_released() {
        let mut small = Vec::with_capacity(KEEP_CAPACITY);
        small.push(1);
        release_large(&mut small);
        assert!(small.is_empty());
        assert_eq!(small.capacity(), KEEP_CAPACITY);
        let mut large = Vec::with_capacity(KEEP_CAPACITY + 1);
        large.push(1);
        release_large(&mut large);
        assert_eq!(large.capacity(), 0);
    }
}
