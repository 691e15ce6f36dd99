//! Golden tests: one case per WHATWG "event stream" rule, from
//! `tests/golden/sse_spec.json`, each run whole, byte by byte and split at
//! every offset.

use crate::common;

use common::decode_every_way;
use serde_json::Value;
use ssefold::sse::{DecoderConfig, OwnedEvent};

fn event_from_json(v: &Value) -> OwnedEvent {
    OwnedEvent {
        event: v["event"].as_str().unwrap().to_owned(),
        data: v["data"].as_str().unwrap().to_owned(),
        id: v["id"].as_str().map(str::to_owned),
        retry: v["retry"].as_u64(),
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn golden_spec_cases() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("golden/sse_spec.json")).unwrap();
    assert!(cases.len() >= 30);
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let input = match case.get("input_hex") {
            Some(h) => hex(h.as_str().unwrap()),
            None => case["input"].as_str().unwrap().as_bytes().to_vec(),
        };
        let got = decode_every_way(&DecoderConfig::default(), &input);
        let want: Vec<OwnedEvent> = case["events"].as_array().unwrap().iter().map(event_from_json).collect();
        assert!(got.items.iter().all(Result::is_ok), "{name}: unexpected error {:?}", got.items);
        assert_eq!(got.events(), want, "{name}: events");
        assert_eq!(got.end.discarded_bytes, case["discarded_bytes"].as_u64().unwrap_or(0), "{name}: discarded bytes");
        assert_eq!(got.end.unterminated, case.get("unterminated").map(event_from_json), "{name}: unterminated");
        if let Some(t) = case.get("reconnection_time") {
            assert_eq!(got.reconnection_time, t.as_u64(), "{name}: reconnection time");
        }
        if let Some(id) = case.get("last_event_id") {
            assert_eq!(got.last_event_id.as_deref(), id.as_str(), "{name}: last event id");
        }
    }
}
