//! OpenAI Responses fold: one test per provider behaviour, each run whole,
//! in 1-byte and in random chunkings (`prov_common::run_all`). The fold is
//! the official `openai` Python SDK's (`ResponseStreamState`,
//! `get_final_response()`), except the deliberate differences listed in
//! the module docs of `ssefold::providers::openai_responses`.

use crate::prov_common;

use prov_common::Run;
use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream, StreamError};
use ssefold::reconnect::ResumeCursor;

/// One SSE event named after its `type`.
fn ev(v: Value) -> String {
    let name = v["type"].as_str().unwrap_or("message").to_owned();
    format!("event: {name}\ndata: {v}\n\n")
}

fn body(events: &[Value]) -> Vec<u8> {
    events.iter().map(|v| ev(v.clone())).collect::<String>().into_bytes()
}

fn run(events: &[Value]) -> Run {
    prov_common::run_all(Provider::OpenAIResponses, &body(events))
}

fn resp(extra: Value) -> Value {
    let mut r = json!({"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress", "model": "m",
        "output": [], "usage": null, "error": null, "incomplete_details": null});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

fn created() -> Value {
    json!({"type": "response.created", "sequence_number": 0, "response": resp(json!({}))})
}

fn completed(seq: u64, output: Option<Value>) -> Value {
    let mut r =
        resp(json!({"status": "completed", "usage": {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}}));
    match output {
        Some(o) => r["output"] = o,
        None => {
            r.as_object_mut().unwrap().remove("output");
        }
    }
    json!({"type": "response.completed", "sequence_number": seq, "response": r})
}

fn msg_added(seq: u64, idx: u64, id: &str) -> Value {
    json!({"type": "response.output_item.added", "sequence_number": seq, "output_index": idx,
        "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}})
}

fn text_delta(seq: u64, idx: u64, delta: &str) -> Value {
    json!({"type": "response.output_text.delta", "sequence_number": seq, "output_index": idx, "content_index": 0,
        "item_id": "msg", "delta": delta})
}

fn msg(id: &str, text: &str) -> Value {
    json!({"id": id, "type": "message", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn fc_added(seq: u64, idx: u64) -> Value {
    json!({"type": "response.output_item.added", "sequence_number": seq, "output_index": idx,
        "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1", "name": "f"}})
}

fn args_delta(seq: u64, idx: u64, delta: &str) -> Value {
    json!({"type": "response.function_call_arguments.delta", "sequence_number": seq, "output_index": idx,
        "item_id": "fc_1", "delta": delta})
}

fn fc(args: &str, status: &str) -> Value {
    json!({"id": "fc_1", "type": "function_call", "status": status, "arguments": args, "call_id": "call_1", "name": "f"})
}

fn item_done(seq: u64, idx: u64, item: Value) -> Value {
    json!({"type": "response.output_item.done", "sequence_number": seq, "output_index": idx, "item": item})
}

fn named<'a>(run: &'a Run, name: &str) -> Vec<&'a Value> {
    run.events.iter().filter(|e| e["event"] == name).collect()
}

fn warnings(run: &Run, code: &str) -> usize {
    run.events.iter().filter(|e| e["event"] == "warning" && e["code"] == code).count()
}

fn concat(run: &Run, event: &str, key: &str, part: u64) -> String {
    run.events.iter().filter(|e| e["event"] == event && e["part"] == part).map(|e| e[key].as_str().unwrap()).collect()
}

// ---- 1. The terminal output is authoritative.

#[test]
fn terminal_output_is_authoritative_over_streamed_items() {
    let reasoning = json!({"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "enc_stream"});
    let r = run(&[
        created(),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        item_done(2, 0, reasoning.clone()),
        msg_added(3, 1, "msg_1"),
        text_delta(4, 1, "Hi"),
        item_done(5, 1, msg("msg_1", "Hi")),
        completed(
            6,
            Some(json!([{"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "enc_final"},
            msg("msg_1", "Hi")])),
        ),
    ]);
    assert_eq!(r.error, None);
    assert_eq!(
        r.message["output"][0]["encrypted_content"], "enc_final",
        "re-encrypted reasoning from the terminal event"
    );
    assert_eq!(r.message["output"][1], msg("msg_1", "Hi"));
    assert_eq!(r.message["output"].as_array().unwrap().len(), 2);
}

#[test]
fn terminal_output_carries_items_whose_done_never_came() {
    let r = run(&[
        created(),
        completed(
            1,
            Some(json!([{"id": "ws_1", "type": "web_search_call", "status": "completed"}, msg("msg_1", "Yes")])),
        ),
    ]);
    assert_eq!(r.message["output"][0]["type"], "web_search_call");
    assert_eq!(r.message["output"][1]["content"][0]["text"], "Yes");
}

#[test]
fn absent_terminal_output_folds_the_streamed_items() {
    let r = run(&[
        created(),
        msg_added(1, 0, "msg_1"),
        text_delta(2, 0, "Hi"),
        item_done(3, 0, msg("msg_1", "Hi!")),
        completed(4, None),
    ]);
    assert_eq!(r.message["output"], json!([msg("msg_1", "Hi!")]), "the done item, as the SDK's _completed_output");
}

#[test]
fn null_terminal_output_folds_the_streamed_items() {
    let r = run(&[
        created(),
        msg_added(1, 0, "msg_1"),
        item_done(2, 0, msg("msg_1", "Hi")),
        completed(3, Some(Value::Null)),
    ]);
    assert_eq!(r.message["output"], json!([msg("msg_1", "Hi")]));
}

#[test]
fn empty_terminal_output_keeps_the_streamed_items() {
    // Deliberate difference: the SDK folds `output: []` to no output at all.
    let r =
        run(&[created(), msg_added(1, 0, "msg_1"), item_done(2, 0, msg("msg_1", "Hi")), completed(3, Some(json!([])))]);
    assert_eq!(r.message["output"], json!([msg("msg_1", "Hi")]));
}

#[test]
fn empty_terminal_output_without_streamed_items_is_empty() {
    let r = run(&[created(), completed(1, Some(json!([])))]);
    assert_eq!(r.message["output"], json!([]));
    assert_eq!(r.error, None);
}

#[test]
fn open_tool_call_complete_in_the_terminal_output_is_ready() {
    let r = run(&[
        created(),
        fc_added(1, 0),
        args_delta(2, 0, "{\"a\":"),
        completed(3, Some(json!([fc("{\"a\":[1,2]}", "completed")]))),
    ]);
    assert_eq!(r.error, None);
    let end = named(&r, "part_end")[0];
    assert_eq!(end["outcome"], "complete", "{end}");
    assert_eq!(end["content"], fc("{\"a\":[1,2]}", "completed"));
    assert_eq!(concat(&r, "tool_args_delta", "json", 0), "{\"a\":[1,2]}", "the rest streamed as deltas");
    assert_eq!(warnings(&r, "part_not_ended"), 1);
    assert_eq!(r.message["output"][0], fc("{\"a\":[1,2]}", "completed"));
}

#[test]
fn open_text_complete_in_the_terminal_output_is_complete() {
    let r = run(&[
        created(),
        msg_added(1, 0, "msg_1"),
        text_delta(2, 0, "Hel"),
        completed(3, Some(json!([msg("msg_1", "Hello")]))),
    ]);
    let end = named(&r, "part_end")[0];
    assert_eq!(end["outcome"], "complete");
    assert_eq!(concat(&r, "text_delta", "text", 0), "Hello");
}

#[test]
fn open_tool_call_with_invalid_final_arguments_is_invalid() {
    let r = run(&[
        created(),
        fc_added(1, 0),
        args_delta(2, 0, "{\"a\":"),
        completed(3, Some(json!([fc("{\"a\":", "completed")]))),
    ]);
    assert_eq!(named(&r, "part_end")[0]["outcome"], "invalid_arguments");
}

#[test]
fn open_item_incomplete_in_the_terminal_output_stays_incomplete() {
    let inc = json!({"type": "response.incomplete", "sequence_number": 3,
        "response": resp(json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [fc("{\"a\":", "incomplete")]}))});
    let r = run(&[created(), fc_added(1, 0), args_delta(2, 0, "{\"a\":"), inc]);
    assert_eq!(named(&r, "part_end")[0]["outcome"], "incomplete");
    assert_eq!(named(&r, "turn_end")[0]["stop_reason"], "max_output_tokens");
    assert_eq!(r.message["output"][0]["status"], "incomplete", "the terminal output is still the fold");
}

#[test]
fn terminal_text_that_does_not_extend_the_stream_leaves_the_part_incomplete() {
    let r = run(&[
        created(),
        fc_added(1, 0),
        args_delta(2, 0, "{\"b\":"),
        completed(3, Some(json!([fc("{\"a\":1}", "completed")]))),
    ]);
    assert_eq!(warnings(&r, "terminal_output_mismatch"), 1);
    assert_eq!(named(&r, "part_end")[0]["outcome"], "incomplete");
    assert_eq!(r.message["output"][0]["arguments"], "{\"a\":1}");
}

#[test]
fn open_item_missing_from_the_terminal_output_is_incomplete() {
    // The SDK raises "Cannot complete response with unfinished output items";
    // ssefold commits the part as incomplete and keeps the terminal output.
    let r = run(&[created(), fc_added(1, 0), args_delta(2, 0, "{"), completed(3, Some(json!([msg("msg_9", "x")])))]);
    assert_eq!(named(&r, "part_end")[0]["outcome"], "incomplete");
    assert_eq!(warnings(&r, "part_not_ended"), 1);
    assert_eq!(r.message["output"], json!([msg("msg_9", "x")]));
}

#[test]
fn failed_terminal_output_is_the_fold_and_open_parts_stay_incomplete() {
    let failed = json!({"type": "response.failed", "sequence_number": 3, "response": resp(json!({"status": "failed",
        "error": {"code": "server_error", "message": "boom"}, "output": [fc("{\"a\":1}", "completed")]}))});
    let r = run(&[created(), fc_added(1, 0), args_delta(2, 0, "{\"a\":"), failed]);
    assert!(r.error.as_deref().unwrap().contains("server_error"));
    assert_eq!(named(&r, "part_end")[0]["outcome"], "incomplete", "a failed response's tool call is never ready");
    assert_eq!(r.message["output"][0]["arguments"], "{\"a\":1}");
}

#[test]
fn second_done_of_an_item_replaces_the_first() {
    let r = run(&[
        created(),
        msg_added(1, 0, "msg_1"),
        text_delta(2, 0, "a"),
        item_done(3, 0, msg("msg_1", "a")),
        item_done(4, 0, msg("msg_1", "b")),
        completed(5, None),
    ]);
    assert_eq!(warnings(&r, "part_already_ended"), 1);
    assert_eq!(r.message["output"], json!([msg("msg_1", "b")]), "the SDK's _completed_output keeps the later one");
}

// ---- 2. Error events.

#[test]
fn nested_error_event_gives_its_code_and_message() {
    let err = json!({"type": "error", "error": {"type": "invalid_request_error", "code": "context_length_exceeded",
        "message": "too long", "param": "input"}, "sequence_number": 3});
    let r = run(&[created(), msg_added(1, 0, "m"), text_delta(2, 0, "Hi"), err]);
    let e = named(&r, "error")[0];
    assert_eq!(e["error_type"], "context_length_exceeded");
    assert_eq!(e["message"], "too long");
    assert_eq!(e["output_emitted"], true);
}

#[test]
fn nested_error_without_code_gives_its_type() {
    let err = json!({"type": "error", "error": {"type": "server_error", "code": null, "message": "oops", "param": null},
        "sequence_number": 1});
    let r = run(&[created(), err]);
    assert_eq!(named(&r, "error")[0]["error_type"], "server_error");
}

#[test]
fn flat_error_event_gives_its_code_and_message() {
    let err = json!({"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": null, "sequence_number": 1});
    let r = run(&[created(), err]);
    let e = named(&r, "error")[0];
    assert_eq!((e["error_type"].as_str(), e["message"].as_str()), (Some("rate_limit_exceeded"), Some("slow down")));
}

#[test]
fn error_without_message_gets_the_sdk_default_message() {
    let r = run(&[created(), json!({"type": "error", "error": {"code": "server_error"}, "sequence_number": 1})]);
    assert_eq!(named(&r, "error")[0]["message"], "An error occurred during streaming");
}

#[test]
fn nested_error_first_event_is_detected_as_responses() {
    for data in [
        json!({"type": "error", "error": {"type": "server_error", "code": "server_error", "message": "x", "param": null}, "sequence_number": 0}),
        json!({"type": "error", "error": {"type": "server_error", "code": "server_error", "message": "x"}}),
        json!({"type": "error", "code": "server_error", "message": "x"}),
    ] {
        let mut s = Stream::new(Provider::Auto);
        let r = s.feed(ev(data.clone()).as_bytes(), |_| {});
        assert_eq!(s.provider(), Provider::OpenAIResponses, "{data}");
        match r {
            Err(StreamError::Provider(e)) => {
                assert_eq!((e.error_type.as_str(), e.message.as_str()), ("server_error", "x"))
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn anthropic_error_first_event_is_still_detected_as_anthropic() {
    let data = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let mut s = Stream::new(Provider::Auto);
    let r = s.feed(ev(data).as_bytes(), |_| {});
    assert_eq!(s.provider(), Provider::Anthropic);
    assert!(matches!(r, Err(StreamError::Provider(e)) if e.error_type == "overloaded_error"));
}

// ---- 3. Argument streams beyond function calls.

#[test]
fn mcp_call_arguments_stream_as_a_ready_tool_call() {
    let done = json!({"id": "mcp_1", "type": "mcp_call", "status": "completed", "server_label": "s", "name": "q",
        "arguments": "{\"x\":1}", "output": "ok"});
    let r = run(&[
        created(),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"id": "mcp_1", "type": "mcp_call", "server_label": "s", "name": "q", "arguments": ""}}),
        json!({"type": "response.mcp_call_arguments.delta", "sequence_number": 2, "output_index": 0, "item_id": "mcp_1", "delta": "{\"x\":"}),
        json!({"type": "response.mcp_call_arguments.delta", "sequence_number": 3, "output_index": 0, "item_id": "mcp_1", "delta": "1}"}),
        json!({"type": "response.mcp_call_arguments.done", "sequence_number": 4, "output_index": 0, "item_id": "mcp_1", "arguments": "{\"x\":1}"}),
        item_done(5, 0, done.clone()),
        completed(6, None),
    ]);
    assert_eq!(named(&r, "part_start")[0]["kind"], "tool_call");
    assert_eq!(concat(&r, "tool_args_delta", "json", 0), "{\"x\":1}");
    let end = named(&r, "part_end")[0];
    assert_eq!((end["outcome"].as_str(), &end["content"]), (Some("complete"), &done));
    assert_eq!(r.message["output"], json!([done]));
}

#[test]
fn custom_tool_call_is_a_tool_call_whose_input_is_free_text() {
    let done = json!({"id": "ctc_1", "type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": "a {\nb"});
    let r = run(&[
        created(),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"id": "ctc_1", "type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": ""}}),
        json!({"type": "response.custom_tool_call_input.delta", "sequence_number": 2, "output_index": 0, "item_id": "ctc_1", "delta": "a {"}),
        json!({"type": "response.custom_tool_call_input.delta", "sequence_number": 3, "output_index": 0, "item_id": "ctc_1", "delta": "\nb"}),
        item_done(4, 0, done.clone()),
        completed(5, None),
    ]);
    let start = named(&r, "part_start")[0];
    assert_eq!(start["kind"], "tool_call");
    assert_eq!(start["tool_call"]["input_format"], "text");
    assert!(named(&r, "tool_args_path").is_empty(), "free-form input is not parsed as JSON");
    assert!(named(&r, "text_delta").is_empty());
    assert_eq!(concat(&r, "tool_args_delta", "json", 0), "a {\nb");
    let meta: Vec<_> = named(&r, "part_metadata").iter().map(|e| (e["key"].clone(), e["value"].clone())).collect();
    assert_eq!(meta, [(json!("id"), json!("c1")), (json!("name"), json!("patch"))]);
    let end = named(&r, "part_end")[0];
    assert_eq!(end["outcome"], "complete", "ready: the provider finished it, whatever the text");
    assert_eq!(
        end["tool_call"],
        json!({"id": "c1", "id_synthesized": false, "name": "patch", "arguments": "a {\nb", "input_format": "text",
            "provider_executed": false})
    );
    assert_eq!(r.message["output"], json!([done]));
}

#[test]
fn code_interpreter_code_streams_as_text_of_an_other_part() {
    let mut s = Stream::new(Provider::OpenAIResponses);
    let b = body(&[
        created(),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"id": "ci_1", "type": "code_interpreter_call", "code": null, "container_id": "c", "outputs": null}}),
        json!({"type": "response.code_interpreter_call_code.delta", "sequence_number": 2, "output_index": 0, "item_id": "ci_1", "delta": "print(1)"}),
    ]);
    let mut texts = String::new();
    s.feed(&b, |e| {
        if let ssefold::providers::StreamEvent::TextDelta { text, .. } = e {
            texts.push_str(text)
        }
    })
    .unwrap();
    assert_eq!(texts, "print(1)");
    assert_eq!(s.message()["output"][0]["code"], "print(1)", "the open item shows the code so far");
}

