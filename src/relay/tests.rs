//! Rules of the relay, one test each.

use serde_json::{json, Value};

use super::catalog::Tokens;
use super::*;
use crate::providers::{PartKind, Provider};
use crate::sse::Decoder;

const ANTHROPIC: &str = concat!(
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"line one\\n\\ndata: not an event\\r\\nid: 99\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Pa\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ris\\\"}\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

/// The browser's view: (id, event name, data) of every SSE event.
fn browser_events(bytes: &[u8]) -> Vec<(String, String, String)> {
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    let mut events = decoder.feed(bytes);
    while let Some(event) = events.next_event() {
        let event = event.unwrap();
        out.push((event.id().unwrap_or("").to_owned(), event.event().to_owned(), event.data().to_owned()));
    }
    assert_eq!(decoder.finish().discarded_bytes, 0, "every frame is complete");
    out
}

fn relay_all(format: RelayFormat, input: &str, chunk: usize) -> (Relay, Vec<u8>) {
    let mut relay = Relay::with_stream(RelayConfig::new(format), Stream::new(Provider::Auto));
    let mut out = Vec::new();
    for piece in input.as_bytes().chunks(chunk) {
        let relayed = relay.feed(piece).unwrap();
        assert!(relayed.error.is_none());
        out.extend_from_slice(relayed.bytes);
    }
    out.extend_from_slice(relay.end_of_input().unwrap().bytes);
    (relay, out)
}

fn chunk_types(bytes: &[u8]) -> Vec<String> {
    browser_events(bytes)
        .iter()
        .map(|(_, _, data)| {
            if data == "[DONE]" {
                return "[DONE]".to_owned();
            }
            let v: Value = serde_json::from_str(data).unwrap();
            v["type"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn ai_sdk_chunks_follow_the_ui_message_stream_protocol() {
    let (mut relay, mut out) = relay_all(RelayFormat::AiSdk, ANTHROPIC, ANTHROPIC.len());
    out.extend_from_slice(relay.tool_result("toolu_1", &json!({"temp": 18}), false, Some(120)).unwrap());
    out.extend_from_slice(relay.finish(None).unwrap());
    assert_eq!(
        chunk_types(&out),
        [
            "start",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "tool-input-start",
            // Coalesced (the default 4 KiB): the call's two deltas as one.
            "tool-input-delta",
            "tool-input-available",
            "message-metadata",
            "tool-output-available",
            "finish-step",
            "finish",
            "[DONE]"
        ]
    );
    let events = browser_events(&out);
    let delta: Value = serde_json::from_str(&events[6].2).unwrap();
    assert_eq!(delta["inputTextDelta"], "{\"city\": \"Paris\"}");
    let available: Value = serde_json::from_str(&events[7].2).unwrap();
    assert_eq!(
        available,
        json!({"type": "tool-input-available", "toolCallId": "toolu_1", "toolName": "get_weather", "input": {"city": "Paris"}})
    );
    // The usage as the provider reported it, when its turn ends.
    let metadata: Value = serde_json::from_str(&events[8].2).unwrap();
    assert_eq!(metadata["messageMetadata"]["usage"]["output_tokens"], 9);
    let finish: Value = serde_json::from_str(&events[11].2).unwrap();
    assert_eq!(finish["type"], "finish");
    assert_eq!(finish["finishReason"], "tool-calls");
    assert_eq!(finish["messageMetadata"]["usage"]["output_tokens"], 9);
    assert_eq!(finish["messageMetadata"]["steps"], 1);
    // Ids count up from 1 on every event but [DONE].
    let ids: Vec<&str> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(ids[..12], ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"]);
}

#[test]
fn text_with_newlines_and_field_names_stays_inside_one_event() {
    let (_, out) = relay_all(RelayFormat::AiSdk, ANTHROPIC, 7);
    let events = browser_events(&out);
    let delta: Value = serde_json::from_str(&events[3].2).unwrap();
    assert_eq!(delta["delta"], "line one\n\ndata: not an event\r\nid: 99");
    assert!(events.iter().all(|e| e.0 != "99"));
}

#[test]
fn any_chunking_of_the_provider_bytes_gives_the_same_browser_bytes() {
    let (_, whole) = relay_all(RelayFormat::AiSdk, ANTHROPIC, ANTHROPIC.len());
    for chunk in [1, 2, 3, 17, 64] {
        assert_eq!(relay_all(RelayFormat::AiSdk, ANTHROPIC, chunk).1, whole, "chunk {chunk}");
    }
    let (_, whole) = relay_all(RelayFormat::Catalog, ANTHROPIC, ANTHROPIC.len());
    assert_eq!(relay_all(RelayFormat::Catalog, ANTHROPIC, 1).1, whole);
}

/// The seed's catalog (its `text-delta`, `tool-call`, `tool-result`,
/// `approval-required`, `step-completed`, `log`, `finish`, `error`), member
/// for member.
#[test]
fn catalog_events_carry_the_seeds_payloads_exactly() {
    let (mut relay, mut out) = relay_all(RelayFormat::Catalog, ANTHROPIC, ANTHROPIC.len());
    out.extend_from_slice(relay.tool_result("toolu_1", &json!({"temp": 18}), false, Some(120)).unwrap());
    out.extend_from_slice(
        relay
            .approval_required(
                "ap_1",
                "toolu_2",
                "delete_file",
                &json!({"path": "/"}),
                Some("Delete '/'? This cannot be undone."),
            )
            .unwrap(),
    );
    out.extend_from_slice(relay.tool_result("toolu_2", &json!("denied"), true, None).unwrap());
    let metadata = json!({"pageId": "page-123"});
    let at = "2025-01-15T10:30:00.000Z";
    out.extend_from_slice(relay.log("info", "ran get_weather", Some(&metadata), at, "trace-abc").unwrap());
    out.extend_from_slice(relay.log("warn", "slow", None, at, "trace-abc").unwrap());
    out.extend_from_slice(relay.error("a tool failed", Some("tool_failed"), true).unwrap());
    out.extend_from_slice(relay.error("no code", None, true).unwrap());
    out.extend_from_slice(relay.finish(None).unwrap());
    let events = browser_events(&out);
    let names: Vec<&str> = events.iter().map(|e| e.1.as_str()).collect();
    assert_eq!(
        names,
        [
            "text-delta",
            "tool-input-delta",
            "tool-input-delta",
            "tool-input-delta",
            "tool-call",
            "tool-result",
            "approval-required",
            "tool-result",
            "log",
            "log",
            "error",
            "error",
            "step-completed",
            "finish"
        ]
    );
    let data = |i: usize| serde_json::from_str::<Value>(&events[i].2).unwrap();
    assert_eq!(data(0), json!({"delta": "line one\n\ndata: not an event\r\nid: 99"}));
    // The arguments as they stream (the first delta names the tool), then
    // the ready call.
    assert_eq!(data(1), json!({"id": "toolu_1", "name": "get_weather", "delta": ""}));
    let streamed: String = (2..4).map(|i| data(i)["delta"].as_str().unwrap().to_owned()).collect();
    assert_eq!(serde_json::from_str::<Value>(&streamed).unwrap(), json!({"city": "Paris"}));
    assert_eq!(data(4), json!({"id": "toolu_1", "name": "get_weather", "args": {"city": "Paris"}}));
    assert_eq!(data(5), json!({"id": "toolu_1", "name": "get_weather", "result": {"temp": 18}, "duration": 120}));
    assert_eq!(
        data(6),
        json!({"approvalId": "ap_1", "toolName": "delete_file", "input": {"path": "/"},
               "message": "Delete '/'? This cannot be undone.", "toolCallId": "toolu_2"})
    );
    // The name of an approved call is known from its approval; no duration
    // given: none sent; a failed tool says so.
    assert_eq!(data(7), json!({"id": "toolu_2", "name": "delete_file", "result": "denied", "isError": true}));
    assert_eq!(
        data(8),
        json!({"level": "info", "message": "ran get_weather", "metadata": {"pageId": "page-123"},
               "timestamp": at, "traceId": "trace-abc"})
    );
    assert_eq!(data(9), json!({"level": "warn", "message": "slow", "timestamp": at, "traceId": "trace-abc"}));
    assert_eq!(data(10), json!({"error": "a tool failed", "code": "tool_failed", "recoverable": true}));
    assert_eq!(data(11), json!({"error": "no code", "recoverable": true}));
    assert_eq!(
        data(12),
        json!({"stepNumber": 1, "usage": {"promptTokens": 3, "completionTokens": 9, "totalTokens": 12},
               "stopReason": "tool_use", "providerUsage": {"input_tokens": 3, "output_tokens": 9}})
    );
    // The run ended while the model still called tools: the host's limit.
    assert_eq!(
        data(13),
        json!({"finishReason": "max-steps", "usage": {"promptTokens": 3, "completionTokens": 9, "totalTokens": 12},
               "stepCount": 1, "stopReason": "tool_use"})
    );
    let headers: Vec<(&str, &str)> = relay.headers().to_vec();
    assert_eq!(
        headers,
        [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("connection", "keep-alive"),
            ("x-accel-buffering", "no")
        ]
    );
}

#[test]
fn reasoning_is_not_answer_text_in_the_catalog() {
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::Catalog));
    let mut out = Vec::new();
    out.extend_from_slice(relay.push(&StreamEvent::PartStart {
        part: 0,
        kind: PartKind::Reasoning,
        choice: 0,
        index: 0,
        provider_type: "thinking",
        tool_call: None,
    }));
    out.extend_from_slice(relay.push(&StreamEvent::TextDelta { part: 0, text: "hmm" }));
    out.extend_from_slice(relay.push(&StreamEvent::PartStart {
        part: 1,
        kind: PartKind::Text,
        choice: 0,
        index: 1,
        provider_type: "text",
        tool_call: None,
    }));
    out.extend_from_slice(relay.push(&StreamEvent::TextDelta { part: 1, text: "Hi" }));
    let events = browser_events(&out);
    let got: Vec<(&str, &str)> = events.iter().map(|e| (e.1.as_str(), e.2.as_str())).collect();
    assert_eq!(got, [("reasoning-delta", "{\"delta\":\"hmm\"}"), ("text-delta", "{\"delta\":\"Hi\"}")]);
}

#[test]
fn a_restarted_answer_is_reset_in_the_catalog() {
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::Catalog));
    let text = |part| StreamEvent::PartStart {
        part,
        kind: PartKind::Text,
        choice: 0,
        index: 0,
        provider_type: "text",
        tool_call: None,
    };
    let mut out = Vec::new();
    out.extend_from_slice(relay.push(&text(0)));
    out.extend_from_slice(relay.push(&StreamEvent::TextDelta { part: 0, text: "Hel" }));
    out.extend_from_slice(relay.push(&StreamEvent::TurnReset));
    out.extend_from_slice(relay.push(&text(0)));
    out.extend_from_slice(relay.push(&StreamEvent::TextDelta { part: 0, text: "Hello" }));
    let events = browser_events(&out);
    let got: Vec<(&str, &str)> = events.iter().map(|e| (e.1.as_str(), e.2.as_str())).collect();
    assert_eq!(
        got,
        [
            ("text-delta", "{\"delta\":\"Hel\"}"),
            ("turn-reset", "{}"),
            ("text-delta", "{\"delta\":\"\",\"snapshot\":\"\"}"),
            ("text-delta", "{\"delta\":\"Hello\"}"),
        ]
    );
    // The snapshot rule rebuilds the answer: the last snapshot, then deltas.
    let mut answer = String::new();
    for (_, name, data) in &events {
        let data: Value = serde_json::from_str(data).unwrap();
        if name == "text-delta" {
            match data["snapshot"].as_str() {
                Some(snapshot) => answer = snapshot.to_owned(),
                None => answer.push_str(data["delta"].as_str().unwrap()),
            }
        }
    }
    assert_eq!(answer, "Hello");
    for (_, name, _) in &events {
        assert!(CATALOG_EVENT_NAMES.contains(&name.as_str()), "{name} is listed");
    }
}

/// Every provider stop reason's `finishReason` (the map documented on
/// [`FinishReason`]).
#[test]
fn every_stop_reason_maps_to_one_of_the_seeds_finish_reasons() {
    let rows: &[(&[&str], &str)] = &[
        (&["end_turn", "stop_sequence", "pause_turn", "stop", "completed", "STOP", "refusal", ""], "stop"),
        (&["tool_use", "tool_calls", "function_call"], "max-steps"),
        (&["max_tokens", "length", "max_output_tokens", "MAX_TOKENS", "model_context_window_exceeded"], "error"),
        (&["content_filter", "SAFETY", "RECITATION", "guardrail_intervened", "content_filtered"], "error"),
        (&["MALFORMED_FUNCTION_CALL", "OTHER", "incomplete", "a_reason_added_later"], "error"),
        (&["aborted"], "cancelled"),
    ];
    for (reasons, want) in rows {
        for reason in *reasons {
            assert_eq!(FinishReason::of(reason, false).name(), *want, "{reason:?}");
            // A fatal error relayed: `error`, unless the host aborted.
            let failed = if *reason == "aborted" { "cancelled" } else { "error" };
            assert_eq!(FinishReason::of(reason, true).name(), failed, "{reason:?} after an error");
        }
    }
    // Through the relay: a normal answer, then a broken stream.
    let (mut relay, _) = relay_all(
        RelayFormat::Catalog,
        &ANTHROPIC.replace("\"stop_reason\":\"tool_use\"", "\"stop_reason\":\"end_turn\""),
        4096,
    );
    let finish = browser_events(relay.finish(None).unwrap()).pop().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&finish.2).unwrap()["finishReason"], "stop");
    let mut relay = Relay::with_stream(RelayConfig::new(RelayFormat::Catalog), Stream::new(Provider::Anthropic));
    let out = relay.feed(b"event: message_start\ndata: {not json}\n\n").unwrap().bytes.to_vec();
    let error: Value = serde_json::from_str(&browser_events(&out).pop().unwrap().2).unwrap();
    assert_eq!(error["code"], STREAM_ERROR_CODE);
    assert_eq!(error["recoverable"], false);
    assert!(error["error"].as_str().unwrap().contains("not JSON"), "{error}");
    let finish = browser_events(relay.finish(None).unwrap()).pop().unwrap();
    assert_eq!(serde_json::from_str::<Value>(&finish.2).unwrap()["finishReason"], "error");
}

