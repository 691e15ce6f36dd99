//! The event families, one method each (the dialect's `on_event`
//! picks by type), and the response lifecycle they share.

use serde_json::{Map, Value};

use super::head::{Head, SEQUENCE_NUMBER, TYPE};
use super::items::Slot;
use super::ResponsesFold;
use crate::providers::events::WarningCode;
use crate::providers::events::{PartKind, ProviderError, StreamEvent};
use crate::providers::turn::{Dialect, Flow, Turn, TurnState};
use crate::providers::{check_lone, parse_value, warn, Sink, StreamError};
use crate::sse::Event;

/// The event families.
impl ResponsesFold {
    /// Before an event is applied: its delta's lone surrogates and its
    /// `sequence_number` and `type` of the wrong type warned about, its
    /// `sequence_number` checked (`false`: a replay after a reconnection,
    /// skipped).
    pub(super) fn in_sequence(&mut self, ty: &str, head: &Head<'_>, sink: &mut Sink<'_>) -> bool {
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
    pub(super) fn on_text_delta(
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
    pub(super) fn on_shell_command(
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
    pub(super) fn on_lifecycle(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let mut v = self.event_value(event, sink)?;
        let (text_at, known) = (self.read.response.take(), self.read.response_known);
        let beginning = turn.state == TurnState::Idle;
        if known && beginning {
            // The turn starts here (a restart): the known text is merged
            // into the response it starts, so it is parsed after all.
            if let (Value::Object(m), Ok(r)) = (&mut v, serde_json::from_str(&self.response_text)) {
                m.insert("response".into(), r);
            }
        }
        // The running usage, where the lifecycle event carries one (merged
        // into the response below, and lent from there; a known response's
        // members are the folded ones).
        let carries_usage = match known && !beginning {
            true => self.response_text_usage,
            false => v.pointer("/response/usage").is_some_and(Value::is_object),
        };
        // Only an object is merged member by member: its repeat merges as a no-op.
        let mergeable = v.get("response").is_some_and(Value::is_object);
        if turn.begin() {
            self.merge_response(ty, &mut v, sink);
            self.lend_start(turn, sink);
        } else if ty == "response.created" {
            warn(sink, WarningCode::DuplicateStart, "second response.created; ignored");
            return Ok(());
        } else if !known {
            self.merge_response(ty, &mut v, sink);
        }
        if let Some(at) = text_at.filter(|_| mergeable && (!known || beginning)) {
            // What was merged: a repeat of it is merged as a no-op (its
            // members, when it was read member by member: the known text's
            // stay as they are).
            self.response_text.clear();
            self.response_text.push_str(&event.data()[at]);
            self.response_text_usage = carries_usage;
            if !known {
                core::mem::swap(&mut self.response_members, &mut self.read.members);
            }
        }
        if let Some(u) = self.response.get("usage").filter(|_| carries_usage) {
            sink.event(&StreamEvent::Usage { usage: u });
        }
        Ok(())
    }

    /// `message_start` with the message so far ([`message`](Dialect::message)):
    /// before any item, the folded response with an empty `output`, lent
    /// to the event and taken back.
    fn lend_start(&mut self, turn: &Turn, sink: &mut Sink<'_>) {
        if !self.items.is_empty() || self.final_output.is_some() {
            let snapshot = self.message(turn);
            sink.event(&StreamEvent::MessageStart { provider: "openai_responses", message: &snapshot });
            return;
        }
        let mut response = core::mem::take(&mut self.response);
        let placeholder = response.insert("output".into(), Value::Array(Vec::new()));
        let snapshot = Value::Object(response);
        sink.event(&StreamEvent::MessageStart { provider: "openai_responses", message: &snapshot });
        let Value::Object(mut response) = snapshot else { return };
        match placeholder {
            Some(p) => {
                response.insert("output".into(), p);
            }
            // Appended last above: removed without moving another member.
            None => {
                response.remove("output");
            }
        }
        self.response = response;
    }

    /// `response.completed` / `response.incomplete`: the terminal
    /// `response` merged, its `output` completing the items still open,
    /// the stop reason; the end of the turn (a stray one before any event
    /// is ignored, unless its `output` is a whole answer).
    pub(super) fn on_terminal(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, StreamError> {
        let mut v = self.event_value(event, sink)?;
        if turn.state == TurnState::Idle && !v.pointer("/response/output").is_some_and(Value::is_array) {
            // A stray terminal event: nothing to end yet. (One whose
            // `response` holds its `output` is a whole answer: folded.)
            warn(sink, WarningCode::TerminalBeforeStart, &format!("{ty} before response.created; ignored"));
            return Ok(Flow::Continue);
        }
        self.ensure_started(turn, ty, sink);
        let reason = match ty {
            "response.completed" => "completed".to_owned(),
            _ => v
                .pointer("/response/incomplete_details/reason")
                .and_then(Value::as_str)
                .unwrap_or("incomplete")
                .to_owned(),
        };
        self.take_final_output(ty, &mut v, sink);
        if let Some(output) = &mut self.final_output {
            // The elements read as a done item's text: that item's final
            // version, moved (forgotten below all the same).
            for &i in &self.read.reused {
                if let (Some(slot), Some(item)) = (output.get_mut(i), self.items.get_mut(i)) {
                    *slot = core::mem::take(&mut item.final_item);
                }
            }
        }
        self.merge_response(ty, &mut v, sink);
        self.complete_from_final_output(turn, ty == "response.incomplete", sink)?;
        self.forget_done_items();
        for item in self.items.iter().filter(|i| !i.done) {
            let msg = format!("item {} not done at the terminal event; committed as incomplete", item.output_index);
            warn(sink, WarningCode::PartNotEnded, &msg);
        }
        self.stop_reason = Some(reason);
        Ok(Flow::End)
    }

    /// `response.failed` / `error`: the provider error (a failed
    /// response's `response` merged first).
    pub(super) fn on_failure(
        &mut self,
        turn: &mut Turn,
        ty: &str,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, StreamError> {
        let mut v = self.event_value(event, sink)?;
        self.ensure_started(turn, ty, sink);
        let err = if ty == "error" {
            // The live API nests the error (`{"type":"error","error":{…}}`);
            // the SDK's type puts it at the top level: both.
            match v.get("error") {
                Some(e @ Value::Object(_)) => e.clone(),
                _ => v.clone(),
            }
        } else {
            // Read before the merge moves it (the folded response keeps it).
            let error = v.pointer("/response/error").cloned().unwrap_or(Value::Null);
            self.take_final_output(ty, &mut v, sink);
            self.merge_response(ty, &mut v, sink);
            self.forget_done_items();
            error
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
    pub(super) fn on_media(
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

    pub(super) fn ensure_started(&mut self, turn: &mut Turn, ty: &str, sink: &mut Sink<'_>) {
        if turn.begin() {
            warn(
                sink,
                WarningCode::EventBeforeStart,
                &format!("{ty} before response.created; response started implicitly"),
            );
            self.response.insert("object".into(), "response".into());
        }
    }

    /// The event's `response` merged member by member into the folded
    /// one (moved out of `v`, which is done with it: what the caller reads
    /// of it is read before).
    pub(super) fn merge_response(&mut self, ty: &str, v: &mut Value, sink: &mut Sink<'_>) {
        // Set again by the lifecycle event that merged (its text).
        self.response_text.clear();
        self.response_members.clear();
        match v.get_mut("response") {
            Some(Value::Object(r)) => {
                let mut incoming = core::mem::take(r);
                // `output` is the streamed items or the terminal one
                // (`final_output`); keep its position only.
                if let Some(output) = incoming.get_mut("output") {
                    *output = Value::Null;
                }
                let folded = &mut self.response;
                if folded.is_empty() {
                    *folded = incoming;
                } else if incoming.len() <= folded.len() && incoming.keys().zip(folded.keys()).all(|(a, b)| a == b) {
                    // The same members in the same order (every lifecycle
                    // event of a stream): each value replaced where it is.
                    for (slot, (_, val)) in folded.values_mut().zip(incoming) {
                        *slot = val;
                    }
                } else {
                    for (k, val) in incoming {
                        folded.insert(k, val);
                    }
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
    pub(super) fn take_final_output(&mut self, ty: &str, v: &mut Value, sink: &mut Sink<'_>) {
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
    pub(super) fn forget_done_items(&mut self) {
        if self.final_output.is_none() {
            return;
        }
        for item in self.items.iter_mut().filter(|i| i.done) {
            item.final_item = Value::Null;
            item.final_text = String::new();
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
    pub(super) fn complete_from_final_output(
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
}

/// An event whose data is valid JSON but no object (or an object with a
/// member twice): nothing to apply (invalid JSON is a stream error).
pub(super) fn not_an_object(event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
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
