//! The streaming-UI state model: what a chat UI shows while an answer
//! streams, kept from the normalized events (sans-IO: the host supplies the
//! arrival time of each event).
//!
//! A [`UiState`] consumes [`StreamEvent`]s with [`UiState::apply`] and the
//! connection state with [`UiState::set_connection`]; the host reads a
//! snapshot at any time with [`UiState::to_json`] or the typed accessors:
//!
//! * the connection state (`disconnected`, `connecting`, `connected`,
//!   `reconnecting`);
//! * every part in stream order: its kind, its text as **segments**, each
//!   with the host-supplied arrival time (for fade-in animation; deltas that
//!   arrive in the same millisecond share a segment), its status
//!   (`streaming`, `complete`, `invalid_arguments`, `incomplete`) and, once
//!   committed, its complete content;
//! * tool calls in progress: id, name, the raw argument text so far and the
//!   best-effort arguments value (partial strings included), and whether the
//!   call is **ready** (only when its arguments are complete, valid JSON);
//! * media parts (audio, images): their MIME type, the bytes received and
//!   the bytes themselves, held up to a budget shared by every media part
//!   of the turn (default `max_memory_bytes`' default, 128 MiB; beyond it a
//!   part keeps counting but stops holding, and says it is `truncated`);
//! * tool progress by tool call id, as reported by the host while it runs
//!   the tools ([`UiState::set_tool_progress`]);
//! * token usage so far, the stop reason, a provider error, and whether the
//!   turn ended or was aborted.
//!
//! Guarantee: after any prefix of a stream, the snapshot agrees with the
//! events emitted so far (a part's segments concatenate to its `text_delta`s,
//! a tool call's raw arguments to its `tool_args_delta`s, usage is the last
//! `usage` event). `turn_reset` clears the turn.

use serde_json::{json, Map, Value};

use crate::json::PartialJson;
use crate::providers::{PartKind, PartOutcome, StreamEvent};
use crate::reconnect::ConnectionState;

/// A run of text that arrived at one time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextSegment {
    /// The text.
    pub text: String,
    /// When it arrived, in the host's milliseconds.
    pub at_ms: u64,
}

/// Where a part stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PartStatus {
    /// Still streaming.
    Streaming,
    /// Committed whole (a tool call: ready).
    Complete,
    /// A tool call whose arguments were not valid JSON.
    InvalidArguments,
    /// Cut off by the end of the turn, an error or an abort.
    Incomplete,
}

impl PartStatus {
    /// The wire name: `streaming`, `complete`, `invalid_arguments`,
    /// `incomplete`.
    pub fn name(self) -> &'static str {
        match self {
            PartStatus::Streaming => "streaming",
            PartStatus::Complete => "complete",
            PartStatus::InvalidArguments => "invalid_arguments",
            PartStatus::Incomplete => "incomplete",
        }
    }
}

/// A tool call as it streams.
#[derive(Debug)]
pub struct ToolCallState {
    /// The call's id, once known.
    pub id: Option<String>,
    /// The tool's name, once known.
    pub name: Option<String>,
    /// The raw argument text received so far.
    pub raw_arguments: String,
    /// Validates the text as it streams; dropped when the call ends (what
    /// it holds, a long string being read included, is not kept twice).
    parser: Option<PartialJson>,
    parser_failed: bool,
}

impl ToolCallState {
    /// The best-effort arguments so far (partial strings included), or
    /// `None` before any value began or once the text is not valid JSON.
    ///
    /// Parsed from the raw text on each call (time and memory proportional
    /// to it): the state itself keeps only the text and a skeleton parser.
    pub fn arguments(&self) -> Option<Value> {
        if self.parser_failed {
            return None;
        }
        let mut tree = PartialJson::new();
        tree.set_lossy_surrogates(true);
        tree.push_str(&self.raw_arguments, |_| {}).ok()?;
        tree.value()
    }
}

/// A media part's bytes as they stream.
#[derive(Debug, Default)]
pub struct MediaState {
    /// The MIME type (from the first `media_delta`).
    pub mime_type: String,
    /// Bytes received (all of them, held or not).
    pub received: u64,
    /// The bytes held: all received, unless `truncated`.
    pub data: Vec<u8>,
    /// Whether the budget stopped holding bytes of this part (`data` is a
    /// prefix of what was received).
    pub truncated: bool,
}