#[test]
fn usage_of_every_dialect_is_counted_and_summed_over_steps() {
    let rows = [
        (json!({"input_tokens": 3, "output_tokens": 5}), (3, 5, 8)),
        (json!({"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 9}), (3, 5, 9)),
        (
            json!({"promptTokenCount": 3, "candidatesTokenCount": 4, "thoughtsTokenCount": 1, "totalTokenCount": 8}),
            (3, 5, 8),
        ),
        (json!({"prompt_eval_count": 3, "eval_count": 5}), (3, 5, 8)),
        (json!({"inputTokens": 3, "outputTokens": 5, "totalTokens": 8}), (3, 5, 8)),
        (json!({}), (0, 0, 0)),
    ];
    for (usage, (prompt, completion, total)) in rows {
        assert_eq!(Tokens::of(&usage), Tokens { prompt, completion, total }, "{usage}");
    }
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::Catalog));
    let mut out = Vec::new();
    let message = json!({});
    for step in 0..2 {
        out.extend_from_slice(relay.push(&StreamEvent::MessageStart { provider: "anthropic", message: &message }));
        let usage = json!({"input_tokens": 10 + step, "output_tokens": 2});
        out.extend_from_slice(relay.push(&StreamEvent::Usage { usage: &usage }));
        out.extend_from_slice(relay.push(&StreamEvent::TurnEnd { stop_reason: Some("end_turn") }));
        out.extend_from_slice(relay.finish_step().unwrap());
    }
    out.extend_from_slice(relay.finish(None).unwrap());
    let events = browser_events(&out);
    let data: Vec<Value> = events.iter().map(|e| serde_json::from_str(&e.2).unwrap()).collect();
    assert_eq!(data[0]["stepNumber"], 1);
    assert_eq!(data[1]["stepNumber"], 2);
    assert_eq!(data[1]["usage"], json!({"promptTokens": 11, "completionTokens": 2, "totalTokens": 13}));
    assert_eq!(
        data[2],
        json!({"finishReason": "stop", "usage": {"promptTokens": 21, "completionTokens": 4, "totalTokens": 25},
               "stepCount": 2, "stopReason": "end_turn"})
    );
}

#[test]
fn iso_timestamps_come_from_the_hosts_milliseconds() {
    assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso_timestamp(1_736_937_000_000), "2025-01-15T10:30:00.000Z");
    assert_eq!(iso_timestamp(951_782_400_123), "2000-02-29T00:00:00.123Z");
    assert_eq!(iso_timestamp(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
    assert_eq!(iso_timestamp(u64::MAX), "9999-12-31T23:59:59.999Z");
}

#[test]
fn a_reconnecting_browser_gets_what_it_missed_or_a_clear_error() {
    let (mut relay, out) = relay_all(RelayFormat::AiSdk, ANTHROPIC, ANTHROPIC.len());
    let events = browser_events(&out);
    let missed = relay.replay_after("4").unwrap().to_vec();
    assert_eq!(browser_events(&missed), events[4..].to_vec());
    assert_eq!(relay.replay_after(&relay.last_event_id().to_string()).unwrap(), b"");
    assert_eq!(relay.replay_after("999"), Err(RelayError::UnknownEventId("999".into())));
    assert_eq!(relay.replay_after("abc"), Err(RelayError::UnknownEventId("abc".into())));

    let config = RelayConfig { replay_bytes: 300, ..RelayConfig::new(RelayFormat::AiSdk) };
    let mut small = Relay::with_stream(config, Stream::new(Provider::Auto));
    small.feed(ANTHROPIC.as_bytes()).unwrap();
    match small.replay_after("1") {
        Err(RelayError::ReplayTooOld { requested, oldest: Some(oldest) }) => {
            assert_eq!(requested, "1");
            assert!(oldest > 2);
            // From the oldest kept on, replay works.
            assert!(small.replay_after(&(oldest - 1).to_string()).is_ok());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn keep_alives_follow_the_hosts_clock() {
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::Catalog));
    assert_eq!(relay.keep_alive(1_000), b"", "the first call sets the clock");
    assert_eq!(relay.keep_alive(10_000), b"");
    assert_eq!(relay.keep_alive(16_000), b": keep-alive\n\n");
    assert_eq!(relay.keep_alive(20_000), b"");
    relay.log("info", "x", None, "2025-01-15T10:30:00.000Z", "t").unwrap();
    assert_eq!(relay.keep_alive(31_500), b"", "output counts as activity");
    assert_eq!(relay.keep_alive(46_500), b": keep-alive\n\n");
    let last = relay.last_event_id();
    assert_eq!(last, 1, "keep-alives carry no id");
}

#[test]
fn nothing_is_sent_after_finish() {
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
    let finish = relay.finish(Some(&json!({"output_tokens": 1}))).unwrap().to_vec();
    assert_eq!(chunk_types(&finish), ["start", "finish", "[DONE]"], "no step was open: none is made");
    assert_eq!(relay.log("info", "late", None, "", ""), Err(RelayError::Finished));
    assert_eq!(relay.finish(None), Err(RelayError::Finished));
    assert_eq!(relay.push(&StreamEvent::TurnReset), b"");
    assert_eq!(relay.keep_alive(1_000_000), b"");
    assert_eq!(Relay::new(RelayConfig::new(RelayFormat::AiSdk)).feed(b"x").unwrap_err(), RelayError::NoStream);
    // A replay after the end ends with [DONE] again.
    assert!(relay.replay_after("2").unwrap().ends_with(b"data: [DONE]\n\n"));
}

#[test]
fn a_provider_error_and_a_broken_stream_become_error_chunks() {
    let mut relay = Relay::with_stream(RelayConfig::new(RelayFormat::AiSdk), Stream::new(Provider::Anthropic));
    let relayed = relay.feed(b"event: message_start\ndata: {not json}\n\n").unwrap();
    assert!(relayed.error.is_some());
    let out = relayed.bytes.to_vec();
    let events = browser_events(&out);
    let last: Value = serde_json::from_str(&events.last().unwrap().2).unwrap();
    assert_eq!(last["type"], "error");
    assert!(last["errorText"].as_str().unwrap().contains("not JSON"), "{last}");
}

#[test]
fn finish_after_finish_step_opens_no_empty_step() {
    for format in [RelayFormat::AiSdk, RelayFormat::Catalog] {
        let (mut relay, mut out) = relay_all(format, ANTHROPIC, ANTHROPIC.len());
        out.extend_from_slice(relay.tool_result("toolu_1", &json!(18), false, Some(3)).unwrap());
        out.extend_from_slice(relay.finish_step().unwrap());
        out.extend_from_slice(relay.error("late warning", None, true).unwrap());
        out.extend_from_slice(relay.finish(None).unwrap());
        let events = browser_events(&out);
        if format == RelayFormat::AiSdk {
            let types = chunk_types(&out);
            assert_eq!(types.iter().filter(|t| *t == "start-step").count(), 1, "{types:?}");
            assert_eq!(types.iter().filter(|t| *t == "finish-step").count(), 1, "{types:?}");
            assert_eq!(types[types.len() - 4..], ["finish-step", "error", "finish", "[DONE]"]);
        } else {
            let names: Vec<&str> = events.iter().map(|e| e.1.as_str()).collect();
            assert_eq!(names.iter().filter(|n| **n == "step-completed").count(), 1, "{names:?}");
            let finish: Value = serde_json::from_str(&events.last().unwrap().2).unwrap();
            assert_eq!(finish["stepCount"], 1);
        }
    }
}

/// The peer fixture with an Anthropic web search (`server_tool_use`, then
/// its `web_search_tool_result`), a client tool call, and a result for a
/// server call never shown.
const SERVER_TOOLS: &str =
    include_str!("../../tests/peer-fixtures/anthropic-sdk-python/server_tool_result_response.txt");

#[test]
fn provider_executed_tools_are_relayed_with_their_results() {
    let (mut relay, mut out) = relay_all(RelayFormat::AiSdk, SERVER_TOOLS, 61);
    out.extend_from_slice(relay.finish(None).unwrap());
    let chunks: Vec<Value> =
        browser_events(&out).iter().filter(|e| e.2 != "[DONE]").map(|e| serde_json::from_str(&e.2).unwrap()).collect();
    let of = |id: &str| -> Vec<&Value> { chunks.iter().filter(|c| c["toolCallId"] == id).collect() };
    let web: Vec<&str> = of("svu_web_001").iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(web, ["tool-input-start", "tool-input-available", "tool-output-available"]);
    assert!(of("svu_web_001").iter().all(|c| c["providerExecuted"] == true));
    assert_eq!(of("svu_web_001")[2]["output"][0]["url"], "https://example.com");
    // The client call is the host's to run: not provider-executed, no output.
    let client = of("tu_client_001");
    assert_eq!(client.last().unwrap()["type"], "tool-input-available");
    assert!(client.iter().all(|c| c.get("providerExecuted").is_none()));
    // A result for a call the UI never saw would be refused by the reader.
    assert!(of("svu_code_001").is_empty());

    let (mut relay, mut out) = relay_all(RelayFormat::Catalog, SERVER_TOOLS, SERVER_TOOLS.len());
    out.extend_from_slice(relay.finish(None).unwrap());
    let events = browser_events(&out);
    let results: Vec<Value> =
        events.iter().filter(|e| e.1 == "tool-result").map(|e| serde_json::from_str(&e.2).unwrap()).collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["id"], "svu_web_001");
    assert_eq!(results[0]["name"], "web_search");
    assert_eq!(results[1]["result"]["stdout"], "hello");
    assert!(results.iter().all(|r| r["providerExecuted"] == true && r.get("isError").is_none()));
}

#[test]
fn responses_server_items_and_mcp_calls_become_finished_tool_parts() {
    let item = |item: Value| {
        format!(
            "event: response.output_item.added\ndata: {}\n\nevent: response.output_item.done\ndata: {}\n\n",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item})
        )
    };
    let search = json!({"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}});
    let mcp = json!({"type": "mcp_call", "id": "mcp_1", "name": "roll", "server_label": "dice", "arguments": "{\"n\":2}", "output": "4", "error": null});
    let body = [
        "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"output\":[]}}\n\n".to_owned(),
        item(search),
        item(mcp).replace("\"output_index\":0", "\"output_index\":1"),
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\"}}\n\n".to_owned(),
    ]
    .concat();
    let (mut relay, mut out) = relay_all(RelayFormat::AiSdk, &body, body.len());
    out.extend_from_slice(relay.finish(None).unwrap());
    let chunks: Vec<Value> =
        browser_events(&out).iter().filter(|e| e.2 != "[DONE]").map(|e| serde_json::from_str(&e.2).unwrap()).collect();
    let tools: Vec<&Value> = chunks.iter().filter(|c| c.get("toolCallId").is_some()).collect();
    let summary: Vec<(&str, &str)> =
        tools.iter().map(|c| (c["type"].as_str().unwrap(), c["toolCallId"].as_str().unwrap())).collect();
    assert_eq!(
        summary,
        [
            ("tool-input-start", "ws_1"),
            ("tool-input-available", "ws_1"),
            ("tool-output-available", "ws_1"),
            ("tool-input-start", "mcp_1"),
            ("tool-input-delta", "mcp_1"),
            ("tool-input-available", "mcp_1"),
            ("tool-output-available", "mcp_1"),
        ]
    );
    // Deltas carry no such flag in the protocol; every other chunk does.
    assert!(tools.iter().all(|c| c["providerExecuted"] == true || c["type"] == "tool-input-delta"), "{tools:?}");
    assert_eq!(tools[1]["input"], json!({"type": "search", "query": "q"}));
    assert_eq!(tools[1]["toolName"], "web_search");
    assert_eq!(tools[2]["output"]["status"], "completed");
    assert_eq!(tools[5]["input"], json!({"n": 2}));
    assert_eq!(tools[6]["output"], "4");
}

/// A call's arguments stream as `tool-input-delta` once its id and name
/// are known (the first names the tool), and add up to the ready call's
/// `args`, in any chunking.
#[test]
fn catalog_streams_tool_arguments_before_the_ready_call() {
    let chat = include_str!("../../tests/fixtures/openai_chat/parallel_tools.sse");
    for chunk in [1, 7, chat.len()] {
        let (_, out) = relay_all(RelayFormat::Catalog, chat, chunk);
        let mut streamed: std::collections::BTreeMap<String, (Option<String>, String)> = Default::default();
        let mut ready = 0;
        for (_, name, data) in browser_events(&out) {
            let data: Value = serde_json::from_str(&data).unwrap();
            let id = data["id"].as_str().unwrap_or_default().to_owned();
            match name.as_str() {
                "tool-input-delta" => {
                    let entry = streamed.entry(id).or_default();
                    if entry.0.is_none() {
                        entry.0 = Some(data["name"].as_str().expect("the first delta names the tool").to_owned());
                    } else {
                        assert!(data.get("name").is_none(), "only the first delta names the tool");
                    }
                    entry.1.push_str(data["delta"].as_str().unwrap());
                }
                "tool-call" => {
                    let (tool, text) = streamed.get(&id).expect("arguments streamed before the ready call");
                    assert_eq!(tool.as_deref(), data["name"].as_str());
                    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), data["args"]);
                    ready += 1;
                }
                _ => {}
            }
        }
        assert_eq!(ready, 2, "both calls ready (chunk {chunk})");
    }
}

