//! Decodes a synthetic corpus repeatedly, for profiling and for
//! instruction counts that do not depend on the machine's load
//! (`valgrind --tool=callgrind`, `perf record`):
//!
//! `cargo run --release --example decode_corpus -- [NAME] [MiB] [CHUNK] [ROUNDS] [IMPL]`
//!
//! NAME is a corpus name (`ssefold_corpus::NAMES`, default
//! `anthropic-text`), IMPL is `ssefold` (default), `eventsource-stream` or
//! `memchr` (newline count only). Prints MB/s, events/s and the decoder's
//! memory footprint.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::Instant;

use eventsource_stream::Eventsource;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "anthropic-text".into());
    let mib: usize = args.next().map_or(20, |s| s.parse().expect("MiB"));
    let chunk: usize = args.next().map_or(65536, |s| s.parse().expect("CHUNK"));
    let rounds: usize = args.next().map_or(20, |s| s.parse().expect("ROUNDS"));
    let imp = args.next().unwrap_or_else(|| "ssefold".into());
    let corpus = ssefold_corpus::by_name(&name, mib << 20).expect("corpus name");
    let chunks: Vec<&[u8]> = corpus.chunks(chunk).collect();
    let owned: Vec<bytes::Bytes> = chunks.iter().map(|c| bytes::Bytes::copy_from_slice(c)).collect();
    let mut d = ssefold::sse::Decoder::new();
    let start = Instant::now();
    let mut events = 0usize;
    for _ in 0..rounds {
        match imp.as_str() {
            "ssefold" => {
                for c in &chunks {
                    let mut it = d.feed(c);
                    while let Some(e) = it.next_event() {
                        let e = e.expect("valid corpus");
                        black_box(e.data().len() + e.event().len());
                        events += 1;
                    }
                }
                d.finish();
            }
            "eventsource-stream" => {
                let stream = futures::stream::iter(owned.iter().cloned().map(Ok::<_, Infallible>)).eventsource();
                for e in futures::executor::block_on_stream(stream) {
                    let e = e.expect("valid corpus");
                    black_box(e.data.len() + e.event.len());
                    events += 1;
                }
            }
            "memchr" => events += memchr::memchr_iter(b'\n', black_box(&corpus)).count(),
            other => panic!("unknown IMPL {other}"),
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let bytes = (corpus.len() * rounds) as f64;
    println!(
        "{imp} on {name} ({} bytes, {chunk}-byte chunks): {events} events, {:.1} MB/s, {:.2} M events/s, footprint {} B",
        corpus.len(),
        bytes / secs / 1e6,
        events as f64 / secs / 1e6,
        d.memory_footprint()
    );
}
