//! The `ssefold` binary: `sse` prints exact JSON Lines, live, with the
//! documented exit statuses; `demo` replays the embedded stream; every
//! command has its --help, and usage errors are exit status 2.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn ssefold() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ssefold"))
}

fn run_sse(input: &[u8]) -> (String, String, i32) {
    let mut child =
        ssefold().arg("sse").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap(), out.status.code().unwrap())
}

#[test]
fn sse_prints_one_exact_json_object_per_event() {
    let (out, err, code) = run_sse(b"retry: 5\nid: 7\nevent: delta\ndata: a\ndata: \"b\"\n\ndata: c\n\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\"event\":\"delta\",\"data\":\"a\\n\\\"b\\\"\",\"id\":\"7\",\"retry\":5}\n\
         {\"event\":\"message\",\"data\":\"c\",\"id\":\"7\",\"retry\":null}\n"
    );
}

#[test]
fn sse_reports_a_truncated_stream_with_status_3() {
    let (out, err, code) = run_sse(b"data: a\n\ndata: b");
    assert_eq!(out.lines().count(), 1);
    assert_eq!(code, 3);
    assert!(err.contains("7 bytes discarded"), "{err}");
}

#[test]
fn sse_reports_decode_errors_on_stderr_and_goes_on() {
    let (out, err, code) = run_sse(b"data: \xff\n\n");
    assert_eq!(code, 0, "replacement is not an error: {err}");
    assert_eq!(out, "{\"event\":\"message\",\"data\":\"\u{fffd}\",\"id\":null,\"retry\":null}\n");
    let out = ssefold().args(["sse", "/nonexistent/file"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(ssefold().args(["sse", "a", "b"]).output().unwrap().status.code(), Some(2));
    assert_eq!(ssefold().arg("bogus").output().unwrap().status.code(), Some(2));
}

#[test]
fn sse_is_live_each_event_is_printed_before_the_input_ends() {
    let mut child = ssefold().arg("sse").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for i in 0..3 {
        stdin.write_all(format!("data: {i}\n\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        // Blocks until the event is printed: with stdin still open, only a
        // flush per dispatched event makes this line arrive.
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line, format!("{{\"event\":\"message\",\"data\":\"{i}\",\"id\":null,\"retry\":null}}\n"));
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn demo_replays_the_embedded_stream() {
    let out = ssefold().args(["demo", "--fast"]).output().unwrap();
    assert!(out.status.success());
    // Standard output is not a terminal: it holds the message alone, and
    // the live render went to standard error.
    let message: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(message["content"][1]["input"]["include"][1], "precipitation");
    assert_eq!(message["usage"]["output_tokens"], 89);
    let render = String::from_utf8(out.stderr).unwrap();
    assert!(render.starts_with("I'll check the current weather in Paris"), "{render}");
    assert!(render.contains("[tool call] get_weather {\"location\": \"Paris, France\""), "{render}");
    let out = ssefold().args(["demo", "--fast", "--jsonl"]).output().unwrap();
    let lines: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (message, events) = lines.split_last().unwrap();
    assert_eq!(events.first().unwrap()["event"], "message_start");
    assert_eq!(events.last().unwrap()["event"], "turn_end");
    assert!(events.iter().any(|e| e["event"] == "part_end" && e["outcome"] == "complete" && e["kind"] == "tool_call"));
    assert_eq!(message["usage"]["output_tokens"], 89);
    assert!(out.stderr.is_empty(), "no live render with --jsonl");
}

#[test]
fn every_command_has_help_with_its_output_and_exit_statuses() {
    for args in [&["--help"][..], &["sse", "--help"], &["fold", "--help"], &["demo", "--help"], &["help", "fold"]] {
        let out = ssefold().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(help.contains("Usage: ssefold"), "{args:?}: {help}");
        assert!(help.contains("130  the turn was cancelled"), "{args:?}: {help}");
    }
    let fold = String::from_utf8(ssefold().args(["fold", "--help"]).output().unwrap().stdout).unwrap();
    for needle in
        ["--provider", "openai-responses", "--jsonl", "--no-render", "Standard output holds only", "Esc twice"]
    {
        assert!(fold.contains(needle), "{needle}: {fold}");
    }
    let sse = String::from_utf8(ssefold().args(["sse", "--help"]).output().unwrap().stdout).unwrap();
    assert!(sse.contains("{\"event\": str, \"data\": str, \"id\": str|null, \"retry\": int|null}"), "{sse}");
    let version = ssefold().arg("--version").output().unwrap();
    assert_eq!(String::from_utf8(version.stdout).unwrap(), format!("ssefold {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn unknown_options_and_commands_are_usage_errors() {
    for args in [&["sse", "--bogus"][..], &["fold", "-x"], &["demo", "--slow"], &["corpus", "openai-chat", "10"], &[]] {
        let out = ssefold().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8(out.stderr).unwrap().contains("Usage: ssefold"), "{args:?}");
        assert!(out.stdout.is_empty());
    }
}

/// One `id:` line of `id_len` bytes, then `events` small events.
fn long_id_then_events(id_len: usize, events: usize) -> Vec<u8> {
    let mut input = Vec::with_capacity(id_len + 16 * events + 16);
    input.extend_from_slice(b"id: ");
    input.resize(4 + id_len, b'x');
    input.extend_from_slice(b"\n");
    for i in 0..events {
        input.extend_from_slice(format!("data: {i}\n\n").as_bytes());
    }
    input
}

#[test]
fn sse_prints_a_bounded_output_for_the_long_id_reproducer() {
    // Before the decoder's id limit: every one of the 20 000 lines held the
    // 1 MiB id (21 GB).
    let input = long_id_then_events(1 << 20, 20_000);
    let mut child =
        ssefold().arg("sse").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(out.status.code(), Some(1), "a decoding error is exit status 1");
    assert!(String::from_utf8_lossy(&out.stderr).contains("id longer than 4096 bytes"));
    assert_eq!(out.stdout.iter().filter(|b| **b == b'\n').count(), 19_999);
    assert!(out.stdout.len() < 2 << 20, "{} bytes", out.stdout.len());
}

fn run_with(args: &[&str], input: &[u8]) -> (String, String, i32) {
    let mut child =
        ssefold().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap(), out.status.code().unwrap())
}

#[test]
fn sse_takes_the_decoder_limits_as_flags() {
    // Issue 26, item 23: a 5,000-byte id was a fatal error with no way to
    // raise max_id_len.
    let input = long_id_then_events(5000, 2);
    let (out, err, code) = run_with(&["sse"], &input);
    assert_eq!((code, out.lines().count()), (1, 1), "{err}");
    assert!(err.contains("id longer than 4096 bytes"), "{err}");
    for flag in ["--max-id-len", "--max_id_len"] {
        let (out, err, code) = run_with(&["sse", flag, "8K"], &input);
        assert_eq!(code, 0, "{flag}: {err}");
        let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["id"].as_str().map(str::len), Some(5000));
    }
    // The other decoder limits, lowered.
    let (_, err, code) = run_with(&["sse", "--max-line-len", "8"], b"data: 0123456789\n\ndata: ok\n\n");
    assert_eq!(code, 1);
    assert!(err.contains("SSE line longer than 8 bytes"), "{err}");
    let (out, err, code) = run_with(&["sse", "--max-event-size", "4"], b"data: 123\ndata: 45\n\ndata: ok\n\n");
    assert_eq!((code, out.lines().count()), (1, 1), "{err}");
    assert!(err.contains("larger than 4 bytes"), "{err}");
    let (out, err, code) = run_with(&["sse", "--utf8", "strict"], b"data: \xff\n\ndata: ok\n\n");
    assert_eq!((code, out.lines().count()), (1, 1), "{err}");
    // Bad values are usage errors.
    for bad in [&["sse", "--max-id-len", "0"][..], &["sse", "--max-id-len", "lots"], &["sse", "--utf8", "lossy"]] {
        let (_, err, code) = run_with(bad, b"");
        assert_eq!(code, 2, "{bad:?}: {err}");
    }
}

#[test]
fn fold_takes_the_stream_limits_as_flags() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let body = std::fs::read(root.join("tests/fixtures/anthropic/thinking_text_citations.sse")).unwrap();
    let (out, err, code) = run_with(&["fold", "--no-render"], &body);
    assert_eq!(code, 0, "{err}");
    assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok());
    let (out, err, code) = run_with(&["fold", "--no-render", "--max-text-bytes", "16"], &body);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("max_text_bytes"), "{err}");
    let m: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(m["type"], "message", "what was folded before the limit is printed");
    let (_, err, code) = run_with(&["fold", "--no-render", "--max_parts", "1"], &body);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("max_parts"), "{err}");
    let (_, err, code) = run_with(&["fold", "--no-render", "--max-id-len", "1"], b"id: 12\ndata: {}\n\n");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("id longer than 1 bytes"), "{err}");

    let help = String::from_utf8(ssefold().args(["fold", "--help"]).output().unwrap().stdout).unwrap();
    for flag in [
        "--max-line-len",
        "--max-event-size",
        "--max-id-len",
        "--utf8",
        "--max-parts",
        "--max-tool-args-bytes",
        "--max-text-bytes",
        "--max-choices",
        "--max-memory-bytes",
        "--max-path-events-per-feed",
        "--max-event-stream-message-len",
        "--max-event-stream-headers-len",
        "--tool-input-trailing-strings",
        "[default: 134217728]",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    let sse = String::from_utf8(ssefold().args(["sse", "--help"]).output().unwrap().stdout).unwrap();
    assert!(sse.contains("--max-id-len <SIZE>") && sse.contains("[default: 4096]") && !sse.contains("--max-parts"));
}
