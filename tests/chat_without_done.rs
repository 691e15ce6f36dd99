//! OpenAI Chat bodies that end without `data: [DONE]` (vLLM, Hugging Face
//! TGI, proxies: Azure/azure-sdk-for-net#44135): complete, with one
//! `terminal_missing` warning, once every choice that started has its
//! `finish_reason` and the usage announced by `"usage": null` came;
//! `Incomplete` otherwise. And `Stream::is_complete_at_end`, asked before
//! `finish`, agrees with what `finish` does, for every golden fixture of
//! every dialect at every event boundary.

use crate::prov_common;

use std::path::{Path, PathBuf};

use prov_common::{named, run_all, run_with, warnings, Run};
use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream, StreamError};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openai_chat").join(name)).unwrap()
}

/// `chunks` as a Chat body (`data:` events), without `[DONE]`.
fn body(chunks: &[Value]) -> Vec<u8> {
    chunks.iter().flat_map(|c| format!("data: {c}\n\n").into_bytes()).collect()
}

fn with_done(body: &[u8]) -> Vec<u8> {
    [body, b"data: [DONE]\n\n"].concat()
}

/// The run's events without its `terminal_missing` warnings.
fn without_terminal_missing(run: &Run) -> Vec<Value> {
    run.events.iter().filter(|e| e["code"] != "terminal_missing").cloned().collect()
}

fn text(choice: u32, content: &str, finish: Option<&str>) -> Value {
    json!({"index": choice, "delta": {"content": content}, "logprobs": null, "finish_reason": finish})
}

fn chunk(choices: &[Value]) -> Value {
    json!({"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": choices})
}

#[test]
fn a_vllm_body_without_done_is_complete_with_one_warning() {
    let bytes = fixture("no_done_vllm.sse");
    assert!(!bytes.windows(6).any(|w| w == b"[DONE]"));
    let run = run_all(Provider::OpenAIChat, &bytes);
    assert_eq!(run.error, None);
    assert_eq!(warnings(&run), ["terminal_missing"]);
    let last = run.events.last().unwrap();
    assert_eq!((&last["event"], &last["stop_reason"]), (&json!("turn_end"), &json!("stop")));
    let warning = named(&run, "warning")[0]["message"].as_str().unwrap().to_owned();
    assert!(warning.contains("without data: [DONE]") && warning.contains("complete"), "{warning}");
    // The same fold as with [DONE]: the events but the warning, the message.
    let done = run_all(Provider::OpenAIChat, &with_done(&bytes));
    assert_eq!(done.error, None);
    assert_eq!(without_terminal_missing(&run), done.events);
    assert_eq!(run.message, done.message);
    assert_eq!(run.message["choices"][0]["message"]["content"], "Hello there!");
    assert_eq!(run.message["choices"][0]["finish_reason"], "stop");
    // Detected the same way.
    assert_eq!(run_all(Provider::Auto, &bytes), run);
}

#[test]
fn every_two_piece_chunking_gives_the_same_events() {
    for name in ["no_done_vllm.sse", "no_done_usage_came.sse", "no_done_usage_missing.sse"] {
        let bytes = fixture(name);
        let whole = run_with(Provider::OpenAIChat, &bytes, &mut || usize::MAX);
        for cut in 1..bytes.len() {
            let mut sizes = [cut, usize::MAX].into_iter();
            let run = run_with(Provider::OpenAIChat, &bytes, &mut || sizes.next().unwrap_or(usize::MAX));
            assert!(run == whole, "{name}: cut at {cut} differs");
        }
    }
}

