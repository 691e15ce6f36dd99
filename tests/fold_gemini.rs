//! The Gemini / Vertex AI fold, behaviour by behaviour: every stream is fed
//! whole, in 1-byte chunks and in random chunkings (`run_all`), with the
//! dialect given; auto-detection is checked on the first chunk's shapes.

mod prov_common;

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
fn vertex_partial_args_are_never_a_ready_call() {
    let run = fold(&[chunk(
        json!([{"functionCall": {"name": "f", "partialArgs": [{"jsonPath": "$.a", "numberValue": 1}], "willContinue": true}}]),
        Some("STOP"),
    )]);
    assert_eq!(named(&run, "part_end")[0]["kind"], "other");
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