#[test]
fn shell_call_commands_stream_as_text_of_other_parts() {
    let added = json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
        "item": {"id": "sh_1", "type": "shell_call", "status": "in_progress", "call_id": "c", "action": {"commands": []}}});
    let cmd = |seq: u64, ty: &str, i: u64, key: &str, text: &str| {
        json!({"type": format!("response.shell_call_command.{ty}"), "sequence_number": seq, "output_index": 0,
            "command_index": i, key: text})
    };
    let b = body(&[
        created(),
        added,
        cmd(2, "added", 0, "command", ""),
        cmd(3, "delta", 0, "delta", "ls"),
        cmd(4, "done", 0, "command", "ls"),
        cmd(5, "delta", 1, "delta", "pw"),
    ]);
    let r = prov_common::run_all(Provider::OpenAIResponses, &b);
    let starts = named(&r, "part_start");
    assert_eq!(
        starts.iter().map(|e| e["provider_type"].as_str().unwrap()).collect::<Vec<_>>(),
        ["shell_call", "shell_command", "shell_command"]
    );
    assert_eq!(named(&r, "part_end")[0]["content"], "ls", "the first command, committed at its done");
    assert_eq!(
        r.message["output"][0]["action"]["commands"],
        json!(["ls", "pw"]),
        "the open item shows the commands so far"
    );
}

