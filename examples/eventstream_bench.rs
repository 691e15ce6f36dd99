//! Times ssefold's AWS event-stream decoder on a file, for
//! `python/bench/eventstream.py` (which times botocore's parser on the same
//! bytes): best of ROUNDS samples (each about 0.2 s of repeated passes, each
//! pass feeding the file in 4 KiB chunks, `benches/support`), in this
//! thread's CPU time; memcpy of the same chunks alongside. Prints one JSON object.
//!
//! ```text
//! cargo run --release --example eventstream_bench FILE [ROUNDS]
//! ```

use std::hint::black_box;

#[path = "../benches/support/mod.rs"]
mod support;
use support::{best_secs, decode_eventstream, memcpy_chunks, reps_for, Clock};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: eventstream_bench FILE [ROUNDS]");
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(15);
    let body = std::fs::read(&path).expect("read FILE");
    let (messages, payload) = decode_eventstream(&body);
    let mut buf = Vec::with_capacity(support::CHUNK);
    let reps_decode = reps_for(|| {
        black_box(decode_eventstream(&body));
    });
    let reps_copy = reps_for(|| {
        black_box(memcpy_chunks(&body, &mut buf));
    });
    let (mut decode, mut copy) = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        decode = decode.min(best_secs(1, reps_decode, || {
            black_box(decode_eventstream(&body));
        }));
        copy = copy.min(best_secs(1, reps_copy, || {
            black_box(memcpy_chunks(&body, &mut buf));
        }));
    }
    println!(
        "{{\"bytes\": {}, \"messages\": {messages}, \"payload_bytes\": {payload}, \"decode_s\": {decode:e}, \"memcpy_s\": {copy:e}, \"clock\": \"{}\"}}",
        body.len(),
        Clock::kind()
    );
}
