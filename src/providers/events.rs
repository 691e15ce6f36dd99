//! The normalized event protocol shared by every dialect (and, verbatim, by
//! the C, Python and Go bindings).
//!
//! Every [`StreamEvent`] has a snake_case wire name ([`StreamEvent::name`])
//! and a JSON form ([`StreamEvent::to_json`]) whose `"event"` member is that
//! name. Events borrow from the payload being folded: copy what you keep.
//!
//! | wire name | fields (JSON) | meaning |
//! | --- | --- | --- |
//! | `message_start` | `provider`, `message` | the turn began; `message` is the folded message skeleton so far |
//! | `part_start` | `part`, `kind`, `choice`, `index`, `provider_type`, `tool_call`? | a part (text, reasoning, tool call, refusal, media, other block) opened; `part` is a stable id (0, 1, 2… in stream order); a `tool_call` part also carries what is known of its call ([`ToolCallStart`]: `id` and `name` when the provider sent them with the start, else `null`; `input_format`; `provider_executed`) |
//! | `text_delta` | `part`, `text` | text appended to a `text`, `reasoning` or `refusal` part (or a `media` part's transcript); the concatenation of a part's `text_delta`s equals its folded text |
//! | `media_delta` | `part`, `mime_type`, `data` | bytes appended to a `media` part (audio, an image), decoded from the provider's base64; `data` is base64 in the JSON form (raw bytes in the typed event and the bindings); the concatenation of a part's `media_delta`s is its media's bytes |
//! | `tool_args_delta` | `part`, `json` | a raw fragment of a tool call's arguments (JSON text; free text for a call whose `input_format` is `text`); the concatenation equals the raw arguments |
//! | `tool_args_path` | `part`, `path_event` | an incremental partial-JSON path event of the arguments, in order: `{"type", "depth", "key" \| "index", …}` (see below) |
//! | `part_metadata` | `part`, `key`, `value` | metadata set on a part: `id`, `name` (tool calls), `signature`, `citation`, or a dialect-specific delta folded into a non-text block (e.g. `compaction_delta`) |
//! | `part_end` | `part`, `kind`, `outcome`, `content`, `tool_call`? | the part is committed; `content` is the complete part as it appears in the folded message; `outcome` is `complete`, `invalid_arguments` (with `error` and `raw`) or `incomplete`; a `tool_call` part carries its call, provider-neutral ([`ToolCall`]: `id`, `id_synthesized`, `name`, `arguments`, `input_format`, `provider_executed`) |
//! | `usage` | `usage` | the usage object as folded so far (already merged; replace yours with it) |
//! | `stop_reason` | `choice`, `reason` | the provider's stop / finish reason for a choice became known |
//! | `turn_end` | `stop_reason` | the terminal event arrived (`message_stop`, `[DONE]`, `response.completed` / `response.incomplete`), or the host aborted (`stop_reason: "aborted"`); nothing follows but warnings |
//! | `turn_reset` | – | after a reconnection, the server started the answer over: discard everything shown of the partial turn; the events that follow rebuild it from the start (part ids restart at 0) |
//! | `error` | `error_type`, `message`, `request_id`, `output_emitted` | the provider reported an error inside the stream; the turn ends |
//! | `warning` | `code`, `message` | recoverable bad input; folding went on (see the codes in [`super`]) |
//! | `unknown` | `scope`, `provider_type`, `data` | an event (`scope: "event"`) or delta (`scope: "delta"`) of a type this version does not know, carried through unfolded |
//!
//! A `path_event` costs O(1) however deep the arguments nest: it carries
//! the `depth` (number of path segments, 0 for the root value) and the last
//! path segment — `key` (an object member) or `index` (an array element),
//! absent at the root — not the whole path; consecutive events of a tool
//! call share all but the last segment of the shorter path, so a host that
//! wants full paths keeps a stack: cut it to `depth - 1`, push the segment.
//! Then, by `type`: `container_start` has `kind` (`object` / `array`);
//! `string_append` has `text` (the newly decoded text of a string);
//! `value_complete` has `value` for a scalar (strings included) and `kind`
//! for a container, whose value is not repeated (it is in the `part_end`).
//!
//! **A tool call is ready** exactly when its `part_end` has `kind: "tool_call"`
//! and `outcome: "complete"`: its arguments were complete, valid JSON (or,
//! for a call whose input is free text, the provider finished it). Never
//! before, and never otherwise. That `part_end` is the seed event model's
//! `tool_call_ready { id, name, input }`: its `tool_call` member
//! ([`ToolCall`], [`StreamEvent::ready_tool_call`]) gives the call without
//! any dialect JSON, the same in every dialect:
//!
//! * `id` — the provider's id of the call, unique in the turn; when the
//!   provider sent none (Gemini and Ollama never do, OpenAI-compatible
//!   servers sometimes send `id: null`), or sent the id of an earlier call
//!   of the turn again, a synthesized one, `id_synthesized: true`:
//!   `ssefold_call_<part>` (the part id), with `_2`, `_3`… appended when the
//!   stream already used that text as a provider id. Deterministic for a
//!   given stream (any chunking), made of ASCII letters, digits and `_`
//!   (every provider's id pattern accepts it). The folded message keeps the
//!   provider's `null` (it is the SDK's); the next request written from the
//!   turn ([`crate::agent`]) uses the synthesized id where the provider
//!   matches results by id, and leaves it out where it matches them by name
//!   and order (Gemini, Ollama).
//! * `name` — the tool's name (`""` when the provider sent none).
//! * `arguments` — the input as text: for `input_format: "json"` the JSON
//!   text the provider streamed (a provider that sends a whole object —
//!   Gemini `args`, Ollama `arguments`, Bedrock Converse `input`, an
//!   Anthropic block sent whole — gives its compact serialization; no
//!   arguments at all is `{}`); for `input_format: "text"` (an OpenAI
//!   Responses custom tool: the output of a grammar, not JSON) the free
//!   text, as streamed.
//! * `provider_executed` — the provider runs the call itself and its result
//!   is in the stream (Anthropic `server_tool_use` and `mcp_tool_use`,
//!   Responses `mcp_call`): a host never runs it. The Responses built-in
//!   tools (web search, file search, code interpreter, image generation),
//!   Gemini `executableCode` and Converse server tool blocks are `other`
//!   parts: each is a whole item carrying its own result.
//!
//! A `tool_call` part that ends `invalid_arguments` or `incomplete` carries
//! its call too (with the raw text received as `arguments`): it must never
//! run, but the provider still expects a result for it in the next request.

