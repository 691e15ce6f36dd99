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
//! | `compaction` | `other` | `compaction_delta` (`content` concatenated, a null fragment skipped; `encrypted_content` opaque: the latest non-null value) |
//! | anything else (`web_search_tool_result`, `fallback`, …) | `other` | none; passed whole |
//!
//! A delta of an unknown type is carried through as an `unknown` event and
//! not folded. A known delta on a block it does not fit is a
//! `delta_type_mismatch` warning.
//!
//! The reference is the official Python SDK's beta stream helper
//! (`anthropic/lib/streaming/_beta_messages.py`, `accumulate_event`,
//! anthropic 2.12.0), matched field by field except where listed under
//! "Deliberate differences from the SDK".
//!
//! **Content in `message_start`**: blocks the API sends already finished in
//! `message_start.message.content` (with programmatic tool calling, a
//! `tool_use` block with no `content_block_*` events) are kept, at indices
//! 0, 1, … of the message's content list (the SDK appends streamed blocks
//! to that list and indexes the list: index N is its position N). Each is
//! announced right after `message_start` (and its `usage`): `part_start`,
//! its metadata (a tool call's `id`, `name`), its text as a `text_delta`,
//! and `part_end` with outcome `complete` — a pre-filled `tool_use` is a
//! ready tool call. Streamed blocks then start at the next index.
//!
//! **`fallback` block**: at its `content_block_start` the message's `model`
//! becomes the block's `to.model` (the model that served the answer, as in
//! the non-streaming message).
//!
//! **Tool input**: the concatenated `input_json_delta` fragments must form one
//! complete, valid JSON value at `content_block_stop` for the call to be
//! ready (outcome `complete`, `input` exactly that value). No fragment at all
//! keeps the `input` given by `content_block_start`. Otherwise — the input
//! cut off (`max_tokens`, or the turn ended first: outcome `incomplete`) or
//! invalid (outcome `invalid_arguments`, raw text in `part_end`) — the call
//! is never ready, and the folded `input` is what the SDK folds: the partial
//! value of the arguments, jiter's `from_json(…, partial_mode=True)`: the
//! values that completed (a number that may end there counts: `{"a": 1,
//! "b": [1, 2` → `{"a": 1, "b": [1, 2]}`), an unfinished trailing string
//! dropped with its key (`{"a": "xy` → `{}`), an unfinished literal or a
//! key without a value dropped; for invalid JSON, the value of the text
//! before the error (the start block's `input` when nothing parsed). With
//! [`StreamConfig::tool_input_trailing_strings`](super::StreamConfig) the
//! unfinished string is kept with its text so far (`{"a": "xy"}`,
//! jiter's `partial_mode="trailing-strings"`, which the SDK uses when the
//! request carried `anthropic-beta: fine-grained-tool-streaming-2025-05-14`).
//! A tool block still streaming shows the same partial value.
//!
//! **A large input stays text.** An input whose value would cost more than
//! `max_memory_bytes / 16` as a tree (estimated from its text in one pass:
//! 8 MiB by default, e.g. 16 MB of `[[[[]]]],…` would be a 1.1 GB tree) is
//! never built while the stream holds it: the stream keeps the validated
//! JSON text (its size, whatever the shape). Its `part_end` content has no
//! `input` member (the arguments are the event's `tool_call.arguments`);
//! the message's JSON ([`super::Stream::message_view`]: the C ABI's
//! `message_json`, Go's `Message`, the CLI, Python's `message_json`) writes
//! the text where the `input` goes, as the provider sent it (the same value;
//! a lone surrogate escape stays an escape); [`super::Stream::message`] and
//! Python's `Stream.message` build the value when asked. A partial input
//! that large (cut off, invalid) is the start block's `input`. The value
//! comes from the incremental [`crate::json::PartialJson`]
//! ([`value_at_end`](crate::json::PartialJson::value_at_end)), never from
//! re-parsing; its path events (`tool_args_path`) are emitted as each
//! fragment arrives.
//!
//! **Message fields** (`message_delta`): `message_start.message` gives the
//! skeleton. `delta.stop_reason`, `delta.stop_sequence` and
//! `delta.stop_details` always replace (absent = `null`, as the SDK
//! assigns them). Every other member of `delta` (`container`, …) and every
//! other top-level member of the event but `type`, `delta` and `usage`
//! (`context_management`, `input_transformations`, …) replaces the
//! message's field of that name when it is not `null`; `null` or absent
//! keeps the earlier value.
//!
//! **Usage rule**: each member of `message_delta.usage` that is not `null`
//! (`input_tokens`, `cache_creation_input_tokens`,
//! `cache_read_input_tokens`, `output_tokens`, `server_tool_use`,
//! `output_tokens_details`, `iterations`, `fallback_credit`, …) replaces the
//! member of the same name in the message's usage (the counts are
//! cumulative totals: replaced, never added); a member that is `null` or
//! absent keeps its earlier (`message_start`) value; with no usage in
//! `message_start`, the delta's members are the usage.
//!
//! # Deliberate differences from the SDK
//!
//! Where the SDK raises or loses data, ssefold folds on (a typed error or a
//! warning, everything folded so far kept):
//!
//! * Block indices out of order (a start at an index other than the next):
//!   folded by index, warning `unexpected_part_index`; the SDK appends in
//!   arrival order and applies deltas by list position (PR-era SDKs raise
//!   `RuntimeError("Unexpected content block index")`). Deltas or stops for
//!   unknown indices are warnings; the SDK raises `IndexError`.
//! * Invalid tool JSON: outcome `invalid_arguments` and the fold goes on;
//!   the SDK raises `ValueError` at the delta that breaks the JSON (its
//!   snapshot keeps the input parsed up to the previous delta; ours is the
//!   input parsed up to the error byte).
//! * `message_start` without `usage`: the delta's usage becomes the usage;
//!   the SDK raises `AttributeError`. A `null` or absent
//!   `usage.output_tokens` keeps the earlier value (the SDK assigns it
//!   unconditionally: `null`, or an error when absent).
//! * Unknown members of `message_delta`, its `delta` and its `usage` are
//!   folded by the non-null-replaces rule (forward compatibility: new fields
//!   reach the message); the SDK drops the ones it does not know.
//! * `compaction_delta.content` is concatenated across deltas (a null
//!   fragment skipped) and a null `encrypted_content` keeps the earlier
//!   value; anthropic 2.12.0 assigns both from each delta (the API sends one
//!   delta per block, where the two agree; the SDK's own
//!   `compaction_multi_delta` test fixture expects the concatenation).
//! * A delta of a type that does not fit its block is a
//!   `delta_type_mismatch` warning (the SDK ignores it silently), and a
//!   delta or stop after the block's stop is `part_already_ended` (the SDK
//!   applies it; a pre-filled `message_start` block counts as stopped).
//! * `-0` in a partial tool input is the float `-0.0` (serde_json), the
//!   integer `0` in jiter.
//!
//! The terminal event is `message_stop`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::args::{ArgsEnd, ToolArgs};
use super::events::WarningCode;
use super::events::{PartKind, ProviderError, StreamEvent, ToolInputFormat};
use super::fastpath::{Cursor, Seen};
use super::raw::{quick_allowed, quick_taken};
use super::turn::{CallInit, Dialect, DialectInfo, Flow, Outcome, Part, Turn, TurnState};
use super::view::{JsonStr, Str, UncheckedStr};
use super::{
    check_lone, json_error, parse_value, warn, warn_lone, without_lone_surrogates, MessageView, PathStep, Provider,
    Sink, StreamError,
};
use crate::json::scan::{map_heap_bytes, value_heap_bytes};
use crate::json::PartialStrings;
use crate::sse::Event;

