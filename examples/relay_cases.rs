//! Writes the relay's browser stream for every fixture and peer recording,
//! with what a UI must rebuild from it, for the JavaScript clients that
//! judge it (`tests/js`, run by `make js-test`).
//!
//! ```text
//! cargo run --example relay_cases -- OUT_DIR
//! ```
//!
//! For each stream NAME: `NAME.ai-sdk.sse` (the AI SDK UI message stream:
//! the provider stream relayed, then a tool result for every ready tool
//! call, then the step closed and the finish) and `NAME.expected.json`: the text and reasoning
//! parts (text per part = the concatenation of its `text_delta`s, which the
//! fold tests prove equal to the folded message's text) and the tool calls
//! in the order they started: ready ones (id, name, input, the output the
//! host sent) in state `output-available`, the others (invalid or cut
//! arguments) in state `output-error`. Tools the provider ran (Anthropic
//! `server_tool_use` / `mcp_tool_use` with their `*_tool_result` block,
//! Responses `web_search_call`, `mcp_call`, …) get no host result: their
//! output is the one in the stream, with `providerExecuted: true`. Then
//! the sources the answer cites (`sources`: `{type: "source-url", url}` or
//! `{type: "source-document", title}`, each once), the files (`files`:
//! `{mediaType, url}`, the media parts' bytes as `data:` URLs, and a
//! Responses generated image), and the provider's last usage (`usage`,
//! the message metadata's).
//!
//! `NAME.catalog.sse` is the same stream in the `catalog` format as a host
//! sends it around a turn: a `log` first, the provider stream, then for
//! every ready host tool an `approval-required` and its `tool-result`, the
//! step and the `finish`; `NAME.catalog.json` says what the seed's frontend
//! must show from it (tests/js/catalog_frontend.test.mjs): the answer (text
//! of choice 0), the reasoning, the tools with their arguments and results,
//! the approvals, the provider's error messages, and whether usage came.
//!
//! Streams: the fixtures (Gemini and Bedrock ConverseStream ones too), the
//! peer fixtures, and the recordings (`tests/recordings`) that hold
//! provider-executed tools, tool calls of the other dialects, citations,
//! grounding or media.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use ssefold::providers::{PartKind, PartOutcome, Provider, Stream, StreamEvent, ToolInputFormat};
use ssefold::relay::{iso_timestamp, Relay, RelayConfig, RelayFormat, STREAM_ERROR_CODE};

fn streams(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let fixture_dirs = [
        "fixtures/anthropic",
        "fixtures/openai_chat",
        "fixtures/openai_responses",
        "fixtures/gemini",
        "fixtures/bedrock_converse",
    ];
    let mut dirs: Vec<PathBuf> = fixture_dirs.iter().map(|d| root.join(d)).collect();
    for entry in std::fs::read_dir(root.join("peer-fixtures")).expect("tests/peer-fixtures") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            dirs.push(path);
        }
    }
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).expect("fixture dir") {
            let path = entry.expect("dir entry").path();
            if path.extension().is_some_and(|e| e == "sse" || e == "txt" || e == "bin") {
                files.push(path);
            }
        }
    }
    // Recordings with provider-executed tools.
    const SERVER_TOOLS: [&str; 8] = [
        "\"server_tool_use\"",
        "\"mcp_tool_use\"",
        "\"web_search_call\"",
        "\"mcp_call\"",
        "\"code_interpreter_call\"",
        "\"file_search_call\"",
        "\"image_generation_call\"",
        "\"tool_search_call\"",
    ];
    // Recordings with tool calls of the other dialects (Gemini, Bedrock
    // ConverseStream).
    const OTHER_TOOL_CALLS: [&str; 2] = ["\"functionCall\"", "\"toolUse\""];
    // Recordings with citations, grounding or media.
    const CITED: [&str; 5] = ["citations_delta", "url_citation", "groundingChunks", "inlineData", "file_citation"];
    let mut pending = vec![root.join("recordings")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("recordings dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "sse" || e == "bin") {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let has = |marker: &str| memchr::memmem::find(&bytes, marker.as_bytes()).is_some();
                if SERVER_TOOLS.iter().chain(&OTHER_TOOL_CALLS).chain(&CITED).any(|t| has(t)) {
                    files.push(path);
                }
            }
        }
    }
    files.sort();
    files
}