use serde_json::{Map, Value};

use crate::json::PathEvent;

/// The kind of a part. Wire names: `text`, `reasoning`, `tool_call`,
/// `refusal`, `media`, `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PartKind {
    /// Answer text (Anthropic `text`, OpenAI `content` / `output_text`).
    Text,
    /// Reasoning: Anthropic `thinking` / `redacted_thinking`, OpenAI-compatible
    /// `reasoning_content` / `reasoning`, Responses `reasoning` items.
    Reasoning,
    /// A tool call whose arguments stream as JSON: Anthropic `tool_use`,
    /// `server_tool_use`, `mcp_tool_use`; OpenAI function calls.
    ToolCall,
    /// An OpenAI refusal.
    Refusal,
    /// Bytes the provider sends as base64 (OpenAI Chat `audio`, Responses
    /// partial images and audio, Gemini `inlineData`): `media_delta`s carry
    /// them decoded, with the MIME type; `text_delta`s, an audio transcript.
    Media,
    /// Any other block or item, passed through whole (e.g.
    /// `web_search_tool_result`, `compaction`, unknown types).
    Other,
}

impl PartKind {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            PartKind::Text => "text",
            PartKind::Reasoning => "reasoning",
            PartKind::ToolCall => "tool_call",
            PartKind::Refusal => "refusal",
            PartKind::Media => "media",
            PartKind::Other => "other",
        }
    }
}

/// How a part ended (field `outcome` of `part_end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PartOutcome<'a> {
    /// Complete. For a tool call: its arguments are complete, valid JSON
    /// (the call is ready).
    Complete,
    /// A tool call whose arguments are not valid JSON. `raw` is the exact
    /// text received; `error` says why.
    InvalidArguments {
        /// Why the arguments were rejected.
        error: &'a str,
        /// The raw argument text, as received.
        raw: &'a str,
    },
    /// The stream ended (or the turn was cut) while the part was open. A
    /// tool call with this outcome is not ready.
    Incomplete,
}

