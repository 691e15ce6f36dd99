//! The relay's cost: provider bytes → browser bytes against folding alone,
//! on the fold corpora, and its heap allocations per delta.
//!
//! ```text
//! cargo run --release --example relay_bench [MB]      (default 32 MB per corpus)
//! valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!   target/release/examples/relay_bench once CORPUS [MB]
//! callgrind_annotate --inclusive=yes cg.out | grep relay_bench::
//! ```
//!
//! `once CORPUS`: fold only, relay ai-sdk and relay catalog run once each
//! on one corpus (`fold_only`, `relay_ai_sdk`, `relay_catalog`, never
//! inlined), for instruction counts that do not depend on the machine's
//! load.
//!
//! Interleaved pass: best of 9 alternating rounds of (fold only) and (fold +
//! relay, each format), in this thread's CPU time
//! (`/proc/thread-self/schedstat`, wall time when unavailable; it moved in
//! steps of about 4 ms here, hence 32 MB per corpus), every turn a fresh
//! stream fed in 4 KiB chunks. Allocations: a counting global allocator over
//! one long text turn relayed after a warm-up turn (steady state), divided
//! by its deltas.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use ssefold::providers::{Provider, Stream, StreamEvent};
use ssefold::relay::{Relay, RelayConfig, RelayFormat};
use ssefold_corpus as corpus;

#[path = "../benches/support/mod.rs"]
mod support;
use support::{fold_turns, timed};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Folding alone, named for callgrind's `--toggle-collect`.
#[inline(never)]
fn fold_only(provider: Provider, turns: &[&[u8]]) -> usize {
    fold_turns(provider, turns).0
}

fn relayed(provider: Provider, format: RelayFormat, turns: &[&[u8]]) -> usize {
    let mut bytes = 0;
    for turn in turns {
        let mut relay = Relay::with_stream(RelayConfig::new(format), Stream::new(provider));
        for chunk in turn.chunks(support::CHUNK) {
            bytes += black_box(relay.feed(chunk).unwrap().bytes).len();
        }
        bytes += relay.end_of_input().unwrap().bytes.len();
        bytes += relay.finish(None).unwrap().len();
        // The message taken as the fold alone takes it (`support::fold_turns`).
        black_box(relay.into_stream().map(Stream::into_message));
    }
    bytes
}

#[inline(never)]
fn relay_ai_sdk(provider: Provider, turns: &[&[u8]]) -> usize {
    relayed(provider, RelayFormat::AiSdk, turns)
}

#[inline(never)]
fn relay_catalog(provider: Provider, turns: &[&[u8]]) -> usize {
    relayed(provider, RelayFormat::Catalog, turns)
}

/// Allocations per text delta of a relay in steady state.
fn allocations_per_delta(format: RelayFormat) -> f64 {
    let corpus = corpus::anthropic_text(2 << 20);
    let turns = corpus::turns(&corpus);
    let mut relay = Relay::new(RelayConfig::new(format));
    let mut out = 0usize;
    let mut stream = Stream::new(Provider::Anthropic);
    // Warm-up: the first turn grows the buffers.
    stream.feed(turns[0], |e| out += relay.push(e).len()).unwrap();
    let mut deltas = 0u64;
    let mut stream = Stream::new(Provider::Anthropic);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for turn in &turns[1..] {
        stream
            .feed(turn, |e: &StreamEvent<'_>| {
                if matches!(e, StreamEvent::TextDelta { .. }) {
                    deltas += 1;
                }
                out += relay.push(e).len();
            })
            .unwrap_or(());
        stream = Stream::new(Provider::Anthropic);
    }
    let relay_allocs = ALLOCATIONS.load(Ordering::Relaxed) - before;
    // The same turns folded without the relay: what the fold itself allocates.
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for turn in &turns[1..] {
        let mut stream = Stream::new(Provider::Anthropic);
        stream
            .feed(turn, |e| {
                black_box(e);
            })
            .unwrap_or(());
    }
    let fold_allocs = ALLOCATIONS.load(Ordering::Relaxed) - before;
    black_box(out);
    relay_allocs.saturating_sub(fold_allocs) as f64 / deltas.max(1) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("once") {
        let mb: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
        let (provider, corpus) = match args.get(1).map(String::as_str) {
            Some("anthropic_text") => (Provider::Anthropic, corpus::anthropic_text(mb << 20)),
            Some("anthropic_tool_use") => (Provider::Anthropic, corpus::anthropic_tool_use(mb << 20)),
            Some("openai_chat_parallel_tools") => (Provider::OpenAIChat, corpus::openai_chat_parallel_tools(mb << 20)),
            other => panic!("unknown corpus {other:?}"),
        };
        let turns = corpus::turns(&corpus);
        black_box(fold_only(provider, &turns));
        black_box(relay_ai_sdk(provider, &turns));
        black_box(relay_catalog(provider, &turns));
        return;
    }
    let mb: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(32);
    let corpora = [
        ("anthropic_text", Provider::Anthropic, corpus::anthropic_text(mb << 20)),
        ("anthropic_tool_use", Provider::Anthropic, corpus::anthropic_tool_use(mb << 20)),
        ("openai_chat_parallel_tools", Provider::OpenAIChat, corpus::openai_chat_parallel_tools(mb << 20)),
    ];
    println!("| corpus | fold MiB/s | relay ai-sdk MiB/s | ai-sdk / fold | relay catalog MiB/s | catalog / fold |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (name, provider, corpus) in &corpora {
        let turns = corpus::turns(corpus);
        let (mut fold, mut ai, mut catalog) = (f64::MAX, f64::MAX, f64::MAX);
        for _ in 0..9 {
            fold = fold.min(timed(|| {
                black_box(fold_only(*provider, &turns));
            }));
            ai = ai.min(timed(|| {
                black_box(relay_ai_sdk(*provider, &turns));
            }));
            catalog = catalog.min(timed(|| {
                black_box(relay_catalog(*provider, &turns));
            }));
        }
        let mib = corpus.len() as f64 / (1 << 20) as f64;
        println!(
            "| {name} | {:.0} | {:.0} | {:.2}x | {:.0} | {:.2}x |",
            mib / fold,
            mib / ai,
            ai / fold,
            mib / catalog,
            catalog / fold
        );
    }
    for format in [RelayFormat::AiSdk, RelayFormat::Catalog] {
        println!("allocations per text delta ({}), steady state: {:.3}", format.name(), allocations_per_delta(format));
    }
}
