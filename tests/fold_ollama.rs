//! Ollama's native `/api/chat` (newline-delimited JSON), behaviour by
//! behaviour; every body is fed whole, in 1-byte chunks and in random
//! chunkings (`run_all`), with the dialect given and detected.

use crate::prov_common;

use prov_common::{named, run_all, warnings, Run};
use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream, StreamConfig, StreamError, StreamLimit};

fn ndjson(lines: &[Value]) -> Vec<u8> {
    lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
}

fn line(message: Value) -> Value {
    json!({"model": "m", "created_at": "t", "message": message, "done": false})
}

fn done() -> Value {
    json!({"model": "m", "created_at": "t2", "message": {"role": "assistant", "content": ""}, "done": true,
        "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 5, "total_duration": 10})
}

fn fold(lines: &[Value]) -> Run {
    let bytes = ndjson(lines);
    let run = run_all(Provider::Ollama, &bytes);
    assert_eq!(run_all(Provider::Auto, &bytes), run, "auto differs");
    run
}

#[test]
fn names_and_framing_detection() {
    assert_eq!(Provider::from_name("ollama"), Some(Provider::Ollama));
    assert_eq!(Provider::Ollama.name(), "ollama");
    // Leading blank lines, then `{`: newline-delimited JSON.
    let mut body = b"\r\n  \n".to_vec();
    body.extend(ndjson(&[line(json!({"content": "x"})), done()]));
    let run = run_all(Provider::Auto, &body);
    assert_eq!((run.detected, run.error.clone()), ("ollama", None));
    // An SSE body is still SSE.
    let sse = b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]},\"finishReason\":\"STOP\"}]}\n\n";
    assert_eq!(run_all(Provider::Auto, sse).detected, "gemini");
}

#[test]
fn content_and_thinking_fold_into_one_string_each() {
    let run = fold(&[
        line(json!({"role": "assistant", "content": "", "thinking": "a"})),
        line(json!({"role": "assistant", "content": "", "thinking": "b"})),
        line(json!({"role": "assistant", "content": "x"})),
        line(json!({"role": "assistant", "content": "y"})),
        done(),
    ]);
    assert_eq!(run.error, None);
    assert_eq!(run.message["message"], json!({"role": "assistant", "content": "xy", "thinking": "ab"}));
    let kinds: Vec<_> = named(&run, "part_end").iter().map(|e| (e["kind"].clone(), e["content"].clone())).collect();
    assert_eq!(kinds, [(json!("reasoning"), json!("ab")), (json!("text"), json!("xy"))]);
}

#[test]
fn no_thinking_means_no_thinking_member() {
    let run = fold(&[line(json!({"role": "assistant", "content": "x"})), done()]);
    assert_eq!(run.message["message"], json!({"role": "assistant", "content": "x"}));
}

#[test]
fn the_done_line_gives_counts_reason_and_usage() {
    let run = fold(&[line(json!({"content": "x"})), done()]);
    let m = &run.message;
    assert_eq!(
        (m["done"].clone(), m["done_reason"].clone(), m["eval_count"].clone()),
        (json!(true), json!("stop"), json!(5))
    );
    assert_eq!(m["created_at"], "t2");
    assert_eq!(
        named(&run, "usage")[0]["usage"],
        json!({"total_duration": 10, "prompt_eval_count": 3, "eval_count": 5})
    );
    assert_eq!(named(&run, "turn_end")[0]["stop_reason"], "stop");
    let keys: Vec<_> = m.as_object().unwrap().keys().cloned().collect();
    assert_eq!(&keys[..4], ["model", "created_at", "message", "done"]);
}

