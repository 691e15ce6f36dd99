//! Ollama's native chat API (`POST /api/chat`, `stream: true`).
//!
//! The body is newline-delimited JSON, not SSE: one object per line (the
//! [`Stream`](super::Stream) driver frames it, see [`super`]; the lines'
//! rules below). Each line:
//! `{"model", "created_at", "message": {"role", "content", "thinking"?,
//! "tool_calls"?, "images"?}, "done": false}`; the last one has `"done":
//! true`, `done_reason` and the counts (`total_duration`, `load_duration`,
//! `prompt_eval_count`, `prompt_eval_duration`, `eval_count`,
//! `eval_duration`). An error is a line `{"error": "…"}`.
//!
//! | member | part kind | `provider_type` | folded |
//! | --- | --- | --- | --- |
//! | `message.thinking` | `reasoning` | `thinking` | concatenated (one part) |
//! | `message.content` | `text` | `content` | concatenated (one part) |
//! | each of `message.tool_calls` | `tool_call` | `function` | sent whole: committed at once, a ready tool call when its `function.arguments` is an object (or a string holding complete JSON); `part_metadata` `id` (when given) and `name`, the arguments as one `tool_args_delta` and its path events |
//!
//! The thinking and content parts open on their first non-empty fragment
//! and are committed (`complete`) at the `done: true` line.
//!
//! The folded message is the non-streaming `/api/chat` response: every
//! top-level member of the lines (a non-null value replacing the earlier
//! one: `created_at` and `model` of the last line, `done`, `done_reason` and
//! the counts of the final one), and `message` with `role`, `content` (the
//! concatenation, `""` when none came), `thinking` (when any line carried
//! it), `tool_calls` (every call, in order, as sent; when any came) and any
//! other member of `message` (latest non-null value).
//!
//! **Usage rule**: the final line's counts are the usage: a `usage` event
//! with an object of the count members it carries (`prompt_eval_count`,
//! `eval_count`, the durations).
//!
//! The terminal line is the one with `"done": true` (`turn_end` with its
//! `done_reason`); the body ending before it is
//! [`StreamError::Incomplete`].
//!
//! **Stray done lines** (the stray-terminal rule of the SSE dialects): a
//! `done: true` line that carries nothing of an answer (no `error`, no
//! non-empty `content` or `thinking`, no `tool_calls`) before the answer
//! started (before any other line) is held:
//!
//! | what follows it | the done line is |
//! | --- | --- |
//! | another line | a stray one: warning `terminal_before_start`, ignored (none of its members folded), and the answer after it is folded |
//! | the end of the body | the answer, an empty one (what Ollama sends for an empty generation or a model load): folded, the turn ends with its `done_reason` |
//!
//! A done line that carries content is the whole answer in one line (a
//! `stream: false` body) and ends the turn at once. `{"error": …}` is a provider error
//! (`error_type` empty; the message is the string, or the object's
//! `message`). A line that is not an object: `invalid_event` warning,
//! ignored; a member of the wrong type (`content: 5`, `tool_calls` not a
//! list): `invalid_event`, the rest of the line applied.
//!
//! # Framing
//!
//! | input | read as |
//! | --- | --- |
//! | `\n` | the line end (JSON Lines; what Ollama sends) |
//! | `\r\n` | the line end (the `\r` dropped) |
//! | `\r` alone | not a line end (JSON Lines): JSON whitespace inside the line. A body with CR-only line ends is one line of several documents: [`StreamError::InvalidJson`] whose message names the lone CR, whether or not the body ends with a line end, in every chunking (past `sse.max_line_len`, the line limit first) |
//! | a blank line (spaces, tabs, `\r`) | skipped |
//! | U+FEFF (the UTF-8 BOM) as the body's first bytes | stripped, as the SSE decoder does (once per body: again after a reconnection); anywhere else it is line bytes |
//! | the last line without its line end | at `finish`: applied when it is complete JSON (warning `unterminated_final_event`), discarded when its JSON is cut short (warning `truncated_final_event`, then [`StreamError::Incomplete`]), [`StreamError::InvalidJson`] when it is not JSON |
//! | a line longer than `sse.max_line_len` (line end excluded) | [`StreamError::LimitExceeded`] `max_line_len`, never unbounded memory |
//! | invalid UTF-8 | replaced by U+FFFD (the SSE decoder's default) |
//!
//! The lines do not depend on how the bytes are chunked.
//!
//! Not covered: `/api/generate` (`response` instead of `message`): its
//! lines fold by the top-level rule only.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::events::{PartKind, ProviderError, StreamEvent, ToolInputFormat, WarningCode};
use super::fastpath::{Cursor, Seen};
use super::raw::{quick_allowed, quick_taken};
use super::turn::{CallInit, Dialect, DialectInfo, Flow, Part, Turn, TurnState};
use super::view::JsonStr;
use super::{append_str, parse_value, warn, Provider, Sink, StreamError};
use crate::json::scan::{map_heap_bytes, value_heap_bytes};
use crate::sse::Event;