impl PartOutcome<'_> {
    /// The wire name: `complete`, `invalid_arguments` or `incomplete`.
    pub fn name(&self) -> &'static str {
        match self {
            PartOutcome::Complete => "complete",
            PartOutcome::InvalidArguments { .. } => "invalid_arguments",
            PartOutcome::Incomplete => "incomplete",
        }
    }
}

/// The code of a `warning` event: recoverable bad input, folding went on.
/// Its wire name ([`WarningCode::as_str`]) is what the JSON form, the C ABI,
/// Python and Go carry; the table in [`super`] says when each is emitted.
/// New codes may be added in minor releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WarningCode {
    /// `unterminated_final_event`: at `finish`, the stream's last event lacked its dispatching blank line but its data was complete JSON (or `[DONE]`): it was applied.
    UnterminatedFinalEvent,
    /// `truncated_final_event`: at `finish`, the last undispatched event's data was not complete JSON: discarded.
    TruncatedFinalEvent,
    /// `event_before_start`: a content event before `message_start` / `response.created`: an empty message was started implicitly and the event applied.
    EventBeforeStart,
    /// `duplicate_start`: a second `message_start` / `response.created` outside a reconnection.
    DuplicateStart,
    /// `duplicate_event`: after a reconnection, a Responses event numbered at or below the cursor: skipped.
    DuplicateEvent,
    /// `out_of_order_event`: a Responses event numbered at or below one already applied on the same connection: applied.
    OutOfOrderEvent,
    /// `data_after_terminal`: an event after the terminal event.
    DataAfterTerminal,
    /// `unknown_part_index`: a delta or stop for a block/item index never started.
    UnknownPartIndex,
    /// `unexpected_part_index`: a block started at an index other than the next one (folded by index anyway).
    UnexpectedPartIndex,
    /// `duplicate_part_index`: a second start for an index already started.
    DuplicatePartIndex,
    /// `delta_type_mismatch`: a delta whose type does not fit its block.
    DeltaTypeMismatch,
    /// `part_already_ended`: a delta or stop for a block already stopped.
    PartAlreadyEnded,
    /// `part_not_ended`: the terminal event arrived while a part was open.
    PartNotEnded,
    /// `terminal_output_mismatch`: Responses: the terminal `output`'s final text of an open item does not extend what was streamed.
    TerminalOutputMismatch,
    /// `invalid_event`: an event whose JSON lacks a required field or has an unexpected shape.
    InvalidEvent,
    /// `lone_surrogate`: a lone surrogate escape (`\\uD800`-`\\uDFFF` unpaired) read as U+FFFD.
    LoneSurrogate,
    /// `unnamed_tool_call`: a tool call committed ready with neither id nor name.
    UnnamedToolCall,
    /// `terminal_before_start`: a terminal event before the answer started: ignored.
    TerminalBeforeStart,
    /// `invalid_base64`: a media part's base64 text is not valid base64: its `media_delta`s stop there; the text stays in the message.
    InvalidBase64,
    /// `path_events_dropped`: one call of the stream reached `max_path_events_per_feed` path events: the rest of that call's are dropped (the argument text and the fold are complete).
    PathEventsDropped,
    /// `terminal_missing`: the body ended without the terminal event once the answer was whole (OpenAI Chat: every choice's `finish_reason` and the announced usage came, no `[DONE]`): the turn ended normally.
    TerminalMissing,
}

impl WarningCode {
    /// Every code, in the order of the table in [`super`].
    pub fn all() -> [WarningCode; 21] {
        [
            WarningCode::UnterminatedFinalEvent,
            WarningCode::TruncatedFinalEvent,
            WarningCode::EventBeforeStart,
            WarningCode::DuplicateStart,
            WarningCode::DuplicateEvent,
            WarningCode::OutOfOrderEvent,
            WarningCode::DataAfterTerminal,
            WarningCode::UnknownPartIndex,
            WarningCode::UnexpectedPartIndex,
            WarningCode::DuplicatePartIndex,
            WarningCode::DeltaTypeMismatch,
            WarningCode::PartAlreadyEnded,
            WarningCode::PartNotEnded,
            WarningCode::TerminalOutputMismatch,
            WarningCode::InvalidEvent,
            WarningCode::LoneSurrogate,
            WarningCode::UnnamedToolCall,
            WarningCode::TerminalBeforeStart,
            WarningCode::InvalidBase64,
            WarningCode::PathEventsDropped,
            WarningCode::TerminalMissing,
        ]
    }