/// The tool part a provider-executed tool leaves in the UI message, from
/// the folded part: a Responses item the provider ran whole (its id, the
/// tool's name, the input the item states, the item as output).
fn server_item(item: &Value) -> Option<Value> {
    let pick = |keys: &[&str]| -> Value {
        keys.iter()
            .filter_map(|k| Some(((*k).to_owned(), item.get(*k)?.clone())))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let (name, input) = match item["type"].as_str()? {
        "web_search_call" => ("web_search", item.get("action").cloned().unwrap_or_else(|| json!({}))),
        "file_search_call" => ("file_search", pick(&["queries"])),
        "code_interpreter_call" => ("code_interpreter", pick(&["code", "container_id"])),
        "image_generation_call" => ("image_generation", json!({})),
        "tool_search_call" if item["execution"] == "server" => {
            ("tool_search", item.get("arguments").cloned().unwrap_or_else(|| json!({})))
        }
        _ => return None,
    };
    let id = item["id"].as_str()?;
    let mut tool = json!({"toolCallId": id, "toolName": name, "providerExecuted": true});
    if item["status"] == "failed" {
        tool["state"] = json!("output-error");
    } else {
        tool["state"] = json!("output-available");
        tool["input"] = input;
        tool["output"] = item.clone();
    }
    Some(tool)
}

/// What the UI shows of a source: its URL, or a document's title.
fn source(kind: &str, at: &str) -> Value {
    if kind == "url" {
        json!({"type": "source-url", "url": at})
    } else {
        json!({"type": "source-document", "title": at})
    }
}

/// The sources a folded text part cites (Anthropic `citations`, Responses
/// `annotations`, Converse `citationsContent.citations`), and those of
/// Responses annotation events.
fn cited(content: &Value, added: &[Value]) -> Vec<Value> {
    let s = |v: &Value, k: &str| v[k].as_str().map(str::to_owned);
    let mut out = Vec::new();
    for c in content["citations"].as_array().into_iter().flatten() {
        let doc_title = || {
            s(c, "document_title").unwrap_or_else(|| format!("Document {}", c["document_index"].as_u64().unwrap_or(0)))
        };
        match c["type"].as_str().unwrap_or_default() {
            "char_location" | "page_location" | "content_block_location" => out.push(source("doc", &doc_title())),
            "search_result_location" => match s(c, "source") {
                Some(url) if url.starts_with("http") => out.push(source("url", &url)),
                Some(other) => out.push(source("doc", &s(c, "title").unwrap_or(other))),
                None => {}
            },
            _ => out.extend(s(c, "url").map(|u| source("url", &u))),
        }
    }
    let annotations = content["annotations"].as_array().filter(|a| !a.is_empty()).map(Vec::as_slice).unwrap_or(added);
    for a in annotations {
        match a["type"].as_str().unwrap_or_default() {
            "url_citation" => out.extend(s(a, "url").map(|u| source("url", &u))),
            "file_citation" | "container_file_citation" => {
                out.extend(s(a, "filename").or_else(|| s(a, "file_id")).map(|t| source("doc", &t)))
            }
            "file_path" => out.extend(s(a, "file_id").map(|t| source("doc", &t))),
            _ => {}
        }
    }
    for c in content.pointer("/citationsContent/citations").and_then(Value::as_array).into_iter().flatten() {
        match c.pointer("/location/web/url").and_then(Value::as_str) {
            Some(url) => out.push(source("url", url)),
            None => {
                out.push(source("doc", &s(c, "title").or_else(|| s(c, "source")).unwrap_or_else(|| "Document".into())))
            }
        }
    }
    out
}

/// Two cases the recordings never hold, from a fixture with reasoning,
/// text and citations (`events`): the server restarts the answer midway
/// (`turn_reset` after the reconnection: the relay's `reset-step`, which
/// only `ai` 7 reads: `ai7Only`), and the host aborts the turn midway
/// (`abort`, no `finish`).
fn synthetic(out: &Path, root: &Path) -> usize {
    let bytes = std::fs::read(root.join("fixtures/anthropic/thinking_text_citations.sse")).expect("fixture");
    // Cut after the event that gives the text its first delta.
    let text_delta = memchr::memmem::find(&bytes, b"\"text_delta\"").expect("a text delta");
    let cut = text_delta + memchr::memmem::find(&bytes[text_delta..], b"\n\n").expect("its end") + 2;
    for (name, abort) in [("synthetic_turn_reset", false), ("synthetic_abort", true)] {
        let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
        let mut browser = Vec::new();
        let mut texts: Vec<(u32, &'static str, String)> = Vec::new();
        let mut sources: Vec<Value> = Vec::new();
        let mut usage = Value::Null;
        let mut on_event = |e: &StreamEvent<'_>| {
            browser.extend_from_slice(relay.push(e));
            match *e {
                StreamEvent::TurnReset => {
                    texts.clear();
                    sources.clear();
                }
                StreamEvent::PartStart { part, kind: PartKind::Text, .. } => texts.push((part, "text", String::new())),
                StreamEvent::PartStart { part, kind: PartKind::Reasoning, .. } => {
                    texts.push((part, "reasoning", String::new()))
                }
                StreamEvent::TextDelta { part, text } => {
                    if let Some(t) = texts.iter_mut().rev().find(|t| t.0 == part) {
                        t.2.push_str(text);
                    }
                }
                StreamEvent::PartEnd { kind: PartKind::Text, content, .. } => sources.extend(cited(content, &[])),
                StreamEvent::Usage { usage: u } => usage = u.clone(),
                _ => {}
            }
        };
        let mut first = Stream::new(Provider::Auto);
        first.feed(&bytes[..cut], &mut on_event).expect("fixture");
        if abort {
            first.abort(&mut on_event);
        } else {
            on_event(&StreamEvent::TurnReset);
            let mut again = Stream::new(Provider::Auto);
            again.feed(&bytes, &mut on_event).expect("fixture");
            again.finish(&mut on_event).expect("fixture");
        }
        let mut seen = std::collections::HashSet::new();
        sources.retain(|s| seen.insert(s.to_string()));
        let texts: Vec<Value> = texts.into_iter().map(|(_, kind, text)| json!({"type": kind, "text": text})).collect();
        browser.extend_from_slice(relay.finish(None).expect("not finished"));
        let expected = json!({
            "source": name,
            "texts": texts,
            "tools": [],
            "sources": sources,
            "files": [],
            "usage": usage,
            "ai7Only": !abort,
            "aborted": abort,
        });
        std::fs::write(out.join(format!("{name}.ai-sdk.sse")), &browser).expect("write");
        std::fs::write(out.join(format!("{name}.expected.json")), expected.to_string()).expect("write");
    }
    2
}

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).expect("usage: relay_cases OUT_DIR"));
    std::fs::create_dir_all(&out).expect("create OUT_DIR");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut count = 0;
    for path in streams(&root) {
        let bytes = std::fs::read(&path).expect("read fixture");
        let name = path.strip_prefix(&root).expect("under tests/").to_string_lossy().replace(['/', '.'], "_");

        // The parts as the stream's own events give them.
        let mut texts: Vec<(u32, &'static str, String)> = Vec::new();
        let mut tools: Vec<Value> = Vec::new();
        let mut ids: std::collections::HashMap<u32, (Option<String>, Option<String>)> = Default::default();
        let mut provider_executed: std::collections::HashSet<u32> = Default::default();
        let mut sources: Vec<Value> = Vec::new();
        let mut added: Vec<Value> = Vec::new();
        let mut files: Vec<Value> = Vec::new();
        let mut media: std::collections::HashMap<u32, (String, Vec<u8>)> = Default::default();
        let mut usage = Value::Null;
        // The relay folds the provider bytes itself (as a server does; a
        // Gemini answer's grounding is read from its folded message).
        let mut relay = Relay::with_stream(RelayConfig::new(RelayFormat::AiSdk), Stream::new(Provider::Auto));
        let mut browser = Vec::new();
        // The same events in the catalog format, after the host's first log line.
        let mut catalog = Relay::new(RelayConfig::new(RelayFormat::Catalog));
        let mut page = Vec::new();
        let source_path = path.strip_prefix(&root).expect("under tests/").to_string_lossy().into_owned();
        let started = catalog
            .log(
                "info",
                "Turn started",
                Some(&json!({"source": source_path})),
                &iso_timestamp(1_736_937_000_000),
                "trace-cases",
            )
            .expect("not finished");
        page.extend_from_slice(started);
        // What the catalog page must show: the answer and reasoning of
        // choice 0 (the part's choice by part number), error messages, usage.
        let mut answer = String::new();
        let mut reasoning = String::new();
        let mut part_kinds: std::collections::HashMap<u32, (PartKind, u32)> = Default::default();
        let mut provider_errors: Vec<String> = Vec::new();
        let mut usage_seen = false;
        let stream_error;
        let mut stream = Stream::new(Provider::Auto);
        {
            let mut on_event = |e: &StreamEvent<'_>| {
                page.extend_from_slice(catalog.push(e));
                match *e {
                    StreamEvent::PartStart { part, kind, choice, .. } => {
                        part_kinds.insert(part, (kind, choice));
                    }
                    StreamEvent::TextDelta { part, text } => match part_kinds.get(&part) {
                        Some((PartKind::Text | PartKind::Refusal, 0)) => answer.push_str(text),
                        Some((PartKind::Reasoning, 0)) => reasoning.push_str(text),
                        _ => {}
                    },
                    StreamEvent::Error { error } => provider_errors.push(error.message.clone()),
                    StreamEvent::Usage { .. } => usage_seen = true,
                    StreamEvent::TurnReset => {
                        answer.clear();
                        reasoning.clear();
                    }
                    _ => {}
                }
                match *e {
                    StreamEvent::TurnReset => {
                        texts.clear();
                        tools.clear();
                        sources.clear();
                        files.clear();
                    }
                    StreamEvent::Usage { usage: u } => usage = u.clone(),
                    StreamEvent::Unknown { provider_type: "response.output_text.annotation.added", data, .. } => {
                        let event: Value = serde_json::from_str(data).unwrap_or_default();
                        added.push(event["annotation"].clone());
                    }
                    StreamEvent::PartEnd { kind: PartKind::Text, content, .. } => {
                        sources.extend(cited(content, &added));
                        added.clear();
                    }
                    StreamEvent::PartStart { part, kind: PartKind::Media, provider_type, .. }
                        if !provider_type.ends_with("partial_image") =>
                    {
                        media.insert(part, (String::new(), Vec::new()));
                    }
                    StreamEvent::MediaDelta { part, mime_type, data } => {
                        if let Some(m) = media.get_mut(&part) {
                            if m.0.is_empty() {
                                m.0 = mime_type.to_owned();
                            }
                            m.1.extend_from_slice(data);
                        }
                    }
                    StreamEvent::PartEnd { part, kind: PartKind::Media, .. } => {
                        use base64::Engine;
                        if let Some((mime, bytes)) = media.remove(&part).filter(|m| !m.1.is_empty()) {
                            let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
                            files.push(json!({"mediaType": mime, "url": format!("data:{mime};base64,{data}")}));
                        }
                    }
                    StreamEvent::PartStart { part, kind: PartKind::Text | PartKind::Refusal, .. } => {
                        texts.push((part, "text", String::new()))
                    }
                    StreamEvent::PartStart { part, kind: PartKind::Reasoning, .. } => {
                        texts.push((part, "reasoning", String::new()))
                    }
                    StreamEvent::TextDelta { part, text } => {
                        if let Some(t) = texts.iter_mut().rev().find(|t| t.0 == part) {
                            t.2.push_str(text);
                        }
                    }
                    StreamEvent::PartMetadata { part, key, value } => {
                        let entry = ids.entry(part).or_default();
                        match (key, value.as_str()) {
                            ("id", Some(v)) if entry.0.is_none() => entry.0 = Some(v.to_owned()),
                            ("name", Some(v)) if entry.1.is_none() => entry.1 = Some(v.to_owned()),
                            _ => {}
                        }
                    }
                    StreamEvent::PartStart { part, kind: PartKind::ToolCall, provider_type, .. } => {
                        // A tool part appears in the UI in the order calls start;
                        // until it ends, it is one that never became ready.
                        tools.push(json!({"part": part, "state": "output-error"}));
                        if matches!(provider_type, "server_tool_use" | "mcp_tool_use" | "mcp_call") {
                            provider_executed.insert(part);
                            if let Some(tool) = tools.last_mut() {
                                tool["providerExecuted"] = json!(true);
                            }
                        } else {
                            provider_executed.remove(&part);
                        }
                    }
                    StreamEvent::PartEnd { kind: PartKind::Other, content, .. } => {
                        if let Some(tool) = server_item(content) {
                            tools.push(tool);
                        }
                        if let (Some("image_generation_call"), Some(image)) =
                            (content["type"].as_str(), content["result"].as_str())
                        {
                            let mime = format!("image/{}", content["output_format"].as_str().unwrap_or("png"));
                            files.push(json!({"mediaType": mime, "url": format!("data:{mime};base64,{image}")}));
                        }
                        // An Anthropic result block: the output of the call it names.
                        let kind = content["type"].as_str().unwrap_or_default();
                        let call = content["tool_use_id"].as_str();
                        let shown = tools
                            .iter_mut()
                            .find(|t| t["toolCallId"].as_str() == call && t["providerExecuted"] == true);
                        if let (true, Some(tool)) = (kind.ends_with("_tool_result"), shown) {
                            let output = &content["content"];
                            let failed = content["is_error"] == true
                                || output["type"].as_str().is_some_and(|t| t.ends_with("_error"));
                            if failed {
                                tool["state"] = json!("output-error");
                                tool.as_object_mut().expect("object").remove("input");
                            } else {
                                tool["state"] = json!("output-available");
                                tool["output"] = output.clone();
                            }
                        }
                    }
                    StreamEvent::PartEnd { part, kind: PartKind::ToolCall, outcome, content, tool_call } => {
                        let (id, name) = ids.remove(&part).unwrap_or_default();
                        // Sent without an id: the one the stream gave the call.
                        let id = id.or_else(|| tool_call.map(|c| c.id.to_owned())).unwrap_or_default();
                        let Some(tool) = tools.iter_mut().rev().find(|t| t["part"] == part) else { return };
                        *tool = json!({"part": part, "toolCallId": id, "toolName": name.unwrap_or_default(), "state": "output-error"});
                        let server = provider_executed.contains(&part);
                        if server {
                            tool["providerExecuted"] = json!(true);
                        }
                        let text_input = tool_call.filter(|c| c.input_format == ToolInputFormat::Text);
                        if let (PartOutcome::Complete, Some(call)) = (outcome, text_input) {
                            // Free text: a string, the value when it is JSON (as the relay shows it).
                            let text = call.arguments;
                            tool["input"] = serde_json::from_str(text).unwrap_or_else(|_| Value::from(text));
                            tool["state"] = json!("output-available");
                        } else if outcome == PartOutcome::Complete {
                            let value = ["/input", "/toolUse/input", "/functionCall/args"]
                                .iter()
                                .find_map(|at| content.pointer(at))
                                .cloned();
                            let input = value.unwrap_or_else(|| {
                                match content.get("arguments").or_else(|| content.pointer("/function/arguments")) {
                                    Some(Value::String(s)) if s.trim().is_empty() => json!({}),
                                    Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
                                    Some(v) => v.clone(),
                                    // No value in the part (a Gemini call without `args`, an
                                    // input kept as text): the call's arguments (`{}` for none).
                                    None => tool_call
                                        .and_then(|c| serde_json::from_str(c.arguments).ok())
                                        .unwrap_or(Value::Null),
                                }
                            });
                            tool["input"] = input;
                            tool["state"] = json!("output-available");
                            if server {
                                // The provider's result: an `mcp_call` item's own
                                // output, or a later result block (until then, the
                                // call waits for it).
                                match (content["type"].as_str(), content.get("error").filter(|e| !e.is_null())) {
                                    (Some("mcp_call"), None) => tool["output"] = content["output"].clone(),
                                    (Some("mcp_call"), Some(_)) => {
                                        tool["state"] = json!("output-error");
                                        tool.as_object_mut().expect("object").remove("input");
                                    }
                                    _ => tool["state"] = json!("input-available"),
                                }
                            }
                        }
                    }
                    _ => {}
                }
            };
            let failed = stream.feed(&bytes, &mut on_event).err();
            stream_error = match failed {
                Some(error) => Some(error),
                None => stream.finish(&mut on_event).err(),
            };
        }
        // A broken stream (not a provider's error event, which the relay
        // showed): the host tells the page, as `Relay::feed` would.
        let failed_stream = stream_error.is_some() && provider_errors.is_empty();
        if let (true, Some(error)) = (failed_stream, &stream_error) {
            let told = catalog.error(&error.to_string(), Some(STREAM_ERROR_CODE), false).expect("not finished");
            page.extend_from_slice(told);
        }
        let relayed = relay.feed(&bytes).expect("not finished");
        browser.extend_from_slice(relayed.bytes);
        if relayed.error.is_none() {
            browser.extend_from_slice(relay.end_of_input().expect("not finished").bytes);
        }
        // A Gemini answer's grounding: the candidate's sources, after its text.
        let message = stream.message();
        let candidate = &message["candidates"][0];
        for chunk in
            candidate.pointer("/groundingMetadata/groundingChunks").and_then(Value::as_array).into_iter().flatten()
        {
            let inner = if chunk["web"].is_object() { &chunk["web"] } else { &chunk["retrievedContext"] };
            match (inner["uri"].as_str(), inner["title"].as_str()) {
                (Some(url), _) => sources.push(source("url", url)),
                (None, Some(title)) => sources.push(source("doc", title)),
                _ => {}
            }
        }
        for at in ["/citationMetadata/citations", "/citationMetadata/citationSources"] {
            for c in candidate.pointer(at).and_then(Value::as_array).into_iter().flatten() {
                sources.extend(c["uri"].as_str().map(|u| source("url", u)));
            }
        }
        // Each source once.
        let mut seen = std::collections::HashSet::new();
        sources.retain(|s| seen.insert(s.to_string()));
        for tool in &mut tools {
            let (id, name) = ids.get(&(tool["part"].as_u64().unwrap_or(0) as u32)).cloned().unwrap_or_default();
            if tool.get("toolCallId").is_none() {
                // Never ended: the relay fails it when the step closes.
                let part = tool["part"].clone();
                tool["toolCallId"] = json!(id.unwrap_or_else(|| format!("call-{part}")));
                tool["toolName"] = json!(name.unwrap_or_default());
            }
            tool.as_object_mut().expect("object").remove("part");
            if tool["state"] != "output-available" || tool["providerExecuted"] == true {
                continue;
            }
            let output = json!({"ok": tool["toolCallId"]});
            let call_id = tool["toolCallId"].as_str().unwrap_or_default().to_owned();
            browser.extend_from_slice(relay.tool_result(&call_id, &output, false, Some(5)).expect("not finished"));
            // The catalog page asks the user first, then shows the result.
            let name = tool["toolName"].as_str().unwrap_or_default().to_owned();
            let approval_id = format!("approval_{call_id}");
            let asked =
                catalog.approval_required(&approval_id, &call_id, &name, &tool["input"], None).expect("not finished");
            page.extend_from_slice(asked);
            page.extend_from_slice(catalog.tool_result(&call_id, &output, false, Some(5)).expect("not finished"));
            tool["output"] = output;
        }
        // The host closes the step after its tools ran, then finishes: no
        // empty step may follow.
        browser.extend_from_slice(relay.finish_step().expect("not finished"));
        browser.extend_from_slice(relay.finish(None).expect("not finished"));
        page.extend_from_slice(catalog.finish_step().expect("not finished"));
        page.extend_from_slice(catalog.finish(None).expect("not finished"));
        let texts: Vec<Value> = texts.into_iter().map(|(_, kind, text)| json!({"type": kind, "text": text})).collect();
        let expected = json!({
            "source": path.strip_prefix(&root).unwrap(),
            "texts": texts,
            "tools": tools,
            "sources": sources,
            "files": files,
            "usage": usage,
        });
        std::fs::write(out.join(format!("{name}.ai-sdk.sse")), &browser).expect("write");
        std::fs::write(out.join(format!("{name}.expected.json")), expected.to_string()).expect("write");
        let shown = json!({
            "source": source_path,
            "answer": answer,
            "reasoning": reasoning,
            "tools": expected["tools"],
            "providerErrors": provider_errors,
            "streamFailed": failed_stream,
            "usage": usage_seen,
        });
        std::fs::write(out.join(format!("{name}.catalog.sse")), &page).expect("write");
        std::fs::write(out.join(format!("{name}.catalog.json")), shown.to_string()).expect("write");
        count += 1;
    }
    // The catalog's event names, for the JavaScript frontend's own list.
    let names = json!(ssefold::relay::CATALOG_EVENT_NAMES).to_string();
    std::fs::write(out.join("catalog_event_names.json"), names).expect("write");
    count += synthetic(&out, &root);
    eprintln!("relay_cases: {count} streams written to {}", out.display());
}
