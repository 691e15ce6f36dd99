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

use super::events::{PartKind, ProviderError, StreamEvent};
use super::turn::{Dialect, Flow, Part, Turn, TurnState};
use super::view::JsonStr;
use super::{parse_value, warn, Provider, Sink, StreamError};
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
}

impl Item {
    fn to_json(&self, parts: &[Part]) -> Value {
        let mut m = self.item.clone();
        if self.done {
            return Value::Object(m);
        }
        if let Some(args) = self.part.and_then(|p| parts[p as usize].args.as_ref()) {
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
                list[i] = s.to_json(&parts[s.part as usize]);
            }
            m.insert(key.into(), Value::Array(list));
        }
        Value::Object(m)
    }
}

/// The OpenAI Responses fold.
#[derive(Debug, Default)]
pub(crate) struct ResponsesFold {
    response: Map<String, Value>,
    items: Vec<Item>,
    /// The highest `sequence_number` applied: the resume cursor, and how
    /// events replayed after a resume are recognised and skipped.
    last_sequence_number: Option<u64>,
    /// The terminal event's stop reason.
    stop_reason: Option<String>,
}

impl Dialect for ResponsesFold {
    fn provider(&self) -> Provider {
        Provider::OpenAIResponses
    }

    fn terminal(&self) -> &'static str {
        "response.completed"
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        let head: Head<'_> = match serde_json::from_str(event.data()) {
            Ok(h) => h,
            Err(_) => {
                // Valid JSON of another shape (e.g. a non-string delta): generic path.
                let v = parse_value(event)?;
                let ty = v.get("type").and_then(Value::as_str).unwrap_or(event.event());
                sink(&StreamEvent::Unknown { scope: "event", provider_type: ty, data: event.data() });
                return Ok(Flow::Continue);
            }
        };
        let ty: &str = if head.ty.is_empty() { event.event() } else { &head.ty };
        if let Some(seq) = head.sequence_number {
            if self.last_sequence_number.is_some_and(|last| seq <= last) {
                // A server that resumed replays from the cursor: never twice.
                let msg = format!("{ty} with sequence_number {seq} already applied; skipped");
                warn(sink, "duplicate_event", &msg);
                return Ok(Flow::Continue);
            }
            self.last_sequence_number = Some(seq);
        }
        match ty {
            "response.output_text.delta" | "response.refusal.delta" | "response.reasoning_text.delta" => {
                let kind = match ty {
                    "response.refusal.delta" => PartKind::Refusal,
                    "response.output_text.delta" => PartKind::Text,
                    _ => PartKind::Reasoning,
                };
                let slot = Slot::Content(head.content_index.unwrap_or(0));
                self.on_text(turn, ty, head.output_index, slot, kind, head.delta, sink)?;
            }
            "response.reasoning_summary_text.delta" => {
                let slot = Slot::Summary(head.summary_index.unwrap_or(0));
                self.on_text(turn, ty, head.output_index, slot, PartKind::Reasoning, head.delta, sink)?;
            }
            "response.function_call_arguments.delta" => self.on_args(turn, ty, &head, sink)?,
            "response.created" | "response.in_progress" | "response.queued" => {
                let v = parse_value(event)?;
                if turn.begin() {
                    self.merge_response(&v);
                    let snapshot = self.message(turn);
                    sink(&StreamEvent::MessageStart { provider: "openai_responses", message: &snapshot });
                } else if ty == "response.created" {
                    warn(sink, "duplicate_start", "second response.created; ignored");
                } else {
                    self.merge_response(&v);
                }
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
            | "response.function_call_arguments.done" => self.ensure_started(turn, ty, sink),
            "response.completed" | "response.incomplete" => {
                let v = parse_value(event)?;
                self.ensure_started(turn, ty, sink);
                self.merge_response(&v);
                for item in self.items.iter().filter(|i| !i.done) {
                    let msg =
                        format!("item {} not done at the terminal event; committed as incomplete", item.output_index);
                    warn(sink, "part_not_ended", &msg);
                }
                let reason = match ty {
                    "response.completed" => "completed",
                    _ => {
                        v.pointer("/response/incomplete_details/reason").and_then(Value::as_str).unwrap_or("incomplete")
                    }
                };
                self.stop_reason = Some(reason.to_owned());
                return Ok(Flow::End);
            }
            "response.failed" | "error" => {
                let v = parse_value(event)?;
                self.ensure_started(turn, ty, sink);
                self.merge_response(&v);
                let err = if ty == "error" {
                    v.clone()
                } else {
                    v.pointer("/response/error").cloned().unwrap_or(Value::Null)
                };
                let s = |k: &str| err.get(k).and_then(Value::as_str).map(str::to_owned);
                return Ok(Flow::Fail(ProviderError {
                    error_type: s("code").or_else(|| s("type").filter(|t| t != "error")).unwrap_or_default(),
                    message: s("message").unwrap_or_default(),
                    request_id: s("request_id"),
                    output_emitted: turn.output_emitted(),
                }));
            }
            other => sink(&StreamEvent::Unknown { scope: "event", provider_type: other, data: event.data() }),
        }
        Ok(Flow::Continue)
    }

    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value> {
        let part = &parts[id as usize];
        let item = &self.items[part.at as usize];
        Cow::Owned(match part.sub {
            0 => item.to_json(parts),
            n => item.subs[(n - 1) as usize].to_json(part),
        })
    }

    /// The folded `Response`.
    fn message(&self, turn: &Turn) -> Value {
        if turn.state == TurnState::Idle {
            return Value::Null;
        }
        let mut m = self.response.clone();
        let mut order: Vec<&Item> = self.items.iter().collect();
        order.sort_by_key(|i| i.output_index);
        m.insert("output".into(), Value::Array(order.iter().map(|i| i.to_json(&turn.parts)).collect()));
        Value::Object(m)
    }

    fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + self
                .items
                .iter()
                .map(|i| core::mem::size_of::<Item>() + i.subs.len() * core::mem::size_of::<SubPart>())
                .sum::<usize>()
    }

    fn on_turn_end(&mut self, _turn: &Turn, sink: &mut Sink<'_>) -> Option<String> {
        if let Some(u) = self.response.get("usage").filter(|u| u.is_object()) {
            sink(&StreamEvent::Usage { usage: u });
        }
        let reason = self.stop_reason.clone()?;
        sink(&StreamEvent::StopReason { choice: 0, reason: &reason });
        Some(reason)
    }

    fn is_restart(&self, ty: &str, _id: Option<&str>) -> bool {
        ty == "response.created"
    }

    fn last_sequence_number(&self) -> Option<u64> {
        self.last_sequence_number
    }
}

