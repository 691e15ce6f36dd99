//! Fuzz target `providers`: a provider stream never panics, and gives the
//! same normalized events, folded message and result for every chunking of
//! the same bytes.
//!
//! Input layout: byte 0 picks the dialect (bits 0–1: Anthropic, OpenAI
//! Chat, OpenAI Responses, auto; with bit 3 set: Gemini, Ollama, Gemini,
//! Ollama) and small or default limits (bit 2), byte 1 the chunk-size cycle
//! seed, the rest is the stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssefold::providers::{Provider, Stream, StreamConfig};

fn run(
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

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let dialects = [
        Provider::Anthropic,
        Provider::OpenAIChat,
        Provider::OpenAIResponses,
        Provider::Auto,
        Provider::Gemini,
        Provider::Ollama,
        Provider::Gemini,
        Provider::Ollama,
    ];
    let provider = dialects[((data[0] & 3) | (data[0] >> 1 & 4)) as usize];
    let mut config = StreamConfig::default();
    if data[0] & 4 != 0 {
        config.max_parts = 3;
        config.max_tool_args_bytes = 64;
        config.max_text_bytes = 64;
        config.max_choices = 2;
    }
    let seed = data[1] as usize;
    let body = &data[2..];
    let whole = run(provider, &config, &[body]);
    let mut chunks = Vec::new();
    let (mut pos, mut i) = (0, 0);
    while pos < body.len() {
        let n = (1 + (seed + i * 7) % 13).min(body.len() - pos);
        chunks.push(&body[pos..pos + n]);
        pos += n;
        i += 1;
    }
    assert_eq!(whole, run(provider, &config, &chunks));
});
