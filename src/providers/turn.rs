//! The one pattern every dialect follows: a [`Dialect`] turns its provider's
//! events into part operations on a [`Turn`]; the turn owns the state
//! machine (idle → streaming → done | errored), the parts (their text, their
//! tool arguments, their outcome) and the one commit path, so "open a part",
//! "append text", "commit a part" and "close what is open" are written once.
//!
//! A dialect keeps only what is its own (the provider's block, choice or
//! item JSON, the message skeleton) and builds the JSON of a part when the
//! turn commits it ([`Dialect::part_content`]). A new dialect's fold is one
//! file that implements [`Dialect`] and defines its `DIALECT`; the C ABI, the
//! bindings, the command line and the test lists that name every dialect
//! need it too (CONTRIBUTING.md, "A new dialect"; `tests/parity.rs` fails
//! until each has it).

use std::borrow::Cow;

use serde_json::Value;

use super::args::{ArgsEnd, PathBudget, PushError, ToolArgs};
use super::events::{
    PartKind, PartOutcome, ProviderError, StreamEvent, ToolCall, ToolCallStart, ToolInputFormat, WarningCode,
};
use super::media::Base64Stream;
use super::view::{Fragment, JsonStr};
use super::StreamLimit;
use super::{MessageView, Provider, Sink, StreamConfig, StreamError};
use crate::sse::Event;

/// Where a turn stands. The dialect starts it ([`Turn::begin`]); the driver
/// ends it when the dialect returns [`Flow::End`] or [`Flow::Fail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TurnState {
    /// Before the first event of the answer.
    #[default]
    Idle,
    /// Folding.
    Streaming,
    /// The terminal event arrived.
    Done,
    /// A provider error ended the turn.
    Errored,
}

/// How a part ended, or that it is still open: the one representation of a
/// part's outcome in every dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Still receiving deltas.
    Open,
    /// Committed whole (a tool call: arguments complete and valid).
    Complete,
    /// A tool call whose arguments were not valid JSON; why.
    Invalid(String),
    /// The turn ended (or was cut) while the part was open.
    Incomplete,
}

/// One part of the answer, as the turn holds it. `at` and `sub` say where
/// the dialect keeps the rest of it (block, choice or item position; a slot
/// inside it), so a commit finds the dialect's side in O(1).
#[derive(Debug)]
pub(crate) struct Part {
    pub(crate) kind: PartKind,
    pub(crate) outcome: Outcome,
    pub(crate) at: u32,
    pub(crate) sub: u32,
    /// Folded text (text, reasoning, refusal parts).
    pub(crate) text: String,
    /// Tool-call arguments (boxed: most parts have none, and the parser is
    /// large).
    pub(crate) args: Option<Box<ToolArgs>>,
    /// How the arguments ended, at commit.
    pub(crate) args_end: Option<ArgsEnd>,
    /// A media part's decoder and MIME type (boxed: most parts have none).
    pub(crate) media: Option<Box<Media>>,
    /// A tool call's id, name and flags (boxed: most parts have none).
    pub(crate) call: Option<Box<CallMeta>>,
}

/// The call side of a `tool_call` part: what the provider said of the call,
/// recorded as the dialect announces it ([`Turn::open_call`],
/// [`Turn::call_metadata`]), so that the turn gives every dialect's call in
/// one provider-neutral form ([`ToolCall`]) at commit.
#[derive(Debug, Default)]
pub(crate) struct CallMeta {
    /// The provider's id, once it came.
    pub(crate) id: Option<String>,
    /// The name so far (`""` until it came).
    pub(crate) name: String,
    /// How the input is written.
    pub(crate) format: ToolInputFormat,
    /// The provider runs the call.
    pub(crate) provider_executed: bool,
    /// At commit, when the provider's id could not be used (none, or one an
    /// earlier call went by): the synthesized id the call goes by.
    pub(crate) resolved_id: String,
    /// Whether the call goes by `resolved_id` (else by `id`).
    pub(crate) synthesized: bool,
    /// The arguments when the provider sent them whole with the start and
    /// no fragment streams (an Anthropic block sent whole): used when the
    /// arguments stream is empty.
    pub(crate) whole: Option<String>,
}

