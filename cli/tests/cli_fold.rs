//! `ssefold fold` off a terminal: standard output holds the folded message
//! alone (or the --jsonl events, then the message), the live render goes to
//! standard error, warnings are aggregated, a wrong --provider is refused,
//! and the exit statuses are the documented ones.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fold(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ssefold")).arg("fold").args(args).current_dir(root()).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn fold_stdin(args: &[&str], input: Vec<u8>) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ssefold"))
        .arg("fold")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn golden_message(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(path)).unwrap()).unwrap()
}

#[test]
fn stdout_holds_the_message_alone_and_the_render_goes_to_stderr() {
    let (code, out, err) =
        fold(&["--provider", "anthropic", "tests/peer-fixtures/anthropic-sdk-python/tool_use_response.txt"]);
    assert_eq!(code, 0, "{err}");
    let m: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(m["stop_reason"], "tool_use");
    assert_eq!(m["content"][1]["input"]["location"], "Paris");
    assert!(err.starts_with("I'll check the current weather in Paris for you."), "{err}");
    assert!(err.contains("\n[tool call] get_weather {\"location\": \"Paris\"}\n"), "{err}");

    let (code, quiet_out, quiet_err) =
        fold(&["--no-render", "-p", "anthropic", "tests/peer-fixtures/anthropic-sdk-python/tool_use_response.txt"]);
    assert_eq!((code, quiet_out), (0, out));
    // (This recording lacks its final blank line: a warning, and no render.)
    assert!(quiet_err.lines().all(|l| l.starts_with("ssefold fold: warning unterminated_final_event")), "{quiet_err}");
}

#[test]
fn parallel_tool_calls_render_one_line_each() {
    let (code, out, err) = fold(&["tests/fixtures/openai_chat/parallel_tools.sse"]);
    assert_eq!(code, 0, "{err}");
    let message: Value = serde_json::from_str(&out).unwrap();
    let calls = message["choices"][0]["message"]["tool_calls"].as_array().unwrap();
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("[tool call] ")).collect();
    assert_eq!(lines.len(), calls.len(), "{err}");
    for (line, call) in lines.iter().zip(calls) {
        let name = call["function"]["name"].as_str().unwrap();
        let args = call["function"]["arguments"].as_str().unwrap();
        assert_eq!(*line, format!("[tool call] {name} {args}"));
    }
}

#[test]
fn jsonl_prints_the_golden_events_then_the_message() {
    let (code, out, err) = fold(&["--jsonl", "tests/fixtures/openai_chat/parallel_tools.sse"]);
    assert_eq!(code, 0);
    assert_eq!(err, "");
    let golden = std::fs::read_to_string(root().join("tests/fixtures/openai_chat/parallel_tools.jsonl")).unwrap();
    // The golden log ends with its {"end": …} line; the CLI ends with the message.
    let want: Vec<&str> = golden.lines().filter(|l| !l.starts_with("{\"end\"")).collect();
    let lines: Vec<&str> = out.lines().collect();
    let (message, events) = lines.split_last().unwrap();
    assert_eq!(events, want);
    let message: Value = serde_json::from_str(message).unwrap();
    assert_eq!(message, golden_message("tests/fixtures/openai_chat/parallel_tools.json"));
}

#[test]
fn a_wrong_provider_names_the_dialect_seen() {
    let cases = [
        ("openai-chat", "tests/fixtures/anthropic/interleaved_tools.sse", "the stream is anthropic, not openai_chat"),
        (
            "anthropic",
            "tests/fixtures/openai_responses/tool_streams.sse",
            "the stream is openai_responses, not anthropic",
        ),
        (
            "openai-responses",
            "tests/fixtures/openai_chat/parallel_tools.sse",
            "the stream is openai_chat, not openai_responses",
        ),
    ];
    for (provider, file, says) in cases {
        let (code, out, err) = fold(&["--provider", provider, file]);
        assert_eq!(code, 1, "{provider} {file}");
        assert_eq!(out, "", "no mixed message, no null");
        assert!(err.contains(says) && err.contains("--provider auto"), "{err}");
    }
}

#[test]
fn repeated_warnings_are_counted_not_repeated() {
    // A complete answer followed by 20 000 events after its terminal one.
    let mut input = std::fs::read(root().join("tests/fixtures/anthropic/interleaved_tools.sse")).unwrap();
    for _ in 0..20_000 {
        input.extend_from_slice(b"event: ping\ndata: {\"type\": \"ping\"}\n\n");
    }
    let (code, out, err) = fold_stdin(&["--no-render"], input);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str::<Value>(&out).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(lines[..3].iter().all(|l| l.starts_with("ssefold fold: warning data_after_terminal: ")), "{err}");
    assert_eq!(lines[3], "ssefold fold: warning data_after_terminal: 20000 in all (19997 not shown)");
}

#[test]
fn exit_statuses() {
    let (code, out, err) = fold(&["tests/fixtures/openai_chat/truncated.sse"]);
    assert_eq!(code, 3);
    assert!(err.contains("the stream ended before"), "{err}");
    serde_json::from_str::<Value>(&out).unwrap();
    let (code, _, err) = fold(&["tests/fixtures/anthropic/error_mid_stream.sse"]);
    assert_eq!(code, 1);
    assert!(err.contains("overloaded_error"), "{err}");
    assert_eq!(fold(&["--provider", "nope"]).0, 2);
    assert_eq!(fold(&["a", "b"]).0, 2);
    assert_eq!(fold(&["/nonexistent/file"]).0, 1);
    let (code, _, err) = fold(&["tests/peer-fixtures/anthropic-sdk-python/basic_response.txt"]);
    assert_eq!(code, 0);
    assert!(err.contains("unterminated_final_event"), "{err}");
}

#[test]
fn bedrock_event_stream_bodies_fold_by_name_and_by_detection() {
    let file = "tests/recordings/bedrock_converse/pydantic-ai/models__test_bedrock__test_bedrock_model_thinking_part_stream.bin";
    let (code, out, err) = fold(&["--no-render", "--provider", "bedrock-converse", file]);
    assert_eq!(code, 0, "{err}");
    let m: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(m["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]["signature"].is_string(), "{m}");
    assert!(m["usage"]["totalTokens"].is_u64(), "{m}");
    let (code, auto_out, _) = fold(&["--no-render", file]);
    assert_eq!((code, auto_out), (0, out));
    let (code, out, err) = fold(&["--no-render", "--provider", "bedrock", file]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("the stream is bedrock_converse, not bedrock"), "{err}");
}
