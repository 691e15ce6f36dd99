//! Anthropic Messages streaming.
//!
//! Events: `message_start`, `content_block_start`, `content_block_delta`,
//! `content_block_stop`, `message_delta`, `message_stop`, `ping`, `error`;
//! any other event type is carried through as an `unknown` event.
//!
//! Blocks are folded **by `index`**, never "the last block": deltas and
//! stops of different blocks may interleave. The folded message lists the
//! blocks in index order.
//!
//! | block type | part kind | deltas folded |
//! | --- | --- | --- |
//! | `text` | `text` | `text_delta` (text), `citations_delta` (appended to `citations`) |
//! | `thinking` | `reasoning` | `thinking_delta` (text), `signature_delta` (replaces `signature`) |
//! | `redacted_thinking` | `reasoning` | none (passed whole) |
//! | `tool_use`, `server_tool_use`, `mcp_tool_use` | `tool_call` | `input_json_delta` (arguments) |
//! | `compaction` | `other` | `compaction_delta` (`content` and `encrypted_content` concatenated) |
//! | anything else (`web_search_tool_result`, `fallback`, …) | `other` | none; passed whole |
//!
//! A delta of an unknown type is carried through as an `unknown` event and
//! not folded. A known delta on a block it does not fit is a
//! `delta_type_mismatch` warning.
//!
//! Tool input: the concatenated `input_json_delta` fragments must form one
//! complete, valid JSON value at `content_block_stop`, else the part ends
//! with outcome `invalid_arguments` (raw text kept). No fragment at all
//! keeps the `input` given by `content_block_start`. In the folded message,
//! a tool block still streaming, or cut by the end of the turn (outcome
//! `incomplete`), shows the best-effort partial value of its arguments (as
//! the official SDKs do); one that ended `invalid_arguments` keeps the start
//! `input` (the raw text is in its `part_end`). Tool path events
//! (`tool_args_path`) are those of [`crate::json::PartialJson`], emitted
//! as each fragment arrives.
//!
//! Message fields: `message_start.message` gives the skeleton (its
//! `content`, always empty in practice, is replaced by the streamed blocks);
//! every member
//! of `message_delta.delta` (stop_reason, stop_sequence, container,
//! stop_details, …) and every other top-level member of `message_delta`
//! but `type`, `delta` and `usage` (`context_management`,
//! `input_transformations`, …) replace the message's field of that name.
//!
//! **Usage rule**: each member of `message_delta.usage` replaces the
//! member of the same name in the message's usage (so the cumulative
//! `output_tokens` replaces, never adds); members it omits keep their
//! `message_start` values; with no usage in `message_start`, the delta's
//! members are the usage.
//!
//! The terminal event is `message_stop`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::args::{ArgsEnd, PushError, ToolArgs};
use super::events::{PartKind, PartOutcome, ProviderError, StreamEvent};
use super::view::{self, JsonStr, Str};
use super::{json_error, parse_value, warn, Shared, Sink, StreamError};
use crate::sse::Event;

/// Where the state machine stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum State {
    /// Before `message_start`.
    #[default]
    Idle,
    /// Between `message_start` and `message_stop`.
    InMessage,
    /// After `message_stop` (terminal).
    Stopped,
    /// After a provider `error` event (terminal).
    Errored,
}

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Open,
    Complete,
    Invalid(String),
    Incomplete,
}

#[derive(Debug)]
struct Block {
    index: u64,
    part: u32,
    kind: PartKind,
    base: Map<String, Value>,
    /// Streamed text (text / thinking), starting with the start block's own.
    text: String,
    signature: Option<String>,
    citations: Vec<Value>,
    args: Option<ToolArgs>,
    /// The parsed tool input, once valid.
    input: Option<Value>,
    /// `compaction_delta` accumulations.
    compaction: Option<(Option<String>, Option<String>)>,
    outcome: Outcome,
    /// A committed tool block's final JSON (its input moved in, not copied).
    committed: Option<Value>,
}

impl Block {
    fn btype(&self) -> &str {
        self.base.get("type").and_then(Value::as_str).unwrap_or("")
    }

