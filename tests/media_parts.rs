//! Media parts (append-bytes): the bytes of OpenAI Chat audio, Responses
//! audio and partial images and Gemini `inlineData`, decoded from base64 as
//! they stream. Whatever the split of the base64 text into deltas (and of
//! the body into chunks: `run_all`), the `media_delta`s add up to the bytes;
//! the folded message keeps the provider's base64 text unchanged; bad base64
//! is a warning, never a panic.

use crate::prov_common;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use prov_common::{lcg, named, run_all, warnings, Run};
use serde_json::{json, Value};
use ssefold::providers::{PartKind, Provider, Stream, StreamConfig, StreamError, StreamEvent, StreamLimit};
use ssefold::ui::UiState;

/// The bytes of part `part`'s `media_delta`s, and their MIME types.
fn media(run: &Run, part: u64) -> (Vec<u8>, Vec<String>) {
    let mut bytes = Vec::new();
    let mut mimes = Vec::new();
    for e in named(run, "media_delta").into_iter().filter(|e| e["part"] == part) {
        bytes.extend(STANDARD.decode(e["data"].as_str().unwrap()).unwrap());
        let m = e["mime_type"].as_str().unwrap().to_owned();
        if !mimes.contains(&m) {
            mimes.push(m);
        }
    }
    (bytes, mimes)
}

/// `text` cut at pseudo-random places (seeded), into at most `max`-byte pieces.
fn split(text: &str, seed: u64, max: usize) -> Vec<String> {
    let mut next = lcg(seed, max);
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let n = next().max(1).min(text.len() - at);
        pieces.push(text[at..at + n].to_owned());
        at += n;
    }
    pieces
}

fn some_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut next = lcg(seed, 256);
    (0..len).map(|_| next() as u8).collect()
}

