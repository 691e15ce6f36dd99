//! The Rust side of the C ABI benchmark (`make c-bench`, see BENCHMARKS.md).
//!
//! `capi_bench CORPUS_FILE [MIB]` writes the core's `anthropic_text` corpus
//! ([`ssefold_corpus::anthropic_text`]) to `CORPUS_FILE`, then decodes it with the Rust API the way the C
//! bench (`tests/c/bench_sse.c`) does through the C ABI: 16 KiB chunks (a
//! libcurl write), one callback per event summing the data lengths. It
//! prints the best and median of 25 runs as MB/s plus a checksum the C side must
//! match. With `SSEFOLD_BENCH_MODE=fold` it measures the provider stream
//! instead: each turn of the corpus folded by a fresh stream (text deltas
//! counted and summed, the folded message built and serialized, as
//! `ssefold_stream_message_json` does for C).

use std::time::Instant;

use ssefold::providers::{Provider, Stream, StreamEvent};
use ssefold::sse::Decoder;

/// Timed runs per process (`SSEFOLD_BENCH_RUNS` overrides); the best and the
/// median are reported.
const RUNS: usize = 25;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: capi_bench CORPUS_FILE [MIB]");
    let mib: usize = args.get(2).map_or(16, |s| s.parse().expect("MIB is a number"));
    // SSEFOLD_BENCH_READ=1: decode the existing file (for instruction counts).
    let bytes = if std::env::var("SSEFOLD_BENCH_READ").is_ok_and(|v| v == "1") {
        std::fs::read(path).expect("read the corpus")
    } else {
        let bytes = ssefold_corpus::anthropic_text(mib << 20);
        std::fs::write(path, &bytes).expect("write the corpus");
        bytes
    };
    let runs: usize = std::env::var("SSEFOLD_BENCH_RUNS").map_or(RUNS, |s| s.parse().expect("a number"));
    // SSEFOLD_BENCH_MODE=fold: the provider stream (text deltas) instead of the SSE decoder.
    let fold = std::env::var("SSEFOLD_BENCH_MODE").is_ok_and(|v| v == "fold");
    let turns = if fold { turns(&bytes) } else { Vec::new() };
    let mut times = Vec::new();
    let (mut events, mut data_bytes) = (0u64, 0u64);
    for _ in 0..runs {
        let start = Instant::now();
        let (n, sum) = if fold { fold_once(&turns) } else { decode_once(&bytes) };
        times.push(start.elapsed().as_secs_f64());
        (events, data_bytes) = (std::hint::black_box(n), std::hint::black_box(sum));
    }
    times.sort_by(f64::total_cmp);
    let (best, median) = (times[0], times[runs / 2]);
    let mbs = |t: f64| bytes.len() as f64 / t / 1e6;
    println!(
        "rust-api bytes={} events={events} data_bytes={data_bytes} median_MB/s={:.1} MB/s={:.1}",
        bytes.len(),
        mbs(median),
        mbs(best)
    );
}

/// SSE events and the sum of their data lengths.
// Out of line: `make c-bench` counts one call's instructions.
#[inline(never)]
fn decode_once(bytes: &[u8]) -> (u64, u64) {
    let mut decoder = Decoder::new();
    let (mut n, mut sum) = (0u64, 0u64);
    for chunk in bytes.chunks(16 * 1024) {
        let mut it = decoder.feed(chunk);
        while let Some(e) = it.next_event() {
            let e = e.expect("the corpus is valid");
            n += 1;
            sum += e.data().len() as u64;
        }
    }
    (n, sum)
}

/// Where each turn of the corpus ends: after its `message_stop` event's
/// blank line (the corpus is whole turns, one HTTP response each).
const TURN_END: &[u8] = b"data: {\"type\":\"message_stop\"}\n\n";

/// The corpus split into its turns (each ending after its `message_stop`
/// event's blank line), before any timing.
fn turns(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let end = memchr::memmem::find(rest, TURN_END).map_or(rest.len(), |at| at + TURN_END.len());
        let (turn, tail) = rest.split_at(end);
        out.push(turn);
        rest = tail;
    }
    out
}

/// Text deltas and the sum of their lengths, through the provider stream:
/// each turn folded by a fresh stream, fed in 16 KiB chunks, finished, its
/// message serialized (as the C side does).
#[inline(never)]
fn fold_once(turns: &[&[u8]]) -> (u64, u64) {
    let (mut n, mut sum) = (0u64, 0u64);
    let mut on_event = |e: &StreamEvent<'_>| {
        if let StreamEvent::TextDelta { text, .. } = e {
            n += 1;
            sum += text.len() as u64;
        }
    };
    for turn in turns {
        let mut stream = Stream::new(Provider::Auto);
        for chunk in turn.chunks(16 * 1024) {
            stream.feed(chunk, &mut on_event).expect("the corpus is valid");
        }
        stream.finish(&mut on_event).expect("each turn ends cleanly");
        // As the C side does with ssefold_stream_message_json: the message as JSON text.
        std::hint::black_box(stream.message().to_string());
    }
    (n, sum)
}