/// The Anthropic side of one content block (its text, arguments and
/// outcome live in the turn's [`Part`]).
#[derive(Debug)]
struct Block {
    index: u64,
    part: u32,
    base: Map<String, Value>,
    signature: Option<String>,
    citations: Vec<Value>,
    /// `compaction_delta` accumulations.
    compaction: Option<(Option<String>, Option<String>)>,
    /// A committed tool block's final JSON (its input moved in, not copied;
    /// without `input` when the input is kept as text: `raw_input`).
    committed: Option<Value>,
    /// The input is kept as its JSON text (too large a tree): taken from the
    /// arguments when the block is committed.
    input_as_text: bool,
    /// That text, validated.
    raw_input: Option<Box<RawValue>>,
    /// The member holding the block's text: `text` for a `text` block,
    /// `thinking` for a `thinking` block (the block's `type` never changes,
    /// so each delta needs no lookup in `base`).
    text_field: Option<&'static str>,
}

impl Block {
    /// Heap bytes held besides the part (its members, signature, citations,
    /// compaction texts and committed JSON).
    fn footprint(&self) -> usize {
        map_heap_bytes(&self.base)
            + self.signature.as_ref().map_or(0, String::capacity)
            + self.citations.capacity() * 32
            + self.citations.iter().map(value_heap_bytes).sum::<usize>()
            + self
                .compaction
                .as_ref()
                .map_or(0, |(c, e)| c.as_ref().map_or(0, String::capacity) + e.as_ref().map_or(0, String::capacity))
            + self.committed.as_ref().map_or(0, value_heap_bytes)
            + self.raw_input.as_ref().map_or(0, |r| r.get().len())
    }

    fn btype(&self) -> &str {
        self.base.get("type").and_then(Value::as_str).unwrap_or("")
    }

    fn text_field(&self) -> Option<&'static str> {
        self.text_field
    }

    /// The block's JSON in the message (an input kept as text: `null`,
    /// written from `raw_input` by the caller).
    fn to_json(&self, part: &Part, strings: PartialStrings, value_max: usize) -> Value {
        if self.raw_input.is_some() {
            let mut m = self.base.clone();
            m.insert("input".into(), Value::Null);
            return Value::Object(m);
        }
        if let Some(c) = &self.committed {
            return c.clone();
        }
        let mut m = self.base.clone();
        if let Some(f) = self.text_field() {
            m.insert(f.into(), Value::String(part.text.clone()));
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
        if let Some(partial) =
            part.args.as_ref().filter(|a| a.value_fits(value_max)).and_then(|a| a.partial_value(strings))
        {
            // The SDK's view: jiter `partial_mode` of the arguments so far.
            m.insert("input".into(), partial);
        }
        if let Some((content, enc)) = &self.compaction {
            // A block that started with `null` keeps it until a delta brings text.
            if let Some(c) = content {
                m.insert("content".into(), Value::String(c.clone()));
            }
            if let Some(e) = enc {
                m.insert("encrypted_content".into(), Value::String(e.clone()));
            }
        }
        Value::Object(m)
    }

    /// Whether a delta of `kind` belongs in this block (its part of
    /// `part_kind`): text in a `text` block, thinking in a `thinking` block,
    /// arguments in a tool call.
    fn takes(&self, part_kind: PartKind, kind: DeltaKind) -> bool {
        match kind {
            DeltaKind::Text => self.text_field() == Some("text"),
            DeltaKind::Thinking => self.text_field() == Some("thinking"),
            DeltaKind::Json => part_kind == PartKind::ToolCall,
        }
    }

    /// [`to_json`](Self::to_json), the committed JSON and the part's text
    /// moved into the value instead of copied.
    fn into_json(self, part: &mut Part, strings: PartialStrings, value_max: usize) -> Value {
        if self.raw_input.is_none() {
            if let Some(c) = self.committed {
                return c;
            }
        }
        let text = core::mem::take(&mut part.text);
        let mut json = self.to_json(part, strings, value_max);
        if let (Some(f), Value::Object(m)) = (self.text_field(), &mut json) {
            // Where `to_json` put the (now empty) text.
            m.insert(f.into(), Value::String(text));
        }
        json
    }
}

