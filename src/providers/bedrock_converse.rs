//! Amazon Bedrock `ConverseStream`: the model-independent Bedrock chat API.
//!
//! The body is AWS event-stream framed ([`crate::eventstream`]; the
//! [`Stream`](super::Stream) driver decodes it, see [`super`]): every message's
//! `:event-type` header names the event and its payload is that event's JSON:
//!
//! | event | payload | normalized |
//! | --- | --- | --- |
//! | `messageStart` | `{role}` | `message_start` |
//! | `contentBlockStart` | `{start: {toolUse: {toolUseId, name, type?}}, contentBlockIndex}` (also `start.toolResult`, `start.image`) | `part_start` (`tool_call`, `toolUse`; `part_metadata` `id` and `name`), or an `other` part named by the start member |
//! | `contentBlockDelta` | `{delta: {text}, contentBlockIndex}` | a `text` part (`text`) opens on its first delta; `text_delta` |
//! | | `{delta: {toolUse: {input}}}` | `tool_args_delta` and its path events |
//! | | `{delta: {reasoningContent: {text} \| {signature} \| {redactedContent}}}` | a `reasoning` part (`reasoningContent`): `text_delta`; `part_metadata` `signature` / `redacted_content` (base64) |
//! | | `{delta: {citation: {title, source, sourceContent, location}}}` | `part_metadata` `citation` on the text part |
//! | | `{delta: {toolResult: [..]}}`, `{delta: {image: {..}}}` | folded into the `other` part |
//! | `contentBlockStop` | `{contentBlockIndex}` | `part_end` (a tool call is ready when its input is complete JSON) |
//! | `messageStop` | `{stopReason, additionalModelResponseFields?}` | `stop_reason` |
//! | `metadata` | `{usage, metrics, trace?, performanceConfig?, serviceTier?}` | `usage` (the object as sent), then `turn_end` |
//!
//! Exception messages (`:message-type` `exception`; `throttlingException`,
//! `modelStreamErrorException`, `internalServerException`,
//! `serviceUnavailableException`, `validationException`, …) are provider
//! errors whose `error_type` is the exception type and `message` the
//! payload's `message`; [`crate::reconnect::is_retryable_error_type`] says
//! which are worth a retry (throttling, internal, service unavailable, model
//! stream error, model timeout; not validation).
//!
//! # The folded response
//!
//! The `Converse` (non-streaming) response: `output.message` with `role`
//! and `content` (the blocks in `contentBlockIndex` order), then
//! `stopReason`, `usage`, `metrics` and every other member of `messageStop`
//! and `metadata` (`additionalModelResponseFields`, `trace`,
//! `performanceConfig`, `serviceTier`; a later value replaces). Blocks:
//!
//! * text: `{"text"}`; a text block that received `citation` deltas is
//!   `{"citationsContent": {"content": [{"text"}], "citations": [..]}}`
//!   (each delta one `Citation`, its members as sent);
//! * reasoning: `{"reasoningContent": {"reasoningText": {"text",
//!   "signature"?}}}`, or `{"reasoningContent": {"redactedContent"}}` for a
//!   block of redacted deltas only. A blob is base64 text, as in the REST
//!   JSON wire form: the decoded bytes of every delta concatenated, encoded
//!   again;
//! * tool use: `{"toolUse": {"toolUseId", "name", "type"?, "input"}}`, the
//!   input parsed from the fragments (`{}` when none came; cut off or
//!   invalid: the value so far, else `{}`); an input whose tree would cost
//!   more than `max_memory_bytes / 16` stays its JSON text, as in the
//!   Anthropic dialect (no `input` in its `part_end` content; the message
//!   view writes the text; `message()` builds the value);
//! * `toolResult` / `image` starts: the start object, with the `toolResult`
//!   deltas' items appended to its `content`, an `image` delta's members
//!   set on it.
//!
//! Every event payload carries a padding member `p` (random length,
//! against length side channels): never folded.
//!
//! **Usage rule**: `metadata.usage` replaces the usage (one `metadata`
//! event per stream, after `messageStop`).
//!
//! # End of the turn
//!
//! `metadata` after `messageStop` ends the turn (`turn_end` with the stop
//! reason). The body ending right after `messageStop` (no `metadata`) is a
//! normal end too; ending before `messageStop` is
//! [`StreamError::Incomplete`] (expected `messageStop`).
//!
//! # Bad input
//!
//! A payload that is not JSON, or not an object, or an event of the wrong
//! shape (no `contentBlockIndex`, a `delta` that is not an object): an
//! `invalid_event` warning quoting the payload, the event ignored. An event
//! type this fold does not know: an `unknown` event carrying the payload.
//! A content event before `messageStart`: `event_before_start`, the turn
//! started implicitly (a later `messageStart` still gives the role).
//! A delta for a block index never started with a kind that needs a start,
//! or of a kind that does not fit its block: `delta_type_mismatch`; a stop
//! for an unknown index: `unknown_part_index`.

use std::borrow::Cow;

use base64::Engine;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::events::{PartKind, ProviderError, StreamEvent, ToolInputFormat, WarningCode};
use super::turn::{CallInit, Dialect, DialectInfo, Flow, Outcome, Part, Turn, TurnState};
use super::{append_str, value_lenient, warn, MessageView, PathStep, Provider, Sink, StreamError};
use crate::json::scan::{map_heap_bytes, value_heap_bytes};
use crate::json::PartialStrings;
use crate::sse::Event;

use super::args::ArgsEnd;
use super::fastpath::{Cursor, Seen};
use super::raw::{quick_allowed, quick_taken};
use super::view::JsonStr;

/// The ConverseStream dialect. Detected from an event-stream body whose
/// first event is not `chunk`; over SSE, from a first payload of a Converse
/// event's shape (`contentBlockIndex`, `stopReason`, `usage` with `metrics`,
/// or a lone `role`).
pub(crate) const DIALECT: DialectInfo = DialectInfo {
    provider: Provider::BedrockConverse,
    name: "bedrock_converse",
    aliases: &["converse"],
    detects: |_, value| {
        value.and_then(Value::as_object).is_some_and(|o| {
            o.contains_key("contentBlockIndex")
                || o.contains_key("stopReason")
                || (o.contains_key("usage") && o.contains_key("metrics"))
                || (o.len() == 1 && o.get("role").is_some_and(Value::is_string))
        })
    },
    make: || Box::<ConverseFold>::default(),
};

/// The padding member of every event payload.
const PADDING: &str = "p";

