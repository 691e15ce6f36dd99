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

// The fold, by concern: this file has the dialect (its events, turn and
// message); `head` the members every event is dispatched by (fast path and
// serde_json); `families` one method per event family; `items` the output
// items and their sub-parts; `media_slots` partial images and audio.
mod families;
mod head;
mod items;
mod media_slots;

use std::borrow::Cow;
use std::ops::Range;

use serde_json::{Map, Value};

use super::events::StreamEvent;
use super::events::WarningCode;
use super::raw::{quick_allowed, quick_taken};
use super::turn::{Dialect, DialectInfo, Flow, Part, Turn, TurnState};
use super::{warn, MessageView, Provider, Sink, StreamError};
use crate::json::scan::{map_heap_bytes, value_heap_bytes};
use crate::sse::Event;
use families::not_an_object;
use head::{members_used, EventRead, Head, Known, Shape};
use items::{delta_item_type, Item, SubPart};
use media_slots::{MediaSlot, MEDIA_AT};

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
    /// The event being applied, when read whole with its head
    /// ([`Head::quick_whole`]): its value and places, for its handler
    /// ([`event_value`](Self::event_value)); empty between events.
    read: EventRead,
    /// The text of the `response` the last lifecycle event merged (empty
    /// after any other merge): merging it again changes nothing, so a
    /// lifecycle event that repeats it (`response.in_progress` after
    /// `response.created`, as sent) is not parsed again.
    response_text: String,
    /// Whether that `response` carries an object `usage`.
    response_text_usage: bool,
    /// The members of `response_text`: where each one's key and value are
    /// in it (none when it had more than [`head::MAX_MEMBERS`]). A terminal
    /// `response` is read member by member against them: what it repeats
    /// is not parsed again.
    response_members: Vec<(Range<usize>, Range<usize>)>,
    /// The shape of the last event read by the fast path (the next delta
    /// of a part is read against it).
    shape: Shape,
}

/// The events whose handler parses them whole (their `response`, `item` or
/// `part` is large: read once, with the head).
fn parsed_whole(ty: &str) -> bool {
    matches!(
        ty,
        "response.created"
            | "response.in_progress"
            | "response.queued"
            | "response.completed"
            | "response.incomplete"
            | "response.failed"
            | "response.output_item.added"
            | "response.output_item.done"
            | "response.content_part.added"
            | "response.reasoning_summary_part.added"
    )
}

impl ResponsesFold {
    /// What the fold holds as text for an event of type `ty` read whole
    /// ([`Head::quick_whole`]): for a lifecycle event, the response the
    /// last one merged (a repeat of it is not parsed), its members recorded;
    /// for `response.completed` in a turn, that response's members and the
    /// done items' texts (what it repeats of them is not parsed). The
    /// handlers of those types put the rest back together.
    fn known(&self, ty: &str, turn: &Turn) -> Known<'_> {
        match ty {
            "response.created" | "response.in_progress" | "response.queued" => {
                Known { repeat: &self.response_text, record: true, ..Known::default() }
            }
            "response.completed" if turn.state != TurnState::Idle => {
                let in_order = self.items.windows(2).all(|w| w[0].output_index < w[1].output_index);
                Known {
                    text: &self.response_text,
                    members: &self.response_members,
                    items: if in_order { &self.items } else { &[] },
                    ..Known::default()
                }
            }
            _ => Known::default(),
        }
    }

    /// The event's value: as parsed with its head, else parsed now.
    pub(super) fn event_value(&mut self, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Value, StreamError> {
        match self.read.value.take() {
            Some(v) => Ok(v),
            None => crate::providers::parse_value(event, sink),
        }
    }
}

impl Dialect for ResponsesFold {
    fn provider(&self) -> Provider {
        Provider::OpenAIResponses
    }

    fn terminal(&self) -> &'static str {
        "response.completed"
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        let data = event.data();
        // The SSE event's name, as providers send it, is the data's type: an
        // event named for another type is not probed (were the two to
        // differ, the event is read the general way, with the same result).
        let named = event.event();
        let probe = quick_allowed() && (named.is_empty() || named == "message" || parsed_whole(named));
        let whole = match probe {
            true => Head::quick_whole(data, parsed_whole, |ty| self.known(ty, turn)),
            false => None,
        };
        let head = match whole {
            Some(whole) => {
                quick_taken();
                self.read = whole.read;
                whole.head
            }
            None => match Head::parse(data, &mut self.shape) {
                Some(head) => head,
                None => return not_an_object(event, sink),
            },
        };
        let flow = self.apply(turn, event, &head, sink);
        self.read = EventRead::default();
        flow
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
    /// list, moved out (else built as [`message`](Self::message) builds it).
    fn into_message(self: Box<Self>, turn: &mut Turn) -> Value {
        if turn.state == TurnState::Idle || self.final_output.is_none() {
            return self.message(turn);
        }
        let ResponsesFold { mut response, final_output, .. } = *self;
        response.insert("output".into(), Value::Array(final_output.unwrap_or_default()));
        Value::Object(response)
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
                        + i.final_text.capacity()
                        + i.subs.capacity() * core::mem::size_of::<SubPart>()
                        + i.subs.iter().map(|s| map_heap_bytes(&s.base)).sum::<usize>()
                })
                .sum::<usize>()
            + self.final_output.as_deref().map_or(0, list)
            + self.stop_reason.as_ref().map_or(0, String::capacity)
            + self.response_text.capacity()
            + self.shape.heap_bytes()
            + self.response_members.capacity() * core::mem::size_of::<(Range<usize>, Range<usize>)>()
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

impl ResponsesFold {
    /// [`Dialect::on_event`] once the event's head is read.
    fn apply(
        &mut self,
        turn: &mut Turn,
        event: &Event<'_>,
        head: &Head<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, StreamError> {
        let ty: &str = if head.ty.is_empty() { event.event() } else { &head.ty };
        if !self.in_sequence(ty, head, sink) {
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
            | "response.reasoning_summary_text.delta" => self.on_text_delta(turn, ty, head, sink)?,
            _ if delta_item_type(ty).is_some() => self.on_args(turn, ty, head, sink)?,
            "response.shell_call_command.delta"
            | "response.shell_call_command.added"
            | "response.shell_call_command.done" => self.on_shell_command(turn, ty, head, event, sink)?,
            "response.created" | "response.in_progress" | "response.queued" => {
                self.on_lifecycle(turn, ty, event, sink)?;
            }
            "response.output_item.added" => self.on_item_added(turn, event, sink)?,
            "response.output_item.done" => self.on_item_done(turn, event, sink)?,
            "response.content_part.added" | "response.reasoning_summary_part.added" => {
                self.on_part_added(turn, ty, head, event, sink)?;
            }
            "response.content_part.done" | "response.reasoning_summary_part.done" => {
                self.on_part_done(turn, ty, head, sink);
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
}
