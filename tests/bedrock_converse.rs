//! Amazon Bedrock `ConverseStream`, behaviour by behaviour. The bodies are
//! written from the documented event shapes (botocore's service model for
//! `bedrock-runtime`) and framed as AWS event-stream messages by the test's
//! own encoder; every stream is fed whole, in 1-byte chunks and in random
//! chunkings (`run_all`).

use crate::prov_common;

use base64::Engine;
use prov_common::{converse_event, converse_exception, es_message, named, run_all, run_with, warnings, Run};
use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream, StreamError, StreamEvent};
use ssefold::reconnect::is_retryable_error_type;

fn body(events: &[(&str, Value)]) -> Vec<u8> {
    events.iter().flat_map(|(t, p)| converse_event(t, p)).collect()
}

fn delta(index: u64, delta: Value) -> (&'static str, Value) {
    ("contentBlockDelta", json!({"contentBlockIndex": index, "delta": delta}))
}

fn stop(index: u64) -> (&'static str, Value) {
    ("contentBlockStop", json!({"contentBlockIndex": index}))
}

fn metadata() -> (&'static str, Value) {
    (
        "metadata",
        json!({
            "usage": {"inputTokens": 21, "outputTokens": 9, "totalTokens": 30, "cacheReadInputTokens": 0, "cacheWriteInputTokens": 0},
            "metrics": {"latencyMs": 812}
        }),
    )
}

/// Every event and block kind in one answer: reasoning (text and
/// signature), text with a citation, a tool call in fragments.
fn full() -> Vec<(&'static str, Value)> {
    vec![
        ("messageStart", json!({"role": "assistant"})),
        delta(0, json!({"reasoningContent": {"text": "The user wants "}})),
        delta(0, json!({"reasoningContent": {"text": "the weather."}})),
        delta(0, json!({"reasoningContent": {"signature": "EqoBCkgIARABGAIi"}})),
        stop(0),
        delta(1, json!({"text": "Per the report, "})),
        delta(
            1,
            json!({"citation": {"title": "Report", "sourceContent": [{"text": "sunny"}], "location": {"documentChar": {"documentIndex": 0, "start": 3, "end": 8}}}}),
        ),
        delta(1, json!({"text": "it is sunny. Checking Paris."})),
        stop(1),
        (
            "contentBlockStart",
            json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_abc", "name": "get_weather"}}}),
        ),
        delta(2, json!({"toolUse": {"input": "{\"city\": \"Pa"}})),
        delta(2, json!({"toolUse": {"input": "ris\", \"days\": [1, 2]}"}})),
        stop(2),
        ("messageStop", json!({"stopReason": "tool_use", "additionalModelResponseFields": {"x": 1}})),
        metadata(),
    ]
}

#[test]
fn names_and_detection() {
    for name in ["bedrock_converse", "bedrock-converse", "converse"] {
        assert_eq!(Provider::from_name(name), Some(Provider::BedrockConverse), "{name}");
    }
    for name in ["bedrock", "bedrock-invoke", "bedrock_anthropic"] {
        assert_eq!(Provider::from_name(name), Some(Provider::Bedrock), "{name}");
    }
    assert_eq!(Provider::BedrockConverse.name(), "bedrock_converse");
    assert_eq!(Provider::Bedrock.name(), "bedrock");
    let run = run_all(Provider::Auto, &body(&full()));
    assert_eq!(run.detected, "bedrock_converse");
    assert_eq!(run, run_all(Provider::BedrockConverse, &body(&full())));
    assert_eq!(named(&run, "message_start")[0]["provider"], "bedrock_converse");
}

