//! Giving a large event's freed memory back to the system.
//!
//! glibc's allocator keeps a freed block smaller than its dynamic mmap
//! threshold in the arena of the thread that freed it; the threshold rises
//! to the size of the largest mmapped block freed so far (up to 32 MiB). So
//! once a stream has released one 16 MB event, the next ones come from, and
//! return to, the arenas, and a host that feeds from several OS threads
//! (cgo runs each call on whichever thread it has) keeps a copy per arena
//! resident. After a call in which a stream released more than
//! [`TRIM_AFTER`] bytes, [`trim_after_release`] asks glibc to hand its free
//! pages back (`malloc_trim`): it frees nothing in use and costs a walk of
//! the free lists, once per large event.

/// A stream's footprint drop (bytes) within one call past which the C heap
/// is trimmed.
pub(crate) const TRIM_AFTER: usize = 1 << 20;

/// Trims the C heap when the footprint fell by more than [`TRIM_AFTER`]
/// between `before` and `after` (a large event's buffers were released);
/// says whether it did. A no-op where the C library has no `malloc_trim`.
pub(crate) fn trim_after_release(before: usize, after: usize) -> bool {
    if before.saturating_sub(after) <= TRIM_AFTER {
        return false;
    }
    trim();
    true
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: `malloc_trim` takes no pointer and only returns free memory of
    // the allocator's arenas to the system; any thread may call it.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a drop past the threshold trims (growth and small drops do not).
    #[test]
    fn trims_only_after_a_large_release() {
        assert!(!trim_after_release(10, 20));
        assert!(!trim_after_release(TRIM_AFTER + 10, 10));
        assert!(trim_after_release(TRIM_AFTER + 11, 10));
    }
}
