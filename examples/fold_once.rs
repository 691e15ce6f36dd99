//! Folds one corpus once (or, with `serde` as third argument, parses every
//! `data:` payload into a `serde_json::Value`), for instruction counts under
//! callgrind — the deterministic form of the fold-vs-serde ratio in
//! BENCHMARKS.md "Provider folding":
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='*fold_all*' target/release/examples/fold_once anthropic-tool-use 4
//! valgrind --tool=callgrind --toggle-collect='*serde_all*' target/release/examples/fold_once anthropic-tool-use 4 serde
//! valgrind --tool=callgrind --toggle-collect='*bound_all*' target/release/examples/fold_once anthropic-tool-use 4 bound
//! valgrind --tool=callgrind --toggle-collect='*bound_all*' target/release/examples/fold_once anthropic-tool-use 4 parsed
//! SSEFOLD_BENCH_ROUNDS=400 perf record -e cpu-clock -F 10000 target/release/examples/fold_once anthropic-tool-stress 4
//! ```
//!
//! `bound` measures what any fold behind this API pays (`bound_all`, each
//! turn's message cloned); `parsed` the same with each message built from
//! its JSON text by serde_json (`support::MessageText`).

use ssefold::providers::{Provider, Stream};

#[path = "../benches/support/mod.rs"]
mod support;
use support::HandOver;

/// Every turn through a fresh `Stream` in 4 KiB chunks, `finish`, `into_message()`.
#[inline(never)]
fn fold_all(provider: Provider, turns: &[&[u8]]) -> usize {
    let mut n = 0;
    for t in turns {
        let mut s = Stream::new(provider);
        for c in t.chunks(4096) {
            s.feed(c, |_| n += 1).unwrap();
        }
        let _ = s.finish(|_| n += 1);
        n += s.into_message().is_object() as usize;
    }
    n
}
/// The baseline: `serde_json::from_slice::<Value>` on every `data:` payload.
#[inline(never)]
fn serde_all(turns: &[&[u8]]) -> usize {
    let mut n = 0;
    for t in turns {
        for line in t.split(|&b| b == b'\n') {
            if let Some(payload) = line.strip_prefix(b"data: ") {
                n += serde_json::from_slice::<serde_json::Value>(payload).is_ok() as usize;
            }
        }
    }
    n
}

/// What any fold behind this API pays, whatever its parser: every turn's
/// SSE events framed in 4 KiB chunks (each event's data read) and its folded
/// message (built beforehand) handed over ([`HandOver`]: cloned, or built
/// from its JSON text).
#[inline(never)]
fn bound_all(turns: &[&[u8]], messages: &[impl HandOver]) -> usize {
    let mut n = 0;
    for (t, message) in turns.iter().zip(messages) {
        let mut d = ssefold::sse::Decoder::new();
        for c in t.chunks(4096) {
            d.feed_each(c, |e| n += e.map_or(0, |e| std::hint::black_box(e.data()).len()));
        }
        n += message.hand_over();
    }
    n
}

fn main() {
    let name = std::env::args().nth(1).unwrap();
    let mib: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let provider = if name == "openai-chat" { Provider::OpenAIChat } else { Provider::Anthropic };
    let corpus = ssefold_corpus::by_name(&name, mib << 20).unwrap();
    let turns = ssefold_corpus::turns(&corpus);
    if std::env::args().nth(3).as_deref() == Some("serde") {
        println!("{}", serde_all(&turns));
    } else if std::env::args().nth(3).as_deref() == Some("bound") {
        let messages = support::folded_messages(provider, &turns);
        println!("{}", bound_all(&turns, &messages));
    } else if std::env::args().nth(3).as_deref() == Some("parsed") {
        let texts = support::message_texts(&support::folded_messages(provider, &turns));
        println!("{}", bound_all(&turns, &texts));
    } else {
        // `SSEFOLD_BENCH_ROUNDS` folds the corpus that many times (default 1): long enough
        // for a sampling profiler (`perf record -e cpu-clock`, the one event this VM offers).
        let rounds: usize = std::env::var("SSEFOLD_BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
        println!("{}", (0..rounds).map(|_| fold_all(provider, &turns)).sum::<usize>());
    }
}