    fn text_field(&self) -> Option<&'static str> {
        match self.btype() {
            "text" => Some("text"),
            "thinking" => Some("thinking"),
            _ => None,
        }
    }

    fn to_json(&self) -> Value {
        if let Some(c) = &self.committed {
            return c.clone();
        }
        let mut m = self.base.clone();
        if let Some(f) = self.text_field() {
            m.insert(f.into(), Value::String(self.text.clone()));
        }
        if let Some(sig) = &self.signature {
            m.insert("signature".into(), Value::String(sig.clone()));
        }
        if !self.citations.is_empty() {
            let mut list = match m.get("citations") {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            list.extend(self.citations.iter().cloned());
            m.insert("citations".into(), Value::Array(list));
        }
        if let Some(args) = &self.args {
            if let Some(input) = &self.input {
                m.insert("input".into(), input.clone());
            } else if matches!(self.outcome, Outcome::Invalid(_)) {
                // Never made-up arguments: the start block's `input` stays.
            } else if let Some(partial) = args.partial_value() {
                m.insert("input".into(), partial);
            }
        }
        if let Some((content, enc)) = &self.compaction {
            if let Some(c) = content {
                m.insert("content".into(), Value::String(c.clone()));
            }
            if let Some(e) = enc {
                m.insert("encrypted_content".into(), Value::String(e.clone()));
            }
        }
        Value::Object(m)
    }
}

/// The event types of the Messages API.
const KNOWN: [&str; 8] = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
];

/// The typed view of the hot-path fields of an event.
#[derive(Deserialize, Debug, PartialEq)]
struct Head<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Cow<'a, str>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    delta: Option<DeltaView<'a>>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
struct DeltaView<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<Str<'a>>,
    #[serde(default, borrow)]
    text: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    partial_json: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    thinking: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    signature: Option<Str<'a>>,
}

/// The hot event — `content_block_delta` with a text, thinking or argument
/// delta — matched byte for byte in the compact form the API sends; the same
/// view serde_json would give. Anything else (whitespace, other members or
/// order, a number serde_json would read differently) is `None` and goes
/// through serde_json.
fn quick_delta(data: &str) -> Option<Head<'_>> {
    let rest = data.strip_prefix(r#"{"type":"content_block_delta","index":"#)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 18 || (digits > 1 && rest.starts_with('0')) {
        return None;
    }
    let index: u64 = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(r#","delta":{"type":""#)?;
    let (dty, after) = [
        ("text_delta", r#"text_delta","text":"#),
        ("input_json_delta", r#"input_json_delta","partial_json":"#),
        ("thinking_delta", r#"thinking_delta","thinking":"#),
    ]
    .into_iter()
    .find_map(|(dty, prefix)| Some((dty, rest.strip_prefix(prefix)?)))?;
    let (value, end) = view::scan_str(data, data.len() - after.len())?;
    if &data[end..] != "}}" {
        return None;
    }
    let mut delta = DeltaView { ty: Some(Str(Cow::Borrowed(dty))), ..DeltaView::default() };
    match dty {
        "text_delta" => delta.text = Some(value),
        "input_json_delta" => delta.partial_json = Some(value),
        _ => delta.thinking = Some(value),
    }
    Some(Head { ty: Cow::Borrowed("content_block_delta"), index: Some(index), delta: Some(delta) })
}

/// The Anthropic fold.
#[derive(Debug, Default)]
pub(crate) struct AnthropicFold {
    state: State,
    message: Map<String, Value>,
    blocks: Vec<Block>,
    /// The message was started implicitly (no `message_start` yet).
    implicit: bool,
}

fn implicit_message() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), "message".into());
    m.insert("role".into(), "assistant".into());
    m.insert("content".into(), Value::Array(Vec::new()));
    m.insert("stop_reason".into(), Value::Null);
    m.insert("stop_sequence".into(), Value::Null);
    m
}

impl AnthropicFold {
    pub(crate) fn is_terminated(&self) -> bool {
        matches!(self.state, State::Stopped | State::Errored)
    }

