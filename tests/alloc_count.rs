//! Zero heap allocations per event in steady state.
//!
//! A counting global allocator wraps `System`. The decoder is warmed up on a
//! part of a corpus (its reused buffers grow to their working size), then
//! decodes at least 10,000 more events with 4 KiB, 64 KiB and 7-byte chunks
//! (the last puts nearly every event across chunk boundaries) while every
//! event's data is consumed; the allocation count of that phase must be 0.
//! The inputs include multi-line data events, CRLF and lone-CR line endings,
//! comments, ids and retry fields, not only the provider corpus.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use ssefold::sse::Decoder;

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// Only allocations made while this is set (by the measuring thread) count;
/// the test harness's own threads allocate too.
static COUNTING: AtomicBool = AtomicBool::new(false);

thread_local! {
    static MEASURED_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn count() {
    if COUNTING.load(Ordering::Relaxed) && MEASURED_THREAD.with(|m| m.get()) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees hold; the counting only touches atomics
// and a const-initialized thread-local `Cell<bool>` (which never allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded as is; the caller upholds `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded as is; `ptr` was allocated by `System` through us.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is; `ptr` was allocated by `System` through us.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One measurement at a time (tests run on several threads).
static SERIAL: Mutex<()> = Mutex::new(());

/// Decodes `chunks`, consuming every event; returns (events, data bytes).
fn decode(d: &mut Decoder, chunks: &[&[u8]]) -> (usize, usize) {
    let (mut n, mut bytes) = (0, 0);
    for chunk in chunks {
        let mut events = d.feed(chunk);
        while let Some(e) = events.next_event() {
            let e = e.expect("valid input");
            n += 1;
            bytes += black_box(e.data()).len() + black_box(e.event()).len() + e.id().map_or(0, str::len);
            black_box(e.retry());
        }
    }
    (n, bytes)
}

/// Allocations made by `f` on this thread.
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    MEASURED_THREAD.with(|m| m.set(true));
    ALLOCS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let r = f();
    COUNTING.store(false, Ordering::SeqCst);
    MEASURED_THREAD.with(|m| m.set(false));
    (ALLOCS.load(Ordering::SeqCst), r)
}

/// Warms a decoder up on `warm`, then checks that decoding `steady` in
/// chunks of `size` makes no allocation and yields at least `min_events`.
fn assert_steady_state_allocation_free(warm: &[u8], steady: &[u8], size: usize, min_events: usize) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let warm_chunks: Vec<&[u8]> = warm.chunks(size).collect();
    let chunks: Vec<&[u8]> = steady.chunks(size).collect();
    let mut d = Decoder::new();
    let (warm_events, _) = decode(&mut d, &warm_chunks);
    assert!(warm_events > 0);
    let (allocs, (n, bytes)) = allocations(|| decode(&mut d, &chunks));
    assert!(n >= min_events, "only {n} events with {size}-byte chunks");
    assert!(bytes > n, "event data was consumed");
    assert_eq!(allocs, 0, "{allocs} allocations for {n} events with {size}-byte chunks");
    // The whole stream was consumed: nothing left over.
    assert_eq!(d.finish().discarded_bytes, 0);
}

/// The counter works: an allocation inside the measured phase is seen.
#[test]
fn counter_sees_allocations() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (allocs, v) = allocations(|| black_box(vec![1u8; 100]));
    assert_eq!(v.len(), 100);
    assert!(allocs >= 1);
    // Owning an event's copy allocates, so the test would notice it.
    let mut d = Decoder::new();
    let (allocs, owned) = allocations(|| {
        let mut out = Vec::new();
        d.feed_each(b"data: x\n\n", |e| out.push(e.unwrap().to_owned_event()));
        out
    });
    assert_eq!(owned.len(), 1);
    assert!(allocs >= 2, "{allocs}");
}

/// A hand-made stream exercising every path that assembles events in the
/// decoder's buffers: multi-line data, CRLF and CR endings, comments, ids,
/// retry, an empty event type, events with no data, invalid UTF-8 (replaced
/// with U+FFFD into reused scratch buffers).
fn mixed_stream(events: usize) -> Vec<u8> {
    let mut s = Vec::new();
    for i in 0..events {
        match i % 6 {
            0 => s.extend_from_slice(b"event: content_block_delta\ndata: {\"text\":\"hello\"}\n\n"),
            1 => s.extend_from_slice(
                b"id: 42\r\ndata: first line of a multi-line event\r\ndata: second line\r\ndata:\r\ndata: fourth\r\n\r\n",
            ),
            2 => s.extend_from_slice(b": keep-alive comment\rretry: 1500\rdata: lone CR endings\r\r"),
            3 => s.extend_from_slice(b"event:\ndata:x\ndata: caf\xC3\xA9 \xF0\x9F\x99\x82 invalid \xFF\xC3(\n\n"),
            4 => s.extend_from_slice(b"event: ping\n\n: just a comment block\n\nid\ndata: after id reset\n\nid: \xFE7\ndata: y\n\n"),
            _ => {
                s.extend_from_slice(b"data: ");
                s.extend(std::iter::repeat(b'a' + (i % 26) as u8).take(300 + i % 200));
                s.extend_from_slice(b"\ndata: tail\n\n");
            }
        }
    }
    s
}

#[test]
fn anthropic_text_corpus_is_allocation_free_in_steady_state() {
    let corpus = ssefold_corpus::anthropic_text(4 << 20);
    let (warm, steady) = corpus.split_at(corpus.len() / 4);
    // `warm` may end mid-event: continuing on the same decoder is still one
    // stream, split at an arbitrary chunk boundary.
    for size in [4 << 10, 64 << 10, 7] {
        assert_steady_state_allocation_free(warm, steady, size, 10_000);
    }
}

#[test]
fn tool_use_and_openai_corpora_are_allocation_free_in_steady_state() {
    for name in ["anthropic-tool-use", "openai-chat"] {
        let corpus = ssefold_corpus::by_name(name, 6 << 20).unwrap();
        let (warm, steady) = corpus.split_at(corpus.len() / 3);
        for size in [4 << 10, 64 << 10, 7] {
            assert_steady_state_allocation_free(warm, steady, size, 10_000);
        }
    }
}

#[test]
fn multi_line_and_split_events_are_allocation_free_in_steady_state() {
    // Buffers grow to their high-water mark during warm-up (a line split
    // across a chunk boundary, the longest multi-line event): the warm-up
    // must see as many boundaries as it takes, so it is a full-size copy.
    let warm = mixed_stream(12_000);
    let steady = mixed_stream(12_000);
    for size in [4 << 10, 64 << 10, 7, 1] {
        assert_steady_state_allocation_free(&warm, &steady, size, 10_000);
    }
}
