//! Behaviour of the provider streams: the Anthropic state machine table,
//! limits, exact `[DONE]`, errors keeping the fold, memory at rest.

use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream, StreamConfig, StreamError, StreamEvent, StreamLimit};
use ssefold::sse::Event;

fn feed_events(stream: &mut Stream, events: &[(&str, Value)]) -> (Vec<String>, Result<(), StreamError>) {
    let mut names = Vec::new();
    for (name, data) in events {
        let data = data.to_string();
        let r = stream.feed_sse(&Event::new(name, &data, None, None), |e: &StreamEvent<'_>| names.push(label(e)));
        if r.is_err() {
            return (names, r);
        }
    }
    (names, Ok(()))
}

fn label(e: &StreamEvent<'_>) -> String {
    match e {
        StreamEvent::Warning { code, .. } => format!("warning:{code}"),
        other => other.name().to_owned(),
    }
}

fn a(ty: &str, extra: Value) -> (&'static str, Value) {
    let mut v = json!({"type": ty});
    if let (Value::Object(m), Value::Object(x)) = (&mut v, extra) {
        m.extend(x);
    }
    // The SSE event name is irrelevant: the data's type decides.
    ("message", v)
}

fn message_start() -> (&'static str, Value) {
    a(
        "message_start",
        json!({"message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "x",
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
    )
}

fn probes() -> Vec<(&'static str, (&'static str, Value))> {
    vec![
        ("message_start", message_start()),
        ("block_start_0", a("content_block_start", json!({"index": 0, "content_block": {"type": "text", "text": ""}}))),
        ("block_start_1", a("content_block_start", json!({"index": 1, "content_block": {"type": "text", "text": ""}}))),
        ("delta_0", a("content_block_delta", json!({"index": 0, "delta": {"type": "text_delta", "text": "x"}}))),
        ("stop_0", a("content_block_stop", json!({"index": 0}))),
        (
            "message_delta",
            a("message_delta", json!({"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}})),
        ),
        ("message_stop", a("message_stop", json!({}))),
        ("ping", a("ping", json!({}))),
        ("error", a("error", json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}))),
        ("unknown", a("brand_new_event", json!({}))),
    ]
}

/// Every (state, event) pair: the events emitted and whether it is an error.
#[test]
fn anthropic_state_machine_table() {
    let start_block =
        |i: u64| a("content_block_start", json!({"index": i, "content_block": {"type": "text", "text": ""}}));
    let states: Vec<(&str, Vec<(&str, Value)>)> = vec![
        ("idle", vec![]),
        ("block_open", vec![message_start(), start_block(0)]),
        ("block_stopped", vec![message_start(), start_block(0), a("content_block_stop", json!({"index": 0}))]),
        ("stopped", vec![message_start(), a("message_stop", json!({}))]),
        ("errored", vec![message_start(), a("error", json!({"error": {"type": "api_error", "message": "x"}}))]),
    ];
    let w = |c: &str| format!("warning:{c}");
    let ok = |v: &[&str]| (v.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "ok");
    let err = |v: &[&str], e: &'static str| (v.iter().map(|s| s.to_string()).collect::<Vec<_>>(), e);
    let ebs = w("event_before_start");
    let upi = w("unknown_part_index");
    let pae = w("part_already_ended");
    let dat = w("data_after_terminal");
    #[rustfmt::skip]
    type Row<'a> = (&'a str, &'a str, (Vec<String>, &'a str));
    let expected: Vec<Row<'_>> = vec![
        ("idle", "message_start", ok(&["message_start", "usage"])),
        ("idle", "block_start_0", ok(&[&ebs, "part_start"])),
        ("idle", "block_start_1", ok(&[&ebs, &w("unexpected_part_index"), "part_start"])),
        ("idle", "delta_0", ok(&[&ebs, &upi])),
        ("idle", "stop_0", ok(&[&ebs, &upi])),
        ("idle", "message_delta", ok(&[&ebs, "stop_reason", "usage"])),
        // A stray terminal event: not the end (the answer may follow).
        ("idle", "message_stop", ok(&[&w("terminal_before_start")])),
        ("idle", "ping", ok(&[])),
        ("idle", "error", err(&["error"], "provider")),
        ("idle", "unknown", ok(&["unknown"])),
        ("block_open", "message_start", ok(&[&w("duplicate_start")])),
        ("block_open", "block_start_0", ok(&[&w("duplicate_part_index")])),
        ("block_open", "block_start_1", ok(&["part_start"])),
        ("block_open", "delta_0", ok(&["text_delta"])),
        ("block_open", "stop_0", ok(&["part_end"])),
        ("block_open", "message_delta", ok(&["stop_reason", "usage"])),
        ("block_open", "message_stop", ok(&[&w("part_not_ended"), "part_end", "turn_end"])),
        ("block_open", "ping", ok(&[])),
        ("block_open", "error", err(&["part_end", "error"], "provider")),
        ("block_open", "unknown", ok(&["unknown"])),
        ("block_stopped", "message_start", ok(&[&w("duplicate_start")])),
        ("block_stopped", "block_start_0", ok(&[&w("duplicate_part_index")])),
        ("block_stopped", "block_start_1", ok(&["part_start"])),
        ("block_stopped", "delta_0", ok(&[&pae])),
        ("block_stopped", "stop_0", ok(&[&pae])),
        ("block_stopped", "message_delta", ok(&["stop_reason", "usage"])),
        ("block_stopped", "message_stop", ok(&["turn_end"])),
        ("block_stopped", "ping", ok(&[])),
        ("block_stopped", "error", err(&["error"], "provider")),
        ("block_stopped", "unknown", ok(&["unknown"])),
    ];
    let mut checked = 0;
    for (state, prefix) in &states {
        for (probe, event) in probes() {
            let mut stream = Stream::new(Provider::Anthropic);
            let (_, r) = feed_events(&mut stream, prefix);
            let (names, r2) = feed_events(&mut stream, &[event]);
            let got_err = match (&r, &r2) {
                (Err(_), Err(StreamError::Closed)) => "closed",
                (_, Ok(())) => "ok",
                (_, Err(StreamError::Provider(_))) => "provider",
                (_, Err(e)) => panic!("{state}/{probe}: unexpected {e:?}"),
            };
            match *state {
                "stopped" => {
                    assert_eq!((names, got_err), (vec![dat.clone()], "ok"), "{state}/{probe}");
                }
                "errored" => assert_eq!((names, got_err), (vec![], "closed"), "{state}/{probe}"),
                _ => {
                    let want = expected.iter().find(|(s, p, _)| s == state && *p == probe).unwrap();
                    assert_eq!((names, got_err), (want.2 .0.clone(), want.2 .1), "{state}/{probe}");
                }
            }
            // Whatever happened, the folded message is still there and no panic.
            let _ = stream.message();
            checked += 1;
        }
    }
    assert_eq!(checked, 50);
}