/// The Ollama dialect. It is never detected from an SSE event: a body whose
/// first byte after an optional BOM and blank bytes is `{`
/// (newline-delimited JSON) is Ollama's.
pub(crate) const DIALECT: DialectInfo = DialectInfo {
    provider: Provider::Ollama,
    name: "ollama",
    aliases: &[],
    detects: |_, _| false,
    make: || Box::<OllamaFold>::default(),
};

/// The count members of the final line that make the usage.
const COUNTS: [&str; 6] =
    ["total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"];

/// The Ollama fold.
#[derive(Debug, Default)]
pub(crate) struct OllamaFold {
    /// Top-level members (`message` is built at read time).
    top: Map<String, Value>,
    /// `message` members other than content, thinking, tool_calls.
    message: Map<String, Value>,
    thinking_seen: bool,
    /// Parts: thinking, content (turn part ids).
    thinking: Option<u32>,
    content: Option<u32>,
    /// Tool calls as sent, with their parts.
    calls: Vec<(u32, Value)>,
    /// The fast path's `model`, `created_at` and `done` ([`TOP_SLOTS`]),
    /// written in place line after line instead of in `top` (no key hashed
    /// per line): when a slot is set, `top` holds its key in its place and
    /// the slot its value. The `Value` path moves them into `top` first
    /// ([`OllamaFold::flush_slots`]); [`Dialect::message`] reads them.
    top_slots: [Option<Value>; 3],
    /// The same for `message.role` (its place in `message`).
    role_slot: Option<Value>,
    /// Whether `top` holds the `message` key (it is never removed).
    message_placed: bool,
    /// A done line without an answer that came first: a stray one if
    /// another line follows, the (empty) answer if the body ends.
    held_done: Option<String>,
}

/// Whether `line` is a `done: true` line that carries nothing of an answer:
/// no error, no content, thinking or tool calls.
fn is_empty_done_line(line: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(default)]
        done: Option<bool>,
        #[serde(default, borrow)]
        error: Option<&'a serde_json::value::RawValue>,
        #[serde(default, borrow)]
        message: Option<Message<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(default, borrow)]
        content: Option<Cow<'a, str>>,
        #[serde(default, borrow)]
        thinking: Option<Cow<'a, str>>,
        #[serde(default)]
        tool_calls: Option<Vec<serde::de::IgnoredAny>>,
    }
    let Ok(line) = serde_json::from_str::<Line<'_>>(line) else { return false };
    let empty = |s: &Option<Cow<'_, str>>| s.as_deref().map_or(true, str::is_empty);
    line.done == Some(true)
        && line.error.map_or(true, |e| e.get() == "null")
        && line
            .message
            .map_or(true, |m| empty(&m.content) && empty(&m.thinking) && m.tool_calls.map_or(true, |c| c.is_empty()))
}

/// The top-level members the fast path keeps in [`OllamaFold::top_slots`],
/// by slot index.
const TOP_SLOTS: [&str; 3] = ["model", "created_at", "done"];
/// Codes of [`Order`]: a top-level member (the slots' indexes, then
/// `message` and any other member) ...
const MODEL: u8 = 0;
const CREATED_AT: u8 = 1;
const DONE: u8 = 2;
const MESSAGE: u8 = 3;
/// ... and a `message` member.
const ROLE: u8 = 4;
const CONTENT: u8 = 5;
const THINKING: u8 = 6;
/// Any other member (the next of the level's `others`).
const OTHER: u8 = 7;

