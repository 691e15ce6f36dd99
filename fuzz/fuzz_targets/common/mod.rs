//! What the fuzz targets share: a stream folded whole or chunked, and the
//! chunk-size cycle a seed picks.

use ssefold::providers::{Provider, Stream, StreamConfig};

/// Every normalized event (JSON form), the folded message, and how the
/// stream ended (`ok` or the first error; `finish` only when no feed
/// failed).
pub fn fold(
    provider: Provider,
    config: &StreamConfig,
    chunks: &[&[u8]],
) -> (Vec<serde_json::Value>, serde_json::Value, String) {
    let mut s = Stream::with_config(provider, config.clone());
    let mut events = Vec::new();
    let mut end = String::from("ok");
    for c in chunks {
        if let Err(e) = s.feed(c, |e| events.push(e.to_json())) {
            end = format!("{e:?}");
            break;
        }
    }
    if end == "ok" {
        if let Err(e) = s.finish(|e| events.push(e.to_json())) {
            end = format!("{e:?}");
        }
    }
    (events, s.message(), end)
}

/// `body` cut into pieces of 1 to 13 bytes, in a cycle `seed` shifts.
pub fn chunked(body: &[u8], seed: usize) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let (mut pos, mut i) = (0, 0);
    while pos < body.len() {
        let n = (1 + (seed + i * 7) % 13).min(body.len() - pos);
        chunks.push(&body[pos..pos + n]);
        pos += n;
        i += 1;
    }
    chunks
}