#[test]
fn anthropic_output_tokens_replace_and_omitted_usage_fields_keep() {
    let mut s = Stream::new(Provider::Anthropic);
    let (_, r) = feed_events(
        &mut s,
        &[
            message_start(),
            a("message_delta", json!({"delta": {}, "usage": {"output_tokens": 10}})),
            a("message_delta", json!({"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 12}})),
        ],
    );
    r.unwrap();
    assert_eq!(s.message()["usage"], json!({"input_tokens": 5, "output_tokens": 12}));
}

#[test]
fn limits_are_typed_errors_and_keep_the_fold() {
    let config = StreamConfig { max_parts: 1, ..StreamConfig::default() };
    let mut s = Stream::with_config(Provider::Anthropic, config);
    let block = |i: u64| a("content_block_start", json!({"index": i, "content_block": {"type": "text", "text": "t"}}));
    let (_, r) = feed_events(&mut s, &[message_start(), block(0), block(1)]);
    assert_eq!(r, Err(StreamError::LimitExceeded { limit: StreamLimit::MaxParts, max: 1 }));
    assert_eq!(s.message()["content"][0]["text"], "t");
    assert_eq!(s.feed(b"data: {}\n\n", |_| {}), Err(StreamError::Closed));
    assert_eq!(s.finish(|_| {}), Err(StreamError::Closed));

    let config = StreamConfig { max_tool_args_bytes: 8, ..StreamConfig::default() };
    let mut s = Stream::with_config(Provider::Anthropic, config);
    let tool = a(
        "content_block_start",
        json!({"index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}),
    );
    let frag = |f: &str| {
        a("content_block_delta", json!({"index": 0, "delta": {"type": "input_json_delta", "partial_json": f}}))
    };
    let (_, r) = feed_events(&mut s, &[message_start(), tool, frag("{\"a\":"), frag("\"long\"}")]);
    assert_eq!(r, Err(StreamError::LimitExceeded { limit: StreamLimit::MaxToolArgsBytes, max: 8 }));

    let config = StreamConfig { max_text_bytes: 4, ..StreamConfig::default() };
    let mut s = Stream::with_config(Provider::OpenAIChat, config);
    let r = s.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"}}]}\n\n", |_| {});
    assert_eq!(r, Err(StreamError::LimitExceeded { limit: StreamLimit::MaxTextBytes, max: 4 }));

    let config = StreamConfig { max_choices: 2, ..StreamConfig::default() };
    let mut s = Stream::with_config(Provider::OpenAIChat, config);
    let r = s.feed(b"data: {\"choices\":[{\"index\":0},{\"index\":1},{\"index\":2}]}\n\n", |_| {});
    assert_eq!(r, Err(StreamError::LimitExceeded { limit: StreamLimit::MaxChoices, max: 2 }));
}

#[test]
fn done_is_matched_exactly() {
    let chunk = b"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n";
    for (terminator, terminated) in
        [(&b"data: [DONE]\n\n"[..], true), (b"data: [DONE] \n\n", false), (b"data: [done]\n\n", false)]
    {
        let mut s = Stream::new(Provider::OpenAIChat);
        s.feed(chunk, |_| {}).unwrap();
        let r = s.feed(terminator, |_| {});
        assert_eq!(r.is_ok(), terminated, "{:?}", String::from_utf8_lossy(terminator));
        assert_eq!(s.is_terminated(), terminated);
        if !terminated {
            assert!(matches!(r, Err(StreamError::InvalidJson { .. })), "{r:?}");
        }
        assert_eq!(s.message()["choices"][0]["message"]["content"], "a");
    }
}

#[test]
fn a_wrong_explicit_dialect_is_refused_at_the_first_event() {
    let fixture = |p: &str| std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(p)).unwrap();
    let anthropic = fixture("tests/fixtures/anthropic/interleaved_tools.sse");
    let chat = fixture("tests/fixtures/openai_chat/parallel_tools.sse");
    let responses = fixture("tests/fixtures/openai_responses/tool_streams.sse");
    let cases = [
        (Provider::OpenAIChat, &anthropic, Provider::Anthropic),
        (Provider::OpenAIResponses, &anthropic, Provider::Anthropic),
        (Provider::Anthropic, &responses, Provider::OpenAIResponses),
        (Provider::OpenAIChat, &responses, Provider::OpenAIResponses),
        (Provider::Anthropic, &chat, Provider::OpenAIChat),
        (Provider::OpenAIResponses, &chat, Provider::OpenAIChat),
    ];
    for (given, bytes, seen) in cases {
        let mut s = Stream::new(given);
        let mut events = 0;
        let r = s.feed(bytes, |_| events += 1);
        assert_eq!(r, Err(StreamError::DialectMismatch { expected: given, detected: seen }), "{given:?}");
        assert_eq!(events, 0, "nothing folded from a mismatched stream");
        assert_eq!(s.feed(b"", |_| {}), Err(StreamError::Closed));
        let text = r.unwrap_err().to_string();
        assert!(text.contains(seen.name()) && text.contains("auto"), "{text}");
    }
    // The right dialect, errors and non-JSON data are never a mismatch.
    for (given, bytes) in [(Provider::Anthropic, &anthropic), (Provider::OpenAIChat, &chat)] {
        Stream::new(given).feed(bytes, |_| {}).unwrap();
    }
    let error = b"data: {\"error\":{\"message\":\"m\",\"type\":\"t\"}}\n\n";
    for bytes in [&error[..], b"data: [DONE]\n\n"] {
        let r = Stream::new(Provider::Anthropic).feed(bytes, |_| {});
        assert!(!matches!(r, Err(StreamError::DialectMismatch { .. })), "{r:?}");
    }
    // Once the answer started, later events are the dialect's business.
    let mut s = Stream::new(Provider::Anthropic);
    s.feed(b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n", |_| {}).unwrap();
    s.feed(b"data: {\"type\":\"response.created\",\"response\":{}}\n\n", |_| {}).unwrap();
}

#[test]
fn auto_detection() {
    let cases: [(&[u8], Result<Provider, StreamError>); 6] = [
        (b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n", Ok(Provider::Anthropic)),
        (b"data: {\"type\":\"response.created\",\"response\":{}}\n\n", Ok(Provider::OpenAIResponses)),
        (b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\n", Ok(Provider::OpenAIChat)),
        (
            b"data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"o\"}}\n\n",
            Err(StreamError::Closed),
        ),
        (b"data: {\"hello\":1}\n\n", Err(StreamError::UnknownDialect)),
        (b"data: not json\n\n", Err(StreamError::UnknownDialect)),
    ];
    for (bytes, want) in cases {
        let mut s = Stream::new(Provider::Auto);
        let r = s.feed(bytes, |_| {});
        match want {
            Ok(p) => {
                r.unwrap();
                assert_eq!(s.provider(), p);
            }
            Err(StreamError::Closed) => {
                assert!(
                    matches!(r, Err(StreamError::Provider(ref e)) if e.error_type == "overloaded_error" && !e.output_emitted)
                );
                assert_eq!(s.provider(), Provider::Anthropic);
            }
            Err(e) => assert_eq!(r, Err(e)),
        }
    }
}

#[test]
fn memory_at_rest_is_small() {
    for p in [Provider::Auto, Provider::Anthropic, Provider::OpenAIChat, Provider::OpenAIResponses] {
        let s = Stream::new(p);
        eprintln!("{p:?} at rest: {} bytes", s.memory_footprint());
        assert!(s.memory_footprint() <= 2048, "{p:?}: {}", s.memory_footprint());
    }
    // After folding, the footprint is the content plus a bounded overhead.
    let mut s = Stream::new(Provider::OpenAIChat);
    let text = "x".repeat(100_000);
    let chunk = format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {"content": text}}]}));
    s.feed(chunk.as_bytes(), |_| {}).unwrap();
    let f = s.memory_footprint();
    assert!((100_000..100_000 + 300_000).contains(&f), "{f}");
}

#[test]
fn event_names_are_stable() {
    let v = Value::Null;
    let err = ssefold::providers::ProviderError {
        error_type: "t".into(),
        message: "m".into(),
        request_id: None,
        output_emitted: false,
    };
    let path_event = ssefold::json::PathEvent::ContainerStart { path: &[], kind: ssefold::json::ContainerKind::Object };
    let all = [
        StreamEvent::MessageStart { provider: "anthropic", message: &v },
        StreamEvent::PartStart {
            part: 0,
            kind: ssefold::providers::PartKind::Text,
            choice: 0,
            index: 0,
            provider_type: "text",
            tool_call: None,
        },
        StreamEvent::TextDelta { part: 0, text: "" },
        StreamEvent::ToolArgsDelta { part: 0, json: "" },
        StreamEvent::ToolArgsPath { part: 0, event: &path_event },
        StreamEvent::PartMetadata { part: 0, key: "id", value: &v },
        StreamEvent::PartEnd {
            part: 0,
            kind: ssefold::providers::PartKind::ToolCall,
            outcome: ssefold::providers::PartOutcome::Complete,
            content: &v,
            tool_call: None,
        },
        StreamEvent::Usage { usage: &v },
        StreamEvent::StopReason { choice: 0, reason: "stop" },
        StreamEvent::TurnEnd { stop_reason: None },
        StreamEvent::Error { error: &err },
        StreamEvent::Warning { code: ssefold::providers::WarningCode::InvalidEvent, message: "m" },
        StreamEvent::Unknown { scope: "event", provider_type: "x", data: "{}" },
    ];
    let names: Vec<&str> = all.iter().map(|e| e.name()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "part_start",
            "text_delta",
            "tool_args_delta",
            "tool_args_path",
            "part_metadata",
            "part_end",
            "usage",
            "stop_reason",
            "turn_end",
            "error",
            "warning",
            "unknown"
        ]
    );
    for e in &all {
        assert_eq!(e.to_json()["event"], e.name());
    }
}

