//! Hostile input and scale: inputs a broken or malicious server can send,
//! generated here (no committed blobs). The same cases are run through the
//! C ABI (tests/c), Python (python/tests/test_hostile.py) and Go
//! (bindings/go/hostile_test.go).

use std::io::Write;
use std::process::{Command, Stdio};

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
fn the_cli_prints_a_bounded_output_for_the_long_id_reproducer() {
    // Before the limit: every one of the 20 000 lines held the 1 MiB id (21 GB).
    let input = long_id_then_events(1 << 20, 20_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ssefold"))
        .arg("sse")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(out.status.code(), Some(1), "a decoding error is exit status 1");
    assert!(String::from_utf8_lossy(&out.stderr).contains("id longer than 4096 bytes"));
    assert_eq!(out.stdout.iter().filter(|b| **b == b'\n').count(), 19_999);
    assert!(out.stdout.len() < 2 << 20, "{} bytes", out.stdout.len());
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
    use ssefold::providers::{Provider, Stream, StreamConfig, StreamError};
    let max = 4 << 20;
    for shape in ["nested", "numbers", "keys"] {
        let input = anthropic_tool_stream(&hostile_args(shape, 2 << 20), 4096);
        let config = StreamConfig { max_memory_bytes: max, ..StreamConfig::default() };
        let mut s = Stream::with_config(Provider::Anthropic, config);
        let r = s.feed(&input, |_| {});
        assert_eq!(r, Err(StreamError::LimitExceeded { limit: "max_memory_bytes", max }), "{shape}");
        // Held: the budget plus at most one check interval's amplification.
        assert!(s.memory_footprint() < max + (8 << 20), "{shape}: {}", s.memory_footprint());
        let message = s.message();
        assert_eq!(message["content"][0]["type"], "tool_use", "{shape}");
        assert_eq!(message["content"][0]["name"], "f", "{shape}");
        // Within the default budget (128 MiB) 512 KB of the same fold completely.
        let mut s = Stream::new(Provider::Anthropic);
        s.feed(&anthropic_tool_stream(&hostile_args(shape, 512 << 10), 4096), |_| {}).unwrap();
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
        assert!(!warnings.is_empty() && warnings.iter().all(|&w| w == "lone_surrogate"), "{warnings:?}");
        assert_eq!(
            s.message()["content"][0]["input"],
            serde_json::json!({"a": "x\u{FFFD}y", "b": "\u{FFFD}", "c": "\u{FFFD}😀", "d": "\u{FFFD}\n", "ok": "😀"}),
            "chunk {chunk}"
        );
    }
}