/// The order of an object's members, as codes; at most 16 (more declines).
#[derive(Default)]
struct Order {
    codes: [u8; 16],
    n: u8,
}

impl Order {
    #[inline]
    fn push(&mut self, code: u8) -> Option<()> {
        *self.codes.get_mut(self.n as usize)? = code;
        self.n += 1;
        Some(())
    }

    fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        self.codes[..self.n as usize].iter().copied()
    }
}

/// A line the fast path folds, read with a [`Cursor`] straight from its
/// bytes (Ollama writes compact Go `encoding/json`): an object of a plain
/// `model` and `created_at`, a boolean `done`, a `message` object of a
/// plain `role` and string `content` / `thinking`, and any other member
/// (`done_reason`, the counts, `images`) whose value is neither `null` nor
/// holds a lone surrogate escape. Declined (the `Value` path): whitespace, an
/// escaped key, `error`, `tool_calls`, a `null` member, a known member named
/// twice or of another type, a lone-surrogate string, a number serde_json
/// cannot hold.
#[derive(Default)]
struct QuickLine<'a> {
    /// The top-level members in order: `MODEL`, `CREATED_AT`, `DONE`,
    /// `MESSAGE`, `OTHER`.
    order: Order,
    model: &'a str,
    created_at: &'a str,
    done: bool,
    /// Other top-level members, in order.
    others: Vec<(&'a str, Value)>,
    /// The `message` members in order: `ROLE`, `CONTENT`, `THINKING`,
    /// `OTHER`.
    message_order: Order,
    role: &'a str,
    content: JsonStr<'a>,
    thinking: JsonStr<'a>,
    /// Other `message` members, in order.
    message_others: Vec<(&'a str, Value)>,
}

/// A member the fast path does not model: its value as serde_json reads
/// it, `None` for `null` or what [`Cursor::skip`] declines (a lone
/// surrogate escape, a number beyond `f64`).
fn other_member(c: &mut Cursor<'_>) -> Option<Value> {
    serde_json::from_str(c.skip()?).ok().filter(|v: &Value| !v.is_null())
}

impl<'a> QuickLine<'a> {
    /// The line's view, `None` for the slow path.
    fn parse(data: &'a str) -> Option<Self> {
        if !quick_allowed() {
            return None;
        }
        let mut q = QuickLine::default();
        let mut seen = Seen::default();
        let mut c = Cursor::new(data);
        c.object(|key, c| {
            let code = match key {
                "model" => {
                    seen.first(1)?;
                    q.model = c.plain()?;
                    MODEL
                }
                "created_at" => {
                    seen.first(2)?;
                    q.created_at = c.plain()?;
                    CREATED_AT
                }
                "done" => {
                    seen.first(4)?;
                    q.done = c.boolean()?;
                    DONE
                }
                "message" => {
                    seen.first(8)?;
                    q.message(c)?;
                    MESSAGE
                }
                "error" => return None,
                _ => {
                    q.others.push((key, other_member(c)?));
                    OTHER
                }
            };
            q.order.push(code)
        })?;
        c.end()?;
        quick_taken();
        Some(q)
    }

    /// The `message` object.
    fn message(&mut self, c: &mut Cursor<'a>) -> Option<()> {
        let mut seen = Seen::default();
        c.object(|key, c| {
            let code = match key {
                "role" => {
                    seen.first(1)?;
                    self.role = c.plain()?;
                    ROLE
                }
                "content" => {
                    seen.first(2)?;
                    self.content = c.strict_string()?;
                    CONTENT
                }
                "thinking" => {
                    seen.first(4)?;
                    self.thinking = c.strict_string()?;
                    THINKING
                }
                "tool_calls" => return None,
                _ => {
                    self.message_others.push((key, other_member(c)?));
                    OTHER
                }
            };
            self.message_order.push(code)
        })
    }
}

/// Sets a string member kept in `slot` (see [`OllamaFold::top_slots`]):
/// written in place over the string it holds; on first use, the key is
/// given its place in `map` (a `Null` placeholder, or the place it has).
#[inline]
fn put_str(map: &mut Map<String, Value>, key: &str, slot: &mut Option<Value>, s: &str) {
    match slot {
        Some(Value::String(old)) => {
            if old != s {
                old.clear();
                old.push_str(s);
            }
        }
        _ => {
            if slot.is_none() {
                map.insert(key.to_owned(), Value::Null);
            }
            *slot = Some(Value::String(s.to_owned()));
        }
    }
}

/// [`put_str`] for a boolean member.
#[inline]
fn put_bool(map: &mut Map<String, Value>, key: &str, slot: &mut Option<Value>, b: bool) {
    match slot {
        Some(Value::Bool(old)) => *old = b,
        _ => {
            if slot.is_none() {
                map.insert(key.to_owned(), Value::Null);
            }
            *slot = Some(Value::Bool(b));
        }
    }
}

impl Dialect for OllamaFold {
    fn provider(&self) -> Provider {
        Provider::Ollama
    }

    fn terminal(&self) -> &'static str {
        "done: true"
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        if self.held_done.take().is_some() {
            // Another line came: the done line before it was a stray one.
            warn(sink, WarningCode::TerminalBeforeStart, "done line before any answer line; ignored");
        }
        if turn.state == TurnState::Idle && is_empty_done_line(event.data()) {
            self.held_done = Some(event.data().to_owned());
            return Ok(Flow::Continue);
        }
        self.apply(turn, event, sink)
    }

    /// The body ended on a held done line (see "Stray done lines" in the
    /// module docs): it was the whole answer, an empty one.
    fn complete_at_end(&self, _turn: &Turn) -> bool {
        self.held_done.is_some()
    }

    fn end_of_body(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) -> bool {
        if !self.complete_at_end(turn) {
            return false;
        }
        let Some(line) = self.held_done.take() else { return false };
        let event = Event::new("line", &line, None, None);
        matches!(self.apply(turn, &event, sink), Ok(Flow::End))
    }
    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value> {
        let part = &parts[id as usize];
        match part.kind {
            PartKind::ToolCall => Cow::Borrowed(&self.calls[part.at as usize].1),
            _ => Cow::Owned(Value::String(part.text.clone())),
        }
    }

    /// The folded `/api/chat` response.
    fn message(&self, turn: &Turn) -> Value {
        if self.top.is_empty() {
            return Value::Null;
        }
        let text = |p: Option<u32>| Value::String(p.map_or_else(String::new, |p| turn.parts[p as usize].text.clone()));
        let mut m = Map::new();
        m.insert("role".into(), Value::from("assistant"));
        m.extend(self.message.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(role) = &self.role_slot {
            m.insert("role".into(), role.clone());
        }
        m.insert("content".into(), text(self.content));
        if self.thinking_seen {
            m.insert("thinking".into(), text(self.thinking));
        }
        if !self.calls.is_empty() {
            m.insert("tool_calls".into(), Value::Array(self.calls.iter().map(|(_, c)| c.clone()).collect()));
        }
        let mut top = self.top.clone();
        for (k, slot) in TOP_SLOTS.iter().zip(&self.top_slots) {
            if let Some(v) = slot {
                top.insert((*k).to_owned(), v.clone());
            }
        }
        top.insert("message".into(), Value::Object(m));
        Value::Object(top)
    }

    fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + map_heap_bytes(&self.top)
            + map_heap_bytes(&self.message)
            + self.calls.capacity() * core::mem::size_of::<(u32, Value)>()
            + self.calls.iter().map(|(_, v)| value_heap_bytes(v)).sum::<usize>()
            + self.top_slots.iter().chain([&self.role_slot]).flatten().map(value_heap_bytes).sum::<usize>()
            + self.held_done.as_ref().map_or(0, String::capacity)
    }

    fn on_turn_end(&mut self, _turn: &Turn, _sink: &mut Sink<'_>) -> Option<String> {
        self.top.get("done_reason").and_then(Value::as_str).map(str::to_owned)
    }

    fn after_terminal(&self, _event: &Event<'_>) -> String {
        "line after the done line; ignored".to_owned()
    }

    fn is_restart(&self, _ty: &str, _id: Option<&str>) -> bool {
        // A new connection to `/api/chat` answers from the start.
        true
    }

    fn start_implicitly(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        self.start(turn, sink);
    }
}