    /// The wire name (snake_case), stable across releases.
    pub fn name(self) -> &'static str {
        match self {
            WarningCode::UnterminatedFinalEvent => "unterminated_final_event",
            WarningCode::TruncatedFinalEvent => "truncated_final_event",
            WarningCode::EventBeforeStart => "event_before_start",
            WarningCode::DuplicateStart => "duplicate_start",
            WarningCode::DuplicateEvent => "duplicate_event",
            WarningCode::OutOfOrderEvent => "out_of_order_event",
            WarningCode::DataAfterTerminal => "data_after_terminal",
            WarningCode::UnknownPartIndex => "unknown_part_index",
            WarningCode::UnexpectedPartIndex => "unexpected_part_index",
            WarningCode::DuplicatePartIndex => "duplicate_part_index",
            WarningCode::DeltaTypeMismatch => "delta_type_mismatch",
            WarningCode::PartAlreadyEnded => "part_already_ended",
            WarningCode::PartNotEnded => "part_not_ended",
            WarningCode::TerminalOutputMismatch => "terminal_output_mismatch",
            WarningCode::InvalidEvent => "invalid_event",
            WarningCode::LoneSurrogate => "lone_surrogate",
            WarningCode::UnnamedToolCall => "unnamed_tool_call",
            WarningCode::TerminalBeforeStart => "terminal_before_start",
            WarningCode::InvalidBase64 => "invalid_base64",
            WarningCode::PathEventsDropped => "path_events_dropped",
            WarningCode::TerminalMissing => "terminal_missing",
        }
    }

    /// The wire name: the old name of [`name`](Self::name).
    #[deprecated(note = "use `name()`: every enum's wire name is `name()`")]
    pub fn as_str(self) -> &'static str {
        self.name()
    }

    /// The code whose wire name is `name`, if any.
    pub fn from_name(name: &str) -> Option<WarningCode> {
        WarningCode::all().into_iter().find(|c| c.name() == name)
    }
}

impl std::fmt::Display for WarningCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a tool call's input is written (`input_format`). Wire names: `json`,
/// `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ToolInputFormat {
    /// JSON arguments (every function / tool call): `arguments` is JSON text.
    #[default]
    Json,
    /// Free text (an OpenAI Responses custom tool's `input`: a grammar's
    /// output, not JSON): `arguments` is that text.
    Text,
}

impl ToolInputFormat {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            ToolInputFormat::Json => "json",
            ToolInputFormat::Text => "text",
        }
    }

    /// The format whose wire name is `name`.
    pub fn from_name(name: &str) -> Option<ToolInputFormat> {
        match name {
            "json" => Some(ToolInputFormat::Json),
            "text" => Some(ToolInputFormat::Text),
            _ => None,
        }
    }
}

/// What a `tool_call` part's `part_start` says of its call: what the
/// provider sent with the start. The call's final id, name and arguments
/// are in its `part_end` ([`ToolCall`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCallStart<'a> {
    /// The provider's id of the call, when it came with the start.
    pub id: Option<&'a str>,
    /// The tool's name, when it came with the start.
    pub name: Option<&'a str>,
    /// How the input is written.
    pub input_format: ToolInputFormat,
    /// The provider runs the call itself (see the module docs).
    pub provider_executed: bool,
}

/// A tool call, provider-neutral: what a `tool_call` part's `part_end`
/// carries (see the module docs for each field's rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCall<'a> {
    /// The provider's id of the call, or the synthesized one.
    pub id: &'a str,
    /// Whether `id` was synthesized (the provider sent none).
    pub id_synthesized: bool,
    /// The tool's name (`""` when the provider sent none).
    pub name: &'a str,
    /// The input as text: JSON for [`ToolInputFormat::Json`] (`{}` when the
    /// provider sent no arguments), free text for [`ToolInputFormat::Text`];
    /// the raw text received when the part did not end `complete`.
    pub arguments: &'a str,
    /// How `arguments` is written.
    pub input_format: ToolInputFormat,
    /// The provider runs the call itself: a host never runs it.
    pub provider_executed: bool,
}