/// Each call's frames, appended to a store by id, are the browser bytes cut
/// at each event; a store resuming after any id (`resume_point`) sends what
/// `replay_after` sends.
#[test]
fn frames_cut_each_calls_output_at_its_events() {
    for format in [RelayFormat::AiSdk, RelayFormat::Catalog] {
        let mut relay = Relay::with_stream(RelayConfig::new(format), Stream::new(Provider::Auto));
        let mut store: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut out = Vec::new();
        let mut record = |relay: &Relay, bytes: &[u8], out: &mut Vec<u8>| {
            out.extend_from_slice(bytes);
            let mut joined = Vec::new();
            for (id, frame) in relay.frames() {
                assert_eq!(id, store.last().map_or(1, |(last, _)| last + 1), "ids are consecutive");
                joined.extend_from_slice(frame);
                store.push((id, frame.to_vec()));
            }
            joined.extend_from_slice(if relay.is_finished() { relay.trailer() } else { b"" });
            assert_eq!(joined, bytes, "the frames are the output");
        };
        for piece in ANTHROPIC.as_bytes().chunks(97) {
            let bytes = relay.feed(piece).unwrap().bytes.to_vec();
            record(&relay, &bytes, &mut out);
        }
        let bytes = relay.end_of_input().unwrap().bytes.to_vec();
        record(&relay, &bytes, &mut out);
        let bytes = relay.finish(None).unwrap().to_vec();
        record(&relay, &bytes, &mut out);
        assert_eq!(store.len() as u64, relay.last_event_id());
        let trailer = relay.trailer();
        assert_eq!(trailer, if format == RelayFormat::AiSdk { &b"data: [DONE]\n\n"[..] } else { b"" });
        for last in 0..=relay.last_event_id() {
            let after = resume_point(&last.to_string(), Some(1), Some(store.len() as u64)).unwrap();
            let mut served: Vec<u8> = store.iter().filter(|(id, _)| *id > after).flat_map(|(_, f)| f.clone()).collect();
            served.extend_from_slice(trailer);
            if last > 0 {
                assert_eq!(served, relay.replay_after(&last.to_string()).unwrap(), "after {last}");
            } else {
                assert_eq!(served, out);
            }
        }
        assert_eq!(relay.frames().count(), 0, "a replay writes no frame");
    }
    assert_eq!(parse_event_id(" 12 "), Ok(12));
    assert_eq!(parse_event_id("-1"), Err(RelayError::UnknownEventId("-1".into())));
    assert_eq!(resume_point("0", None, None), Ok(0));
    assert_eq!(resume_point("0", Some(1), Some(3)), Ok(0));
    assert_eq!(
        resume_point("1", Some(3), Some(3)),
        Err(RelayError::ReplayTooOld { requested: "1".into(), oldest: Some(3) })
    );
}