impl ResponsesFold {
    fn item_pos(&self, output_index: u64) -> Option<usize> {
        self.items.iter().rposition(|i| i.output_index == output_index)
    }

    fn ensure_started(&mut self, turn: &mut Turn, ty: &str, sink: &mut Sink<'_>) {
        if turn.begin() {
            warn(sink, "event_before_start", &format!("{ty} before response.created; response started implicitly"));
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

    fn on_args(&mut self, turn: &mut Turn, ty: &str, head: &Head<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        self.ensure_started(turn, ty, sink);
        let Some(pos) = head.output_index.and_then(|i| self.item_pos(i)) else {
            warn(sink, "unknown_part_index", &format!("{ty} for an item never added; ignored"));
            return Ok(());
        };
        let item = &self.items[pos];
        let part = item.part.filter(|&p| turn.parts[p as usize].args.is_some());
        match (part, item.done) {
            (Some(part), false) => turn.push_args(part, &head.delta.unwrap_or_default(), sink),
            (_, true) => {
                warn(sink, "part_already_ended", &format!("{ty} after the item's done; ignored"));
                Ok(())
            }
            _ => {
                warn(sink, "delta_type_mismatch", &format!("{ty} on an item that is not a function call; ignored"));
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
        let v = parse_value(event)?;
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
        let Some(pos) = head.output_index.and_then(|i| self.item_pos(i)) else {
            warn(sink, "unknown_part_index", &format!("{ty} for an item never added; ignored"));
            return;
        };
        match self.items[pos].subs.iter().find(|s| s.slot == slot).map(|s| s.part) {
            Some(p) if turn.parts[p as usize].is_open() => turn.commit(self, p, false, sink),
            Some(_) => warn(sink, "part_already_ended", &format!("second {ty}; ignored")),
            None => warn(sink, "unknown_part_index", &format!("{ty} for a part never added; ignored")),
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
            warn(sink, "unknown_part_index", &format!("{ty} for an item never added; ignored"));
            return Ok(None);
        };
        let (Slot::Content(sub_index) | Slot::Summary(sub_index)) = slot;
        if sub_index >= turn.config.max_parts as u64 {
            // The folded item lists sub-parts by index: refuse absurd ones.
            warn(sink, "invalid_event", &format!("{ty} with part index {sub_index} beyond max_parts; ignored"));
            return Ok(None);
        }
        let item = &mut self.items[pos];
        if item.done {
            warn(sink, "part_already_ended", &format!("{ty} after the item's done; ignored"));
            return Ok(None);
        }
        if let Some(s) = item.subs.iter().find(|s| s.slot == slot) {
            if base.is_some() {
                warn(sink, "duplicate_part_index", &format!("second {ty} for the same part; ignored"));
            }
            return Ok(Some(s.part));
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
            warn(sink, "part_already_ended", &format!("{ty} after the part's done; ignored"));
            return Ok(());
        }
        if p.kind != kind {
            warn(sink, "delta_type_mismatch", &format!("{ty} on a {} part; ignored", p.kind.name()));
            return Ok(());
        }
        turn.append_text(part, &delta.unwrap_or_default(), sink)
    }

    fn on_item_added(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let v = parse_value(event)?;
        self.ensure_started(turn, "response.output_item.added", sink);
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
        if self.items.len() >= turn.config.max_parts {
            return Err(turn.parts_limit());
        }
        if output_index != self.items.len() as u64 {
            let msg = format!("item added at {output_index}, expected {}", self.items.len());
            warn(sink, "unexpected_part_index", &msg);
        }
        let ity = item.get("type").and_then(Value::as_str).unwrap_or("");
        let kind = match ity {
            "message" | "reasoning" => None,
            "function_call" => Some(PartKind::ToolCall),
            _ => Some(PartKind::Other),
        };
        let pos = self.items.len() as u32;
        let mut it = Item { output_index, item: item.clone(), part: None, subs: Vec::new(), done: false };
        if let Some(kind) = kind {
            let part = turn.open_part(kind, (pos, 0), 0, output_index, ity, sink)?;
            it.part = Some(part);
            if kind == PartKind::ToolCall {
                for key in ["call_id", "name"] {
                    if let Some(val) = item.get(key) {
                        let key = if key == "call_id" { "id" } else { key };
                        sink(&StreamEvent::PartMetadata { part, key, value: val });
                    }
                }
                if let Some(a) = item.get("arguments").and_then(Value::as_str).filter(|a| !a.is_empty()) {
                    turn.push_args(part, a, sink)?;
                }
            }
        }
        self.items.push(it);
        Ok(())
    }

    fn on_item_done(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let v = parse_value(event)?;
        self.ensure_started(turn, "response.output_item.done", sink);
        let (Some(output_index), Some(Value::Object(done))) =
            (v.get("output_index").and_then(Value::as_u64), v.get("item"))
        else {
            warn(sink, "invalid_event", "response.output_item.done without output_index or item; ignored");
            return Ok(());
        };
        let Some(pos) = self.item_pos(output_index) else {
            let msg = format!("response.output_item.done for item {output_index}, never added");
            warn(sink, "unknown_part_index", &msg);
            return Ok(());
        };
        let item = &mut self.items[pos];
        if item.done {
            warn(sink, "part_already_ended", &format!("item {output_index} done twice; ignored"));
            return Ok(());
        }
        // Arguments only in the done item (no deltas): take them from there.
        if let Some(part) = item.part {
            if turn.parts[part as usize].args.as_ref().is_some_and(|a| a.raw().is_empty()) {
                if let Some(a) = done.get("arguments").and_then(Value::as_str) {
                    turn.push_args(part, a, sink)?;
                }
            }
        }
        let subs: Vec<u32> = item.subs.iter().map(|s| s.part).collect();
        for p in subs {
            turn.commit(self, p, false, sink);
        }
        let item = &mut self.items[pos];
        item.item = done.clone();
        item.done = true;
        if let Some(part) = item.part {
            turn.commit(self, part, false, sink);
        }
        Ok(())
    }
}
