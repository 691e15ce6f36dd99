//! OpenAI Responses API streaming.
//!
//! Items are folded by `output_index`. Parts:
//!
//! | item / sub-part | part kind | opened by | text from | committed by |
//! | --- | --- | --- | --- | --- |
//! | `message` content `output_text` | `text` | `response.content_part.added` (or its first delta) | `response.output_text.delta` | `response.content_part.done` / `response.output_item.done` |
//! | `message` content `refusal` | `refusal` | idem | `response.refusal.delta` | idem |
//! | `reasoning` summary part | `reasoning` | `response.reasoning_summary_part.added` (or first delta) | `response.reasoning_summary_text.delta` | `response.reasoning_summary_part.done` / item done |
//! | `reasoning` content (`reasoning_text`) | `reasoning` | first `response.reasoning_text.delta` | `response.reasoning_text.delta` | item done |
//! | `function_call` item | `tool_call` | `response.output_item.added` | `response.function_call_arguments.delta` (arguments) | `response.output_item.done` |
//! | any other item | `other` | `response.output_item.added` | — | `response.output_item.done` |
//!
//! `response.*.done` events for text carry the full text again: not
//! re-emitted. `response.output_item.done` replaces the folded item with the
//! provider's final item. Other event types (web search progress,
//! annotations, …) are carried through as `unknown` events.
//!
//! The folded `Response` takes its top-level members from
//! `response.created`, then `response.in_progress` and the terminal
//! event's `response` (all members but `output`), and builds `output` from
//! the streamed items — complete even when the terminal event carries no
//! `output`.
//!
//! **Usage rule**: the terminal event's `response.usage` replaces.
//!
//! Terminal events: `response.completed` and `response.incomplete`
//! (`turn_end`; stop reason `completed`, or `incomplete_details.reason`);
//! `response.failed` and `error` are provider errors.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::args::{ArgsEnd, PushError, ToolArgs};
use super::events::{PartKind, PartOutcome, ProviderError, StreamEvent};
use super::view::JsonStr;
use super::FoldState as State;
use super::{parse_value, warn, Shared, Sink, StreamError};
use crate::sse::Event;

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Cow<'a, str>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    content_index: Option<u64>,
    #[serde(default)]
    summary_index: Option<u64>,
    #[serde(default, borrow)]
    delta: Option<JsonStr<'a>>,
    #[serde(default)]
    sequence_number: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Content(u64),
    Summary(u64),
}

#[derive(Debug)]
struct SubPart {
    slot: Slot,
    part: u32,
    kind: PartKind,
    base: Map<String, Value>,
    text: String,
    open: bool,
}

impl SubPart {
    fn to_json(&self) -> Value {
        let mut m = self.base.clone();
        let key = if self.kind == PartKind::Refusal { "refusal" } else { "text" };
        m.insert(key.into(), Value::String(self.text.clone()));
        Value::Object(m)
    }
}

#[derive(Debug)]
struct Item {
    output_index: u64,
    item: Map<String, Value>,
    /// The tool call / other part of the item itself.
    part: Option<(u32, PartKind)>,
    args: Option<ToolArgs>,
    subs: Vec<SubPart>,
    done: bool,
}

impl Item {
    fn to_json(&self) -> Value {
        let mut m = self.item.clone();
        if self.done {
            return Value::Object(m);
        }
        if let Some(args) = &self.args {
            m.insert("arguments".into(), Value::String(args.raw().to_owned()));
        }
        for (key, is) in [("content", true), ("summary", false)] {
            let subs: Vec<&SubPart> = self.subs.iter().filter(|s| matches!(s.slot, Slot::Content(_)) == is).collect();
            if subs.is_empty() {
                continue;
            }
            let mut list = match m.get(key) {
                Some(Value::Array(a)) => a.clone(),
                _ => Vec::new(),
            };
            for s in subs {
                let i = match s.slot {
                    Slot::Content(i) | Slot::Summary(i) => i as usize,
                };
                while list.len() <= i {
                    list.push(Value::Null);
                }
                list[i] = s.to_json();
            }
            m.insert(key.into(), Value::Array(list));
        }
        Value::Object(m)
    }
}

/// The OpenAI Responses fold.
#[derive(Debug, Default)]
pub(crate) struct ResponsesFold {
    state: State,
    response: Map<String, Value>,
    items: Vec<Item>,
    /// The highest `sequence_number` applied: the resume cursor, and how
    /// events replayed after a resume are recognised and skipped.
    last_sequence_number: Option<u64>,
}