impl AnthropicFold {
    /// [`Dialect::into_message`] (Bedrock's InvokeModel fold wraps this one).
    pub(super) fn into_message_value(self, turn: &mut Turn) -> Value {
        if self.message.is_empty() || self.blocks.iter().any(|b| b.raw_input.is_some()) {
            return self.message(turn);
        }
        let AnthropicFold { mut message, mut blocks, strings, value_max, .. } = self;
        // Stable, as `message_view`'s sort of the references.
        blocks.sort_by_key(|b| b.index);
        let content = blocks
            .into_iter()
            .map(|b| {
                let part = &mut turn.parts[b.part as usize];
                b.into_json(part, strings, value_max)
            })
            .collect();
        message.insert("content".into(), Value::Array(content));
        Value::Object(message)
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
pub(super) struct Head<'a> {
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

/// The kind of a hot delta ([`QuickDelta`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DeltaKind {
    Text,
    Thinking,
    Json,
}

impl DeltaKind {
    /// The delta's `type`.
    fn name(self) -> &'static str {
        match self {
            DeltaKind::Text => "text_delta",
            DeltaKind::Thinking => "thinking_delta",
            DeltaKind::Json => "input_json_delta",
        }
    }
}

/// The hot event — `content_block_delta` with a text, thinking or argument
/// delta — as [`quick_delta_event`] reads it: the block's index, the
/// delta's kind and its string.
#[derive(Debug, Clone)]
pub(super) struct QuickDelta<'a> {
    index: u64,
    kind: DeltaKind,
    /// Read (strictly) as it is appended: a string that does not read
    /// declines the event to serde_json.
    value: UncheckedStr<'a>,
}

impl<'a> QuickDelta<'a> {
    /// Whether its string reads strictly (as [`view::scan_str`](super::view::scan_str)
    /// reads it): the event is then one serde_json reads as this view.
    pub(super) fn reads(&self) -> bool {
        self.value.checked().is_some()
    }

    /// The [`Head`] serde_json gives for the same event, or `None` when its
    /// string does not read strictly (serde_json decides then).
    fn head(&self) -> Option<Head<'a>> {
        let value = self.value.checked()?;
        let mut delta = DeltaView { ty: Some(Str(Cow::Borrowed(self.kind.name()))), ..DeltaView::default() };
        match self.kind {
            DeltaKind::Text => delta.text = Some(value),
            DeltaKind::Json => delta.partial_json = Some(value),
            DeltaKind::Thinking => delta.thinking = Some(value),
        }
        Some(Head { ty: Cow::Borrowed("content_block_delta"), index: Some(self.index), delta: Some(delta) })
    }
}

/// The hot event — `content_block_delta` with a text, thinking or argument
/// delta — matched byte for byte in the compact form the API sends; the same
/// view serde_json would give. Anything else (whitespace, other members or
/// order, a number serde_json would read differently) is `None` and goes
/// through serde_json. The string, the event's last value, is not read
/// here: it is read and decoded in one pass where it is appended
/// ([`UncheckedStr`]), and the event declines to serde_json then if it does
/// not read.
#[inline(always)]
pub(super) fn quick_delta_event(data: &str) -> Option<QuickDelta<'_>> {
    let mut c = Cursor::new(data);
    c.eat_str(r#"{"type":"content_block_delta","index":"#)?;
    let index = c.uint()?;
    c.eat_str(r#","delta":{"type":""#)?;
    let kind = if c.eat_str(r#"text_delta","text":"#).is_some() {
        DeltaKind::Text
    } else if c.eat_str(r#"input_json_delta","partial_json":"#).is_some() {
        DeltaKind::Json
    } else if c.eat_str(r#"thinking_delta","thinking":"#).is_some() {
        DeltaKind::Thinking
    } else {
        return None;
    };
    // The string ends the payload: `"…"}}`.
    let quoted = data.get(c.pos()..data.len().checked_sub(2)?)?;
    if quoted.len() < 2 || !quoted.starts_with('"') || !data.ends_with("\"}}") {
        return None;
    }
    Some(QuickDelta { index, kind, value: UncheckedStr::new(quoted) })
}

/// [`quick_delta_event`] as the [`Head`] serde_json gives.
#[cfg(test)]
fn quick_delta(data: &str) -> Option<Head<'_>> {
    quick_delta_event(data).and_then(|q| q.head())
}

/// The head of any other compact event (`message_start`, block start and
/// stop, `message_delta`, `message_stop`, a delta the exact match above
/// does not take) read member by member from its bytes: the same view
/// serde_json gives, or `None` (serde_json decides) on anything else —
/// whitespace, a member named twice, an escaped `type` or key, an index
/// serde_json would read differently, a `delta` that is not an object of
/// plain or lenient strings where [`DeltaView`] reads them.
// Out of line: the deltas, nearly every event, never come here, and the
// hot path stays as small as before this reader existed (inlined, it cost
// the text and tool-use corpora 2–3 % more instructions).
#[cold]
#[inline(never)]
fn quick_head(data: &str) -> Option<Head<'_>> {
    let mut c = Cursor::new(data);
    let mut seen = Seen::default();
    let mut head = Head { ty: Cow::Borrowed(""), index: None, delta: None };
    c.object(|key, c| {
        match key {
            "type" => {
                seen.first(1)?;
                head.ty = Cow::Borrowed(c.plain()?);
            }
            "index" => {
                seen.first(2)?;
                head.index = if c.is_null()? { None } else { Some(c.uint()?) };
            }
            "delta" => {
                seen.first(4)?;
                head.delta = if c.is_null()? { None } else { Some(quick_delta_view(c)?) };
            }
            _ => {
                c.skip()?;
            }
        }
        Some(())
    })?;
    c.end()?;
    Some(head)
}

/// A `delta` object as [`DeltaView`] reads it (see [`quick_head`]).
fn quick_delta_view<'a>(c: &mut Cursor<'a>) -> Option<DeltaView<'a>> {
    let mut seen = Seen::default();
    let mut d = DeltaView::default();
    let plain = |c: &mut Cursor<'a>| Some(c.opt_plain()?.map(|s| Str(Cow::Borrowed(s))));
    c.object(|key, c| {
        match key {
            "type" => {
                seen.first(1)?;
                d.ty = plain(c)?;
            }
            "text" => {
                seen.first(2)?;
                d.text = c.opt_string()?;
            }
            "partial_json" => {
                seen.first(4)?;
                d.partial_json = c.opt_string()?;
            }
            "thinking" => {
                seen.first(8)?;
                d.thinking = c.opt_string()?;
            }
            "signature" => {
                seen.first(16)?;
                d.signature = plain(c)?;
            }
            _ => {
                c.skip()?;
            }
        }
        Some(())
    })?;
    Some(d)
}