#[test]
fn input_only_in_the_done_item_is_emitted_once() {
    let done = json!({"id": "ctc_1", "type": "custom_tool_call", "call_id": "c1", "name": "p", "input": "xyz"});
    let r = run(&[
        created(),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"id": "ctc_1", "type": "custom_tool_call", "call_id": "c1", "name": "p", "input": ""}}),
        item_done(2, 0, done),
        completed(3, None),
    ]);
    assert_eq!(concat(&r, "tool_args_delta", "json", 0), "xyz");
    assert_eq!(named(&r, "part_end")[0]["tool_call"]["arguments"], "xyz");
}

#[test]
fn argument_delta_on_another_item_type_is_a_type_mismatch() {
    let r = run(&[
        created(),
        fc_added(1, 0),
        json!({"type": "response.mcp_call_arguments.delta", "sequence_number": 2, "output_index": 0, "item_id": "fc_1", "delta": "{}"}),
        args_delta(3, 0, "{}"),
        item_done(4, 0, fc("{}", "completed")),
        completed(5, None),
    ]);
    assert_eq!(warnings(&r, "delta_type_mismatch"), 1);
    assert_eq!(concat(&r, "tool_args_delta", "json", 0), "{}");
}

// ---- 4. Running usage.

#[test]
fn in_progress_usage_gives_a_usage_event() {
    let usage = json!({"input_tokens": 7, "output_tokens": 0, "total_tokens": 7});
    let r = run(&[
        created(),
        json!({"type": "response.in_progress", "sequence_number": 1, "response": resp(json!({"usage": usage}))}),
        completed(2, None),
    ]);
    let u = named(&r, "usage");
    assert_eq!(u.len(), 2);
    assert_eq!(u[0]["usage"], usage);
    assert_eq!(u[1]["usage"]["total_tokens"], 8, "the terminal usage replaces");
}

