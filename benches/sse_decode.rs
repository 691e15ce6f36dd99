//! Raw SSE decoding throughput, side by side with its ceilings and a
//! peer decoder, in the same run.
//!
//! Input: a ~20 MB `anthropic_text` corpus (see `ssefold_corpus`), fed in
//! 4 KiB and 64 KiB chunks. Variants:
//!
//! * `memchr_newlines`: count `\n` over the same bytes with `memchr` (the
//!   practical ceiling for anything that must find line ends);
//! * `memcpy`: copy the corpus into a preallocated buffer (memory bandwidth);
//! * `ssefold/{4k,64k}`: `Decoder::feed` + `next_event`, every event's type,
//!   data and id length summed and black-boxed;
//! * `eventsource_stream/{4k,64k}`: the `eventsource-stream` 0.2 crate on the
//!   same chunks (`futures::stream::iter` of `Ok::<Bytes, Infallible>`),
//!   drained with `block_on_stream`, consuming each event the same way.
//!
//! Event counts and the decoder's memory footprint are printed before the
//! measurements, so events/s = events / time.
//!
//! The machines this runs on are shared, so after criterion's measurements
//! a summary table is printed from an **interleaved best-of-N** run: the
//! variants take turns, round after round, and each keeps its fastest round
//! (load from neighbours only ever slows a round down, so the minimum is the
//! most repeatable estimate, and interleaving exposes every variant to the
//! same load). The table gives MB/s, events/s and the ratios to memcpy and to
//! eventsource-stream.
//!
//! Run: `cargo bench --bench sse_decode` (add `-- --quick` for a smoke run).

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{criterion_group, BenchmarkId, Criterion, SamplingMode, Throughput};
use eventsource_stream::Eventsource;
use ssefold::sse::Decoder;

const CORPUS_BYTES: usize = 20 << 20;
const CHUNKS: [(&str, usize); 2] = [("4k", 4 << 10), ("64k", 64 << 10)];

/// Decodes `chunks` with ssefold; returns (events, summed lengths).
fn ssefold_decode(decoder: &mut Decoder, chunks: &[&[u8]]) -> (usize, usize) {
    let (mut n, mut len) = (0, 0);
    for chunk in chunks {
        let mut events = decoder.feed(chunk);
        while let Some(e) = events.next_event() {
            let e = e.expect("corpus decodes without error");
            n += 1;
            len += e.data().len() + e.event().len() + e.id().map_or(0, str::len);
        }
    }
    let end = decoder.finish();
    assert_eq!(end.discarded_bytes, 0);
    (n, len)
}

/// Decodes `chunks` with eventsource-stream; returns (events, summed lengths).
fn eventsource_decode(chunks: &[Bytes]) -> (usize, usize) {
    let stream = futures::stream::iter(chunks.iter().cloned().map(Ok::<Bytes, Infallible>)).eventsource();
    let (mut n, mut len) = (0, 0);
    for e in futures::executor::block_on_stream(stream) {
        let e = e.expect("corpus decodes without error");
        n += 1;
        len += e.data.len() + e.event.len() + e.id.len();
    }
    (n, len)
}

