//! Issue 26 item 13: an Anthropic tool input too large for a value tree
//! (`max_memory_bytes / 16`, estimated from its text) stays text. Whatever
//! its shape, arguments under `max_tool_args_bytes` fold within the budget:
//! the call is ready with its text, the message's JSON writes the text where
//! the input goes (the same value), `message()` builds the value when asked,
//! the relay writes it without building it; a small input is a value as
//! before.

use serde_json::{json, Value};
use ssefold::providers::{PartKind, Provider, Stream, StreamConfig, StreamError, StreamEvent, StreamLimit};
use ssefold::relay::{Relay, RelayConfig, RelayFormat};
use ssefold::sse::Decoder;

/// A budget under which 2 MB of amplifying arguments could not be a tree
/// (the tree of the nested shape is ~70× its text) but fit as text.
const BUDGET: usize = 32 << 20;

/// An Anthropic turn: a text block, then one tool call whose arguments are
/// `args` in `input_json_delta` fragments of `chunk` bytes (`stop` false: the
/// body ends before the block stops).
fn anthropic_call(args: &str, chunk: usize, stop: bool) -> Vec<u8> {
    let mut out = String::with_capacity(args.len() * 2 + 1024);
    let mut event = |data: Value| {
        out.push_str(&format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap()));
    };
    event(json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
        "model": "x", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}));
    event(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
    event(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Writing."}}));
    event(json!({"type": "content_block_stop", "index": 0}));
    event(json!({"type": "content_block_start", "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}}));
    for piece in args.as_bytes().chunks(chunk) {
        let piece = std::str::from_utf8(piece).unwrap();
        event(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": piece}}));
    }
    if stop {
        event(json!({"type": "content_block_stop", "index": 1}));
        event(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}));
        event(json!({"type": "message_stop"}));
    }
    out.into_bytes()
}

/// About `len` bytes of arguments of a shape: nested empty arrays, numbers,
/// keys, one string (ASCII, so any byte split is a char boundary), pretty
/// printed (line breaks between tokens) when `pretty`.
fn arguments(shape: &str, len: usize, pretty: bool) -> String {
    let unit = match shape {
        "nested" => "[[[[[]]]]]".to_owned(),
        "numbers" => "0".to_owned(),
        "keys" => {
            return format!("{{{}}}", (0..len / 10).map(|i| format!("\"{i:x}\":0")).collect::<Vec<_>>().join(","))
        }
        _ => return format!("{{\"s\":\"{}\"}}", "x".repeat(len)),
    };
    let (open, sep) = if pretty { ("{\"a\": [\n  ", ",\n  ") } else { ("{\"a\":[", ",") };
    format!("{open}{}]}}", vec![unit.as_str(); len / (unit.len() + 1)].join(sep))
}

struct Folded {
    stream: Stream,
    content: Option<Value>,
    call_arguments: Option<String>,
    outcome: Option<&'static str>,
    result: Result<(), StreamError>,
}

fn fold(bytes: &[u8], chunk: usize, config: StreamConfig) -> Folded {
    let mut stream = Stream::with_config(Provider::Anthropic, config);
    let (mut content, mut call_arguments, mut outcome) = (None, None, None);
    let mut on_event = |e: &StreamEvent<'_>| {
        if let StreamEvent::PartEnd { kind: PartKind::ToolCall, content: c, tool_call, outcome: o, .. } = e {
            content = Some((*c).clone());
            call_arguments = tool_call.as_ref().map(|t| t.arguments.to_owned());
            outcome = Some(o.name());
        }
    };
    let mut result = Ok(());
    for piece in bytes.chunks(chunk) {
        result = stream.feed(piece, &mut on_event);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() {
        result = stream.finish(&mut on_event);
    }
    Folded { stream, content, call_arguments, outcome, result }
}

fn budget() -> StreamConfig {
    StreamConfig { max_memory_bytes: BUDGET, ..StreamConfig::default() }
}

#[test]
fn a_large_input_of_any_shape_folds_as_text_within_the_budget() {
    for shape in ["nested", "numbers", "keys", "string"] {
        for pretty in [false, true] {
            let args = arguments(shape, 2 << 20, pretty);
            let expected: Value = serde_json::from_str(&args).unwrap();
            let bytes = anthropic_call(&args, 4096, true);
            for chunk in [bytes.len(), 65536, 1000] {
                let f = fold(&bytes, chunk, budget());
                let what = format!("{shape} pretty={pretty} chunk={chunk}");
                f.result.as_ref().unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(f.outcome, Some("complete"), "{what}");
                assert!(f.call_arguments.as_deref() == Some(args.as_str()), "{what}");
                // The part's content has no tree: its arguments are the call's.
                let content = f.content.unwrap();
                assert_eq!(content, json!({"type": "tool_use", "id": "toolu_1", "name": "write"}), "{what}");
                // What the stream holds: the text, not a tree.
                let held = f.stream.memory_footprint();
                assert!(held < args.len() + (1 << 20), "{what}: {held}");
                // The message's JSON carries the text where the input goes.
                let mut json = Vec::new();
                f.stream.message_view().write_json(&mut json);
                let written: Value = serde_json::from_slice(&json).unwrap();
                assert!(written["content"][1]["input"] == expected, "{what}");
                assert_eq!(written["content"][0]["text"], "Writing.", "{what}");
                assert_eq!(written["stop_reason"], "tool_use", "{what}");
                let keys: Vec<&str> = written["content"][1].as_object().unwrap().keys().map(|k| k.as_str()).collect();
                assert_eq!(keys, ["type", "id", "name", "input"], "{what}: the input keeps its place");
                // Asked for a value, the stream builds it: the same message.
                let message = f.stream.message();
                assert!(message == written, "{what}");
                assert!(f.stream.message_view().into_value() == written, "{what}");
                if chunk == bytes.len() && !pretty {
                    // Compact arguments are written as they came: the JSON equals the value's.
                    assert!(String::from_utf8(json).unwrap() == message.to_string().as_str(), "{what}");
                }
            }
        }
    }
}

#[test]
fn a_small_input_is_still_a_value_in_the_part_and_the_message() {
    let args = r#"{"path": "a.txt", "lines": [1, 2, 3]}"#;
    let f = fold(&anthropic_call(args, 7, true), 13, budget());
    f.result.unwrap();
    let input: Value = serde_json::from_str(args).unwrap();
    assert_eq!(f.content.unwrap()["input"], input);
    assert_eq!(f.stream.message()["content"][1]["input"], input);
    assert!(matches!(f.stream.message_view(), ssefold::providers::MessageView::Owned(_)));
}

#[test]
fn the_limit_between_value_and_text_follows_the_budget() {
    // 64 KiB of numbers (a ~2 MB tree): a value under the default budget, text under a 16 MiB one.
    let args = arguments("numbers", 64 << 10, false);
    let bytes = anthropic_call(&args, 4096, true);
    let value = fold(&bytes, 8192, StreamConfig::default());
    assert!(value.content.unwrap().get("input").is_some());
    let text = fold(&bytes, 8192, StreamConfig { max_memory_bytes: 16 << 20, ..StreamConfig::default() });
    assert!(text.content.unwrap().get("input").is_none());
    assert!(value.stream.message() == text.stream.message());
}

#[test]
fn a_large_cut_off_input_is_the_start_blocks_input_and_no_tree_is_built() {
    let args = arguments("nested", 2 << 20, false);
    let bytes = anthropic_call(&args[..args.len() - 2], 4096, false);
    let f = fold(&bytes, 65536, budget());
    assert!(matches!(f.result, Err(StreamError::Incomplete { .. })), "{:?}", f.result);
    assert_eq!(f.outcome, Some("incomplete"));
    assert_eq!(f.content.unwrap()["input"], json!({}));
    assert_eq!(f.stream.message()["content"][1]["input"], json!({}));
}

#[test]
fn arguments_past_the_budget_are_still_refused() {
    let args = arguments("string", 40 << 20, false);
    let f = fold(&anthropic_call(&args, 1 << 20, true), 4 << 20, budget());
    assert!(
        matches!(f.result, Err(StreamError::LimitExceeded { limit: StreamLimit::MaxMemoryBytes, .. })),
        "{:?}",
        f.result
    );
    assert_eq!(f.stream.message()["content"][0]["text"], "Writing.");
}

#[test]
fn the_relay_writes_a_large_input_from_its_text() {
    for pretty in [false, true] {
        let args = arguments("nested", 2 << 20, pretty);
        let expected: Value = serde_json::from_str(&args).unwrap();
        let mut relay = Relay::with_stream(
            RelayConfig::new(RelayFormat::AiSdk),
            Stream::with_config(Provider::Anthropic, budget()),
        );
        let mut out = Vec::new();
        for piece in anthropic_call(&args, 4096, true).chunks(65536) {
            out.extend_from_slice(relay.feed(piece).unwrap().bytes);
        }
        out.extend_from_slice(relay.end_of_input().unwrap().bytes);
        out.extend_from_slice(relay.finish(None).unwrap());
        let mut decoder = Decoder::new();
        let mut events = decoder.feed(&out);
        let mut inputs = Vec::new();
        while let Some(event) = events.next_event() {
            let data: Value = match serde_json::from_str(event.unwrap().data()) {
                Ok(v) => v,
                Err(_) => continue,
            };
            if data["type"] == "tool-input-available" {
                inputs.push(data["input"].clone());
            }
        }
        assert!(inputs.len() == 1 && inputs[0] == expected, "pretty={pretty}: {} inputs", inputs.len());
    }
}