#[test]
fn null_running_usage_gives_no_usage_event() {
    let r =
        run(&[created(), json!({"type": "response.in_progress", "sequence_number": 1, "response": resp(json!({}))})]);
    assert!(named(&r, "usage").is_empty());
}

/// Each lifecycle event's `response` is merged member by member into the
/// folded one, whatever its members' order: a member already folded keeps
/// its place and takes the new value, a new one is appended, one left out
/// is kept; `output` keeps its place (the first event's). The
/// `message_start` snapshot is the first event's response with an empty
/// `output` where it had one (last when it had none).
#[test]
fn lifecycle_responses_merge_member_by_member_in_any_order() {
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    // Without `output` in the first response: the snapshot has it last.
    let mut first = resp(json!({"instructions": "be brief"}));
    first.as_object_mut().unwrap().shift_remove("output");
    let reordered = json!({"status": "in_progress", "model": "m2", "id": "resp_1", "object": "response",
        "created_at": 1, "tools": [{"type": "function", "name": "f"}], "output": [], "usage": null});
    let r = run(&[
        json!({"type": "response.created", "sequence_number": 0, "response": first}),
        json!({"type": "response.in_progress", "sequence_number": 1, "response": resp(json!({"model": "m1"}))}),
        json!({"type": "response.in_progress", "sequence_number": 2, "response": reordered}),
        completed(3, Some(json!([msg("msg_1", "Hi")]))),
    ]);
    assert_eq!(r.error, None);
    let first_keys = keys(&first);
    assert!(first_keys.len() > 5 && !first_keys.contains(&"output".to_owned()));
    let start = &named(&r, "message_start")[0]["message"];
    assert_eq!(keys(start), [first_keys.clone(), vec!["output".to_owned()]].concat());
    assert_eq!(start["output"], json!([]));
    assert_eq!(start["model"], "m");
    // `output` appended by the second event (the first had none), `tools`
    // by the third; every other member where it first came.
    assert_eq!(keys(&r.message), [first_keys, vec!["output".to_owned(), "tools".to_owned()]].concat());
    assert_eq!(r.message["model"], "m", "the terminal response's model, merged last");
    assert_eq!(r.message["instructions"], "be brief", "a member left out later is kept");
    assert_eq!(r.message["tools"], json!([{"type": "function", "name": "f"}]));
    assert_eq!(r.message["status"], "completed");
    assert_eq!(r.message["output"], json!([msg("msg_1", "Hi")]));
    // With `output` in the first response: the snapshot has it in its place.
    let r = run(&[created(), completed(1, Some(json!([msg("msg_1", "Hi")])))]);
    let start = &named(&r, "message_start")[0]["message"];
    assert_eq!(keys(start), keys(&resp(json!({}))));
    assert_eq!(keys(&r.message), keys(&resp(json!({}))));
    // The same members in the same order: each value replaced in place.
    assert_eq!((&r.message["status"], &r.message["usage"]["total_tokens"]), (&json!("completed"), &json!(8)));
    assert_eq!((&start["status"], &start["usage"]), (&json!("in_progress"), &Value::Null));
}

