//! The [`RelayFormat::AiSdk`](super::RelayFormat::AiSdk) format: the Vercel
//! AI SDK's UI message stream protocol (v1), which `useChat` reads. Every
//! frame is a `data:` line of one JSON chunk `{"type": …}`; a step wraps a
//! provider turn (`start-step` … `finish-step`), text and reasoning parts
//! stream between their `*-start` and `*-end`, a tool call's input streams
//! as `tool-input-delta`s (held back and coalesced, see
//! [`RelayConfig::tool_input_coalesce_bytes`](super::RelayConfig::tool_input_coalesce_bytes))
//! and is ready with `tool-input-available`; the run ends with `finish`
//! (or `abort`) and `data: [DONE]`. The module docs of [`relay`](super)
//! list every chunk written.

use serde_json::Value;

use super::cite::{annotations, citations, grounding_sources, FileData, Source};
use super::dialect::{provider_executed_call, server_item, server_result, tool_input, ServerResult};
use super::frame::{self, begin_frame, end_frame, DeltaText, JsonObject};
use super::writer::{is_text, json_or_null, PartState, Writer};
use crate::providers::{PartKind, PartOutcome, Stream, StreamEvent, ToolInputFormat};

/// The response headers of the UI message stream protocol.
pub(super) const HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("connection", "keep-alive"),
    ("x-vercel-ai-ui-message-stream", "v1"),
    ("x-accel-buffering", "no"),
];

/// The end of the UI message stream.
pub(super) const DONE: &[u8] = b"data: [DONE]\n\n";

/// The UI message stream's finish reason for a provider stop reason.
fn finish_reason(stop_reason: &str) -> &'static str {
    match stop_reason {
        "end_turn" | "stop" | "stop_sequence" | "completed" | "pause_turn" => "stop",
        "max_tokens" | "length" | "model_context_window_exceeded" | "incomplete" => "length",
        "tool_use" | "tool_calls" | "function_call" => "tool-calls",
        "content_filter" | "refusal" => "content-filter",
        "aborted" | "error" => "error",
        _ => "other",
    }
}

/// A text part's UI id, `s{step}-p{part}` (unique in the UI message),
/// written out on the stack.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct UiIdText {
    bytes: [u8; 24],
    len: u8,
}

impl UiIdText {
    pub(super) fn new(step: u32, part: u32) -> Self {
        let mut bytes = [0u8; 24];
        let mut len = 0;
        for piece in
            [&b"s"[..], itoa::Buffer::new().format(step).as_bytes(), b"-p", itoa::Buffer::new().format(part).as_bytes()]
        {
            bytes[len..len + piece.len()].copy_from_slice(piece);
            len += piece.len();
        }
        // At most 1 + 10 + 2 + 10 bytes.
        UiIdText { bytes, len: len as u8 }
    }
}

impl std::ops::Deref for UiIdText {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl Writer {
    /// A frame of the AI SDK format: `{"type": TYPE, …}` written by `fill`,
    /// straight into the output (which is the replay buffer).
    pub(super) fn ai(&mut self, chunk_type: &'static str, fill: impl FnOnce(&mut JsonObject<'_>)) {
        self.flush_held();
        self.last_id += 1;
        let buf = self.replay.frame(self.last_id);
        begin_frame(buf, self.last_id, None);
        let mut o = JsonObject::new(buf);
        o.constant("type", chunk_type);
        fill(&mut o);
        o.end();
        end_frame(buf);
        self.active = true;
    }