impl ToolCallStart<'_> {
    /// The JSON form: `{"id", "name", "input_format", "provider_executed"}`
    /// (`id` and `name` `null` when not known yet).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), self.id.into());
        m.insert("name".into(), self.name.into());
        m.insert("input_format".into(), self.input_format.name().into());
        m.insert("provider_executed".into(), self.provider_executed.into());
        Value::Object(m)
    }
}

impl ToolCall<'_> {
    /// The JSON form: `{"id", "id_synthesized", "name", "arguments",
    /// "input_format", "provider_executed"}`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), self.id.into());
        m.insert("id_synthesized".into(), self.id_synthesized.into());
        m.insert("name".into(), self.name.into());
        m.insert("arguments".into(), self.arguments.into());
        m.insert("input_format".into(), self.input_format.name().into());
        m.insert("provider_executed".into(), self.provider_executed.into());
        Value::Object(m)
    }
}

/// An error the provider reported inside an HTTP 200 stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    /// The provider's error type or code (`overloaded_error`,
    /// `server_error`, …); empty when the provider gave none.
    pub error_type: String,
    /// The provider's message; empty when it gave none.
    pub message: String,
    /// The request id, when the payload carried one.
    pub request_id: Option<String>,
    /// Whether any part had been started before the error.
    pub output_emitted: bool,
}

/// One normalized event. See the module docs for the table of wire names.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum StreamEvent<'a> {
    /// The turn began. `message` is the folded message so far.
    MessageStart {
        /// The dialect's wire name (`anthropic`, `openai_chat`, `openai_responses`).
        provider: &'static str,
        /// The folded message skeleton.
        message: &'a Value,
    },
    /// A part opened.
    PartStart {
        /// Stable part id, assigned 0, 1, 2… in stream order.
        part: u32,
        /// The kind.
        kind: PartKind,
        /// The choice (OpenAI `n > 1`); 0 otherwise.
        choice: u32,
        /// The provider's index of the part (Anthropic block index, OpenAI
        /// tool call index, Responses output index; 0 for chat text).
        index: u64,
        /// The provider's own type (`tool_use`, `thinking`, `function`, …).
        provider_type: &'a str,
        /// A `tool_call` part: what is known of its call (`None` for every
        /// other kind).
        tool_call: Option<ToolCallStart<'a>>,
    },
    /// Text appended to a part.
    TextDelta {
        /// The part.
        part: u32,
        /// The appended text.
        text: &'a str,
    },
    /// Bytes appended to a `media` part, decoded from base64.
    MediaDelta {
        /// The part.
        part: u32,
        /// The media's MIME type (`audio/pcm`, `image/png`, …).
        mime_type: &'a str,
        /// The decoded bytes (never empty).
        data: &'a [u8],
    },
    /// A raw fragment of a tool call's JSON arguments.
    ToolArgsDelta {
        /// The part.
        part: u32,
        /// The fragment.
        json: &'a str,
    },
    /// An incremental partial-JSON path event of a tool call's arguments.
    ToolArgsPath {
        /// The part.
        part: u32,
        /// The path event.
        event: &'a PathEvent<'a>,
    },
    /// Metadata set on a part.
    PartMetadata {
        /// The part.
        part: u32,
        /// `id`, `name`, `signature`, `citation`, or a delta type name.
        key: &'a str,
        /// The value.
        value: &'a Value,
    },
    /// A part was committed.
    PartEnd {
        /// The part.
        part: u32,
        /// The kind.
        kind: PartKind,
        /// How it ended.
        outcome: PartOutcome<'a>,
        /// The part as it appears in the folded message.
        content: &'a Value,
        /// A `tool_call` part: its call, provider-neutral (`None` for every
        /// other kind).
        tool_call: Option<ToolCall<'a>>,
    },
    /// Usage so far (merged per the dialect's rule).
    Usage {
        /// The usage object.
        usage: &'a Value,
    },
    /// A stop / finish reason became known.
    StopReason {
        /// The choice.
        choice: u32,
        /// The reason.
        reason: &'a str,
    },
    /// The terminal event arrived.
    TurnEnd {
        /// The stop reason of the message (choice 0).
        stop_reason: Option<&'a str>,
    },
    /// After a reconnection the server restarted the answer: discard the
    /// partial turn; what follows rebuilds it.
    TurnReset,
    /// The provider reported an error; the turn ends.
    Error {
        /// The error.
        error: &'a ProviderError,
    },
    /// Recoverable bad input.
    Warning {
        /// The code.
        code: WarningCode,
        /// A human-readable explanation.
        message: &'a str,
    },
    /// An event or delta of an unknown type, carried through.
    Unknown {
        /// `event` or `delta`.
        scope: &'static str,
        /// Its provider type.
        provider_type: &'a str,
        /// Its JSON text.
        data: &'a str,
    },
}