fn chat_body(deltas: &[Value]) -> Vec<u8> {
    let mut body = String::new();
    let mut push = |delta: Value, finish: Value| {
        let c = json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-audio-preview",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        body.push_str(&format!("data: {c}\n\n"));
    };
    for d in deltas {
        push(d.clone(), Value::Null);
    }
    push(json!({}), json!("stop"));
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

#[test]
fn chat_audio_bytes_do_not_depend_on_where_the_base64_is_cut() {
    for seed in 0..40 {
        let bytes = some_bytes(seed, 1 + (seed as usize * 37) % 500);
        let b64 = STANDARD.encode(&bytes);
        let mut deltas = vec![json!({"role": "assistant", "audio": {"id": "audio_1", "transcript": "Hel"}})];
        deltas.extend(split(&b64, seed, 9).into_iter().map(|p| json!({"audio": {"data": p}})));
        deltas.push(json!({"audio": {"transcript": "lo", "expires_at": 1729018505}}));
        let run = run_all(Provider::OpenAIChat, &chat_body(&deltas));
        assert_eq!(run.error, None);
        assert!(warnings(&run).is_empty(), "{:?}", warnings(&run));
        let (got, mimes) = media(&run, 0);
        assert_eq!(got, bytes, "seed {seed}");
        assert_eq!(mimes, ["audio/pcm"]);
        // The fold is the SDK's: the base64 text concatenated, untouched.
        let audio = &run.message["choices"][0]["message"]["audio"];
        assert_eq!(audio["data"], b64.as_str());
        assert_eq!(audio["transcript"], "Hello");
        let end = named(&run, "part_end")[0];
        assert_eq!((&end["kind"], &end["content"]), (&json!("media"), audio));
    }
}

#[test]
fn deltas_padded_one_by_one_decode_like_one_text() {
    let chunks: [&[u8]; 4] = [b"\x00\x01", b"\x02", b"\x03\x04\x05\x06", b"\xff"];
    let deltas: Vec<Value> = chunks.iter().map(|c| json!({"audio": {"data": STANDARD.encode(c)}})).collect();
    let run = run_all(Provider::OpenAIChat, &chat_body(&deltas));
    assert_eq!(media(&run, 0).0, chunks.concat());
    assert!(warnings(&run).is_empty());
}

#[test]
fn bad_base64_is_a_warning_the_bytes_stop_and_the_text_is_kept() {
    let deltas = [
        json!({"audio": {"data": "AAEC"}}),
        json!({"audio": {"data": "A\u{e9}EC"}}),
        json!({"audio": {"data": "AAEC"}}),
    ];
    let run = run_all(Provider::OpenAIChat, &chat_body(&deltas));
    assert_eq!(run.error, None);
    assert_eq!(warnings(&run), ["invalid_base64"]);
    assert_eq!(media(&run, 0).0, [0, 1, 2]);
    assert_eq!(run.message["choices"][0]["message"]["audio"]["data"], "AAECA\u{e9}ECAAEC");
    // A lone final character.
    let run = run_all(Provider::OpenAIChat, &chat_body(&[json!({"audio": {"data": "AAECA"}})]));
    assert_eq!(warnings(&run), ["invalid_base64"]);
    assert_eq!(media(&run, 0).0, [0, 1, 2]);
    // Not a string at all: merged as before, no bytes, no panic.
    let run = run_all(Provider::OpenAIChat, &chat_body(&[json!({"audio": {"data": 5}}), json!({"audio": "x"})]));
    assert_eq!(run.error, None);
    assert!(named(&run, "media_delta").is_empty());
}

#[test]
fn responses_audio_and_partial_images() {
    let bytes = some_bytes(7, 301);
    let b64 = STANDARD.encode(&bytes);
    let image = some_bytes(8, 64);
    let mut events = vec![
        json!({"type": "response.created", "sequence_number": 0, "response": {"id": "r", "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.image_generation_call.partial_image", "sequence_number": 1, "output_index": 0,
            "item_id": "ig_1", "partial_image_index": 0, "partial_image_b64": STANDARD.encode(&image), "output_format": "jpeg"}),
    ];
    let mut seq = 2;
    for (i, p) in split(&b64, 3, 11).into_iter().enumerate() {
        events.push(json!({"type": "response.audio.delta", "sequence_number": seq, "delta": p}));
        seq += 1;
        if i % 3 == 0 {
            events.push(json!({"type": "response.audio.transcript.delta", "sequence_number": seq, "delta": "ab"}));
            seq += 1;
        }
    }
    events.push(json!({"type": "response.audio.done", "sequence_number": seq}));
    events.push(json!({"type": "response.audio.transcript.done", "sequence_number": seq + 1}));
    events.push(json!({"type": "response.completed", "sequence_number": seq + 2,
        "response": {"id": "r", "object": "response", "status": "completed", "output": []}}));
    let body: String =
        events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap())).collect();
    let run = run_all(Provider::OpenAIResponses, body.as_bytes());
    assert_eq!(run.error, None);
    assert!(warnings(&run).is_empty(), "{:?}", warnings(&run));
    assert_eq!(media(&run, 0), (image, vec!["image/jpeg".to_owned()]));
    assert_eq!(media(&run, 1), (bytes, vec!["audio/pcm".to_owned()]));
    let ends = named(&run, "part_end");
    assert_eq!(ends[1]["content"]["data"], b64.as_str());
    assert_eq!(ends[1]["outcome"], "complete");
    // The folded Response is the SDK's: the media events add nothing to it.
    assert_eq!(run.message["output"], json!([]));
}

#[test]
fn gemini_inline_data_parts() {
    let a = some_bytes(1, 100);
    let b = some_bytes(2, 3);
    let chunk = |parts: Value, finish: Option<&str>| {
        let mut c = json!({"content": {"parts": parts, "role": "model"}});
        if let Some(f) = finish {
            c["finishReason"] = f.into();
        }
        format!("data: {}\r\n\r\n", json!({"candidates": [c], "modelVersion": "m"}))
    };
    let body = chunk(
        json!([{"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=24000", "data": STANDARD.encode(&a)}}]),
        None,
    ) + &chunk(
        json!([{"text": "x"}, {"inlineData": {"mimeType": "image/png", "data": STANDARD.encode(&b)}, "thought": true}]),
        Some("STOP"),
    );
    let run = run_all(Provider::Gemini, body.as_bytes());
    assert_eq!(run.error, None);
    assert_eq!(media(&run, 0), (a.clone(), vec!["audio/L16;codec=pcm;rate=24000".to_owned()]));
    assert_eq!(media(&run, 2), (b, vec!["image/png".to_owned()]));
    let parts = &run.message["candidates"][0]["content"]["parts"];
    assert_eq!(parts[0]["inlineData"]["data"], STANDARD.encode(&a).as_str());
    assert_eq!(parts[2]["thought"], true);
}