#[test]
fn every_block_kind_folds_into_the_converse_response() {
    let run = run_all(Provider::BedrockConverse, &body(&full()));
    assert_eq!(run.error, None);
    assert_eq!(warnings(&run), Vec::<String>::new());
    assert_eq!(
        run.message,
        json!({
            "output": {"message": {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "The user wants the weather.", "signature": "EqoBCkgIARABGAIi"}}},
                {"citationsContent": {
                    "content": [{"text": "Per the report, it is sunny. Checking Paris."}],
                    "citations": [{"title": "Report", "sourceContent": [{"text": "sunny"}], "location": {"documentChar": {"documentIndex": 0, "start": 3, "end": 8}}}]
                }},
                {"toolUse": {"toolUseId": "tooluse_abc", "name": "get_weather", "input": {"city": "Paris", "days": [1, 2]}}}
            ]}},
            "stopReason": "tool_use",
            "usage": {"inputTokens": 21, "outputTokens": 9, "totalTokens": 30, "cacheReadInputTokens": 0, "cacheWriteInputTokens": 0},
            "metrics": {"latencyMs": 812},
            "additionalModelResponseFields": {"x": 1}
        })
    );
    let names: Vec<&str> = run.events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    let mut compact = names.clone();
    compact.dedup();
    assert_eq!(
        compact,
        [
            "message_start",
            "part_start",
            "text_delta",
            "part_metadata",
            "part_end",
            "part_start",
            "text_delta",
            "part_metadata",
            "text_delta",
            "part_end",
            "part_start",
            "part_metadata",
            "tool_args_delta",
            "tool_args_path",
            "tool_args_delta",
            "tool_args_path",
            "part_end",
            "stop_reason",
            "usage",
            "turn_end"
        ]
    );
    let starts = named(&run, "part_start");
    let kinds: Vec<(&str, &str)> =
        starts.iter().map(|e| (e["kind"].as_str().unwrap(), e["provider_type"].as_str().unwrap())).collect();
    assert_eq!(kinds, [("reasoning", "reasoningContent"), ("text", "text"), ("tool_call", "toolUse")]);
    let meta: Vec<(&str, &Value)> =
        named(&run, "part_metadata").iter().map(|e| (e["key"].as_str().unwrap(), &e["value"])).collect();
    assert_eq!(meta[0], ("signature", &json!("EqoBCkgIARABGAIi")));
    assert_eq!(meta[1].0, "citation");
    assert_eq!(meta[2..], [("id", &json!("tooluse_abc")), ("name", &json!("get_weather"))]);
    let ends = named(&run, "part_end");
    assert!(ends.iter().all(|e| e["outcome"] == "complete"), "{ends:?}");
    assert_eq!(named(&run, "stop_reason")[0]["reason"], "tool_use");
    assert_eq!(named(&run, "turn_end")[0]["stop_reason"], "tool_use");
    assert_eq!(named(&run, "usage")[0]["usage"]["totalTokens"], 30);
}

#[test]
fn redacted_reasoning_is_base64_of_the_concatenated_bytes() {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let run = run_all(
        Provider::BedrockConverse,
        &body(&[
            ("messageStart", json!({"role": "assistant"})),
            delta(0, json!({"reasoningContent": {"redactedContent": b64(b"\x00\x01secret")}})),
            delta(0, json!({"reasoningContent": {"redactedContent": b64(b"\xffmore")}})),
            stop(0),
            delta(1, json!({"text": "Hi"})),
            stop(1),
            ("messageStop", json!({"stopReason": "end_turn"})),
            metadata(),
        ]),
    );
    assert_eq!(run.error, None);
    let content = &run.message["output"]["message"]["content"];
    assert_eq!(content[0], json!({"reasoningContent": {"redactedContent": b64(b"\x00\x01secret\xffmore")}}));
    assert_eq!(content[1], json!({"text": "Hi"}));
    let keys: Vec<&str> = named(&run, "part_metadata").iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["redacted_content", "redacted_content"]);
}

