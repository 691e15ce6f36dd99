//! Abort, and reconnection (restart vs resume), on real fixture streams.

use serde_json::Value;
use ssefold::providers::{Provider, Stream, StreamError};
use ssefold::reconnect::ResumeCursor;

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// Events as JSON, plus the final message, for `chunks` fed to one stream
/// with a `reconnect()` between chunks where `reconnect_before[i]` says so.
fn run(provider: Provider, bodies: &[&[u8]]) -> (Vec<Value>, Value, Result<(), StreamError>) {
    let mut s = Stream::new(provider);
    let mut events = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        if i > 0 {
            s.reconnect().unwrap();
        }
        for chunk in body.chunks(61) {
            s.feed(chunk, |e| events.push(e.to_json())).unwrap();
        }
    }
    let r = s.finish(|e| events.push(e.to_json()));
    (events, s.message(), r)
}

fn names(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["event"].as_str().unwrap()).collect()
}

/// Byte offsets just after each event's blank line.
fn event_ends(bytes: &[u8]) -> Vec<usize> {
    bytes.windows(2).enumerate().filter(|(_, w)| w == b"\n\n").map(|(i, _)| i + 2).collect()
}

#[test]
fn abort_at_every_byte_keeps_what_was_committed_and_emits_only_turn_end() {
    let bytes = fixture("tests/fixtures/anthropic/interleaved_tools.sse");
    let (_, whole_message, whole) = run(Provider::Anthropic, &[&bytes]);
    assert!(whole.is_ok());
    for cut in 0..=bytes.len() {
        let mut s = Stream::new(Provider::Anthropic);
        let mut before = Vec::new();
        s.feed(&bytes[..cut], |e| before.push(e.to_json())).unwrap();
        let turn_over = before.iter().any(|e| e["event"] == "turn_end");
        let mut after = Vec::new();
        s.abort(|e| after.push(e.to_json()));
        if turn_over {
            assert!(after.is_empty(), "cut {cut}: nothing after the end");
        } else {
            assert_eq!(after.len(), 1, "cut {cut}: {after:?}");
            assert_eq!(after[0]["event"], "turn_end");
            assert_eq!(after[0]["stop_reason"], "aborted");
            assert!(s.is_aborted());
        }
        // Nothing more, ever.
        s.abort(|e| panic!("cut {cut}: event after abort: {e:?}"));
        assert!(matches!(s.feed(&bytes[cut..], |_| panic!("fed after abort")), Err(StreamError::Closed)));
        assert!(matches!(s.finish(|_| {}), Err(StreamError::Closed)));
        // Every part committed before the abort is in the message as committed.
        let message = s.message();
        for e in before.iter().filter(|e| e["event"] == "part_end") {
            let blocks = message["content"].as_array().unwrap();
            assert!(blocks.contains(&e["content"]), "cut {cut}: committed part lost: {}", e["content"]);
        }
        // A tool call is ready only if its part_end(complete) came before the abort.
        let ready: Vec<&Value> = before
            .iter()
            .filter(|e| e["event"] == "part_end" && e["kind"] == "tool_call" && e["outcome"] == "complete")
            .collect();
        let whole_tools = whole_message["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"].as_str().is_some_and(|t| t.ends_with("tool_use")));
        assert!(ready.len() <= whole_tools.count());
        if cut == bytes.len() {
            assert_eq!(message, whole_message);
        }
    }
}

#[test]
fn abort_before_any_byte_still_says_aborted() {
    let mut s = Stream::new(Provider::Auto);
    let mut got = Vec::new();
    s.abort(|e| got.push(e.to_json()));
    assert_eq!(names(&got), ["turn_end"]);
    assert_eq!(s.message(), Value::Null);
}

#[test]
fn restart_after_reconnect_resets_the_turn_and_folds_the_new_answer_once() {
    let bytes = fixture("tests/fixtures/anthropic/thinking_text_citations.sse");
    let (whole_events, whole_message, _) = run(Provider::Anthropic, &[&bytes]);
    for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() * 3 / 4] {
        // The server ignores Last-Event-ID and answers again from the start.
        let (events, message, r) = run(Provider::Anthropic, &[&bytes[..cut], &bytes]);
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(message, whole_message, "cut {cut}: the restarted answer, once");
        let resets = events.iter().filter(|e| e["event"] == "turn_reset").count();
        assert_eq!(resets, 1, "cut {cut}");
        let after_reset: Vec<&Value> = events.iter().skip_while(|e| e["event"] != "turn_reset").skip(1).collect();
        let whole_refs: Vec<&Value> = whole_events.iter().collect();
        assert_eq!(after_reset, whole_refs, "cut {cut}: after the reset, exactly the new answer's events");
    }
}

