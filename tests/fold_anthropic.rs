//! The Anthropic fold, behaviour by behaviour, as the official Python SDK's
//! beta stream helper (`anthropic/lib/streaming/_beta_messages.py`,
//! `accumulate_event`, anthropic 2.12.0) folds it. Every stream is fed whole,
//! in 1-byte chunks and in random chunkings.

use crate::prov_common;

use prov_common::{lcg, named, run_all, warnings, Run};
use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream, StreamConfig, StreamEvent};

/// An SSE body of the given events (their `type` is the SSE event name).
fn sse(events: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for e in events {
        out.push_str(&format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap(), e));
    }
    out.into_bytes()
}

fn start(usage: Value) -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        "content": [], "model": "claude-a", "stop_reason": null, "stop_sequence": null, "usage": usage}})
}

fn text_block(index: u64, text: &str) -> Vec<Value> {
    vec![
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": index}),
    ]
}

fn tool_block(index: u64, fragments: &[&str], stop: bool) -> Vec<Value> {
    let mut v = vec![json!({"type": "content_block_start", "index": index,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}})];
    for f in fragments {
        v.push(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": f}}));
    }
    if stop {
        v.push(json!({"type": "content_block_stop", "index": index}));
    }
    v
}

fn stop() -> Value {
    json!({"type": "message_stop"})
}

fn fold(events: &[Value]) -> Run {
    run_all(Provider::Anthropic, &sse(events))
}

/// Like `run_all`, with a configuration (whole, 1-byte and random chunkings agree).
fn fold_with(config: &StreamConfig, events: &[Value]) -> Value {
    let bytes = sse(events);
    let mut results = Vec::new();
    let mut chunkings: Vec<Box<dyn FnMut() -> usize>> =
        vec![Box::new(|| usize::MAX), Box::new(|| 1), Box::new(lcg(7, 40)), Box::new(lcg(8, 9))];
    for sizes in chunkings.iter_mut() {
        let mut stream = Stream::with_config(Provider::Anthropic, config.clone());
        let mut events = Vec::new();
        let mut pos = 0;
        while pos < bytes.len() {
            let n = sizes().max(1).min(bytes.len() - pos);
            let _ = stream.feed(&bytes[pos..pos + n], |e: &StreamEvent<'_>| events.push(e.to_json()));
            pos += n;
        }
        let _ = stream.finish(|e: &StreamEvent<'_>| events.push(e.to_json()));
        results.push((events, stream.message()));
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "chunkings differ");
    results.pop().unwrap().1
}

fn message_delta(delta: Value, usage: Value, extra: Value) -> Value {
    let mut v = json!({"type": "message_delta", "delta": delta, "usage": usage});
    if let Value::Object(extra) = extra {
        v.as_object_mut().unwrap().extend(extra);
    }
    v
}

// ---- 1. message_delta ----------------------------------------------------

#[test]
fn message_delta_usage_null_keeps_message_start_value() {
    let usage = json!({"input_tokens": 10, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 2,
        "output_tokens": 1, "server_tool_use": {"web_search_requests": 1}});
    let mut events = vec![start(usage)];
    events.extend(text_block(0, "Hi"));
    events.push(message_delta(
        json!({"stop_reason": "end_turn", "stop_sequence": null}),
        json!({"input_tokens": null, "cache_creation_input_tokens": null, "output_tokens": 7,
            "server_tool_use": null, "output_tokens_details": null, "iterations": null, "fallback_credit": null}),
        json!({}),
    ));
    events.push(stop());
    let run = fold(&events);
    assert_eq!(
        run.message["usage"],
        json!({"input_tokens": 10, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 2,
            "output_tokens": 7, "server_tool_use": {"web_search_requests": 1}})
    );
}

#[test]
fn message_delta_usage_absent_member_keeps_message_start_value() {
    let mut events = vec![start(json!({"input_tokens": 10, "cache_read_input_tokens": 2, "output_tokens": 1}))];
    events.extend(text_block(0, "Hi"));
    events.push(message_delta(json!({"stop_reason": "end_turn"}), json!({"output_tokens": 5}), json!({})));
    events.push(stop());
    let run = fold(&events);
    assert_eq!(run.message["usage"], json!({"input_tokens": 10, "cache_read_input_tokens": 2, "output_tokens": 5}));
}

#[test]
fn message_delta_usage_numbers_replace_as_cumulative_totals() {
    let mut events = vec![start(json!({"input_tokens": 10, "cache_read_input_tokens": 2, "output_tokens": 1}))];
    events.extend(text_block(0, "Hi"));
    events.push(message_delta(
        json!({"stop_reason": null}),
        json!({"input_tokens": 12, "cache_read_input_tokens": 4, "output_tokens": 5}),
        json!({}),
    ));
    events.push(message_delta(json!({"stop_reason": "end_turn"}), json!({"output_tokens": 9}), json!({})));
    events.push(stop());
    let run = fold(&events);
    assert_eq!(run.message["usage"], json!({"input_tokens": 12, "cache_read_input_tokens": 4, "output_tokens": 9}));
    // Each usage change is announced with the merged object.
    let usages = named(&run, "usage");
    assert_eq!(usages.last().unwrap()["usage"], run.message["usage"]);
}

#[test]
fn message_delta_usage_objects_replace_when_non_null() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1,
        "iterations": [{"type": "message", "input_tokens": 1, "output_tokens": 1}]}))];
    events.extend(text_block(0, "Hi"));
    events.push(message_delta(
        json!({"stop_reason": "end_turn"}),
        json!({"output_tokens": 4, "output_tokens_details": {"thinking_tokens": 2},
            "server_tool_use": {"web_search_requests": 2}, "fallback_credit": {"status": {"type": "redeemed"}},
            "iterations": [{"type": "message", "input_tokens": 1, "output_tokens": 4}]}),
        json!({}),
    ));
    events.push(stop());
    let usage = &fold(&events).message["usage"];
    assert_eq!(usage["output_tokens_details"], json!({"thinking_tokens": 2}));
    assert_eq!(usage["server_tool_use"], json!({"web_search_requests": 2}));
    assert_eq!(usage["fallback_credit"], json!({"status": {"type": "redeemed"}}));
    assert_eq!(usage["iterations"][0]["output_tokens"], 4);
}