#[test]
fn server_tool_result_and_image_blocks_are_kept_as_other_parts() {
    let run = run_all(
        Provider::BedrockConverse,
        &body(&[
            ("messageStart", json!({"role": "assistant"})),
            (
                "contentBlockStart",
                json!({"contentBlockIndex": 0, "start": {"toolResult": {"toolUseId": "t1", "status": "success"}}}),
            ),
            delta(0, json!({"toolResult": [{"text": "42"}]})),
            delta(0, json!({"toolResult": [{"json": {"a": 1}}]})),
            stop(0),
            ("contentBlockStart", json!({"contentBlockIndex": 1, "start": {"image": {"format": "png"}}})),
            delta(1, json!({"image": {"source": {"bytes": "iVBORw=="}}})),
            stop(1),
            ("messageStop", json!({"stopReason": "end_turn"})),
            metadata(),
        ]),
    );
    assert_eq!(run.error, None);
    assert_eq!(
        run.message["output"]["message"]["content"],
        json!([
            {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "42"}, {"json": {"a": 1}}]}},
            {"image": {"format": "png", "source": {"bytes": "iVBORw=="}}}
        ])
    );
    let kinds: Vec<&str> = named(&run, "part_start").iter().map(|e| e["provider_type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["toolResult", "image"]);
}

#[test]
fn a_tool_call_is_ready_only_with_complete_json_input() {
    let events = |input: &str| {
        vec![
            ("messageStart", json!({"role": "assistant"})),
            (
                "contentBlockStart",
                json!({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "f"}}}),
            ),
            delta(0, json!({"toolUse": {"input": input}})),
            stop(0),
            ("messageStop", json!({"stopReason": "tool_use"})),
            metadata(),
        ]
    };
    let bad = run_all(Provider::BedrockConverse, &body(&events("{\"a\": tru")));
    let end = named(&bad, "part_end")[0];
    assert_eq!(end["outcome"], "invalid_arguments");
    assert_eq!(end["raw"], "{\"a\": tru");
    // No fragment: an empty object, ready.
    let mut none = events("");
    none.remove(2);
    let run = run_all(Provider::BedrockConverse, &body(&none));
    assert_eq!(named(&run, "part_end")[0]["outcome"], "complete");
    assert_eq!(run.message["output"]["message"]["content"][0]["toolUse"]["input"], json!({}));
}

#[test]
fn the_end_of_the_turn() {
    // metadata may be missing after messageStop: a normal end.
    let mut events = full();
    events.pop();
    let run = run_all(Provider::BedrockConverse, &body(&events));
    assert_eq!(run.error, None);
    assert_eq!(named(&run, "turn_end")[0]["stop_reason"], "tool_use");
    assert!(run.message.get("usage").is_none());
    // Ending before messageStop: incomplete, the open part committed so.
    let cut = &full()[..11];
    let run = run_all(Provider::BedrockConverse, &body(cut));
    assert_eq!(run.error.as_deref(), Some("Incomplete { expected: \"messageStop\" }"));
    assert_eq!(named(&run, "part_end").last().unwrap()["outcome"], "incomplete");
    // Events after the terminal one: warned, ignored.
    let mut events = full();
    events.push(delta(5, json!({"text": "late"})));
    let run = run_all(Provider::BedrockConverse, &body(&events));
    assert_eq!(warnings(&run), ["data_after_terminal"]);
}

#[test]
fn exceptions_are_typed_provider_errors_retryable_or_not() {
    for (exception, retryable) in [
        ("throttlingException", true),
        ("modelStreamErrorException", true),
        ("internalServerException", true),
        ("serviceUnavailableException", true),
        ("validationException", false),
    ] {
        let mut bytes = body(&full()[..3]);
        bytes.extend(converse_exception(exception, "went wrong"));
        let run = run_all(Provider::BedrockConverse, &bytes);
        let error = named(&run, "error")[0];
        assert_eq!(error["error_type"], exception);
        assert_eq!(error["message"], "went wrong");
        assert_eq!(error["output_emitted"], true);
        assert_eq!(is_retryable_error_type(exception), retryable, "{exception}");
        assert!(run.error.as_deref().unwrap().starts_with("Provider("), "{:?}", run.error);
        assert_eq!(named(&run, "part_end")[0]["outcome"], "incomplete");
    }
    // An exception first, before any event: typed, and no dialect picked
    // (an InvokeModel stream fails alike); with a dialect given, the same.
    for provider in [Provider::Auto, Provider::Bedrock, Provider::BedrockConverse] {
        let run = run_all(provider, &converse_exception("validationException", "bad model id"));
        assert_eq!(run.detected, provider.name(), "{provider:?}");
        let error = &named(&run, "error")[0];
        assert_eq!(
            (&error["error_type"], &error["message"], &error["output_emitted"]),
            (&json!("validationException"), &json!("bad model id"), &json!(false)),
            "{provider:?}"
        );
        assert!(run.error.as_deref().unwrap().starts_with("Provider("), "{:?}", run.error);
    }
}

