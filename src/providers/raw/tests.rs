use super::*;
use crate::providers::{Provider, Stream};

#[test]
fn set_raw_is_insert_of_the_value() {
    let cases = [
        (r#""x""#, r#""y""#),
        (r#""x""#, r#""x""#),
        (r#""x""#, r#""a\nb""#),
        ("true", "false"),
        ("true", r#""s""#),
        ("1", "2.5"),
        (r#"{"a":1}"#, r#"{"a":2,"b":[1]}"#),
        (r#""x""#, "7"),
    ];
    for (old, new) in cases {
        let mut want = Map::new();
        want.insert("k".into(), value_of(old));
        want.insert("z".into(), Value::Bool(true));
        let mut got = want.clone();
        want.insert("k".into(), value_of(new));
        set_raw(&mut got, "k", new);
        assert_eq!(got, want, "{old} -> {new}");
        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    }
    let mut m = Map::new();
    set_raw(&mut m, "n", r#""v""#);
    assert_eq!(Value::Object(m), serde_json::json!({"n": "v"}));
}

/// Writing raw text over a value gives the value of the text (member order
/// included), and says whether it changed, whatever the shapes.
#[test]
fn assign_raw_is_the_value_and_says_whether_it_changed() {
    let values = [
        r#"{"promptTokenCount": 46,"candidatesTokenCount": 22,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 46}]}"#,
        r#"{"promptTokenCount": 46,"candidatesTokenCount": 57,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 46}]}"#,
        r#"{"promptTokenCount":46,"candidatesTokenCount":57,"promptTokensDetails":[{"modality":"TEXT","tokenCount":46}]}"#,
        r#"{"promptTokenCount": 46,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 46}]}"#,
        r#"{"candidatesTokenCount": 57,"promptTokenCount": 46,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 46}]}"#,
        r#"{"promptTokenCount": 46,"candidatesTokenCount": 57,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 46},{"modality": "IMAGE","tokenCount": 1}]}"#,
        r#"{"promptTokenCount": 46,"candidatesTokenCount": 57,"promptTokensDetails": [{"modality": "T\u0045XT","tokenCount": 46.0}]}"#,
        r#"{"promptTokenCount": 46,"candidatesTokenCount": 22,"promptTokenCount": 46}"#,
        r#"{"promptTokenCount": 46,"candidatesTokenCount": 22,"promptTokenCount": 47}"#,
        r#"{"promptTokenCount": 46,"candidatesTokenCount": 22}"#,
        r#"{"promptTokenCount": 46,"candidatesTokenCount": 23}"#,
        r#"{"promptTokenCount": -46,"candidatesTokenCount": 1e2}"#,
        r#"{"promptTokenCount": 12345678901234567890,"candidatesTokenCount": 100.0}"#,
        r#"{"promptTok\u0065nCount": 46,"candidatesTokenCount": 22}"#,
        r#"{"promptTokenCount": "46","candidatesTokenCount": null}"#,
        r#"{"promptTokenCount": [46],"candidatesTokenCount": {"a": true}}"#,
        r#"{"promptTokenCount": [47],"candidatesTokenCount": {"a": false}}"#,
        r#"{"a": {"x": 1},"b": 2}"#,
        r#"{"a": {"x": 2},"c": 3}"#,
        r#"{"c": 3,"a": {"x": 2}}"#,
        r#"{"c": 3,"a": {"x": 2,"y": [1]},"b": 2}"#,
        r#"{}"#,
        r#"[]"#,
        r#"[1, "a", {"b": [true, null]}]"#,
        r#"[1, "a\n", {"b": [true, null]}]"#,
        r#"[1, "b", {"b": [false, null]}]"#,
        r#""s""#,
        r#""s\"q""#,
        r#"7"#,
        r#"-0"#,
        r#"true"#,
        r#"null"#,
    ];
    for v in values.iter().chain(&[r#""""#, "0", "18446744073709551615", "123456789012345678", "1.5", "-3"]) {
        let serde: Value = serde_json::from_str(v).unwrap();
        assert_eq!(value_of(v), serde, "{v}");
        assert_eq!(value_of(v).to_string(), serde.to_string(), "{v}");
    }
    for old in values {
        for new in values {
            let mut got = value_of(old);
            let want = value_of(new);
            let changed = assign_raw(&mut got, new);
            assert_eq!(got, want, "{old} -> {new}");
            assert_eq!(got.to_string(), want.to_string(), "{old} -> {new}: order");
            assert_eq!(changed, value_of(old) != want, "{old} -> {new}: changed");
        }
    }
}

/// Events (as JSON), folded message and ending of a body fed whole.
pub(crate) fn fold(provider: Provider, body: &[u8]) -> (Vec<Value>, Value, Option<String>) {
    let mut stream = Stream::new(provider);
    let mut events = Vec::new();
    let error = stream.feed(body, |e| events.push(e.to_json())).err().map(|e| format!("{e:?}"));
    let end = stream.finish(|e| events.push(e.to_json())).err().map(|e| format!("{e:?}"));
    (events, stream.message(), error.or(end))
}

/// Folds every case with the fast paths and with the `Value` path only
/// ([`SLOW_ONLY`]) and asserts the same events, message and ending; returns
/// how many payloads the fast paths took.
pub(crate) fn assert_fast_folds_as_slow(cases: &[(Provider, String, Vec<u8>)]) -> usize {
    QUICK_TAKEN.set(0);
    for (provider, name, body) in cases {
        let fast = fold(*provider, body);
        SLOW_ONLY.set(true);
        let slow = fold(*provider, body);
        SLOW_ONLY.set(false);
        assert_eq!(fast.2, slow.2, "{name}: ending");
        assert_eq!(fast.1, slow.1, "{name}: message");
        assert_eq!(fast.0, slow.0, "{name}: events");
    }
    QUICK_TAKEN.get()
}

/// Every body under the crate's `dirs` whose file name ends in one of
/// `exts` (`sse`, `ndjson`, `bin`).
pub(crate) fn bodies_with(dirs: &[&str], exts: &[&str]) -> Vec<(String, Vec<u8>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack: Vec<_> = dirs.iter().map(|d| root.join(d)).collect();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

/// Every `.sse` / `.ndjson` body under the crate's `dirs`.
pub(crate) fn bodies(dirs: &[&str]) -> Vec<(String, Vec<u8>)> {
    bodies_with(dirs, &["sse", "ndjson"])
}

/// Lines on the edges of what the Gemini fast path takes (each body is a
/// prefix of this list, so that every line meets the state the ones before
/// it left).
const GEMINI_EDGES: [&str; 44] = [
    r#"{"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"},"index":0}],"modelVersion":"m"}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"b\n\"c\"","thought":true}],"role":"model"}}],"modelVersion":"m"}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"é \u00e9"},{"text":"x","thought":false}]},"index":0,"safetyRatings":[{"a":1}]}],"usageMetadata":{"promptTokenCount":1}}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"s","thoughtSignature":"c2ln"}]},"index":0}],"usageMetadata":{"promptTokenCount":1}}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"lone \ud800"}]},"index":0}]}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"n"}],"role":null},"index":0,"citationMetadata":{"citations":[{"u":1}]}}],"modelVersion":null}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"c"}]},"index":0,"citationMetadata":{"citations":[{"u":1},{"u":2}]}}],"modelVersion":"m2"}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"i"}]},"index":1.0}],"modelVersion":"m2"}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"t","thought":"yes"}]},"index":0}]}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"z"}],"role":"model"},"index":0,"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":5},"modelVersion":"m2","responseId":"r"}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "sp \"q\""}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 3,"totalTokenCount": 3},"modelVersion": "m2"}"#,
    "{ \"candidates\" :\t[ {\t \"content\" : { \"parts\" : [ { \"text\" : \"w\" } ] , \"role\" : \"model\" } , \"index\" : 0 } ] , \"modelVersion\" : \"m2\" } ",
    r#"{"candidates": [{"content": {"parts": [{"text": "pair \ud83d\ude00"}]},"index": 0,"groundingMetadata": {"q": ["\ud83d\ude00", 1.5e3, -0, 12345678901234567890123, true, false, {}, []]}}],"modelVersion": "m2"}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "lone"}]},"index": 0,"groundingMetadata": {"q": "\udc00"}}],"modelVersion": "m2"}"#,
    r#"{"candidates": [{"content": {"parts": [{"te\u0078t": "escaped key"}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "t"}],"extra": 1},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "t","thought": null}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": null,"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 4}}"#,
    r#"{"candidates": [{"content": {"parts": ["x"]},"index": 0}]}"#,
    r#"{"candidates": [{"content": "x","index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "r"}],"role": 5},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "d"}]},"index": 0,"x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "i"}]},"index": -0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f","args": {"a": [1, 2.50, "\u00e9"]}},"thoughtSignature": "c2ln"}]},"index": 0}],"usageMetadata": {"promptTokenCount": 4,"candidatesTokenCount": 1}}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "u"}]},"index": 0,"safetyRatings": [{"a": 2}]}],"usageMetadata": {"promptTokenCount": 4,"candidatesTokenCount": 2}}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "v"}]},"index": 0,"safetyRatings": [{"a": 2},{"a": 3}]}],"usageMetadata": {"promptTokenCount": 4,"candidatesTokenCount": 3,"candidatesTokenCount": 2}}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "w"}]},"index": 0,"safetyRatings": [{"a": "\u0041"}]}],"usageMetadata": {"promptTokenCount": 4.0,"candidatesTokenCount": 2}}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "g","willContinue": true}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.city","stringValue": "Par","willContinue": true}],"willContinue": true}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.city","stringValue": "is \u00e9"},{"jsonPath": "$.days[0]","numberValue": 1.50}],"willContinue": 1}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "h","willContinue": true}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": "x","willContinue": true}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.a","boolValue": true}],"partialArgs": [],"willContinue": true}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "bad","nullValue": null}],"id": "i","willContinue": true},"thoughtSignature": "c2ln"}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"n\u0061me": "k","willContinue": true}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.b","stringValue": "z"}]}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "m","willContinue": true}}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"functionCall": {}}]},"index": 0}]}"#,
    r#"{"candidates": [],"modelVersion": "m2"}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "a"}]},"index": 0}],"candidates": [{"content": {"parts": [{"text": "b"}]},"index": 0}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "c0"}]},"index": 0},{"content": {"parts": [{"text": "c1"}]},"index": 1}]}"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "x"}]},"index": 0}],"modelVersion": "m2"} x"#,
    r#"{"candidates": [{"content": {"parts": [{"text": "x"}]},"index": 0}],"usageMetadata": {"n": 1e400}}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"after"}]},"finishReason":"STOP","index":0}],"modelVersion":"m2","modelVersion":"m3"}"#,
];

/// The same for Ollama: lines the Cursor reader takes (compact, members in
/// any order, escapes, unknown members) and lines it must decline
/// (whitespace, escaped keys, `null`s, repeated known keys, wrong types,
/// surrogate escapes), none of them ending the turn.
const OLLAMA_EDGES: [&str; 40] = [
    r#"{"model":"q","created_at":"t1","message":{"role":"assistant","content":"","thinking":"th"},"done":false}"#,
    r#"{"model":"q","created_at":"t2","message":{"role":"assistant","content":"a\n\"b\""},"done":false}"#,
    r#"{"model":"q","created_at":"t\u00e93","message":{"role":"assistant","content":"c","images":["x"]},"done":false}"#,
    r#"{"model":"q","created_at":"t4","message":{"role":"assistant","content":"lone \udc00"},"done":false}"#,
    r#"{"model":"q","created_at":null,"message":{"role":"assistant","content":"n"},"done":false}"#,
    r#"{"model":"q","created_at":"t5","message":{"role":"assistant","content":5},"done":false}"#,
    r#"{"model":"q","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},"done":false}"#,
    r#"{"model":"q","created_at":"t6","message":{"content":"x","role":"assistant"},"extra":{"k":[1]},"done":false}"#,
    r#"{"model":"q","created_at":"t7","message":{"role":"assistant","content":"\u00e9\t\/\\ \ud83d\ude00"},"done":false}"#,
    r#"{"model": "q","created_at":"t8","message":{"role":"assistant","content":"ws"},"done":false}"#,
    r#"{"model":"q","created_at":"t9","message":{"role":"assistant","content":"trail"},"done":false} "#,
    r#"{"model":"q","model":"r","created_at":"t10","message":{"role":"assistant","content":"rep"},"done":false}"#,
    r#"{"model":"q","created_at":"t11","message":{"role":"assistant","content":"a","content":"b"},"done":false}"#,
    r#"{"model":"q","created_at":"t12","x":1,"message":{"role":"assistant","content":"x"},"x":2,"done":false}"#,
    r#"{"model":"q","created_at":"t13","message":{"images":["a"],"role":"assistant","images":["b"],"content":"i"},"done":false}"#,
    r#"{"model":"q","created_at":"t14","message":{"role":"assistant","content":"d"},"done":null}"#,
    r#"{"model":"q","created_at":"t15","message":null,"done":false}"#,
    r#"{"model":"q","created_at":"t16","message":{"role":null,"content":"r","thinking":null},"done":false}"#,
    r#"{"model":"q","created_at":"t17","message":{"role":"assistant","content":"n"},"n":-0.0,"big":12345678901234567890123,"e":1.5e3,"done":false}"#,
    r#"{"model":"q","created_at":"t18","message":{"role":"assistant","content":"z"},"deep":{"a":[1,{"z":null}],"b":"\u00e9"},"done":false}"#,
    r#"{"model":5,"created_at":"t19","message":{"role":"assistant","content":"m"},"done":false}"#,
    r#"{"model":"q","created_at":["t20"],"message":{"role":"assistant","content":"c"},"done":false}"#,
    r#"{"model":"q","created_at":"t21","message":{"role":"assistant","content":"f"},"done":"false"}"#,
    r#"{"model":"q","created_at":"t22","message":"hi","done":false}"#,
    r#"{"model":"q","created_at":"t23","message":{"role":1,"content":"r"},"done":false}"#,
    r#"{"model":"q","created_at":"t24","message":{"role":"assistant","content":"","thinking":true},"done":false}"#,
    r#"{"model":"q","created_at":"t25","message":{"role":"assistant","content":{"a":1}},"done":false}"#,
    r#"{"mod\u0065l":"q2","created_at":"t26","message":{"role":"assistant","content":"k"},"done":false}"#,
    r#"{"message":{"role":"user","content":"o"},"done":false,"created_at":"t27","model":"q3"}"#,
    r#"{"model":"q3","created_at":"t28","message":{"role":"assistant","content":"c","thinking":"t"},"done":false}"#,
    r#"{"model":"q3","created_at":"t29","done":false}"#,
    r#"{}"#,
    r#"{"model":"q3","created_at":"t30","message":{"role":"assistant","content":"pair"},"other":"\ud83d\ude00","done":false}"#,
    r#"{"model":"q3","created_at":"t31","message":{"role":"assistant","content":"e"},"error":null,"done":false}"#,
    r#"{"model":"q3","created_at":"t32","message":{},"done":false}"#,
    r#"{"model":"q3","created_at":"t33","message":{"role":"assistant","content":"","thinking":""},"done":false}"#,
    r#"{"model":"q3","created_at":"t34","message":{"role":"assistant","content":"x","tool_name":"t","images":null},"done":false}"#,
    r#"{"model":"","created_at":"t35","message":{"role":"","content":"em"},"done":false,"extra":{"k":[2]}}"#,
    r#"[1,2]"#,
    r#"{"model":"q3","created_at":"t36","message":{"role":"assistant","content":"\u0000\u001f"},"done":false}"#,
];

/// Lines that end an Ollama turn (or the stream), each folded after every
/// edge line and alone.
const OLLAMA_ENDS: [&str; 10] = [
    r#"{"model":"q","created_at":"t7","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":5,"eval_count":3}"#,
    r#"{"model":"q","created_at":"t8","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":3722518334,"load_duration":1534053125,"prompt_eval_count":17,"prompt_eval_duration":179676000,"eval_count":63,"eval_duration":2006086000}"#,
    r#"{"model":"q","created_at":"t9","message":{"role":"assistant","content":"bye","thinking":"hm"},"done":true,"done_reason":"length","eval_count":18446744073709551616}"#,
    r#"{"model":"q","created_at":"t10","message":{"role":"assistant","content":""},"done":true,"done_reason":null}"#,
    r#"{"model":"q","created_at":"t11","message":{"role":"assistant","content":""},"done":true,"eval_count":1e400}"#,
    r#"{"model":"q","created_at":"t12","message":{"role":"assistant","content":"a	tab"},"done":false}"#,
    r#"{"error":"boom"}"#,
    r#"{"error":{"message":"m"}}"#,
    r#"{"model":"q","created_at":"t13","message":{"role":"assistant","content":""},"done":true,"done":false}"#,
    r#"{"model":"q","created_at":"t14","message":{"role":"assistant","content":""},"done":false,"done":true,"done_reason":"stop"}"#,
];

/// The fast paths fold exactly as the `Value` path: every recorded and
/// fixture body of both dialects, and bodies of edge lines, give the same
/// events, message and ending with and without them; and they are taken.
#[test]
fn fast_paths_fold_as_the_value_path() {
    let mut cases: Vec<(Provider, String, Vec<u8>)> = Vec::new();
    for (n, b) in bodies(&["tests/recordings/gemini", "tests/fixtures/gemini"]) {
        cases.push((Provider::Gemini, n, b));
    }
    for (n, b) in bodies(&["tests/recordings/ollama", "tests/fixtures/ollama"]) {
        cases.push((Provider::Ollama, n, b));
    }
    for n in 1..=GEMINI_EDGES.len() {
        let body: String = GEMINI_EDGES[..n].iter().map(|l| format!("data: {l}\n\n")).collect();
        cases.push((Provider::Gemini, format!("gemini edges [..{n}]"), body.into_bytes()));
    }
    for n in 1..=OLLAMA_EDGES.len() {
        let body: String = OLLAMA_EDGES[..n].iter().map(|l| format!("{l}\n")).collect();
        cases.push((Provider::Ollama, format!("ollama edges [..{n}]"), body.into_bytes()));
    }
    for (i, end) in OLLAMA_ENDS.iter().enumerate() {
        let body: String = OLLAMA_EDGES.iter().chain([end]).map(|l| format!("{l}\n")).collect();
        cases.push((Provider::Ollama, format!("ollama edges + end {i}"), body.into_bytes()));
        cases.push((Provider::Ollama, format!("ollama end {i} alone"), format!("{end}\n").into_bytes()));
        // After a first fast line (its slots set).
        let body = format!("{}\n{end}\n", OLLAMA_EDGES[0]);
        cases.push((Provider::Ollama, format!("ollama first + end {i}"), body.into_bytes()));
    }
    assert!(cases.len() > 150, "{}", cases.len());
    let taken = assert_fast_folds_as_slow(&cases);
    assert!(taken > 1000, "fast paths taken {taken} times");
}

/// A Responses turn for [`responses_fast_paths_fold_as_the_value_path`]:
/// `response.created` with `created`, a function call and a message item
/// streamed and done (`call` / `message` their done items), then the
/// terminal event's data `terminal`.
fn responses_turn(created: &str, call: &str, message: &str, terminal: &str) -> String {
    let lines = [
        format!(r#"{{"type":"response.created","sequence_number":0,"response":{created}}}"#),
        format!(r#"{{"type":"response.in_progress","sequence_number":1,"response":{created}}}"#),
        r#"{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"f"}}"#.to_owned(),
        r#"{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":0,"delta":"{\"a\":"}"#.to_owned(),
        r#"{"type":"response.function_call_arguments.delta","sequence_number":4,"item_id":"fc_1","output_index":0,"delta":"1}"}"#.to_owned(),
        format!(r#"{{"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{call}}}"#),
        r#"{"type":"response.output_item.added","sequence_number":6,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}"#.to_owned(),
        r#"{"type":"response.content_part.added","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}"#.to_owned(),
        r#"{"type":"response.output_text.delta","sequence_number":8,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"x"}"#.to_owned(),
        format!(r#"{{"type":"response.output_item.done","sequence_number":9,"output_index":1,"item":{message}}}"#),
        terminal.to_owned(),
    ];
    lines.iter().map(|l| format!("data: {l}\n\n")).collect()
}

/// The Responses fast paths (the whole-event read, what repeats the
/// lifecycle response or the done items left unparsed) fold every recording,
/// fixture and edge turn exactly as the `Value` path.
#[test]
fn responses_fast_paths_fold_as_the_value_path() {
    let mut cases: Vec<(Provider, String, Vec<u8>)> = Vec::new();
    for (n, b) in bodies(&["tests/recordings/openai_responses", "tests/fixtures/openai_responses"]) {
        cases.push((Provider::OpenAIResponses, n, b));
    }
    let created = r#"{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"m","output":[],"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"usage":null,"metadata":{}}"#;
    let call = r#"{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"a\":1}","call_id":"call_1","name":"f"}"#;
    let message = r#"{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"Hi"}],"role":"assistant"}"#;
    let usage = r#"{"input_tokens":3,"output_tokens":2,"total_tokens":5}"#;
    let output = format!("[{call},{message}]");
    let done =
        |response: &str| format!(r#"{{"type":"response.completed","sequence_number":10,"response":{response}}}"#);
    let with = |status: &str, output: &str, usage: &str| {
        created
            .replace(r#""status":"in_progress""#, status)
            .replace(r#""output":[]"#, output)
            .replace(r#""usage":null"#, usage)
    };
    let terminals = [
        // As sent: status, output and usage changed, the rest repeated.
        with(r#""status":"completed""#, &format!(r#""output":{output}"#), &format!(r#""usage":{usage}"#)),
        // The lifecycle response repeated whole but for its output.
        with(r#""status":"in_progress""#, &format!(r#""output":{output}"#), r#""usage":null"#),
        // Members changed, added, missing, reordered, repeated.
        created
            .replace(r#""model":"m""#, r#""model":"m2""#)
            .replace(r#""output":[]"#, &format!(r#""output":{output}"#)),
        created.replace(r#""metadata":{}"#, r#""metadata":{},"extra":[1,{"b":null}]"#),
        r#"{"status":"completed","id":"resp_1","object":"response","model":"m"}"#.to_owned(),
        r#"{"id":"resp_1","status":"completed","id":"resp_2"}"#.to_owned(),
        r#"{"id":"resp_2","status":"completed","id":"resp_1"}"#.to_owned(),
        r#"{"model":"m","model":"x","output":[]}"#.to_owned(),
        r#"{"model":"x","model":"m"}"#.to_owned(),
        created.replace(r#""created_at":1"#, r#""created_at":10"#),
        created.replace(r#""created_at":1"#, r#""created_at":1.0"#),
        created.replace(r#""model":"m""#, r#""model": "m""#),
        created.replace(r#""model":"m""#, r#""model":"\u006d""#),
        created.replace(r#""model":"m""#, r#""model":"\ud800""#),
        // The output: the done items, some of them, others, in another
        // order, spaced, with elements after them, not a list.
        with(r#""status":"completed""#, &format!(r#""output":[{call}]"#), r#""usage":null"#),
        with(r#""status":"completed""#, &format!(r#""output":[{message},{call}]"#), r#""usage":null"#),
        with(r#""status":"completed""#, &format!(r#""output":[{call},{message},{{"type":"x"}}]"#), r#""usage":null"#),
        with(r#""status":"completed""#, &format!(r#""output":[{call}, {message}]"#), r#""usage":null"#),
        with(
            r#""status":"completed""#,
            &format!(r#""output":[{call},{}]"#, message.replace("Hi", "Hi!")),
            r#""usage":null"#,
        ),
        with(
            r#""status":"completed""#,
            &format!(r#""output":[{}]"#, call.replace(r#""name":"f""#, r#""name":"f","name":"g""#)),
            r#""usage":null"#,
        ),
        with(r#""status":"completed""#, r#""output":[]"#, r#""usage":null"#),
        with(r#""status":"completed""#, r#""output":null"#, r#""usage":null"#),
        with(r#""status":"completed""#, r#""output":{}"#, r#""usage":null"#),
        with(r#""status":"completed""#, &format!(r#""output":{output},"output":[]"#), r#""usage":null"#),
        "null".to_owned(),
        "[]".to_owned(),
    ];
    let mut n = 0;
    let mut push = |name: String, body: String| {
        cases.push((Provider::OpenAIResponses, name, body.into_bytes()));
    };
    for terminal in &terminals {
        n += 1;
        push(format!("responses edge {n}"), responses_turn(created, call, message, &done(terminal)));
        // Not a completed turn's terminal: read the general way.
        let incomplete = done(terminal).replace("response.completed", "response.incomplete");
        push(format!("responses edge {n} incomplete"), responses_turn(created, call, message, &incomplete));
        // A lifecycle response changed in between (its members known anew).
        let changed = created.replace(r#""created_at":1"#, r#""created_at":2"#);
        let body = responses_turn(created, call, message, &done(terminal)).replacen(
            &format!(r#""sequence_number":1,"response":{created}"#),
            &format!(r#""sequence_number":1,"response":{changed}"#),
            1,
        );
        push(format!("responses edge {n} after a change"), body);
        // A lifecycle response with a member twice (no members known).
        let twice = created.replace(r#""model":"m""#, r#""model":"m","model":"n""#);
        push(format!("responses edge {n} twice"), responses_turn(&twice, call, message, &done(terminal)));
        // An item done twice, the second time another text.
        let body = responses_turn(created, call, message, &done(terminal)).replacen(
            r#"data: {"type":"response.output_item.added","sequence_number":6"#,
            &format!(
                "data: {{\"type\":\"response.output_item.done\",\"sequence_number\":5,\"output_index\":0,\"item\":{}}}\n\ndata: {{\"type\":\"response.output_item.added\",\"sequence_number\":6",
                call.replace("call_1", "call_2")
            ),
            1,
        );
        push(format!("responses edge {n} done twice"), body);
        // Two turns: the second's terminal against the second's lifecycle.
        let twice = responses_turn(created, call, message, &done(terminal));
        push(format!("responses edge {n} two turns"), format!("{twice}{twice}"));
    }
    // A lifecycle response of more members than are kept by place.
    let many: String = (0..70).map(|i| format!(r#","m{i}":{i}"#)).collect();
    let big = created.replace(r#""metadata":{}"#, &format!(r#""metadata":{{}}{many}"#));
    let big_done =
        big.replace(r#""status":"in_progress""#, r#""status":"completed""#).replace(r#""m69":69"#, r#""m69":0"#);
    push("responses many members".to_owned(), responses_turn(&big, call, message, &done(&big_done)));
    assert!(cases.len() > 400, "{}", cases.len());
    let taken = assert_fast_folds_as_slow(&cases);
    assert!(taken > 10_000, "fast paths taken {taken} times");
}