/// One part of the answer.
#[derive(Debug)]
pub struct UiPart {
    /// The part id of the events.
    pub part: u32,
    /// Its kind.
    pub kind: PartKind,
    /// The provider's type for it (`text`, `tool_use`, `function`, …).
    pub provider_type: String,
    /// The choice it belongs to (OpenAI `n > 1`).
    pub choice: u32,
    /// Its text, in arrival segments.
    pub segments: Vec<TextSegment>,
    /// For tool calls: the call's state.
    pub tool_call: Option<ToolCallState>,
    /// For media parts: the bytes so far.
    pub media: Option<MediaState>,
    /// Where it stands.
    pub status: PartStatus,
    /// The complete part, once committed.
    pub content: Option<Value>,
}

impl UiPart {
    /// The part's text so far (the segments joined).
    pub fn text(&self) -> String {
        self.segments.iter().map(|s| s.text.as_str()).collect()
    }

    /// Whether this is a tool call that is ready to run.
    pub fn is_ready_tool_call(&self) -> bool {
        self.kind == PartKind::ToolCall && self.status == PartStatus::Complete
    }
}

/// The streaming-UI state of one answer. See the module docs.
#[derive(Debug)]
pub struct UiState {
    connection: ConnectionState,
    parts: Vec<UiPart>,
    usage: Option<Value>,
    stop_reason: Option<String>,
    error: Option<Value>,
    ended: bool,
    aborted: bool,
    tool_progress: Map<String, Value>,
    /// Most media bytes held over every part.
    media_budget: usize,
    /// Media bytes held now.
    media_held: usize,
}

impl Default for UiState {
    fn default() -> Self {
        UiState::new()
    }
}

impl UiState {
    /// An empty state, `connecting`, holding up to the default
    /// `max_memory_bytes` (128 MiB) of media bytes.
    pub fn new() -> Self {
        UiState::with_media_budget(crate::providers::StreamConfig::default().max_memory_bytes)
    }

    /// An empty state, `connecting`, holding up to `max_bytes` media bytes
    /// over every part (a stream's bindings pass its `max_memory_bytes`).
    pub fn with_media_budget(max_bytes: usize) -> Self {
        UiState {
            media_budget: max_bytes,
            media_held: 0,
            connection: ConnectionState::Connecting,
            parts: Vec::new(),
            usage: None,
            stop_reason: None,
            error: None,
            ended: false,
            aborted: false,
            tool_progress: Map::new(),
        }
    }

    /// Sets the connection state (from the host's transport, or
    /// [`crate::reconnect::Reconnector::state`]).
    pub fn set_connection(&mut self, state: ConnectionState) {
        self.connection = state;
    }

    /// Records the host's progress report for the tool call `id` (any JSON:
    /// a fraction, a status line, …), replacing the previous one.
    pub fn set_tool_progress(&mut self, id: &str, progress: Value) {
        self.tool_progress.insert(id.to_owned(), progress);
    }

    /// The connection state.
    pub fn connection(&self) -> ConnectionState {
        self.connection
    }

    /// The parts, in stream order.
    pub fn parts(&self) -> &[UiPart] {
        &self.parts
    }

    /// Token usage so far, as the last `usage` event gave it.
    pub fn usage(&self) -> Option<&Value> {
        self.usage.as_ref()
    }

    /// The stop reason, once known (`aborted` after an abort).
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// Whether the turn is over (ended, failed or aborted).
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Tool calls that are ready to run (arguments complete and valid).
    pub fn ready_tool_calls(&self) -> impl Iterator<Item = &UiPart> {
        self.parts.iter().filter(|p| p.is_ready_tool_call())
    }

    fn part_mut(&mut self, part: u32) -> Option<&mut UiPart> {
        // Parts are numbered 0, 1, 2… in order: usually a direct index.
        match self.parts.get(part as usize) {
            Some(p) if p.part == part => self.parts.get_mut(part as usize),
            _ => self.parts.iter_mut().find(|p| p.part == part),
        }
    }