/// The AI SDK chunks of a recorded stream relayed whole, then finished.
fn ai_chunks_of_file(path: &str, provider: Provider, config: RelayConfig) -> Vec<Value> {
    let body = std::fs::read(format!("{}/tests/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut relay = Relay::with_stream(config, Stream::new(provider));
    let mut out = relay.feed(&body).unwrap().bytes.to_vec();
    out.extend_from_slice(relay.end_of_input().unwrap().bytes);
    out.extend_from_slice(relay.finish(None).unwrap());
    browser_events(&out).iter().filter(|e| e.2 != "[DONE]").map(|e| serde_json::from_str(&e.2).unwrap()).collect()
}

fn of_type<'a>(chunks: &'a [Value], kind: &str) -> Vec<&'a Value> {
    chunks.iter().filter(|c| c["type"] == kind).collect()
}

#[test]
fn a_restarted_answer_is_a_reset_step_in_the_open_step() {
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
    let mut out = Vec::new();
    let mut stream = Stream::new(Provider::Auto);
    let half =
        ANTHROPIC.find("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1").unwrap();
    stream.feed(&ANTHROPIC.as_bytes()[..half], |e| out.extend_from_slice(relay.push(e))).unwrap();
    // The server starts the answer over: the events rebuild it.
    out.extend_from_slice(relay.push(&StreamEvent::TurnReset));
    let mut again = Stream::new(Provider::Auto);
    again.feed(ANTHROPIC.as_bytes(), |e| out.extend_from_slice(relay.push(e))).unwrap();
    out.extend_from_slice(relay.finish(None).unwrap());
    let types = chunk_types(&out);
    let reset = types.iter().position(|t| t == "reset-step").expect("reset-step");
    assert_eq!(types[..reset], ["start", "start-step", "text-start", "text-delta", "text-end"]);
    // The same step goes on: no finish-step / start-step around the reset,
    // and the text part starts again under its first id.
    assert_eq!(types[reset + 1], "text-start");
    assert_eq!(types.iter().filter(|t| *t == "start-step").count(), 1);
    assert!(!types.iter().any(|t| t.starts_with("data-")));
    // Not shown when nothing of a turn is open.
    let mut idle = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
    assert_eq!(idle.push(&StreamEvent::TurnReset), b"");
}