#[test]
fn whole_tool_calls_are_ready_at_once() {
    let call = json!({"function": {"name": "f", "arguments": {"a": 1}}});
    let run = fold(&[line(json!({"content": "", "tool_calls": [call]})), line(json!({"content": "z"})), done()]);
    let end = &named(&run, "part_end")[0];
    assert_eq!((end["kind"].as_str(), end["outcome"].as_str()), (Some("tool_call"), Some("complete")));
    assert_eq!(end["content"], call);
    assert_eq!(run.message["message"]["tool_calls"], json!([call]));
    assert_eq!(named(&run, "tool_args_delta")[0]["json"], r#"{"a":1}"#);
}

#[test]
fn string_arguments_must_be_complete_json_to_be_ready() {
    let bad = json!({"function": {"name": "f", "arguments": "{\"a\": "}});
    let run = fold(&[line(json!({"tool_calls": [bad]})), done()]);
    assert_eq!(named(&run, "part_end")[0]["outcome"], "invalid_arguments");
}

#[test]
fn end_of_body_before_done_is_incomplete() {
    let run = fold(&[line(json!({"content": "x"}))]);
    assert_eq!(run.error.as_deref(), Some(r#"Incomplete { expected: "done: true" }"#));
    assert_eq!(named(&run, "part_end")[0]["outcome"], "incomplete");
}

#[test]
fn a_cut_last_line_is_discarded_a_complete_one_applied() {
    let mut body = ndjson(&[line(json!({"content": "x"}))]);
    body.extend_from_slice(br#"{"model":"m","message":{"content":"y"#);
    let run = run_all(Provider::Ollama, &body);
    assert_eq!(warnings(&run), ["truncated_final_event"]);
    assert!(run.error.clone().unwrap().starts_with("Incomplete"));
    let mut body = ndjson(&[line(json!({"content": "x"}))]);
    body.extend_from_slice(done().to_string().as_bytes());
    let run = run_all(Provider::Ollama, &body);
    assert_eq!((warnings(&run), run.error.clone()), (vec!["unterminated_final_event".to_owned()], None));
}

#[test]
fn error_lines_are_typed_errors() {
    let run = fold(&[line(json!({"content": "x"})), json!({"error": "boom"})]);
    let e = &named(&run, "error")[0];
    assert_eq!((e["message"].as_str(), e["output_emitted"].as_bool()), (Some("boom"), Some(true)));
    assert!(run.error.clone().unwrap().starts_with("Provider"));
    // As the first line (model not found): detected as Ollama all the same.
    let run = fold(&[json!({"error": "model \"nope\" not found, try pulling it first"})]);
    assert_eq!(run.detected, "ollama");
    assert_eq!(named(&run, "error").len(), 1);
}

#[test]
fn bad_lines_warn_and_fold_on() {
    let mut body = ndjson(&[line(json!({"content": "a"}))]);
    body.extend_from_slice(b"[1]\n\"s\"\n");
    body.extend(ndjson(&[
        line(json!({"content": 5})),
        line(json!({"content": "b"})),
        done(),
        line(json!({"content": "c"})),
    ]));
    let run = run_all(Provider::Ollama, &body);
    assert_eq!(warnings(&run), ["invalid_event", "invalid_event", "invalid_event", "data_after_terminal"]);
    assert_eq!(run.message["message"]["content"], "ab");
    assert_eq!(run.error, None);
}

#[test]
fn not_json_is_a_typed_error() {
    let run = run_all(Provider::Ollama, b"{nope\n");
    assert!(run.error.unwrap().starts_with("InvalidJson"));
}

#[test]
fn an_overlong_line_is_a_limit_error_in_any_chunking() {
    let mut config = StreamConfig::default();
    config.sse.max_line_len = 64;
    let body = ndjson(&[line(json!({"content": "x".repeat(100)}))]);
    for size in [1, 7, body.len()] {
        let mut s = Stream::with_config(Provider::Auto, config.clone());
        let r = body.chunks(size).try_for_each(|c| s.feed(c, |_| {}));
        assert_eq!(r, Err(StreamError::LimitExceeded { limit: StreamLimit::MaxLineLen, max: 64 }), "chunks of {size}");
    }
}

#[test]
fn a_reconnection_restarts_the_answer() {
    let mut s = Stream::new(Provider::Ollama);
    let mut events = Vec::new();
    s.feed(&ndjson(&[line(json!({"content": "old"}))]), |e| events.push(e.name())).unwrap();
    s.feed(br#"{"model":"m","message":{"content":"cut"#, |e| events.push(e.name())).unwrap();
    s.reconnect().unwrap();
    s.feed(&ndjson(&[line(json!({"content": "new"})), done()]), |e| events.push(e.name())).unwrap();
    s.finish(|e| events.push(e.name())).unwrap();
    assert!(events.contains(&"turn_reset"));
    assert_eq!(s.message()["message"]["content"], "new");
}

/// Issue 26 item 20: a `done: true` line without content first, then the
/// answer: a stray terminal (warning `terminal_before_start`, ignored), not
/// the end; the answer after it is folded, as in the SSE dialects.
#[test]
fn a_done_line_before_the_answer_is_a_stray_terminal() {
    let plain = fold(&[line(json!({"role": "assistant", "content": "Hi"})), done()]);
    for stray in [
        done(),
        json!({"done": true}),
        json!({"model": "m", "message": {"role": "assistant", "content": "", "thinking": ""}, "done": true, "done_reason": "load"}),
        json!({"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": []}, "done": true}),
    ] {
        let run = fold(&[stray.clone(), line(json!({"role": "assistant", "content": "Hi"})), done()]);
        assert_eq!(run.error, None, "{stray}");
        assert_eq!(warnings(&run), ["terminal_before_start"], "{stray}");
        assert_eq!(run.message["message"]["content"], "Hi", "{stray}");
        // Nothing of the stray line is folded: the message is the plain one.
        assert_eq!(run.message, plain.message, "{stray}");
        assert_eq!(named(&run, "turn_end").len(), 1);
        assert_eq!(&run.events[1..], &plain.events[..], "{stray}");
    }
    // Two strays: two warnings, the answer still folded.
    let run = fold(&[done(), done(), line(json!({"content": "Hi"})), done()]);
    assert_eq!((warnings(&run), run.error.clone()), (vec!["terminal_before_start".to_owned(); 2], None));
    assert_eq!(run.message["message"]["content"], "Hi");
    // A stray, then an error line: the provider error.
    let run = fold(&[done(), json!({"error": "boom"})]);
    assert_eq!(warnings(&run), ["terminal_before_start"]);
    assert!(run.error.clone().unwrap().starts_with("Provider("), "{:?}", run.error);
}

/// Item 20: a done line alone is the answer, an empty one (Ollama's empty
/// generation, a model load): the turn ends with its reason, no warning.
#[test]
fn a_done_line_alone_is_an_empty_answer() {
    for body in [ndjson(&[done()]), done().to_string().into_bytes()] {
        let run = run_all(Provider::Ollama, &body);
        assert_eq!(run.error, None);
        assert!(!warnings(&run).contains(&"terminal_before_start".to_owned()), "{:?}", run.events);
        assert_eq!(run.message["message"]["content"], "");
        assert_eq!(run.message["done_reason"], "stop");
        assert_eq!(named(&run, "turn_end")[0]["stop_reason"], "stop");
        assert_eq!(named(&run, "usage").len(), 1);
        assert_eq!(run_all(Provider::Auto, &body), run);
    }
}

/// Item 20: a done line that carries content first is the whole answer in
/// one line (`stream: false`): it ends the turn; lines after it are data
/// after the terminal.
#[test]
fn a_done_line_with_content_first_is_the_whole_answer() {
    let mut whole = done();
    whole["message"]["content"] = json!("all at once");
    let run = fold(&[whole.clone()]);
    assert_eq!((run.error.clone(), warnings(&run)), (None, vec![]));
    assert_eq!(run.message["message"]["content"], "all at once");
    let run = fold(&[whole, line(json!({"content": "late"}))]);
    assert_eq!(warnings(&run), ["data_after_terminal"]);
    assert_eq!(run.message["message"]["content"], "all at once");
}
