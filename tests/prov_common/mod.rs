//! Shared test helpers: run a stream under several chunkings.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::Value;
use ssefold::providers::{Provider, Stream, StreamConfig, StreamEvent};

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The normalized events as JSON.
    pub events: Vec<Value>,
    /// The folded message after finish.
    pub message: Value,
    /// The first error (from feed or finish), as its Debug text.
    pub error: Option<String>,
    /// The dialect the stream reports after finish (what `auto` detected).
    pub detected: &'static str,
}

/// Feeds `bytes` split at the given chunk sizes (cycled), then finishes.
pub fn run_with(provider: Provider, bytes: &[u8], sizes: &mut dyn FnMut() -> usize) -> Run {
    run_config_with(provider, &StreamConfig::default(), bytes, sizes)
}

/// [`run_with`] a stream of `config`.
pub fn run_config_with(
    provider: Provider,
    config: &StreamConfig,
    bytes: &[u8],
    sizes: &mut dyn FnMut() -> usize,
) -> Run {
    let mut stream = Stream::with_config(provider, config.clone());
    let mut events = Vec::new();
    let mut error = None;
    let mut pos = 0;
    while pos < bytes.len() {
        let n = sizes().max(1).min(bytes.len() - pos);
        if let Err(e) = stream.feed(&bytes[pos..pos + n], |e: &StreamEvent<'_>| events.push(e.to_json())) {
            error = Some(format!("{e:?}"));
            break;
        }
        pos += n;
    }
    let fin = stream.finish(|e: &StreamEvent<'_>| events.push(e.to_json()));
    if error.is_none() {
        if let Err(e) = fin {
            error = Some(format!("{e:?}"));
        }
    }
    check_text_invariant(&events);
    let message = stream.message();
    // The lent message is the same message, to the byte of its JSON.
    assert_eq!(serde_json::to_string(&stream.message_view()).unwrap(), message.to_string());
    let detected = stream.provider().name();
    // The message moved out of the stream is the same, member order included.
    assert_eq!(stream.into_message().to_string(), message.to_string());
    Run { events, message, error, detected }
}

/// A deterministic pseudo-random chunk-size generator.
pub fn lcg(seed: u64, max: usize) -> impl FnMut() -> usize {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        1 + ((s >> 33) as usize % max)
    }
}

/// Runs whole, in 1-byte chunks and in 5 random chunkings; asserts all
/// give identical events, message and error; returns the whole run.
pub fn run_all(provider: Provider, bytes: &[u8]) -> Run {
    let whole = run_with(provider, bytes, &mut || usize::MAX);
    let one = run_with(provider, bytes, &mut || 1);
    assert_eq!(whole, one, "1-byte chunking differs");
    for seed in 0..5 {
        let r = run_with(provider, bytes, &mut lcg(seed, 64));
        assert_eq!(whole, r, "random chunking (seed {seed}) differs");
    }
    whole
}

/// The concatenated text deltas of a part equal its committed text.
pub fn check_text_invariant(events: &[Value]) {
    let mut texts: BTreeMap<u64, String> = BTreeMap::new();
    let mut args: BTreeMap<u64, String> = BTreeMap::new();
    for e in events {
        let part = e["part"].as_u64();
        match e["event"].as_str().unwrap() {
            "text_delta" => texts.entry(part.unwrap()).or_default().push_str(e["text"].as_str().unwrap()),
            "tool_args_delta" => args.entry(part.unwrap()).or_default().push_str(e["json"].as_str().unwrap()),
            "part_end" => {
                let p = part.unwrap();
                let c = &e["content"];
                let kind = e["kind"].as_str().unwrap();
                if matches!(kind, "text" | "reasoning" | "refusal") {
                    let folded = ["text", "thinking", "refusal"].iter().find_map(|k| c[*k].as_str());
                    if let Some(folded) = folded {
                        assert_eq!(texts.get(&p).map_or("", String::as_str), folded, "part {p} text != deltas");
                    }
                }
                if e["outcome"] == "invalid_arguments" {
                    assert_eq!(args.get(&p).map_or("", String::as_str), e["raw"].as_str().unwrap());
                }
            }
            _ => {}
        }
    }
}

/// Events of one name.
pub fn named<'a>(run: &'a Run, name: &str) -> Vec<&'a Value> {
    run.events.iter().filter(|e| e["event"] == name).collect()
}

/// Warning codes, in order.
pub fn warnings(run: &Run) -> Vec<String> {
    named(run, "warning").iter().map(|w| w["code"].as_str().unwrap().to_owned()).collect()
}

/// One AWS event-stream message with string headers, built from the
/// format's definition (CRC-32 computed bit by bit, independent of the
/// library's).
pub fn es_message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }
    let mut h = Vec::new();
    for (name, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(7);
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value.as_bytes());
    }
    let total = (12 + h.len() + payload.len() + 4) as u32;
    let mut m = total.to_be_bytes().to_vec();
    m.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let crc = crc32(&m);
    m.extend_from_slice(&crc.to_be_bytes());
    m.extend_from_slice(&h);
    m.extend_from_slice(payload);
    let crc = crc32(&m);
    m.extend_from_slice(&crc.to_be_bytes());
    m
}

/// A `ConverseStream` event message: `:event-type` `event_type`, the JSON
/// payload with Bedrock's padding member `p` added (as every recorded
/// event has it).
pub fn converse_event(event_type: &str, payload: &Value) -> Vec<u8> {
    let mut payload = payload.clone();
    if let Value::Object(m) = &mut payload {
        m.insert("p".into(), Value::from("abcdefghijk"));
    }
    es_message(
        &[(":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")],
        payload.to_string().as_bytes(),
    )
}

/// A `ConverseStream` exception message.
pub fn converse_exception(exception_type: &str, message: &str) -> Vec<u8> {
    es_message(
        &[(":exception-type", exception_type), (":content-type", "application/json"), (":message-type", "exception")],
        serde_json::json!({ "message": message }).to_string().as_bytes(),
    )
}

/// Every recorded body of `tests/recordings/` (its manifest's `file`s).
pub fn recording_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings");
    let manifest = std::fs::read_to_string(root.join("manifest.json")).expect("manifest.json");
    let entries: Vec<Value> = serde_json::from_str(&manifest).expect("manifest.json is a list");
    entries.iter().map(|e| root.join(e["file"].as_str().expect("file"))).collect()
}
