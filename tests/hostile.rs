//! Hostile input and scale: inputs a broken or malicious server can send,
//! generated here (no committed blobs). The same cases are run through the
//! C ABI (tests/c), Python (python/tests/test_hostile.py) and Go
//! (bindings/go/hostile_test.go).

use std::io::Write;

use ssefold::reconnect::{Decision, ReconnectPolicy, Reconnector, StreamEnd, DEFAULT_MAX_SERVER_RETRY_MS};
use ssefold::sse::{DecodeError, Decoder, DecoderConfig, DEFAULT_MAX_ID_LEN};

/// One `id:` line of `id_len` bytes, then `events` small events (the
/// reliability issue's reproducer: 1 MiB id, 20 000 events, 1.2 MB input).
fn long_id_then_events(id_len: usize, events: usize) -> Vec<u8> {
    let mut input = Vec::with_capacity(id_len + 16 * events + 16);
    input.extend_from_slice(b"id: ");
    input.resize(4 + id_len, b'x');
    input.extend_from_slice(b"\n");
    for i in 0..events {
        write!(input, "data: {i}\n\n").unwrap();
    }
    input
}

#[test]
fn a_long_id_is_refused_by_default_and_decoding_goes_on() {
    let input = long_id_then_events(1 << 20, 20_000);
    let mut d = Decoder::new();
    let (mut events, mut errors) = (0, Vec::new());
    for chunk in input.chunks(64 << 10) {
        d.feed_each(chunk, |r| match r {
            Ok(e) => {
                assert_eq!(e.id(), None, "the refused id is not in force");
                events += 1;
            }
            Err(e) => errors.push(e),
        });
    }
    // The id's block (the id line and the first event, which has no blank
    // line between) is skipped, like the other limits.
    assert_eq!(errors, [DecodeError::IdTooLong { limit: DEFAULT_MAX_ID_LEN, offset: 0 }]);
    assert_eq!(events, 19_999);
    assert_eq!(d.last_event_id(), None);
    // What is held is the line buffer that assembled the id line across
    // chunks (bounded by max_line_len), not a copy per event.
    assert!(d.memory_footprint() <= 3 << 20, "{}", d.memory_footprint());
}

#[test]
fn an_id_at_the_limit_is_accepted_one_past_is_refused_and_the_id_in_force_is_kept() {
    let config = DecoderConfig { max_id_len: 8, ..DecoderConfig::default() };
    let mut d = Decoder::with_config(config);
    let mut out = Vec::new();
    d.feed_each(b"id: 12345678\ndata: a\n\nid: 123456789\ndata: b\n\ndata: c\n\n", |r| {
        out.push(r.map(|e| (e.data().to_owned(), e.id().map(str::to_owned))))
    });
    let some = |d: &str| Ok((d.to_owned(), Some("12345678".to_owned())));
    assert_eq!(out, [some("a"), Err(DecodeError::IdTooLong { limit: 8, offset: 22 }), some("c")]);
    assert_eq!(d.last_event_id(), Some("12345678"));
}

#[test]
fn events_share_one_id_generation_until_the_id_changes() {
    // Raised limit: the 1 MiB id is accepted; every event carries it, and
    // the generation tells a binding it need not copy it again.
    let config = DecoderConfig { max_id_len: 2 << 20, ..DecoderConfig::default() };
    let mut d = Decoder::with_config(config);
    let mut gens = Vec::new();
    let input = long_id_then_events(1 << 20, 1000);
    for chunk in input.chunks(4096) {
        d.feed_each(chunk, |r| {
            let e = r.unwrap();
            assert_eq!(e.id().map(str::len), Some(1 << 20));
            gens.push(e.id_generation());
        });
    }
    assert_eq!(gens.len(), 1000);
    assert!(gens.iter().all(|g| *g == gens[0]));
    // A new id (even of the same length, in the same buffer) changes it.
    let mut next = Vec::new();
    d.feed_each(b"id: 1\ndata: a\n\nid: 2\ndata: b\n\ndata: c\n\n", |r| next.push(r.unwrap().id_generation()));
    assert!(next[0] != gens[0] && next[1] != next[0] && next[2] == next[1], "{next:?}");
    // An empty id (reset) also changes it.
    d.feed_each(b"id\ndata: z\n\n", |r| assert!(r.unwrap().id_generation() != next[2]));
}

#[test]
fn a_huge_server_retry_is_capped_by_the_policy() {
    for (text, parsed) in
        [("99999999999", 99_999_999_999), ("18446744073709551615", u64::MAX), ("1".repeat(40).as_str(), u64::MAX)]
    {
        let mut d = Decoder::new();
        d.feed_each(format!("retry: {text}\ndata: x\n\n").as_bytes(), |r| assert_eq!(r.unwrap().retry(), Some(parsed)));
        let retry = d.reconnection_time();
        assert_eq!(retry, Some(parsed));

        let mut r = Reconnector::new(ReconnectPolicy::default());
        r.on_connected(0);
        r.on_event(None, None, retry);
        match r.on_end(StreamEnd::EndedEarly) {
            Decision::Reconnect { delay_ms, .. } => assert_eq!(delay_ms, DEFAULT_MAX_SERVER_RETRY_MS),
            other => panic!("{other:?}"),
        }
        let policy = ReconnectPolicy { max_server_retry_ms: 5000, jitter: 0.5, ..ReconnectPolicy::default() };
        assert_eq!(policy.next_delay_ms(0, retry), 5000);
        assert_eq!(policy.jittered_delay_ms(0, retry, 0.9), 5000, "a server value is not jittered");
    }
    // Below the cap the server's value still wins over the backoff.
    assert_eq!(ReconnectPolicy::default().next_delay_ms(3, Some(250)), 250);
    assert_eq!(DEFAULT_MAX_SERVER_RETRY_MS, 10 * 60 * 1000);
}

#[test]
fn memory_footprint_of_an_idle_decoder_and_after_its_first_event() {
    let mut d = Decoder::new();
    let idle = d.memory_footprint();
    d.feed_each(b"id: 1\nevent: delta\ndata: {\"text\": \"hi\"}\n\n", |r| {
        r.unwrap();
    });
    let first = d.memory_footprint();
    println!("decoder: idle {idle} bytes, after its first event {first} bytes");
    assert!(idle <= 512 && first <= 1024, "{idle} {first}");
}

#[test]
fn memory_footprint_of_an_idle_stream_and_after_its_first_event() {
    use ssefold::providers::{Provider, Stream};
    // BENCHMARKS.md "Hostile input and scale" records these figures.
    let first: &[u8] = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n";
    for p in [Provider::Anthropic, Provider::Auto] {
        let mut s = Stream::new(p);
        let idle = s.memory_footprint();
        let mut n = 0;
        s.feed(first, |_| n += 1).unwrap();
        let after = s.memory_footprint();
        println!("{p:?} stream: idle {idle} bytes, after its first event {after} bytes ({n} normalized events)");
        assert!(n > 0 && idle <= 2048 && after <= 4096, "{idle} {after}");
    }
}