/// What a content block is.
#[derive(Debug)]
enum Kind {
    Text {
        citations: Vec<Value>,
    },
    Reasoning {
        signature: Option<String>,
        redacted: Vec<u8>,
        has_text: bool,
    },
    ToolUse {
        start: Map<String, Value>,
        input: Option<Value>,
        /// The input is kept as text (too large a tree): taken from the
        /// arguments after the commit.
        as_text: bool,
        /// That text, validated.
        raw: Option<Box<RawValue>>,
    },
    /// A `toolResult` or `image` block: its start member name and object.
    Other {
        name: String,
        body: Map<String, Value>,
    },
}

/// One content block, the Converse side.
#[derive(Debug)]
struct Block {
    part: u32,
    kind: Kind,
}

/// The content blocks by `contentBlockIndex`, in index order: a vector kept
/// sorted (a turn has a few blocks, opened in order; a tree's node costs
/// more than they do). A map's `get`, `insert` and ordered iteration.
#[derive(Debug, Default)]
struct Blocks(Vec<(u64, Block)>);

impl Blocks {
    /// Where block `index` is (`Ok`) or would go (`Err`); the last block,
    /// the usual one, first.
    fn find(&self, index: u64) -> Result<usize, usize> {
        match self.0.last() {
            None => Err(0),
            Some((last, _)) if *last == index => Ok(self.0.len() - 1),
            Some((last, _)) if *last < index => Err(self.0.len()),
            Some(_) => self.0.binary_search_by_key(&index, |(k, _)| *k),
        }
    }

    fn get(&self, index: &u64) -> Option<&Block> {
        self.find(*index).ok().map(|i| &self.0[i].1)
    }

    fn get_mut(&mut self, index: &u64) -> Option<&mut Block> {
        self.find(*index).ok().map(|i| &mut self.0[i].1)
    }

    fn contains_key(&self, index: &u64) -> bool {
        self.find(*index).is_ok()
    }

    /// Sets block `index` (replacing one there).
    fn insert(&mut self, index: u64, block: Block) {
        match self.find(index) {
            Ok(i) => self.0[i].1 = block,
            Err(i) => self.0.insert(i, (index, block)),
        }
    }

    /// The highest index.
    fn last_key(&self) -> Option<u64> {
        self.0.last().map(|(k, _)| *k)
    }

    fn iter(&self) -> impl Iterator<Item = (&u64, &Block)> {
        self.0.iter().map(|(k, b)| (k, b))
    }

    fn values(&self) -> impl Iterator<Item = &Block> {
        self.0.iter().map(|(_, b)| b)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The ConverseStream fold.
#[derive(Debug, Default)]
pub(crate) struct ConverseFold {
    role: Option<Value>,
    /// `contentBlockIndex` → block.
    blocks: Blocks,
    /// The `contentBlockIndex` of each block in the order they opened (a
    /// part's `at`).
    order: Vec<u64>,
    /// `stopReason`, `usage`, `metrics` and the other members of
    /// `messageStop` and `metadata`.
    top: Map<String, Value>,
    stopped: bool,
    /// `messageStart` was seen.
    started: bool,
    /// The most a tool input may cost as a value tree (`max_memory_bytes /
    /// 16`): a larger one stays text (see the Anthropic dialect).
    value_max: usize,
}

impl Dialect for ConverseFold {
    fn provider(&self) -> Provider {
        Provider::BedrockConverse
    }

    fn terminal(&self) -> &'static str {
        "messageStop"
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        self.value_max = turn.config.max_memory_bytes / 16;
        let ty = event.event();
        if quick_allowed() {
            if let Some(q) = quick(ty, event.data()) {
                quick_taken();
                return self.on_quick(turn, q, event.data(), sink);
            }
        }
        let value = match value_lenient(event.data(), ty, sink) {
            Ok(Value::Object(o)) => o,
            _ => {
                self.start(turn, sink);
                invalid(sink, ty, "payload is not a JSON object", event.data());
                return Ok(Flow::Continue);
            }
        };
        if ty == "error" {
            self.start(turn, sink);
            return Ok(Flow::Fail(provider_error(&value, turn.output_emitted())));
        }
        match ty {
            "messageStart" => self.on_message_start(turn, value.get("role"), sink),
            "contentBlockStart" => {
                self.start_content(turn, "contentBlockStart", sink);
                self.on_block_start(turn, &value, event.data(), sink)?;
            }
            "contentBlockDelta" => {
                self.start_content(turn, "contentBlockDelta", sink);
                self.on_delta(turn, &value, event.data(), sink)?;
            }
            "contentBlockStop" => {
                self.start_content(turn, "contentBlockStop", sink);
                let Some(index) = value.get("contentBlockIndex").and_then(Value::as_u64) else {
                    invalid(sink, ty, "no contentBlockIndex", event.data());
                    return Ok(Flow::Continue);
                };
                self.on_block_stop(turn, index, sink);
            }
            "messageStop" => self.on_message_stop(turn, value, sink),
            "metadata" => {
                self.start(turn, sink);
                let usage = value.get("usage").cloned();
                self.merge(value);
                if let Some(usage) = usage.filter(Value::is_object) {
                    sink.event(&StreamEvent::Usage { usage: &usage });
                }
                if self.stopped {
                    return Ok(Flow::End);
                }
            }
            // (Carried through; it does not start the turn.)
            other => sink.event(&StreamEvent::Unknown { scope: "event", provider_type: other, data: event.data() }),
        }
        Ok(Flow::Continue)
    }

    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value> {
        let part = &mut parts[id as usize];
        let Some(block) = self.order.get(part.at as usize).and_then(|i| self.blocks.get_mut(i)) else {
            return Cow::Owned(Value::Null);
        };
        let value_max = self.value_max;
        if let Kind::ToolUse { start, input, as_text, .. } = &mut block.kind {
            let value = match (&part.outcome, &part.args_end) {
                (Outcome::Complete, Some(ArgsEnd::Valid)) => match part.args.as_deref_mut() {
                    Some(args) if !args.value_fits(value_max) => {
                        // Too large a tree: the text is kept (taken at the stop);
                        // the part's content has no input (its arguments are the call's).
                        *as_text = true;
                        return Cow::Owned(one("toolUse", Value::Object(start.clone())));
                    }
                    args => args.and_then(|a| a.take_value()),
                },
                (_, Some(ArgsEnd::Empty)) | (_, None) => None,
                _ => part
                    .args
                    .as_deref()
                    .filter(|a| a.value_fits(value_max))
                    .and_then(|a| a.partial_value(PartialStrings::Drop)),
            };
            *input = Some(value.unwrap_or_else(|| Value::Object(Map::new())));
        }
        Cow::Owned(block.to_json(part, value_max))
    }

    /// The folded `Converse` response.
    fn message(&self, turn: &Turn) -> Value {
        self.message_view(turn).into_value()
    }

    /// [`message`](Self::message), the blocks, texts and members moved out
    /// of the fold (a response with inputs kept as text is built as
    /// `message` builds it).
    fn into_message(self: Box<Self>, turn: &mut Turn) -> Value {
        let kept_as_text = self.blocks.values().any(|b| matches!(b.kind, Kind::ToolUse { raw: Some(_), .. }));
        if kept_as_text || turn.state == TurnState::Idle && self.top.is_empty() && self.blocks.is_empty() {
            return self.message(turn);
        }
        let ConverseFold { role, blocks, mut top, value_max, .. } = *self;
        let content = blocks
            .0
            .into_iter()
            .map(|(_, b)| {
                let part = &mut turn.parts[b.part as usize];
                b.into_json(part, value_max)
            })
            .collect();
        let mut message = Map::new();
        message.insert("role".into(), role.unwrap_or_else(|| Value::from("assistant")));
        message.insert("content".into(), Value::Array(content));
        response_json(Value::Object(message), &mut top)
    }

    /// The response, lent with the inputs kept as text spliced in when it
    /// writes itself (no tree built for them).
    fn message_view(&self, turn: &Turn) -> MessageView<'_> {
        let value = self.response(turn);
        let raw: Vec<_> = self
            .blocks
            .values()
            .enumerate()
            .filter_map(|(i, b)| match &b.kind {
                Kind::ToolUse { raw: Some(raw), .. } => {
                    let path = ["output", "message", "content"].map(PathStep::Key).into_iter();
                    let path = path.chain([PathStep::Index(i), PathStep::Key("toolUse"), PathStep::Key("input")]);
                    Some((path.collect(), &**raw))
                }
                _ => None,
            })
            .collect();
        if raw.is_empty() {
            MessageView::Owned(value)
        } else {
            MessageView::Spliced { value, raw }
        }
    }

    fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.role.as_ref().map_or(0, value_heap_bytes)
            + map_heap_bytes(&self.top)
            + self.blocks.len() * (core::mem::size_of::<Block>() + 16)
            + self.order.capacity() * 8
            + self
                .blocks
                .values()
                .map(|b| match &b.kind {
                    Kind::Text { citations } => {
                        citations.capacity() * 32 + citations.iter().map(value_heap_bytes).sum::<usize>()
                    }
                    Kind::Reasoning { redacted, signature, .. } => {
                        redacted.capacity() + signature.as_ref().map_or(0, String::capacity)
                    }
                    Kind::ToolUse { start, input, raw, .. } => {
                        map_heap_bytes(start)
                            + input.as_ref().map_or(0, value_heap_bytes)
                            + raw.as_ref().map_or(0, |r| r.get().len())
                    }
                    Kind::Other { name, body } => name.capacity() + map_heap_bytes(body),
                })
                .sum::<usize>()
    }

    fn on_turn_end(&mut self, _turn: &Turn, _sink: &mut Sink<'_>) -> Option<String> {
        self.top.get("stopReason").and_then(Value::as_str).map(str::to_owned)
    }

    fn complete_at_end(&self, _turn: &Turn) -> bool {
        // `metadata` may be missing after `messageStop`: the answer is whole.
        self.stopped
    }

    fn end_of_body(&mut self, turn: &mut Turn, _sink: &mut Sink<'_>) -> bool {
        self.complete_at_end(turn)
    }

    fn is_restart(&self, ty: &str, _id: Option<&str>) -> bool {
        ty == "messageStart"
    }

    fn start_implicitly(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        self.start(turn, sink);
    }
}

impl Block {
    /// The block's JSON in the response (an input kept as text: `null`,
    /// written from the text by the message view).
    fn to_json(&self, part: &Part, value_max: usize) -> Value {
        // (Maps built in place: `json!` would serialize each value again.)
        let text = || Value::String(part.text.clone());
        match &self.kind {
            Kind::Text { citations } if citations.is_empty() => one("text", text()),
            Kind::Text { citations } => {
                let mut c = Map::new();
                c.insert("content".into(), Value::Array(vec![one("text", text())]));
                c.insert("citations".into(), Value::Array(citations.clone()));
                one("citationsContent", Value::Object(c))
            }
            Kind::Reasoning { signature, redacted, has_text } => {
                if !*has_text && signature.is_none() && !redacted.is_empty() {
                    let b64 = base64::engine::general_purpose::STANDARD.encode(redacted);
                    return one("reasoningContent", one("redactedContent", Value::String(b64)));
                }
                let mut r = Map::new();
                r.insert("text".into(), text());
                if let Some(sig) = signature {
                    r.insert("signature".into(), Value::String(sig.clone()));
                }
                one("reasoningContent", one("reasoningText", Value::Object(r)))
            }
            Kind::ToolUse { raw: Some(_), start, .. } => {
                let mut m = start.clone();
                m.insert("input".into(), Value::Null);
                one("toolUse", Value::Object(m))
            }
            Kind::ToolUse { start, input, .. } => {
                let mut m = start.clone();
                let input = input.clone().or_else(|| {
                    let args = part.args.as_deref().filter(|a| a.value_fits(value_max));
                    args.and_then(|a| a.partial_value(PartialStrings::Drop))
                });
                m.insert("input".into(), input.unwrap_or_else(|| Value::Object(Map::new())));
                one("toolUse", Value::Object(m))
            }
            Kind::Other { name, body } => one(name, Value::Object(body.clone())),
        }
    }

    /// [`to_json`](Self::to_json), the block's members and the part's text
    /// moved into the value instead of copied (not for an input kept as
    /// text).
    fn into_json(self, part: &mut Part, value_max: usize) -> Value {
        match self.kind {
            Kind::Text { citations } if citations.is_empty() => {
                one("text", Value::String(core::mem::take(&mut part.text)))
            }
            Kind::ToolUse { mut start, input, raw: None, .. } => {
                let input = input.or_else(|| {
                    let args = part.args.as_deref().filter(|a| a.value_fits(value_max));
                    args.and_then(|a| a.partial_value(PartialStrings::Drop))
                });
                start.insert("input".into(), input.unwrap_or_else(|| Value::Object(Map::new())));
                one("toolUse", Value::Object(start))
            }
            Kind::Other { name, body } => one(&name, Value::Object(body)),
            _ => self.to_json(part, value_max),
        }
    }
}