    /// Writes the UI message stream's chunks of one stream event
    /// (`escaped`: see [`Writer::write_event`]).
    pub(super) fn ai_event(&mut self, event: &StreamEvent<'_>, escaped: Option<&str>) {
        match *event {
            StreamEvent::MessageStart { provider, .. } => {
                self.provider = provider;
                self.begin_turn();
            }
            StreamEvent::PartStart { part, kind, provider_type, tool_call, .. } => {
                self.ensure_started();
                let state = self.part(part);
                *state = PartState {
                    kind: Some(kind),
                    provider_executed: kind == PartKind::ToolCall && provider_executed_call(provider_type),
                    preview: kind == PartKind::Media && provider_type.ends_with("partial_image"),
                    text_input: tool_call.is_some_and(|c| c.input_format == ToolInputFormat::Text),
                    ..PartState::default()
                };
                if matches!(kind, PartKind::Text | PartKind::Refusal | PartKind::Reasoning) {
                    state.opened = true;
                    let ui = UiIdText::new(self.steps, part);
                    self.parts[part as usize].ui_id = ui;
                    let chunk = if kind == PartKind::Reasoning { "reasoning-start" } else { "text-start" };
                    self.ai(chunk, |o| {
                        o.ascii("id", &ui);
                    });
                }
            }
            StreamEvent::TextDelta { part, text } => {
                let Some(state) = self.parts.get(part as usize).filter(|p| p.opened) else { return };
                let Some(kind) = state.kind.filter(|k| is_text(*k)) else { return };
                let chunk = if kind == PartKind::Reasoning { "reasoning-delta" } else { "text-delta" };
                let ui = state.ui_id;
                self.flush_held();
                self.last_id += 1;
                let text = DeltaText::new(text, escaped);
                frame::ai_delta_frame(self.replay.frame(self.last_id), self.last_id, chunk, &ui, text);
                self.active = true;
            }
            StreamEvent::PartMetadata { part, key, value } if self.note_call(part, key, value) => {
                self.maybe_open_tool(part, false);
            }
            StreamEvent::MediaDelta { part, mime_type, data } => {
                let state = self.part(part);
                if state.kind == Some(PartKind::Media) && !state.preview {
                    if state.mime_type.is_empty() {
                        state.mime_type.push_str(mime_type);
                    }
                    state.media.extend_from_slice(data);
                }
            }
            StreamEvent::ToolArgsDelta { part, json } => {
                let state = self.part(part);
                let opened = state.opened;
                state.args.push_str(json);
                if !opened {
                    // Opening writes the text held back, this fragment too.
                    self.maybe_open_tool(part, false);
                    return;
                }
                let limit = self.config.tool_input_coalesce_bytes;
                if limit > 0 {
                    self.hold_args(part, DeltaText::new(json, escaped), limit);
                    return;
                }
                let call_id = &self.parts[part as usize].call_id_json;
                self.last_id += 1;
                let json = DeltaText::new(json, escaped);
                frame::ai_args_delta_frame(self.replay.frame(self.last_id), self.last_id, call_id, json);
                self.active = true;
            }
            StreamEvent::PartEnd { part, kind, outcome, content, tool_call } => match kind {
                PartKind::Text | PartKind::Refusal | PartKind::Reasoning
                    if self.parts.get(part as usize).is_some_and(|p| p.opened) =>
                {
                    self.end_text_part(part, Some(content));
                }
                PartKind::Media => {
                    let state = std::mem::take(self.part(part));
                    if !state.media.is_empty() {
                        self.ai_file(&state.mime_type, FileData::Bytes(&state.media));
                    }
                }
                PartKind::ToolCall => match outcome {
                    _ if self.adopt_call_id(part, tool_call.as_ref()) => {}
                    PartOutcome::Complete => {
                        self.maybe_open_tool(part, true);
                        let state = std::mem::take(&mut self.parts[part as usize]);
                        let (call_id, name) = (state.call_id.unwrap_or_default(), state.name.unwrap_or_default());
                        let input = tool_input(tool_call.as_ref(), content, &state.args);
                        self.ai("tool-input-available", |o| {
                            o.str("toolCallId", &call_id).str("toolName", &name);
                            input.write(o, "input");
                            if state.provider_executed {
                                o.value("providerExecuted", &true);
                            }
                        });
                        if state.provider_executed {
                            match server_result(content) {
                                // A Responses `mcp_call` item carries its own output.
                                Some(result) => self.ai_server_output(&call_id, &result),
                                None => self.server_calls.push(call_id),
                            }
                        }
                    }
                    PartOutcome::InvalidArguments { error, raw } => {
                        self.fail_tool(part, raw, &format!("invalid arguments: {error}"))
                    }
                    PartOutcome::Incomplete => {
                        self.fail_tool(part, "", "the stream ended before the arguments were complete")
                    }
                },
                PartKind::Other => self.ai_server_part(content),
                _ => {}
            },
            StreamEvent::StopReason { choice: 0, reason } => {
                self.stop_reason.clear();
                self.stop_reason.push_str(reason);
            }
            StreamEvent::Usage { usage } => self.set_usage(usage),
            StreamEvent::TurnEnd { stop_reason } => self.end_turn(stop_reason),
            StreamEvent::Unknown { provider_type: "response.output_text.annotation.added", data, .. } => {
                // Kept for the text part's end (its folded part has none).
                if let Ok(Value::Object(mut event)) = serde_json::from_str::<Value>(data) {
                    if let Some(annotation) = event.remove("annotation") {
                        self.annotations.push(annotation);
                    }
                }
            }
            StreamEvent::TurnReset => {
                // The answer starts over: `reset-step` removes what the
                // open step shows of it (text, tools, sources, files) and
                // what follows rebuilds it in the same step. The argument
                // text held back belongs to the answer thrown away.
                self.held_part = None;
                self.held.clear();
                self.parts.clear();
                self.server_calls.clear();
                self.sources.clear();
                self.annotations.clear();
                self.stop_reason.clear();
                self.turn_ended = false;
                if self.step_open {
                    self.ai("reset-step", |_| {});
                }
            }
            StreamEvent::Error { error } => {
                let message = if error.error_type.is_empty() {
                    error.message.clone()
                } else {
                    format!("{}: {}", error.error_type, error.message)
                };
                let code = (!error.error_type.is_empty()).then_some(error.error_type.as_str());
                self.error_frame(&message, code, false);
            }
            _ => {}
        }
    }