// ---- Lone surrogate escapes and stray terminal events (reliability issue) ----

mod provider_streams {
    use serde_json::{json, Value};
    use ssefold::providers::{Provider, Stream, StreamError};

    /// Folds `body` (fed whole, then byte by byte: the same result), returns
    /// the normalized events (wire form), the `finish` result and the message.
    pub fn fold(provider: Provider, body: &str) -> (Vec<Value>, Result<(), StreamError>, Value) {
        let run = |chunk: usize| {
            let mut s = Stream::new(provider);
            let mut events = Vec::new();
            let mut r = Ok(());
            for c in body.as_bytes().chunks(chunk) {
                r = s.feed(c, |e| events.push(e.to_json()));
                if r.is_err() {
                    break;
                }
            }
            if r.is_ok() {
                r = s.finish(|e| events.push(e.to_json()));
            }
            (events, r, s.message())
        };
        let whole = run(body.len().max(1));
        assert_eq!(whole, run(7), "chunking changed the fold");
        whole
    }

    pub fn warnings(events: &[Value], code: &str) -> usize {
        events.iter().filter(|e| e["event"] == "warning" && e["code"] == code).count()
    }

    fn sse(events: &[(&str, String)]) -> String {
        events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
    }

    /// An Anthropic turn with one block of `block_type` whose delta field
    /// `field` (of delta type `dty`) is the JSON string literal `lit`.
    pub fn anthropic(block_type: &str, field: &str, dty: &str, lit: &str) -> String {
        let start = json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",
            "model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}});
        let block = json!({"type":"content_block_start","index":0,"content_block":{"type":block_type, field: ""}});
        let delta = format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"{dty}","{field}":{lit}}}}}"#);
        let after = r#"{"type":"content_block_delta","index":0,"delta":{"type":"DTY","FIELD":" after"}}"#
            .replace("DTY", dty)
            .replace("FIELD", field);
        sse(&[
            ("message_start", start.to_string()),
            ("content_block_start", block.to_string()),
            ("content_block_delta", delta),
            ("content_block_delta", after),
            ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#.into()),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}"#.into(),
            ),
            ("message_stop", r#"{"type":"message_stop"}"#.into()),
        ])
    }

    /// An OpenAI Chat turn whose delta member `field` is `lit`, then " after".
    pub fn chat(field: &str, lit: &str) -> String {
        let chunk = |delta: String, finish: &str| {
            format!(
                r#"data: {{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]}}"#
            ) + "\n\n"
        };
        [
            chunk(r#"{"role":"assistant","content":""}"#.into(), "null"),
            chunk(format!(r#"{{"{field}":{lit}}}"#), "null"),
            chunk(format!(r#"{{"{field}":" after"}}"#), "null"),
            chunk("{}".into(), r#""stop""#),
            "data: [DONE]\n\n".into(),
        ]
        .concat()
    }

    /// An OpenAI Responses turn with one item of `item_type` whose part
    /// (`part_type`) streams `delta_event` deltas: `lit`, then " after".
    pub fn responses(item_type: &str, part_type: &str, delta_event: &str, lit: &str) -> String {
        let resp = |status: &str| json!({"id":"resp_1","object":"response","status":status,"model":"m","output":[]});
        let item = json!({"id":"it_1","type":item_type,"status":"in_progress","content":[],"summary":[]});
        let (index_key, added, done) = if delta_event.contains("summary") {
            ("summary_index", "response.reasoning_summary_part.added", "response.reasoning_summary_part.done")
        } else {
            ("content_index", "response.content_part.added", "response.content_part.done")
        };
        let part = json!({"type": part_type, "text": ""});
        let mut seq = 0;
        let mut ev = |ty: &str, mut body: Value| {
            seq += 1;
            body["type"] = ty.into();
            body["sequence_number"] = seq.into();
            (ty.to_owned(), body.to_string())
        };
        let delta = |ev: &mut dyn FnMut(&str, Value) -> (String, String), lit: &str| {
            let (ty, body) =
                ev(delta_event, json!({"item_id":"it_1","output_index":0, index_key:0, "delta":"PLACEHOLDER"}));
            (ty, body.replace(r#""PLACEHOLDER""#, lit))
        };
        let events = [
            ev("response.created", json!({"response": resp("in_progress")})),
            ev("response.output_item.added", json!({"output_index":0,"item":item})),
            ev(added, json!({"item_id":"it_1","output_index":0, index_key:0, "part":part})),
            delta(&mut ev, lit),
            delta(&mut ev, r#"" after""#),
            ev(done, json!({"item_id":"it_1","output_index":0, index_key:0})),
            ev("response.completed", json!({"response": resp("completed")})),
        ];
        events.iter().map(|(n, d)| format!("event: {n}\ndata: {d}\n\n")).collect()
    }

    /// The text of every `text_delta`, concatenated.
    pub fn streamed_text(events: &[Value]) -> String {
        events.iter().filter(|e| e["event"] == "text_delta").map(|e| e["text"].as_str().unwrap()).collect()
    }
}

use provider_streams::{fold, streamed_text, warnings};
use ssefold::providers::Provider;

/// Every streamed text kind of every dialect, with a lone surrogate escape
/// in its delta (`"broken emoji: \ud83d"`): U+FFFD, one `lone_surrogate`
/// warning, and the rest of the stream folded.
#[test]
fn a_lone_surrogate_in_a_text_delta_is_u_fffd_with_a_warning_in_every_dialect() {
    type Make = Box<dyn Fn(&str) -> String>;
    let cases: Vec<(Provider, &str, Make)> = vec![
        (Provider::Anthropic, "text", Box::new(|l| provider_streams::anthropic("text", "text", "text_delta", l))),
        (
            Provider::Anthropic,
            "thinking",
            Box::new(|l| provider_streams::anthropic("thinking", "thinking", "thinking_delta", l)),
        ),
        (Provider::OpenAIChat, "content", Box::new(|l| provider_streams::chat("content", l))),
        (Provider::OpenAIChat, "reasoning_content", Box::new(|l| provider_streams::chat("reasoning_content", l))),
        (Provider::OpenAIChat, "reasoning", Box::new(|l| provider_streams::chat("reasoning", l))),
        (Provider::OpenAIChat, "refusal", Box::new(|l| provider_streams::chat("refusal", l))),
        (
            Provider::OpenAIResponses,
            "output_text",
            Box::new(|l| provider_streams::responses("message", "output_text", "response.output_text.delta", l)),
        ),
        (
            Provider::OpenAIResponses,
            "refusal",
            Box::new(|l| provider_streams::responses("message", "refusal", "response.refusal.delta", l)),
        ),
        (
            Provider::OpenAIResponses,
            "reasoning_text",
            Box::new(|l| {
                provider_streams::responses("reasoning", "reasoning_text", "response.reasoning_text.delta", l)
            }),
        ),
        (
            Provider::OpenAIResponses,
            "summary_text",
            Box::new(|l| {
                provider_streams::responses("reasoning", "summary_text", "response.reasoning_summary_text.delta", l)
            }),
        ),
    ];
    for (provider, what, make) in &cases {
        for (lit, want, n) in [
            (r#""broken emoji: \ud83d""#, "broken emoji: \u{FFFD}", 1),
            (r#""\udc00 low first""#, "\u{FFFD} low first", 1),
            (r#""\ud83d\ud83d\ude00 \uDE00\uD83D""#, "\u{FFFD}\u{1F600} \u{FFFD}\u{FFFD}", 1),
            // A pair split over two escapes is not lone: no warning.
            (r#""ok \ud83d\ude00""#, "ok \u{1F600}", 0),
        ] {
            for p in [*provider, Provider::Auto] {
                let body = make(lit);
                let (events, end, message) = fold(p, &body);
                assert_eq!(end, Ok(()), "{provider:?} {what} {lit}: {events:?}");
                assert_eq!(warnings(&events, "lone_surrogate"), n, "{provider:?} {what} {lit}: {events:?}");
                assert_eq!(streamed_text(&events), format!("{want} after"), "{provider:?} {what} {lit}");
                assert!(message.to_string().contains(&format!("{want} after")), "{provider:?} {what}: {message}");
                // Equal to the same stream with `\uFFFD` written in place.
                let fixed = lit
                    .replace(r#"\ud83d\ude00"#, "PAIR")
                    .replace(r#"\ud83d"#, r#"\uFFFD"#)
                    .replace(r#"\udc00"#, r#"\uFFFD"#)
                    .replace(r#"\uDE00"#, r#"\uFFFD"#)
                    .replace(r#"\uD83D"#, r#"\uFFFD"#)
                    .replace("PAIR", r#"\ud83d\ude00"#);
                let (clean, _, clean_message) = fold(p, &make(&fixed));
                let without: Vec<_> = events.iter().filter(|e| e["code"] != "lone_surrogate").cloned().collect();
                assert_eq!(without, clean, "{provider:?} {what} {lit}");
                assert_eq!(message, clean_message);
            }
        }
    }
}

/// A lone surrogate anywhere else in an event (ids, names, metadata, the
/// whole-event `Value` parses): never fatal, U+FFFD, a warning.
#[test]
fn a_lone_surrogate_anywhere_in_an_event_is_not_fatal() {
    // Anthropic: in message_start's id (a whole-event Value parse), in a
    // signature (the typed head), in a tool input fragment.
    let body = provider_streams::anthropic("text", "text", "text_delta", r#""x""#)
        .replace(r#""id":"msg_1""#, r#""id":"msg_\ud83d""#)
        .replace(r#""stop_reason":"end_turn""#, r#""stop_reason":"end_turn","note":"\udfff""#);
    let (events, end, message) = fold(Provider::Anthropic, &body);
    assert_eq!(end, Ok(()), "{events:?}");
    assert_eq!(warnings(&events, "lone_surrogate"), 2, "{events:?}");
    assert_eq!(message["id"], "msg_\u{FFFD}");
    assert_eq!(message["content"][0]["text"], "x after");
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\\ud800\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\": \\\"\\ud800\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let (events, end, message) = fold(Provider::Auto, body);
    assert_eq!(end, Ok(()), "{events:?}");
    assert_eq!(warnings(&events, "lone_surrogate"), 2, "{events:?}");
    assert_eq!(message["content"][0]["signature"], "s\u{FFFD}");
    assert_eq!(message["content"][1]["input"]["a"], "\u{FFFD}");

    // OpenAI Chat: in the model (a top member), in tool arguments, in usage.
    let body = provider_streams::chat("content", r#""x""#)
        .replacen(r#""model":"m""#, r#""model":"m\ud83d""#, 1)
        .replace("data: [DONE]", "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"note\":\"\\udc00\",\"total_tokens\":3}}\n\ndata: [DONE]");
    let (events, end, message) = fold(Provider::OpenAIChat, &body);
    assert_eq!(end, Ok(()), "{events:?}");
    assert_eq!(warnings(&events, "lone_surrogate"), 2, "{events:?}");
    assert_eq!(message["choices"][0]["message"]["content"], "x after");
    assert_eq!(message["usage"]["note"], "\u{FFFD}");

    // OpenAI Chat: in a tool call's id and name (members a malformed value
    // would drop): U+FFFD, kept.
    let call = r#"{"tool_calls":[{"index":0,"id":"call_\ud83d","type":"function","function":{"name":"f\udc00","arguments":"{\"a\":1}"}}]}"#;
    let body = provider_streams::chat("content", r#""x""#).replacen(r#"{"content":" after"}"#, call, 1);
    let (events, end, message) = fold(Provider::OpenAIChat, &body);
    assert_eq!(end, Ok(()), "{events:?}");
    assert_eq!(warnings(&events, "lone_surrogate"), 1, "{events:?}");
    assert_eq!(warnings(&events, "invalid_event"), 0, "{events:?}");
    let tc = &message["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(tc["id"], "call_\u{FFFD}");
    assert_eq!(tc["function"]["name"], "f\u{FFFD}");
    assert_eq!(tc["function"]["arguments"], r#"{"a":1}"#);

    // OpenAI Responses: in the created response (a Value parse).
    let body = provider_streams::responses("message", "output_text", "response.output_text.delta", r#""x""#).replacen(
        r#""model":"m""#,
        r#""model":"\ud800m""#,
        1,
    );
    let (events, end, message) = fold(Provider::Auto, &body);
    assert_eq!(end, Ok(()), "{events:?}");
    assert_eq!(warnings(&events, "lone_surrogate"), 1, "{events:?}");
    assert_eq!(message["output"][0]["content"][0]["text"], "x after");
}

/// A stray terminal event first (`message_stop`, `[DONE]`, a bare
/// `response.completed`) is a `terminal_before_start` warning, not the end:
/// the answer after it is folded.
#[test]
fn a_terminal_event_before_the_answer_started_is_a_warning_not_the_end() {
    let stray_stop = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let cases = [
        (
            Provider::Anthropic,
            stray_stop.to_owned() + &provider_streams::anthropic("text", "text", "text_delta", r#""hi""#),
        ),
        (Provider::Auto, stray_stop.to_owned() + &provider_streams::anthropic("text", "text", "text_delta", r#""hi""#)),
        (Provider::OpenAIChat, "data: [DONE]\n\n".to_owned() + &provider_streams::chat("content", r#""hi""#)),
        (Provider::Auto, "data: [DONE]\n\n".to_owned() + &provider_streams::chat("content", r#""hi""#)),
        // A stray [DONE] names no dialect: an Anthropic answer after it.
        (
            Provider::Auto,
            "data: [DONE]\n\n".to_owned() + &provider_streams::anthropic("text", "text", "text_delta", r#""hi""#),
        ),
        (
            Provider::OpenAIResponses,
            "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":0}\n\n".to_owned()
                + &provider_streams::responses("message", "output_text", "response.output_text.delta", r#""hi""#),
        ),
    ];
    for (p, body) in &cases {
        let (events, end, message) = fold(*p, body);
        assert_eq!(end, Ok(()), "{p:?}: {events:?}");
        assert_eq!(warnings(&events, "terminal_before_start"), 1, "{p:?}: {events:?}");
        assert_eq!(streamed_text(&events), "hi after", "{p:?}");
        assert!(message.to_string().contains("hi after"), "{p:?}: {message}");
        assert_eq!(events.iter().filter(|e| e["event"] == "turn_end").count(), 1);
    }
    // Only a stray terminal: the stream is incomplete, not an empty success.
    for (p, body) in [
        (Provider::Anthropic, stray_stop),
        (Provider::OpenAIChat, "data: [DONE]\n\n"),
        (Provider::Auto, "data: [DONE]\n\n"),
    ] {
        let (events, end, _) = fold(p, body);
        assert!(matches!(end, Err(ssefold::providers::StreamError::Incomplete { .. })), "{p:?}: {end:?}");
        assert_eq!(warnings(&events, "terminal_before_start"), 1);
    }
    // A response.completed carrying its whole response is a whole answer.
    let whole = r#"{"type":"response.completed","sequence_number":1,"response":{"id":"r","object":"response","status":"completed","model":"m","output":[{"id":"m1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"all at once","annotations":[]}]}]}}"#;
    let (events, end, message) = fold(Provider::Auto, &format!("event: response.completed\ndata: {whole}\n\n"));
    assert_eq!(end, Ok(()), "{events:?}");
    assert_eq!(warnings(&events, "terminal_before_start"), 0);
    assert_eq!(message["output"][0]["content"][0]["text"], "all at once");
}

// ---- tool arguments: memory budget, lone surrogates ------------------------

/// An Anthropic stream with one tool call whose arguments are `args`, sent
/// in `input_json_delta` fragments of `chunk` bytes (split on char
/// boundaries), then the end of the turn.
fn anthropic_tool_stream(args: &str, chunk: usize) -> Vec<u8> {
    let mut out = String::with_capacity(args.len() * 2 + 1024);
    let mut event = |name: &str, data: serde_json::Value| {
        out.push_str("event: ");
        out.push_str(name);
        out.push_str("\ndata: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    };
    event(
        "message_start",
        serde_json::json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
            "model": "x", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    );
    event(
        "content_block_start",
        serde_json::json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}),
    );
    let mut rest = args;
    while !rest.is_empty() {
        let mut end = chunk.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        event(
            "content_block_delta",
            serde_json::json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": &rest[..end]}}),
        );
        rest = &rest[end..];
    }
    event("content_block_stop", serde_json::json!({"type": "content_block_stop", "index": 0}));
    event(
        "message_delta",
        serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}),
    );
    event("message_stop", serde_json::json!({"type": "message_stop"}));
    out.into_bytes()
}

/// The issue's argument shapes, about `len` bytes each: nested empty arrays,
/// many numbers, many keys (wrapped in an object: Anthropic's `input`).
fn hostile_args(shape: &str, len: usize) -> String {
    let mut s = String::with_capacity(len + 64);
    s.push_str("{\"a\":[");
    match shape {
        "nested" => {
            while s.len() < len {
                if !s.ends_with('[') {
                    s.push(',');
                }
                s.push_str("[[[[[]]]]]");
            }
        }
        "numbers" => {
            while s.len() < len {
                if !s.ends_with('[') {
                    s.push(',');
                }
                s.push('0');
            }
        }
        _ => {
            s.push('{');
            let mut i = 0u64;
            while s.len() < len {
                if !s.ends_with('{') {
                    s.push(',');
                }
                s.push_str(&format!("\"{i:x}\":0"));
                i += 1;
            }
            s.push('}');
        }
    }
    s.push_str("]}");
    s
}

#[test]
fn tool_arguments_past_the_memory_budget_are_a_typed_error_and_keep_the_fold() {
    use ssefold::providers::{Provider, Stream, StreamConfig, StreamError, StreamLimit};
    // Arguments are held as text (issue 26 item 13: a large input is never a tree), so the
    // budget refuses what the text itself does not fit.
    let max = 4 << 20;
    for shape in ["nested", "numbers", "keys"] {
        let input = anthropic_tool_stream(&hostile_args(shape, 6 << 20), 4096);
        let config = StreamConfig { max_memory_bytes: max, ..StreamConfig::default() };
        let mut s = Stream::with_config(Provider::Anthropic, config);
        let r = s.feed(&input, |_| {});
        assert_eq!(r, Err(StreamError::LimitExceeded { limit: StreamLimit::MaxMemoryBytes, max }), "{shape}");
        // Held: the budget plus at most one check interval's amplification.
        assert!(s.memory_footprint() < max + (8 << 20), "{shape}: {}", s.memory_footprint());
        let message = s.message();
        assert_eq!(message["content"][0]["type"], "tool_use", "{shape}");
        assert_eq!(message["content"][0]["name"], "f", "{shape}");
        // Within the default budget (128 MiB) 6 MB of the same fold completely.
        let mut s = Stream::new(Provider::Anthropic);
        s.feed(&input, |_| {}).unwrap();
        s.finish(|_| {}).unwrap();
        assert!(s.message()["content"][0]["input"]["a"].is_array(), "{shape}");
    }
}

#[test]
fn a_lone_surrogate_in_tool_arguments_is_u_fffd_with_a_warning() {
    use ssefold::providers::{Provider, Stream, StreamEvent};
    let args = r#"{"a": "x\ud83dy", "b": "\udc00", "c": "\ud83d\ud83d\ude00", "d": "\ud83d\n", "ok": "\ud83d\ude00"}"#;
    for chunk in [1, 3, 1000] {
        let mut s = Stream::new(Provider::Anthropic);
        let (mut warnings, mut raw, mut ended) = (Vec::new(), String::new(), None);
        let mut on_event = |e: &StreamEvent<'_>| match e {
            StreamEvent::Warning { code, .. } => warnings.push(*code),
            StreamEvent::ToolArgsDelta { json, .. } => raw.push_str(json),
            StreamEvent::PartEnd { outcome, .. } => ended = Some(outcome.name()),
            _ => {}
        };
        s.feed(&anthropic_tool_stream(args, chunk), &mut on_event).unwrap();
        s.finish(&mut on_event).unwrap();
        assert_eq!(raw, args, "the raw text keeps the escapes");
        assert_eq!(ended, Some("complete"));
        assert!(
            !warnings.is_empty() && warnings.iter().all(|&w| w == ssefold::providers::WarningCode::LoneSurrogate),
            "{warnings:?}"
        );
        assert_eq!(
            s.message()["content"][0]["input"],
            serde_json::json!({"a": "x\u{FFFD}y", "b": "\u{FFFD}", "c": "\u{FFFD}😀", "d": "\u{FFFD}\n", "ok": "😀"}),
            "chunk {chunk}"
        );
    }
}

/// An OpenAI Responses turn with one function call whose `args` stream in
/// `function_call_arguments.delta` fragments of `chunk` bytes, then the done
/// item and the terminal output, both carrying the arguments again.
fn responses_tool_stream(args: &str, chunk: usize) -> Vec<u8> {
    use serde_json::json;
    let mut out = String::with_capacity(args.len() * 4 + 1024);
    let mut event = |data: serde_json::Value| {
        out.push_str("event: ");
        out.push_str(data["type"].as_str().unwrap());
        out.push_str("\ndata: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    };
    let item = |status: &str, arguments: &str| json!({"id": "fc_1", "type": "function_call", "status": status, "arguments": arguments, "call_id": "call_1", "name": "f"});
    let response = |status: &str, output: serde_json::Value| {
        json!({"id": "resp_1", "object": "response", "status": status, "model": "m", "output": output,
            "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}})
    };
    event(json!({"type": "response.created", "response": response("in_progress", json!([]))}));
    event(json!({"type": "response.output_item.added", "output_index": 0, "item": item("in_progress", "")}));
    let mut rest = args;
    while !rest.is_empty() {
        let mut end = chunk.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        event(json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0,
            "delta": &rest[..end]}));
        rest = &rest[end..];
    }
    event(json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0,
        "arguments": args}));
    event(json!({"type": "response.output_item.done", "output_index": 0, "item": item("completed", args)}));
    event(json!({"type": "response.completed", "response": response("completed", json!([item("completed", args)]))}));
    out.into_bytes()
}

/// A Responses function call's arguments are held once: the streamed text
/// and its parser are freed when the done item arrives (which carries them),
/// and the message lent by the stream is the folded message, its JSON the
/// same text.
#[test]
fn responses_arguments_are_held_once_after_the_done_item() {
    use ssefold::providers::{Stream, StreamEvent};
    let big_string = format!("{{\"a\":\"{}\"}}", "x".repeat(2 << 20));
    for (shape, args) in [
        ("nested", hostile_args("nested", 2 << 20)),
        ("numbers", hostile_args("numbers", 2 << 20)),
        ("string", big_string),
    ] {
        let input = responses_tool_stream(&args, 4096);
        let done_at = input.windows(26).position(|w| w == b"response.output_item.done\n").unwrap();
        let mut s = Stream::new(Provider::OpenAIResponses);
        s.feed(&input[..done_at], |_| {}).unwrap();
        let streaming = s.memory_footprint();
        assert!(streaming > args.len(), "{shape}: {streaming}");
        let mut ready = 0;
        s.feed(&input[done_at..], |e| {
            if let StreamEvent::PartEnd { content, .. } = e {
                assert_eq!(content["arguments"].as_str(), Some(args.as_str()), "{shape}");
                ready += 1;
            }
        })
        .unwrap();
        s.finish(|_| {}).unwrap();
        assert_eq!(ready, 1, "{shape}");
        // The message holds the arguments once (counted since issue 26 item 4); the SSE buffers of
        // the last big line and the streamed copy are released.
        assert!(s.memory_footprint() < args.len() + (1 << 20), "{shape}: {}", s.memory_footprint());
        let message = s.message();
        assert_eq!(message["output"][0]["arguments"].as_str(), Some(args.as_str()), "{shape}");
        assert_eq!(message["output"].as_array().map(Vec::len), Some(1), "{shape}");
        let view = s.message_view();
        assert_eq!(serde_json::to_string(&view).unwrap(), message.to_string(), "{shape}");
        assert_eq!(view.into_value(), message, "{shape}");
    }
}

/// Issue 26 item 3: a whole-arguments delta gives a path event per token; a
/// call of the stream emits at most `max_path_events_per_feed` of them (a
/// binding that returns a call's events as a list holds at most that many),
/// then one `path_events_dropped` warning; the argument text and the fold
/// stay complete, and the next call of the stream has its own budget.
#[test]
fn path_events_per_feed_are_bounded_and_the_arguments_stay_whole() {
    use ssefold::providers::{Provider, Stream, StreamConfig, StreamEvent, WarningCode};
    let args = hostile_args("numbers", 1_100_000);
    let whole = anthropic_tool_stream(&args, usize::MAX);
    for (max, chunk) in [(StreamConfig::default().max_path_events_per_feed, whole.len()), (1000, 64 << 10)] {
        let config = StreamConfig { max_path_events_per_feed: max, ..StreamConfig::default() };
        let mut s = Stream::with_config(Provider::Anthropic, config);
        let (mut most, mut warnings, mut text) = (0usize, 0usize, String::new());
        let mut ready = None;
        let mut count = |bytes: &[u8], s: &mut Stream, fin: bool| {
            let mut paths = 0usize;
            let mut on = |e: &StreamEvent<'_>| match e {
                StreamEvent::ToolArgsPath { .. } => paths += 1,
                StreamEvent::ToolArgsDelta { json, .. } => text.push_str(json),
                StreamEvent::Warning { code: WarningCode::PathEventsDropped, .. } => warnings += 1,
                e => {
                    if let Some(call) = e.ready_tool_call() {
                        ready = Some(call.arguments.len());
                    }
                }
            };
            if fin {
                s.finish(&mut on).unwrap();
            } else {
                s.feed(bytes, &mut on).unwrap();
            }
            most = most.max(paths);
        };
        for piece in whole.chunks(chunk) {
            count(piece, &mut s, false);
        }
        count(b"", &mut s, true);
        assert!(most <= max, "{most} path events in one call (limit {max})");
        assert!(warnings >= 1, "the drop is warned");
        assert_eq!(text, args, "the argument text is complete");
        assert_eq!(ready, Some(args.len()), "the call is ready with its whole arguments");
        assert!(s.message()["content"][0]["input"]["a"].is_array());
    }
}

/// A Gemini body of one chunk with one citation, then one chunk with `n`
/// new ones (and the first again, and the first with its members in another
/// order: both already kept), then the finishing chunk.
fn gemini_citations(n: usize) -> Vec<u8> {
    let source = |i: usize| serde_json::json!({"startIndex": i, "endIndex": i + 1, "uri": format!("https://e/{i}")});
    let chunk = |sources: Vec<serde_json::Value>, finish: bool| {
        let mut cand = serde_json::json!({"index": 0, "content": {"role": "model", "parts": [{"text": "x"}]},
            "citationMetadata": {"citationSources": sources}});
        if finish {
            cand["finishReason"] = "STOP".into();
        }
        format!("data: {}\n\n", serde_json::json!({"candidates": [cand]}))
    };
    let mut more: Vec<serde_json::Value> = (1..=n).map(source).collect();
    more.push(source(0));
    more.push(serde_json::json!({"uri": "https://e/0", "endIndex": 1, "startIndex": 0}));
    let mut body = chunk(vec![source(0)], false);
    body += &chunk(more, false);
    body += &chunk(vec![source(1)], true);
    body.into_bytes()
}

/// Issue 26 item 1: merging Gemini citations is linear (each new entry is
/// compared only with kept entries of the same hash); duplicates, members in
/// any order, are still skipped.
#[test]
fn gemini_citations_merge_in_linear_time_and_skip_duplicates() {
    use ssefold::providers::{Provider, Stream};
    let n = 40_000;
    let body = gemini_citations(n);
    let mut s = Stream::new(Provider::Gemini);
    s.feed(&body, |_| {}).unwrap();
    s.finish(|_| {}).unwrap();
    let sources = s.message()["candidates"][0]["citationMetadata"]["citationSources"].as_array().unwrap().len();
    assert_eq!(sources, n + 1, "every new entry once, no duplicate");
}

/// Issue 26 item 6: a Vertex call whose `partialArgs` write `n` keys of one
/// object (in chunks of 1000): checking each new key against those written
/// is O(1), and a key written twice is still skipped.
#[test]
fn vertex_partial_args_with_many_keys_stay_linear() {
    use ssefold::providers::{Provider, Stream, WarningCode};
    let n = 160_000;
    let chunk = |args: Vec<serde_json::Value>, more: bool| {
        // The call's first chunk names it; the others continue it.
        let first = args.first().is_some_and(|a| a["jsonPath"] == "$.k0" && a["numberValue"] == 0);
        let mut fc = serde_json::json!({"partialArgs": args, "willContinue": more});
        if first {
            fc["name"] = "f".into();
        }
        let data = serde_json::json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": fc}]}, "index": 0}]});
        format!("data: {data}\n\n")
    };
    let mut body = String::new();
    let keys: Vec<usize> = (0..n).collect();
    for part in keys.chunks(1000) {
        let args = part.iter().map(|i| serde_json::json!({"jsonPath": format!("$.k{i}"), "numberValue": i})).collect();
        body += &chunk(args, true);
    }
    // The first key again: skipped with a warning.
    body += &chunk(vec![serde_json::json!({"jsonPath": "$.k0", "numberValue": 1})], false);
    body += "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[]},\"finishReason\":\"STOP\",\"index\":0}]}\n\n";
    let mut s = Stream::new(Provider::Gemini);
    let mut skipped = 0;
    let mut on = |e: &ssefold::providers::StreamEvent<'_>| {
        if let ssefold::providers::StreamEvent::Warning { code: WarningCode::InvalidEvent, message } = e {
            skipped += usize::from(message.contains("already written"));
        }
    };
    s.feed(body.as_bytes(), &mut on).unwrap();
    s.finish(&mut on).unwrap();
    assert_eq!(skipped, 1);
    let args = &s.message()["candidates"][0]["content"]["parts"][0]["functionCall"]["args"];
    assert_eq!(args.as_object().unwrap().len(), n);
    assert_eq!(args["k0"], 0);
}

/// Issue 26 item 2: Gemini and Ollama send a call's arguments whole, as a
/// JSON value. An event whose tree would not fit `max_memory_bytes` is a
/// typed `LimitExceeded` before it is parsed (the text before it kept); one
/// that fits folds, its arguments as text.
#[test]
fn whole_calls_that_would_not_fit_the_budget_are_refused_before_they_are_parsed() {
    use ssefold::providers::{Provider, Stream, StreamConfig, StreamError, StreamLimit};
    let gemini = |args: &str| {
        let text =
            "data: {\"candidates\":[{\"index\":0,\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"hi\"}]}}]}\n\n";
        let call = format!(
            "data: {{\"candidates\":[{{\"index\":0,\"content\":{{\"role\":\"model\",\"parts\":[{{\"functionCall\":{{\"name\":\"f\",\"args\":{args}}}}}]}}}}]}}\n\n"
        );
        let done = "data: {\"candidates\":[{\"index\":0,\"content\":{\"role\":\"model\",\"parts\":[]},\"finishReason\":\"STOP\"}]}\n\n";
        format!("{text}{call}{done}").into_bytes()
    };
    let ollama = |args: &str| {
        let text = "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"done\":false}\n";
        let call = format!(
            "{{\"model\":\"m\",\"message\":{{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{{\"function\":{{\"name\":\"f\",\"arguments\":{args}}}}}]}},\"done\":false}}\n"
        );
        let done = "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n";
        format!("{text}{call}{done}").into_bytes()
    };
    let max = 8 << 20;
    for shape in ["nested", "numbers", "keys"] {
        let big = hostile_args(shape, 1 << 20);
        let small = hostile_args(shape, 32 << 10);
        for (provider, body) in [(Provider::Gemini, gemini as fn(&str) -> Vec<u8>), (Provider::Ollama, ollama)] {
            let config = StreamConfig { max_memory_bytes: max, ..StreamConfig::default() };
            let mut s = Stream::with_config(provider, config.clone());
            let r = s.feed(&body(&big), |_| {});
            assert_eq!(
                r,
                Err(StreamError::LimitExceeded { limit: StreamLimit::MaxMemoryBytes, max }),
                "{shape} {provider:?}"
            );
            assert!(s.message().to_string().contains("\"hi\""), "{shape} {provider:?}: the text before it is kept");
            let mut s = Stream::with_config(provider, config);
            let mut ready = None;
            let mut on = |e: &ssefold::providers::StreamEvent<'_>| {
                if let Some(call) = e.ready_tool_call() {
                    ready = Some(call.arguments.to_owned());
                }
            };
            s.feed(&body(&small), &mut on).unwrap();
            s.finish(&mut on).unwrap();
            let want: serde_json::Value = serde_json::from_str(&small).unwrap();
            let got: serde_json::Value = serde_json::from_str(&ready.expect("ready")).unwrap();
            assert_eq!(got, want, "{shape} {provider:?}");
        }
    }
}

// ---- Issue 26 item 4: every value a fold keeps counts against the budget ----

use crate::prov_common;

/// A body whose middle is `n` chunks written one at a time (a replace case
/// is 5,000 chunks of 64 KiB: never held whole), after a text ("hi").
struct Kept {
    provider: Provider,
    head: Vec<u8>,
    each: Box<dyn Fn(usize) -> Vec<u8>>,
    tail: Vec<u8>,
}

/// The reproducers of `tools/hostile_args.py members|signatures|executable_code`:
/// `case` is "DIALECT WHERE"; chunk `i` adds a value of `size` bytes under
/// a new key (`same`: under one key, replaced each time).
fn kept(case: &str, size: usize, same: bool) -> Kept {
    use serde_json::{json, Value};
    let blob = move || "y".repeat(size);
    let key = move |i: usize| if same { "x".to_owned() } else { format!("x_{i}") };
    let member = move |i: usize| {
        let mut m = serde_json::Map::new();
        m.insert(key(i), Value::String(blob()));
        m
    };
    let (dialect, at) = case.split_once(' ').unwrap();
    match dialect {
        "anthropic" | "bedrock" => {
            let bedrock = dialect == "bedrock";
            let events = move |evs: Vec<Value>| -> Vec<u8> {
                use base64::Engine;
                let b64 = base64::engine::general_purpose::STANDARD;
                let mut out = Vec::new();
                for e in evs {
                    if bedrock {
                        let payload = json!({"bytes": b64.encode(e.to_string())}).to_string();
                        let headers = [
                            (":event-type", "chunk"),
                            (":content-type", "application/json"),
                            (":message-type", "event"),
                        ];
                        out.extend(prov_common::es_message(&headers, payload.as_bytes()));
                    } else {
                        write!(out, "event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()).unwrap();
                    }
                }
                out
            };
            let head = events(vec![
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                    "model": "m", "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
                json!({"type": "content_block_stop", "index": 0}),
            ]);
            let tail = events(vec![
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
                json!({"type": "message_stop"}),
            ]);
            let thinking = |b: u64| {
                json!({"type": "content_block_start", "index": b,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            };
            let delta = |b: u64, delta: Value| json!({"type": "content_block_delta", "index": b, "delta": delta});
            let at = at.to_owned();
            let each = move |i: usize| {
                let b = i as u64 + 1;
                let signature =
                    || delta(if same { 1 } else { b }, json!({"type": "signature_delta", "signature": blob()}));
                events(match at.as_str() {
                    // `same`: every signature_delta on one block (replaced).
                    "signatures" if same => {
                        vec![if i == 0 { thinking(1) } else { json!({"type": "ping"}) }, signature()]
                    }
                    "signatures" => vec![
                        thinking(b),
                        delta(b, json!({"type": "thinking_delta", "thinking": "t"})),
                        signature(),
                        json!({"type": "content_block_stop", "index": b}),
                    ],
                    "block" => vec![
                        json!({"type": "content_block_start", "index": b,
                            "content_block": {"type": "x_block", "data": blob()}}),
                        json!({"type": "content_block_stop", "index": b}),
                    ],
                    at => {
                        let mut d = json!({"type": "message_delta", "delta": {"stop_reason": null},
                            "usage": {"output_tokens": 1}});
                        let target = if at == "top" { &mut d } else { &mut d[at] };
                        target.as_object_mut().unwrap().extend(member(i));
                        vec![d]
                    }
                })
            };
            let provider = if bedrock { Provider::Bedrock } else { Provider::Anthropic };
            Kept { provider, head, each: Box::new(each), tail }
        }
        "openai_chat" => {
            let chunk = |delta: Value,
                         finish: Value,
                         top: serde_json::Map<String, Value>,
                         choice: serde_json::Map<String, Value>| {
                let mut c = json!({"index": 0, "delta": delta, "finish_reason": finish});
                c.as_object_mut().unwrap().extend(choice);
                let mut data =
                    json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [c]});
                data.as_object_mut().unwrap().extend(top);
                format!("data: {data}\n\n").into_bytes()
            };
            let none = serde_json::Map::new;
            let head = chunk(json!({"role": "assistant", "content": "hi"}), Value::Null, none(), none());
            let tail = [chunk(json!({}), "stop".into(), none(), none()), b"data: [DONE]\n\n".to_vec()].concat();
            let at = at.to_owned();
            let each = move |i: usize| match at.as_str() {
                "top" => chunk(json!({}), Value::Null, member(i), none()),
                "choice" => chunk(json!({}), Value::Null, none(), member(i)),
                _ => chunk(Value::Object(member(i)), Value::Null, none(), none()),
            };
            Kept { provider: Provider::OpenAIChat, head, each: Box::new(each), tail }
        }
        "openai_responses" => {
            // Numbered from the chunk's index: each event's own `sequence_number`.
            let event = |seq: usize, mut data: Value| {
                data["sequence_number"] = seq.into();
                format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap()).into_bytes()
            };
            let response = json!({"id": "resp_1", "object": "response", "created_at": 0, "status": "in_progress",
                "model": "m", "output": []});
            let msg =
                json!({"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []});
            let part = json!({"type": "output_text", "text": "", "annotations": []});
            let done_part = json!({"type": "output_text", "text": "hi", "annotations": []});
            let mut done_msg = msg.clone();
            done_msg["status"] = "completed".into();
            done_msg["content"] = json!([done_part]);
            let head = [
                event(0, json!({"type": "response.created", "response": response})),
                event(1, json!({"type": "response.output_item.added", "output_index": 0, "item": msg})),
                event(
                    2,
                    json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0,
                        "content_index": 0, "part": part}),
                ),
                event(
                    3,
                    json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                        "content_index": 0, "delta": "hi"}),
                ),
                event(
                    4,
                    json!({"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0,
                        "content_index": 0, "part": done_part}),
                ),
                event(5, json!({"type": "response.output_item.done", "output_index": 0, "item": done_msg})),
            ]
            .concat();
            // The terminal event without `output`: the streamed items are the fold.
            let tail = event(
                1 << 40,
                json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response",
                    "created_at": 0, "status": "completed", "model": "m"}}),
            );
            let at = at.to_owned();
            let each = move |i: usize| {
                let seq = 6 + 2 * i;
                if at == "top" {
                    let mut r = response.clone();
                    r.as_object_mut().unwrap().extend(member(i));
                    event(seq, json!({"type": "response.in_progress", "response": r}))
                } else {
                    let item = json!({"id": format!("x_{i}"), "type": "x_item", "status": "completed", "data": blob()});
                    let o = i + 1;
                    [
                        event(seq, json!({"type": "response.output_item.added", "output_index": o, "item": item})),
                        event(seq + 1, json!({"type": "response.output_item.done", "output_index": o, "item": item})),
                    ]
                    .concat()
                }
            };
            Kept { provider: Provider::OpenAIResponses, head, each: Box::new(each), tail }
        }
        "gemini" => {
            let chunk = |parts: Value,
                         top: serde_json::Map<String, Value>,
                         cand: serde_json::Map<String, Value>,
                         finish: bool| {
                let mut c = json!({"index": 0, "content": {"role": "model", "parts": parts}});
                c.as_object_mut().unwrap().extend(cand);
                if finish {
                    c["finishReason"] = "STOP".into();
                }
                let mut data = json!({"candidates": [c]});
                data.as_object_mut().unwrap().extend(top);
                format!("data: {data}\n\n").into_bytes()
            };
            let none = serde_json::Map::new;
            let head = chunk(json!([{"text": "hi"}]), none(), none(), false);
            let tail = chunk(json!([]), none(), none(), true);
            let at = at.to_owned();
            let each = move |i: usize| match at.as_str() {
                // A signature on each part: never merged into the part before.
                "signatures" => {
                    chunk(json!([{"text": "t", "thought": true, "thoughtSignature": blob()}]), none(), none(), false)
                }
                "executable_code" => {
                    chunk(json!([{"executableCode": {"language": "PYTHON", "code": blob()}}]), none(), none(), false)
                }
                "top" => chunk(json!([]), member(i), none(), false),
                _ => chunk(json!([]), none(), member(i), false),
            };
            Kept { provider: Provider::Gemini, head, each: Box::new(each), tail }
        }
        "ollama" => {
            let line = |message: serde_json::Map<String, Value>, top: serde_json::Map<String, Value>, done: bool| {
                let mut m = json!({"role": "assistant", "content": ""});
                m.as_object_mut().unwrap().extend(message);
                let mut data = json!({"model": "m", "created_at": "t", "message": m, "done": done});
                data.as_object_mut().unwrap().extend(top);
                if done {
                    data["done_reason"] = "stop".into();
                }
                format!("{data}\n").into_bytes()
            };
            let none = serde_json::Map::new;
            let mut hi = none();
            hi.insert("content".into(), "hi".into());
            let head = line(hi, none(), false);
            let tail = line(none(), none(), true);
            let at = at.to_owned();
            let each = move |i: usize| {
                if at == "top" {
                    line(none(), member(i), false)
                } else {
                    line(member(i), none(), false)
                }
            };
            Kept { provider: Provider::Ollama, head, each: Box::new(each), tail }
        }
        "bedrock_converse" => {
            use prov_common::converse_event as ev;
            let head = [
                ev("messageStart", &json!({"role": "assistant"})),
                ev("contentBlockDelta", &json!({"contentBlockIndex": 0, "delta": {"text": "hi"}})),
                ev("contentBlockStop", &json!({"contentBlockIndex": 0})),
            ]
            .concat();
            let tail = [
                ev("messageStop", &json!({"stopReason": "end_turn"})),
                ev(
                    "metadata",
                    &json!({"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                        "metrics": {"latencyMs": 1}}),
                ),
            ]
            .concat();
            let at = at.to_owned();
            let each = move |i: usize| {
                if at == "signatures" {
                    let b = i + 1;
                    [
                        ev(
                            "contentBlockDelta",
                            &json!({"contentBlockIndex": b, "delta": {"reasoningContent": {"text": "t"}}}),
                        ),
                        ev(
                            "contentBlockDelta",
                            &json!({"contentBlockIndex": b, "delta": {"reasoningContent": {"signature": blob()}}}),
                        ),
                        ev("contentBlockStop", &json!({"contentBlockIndex": b})),
                    ]
                    .concat()
                } else {
                    // `metadata` before `messageStop` does not end the turn.
                    ev("metadata", &Value::Object(member(i)))
                }
            };
            Kept { provider: Provider::BedrockConverse, head, each: Box::new(each), tail }
        }
        other => panic!("no dialect {other}"),
    }
}

/// What one run of a [`Kept`] body gave: the first error, the footprint
/// then (else at the end), and the message.
fn run_kept(
    body: &Kept,
    n: usize,
    max_memory_bytes: usize,
) -> (Option<ssefold::providers::StreamError>, usize, serde_json::Value) {
    use ssefold::providers::{Stream, StreamConfig};
    let mut s = Stream::with_config(body.provider, StreamConfig { max_memory_bytes, ..StreamConfig::default() });
    let pieces = std::iter::once(body.head.clone()).chain((0..n).map(|i| (body.each)(i))).chain([body.tail.clone()]);
    for piece in pieces {
        for c in piece.chunks(16 << 10) {
            if let Err(e) = s.feed(c, |_| {}) {
                return (Some(e), s.memory_footprint(), s.message());
            }
        }
    }
    let end = s.finish(|_| {}).err();
    (end, s.memory_footprint(), s.message())
}

/// Every case: the members, signatures and whole parts each dialect keeps
/// (`tools/hostile_args.py` writes the same at scale: 300 of 1 MiB).
const KEPT_CASES: [&str; 20] = [
    "anthropic top",
    "anthropic delta",
    "anthropic usage",
    "anthropic block",
    "anthropic signatures",
    "bedrock top",
    "bedrock signatures",
    "openai_chat top",
    "openai_chat choice",
    "openai_chat delta",
    "openai_responses top",
    "openai_responses item",
    "gemini top",
    "gemini candidate",
    "gemini signatures",
    "gemini executable_code",
    "ollama top",
    "ollama message",
    "bedrock_converse top",
    "bedrock_converse signatures",
];

/// Issue 26 item 4: 64 chunks that each keep a new 64 KiB value (a
/// top-level, choice, candidate, delta, usage or `message` member, a
/// signature, a whole part) under a 2 MiB budget: `LimitExceeded`
/// `max_memory_bytes`, the stream's footprint within the budget (plus the
/// decoder's buffers), the text and the values before it kept. Within the
/// default budget every value is in the message.
#[test]
fn every_value_a_fold_keeps_counts_against_the_memory_budget() {
    use ssefold::providers::{StreamError, StreamLimit};
    let (n, size, max) = (64, 64 << 10, 2 << 20);
    let blob = "y".repeat(size);
    let mut failed = Vec::new();
    for case in KEPT_CASES {
        let body = kept(case, size, false);
        let (end, footprint, message) = run_kept(&body, n, max);
        let text = message.to_string();
        let values = text.matches(&blob).count();
        let why = if end != Some(StreamError::LimitExceeded { limit: StreamLimit::MaxMemoryBytes, max }) {
            format!("ended {end:?} (footprint {footprint}, {values} values kept)")
        } else if footprint > max + (1 << 20) {
            format!("footprint {footprint} at the error")
        } else if !text.contains("\"hi\"") || values == 0 || values >= n {
            format!("the fold before the error not kept: hi {}, {values} values", text.contains("\"hi\""))
        } else {
            String::new()
        };
        if !why.is_empty() {
            failed.push(format!("{case}: {why}"));
        }
        // Within the default budget (128 MiB): whole.
        let (end, _, message) = run_kept(&body, n, 128 << 20);
        assert_eq!(end, None, "{case}");
        assert_eq!(message.to_string().matches(&blob).count(), n, "{case}: every value in the message");
    }
    assert!(failed.is_empty(), "{} of {} cases not bounded:\n{}", failed.len(), KEPT_CASES.len(), failed.join("\n"));
}

/// A member written again under the same key replaces the earlier one:
/// 5,000 chunks of the same 64 KiB member (320 MB received) fold under a
/// 2 MiB budget, the member once in the message.
#[test]
fn a_value_replaced_under_the_same_key_does_not_add_up() {
    let (n, size, max) = (5_000, 64 << 10, 2 << 20);
    let blob = "y".repeat(size);
    for case in [
        "anthropic top",
        "anthropic delta",
        "anthropic usage",
        "anthropic signatures",
        "bedrock top",
        "openai_chat top",
        "openai_chat choice",
        "openai_responses top",
        "gemini top",
        "gemini candidate",
        "ollama top",
        "ollama message",
        "bedrock_converse top",
    ] {
        let body = kept(case, size, true);
        let (end, footprint, message) = run_kept(&body, n, max);
        assert_eq!(end, None, "{case}: footprint {footprint}");
        let text = message.to_string();
        assert!(text.contains("\"hi\""), "{case}");
        assert_eq!(text.matches(&blob).count(), 1, "{case}: the member once");
        assert!(footprint <= max + (1 << 20), "{case}: footprint {footprint}");
    }
}
