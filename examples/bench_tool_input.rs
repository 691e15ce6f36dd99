//! Writes the relayed AI SDK streams of one tool call whose arguments are
//! 320 KB of JSON sent in small deltas (8 to 48 bytes, as a provider's
//! `input_json_delta`s come), without coalescing and with the default
//! [`RelayConfig::tool_input_coalesce_bytes`], for the browser benchmark
//! `tests/js/bench_tool_input.mjs` (`make js-bench`).
//!
//! ```text
//! cargo run --example bench_tool_input -- OUT_DIR [ARGUMENT_BYTES]
//! ```
//!
//! Writes `OUT_DIR/off.sse` and `OUT_DIR/default.sse`, and prints the
//! number of `tool-input-delta` chunks of each.

use std::path::PathBuf;

use ssefold::providers::{Provider, Stream};
use ssefold::relay::{Relay, RelayConfig, RelayFormat};

/// An Anthropic stream whose one tool call writes a file of `size` bytes
/// (`{"path": …, "content": …}`), in deltas of 8 to 48 bytes.
fn provider_stream(size: usize) -> Vec<u8> {
    let mut content = String::new();
    let words = ["fn", "let", "value", "=", "{", "}", "(", ")", "return", "self", "\\n", "\\\"quoted\\\"", "é", "🌱"];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    while content.len() < size {
        content.push_str(words[(next() % words.len() as u64) as usize]);
        content.push(' ');
    }
    let args = format!("{{\"path\": \"src/generated.rs\", \"content\": \"{content}\"}}");
    let mut out = String::new();
    out.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n");
    out.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write_file\",\"input\":{}}}\n\n");
    let mut at = 0;
    while at < args.len() {
        let mut end = (at + 8 + (next() % 41) as usize).min(args.len());
        while !args.is_char_boundary(end) {
            end += 1;
        }
        let piece = serde_json::to_string(&args[at..end]).expect("a string");
        out.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":");
        out.push_str(&piece);
        out.push_str("}}\n\n");
        at = end;
    }
    out.push_str("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
    out.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":90000}}\n\n");
    out.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    out.into_bytes()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().expect("usage: bench_tool_input OUT_DIR [ARGUMENT_BYTES]"));
    let size: usize = args.next().map_or(320 << 10, |s| s.parse().expect("ARGUMENT_BYTES"));
    std::fs::create_dir_all(&out).expect("create OUT_DIR");
    let body = provider_stream(size);
    for (name, bytes) in [("off", 0), ("default", RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_BYTES)] {
        let config = RelayConfig { tool_input_coalesce_bytes: bytes, ..RelayConfig::new(RelayFormat::AiSdk) };
        let mut relay = Relay::with_stream(config, Stream::new(Provider::Anthropic));
        // The provider's bytes as they come off the network, a few KB a read.
        let mut browser = Vec::new();
        for chunk in body.chunks(4096) {
            browser.extend_from_slice(relay.feed(chunk).expect("not finished").bytes);
        }
        browser.extend_from_slice(relay.end_of_input().expect("not finished").bytes);
        browser
            .extend_from_slice(relay.tool_result("toolu_1", &serde_json::json!("written"), false, None).expect("open"));
        browser.extend_from_slice(relay.finish(None).expect("not finished"));
        let deltas = memchr::memmem::find_iter(&browser, b"\"type\":\"tool-input-delta\"").count();
        std::fs::write(out.join(format!("{name}.sse")), &browser).expect("write");
        println!("{name}: {deltas} tool-input-delta chunks, {} bytes", browser.len());
    }
}
