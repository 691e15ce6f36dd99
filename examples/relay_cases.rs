//! Writes the relay's browser stream for every fixture and peer recording,
//! with what a UI must rebuild from it, for the JavaScript clients that
//! judge it (`tests/js`, run by `make js-test`).
//!
//! ```text
//! cargo run --example relay_cases -- OUT_DIR
//! ```
//!
//! For each stream NAME: `NAME.ai-sdk.sse` (the AI SDK UI message stream:
//! the provider stream relayed, then a tool result for every ready tool
//! call, then the finish) and `NAME.expected.json`: the text and reasoning
//! parts (text per part = the concatenation of its `text_delta`s, which the
//! fold tests prove equal to the folded message's text) and the tool calls
//! in the order they started: ready ones (id, name, input, the output the
//! host sent) in state `output-available`, the others (invalid or cut
//! arguments) in state `output-error`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use ssefold::providers::{PartKind, PartOutcome, Provider, Stream, StreamEvent};
use ssefold::relay::{Relay, RelayConfig, RelayFormat};

fn streams(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = ["fixtures/anthropic", "fixtures/openai_chat", "fixtures/openai_responses"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    for entry in std::fs::read_dir(root.join("peer-fixtures")).expect("tests/peer-fixtures") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            dirs.push(path);
        }
    }
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).expect("fixture dir") {
            let path = entry.expect("dir entry").path();
            if path.extension().is_some_and(|e| e == "sse" || e == "txt") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).expect("usage: relay_cases OUT_DIR"));
    std::fs::create_dir_all(&out).expect("create OUT_DIR");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut count = 0;
    for path in streams(&root) {
        let bytes = std::fs::read(&path).expect("read fixture");
        let name = path.strip_prefix(&root).expect("under tests/").to_string_lossy().replace(['/', '.'], "_");

        // The parts as the stream's own events give them.
        let mut texts: Vec<(u32, &'static str, String)> = Vec::new();
        let mut tools: Vec<Value> = Vec::new();
        let mut ids: std::collections::HashMap<u32, (Option<String>, Option<String>)> = Default::default();
        let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
        let mut browser = Vec::new();
        let mut stream = Stream::new(Provider::Auto);
        {
            let mut on_event = |e: &StreamEvent<'_>| {
                browser.extend_from_slice(relay.push(e));
                match *e {
                    StreamEvent::TurnReset => {
                        texts.clear();
                        tools.clear();
                    }
                    StreamEvent::PartStart { part, kind: PartKind::Text | PartKind::Refusal, .. } => {
                        texts.push((part, "text", String::new()))
                    }
                    StreamEvent::PartStart { part, kind: PartKind::Reasoning, .. } => {
                        texts.push((part, "reasoning", String::new()))
                    }
                    StreamEvent::TextDelta { part, text } => {
                        if let Some(t) = texts.iter_mut().rev().find(|t| t.0 == part) {
                            t.2.push_str(text);
                        }
                    }
                    StreamEvent::PartMetadata { part, key, value } => {
                        let entry = ids.entry(part).or_default();
                        match (key, value.as_str()) {
                            ("id", Some(v)) if entry.0.is_none() => entry.0 = Some(v.to_owned()),
                            ("name", Some(v)) if entry.1.is_none() => entry.1 = Some(v.to_owned()),
                            _ => {}
                        }
                    }
                    StreamEvent::PartStart { part, kind: PartKind::ToolCall, .. } => {
                        // A tool part appears in the UI in the order calls start;
                        // until it ends, it is one that never became ready.
                        tools.push(json!({"part": part, "state": "output-error"}));
                    }
                    StreamEvent::PartEnd { part, kind: PartKind::ToolCall, outcome, content } => {
                        let (id, name) = ids.remove(&part).unwrap_or_default();
                        let id = id.unwrap_or_else(|| format!("call-{part}"));
                        let Some(tool) = tools.iter_mut().rev().find(|t| t["part"] == part) else { return };
                        *tool = json!({"part": part, "toolCallId": id, "toolName": name.unwrap_or_default(), "state": "output-error"});
                        if outcome == PartOutcome::Complete {
                            let input = content.get("input").cloned().unwrap_or_else(|| {
                                match content.get("arguments").or_else(|| content.pointer("/function/arguments")) {
                                    Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
                                    Some(v) => v.clone(),
                                    None => Value::Null,
                                }
                            });
                            tool["input"] = input;
                            tool["state"] = json!("output-available");
                        }
                    }
                    _ => {}
                }
            };
            let failed = stream.feed(&bytes, &mut on_event).is_err();
            if !failed {
                let _ = stream.finish(&mut on_event);
            }
        }
        for tool in &mut tools {
            let (id, name) = ids.get(&(tool["part"].as_u64().unwrap_or(0) as u32)).cloned().unwrap_or_default();
            if tool.get("toolCallId").is_none() {
                // Never ended: the relay fails it when the step closes.
                let part = tool["part"].clone();
                tool["toolCallId"] = json!(id.unwrap_or_else(|| format!("call-{part}")));
                tool["toolName"] = json!(name.unwrap_or_default());
            }
            tool.as_object_mut().expect("object").remove("part");
            if tool["state"] != "output-available" {
                continue;
            }
            let output = json!({"ok": tool["toolCallId"]});
            let call_id = tool["toolCallId"].as_str().unwrap_or_default().to_owned();
            browser.extend_from_slice(relay.tool_result(&call_id, &output, false, Some(5)).expect("not finished"));
            tool["output"] = output;
        }
        browser.extend_from_slice(relay.finish(None).expect("not finished"));
        let texts: Vec<Value> = texts.into_iter().map(|(_, kind, text)| json!({"type": kind, "text": text})).collect();
        let expected = json!({"source": path.strip_prefix(&root).unwrap(), "texts": texts, "tools": tools});
        std::fs::write(out.join(format!("{name}.ai-sdk.sse")), &browser).expect("write");
        std::fs::write(out.join(format!("{name}.expected.json")), expected.to_string()).expect("write");
        count += 1;
    }
    eprintln!("relay_cases: {count} streams written to {}", out.display());
}