#[test]
fn message_delta_container_null_keeps_earlier_container() {
    let container = json!({"id": "c1", "expires_at": "2030-01-01T00:00:00Z"});
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.extend(text_block(0, "Hi"));
    events.push(message_delta(
        json!({"stop_reason": null, "container": container}),
        json!({"output_tokens": 2}),
        json!({}),
    ));
    events.push(message_delta(
        json!({"stop_reason": "end_turn", "container": null}),
        json!({"output_tokens": 3}),
        json!({}),
    ));
    events.push(stop());
    assert_eq!(fold(&events).message["container"], container);
}

#[test]
fn message_delta_context_management_and_input_transformations_replace_when_non_null() {
    let mut s = start(json!({"input_tokens": 1, "output_tokens": 1}));
    s["message"]["input_transformations"] = json!([{"type": "thinking_dropped"}]);
    s["message"]["context_management"] = json!({"applied_edits": []});
    let mut events = vec![s];
    events.extend(text_block(0, "Hi"));
    let edits = json!({"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2}]});
    events.push(message_delta(
        json!({"stop_reason": null}),
        json!({"output_tokens": 2}),
        json!({"context_management": edits, "input_transformations": []}),
    ));
    // Null (and absent) keep the earlier values.
    events.push(message_delta(
        json!({"stop_reason": "end_turn"}),
        json!({"output_tokens": 3}),
        json!({"context_management": null, "input_transformations": null}),
    ));
    events.push(stop());
    let m = fold(&events).message;
    assert_eq!(m["context_management"], edits);
    assert_eq!(m["input_transformations"], json!([]));
}

#[test]
fn message_delta_stop_fields_always_replace_absent_is_null() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.extend(text_block(0, "Hi"));
    let details = json!({"type": "refusal", "category": "cyber", "explanation": "no"});
    events.push(message_delta(
        json!({"stop_reason": "refusal", "stop_sequence": "X", "stop_details": details}),
        json!({"output_tokens": 2}),
        json!({}),
    ));
    let run = fold(&[events.clone(), vec![stop()]].concat());
    assert_eq!(run.message["stop_details"], details);
    assert_eq!(run.message["stop_sequence"], "X");
    // A later message_delta without them resets them to null (the SDK assigns
    // `event.delta.stop_reason` etc. unconditionally).
    events.push(message_delta(json!({}), json!({"output_tokens": 3}), json!({})));
    events.push(stop());
    let m = fold(&events).message;
    assert_eq!(
        (m["stop_reason"].clone(), m["stop_sequence"].clone(), m["stop_details"].clone()),
        (Value::Null, Value::Null, Value::Null)
    );
}

// ---- 2. fallback ---------------------------------------------------------

#[test]
fn fallback_block_start_relabels_message_model() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "fallback",
        "from": {"model": "claude-a"}, "to": {"model": "claude-b"}, "trigger": {"type": "refusal"}}}));
    let before_stop = fold(&events);
    // Relabeled at content_block_start (as the SDK does), not at its stop.
    assert_eq!(before_stop.message["model"], "claude-b");
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.extend(text_block(1, "Hi"));
    events.push(message_delta(json!({"stop_reason": "end_turn"}), json!({"output_tokens": 2}), json!({})));
    events.push(stop());
    let run = fold(&events);
    assert_eq!(run.message["model"], "claude-b");
    assert_eq!(run.message["content"][0]["type"], "fallback");
    assert_eq!(run.message["content"][1]["text"], "Hi");
}