    /// Applies one normalized event that arrived at `now_ms`.
    pub fn apply(&mut self, event: &StreamEvent<'_>, now_ms: u64) {
        match *event {
            StreamEvent::MessageStart { .. } => {
                self.connection = ConnectionState::Connected;
            }
            StreamEvent::PartStart { part, kind, choice, provider_type, tool_call: head, .. } => {
                let tool_call = (kind == PartKind::ToolCall).then(|| ToolCallState {
                    id: head.and_then(|h| h.id).map(str::to_owned),
                    name: head.and_then(|h| h.name).map(str::to_owned),
                    raw_arguments: String::new(),
                    parser: {
                        let mut parser = PartialJson::skeleton(Default::default());
                        parser.set_lossy_surrogates(true);
                        Some(parser)
                    },
                    parser_failed: false,
                });
                self.parts.push(UiPart {
                    part,
                    kind,
                    provider_type: provider_type.to_owned(),
                    choice,
                    segments: Vec::new(),
                    tool_call,
                    media: (kind == PartKind::Media).then(MediaState::default),
                    status: PartStatus::Streaming,
                    content: None,
                });
            }
            StreamEvent::TextDelta { part, text } => {
                if let Some(p) = self.part_mut(part) {
                    match p.segments.last_mut() {
                        Some(last) if last.at_ms == now_ms => last.text.push_str(text),
                        _ => p.segments.push(TextSegment { text: text.to_owned(), at_ms: now_ms }),
                    }
                }
            }
            StreamEvent::MediaDelta { part, mime_type, data } => {
                let room = self.media_budget.saturating_sub(self.media_held);
                if let Some(m) = self.part_mut(part).and_then(|p| p.media.as_mut()) {
                    if m.mime_type.is_empty() {
                        m.mime_type = mime_type.to_owned();
                    }
                    m.received += data.len() as u64;
                    let keep = if m.truncated { 0 } else { data.len().min(room) };
                    m.data.extend_from_slice(&data[..keep]);
                    m.truncated |= keep < data.len();
                    self.media_held += keep;
                }
            }
            StreamEvent::ToolArgsDelta { part, json } => {
                if let Some(call) = self.part_mut(part).and_then(|p| p.tool_call.as_mut()) {
                    call.raw_arguments.push_str(json);
                    let valid = |p: &mut PartialJson| p.push_document(&call.raw_arguments, |_| {}).is_ok();
                    if !call.parser_failed && call.parser.as_mut().is_some_and(|p| !valid(p)) {
                        call.parser_failed = true;
                    }
                }
            }
            StreamEvent::PartMetadata { part, key, value } => {
                if let Some(call) = self.part_mut(part).and_then(|p| p.tool_call.as_mut()) {
                    match key {
                        "id" => call.id = value.as_str().map(str::to_owned),
                        "name" => call.name = value.as_str().map(str::to_owned),
                        _ => {}
                    }
                }
            }
            StreamEvent::PartEnd { part, outcome, content, tool_call, .. } => {
                if let Some(p) = self.part_mut(part) {
                    if let Some(call) = p.tool_call.as_mut() {
                        call.parser = None;
                        // The call's final id (synthesized when the provider
                        // sent none: the id the host's tool progress uses).
                        if let Some(end) = tool_call {
                            call.id = Some(end.id.to_owned());
                            call.name = Some(end.name.to_owned());
                        }
                    }
                    p.status = match outcome {
                        PartOutcome::Complete => PartStatus::Complete,
                        PartOutcome::InvalidArguments { .. } => PartStatus::InvalidArguments,
                        PartOutcome::Incomplete => PartStatus::Incomplete,
                    };
                    p.content = Some(content.clone());
                }
            }
            StreamEvent::Usage { usage } => self.usage = Some(usage.clone()),
            StreamEvent::StopReason { choice: 0, reason } => self.stop_reason = Some(reason.to_owned()),
            StreamEvent::TurnEnd { stop_reason } => {
                if let Some(r) = stop_reason {
                    self.stop_reason = Some(r.to_owned());
                }
                self.aborted = stop_reason == Some("aborted");
                self.end_turn();
            }
            StreamEvent::TurnReset => {
                self.parts.clear();
                self.media_held = 0;
                self.usage = None;
                self.stop_reason = None;
                self.error = None;
                self.ended = false;
            }
            StreamEvent::Error { error } => {
                self.error = Some(json!({
                    "error_type": error.error_type,
                    "message": error.message,
                    "request_id": error.request_id,
                    "output_emitted": error.output_emitted,
                }));
                self.end_turn();
            }
            StreamEvent::StopReason { .. }
            | StreamEvent::ToolArgsPath { .. }
            | StreamEvent::Warning { .. }
            | StreamEvent::Unknown { .. } => {}
        }
    }