    /// Ends the parts still open (a cut stream): text and reasoning parts
    /// get their end; a tool call whose arguments never completed gets a
    /// `tool-input-error`, so that no UI waits for it forever.
    pub(super) fn close_parts(&mut self) {
        for part in 0..self.parts.len() {
            match self.parts[part].kind {
                Some(kind) if is_text(kind) && self.parts[part].opened => self.end_text_part(part as u32, None),
                Some(PartKind::ToolCall) => {
                    self.fail_tool(part as u32, "", "the stream ended before the arguments were complete")
                }
                _ => {}
            }
        }
    }

    /// A tool call that will never be ready: `tool-input-error` with the
    /// raw argument text `input` (opened first if the UI has not seen it),
    /// and the part is forgotten.
    fn fail_tool(&mut self, part: u32, input: &str, error: &str) {
        self.maybe_open_tool(part, true);
        let state = std::mem::take(&mut self.parts[part as usize]);
        let (call_id, name) = (state.call_id.unwrap_or_default(), state.name.unwrap_or_default());
        self.ai("tool-input-error", |o| {
            o.str("toolCallId", &call_id).str("toolName", &name).str("input", input);
            o.str("errorText", error);
            if state.provider_executed {
                o.value("providerExecuted", &true);
            }
        });
    }

    /// Writes `tool-input-start` (and the argument text held back) once the
    /// call's id and name are known, or when `force`d (the part ends).
    /// Returns whether the call is open.
    fn maybe_open_tool(&mut self, part: u32, force: bool) -> bool {
        let state = self.part(part);
        if state.opened {
            return true;
        }
        if state.kind != Some(PartKind::ToolCall) || !(force || (state.call_id.is_some() && state.name.is_some())) {
            return false;
        }
        state.opened = true;
        let call_id = state.call_id.get_or_insert_with(|| format!("call-{part}")).clone();
        state.call_id_json.clear();
        frame::write_json_str(&mut state.call_id_json, &call_id);
        let name = state.name.clone().unwrap_or_default();
        let pending = std::mem::take(&mut state.args);
        let (provider_executed, text_input) = (state.provider_executed, state.text_input);
        self.ai("tool-input-start", |o| {
            o.str("toolCallId", &call_id).str("toolName", &name);
            if text_input {
                // Free text, not JSON: `ai` 7 shows it as it streams.
                o.constant("inputEncoding", "text");
            }
            if provider_executed {
                o.value("providerExecuted", &true);
            }
        });
        if !pending.is_empty() {
            self.ai("tool-input-delta", |o| {
                o.str("toolCallId", &call_id).str("inputTextDelta", &pending);
            });
        }
        self.parts[part as usize].args = pending;
        true
    }