/// The Anthropic dialect: events typed with a Messages API event type
/// (an `error` reaches it only when the Responses dialect declined it).
pub(crate) const DIALECT: DialectInfo = DialectInfo {
    provider: Provider::Anthropic,
    name: "anthropic",
    aliases: &[],
    detects: |_, value| value.and_then(|v| v.get("type")).and_then(Value::as_str).is_some_and(|t| KNOWN.contains(&t)),
    make: || Box::<AnthropicFold>::default(),
};

/// The Anthropic fold.
#[derive(Debug, Default)]
pub(crate) struct AnthropicFold {
    message: Map<String, Value>,
    blocks: Vec<Block>,
    /// The message was started implicitly (no `message_start` yet).
    implicit: bool,
    /// [`StreamConfig::tool_input_trailing_strings`](super::StreamConfig), as
    /// the partial tool inputs need it.
    strings: PartialStrings,
    /// The most a tool input may cost as a value tree (`max_memory_bytes /
    /// 16`): a larger one stays text.
    value_max: usize,
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

impl Dialect for AnthropicFold {
    fn provider(&self) -> Provider {
        Provider::Anthropic
    }

    fn terminal(&self) -> &'static str {
        "message_stop"
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        self.strings =
            if turn.config.tool_input_trailing_strings { PartialStrings::Keep } else { PartialStrings::Drop };
        self.value_max = turn.config.max_memory_bytes / 16;
        if let Some(q) = quick_allowed().then(|| quick_delta_event(event.data())).flatten() {
            if self.on_quick_delta(turn, q, event, sink)? {
                quick_taken();
                return Ok(Flow::Continue);
            }
        }
        let quick = if quick_allowed() { quick_head(event.data()) } else { None };
        let parsed = match quick {
            Some(head) => Ok(head),
            None => serde_json::from_str(event.data()),
        };
        let head: Head<'_> = match parsed {
            Ok(h) => h,
            Err(e) => {
                if let Some((fixed, n)) = without_lone_surrogates(event) {
                    // A lone surrogate escape outside the delta text (which
                    // reads it as U+FFFD itself): the event with `\uFFFD`.
                    warn_lone(sink, event.event(), n);
                    return self.on_event(turn, &Event { data: &fixed, ..*event }, sink);
                }
                // Valid JSON of an unexpected shape (e.g. a non-object `delta`):
                // an unknown event or a bad known one, never fatal.
                let v = parse_value(event, sink).map_err(|_| json_error(event, e))?;
                let ty = v.get("type").and_then(Value::as_str).unwrap_or(event.event());
                if KNOWN.contains(&ty) {
                    warn(sink, WarningCode::InvalidEvent, &format!("{ty} of unexpected shape; ignored"));
                } else {
                    sink.event(&StreamEvent::Unknown { scope: "event", provider_type: ty, data: event.data() });
                }
                return Ok(Flow::Continue);
            }
        };
        let ty: &str = if head.ty.is_empty() { event.event() } else { &head.ty };
        match ty {
            "content_block_delta" => self.on_delta(turn, head, event, sink)?,
            "ping" => {}
            "message_start" => self.on_message_start(turn, event, sink)?,
            "content_block_start" => self.on_block_start(turn, event, sink)?,
            "content_block_stop" => self.on_block_stop(turn, head.index, sink),
            "message_delta" => self.on_message_delta(turn, event, sink)?,
            "message_stop" => {
                if turn.state == TurnState::Idle {
                    // A stray terminal event: nothing to end yet.
                    warn(sink, WarningCode::TerminalBeforeStart, "message_stop before message_start; ignored");
                    return Ok(Flow::Continue);
                }
                self.ensure_started(turn, "message_stop", sink);
                for block in self.blocks.iter().filter(|b| turn.parts[b.part as usize].is_open()) {
                    let msg = format!("block {} still open at message_stop; committed as incomplete", block.index);
                    warn(sink, WarningCode::PartNotEnded, &msg);
                }
                return Ok(Flow::End);
            }
            "error" => return Ok(Flow::Fail(provider_error(&parse_value(event, sink)?, turn.output_emitted()))),
            other => sink.event(&StreamEvent::Unknown { scope: "event", provider_type: other, data: event.data() }),
        }
        Ok(Flow::Continue)
    }

    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value> {
        let part = &mut parts[id as usize];
        let block = &mut self.blocks[part.at as usize];
        let input = match (&part.outcome, &part.args_end) {
            (Outcome::Complete, Some(ArgsEnd::Empty)) => {
                Some(block.base.get("input").cloned().unwrap_or(Value::Object(Map::new())))
            }
            (Outcome::Complete, Some(ArgsEnd::Valid)) => match part.args.as_deref_mut() {
                Some(args) if !args.value_fits(self.value_max) => {
                    // Too large a tree: the text is kept (taken at the stop).
                    block.input_as_text = true;
                    let mut m = block.base.clone();
                    m.shift_remove("input");
                    return Cow::Borrowed(block.committed.insert(Value::Object(m)));
                }
                args => args.and_then(ToolArgs::take_value),
            },
            // Cut off or invalid: the SDK's partial value, kept past the
            // release of the arguments (else the start block's input).
            (_, Some(ArgsEnd::Invalid(_))) => part
                .args
                .as_ref()
                .filter(|a| a.value_fits(self.value_max))
                .and_then(|a| a.partial_value(self.strings))
                .or_else(|| block.base.get("input").cloned()),
            _ => None,
        };
        match input {
            Some(input) => {
                // Move the input into the block's final JSON instead of copying it.
                let mut m = block.base.clone();
                m.insert("input".into(), input);
                Cow::Borrowed(block.committed.insert(Value::Object(m)))
            }
            None => Cow::Owned(block.to_json(part, self.strings, self.value_max)),
        }
    }

    /// The folded Anthropic `Message`.
    fn message(&self, turn: &Turn) -> Value {
        self.message_view(turn).into_value()
    }

    /// [`message`](Self::message), the blocks' JSON and texts moved out of
    /// the fold (a message with inputs kept as text is built as `message`
    /// builds it: the texts are parsed into it).
    fn into_message(self: Box<Self>, turn: &mut Turn) -> Value {
        (*self).into_message_value(turn)
    }

    /// The message, lent with the inputs kept as text spliced in when it
    /// writes itself (no tree built for them).
    fn message_view(&self, turn: &Turn) -> MessageView<'_> {
        if self.message.is_empty() {
            return MessageView::Owned(Value::Null);
        }
        let mut m = self.message.clone();
        let mut order: Vec<&Block> = self.blocks.iter().collect();
        order.sort_by_key(|b| b.index);
        let content =
            order.iter().map(|b| b.to_json(&turn.parts[b.part as usize], self.strings, self.value_max)).collect();
        m.insert("content".into(), Value::Array(content));
        let raw: Vec<_> = order
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let raw = b.raw_input.as_deref()?;
                Some((vec![PathStep::Key("content"), PathStep::Index(i), PathStep::Key("input")], raw))
            })
            .collect();
        if raw.is_empty() {
            MessageView::Owned(Value::Object(m))
        } else {
            MessageView::Spliced { value: Value::Object(m), raw }
        }
    }

    fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + map_heap_bytes(&self.message)
            + self.blocks.capacity() * core::mem::size_of::<Block>()
            + self.blocks.iter().map(Block::footprint).sum::<usize>()
    }

    fn on_turn_end(&mut self, _turn: &Turn, _sink: &mut Sink<'_>) -> Option<String> {
        self.message.get("stop_reason").and_then(Value::as_str).map(str::to_owned)
    }

    fn is_restart(&self, ty: &str, _id: Option<&str>) -> bool {
        ty == "message_start"
    }
}

