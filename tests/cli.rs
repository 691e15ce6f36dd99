//! The `ssefold` binary: `sse` prints exact JSON Lines, live, with the
//! documented exit statuses; `demo` replays the embedded stream.

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
    let text = String::from_utf8(out.stdout).unwrap();
    // The live rendering, then the folded message.
    assert!(text.starts_with("I'll check the current weather in Paris"), "{text}");
    assert!(text.contains("get_weather {\"location\": \"Paris, France\""), "{text}");
    let json_start = text.find("\n{").unwrap() + 1;
    let message: serde_json::Value = serde_json::from_str(&text[json_start..]).unwrap();
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(message["content"][1]["input"]["include"][1], "precipitation");
    assert_eq!(message["usage"]["output_tokens"], 89);
    let out = ssefold().args(["demo", "--fast", "--jsonl"]).output().unwrap();
    let events: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.first().unwrap()["event"], "message_start");
    assert_eq!(events.last().unwrap()["event"], "turn_end");
    assert!(events.iter().any(|e| e["event"] == "part_end" && e["outcome"] == "complete" && e["kind"] == "tool_call"));
}