/// The `Converse` response: `output` (its `message`), then `stopReason`,
/// `usage` and `metrics`, then the other members of `top` in their order
/// (taken from `top`).
fn response_json(message: Value, top: &mut Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert("output".into(), one("message", message));
    for key in ["stopReason", "usage", "metrics"] {
        if let Some(v) = top.shift_remove(key) {
            out.insert(key.into(), v);
        }
    }
    for (k, v) in std::mem::take(top) {
        if !out.contains_key(&k) {
            out.insert(k, v);
        }
    }
    Value::Object(out)
}

/// The object `{key: value}`.
fn one(key: &str, value: Value) -> Value {
    let mut m = Map::new();
    m.insert(key.into(), value);
    Value::Object(m)
}

impl ConverseFold {
    /// The response as a value, `null` where an input kept as text goes.
    fn response(&self, turn: &Turn) -> Value {
        if turn.state == TurnState::Idle && self.top.is_empty() && self.blocks.is_empty() {
            return Value::Null;
        }
        let content: Vec<Value> =
            self.blocks.values().map(|b| b.to_json(&turn.parts[b.part as usize], self.value_max)).collect();
        let mut message = Map::new();
        message.insert("role".into(), self.role.clone().unwrap_or_else(|| Value::from("assistant")));
        message.insert("content".into(), Value::Array(content));
        response_json(Value::Object(message), &mut self.top.clone())
    }

    /// Starts the turn (`message_start`) if it was idle; whether it was.
    fn start(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) -> bool {
        if !turn.begin() {
            return false;
        }
        // Built per turn, not kept in a process-wide static: the library
        // holds no heap of its own past its handles (valgrind's leak check
        // in the C suite counts such a static as possibly lost).
        let mut message = Map::new();
        message.insert("role".into(), Value::from("assistant"));
        message.insert("content".into(), Value::Array(Vec::new()));
        let snapshot = one("output", one("message", Value::Object(message)));
        sink.event(&StreamEvent::MessageStart { provider: "bedrock_converse", message: &snapshot });
        true
    }

    /// Starts the turn for a content event; before `messageStart`, with an
    /// `event_before_start` warning.
    fn start_content(&mut self, turn: &mut Turn, event: &str, sink: &mut Sink<'_>) {
        if turn.state == TurnState::Idle {
            warn(sink, WarningCode::EventBeforeStart, &format!("{event} before messageStart; started implicitly"));
        }
        self.start(turn, sink);
    }

    /// Merges `messageStop` / `metadata` members into the top level (not
    /// `p`: the random-length padding Bedrock adds to every event against
    /// length side channels, which is no member of the response).
    fn merge(&mut self, value: Map<String, Value>) {
        for (k, v) in value {
            if !v.is_null() && k != PADDING {
                self.top.insert(k, v);
            }
        }
    }

    /// `messageStart` with its `role` member.
    fn on_message_start(&mut self, turn: &mut Turn, role: Option<&Value>, sink: &mut Sink<'_>) {
        if self.started {
            warn(sink, WarningCode::DuplicateStart, "second messageStart; ignored");
        } else {
            // (After an implicit start, the turn is already on.)
            self.start(turn, sink);
            self.started = true;
            if let Some(role) = role {
                self.role = Some(role.clone());
            }
        }
    }

    /// `messageStop` with its members.
    fn on_message_stop(&mut self, turn: &mut Turn, value: Map<String, Value>, sink: &mut Sink<'_>) {
        if turn.state == TurnState::Idle {
            warn(sink, WarningCode::TerminalBeforeStart, "messageStop before any content; ignored");
            return;
        }
        for (index, b) in self.blocks.iter() {
            if turn.parts[b.part as usize].is_open() {
                let msg = format!("block {index} still open at messageStop; committed as incomplete");
                warn(sink, WarningCode::PartNotEnded, &msg);
            }
        }
        self.stopped = true;
        self.merge(value);
        if let Some(reason) = self.top.get("stopReason").and_then(Value::as_str) {
            sink.event(&StreamEvent::StopReason { choice: 0, reason });
        }
    }

    /// `contentBlockStop` for block `index` (the turn started).
    fn on_block_stop(&mut self, turn: &mut Turn, index: u64, sink: &mut Sink<'_>) {
        match self.blocks.get(&index) {
            None => warn(
                sink,
                WarningCode::UnknownPartIndex,
                &format!("contentBlockStop for block {index}, never started; ignored"),
            ),
            Some(b) if !turn.parts[b.part as usize].is_open() => warn(
                sink,
                WarningCode::PartAlreadyEnded,
                &format!("contentBlockStop for block {index}, already stopped; ignored"),
            ),
            Some(b) => {
                let part = b.part;
                turn.commit(self, part, false, sink);
                if let Some(Block { kind: Kind::ToolUse { as_text: as_text @ true, raw, .. }, .. }) =
                    self.blocks.get_mut(&index)
                {
                    // Valid JSON (the parser's `finish` said so): the check cannot fail.
                    *as_text = false;
                    if let Some(args) = turn.parts[part as usize].args.as_deref_mut() {
                        *raw = RawValue::from_string(args.take_raw()).ok();
                    }
                }
                if let Some(args) = turn.parts[part as usize].args.as_mut() {
                    args.release();
                }
            }
        }
    }

