//! The Gemini / Vertex AI fold, behaviour by behaviour: every stream is fed
//! whole, in 1-byte chunks and in random chunkings (`run_all`), with the
//! dialect given; auto-detection is checked on the first chunk's shapes.

use crate::prov_common;

use prov_common::{named, run_all, warnings, Run};
use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream};

/// An SSE body of `data:` lines only, one chunk each.
fn sse(chunks: &[Value]) -> Vec<u8> {
    chunks.iter().map(|c| format!("data: {c}\r\n\r\n")).collect::<String>().into_bytes()
}

fn chunk(parts: Value, finish: Option<&str>) -> Value {
    let mut c = json!({"content": {"parts": parts, "role": "model"}});
    if let Some(f) = finish {
        c["finishReason"] = f.into();
    }
    json!({"candidates": [c], "modelVersion": "gemini-2.5-flash", "responseId": "r1"})
}

fn fold(chunks: &[Value]) -> Run {
    run_all(Provider::Gemini, &sse(chunks))
}

fn parts(run: &Run) -> &Value {
    &run.message["candidates"][0]["content"]["parts"]
}

#[test]
fn names_and_detection() {
    for name in ["gemini", "vertex", "google"] {
        assert_eq!(Provider::from_name(name), Some(Provider::Gemini));
    }
    assert_eq!(Provider::Gemini.name(), "gemini");
    for first in [
        json!({"candidates": []}),
        json!({"usageMetadata": {"promptTokenCount": 1}}),
        json!({"promptFeedback": {"blockReason": "OTHER"}}),
        json!({"modelVersion": "gemini-2.5-pro"}),
    ] {
        let run = run_all(Provider::Auto, &sse(std::slice::from_ref(&first)));
        assert_eq!(run.detected, "gemini", "{first}");
    }
}

#[test]
fn consecutive_text_parts_merge_into_one() {
    let run = fold(&[chunk(json!([{"text": "a"}]), None), chunk(json!([{"text": "b"}, {"text": "c"}]), Some("STOP"))]);
    assert_eq!(run.error, None);
    assert_eq!(parts(&run), &json!([{"text": "abc"}]));
    assert_eq!(named(&run, "part_start").len(), 1);
    let deltas: Vec<_> = named(&run, "text_delta").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(deltas, ["a", "b", "c"]);
    assert_eq!(named(&run, "turn_end")[0]["stop_reason"], "STOP");
}

#[test]
fn thought_and_text_are_separate_parts() {
    let run = fold(&[
        chunk(json!([{"text": "hm", "thought": true}]), None),
        chunk(json!([{"text": "ok"}]), None),
        chunk(json!([{"text": " more", "thought": true}]), Some("STOP")),
    ]);
    assert_eq!(
        parts(&run),
        &json!([{"text": "hm", "thought": true}, {"text": "ok"}, {"text": " more", "thought": true}])
    );
    let kinds: Vec<_> = named(&run, "part_start").iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["reasoning", "text", "reasoning"]);
}

#[test]
fn signature_on_the_final_empty_part_lands_on_the_text_before_it() {
    let run = fold(&[
        chunk(json!([{"text": "Hello"}]), None),
        chunk(json!([{"text": "", "thoughtSignature": "c2ln"}]), Some("STOP")),
    ]);
    assert_eq!(parts(&run), &json!([{"text": "Hello", "thoughtSignature": "c2ln"}]));
    let meta = named(&run, "part_metadata");
    assert_eq!(
        (meta[0]["part"].clone(), meta[0]["key"].clone(), meta[0]["value"].clone()),
        (json!(0), json!("signature"), json!("c2ln"))
    );
}

#[test]
fn two_signatures_are_never_merged_into_one_part() {
    let run = fold(&[
        chunk(json!([{"text": "a", "thoughtSignature": "s1"}]), None),
        chunk(json!([{"text": "b", "thoughtSignature": "s2"}]), Some("STOP")),
    ]);
    assert_eq!(parts(&run), &json!([{"text": "a", "thoughtSignature": "s1"}, {"text": "b", "thoughtSignature": "s2"}]));
}

#[test]
fn signature_after_thoughts_starts_its_own_text_part() {
    let run = fold(&[
        chunk(json!([{"text": "think", "thought": true}]), None),
        chunk(json!([{"text": "", "thoughtSignature": "s"}]), Some("STOP")),
    ]);
    assert_eq!(parts(&run), &json!([{"text": "think", "thought": true}, {"text": "", "thoughtSignature": "s"}]));
}

