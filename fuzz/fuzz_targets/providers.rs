//! Fuzz target `providers`: a provider stream never panics, and gives the
//! same normalized events, folded message and result for every chunking of
//! the same bytes.
//!
//! Input layout: byte 0 picks the dialect (bits 0–1: Anthropic, OpenAI
//! Chat, OpenAI Responses, auto; with bit 3 set: Gemini, Ollama, Gemini,
//! Ollama) and small or default limits (bit 2), byte 1 the chunk-size cycle
//! seed, the rest is the stream.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use ssefold::providers::{Provider, StreamConfig};

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
    let whole = common::fold(provider, &config, &[body]);
    assert_eq!(whole, common::fold(provider, &config, &common::chunked(body, seed)));
});