    /// A hot event read by [`quick`], handled as the `Value` path handles
    /// the same document.
    fn on_quick(&mut self, turn: &mut Turn, q: Quick<'_>, raw: &str, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        match q {
            Quick::Delta { index, kind, value } => {
                self.start_content(turn, "contentBlockDelta", sink);
                let dty = kind.name();
                let Some(part) = self.delta_part(turn, index, dty, raw, sink)? else { return Ok(Flow::Continue) };
                let Some(block) = self.blocks.get_mut(&index) else { return Ok(Flow::Continue) };
                match (kind, &mut block.kind) {
                    (QuickDelta::Text, Kind::Text { .. }) => turn.append_text(part, &value, sink)?,
                    (QuickDelta::ToolInput, Kind::ToolUse { .. }) => turn.push_args(part, &value, sink)?,
                    (QuickDelta::ReasoningText, Kind::Reasoning { has_text, .. }) => {
                        *has_text = true;
                        turn.append_text(part, &value, sink)?;
                    }
                    _ => mismatch(sink, dty, index, raw),
                }
            }
            Quick::Stop { index } => {
                self.start_content(turn, "contentBlockStop", sink);
                self.on_block_stop(turn, index, sink);
            }
            Quick::Start { role } => {
                let role = role.map(|r| Value::String(r.to_owned()));
                self.on_message_start(turn, role.as_ref(), sink);
            }
            Quick::Metadata { members } => {
                self.start(turn, sink);
                let mut usage = false;
                for (k, v) in members {
                    usage |= k == "usage";
                    self.top.insert(k.to_owned(), v);
                }
                if let Some(usage) = self.top.get("usage").filter(|u| usage && u.is_object()) {
                    sink.event(&StreamEvent::Usage { usage });
                }
                if self.stopped {
                    return Ok(Flow::End);
                }
            }
            Quick::StopReason { reason } => {
                let mut value = Map::new();
                if let Some(reason) = reason {
                    value.insert("stopReason".into(), Value::String(reason.to_owned()));
                }
                self.on_message_stop(turn, value, sink);
            }
        }
        Ok(Flow::Continue)
    }

    /// The open part a delta of type `dty` for block `index` goes to: a
    /// text or reasoning block opens on its first delta; `None` (a warning,
    /// or an `unknown` event for a delta type this fold does not know) when
    /// there is none.
    fn delta_part(
        &mut self,
        turn: &mut Turn,
        index: u64,
        dty: &str,
        raw: &str,
        sink: &mut Sink<'_>,
    ) -> Result<Option<u32>, StreamError> {
        if !self.blocks.contains_key(&index) {
            match dty {
                "text" | "citation" => {
                    self.open(turn, index, Kind::Text { citations: Vec::new() }, PartKind::Text, "text", None, sink)?;
                }
                "reasoningContent" => {
                    let kind = Kind::Reasoning { signature: None, redacted: Vec::new(), has_text: false };
                    self.open(turn, index, kind, PartKind::Reasoning, dty, None, sink)?;
                }
                "toolUse" | "toolResult" | "image" => {
                    warn(
                        sink,
                        WarningCode::UnknownPartIndex,
                        &format!("{dty} delta for block {index}, never started; ignored"),
                    );
                    return Ok(None);
                }
                _ => {
                    sink.event(&StreamEvent::Unknown { scope: "delta", provider_type: dty, data: raw });
                    return Ok(None);
                }
            }
        }
        let Some(block) = self.blocks.get(&index) else { return Ok(None) };
        if !turn.parts[block.part as usize].is_open() {
            warn(
                sink,
                WarningCode::PartAlreadyEnded,
                &format!("{dty} delta for block {index}, already stopped; ignored"),
            );
            return Ok(None);
        }
        Ok(Some(block.part))
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        turn: &mut Turn,
        index: u64,
        kind: Kind,
        part_kind: PartKind,
        provider_type: &str,
        call: Option<CallInit<'_>>,
        sink: &mut Sink<'_>,
    ) -> Result<u32, StreamError> {
        let expected = self.blocks.last_key().map_or(0, |last| last + 1);
        if index != expected {
            warn(
                sink,
                WarningCode::UnexpectedPartIndex,
                &format!("block {index} started, expected {expected}; folded by index"),
            );
        }
        let at = self.order.len() as u32;
        let part = match call {
            Some(call) => turn.open_call((at, 0), 0, index, provider_type, call, sink)?,
            None => turn.open_part(part_kind, (at, 0), 0, index, provider_type, sink)?,
        };
        self.order.push(index);
        self.blocks.insert(index, Block { part, kind });
        Ok(part)
    }

    fn on_block_start(
        &mut self,
        turn: &mut Turn,
        value: &Map<String, Value>,
        raw: &str,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let Some((index, name, body)) = tagged(value, "contentBlockStart", "start", raw, sink) else { return Ok(()) };
        if self.blocks.contains_key(&index) {
            warn(
                sink,
                WarningCode::DuplicatePartIndex,
                &format!("contentBlockStart for block {index}, already started; ignored"),
            );
            return Ok(());
        }
        let Some(body) = body.as_object() else {
            invalid(sink, "contentBlockStart", "start member is not an object", raw);
            return Ok(());
        };
        if name == "toolUse" {
            let text = |k: &str| body.get(k).and_then(Value::as_str);
            let call = CallInit {
                id: text("toolUseId"),
                name: text("name"),
                format: ToolInputFormat::Json,
                provider_executed: false,
            };
            let kind = Kind::ToolUse { start: body.clone(), input: None, as_text: false, raw: None };
            let part = self.open(turn, index, kind, PartKind::ToolCall, name, Some(call), sink)?;
            if let Some(id) = body.get("toolUseId") {
                turn.call_metadata(part, "id", id, sink);
            }
            if let Some(n) = body.get("name") {
                turn.call_metadata(part, "name", n, sink);
            }
        } else {
            let kind = Kind::Other { name: name.to_owned(), body: body.clone() };
            self.open(turn, index, kind, PartKind::Other, name, None, sink)?;
        }
        Ok(())
    }

    fn on_delta(
        &mut self,
        turn: &mut Turn,
        value: &Map<String, Value>,
        raw: &str,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let Some((index, dty, body)) = tagged(value, "contentBlockDelta", "delta", raw, sink) else { return Ok(()) };
        let Some(part) = self.delta_part(turn, index, dty, raw, sink)? else { return Ok(()) };
        let Some(block) = self.blocks.get_mut(&index) else { return Ok(()) };
        match (dty, &mut block.kind, body) {
            ("text", Kind::Text { .. }, Value::String(s)) => append_str(turn, part, s, sink)?,
            ("citation", Kind::Text { citations }, Value::Object(_)) => {
                citations.push(body.clone());
                sink.event(&StreamEvent::PartMetadata { part, key: "citation", value: body });
            }
            ("toolUse", Kind::ToolUse { .. }, Value::Object(o)) => match o.get("input") {
                Some(Value::String(s)) => turn.push_args(part, s.as_str(), sink)?,
                _ => invalid(sink, "contentBlockDelta", "toolUse delta without a string input", raw),
            },
            ("reasoningContent", Kind::Reasoning { signature, redacted, has_text }, Value::Object(o)) => {
                for (k, v) in o {
                    match (k.as_str(), v) {
                        ("text", Value::String(s)) => {
                            *has_text = true;
                            append_str(turn, part, s, sink)?;
                        }
                        ("signature", Value::String(s)) => {
                            signature.get_or_insert_with(String::new).push_str(s);
                            sink.event(&StreamEvent::PartMetadata { part, key: "signature", value: v });
                        }
                        ("redactedContent", Value::String(s)) => {
                            match base64::engine::general_purpose::STANDARD.decode(s) {
                                Ok(bytes) => {
                                    turn.check_text(redacted.len() + bytes.len())?;
                                    redacted.extend_from_slice(&bytes);
                                    sink.event(&StreamEvent::PartMetadata { part, key: "redacted_content", value: v });
                                }
                                Err(_) => invalid(sink, "contentBlockDelta", "redactedContent is not base64", raw),
                            }
                        }
                        _ => invalid(sink, "contentBlockDelta", &format!("reasoningContent.{k} unexpected"), raw),
                    }
                }
            }
            ("toolResult", Kind::Other { name, body: b }, Value::Array(items)) if name == "toolResult" => {
                let content = b.entry("content").or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(c) = content {
                    c.extend(items.iter().cloned());
                }
            }
            ("image", Kind::Other { name, body: b }, Value::Object(o)) if name == "image" => {
                b.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            ("text" | "citation" | "toolUse" | "reasoningContent" | "toolResult" | "image", _, _) => {
                mismatch(sink, dty, index, raw)
            }
            _ => sink.event(&StreamEvent::Unknown { scope: "delta", provider_type: dty, data: raw }),
        }
        Ok(())
    }
}