#[test]
fn a_media_part_counts_against_max_text_bytes() {
    let config = StreamConfig { max_text_bytes: 1000, ..StreamConfig::default() };
    let mut stream = Stream::with_config(Provider::OpenAIChat, config);
    let big = STANDARD.encode(vec![0u8; 900]);
    let body = chat_body(&[json!({"audio": {"data": big}})]);
    let r = stream.feed(&body, |_| {});
    assert!(matches!(r, Err(StreamError::LimitExceeded { limit: StreamLimit::MaxTextBytes, .. })), "{r:?}");
}

#[test]
fn the_ui_holds_media_bytes_within_its_budget() {
    let bytes = some_bytes(5, 3000);
    let deltas: Vec<Value> =
        split(&STANDARD.encode(&bytes), 9, 500).into_iter().map(|p| json!({"audio": {"data": p}})).collect();
    let body = chat_body(&deltas);
    for budget in [usize::MAX, 1000, 0] {
        let mut ui = UiState::with_media_budget(budget);
        let mut stream = Stream::new(Provider::OpenAIChat);
        stream.feed(&body, |e: &StreamEvent<'_>| ui.apply(e, 0)).unwrap();
        stream.finish(|e: &StreamEvent<'_>| ui.apply(e, 0)).unwrap();
        let part = &ui.parts()[0];
        assert_eq!(part.kind, PartKind::Media);
        let m = part.media.as_ref().unwrap();
        assert_eq!(m.received, 3000);
        assert_eq!(m.mime_type, "audio/pcm");
        let held = budget.min(3000);
        assert_eq!(m.data, bytes[..held]);
        assert_eq!(m.truncated, held < 3000);
        let snap = ui.to_json();
        assert_eq!(
            snap["parts"][0]["media"],
            json!({"mime_type": "audio/pcm", "bytes": 3000, "held_bytes": held, "truncated": held < 3000})
        );
    }
}

/// The recorded image-generation streams (vercel/ai fixtures, Apache-2.0;
/// see tests/recordings/README.md). Each partial image is one media part
/// of its `output_format`'s MIME type. Azure's is a whole 1×1 PNG: its
/// bytes are the PNG. OpenAI's recorder cut the base64 short with a `...`
/// inside: an `invalid_base64` warning, no bytes of that piece (never a
/// prefix of an image), the event's text kept as recorded.
#[test]
fn recorded_partial_images() {
    for (name, mime, whole) in [
        ("openai__responses__openai-image-generation-tool.1", "image/webp", false),
        ("azure__azure-image-generation-tool.1", "image/png", true),
    ] {
        let path = format!("{}/tests/recordings/openai_responses/vercel-ai/{name}.sse", env!("CARGO_MANIFEST_DIR"));
        let run = run_all(Provider::OpenAIResponses, &std::fs::read(path).unwrap());
        let starts: Vec<&Value> = named(&run, "part_start").into_iter().filter(|e| e["kind"] == "media").collect();
        assert_eq!(starts.len(), 1, "{name}");
        let part = starts[0]["part"].as_u64().unwrap();
        let end = named(&run, "part_end").into_iter().find(|e| e["part"] == part).unwrap();
        let text = end["content"]["partial_image_b64"].as_str().unwrap();
        let (bytes, mimes) = media(&run, part);
        assert_eq!(warnings(&run).contains(&"invalid_base64".to_owned()), !whole, "{name}");
        if whole {
            assert_eq!(mimes, [mime], "{name}");
            assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
            assert_eq!(bytes, STANDARD.decode(text).unwrap());
        } else {
            assert!(bytes.is_empty() && text.contains("..."), "{name}");
        }
    }
}