#[test]
fn announced_usage_that_never_came_is_incomplete() {
    let bytes = fixture("no_done_usage_missing.sse");
    let run = run_all(Provider::OpenAIChat, &bytes);
    assert_eq!(run.error.as_deref(), Some(r#"Incomplete { expected: "[DONE]" }"#));
    assert!(warnings(&run).is_empty(), "{:?}", warnings(&run));
    assert!(named(&run, "turn_end").is_empty());
    // The answer itself is whole: only the usage is missing.
    assert_eq!(run.message["choices"][0]["message"]["content"], "Hi");
}

#[test]
fn announced_usage_that_came_is_complete() {
    let bytes = fixture("no_done_usage_came.sse");
    let run = run_all(Provider::OpenAIChat, &bytes);
    assert_eq!(run.error, None);
    assert_eq!(warnings(&run), ["terminal_missing"]);
    assert_eq!(run.message["usage"]["total_tokens"], 70);
    let done = run_all(Provider::OpenAIChat, &with_done(&bytes));
    assert_eq!((without_terminal_missing(&run), &run.message), (done.events, &done.message));
}

#[test]
fn a_choice_without_finish_reason_is_incomplete() {
    let bytes = body(&[chunk(&[text(0, "Hel", None)]), chunk(&[text(0, "lo", None)])]);
    let run = run_all(Provider::OpenAIChat, &bytes);
    assert_eq!(run.error.as_deref(), Some(r#"Incomplete { expected: "[DONE]" }"#));
    assert!(warnings(&run).is_empty());
    assert_eq!(named(&run, "part_end")[0]["outcome"], "incomplete");
}

#[test]
fn two_choices_one_unfinished_is_incomplete() {
    let run = run_all(Provider::OpenAIChat, &fixture("no_done_unfinished_choice.sse"));
    assert_eq!(run.error.as_deref(), Some(r#"Incomplete { expected: "[DONE]" }"#));
    assert!(warnings(&run).is_empty());
    let outcomes: Vec<&Value> = named(&run, "part_end").iter().map(|e| &e["outcome"]).collect();
    assert_eq!(outcomes, [&json!("complete"), &json!("incomplete")]);
    // Both finished: complete.
    let both = body(&[
        chunk(&[text(0, "A", None), text(1, "B", None)]),
        chunk(&[text(0, "", Some("stop"))]),
        chunk(&[text(1, "b", Some("length"))]),
    ]);
    let run = run_all(Provider::OpenAIChat, &both);
    assert_eq!((run.error.as_deref(), warnings(&run)), (None, vec!["terminal_missing".to_owned()]));
    assert_eq!(run.message["choices"][1]["message"]["content"], "Bb");
}

#[test]
fn no_choice_at_all_is_incomplete() {
    // Azure's first chunk (no choices), then the body ends.
    let bytes = body(&[json!({"choices": [], "created": 0, "id": "", "model": "", "object": ""})]);
    let run = run_all(Provider::OpenAIChat, &bytes);
    assert_eq!(run.error.as_deref(), Some(r#"Incomplete { expected: "[DONE]" }"#));
}

/// `is_complete_at_end` before `finish`: false until the answer is whole,
/// never changes the fold, and `finish` then succeeds.
#[test]
fn is_complete_at_end_follows_the_answer() {
    let chunks = [
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [text(0, "Hi", None)], "usage": null}),
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [text(0, "", Some("stop"))], "usage": null}),
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
    ];
    let mut stream = Stream::new(Provider::OpenAIChat);
    assert!(!stream.is_complete_at_end());
    let mut seen = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        stream.feed(&body(std::slice::from_ref(c)), |e| seen.push(e.to_json())).unwrap();
        assert_eq!(stream.is_complete_at_end(), i == 2, "after chunk {i}");
        assert!(!stream.is_terminated());
    }
    let before = stream.message();
    assert!(stream.is_complete_at_end(), "asking twice changes nothing");
    assert_eq!(stream.message(), before);
    let mut end = Vec::new();
    stream.finish(|e| end.push(e.to_json())).unwrap();
    assert_eq!(end.iter().map(|e| e["event"].as_str().unwrap()).collect::<Vec<_>>(), ["warning", "turn_end"]);
    assert_eq!(end[0]["code"], "terminal_missing");
    assert!(stream.is_complete_at_end(), "true after a normal finish");
    assert!(stream.is_terminated());

    // With [DONE] it is true at once; after an error or abort it is false.
    let mut done = Stream::new(Provider::OpenAIChat);
    done.feed(&with_done(&body(&chunks[..1])), |_| {}).unwrap();
    assert!(done.is_complete_at_end());
    let mut aborted = Stream::new(Provider::OpenAIChat);
    aborted.feed(&body(&chunks), |_| {}).unwrap();
    aborted.abort(|_| {});
    assert!(!aborted.is_complete_at_end());
    let mut failed = Stream::new(Provider::OpenAIChat);
    let error = json!({"error": {"message": "m", "type": "server_error"}});
    assert!(failed.feed(&body(&[chunks[0].clone(), chunks[1].clone(), error]), |_| {}).is_err());
    assert!(!failed.is_complete_at_end());
    let mut incomplete = Stream::new(Provider::OpenAIChat);
    incomplete.feed(&body(&chunks[..2]), |_| {}).unwrap();
    assert!(!incomplete.is_complete_at_end());
    assert_eq!(incomplete.finish(|_| {}), Err(StreamError::Incomplete { expected: "[DONE]" }));
    assert!(!incomplete.is_complete_at_end());
}

/// The ends of the events of a golden body: after each SSE blank line, each
/// NDJSON line, each AWS event-stream message.
fn event_ends(path: &Path, bytes: &[u8]) -> Vec<usize> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("bin") => {
            let mut ends = Vec::new();
            let mut at = 0;
            while at + 4 <= bytes.len() {
                at += u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
                ends.push(at.min(bytes.len()));
            }
            ends
        }
        Some("ndjson") => (1..=bytes.len()).filter(|&n| bytes[n - 1] == b'\n').collect(),
        _ => {
            (2..=bytes.len()).filter(|&n| bytes[..n].ends_with(b"\n\n") || bytes[..n].ends_with(b"\r\n\r\n")).collect()
        }
    }
}

/// For every golden fixture of every dialect, cut at every event boundary:
/// `is_complete_at_end` is true exactly when `finish` then ends the turn
/// normally.
#[test]
fn is_complete_at_end_agrees_with_finish_on_every_fixture_at_every_event_end() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dialects = [
        ("anthropic", Provider::Anthropic),
        ("openai_chat", Provider::OpenAIChat),
        ("openai_responses", Provider::OpenAIResponses),
        ("gemini", Provider::Gemini),
        ("ollama", Provider::Ollama),
        ("bedrock", Provider::Bedrock),
        ("bedrock_converse", Provider::BedrockConverse),
    ];
    let (mut checked, mut complete_without_terminal) = (0, 0);
    for (dir, provider) in dialects {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sse" || e == "ndjson" || e == "bin"))
            .collect();
        files.sort();
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            for n in event_ends(&path, &bytes) {
                let mut stream = Stream::new(provider);
                if stream.feed(&bytes[..n], |_| {}).is_err() {
                    assert!(!stream.is_complete_at_end(), "{}: cut at {n}", path.display());
                    continue;
                }
                let asked = stream.is_complete_at_end();
                let terminated = stream.is_terminated();
                let finished = stream.finish(|_| {});
                assert_eq!(asked, finished.is_ok(), "{}: cut at {n}: {finished:?}", path.display());
                complete_without_terminal += usize::from(asked && !terminated);
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked}");
    assert!(complete_without_terminal > 10, "{complete_without_terminal}");
}
