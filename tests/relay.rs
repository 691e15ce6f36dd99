//! The relay on every fixture, golden and peer recording: the browser's
//! bytes, parsed as the AI SDK's `readUIMessageStream` rebuilds a UI message
//! (text and reasoning parts by id, tool parts by call id), give the same
//! text, reasoning and tool calls as the stream's own normalized events; the
//! catalog format gives the same text and ready tool calls; and any chunking
//! of the provider bytes gives the same browser bytes.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use ssefold::providers::{PartKind, PartOutcome, Provider, Stream, StreamEvent};
use ssefold::relay::{Relay, RelayConfig, RelayFormat, STREAM_ERROR_CODE};
use ssefold::sse::Decoder;

use crate::prov_common;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = Vec::new();
    for dir in ["fixtures/anthropic", "fixtures/openai_chat", "fixtures/openai_responses"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "sse") {
                files.push(path);
            }
        }
    }
    for entry in std::fs::read_dir(root.join("peer-fixtures")).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "sse" || e == "txt") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A part as a UI shows it: (kind, text) for text/reasoning, (tool, id,
/// name, input) for a ready tool call.
#[derive(Debug, Clone, PartialEq)]
enum UiPart {
    Text(String),
    Reasoning(String),
    Tool { id: String, name: String, input: Value },
}

/// What the stream's own events say: the parts in the order they started.
fn expected(bytes: &[u8]) -> Vec<UiPart> {
    let mut stream = Stream::new(Provider::Auto);
    let mut parts: Vec<(u32, UiPart)> = Vec::new();
    let mut names: std::collections::HashMap<u32, (String, String)> = Default::default();
    let mut args: std::collections::HashMap<u32, String> = Default::default();
    let mut on_event = |e: &StreamEvent<'_>| match *e {
        StreamEvent::ToolArgsDelta { part, json } => args.entry(part).or_default().push_str(json),
        StreamEvent::TurnReset => parts.clear(),
        StreamEvent::PartStart { part, kind: PartKind::Text | PartKind::Refusal, .. } => {
            parts.push((part, UiPart::Text(String::new())))
        }
        StreamEvent::PartStart { part, kind: PartKind::Reasoning, .. } => {
            parts.push((part, UiPart::Reasoning(String::new())))
        }
        StreamEvent::TextDelta { part, text } => {
            if let Some((_, UiPart::Text(t) | UiPart::Reasoning(t))) = parts.iter_mut().rev().find(|p| p.0 == part) {
                t.push_str(text);
            }
        }
        StreamEvent::PartMetadata { part, key, value } => {
            let entry = names.entry(part).or_default();
            match (key, value.as_str()) {
                ("id", Some(v)) if entry.0.is_empty() => entry.0 = v.to_owned(),
                ("name", Some(v)) if entry.1.is_empty() => entry.1 = v.to_owned(),
                _ => {}
            }
        }
        StreamEvent::PartEnd { part, kind: PartKind::ToolCall, outcome: PartOutcome::Complete, content, tool_call } => {
            let (id, name) = names.remove(&part).unwrap_or_default();
            // A call sent without an id goes by the one the stream gave it.
            let id = if id.is_empty() { tool_call.map(|c| c.id.to_owned()).unwrap_or_default() } else { id };
            // What a browser rebuilds from the argument deltas; the folded
            // part's own form when none streamed (a call given whole).
            let streamed = args.remove(&part).and_then(|text| serde_json::from_str(&text).ok());
            let input = streamed.unwrap_or_else(|| {
                let value = ["/input", "/toolUse/input", "/functionCall/args", "/function/arguments", "/arguments"]
                    .iter()
                    .find_map(|at| content.pointer(at));
                match value {
                    // Empty arguments: a call without any (complete), `{}`.
                    Some(Value::String(s)) if content.get("input").is_none() && s.trim().is_empty() => json!({}),
                    Some(Value::String(s)) if content.get("input").is_none() => serde_json::from_str(s).unwrap(),
                    Some(v) => v.clone(),
                    // No value in the part (a Gemini call without `args`, an input kept as
                    // text): the call's arguments (`{}` for none).
                    None => tool_call.and_then(|c| serde_json::from_str(c.arguments).ok()).unwrap_or(Value::Null),
                }
            });
            parts.push((part, UiPart::Tool { id, name, input }));
        }
        // A Responses item the provider ran whole: a tool part too.
        StreamEvent::PartEnd { part, kind: PartKind::Other, content, .. } => {
            let pick = |keys: &[&str]| -> Value {
                keys.iter()
                    .filter_map(|k| Some(((*k).to_owned(), content.get(*k)?.clone())))
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            };
            let (name, input) = match content["type"].as_str() {
                Some("web_search_call") => ("web_search", content.get("action").cloned().unwrap_or_else(|| pick(&[]))),
                Some("file_search_call") => ("file_search", pick(&["queries"])),
                Some("code_interpreter_call") => ("code_interpreter", pick(&["code", "container_id"])),
                Some("image_generation_call") => ("image_generation", pick(&[])),
                Some("tool_search_call") if content["execution"] == "server" => {
                    ("tool_search", content.get("arguments").cloned().unwrap_or_else(|| pick(&[])))
                }
                _ => return,
            };
            let id = content["id"].as_str().unwrap_or_default().to_owned();
            parts.push((part, UiPart::Tool { id, name: name.to_owned(), input }));
        }
        _ => {}
    };
    let _ = stream.feed(bytes, &mut on_event);
    let _ = stream.finish(&mut on_event);
    parts.into_iter().map(|p| p.1).collect()
}