impl AnthropicFold {
    /// After the commit of block `pos`: an input too large for a tree
    /// becomes the block's text (moved out of the arguments, validated).
    fn keep_input_text(&mut self, turn: &mut Turn, pos: usize) {
        let block = &mut self.blocks[pos];
        if !std::mem::take(&mut block.input_as_text) {
            return;
        }
        if let Some(args) = turn.parts[block.part as usize].args.as_deref_mut() {
            // Valid JSON (the parser's `finish` said so): the check cannot fail.
            block.raw_input = RawValue::from_string(args.take_raw()).ok();
        }
    }

    fn block_pos(&self, index: u64) -> Option<usize> {
        let i = usize::try_from(index).ok()?;
        if self.blocks.get(i).is_some_and(|b| b.index == index) {
            return Some(i);
        }
        self.blocks.iter().position(|b| b.index == index)
    }

    /// Makes sure a message exists (implicitly started on bad input).
    #[inline]
    fn ensure_started(&mut self, turn: &mut Turn, ty: &str, sink: &mut Sink<'_>) {
        if turn.state == TurnState::Idle {
            self.start_implicit(turn, ty, sink);
        }
    }

    /// Starts the message implicitly: an event of the answer before `message_start`.
    #[cold]
    #[inline(never)]
    fn start_implicit(&mut self, turn: &mut Turn, ty: &str, sink: &mut Sink<'_>) {
        if turn.begin() {
            warn(
                sink,
                WarningCode::EventBeforeStart,
                &format!("{ty} before message_start; message started implicitly"),
            );
            self.message = implicit_message();
            self.implicit = true;
        }
    }

    fn on_message_start(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let mut v = parse_value(event, sink)?;
        if !turn.begin() && !self.implicit {
            warn(sink, WarningCode::DuplicateStart, "second message_start; ignored");
            return Ok(());
        }
        let mut message = match v.get_mut("message").map(Value::take) {
            Some(Value::Object(m)) => m,
            _ => {
                warn(sink, WarningCode::InvalidEvent, "message_start without a message object; started an empty one");
                implicit_message()
            }
        };
        // Blocks the API sends finished inside `message_start` (e.g. a
        // programmatic tool call's `tool_use`): kept, at indices 0, 1, ….
        let prefilled = match message.insert("content".into(), Value::Array(Vec::new())) {
            Some(Value::Array(blocks)) if self.blocks.is_empty() => blocks,
            _ => Vec::new(),
        };
        if self.implicit {
            // A late message_start: its fields win, what was folded is kept.
            for (k, v) in std::mem::take(&mut self.message) {
                if !message.contains_key(&k) || k == "stop_reason" && !v.is_null() {
                    message.insert(k, v);
                }
            }
            self.implicit = false;
        }
        if self.blocks.is_empty() && prefilled.is_empty() {
            // The snapshot is the message itself (its content `[]`): lent,
            // not copied.
            let snapshot = Value::Object(message);
            sink.event(&StreamEvent::MessageStart { provider: "anthropic", message: &snapshot });
            if let Value::Object(m) = snapshot {
                self.message = m;
            }
        } else {
            self.message = message;
            let mut snapshot = self.message(turn);
            if !prefilled.is_empty() {
                snapshot["content"] = Value::Array(prefilled.clone());
            }
            sink.event(&StreamEvent::MessageStart { provider: "anthropic", message: &snapshot });
        }
        if let Some(u) = self.message.get("usage").filter(|u| u.is_object()) {
            sink.event(&StreamEvent::Usage { usage: u });
        }
        for block in prefilled {
            let Value::Object(base) = block else {
                warn(sink, WarningCode::InvalidEvent, "message_start content element that is not an object; ignored");
                continue;
            };
            let index = self.blocks.len() as u64;
            let part = self.start_block(turn, index, base, sink)?;
            turn.commit(self, part, false, sink);
            self.keep_input_text(turn, self.blocks.len() - 1);
            if let Some(args) = turn.parts[part as usize].args.as_mut() {
                args.release();
            }
        }
        Ok(())
    }

