//! OpenAI Responses API streaming.
//!
//! The reference is the official `openai` Python SDK (checked against
//! 3.54.0): `ResponseStreamState.accumulate_event` and
//! `ResponseStream.get_final_response()`.
//!
//! Items are folded by `output_index`. Parts:
//!
//! | item / sub-part | part kind | opened by | text from | committed by |
//! | --- | --- | --- | --- | --- |
//! | `message` content `output_text` | `text` | `response.content_part.added` (or its first delta) | `response.output_text.delta` | `response.content_part.done` / `response.output_item.done` |
//! | `message` content `refusal` | `refusal` | idem | `response.refusal.delta` | idem |
//! | `reasoning` summary part | `reasoning` | `response.reasoning_summary_part.added` (or first delta) | `response.reasoning_summary_text.delta` | `response.reasoning_summary_part.done` / item done |
//! | `reasoning` content (`reasoning_text`) | `reasoning` | first `response.reasoning_text.delta` | `response.reasoning_text.delta` | item done |
//! | `function_call` item | `tool_call` | `response.output_item.added` | `response.function_call_arguments.delta` (`arguments`, JSON) | `response.output_item.done` |
//! | `mcp_call` item | `tool_call` | idem | `response.mcp_call_arguments.delta` (`arguments`, JSON) | idem |
//! | `custom_tool_call` item | `tool_call` (`input_format: "text"`) | idem | `response.custom_tool_call_input.delta` (`input`, free text, as `tool_args_delta`) | idem |
//! | `code_interpreter_call` item | `other` | idem | `response.code_interpreter_call_code.delta` (`code`, as `text_delta`) | idem |
//! | `shell_call` item | `other` | idem | — | idem |
//! | `shell_call` command `action.commands[i]` | `other` (`shell_command`; content: the command string) | `response.shell_call_command.added` (or first delta) | `response.shell_call_command.delta` | `response.shell_call_command.done` / item done |
//! | any other item | `other` | `response.output_item.added` | — | `response.output_item.done` |
//!
//! Argument streams: the payloads that are JSON arguments (function and
//! MCP calls) go through the arguments parser (`tool_args_delta`,
//! `tool_args_path`; ready when complete and valid), and `part_metadata`
//! gives `id` (`call_id`; an MCP call's item `id`) and `name`; an MCP call
//! is run by the provider (`provider_executed`). A custom tool's `input` is
//! free text (a grammar's output, not JSON): its call is a `tool_call` part
//! with `input_format: "text"`, whose input streams as `tool_args_delta`s
//! that are never parsed, ready at its `part_end` with outcome `complete`
//! (its content is the item with its `input`; its `tool_call.arguments` is
//! that text). The code interpreter's `code` is Python, run by the
//! provider: it streams as `text_delta`s of an `other` part. A shell call's
//! commands stream the same way, one `other` sub-part per command (the
//! item's part gets `id` metadata: its `call_id`). A shell call output's
//! `response.shell_call_output_content.*` events are carried through as
//! `unknown`: their item is whole at `response.output_item.done` (the SDK
//! folds none of these deltas either).
//!
//! **Media** (the folded `Response` is unchanged by them, as the SDK's):
//! each `response.image_generation_call.partial_image` is a `media` part
//! (`provider_type` `image_generation_call.partial_image`; MIME type from
//! `output_format`, default `image/png`; `part_metadata` `item_id` and
//! `partial_image_index`) holding that whole partial image, committed at
//! once (content: the event without `type` and `sequence_number`); the
//! final image is the item's `result`. The response audio —
//! `response.audio.delta` (base64) and `response.audio.transcript.delta` —
//! is one `media` part (`provider_type` `audio`, `audio/pcm`: streamed
//! audio is `pcm16`), its transcript as its text, committed when
//! `response.audio.done` and `response.audio.transcript.done` (of the
//! streams that started) have arrived (content: `{"data", "transcript"}`).
//!
//! `response.*.done` events for text and arguments carry the full text
//! again: not re-emitted. `response.output_item.done` replaces the folded
//! item with the provider's final item. Other event types (web search
//! progress, annotations, …) are carried through as `unknown` events.
//!
//! # The folded `Response`
//!
//! Its top-level members come from `response.created`, then
//! `response.in_progress` and the terminal event's `response` (all members
//! but `output`). Its `output` is:
//!
//! * the terminal event's `response.output` when it is a list (the SDK's
//!   rule: it carries the final items — final ids and statuses, reasoning
//!   `encrypted_content` re-encrypted, items whose `output_item.done` never
//!   came); for `response.completed`, `response.incomplete` and
//!   `response.failed` alike;
//! * else (absent or `null`, or no terminal event) the streamed items, each
//!   as its `response.output_item.done` gave it (the SDK's
//!   `_completed_output`), or as streamed so far when it never came.
//!
//! **Parts open at the terminal event.** At `response.completed` and
//! `response.incomplete`, an item still open whose final version is in the
//! terminal `output` (matched by the SDK's identity: type, `id` — not for
//! function and custom tool calls — and `call_id`) with status `completed`
//! (or none) is completed from it, as if its `output_item.done` had come:
//! the rest of each text and argument string is emitted as deltas (so the
//! deltas still add up to what is committed), then its parts are committed
//! (warning `part_not_ended` all the same). A tool call whose final
//! arguments are valid JSON is therefore **ready**: the server says the call
//! is complete, and the host would otherwise have to dig it out of the
//! message. Everything else open is committed as `incomplete`: an item
//! whose terminal status is not `completed` (cut by `max_output_tokens`),
//! an item missing from the terminal output, an item whose final text does
//! not extend what was streamed (warning `terminal_output_mismatch`), and
//! every open part at `response.failed` (a failed response's tool call is
//! never ready).
//!
//! **Usage rule**: the terminal event's `response.usage` replaces. A
//! `response.created` / `in_progress` / `queued` event with a `usage`
//! object gives a `usage` event (the running usage).
//!
//! Terminal events: `response.completed` and `response.incomplete`
//! (`turn_end`; stop reason `completed`, or `incomplete_details.reason`);
//! `response.failed` and `error` are provider errors. The `error` event's
//! error is nested as the live API sends it
//! (`{"type":"error","error":{"type","code","message","param"}}`) or flat
//! as the SDK's `ResponseErrorEvent` (`code`, `message` at the top): the
//! provider error's type is its `code`, else its `type`; its message, else
//! the SDK's "An error occurred during streaming".
//!
//! # Sequence numbers
//!
//! `sequence_number` (any non-negative integer, of any size) is the resume
//! cursor ([`super::Stream::resume_cursor`]: the highest applied; none when
//! it exceeds `u64`). On one connection every event is applied, in the
//! order it arrives, whatever its number (one numbered at or below the
//! highest: warning `out_of_order_event`). After [`super::Stream::reconnect`],
//! events of the new connection numbered at or below the cursor of the one
//! that dropped are replays: skipped (warning `duplicate_event`).
//!
//! # Events of the wrong shape
//!
//! A member of the wrong type (a non-string `delta`, a non-integer index or
//! `sequence_number`, a non-object `response`, a non-list terminal
//! `output`) is a warning `invalid_event`: an event that cannot be applied
//! without it is ignored, otherwise it is applied without that member (a
//! bad `sequence_number`: applied, not numbered). Data that is JSON but not
//! an object is ignored with the same warning.
//!
//! # Deliberate differences from the SDK
//!
//! ssefold folds what the SDK folds where the SDK produces a response, and
//! goes on where the SDK raises or loses content:
//!
//! * **An empty terminal `output` (`[]`) while items were streamed** keeps
//!   the streamed items; the SDK returns a response with no output at all
//!   (the live API always sends the full list; `[]` comes from
//!   OpenAI-compatible servers, whose answer the host has already shown).
//! * **`response.completed` with items neither done nor in the terminal
//!   output**: the SDK raises "Cannot complete response with unfinished
//!   output items"; ssefold commits them as `incomplete` (warning
//!   `part_not_ended`) and keeps them in `output` when the terminal output
//!   is absent.
//! * **A delta before its `content_part.added`, or content before
//!   `response.created`**: the SDK raises (`IndexError`, "Expected to have
//!   received `response.created`"); ssefold opens the part (or the
//!   response, warning `event_before_start`) and folds it.
//! * **Top-level members**: the SDK's final response is the terminal
//!   event's `response` alone; ssefold also keeps members only earlier
//!   lifecycle events sent (identical whenever the terminal event is
//!   complete, as the live API's is).
//! * **`response.incomplete` / `response.failed`**: `get_final_response()`
//!   raises ("Didn't receive a `response.completed` event"); ssefold's
//!   message is the folded response all the same (the SDK builds the same
//!   `output` for those events' `response`).
//! * **Errors and wrong shapes**: the SDK raises (`RuntimeError`,
//!   validation errors) on a lifecycle event whose response `id` changed,
//!   an item added twice, conflicting item identities, or a member of the
//!   wrong type; ssefold warns and folds what it can (bad input contract).
//! * **Replays**: the SDK applies every event it reads; ssefold skips
//!   events a resumed connection replays (by `sequence_number`, only after
//!   `reconnect`).
//!
//! Not copied either, though not a matter of robustness: a
//! `response.created` / `in_progress` / `queued` event's own `output`
//! (which the SDK uses to replace items already done, by identity) is
//! ignored; with a terminal `output`, the result is the same.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::events::WarningCode;
use super::events::{PartKind, ProviderError, StreamEvent, ToolInputFormat};
use super::fastpath::{is_object, Cursor, Seen};
use super::media;
use super::turn::{CallInit, Dialect, DialectInfo, Flow, Part, Turn, TurnState};
use super::view::JsonStr;
use super::{append_str, check_lone, parse_value, warn, MessageView, Provider, Sink, StreamError};
use crate::json::scan::{map_heap_bytes, value_heap_bytes};
use crate::sse::Event;