#[test]
fn function_call_is_ready_at_once() {
    let run = fold(&[
        chunk(json!([{"functionCall": {"name": "f", "args": {"x": [1]}}, "thoughtSignature": "s"}]), None),
        chunk(json!([{"text": "after"}]), Some("STOP")),
    ]);
    let ends = named(&run, "part_end");
    // Committed before the next chunk's text started.
    assert_eq!(ends[0]["kind"], "tool_call");
    assert_eq!(ends[0]["outcome"], "complete");
    assert_eq!(ends[0]["content"], json!({"functionCall": {"name": "f", "args": {"x": [1]}}, "thoughtSignature": "s"}));
    let pos = |name: &str| run.events.iter().position(|e| e["event"] == name).unwrap();
    assert!(pos("part_end") < run.events.iter().position(|e| e["event"] == "text_delta").unwrap());
    assert!(pos("tool_args_delta") < pos("part_end"));
    assert_eq!(named(&run, "tool_args_delta")[0]["json"], r#"{"x":[1]}"#);
    assert_eq!(parts(&run)[1], json!({"text": "after"}));
}

#[test]
fn function_call_without_args_is_ready() {
    let run = fold(&[chunk(json!([{"functionCall": {"name": "now"}}]), Some("STOP"))]);
    let end = named(&run, "part_end")[0];
    assert_eq!((end["kind"].as_str(), end["outcome"].as_str()), (Some("tool_call"), Some("complete")));
    assert!(named(&run, "tool_args_delta").is_empty());
}

#[test]
fn other_parts_are_kept_whole_and_close_the_text() {
    let code = json!({"executableCode": {"language": "PYTHON", "code": "print(1)"}});
    let result = json!({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}});
    let image = json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}});
    let run = fold(&[
        chunk(json!([{"text": "x"}]), None),
        chunk(json!([code, result, image]), None),
        chunk(json!([{"text": "y"}]), Some("STOP")),
    ]);
    assert_eq!(parts(&run), &json!([{"text": "x"}, code, result, image, {"text": "y"}]));
    let types: Vec<_> = named(&run, "part_start").iter().map(|e| e["provider_type"].as_str().unwrap()).collect();
    assert_eq!(types, ["text", "executableCode", "codeExecutionResult", "inlineData", "text"]);
    assert!(named(&run, "part_end").iter().all(|e| e["outcome"] == "complete"));
}

#[test]
fn vertex_partial_args_cut_by_the_end_of_the_body_are_never_a_ready_call() {
    let run = fold(&[chunk(
        json!([{"functionCall": {"name": "f", "partialArgs": [{"jsonPath": "$.a", "numberValue": 1}], "willContinue": true}}]),
        Some("STOP"),
    )]);
    let end = named(&run, "part_end")[0];
    assert_eq!((&end["kind"], &end["outcome"]), (&json!("tool_call"), &json!("incomplete")));
    assert_eq!(warnings(&run), ["part_not_ended"]);
    assert_eq!(parts(&run)[0], json!({"functionCall": {"name": "f", "args": {"a": 1}}}));
}

/// The recorded Vertex streams (vercel/ai fixtures, Apache-2.0; see
/// tests/recordings/README.md).
fn recording(name: &str) -> Run {
    let path = format!("{}/tests/recordings/gemini/vercel-ai/{name}.sse", env!("CARGO_MANIFEST_DIR"));
    run_all(Provider::Gemini, &std::fs::read(path).unwrap())
}

/// The ready calls of a run: `(name, args)` from their `part_end`s.
fn ready_calls(run: &Run) -> Vec<(String, Value)> {
    named(run, "part_end")
        .into_iter()
        .filter(|e| e["kind"] == "tool_call" && e["outcome"] == "complete")
        .map(|e| {
            let fc = &e["content"]["functionCall"];
            (fc["name"].as_str().unwrap().to_owned(), fc["args"].clone())
        })
        .collect()
}

#[test]
fn recorded_vertex_partial_args_fold_to_the_whole_call() {
    let run = recording("google__google-vertex-stream-tool-call-arguments-nested.1");
    assert!(warnings(&run).is_empty(), "{:?}", warnings(&run));
    let calls = ready_calls(&run);
    assert_eq!(calls.len(), 1);
    let (name, args) = &calls[0];
    assert_eq!(name, "cookRecipe");
    let recipe = &args["recipe"];
    assert_eq!(recipe["name"], "Lasagna");
    assert_eq!(recipe["ingredients"].as_array().unwrap().len(), 10);
    assert_eq!(recipe["ingredients"][0], json!({"amount": "16 oz", "name": "Lasagna noodles"}));
    assert_eq!(recipe["steps"][1], "Cook lasagna noodles according to package directions, drain and set aside.");
    assert_eq!(recipe["steps"].as_array().unwrap().len(), 10);
    // The folded part is the non-streaming one: one part, `args` whole, the signature kept.
    let part = &parts(&run)[0];
    assert_eq!(part["functionCall"]["args"], *args);
    assert!(part["thoughtSignature"].is_string());
    assert!(part["functionCall"].get("willContinue").is_none() && part["functionCall"].get("partialArgs").is_none());
    assert_eq!(parts(&run).as_array().unwrap().len(), 1);
    // The path events rebuild the same object (depth + last segment).
    let paths = named(&run, "tool_args_path");
    assert!(paths
        .iter()
        .any(|p| p["path_event"] == json!({"type": "value_complete", "depth": 4, "key": "amount", "value": "16 oz"})));
    let raw: String = named(&run, "tool_args_delta").iter().map(|e| e["json"].as_str().unwrap()).collect();
    assert_eq!(serde_json::from_str::<Value>(&raw).unwrap(), *args);
}