/// What a dialect knows of a tool call when its part opens.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CallInit<'a> {
    /// The provider's id, when the start carries one.
    pub(crate) id: Option<&'a str>,
    /// The tool's name, when the start carries it.
    pub(crate) name: Option<&'a str>,
    /// How the input is written.
    pub(crate) format: ToolInputFormat,
    /// The provider runs the call.
    pub(crate) provider_executed: bool,
}

/// The media side of a `media` part: its MIME type, its base64 decoder, and
/// how much base64 text the dialect's fold holds for it.
#[derive(Debug, Default)]
pub(crate) struct Media {
    pub(crate) mime_type: String,
    decoder: Base64Stream,
    /// Bytes of base64 text received (the fold keeps that text).
    text_len: usize,
}

impl Part {
    /// Whether the part still receives deltas.
    pub(crate) fn is_open(&self) -> bool {
        self.outcome == Outcome::Open
    }

    fn event_outcome(&self) -> PartOutcome<'_> {
        match &self.outcome {
            Outcome::Invalid(e) => {
                PartOutcome::InvalidArguments { error: e, raw: self.args.as_deref().map_or("", ToolArgs::raw) }
            }
            Outcome::Incomplete => PartOutcome::Incomplete,
            _ => PartOutcome::Complete,
        }
    }
}

/// What a dialect's event handler tells the driver.
#[derive(Debug)]
pub(crate) enum Flow {
    /// Keep folding.
    Continue,
    /// The terminal event arrived: the driver commits the open parts as
    /// `incomplete`, calls [`Dialect::on_turn_end`], emits `turn_end`.
    End,
    /// The provider reported an error: the driver commits the open parts,
    /// emits `error` and returns [`StreamError::Provider`].
    Fail(ProviderError),
}

/// What the driver knows of a dialect before a stream has one: its
/// provider and names, how it recognises a stream's first event, and its
/// constructor. Each dialect file defines one (`pub(crate) const DIALECT`);
/// `providers::DIALECTS` lists them once, in detection order.
pub(crate) struct DialectInfo {
    /// The [`Provider`] variant.
    pub(crate) provider: Provider,
    /// The wire name (`anthropic`, …).
    pub(crate) name: &'static str,
    /// Other accepted spellings (`-` and `_` are the same).
    pub(crate) aliases: &'static [&'static str],
    /// Whether a first event is this dialect's: its trimmed data, and that
    /// data as JSON (`None` when it is not JSON, e.g. `[DONE]`).
    pub(crate) detects: fn(data: &str, value: Option<&Value>) -> bool,
    /// A fresh fold.
    pub(crate) make: fn() -> Box<dyn Dialect>,
}

/// One provider dialect: its events in, part operations and its folded
/// message out. Implemented once per wire format.
pub(crate) trait Dialect: core::fmt::Debug + Send + Sync {
    /// Which provider this is.
    fn provider(&self) -> Provider;

    /// The terminal event's name (for [`StreamError::Incomplete`]).
    fn terminal(&self) -> &'static str;

    /// Applies one SSE event of an active turn (the driver has already
    /// refused events after the terminal one).
    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError>;

    /// The JSON of part `id` as the turn commits it: the part as it appears
    /// in the folded message (`part_end`'s `content`). May take
    /// [`Part::value`].
    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value>;

    /// The folded message: the provider's non-streaming response; `null`
    /// before the turn started.
    fn message(&self, turn: &Turn) -> Value;