    /// `text-end` / `reasoning-end`; for text whose folded part (`content`)
    /// cites sources, the `citations` (what `ai` 7 keeps on the text part),
    /// then a `source-url` / `source-document` for each source the message
    /// does not show yet.
    fn end_text_part(&mut self, part: u32, content: Option<&Value>) {
        let state = &mut self.parts[part as usize];
        state.opened = false;
        let reasoning = state.kind == Some(PartKind::Reasoning);
        let chunk = if reasoning { "reasoning-end" } else { "text-end" };
        let ui = state.ui_id;
        let added = std::mem::take(&mut self.annotations);
        let mut citations = match content {
            Some(content) if !reasoning => citations(content),
            _ => Vec::new(),
        };
        if citations.is_empty() && !reasoning {
            citations.extend(annotations(&added));
        }
        if citations.is_empty() {
            self.ai(chunk, |o| {
                o.ascii("id", &ui);
            });
            return;
        }
        let ids: Vec<(String, bool)> = citations.iter().map(|c| self.source_id(&c.source)).collect();
        let list: Vec<Value> = citations.iter().zip(&ids).map(|(c, (id, _))| c.to_json(id)).collect();
        self.ai(chunk, |o| {
            o.ascii("id", &ui).json("citations", &Value::Array(list));
        });
        for (citation, (id, new)) in citations.iter().zip(&ids) {
            if *new {
                self.ai_source(&citation.source, id);
            }
        }
    }

    /// The `sourceId` of a source, and whether it is new to the message
    /// (`src-1`, `src-2`…; the same URL or document is one source).
    fn source_id(&mut self, source: &Source<'_>) -> (String, bool) {
        let key = source.key();
        if let Some((_, id)) = self.sources.iter().find(|(k, _)| *k == key) {
            return (id.clone(), false);
        }
        let id = format!("src-{}", self.sources.len() + 1);
        self.sources.push((key, id.clone()));
        (id, true)
    }

    fn ai_source(&mut self, source: &Source<'_>, id: &str) {
        match source {
            Source::Url { url, title } => self.ai("source-url", |o| {
                o.str("sourceId", id).str("url", url);
                if let Some(title) = title {
                    o.str("title", title);
                }
            }),
            Source::Document { media_type, title, filename } => self.ai("source-document", |o| {
                o.str("sourceId", id).constant("mediaType", media_type).str("title", title);
                if let Some(filename) = filename {
                    o.str("filename", filename);
                }
            }),
        }
    }

    /// After a Gemini turn ended: the sources of candidate 0's
    /// `groundingMetadata` (`groundingChunks`: `web` / `retrievedContext`)
    /// and `citationMetadata`, read from the folded message.
    pub(super) fn relay_grounding(&mut self, stream: &Stream) {
        if !std::mem::take(&mut self.grounding_due) || self.finished {
            return;
        }
        let message = stream.message();
        let Some(candidate) = message.get("candidates").and_then(|c| c.get(0)) else { return };
        for source in grounding_sources(candidate) {
            let (id, new) = self.source_id(&source);
            if new {
                self.ai_source(&source, &id);
            }
        }
    }

