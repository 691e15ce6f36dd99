//! Allocations per event and peak heap while folding the benchmark corpora
//! (`cargo run --release --example fold_alloc [MiB] [corpus]`): the figures of
//! BENCHMARKS.md "Provider folding", section "Allocations and peak memory".

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use ssefold::providers::{Provider, Stream, StreamEvent};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        let live = LIVE.fetch_add(new_size, Relaxed) + new_size;
        LIVE.fetch_sub(layout.size(), Relaxed);
        PEAK.fetch_max(live, Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn main() {
    let mib: usize = std::env::args().nth(1).map_or(20, |s| s.parse().expect("MiB"));
    // An optional corpus name measures that one only (e.g. under DHAT).
    let only = std::env::args().nth(2);
    println!("| corpus | SSE events | normalized events | allocations | per SSE event | per normalized event | peak heap while folding (corpus excluded) | largest stream handle (with its folded content) |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut by_kind = Vec::new();
    for (name, provider) in [
        ("anthropic-text", Provider::Anthropic),
        ("anthropic-tool-use", Provider::Anthropic),
        ("openai-chat", Provider::OpenAIChat),
        ("anthropic-tool-stress", Provider::Anthropic),
    ] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let corpus = ssefold_corpus::by_name(name, mib << 20).unwrap();
        let sse_events = corpus.windows(2).filter(|w| *w == b"\n\n").count();
        let turns = ssefold_corpus::turns(&corpus);
        let base_live = LIVE.load(Relaxed);
        PEAK.store(base_live, Relaxed);
        let before = ALLOCS.load(Relaxed);
        let mut normalized = 0usize;
        let mut largest = 0usize;
        for t in &turns {
            let mut s = Stream::new(provider);
            for chunk in t.chunks(4096) {
                s.feed(chunk, |_| normalized += 1).unwrap();
            }
            let _ = s.finish(|_| normalized += 1);
            largest = largest.max(s.memory_footprint());
        }
        let allocs = ALLOCS.load(Relaxed) - before;
        let peak = PEAK.load(Relaxed) - base_live;
        println!(
            "| {name} | {sse_events} | {normalized} | {allocs} | {:.2} | {:.2} | {:.1} KiB | {:.1} KiB |",
            allocs as f64 / sse_events as f64,
            allocs as f64 / normalized as f64,
            peak as f64 / 1024.0,
            largest as f64 / 1024.0
        );
        by_kind.push((name, by_event_kind(provider, &turns)));
    }
    println!();
    println!("Allocations by SSE event kind (each SSE event fed whole; a delta event is one whose normalized events are only text / tool-argument deltas and path events):");
    println!();
    println!("| corpus | turns | delta events | allocations in delta events | per delta event | other events | allocations in other events | per turn |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (name, k) in by_kind {
        println!(
            "| {name} | {} | {} | {} | {:.3} | {} | {} | {:.1} |",
            k.turns,
            k.delta_events,
            k.delta_allocs,
            k.delta_allocs as f64 / k.delta_events as f64,
            k.other_events,
            k.other_allocs,
            k.other_allocs as f64 / k.turns as f64
        );
    }
}

/// Allocations split between delta events and the others.
struct ByKind {
    turns: usize,
    delta_events: usize,
    delta_allocs: usize,
    other_events: usize,
    other_allocs: usize,
}

/// Feeds every SSE event of every turn on its own and charges the
/// allocations it made to its kind (what it produced). `finish` and the
/// stream's creation count as other.
fn by_event_kind(provider: Provider, turns: &[&[u8]]) -> ByKind {
    let mut k = ByKind { turns: turns.len(), delta_events: 0, delta_allocs: 0, other_events: 0, other_allocs: 0 };
    for t in turns {
        let before = ALLOCS.load(Relaxed);
        let mut s = Stream::new(provider);
        k.other_allocs += ALLOCS.load(Relaxed) - before;
        let mut start = 0;
        while start < t.len() {
            let end = t[start..].windows(2).position(|w| w == b"\n\n").map_or(t.len(), |p| start + p + 2);
            let mut only_deltas = true;
            let before = ALLOCS.load(Relaxed);
            s.feed(&t[start..end], |e| {
                only_deltas &= matches!(
                    e,
                    StreamEvent::TextDelta { .. }
                        | StreamEvent::ToolArgsDelta { .. }
                        | StreamEvent::ToolArgsPath { .. }
                );
            })
            .unwrap();
            let n = ALLOCS.load(Relaxed) - before;
            if only_deltas {
                k.delta_events += 1;
                k.delta_allocs += n;
            } else {
                k.other_events += 1;
                k.other_allocs += n;
            }
            start = end;
        }
        let before = ALLOCS.load(Relaxed);
        let _ = s.finish(|_| {});
        drop(s);
        k.other_allocs += ALLOCS.load(Relaxed) - before;
    }
    k
}
