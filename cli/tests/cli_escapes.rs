//! Issue 26, item 16: what the provider controls (text, thinking, tool
//! names and arguments, error messages, raw SSE fields) never reaches the
//! terminal as a control sequence: `fold`'s render and notes show control
//! characters as `\u{1b}`, and the JSON of `fold` and `sse` writes the C1
//! controls (which JSON leaves raw) as `\u009b`, the same JSON value.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// An Anthropic stream whose text, thinking, tool name, tool arguments and
/// error try to set the title (OSC 0), write the clipboard (OSC 52), clear
/// the screen (CSI 2J, and the C1 CSI U+009B), ring the bell, overwrite a
/// line (a lone CR, backspace). The render's unit test reads it too.
fn hostile_stream() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hostile_terminal.sse")).unwrap()
}

fn run(args: &[&str], input: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ssefold"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// No control character a terminal acts on: only line feed and tab.
fn no_controls(what: &str, s: &str) {
    if let Some(c) = s.chars().find(|c| c.is_control() && *c != '\n' && *c != '\t') {
        panic!("{what} holds the control {c:?}: {s:?}");
    }
}

#[test]
fn fold_renders_provider_controls_as_visible_escapes() {
    let (code, out, err) = run(&["fold"], &hostile_stream());
    assert_eq!(code, 1, "the provider error: {err}");
    no_controls("the render and notes (standard error)", &err);
    for shown in [
        r"think \u{9b}2J\u{7}",
        r"a\u{1b}]0;pwned\u{7}b\u{1b}]52;c;ZXZpbA==\u{7}c\u{1b}[2Jd\u{d}fake\u{8}\u{7f}",
        r"[tool call] evil\u{1b}]0;name\u{7}\u{a} ",
        r"\u{1b}]52;c;QQ==\u{7}",
        r"ssefold fold: provider error api_error: boom \u{1b}]0;err\u{7} \u{9d}52;c;QQ==\u{9c}",
    ] {
        assert!(err.contains(shown), "{shown:?} not shown: {err:?}");
    }
    // The message keeps the text exactly; only its JSON spelling of C1 changed.
    no_controls("the message (standard output)", &out);
    assert!(out.contains(r"think \u009b2J\u0007"), "{out}");
    let m: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(m["content"][0]["thinking"], "think \u{9b}2J\u{7}");
    assert_eq!(
        m["content"][1]["text"],
        "a\u{1b}]0;pwned\u{7}b\u{1b}]52;c;ZXZpbA==\u{7}c\u{1b}[2Jd\rfake\u{8}\u{7f}\r\nline\tend\n"
    );
    assert_eq!(m["content"][2]["name"], "evil\u{1b}]0;name\u{7}\n");
}

#[test]
fn fold_jsonl_and_sse_write_c1_controls_as_json_escapes() {
    let (_, out, err) = run(&["fold", "--jsonl"], &hostile_stream());
    no_controls("fold --jsonl", &out);
    no_controls("fold --jsonl notes", &err);
    let texts: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(texts.iter().any(|e| e["text"] == "think \u{9b}2J\u{7}"), "{out}");

    let input = "event: t\u{9b}2J\nid: \u{9d}0;x\u{9c}\ndata: \u{1b}]52;c;QQ==\u{7}\u{85}\n\n";
    let (code, out, err) = run(&["sse"], input.as_bytes());
    assert_eq!(code, 0, "{err}");
    no_controls("sse", &out);
    assert_eq!(out, "{\"event\":\"t\\u009b2J\",\"data\":\"\\u001b]52;c;QQ==\\u0007\\u0085\",\"id\":\"\\u009d0;x\\u009c\",\"retry\":null}\n");
}
