//! A host loop driving `Reconnector` + `Stream` over simulated connections:
//! dropped mid-stream, resumed with Last-Event-ID or restarted, given up,
//! or ended by a provider error. Time is simulated; nothing sleeps.

use ssefold::providers::{Provider, Stream, StreamError};
use ssefold::reconnect::{Decision, ReconnectPolicy, Reconnector, ResumeCursor, StreamEnd};

/// An Anthropic answer with SSE ids on every event.
fn answer_with_ids() -> Vec<u8> {
    let events = [
        (
            "message_start",
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}"#,
        ),
        ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ];
    let mut out = String::from("retry: 250\n\n");
    for (i, (name, data)) in events.iter().enumerate() {
        out.push_str(&format!("id: {}\nevent: {name}\ndata: {data}\n\n", i + 1));
    }
    out.into_bytes()
}

/// Where event `id` starts in `body` (for a server that honours Last-Event-ID).
fn after_id(body: &[u8], id: &str) -> usize {
    let text = std::str::from_utf8(body).unwrap();
    let at = text.find(&format!("id: {id}\n")).unwrap();
    at + text[at..].find("\n\n").unwrap() + 2
}

/// Runs the host loop. `serve(attempt, cursor)` returns the body the server
/// sends on that connection and whether it drops before the end.
fn host(serve: impl Fn(u32, &ResumeCursor) -> Vec<u8>) -> (Vec<Decision>, Stream, String) {
    let mut reconnector = Reconnector::new(ReconnectPolicy::default());
    let mut stream = Stream::new(Provider::Anthropic);
    let mut decisions = Vec::new();
    let mut text = String::new();
    let mut now = 0u64;
    let mut attempt = 0;
    loop {
        let body = serve(attempt, &stream.resume_cursor());
        reconnector.on_connected(now);
        let mut result = Ok(());
        for chunk in body.chunks(17) {
            now += 1;
            reconnector.on_activity(now);
            result = stream.feed(chunk, |e| {
                if let ssefold::providers::StreamEvent::TextDelta { text: t, .. } = e {
                    text.push_str(t);
                }
                if e.name() == "turn_reset" {
                    text.clear();
                }
            });
            reconnector.on_event(stream.last_event_id(), stream.last_sequence_number(), stream.reconnection_time());
            if result.is_err() {
                break;
            }
        }
        let end = match result {
            Err(StreamError::Provider(e)) => StreamEnd::ProviderError { error_type: e.error_type, message: e.message },
            Err(e) => StreamEnd::TransportError(e.to_string()),
            Ok(()) if stream.is_terminated() => StreamEnd::Completed,
            Ok(()) => StreamEnd::EndedEarly,
        };
        let decision = reconnector.on_end(end);
        decisions.push(decision.clone());
        match decision {
            Decision::Reconnect { delay_ms, .. } => {
                now += delay_ms;
                stream.reconnect().unwrap();
                attempt += 1;
            }
            _ => return (decisions, stream, text),
        }
    }
}

#[test]
fn dropped_twice_then_resumed_with_last_event_id() {
    let full = answer_with_ids();
    let (decisions, mut stream, text) = host(|attempt, cursor| {
        let start = match cursor {
            ResumeCursor::LastEventId(id) => after_id(&full, id),
            _ => 0,
        };
        // Connections 0 and 1 drop mid-event.
        let end = match attempt {
            0 => start + 400,
            1 => start + 150,
            _ => full.len(),
        };
        full[start..end].to_vec()
    });
    assert!(
        matches!(
            decisions[0],
            Decision::Reconnect { delay_ms: 250, attempt: 1, cursor: ResumeCursor::LastEventId(_), .. }
        ),
        "{decisions:?}"
    );
    assert!(
        matches!(
            decisions[1],
            Decision::Reconnect { delay_ms: 250, attempt: 2, cursor: ResumeCursor::LastEventId(_), .. }
        ),
        "the server's retry: wins; {decisions:?}"
    );
    assert_eq!(decisions.last(), Some(&Decision::Done));
    assert_eq!(text, "Hello, world", "nothing duplicated, nothing lost");
    stream.finish(|_| {}).unwrap();
    assert_eq!(stream.message()["content"][0]["text"], "Hello, world");
    assert_eq!(stream.message()["usage"]["output_tokens"], 3);
}

#[test]
fn a_server_that_ignores_last_event_id_restarts_and_the_turn_is_reset() {
    let full = answer_with_ids();
    let (decisions, mut stream, text) =
        host(|attempt, _| if attempt == 0 { full[..full.len() * 2 / 3].to_vec() } else { full.clone() });
    assert_eq!(decisions.len(), 2);
    assert_eq!(text, "Hello, world");
    stream.finish(|_| {}).unwrap();
    assert_eq!(stream.message()["content"].as_array().unwrap().len(), 1);
}

#[test]
fn retries_exhausted_give_up_and_finish_reports_incomplete() {
    let full = answer_with_ids();
    let (decisions, mut stream, _) = host(|_, _| full[..200].to_vec());
    assert_eq!(decisions.len(), 3, "two retries, then give up: {decisions:?}");
    assert!(matches!(decisions[2], Decision::GiveUp { last: StreamEnd::EndedEarly, .. }));
    assert!(matches!(stream.finish(|_| {}), Err(StreamError::Incomplete { .. })));
}

#[test]
fn a_provider_error_is_not_reconnected_and_says_whether_it_is_retryable() {
    let mut body = answer_with_ids();
    body.truncate(after_id(&body, "3"));
    body.extend_from_slice(b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
    let (decisions, _, text) = host(|_, _| body.clone());
    assert_eq!(
        decisions,
        [Decision::Fail { error_type: "overloaded_error".into(), message: "Overloaded".into(), retryable: true }]
    );
    assert_eq!(text, "Hello");
}
