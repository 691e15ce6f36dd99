//! Helpers shared by the behaviour tests.
#![allow(dead_code)]

use ssefold::sse::{DecodeError, Decoder, DecoderConfig, EndOfStream, OwnedEvent};

/// Everything a decoder reports for one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Events and errors, in order.
    pub items: Vec<Result<OwnedEvent, DecodeError>>,
    /// The end-of-stream report.
    pub end: EndOfStream,
    /// Last event ID after the stream ended.
    pub last_event_id: Option<String>,
    /// Reconnection time after the stream ended.
    pub reconnection_time: Option<u64>,
}

impl Decoded {
    /// The events only.
    pub fn events(&self) -> Vec<OwnedEvent> {
        self.items.iter().filter_map(|r| r.as_ref().ok().cloned()).collect()
    }
}

/// Decodes `chunks` as one stream with a fresh decoder.
pub fn decode_chunks<'a>(config: &DecoderConfig, chunks: impl IntoIterator<Item = &'a [u8]>) -> Decoded {
    let mut d = Decoder::with_config(config.clone());
    let mut items = Vec::new();
    for chunk in chunks {
        d.feed_each(chunk, |r| items.push(r.map(|e| e.to_owned_event())));
    }
    let end = d.finish();
    Decoded {
        items,
        end,
        last_event_id: d.last_event_id().map(str::to_owned),
        reconnection_time: d.reconnection_time(),
    }
}

/// Decodes `bytes` split at the given offsets (sorted, within bounds).
pub fn decode_split(config: &DecoderConfig, bytes: &[u8], cuts: &[usize]) -> Decoded {
    let mut chunks = Vec::new();
    let mut prev = 0;
    for &c in cuts {
        chunks.push(&bytes[prev..c]);
        prev = c;
    }
    chunks.push(&bytes[prev..]);
    decode_chunks(config, chunks)
}

/// Asserts that whole, 1-byte, and every two-piece chunking of `bytes`
/// give the same result, and returns it.
pub fn decode_every_way(config: &DecoderConfig, bytes: &[u8]) -> Decoded {
    let whole = decode_chunks(config, [bytes]);
    let bytewise = decode_chunks(config, bytes.chunks(1));
    assert_eq!(bytewise, whole, "1-byte chunks differ");
    for cut in 0..=bytes.len() {
        assert_eq!(decode_split(config, bytes, &[cut]), whole, "split at {cut} differs");
    }
    whole
}
