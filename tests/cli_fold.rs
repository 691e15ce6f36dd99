//! `ssefold fold`: folded message, --jsonl events, exit statuses.

use std::process::Command;

use serde_json::Value;

fn fold(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ssefold"))
        .arg("fold")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn fold_prints_live_text_then_the_message() {
    let (code, out, _) =
        fold(&["--provider", "anthropic", "tests/peer-fixtures/anthropic-sdk-python/tool_use_response.txt"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("I'll check the current weather in Paris for you."), "{out}");
    assert!(out.contains("[tool call] get_weather {\"location\": \"Paris\"}"), "{out}");
    let json_start = out.find("\n{\n").unwrap();
    let m: Value = serde_json::from_str(&out[json_start..]).unwrap();
    assert_eq!(m["stop_reason"], "tool_use");
    assert_eq!(m["content"][1]["input"]["location"], "Paris");
}

#[test]
fn fold_jsonl_matches_the_golden_event_log() {
    let (code, out, _) = fold(&["--jsonl", "tests/fixtures/openai_chat/parallel_tools.sse"]);
    assert_eq!(code, 0);
    let golden = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openai_chat/parallel_tools.jsonl"),
    )
    .unwrap();
    // The golden log ends with its {"end": …} line; the CLI prints only events.
    let want: Vec<&str> = golden.lines().filter(|l| !l.starts_with("{\"end\"")).collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
}

#[test]
fn fold_exit_statuses() {
    assert_eq!(fold(&["tests/fixtures/openai_chat/truncated.sse"]).0, 3);
    let (code, _, err) = fold(&["tests/fixtures/anthropic/error_mid_stream.sse"]);
    assert_eq!(code, 1);
    assert!(err.contains("overloaded_error"), "{err}");
    assert_eq!(fold(&["--provider", "nope"]).0, 2);
    let (code, _, err) = fold(&["tests/peer-fixtures/anthropic-sdk-python/basic_response.txt"]);
    assert_eq!(code, 0);
    assert!(err.contains("unterminated_final_event"), "{err}");
}