impl ResponsesFold {
    pub(crate) fn is_terminated(&self) -> bool {
        matches!(self.state, State::Done | State::Errored)
    }

    /// The highest `sequence_number` applied so far.
    pub(crate) fn last_sequence_number(&self) -> Option<u64> {
        self.last_sequence_number
    }

    pub(crate) fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + self
                .items
                .iter()
                .map(|i| {
                    core::mem::size_of::<Item>()
                        + i.args.as_ref().map_or(0, ToolArgs::capacity)
                        + i.subs.iter().map(|s| core::mem::size_of::<SubPart>() + s.text.capacity()).sum::<usize>()
                })
                .sum::<usize>()
    }

    /// The folded `Response`.
    pub(crate) fn message(&self) -> Value {
        if self.state == State::Idle {
            return Value::Null;
        }
        let mut m = self.response.clone();
        let mut order: Vec<&Item> = self.items.iter().collect();
        order.sort_by_key(|i| i.output_index);
        m.insert("output".into(), Value::Array(order.iter().map(|i| i.to_json()).collect()));
        Value::Object(m)
    }

    fn item_pos(&self, output_index: u64) -> Option<usize> {
        self.items.iter().rposition(|i| i.output_index == output_index)
    }

    fn ensure_started(&mut self, ty: &str, sink: &mut Sink<'_>) {
        if self.state == State::Idle {
            warn(sink, "event_before_start", &format!("{ty} before response.created; response started implicitly"));
            self.state = State::Streaming;
            self.response.insert("object".into(), "response".into());
        }
    }

    fn merge_response(&mut self, v: &Value) {
        if let Some(Value::Object(r)) = v.get("response") {
            for (k, val) in r {
                // `output` is rebuilt from the streamed items; keep its position only.
                let val = if k == "output" { Value::Null } else { val.clone() };
                self.response.insert(k.clone(), val);
            }
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
        let head: Head<'_> = match serde_json::from_str(event.data()) {
            Ok(h) => h,
            Err(_) => {
                // Valid JSON of another shape (e.g. a non-string delta): generic path.
                let v = parse_value(event)?;
                let ty = v.get("type").and_then(Value::as_str).unwrap_or(event.event());
                sink(&StreamEvent::Unknown { scope: "event", provider_type: ty, data: event.data() });
                return Ok(());
            }
        };
        let ty: &str = if head.ty.is_empty() { event.event() } else { &head.ty };
        if let Some(seq) = head.sequence_number {
            if self.last_sequence_number.is_some_and(|last| seq <= last) {
                // A server that resumed replays from the cursor: never twice.
                let msg = format!("{ty} with sequence_number {seq} already applied; skipped");
                warn(sink, "duplicate_event", &msg);
                return Ok(());
            }
            self.last_sequence_number = Some(seq);
        }
        match ty {
            "response.output_text.delta" | "response.refusal.delta" => {
                let kind = if ty == "response.refusal.delta" { PartKind::Refusal } else { PartKind::Text };
                let slot = Slot::Content(head.content_index.unwrap_or(0));
                self.on_text(ty, head.output_index, slot, kind, head.delta, shared, sink)
            }
            "response.reasoning_summary_text.delta" => {
                let slot = Slot::Summary(head.summary_index.unwrap_or(0));
                self.on_text(ty, head.output_index, slot, PartKind::Reasoning, head.delta, shared, sink)
            }
            "response.reasoning_text.delta" => {
                let slot = Slot::Content(head.content_index.unwrap_or(0));
                self.on_text(ty, head.output_index, slot, PartKind::Reasoning, head.delta, shared, sink)
            }
            "response.function_call_arguments.delta" => {
                self.ensure_started(ty, sink);
                let Some(pos) = head.output_index.and_then(|i| self.item_pos(i)) else {
                    warn(sink, "unknown_part_index", &format!("{ty} for an item never added; ignored"));
                    return Ok(());
                };
                let item = &mut self.items[pos];
                match (&mut item.args, item.part, item.done) {
                    (Some(args), Some((part, _)), false) => {
                        let max = shared.config.max_tool_args_bytes;
                        let frag = head.delta.unwrap_or_default();
                        args.push(&frag, part, max, sink).map_err(|PushError::TooLarge| shared.args_limit())
                    }
                    (_, _, true) => {
                        warn(sink, "part_already_ended", &format!("{ty} after the item's done; ignored"));
                        Ok(())
                    }
                    _ => {
                        warn(
                            sink,
                            "delta_type_mismatch",
                            &format!("{ty} on an item that is not a function call; ignored"),
                        );
                        Ok(())
                    }
                }
            }
            "response.created" | "response.in_progress" | "response.queued" => {
                let v = parse_value(event)?;
                if self.state == State::Idle {
                    self.state = State::Streaming;
                    self.merge_response(&v);
                    let snapshot = self.message();
                    sink(&StreamEvent::MessageStart { provider: "openai_responses", message: &snapshot });
                } else if ty == "response.created" {
                    warn(sink, "duplicate_start", "second response.created; ignored");
                } else {
                    self.merge_response(&v);
                }
                Ok(())
            }
            "response.output_item.added" => self.on_item_added(event, shared, sink),
            "response.output_item.done" => self.on_item_done(event, shared, sink),
            "response.content_part.added" | "response.reasoning_summary_part.added" => {
                let v = parse_value(event)?;
                self.ensure_started(ty, sink);
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
                self.sub_part(ty, head.output_index, slot, kind, Some(base), shared, sink).map(|_| ())
            }
            "response.content_part.done" | "response.reasoning_summary_part.done" => {
                self.ensure_started(ty, sink);
                let slot = if ty == "response.content_part.done" {
                    Slot::Content(head.content_index.unwrap_or(0))
                } else {
                    Slot::Summary(head.summary_index.unwrap_or(0))
                };
                let Some(pos) = head.output_index.and_then(|i| self.item_pos(i)) else {
                    warn(sink, "unknown_part_index", &format!("{ty} for an item never added; ignored"));
                    return Ok(());
                };
                match self.items[pos].subs.iter_mut().find(|s| s.slot == slot) {
                    Some(s) if s.open => commit_sub(s, false, sink),
                    Some(_) => warn(sink, "part_already_ended", &format!("second {ty}; ignored")),
                    None => warn(sink, "unknown_part_index", &format!("{ty} for a part never added; ignored")),
                }
                Ok(())
            }
            "response.output_text.done"
            | "response.refusal.done"
            | "response.reasoning_summary_text.done"
            | "response.reasoning_text.done"
            | "response.function_call_arguments.done" => {
                self.ensure_started(ty, sink);
                Ok(())
            }
            "response.completed" | "response.incomplete" => {
                let v = parse_value(event)?;
                self.ensure_started(ty, sink);
                self.merge_response(&v);
                self.close_open(true, sink);
                self.state = State::Done;
                let reason = if ty == "response.completed" {
                    "completed".to_owned()
                } else {
                    v.pointer("/response/incomplete_details/reason")
                        .and_then(Value::as_str)
                        .unwrap_or("incomplete")
                        .to_owned()
                };
                if let Some(u) = self.response.get("usage").filter(|u| u.is_object()) {
                    sink(&StreamEvent::Usage { usage: u });
                }
                sink(&StreamEvent::StopReason { choice: 0, reason: &reason });
                sink(&StreamEvent::TurnEnd { stop_reason: Some(&reason) });
                Ok(())
            }
            "response.failed" | "error" => {
                let v = parse_value(event)?;
                self.ensure_started(ty, sink);
                self.merge_response(&v);
                let err = if ty == "error" {
                    v.clone()
                } else {
                    v.pointer("/response/error").cloned().unwrap_or(Value::Null)
                };
                let s = |k: &str| err.get(k).and_then(Value::as_str).map(str::to_owned);
                let pe = ProviderError {
                    error_type: s("code").or_else(|| s("type").filter(|t| t != "error")).unwrap_or_default(),
                    message: s("message").unwrap_or_default(),
                    request_id: s("request_id"),
                    output_emitted: shared.output_emitted(),
                };
                self.close_open(false, sink);
                self.state = State::Errored;
                sink(&StreamEvent::Error { error: &pe });
                Err(StreamError::Provider(pe))
            }
            other => {
                sink(&StreamEvent::Unknown { scope: "event", provider_type: other, data: event.data() });
                Ok(())
            }
        }
    }

    /// Finds or opens the sub-part `slot` of the item at `output_index`.
    #[allow(clippy::too_many_arguments)]
    fn sub_part(
        &mut self,
        ty: &str,
        output_index: Option<u64>,
        slot: Slot,
        kind: PartKind,
        base: Option<Map<String, Value>>,
        shared: &mut Shared,
        sink: &mut Sink<'_>,
    ) -> Result<Option<(usize, usize)>, StreamError> {
        let Some(pos) = output_index.and_then(|i| self.item_pos(i)) else {
            warn(sink, "unknown_part_index", &format!("{ty} for an item never added; ignored"));
            return Ok(None);
        };
        let (Slot::Content(sub_index) | Slot::Summary(sub_index)) = slot;
        if sub_index >= shared.config.max_parts as u64 {
            // The folded item lists sub-parts by index: refuse absurd ones.
            warn(sink, "invalid_event", &format!("{ty} with part index {sub_index} beyond max_parts; ignored"));
            return Ok(None);
        }
        let item = &mut self.items[pos];
        if item.done {
            warn(sink, "part_already_ended", &format!("{ty} after the item's done; ignored"));
            return Ok(None);
        }
        if let Some(i) = item.subs.iter().position(|s| s.slot == slot) {
            if base.is_some() {
                warn(sink, "duplicate_part_index", &format!("second {ty} for the same part; ignored"));
            }
            return Ok(Some((pos, i)));
        }
        let base = base.unwrap_or_else(|| {
            let mut m = Map::new();
            let t = match (kind, slot) {
                (PartKind::Refusal, _) => "refusal",
                (PartKind::Reasoning, Slot::Summary(_)) => "summary_text",
                (PartKind::Reasoning, Slot::Content(_)) => "reasoning_text",
                _ => "output_text",
            };
            m.insert("type".into(), t.into());
            m
        });
        let part = shared.new_part()?;
        let provider_type = base.get("type").and_then(Value::as_str).unwrap_or("");
        let index = match slot {
            Slot::Content(i) | Slot::Summary(i) => i,
        };
        sink(&StreamEvent::PartStart { part, kind, choice: 0, index, provider_type });
        let text_key = if kind == PartKind::Refusal { "refusal" } else { "text" };
        let text = base.get(text_key).and_then(Value::as_str).unwrap_or("").to_owned();
        if !text.is_empty() {
            sink(&StreamEvent::TextDelta { part, text: &text });
        }
        item.subs.push(SubPart { slot, part, kind, base, text, open: true });
        Ok(Some((pos, item.subs.len() - 1)))
    }

    #[allow(clippy::too_many_arguments)]
    fn on_text(
        &mut self,
        ty: &str,
        output_index: Option<u64>,
        slot: Slot,
        kind: PartKind,
        delta: Option<JsonStr<'_>>,
        shared: &mut Shared,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        self.ensure_started(ty, sink);
        let Some((pos, i)) = self.sub_part(ty, output_index, slot, kind, None, shared, sink)? else {
            return Ok(());
        };
        let sub = &mut self.items[pos].subs[i];
        if !sub.open {
            warn(sink, "part_already_ended", &format!("{ty} after the part's done; ignored"));
            return Ok(());
        }
        if sub.kind != kind {
            warn(sink, "delta_type_mismatch", &format!("{ty} on a {} part; ignored", sub.kind.name()));
            return Ok(());
        }
        if let Some(text) = delta.filter(|t| !t.is_empty()) {
            let text = shared.append_text(&mut sub.text, &text)?;
            sink(&StreamEvent::TextDelta { part: sub.part, text });
        }
        Ok(())
    }

    fn on_item_added(
        &mut self,
        event: &Event<'_>,
        shared: &mut Shared,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let v = parse_value(event)?;
        self.ensure_started("response.output_item.added", sink);
        let (Some(output_index), Some(Value::Object(item))) =
            (v.get("output_index").and_then(Value::as_u64), v.get("item"))
        else {
            warn(sink, "invalid_event", "response.output_item.added without output_index or item; ignored");
            return Ok(());
        };
        if self.item_pos(output_index).is_some() {
            warn(sink, "duplicate_part_index", &format!("item {output_index} added twice; ignored"));
            return Ok(());
        }
        if self.items.len() >= shared.config.max_parts {
            return Err(StreamError::LimitExceeded { limit: "max_parts", max: shared.config.max_parts });
        }
        if output_index != self.items.len() as u64 {
            warn(
                sink,
                "unexpected_part_index",
                &format!("item added at {output_index}, expected {}", self.items.len()),
            );
        }
        let ity = item.get("type").and_then(Value::as_str).unwrap_or("");
        let kind = match ity {
            "message" | "reasoning" => None,
            "function_call" => Some(PartKind::ToolCall),
            _ => Some(PartKind::Other),
        };
        let mut it = Item { output_index, item: item.clone(), part: None, args: None, subs: Vec::new(), done: false };
        if let Some(kind) = kind {
            let part = shared.new_part()?;
            sink(&StreamEvent::PartStart { part, kind, choice: 0, index: output_index, provider_type: ity });
            it.part = Some((part, kind));
            if kind == PartKind::ToolCall {
                for key in ["call_id", "name"] {
                    if let Some(val) = item.get(key) {
                        let key = if key == "call_id" { "id" } else { key };
                        sink(&StreamEvent::PartMetadata { part, key, value: val });
                    }
                }
                let mut args = ToolArgs::new();
                if let Some(a) = item.get("arguments").and_then(Value::as_str).filter(|a| !a.is_empty()) {
                    args.push(a, part, shared.config.max_tool_args_bytes, sink)
                        .map_err(|PushError::TooLarge| shared.args_limit())?;
                }
                it.args = Some(args);
            }
        }
        self.items.push(it);
        Ok(())
    }

    fn on_item_done(&mut self, event: &Event<'_>, shared: &mut Shared, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let v = parse_value(event)?;
        self.ensure_started("response.output_item.done", sink);
        let (Some(output_index), Some(Value::Object(done))) =
            (v.get("output_index").and_then(Value::as_u64), v.get("item"))
        else {
            warn(sink, "invalid_event", "response.output_item.done without output_index or item; ignored");
            return Ok(());
        };
        let Some(pos) = self.item_pos(output_index) else {
            warn(
                sink,
                "unknown_part_index",
                &format!("response.output_item.done for item {output_index}, never added"),
            );
            return Ok(());
        };
        let item = &mut self.items[pos];
        if item.done {
            warn(sink, "part_already_ended", &format!("item {output_index} done twice; ignored"));
            return Ok(());
        }
        // Arguments only in the done item (no deltas): take them from there.
        if let (Some(args), Some((part, _))) = (&mut item.args, item.part) {
            if args.raw().is_empty() {
                if let Some(a) = done.get("arguments").and_then(Value::as_str) {
                    args.push(a, part, shared.config.max_tool_args_bytes, sink)
                        .map_err(|PushError::TooLarge| shared.args_limit())?;
                }
            }
        }
        for s in item.subs.iter_mut().filter(|s| s.open) {
            commit_sub(s, false, sink);
        }
        item.item = done.clone();
        item.done = true;
        commit_item(item, false, sink);
        Ok(())
    }

    fn close_open(&mut self, warn_open: bool, sink: &mut Sink<'_>) {
        for item in self.items.iter_mut().filter(|i| !i.done) {
            if warn_open {
                let msg = format!("item {} not done at the terminal event; committed as incomplete", item.output_index);
                warn(sink, "part_not_ended", &msg);
            }
            for s in item.subs.iter_mut().filter(|s| s.open) {
                commit_sub(s, true, sink);
            }
            commit_item(item, true, sink);
        }
    }

    /// Ends the turn on a provider error reported outside the JSON events.
    pub(crate) fn fail(&mut self, sink: &mut Sink<'_>) {
        self.close_open(false, sink);
        self.state = State::Errored;
    }

    pub(crate) fn finish(&mut self, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        if self.is_terminated() {
            return Ok(());
        }
        self.close_open(false, sink);
        Err(StreamError::Incomplete { expected: "response.completed" })
    }
}

fn commit_sub(s: &mut SubPart, cut: bool, sink: &mut Sink<'_>) {
    s.open = false;
    let content = s.to_json();
    let outcome = if cut { PartOutcome::Incomplete } else { PartOutcome::Complete };
    sink(&StreamEvent::PartEnd { part: s.part, kind: s.kind, outcome, content: &content });
}

/// Commits the item's own part (tool call or other), if it has one and it is open.
fn commit_item(item: &mut Item, cut: bool, sink: &mut Sink<'_>) {
    let Some((part, kind)) = item.part.take() else { return };
    let mut error = None;
    if let Some(args) = item.args.as_mut() {
        match args.finish() {
            ArgsEnd::Empty | ArgsEnd::Valid => {}
            ArgsEnd::Invalid(e) => error = Some(e),
        }
    }
    let content = item.to_json();
    let outcome = match (&error, cut) {
        (_, true) => PartOutcome::Incomplete,
        (Some(e), false) => {
            PartOutcome::InvalidArguments { error: e, raw: item.args.as_ref().map_or("", ToolArgs::raw) }
        }
        (None, false) => PartOutcome::Complete,
    };
    sink(&StreamEvent::PartEnd { part, kind, outcome, content: &content });
}