fn bench(c: &mut Criterion) {
    let corpus = ssefold_corpus::anthropic_text(CORPUS_BYTES);
    let total = corpus.len();

    // Sanity and reporting, outside the measurements.
    let whole_events = {
        let mut d = Decoder::new();
        ssefold_decode(&mut d, &[&corpus]).0
    };
    println!("corpus: anthropic_text, {total} bytes, {whole_events} events");
    for (name, size) in CHUNKS {
        let chunks: Vec<&[u8]> = corpus.chunks(size).collect();
        let mut d = Decoder::new();
        let (n, _) = ssefold_decode(&mut d, &chunks);
        assert_eq!(n, whole_events, "chunking invariance");
        let owned: Vec<Bytes> = chunks.iter().map(|c| Bytes::copy_from_slice(c)).collect();
        let (peer, _) = eventsource_decode(&owned);
        assert_eq!(peer, whole_events, "eventsource-stream sees the same events");
        println!(
            "{name} chunks: {} chunks; Decoder::memory_footprint() after the corpus = {} bytes",
            chunks.len(),
            d.memory_footprint()
        );
    }

    let mut g = c.benchmark_group("sse_decode");
    g.throughput(Throughput::Bytes(total as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));

    g.bench_function("memchr_newlines", |b| {
        b.iter(|| black_box(memchr::memchr_iter(b'\n', black_box(&corpus)).count()))
    });
    let mut dst = vec![0u8; total];
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&corpus));
            black_box(&mut dst);
        })
    });

    for (name, size) in CHUNKS {
        let chunks: Vec<&[u8]> = corpus.chunks(size).collect();
        let mut d = Decoder::new();
        g.bench_with_input(BenchmarkId::new("ssefold", name), &chunks, |b, chunks| {
            b.iter(|| black_box(ssefold_decode(&mut d, black_box(chunks))))
        });
    }

    g.sampling_mode(SamplingMode::Flat);
    for (name, size) in CHUNKS {
        let owned: Vec<Bytes> = corpus.chunks(size).map(Bytes::copy_from_slice).collect();
        g.bench_with_input(BenchmarkId::new("eventsource_stream", name), &owned, |b, chunks| {
            b.iter(|| black_box(eventsource_decode(black_box(chunks))))
        });
    }
    g.finish();
}

/// The interleaved best-of-N table (see the module docs).
fn summary() {
    let corpus = ssefold_corpus::anthropic_text(CORPUS_BYTES);
    let total = corpus.len();
    let events = ssefold_decode(&mut Decoder::new(), &[&corpus]).0;
    let chunks: Vec<Vec<&[u8]>> = CHUNKS.iter().map(|&(_, size)| corpus.chunks(size).collect()).collect();
    let owned: Vec<Vec<Bytes>> =
        CHUNKS.iter().map(|&(_, size)| corpus.chunks(size).map(Bytes::copy_from_slice).collect()).collect();
    let mut dst = vec![0u8; total];

    type Variant<'a> = (String, Box<dyn FnMut() -> usize + 'a>);
    let mut variants: Vec<Variant> = vec![
        ("memchr newline count".into(), Box::new(|| memchr::memchr_iter(b'\n', black_box(&corpus)).count())),
        (
            "memcpy".into(),
            Box::new(|| {
                dst.copy_from_slice(black_box(&corpus));
                black_box(&mut dst).len()
            }),
        ),
    ];
    for (i, (name, _)) in CHUNKS.iter().enumerate() {
        let c = &chunks[i];
        let mut d = Decoder::new();
        variants.push((format!("ssefold {name}"), Box::new(move || ssefold_decode(&mut d, black_box(c)).1)));
    }
    for (i, (name, _)) in CHUNKS.iter().enumerate() {
        let o = &owned[i];
        variants.push((format!("eventsource-stream {name}"), Box::new(move || eventsource_decode(black_box(o)).1)));
    }

    const ROUNDS: usize = 9;
    let mut best = vec![f64::INFINITY; variants.len()];
    for _ in 0..ROUNDS {
        for (i, (_, run)) in variants.iter_mut().enumerate() {
            let start = Instant::now();
            black_box(run());
            best[i] = best[i].min(start.elapsed().as_secs_f64());
        }
    }
    let memcpy = best[1];
    let peer: Vec<f64> = best[best.len() - CHUNKS.len()..].to_vec();
    println!();
    println!("interleaved best of {ROUNDS} rounds, anthropic_text {total} bytes, {events} events:");
    println!("| variant | best time | MB/s | events/s | share of memcpy speed | x eventsource-stream (same chunks) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (i, (name, _)) in variants.iter().enumerate() {
        let t = best[i];
        let is_decoder = name.starts_with("ssefold") || name.starts_with("eventsource");
        let per_event = if is_decoder { format!("{:.2} M", events as f64 / t / 1e6) } else { "-".into() };
        let chunking = name.rsplit(' ').next();
        let vs_peer = match CHUNKS.iter().position(|(c, _)| chunking == Some(c)) {
            Some(k) if is_decoder => format!("{:.1}x", peer[k] / t),
            _ => "-".into(),
        };
        println!(
            "| {name} | {:.2} ms | {:.0} | {per_event} | 1/{:.1} | {vs_peer} |",
            t * 1e3,
            total as f64 / t / 1e6,
            t / memcpy
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    Criterion::default().configure_from_args().final_summary();
}
