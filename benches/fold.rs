//! Provider folding: bytes → folded message on the ~20 MB shared
//! synthetic corpora ([`ssefold_corpus`]; each turn is one stream, fed in
//! 4 KiB chunks, [`support::fold_turns`]), next to `serde_json::from_slice::<Value>` on every data
//! payload of the same corpus.
//!
//! `cargo bench --bench fold` (set `SSEFOLD_BENCH_MB` to change the corpus size).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;
use ssefold::providers::Provider;
use ssefold_corpus as corpus;

#[path = "support/mod.rs"]
mod support;
use support::{fold_turns as fold, Clock};

/// Splits a multi-turn corpus into its turns (one HTTP response each):
/// before every `event: message_start` (Anthropic), after every
/// `data: [DONE]` (OpenAI).
fn payloads(corpus: &str) -> Vec<&str> {
    corpus.lines().filter_map(|l| l.strip_prefix("data: ")).filter(|d| *d != "[DONE]").collect()
}

fn bench(c: &mut Criterion) {
    let mb: usize = std::env::var("SSEFOLD_BENCH_MB").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let target = mb << 20;
    let corpora: [(&str, Provider, Vec<u8>); 4] = [
        ("anthropic_text", Provider::Anthropic, corpus::anthropic_text(target)),
        ("anthropic_tool_use", Provider::Anthropic, corpus::anthropic_tool_use(target)),
        ("openai_chat_parallel_tools", Provider::OpenAIChat, corpus::openai_chat_parallel_tools(target)),
        ("anthropic_tool_stress", Provider::Anthropic, corpus::anthropic_tool_stress(target)),
    ];
    for (name, provider, corpus) in &corpora {
        let text = std::str::from_utf8(corpus).unwrap();
        let data = payloads(text);
        let turns = corpus::turns(corpus);
        let (events, _) = fold(*provider, &turns);
        eprintln!(
            "{name}: {:.1} MB, {} turns, {} SSE events, {} normalized events",
            corpus.len() as f64 / 1e6,
            turns.len(),
            data.len(),
            events,
        );
        let mut g = c.benchmark_group(*name);
        g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
        g.throughput(Throughput::Bytes(corpus.len() as u64));
        g.bench_function("fold_4k_chunks", |b| b.iter(|| black_box(fold(*provider, black_box(&turns)))));
        g.bench_function("serde_json_value_per_payload", |b| {
            b.iter(|| {
                for d in &data {
                    black_box(serde_json::from_slice::<Value>(d.as_bytes()).unwrap());
                }
            })
        });
        g.finish();
        // Interleaved pass (robust ratio on a shared machine): best of N
        // alternating rounds, timed in this thread's CPU time (Linux
        // schedstat; wall time when unavailable) so that being descheduled
        // by other processes does not count.
        let (mut best_fold, mut best_serde) = (f64::MAX, f64::MAX);
        for _ in 0..11 {
            let t = Clock::start();
            black_box(fold(*provider, &turns));
            best_fold = best_fold.min(t.secs());
            let t = Clock::start();
            for d in &data {
                black_box(serde_json::from_slice::<Value>(d.as_bytes()).unwrap());
            }
            best_serde = best_serde.min(t.secs());
        }
        let mb = corpus.len() as f64 / (1 << 20) as f64;
        eprintln!(
            "INTERLEAVED ({}) {name}: fold {:.0} MiB/s ({:.2} M SSE events/s, {:.2} M normalized events/s), serde_json Value {:.0} MiB/s, fold/serde {:.2}x",
            Clock::kind(),
            mb / best_fold,
            data.len() as f64 / best_fold / 1e6,
            events as f64 / best_fold / 1e6,
            mb / best_serde,
            best_serde / best_fold
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