/// A lifecycle event repeating the response a lifecycle event before sent
/// (as `response.in_progress` repeats `response.created`) folds as any
/// other: its usage event when that response carries one, none when the
/// repeat has none though an earlier response had, a warning for each
/// response that is no object, and a terminal response of the same text is
/// still the terminal one.
#[test]
fn repeated_lifecycle_responses_fold_as_any_other() {
    let with_usage = resp(json!({"usage": {"input_tokens": 7, "output_tokens": 0, "total_tokens": 7}}));
    let lifecycle = |ty: &str, seq: u64, r: &Value| json!({"type": ty, "sequence_number": seq, "response": r});
    let plain = resp(json!({}));
    let r = run(&[
        lifecycle("response.created", 0, &with_usage),
        lifecycle("response.in_progress", 1, &with_usage),
        lifecycle("response.in_progress", 2, &plain),
        lifecycle("response.in_progress", 3, &plain),
        lifecycle("response.in_progress", 4, &json!(null)),
        lifecycle("response.in_progress", 5, &json!(null)),
        lifecycle("response.in_progress", 6, &json!([1])),
        lifecycle("response.in_progress", 7, &json!([1])),
        lifecycle("response.in_progress", 8, &with_usage),
        json!({"type": "response.completed", "sequence_number": 9, "response": with_usage}),
    ]);
    assert_eq!(r.error, None);
    let usage: Vec<u64> = named(&r, "usage").iter().map(|u| u["usage"]["total_tokens"].as_u64().unwrap()).collect();
    // created, its repeat, the last in_progress, and the terminal usage at the turn's end.
    assert_eq!(usage, [7, 7, 7, 7]);
    assert_eq!(warnings(&r, "invalid_event"), 2, "each response that is no object");
    assert_eq!(r.message["usage"]["total_tokens"], 7);
    assert_eq!(named(&r, "turn_end").len(), 1, "the terminal event of the same text ends the turn");
    let stop: Vec<&Value> = named(&r, "stop_reason").iter().map(|e| &e["reason"]).collect();
    assert_eq!(stop, [&json!("completed")]);
}