#[test]
fn an_aborted_turn_ends_with_abort_not_finish() {
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
    let mut out = Vec::new();
    let mut stream = Stream::new(Provider::Auto);
    let half = ANTHROPIC.find("event: content_block_stop").unwrap();
    stream.feed(&ANTHROPIC.as_bytes()[..half], |e| out.extend_from_slice(relay.push(e))).unwrap();
    stream.abort(|e| out.extend_from_slice(relay.push(e)));
    out.extend_from_slice(relay.finish(None).unwrap());
    let types = chunk_types(&out);
    assert_eq!(types[types.len() - 4..], ["finish-step", "message-metadata", "abort", "[DONE]"]);
    assert!(!types.contains(&"finish".to_owned()));
    let events = browser_events(&out);
    let metadata: Value = serde_json::from_str(&events[events.len() - 3].2).unwrap();
    assert_eq!(metadata["messageMetadata"]["steps"], 1);
    assert_eq!(metadata["messageMetadata"]["usage"]["input_tokens"], 3);
    assert_eq!(serde_json::from_str::<Value>(&events[events.len() - 2].2).unwrap(), json!({"type": "abort"}));
}

#[test]
fn anthropic_citations_are_document_sources_and_text_end_citations() {
    let config = RelayConfig::new(RelayFormat::AiSdk);
    let chunks = ai_chunks_of_file("fixtures/anthropic/thinking_text_citations.sse", Provider::Auto, config);
    let docs = of_type(&chunks, "source-document");
    assert_eq!(docs.len(), 1, "one document cited: one source");
    assert_eq!(
        *docs[0],
        json!({"type": "source-document", "sourceId": "src-1", "mediaType": "text/plain", "title": "Doc"})
    );
    let end = chunks.iter().find(|c| c["type"] == "text-end" && c.get("citations").is_some()).expect("cited text");
    let citation = &end["citations"][0];
    assert_eq!(citation["source"]["id"], "src-1");
    assert_eq!(citation["source"]["sourceType"], "document");
    assert_eq!(citation["citedText"], "The grass is green.");
    // The source follows its text's end.
    let at = |c: &Value| chunks.iter().position(|x| x == c).unwrap();
    assert!(at(docs[0]) > at(end));
}