#[test]
fn feed_sse_with_a_host_decoder_gives_the_same_events() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/anthropic/interleaved_tools.sse");
    let bytes = std::fs::read(path).unwrap();
    let mut via_bytes = Vec::new();
    let mut s = Stream::new(Provider::Anthropic);
    s.feed(&bytes, |e| via_bytes.push(e.to_json())).unwrap();
    s.finish(|e| via_bytes.push(e.to_json())).unwrap();

    let mut via_events = Vec::new();
    let mut s2 = Stream::new(Provider::Anthropic);
    let mut decoder = ssefold::sse::Decoder::new();
    let mut events = decoder.feed(&bytes);
    while let Some(e) = events.next_event() {
        s2.feed_sse(&e.unwrap(), |ev| via_events.push(ev.to_json())).unwrap();
    }
    s2.finish(|e| via_events.push(e.to_json())).unwrap();
    assert_eq!(via_bytes, via_events);
    assert_eq!(s.message(), s2.message());
    assert!(via_bytes.len() > 30);
}

#[test]
fn odd_shapes_are_warnings_or_unknown_not_fatal() {
    let mut s = Stream::new(Provider::Anthropic);
    let (names, r) = feed_events(
        &mut s,
        &[
            message_start(),
            a("content_block_delta", json!({"index": 0, "delta": "not an object"})),
            a("future_event", json!({"delta": 42, "index": "x"})),
            a("content_block_start", json!({"index": 0, "content_block": {"type": "text", "text": "ok"}})),
        ],
    );
    r.unwrap();
    assert_eq!(names, ["message_start", "usage", "warning:invalid_event", "unknown", "part_start", "text_delta"]);
    assert_eq!(s.message()["content"][0]["text"], "ok");
}