#[test]
fn resume_after_reconnect_continues_seamlessly() {
    let bytes = fixture("tests/fixtures/anthropic/thinking_text_citations.sse");
    let (whole_events, whole_message, _) = run(Provider::Anthropic, &[&bytes]);
    let ends = event_ends(&bytes);
    for &at in &ends[1..ends.len() - 1] {
        // Cut inside the next event: its partial bytes are discarded, and
        // the server resumes with that event whole.
        let mid = (at + 7).min(bytes.len());
        let (events, message, r) = run(Provider::Anthropic, &[&bytes[..mid], &bytes[at..]]);
        assert!(r.is_ok(), "{r:?}");
        assert!(events.iter().all(|e| e["event"] != "turn_reset"));
        assert_eq!(events, whole_events, "resumed at {at}");
        assert_eq!(message, whole_message);
    }
}

#[test]
fn responses_resume_skips_replayed_events_by_sequence_number() {
    let bytes = fixture("tests/fixtures/openai_responses/reasoning_text_tool.sse");
    let (whole_events, whole_message, _) = run(Provider::OpenAIResponses, &[&bytes]);
    let ends = event_ends(&bytes);
    for k in 2..ends.len() - 1 {
        let replay_from = ends[k / 2];
        let mut s = Stream::new(Provider::OpenAIResponses);
        let mut events = Vec::new();
        s.feed(&bytes[..ends[k]], |e| events.push(e.to_json())).unwrap();
        let cursor = s.resume_cursor();
        assert!(matches!(cursor, ResumeCursor::StartingAfter(_)), "{cursor:?}");
        s.reconnect().unwrap();
        // A server that replays a few events before the cursor.
        s.feed(&bytes[replay_from..], |e| events.push(e.to_json())).unwrap();
        s.finish(|e| events.push(e.to_json())).unwrap();
        let dupes = events.iter().filter(|e| e["event"] == "warning" && e["code"] == "duplicate_event").count();
        assert_eq!(dupes, k - k / 2, "k {k}");
        let without: Vec<Value> = events.into_iter().filter(|e| e["code"] != "duplicate_event").collect();
        assert_eq!(without, whole_events, "k {k}");
        assert_eq!(s.message(), whole_message);
    }
}

#[test]
fn chat_restart_is_recognised_by_a_new_completion_id() {
    let bytes = fixture("tests/peer-fixtures/openai-python/test_parse_pydantic_tool.sse");
    let (_, whole_message, _) = run(Provider::OpenAIChat, &[&bytes]);
    let text = String::from_utf8(bytes.clone()).unwrap();
    let id = whole_message["id"].as_str().unwrap();
    let again = text.replace(id, "chatcmpl-restarted");
    let cut = bytes.len() / 2;
    let (events, message, r) = run(Provider::OpenAIChat, &[&bytes[..cut], again.as_bytes()]);
    assert!(r.is_ok());
    assert_eq!(events.iter().filter(|e| e["event"] == "turn_reset").count(), 1);
    assert_eq!(message["id"], "chatcmpl-restarted");
    assert_eq!(message["choices"], whole_message["choices"]);
    // Same id: a resume, no reset.
    let ends = event_ends(&bytes);
    let at = ends[ends.len() / 2];
    let (events, message, _) = run(Provider::OpenAIChat, &[&bytes[..at], &bytes[at..]]);
    assert!(events.iter().all(|e| e["event"] != "turn_reset"));
    assert_eq!(message, whole_message);
}

#[test]
fn resume_cursor_is_the_last_event_id_where_the_server_sends_ids() {
    let mut s = Stream::new(Provider::Anthropic);
    assert_eq!(s.resume_cursor(), ResumeCursor::None);
    let body = b"retry: 1500\nid: 1\nevent: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\nid: 2\nevent: ping\ndata: {\"type\":\"ping\"}\n\n";
    s.feed(body, |_| {}).unwrap();
    assert_eq!(s.resume_cursor(), ResumeCursor::LastEventId("2".into()));
    assert_eq!(s.last_event_id(), Some("2"));
    assert_eq!(s.reconnection_time(), Some(1500));
    s.reconnect().unwrap();
    assert_eq!(s.resume_cursor(), ResumeCursor::LastEventId("2".into()), "kept across the reconnection");
    s.finish(|_| {}).unwrap_err();
    assert!(matches!(s.reconnect(), Err(StreamError::Closed)));
}