#[test]
fn responses_url_citations_are_url_sources_once_each() {
    let path = "recordings/openai_responses/vercel-ai/openai__responses__openai-web-search-tool.1.sse";
    let chunks = ai_chunks_of_file(path, Provider::Auto, RelayConfig::new(RelayFormat::AiSdk));
    let urls: Vec<&str> = of_type(&chunks, "source-url").iter().map(|c| c["url"].as_str().unwrap()).collect();
    assert!(urls.len() >= 5, "{urls:?}");
    let unique: std::collections::HashSet<_> = urls.iter().collect();
    assert_eq!(unique.len(), urls.len(), "a URL cited twice is one source");
    assert!(urls.iter().all(|u| u.starts_with("https://")));
    let end = chunks.iter().find(|c| c.get("citations").is_some()).unwrap();
    let first = &end["citations"][0];
    assert_eq!(first["source"]["sourceType"], "url");
    assert!(first["startIndex"].as_u64().unwrap() < first["endIndex"].as_u64().unwrap());
}

#[test]
fn converse_citations_and_gemini_grounding_are_sources() {
    let converse = ai_chunks_of_file(
        "fixtures/bedrock_converse/citations.bin",
        Provider::BedrockConverse,
        RelayConfig::new(RelayFormat::AiSdk),
    );
    let sources = converse.iter().filter(|c| c["type"].as_str().unwrap().starts_with("source-")).count();
    assert!(sources >= 1, "{converse:?}");
    let path = "recordings/gemini/pydantic-ai/models__test_google__test_google_model_web_search_tool_stream.sse";
    let gemini = ai_chunks_of_file(path, Provider::Gemini, RelayConfig::new(RelayFormat::AiSdk));
    let urls = of_type(&gemini, "source-url");
    assert!(!urls.is_empty());
    assert!(urls.iter().all(|c| c["url"].as_str().unwrap().starts_with("http")));
    // After the turn's end, before the finish.
    let types: Vec<&str> = gemini.iter().map(|c| c["type"].as_str().unwrap()).collect();
    let last_source = types.iter().rposition(|t| *t == "source-url").unwrap();
    assert!(types[last_source..].contains(&"finish"));
}