/// The kind of a delta [`quick`] reads: the one string it carries.
#[derive(Debug, Clone, Copy)]
enum QuickDelta {
    /// `{"text": S}`.
    Text,
    /// `{"toolUse": {"input": S}}`.
    ToolInput,
    /// `{"reasoningContent": {"text": S}}`.
    ReasoningText,
}

impl QuickDelta {
    /// The delta's member name (its `provider_type`).
    fn name(self) -> &'static str {
        match self {
            QuickDelta::Text => "text",
            QuickDelta::ToolInput => "toolUse",
            QuickDelta::ReasoningText => "reasoningContent",
        }
    }
}

/// A hot event read straight from its payload by [`quick`].
#[derive(Debug)]
enum Quick<'a> {
    /// `contentBlockDelta`: the block index and the delta's string.
    Delta { index: u64, kind: QuickDelta, value: JsonStr<'a> },
    /// `contentBlockStop`: the block index.
    Stop { index: u64 },
    /// `messageStart`: its `role`, a plain string (absent: `None`).
    Start { role: Option<&'a str> },
    /// `messageStop`: its `stopReason`, a plain string (absent: `None`).
    StopReason { reason: Option<&'a str> },
    /// `metadata`: its members but `p` and those `null`, each parsed alone.
    Metadata { members: Vec<(&'a str, Value)> },
}

/// The hot events (`contentBlockDelta` of a text, reasoning text or tool
/// input string, `contentBlockStop`, `messageStart`, `messageStop`; and
/// `metadata`, whose members are each parsed by serde_json alone, without
/// the object and padding around them) read
/// from the exact bytes Bedrock sends: a compact object whose members are
/// `contentBlockIndex` (an integer as serde_json reads a `u64`), the one
/// member the event needs (`delta`, `role`, `stopReason`), and the padding
/// `p` (or any other member the `Value` path ignores) as a string, in any
/// order, each named once. The delta's string is read strictly (a lone
/// surrogate escape declines: the `Value` path warns it). Anything else —
/// whitespace, a member of another type or shape, an escaped key, a
/// `null` — is `None`, for the `Value` path.
fn quick<'a>(ty: &str, data: &'a str) -> Option<Quick<'a>> {
    const INDEX: u32 = 1;
    const MEMBER: u32 = 2;
    let mut c = Cursor::new(data);
    let mut seen = Seen::default();
    let mut index = None;
    let q = match ty {
        "contentBlockDelta" => {
            let mut delta = None;
            c.object(|key, c| match key {
                "contentBlockIndex" => {
                    seen.first(INDEX)?;
                    index = Some(c.uint()?);
                    Some(())
                }
                "delta" => {
                    seen.first(MEMBER)?;
                    delta = Some(quick_delta(c)?);
                    Some(())
                }
                _ => c.strict_string().map(drop),
            })?;
            let (kind, value) = delta?;
            Quick::Delta { index: index?, kind, value }
        }
        "contentBlockStop" => {
            c.object(|key, c| match key {
                "contentBlockIndex" => {
                    seen.first(INDEX)?;
                    index = Some(c.uint()?);
                    Some(())
                }
                _ => c.strict_string().map(drop),
            })?;
            Quick::Stop { index: index? }
        }
        "messageStart" | "messageStop" => {
            let name = if ty == "messageStart" { "role" } else { "stopReason" };
            let mut member = None;
            c.object(|key, c| {
                if key == name {
                    seen.first(MEMBER)?;
                    member = Some(c.plain()?);
                    return Some(());
                }
                // (`messageStop` keeps every other member but `p`.)
                if key != PADDING && ty == "messageStop" {
                    return None;
                }
                c.strict_string().map(drop)
            })?;
            if ty == "messageStart" {
                Quick::Start { role: member }
            } else {
                Quick::StopReason { reason: member }
            }
        }
        "metadata" => {
            let mut members: Vec<(&str, Value)> = Vec::new();
            let mut keys: Vec<&str> = Vec::new();
            c.object(|key, c| {
                // (A member named twice: serde_json's map keeps the last.)
                if keys.contains(&key) {
                    return None;
                }
                keys.push(key);
                if key == PADDING {
                    return c.strict_string().map(drop);
                }
                let raw = c.skip()?;
                if raw != "null" {
                    // The same parser on the same text: the same value (a lone
                    // surrogate, which `skip` steps over, fails here).
                    members.push((key, serde_json::from_str(raw).ok()?));
                }
                Some(())
            })?;
            Quick::Metadata { members }
        }
        _ => return None,
    };
    c.end()?;
    Some(q)
}

/// A `delta` object of one member holding one string: `{"text": S}`,
/// `{"toolUse": {"input": S}}` or `{"reasoningContent": {"text": S}}`.
fn quick_delta<'a>(c: &mut Cursor<'a>) -> Option<(QuickDelta, JsonStr<'a>)> {
    c.eat(b'{')?;
    let kind = match c.key()? {
        "text" => QuickDelta::Text,
        "toolUse" => {
            c.eat_str(r#"{"input":"#)?;
            QuickDelta::ToolInput
        }
        "reasoningContent" => {
            c.eat_str(r#"{"text":"#)?;
            QuickDelta::ReasoningText
        }
        _ => return None,
    };
    let value = c.strict_string()?;
    if !matches!(kind, QuickDelta::Text) {
        c.eat(b'}')?;
    }
    c.eat(b'}')?;
    Some((kind, value))
}

/// The `delta_type_mismatch` warning, quoting the payload.
fn mismatch(sink: &mut Sink<'_>, dty: &str, index: u64, raw: &str) {
    warn(
        sink,
        WarningCode::DeltaTypeMismatch,
        &format!("{dty} delta does not fit block {index} (or has the wrong shape); ignored: {}", quote(raw)),
    );
}

/// Most bytes of a payload quoted in a warning.
const QUOTE_MAX: usize = 512;

/// The payload, cut to [`QUOTE_MAX`] bytes on a character boundary.
fn quote(raw: &str) -> &str {
    if raw.len() <= QUOTE_MAX {
        return raw;
    }
    let mut end = QUOTE_MAX;
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    &raw[..end]
}

/// The `invalid_event` warning, quoting the payload.
/// A block event's `contentBlockIndex` and the one member of its `member`
/// object (`start`, `delta`): (index, member name, member value); `None`
/// (an `invalid_event` warning) when the shape is not that.
fn tagged<'v>(
    value: &'v Map<String, Value>,
    event: &str,
    member: &str,
    raw: &str,
    sink: &mut Sink<'_>,
) -> Option<(u64, &'v str, &'v Value)> {
    let index = value.get("contentBlockIndex").and_then(Value::as_u64);
    let object = value.get(member).and_then(Value::as_object);
    let (Some(index), Some(object)) = (index, object) else {
        invalid(sink, event, &format!("no contentBlockIndex or {member} object"), raw);
        return None;
    };
    let Some((name, body)) = object.iter().next() else {
        invalid(sink, event, &format!("empty {member}"), raw);
        return None;
    };
    Some((index, name.as_str(), body))
}

fn invalid(sink: &mut Sink<'_>, event: &str, why: &str, raw: &str) {
    warn(sink, WarningCode::InvalidEvent, &format!("{event}: {why}; ignored: {}", quote(raw)));
}

/// The provider error of an exception message (as the driver passes it:
/// `{"type": "error", "error": {"type", "message"}}`).
fn provider_error(v: &Map<String, Value>, output_emitted: bool) -> ProviderError {
    let e = v.get("error");
    let s = |k: &str| e.and_then(|e| e.get(k)).and_then(Value::as_str).unwrap_or("").to_owned();
    ProviderError { error_type: s("type"), message: s("message"), request_id: None, output_emitted }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_cuts_on_a_char_boundary() {
        let s = "é".repeat(QUOTE_MAX);
        let q = quote(&s);
        assert!(q.len() <= QUOTE_MAX && q.len() >= QUOTE_MAX - 1);
        assert!(s.starts_with(q));
        assert_eq!(quote("abc"), "abc");
    }

    /// Events on the edges of what the fast path takes (each body is a
    /// prefix of this list, so that every event meets the state the ones
    /// before it left).
    const EDGES: [(&str, &str); 36] = [
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"early"},"p":"ab"}"#),
        ("messageStart", r#"{"p":"abc","role":"assistant"}"#),
        ("messageStart", r#"{"role":"user","p":"x"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"a\n\"b\" \u00e9 \/"},"p":"abcd"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":""},"p":""}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"lone \ud800"},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"pad \ud800"},"p":"\udc00"}"#),
        ("contentBlockDelta", r#"{ "contentBlockIndex":0,"delta":{"text":"ws"},"p":"a"}"#),
        ("contentBlockDelta", r#"{"p":"a","delta":{"text":"order"},"contentBlockIndex":0}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"x"},"delta":{"text":"twice"},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"contentBlockIndex":1,"delta":{"text":"i"}}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"t","text":"u"},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":5},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":null},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0.0,"delta":{"text":"f"},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":-1,"delta":{"text":"n"},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":99999999999999999999,"delta":{"text":"big"}}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"u"},"p":"a","extra":{"k":[1]}}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{}"}},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":1,"delta":{"reasoningContent":{"text":"think"}},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":1,"delta":{"text":"wrong kind"},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":1,"delta":{"reasoningContent":{"text":"t","signature":"s"}}}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":1,"delta":{"reasoningContent":{"signature":"c2ln"}},"p":"a"}"#),
        ("contentBlockStop", r#"{"contentBlockIndex":1,"p":"abc"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":1,"delta":{"reasoningContent":{"text":"late"}},"p":"a"}"#),
        ("contentBlockStart", r#"{"contentBlockIndex":2,"p":"a","start":{"toolUse":{"name":"f","toolUseId":"t1"}}}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"a\":"}},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"1}","x":1}},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":" 1}"}},"p":"a"}"#),
        ("contentBlockDelta", r#"{"contentBlockIndex":3,"delta":{"toolUse":{"input":"{}"}},"p":"a"}"#),
        ("contentBlockStop", r#"{"contentBlockIndex":2,"p":"a","contentBlockIndex":2}"#),
        ("contentBlockStop", r#"{"contentBlockIndex":0,"p":5}"#),
        ("contentBlockStop", r#"{"contentBlockIndex":7,"p":"a"}"#),
        ("contentBlockStop", r#"{"contentBlockIndex":2}"#),
        ("messageStop", r#"{"p":"abc","stopReason":"end_turn"}"#),
        (
            "metadata",
            r#"{"metrics":{"latencyMs":1},"p":"a","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}"#,
        ),
    ];

    /// Stop events on the edges, each after a short valid turn.
    const STOPS: [&str; 7] = [
        r#"{"p":"abc","stopReason":"end_turn"}"#,
        r#"{"stopReason":"tool_use"}"#,
        r#"{"stopReason":null,"p":"a"}"#,
        r#"{"stopReason":"a\nb","p":"a"}"#,
        r#"{"stopReason":"x","additionalModelResponseFields":{"a":1},"p":"a"}"#,
        r#"{"stopReason":"x","stopReason":"y"}"#,
        r#"{"p":"a"}"#,
    ];

    /// Metadata events on the edges, each after a short valid turn.
    const METADATA: [&str; 12] = [
        r#"{"metrics":{"latencyMs":1},"p":"a","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}"#,
        r#"{"usage":{"inputTokens":1},"metrics":null,"p":"abc"}"#,
        r#"{"usage":null,"metrics":{"latencyMs":1.5e300,"x":-0.1,"big":123456789012345678901234567890}}"#,
        r#"{"usage":5,"trace":{"guardrail":{"a":[1,{"b":"c\nd \u00e9"}]}},"p":"a"}"#,
        r#"{"usage":{"inputTokens":1},"usage":{"inputTokens":2}}"#,
        r#"{"usage":{"inputTokens":1},"p":"a","p":"b"}"#,
        r#"{"usage":{"inputTokens":1},"p":7}"#,
        r#"{"usage":{"inputTokens":1},"trace":"\ud800","p":"a"}"#,
        r#"{"usage":{"inputTokens":1}, "p":"a"}"#,
        r#"{"usage":{"inputTokens":1},"serviceTier":{"type":"default"},"performanceConfig":{"latency":"standard"}}"#,
        r#"{"p":"a"}"#,
        r#"{}"#,
    ];

    /// An event-stream body of `(event type, payload)` messages.
    fn body(events: &[(&str, &str)]) -> Vec<u8> {
        let header = |v: &str| v.as_bytes().to_vec();
        events
            .iter()
            .flat_map(|(ty, payload)| {
                let headers = [(":event-type", 7, header(ty)), (":message-type", 7, header("event"))];
                crate::eventstream::tests::encode(&headers, payload.as_bytes())
            })
            .collect()
    }

    /// The fast path folds exactly as the `Value` path: every recorded and
    /// fixture ConverseStream body, and bodies of edge events, give the
    /// same events, message and ending with and without it; and it is
    /// taken.
    #[test]
    fn fast_path_folds_as_the_value_path() {
        use crate::providers::raw::tests::{assert_fast_folds_as_slow, bodies_with};
        let mut cases: Vec<(Provider, String, Vec<u8>)> =
            bodies_with(&["tests/recordings/bedrock_converse", "tests/fixtures/bedrock_converse"], &["bin"])
                .into_iter()
                .map(|(name, body)| (Provider::BedrockConverse, name, body))
                .collect();
        assert!(cases.len() > 35, "{}", cases.len());
        for n in 1..=EDGES.len() {
            cases.push((Provider::BedrockConverse, format!("edges [..{n}]"), body(&EDGES[..n])));
        }
        for stop in STOPS {
            let turn = [
                ("messageStart", r#"{"p":"a","role":"assistant"}"#),
                ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"hi"},"p":"a"}"#),
                ("contentBlockStop", r#"{"contentBlockIndex":0,"p":"a"}"#),
                ("messageStop", stop),
                ("metadata", r#"{"metrics":{"latencyMs":1},"p":"a","usage":{"inputTokens":1}}"#),
            ];
            cases.push((Provider::BedrockConverse, format!("stop {stop}"), body(&turn)));
            // Before any content, and twice.
            cases.push((
                Provider::BedrockConverse,
                format!("stop first {stop}"),
                body(&[("messageStop", stop), turn[0], turn[3], turn[3]]),
            ));
        }
        for meta in METADATA {
            let turn = [
                ("messageStart", r#"{"p":"a","role":"assistant"}"#),
                ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"hi"},"p":"a"}"#),
                ("metadata", r#"{"usage":{"inputTokens":9},"p":"a"}"#),
                ("messageStop", r#"{"p":"abc","stopReason":"end_turn"}"#),
                ("metadata", meta),
            ];
            cases.push((Provider::BedrockConverse, format!("metadata {meta}"), body(&turn)));
            cases.push((
                Provider::BedrockConverse,
                format!("metadata first {meta}"),
                body(&[("metadata", meta), turn[0], turn[3], turn[4]]),
            ));
        }
        let taken = assert_fast_folds_as_slow(&cases);
        assert!(taken > 1000, "fast path taken {taken} times");
    }

    /// What the fast path reads, and what it leaves to the `Value` path.
    #[test]
    fn quick_reads_the_hot_events_only() {
        let delta = |d: &str| quick("contentBlockDelta", d).map(|q| format!("{q:?}"));
        assert!(delta(r#"{"contentBlockIndex":3,"delta":{"text":"a"},"p":"x"}"#).unwrap().contains("index: 3"));
        assert!(delta(r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{"}},"p":"x"}"#).is_some());
        for declined in [
            r#"{"contentBlockIndex":0,"delta":{"text":"a"},"p":"x"} "#,
            r#"{"contentBlockIndex":0,"delta":{"text":"a"},"p":null}"#,
            r#"{"contentBlockIndex":0,"delta":{"text":"\ud800"}}"#,
            r#"{"contentBlockIndex":0,"delta":{"citation":{"title":"t"}}}"#,
            r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{","x":1}}}"#,
            r#"{"delta":{"text":"a"}}"#,
            r#"{"contentBlockIndex":0}"#,
        ] {
            assert_eq!(delta(declined), None, "{declined}");
        }
        assert!(quick("contentBlockStop", r#"{"contentBlockIndex":0,"p":"x"}"#).is_some());
        assert!(quick("contentBlockStop", r#"{"contentBlockIndex":0,"p":"x","delta":{}}"#).is_none());
        assert!(quick("messageStop", r#"{"p":"x","stopReason":"end_turn"}"#).is_some());
        assert!(quick("messageStop", r#"{"p":"x","stopReason":"end_turn","trace":"t"}"#).is_none());
        assert!(quick("metadata", r#"{"p":"x","usage":{"inputTokens":1}}"#).is_some());
        assert!(quick("metadata", r#"{"usage":{},"usage":{}}"#).is_none());
        assert!(quick("contentBlockStart", r#"{"contentBlockIndex":0,"start":{}}"#).is_none());
    }

    #[test]
    fn detects_converse_payloads_only() {
        let d = |s: &str| (DIALECT.detects)(s, serde_json::from_str::<Value>(s).ok().as_ref());
        assert!(d(r#"{"role":"assistant"}"#));
        assert!(d(r#"{"contentBlockIndex":0,"delta":{"text":"a"}}"#));
        assert!(d(r#"{"stopReason":"end_turn"}"#));
        assert!(!d(r#"{"role":"assistant","content":"x"}"#));
        assert!(!d(r#"{"type":"message_start"}"#));
    }
}