#[test]
fn bad_input_warns_and_keeps_the_payload() {
    let mut bytes = body(&full()[..2]);
    // An unknown event type: carried through as an `unknown` event.
    bytes.extend(converse_event("futureEvent", &json!({"x": 1})));
    // Wrong shapes: quoted in the warning.
    bytes.extend(converse_event("contentBlockDelta", &json!({"contentBlockIndex": 0, "delta": "oops"})));
    bytes.extend(converse_event(
        "contentBlockDelta",
        &json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}),
    ));
    bytes.extend(es_message(&[(":event-type", "contentBlockDelta"), (":message-type", "event")], b"not json"));
    bytes.extend(converse_event("contentBlockStop", &json!({"contentBlockIndex": 7})));
    bytes.extend(es_message(&[(":message-type", "event")], b"{}"));
    bytes.extend(body(&full()[2..]));
    let run = run_all(Provider::BedrockConverse, &bytes);
    assert_eq!(run.error, None);
    assert_eq!(
        warnings(&run),
        ["invalid_event", "delta_type_mismatch", "invalid_event", "unknown_part_index", "invalid_event"]
    );
    let texts: Vec<&str> = named(&run, "warning").iter().map(|w| w["message"].as_str().unwrap()).collect();
    assert!(texts[0].contains(r#""delta":"oops""#), "{}", texts[0]);
    assert!(texts[2].contains("not json"), "{}", texts[2]);
    let unknown = named(&run, "unknown")[0];
    assert_eq!(unknown["provider_type"], "futureEvent");
    assert!(unknown["data"].as_str().unwrap().starts_with(r#"{"x":1,"#), "{unknown}");
    // The answer is folded as without the bad messages.
    assert_eq!(run.message, run_all(Provider::BedrockConverse, &body(&full())).message);
}

#[test]
fn a_crc_mismatch_is_fatal_after_the_messages_before_it() {
    let mut bytes = body(&full());
    let at = converse_event("messageStart", &json!({"role": "assistant"})).len() + 20;
    bytes[at] ^= 0x40;
    let mut stream = Stream::new(Provider::BedrockConverse);
    let mut events = Vec::new();
    let r = stream.feed(&bytes, |e: &StreamEvent<'_>| events.push(e.to_json()));
    assert!(matches!(r, Err(StreamError::EventStream(_))), "{r:?}");
    assert_eq!(events.len(), 1, "message_start only: {events:?}");
    assert_eq!(stream.feed(b"", |_| {}), Err(StreamError::Closed));
}

#[test]
fn the_wrong_bedrock_api_is_a_dialect_mismatch() {
    let mut s = Stream::new(Provider::Bedrock);
    let r = s.feed(&body(&full()), |_| {});
    assert_eq!(
        r,
        Err(StreamError::DialectMismatch { expected: Provider::Bedrock, detected: Provider::BedrockConverse })
    );
}

/// The stream split in two at every byte folds like the whole one.
#[test]
fn every_two_piece_chunking_folds_the_same() {
    let bytes = body(&full());
    let whole = run_with(Provider::BedrockConverse, &bytes, &mut || usize::MAX);
    for cut in 1..bytes.len() {
        let mut sizes = [cut, usize::MAX].into_iter().cycle();
        let run = run_with(Provider::BedrockConverse, &bytes, &mut || sizes.next().unwrap());
        assert_eq!(run, whole, "cut at {cut}");
    }
}

/// A body cut at any byte: never a panic; the text so far is a prefix of
/// the whole text; the end is normal only once `messageStop` arrived.
#[test]
fn truncation_at_every_byte() {
    let bytes = body(&full());
    let whole = run_with(Provider::BedrockConverse, &bytes, &mut || usize::MAX);
    let stop_at = body(&full()[..14]).len();
    let text = |r: &Run| -> String { named(r, "text_delta").iter().map(|e| e["text"].as_str().unwrap()).collect() };
    let full_text = text(&whole);
    for n in 0..bytes.len() {
        let run = run_with(Provider::Auto, &bytes[..n], &mut || usize::MAX);
        assert!(full_text.starts_with(&text(&run)), "cut at {n}");
        assert_eq!(run.error.is_none(), n >= stop_at, "cut at {n}: {:?}", run.error);
        let truncated = warnings(&run).iter().any(|w| w == "truncated_final_event");
        let boundary = (1..=full().len()).any(|k| body(&full()[..k]).len() == n);
        assert_eq!(truncated, n > 0 && !boundary, "cut at {n}");
    }
}

#[test]
fn reconnection_restarts_on_message_start() {
    let mut s = Stream::new(Provider::BedrockConverse);
    let mut events = Vec::new();
    let first = body(&full()[..6]);
    s.feed(&first[..first.len() - 3], |e: &StreamEvent<'_>| events.push(e.to_json())).unwrap();
    s.reconnect().unwrap();
    s.feed(&body(&full()), |e: &StreamEvent<'_>| events.push(e.to_json())).unwrap();
    s.finish(|e: &StreamEvent<'_>| events.push(e.to_json())).unwrap();
    assert!(events.iter().any(|e| e["event"] == "turn_reset"));
    assert_eq!(s.message(), run_all(Provider::BedrockConverse, &body(&full())).message);
}

#[test]
fn content_before_message_start_starts_the_turn_implicitly() {
    let mut events = full();
    let start = events.remove(0);
    events.insert(1, start);
    let run = run_all(Provider::BedrockConverse, &body(&events));
    assert_eq!(run.error, None);
    assert_eq!(warnings(&run), ["event_before_start"]);
    assert_eq!(run.message, run_all(Provider::BedrockConverse, &body(&full())).message);
    let mut twice = full();
    twice.insert(1, ("messageStart", json!({"role": "user"})));
    let run = run_all(Provider::BedrockConverse, &body(&twice));
    assert_eq!(warnings(&run), ["duplicate_start"]);
    assert_eq!(run.message["output"]["message"]["role"], "assistant");
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// A JSON value of the shapes ConverseStream events hold, right and
    /// wrong: indices, deltas of every kind, starts, stray types.
    fn payload() -> impl Strategy<Value = Value> {
        let index = prop_oneof![Just(json!(0)), Just(json!(1)), Just(json!(3)), Just(json!(-1)), Just(json!("0"))];
        let text = prop_oneof![Just("a"), Just("é\\\""), Just(""), Just("{\"k\": [1,"), Just("\"x\"}")];
        let delta = (text.clone(), 0..8u8).prop_map(|(t, k)| match k {
            0 => json!({"text": t}),
            1 => json!({"toolUse": {"input": t}}),
            2 => json!({"reasoningContent": {"text": t}}),
            3 => json!({"reasoningContent": {"signature": t}}),
            4 => json!({"reasoningContent": {"redactedContent": "AAEC"}}),
            5 => json!({"citation": {"title": t}}),
            6 => json!({"toolResult": [{"text": t}]}),
            _ => json!(t),
        });
        let start = prop_oneof![
            Just(json!({"toolUse": {"toolUseId": "t", "name": "f"}})),
            Just(json!({"toolResult": {"toolUseId": "t"}})),
            Just(json!({"image": {"format": "png"}})),
            Just(json!({})),
            Just(json!(5)),
        ];
        (index, delta, start, 0..6u8).prop_map(|(i, d, s, k)| match k {
            0 => json!({"contentBlockIndex": i, "delta": d}),
            1 => json!({"contentBlockIndex": i, "start": s}),
            2 => json!({"contentBlockIndex": i}),
            3 => json!({"stopReason": "end_turn"}),
            4 => json!({"usage": {"inputTokens": 1}, "metrics": {"latencyMs": 2}}),
            _ => json!({"role": "assistant"}),
        })
    }

    fn event_type() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("messageStart"),
            Just("contentBlockStart"),
            Just("contentBlockDelta"),
            Just("contentBlockStop"),
            Just("messageStop"),
            Just("metadata"),
            Just("other"),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any sequence of right or wrong events: no panic, and the same
        /// events and fold in every chunking.
        #[test]
        fn any_event_sequence_folds_the_same_in_any_chunking(
            events in proptest::collection::vec((event_type(), payload()), 0..12),
            exception in proptest::option::of(Just(())),
        ) {
            let mut bytes: Vec<u8> = events.iter().flat_map(|(t, p)| converse_event(t, p)).collect();
            if exception.is_some() {
                bytes.extend(converse_exception("throttlingException", "x"));
            }
            let run = run_all(Provider::BedrockConverse, &bytes);
            // (`messageStop` never starts the turn: before it, a stray one.)
            let answered = events.iter().any(|(t, _)| !matches!(*t, "other" | "messageStop")) || exception.is_some();
            prop_assert_eq!(named(&run, "message_start").len(), usize::from(answered));
            if exception.is_some() {
                // An error, unless the turn had ended (then: data_after_terminal).
                let ended = !named(&run, "turn_end").is_empty();
                prop_assert_eq!(run.error.is_some(), !ended, "{:?}", run.events);
            }
        }
    }
}

#[test]
fn the_event_stream_limits_are_the_configs() {
    use ssefold::eventstream::{DecoderLimits, EventStreamError};
    use ssefold::providers::StreamConfig;
    let big = delta(0, json!({"text": "x".repeat(4096)}));
    let bytes = body(&[("messageStart", json!({"role": "assistant"})), big]);
    // The default limits (16 MiB messages) take it.
    let mut stream = Stream::new(Provider::BedrockConverse);
    assert_eq!(stream.feed(&bytes, |_| {}), Ok(()));
    // A 1 KiB message limit refuses the second message, after the first.
    for provider in [Provider::BedrockConverse, Provider::Auto] {
        let config = StreamConfig {
            event_stream: DecoderLimits { max_message_len: 1024, max_headers_len: 1024 },
            ..StreamConfig::default()
        };
        let mut stream = Stream::with_config(provider, config);
        let mut events = Vec::new();
        let r = stream.feed(&bytes, |e: &StreamEvent<'_>| events.push(e.to_json()));
        assert!(
            matches!(r, Err(StreamError::EventStream(EventStreamError::MessageTooLarge { limit: 1024, .. }))),
            "{provider:?}: {r:?}"
        );
        assert_eq!(events.iter().filter(|e| e["event"] == "message_start").count(), 1, "{events:?}");
    }
    // Headers over their limit.
    let config = StreamConfig {
        event_stream: DecoderLimits { max_message_len: 1 << 20, max_headers_len: 16 },
        ..StreamConfig::default()
    };
    let mut stream = Stream::with_config(Provider::BedrockConverse, config);
    let r = stream.feed(&bytes, |_| {});
    assert!(matches!(r, Err(StreamError::EventStream(EventStreamError::HeadersTooLarge { limit: 16, .. }))), "{r:?}");
}

/// Issue 26 item 13: a tool input whose tree would not fit `max_memory_bytes / 16` stays its
/// text: the call is ready with it, its `part_end` content has no input, the response's JSON
/// writes the text where the input goes and `message()` builds the value.
#[test]
fn a_large_tool_input_stays_text_within_the_budget() {
    let args = format!("{{\"a\":[{}]}}", vec!["[[[[[]]]]]"; 200_000].join(","));
    let mut events = vec![
        ("messageStart", json!({"role": "assistant"})),
        ("contentBlockStart", json!({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "f"}}})),
    ];
    for piece in args.as_bytes().chunks(4096) {
        events.push(delta(0, json!({"toolUse": {"input": std::str::from_utf8(piece).unwrap()}})));
    }
    events.extend([stop(0), ("messageStop", json!({"stopReason": "tool_use"})), metadata()]);
    let bytes = body(&events);
    let config = ssefold::providers::StreamConfig { max_memory_bytes: 32 << 20, ..Default::default() };
    for chunk in [bytes.len(), 65536, 777] {
        let mut s = Stream::with_config(Provider::BedrockConverse, config.clone());
        let mut ends = Vec::new();
        let mut on_event = |e: &StreamEvent<'_>| {
            if let StreamEvent::PartEnd { content, tool_call: Some(call), outcome, .. } = e {
                ends.push(((*content).clone(), call.arguments == args, outcome.name()));
            }
        };
        for piece in bytes.chunks(chunk) {
            s.feed(piece, &mut on_event).unwrap();
        }
        s.finish(&mut on_event).unwrap();
        assert_eq!(ends, [(json!({"toolUse": {"toolUseId": "t", "name": "f"}}), true, "complete")], "{chunk}");
        assert!(s.memory_footprint() < args.len() + (1 << 20), "{chunk}: {}", s.memory_footprint());
        let expected: Value = serde_json::from_str(&args).unwrap();
        let mut json = Vec::new();
        s.message_view().write_json(&mut json);
        let written: Value = serde_json::from_slice(&json).unwrap();
        assert!(written["output"]["message"]["content"][0]["toolUse"]["input"] == expected, "{chunk}");
        assert_eq!(written["stopReason"], "tool_use");
        assert!(s.message() == written, "{chunk}");
    }
}