/// The members of an event the hot path reads, borrowed and unchecked: a
/// member of the wrong type never fails the whole event (see [`Head`]).
#[derive(Deserialize)]
struct RawHead<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<&'a RawValue>,
    #[serde(default, borrow)]
    output_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    content_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    summary_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    command_index: Option<&'a RawValue>,
    #[serde(default, borrow)]
    delta: Option<&'a RawValue>,
    #[serde(default, borrow)]
    sequence_number: Option<&'a RawValue>,
}

const OUTPUT_INDEX: u8 = 1;
const CONTENT_INDEX: u8 = 2;
const SUMMARY_INDEX: u8 = 4;
const DELTA: u8 = 8;
const SEQUENCE_NUMBER: u8 = 16;
const TYPE: u8 = 32;
const COMMAND_INDEX: u8 = 64;

/// The checked members: `None` when absent (or `null`) or of the wrong type;
/// `bad` says which were of the wrong type.
#[derive(Default, Debug, PartialEq)]
struct Head<'a> {
    ty: Cow<'a, str>,
    output_index: Option<u64>,
    content_index: Option<u64>,
    summary_index: Option<u64>,
    command_index: Option<u64>,
    delta: Option<JsonStr<'a>>,
    /// Any size: digits beyond `u128` saturate.
    sequence_number: Option<u128>,
    bad: u8,
}

impl<'a> Head<'a> {
    /// The head of an event: read from its exact bytes when written
    /// compactly ([`quick`](Self::quick)), else by serde_json; `None` when
    /// the data is not a JSON object, or names a member of the head twice.
    fn parse(data: &'a str) -> Option<Self> {
        if let Some(h) = Self::quick(data) {
            return Some(h);
        }
        Self::slow(data)
    }

    /// The fast path: a compact object whose head members are plain
    /// strings, unsigned integers of at most 18 digits or `null`, and whose
    /// other members are scalars or empty (`"logprobs":[]`), read with the
    /// [fast-path toolkit](super::fastpath); the same head serde_json gives
    /// ([`slow`](Self::slow)), or `None` (anything else, a member of the
    /// wrong type included: the slow path names it).
    fn quick(data: &'a str) -> Option<Self> {
        let mut h = Head::default();
        let mut seen = Seen::default();
        let mut c = Cursor::new(data);
        c.object(|key, c| {
            let bit = match key {
                "type" => TYPE,
                "output_index" => OUTPUT_INDEX,
                "content_index" => CONTENT_INDEX,
                "summary_index" => SUMMARY_INDEX,
                "command_index" => COMMAND_INDEX,
                "delta" => DELTA,
                "sequence_number" => SEQUENCE_NUMBER,
                _ => return c.skip().map(drop),
            };
            seen.first(u32::from(bit))?;
            if c.is_null()? {
                return Some(());
            }
            match bit {
                TYPE => h.ty = Cow::Borrowed(c.plain()?),
                OUTPUT_INDEX => h.output_index = Some(c.uint()?),
                CONTENT_INDEX => h.content_index = Some(c.uint()?),
                SUMMARY_INDEX => h.summary_index = Some(c.uint()?),
                COMMAND_INDEX => h.command_index = Some(c.uint()?),
                DELTA => h.delta = Some(c.string()?),
                _ => h.sequence_number = Some(u128::from(c.uint()?)),
            }
            Some(())
        })?;
        c.end()?;
        Some(h)
    }

    /// The slow path: any JSON object, by serde_json; a head member of the
    /// wrong type is `None` and flagged in `bad`.
    fn slow(data: &'a str) -> Option<Self> {
        // (A derived struct would also take an array, by position.)
        if !is_object(data.as_bytes()) {
            return None;
        }
        let raw: RawHead<'a> = serde_json::from_str(data).ok()?;
        let mut h = Head::default();
        let index = |r: Option<&RawValue>, bit: u8, bad: &mut u8| {
            let r = r?;
            let n = r.get().parse::<u64>().ok();
            if n.is_none() {
                *bad |= bit;
            }
            n
        };
        h.output_index = index(raw.output_index, OUTPUT_INDEX, &mut h.bad);
        h.content_index = index(raw.content_index, CONTENT_INDEX, &mut h.bad);
        h.summary_index = index(raw.summary_index, SUMMARY_INDEX, &mut h.bad);
        h.command_index = index(raw.command_index, COMMAND_INDEX, &mut h.bad);
        if let Some(r) = raw.delta {
            h.delta = JsonStr::from_raw(r.get());
            if h.delta.is_none() {
                h.bad |= DELTA;
            }
        }
        if let Some(r) = raw.sequence_number {
            let t = r.get();
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                h.sequence_number = Some(t.parse::<u128>().unwrap_or(u128::MAX));
            } else {
                h.bad |= SEQUENCE_NUMBER;
            }
        }
        if let Some(r) = raw.ty {
            match serde_json::from_str::<&'a str>(r.get()) {
                Ok(t) => h.ty = Cow::Borrowed(t),
                Err(_) => match serde_json::from_str::<String>(r.get()) {
                    Ok(t) => h.ty = Cow::Owned(t),
                    Err(_) => h.bad |= TYPE,
                },
            }
        }
        Some(h)
    }

    /// The names of the `bits` members that were of the wrong type.
    fn bad_names(&self, bits: u8) -> String {
        let names = [
            (OUTPUT_INDEX, "output_index"),
            (CONTENT_INDEX, "content_index"),
            (SUMMARY_INDEX, "summary_index"),
            (COMMAND_INDEX, "command_index"),
            (DELTA, "delta"),
            (SEQUENCE_NUMBER, "sequence_number"),
            (TYPE, "type"),
        ];
        let bad: Vec<&str> = names.iter().filter(|(b, _)| self.bad & bits & b != 0).map(|(_, n)| *n).collect();
        bad.join(", ")
    }
}

