//! The committed fuzz crashers (`fuzz/regressions/<target>/`, minimized
//! inputs that once broke a target's property), replayed on every `cargo
//! test` through the very functions the cargo-fuzz targets run
//! (`fuzz/fuzz_targets/common/mod.rs`): no panic, and the same events,
//! message and ending in every chunking the target tries.

#[path = "../fuzz/fuzz_targets/common/mod.rs"]
mod fuzz_common;

use std::path::Path;

/// Runs `check` on every file of `fuzz/regressions/<target>/`; how many.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in &files {
        let input = std::fs::read(file).unwrap();
        let run = std::panic::catch_unwind(|| check(&input));
        assert!(run.is_ok(), "{}: the target's property fails", file.display());
    }
    files.len()
}

/// Issue 26 item 18: `auto` with a newline before an event-stream body
/// (whole: a broken frame; split after the newline: folded, before the fix).
#[test]
fn eventstream_regressions() {
    assert!(replay("eventstream", fuzz_common::check_eventstream) >= 1);
}

#[test]
fn providers_regressions() {
    assert!(replay("providers", fuzz_common::check_providers) >= 1);
}

#[test]
fn bedrock_records_regressions() {
    assert!(replay("bedrock_records", fuzz_common::check_bedrock_records) >= 1);
}

/// The regressions still hold what they were cut for: the newline before a
/// prelude is the same broken frame in every chunking.
#[test]
fn a_newline_before_a_prelude_is_a_broken_frame_in_every_chunking() {
    let input = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/eventstream/auto_blank_before_prelude"),
    )
    .unwrap();
    let body = &input[2..];
    let config = ssefold::providers::StreamConfig::default();
    for seed in 0..13 {
        let (events, message, end) =
            fuzz_common::fold(ssefold::providers::Provider::Auto, &config, &fuzz_common::chunked(body, seed));
        assert!(end.starts_with("EventStream(PreludeCrcMismatch { offset: 0,"), "{end}");
        assert_eq!((events.len(), message), (0, serde_json::Value::Null));
    }
}

/// The `agent_turn` target's property on every recording and fixture with
/// tool calls (SSE and NDJSON), before any fuzzing: the turn shows the same
/// events, decides the same actions and ends the same whole and in 1–13 byte
/// chunks, with the default settings, every tool exclusive, and small limits
/// with siblings aborted on an error.
#[test]
fn the_agent_turn_is_the_same_in_every_chunking_on_the_recordings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if matches!(path.extension().and_then(|e| e.to_str()), Some("sse" | "ndjson")) {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut checked = 0;
    for file in &files {
        let body = std::fs::read(file).unwrap();
        if !["tool_use", "tool_calls", "function_call", "functionCall"]
            .iter()
            .any(|m| body.windows(m.len()).any(|w| w == m.as_bytes()))
        {
            continue;
        }
        for (i, flags) in [3u8, 3 | 32, 3 | 4 | 64].into_iter().enumerate() {
            let mut input = vec![flags, (checked + i) as u8];
            input.extend_from_slice(&body);
            let run = std::panic::catch_unwind(|| fuzz_common::check_agent_turn(&input));
            assert!(run.is_ok(), "{} (flags {flags})", file.display());
        }
        checked += 1;
    }
    assert!(checked >= 100, "{checked} bodies with tool calls");
}
