//! The AWS event-stream decoder against memcpy of the same bytes, on the
//! synthetic Bedrock `ConverseStream` corpus (`ssefold_corpus::bedrock_converse`:
//! 100–300-byte text deltas and 1–16 KiB tool-input deltas), fed in 4 KiB
//! chunks ([`support::decode_eventstream`]); criterion means, then an
//! interleaved pass (best of 15 alternating rounds, each a sample of about
//! 0.2 s of repeated passes, thread CPU time) for the ratio. botocore's parser on the same bytes: `python/bench/eventstream.py`.
//!
//! `cargo bench --bench eventstream` (`SSEFOLD_BENCH_MB`, default 16).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "support/mod.rs"]
mod support;
use support::{best_secs, decode_eventstream, memcpy_chunks, reps_for, Clock};

fn bench(c: &mut Criterion) {
    let mb: usize = std::env::var("SSEFOLD_BENCH_MB").ok().and_then(|s| s.parse().ok()).unwrap_or(16);
    let body = ssefold_corpus::bedrock_converse(mb << 20);
    let (messages, payload) = decode_eventstream(&body);
    eprintln!("bedrock_converse: {:.1} MB, {messages} messages, {payload} payload bytes", body.len() as f64 / 1e6);
    let mut buf = Vec::with_capacity(support::CHUNK);
    let mut g = c.benchmark_group("eventstream_bedrock_converse");
    g.sample_size(20).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.bench_function("decode_4k_chunks", |b| b.iter(|| black_box(decode_eventstream(black_box(&body)))));
    g.bench_function("memcpy_4k_chunks", |b| b.iter(|| black_box(memcpy_chunks(black_box(&body), &mut buf))));
    g.finish();
    let reps_decode = reps_for(|| {
        black_box(decode_eventstream(&body));
    });
    let reps_copy = reps_for(|| {
        black_box(memcpy_chunks(&body, &mut buf));
    });
    let (mut best_decode, mut best_copy) = (f64::MAX, f64::MAX);
    for _ in 0..15 {
        best_decode = best_decode.min(best_secs(1, reps_decode, || {
            black_box(decode_eventstream(&body));
        }));
        best_copy = best_copy.min(best_secs(1, reps_copy, || {
            black_box(memcpy_chunks(&body, &mut buf));
        }));
    }
    let mib = body.len() as f64 / (1 << 20) as f64;
    eprintln!(
        "INTERLEAVED ({}) bedrock_converse: decode {:.0} MiB/s ({:.1} M messages/s), memcpy {:.0} MiB/s, decode/memcpy {:.3}",
        Clock::kind(),
        mib / best_decode,
        messages as f64 / best_decode / 1e6,
        mib / best_copy,
        best_copy / best_decode
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