    /// [`message`](Self::message), lent where the dialect holds it as it is.
    fn message_view(&self, turn: &Turn) -> MessageView<'_> {
        MessageView::Owned(self.message(turn))
    }

    /// [`message`](Self::message), the fold consumed: a dialect moves what
    /// it holds into the value (and may take the parts' texts) instead of
    /// copying it.
    fn into_message(self: Box<Self>, turn: &mut Turn) -> Value {
        self.message(turn)
    }

    /// Heap bytes held by the dialect's own state.
    fn footprint(&self) -> usize;

    /// Events between the commit of the open parts and `turn_end` (e.g. the
    /// final usage), and the stop reason `turn_end` carries.
    fn on_turn_end(&mut self, turn: &Turn, sink: &mut Sink<'_>) -> Option<String>;

    /// Whether the answer folded so far is whole without a terminal event,
    /// so that the body may end here: Gemini (which has none) once every
    /// candidate has its `finishReason`, Bedrock Converse after
    /// `messageStop`, Ollama on a held done line, OpenAI Chat once every
    /// choice has its `finish_reason` (and the announced usage came).
    /// Never changes the fold; [`end_of_body`](Self::end_of_body) ends the
    /// turn exactly when this holds.
    fn complete_at_end(&self, _turn: &Turn) -> bool {
        false
    }

    /// The body ended before a terminal event: whether that is the normal
    /// end of this dialect's turn ([`complete_at_end`](Self::complete_at_end)).
    /// When it is, the dialect commits what it considers finished first
    /// (and warns, when the terminal event it has was missing); the driver
    /// then ends the turn as on [`Flow::End`].
    fn end_of_body(&mut self, _turn: &mut Turn, _sink: &mut Sink<'_>) -> bool {
        false
    }

    /// The warning for an event after the terminal one.
    fn after_terminal(&self, event: &Event<'_>) -> String {
        format!("{} after the terminal event; ignored", event.event())
    }

    /// Whether `event` (its `type` and `id`, when it has them), the first of a
    /// new connection, starts the answer over.
    fn is_restart(&self, ty: &str, id: Option<&str>) -> bool;

    /// Marks the turn started by something outside the JSON events (a
    /// plain-text error), so the message is not `null`.
    fn start_implicitly(&mut self, _turn: &mut Turn, _sink: &mut Sink<'_>) {}

    /// The highest Responses `sequence_number` applied (other dialects:
    /// `None`).
    fn last_sequence_number(&self) -> Option<u64> {
        None
    }

    /// The connection dropped and a new one follows ([`super::Stream::reconnect`]):
    /// what it replays must be recognised (Responses: by `sequence_number`).
    fn on_reconnect(&mut self) {}
}

/// The state of one turn shared by every dialect: configuration, the turn
/// state machine and the parts.
#[derive(Debug)]
pub(crate) struct Turn {
    pub(crate) config: StreamConfig,
    pub(crate) state: TurnState,
    pub(crate) parts: Vec<Part>,
    /// Bytes received into the parts since the memory budget was last
    /// checked (the check costs O(parts), so it runs every
    /// [`BUDGET_CHECK_BYTES`] of input).
    unchecked: usize,
    /// The provider's tool call ids of this turn that have the synthesized
    /// ids' form (`ssefold_call_…`: never, in practice): a synthesized id
    /// avoids them, and the committed ones.
    call_ids: std::collections::HashSet<String>,
    /// The ids committed calls go by: unique in a turn.
    committed_ids: std::collections::HashSet<String>,
    /// The path events the current call of the stream may still emit.
    pub(crate) path_budget: PathBudget,
    /// What the dialect held (every member, part and value it keeps besides
    /// the parts) when it was last measured ([`check_kept`](Self::check_kept)).
    dialect_held: usize,
    /// Event bytes applied since the dialect was last measured.
    unmeasured: usize,
}

/// The form of the ids the turn gives calls the provider sent without one
/// (see [`super::events`]): `ssefold_call_<part>`.
const SYNTHESIZED_PREFIX: &str = "ssefold_call_";

/// How often (in bytes received into the parts) `max_memory_bytes` is
/// checked. Tool arguments amplify at most ~200× in the parser, so the
/// overshoot stays a few MiB.
const BUDGET_CHECK_BYTES: usize = 16 << 10;

/// The most heap bytes one byte of an event can become in what a dialect
/// keeps (a `serde_json::Value` tree: `{},{},…` is estimated at 128 bytes a
/// byte by [`crate::json::scan::estimate_value_bytes`]).
const KEPT_AMPLIFICATION: usize = 160;

/// Event bytes between two measurements of what the dialect keeps, at the
/// least: past the budget by at most this much amplified (10 MiB), and a
/// measurement (a walk of what is kept) at most every 64 KiB of input.
const MIN_MEASURE_BYTES: usize = 64 << 10;

impl Turn {
    /// A turn not yet started.
    pub(crate) fn new(config: StreamConfig) -> Self {
        Turn {
            state: TurnState::Idle,
            parts: Vec::new(),
            unchecked: 0,
            call_ids: Default::default(),
            committed_ids: Default::default(),
            path_budget: PathBudget::new(config.max_path_events_per_feed),
            dialect_held: 0,
            unmeasured: 0,
            config,
        }
    }

    /// A new call of the stream (`feed`, `finish`): its path events budget
    /// starts over.
    pub(crate) fn begin_call(&mut self) {
        self.path_budget = PathBudget::new(self.config.max_path_events_per_feed);
    }

    /// Forgets the partial turn (a restart after reconnection).
    pub(crate) fn reset(&mut self) {
        self.state = TurnState::Idle;
        self.parts.clear();
        self.call_ids.clear();
        self.committed_ids.clear();
        self.dialect_held = 0;
        self.unmeasured = 0;
    }

    /// Whether the terminal event or an error ended the turn.
    pub(crate) fn is_terminated(&self) -> bool {
        matches!(self.state, TurnState::Done | TurnState::Errored)
    }

    /// Idle → streaming; whether it was idle.
    pub(crate) fn begin(&mut self) -> bool {
        let idle = self.state == TurnState::Idle;
        if idle {
            self.state = TurnState::Streaming;
        }
        idle
    }

    /// Whether any part was started.
    pub(crate) fn output_emitted(&self) -> bool {
        !self.parts.is_empty()
    }

    /// Counts `len` bytes received into a part and, every
    /// [`BUDGET_CHECK_BYTES`], checks the bytes held by the parts against
    /// `max_memory_bytes` (over it: the limit error; what was folded so far
    /// stays).
    fn check_budget(&mut self, len: usize) -> Result<(), StreamError> {
        self.unchecked += len;
        if self.unchecked < BUDGET_CHECK_BYTES {
            return Ok(());
        }
        self.unchecked = 0;
        let max = self.config.max_memory_bytes;
        if self.footprint().saturating_add(self.dialect_held) > max {
            return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxMemoryBytes, max });
        }
        Ok(())
    }

    /// What the stream held at the last measurement: the parts now, the
    /// dialect's own state as last measured (an event about to be parsed is
    /// estimated against the budget left beside it).
    pub(crate) fn held(&self) -> usize {
        self.footprint().saturating_add(self.dialect_held)
    }

    /// Counts an applied event of `len` bytes and, when what it and the
    /// events since the last measurement could have added (each byte at most
    /// [`KEPT_AMPLIFICATION`] bytes kept) might reach `max_memory_bytes`,
    /// measures what the dialect keeps (`dialect_footprint`: every member,
    /// signature, citation and whole part, walked) beside the parts. Over the
    /// budget: the limit error (what was folded so far stays). So everything
    /// a stream keeps counts, a stream that keeps little is measured every
    /// `max_memory_bytes / 160` bytes, and one near its budget every 64 KiB
    /// (past it by at most 10 MiB).
    pub(crate) fn check_kept(
        &mut self,
        len: usize,
        dialect_footprint: impl FnOnce() -> usize,
    ) -> Result<(), StreamError> {
        self.unmeasured = self.unmeasured.saturating_add(len);
        let max = self.config.max_memory_bytes;
        let could_hold = self.dialect_held.saturating_add(self.unmeasured.saturating_mul(KEPT_AMPLIFICATION));
        if self.unmeasured < MIN_MEASURE_BYTES || could_hold < max.saturating_sub(self.footprint()) {
            return Ok(());
        }
        self.unmeasured = 0;
        self.dialect_held = dialect_footprint();
        if self.held() > max {
            return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxMemoryBytes, max });
        }
        Ok(())
    }

    /// Checks a text length against `max_text_bytes`.
    pub(crate) fn check_text(&self, len: usize) -> Result<(), StreamError> {
        if len > self.config.max_text_bytes {
            return Err(StreamError::LimitExceeded {
                limit: StreamLimit::MaxTextBytes,
                max: self.config.max_text_bytes,
            });
        }
        Ok(())
    }

    /// The `max_parts` error.
    pub(crate) fn parts_limit(&self) -> StreamError {
        StreamError::LimitExceeded { limit: StreamLimit::MaxParts, max: self.config.max_parts }
    }

    /// Opens a part (a tool call gets its arguments accumulator, and a call
    /// of which nothing is known yet) and emits `part_start`. Over
    /// `max_parts`: the limit error.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open_part(
        &mut self,
        kind: PartKind,
        (at, sub): (u32, u32),
        choice: u32,
        index: u64,
        provider_type: &str,
        sink: &mut Sink<'_>,
    ) -> Result<u32, StreamError> {
        let call = (kind == PartKind::ToolCall).then(CallInit::default);
        self.open_inner(kind, (at, sub), choice, index, provider_type, call, sink)
    }

    /// Opens a `tool_call` part with what the provider sent of the call at
    /// its start (`part_start` carries it). The dialect still announces the
    /// id and name as `part_metadata` through [`Turn::call_metadata`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open_call(
        &mut self,
        (at, sub): (u32, u32),
        choice: u32,
        index: u64,
        provider_type: &str,
        call: CallInit<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<u32, StreamError> {
        self.open_inner(PartKind::ToolCall, (at, sub), choice, index, provider_type, Some(call), sink)
    }

    #[allow(clippy::too_many_arguments)]
    fn open_inner(
        &mut self,
        kind: PartKind,
        (at, sub): (u32, u32),
        choice: u32,
        index: u64,
        provider_type: &str,
        call: Option<CallInit<'_>>,
        sink: &mut Sink<'_>,
    ) -> Result<u32, StreamError> {
        if self.parts.len() >= self.config.max_parts {
            return Err(self.parts_limit());
        }
        let id = self.parts.len() as u32;
        let args = call.map(|c| match c.format {
            ToolInputFormat::Json => Box::new(ToolArgs::new()),
            ToolInputFormat::Text => Box::new(ToolArgs::text()),
        });
        let meta = call.map(|c| {
            if let Some(provider_id) = c.id.filter(|id| id.starts_with(SYNTHESIZED_PREFIX)) {
                self.call_ids.insert(provider_id.to_owned());
            }
            Box::new(CallMeta {
                id: c.id.map(str::to_owned),
                name: c.name.unwrap_or("").to_owned(),
                format: c.format,
                provider_executed: c.provider_executed,
                ..CallMeta::default()
            })
        });
        self.parts.push(Part {
            kind,
            outcome: Outcome::Open,
            at,
            sub,
            text: String::new(),
            args,
            args_end: None,
            media: None,
            call: meta,
        });
        let tool_call = call.map(|c| ToolCallStart {
            id: c.id,
            name: c.name,
            input_format: c.format,
            provider_executed: c.provider_executed,
        });
        sink.event(&StreamEvent::PartStart { part: id, kind, choice, index, provider_type, tool_call });
        Ok(id)
    }

    /// Announces a part's metadata (`part_metadata`); on a tool call, an
    /// `id` or `name` that is a string is also its call's (the latest one
    /// announced counts: a name that streams in pieces is announced whole
    /// each time).
    pub(crate) fn call_metadata(&mut self, part: u32, key: &str, value: &Value, sink: &mut Sink<'_>) {
        if let (Some(meta), Some(text)) = (self.parts[part as usize].call.as_deref_mut(), value.as_str()) {
            match key {
                "id" if meta.id.as_deref() != Some(text) => {
                    meta.id = Some(text.to_owned());
                    if text.starts_with(SYNTHESIZED_PREFIX) {
                        self.call_ids.insert(text.to_owned());
                    }
                }
                "name" => text.clone_into(&mut meta.name),
                _ => {}
            }
        }
        sink.event(&StreamEvent::PartMetadata { part, key, value });
    }

    /// Sets the arguments a tool call's start carried whole (see
    /// [`CallMeta::whole`]).
    pub(crate) fn set_whole_arguments(&mut self, part: u32, text: String) {
        if let Some(meta) = self.parts[part as usize].call.as_deref_mut() {
            meta.whole = Some(text);
        }
    }

    /// A call id for a call the provider sent without one:
    /// `ssefold_call_<part>`, suffixed `_2`, `_3`… past the provider's ids
    /// of this turn (see [`super::events`]).
    fn synthesize_call_id(
        provider_ids: &std::collections::HashSet<String>,
        committed: &std::collections::HashSet<String>,
        part: u32,
    ) -> String {
        let taken = |id: &String| provider_ids.contains(id) || committed.contains(id);
        let base = format!("{SYNTHESIZED_PREFIX}{part}");
        if !taken(&base) {
            return base;
        }
        (2u64..).map(|n| format!("{base}_{n}")).find(|id| !taken(id)).unwrap_or(base)
    }

    /// Appends a decoded text delta to an open part, within `max_text_bytes`
    /// (over it: nothing appended, the limit error), and emits `text_delta`
    /// unless it is empty.
    pub(crate) fn append_text(&mut self, id: u32, text: &JsonStr<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        self.try_append_text(id, text, sink).map(drop)
    }

    /// [`append_text`](Self::append_text) of a fragment whose text is read
    /// as it is appended ([`Fragment::try_push_to`]): `Ok(false)`, nothing
    /// appended or emitted, when it does not read.
    pub(crate) fn try_append_text(
        &mut self,
        id: u32,
        text: &(impl Fragment + ?Sized),
        sink: &mut Sink<'_>,
    ) -> Result<bool, StreamError> {
        let max = self.config.max_text_bytes;
        let part = &mut self.parts[id as usize];
        let start = part.text.len();
        if !text.try_push_to(&mut part.text) {
            return Ok(false);
        }
        if part.text.len() > max {
            part.text.truncate(start);
            return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxTextBytes, max });
        }
        let added = part.text.len() - start;
        if added > 0 {
            let delta = StreamEvent::TextDelta { part: id, text: &part.text[start..] };
            match text.as_escaped() {
                Some(escaped) => sink.escaped(&delta, escaped),
                None => sink.event(&delta),
            }
        }
        self.check_budget(added).map(|()| true)
    }

    /// Opens a `media` part of the given MIME type (`part_start`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open_media(
        &mut self,
        (at, sub): (u32, u32),
        choice: u32,
        index: u64,
        provider_type: &str,
        mime_type: &str,
        sink: &mut Sink<'_>,
    ) -> Result<u32, StreamError> {
        let id = self.open_part(PartKind::Media, (at, sub), choice, index, provider_type, sink)?;
        self.set_media(id, mime_type);
        Ok(id)
    }

    /// Makes part `id` (opened with kind `media`) take base64 text of the
    /// given MIME type.
    pub(crate) fn set_media(&mut self, id: u32, mime_type: &str) {
        self.parts[id as usize].media = Some(Box::new(Media { mime_type: mime_type.to_owned(), ..Media::default() }));
    }

    /// Appends a piece of a media part's base64 text: its decoded bytes as
    /// a `media_delta` (an unfinished quantum waits for the next piece).
    /// Invalid base64: warning `invalid_base64`, and no bytes from there on.
    /// The text counts against `max_text_bytes` and the memory budget (the
    /// fold keeps it).
    pub(crate) fn append_base64(&mut self, id: u32, text: &str, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let Some(media) = self.parts[id as usize].media.as_deref_mut() else { return Ok(()) };
        let len = media.text_len + text.len();
        if len > self.config.max_text_bytes {
            return Err(StreamError::LimitExceeded {
                limit: StreamLimit::MaxTextBytes,
                max: self.config.max_text_bytes,
            });
        }
        media.text_len = len;
        let failed = media.decoder.failed();
        let r = media.decoder.push(text);
        Self::deliver_media(id, &media.mime_type, failed, r, sink);
        self.check_budget(text.len())
    }

    /// Emits a media part's decoded bytes, or the `invalid_base64` warning
    /// (once per part).
    fn deliver_media(
        id: u32,
        mime_type: &str,
        failed: bool,
        r: Result<&[u8], super::media::InvalidBase64>,
        sink: &mut Sink<'_>,
    ) {
        match r {
            Ok([]) => {}
            Ok(data) => sink.event(&StreamEvent::MediaDelta { part: id, mime_type, data }),
            Err(_) if failed => {}
            Err(e) => {
                let msg = format!(
                    "part {id}: invalid base64 at character {}: {}; no more bytes of this part (its text is kept in the message)",
                    e.offset, e.reason
                );
                sink.event(&StreamEvent::Warning { code: WarningCode::InvalidBase64, message: &msg });
            }
        }
    }

    /// Sets a part's initial text (a block that starts with text), emitting
    /// it as a `text_delta` when not empty.
    pub(crate) fn start_text(&mut self, id: u32, text: &str, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        self.check_text(text.len())?;
        let part = &mut self.parts[id as usize];
        part.text.push_str(text);
        if !text.is_empty() {
            sink.event(&StreamEvent::TextDelta { part: id, text: &part.text });
        }
        self.check_budget(text.len())
    }

    /// Appends a fragment of a tool call's arguments (`tool_args_delta`,
    /// then the path events it completes), within `max_tool_args_bytes`.
    pub(crate) fn push_args(
        &mut self,
        id: u32,
        fragment: &(impl Fragment + ?Sized),
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        self.try_push_args(id, fragment, sink).map(drop)
    }

    /// [`push_args`](Self::push_args) of a fragment whose text is read as it
    /// is appended ([`Fragment::try_push_to`]): `Ok(false)`, nothing
    /// appended or emitted, when it does not read.
    pub(crate) fn try_push_args(
        &mut self,
        id: u32,
        fragment: &(impl Fragment + ?Sized),
        sink: &mut Sink<'_>,
    ) -> Result<bool, StreamError> {
        let max = self.config.max_tool_args_bytes;
        let mut added = 0;
        if let Some(args) = self.parts[id as usize].args.as_mut() {
            let before = args.raw().len();
            match args.push(fragment, id, max, &mut self.path_budget, sink) {
                Ok(()) => {}
                Err(PushError::Declined) => return Ok(false),
                Err(PushError::TooLarge) => {
                    return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxToolArgsBytes, max })
                }
            }
            added = args.raw().len() - before;
        } else if !fragment.try_push_to(&mut String::new()) {
            // No arguments kept (never the case for an open call): the text
            // is still read, so that what does not read declines here too.
            return Ok(false);
        }
        let result = self.check_budget(added);
        if result.is_err() {
            if let Some(args) = self.parts[id as usize].args.as_mut() {
                args.set_over_budget();
            }
        }
        result.map(|()| true)
    }

    /// Commits an open part — the one commit path of every dialect: its
    /// outcome (`cut`: the turn ended with it open → `incomplete`; a tool
    /// call's arguments decide `complete` or `invalid_arguments`), its JSON
    /// from the dialect, and `part_end`. A part already committed is left.
    pub(crate) fn commit(&mut self, dialect: &mut dyn Dialect, id: u32, cut: bool, sink: &mut Sink<'_>) {
        self.commit_inner(dialect, id, cut, sink);
    }

    /// [`commit`](Self::commit)s a part whose content the dialect no longer
    /// builds from its arguments (it has their final version), then frees
    /// the arguments (raw text, parser) after `part_end` (whose call carries
    /// the text).
    pub(crate) fn commit_releasing_args(&mut self, dialect: &mut dyn Dialect, id: u32, sink: &mut Sink<'_>) {
        self.commit_inner(dialect, id, false, sink);
        if let Some(args) = self.parts[id as usize].args.as_deref_mut() {
            args.release();
        }
    }

    fn commit_inner(&mut self, dialect: &mut dyn Dialect, id: u32, cut: bool, sink: &mut Sink<'_>) {
        let part = &mut self.parts[id as usize];
        if !part.is_open() {
            return;
        }
        if let Some(media) = part.media.as_deref_mut() {
            let failed = media.decoder.failed();
            let r = media.decoder.finish();
            Self::deliver_media(id, &media.mime_type, failed, r, sink);
        }
        let part = &mut self.parts[id as usize];
        let end = part.args.as_deref_mut().map(ToolArgs::finish);
        part.outcome = match &end {
            _ if cut => Outcome::Incomplete,
            Some(ArgsEnd::Invalid(e)) => Outcome::Invalid(e.clone()),
            _ => Outcome::Complete,
        };
        part.args_end = end;
        if let Some(meta) = part.call.as_deref_mut() {
            // The provider's id, unless it sent none or one an earlier call
            // of this turn went by: ids are unique in a turn.
            match meta.id.as_ref().filter(|pid| !self.committed_ids.contains(*pid)) {
                Some(pid) => {
                    self.committed_ids.insert(pid.clone());
                }
                None => {
                    let synthesized = Self::synthesize_call_id(&self.call_ids, &self.committed_ids, id);
                    self.committed_ids.insert(synthesized.clone());
                    meta.resolved_id = synthesized;
                    meta.synthesized = true;
                }
            }
        }
        let content = dialect.part_content(&mut self.parts, id);
        let part = &self.parts[id as usize];
        let tool_call = part.call.as_deref().map(|meta| {
            let raw = part.args.as_deref().map_or("", ToolArgs::raw);
            let arguments = match (&part.outcome, &part.args_end, meta.format) {
                (Outcome::Complete, Some(ArgsEnd::Empty) | None, ToolInputFormat::Json) => {
                    meta.whole.as_deref().unwrap_or("{}")
                }
                _ => raw,
            };
            ToolCall {
                id: if meta.synthesized { &meta.resolved_id } else { meta.id.as_deref().unwrap_or("") },
                id_synthesized: meta.synthesized,
                name: &meta.name,
                arguments,
                input_format: meta.format,
                provider_executed: meta.provider_executed,
            }
        });
        sink.event(&StreamEvent::PartEnd {
            part: id,
            kind: part.kind,
            outcome: part.event_outcome(),
            content: &content,
            tool_call,
        });
    }

    /// Commits every open part as `incomplete` (the turn ended with it
    /// open), in the order they opened.
    pub(crate) fn close_open(&mut self, dialect: &mut dyn Dialect, sink: &mut Sink<'_>) {
        for id in 0..self.parts.len() as u32 {
            self.commit(dialect, id, true, sink);
        }
    }

    /// Bytes held by the parts (text and argument buffers).
    pub(crate) fn footprint(&self) -> usize {
        self.parts
            .iter()
            .map(|p| {
                core::mem::size_of::<Part>()
                    + p.text.capacity()
                    + p.args.as_deref().map_or(0, ToolArgs::capacity)
                    + p.media.as_deref().map_or(0, |m| {
                        core::mem::size_of::<Media>() + m.mime_type.capacity() + m.text_len + m.decoder.capacity()
                    })
            })
            .sum()
    }
}