/// Every turn of the shared synthetic corpora folds cleanly: no warning, no
/// error, tool calls ready, the text equal to its deltas.
#[test]
fn shared_corpora_fold_cleanly() {
    for (provider, bytes) in [
        (Provider::Anthropic, ssefold_corpus::anthropic_text(300_000)),
        (Provider::Anthropic, ssefold_corpus::anthropic_tool_use(300_000)),
        (Provider::OpenAIChat, ssefold_corpus::openai_chat_parallel_tools(300_000)),
    ] {
        let text = std::str::from_utf8(&bytes).unwrap();
        let turns: Vec<&str> = if provider == Provider::Anthropic {
            text.split_inclusive("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n").collect()
        } else {
            text.split_inclusive("data: [DONE]\n\n").collect()
        };
        assert!(turns.len() > 2);
        for turn in turns {
            let mut s = Stream::new(provider);
            let mut events = Vec::new();
            s.feed(turn.as_bytes(), |e| events.push(e.to_json())).unwrap();
            s.finish(|e| events.push(e.to_json())).unwrap();
            assert!(events.iter().all(|e| e["event"] != "warning" && e["event"] != "unknown"), "{events:?}");
            for e in events.iter().filter(|e| e["event"] == "part_end") {
                assert_eq!(e["outcome"], "complete");
            }
            let deltas: String =
                events.iter().filter(|e| e["event"] == "text_delta").map(|e| e["text"].as_str().unwrap()).collect();
            let m = s.message();
            let folded: String = if provider == Provider::Anthropic {
                m["content"].as_array().unwrap().iter().filter_map(|b| b["text"].as_str()).collect()
            } else {
                m["choices"][0]["message"]["content"].as_str().unwrap_or("").to_owned()
            };
            assert_eq!(deltas, folded);
        }
    }
}