/// The browser's bytes for `bytes` fed in chunks of `chunk`.
fn relay(format: RelayFormat, bytes: &[u8], chunk: usize) -> Vec<u8> {
    let mut relay = Relay::with_stream(RelayConfig::new(format), Stream::new(Provider::Auto));
    let mut out = Vec::new();
    for piece in bytes.chunks(chunk) {
        let relayed = relay.feed(piece).unwrap();
        out.extend_from_slice(relayed.bytes);
        if relayed.error.is_some() {
            break;
        }
    }
    if !relay.is_finished() {
        if let Ok(relayed) = relay.end_of_input() {
            out.extend_from_slice(relayed.bytes);
        }
        out.extend_from_slice(relay.finish(None).unwrap());
    }
    out
}

fn sse_data(bytes: &[u8]) -> Vec<(String, String)> {
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    let mut events = decoder.feed(bytes);
    while let Some(event) = events.next_event() {
        let event = event.unwrap();
        out.push((event.event().to_owned(), event.data().to_owned()));
    }
    out
}

/// The UI message the AI SDK's reader rebuilds from the chunks (text and
/// reasoning parts by id in the order they started; tool parts by call id,
/// with the input of `tool-input-available`). Also checks the protocol:
/// `start` first, deltas only inside their start/end, `[DONE]` last.
fn rebuild_ai_sdk(bytes: &[u8]) -> Vec<UiPart> {
    let events = sse_data(bytes);
    assert_eq!(events.last().map(|e| e.1.as_str()), Some("[DONE]"));
    let chunks: Vec<Value> = events[..events.len() - 1].iter().map(|e| serde_json::from_str(&e.1).unwrap()).collect();
    assert_eq!(chunks[0]["type"], "start");
    let mut parts: Vec<(String, UiPart)> = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut tools_started: Vec<String> = Vec::new();
    for chunk in &chunks {
        let id = chunk["id"].as_str().unwrap_or_default().to_owned();
        match chunk["type"].as_str().unwrap() {
            "text-start" => {
                open.push(id.clone());
                parts.push((id, UiPart::Text(String::new())));
            }
            "reasoning-start" => {
                open.push(id.clone());
                parts.push((id, UiPart::Reasoning(String::new())));
            }
            "text-delta" | "reasoning-delta" => {
                assert!(open.contains(&id), "delta outside its part: {chunk}");
                let (_, UiPart::Text(t) | UiPart::Reasoning(t)) = parts.iter_mut().find(|p| p.0 == id).unwrap() else {
                    panic!("{chunk}")
                };
                t.push_str(chunk["delta"].as_str().unwrap());
            }
            "text-end" | "reasoning-end" => {
                assert!(open.contains(&id), "end of a part not open: {chunk}");
                open.retain(|o| *o != id);
            }
            "tool-input-start" => tools_started.push(chunk["toolCallId"].as_str().unwrap().to_owned()),
            "tool-input-delta" => assert!(tools_started.iter().any(|t| chunk["toolCallId"] == t.as_str())),
            "tool-input-available" => {
                let call = chunk["toolCallId"].as_str().unwrap().to_owned();
                assert!(tools_started.contains(&call), "input available before its start: {chunk}");
                parts.push((
                    call.clone(),
                    UiPart::Tool {
                        id: call,
                        name: chunk["toolName"].as_str().unwrap().to_owned(),
                        input: chunk["input"].clone(),
                    },
                ));
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "parts left open: {open:?}");
    parts.into_iter().map(|p| p.1).collect()
}

/// The catalog as the seed's `useAgent` hook reads it: the answer is every
/// `text-delta`'s `delta` appended (`updateLastMessage(data.delta)`), and
/// each `tool-call` gives its `name` and `args`. The text of other choices
/// (OpenAI `n > 1`: `choice-delta`, which that hook ignores) is kept apart;
/// the texts are joined in the order the choices first spoke.
fn rebuild_catalog(bytes: &[u8]) -> (String, Vec<(String, Value)>) {
    let mut texts: Vec<(u64, String)> = Vec::new();
    let mut tools = Vec::new();
    for (event, data) in sse_data(bytes) {
        let v: Value = serde_json::from_str(&data).unwrap();
        let choice = match event.as_str() {
            "text-delta" => 0,
            "choice-delta" if v["kind"] != "reasoning" => v["choice"].as_u64().unwrap(),
            "tool-call" => {
                tools.push((v["name"].as_str().unwrap().to_owned(), v["args"].clone()));
                continue;
            }
            _ => continue,
        };
        let delta = v["delta"].as_str().unwrap();
        match texts.iter_mut().find(|t| t.0 == choice) {
            Some(t) => t.1.push_str(delta),
            None => texts.push((choice, delta.to_owned())),
        }
    }
    (texts.into_iter().map(|t| t.1).collect(), tools)
}

#[test]
fn ai_sdk_relay_rebuilds_every_fixtures_text_reasoning_and_tool_calls() {
    let mut checked = 0;
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let want = expected(&bytes);
        let whole = relay(RelayFormat::AiSdk, &bytes, usize::MAX);
        assert_eq!(rebuild_ai_sdk(&whole), want, "{}", path.display());
        assert_eq!(relay(RelayFormat::AiSdk, &bytes, 1), whole, "{}: 1-byte chunking", path.display());
        assert_eq!(relay(RelayFormat::AiSdk, &bytes, 61), whole, "{}: 61-byte chunking", path.display());
        checked += 1;
    }
    assert!(checked >= 60, "only {checked} fixtures found");
}

/// Every recording of every dialect (Gemini's `functionCall`, Bedrock's
/// `toolUse`, Ollama's `tool_calls` too): the browser rebuilds the stream's
/// text, reasoning and tool calls, inputs included.
#[test]
fn ai_sdk_relay_rebuilds_every_recordings_parts() {
    let mut tools = 0;
    for path in every_body() {
        let bytes = std::fs::read(&path).unwrap();
        let want = expected(&bytes);
        tools += want.iter().filter(|p| matches!(p, UiPart::Tool { .. })).count();
        assert_eq!(rebuild_ai_sdk(&relay(RelayFormat::AiSdk, &bytes, usize::MAX)), want, "{}", path.display());
    }
    assert!(tools >= 300, "only {tools} tool calls found");
}

#[test]
fn catalog_relay_carries_the_text_and_ready_tool_calls_of_every_body() {
    for path in every_body() {
        let bytes = std::fs::read(&path).unwrap();
        let want = expected(&bytes);
        let text: String = want
            .iter()
            .filter_map(|p| match p {
                UiPart::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        let tools: Vec<(String, Value)> = want
            .iter()
            .filter_map(|p| match p {
                UiPart::Tool { name, input, .. } => Some((name.clone(), input.clone())),
                _ => None,
            })
            .collect();
        let out = relay(RelayFormat::Catalog, &bytes, usize::MAX);
        assert_eq!(rebuild_catalog(&out), (text, tools), "{}", path.display());
        assert_eq!(relay(RelayFormat::Catalog, &bytes, 1), out, "{}: 1-byte chunking", path.display());
    }
}

/// Every provider body the tests hold: the fixtures above and the
/// recordings of other projects (`tests/recordings/`, every dialect).
fn every_body() -> Vec<PathBuf> {
    let mut files = fixtures();
    files.extend(prov_common::recording_files());
    files
}

/// The browser's bytes when the host folds and pushes each event itself
/// (no text as the provider escaped it reaches the relay this way).
fn relay_pushed(format: RelayFormat, bytes: &[u8]) -> Vec<u8> {
    let mut relay = Relay::new(RelayConfig::new(format));
    let mut stream = Stream::new(Provider::Auto);
    let mut out = Vec::new();
    let result = stream.feed(bytes, |event| out.extend_from_slice(relay.push(event)));
    if let Err(error) = result {
        out.extend_from_slice(relay.error(&error.to_string(), Some(STREAM_ERROR_CODE), false).unwrap());
    } else if let Err(error) = stream.finish(|event| out.extend_from_slice(relay.push(event))) {
        out.extend_from_slice(relay.error(&error.to_string(), Some(STREAM_ERROR_CODE), false).unwrap());
    }
    out.extend_from_slice(relay.finish(None).unwrap());
    out
}

/// The frames of AI SDK bytes without their ids, less the sources of a
/// Gemini answer's grounding (`source-url` / `source-document` after its
/// turn), which are in its folded message and no event: only a relay with
/// its own stream shows them.
fn without_grounding(bytes: &[u8]) -> (Vec<String>, usize) {
    let text = String::from_utf8_lossy(bytes);
    let mut sources = 0;
    let frames = text
        .split("\n\n")
        .filter(|frame| {
            let source = frame.contains("data: {\"type\":\"source-");
            sources += usize::from(source);
            !source
        })
        .map(|frame| frame.lines().filter(|l| !l.starts_with("id: ")).collect::<Vec<_>>().join("\n"))
        .collect();
    (frames, sources)
}

/// Relaying provider bytes (where the stream hands the relay each text and
/// argument delta as the provider escaped it, copied when it is escaped as
/// the relay escapes) writes exactly the bytes of relaying the same events
/// pushed one by one (every delta escaped by the relay), on every fixture
/// and recording, in both formats; but for a Gemini answer's grounding
/// sources (see [`without_grounding`]), only in the bytes fed.
#[test]
fn relaying_bytes_equals_relaying_their_events() {
    let mut checked = 0;
    let mut grounded = 0;
    for path in every_body() {
        let bytes = std::fs::read(&path).unwrap();
        for format in [RelayFormat::AiSdk, RelayFormat::Catalog] {
            let fed = relay(format, &bytes, usize::MAX);
            let pushed = relay_pushed(format, &bytes);
            if fed != pushed && format == RelayFormat::AiSdk && path.to_string_lossy().contains("gemini") {
                let ((fed, sources), (pushed, none)) = (without_grounding(&fed), without_grounding(&pushed));
                assert!(sources > 0 && none == 0, "{}", path.display());
                assert_eq!(fed, pushed, "{}: all but the grounding sources", path.display());
                grounded += 1;
                continue;
            }
            assert!(
                fed == pushed,
                "{} ({}): fed\n{}\npushed\n{}",
                path.display(),
                format.name(),
                String::from_utf8_lossy(&fed),
                String::from_utf8_lossy(&pushed)
            );
        }
        checked += 1;
    }
    assert!(checked >= 1300, "only {checked} bodies found");
    assert!(grounded >= 5, "only {grounded} Gemini bodies with grounding");
}

/// A turn's approval request, written by the relay in both formats: the
/// AI SDK's `tool-approval-request` and the catalog's `approval-required`.
#[test]
fn a_turns_approval_request_reaches_the_browser_in_both_formats() {
    use ssefold::agent::{AgentTurn, TurnConfig, TurnEvent};
    use ssefold::tools::{ToolExecutionEvent, ToolOptions};
    let body = concat!(
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":",
        "{\"tool_calls\":[{\"index\":0,\"id\":\"call_9\",\"type\":\"function\",\"function\":",
        "{\"name\":\"delete_file\",\"arguments\":\"{\\\"path\\\":\\\"/tmp/x\\\"}\"}}]}}]}\n\n",
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},",
        "\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    for format in [RelayFormat::AiSdk, RelayFormat::Catalog] {
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
        turn.add_tool("delete_file", ToolOptions { needs_approval: true, ..ToolOptions::default() });
        let mut relay = Relay::new(RelayConfig::new(format));
        let mut out = Vec::new();
        let mut requests = Vec::new();
        turn.feed(body.as_bytes(), 0, |e| match e {
            TurnEvent::Stream(s) => out.extend_from_slice(relay.push(s)),
            TurnEvent::Tool(ToolExecutionEvent::ApprovalRequested { approval_id, call_id, name, arguments }) => {
                requests.push((approval_id.clone(), call_id.clone(), name.clone(), arguments.clone()))
            }
            _ => {}
        });
        assert_eq!(requests.len(), 1, "{format:?}");
        let (approval_id, call_id, name, arguments) = &requests[0];
        let input: Value = serde_json::from_str(arguments).unwrap();
        out.extend_from_slice(relay.approval_required(approval_id, call_id, name, &input, None).unwrap());
        let events = sse_data(&out);
        let (ty, data) = events.last().unwrap();
        let data: Value = serde_json::from_str(data).unwrap();
        match format {
            RelayFormat::AiSdk => assert_eq!(
                data,
                json!({"type": "tool-approval-request", "approvalId": "approval_call_9", "toolCallId": "call_9"}),
                "{ty}"
            ),
            _ => {
                assert_eq!(ty, "approval-required");
                assert_eq!(
                    data,
                    json!({"approvalId": "approval_call_9", "toolName": "delete_file",
                        "input": {"path": "/tmp/x"}, "message": "Allow delete_file to run?", "toolCallId": "call_9"})
                );
            }
        }
    }
}
