//! Decodes a synthetic corpus repeatedly, for profiling the decoder
//! (`perf record`, `valgrind --tool=callgrind`):
//! `cargo run --release --example decode_corpus -- [NAME] [MB] [CHUNK] [ROUNDS]`.

use std::hint::black_box;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "anthropic-text".into());
    let mb: usize = args.next().map_or(20, |s| s.parse().expect("MB"));
    let chunk: usize = args.next().map_or(65536, |s| s.parse().expect("CHUNK"));
    let rounds: usize = args.next().map_or(20, |s| s.parse().expect("ROUNDS"));
    let corpus = ssefold::corpus::by_name(&name, mb << 20).expect("corpus name");
    let mut d = ssefold::sse::Decoder::new();
    let start = Instant::now();
    let mut events = 0usize;
    for _ in 0..rounds {
        for c in corpus.chunks(chunk) {
            let mut it = d.feed(c);
            while let Some(e) = it.next_event() {
                let e = e.expect("valid corpus");
                black_box(e.data().len() + e.event().len());
                events += 1;
            }
        }
        d.finish();
    }
    let secs = start.elapsed().as_secs_f64();
    let bytes = (corpus.len() * rounds) as f64;
    println!(
        "{name}: {events} events, {:.1} MB/s, {:.2} M events/s, footprint {} B",
        bytes / secs / 1e6,
        events as f64 / secs / 1e6,
        d.memory_footprint()
    );
}