    /// Opens the part of a block and emits what its start carries (text, a
    /// tool call's id and name); returns the part.
    fn start_block(
        &mut self,
        turn: &mut Turn,
        index: u64,
        base: Map<String, Value>,
        sink: &mut Sink<'_>,
    ) -> Result<u32, StreamError> {
        let btype = base.get("type").and_then(Value::as_str).unwrap_or("");
        let kind = match btype {
            "text" => PartKind::Text,
            "thinking" | "redacted_thinking" => PartKind::Reasoning,
            "tool_use" | "server_tool_use" | "mcp_tool_use" => PartKind::ToolCall,
            _ => PartKind::Other,
        };
        let at = (self.blocks.len() as u32, 0);
        let part = if kind == PartKind::ToolCall {
            let text = |k: &str| base.get(k).and_then(Value::as_str);
            let call = CallInit {
                id: text("id"),
                name: text("name"),
                format: ToolInputFormat::Json,
                provider_executed: btype != "tool_use",
            };
            let part = turn.open_call(at, 0, index, btype, call, sink)?;
            // A block sent whole (a finished call in `message_start`): its
            // input is the call's arguments unless fragments follow.
            if let Some(input) = base.get("input").filter(|i| !matches!(i, Value::Object(o) if o.is_empty())) {
                turn.set_whole_arguments(part, serde_json::to_string(input).unwrap_or_default());
            }
            part
        } else {
            turn.open_part(kind, at, 0, index, btype, sink)?
        };
        if let Some(args) = turn.parts[part as usize].args.as_mut() {
            // The input becomes a value in the message: its size counts in the budget.
            args.set_materialized();
        }
        let compaction = (btype == "compaction").then(|| {
            let s = |k: &str| base.get(k).and_then(Value::as_str).map(str::to_owned);
            (s("content"), s("encrypted_content"))
        });
        let text_field = match btype {
            "text" => Some("text"),
            "thinking" => Some("thinking"),
            _ => None,
        };
        let block = Block {
            index,
            part,
            base,
            signature: None,
            citations: Vec::new(),
            compaction,
            committed: None,
            input_as_text: false,
            raw_input: None,
            text_field,
        };
        if let Some(f) = block.text_field() {
            turn.start_text(part, block.base.get(f).and_then(Value::as_str).unwrap_or(""), sink)?;
        }
        if kind == PartKind::ToolCall {
            for key in ["id", "name"] {
                if let Some(val) = block.base.get(key) {
                    turn.call_metadata(part, key, val, sink);
                }
            }
        }
        self.blocks.push(block);
        Ok(part)
    }

    fn on_block_start(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let mut v = parse_value(event, sink)?;
        self.ensure_started(turn, "content_block_start", sink);
        let Some(index) = v.get("index").and_then(Value::as_u64) else {
            warn(sink, WarningCode::InvalidEvent, "content_block_start without a numeric index; ignored");
            return Ok(());
        };
        let Some(Value::Object(base)) = v.get_mut("content_block").map(Value::take) else {
            warn(sink, WarningCode::InvalidEvent, "content_block_start without a content_block object; ignored");
            return Ok(());
        };
        if self.block_pos(index).is_some() {
            let msg = format!("content_block_start for index {index} already started; ignored");
            warn(sink, WarningCode::DuplicatePartIndex, &msg);
            return Ok(());
        }
        if index != self.blocks.len() as u64 {
            let msg = format!("content_block_start at index {index}, expected {}; folded by index", self.blocks.len());
            warn(sink, WarningCode::UnexpectedPartIndex, &msg);
        }
        if base.get("type").and_then(Value::as_str) == Some("fallback") {
            // The final hop's fallback block names the model that served the
            // answer: the message is relabeled (as the non-streaming one is).
            if let Some(model) = base.get("to").and_then(|t| t.get("model")).filter(|m| m.is_string()) {
                self.message.insert("model".into(), model.clone());
            }
        }
        self.start_block(turn, index, base, sink)?;
        Ok(())
    }

    /// A hot delta into an open block of its kind: its text appended (no
    /// event type or delta type compared as text again); anything else (an
    /// unknown or closed block, a delta of another block's kind, a message
    /// not started) through [`on_delta`](Self::on_delta), which warns.
    /// `Ok(false)`, nothing done, when its string does not read strictly (a
    /// lone surrogate escape included: the slow path warns of those).
    #[inline(always)]
    fn on_quick_delta(
        &mut self,
        turn: &mut Turn,
        q: QuickDelta<'_>,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<bool, StreamError> {
        let open = (turn.state != TurnState::Idle).then(|| self.block_pos(q.index)).flatten().filter(|&pos| {
            let block = &self.blocks[pos];
            let part = &turn.parts[block.part as usize];
            part.is_open() && block.takes(part.kind, q.kind)
        });
        let Some(pos) = open else {
            let Some(head) = q.head() else { return Ok(false) };
            return self.on_delta(turn, head, event, sink).map(|()| true);
        };
        let part = self.blocks[pos].part;
        match q.kind {
            DeltaKind::Json => turn.try_push_args(part, &q.value, sink),
            _ => turn.try_append_text(part, &q.value, sink),
        }
    }