#[test]
fn recorded_vertex_calls_end_at_an_empty_function_call_or_without_will_continue() {
    let run = recording("google__google-stream-tool-call-arguments");
    assert_eq!(
        ready_calls(&run),
        [
            ("getWeather".to_owned(), json!({"location": "Boston"})),
            ("getWeather".to_owned(), json!({"location": "San Francisco"}))
        ]
    );
    let run = recording("google__google-stream-no-args-tool-call");
    let calls = ready_calls(&run);
    assert_eq!(calls.len(), 4);
    assert_eq!(calls[0].0, "read_theme");
    assert_eq!(calls[3], ("read_screen".to_owned(), json!({"id": "C"})));
    // The last call's final `partialArgs` has no `willContinue`: complete there.
    let run = recording("google__google-stream-tool-call-array-arguments-missing-terminal-function-call");
    let calls = ready_calls(&run);
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].1["operations"][1],
        json!({"action": "add", "description": "Ripe yellow banana", "itemid": "banana_001", "price": 0.3})
    );
    assert!(warnings(&run).is_empty());
}

#[test]
fn vertex_bad_paths_are_warnings_and_the_call_stays_valid() {
    let run = fold(&[
        chunk(json!([{"functionCall": {"name": "f", "willContinue": true}}]), None),
        chunk(
            json!([{"functionCall": {"partialArgs": [
                {"jsonPath": "$.a[0]", "numberValue": 1},
                {"jsonPath": "$.a[5]", "numberValue": 2},
                {"jsonPath": "$..x", "numberValue": 3},
                {"jsonPath": "$.a", "stringValue": "again"},
                {"jsonPath": 7, "numberValue": 4},
                {"jsonPath": "$.b"},
            ], "willContinue": true}}]),
            None,
        ),
        chunk(json!([{"functionCall": {"partialArgs": "nope"}}]), Some("STOP")),
    ]);
    assert_eq!(warnings(&run), ["invalid_event"; 6]);
    assert_eq!(ready_calls(&run), [("f".to_owned(), json!({"a": [1]}))]);
}

#[test]
fn a_new_named_call_cuts_a_streaming_one() {
    let run = fold(&[
        chunk(json!([{"functionCall": {"name": "f", "willContinue": true}}]), None),
        chunk(json!([{"functionCall": {"name": "g", "args": {"x": 1}}}]), Some("STOP")),
    ]);
    assert_eq!(warnings(&run), ["part_not_ended"]);
    assert_eq!(ready_calls(&run), [("g".to_owned(), json!({"x": 1}))]);
    assert_eq!(parts(&run)[0], json!({"functionCall": {"name": "f", "args": {}}}));
}