impl<'a> StreamEvent<'a> {
    /// The part an event is about (`None` for the events of the turn as a
    /// whole).
    pub fn part(&self) -> Option<u32> {
        match *self {
            StreamEvent::PartStart { part, .. }
            | StreamEvent::TextDelta { part, .. }
            | StreamEvent::MediaDelta { part, .. }
            | StreamEvent::ToolArgsDelta { part, .. }
            | StreamEvent::ToolArgsPath { part, .. }
            | StreamEvent::PartMetadata { part, .. }
            | StreamEvent::PartEnd { part, .. } => Some(part),
            _ => None,
        }
    }

    /// The call of a `part_end` that makes a tool call ready (kind
    /// `tool_call`, outcome `complete`): the seed's `tool_call_ready`.
    /// `None` for every other event.
    pub fn ready_tool_call(&self) -> Option<&ToolCall<'a>> {
        match self {
            StreamEvent::PartEnd { outcome: PartOutcome::Complete, tool_call: Some(call), .. } => Some(call),
            _ => None,
        }
    }

    /// Whether the event is content: output that advances the answer
    /// (text, arguments, media, a part starting or ending, part metadata,
    /// the stop reason, the end of the turn). `message_start`, usage,
    /// warnings, unknown events (pings, keep-alives), errors and
    /// `turn_reset` are not: a stream that sends only those is stalled (see
    /// [`crate::reconnect::StallKind`]), and one cut after only those was
    /// shown nothing, so sending it again is safe. Usage is left out
    /// because Anthropic's `message_start` carries the input usage before
    /// any output; elsewhere it comes with the stop reason, which counts.
    pub fn is_content(&self) -> bool {
        matches!(
            self,
            StreamEvent::PartStart { .. }
                | StreamEvent::TextDelta { .. }
                | StreamEvent::MediaDelta { .. }
                | StreamEvent::ToolArgsDelta { .. }
                | StreamEvent::ToolArgsPath { .. }
                | StreamEvent::PartMetadata { .. }
                | StreamEvent::PartEnd { .. }
                | StreamEvent::StopReason { .. }
                | StreamEvent::TurnEnd { .. }
        )
    }

    /// Every wire name [`name`](Self::name) gives, in the order of the
    /// variants: the table every binding's list of event names is checked
    /// against (`tests/parity.rs`: the C `ssefold_stream_event_kind`, the Go
    /// `EventKind` constants, the Python `_StreamEventType` Literal, the
    /// relay's `push_json`).
    pub const NAMES: &'static [&'static str] = &[
        "message_start",
        "part_start",
        "text_delta",
        "media_delta",
        "tool_args_delta",
        "tool_args_path",
        "part_metadata",
        "part_end",
        "usage",
        "stop_reason",
        "turn_end",
        "turn_reset",
        "error",
        "warning",
        "unknown",
    ];

    /// The wire name (snake_case), used verbatim by the bindings; one of
    /// [`NAMES`](Self::NAMES).
    pub fn name(&self) -> &'static str {
        match self {
            StreamEvent::MessageStart { .. } => "message_start",
            StreamEvent::PartStart { .. } => "part_start",
            StreamEvent::TextDelta { .. } => "text_delta",
            StreamEvent::MediaDelta { .. } => "media_delta",
            StreamEvent::ToolArgsDelta { .. } => "tool_args_delta",
            StreamEvent::ToolArgsPath { .. } => "tool_args_path",
            StreamEvent::PartMetadata { .. } => "part_metadata",
            StreamEvent::PartEnd { .. } => "part_end",
            StreamEvent::Usage { .. } => "usage",
            StreamEvent::StopReason { .. } => "stop_reason",
            StreamEvent::TurnEnd { .. } => "turn_end",
            StreamEvent::TurnReset => "turn_reset",
            StreamEvent::Error { .. } => "error",
            StreamEvent::Warning { .. } => "warning",
            StreamEvent::Unknown { .. } => "unknown",
        }
    }

    /// The JSON form: an object whose first member is `"event": name()`,
    /// then the fields listed in the module table.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("event".into(), Value::from(self.name()));
        self.for_each_field(|k, v| {
            m.insert(k.to_owned(), v);
        });
        Value::Object(m)
    }

    /// Each field of the JSON form after `"event"`, in its order, with its
    /// name: what [`to_json`](Self::to_json) puts in its object, without the
    /// object (a binding building its own map allocates no key).
    pub fn for_each_field(&self, mut put: impl FnMut(&'static str, Value)) {
        match *self {
            StreamEvent::MessageStart { provider, message } => {
                put("provider", provider.into());
                put("message", message.clone());
            }
            StreamEvent::PartStart { part, kind, choice, index, provider_type, tool_call } => {
                put("part", part.into());
                put("kind", kind.name().into());
                put("choice", choice.into());
                put("index", index.into());
                put("provider_type", provider_type.into());
                if let Some(call) = tool_call {
                    put("tool_call", call.to_json());
                }
            }
            StreamEvent::TextDelta { part, text } => {
                put("part", part.into());
                put("text", text.into());
            }
            StreamEvent::MediaDelta { part, mime_type, data } => {
                use base64::Engine;
                put("part", part.into());
                put("mime_type", mime_type.into());
                put("data", base64::engine::general_purpose::STANDARD.encode(data).into());
            }
            StreamEvent::ToolArgsDelta { part, json } => {
                put("part", part.into());
                put("json", json.into());
            }
            StreamEvent::ToolArgsPath { part, event } => {
                put("part", part.into());
                put("path_event", path_event_json(event));
            }
            StreamEvent::PartMetadata { part, key, value } => {
                put("part", part.into());
                put("key", key.into());
                put("value", value.clone());
            }
            StreamEvent::PartEnd { part, kind, outcome, content, tool_call } => {
                put("part", part.into());
                put("kind", kind.name().into());
                put("outcome", outcome.name().into());
                if let PartOutcome::InvalidArguments { error, raw } = outcome {
                    put("error", error.into());
                    put("raw", raw.into());
                }
                put("content", content.clone());
                if let Some(call) = tool_call {
                    put("tool_call", call.to_json());
                }
            }
            StreamEvent::Usage { usage } => put("usage", usage.clone()),
            StreamEvent::StopReason { choice, reason } => {
                put("choice", choice.into());
                put("reason", reason.into());
            }
            StreamEvent::TurnEnd { stop_reason } => put("stop_reason", stop_reason.into()),
            StreamEvent::TurnReset => {}
            StreamEvent::Error { error } => {
                put("error_type", error.error_type.as_str().into());
                put("message", error.message.as_str().into());
                put("request_id", error.request_id.as_deref().into());
                put("output_emitted", error.output_emitted.into());
            }
            StreamEvent::Warning { code, message } => {
                put("code", code.name().into());
                put("message", message.into());
            }
            StreamEvent::Unknown { scope, provider_type, data } => {
                put("scope", scope.into());
                put("provider_type", provider_type.into());
                put("data", data.into());
            }
        }
    }
}