    fn on_delta(
        &mut self,
        turn: &mut Turn,
        head: Head<'_>,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        self.ensure_started(turn, "content_block_delta", sink);
        let (Some(index), Some(delta)) = (head.index, head.delta) else {
            warn(sink, WarningCode::InvalidEvent, "content_block_delta without index or delta; ignored");
            return Ok(());
        };
        let Some(pos) = self.block_pos(index) else {
            warn(
                sink,
                WarningCode::UnknownPartIndex,
                &format!("content_block_delta for index {index}, never started; ignored"),
            );
            return Ok(());
        };
        let block = &mut self.blocks[pos];
        let part = block.part;
        if !turn.parts[part as usize].is_open() {
            warn(
                sink,
                WarningCode::PartAlreadyEnded,
                &format!("content_block_delta for index {index} after its stop; ignored"),
            );
            return Ok(());
        }
        let dty = delta.ty.as_deref().unwrap_or("");
        let part_kind = turn.parts[part as usize].kind;
        let fits = match dty {
            "text_delta" | "citations_delta" => block.takes(part_kind, DeltaKind::Text),
            "thinking_delta" | "signature_delta" => block.takes(part_kind, DeltaKind::Thinking),
            "input_json_delta" => block.takes(part_kind, DeltaKind::Json),
            "compaction_delta" => block.compaction.is_some(),
            _ => {
                sink.event(&StreamEvent::Unknown { scope: "delta", provider_type: dty, data: event.data() });
                return Ok(());
            }
        };
        if !fits {
            let msg = format!("{dty} on a {} block (index {index}); ignored", block.btype());
            warn(sink, WarningCode::DeltaTypeMismatch, &msg);
            return Ok(());
        }
        match dty {
            "text_delta" | "thinking_delta" | "input_json_delta" => {
                let text = match dty {
                    "text_delta" => delta.text,
                    "thinking_delta" => delta.thinking,
                    _ => delta.partial_json,
                }
                .unwrap_or_default();
                check_lone(sink, dty, &text);
                if dty == "input_json_delta" {
                    turn.push_args(part, &text, sink)?;
                } else {
                    turn.append_text(part, &text, sink)?;
                }
            }
            "signature_delta" => {
                let sig = delta.signature.unwrap_or_default().into_owned();
                let value = Value::String(sig.clone());
                block.signature = Some(sig);
                sink.event(&StreamEvent::PartMetadata { part, key: "signature", value: &value });
            }
            "citations_delta" => {
                let v = parse_value(event, sink)?;
                let citation = v.get("delta").and_then(|d| d.get("citation")).cloned().unwrap_or(Value::Null);
                sink.event(&StreamEvent::PartMetadata { part, key: "citation", value: &citation });
                block.citations.push(citation);
            }
            _ => {
                // compaction_delta
                let v = parse_value(event, sink)?;
                let d = v.get("delta").cloned().unwrap_or(Value::Null);
                if let Some((content, enc)) = block.compaction.as_mut() {
                    // `content` is concatenated (a null fragment skipped);
                    // `encrypted_content` is opaque: the latest non-null value.
                    if let Some(s) = d.get("content").and_then(Value::as_str) {
                        turn.check_text(content.as_ref().map_or(0, String::len) + s.len())?;
                        content.get_or_insert_with(String::new).push_str(s);
                    }
                    if let Some(s) = d.get("encrypted_content").and_then(Value::as_str) {
                        turn.check_text(s.len())?;
                        *enc = Some(s.to_owned());
                    }
                }
                for key in ["content", "encrypted_content"] {
                    // A member the delta names as null is in the block (as the
                    // SDK's assignment puts it there), null until a value comes.
                    if d.get(key).is_some_and(Value::is_null) && !block.base.contains_key(key) {
                        block.base.insert(key.into(), Value::Null);
                    }
                }
                sink.event(&StreamEvent::PartMetadata { part, key: "compaction_delta", value: &d });
            }
        }
        Ok(())
    }

    fn on_block_stop(&mut self, turn: &mut Turn, index: Option<u64>, sink: &mut Sink<'_>) {
        self.ensure_started(turn, "content_block_stop", sink);
        let Some(index) = index else {
            warn(sink, WarningCode::InvalidEvent, "content_block_stop without an index; ignored");
            return;
        };
        let Some(pos) = self.block_pos(index) else {
            warn(
                sink,
                WarningCode::UnknownPartIndex,
                &format!("content_block_stop for index {index}, never started; ignored"),
            );
            return;
        };
        let part = self.blocks[pos].part;
        if !turn.parts[part as usize].is_open() {
            warn(sink, WarningCode::PartAlreadyEnded, &format!("second content_block_stop for index {index}; ignored"));
            return;
        }
        turn.commit(self, part, false, sink);
        self.keep_input_text(turn, pos);
        // The raw text and the parser's tree are no longer needed.
        if let Some(args) = turn.parts[part as usize].args.as_mut() {
            args.release();
        }
    }

    fn on_message_delta(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let v = parse_value(event, sink)?;
        self.ensure_started(turn, "message_delta", sink);
        let delta = v.get("delta").and_then(Value::as_object);
        // Always replaced (absent = null), as the SDK does.
        for key in ["stop_reason", "stop_sequence", "stop_details"] {
            let val = delta.and_then(|d| d.get(key)).cloned().unwrap_or(Value::Null);
            self.message.insert(key.into(), val);
        }
        // Every other member of `delta` (container, …) and of the event
        // (context_management, input_transformations, …): a non-null value
        // replaces, null or absent keeps the earlier one.
        let others = delta
            .into_iter()
            .flatten()
            .filter(|(k, _)| !matches!(k.as_str(), "stop_reason" | "stop_sequence" | "stop_details"));
        let top =
            v.as_object().into_iter().flatten().filter(|(k, _)| !matches!(k.as_str(), "type" | "delta" | "usage"));
        for (k, val) in others.chain(top).filter(|(_, val)| !val.is_null()) {
            self.message.insert(k.clone(), val.clone());
        }
        if let Some(reason) = v.get("delta").and_then(|d| d.get("stop_reason")).and_then(Value::as_str) {
            sink.event(&StreamEvent::StopReason { choice: 0, reason });
        }
        if let Some(Value::Object(u)) = v.get("usage") {
            let usage = self.message.entry("usage").or_insert_with(|| Value::Object(Map::new()));
            if !usage.is_object() {
                *usage = Value::Object(Map::new());
            }
            if let Value::Object(target) = usage {
                // Cumulative totals: a value replaces; null or absent keeps.
                for (k, val) in u.iter().filter(|(_, val)| !val.is_null()) {
                    target.insert(k.clone(), val.clone());
                }
            }
            sink.event(&StreamEvent::Usage { usage });
        }
        Ok(())
    }
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