// ---- 3. compaction -------------------------------------------------------

#[test]
fn compaction_delta_content_concatenates_and_encrypted_content_is_latest() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.push(json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "compaction", "content": null, "encrypted_content": null}}));
    for (content, enc) in
        [(json!("Earlier "), json!("E1")), (json!(null), json!("E2")), (json!("summary."), json!(null))]
    {
        events.push(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "compaction_delta", "content": content, "encrypted_content": enc}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(message_delta(json!({"stop_reason": "end_turn"}), json!({"output_tokens": 2}), json!({})));
    events.push(stop());
    let block = &fold(&events).message["content"][0];
    assert_eq!(block["content"], "Earlier summary.");
    assert_eq!(block["encrypted_content"], "E2");
}

/// A delta that names `encrypted_content` as null on a block that started
/// without it: the member is there, null (the SDK assigns it), until a value.
#[test]
fn compaction_delta_null_member_is_null_in_the_block() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "compaction"}}));
    events.push(json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "compaction_delta", "content": "Summary.", "encrypted_content": null}}));
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(stop());
    let block = &fold(&events).message["content"][0];
    assert_eq!(block, &json!({"type": "compaction", "content": "Summary.", "encrypted_content": null}));
}

// ---- 4. content in message_start -----------------------------------------

#[test]
fn message_start_content_is_kept_as_ready_parts_and_later_indices_follow() {
    let mut s = start(json!({"input_tokens": 1, "output_tokens": 1}));
    let tool = json!({"type": "tool_use", "id": "toolu_P", "name": "query", "input": {"sql": "select 1"},
        "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}});
    s["message"]["content"] = json!([tool]);
    let mut events = vec![s];
    events.extend(text_block(1, "Done"));
    events.push(message_delta(json!({"stop_reason": "tool_use"}), json!({"output_tokens": 2}), json!({})));
    events.push(stop());
    let run = fold(&events);
    assert_eq!(run.message["content"], json!([tool, {"type": "text", "text": "Done"}]));
    assert!(warnings(&run).is_empty(), "{:?}", warnings(&run));
    // The message_start snapshot shows the block; then its part: start, id and name, end (ready).
    assert_eq!(named(&run, "message_start")[0]["message"]["content"], json!([tool]));
    let names: Vec<&str> = run.events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(&names[..6], ["message_start", "usage", "part_start", "part_metadata", "part_metadata", "part_end"]);
    let end = named(&run, "part_end")[0];
    assert_eq!(
        (end["part"].clone(), end["outcome"].clone(), end["content"].clone()),
        (json!(0), json!("complete"), tool)
    );
    assert_eq!(named(&run, "part_start")[1]["index"], 1);
}

// ---- 5. cut off or invalid tool input --------------------------------------

#[test]
fn tool_input_cut_at_max_tokens_folds_jiter_partial_value_and_is_not_ready() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.extend(tool_block(0, &[r#"{"path": "a.txt", "n": 12, "lines": ["one", "tw"#], true));
    events.push(message_delta(json!({"stop_reason": "max_tokens"}), json!({"output_tokens": 2}), json!({})));
    events.push(stop());
    let run = fold(&events);
    // jiter partial_mode=True: the trailing number counts, the unfinished string is dropped.
    assert_eq!(run.message["content"][0]["input"], json!({"path": "a.txt", "n": 12, "lines": ["one"]}));
    let end = named(&run, "part_end")[0];
    assert_eq!(end["outcome"], "invalid_arguments");
    assert_eq!(end["content"]["input"], run.message["content"][0]["input"]);
}

#[test]
fn tool_input_cut_by_end_of_stream_folds_partial_value_as_incomplete() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.extend(tool_block(0, &[r#"{"a": 1, "b": [1, 2"#], false));
    let run = fold(&events);
    assert_eq!(run.message["content"][0]["input"], json!({"a": 1, "b": [1, 2]}));
    assert_eq!(named(&run, "part_end")[0]["outcome"], "incomplete");
    assert!(run.error.is_some());
}

#[test]
fn tool_input_invalid_folds_value_before_the_error_and_is_not_ready() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.extend(tool_block(0, &[r#"{"location": "Paris", "#, r#""unit": celsius}"#], true));
    events.push(message_delta(json!({"stop_reason": "tool_use"}), json!({"output_tokens": 2}), json!({})));
    events.push(stop());
    let run = fold(&events);
    assert_eq!(run.message["content"][0]["input"], json!({"location": "Paris"}));
    let end = named(&run, "part_end")[0];
    assert_eq!(end["outcome"], "invalid_arguments");
    assert!(end["raw"].as_str().unwrap().ends_with("celsius}"));
}

#[test]
fn tool_input_trailing_strings_option_keeps_the_unfinished_string() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.extend(tool_block(0, &[r#"{"path": "a.txt", "text": "hel"#], true));
    events.push(message_delta(json!({"stop_reason": "max_tokens"}), json!({"output_tokens": 2}), json!({})));
    events.push(stop());
    let keep = StreamConfig { tool_input_trailing_strings: true, ..StreamConfig::default() };
    assert_eq!(fold_with(&keep, &events)["content"][0]["input"], json!({"path": "a.txt", "text": "hel"}));
    let default = StreamConfig::default();
    assert!(!default.tool_input_trailing_strings);
    assert_eq!(fold_with(&default, &events)["content"][0]["input"], json!({"path": "a.txt"}));
}

#[test]
fn tool_input_still_streaming_shows_the_partial_value() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.extend(tool_block(0, &[r#"{"q": "ab"#, r#"c", "k": 3"#], false));
    let bytes = sse(&events);
    let mut stream = Stream::new(Provider::Anthropic);
    stream.feed(&bytes, |_| {}).unwrap();
    assert_eq!(stream.message()["content"][0]["input"], json!({"q": "abc", "k": 3}));
}

#[test]
fn tool_input_complete_is_ready_with_the_exact_value() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    events.extend(tool_block(0, &["", r#"{"a": [1, "x"], "#, r#""b": {"c": null}}"#], true));
    events.push(message_delta(json!({"stop_reason": "tool_use"}), json!({"output_tokens": 2}), json!({})));
    events.push(stop());
    let run = fold(&events);
    assert_eq!(run.message["content"][0]["input"], json!({"a": [1, "x"], "b": {"c": null}}));
    assert_eq!(named(&run, "part_end")[0]["outcome"], "complete");
}

// ---- 6. deliberate differences -------------------------------------------

#[test]
fn out_of_order_block_indices_are_folded_by_index() {
    let mut events = vec![start(json!({"input_tokens": 1, "output_tokens": 1}))];
    let (a, b) = (text_block(1, "second"), text_block(0, "first"));
    events.extend([a[0].clone(), b[0].clone(), a[1].clone(), b[1].clone(), a[2].clone(), b[2].clone()]);
    events.push(message_delta(json!({"stop_reason": "end_turn"}), json!({"output_tokens": 2}), json!({})));
    events.push(stop());
    let run = fold(&events);
    assert_eq!(run.message["content"], json!([{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]));
    assert_eq!(warnings(&run), ["unexpected_part_index", "unexpected_part_index"]);
}

#[test]
fn message_start_without_usage_takes_the_delta_usage() {
    let mut s = start(json!(null));
    s["message"].as_object_mut().unwrap().remove("usage");
    let mut events = vec![s];
    events.extend(text_block(0, "Hi"));
    events.push(message_delta(
        json!({"stop_reason": "end_turn"}),
        json!({"input_tokens": 3, "output_tokens": 2}),
        json!({}),
    ));
    events.push(stop());
    assert_eq!(fold(&events).message["usage"], json!({"input_tokens": 3, "output_tokens": 2}));
}