#[test]
fn usage_is_the_last_chunks_and_announced_on_change() {
    let mut a = chunk(json!([{"text": "a"}]), None);
    a["usageMetadata"] = json!({"promptTokenCount": 3, "totalTokenCount": 3});
    let mut b = chunk(json!([{"text": "b"}]), None);
    b["usageMetadata"] = a["usageMetadata"].clone();
    let mut c = chunk(json!([]), Some("STOP"));
    c["usageMetadata"] = json!({"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5});
    let run = fold(&[a, b, c.clone()]);
    assert_eq!(run.message["usageMetadata"], c["usageMetadata"]);
    assert_eq!(named(&run, "usage").len(), 2);
}

#[test]
fn candidate_members_fold_and_citations_append() {
    let mut a = chunk(json!([{"text": "a"}]), None);
    a["candidates"][0]["citationMetadata"] = json!({"citations": [{"uri": "u1"}]});
    a["candidates"][0]["safetyRatings"] = json!([{"category": "X", "probability": "LOW"}]);
    let mut b = chunk(json!([{"text": "b"}]), Some("STOP"));
    b["candidates"][0]["citationMetadata"] = json!({"citations": [{"uri": "u1"}, {"uri": "u2"}]});
    b["candidates"][0]["safetyRatings"] = json!([{"category": "X", "probability": "NEGLIGIBLE"}]);
    b["createTime"] = json!("2025-01-01T00:00:00Z");
    let run = fold(&[a, b]);
    let cand = &run.message["candidates"][0];
    assert_eq!(cand["citationMetadata"], json!({"citations": [{"uri": "u1"}, {"uri": "u2"}]}));
    assert_eq!(cand["safetyRatings"][0]["probability"], "NEGLIGIBLE");
    assert_eq!(run.message["createTime"], "2025-01-01T00:00:00Z");
}

#[test]
fn end_of_body_without_finish_reason_is_incomplete() {
    let run = fold(&[chunk(json!([{"text": "a"}]), None)]);
    assert_eq!(run.error.as_deref(), Some(r#"Incomplete { expected: "finishReason" }"#));
    assert_eq!(named(&run, "part_end")[0]["outcome"], "incomplete");
    assert!(named(&run, "turn_end").is_empty());
}

#[test]
fn every_candidate_needs_its_finish_reason() {
    let body = json!({"candidates": [
        {"content": {"parts": [{"text": "a"}]}, "index": 0, "finishReason": "STOP"},
        {"content": {"parts": [{"text": "b"}]}, "index": 1}]});
    let run = fold(&[body]);
    assert!(run.error.clone().unwrap().starts_with("Incomplete"));
}

#[test]
fn block_reason_is_a_typed_error_with_the_feedback_folded() {
    let run = fold(&[json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT", "blockReasonMessage": "no"}})]);
    let err = &named(&run, "error")[0];
    assert_eq!(
        (err["error_type"].as_str(), err["message"].as_str()),
        (Some("prompt_blocked"), Some("PROHIBITED_CONTENT: no"))
    );
    assert_eq!(run.message["promptFeedback"]["blockReason"], "PROHIBITED_CONTENT");
}

#[test]
fn error_body_is_a_typed_error() {
    let run = fold(&[
        chunk(json!([{"text": "a"}]), None),
        json!({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}),
    ]);
    let err = &named(&run, "error")[0];
    assert_eq!(err["error_type"], "RESOURCE_EXHAUSTED");
    assert_eq!(err["output_emitted"], true);
    assert_eq!(parts(&run), &json!([{"text": "a"}]));
    // An error body as the first event: the dialect given folds it.
    let run = fold(&[json!({"error": {"code": 400, "message": "bad"}})]);
    assert_eq!(named(&run, "error")[0]["error_type"], "400");
}

#[test]
fn truncated_last_event_is_discarded() {
    let mut body = sse(&[chunk(json!([{"text": "a"}]), None)]);
    body.extend_from_slice(br#"data: {"candidates":[{"content":{"parts":[{"text":"b"#);
    let run = run_all(Provider::Gemini, &body);
    assert_eq!(warnings(&run), ["truncated_final_event"]);
    assert!(run.error.clone().unwrap().starts_with("Incomplete"));
    assert_eq!(parts(&run), &json!([{"text": "a"}]));
}

#[test]
fn unterminated_complete_last_event_ends_normally() {
    let mut body = sse(&[chunk(json!([{"text": "a"}]), None)]);
    body.extend_from_slice(format!("data: {}", chunk(json!([{"text": "b"}]), Some("STOP"))).as_bytes());
    let run = run_all(Provider::Gemini, &body);
    assert_eq!(warnings(&run), ["unterminated_final_event"]);
    assert_eq!(run.error, None);
    assert_eq!(parts(&run), &json!([{"text": "ab"}]));
}

#[test]
fn bad_shapes_warn_and_fold_on() {
    let run = fold(&[
        json!({"candidates": 5}),
        json!([1]),
        json!({"candidates": [{"content": {"parts": ["x", {"text": "kept"}]}, "finishReason": "STOP"}]}),
    ]);
    assert_eq!(warnings(&run), ["invalid_event", "invalid_event", "invalid_event"]);
    assert_eq!(run.error, None);
    assert_eq!(parts(&run), &json!([{"text": "kept"}]));
}

#[test]
fn not_json_is_a_typed_error() {
    let run = run_all(Provider::Gemini, b"data: {nope\r\n\r\n");
    assert!(run.error.clone().unwrap().starts_with("InvalidJson"));
}

#[test]
fn message_is_readable_mid_stream() {
    let mut s = Stream::new(Provider::Auto);
    s.feed(&sse(&[chunk(json!([{"text": "part"}]), None)]), |_| {}).unwrap();
    assert_eq!(s.provider(), Provider::Gemini);
    assert_eq!(s.message()["candidates"][0]["content"]["parts"][0]["text"], "part");
}