    /// The turn is over: parts still streaming will never complete.
    fn end_turn(&mut self) {
        self.ended = true;
        for p in self.parts.iter_mut().filter(|p| p.status == PartStatus::Streaming) {
            p.status = PartStatus::Incomplete;
        }
    }

    /// The snapshot as JSON (the form the bindings hand out):
    /// `{connection, parts: [{part, kind, provider_type, choice, status,
    /// text, segments: [{text, at_ms}], tool_call?: {id, name,
    /// raw_arguments, arguments, ready}, media?: {mime_type, bytes,
    /// held_bytes, truncated}, content}], tool_progress, usage, stop_reason,
    /// error, ended, aborted}`. A media part's bytes are not in the JSON
    /// (they came in the `media_delta` events; [`UiPart::media`] holds them).
    pub fn to_json(&self) -> Value {
        let parts: Vec<Value> = self
            .parts
            .iter()
            .map(|p| {
                let mut m = Map::new();
                m.insert("part".into(), p.part.into());
                m.insert("kind".into(), p.kind.name().into());
                m.insert("provider_type".into(), p.provider_type.as_str().into());
                m.insert("choice".into(), p.choice.into());
                m.insert("status".into(), p.status.name().into());
                m.insert("text".into(), p.text().into());
                m.insert(
                    "segments".into(),
                    p.segments.iter().map(|s| json!({"text": s.text, "at_ms": s.at_ms})).collect(),
                );
                if let Some(call) = &p.tool_call {
                    m.insert(
                        "tool_call".into(),
                        json!({
                            "id": call.id,
                            "name": call.name,
                            "raw_arguments": call.raw_arguments,
                            "arguments": call.arguments(),
                            "ready": p.is_ready_tool_call(),
                        }),
                    );
                }
                if let Some(media) = &p.media {
                    m.insert(
                        "media".into(),
                        json!({
                            "mime_type": media.mime_type,
                            "bytes": media.received,
                            "held_bytes": media.data.len(),
                            "truncated": media.truncated,
                        }),
                    );
                }
                m.insert("content".into(), p.content.clone().unwrap_or(Value::Null));
                Value::Object(m)
            })
            .collect();
        json!({
            "connection": self.connection.name(),
            "parts": parts,
            "tool_progress": self.tool_progress,
            "usage": self.usage,
            "stop_reason": self.stop_reason,
            "error": self.error,
            "ended": self.ended,
            "aborted": self.aborted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Provider, Stream};

    #[test]
    fn a_tool_call_drops_its_parser_when_it_ends_and_keeps_its_arguments() {
        let long = "x".repeat(1 << 16);
        let args = format!(r#"{{"a": "{long}"}}"#);
        let body = format!(
            "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0,
                "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "f", "arguments": &args[..10]}}]}, "finish_reason": null}]}),
            json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0,
                "delta": {"tool_calls": [{"index": 0, "function": {"arguments": &args[10..]}}]},
                "finish_reason": null}]}),
            json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0,
                "delta": {}, "finish_reason": "tool_calls"}]}),
        );
        let mut ui = UiState::new();
        let mut stream = Stream::new(Provider::OpenAIChat);
        let mut streaming = false;
        let mut apply = |e: &StreamEvent<'_>| {
            ui.apply(e, 0);
            if let Some(call) = ui.parts().first().and_then(|p| p.tool_call.as_ref()) {
                streaming |= call.parser.is_some() && ui.parts()[0].status == PartStatus::Streaming;
            }
        };
        stream.feed(body.as_bytes(), &mut apply).unwrap();
        stream.finish(&mut apply).unwrap();
        let call = ui.parts()[0].tool_call.as_ref().unwrap();
        assert!(streaming && call.parser.is_none());
        assert_eq!(ui.parts()[0].status, PartStatus::Complete);
        assert_eq!(call.arguments(), Some(json!({"a": long})));
    }
}
