//! The 45 recorded streams from the official SDKs' test suites
//! (`tests/peer-fixtures/`), through the SSE layer: whole, byte by byte and
//! split at every offset. Every payload is JSON (or OpenAI's `[DONE]`), every
//! Anthropic event name matches its payload's `type`, and a file that ends
//! without the blank line that dispatches its last event is reported as
//! such: the event is not dispatched (WHATWG), and `EndOfStream` shows it.

use crate::common;

use std::path::{Path, PathBuf};

use common::decode_every_way;
use ssefold::sse::DecoderConfig;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer-fixtures");
    let mut files = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue; // README.md / SOURCES.md
        }
        for f in std::fs::read_dir(dir).unwrap() {
            let p = f.unwrap().path();
            if matches!(p.extension().and_then(|e| e.to_str()), Some("sse" | "txt")) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_peer_fixture_decodes_the_same_in_every_chunking() {
    let files = fixtures();
    assert_eq!(files.len(), 45, "the 45 recorded streams");
    let mut unterminated = 0;
    for path in &files {
        let name = path.display();
        let bytes = std::fs::read(path).unwrap();
        let got = decode_every_way(&DecoderConfig::default(), &bytes);
        assert!(got.items.iter().all(Result::is_ok), "{name}: {:?}", got.items);
        let events = got.events();
        assert!(events.len() >= 2, "{name}");
        let openai = path.to_string_lossy().contains("openai");
        for e in &events {
            if openai && e.data == "[DONE]" {
                continue;
            }
            let v: serde_json::Value =
                serde_json::from_str(&e.data).unwrap_or_else(|err| panic!("{name}: payload not JSON: {err}"));
            if !openai {
                assert_eq!(v["type"].as_str(), Some(e.event.as_str()), "{name}: event name vs payload type");
            }
        }
        let ends_cleanly = bytes.ends_with(b"\n\n");
        if ends_cleanly {
            assert_eq!(got.end.discarded_bytes, 0, "{name}");
            assert!(got.end.unterminated.is_none(), "{name}");
            let last = events.last().unwrap();
            assert!(last.data == "[DONE]" || last.event == "message_stop", "{name}: last event {last:?}");
        } else {
            unterminated += 1;
            let e = got.end.unterminated.as_ref().unwrap_or_else(|| panic!("{name}: unterminated event expected"));
            assert_eq!(e.event, "message_stop", "{name}");
            assert!(got.end.discarded_bytes > 0, "{name}");
            assert!(events.iter().all(|e| e.event != "message_stop"), "{name}: message_stop must not be dispatched");
        }
    }
    assert_eq!(unterminated, 21, "the README counts 21 files without the final blank line");
}
