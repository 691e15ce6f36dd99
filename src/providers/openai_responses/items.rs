//! Output items and their sub-parts (content, summary, shell commands):
//! added, streamed into, done, and completed from the terminal `output`.

use serde_json::{Map, Value};

use super::head::Head;
use super::ResponsesFold;
use crate::providers::events::WarningCode;
use crate::providers::events::{PartKind, StreamEvent, ToolInputFormat};
use crate::providers::turn::{CallInit, Part, Turn};
use crate::providers::view::JsonStr;
use crate::providers::{warn, Sink, StreamError};
use crate::sse::Event;

/// The member of an item whose text streams in deltas (`None`: nothing
/// streams into the item itself).
pub(super) fn streamed_key(item_type: &str) -> Option<&'static str> {
    match item_type {
        "function_call" | "mcp_call" => Some("arguments"),
        "custom_tool_call" => Some("input"),
        "code_interpreter_call" => Some("code"),
        _ => None,
    }
}

/// The item type an item-level delta event streams into.
pub(super) fn delta_item_type(event_type: &str) -> Option<&'static str> {
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
pub(super) fn identity(item: &Map<String, Value>) -> (Option<&Value>, Option<&Value>, Option<&Value>) {
    let some = |k: &str| item.get(k).filter(|v| !v.is_null());
    let by_call = matches!(
        item.get("type").and_then(Value::as_str),
        Some("function_call" | "custom_tool_call" | "shell_call" | "shell_call_output")
    );
    (some("type"), if by_call { None } else { some("id") }, some("call_id"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Content(u64),
    Summary(u64),
    /// A `shell_call`'s `action.commands[i]`.
    Command(u64),
}

impl Slot {
    pub(super) fn index(self) -> u64 {
        match self {
            Slot::Content(i) | Slot::Summary(i) | Slot::Command(i) => i,
        }
    }
}

/// A content or summary part of an item (its text and outcome live in the
/// turn's part; its [`Part::sub`] is its position in `subs` + 1).
#[derive(Debug)]
pub(super) struct SubPart {
    pub(super) slot: Slot,
    pub(super) part: u32,
    pub(super) base: Map<String, Value>,
}

impl SubPart {
    pub(super) fn to_json(&self, part: &Part) -> Value {
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
pub(super) struct Item {
    pub(super) output_index: u64,
    pub(super) item: Map<String, Value>,
    /// The tool call / other part of the item itself ([`Part::sub`] 0).
    pub(super) part: Option<u32>,
    pub(super) subs: Vec<SubPart>,
    pub(super) done: bool,
    /// The item's final version once done (`output_item.done`, or the
    /// terminal output's): the part's content and the message lend it.
    /// `null` before, and again once the terminal output is the fold.
    pub(super) final_item: Value,
    /// The text `final_item` was read from (its `output_item.done`'s
    /// `item`), when it was read whole: a terminal `output` element
    /// repeating it is that item, not parsed again. Empty when not known.
    pub(super) final_text: String,
    /// The member the item's own part streams into ([`streamed_key`]).
    pub(super) key: Option<&'static str>,
}

impl Item {
    pub(super) fn to_json(&self, parts: &[Part]) -> Value {
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

impl ResponsesFold {
    pub(super) fn item_pos(&self, output_index: u64) -> Option<usize> {
        self.items.iter().rposition(|i| i.output_index == output_index)
    }

    pub(super) fn complete_items(
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
            self.finish_item(turn, pos, done, String::new(), sink);
        }
        Ok(())
    }

    /// The end of item `pos`: its sub-parts committed, `done` kept as its
    /// final version (read from `text`; empty when not known), then its own
    /// part committed (its arguments released).
    fn finish_item(
        &mut self,
        turn: &mut Turn,
        pos: usize,
        done: Map<String, Value>,
        text: String,
        sink: &mut Sink<'_>,
    ) {
        let subs: Vec<u32> = self.items[pos].subs.iter().map(|s| s.part).collect();
        for p in subs {
            turn.commit(self, p, false, sink);
        }
        let item = &mut self.items[pos];
        item.final_item = Value::Object(done);
        item.final_text = text;
        item.done = true;
        if let Some(part) = item.part {
            turn.commit_releasing_args(self, part, sink);
        }
    }

    /// An item-level delta: function or MCP call arguments (JSON, through
    /// the arguments parser), custom tool input or interpreter code (text).
    pub(super) fn on_args(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        head: &Head<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
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

    pub(super) fn on_part_added(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        head: &Head<'_>,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let mut v = self.event_value(event, sink)?;
        self.ensure_started(turn, ty, sink);
        let slot = if ty == "response.content_part.added" {
            Slot::Content(head.content_index.unwrap_or(0))
        } else {
            Slot::Summary(head.summary_index.unwrap_or(0))
        };
        // Moved out of the event (done with it), not copied.
        let base = match v.get_mut("part").map(Value::take) {
            Some(Value::Object(p)) => p,
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

    pub(super) fn on_part_done(&mut self, turn: &mut Turn, ty: &str, head: &Head<'_>, sink: &mut Sink<'_>) {
        self.ensure_started(turn, ty, sink);
        let slot = if ty == "response.content_part.done" {
            Slot::Content(head.content_index.unwrap_or(0))
        } else {
            Slot::Summary(head.summary_index.unwrap_or(0))
        };
        self.commit_sub(turn, ty, head.output_index, slot, sink);
    }

    /// Commits the sub-part `slot` of the item at `output_index` (its done event).
    pub(super) fn commit_sub(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        output_index: Option<u64>,
        slot: Slot,
        sink: &mut Sink<'_>,
    ) {
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
    pub(super) fn sub_part(
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
    pub(super) fn on_text(
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

    pub(super) fn on_item_added(
        &mut self,
        turn: &mut Turn,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let mut v = self.event_value(event, sink)?;
        self.ensure_started(turn, "response.output_item.added", sink);
        // Moved out of the event (done with it), not copied.
        let (Some(output_index), Some(Value::Object(item))) =
            (v.get("output_index").and_then(Value::as_u64), v.get_mut("item").map(Value::take))
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
            item: Map::new(),
            part: None,
            subs: Vec::new(),
            done: false,
            final_item: Value::Null,
            final_text: String::new(),
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
        it.item = item;
        self.items.push(it);
        Ok(())
    }

    pub(super) fn on_item_done(
        &mut self,
        turn: &mut Turn,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let mut v = self.event_value(event, sink)?;
        // The item's text, as read (a terminal output repeating it is not
        // parsed again).
        let text = self.read.item.take().map(|at| event.data()[at].to_owned()).unwrap_or_default();
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
            item.final_text = text;
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
        self.finish_item(turn, pos, done, text, sink);
        Ok(())
    }
}