impl OllamaFold {
    /// One line of the answer.
    fn apply(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        if let Some(line) = QuickLine::parse(event.data()) {
            return self.on_quick_line(turn, line, sink);
        }
        // The slow path writes `top` and `message` itself.
        self.flush_slots();
        let v = parse_value(event, sink)?;
        let Value::Object(line) = v else {
            self.start(turn, sink);
            warn(sink, WarningCode::InvalidEvent, "line that is not a JSON object; ignored");
            return Ok(Flow::Continue);
        };
        if let Some(e) = line.get("error").filter(|e| !e.is_null()) {
            self.start(turn, sink);
            let message = match e {
                Value::String(s) => s.clone(),
                other => other.get("message").and_then(Value::as_str).map_or_else(|| other.to_string(), str::to_owned),
            };
            let error = ProviderError {
                error_type: String::new(),
                message,
                request_id: None,
                output_emitted: turn.output_emitted(),
            };
            return Ok(Flow::Fail(error));
        }
        let done = line.get("done") == Some(&Value::Bool(true));
        let mut message = None;
        // The line is ours: its members move into the fold, never copied.
        for (k, val) in line.into_iter().filter(|(_, v)| !v.is_null()) {
            if k != "message" {
                self.top.insert(k, val);
            } else {
                if !self.message_placed {
                    // Its place among the top-level members (built at read time).
                    self.top.insert(k, Value::Null);
                    self.message_placed = true;
                }
                message = Some(val);
            }
        }
        self.start(turn, sink);
        match &message {
            None => {}
            Some(Value::Object(m)) => self.on_message(turn, m, sink)?,
            Some(_) => warn(sink, WarningCode::InvalidEvent, "message that is not an object; ignored"),
        }
        self.end_line(turn, done, sink)
    }
    /// After a line's members: the end of the turn at `done: true`.
    fn end_line(&mut self, turn: &mut Turn, done: bool, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        if !done {
            return Ok(Flow::Continue);
        }
        for id in [self.thinking, self.content].into_iter().flatten() {
            turn.commit(self, id, false, sink);
        }
        if let Some(reason) = self.top.get("done_reason").and_then(Value::as_str) {
            sink.event(&StreamEvent::StopReason { choice: 0, reason });
        }
        let usage: Map<String, Value> =
            COUNTS.iter().filter_map(|k| self.top.get(*k).map(|v| ((*k).to_owned(), v.clone()))).collect();
        if !usage.is_empty() {
            sink.event(&StreamEvent::Usage { usage: &Value::Object(usage) });
        }
        Ok(Flow::End)
    }