/// The member of an item whose text streams in deltas (`None`: nothing
/// streams into the item itself).
fn streamed_key(item_type: &str) -> Option<&'static str> {
    match item_type {
        "function_call" | "mcp_call" => Some("arguments"),
        "custom_tool_call" => Some("input"),
        "code_interpreter_call" => Some("code"),
        _ => None,
    }
}

/// The item type an item-level delta event streams into.
fn delta_item_type(event_type: &str) -> Option<&'static str> {
    match event_type {
        "response.function_call_arguments.delta" => Some("function_call"),
        "response.mcp_call_arguments.delta" => Some("mcp_call"),
        "response.custom_tool_call_input.delta" => Some("custom_tool_call"),
        "response.code_interpreter_call_code.delta" => Some("code_interpreter_call"),
        _ => None,
    }
}

/// An output item's identity, as the SDK matches streamed items with the
/// terminal event's `output`: its type, its `id` (not for calls, whose id
/// may be assigned late) and its `call_id`.
fn identity(item: &Map<String, Value>) -> (Option<&Value>, Option<&Value>, Option<&Value>) {
    let some = |k: &str| item.get(k).filter(|v| !v.is_null());
    let by_call = matches!(
        item.get("type").and_then(Value::as_str),
        Some("function_call" | "custom_tool_call" | "shell_call" | "shell_call_output")
    );
    (some("type"), if by_call { None } else { some("id") }, some("call_id"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Content(u64),
    Summary(u64),
    /// A `shell_call`'s `action.commands[i]`.
    Command(u64),
}

impl Slot {
    fn index(self) -> u64 {
        match self {
            Slot::Content(i) | Slot::Summary(i) | Slot::Command(i) => i,
        }
    }
}

/// A content or summary part of an item (its text and outcome live in the
/// turn's part; its [`Part::sub`] is its position in `subs` + 1).
#[derive(Debug)]
struct SubPart {
    slot: Slot,
    part: u32,
    base: Map<String, Value>,
}

impl SubPart {
    fn to_json(&self, part: &Part) -> Value {
        if let Slot::Command(_) = self.slot {
            return Value::String(part.text.clone());
        }
        let mut m = self.base.clone();
        let key = if part.kind == PartKind::Refusal { "refusal" } else { "text" };
        m.insert(key.into(), Value::String(part.text.clone()));
        Value::Object(m)
    }
}

#[derive(Debug)]
struct Item {
    output_index: u64,
    item: Map<String, Value>,
    /// The tool call / other part of the item itself ([`Part::sub`] 0).
    part: Option<u32>,
    subs: Vec<SubPart>,
    done: bool,
    /// The item's final version once done (`output_item.done`, or the
    /// terminal output's): the part's content and the message lend it.
    /// `null` before, and again once the terminal output is the fold.
    final_item: Value,
    /// The member the item's own part streams into ([`streamed_key`]).
    key: Option<&'static str>,
}

impl Item {
    fn to_json(&self, parts: &[Part]) -> Value {
        if self.done {
            return self.final_item.clone();
        }
        let mut m = self.item.clone();
        if let (Some(p), Some(key)) = (self.part, self.key) {
            let p = &parts[p as usize];
            if p.args.is_some() || !p.text.is_empty() || m.get(key).is_some_and(Value::is_string) {
                let text = p.args.as_ref().map_or(p.text.as_str(), |a| a.raw());
                m.insert(key.into(), Value::String(text.to_owned()));
            }
        }
        for which in 0..3 {
            let subs: Vec<&SubPart> = self
                .subs
                .iter()
                .filter(|s| match s.slot {
                    Slot::Content(_) => which == 0,
                    Slot::Summary(_) => which == 1,
                    Slot::Command(_) => which == 2,
                })
                .collect();
            if subs.is_empty() {
                continue;
            }
            // Where the list lives: `content`, `summary`, `action.commands`.
            let holder = if which == 2 {
                let action = m.entry("action").or_insert_with(|| Value::Object(Map::new()));
                if !action.is_object() {
                    *action = Value::Object(Map::new());
                }
                action.as_object_mut().expect("object")
            } else {
                &mut m
            };
            let key = ["content", "summary", "commands"][which];
            let mut list = match holder.get(key) {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            for s in subs {
                let i = s.slot.index() as usize;
                while list.len() <= i {
                    list.push(Value::Null);
                }
                list[i] = s.to_json(&parts[s.part as usize]);
            }
            holder.insert(key.into(), Value::Array(list));
        }
        Value::Object(m)
    }
}

/// The Responses dialect: events typed `response.*`, or an `error` event in
/// the Responses shape (numbered by `sequence_number`, its nested error with
/// `code` or `param`, or the flat form with code and message at the top;
/// Anthropic's nested error has none of these).
pub(crate) const DIALECT: DialectInfo = DialectInfo {
    provider: Provider::OpenAIResponses,
    name: "openai_responses",
    aliases: &["responses"],
    detects: |_, value| {
        let Some(v) = value else { return false };
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "error" {
            let nested = v.get("error").filter(|e| e.is_object());
            return v.get("sequence_number").is_some()
                || nested.is_none()
                || nested.is_some_and(|e| e.get("code").is_some() || e.get("param").is_some());
        }
        ty.starts_with("response.")
    },
    make: || Box::<ResponsesFold>::default(),
};

/// The OpenAI Responses fold.
#[derive(Debug, Default)]
pub(crate) struct ResponsesFold {
    response: Map<String, Value>,
    items: Vec<Item>,
    /// The terminal event's `response.output`, when it is authoritative:
    /// the folded `output` (else it is built from the streamed items).
    final_output: Option<Vec<Value>>,
    /// The highest `sequence_number` applied: the resume cursor.
    last_sequence_number: Option<u128>,
    /// After [`Dialect::on_reconnect`]: the cursor of the connection that
    /// dropped; events of the new connection numbered at or below it are
    /// replays, skipped.
    replay_floor: Option<u128>,
    /// The terminal event's stop reason.
    stop_reason: Option<String>,
    /// Media parts (partial images, the response audio).
    media: Vec<MediaSlot>,
    /// The response audio's part.
    audio: Option<u32>,
}

impl Dialect for ResponsesFold {
    fn provider(&self) -> Provider {
        Provider::OpenAIResponses
    }

    fn terminal(&self) -> &'static str {
        "response.completed"
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        let Some(head) = Head::parse(event.data()) else {
            return not_an_object(event, sink);
        };
        let ty: &str = if head.ty.is_empty() { event.event() } else { &head.ty };
        if !self.in_sequence(ty, &head, sink) {
            return Ok(Flow::Continue);
        }
        let uses = members_used(ty);
        if head.bad & uses != 0 {
            warn(
                sink,
                WarningCode::InvalidEvent,
                &format!("{ty}: {} of the wrong type; ignored", head.bad_names(uses)),
            );
            return Ok(Flow::Continue);
        }
        match ty {
            "response.output_text.delta"
            | "response.refusal.delta"
            | "response.reasoning_text.delta"
            | "response.reasoning_summary_text.delta" => self.on_text_delta(turn, ty, &head, sink)?,
            _ if delta_item_type(ty).is_some() => self.on_args(turn, ty, &head, sink)?,
            "response.shell_call_command.delta"
            | "response.shell_call_command.added"
            | "response.shell_call_command.done" => self.on_shell_command(turn, ty, &head, event, sink)?,
            "response.created" | "response.in_progress" | "response.queued" => {
                self.on_lifecycle(turn, ty, event, sink)?;
            }
            "response.output_item.added" => self.on_item_added(turn, event, sink)?,
            "response.output_item.done" => self.on_item_done(turn, event, sink)?,
            "response.content_part.added" | "response.reasoning_summary_part.added" => {
                self.on_part_added(turn, ty, &head, event, sink)?;
            }
            "response.content_part.done" | "response.reasoning_summary_part.done" => {
                self.on_part_done(turn, ty, &head, sink);
            }
            "response.output_text.done"
            | "response.refusal.done"
            | "response.reasoning_summary_text.done"
            | "response.reasoning_text.done"
            | "response.function_call_arguments.done"
            | "response.mcp_call_arguments.done"
            | "response.custom_tool_call_input.done"
            | "response.code_interpreter_call_code.done" => self.ensure_started(turn, ty, sink),
            "response.completed" | "response.incomplete" => return self.on_terminal(turn, ty, event, sink),
            "response.failed" | "error" => return self.on_failure(turn, ty, event, sink),
            "response.image_generation_call.partial_image"
            | "response.audio.delta"
            | "response.audio.transcript.delta"
            | "response.audio.done"
            | "response.audio.transcript.done" => self.on_media(turn, ty, event, sink)?,
            other => sink.event(&StreamEvent::Unknown { scope: "event", provider_type: other, data: event.data() }),
        }
        Ok(Flow::Continue)
    }

    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value> {
        let part = &parts[id as usize];
        if part.at == MEDIA_AT {
            return Cow::Owned(self.media_content(part));
        }
        let item = &self.items[part.at as usize];
        match part.sub {
            0 if item.done => Cow::Borrowed(&item.final_item),
            0 => Cow::Owned(item.to_json(parts)),
            n => Cow::Owned(item.subs[(n - 1) as usize].to_json(part)),
        }
    }

    /// The folded `Response`.
    fn message(&self, turn: &Turn) -> Value {
        if turn.state == TurnState::Idle {
            return Value::Null;
        }
        let mut m = self.response.clone();
        let output = match &self.final_output {
            Some(output) => output.clone(),
            None => {
                let mut order: Vec<&Item> = self.items.iter().collect();
                order.sort_by_key(|i| i.output_index);
                order.iter().map(|i| i.to_json(&turn.parts)).collect()
            }
        };
        m.insert("output".into(), Value::Array(output));
        Value::Object(m)
    }

    /// With the terminal `output`, the message is the response and that
    /// list, lent as they are held.
    fn message_view(&self, turn: &Turn) -> MessageView<'_> {
        match &self.final_output {
            Some(output) if turn.state != TurnState::Idle => {
                MessageView::Object { base: &self.response, key: "output", value: output }
            }
            _ => MessageView::Owned(self.message(turn)),
        }
    }

    fn footprint(&self) -> usize {
        let list = |l: &[Value]| l.len() * 32 + l.iter().map(value_heap_bytes).sum::<usize>();
        core::mem::size_of::<Self>()
            + map_heap_bytes(&self.response)
            + self.items.capacity() * core::mem::size_of::<Item>()
            + self
                .items
                .iter()
                .map(|i| {
                    map_heap_bytes(&i.item)
                        + value_heap_bytes(&i.final_item)
                        + i.subs.capacity() * core::mem::size_of::<SubPart>()
                        + i.subs.iter().map(|s| map_heap_bytes(&s.base)).sum::<usize>()
                })
                .sum::<usize>()
            + self.final_output.as_deref().map_or(0, list)
            + self.stop_reason.as_ref().map_or(0, String::capacity)
            + self
                .media
                .iter()
                .map(|m| match m {
                    MediaSlot::PartialImage(v) => value_heap_bytes(v),
                    MediaSlot::Audio { data, .. } => data.capacity(),
                } + core::mem::size_of::<MediaSlot>())
                .sum::<usize>()
    }

    fn on_turn_end(&mut self, _turn: &Turn, sink: &mut Sink<'_>) -> Option<String> {
        if let Some(u) = self.response.get("usage").filter(|u| u.is_object()) {
            sink.event(&StreamEvent::Usage { usage: u });
        }
        let reason = self.stop_reason.clone()?;
        sink.event(&StreamEvent::StopReason { choice: 0, reason: &reason });
        Some(reason)
    }

    fn is_restart(&self, ty: &str, _id: Option<&str>) -> bool {
        ty == "response.created"
    }

    fn last_sequence_number(&self) -> Option<u64> {
        // Beyond u64 it cannot be sent as `starting_after`: no cursor.
        self.last_sequence_number.and_then(|n| u64::try_from(n).ok())
    }

    fn on_reconnect(&mut self) {
        self.replay_floor = self.last_sequence_number;
    }
}

/// The event families, one method each ([`Dialect::on_event`] picks).
impl ResponsesFold {
    /// Before an event is applied: its delta's lone surrogates and its
    /// `sequence_number` and `type` of the wrong type warned about, its
    /// `sequence_number` checked (`false`: a replay after a reconnection,
    /// skipped).
    fn in_sequence(&mut self, ty: &str, head: &Head<'_>, sink: &mut Sink<'_>) -> bool {
        if let Some(delta) = &head.delta {
            check_lone(sink, ty, delta);
        }
        if head.bad & (SEQUENCE_NUMBER | TYPE) != 0 {
            let msg = format!("{ty}: {} of the wrong type; applied without it", head.bad_names(SEQUENCE_NUMBER | TYPE));
            warn(sink, WarningCode::InvalidEvent, &msg);
        }
        if let Some(seq) = head.sequence_number {
            if self.replay_floor.is_some_and(|floor| seq <= floor) {
                // A resumed server replaying from before the cursor: never twice.
                let msg = format!("{ty} with sequence_number {seq} already applied before the reconnection; skipped");
                warn(sink, WarningCode::DuplicateEvent, &msg);
                return false;
            }
            if let Some(last) = self.last_sequence_number.filter(|&last| seq <= last) {
                let msg = format!("{ty} with sequence_number {seq} after {last} on the same connection; applied");
                warn(sink, WarningCode::OutOfOrderEvent, &msg);
            }
            self.last_sequence_number = Some(self.last_sequence_number.map_or(seq, |last| last.max(seq)));
        }
        true
    }

    /// `response.output_text.delta`, `response.refusal.delta`,
    /// `response.reasoning_text.delta` (a content part's text) and
    /// `response.reasoning_summary_text.delta` (a summary part's).
    fn on_text_delta(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        head: &Head<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let (slot, kind) = match ty {
            "response.reasoning_summary_text.delta" => {
                (Slot::Summary(head.summary_index.unwrap_or(0)), PartKind::Reasoning)
            }
            "response.refusal.delta" => (Slot::Content(head.content_index.unwrap_or(0)), PartKind::Refusal),
            "response.output_text.delta" => (Slot::Content(head.content_index.unwrap_or(0)), PartKind::Text),
            _ => (Slot::Content(head.content_index.unwrap_or(0)), PartKind::Reasoning),
        };
        self.on_text(turn, ty, head.output_index, slot, kind, head.delta, sink)
    }

    /// `response.shell_call_command.added` / `.delta` / `.done`: a
    /// `shell_call`'s `action.commands[command_index]`, a sub-part of its
    /// item.
    fn on_shell_command(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        head: &Head<'_>,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let slot = Slot::Command(head.command_index.unwrap_or(0));
        match ty {
            "response.shell_call_command.delta" => {
                self.on_text(turn, ty, head.output_index, slot, PartKind::Other, head.delta, sink)?;
            }
            "response.shell_call_command.added" => {
                let v = parse_value(event, sink)?;
                self.ensure_started(turn, ty, sink);
                let mut base = Map::new();
                base.insert("type".into(), "shell_command".into());
                if let Some(c) = v.get("command").filter(|c| c.is_string()) {
                    base.insert("text".into(), c.clone());
                }
                self.sub_part(turn, ty, head.output_index, slot, PartKind::Other, Some(base), sink)?;
            }
            _ => {
                self.ensure_started(turn, ty, sink);
                self.commit_sub(turn, ty, head.output_index, slot, sink);
            }
        }
        Ok(())
    }

    /// `response.created` / `response.in_progress` / `response.queued`:
    /// the first starts the answer (`message_start`), later ones merge
    /// their `response` (a second `response.created` is ignored); the
    /// running usage where one is carried.
    fn on_lifecycle(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let v = parse_value(event, sink)?;
        if turn.begin() {
            self.merge_response(ty, &v, sink);
            let snapshot = self.message(turn);
            sink.event(&StreamEvent::MessageStart { provider: "openai_responses", message: &snapshot });
        } else if ty == "response.created" {
            warn(sink, WarningCode::DuplicateStart, "second response.created; ignored");
            return Ok(());
        } else {
            self.merge_response(ty, &v, sink);
        }
        // The running usage, where the lifecycle event carries one.
        if let Some(u) = v.pointer("/response/usage").filter(|u| u.is_object()) {
            sink.event(&StreamEvent::Usage { usage: u });
        }
        Ok(())
    }

    /// `response.completed` / `response.incomplete`: the terminal
    /// `response` merged, its `output` completing the items still open,
    /// the stop reason; the end of the turn (a stray one before any event
    /// is ignored, unless its `output` is a whole answer).
    fn on_terminal(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, StreamError> {
        let mut v = parse_value(event, sink)?;
        if turn.state == TurnState::Idle && !v.pointer("/response/output").is_some_and(Value::is_array) {
            // A stray terminal event: nothing to end yet. (One whose
            // `response` holds its `output` is a whole answer: folded.)
            warn(sink, WarningCode::TerminalBeforeStart, &format!("{ty} before response.created; ignored"));
            return Ok(Flow::Continue);
        }
        self.ensure_started(turn, ty, sink);
        self.merge_response(ty, &v, sink);
        self.take_final_output(ty, &mut v, sink);
        self.complete_from_final_output(turn, ty == "response.incomplete", sink)?;
        self.forget_done_items();
        for item in self.items.iter().filter(|i| !i.done) {
            let msg = format!("item {} not done at the terminal event; committed as incomplete", item.output_index);
            warn(sink, WarningCode::PartNotEnded, &msg);
        }
        let reason = match ty {
            "response.completed" => "completed",
            _ => v.pointer("/response/incomplete_details/reason").and_then(Value::as_str).unwrap_or("incomplete"),
        };
        self.stop_reason = Some(reason.to_owned());
        Ok(Flow::End)
    }

    /// `response.failed` / `error`: the provider error (a failed
    /// response's `response` merged first).
    fn on_failure(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, StreamError> {
        let mut v = parse_value(event, sink)?;
        self.ensure_started(turn, ty, sink);
        let err = if ty == "error" {
            // The live API nests the error (`{"type":"error","error":{…}}`);
            // the SDK's type puts it at the top level: both.
            match v.get("error") {
                Some(e @ Value::Object(_)) => e.clone(),
                _ => v.clone(),
            }
        } else {
            self.merge_response(ty, &v, sink);
            self.take_final_output(ty, &mut v, sink);
            self.forget_done_items();
            v.pointer("/response/error").cloned().unwrap_or(Value::Null)
        };
        let s = |k: &str| err.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        let request_id = s("request_id").or_else(|| v.get("request_id").and_then(Value::as_str).map(str::to_owned));
        Ok(Flow::Fail(ProviderError {
            error_type: s("code").or_else(|| s("type").filter(|t| t != "error")).unwrap_or_default(),
            message: s("message").unwrap_or_else(|| "An error occurred during streaming".to_owned()),
            request_id,
            output_emitted: turn.output_emitted(),
        }))
    }

    /// `response.image_generation_call.partial_image` and the response
    /// audio's `response.audio.*` events: media parts.
    fn on_media(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let v = parse_value(event, sink)?;
        self.ensure_started(turn, ty, sink);
        if ty == "response.image_generation_call.partial_image" {
            self.on_partial_image(turn, ty, v, sink)
        } else {
            self.on_audio(turn, ty, &v, sink)
        }
    }
}

/// An event whose data is valid JSON but no object (or an object with a
/// member twice): nothing to apply (invalid JSON is a stream error).
fn not_an_object(event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
    let v = parse_value(event, sink)?;
    let kind = match v {
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
        Value::Object(_) => "an object with a member twice",
    };
    warn(sink, WarningCode::InvalidEvent, &format!("{} event whose data is {kind}; ignored", event.event()));
    Ok(Flow::Continue)
}

/// The members of [`Head`] an event of type `ty` reads (bits): one of them
/// of the wrong type makes the event ignored.
fn members_used(ty: &str) -> u8 {
    match ty {
        "response.output_text.delta" | "response.refusal.delta" | "response.reasoning_text.delta" => {
            OUTPUT_INDEX | CONTENT_INDEX | DELTA
        }
        "response.reasoning_summary_text.delta" => OUTPUT_INDEX | SUMMARY_INDEX | DELTA,
        "response.content_part.added" | "response.content_part.done" => OUTPUT_INDEX | CONTENT_INDEX,
        "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done" => {
            OUTPUT_INDEX | SUMMARY_INDEX
        }
        _ if delta_item_type(ty).is_some() => OUTPUT_INDEX | DELTA,
        "response.shell_call_command.delta" => OUTPUT_INDEX | COMMAND_INDEX | DELTA,
        "response.shell_call_command.added" | "response.shell_call_command.done" => OUTPUT_INDEX | COMMAND_INDEX,
        _ => 0,
    }
}

/// [`Part::at`] of a media part (not an item's): its [`Part::sub`] is its
/// position in [`ResponsesFold::media`].
const MEDIA_AT: u32 = u32::MAX;

/// A media part of the response (a partial image, or the response audio):
/// what its `part_end` content is built from.
#[derive(Debug)]
enum MediaSlot {
    /// The `partial_image` event as received (released once committed).
    PartialImage(Value),
    /// The response audio: its base64 text so far, and which of its two
    /// streams (audio, transcript) started and finished.
    Audio { data: String, data_started: bool, data_done: bool, transcript_started: bool, transcript_done: bool },
}

impl ResponsesFold {
    /// The content of a media part: a partial image's event (without
    /// `type` and `sequence_number`), or the response audio as
    /// `{"data", "transcript"}`.
    fn media_content(&self, part: &Part) -> Value {
        match self.media.get(part.sub as usize) {
            Some(MediaSlot::PartialImage(v)) => {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut() {
                    m.shift_remove("type");
                    m.shift_remove("sequence_number");
                }
                v
            }
            Some(MediaSlot::Audio { data, .. }) => {
                serde_json::json!({"data": data, "transcript": part.text})
            }
            None => Value::Null,
        }
    }

    /// `response.image_generation_call.partial_image`: one `media` part per
    /// partial image (each is a whole image), committed at once; its MIME
    /// type from `output_format` (default `png`).
    fn on_partial_image(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        v: Value,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let Some(b64) = v.get("partial_image_b64").and_then(Value::as_str) else {
            warn(sink, WarningCode::InvalidEvent, &format!("{ty} without a string partial_image_b64; ignored"));
            return Ok(());
        };
        let mime = media::image_mime(v.get("output_format").and_then(Value::as_str).unwrap_or("png"));
        let index = v.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        let sub = self.media.len() as u32;
        let id = turn.open_media((MEDIA_AT, sub), 0, index, "image_generation_call.partial_image", &mime, sink)?;
        for key in ["item_id", "partial_image_index"] {
            if let Some(val) = v.get(key).filter(|x| !x.is_null()) {
                sink.event(&StreamEvent::PartMetadata { part: id, key, value: val });
            }
        }
        let b64 = b64.to_owned();
        self.media.push(MediaSlot::PartialImage(v));
        turn.append_base64(id, &b64, sink)?;
        turn.commit(self, id, false, sink);
        self.media[sub as usize] = MediaSlot::PartialImage(Value::Null);
        Ok(())
    }

    /// The response audio (`response.audio.delta` base64 bytes,
    /// `response.audio.transcript.delta` text): one `media` part
    /// (`audio/pcm`), committed once each of its started streams is done.
    fn on_audio(&mut self, turn: &mut Turn, ty: &str, v: &Value, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let delta = v.get("delta").and_then(Value::as_str);
        let is_delta = ty.ends_with(".delta");
        if is_delta && delta.is_none() {
            warn(sink, WarningCode::InvalidEvent, &format!("{ty} without a string delta; ignored"));
            return Ok(());
        }
        let id = match self.audio {
            Some(id) => id,
            None if !is_delta => return Ok(()),
            None => {
                let sub = self.media.len() as u32;
                let mime = media::audio_mime("pcm16");
                let id = turn.open_media((MEDIA_AT, sub), 0, 0, "audio", &mime, sink)?;
                self.media.push(MediaSlot::Audio {
                    data: String::new(),
                    data_started: false,
                    data_done: false,
                    transcript_started: false,
                    transcript_done: false,
                });
                *self.audio.insert(id)
            }
        };
        if !turn.parts[id as usize].is_open() {
            warn(sink, WarningCode::PartAlreadyEnded, &format!("{ty} after the audio part was committed; ignored"));
            return Ok(());
        }
        let sub = turn.parts[id as usize].sub as usize;
        let Some(MediaSlot::Audio { data, data_started, data_done, transcript_started, transcript_done }) =
            self.media.get_mut(sub)
        else {
            return Ok(());
        };
        match (ty, delta) {
            ("response.audio.delta", Some(d)) => {
                *data_started = true;
                data.push_str(d);
                turn.append_base64(id, d, sink)?;
            }
            ("response.audio.transcript.delta", Some(d)) => {
                *transcript_started = true;
                append_str(turn, id, d, sink)?;
            }
            ("response.audio.done", _) => *data_done = true,
            _ => *transcript_done = true,
        }
        if (*data_done || !*data_started) && (*transcript_done || !*transcript_started) && !is_delta {
            turn.commit(self, id, false, sink);
        }
        Ok(())
    }

    fn item_pos(&self, output_index: u64) -> Option<usize> {
        self.items.iter().rposition(|i| i.output_index == output_index)
    }

    fn ensure_started(&mut self, turn: &mut Turn, ty: &str, sink: &mut Sink<'_>) {
        if turn.begin() {
            warn(
                sink,
                WarningCode::EventBeforeStart,
                &format!("{ty} before response.created; response started implicitly"),
            );
            self.response.insert("object".into(), "response".into());
        }
    }

    fn merge_response(&mut self, ty: &str, v: &Value, sink: &mut Sink<'_>) {
        match v.get("response") {
            Some(Value::Object(r)) => {
                for (k, val) in r {
                    // `output` is the streamed items or the terminal one
                    // (`final_output`); keep its position only.
                    let val = if k == "output" { Value::Null } else { val.clone() };
                    self.response.insert(k.clone(), val);
                }
            }
            None | Some(Value::Null) => {}
            Some(_) => warn(sink, WarningCode::InvalidEvent, &format!("{ty}: response is not an object; not merged")),
        }
    }

    /// The terminal event's `output`, authoritative when it is a list: it
    /// carries the final items (ids, statuses, re-encrypted reasoning,
    /// items whose `output_item.done` never came). Absent or `null`: the
    /// streamed items are the fold. An empty list while items were streamed
    /// keeps the streamed items (a deliberate difference from the SDK).
    /// Moved out of the event (`v` is done with it).
    fn take_final_output(&mut self, ty: &str, v: &mut Value, sink: &mut Sink<'_>) {
        match v.pointer_mut("/response/output") {
            Some(Value::Array(a)) if !a.is_empty() || self.items.is_empty() => {
                self.final_output = Some(core::mem::take(a));
            }
            None | Some(Value::Null | Value::Array(_)) => {}
            Some(_) => warn(
                sink,
                WarningCode::InvalidEvent,
                &format!("{ty}: response.output is not a list; the streamed items kept"),
            ),
        }
    }

    /// Once the terminal `output` is the fold, a done item's own copy of
    /// its final version (its arguments, its texts: as large as the
    /// output's) is no longer read (every part of a done item is
    /// committed, and the message is the terminal output): it is dropped.
    fn forget_done_items(&mut self) {
        if self.final_output.is_none() {
            return;
        }
        for item in self.items.iter_mut().filter(|i| i.done) {
            item.final_item = Value::Null;
        }
    }

    /// At `response.completed` / `response.incomplete`: an item still open
    /// whose final version is in the terminal `output` (matched by identity,
    /// as the SDK does) with status `completed` (or none) is completed from
    /// it: the rest of each streamed text or argument string is emitted as
    /// deltas, then its parts are committed as if `output_item.done` had
    /// come (a tool call whose final arguments are valid JSON is ready).
    /// When the final text does not extend what was streamed, the item is
    /// left to be committed as `incomplete` (warning
    /// `terminal_output_mismatch`).
    fn complete_from_final_output(
        &mut self,
        turn: &mut Turn,
        incomplete: bool,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let Some(output) = self.final_output.take() else { return Ok(()) };
        let result = self.complete_items(turn, &output, incomplete, sink);
        self.final_output = Some(output);
        result
    }

    fn complete_items(
        &mut self,
        turn: &mut Turn,
        output: &[Value],
        incomplete: bool,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        for pos in 0..self.items.len() {
            let item = &self.items[pos];
            if item.done {
                continue;
            }
            let id = identity(&item.item);
            let Some(done) = output.iter().filter_map(Value::as_object).find(|f| identity(f) == id) else {
                continue;
            };
            let status = done.get("status").and_then(Value::as_str);
            if status.is_some_and(|s| s != "completed") {
                continue;
            }
            // The rest of each streamed string, or None when the final one
            // does not extend it.
            let mut rests: Vec<(u32, Option<String>)> = Vec::new();
            let final_str = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
            if let (Some(p), Some(key)) = (item.part, item.key) {
                let part = &turn.parts[p as usize];
                let streamed = part.args.as_ref().map_or(part.text.as_str(), |a| a.raw());
                let fin = final_str(done.get(key));
                rests.push((p, fin.strip_prefix(streamed).map(str::to_owned)));
            }
            for sp in &item.subs {
                let part = &turn.parts[sp.part as usize];
                let i = sp.slot.index() as usize;
                let key = if part.kind == PartKind::Refusal { "refusal" } else { "text" };
                let fin = match sp.slot {
                    Slot::Content(_) => final_str(done.get("content").and_then(|l| l.get(i)).and_then(|c| c.get(key))),
                    Slot::Summary(_) => final_str(done.get("summary").and_then(|l| l.get(i)).and_then(|c| c.get(key))),
                    Slot::Command(_) => {
                        final_str(done.get("action").and_then(|a| a.get("commands")).and_then(|l| l.get(i)))
                    }
                };
                rests.push((sp.part, fin.strip_prefix(part.text.as_str()).map(str::to_owned)));
            }
            if rests.iter().any(|(_, r)| r.is_none()) {
                let msg = format!(
                    "item {}: the terminal output's final text does not extend the streamed text; committed as incomplete",
                    item.output_index
                );
                warn(sink, WarningCode::TerminalOutputMismatch, &msg);
                continue;
            }
            let done = done.clone();
            let output_index = item.output_index;
            let msg = format!(
                "item {output_index} had no response.output_item.done{}; completed from the terminal output",
                if incomplete { " (response incomplete)" } else { "" }
            );
            warn(sink, WarningCode::PartNotEnded, &msg);
            for (p, rest) in rests {
                let rest = rest.unwrap_or_default();
                if rest.is_empty() || !turn.parts[p as usize].is_open() {
                    continue;
                }
                if turn.parts[p as usize].args.is_some() {
                    turn.push_args(p, rest.as_str(), sink)?;
                } else {
                    let total = turn.parts[p as usize].text.len() + rest.len();
                    turn.check_text(total)?;
                    turn.parts[p as usize].text.push_str(&rest);
                    sink.event(&StreamEvent::TextDelta { part: p, text: &rest });
                }
            }
            let subs: Vec<u32> = self.items[pos].subs.iter().map(|s| s.part).collect();
            for p in subs {
                turn.commit(self, p, false, sink);
            }
            let item = &mut self.items[pos];
            item.final_item = Value::Object(done);
            item.done = true;
            if let Some(part) = item.part {
                turn.commit_releasing_args(self, part, sink);
            }
        }
        Ok(())
    }

    /// An item-level delta: function or MCP call arguments (JSON, through
    /// the arguments parser), custom tool input or interpreter code (text).
    fn on_args(&mut self, turn: &mut Turn, ty: &str, head: &Head<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        self.ensure_started(turn, ty, sink);
        let Some(pos) = head.output_index.and_then(|i| self.item_pos(i)) else {
            warn(sink, WarningCode::UnknownPartIndex, &format!("{ty} for an item never added; ignored"));
            return Ok(());
        };
        let item = &self.items[pos];
        let fits = item.item.get("type").and_then(Value::as_str) == delta_item_type(ty);
        match (item.part, item.done) {
            (_, true) => {
                warn(sink, WarningCode::PartAlreadyEnded, &format!("{ty} after the item's done; ignored"));
                Ok(())
            }
            (Some(part), false) if fits && item.key.is_some() => {
                let delta = head.delta.unwrap_or_default();
                if turn.parts[part as usize].args.is_some() {
                    turn.push_args(part, &delta, sink)
                } else {
                    turn.append_text(part, &delta, sink)
                }
            }
            _ => {
                let want = delta_item_type(ty).unwrap_or("");
                warn(sink, WarningCode::DeltaTypeMismatch, &format!("{ty} on an item that is not a {want}; ignored"));
                Ok(())
            }
        }
    }

    fn on_part_added(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        head: &Head<'_>,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let v = parse_value(event, sink)?;
        self.ensure_started(turn, ty, sink);
        let slot = if ty == "response.content_part.added" {
            Slot::Content(head.content_index.unwrap_or(0))
        } else {
            Slot::Summary(head.summary_index.unwrap_or(0))
        };
        let base = match v.get("part") {
            Some(Value::Object(p)) => p.clone(),
            _ => Map::new(),
        };
        let kind = match base.get("type").and_then(Value::as_str) {
            Some("refusal") => PartKind::Refusal,
            Some("output_text") => PartKind::Text,
            _ if ty == "response.reasoning_summary_part.added" => PartKind::Reasoning,
            Some("reasoning_text") => PartKind::Reasoning,
            _ => PartKind::Other,
        };
        self.sub_part(turn, ty, head.output_index, slot, kind, Some(base), sink).map(|_| ())
    }

    fn on_part_done(&mut self, turn: &mut Turn, ty: &str, head: &Head<'_>, sink: &mut Sink<'_>) {
        self.ensure_started(turn, ty, sink);
        let slot = if ty == "response.content_part.done" {
            Slot::Content(head.content_index.unwrap_or(0))
        } else {
            Slot::Summary(head.summary_index.unwrap_or(0))
        };
        self.commit_sub(turn, ty, head.output_index, slot, sink);
    }

    /// Commits the sub-part `slot` of the item at `output_index` (its done event).
    fn commit_sub(&mut self, turn: &mut Turn, ty: &str, output_index: Option<u64>, slot: Slot, sink: &mut Sink<'_>) {
        let Some(pos) = output_index.and_then(|i| self.item_pos(i)) else {
            warn(sink, WarningCode::UnknownPartIndex, &format!("{ty} for an item never added; ignored"));
            return;
        };
        match self.items[pos].subs.iter().find(|s| s.slot == slot).map(|s| s.part) {
            Some(p) if turn.parts[p as usize].is_open() => turn.commit(self, p, false, sink),
            Some(_) => warn(sink, WarningCode::PartAlreadyEnded, &format!("second {ty}; ignored")),
            None => warn(sink, WarningCode::UnknownPartIndex, &format!("{ty} for a part never added; ignored")),
        }
    }

    /// Finds or opens the sub-part `slot` of the item at `output_index`: its part id.
    #[allow(clippy::too_many_arguments)]
    fn sub_part(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        output_index: Option<u64>,
        slot: Slot,
        kind: PartKind,
        base: Option<Map<String, Value>>,
        sink: &mut Sink<'_>,
    ) -> Result<Option<u32>, StreamError> {
        let Some(pos) = output_index.and_then(|i| self.item_pos(i)) else {
            warn(sink, WarningCode::UnknownPartIndex, &format!("{ty} for an item never added; ignored"));
            return Ok(None);
        };
        let sub_index = slot.index();
        if sub_index >= turn.config.max_parts as u64 {
            // The folded item lists sub-parts by index: refuse absurd ones.
            warn(
                sink,
                WarningCode::InvalidEvent,
                &format!("{ty} with part index {sub_index} beyond max_parts; ignored"),
            );
            return Ok(None);
        }
        let item = &mut self.items[pos];
        if item.done {
            warn(sink, WarningCode::PartAlreadyEnded, &format!("{ty} after the item's done; ignored"));
            return Ok(None);
        }
        if let Some(s) = item.subs.iter().find(|s| s.slot == slot) {
            if base.is_some() {
                warn(sink, WarningCode::DuplicatePartIndex, &format!("second {ty} for the same part; ignored"));
            }
            return Ok(Some(s.part));
        }
        let base = base.unwrap_or_else(|| {
            let mut m = Map::new();
            let t = match (kind, slot) {
                (PartKind::Refusal, _) => "refusal",
                (PartKind::Reasoning, Slot::Summary(_)) => "summary_text",
                (PartKind::Reasoning, Slot::Content(_)) => "reasoning_text",
                (_, Slot::Command(_)) => "shell_command",
                _ => "output_text",
            };
            m.insert("type".into(), t.into());
            m
        });
        let provider_type = base.get("type").and_then(Value::as_str).unwrap_or("");
        let sub = item.subs.len() as u32 + 1;
        let part = turn.open_part(kind, (pos as u32, sub), 0, sub_index, provider_type, sink)?;
        let text_key = if kind == PartKind::Refusal { "refusal" } else { "text" };
        turn.start_text(part, base.get(text_key).and_then(Value::as_str).unwrap_or(""), sink)?;
        item.subs.push(SubPart { slot, part, base });
        Ok(Some(part))
    }

    #[allow(clippy::too_many_arguments)]
    fn on_text(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        output_index: Option<u64>,
        slot: Slot,
        kind: PartKind,
        delta: Option<JsonStr<'_>>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        self.ensure_started(turn, ty, sink);
        let Some(part) = self.sub_part(turn, ty, output_index, slot, kind, None, sink)? else {
            return Ok(());
        };
        let p = &turn.parts[part as usize];
        if !p.is_open() {
            warn(sink, WarningCode::PartAlreadyEnded, &format!("{ty} after the part's done; ignored"));
            return Ok(());
        }
        if p.kind != kind {
            warn(sink, WarningCode::DeltaTypeMismatch, &format!("{ty} on a {} part; ignored", p.kind.name()));
            return Ok(());
        }
        turn.append_text(part, &delta.unwrap_or_default(), sink)
    }

    fn on_item_added(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let v = parse_value(event, sink)?;
        self.ensure_started(turn, "response.output_item.added", sink);
        let (Some(output_index), Some(Value::Object(item))) =
            (v.get("output_index").and_then(Value::as_u64), v.get("item"))
        else {
            warn(sink, WarningCode::InvalidEvent, "response.output_item.added without output_index or item; ignored");
            return Ok(());
        };
        if self.item_pos(output_index).is_some() {
            warn(sink, WarningCode::DuplicatePartIndex, &format!("item {output_index} added twice; ignored"));
            return Ok(());
        }
        if self.items.len() >= turn.config.max_parts {
            return Err(turn.parts_limit());
        }
        if output_index != self.items.len() as u64 {
            let msg = format!("item added at {output_index}, expected {}", self.items.len());
            warn(sink, WarningCode::UnexpectedPartIndex, &msg);
        }
        let ity = item.get("type").and_then(Value::as_str).unwrap_or("");
        let kind = match ity {
            "message" | "reasoning" => None,
            "function_call" | "mcp_call" | "custom_tool_call" => Some(PartKind::ToolCall),
            _ => Some(PartKind::Other),
        };
        let id_key = if ity == "mcp_call" { "id" } else { "call_id" };
        let pos = self.items.len() as u32;
        let key = streamed_key(ity);
        let mut it = Item {
            output_index,
            item: item.clone(),
            part: None,
            subs: Vec::new(),
            done: false,
            final_item: Value::Null,
            key,
        };
        if let Some(kind) = kind {
            let part = if kind == PartKind::ToolCall {
                let text = |k: &str| item.get(k).and_then(Value::as_str);
                let call = CallInit {
                    id: text(id_key),
                    name: text("name"),
                    format: if ity == "custom_tool_call" { ToolInputFormat::Text } else { ToolInputFormat::Json },
                    provider_executed: ity == "mcp_call",
                };
                turn.open_call((pos, 0), 0, output_index, ity, call, sink)?
            } else {
                turn.open_part(kind, (pos, 0), 0, output_index, ity, sink)?
            };
            it.part = Some(part);
            if matches!(ity, "function_call" | "mcp_call" | "custom_tool_call" | "shell_call") {
                for key in [id_key, "name"] {
                    if let Some(val) = item.get(key) {
                        let key = if key == "call_id" { "id" } else { key };
                        turn.call_metadata(part, key, val, sink);
                    }
                }
            }
            if let Some(a) = key.and_then(|k| item.get(k)).and_then(Value::as_str).filter(|a| !a.is_empty()) {
                if kind == PartKind::ToolCall {
                    turn.push_args(part, a, sink)?;
                } else {
                    turn.start_text(part, a, sink)?;
                }
            }
        }
        self.items.push(it);
        Ok(())
    }

    fn on_item_done(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let mut v = parse_value(event, sink)?;
        self.ensure_started(turn, "response.output_item.done", sink);
        let output_index = v.get("output_index").and_then(Value::as_u64);
        // Moved out of the event, not copied: it is the item's final version.
        let (Some(output_index), Some(Value::Object(done))) = (output_index, v.get_mut("item").map(Value::take)) else {
            warn(sink, WarningCode::InvalidEvent, "response.output_item.done without output_index or item; ignored");
            return Ok(());
        };
        let Some(pos) = self.item_pos(output_index) else {
            let msg = format!("response.output_item.done for item {output_index}, never added");
            warn(sink, WarningCode::UnknownPartIndex, &msg);
            return Ok(());
        };
        let item = &mut self.items[pos];
        if item.done {
            // As the SDK: the later done item is the one folded.
            let msg = format!("item {output_index} done twice; the later item replaces the first");
            warn(sink, WarningCode::PartAlreadyEnded, &msg);
            item.final_item = Value::Object(done);
            return Ok(());
        }
        // Arguments (input, code) only in the done item (no deltas): take them from there.
        if let (Some(part), Some(key)) = (item.part, item.key) {
            if let Some(a) = done.get(key).and_then(Value::as_str).filter(|a| !a.is_empty()) {
                let p = &turn.parts[part as usize];
                match &p.args {
                    Some(args) if args.raw().is_empty() => turn.push_args(part, a, sink)?,
                    None if p.text.is_empty() => turn.start_text(part, a, sink)?,
                    _ => {}
                }
            }
        }
        let subs: Vec<u32> = item.subs.iter().map(|s| s.part).collect();
        for p in subs {
            turn.commit(self, p, false, sink);
        }
        let item = &mut self.items[pos];
        item.final_item = Value::Object(done);
        item.done = true;
        if let Some(part) = item.part {
            turn.commit_releasing_args(self, part, sink);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path gives exactly serde_json's head, or declines.
    #[test]
    fn quick_head_is_serde_json_or_nothing() {
        let strings = crate::providers::view::TRICKY_JSON_STRINGS;
        let numbers =
            ["0", "7", "01", "-1", "1e2", "1.0", "null", "\"3\"", "123456789012345678", "1234567890123456789"];
        let mut docs = Vec::new();
        for v in strings {
            for n in numbers {
                for body in [
                    format!(
                        r#""type":"response.output_text.delta","sequence_number":{n},"item_id":"msg_1","output_index":0,"content_index":{n},"delta":{v},"logprobs":[]"#
                    ),
                    format!(
                        r#""type":"response.reasoning_summary_text.delta","summary_index":{n},"delta":{v},"obfuscation":{v}"#
                    ),
                    format!(r#""type":"response.function_call_arguments.delta","output_index":{n},"delta":{v}"#),
                    format!(
                        r#""type":"response.shell_call_command.added","command_index":{n},"command":{v},"ok":true"#
                    ),
                    format!(r#""type":{v},"sequence_number":{n},"x":{{}},"y":false"#),
                    format!(r#""type":"response.created","response":{{"id":{v}}},"sequence_number":{n}"#),
                    format!(r#""type":"response.output_text.delta","delta":{v},"delta":{v}"#),
                    format!(r#""type":null,"delta":null,"output_index":{n}"#),
                    format!(r#""delta":{n},"type":"error""#),
                ] {
                    docs.push(format!("{{{body}}}"));
                    docs.push(format!("{{{body}}} "));
                    docs.push(format!(" {{{body}}}"));
                    docs.push(format!("{{{body},\"sequence_number\":1}}"));
                    docs.push(format!("[{body}]"));
                }
            }
        }
        docs.push("{}".to_owned());
        docs.push("[]".to_owned());
        let mut quick = 0;
        for doc in &docs {
            if let Some(h) = Head::quick(doc) {
                quick += 1;
                assert_eq!(Some(h), Head::slow(doc), "{doc}");
            }
            assert_eq!(Head::parse(doc), Head::slow(doc), "{doc}");
        }
        // One document in five is compact; of those, the plain ones.
        assert!(quick > docs.len() / 20, "{quick} of {}", docs.len());
        let live = r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"Ab3"}"#;
        assert!(Head::quick(live).is_some_and(|h| h.delta.is_some() && h.sequence_number == Some(4)));
    }
}