#[test]
fn media_parts_are_files_with_data_urls() {
    use base64::Engine;
    let config = RelayConfig::new(RelayFormat::AiSdk);
    let chunks = ai_chunks_of_file("fixtures/gemini/inline_data.sse", Provider::Gemini, config);
    let files = of_type(&chunks, "file");
    assert!(!files.is_empty());
    let body = std::fs::read(format!("{}/tests/fixtures/gemini/inline_data.sse", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut media: Vec<(String, Vec<u8>)> = Vec::new();
    let mut stream = Stream::new(Provider::Gemini);
    let mut on_event = |e: &StreamEvent<'_>| match *e {
        StreamEvent::PartStart { kind: PartKind::Media, .. } => media.push((String::new(), Vec::new())),
        StreamEvent::MediaDelta { mime_type, data, .. } => {
            let last = media.last_mut().unwrap();
            last.0 = mime_type.to_owned();
            last.1.extend_from_slice(data);
        }
        _ => {}
    };
    stream.feed(&body, &mut on_event).unwrap();
    let _ = stream.finish(&mut on_event);
    let expected: Vec<Value> = media
        .iter()
        .filter(|m| !m.1.is_empty())
        .map(|(mime, bytes)| {
            let url = format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes));
            json!({"type": "file", "mediaType": mime, "url": url})
        })
        .collect();
    assert_eq!(files.into_iter().cloned().collect::<Vec<_>>(), expected);
}

/// The argument text of every call a browser rebuilds, concatenated from
/// its `tool-input-delta`s, and the number of those.
fn rebuilt_inputs(bytes: &[u8]) -> (Vec<(String, String)>, usize) {
    let mut calls: Vec<(String, String)> = Vec::new();
    let mut deltas = 0;
    for (_, _, data) in browser_events(bytes) {
        let Ok(chunk) = serde_json::from_str::<Value>(&data) else { continue };
        let id = chunk["toolCallId"].as_str().unwrap_or_default().to_owned();
        match chunk["type"].as_str() {
            Some("tool-input-start") => calls.push((id, String::new())),
            Some("tool-input-delta") => {
                deltas += 1;
                let call = calls.iter_mut().find(|c| c.0 == id).expect("a delta of a started call");
                call.1.push_str(chunk["inputTextDelta"].as_str().unwrap());
            }
            Some("tool-input-available") => {
                let call = calls.iter().find(|c| c.0 == id).unwrap();
                let input: Value = serde_json::from_str(&call.1).unwrap();
                assert_eq!(input, chunk["input"], "the deltas add up to the input before it is available");
            }
            _ => {}
        }
    }
    (calls, deltas)
}

fn relay_with(config: RelayConfig, body: &[u8], chunk: usize, ticks: &[u64]) -> Vec<u8> {
    let mut relay = Relay::with_stream(config, Stream::new(Provider::Auto));
    let mut out = Vec::new();
    for (i, piece) in body.chunks(chunk.max(1)).enumerate() {
        out.extend_from_slice(relay.feed(piece).unwrap().bytes);
        if let Some(now) = ticks.get(i) {
            out.extend_from_slice(relay.tick(*now));
        }
    }
    out.extend_from_slice(relay.end_of_input().unwrap().bytes);
    out.extend_from_slice(relay.finish(None).unwrap());
    out
}

#[test]
fn tool_input_deltas_are_coalesced_by_bytes_and_flushed_before_other_frames() {
    let body = ssefold_corpus::anthropic_tool_use(64 << 10);
    let off = RelayConfig { tool_input_coalesce_bytes: 0, ..RelayConfig::new(RelayFormat::AiSdk) };
    let (plain, many) = rebuilt_inputs(&relay_with(off, &body, 512, &[]));
    let on = RelayConfig { tool_input_coalesce_bytes: 8192, ..RelayConfig::new(RelayFormat::AiSdk) };
    let (coalesced, few) = rebuilt_inputs(&relay_with(on, &body, 512, &[]));
    assert_eq!(coalesced, plain);
    assert!(many > 100 && few * 20 < many, "{many} deltas without, {few} with");
}