    /// A line of the fast path: what the slow path does with its `Value`,
    /// member by member in the line's order (slots written in place, text
    /// decoded straight into its part).
    fn on_quick_line(
        &mut self,
        turn: &mut Turn,
        line: QuickLine<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, StreamError> {
        let mut others = line.others;
        let mut next = 0;
        for code in line.order.iter() {
            match code {
                MODEL => put_str(&mut self.top, TOP_SLOTS[0], &mut self.top_slots[0], line.model),
                CREATED_AT => put_str(&mut self.top, TOP_SLOTS[1], &mut self.top_slots[1], line.created_at),
                DONE => put_bool(&mut self.top, TOP_SLOTS[2], &mut self.top_slots[2], line.done),
                MESSAGE => {
                    if !self.message_placed {
                        self.top.insert("message".into(), Value::Null);
                        self.message_placed = true;
                    }
                }
                _ => {
                    if let Some((k, v)) = others.get_mut(next) {
                        self.top.insert((*k).to_owned(), v.take());
                        next += 1;
                    }
                }
            }
        }
        self.start(turn, sink);
        let mut others = line.message_others;
        let mut next = 0;
        for code in line.message_order.iter() {
            match code {
                ROLE => put_str(&mut self.message, "role", &mut self.role_slot, line.role),
                CONTENT | THINKING => {
                    let thinking = code == THINKING;
                    let text = if thinking { &line.thinking } else { &line.content };
                    self.thinking_seen |= thinking;
                    if !text.is_empty() {
                        let id = self.text_part(turn, thinking, sink)?;
                        turn.append_text(id, text, sink)?;
                    }
                }
                _ => {
                    if let Some((k, v)) = others.get_mut(next) {
                        self.message.insert((*k).to_owned(), v.take());
                        next += 1;
                    }
                }
            }
        }
        self.end_line(turn, line.done, sink)
    }

    /// Moves the slots' values into `top` and `message` (in their keys'
    /// places), for the `Value` path, which writes the maps itself.
    fn flush_slots(&mut self) {
        for (k, slot) in TOP_SLOTS.iter().zip(&mut self.top_slots) {
            if let Some(v) = slot.take() {
                self.top.insert((*k).to_owned(), v);
            }
        }
        if let Some(v) = self.role_slot.take() {
            self.message.insert("role".into(), v);
        }
    }

    /// The thinking or the content part, opened on first use.
    fn text_part(&mut self, turn: &mut Turn, thinking: bool, sink: &mut Sink<'_>) -> Result<u32, StreamError> {
        let (slot, kind, ty) = if thinking {
            (&mut self.thinking, PartKind::Reasoning, "thinking")
        } else {
            (&mut self.content, PartKind::Text, "content")
        };
        match *slot {
            Some(id) => Ok(id),
            None => Ok(*slot.insert(turn.open_part(kind, (0, 0), 0, 0, ty, sink)?)),
        }
    }

    fn start(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        if turn.begin() {
            let snapshot = self.message(turn);
            sink.event(&StreamEvent::MessageStart { provider: "ollama", message: &snapshot });
        }
    }

    fn on_message(&mut self, turn: &mut Turn, m: &Map<String, Value>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        for (k, val) in m {
            match (k.as_str(), val) {
                (_, Value::Null) => {}
                ("thinking", Value::String(s)) => {
                    self.thinking_seen = true;
                    if !s.is_empty() {
                        let id = self.text_part(turn, true, sink)?;
                        append_str(turn, id, s, sink)?;
                    }
                }
                ("content", Value::String(s)) => {
                    if !s.is_empty() {
                        let id = self.text_part(turn, false, sink)?;
                        append_str(turn, id, s, sink)?;
                    }
                }
                ("tool_calls", Value::Array(calls)) => {
                    for call in calls {
                        self.on_call(turn, call, sink)?;
                    }
                }
                ("thinking" | "content" | "tool_calls", _) => {
                    warn(sink, WarningCode::InvalidEvent, &format!("message.{k} of unexpected type; ignored"));
                }
                _ => {
                    self.message.insert(k.clone(), val.clone());
                }
            }
        }
        Ok(())
    }

    /// One whole tool call: opened, its arguments pushed, committed.
    fn on_call(&mut self, turn: &mut Turn, call: &Value, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let Some(f) = call.get("function").and_then(Value::as_object) else {
            warn(sink, WarningCode::InvalidEvent, "tool call without a function object; ignored");
            return Ok(());
        };
        let index = f.get("index").and_then(Value::as_u64).unwrap_or(self.calls.len() as u64);
        let init = CallInit {
            id: call.get("id").and_then(Value::as_str),
            name: f.get("name").and_then(Value::as_str),
            format: ToolInputFormat::Json,
            provider_executed: false,
        };
        let part = turn.open_call((self.calls.len() as u32, 0), 0, index, "function", init, sink)?;
        self.calls.push((part, call.clone()));
        if let Some(id) = call.get("id").filter(|i| !i.is_null()) {
            turn.call_metadata(part, "id", id, sink);
        }
        if let Some(name) = f.get("name") {
            turn.call_metadata(part, "name", name, sink);
        }
        match f.get("arguments") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => turn.push_args(part, s.as_str(), sink)?,
            Some(args) => turn.push_args(part, serde_json::to_string(args).unwrap_or_default().as_str(), sink)?,
        }
        turn.commit(self, part, false, sink);
        if let Some(args) = turn.parts[part as usize].args.as_mut() {
            args.release();
        }
        Ok(())
    }
}
