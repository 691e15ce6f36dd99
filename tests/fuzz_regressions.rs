//! The committed fuzz crashers (`fuzz/regressions/<target>/`, minimized
//! inputs that once broke a target's property), replayed on every `cargo
//! test` through the very functions the cargo-fuzz targets run
//! (`fuzz/fuzz_targets/common/mod.rs`): no panic, and the same events,
//! message and ending in every chunking the target tries.

#[path = "../fuzz/fuzz_targets/common/mod.rs"]
pub(crate) mod fuzz_common;

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