    /// The hot delta path (`on_quick_delta`) folds exactly as serde_json's
    /// view through `on_delta`: every Anthropic recording and fixture, and
    /// bodies of edge deltas (for a block never started, closed, or of
    /// another kind; before `message_start`; escaped and lone-surrogate
    /// text), give the same events, message and ending; and it is taken.
    #[test]
    fn hot_deltas_fold_as_the_value_path() {
        use crate::providers::raw::tests::{assert_fast_folds_as_slow, bodies};
        use crate::providers::Provider;
        let mut cases: Vec<(Provider, String, Vec<u8>)> =
            bodies(&["tests/recordings/anthropic", "tests/fixtures/anthropic"])
                .into_iter()
                .map(|(name, body)| (Provider::Anthropic, name, body))
                .collect();
        assert!(cases.len() > 20, "{}", cases.len());
        let start = r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#;
        let text_block = r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#;
        let thinking_block =
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}"#;
        let tool_block = r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#;
        let delta = |i: u64, ty: &str, field: &str, text: &str| {
            format!(r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"{ty}","{field}":"{text}"}}}}"#)
        };
        let deltas = [
            delta(0, "text_delta", "text", "plain"),
            delta(0, "text_delta", "text", r#"esc \"q\" \n \u00e9 \ud83d\ude00"#),
            delta(0, "text_delta", "text", r"lone \ud800"),
            delta(1, "thinking_delta", "thinking", "hm"),
            delta(2, "input_json_delta", "partial_json", r#"{\"a\": "#),
            delta(2, "input_json_delta", "partial_json", "1}"),
            // Of another block's kind.
            delta(0, "thinking_delta", "thinking", "wrong block"),
            delta(1, "text_delta", "text", "wrong block"),
            delta(0, "input_json_delta", "partial_json", "1"),
            delta(2, "text_delta", "text", "wrong block"),
            // A block never started, and an index no block can have.
            delta(7, "text_delta", "text", "nowhere"),
            delta(u64::MAX, "text_delta", "text", "nowhere"),
            // Strings the hot path reads as it appends them and declines
            // (nothing appended: serde_json decides): a control character,
            // an unescaped quote (the string ends before the payload's
            // `"}}`), a trailing backslash, a bad escape or `\u`, a reversed
            // or lone pair, in every kind of block; and `\/` (not escaped as
            // serde_json escapes).
            delta(0, "text_delta", "text", "ctl \u{1} x"),
            delta(0, "text_delta", "text", r#"a"}}"#),
            delta(0, "text_delta", "text", r"a\"),
            delta(1, "thinking_delta", "thinking", r"bad \q"),
            delta(1, "thinking_delta", "thinking", r"bad \u12x4"),
            delta(2, "input_json_delta", "partial_json", r"\udc00\ud800"),
            delta(2, "input_json_delta", "partial_json", r"lone \ud83d x"),
            delta(0, "text_delta", "text", r"lone low \udc00 x"),
            delta(2, "input_json_delta", "partial_json", "\u{1f}"),
            delta(2, "input_json_delta", "partial_json", r#"2, \"b\": \"c\/d\""#),
            delta(0, "text_delta", "text", r"slash \/ \b\f\r\t"),
        ];
        let stop0 = r#"{"type":"content_block_stop","index":0}"#;
        let end = [
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let sse = |lines: &[&str]| -> Vec<u8> {
            lines.iter().map(|l| format!("event: x\ndata: {l}\n\n")).collect::<String>().into_bytes()
        };
        let opened = [start, text_block, thinking_block, tool_block];
        for (i, d) in deltas.iter().enumerate() {
            let mut lines: Vec<&str> = opened.to_vec();
            lines.push(d);
            lines.push(stop0);
            // After its block closed too.
            lines.push(d);
            lines.extend(end);
            cases.push((Provider::Anthropic, format!("edge delta {i}"), sse(&lines)));
            // Before `message_start` (the message started implicitly).
            cases.push((Provider::Anthropic, format!("edge delta {i} first"), sse(&[d, start, d])));
        }
        let all: Vec<&str> = opened.iter().copied().chain(deltas.iter().map(String::as_str)).chain(end).collect();
        cases.push((Provider::Anthropic, "every edge delta".into(), sse(&all)));
        let taken = assert_fast_folds_as_slow(&cases);
        assert!(taken > 1000, "hot path taken {taken} times");
    }

    /// The fast path gives exactly serde_json's view, or declines.
    #[test]
    fn quick_delta_is_serde_json_or_nothing() {
        let values = super::super::view::TRICKY_JSON_STRINGS;
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
        // The head reader reads them as serde_json does too, or declines.
        let mut heads = 0;
        for doc in &docs {
            if let Some(head) = quick_head(doc) {
                heads += 1;
                assert_eq!(Some(head), serde_json::from_str(doc).ok(), "{doc}");
            }
        }
        assert!(heads >= quick, "{heads}");
    }

    /// The head of every other event: serde_json's view, or declined.
    #[test]
    fn quick_head_is_serde_json_or_nothing() {
        let docs = [
            r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"c","stop_reason":null,"usage":{"input_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"content_block_stop","index":null}"#,
            r#"{"type":"content_block_stop","index":-1}"#,
            r#"{"type":"content_block_stop","index":1.0}"#,
            r#"{"type":"content_block_stop","index":123456789012345678901}"#,
            r#"{"type":"content_block_stop","index":1,"index":2}"#,
            r#"{"type":"content_block_stop","type":"ping"}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}"#,
            r#"{"type":"message_delta","delta":null}"#,
            r#"{"type":"message_delta","delta":5}"#,
            r#"{"type":"message_delta","delta":["a"]}"#,
            r#"{"type":"message_delta","delta":{"type":5}}"#,
            r#"{"type":"message_delta","delta":{"type":"x","type":"y"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"a","stop_reason":"b"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lone \ud800","extra":[1,{"a":null}]}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text\u005fdelta","text":"a"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null,"thinking":"t"}}"#,
            r#"{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":1,"x":"\udc00"}}"#,
            r#"{"type":null}"#,
            r#"{"type":"ping"} "#,
            r#"{"\u0074ype":"ping"}"#,
            r#"{"index":0}"#,
            r#"["ping"]"#,
            r#"{}"#,
        ];
        let mut heads = 0;
        for doc in docs {
            let serde: Option<Head<'_>> = serde_json::from_str(doc).ok();
            if let Some(head) = quick_head(doc) {
                heads += 1;
                assert_eq!(Some(head), serde, "{doc}");
            }
        }
        assert!(heads >= 12, "{heads}");
    }
}