#[test]
fn held_tool_input_waits_for_the_hosts_timer() {
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
    let start = StreamEvent::PartStart {
        part: 0,
        kind: PartKind::ToolCall,
        choice: 0,
        index: 0,
        provider_type: "tool_use",
        tool_call: None,
    };
    relay.push(&start);
    relay.push(&StreamEvent::PartMetadata { part: 0, key: "id", value: &json!("call_1") });
    assert!(!relay.push(&StreamEvent::PartMetadata { part: 0, key: "name", value: &json!("f") }).is_empty());
    assert_eq!(relay.keep_alive(1000), b"");
    assert_eq!(relay.push(&StreamEvent::ToolArgsDelta { part: 0, json: "{\"a\":" }), b"", "held");
    assert!(relay.has_held_input());
    assert_eq!(relay.tick(1049), b"", "not yet 50 ms");
    let due = String::from_utf8(relay.tick(1050).to_vec()).unwrap();
    assert!(due.contains(r#""inputTextDelta":"{\"a\":""#), "{due}");
    assert!(!relay.has_held_input());
    assert_eq!(relay.tick(5000), b"");
    // Held, then another frame: the held text goes first.
    relay.push(&StreamEvent::ToolArgsDelta { part: 0, json: "1" });
    let text = StreamEvent::PartStart {
        part: 1,
        kind: PartKind::Text,
        choice: 0,
        index: 1,
        provider_type: "text",
        tool_call: None,
    };
    let types = chunk_types(relay.push(&text));
    assert_eq!(types, ["tool-input-delta", "text-start"]);
    // Held, then flush: written whatever its age.
    relay.push(&StreamEvent::ToolArgsDelta { part: 0, json: "}" });
    assert_eq!(chunk_types(relay.flush()), ["tool-input-delta"]);
    assert_eq!(relay.flush(), b"");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Any coalescing settings, chunking and ticks give the browser the same
    /// tool input as none.
    #[test]
    fn any_coalescing_rebuilds_the_same_tool_input(
        bytes in 0usize..20_000,
        ms in 0u64..200,
        chunk in 1usize..700,
        ticks in proptest::collection::vec(0u64..10_000, 0..64),
    ) {
        let body = ssefold_corpus::anthropic_tool_use(8 << 10);
        let off = RelayConfig { tool_input_coalesce_bytes: 0, ..RelayConfig::new(RelayFormat::AiSdk) };
        let (expected, _) = rebuilt_inputs(&relay_with(off, &body, chunk, &[]));
        let mut ticks = ticks;
        ticks.sort_unstable();
        let config = RelayConfig {
            tool_input_coalesce_bytes: bytes,
            tool_input_coalesce_ms: ms,
            ..RelayConfig::new(RelayFormat::AiSdk)
        };
        let (got, _) = rebuilt_inputs(&relay_with(config, &body, chunk, &ticks));
        proptest::prop_assert_eq!(got, expected);
    }
}

#[test]
fn a_free_text_tool_input_streams_with_input_encoding_text() {
    let config = RelayConfig::new(RelayFormat::AiSdk);
    let chunks = ai_chunks_of_file("fixtures/openai_responses/tool_streams.sse", Provider::Auto, config);
    let starts = of_type(&chunks, "tool-input-start");
    let text: Vec<_> = starts.iter().filter(|c| c["inputEncoding"] == "text").collect();
    assert_eq!(text.len(), 1, "{starts:?}");
    assert!(starts.iter().filter(|c| c.get("inputEncoding").is_none()).count() >= 1, "JSON inputs say nothing");
    let id = &text[0]["toolCallId"];
    let available = chunks.iter().find(|c| c["type"] == "tool-input-available" && c["toolCallId"] == *id).unwrap();
    assert!(available["input"].is_string());
}

#[test]
fn the_host_aborts_a_relay_with_its_stream_or_without() {
    let half = ANTHROPIC.find("event: content_block_stop").unwrap();
    // With its stream: the open text part ends, then the aborted end.
    let mut relay = Relay::with_stream(RelayConfig::new(RelayFormat::AiSdk), Stream::new(Provider::Auto));
    let mut out = relay.feed(&ANTHROPIC.as_bytes()[..half]).unwrap().bytes.to_vec();
    out.extend_from_slice(relay.abort().unwrap());
    let types = chunk_types(&out);
    assert_eq!(
        types[types.len() - 6..],
        ["text-end", "message-metadata", "finish-step", "message-metadata", "abort", "[DONE]"]
    );
    assert!(relay.is_finished() && relay.stream().unwrap().is_aborted());
    assert_eq!(relay.abort(), Err(RelayError::Finished));
    // Host-only, after the turn ended normally: still an aborted run.
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
    let mut stream = Stream::new(Provider::Auto);
    stream.feed(ANTHROPIC.as_bytes(), |e| out.extend_from_slice(relay.push(e))).unwrap();
    assert_eq!(
        chunk_types(relay.abort().unwrap())[..],
        ["message-metadata", "finish-step", "message-metadata", "abort", "[DONE]"]
    );
    // The catalog's finish says `cancelled`.
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::Catalog));
    let end = String::from_utf8(relay.abort().unwrap().to_vec()).unwrap();
    assert!(end.contains("event: finish\n") && end.contains("\"finishReason\":\"cancelled\""), "{end}");
}

/// The host's metadata (a turn's timings) is an AI SDK `message-metadata`
/// chunk; the catalog has no such event.
#[test]
fn host_metadata_is_message_metadata() {
    let metadata = json!({"timings": {"ttfc_ms": 120, "tokens_per_s": 41.5}});
    let metadata = metadata.as_object().unwrap();
    let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
    let out = String::from_utf8(relay.message_metadata(metadata).unwrap().to_vec()).unwrap();
    assert_eq!(
        out,
        "id: 1\ndata: {\"type\":\"start\"}\n\nid: 2\ndata: {\"type\":\"message-metadata\",\"messageMetadata\":\
         {\"timings\":{\"ttfc_ms\":120,\"tokens_per_s\":41.5}}}\n\n"
    );
    relay.finish(None).unwrap();
    assert_eq!(relay.message_metadata(metadata), Err(RelayError::Finished));
    let mut catalog = Relay::new(RelayConfig::new(RelayFormat::Catalog));
    assert_eq!(catalog.message_metadata(metadata).unwrap(), b"");
}