/// The data's `type` names the event, whatever the SSE event's name: the
/// same events and message with the names as sent, with none, and with a
/// name of another type on every event.
#[test]
fn the_data_type_names_the_event_whatever_the_sse_name() {
    let events = [
        created(),
        json!({"type": "response.in_progress", "sequence_number": 1, "response": resp(json!({}))}),
        msg_added(2, 0, "msg_1"),
        text_delta(3, 0, "Hi"),
        item_done(4, 0, msg("msg_1", "Hi")),
        completed(5, Some(json!([msg("msg_1", "Hi")]))),
    ];
    let named = run(&events);
    for name in [None, Some("response.output_text.delta"), Some("response.completed")] {
        let body: String = events
            .iter()
            .map(|v| match name {
                None => format!("data: {v}\n\n"),
                Some(n) => format!("event: {n}\ndata: {v}\n\n"),
            })
            .collect();
        let r = prov_common::run_all(Provider::OpenAIResponses, body.as_bytes());
        assert_eq!(r.error, None, "{name:?}");
        assert_eq!(r.events, named.events, "{name:?}");
        assert_eq!(r.message, named.message, "{name:?}");
    }
}

// ---- 5. Chunks of the wrong shape.

#[test]
fn delta_of_the_wrong_type_is_a_warning_and_the_rest_applied() {
    let mut bad = text_delta(2, 0, "");
    bad["delta"] = json!(7);
    let r = run(&[
        created(),
        msg_added(1, 0, "msg_1"),
        bad,
        text_delta(3, 0, "ok"),
        item_done(4, 0, msg("msg_1", "ok")),
        completed(5, None),
    ]);
    assert_eq!(warnings(&r, "invalid_event"), 1);
    assert_eq!(concat(&r, "text_delta", "text", 0), "ok");
    assert_eq!(r.error, None);
}

