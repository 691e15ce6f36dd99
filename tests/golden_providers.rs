//! Golden fixtures: `tests/fixtures/<dialect>/*.sse` (Ollama `*.ndjson`,
//! Bedrock's AWS event-stream bodies `*.bin`) with the expected folded
//! message (`.json`) and normalized event log (`.jsonl`, whose last line is
//! `{"end": "ok"}` or `{"end": "<error>"}`), each checked whole, in 1-byte
//! and in random chunkings. `SSEFOLD_BLESS=1 cargo test --test
//! behaviour golden_providers::` rewrites the expected files (review them by hand).

use crate::prov_common;

use std::path::Path;

use serde_json::{json, Value};
use ssefold::providers::Provider;

fn check_dir(dialect: &str, provider: Provider) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dialect);
    let bless = std::env::var_os("SSEFOLD_BLESS").is_some();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sse" || e == "ndjson" || e == "bin"))
        .collect();
    files.sort();
    for sse in &files {
        let bytes = std::fs::read(sse).unwrap();
        let run = prov_common::run_all(provider, &bytes);
        let auto = prov_common::run_all(Provider::Auto, &bytes);
        assert_eq!(run, auto, "{}: auto-detection differs", sse.display());
        let mut log: String = run.events.iter().map(|e| format!("{e}\n")).collect();
        log.push_str(&format!("{}\n", json!({"end": run.error.clone().unwrap_or_else(|| "ok".into())})));
        let message = format!("{}\n", serde_json::to_string_pretty(&run.message).unwrap());
        let (json_path, jsonl_path) = (sse.with_extension("json"), sse.with_extension("jsonl"));
        if bless {
            std::fs::write(&json_path, &message).unwrap();
            std::fs::write(&jsonl_path, &log).unwrap();
            continue;
        }
        let want: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        assert_eq!(run.message, want, "{}: folded message differs", sse.display());
        let want_log = std::fs::read_to_string(&jsonl_path).unwrap();
        for (i, (got, want)) in log.lines().zip(want_log.lines()).enumerate() {
            let want: Value = serde_json::from_str(want).unwrap();
            let got: Value = serde_json::from_str(got).unwrap();
            assert_eq!(got, want, "{}: event {i} differs", sse.display());
        }
        assert_eq!(log.lines().count(), want_log.lines().count(), "{}: event count differs", sse.display());
    }
    files.len()
}

#[test]
fn anthropic_golden() {
    assert!(check_dir("anthropic", Provider::Anthropic) >= 9);
}

#[test]
fn openai_chat_golden() {
    assert!(check_dir("openai_chat", Provider::OpenAIChat) >= 6);
}

#[test]
fn openai_responses_golden() {
    assert!(check_dir("openai_responses", Provider::OpenAIResponses) >= 5);
}

#[test]
fn gemini_golden() {
    assert!(check_dir("gemini", Provider::Gemini) >= 10);
}

#[test]
fn ollama_golden() {
    assert!(check_dir("ollama", Provider::Ollama) >= 5);
}

#[test]
fn bedrock_golden() {
    assert!(check_dir("bedrock", Provider::Bedrock) >= 2);
}

#[test]
fn bedrock_converse_golden() {
    assert!(check_dir("bedrock_converse", Provider::BedrockConverse) >= 8);
}