/// JSON form of a partial-JSON path event, O(1) whatever the depth:
/// `{"type", "depth", "key" | "index" (the last path segment, absent at the
/// root), then "kind" | "text" | "value"}`. A closing container gives its
/// `kind`, not its value (the value is in the tool call's `part_end`, and in
/// the typed events); a scalar's `value_complete` gives its `value`.
pub(crate) fn path_event_json(event: &PathEvent<'_>) -> Value {
    use crate::json::{ContainerKind, PathSegment};
    let kind_name = |k: &ContainerKind| match k {
        ContainerKind::Object => "object",
        ContainerKind::Array => "array",
    };
    let path = event.path();
    let mut m = Map::new();
    m.insert("type".into(), event.name().into());
    m.insert("depth".into(), path.len().into());
    match path.last() {
        Some(PathSegment::Key(k)) => m.insert("key".into(), k.as_str().into()),
        Some(PathSegment::Index(i)) => m.insert("index".into(), (*i).into()),
        None => None,
    };
    match event {
        PathEvent::ContainerStart { kind, .. } | PathEvent::ContainerComplete { kind, .. } => {
            m.insert("kind".into(), kind_name(kind).into());
        }
        PathEvent::StringAppend { text, .. } => {
            m.insert("text".into(), (*text).into());
        }
        PathEvent::ValueComplete { value: Value::Object(_), .. } => {
            m.insert("kind".into(), "object".into());
        }
        PathEvent::ValueComplete { value: Value::Array(_), .. } => {
            m.insert("kind".into(), "array".into());
        }
        PathEvent::ValueComplete { value, .. } => {
            m.insert("value".into(), (*value).clone());
        }
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{ContainerKind, PathSegment};
    use serde_json::json;

    #[test]
    fn path_event_json_is_depth_and_last_segment_and_no_container_value() {
        let deep: Vec<PathSegment> = (0..500)
            .map(|i| if i % 2 == 0 { PathSegment::Index(i) } else { PathSegment::Key(format!("k{i}")) })
            .collect();
        let wire = |e: &PathEvent<'_>| path_event_json(e);
        assert_eq!(
            wire(&PathEvent::ContainerStart { path: &[], kind: ContainerKind::Object }),
            json!({"type": "container_start", "depth": 0, "kind": "object"})
        );
        assert_eq!(
            wire(&PathEvent::StringAppend { path: &deep, text: "x" }),
            json!({"type": "string_append", "depth": 500, "key": "k499", "text": "x"})
        );
        assert_eq!(
            wire(&PathEvent::ValueComplete { path: &deep[..1], value: &json!(null) }),
            json!({"type": "value_complete", "depth": 1, "index": 0, "value": null})
        );
        let text = "[".repeat(400) + &"]".repeat(400);
        assert_eq!(
            wire(&PathEvent::ContainerComplete { path: &deep[..99], kind: ContainerKind::Array, json: &text }),
            json!({"type": "value_complete", "depth": 99, "index": 98, "kind": "array"})
        );
        // A tree value (PartialJson's own events) is a container too: its kind, not its value.
        assert_eq!(
            wire(&PathEvent::ValueComplete { path: &deep[..2], value: &json!({"a": [1, 2]}) }),
            json!({"type": "value_complete", "depth": 2, "key": "k1", "kind": "object"})
        );
    }
}

#[cfg(test)]
mod warning_code_tests {
    use super::WarningCode;

    /// The codes of the table in the providers module docs, in order (a code
    /// may have more than one row).
    fn documented_codes() -> Vec<String> {
        let mut codes: Vec<String> = include_str!("mod.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! | `")?.split_once("` |").map(|(c, _)| c.to_owned()))
            .collect();
        codes.dedup();
        let mut seen = std::collections::HashSet::new();
        codes.retain(|c| seen.insert(c.clone()));
        codes
    }

    #[test]
    fn warning_codes_round_trip_and_match_the_documented_table() {
        let names: Vec<&str> = WarningCode::all().iter().map(|c| c.name()).collect();
        for code in WarningCode::all() {
            assert_eq!(WarningCode::from_name(code.name()), Some(code));
            assert_eq!(code.to_string(), code.name());
        }
        assert_eq!(WarningCode::from_name("no_such_code"), None);
        let mut documented = documented_codes();
        let mut all = names.clone();
        documented.sort();
        all.sort();
        assert_eq!(all, documented, "WarningCode and the table in providers/mod.rs list the same codes");
    }
}