#[test]
fn index_of_the_wrong_type_is_a_warning() {
    let mut bad = text_delta(2, 0, "x");
    bad["output_index"] = json!("0");
    let r = run(&[created(), msg_added(1, 0, "msg_1"), bad]);
    assert_eq!(warnings(&r, "invalid_event"), 1);
    assert!(named(&r, "text_delta").is_empty());
}

#[test]
fn sequence_number_of_the_wrong_type_is_a_warning_and_the_event_applied() {
    let mut d = text_delta(0, 0, "x");
    d["sequence_number"] = json!("2");
    let r = run(&[created(), msg_added(1, 0, "msg_1"), d]);
    assert_eq!(warnings(&r, "invalid_event"), 1);
    assert_eq!(concat(&r, "text_delta", "text", 0), "x");
}

#[test]
fn non_object_data_is_a_warning() {
    let b = [body(&[created()]), b"data: [1,2]\n\ndata: \"s\"\n\n".to_vec(), body(&[completed(1, None)])].concat();
    let r = prov_common::run_all(Provider::OpenAIResponses, &b);
    assert_eq!(warnings(&r, "invalid_event"), 2);
    assert!(named(&r, "unknown").is_empty());
    assert_eq!(r.error, None);
}

#[test]
fn lifecycle_response_of_the_wrong_type_is_a_warning() {
    let r = run(&[created(), json!({"type": "response.in_progress", "sequence_number": 1, "response": [1]})]);
    assert_eq!(warnings(&r, "invalid_event"), 1);
}

#[test]
fn terminal_output_of_the_wrong_type_keeps_the_streamed_items() {
    let r = run(&[
        created(),
        msg_added(1, 0, "msg_1"),
        item_done(2, 0, msg("msg_1", "Hi")),
        completed(3, Some(json!({"x": 1}))),
    ]);
    assert_eq!(warnings(&r, "invalid_event"), 1);
    assert_eq!(r.message["output"], json!([msg("msg_1", "Hi")]));
}

// ---- 6. sequence_number.