#[test]
fn absurd_indexes_do_not_allocate() {
    let mut s = Stream::new(Provider::OpenAIResponses);
    let body = concat!(
        "data: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"output\":[]}}\n\n",
        "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"content\":[]}}\n\n",
        "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":9000000000000,\"delta\":\"x\"}\n\n",
        "data: {\"type\":\"response.output_text.delta\",\"output_index\":18446744073709551615,\"content_index\":0,\"delta\":\"y\"}\n\n",
    );
    let mut codes = Vec::new();
    s.feed(body.as_bytes(), |e| {
        if let StreamEvent::Warning { code, .. } = e {
            codes.push(*code)
        }
    })
    .unwrap();
    assert_eq!(codes.iter().map(|c| c.name()).collect::<Vec<_>>(), ["invalid_event", "unknown_part_index"]);
    assert_eq!(s.message()["output"][0]["content"], json!([]));
    assert!(s.memory_footprint() < 10_000);
    // Anthropic and chat store parts by index without filling gaps.
    let mut a = Stream::new(Provider::Anthropic);
    let (_, r) = feed_events(
        &mut a,
        &[
            message_start(),
            (
                "m",
                json!({"type": "content_block_start", "index": u64::MAX, "content_block": {"type": "text", "text": ""}}),
            ),
        ],
    );
    r.unwrap();
    assert_eq!(a.message()["content"].as_array().unwrap().len(), 1);
    let mut c = Stream::new(Provider::OpenAIChat);
    c.feed(b"data: {\"choices\":[{\"index\":4000000000,\"delta\":{\"tool_calls\":[{\"index\":4000000000,\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n", |_| {}).unwrap();
    assert_eq!(c.message()["choices"][0]["index"], 4000000000u64);
}