    /// A `file` chunk: the bytes as a `data:` URL.
    fn ai_file(&mut self, mime_type: &str, data: FileData<'_>) {
        use base64::Engine;
        let mime_type = if mime_type.is_empty() { "application/octet-stream" } else { mime_type };
        let mut url = String::with_capacity(16 + mime_type.len() + 4 * data.len() / 3);
        url.push_str("data:");
        url.push_str(mime_type);
        url.push_str(";base64,");
        match data {
            FileData::Bytes(bytes) => base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut url),
            FileData::Base64(text) => url.push_str(text),
        }
        self.ai("file", |o| {
            o.str("mediaType", mime_type).str("url", &url);
        });
    }

    /// Holds a delta of an open call's argument text back (coalescing), and
    /// writes what is held once it reaches `limit` bytes. Text of another
    /// call held before is written first.
    fn hold_args(&mut self, part: u32, json: DeltaText<'_>, limit: usize) {
        if self.held_part != Some(part) {
            self.flush_held();
            self.held_part = Some(part);
            self.held_call_id.clear();
            self.held_call_id.extend_from_slice(&self.parts[part as usize].call_id_json);
            self.held_since = self.now_ms;
        }
        json.write_contents(&mut self.held);
        if self.held.len() >= limit {
            self.flush_held();
        }
    }

    /// Writes the argument text held back, if any, as one `tool-input-delta`.
    pub(super) fn flush_held(&mut self) {
        if self.held_part.take().is_none() {
            return;
        }
        self.held_since = None;
        if !self.held.is_empty() {
            self.last_id += 1;
            let buf = self.replay.frame(self.last_id);
            frame::ai_args_delta_frame_escaped(buf, self.last_id, &self.held_call_id, &self.held);
            self.held.clear();
            self.active = true;
        }
    }

    /// A whole part that is a provider-executed tool's call and result (a
    /// Responses `web_search_call`, …) or the result of a call shown
    /// before (Anthropic `web_search_tool_result`, `mcp_tool_result`, …):
    /// the tool part, in state `output-available` (or `output-error`).
    fn ai_server_part(&mut self, content: &Value) {
        if let Some(call) = server_item(content) {
            self.ensure_started();
            self.ai("tool-input-start", |o| {
                o.str("toolCallId", call.id).str("toolName", call.name).value("providerExecuted", &true);
            });
            self.ai("tool-input-available", |o| {
                o.str("toolCallId", call.id).str("toolName", call.name).value("input", &call.input);
                o.value("providerExecuted", &true);
            });
            let result = ServerResult { call_id: call.id, output: content, error: call.error };
            self.ai_server_output(call.id, &result);
            if let Some(image) =
                content.get("result").and_then(Value::as_str).filter(|_| call.name == "image_generation")
            {
                // The generated image, as a file of the message.
                let format = content.get("output_format").and_then(Value::as_str).unwrap_or("png");
                let mime_type = format!("image/{format}");
                self.ai_file(&mime_type, FileData::Base64(image));
            }
        } else if let Some(result) = server_result(content) {
            // Only for a call the UI knows: a result for another is refused
            // by the UI message stream reader.
            let Some(known) = self.server_calls.iter().position(|id| id == result.call_id) else { return };
            self.server_calls.swap_remove(known);
            self.ai_server_output(result.call_id, &result);
        }
    }

    fn ai_server_output(&mut self, call_id: &str, result: &ServerResult<'_>) {
        match &result.error {
            Some(error) => self.ai("tool-output-error", |o| {
                o.str("toolCallId", call_id).str("errorText", error).value("providerExecuted", &true);
            }),
            None => self.ai("tool-output-available", |o| {
                o.str("toolCallId", call_id).value("output", result.output).value("providerExecuted", &true);
            }),
        }
    }

    /// A host's tool result: `tool-output-available`, or
    /// `tool-output-error` with the output as its text.
    pub(super) fn ai_tool_output(&mut self, call_id: &str, output: &Value, is_error: bool) {
        self.ensure_started();
        if is_error {
            let text = output.as_str().map_or_else(|| output.to_string(), str::to_owned);
            self.ai("tool-output-error", |o| {
                o.str("toolCallId", call_id).str("errorText", &text);
            });
        } else {
            self.ai("tool-output-available", |o| {
                o.str("toolCallId", call_id).value("output", output);
            });
        }
    }

    /// `tool-approval-request` for a call the host holds for approval.
    pub(super) fn ai_approval_request(&mut self, approval_id: &str, call_id: &str) {
        self.ensure_started();
        self.ai("tool-approval-request", |o| {
            o.str("approvalId", approval_id).str("toolCallId", call_id);
        });
    }

    /// The end of the run, its step closed: `finish` (with the finish
    /// reason of the last stop reason and `messageMetadata: {usage,
    /// steps}`), or for an aborted turn that metadata and `abort`; then
    /// `data: [DONE]`. `usage`: the usage as JSON text (empty: none).
    pub(super) fn ai_finish(&mut self, steps: u32, stop_reason: &str, usage: &[u8]) {
        if crate::providers::StopClass::of(stop_reason) == crate::providers::StopClass::Aborted {
            // Aborted: the metadata, then `abort` (no `finish`: the
            // turn did not finish), as the `ai` package's own streams.
            self.ai("message-metadata", |o| {
                o.object("messageMetadata", |m| {
                    m.raw("usage", json_or_null(usage)).value("steps", &steps);
                });
            });
            self.ai("abort", |_| {});
        } else {
            self.ai("finish", |o| {
                if !stop_reason.is_empty() {
                    o.constant("finishReason", finish_reason(stop_reason));
                }
                o.object("messageMetadata", |m| {
                    m.raw("usage", json_or_null(usage)).value("steps", &steps);
                });
            });
        }
        self.replay.tail().extend_from_slice(DONE);
    }
}