    pub(crate) fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + self
                .blocks
                .iter()
                .map(|b| {
                    core::mem::size_of::<Block>()
                        + b.text.capacity()
                        + b.args.as_ref().map_or(0, ToolArgs::capacity)
                        + b.signature.as_ref().map_or(0, String::capacity)
                })
                .sum::<usize>()
    }

    fn block_pos(&self, index: u64) -> Option<usize> {
        let i = usize::try_from(index).ok()?;
        if self.blocks.get(i).is_some_and(|b| b.index == index) {
            return Some(i);
        }
        self.blocks.iter().position(|b| b.index == index)
    }

    /// The folded Anthropic `Message`.
    pub(crate) fn message(&self) -> Value {
        if self.state == State::Idle && self.message.is_empty() {
            return Value::Null;
        }
        let mut m = self.message.clone();
        let mut order: Vec<&Block> = self.blocks.iter().collect();
        order.sort_by_key(|b| b.index);
        m.insert("content".into(), Value::Array(order.iter().map(|b| b.to_json()).collect()));
        Value::Object(m)
    }

    /// Makes sure a message exists (implicitly started on bad input).
    fn ensure_started(&mut self, ty: &str, sink: &mut Sink<'_>) {
        if self.state == State::Idle {
            warn(sink, "event_before_start", &format!("{ty} before message_start; message started implicitly"));
            self.message = implicit_message();
            self.state = State::InMessage;
            self.implicit = true;
        }
    }

    pub(crate) fn on_event(
        &mut self,
        event: &Event<'_>,
        shared: &mut Shared,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        if self.is_terminated() {
            warn(sink, "data_after_terminal", &format!("{} after the terminal event; ignored", event.event()));
            return Ok(());
        }
        let parsed = match quick_delta(event.data()) {
            Some(head) => Ok(head),
            None => serde_json::from_str(event.data()),
        };
        let head: Head<'_> = match parsed {
            Ok(h) => h,
            Err(e) => {
                // Valid JSON of an unexpected shape (e.g. a non-object `delta`):
                // an unknown event or a bad known one, never fatal.
                let v = parse_value(event).map_err(|_| json_error(event, e))?;
                let ty = v.get("type").and_then(Value::as_str).unwrap_or(event.event());
                if KNOWN.contains(&ty) {
                    warn(sink, "invalid_event", &format!("{ty} of unexpected shape; ignored"));
                } else {
                    sink(&StreamEvent::Unknown { scope: "event", provider_type: ty, data: event.data() });
                }
                return Ok(());
            }
        };
        if self.is_terminated() {
            warn(sink, "data_after_terminal", &format!("{} after the terminal event; ignored", event.event()));
            return Ok(());
        }
        let ty: &str = if head.ty.is_empty() { event.event() } else { &head.ty };
        match ty {
            "content_block_delta" => self.on_delta(head, event, shared, sink),
            "ping" => Ok(()),
            "message_start" => self.on_message_start(event, sink),
            "content_block_start" => self.on_block_start(event, shared, sink),
            "content_block_stop" => self.on_block_stop(head.index, sink),
            "message_delta" => self.on_message_delta(event, sink),
            "message_stop" => {
                self.ensure_started("message_stop", sink);
                self.close_open(PartOutcomeReason::TerminalArrived, sink);
                self.state = State::Stopped;
                let reason = self.message.get("stop_reason").and_then(Value::as_str);
                sink(&StreamEvent::TurnEnd { stop_reason: reason });
                Ok(())
            }
            "error" => {
                let v = parse_value(event)?;
                let err = provider_error(&v, shared.output_emitted());
                self.close_open(PartOutcomeReason::Error, sink);
                self.state = State::Errored;
                sink(&StreamEvent::Error { error: &err });
                Err(StreamError::Provider(err))
            }
            other => {
                sink(&StreamEvent::Unknown { scope: "event", provider_type: other, data: event.data() });
                Ok(())
            }
        }
    }

    fn on_message_start(&mut self, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let v = parse_value(event)?;
        if self.state != State::Idle && !self.implicit {
            warn(sink, "duplicate_start", "second message_start; ignored");
            return Ok(());
        }
        let mut message = match v.get("message") {
            Some(Value::Object(m)) => m.clone(),
            _ => {
                warn(sink, "invalid_event", "message_start without a message object; started an empty one");
                implicit_message()
            }
        };
        if !message.contains_key("content") {
            message.insert("content".into(), Value::Array(Vec::new()));
        }
        if self.implicit {
            // A late message_start: its fields win, what was folded is kept.
            for (k, v) in std::mem::take(&mut self.message) {
                if !message.contains_key(&k) || k == "stop_reason" && !v.is_null() {
                    message.insert(k, v);
                }
            }
            self.implicit = false;
        }
        self.message = message;
        self.state = State::InMessage;
        let snapshot = self.message();
        sink(&StreamEvent::MessageStart { provider: "anthropic", message: &snapshot });
        if let Some(u) = self.message.get("usage").filter(|u| u.is_object()) {
            sink(&StreamEvent::Usage { usage: u });
        }
        Ok(())
    }

    fn on_block_start(
        &mut self,
        event: &Event<'_>,
        shared: &mut Shared,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let v = parse_value(event)?;
        self.ensure_started("content_block_start", sink);
        let Some(index) = v.get("index").and_then(Value::as_u64) else {
            warn(sink, "invalid_event", "content_block_start without a numeric index; ignored");
            return Ok(());
        };
        let Some(Value::Object(base)) = v.get("content_block") else {
            warn(sink, "invalid_event", "content_block_start without a content_block object; ignored");
            return Ok(());
        };
        if self.block_pos(index).is_some() {
            warn(
                sink,
                "duplicate_part_index",
                &format!("content_block_start for index {index} already started; ignored"),
            );
            return Ok(());
        }
        if index != self.blocks.len() as u64 {
            warn(
                sink,
                "unexpected_part_index",
                &format!("content_block_start at index {index}, expected {}; folded by index", self.blocks.len()),
            );
        }
        let part = shared.new_part()?;
        let btype = base.get("type").and_then(Value::as_str).unwrap_or("");
        let kind = match btype {
            "text" => PartKind::Text,
            "thinking" | "redacted_thinking" => PartKind::Reasoning,
            "tool_use" | "server_tool_use" | "mcp_tool_use" => PartKind::ToolCall,
            _ => PartKind::Other,
        };
        let mut block = Block {
            index,
            part,
            kind,
            base: base.clone(),
            text: String::new(),
            signature: None,
            citations: Vec::new(),
            args: (kind == PartKind::ToolCall).then(ToolArgs::new),
            input: None,
            compaction: (btype == "compaction").then(|| {
                let s = |k: &str| base.get(k).and_then(Value::as_str).map(str::to_owned);
                (s("content"), s("encrypted_content"))
            }),
            outcome: Outcome::Open,
            committed: None,
        };
        if let Some(f) = block.text_field() {
            block.text = base.get(f).and_then(Value::as_str).unwrap_or("").to_owned();
        }
        sink(&StreamEvent::PartStart { part, kind, choice: 0, index, provider_type: btype });
        if !block.text.is_empty() {
            sink(&StreamEvent::TextDelta { part, text: &block.text });
        }
        if kind == PartKind::ToolCall {
            for key in ["id", "name"] {
                if let Some(val) = base.get(key) {
                    sink(&StreamEvent::PartMetadata { part, key, value: val });
                }
            }
        }
        self.blocks.push(block);
        Ok(())
    }

    fn on_delta(
        &mut self,
        head: Head<'_>,
        event: &Event<'_>,
        shared: &mut Shared,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        if self.state == State::Idle {
            self.ensure_started("content_block_delta", sink);
        }
        let (Some(index), Some(delta)) = (head.index, head.delta) else {
            warn(sink, "invalid_event", "content_block_delta without index or delta; ignored");
            return Ok(());
        };
        let Some(pos) = self.block_pos(index) else {
            warn(sink, "unknown_part_index", &format!("content_block_delta for index {index}, never started; ignored"));
            return Ok(());
        };
        let block = &mut self.blocks[pos];
        if block.outcome != Outcome::Open {
            warn(sink, "part_already_ended", &format!("content_block_delta for index {index} after its stop; ignored"));
            return Ok(());
        }
        let dty = delta.ty.as_deref().unwrap_or("");
        let part = block.part;
        let fits = match dty {
            "text_delta" | "citations_delta" => block.btype() == "text",
            "thinking_delta" | "signature_delta" => block.btype() == "thinking",
            "input_json_delta" => block.kind == PartKind::ToolCall,
            "compaction_delta" => block.compaction.is_some(),
            _ => {
                sink(&StreamEvent::Unknown { scope: "delta", provider_type: dty, data: event.data() });
                return Ok(());
            }
        };
        if !fits {
            let msg = format!("{dty} on a {} block (index {index}); ignored", block.btype());
            warn(sink, "delta_type_mismatch", &msg);
            return Ok(());
        }
        match dty {
            "text_delta" | "thinking_delta" => {
                let text = if dty == "text_delta" { delta.text } else { delta.thinking };
                let text = shared.append_text(&mut block.text, &text.unwrap_or_default())?;
                sink(&StreamEvent::TextDelta { part, text });
            }
            "input_json_delta" => {
                let frag = delta.partial_json.unwrap_or_default();
                let max = shared.config.max_tool_args_bytes;
                if let Some(args) = block.args.as_mut() {
                    args.push(&frag, part, max, sink).map_err(|PushError::TooLarge| shared.args_limit())?;
                }
            }
            "signature_delta" => {
                let sig = delta.signature.unwrap_or_default().into_owned();
                let value = Value::String(sig.clone());
                block.signature = Some(sig);
                sink(&StreamEvent::PartMetadata { part, key: "signature", value: &value });
            }
            "citations_delta" => {
                let v = parse_value(event)?;
                let citation = v.get("delta").and_then(|d| d.get("citation")).cloned().unwrap_or(Value::Null);
                sink(&StreamEvent::PartMetadata { part, key: "citation", value: &citation });
                self.blocks[pos].citations.push(citation);
            }
            _ => {
                // compaction_delta
                let v = parse_value(event)?;
                let d = v.get("delta").cloned().unwrap_or(Value::Null);
                if let Some((content, enc)) = self.blocks[pos].compaction.as_mut() {
                    for (slot, key) in [(content, "content"), (enc, "encrypted_content")] {
                        if let Some(s) = d.get(key).and_then(Value::as_str) {
                            shared.check_text(slot.as_ref().map_or(0, String::len) + s.len())?;
                            slot.get_or_insert_with(String::new).push_str(s);
                        }
                    }
                }
                sink(&StreamEvent::PartMetadata { part, key: "compaction_delta", value: &d });
            }
        }
        Ok(())
    }

    fn on_block_stop(&mut self, index: Option<u64>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        self.ensure_started("content_block_stop", sink);
        let Some(index) = index else {
            warn(sink, "invalid_event", "content_block_stop without an index; ignored");
            return Ok(());
        };
        let Some(pos) = self.block_pos(index) else {
            warn(sink, "unknown_part_index", &format!("content_block_stop for index {index}, never started; ignored"));
            return Ok(());
        };
        if self.blocks[pos].outcome != Outcome::Open {
            warn(sink, "part_already_ended", &format!("second content_block_stop for index {index}; ignored"));
            return Ok(());
        }
        Self::commit(&mut self.blocks[pos], false, sink);
        Ok(())
    }

    /// Commits a block: `cut` when the turn ended with it open.
    fn commit(block: &mut Block, cut: bool, sink: &mut Sink<'_>) {
        block.outcome = if cut { Outcome::Incomplete } else { Outcome::Complete };
        if let Some(args) = block.args.as_mut() {
            match args.finish() {
                ArgsEnd::Empty => {
                    if !cut {
                        block.input = Some(block.base.get("input").cloned().unwrap_or(Value::Object(Map::new())));
                    }
                }
                ArgsEnd::Valid => {
                    if !cut {
                        block.input = args.take_value();
                    }
                }
                ArgsEnd::Invalid(e) => {
                    if !cut {
                        block.outcome = Outcome::Invalid(e);
                    }
                }
            }
        }
        if let Some(input) = block.input.take() {
            // Move the input into the block's final JSON instead of copying it.
            let mut m = block.base.clone();
            m.insert("input".into(), input);
            block.committed = Some(Value::Object(m));
        }
        let content;
        let content = match &block.committed {
            Some(c) => c,
            None => {
                content = block.to_json();
                &content
            }
        };
        let outcome = match &block.outcome {
            Outcome::Invalid(e) => {
                PartOutcome::InvalidArguments { error: e, raw: block.args.as_ref().map_or("", ToolArgs::raw) }
            }
            Outcome::Incomplete => PartOutcome::Incomplete,
            _ => PartOutcome::Complete,
        };
        sink(&StreamEvent::PartEnd { part: block.part, kind: block.kind, outcome, content });
        if block.outcome != Outcome::Incomplete {
            // The raw text and the parser's tree are no longer needed.
            if let Some(args) = block.args.as_mut() {
                args.release();
            }
        }
    }

    fn close_open(&mut self, why: PartOutcomeReason, sink: &mut Sink<'_>) {
        for block in self.blocks.iter_mut().filter(|b| b.outcome == Outcome::Open) {
            if why == PartOutcomeReason::TerminalArrived {
                let msg = format!("block {} still open at message_stop; committed as incomplete", block.index);
                warn(sink, "part_not_ended", &msg);
            }
            Self::commit(block, true, sink);
        }
    }

    /// Ends the turn on a provider error reported outside the JSON events.
    pub(crate) fn fail(&mut self, sink: &mut Sink<'_>) {
        self.close_open(PartOutcomeReason::Error, sink);
        self.state = State::Errored;
    }

    fn on_message_delta(&mut self, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let v = parse_value(event)?;
        self.ensure_started("message_delta", sink);
        if let Some(Value::Object(d)) = v.get("delta") {
            for (k, val) in d {
                self.message.insert(k.clone(), val.clone());
            }
        }
        if let Value::Object(top) = &v {
            for (k, val) in top.iter().filter(|(k, _)| !matches!(k.as_str(), "type" | "delta" | "usage")) {
                self.message.insert(k.clone(), val.clone());
            }
        }
        if let Some(reason) = v.get("delta").and_then(|d| d.get("stop_reason")).and_then(Value::as_str) {
            sink(&StreamEvent::StopReason { choice: 0, reason });
        }
        if let Some(Value::Object(u)) = v.get("usage") {
            let usage = self.message.entry("usage").or_insert_with(|| Value::Object(Map::new()));
            if !usage.is_object() {
                *usage = Value::Object(Map::new());
            }
            if let Value::Object(target) = usage {
                for (k, val) in u {
                    target.insert(k.clone(), val.clone());
                }
            }
            sink(&StreamEvent::Usage { usage });
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        match self.state {
            State::Stopped | State::Errored => Ok(()),
            State::Idle | State::InMessage => {
                self.close_open(PartOutcomeReason::StreamEnded, sink);
                Err(StreamError::Incomplete { expected: "message_stop" })
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartOutcomeReason {
    TerminalArrived,
    StreamEnded,
    Error,
}

/// The typed error of an Anthropic `error` event:
/// `{"type":"error","error":{"type":…,"message":…},"request_id":…}`.
fn provider_error(v: &Value, output_emitted: bool) -> ProviderError {
    let e = v.get("error");
    let s = |o: Option<&Value>, k: &str| o.and_then(|o| o.get(k)).and_then(Value::as_str).map(str::to_owned);
    ProviderError {
        error_type: s(e, "type").unwrap_or_default(),
        message: s(e, "message").unwrap_or_default(),
        request_id: s(Some(v), "request_id").or_else(|| s(e, "request_id")),
        output_emitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path gives exactly serde_json's view, or declines.
    #[test]
    fn quick_delta_is_serde_json_or_nothing() {
        let values =
            [r#""plain""#, r#""a\"b\\c\n""#, r#""\ud83d\ude00 é""#, r#""\ud800""#, r#""""#, "\"a\u{1}\"", r#""\q""#];
        let mut docs = Vec::new();
        for v in values {
            for (dty, field) in
                [("text_delta", "text"), ("input_json_delta", "partial_json"), ("thinking_delta", "thinking")]
            {
                for index in ["0", "7", "01", "-1", "1e2", "18446744073709551615", "1.0"] {
                    docs.push(format!(
                        r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"{dty}","{field}":{v}}}}}"#
                    ));
                    docs.push(format!(
                        r#"{{"type": "content_block_delta", "index": {index}, "delta": {{"type": "{dty}", "{field}": {v}}}}}"#
                    ));
                    docs.push(format!(
                        r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"{dty}","{field}":{v}}},"index":3}}"#
                    ));
                    docs.push(format!(
                        r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"{dty}","{field}":{v}}}}} "#
                    ));
                    docs.push(format!(
                        r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"{dty}","{field}":{v}}}}}x"#
                    ));
                }
            }
        }
        docs.push(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","thinking":"x"}}"#.into());
        let mut quick = 0;
        for doc in &docs {
            let serde: Option<Head<'_>> = serde_json::from_str(doc).ok();
            if let Some(head) = quick_delta(doc) {
                quick += 1;
                assert_eq!(Some(head), serde, "{doc}");
            }
        }
        // The compact documents with a valid index and string took the fast path.
        assert_eq!(quick, 3 * 2 * 4, "{quick}");
    }
}