#[test]
fn plain_text_error_event_is_a_provider_error() {
    for provider in [Provider::Anthropic, Provider::OpenAIChat, Provider::OpenAIResponses, Provider::Auto] {
        let mut s = Stream::new(provider);
        let mut names = Vec::new();
        let mut body = Vec::new();
        if provider == Provider::Anthropic {
            body.extend_from_slice(
                b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\n",
            );
            body.extend_from_slice(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"partial\"}}\n\n");
        }
        body.extend_from_slice(b"event: error\ndata: upstream connect error or disconnect/reset before headers\n\n");
        let r = s.feed(&body, |e| names.push(label(e)));
        let Err(StreamError::Provider(err)) = r else { panic!("{provider:?}: {r:?}") };
        assert_eq!(err.message, "upstream connect error or disconnect/reset before headers");
        assert_eq!(err.output_emitted, provider == Provider::Anthropic);
        assert_eq!(names.last().map(String::as_str), Some("error"), "{provider:?}");
        if provider == Provider::Anthropic {
            assert!(names.contains(&"part_end".to_owned()));
            assert_eq!(s.message()["content"][0]["text"], "partial");
        }
        assert_eq!(s.finish(|_| {}), Err(StreamError::Closed));
    }
}

/// Numbers in provider payloads fold to the nearest `f64`, as Python's
/// `json`, jiter and the SDKs read them (serde_json's default float parser
/// is off by an ulp on some inputs: its `float_roundtrip` feature is on).
#[test]
fn floats_in_payloads_are_correctly_rounded() {
    let body = concat!(
        "data: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\",\"object\":\"response\",",
        "\"output\":[],\"moderation\":{\"violence\":0.000012339457598623173}}}\n\n",
    );
    let mut stream = Stream::new(Provider::OpenAIResponses);
    stream.feed(body.as_bytes(), |_| {}).unwrap();
    let v = stream.message()["moderation"]["violence"].as_f64().unwrap();
    assert_eq!(v.to_bits(), 1.2339457598623173e-05_f64.to_bits());
    assert_eq!(v.to_bits(), "0.000012339457598623173".parse::<f64>().unwrap().to_bits());
}
