//! The streaming-UI snapshot after every prefix of real streams agrees with
//! the events emitted so far.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream};
use ssefold::reconnect::ConnectionState;
use ssefold::ui::{PartStatus, UiState};

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// What the events say, rebuilt independently of `UiState`.
#[derive(Default, Debug)]
struct Expected {
    text: BTreeMap<u64, String>,
    args: BTreeMap<u64, String>,
    status: BTreeMap<u64, String>,
    usage: Option<Value>,
    ready: Vec<u64>,
}

fn expected(events: &[Value]) -> Expected {
    let mut x = Expected::default();
    for e in events {
        let part = e["part"].as_u64();
        match e["event"].as_str().unwrap() {
            "turn_reset" => x = Expected::default(),
            "part_start" => {
                x.status.insert(part.unwrap(), "streaming".into());
            }
            "text_delta" => x.text.entry(part.unwrap()).or_default().push_str(e["text"].as_str().unwrap()),
            "tool_args_delta" => x.args.entry(part.unwrap()).or_default().push_str(e["json"].as_str().unwrap()),
            "part_end" => {
                x.status.insert(part.unwrap(), e["outcome"].as_str().unwrap().into());
                if e["kind"] == "tool_call" && e["outcome"] == "complete" {
                    x.ready.push(part.unwrap());
                }
            }
            "usage" => x.usage = Some(e["usage"].clone()),
            "turn_end" | "error" => {
                for s in x.status.values_mut().filter(|s| *s == "streaming") {
                    *s = "incomplete".into();
                }
            }
            _ => {}
        }
    }
    x
}

fn check_every_prefix(provider: Provider, path: &str) {
    let bytes = fixture(path);
    for cut in (0..=bytes.len()).step_by(3).chain([bytes.len()]) {
        let mut stream = Stream::new(provider);
        let mut ui = UiState::new();
        ui.set_connection(ConnectionState::Connected);
        let mut events = Vec::new();
        // The arrival time grows with the byte offset of each piece.
        for (i, piece) in bytes[..cut].chunks(41).enumerate() {
            let _ = stream.feed(piece, |e| {
                ui.apply(e, i as u64 * 10);
                events.push(e.to_json());
            });
        }
        let x = expected(&events);
        let snap = ui.to_json();
        let parts = ui.parts();
        assert_eq!(parts.len(), x.status.len(), "{path} cut {cut}");
        for p in parts {
            let id = u64::from(p.part);
            assert_eq!(p.text(), x.text.get(&id).cloned().unwrap_or_default(), "{path} cut {cut} part {id}");
            assert!(p.segments.windows(2).all(|w| w[0].at_ms < w[1].at_ms), "segments in arrival order");
            assert_eq!(p.status.name(), x.status[&id], "{path} cut {cut} part {id}");
            if let Some(call) = &p.tool_call {
                assert_eq!(call.raw_arguments, x.args.get(&id).cloned().unwrap_or_default());
                if p.status == PartStatus::Complete {
                    assert_eq!(call.arguments().as_ref(), Some(&serde_json::from_str(&call.raw_arguments).unwrap()));
                }
            }
        }
        assert_eq!(ui.usage(), x.usage.as_ref(), "{path} cut {cut}");
        // Ready calls, in part order (they may complete out of order).
        let ready: Vec<u64> = ui.ready_tool_calls().map(|p| u64::from(p.part)).collect();
        let mut want = x.ready.clone();
        want.sort_unstable();
        assert_eq!(ready, want, "{path} cut {cut}");
        assert_eq!(snap["connection"], "connected");
        assert_eq!(snap["parts"].as_array().unwrap().len(), parts.len());
    }
}

#[test]
fn anthropic_snapshot_agrees_with_the_events_after_every_prefix() {
    check_every_prefix(Provider::Anthropic, "tests/fixtures/anthropic/interleaved_tools.sse");
    check_every_prefix(Provider::Anthropic, "tests/fixtures/anthropic/thinking_text_citations.sse");
}

#[test]
fn openai_chat_snapshot_agrees_with_the_events_after_every_prefix() {
    check_every_prefix(
        Provider::OpenAIChat,
        "tests/peer-fixtures/openai-python/test_parse_multiple_pydantic_tools.sse",
    );
}

#[test]
fn openai_responses_snapshot_agrees_with_the_events_after_every_prefix() {
    check_every_prefix(Provider::OpenAIResponses, "tests/fixtures/openai_responses/reasoning_text_tool.sse");
}

#[test]
fn partial_tool_arguments_are_visible_while_they_stream_and_ready_only_at_the_end() {
    let bytes = fixture("tests/fixtures/anthropic/interleaved_tools.sse");
    let mut stream = Stream::new(Provider::Anthropic);
    let mut ui = UiState::new();
    let mut saw_partial = false;
    for (t, piece) in bytes.chunks(23).enumerate() {
        stream.feed(piece, |e| ui.apply(e, t as u64)).unwrap();
        for p in ui.parts() {
            if let Some(call) = &p.tool_call {
                if p.status == PartStatus::Streaming && call.arguments().is_some() {
                    saw_partial = true;
                    assert!(!p.is_ready_tool_call());
                }
            }
        }
    }
    stream.finish(|e| ui.apply(e, 9999)).unwrap();
    assert!(saw_partial, "partial arguments were visible before the calls completed");
    assert!(ui.is_ended());
    assert!(ui.ready_tool_calls().count() >= 1);
}

#[test]
fn abort_and_reset_and_tool_progress() {
    let bytes = fixture("tests/fixtures/anthropic/thinking_text_citations.sse");
    let mut stream = Stream::new(Provider::Anthropic);
    let mut ui = UiState::new();
    stream.feed(&bytes[..bytes.len() / 2], |e| ui.apply(e, 1)).unwrap();
    assert!(!ui.parts().is_empty());
    // Restart after a reconnection: the UI drops the partial turn.
    ui.set_connection(ConnectionState::Reconnecting);
    stream.reconnect().unwrap();
    let mut reset_seen = false;
    stream
        .feed(&bytes[..bytes.len() / 3], |e| {
            if e.name() == "turn_reset" {
                reset_seen = true;
                ui.apply(e, 2);
                assert!(ui.parts().is_empty());
            } else {
                ui.apply(e, 2);
            }
        })
        .unwrap();
    assert!(reset_seen);
    ui.set_connection(ConnectionState::Connected);
    stream.abort(|e| ui.apply(e, 3));
    assert!(ui.is_ended());
    assert_eq!(ui.stop_reason(), Some("aborted"));
    assert!(ui.parts().iter().all(|p| p.status != PartStatus::Streaming));
    ui.set_tool_progress("toolu_1", json!({"done": 3, "of": 10}));
    let snap = ui.to_json();
    assert_eq!(snap["aborted"], true);
    assert_eq!(snap["tool_progress"]["toolu_1"]["done"], 3);
    assert_eq!(snap["connection"], "connected");
}
