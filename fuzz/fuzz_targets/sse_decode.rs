//! Fuzz target `sse_decode`: the SSE decoder never panics, gives the same
//! events, errors and end-of-stream report for every chunking of the same
//! bytes, and keeps its memory within its limits.
//!
//! Input layout: byte 0 picks the configuration (default limits or tiny
//! ones, so the limit paths are hit; replacement or strict UTF-8), bytes
//! 1..=4 are the chunking seed (a cycle of chunk sizes 0..=31), the rest is
//! the stream. The stream is decoded twice on one decoder (a reconnection
//! after `finish`), whole and chunked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssefold::sse::{DecodeError, Decoder, DecoderConfig, EndOfStream, OwnedEvent, Utf8Mode};

#[derive(Debug, PartialEq)]
struct Outcome {
    items: Vec<Result<OwnedEvent, DecodeError>>,
    end: EndOfStream,
    last_event_id: Option<String>,
    reconnection_time: Option<u64>,
}

fn decode(d: &mut Decoder, chunks: &[&[u8]], bound: usize) -> Outcome {
    let mut items = Vec::new();
    for c in chunks {
        d.feed_each(c, |r| items.push(r.map(|e| e.to_owned_event())));
        assert!(d.memory_footprint() <= bound, "footprint {} > {bound}", d.memory_footprint());
    }
    let end = d.finish();
    Outcome {
        items,
        end,
        last_event_id: d.last_event_id().map(str::to_owned),
        reconnection_time: d.reconnection_time(),
    }
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 5 {
        return;
    }
    let (head, body) = input.split_at(5);
    let utf8 = if head[0] & 1 == 0 { Utf8Mode::Replace } else { Utf8Mode::Strict };
    let config = match head[0] >> 1 & 3 {
        0 => DecoderConfig { utf8, ..DecoderConfig::default() },
        1 => DecoderConfig { max_line_len: 64, max_event_size: 64, max_id_len: 16, utf8 },
        2 => DecoderConfig { max_line_len: 64, max_event_size: 200, max_id_len: 64, utf8 },
        _ => DecoderConfig { max_line_len: 7, max_event_size: 5, max_id_len: 2, utf8 },
    };
    // Within the limits: each buffer may be over-allocated by growth (x2)
    // and U+FFFD replacement may triple its bytes.
    let bound = if config.max_line_len < 1 << 20 {
        core::mem::size_of::<Decoder>() + 16 * (config.max_line_len + config.max_event_size) + 256
    } else {
        usize::MAX
    };

    let sizes: Vec<usize> = head[1..].iter().map(|b| usize::from(b % 32)).collect();
    let mut chunks = Vec::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let size = sizes[i % sizes.len()];
        i += 1;
        // All-zero seeds still make progress: every fifth empty chunk, take one byte.
        let size = if size == 0 && i % 5 == 0 { 1 } else { size };
        let (a, b) = rest.split_at(size.min(rest.len()));
        chunks.push(a);
        rest = b;
    }

    let mut whole = Decoder::with_config(config.clone());
    let expected = (decode(&mut whole, &[body], bound), decode(&mut whole, &[body], bound));
    let mut chunked = Decoder::with_config(config);
    let got = (decode(&mut chunked, &chunks, bound), decode(&mut chunked, &chunks, bound));
    assert_eq!(got, expected);
});