#[test]
fn out_of_order_sequence_numbers_on_one_connection_are_applied() {
    let r = run(&[
        created(),
        msg_added(1, 0, "msg_1"),
        text_delta(99, 0, "a"),
        text_delta(2, 0, "b"),
        text_delta(3, 0, "c"),
        item_done(4, 0, msg("msg_1", "abc")),
        completed(5, None),
    ]);
    assert_eq!(concat(&r, "text_delta", "text", 0), "abc");
    assert_eq!(warnings(&r, "out_of_order_event"), 4);
    assert_eq!(warnings(&r, "duplicate_event"), 0);
    assert_eq!(named(&r, "turn_end").len(), 1);
}

#[test]
fn repeated_sequence_number_without_reconnection_is_applied() {
    let r = run(&[created(), msg_added(1, 0, "msg_1"), text_delta(2, 0, "a"), text_delta(2, 0, "b")]);
    assert_eq!(concat(&r, "text_delta", "text", 0), "ab");
}

#[test]
fn sequence_number_u64_max_does_not_drop_the_rest() {
    let r = run(&[
        created(),
        msg_added(1, 0, "msg_1"),
        text_delta(u64::MAX, 0, "a"),
        text_delta(3, 0, "b"),
        completed(4, None),
    ]);
    assert_eq!(concat(&r, "text_delta", "text", 0), "ab");
    assert_eq!(named(&r, "turn_end").len(), 1);
}

#[test]
fn sequence_number_beyond_u64_is_accepted() {
    let big = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":123456789012345678901234567890,\"output_index\":0,\"content_index\":0,\"delta\":\"a\"}\n\n";
    let b = [body(&[created(), msg_added(1, 0, "msg_1")]), big.as_bytes().to_vec()].concat();
    let r = prov_common::run_all(Provider::OpenAIResponses, &b);
    assert_eq!(concat(&r, "text_delta", "text", 0), "a");
    assert!(named(&r, "unknown").is_empty());
    let mut s = Stream::new(Provider::OpenAIResponses);
    s.feed(&b, |_| {}).unwrap();
    assert_eq!(s.last_sequence_number(), None, "not expressible as starting_after");
    assert_eq!(s.resume_cursor(), ResumeCursor::None);
}

#[test]
fn replayed_events_after_reconnect_are_skipped_by_sequence_number() {
    let first = body(&[created(), msg_added(1, 0, "msg_1"), text_delta(2, 0, "a")]);
    let second =
        body(&[text_delta(2, 0, "a"), text_delta(3, 0, "b"), item_done(4, 0, msg("msg_1", "ab")), completed(5, None)]);
    let mut s = Stream::new(Provider::OpenAIResponses);
    let mut events = Vec::new();
    s.feed(&first, |e| events.push(e.to_json())).unwrap();
    assert_eq!(s.resume_cursor(), ResumeCursor::StartingAfter(2));
    s.reconnect().unwrap();
    s.feed(&second, |e| events.push(e.to_json())).unwrap();
    s.finish(|e| events.push(e.to_json())).unwrap();
    let r = Run { events, message: s.message(), error: None, detected: s.provider().name() };
    assert_eq!(warnings(&r, "duplicate_event"), 1);
    assert_eq!(concat(&r, "text_delta", "text", 0), "ab");
    assert_eq!(r.message["output"][0]["content"][0]["text"], "ab");
}

#[test]
fn out_of_order_events_of_a_resumed_connection_above_the_cursor_are_applied() {
    let first = body(&[created(), msg_added(1, 0, "msg_1"), text_delta(2, 0, "a")]);
    let second = body(&[text_delta(4, 0, "c"), text_delta(3, 0, "b"), text_delta(1, 0, "x")]);
    let mut s = Stream::new(Provider::OpenAIResponses);
    let mut text = String::new();
    let mut codes = Vec::new();
    let mut on = |e: &ssefold::providers::StreamEvent<'_>| match e {
        ssefold::providers::StreamEvent::TextDelta { text: t, .. } => text.push_str(t),
        ssefold::providers::StreamEvent::Warning { code, .. } => codes.push(*code),
        _ => {}
    };
    s.feed(&first, &mut on).unwrap();
    s.reconnect().unwrap();
    s.feed(&second, &mut on).unwrap();
    assert_eq!(text, "acb");
    use ssefold::providers::WarningCode;
    assert_eq!(codes, [WarningCode::OutOfOrderEvent, WarningCode::DuplicateEvent]);
}
