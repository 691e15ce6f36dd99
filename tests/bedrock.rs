//! Amazon Bedrock `InvokeModelWithResponseStream` (Anthropic models): every
//! Anthropic golden and peer recording, wrapped the way Bedrock sends it
//! (AWS event-stream messages whose `chunk` payload is the base64 of each
//! event), folds to the same events and message as the SSE stream, in any
//! chunking; exceptions are typed provider errors.

use crate::prov_common;

use std::path::Path;

use base64::Engine;
use prov_common::es_message as message;
use serde_json::{json, Value};
use ssefold::providers::bedrock::INVOCATION_METRICS;
use ssefold::providers::{Provider, Stream, StreamError, StreamEvent};
use ssefold::reconnect::is_retryable_error_type;
use ssefold::sse::Decoder;

fn chunk(event_json: &str) -> Vec<u8> {
    let payload = json!({"bytes": base64::engine::general_purpose::STANDARD.encode(event_json), "p": "abcdefghij"});
    message(
        &[(":event-type", "chunk"), (":content-type", "application/json"), (":message-type", "event")],
        payload.to_string().as_bytes(),
    )
}

/// The Bedrock body for an Anthropic SSE stream (its `message_stop` gets
/// the invocation metrics, as Bedrock adds them).
fn to_bedrock(sse: &[u8]) -> Vec<u8> {
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    // Bedrock frames whole events: an SSE recording's unterminated last
    // event counts as sent.
    let sse = [sse, b"\n\n"].concat();
    let mut events = decoder.feed(&sse);
    while let Some(event) = events.next_event() {
        let event = event.unwrap();
        let mut data: Value = match serde_json::from_str(event.data()) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if data["type"] == "message_stop" {
            data["amazon-bedrock-invocationMetrics"] = json!({"inputTokenCount": 12, "outputTokenCount": 34, "invocationLatency": 560, "firstByteLatency": 210});
        }
        out.extend_from_slice(&chunk(&data.to_string()));
    }
    out
}

/// The SSE fold's events and message; `None` when it refused the bytes
/// (data that is not JSON has no Bedrock form).
fn fold_sse(sse: &[u8]) -> Option<(Vec<Value>, Value)> {
    let mut stream = Stream::new(Provider::Anthropic);
    let mut events = Vec::new();
    stream.feed(sse, |e: &StreamEvent<'_>| events.push(e.to_json())).ok()?;
    let _ = stream.finish(|e: &StreamEvent<'_>| events.push(e.to_json()));
    // Warnings about the SSE framing itself have no event-stream counterpart.
    events.retain(|e| !(e["event"] == "warning" && e["code"].as_str().is_some_and(|c| c.ends_with("final_event"))));
    Some((events, stream.message()))
}

/// The Bedrock fold's events (`message_start` renamed `anthropic`), its
/// message without the invocation metrics, and those.
fn fold_bedrock(body: &[u8], chunk: usize) -> (Vec<Value>, Value, Option<Value>) {
    for provider in [Provider::Bedrock, Provider::Auto] {
        let mut stream = Stream::new(provider);
        let mut events = Vec::new();
        for piece in body.chunks(chunk.max(1)) {
            if stream.feed(piece, |e: &StreamEvent<'_>| events.push(e.to_json())).is_err() {
                break;
            }
        }
        let _ = stream.finish(|e: &StreamEvent<'_>| events.push(e.to_json()));
        assert_eq!(stream.provider(), Provider::Bedrock);
        for e in events.iter_mut().filter(|e| e["event"] == "message_start") {
            assert_eq!(e["provider"], "bedrock");
            e["provider"] = "anthropic".into();
        }
        let mut message = stream.message();
        let metrics = message.as_object_mut().and_then(|m| m.shift_remove(INVOCATION_METRICS));
        if provider == Provider::Auto {
            return (events, message, metrics);
        }
    }
    unreachable!()
}

#[test]
fn every_anthropic_stream_folds_the_same_through_bedrock_framing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    for dir in ["fixtures/anthropic", "peer-fixtures/anthropic-sdk-python", "peer-fixtures/anthropic-sdk-go"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "sse" || e == "txt") {
                files.push(path);
            }
        }
    }
    let mut checked = 0;
    for path in files {
        let sse = std::fs::read(&path).unwrap();
        let Some((events, message)) = fold_sse(&sse) else { continue };
        let body = to_bedrock(&sse);
        let whole = fold_bedrock(&body, usize::MAX);
        assert_eq!((&whole.0, &whole.1), (&events, &message), "{}", path.display());
        for chunk in [1, 7, 333] {
            assert_eq!(fold_bedrock(&body, chunk), whole, "{}: chunk {chunk}", path.display());
        }
        if events.iter().any(|e| e["event"] == "turn_end") {
            assert_eq!(whole.2.as_ref().unwrap()["outputTokenCount"], 34, "{}", path.display());
        }
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} streams");
}

#[test]
fn an_exception_message_is_a_typed_retryable_provider_error() {
    let mut body = chunk(
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#,
    );
    body.extend_from_slice(&message(
        &[
            (":message-type", "exception"),
            (":exception-type", "throttlingException"),
            (":content-type", "application/json"),
        ],
        br#"{"message":"Too many requests, please wait before trying again."}"#,
    ));
    let (events, _, _) = fold_bedrock(&body, 5);
    let error = events.iter().find(|e| e["event"] == "error").expect("an error event");
    assert_eq!(error["error_type"], "throttlingException");
    assert_eq!(error["message"], "Too many requests, please wait before trying again.");
    assert!(is_retryable_error_type("throttlingException"));
    assert!(!is_retryable_error_type("validationException"));
}

#[test]
fn broken_framing_is_a_typed_error_and_bad_chunks_are_warnings() {
    let mut body = chunk(r#"{"type":"ping"}"#);
    let n = body.len();
    body[n - 1] ^= 0xff;
    let mut stream = Stream::new(Provider::Bedrock);
    assert!(matches!(stream.feed(&body, |_| {}), Err(StreamError::EventStream(_))));
    assert_eq!(stream.feed(b"", |_| {}), Err(StreamError::Closed));

    let bad = message(&[(":event-type", "chunk"), (":message-type", "event")], br#"{"bytes":"%%%"}"#);
    let mut stream = Stream::new(Provider::Bedrock);
    let mut events = Vec::new();
    stream.feed(&bad, |e: &StreamEvent<'_>| events.push(e.to_json())).unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["code"], "invalid_event");
    let text = events[0]["message"].as_str().unwrap();
    assert!(text.contains("base64") && text.contains("%%%"), "the payload is quoted: {text}");

    // A cut body: the unfinished message is reported, the turn is incomplete.
    let whole = chunk(r#"{"type":"ping"}"#);
    let mut stream = Stream::new(Provider::Bedrock);
    stream.feed(&whole[..whole.len() - 2], |_| {}).unwrap();
    let mut events = Vec::new();
    let r = stream.finish(|e: &StreamEvent<'_>| events.push(e.to_json()));
    assert!(matches!(r, Err(StreamError::Incomplete { .. })), "no answer: incomplete: {r:?}");
    assert_eq!(events[0]["code"], "truncated_final_event");
}
