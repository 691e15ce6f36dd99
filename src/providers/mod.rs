//! Provider streams: SSE events of a provider's streaming API → normalized
//! [`StreamEvent`]s → the folded message the non-streaming endpoint would
//! have returned.
//!
//! ```
//! use ssefold::providers::{Provider, Stream};
//!
//! let body = concat!(
//!     "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",",
//!     "\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"stop_reason\":null,\"stop_sequence\":null,",
//!     "\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
//!     "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
//!     "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
//!     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,",
//!     "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
//!     "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
//!     "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},",
//!     "\"usage\":{\"output_tokens\":2}}\n\n",
//!     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
//! );
//! let mut stream = Stream::new(Provider::Auto);
//! let mut names = Vec::new();
//! stream.feed(body.as_bytes(), |e| names.push(e.name())).unwrap();
//! stream.finish(|e| names.push(e.name())).unwrap();
//! assert_eq!(names, ["message_start", "usage", "part_start", "text_delta", "part_end", "stop_reason", "usage", "turn_end"]);
//! let message = stream.message();
//! assert_eq!(message["content"][0]["text"], "Hi");
//! assert_eq!(message["usage"]["output_tokens"], 2);
//! ```
//!
//! # Dialects
//!
//! * [`Provider::Anthropic`] — Messages API; see [`anthropic`].
//! * [`Provider::OpenAIChat`] — Chat Completions (and OpenAI-compatible
//!   providers); see [`openai_chat`].
//! * [`Provider::OpenAIResponses`] — Responses API; see [`openai_responses`].
//! * [`Provider::Gemini`] — Google Gemini API and Vertex AI; see [`gemini`].
//! * [`Provider::Ollama`] — Ollama's native `/api/chat`, newline-delimited
//!   JSON; see [`ollama`].
//! * [`Provider::Bedrock`] — Amazon Bedrock `InvokeModelWithResponseStream`
//!   with an Anthropic model, AWS event-stream framed; see [`bedrock`].
//! * [`Provider::BedrockConverse`] — Amazon Bedrock `ConverseStream`, AWS
//!   event-stream framed; see [`bedrock_converse`].
//! * [`Provider::Auto`] — detected from the first event that carries data:
//!   Anthropic when its type is one of the Messages event types, Responses
//!   when it starts with `response.` (an `error` event: Responses when it
//!   has a `sequence_number`, its error a `code` or `param`, or is flat;
//!   else Anthropic), Chat for `chat.completion.chunk`
//!   objects (or any object with `choices`), Gemini for an object with
//!   `candidates`, `usageMetadata`, `promptFeedback` or `modelVersion`.
//!   The framing comes first, from the body's first bytes (see "Framing"
//!   below): a body whose first byte after an optional BOM and blank bytes
//!   is `{` is not SSE but newline-delimited JSON: Ollama's (each line is
//!   one event; the line rules in [`ollama`]).
//!   A body whose first byte is 0x00 (an event-stream prelude) is AWS
//!   event-stream framed: Bedrock's; its first event decides, `chunk`
//!   [`Provider::Bedrock`], anything else [`Provider::BedrockConverse`]
//!   (a broken frame is [`StreamError::EventStream`]; an exception before
//!   any event names no dialect: the typed provider error, the stream
//!   still [`Provider::Auto`]).
//!   A `[DONE]` before any event is
//!   a stray terminal (warning `terminal_before_start`): it names no dialect,
//!   detection waits for the next event. A first event that fits none is
//!   [`StreamError::UnknownDialect`].
//!
//! # Framing
//!
//! [`Provider::Auto`] tells the framing from the body's first bytes, the
//! same way for every chunking of the body:
//!
//! | the body starts with | framing |
//! | --- | --- |
//! | `{`, after an optional BOM and blank bytes (space, tab, CR, LF) | newline-delimited JSON (Ollama): a BOM and leading blank lines are allowed, as on any NDJSON body |
//! | 0x00 (an event-stream prelude: a message under 16 MiB) | the AWS event stream (Bedrock) |
//! | 0x00 after a BOM or blank bytes | the AWS event stream, which starts with its prelude: the bytes before it are read as one and fail its CRC ([`StreamError::EventStream`] `PreludeCrcMismatch` at offset 0), as with the dialect given |
//! | anything else, after an optional BOM and blank bytes | SSE (the BOM stripped, the blank lines read by the SSE rules) |
//! | a BOM and blank bytes only | [`StreamError::Incomplete`] (`any event`), or the SSE decoder's error for them (a blank line over `sse.max_line_len`) |
//!
//! A blank start longer than `sse.max_line_len` is the line-limit error of
//! the framing its first other byte picks.
//!
//! A stream given an explicit dialect checks the events before the answer
//! starts: one that the given dialect would not detect but another one
//! would (e.g. an Anthropic `message_start` given to
//! [`Provider::OpenAIChat`]) is [`StreamError::DialectMismatch`], naming the
//! dialect seen, instead of a mixed or empty message. `error` events and
//! data that is not a JSON object fit several dialects and are never a
//! mismatch.
//!
//! The normalized events are listed in [`events`].
//!
//! # Bad input: errors and warnings
//!
//! **Errors** ([`StreamError`], returned by `feed`/`finish`; the stream is
//! then closed, every later call returns [`StreamError::Closed`], and
//! [`Stream::message`] still returns everything folded so far):
//! an SSE decoding error, an event whose data is not JSON
//! ([`StreamError::InvalidJson`]; except `event: error` with a plain-text
//! body, which is a provider error whose message is that text), a configured limit exceeded, a provider
//! error inside the stream ([`StreamError::Provider`], announced by an
//! `error` event first), an undetectable dialect, and, from `finish`, a
//! stream that ended before its terminal event ([`StreamError::Incomplete`];
//! parts still open are committed first with outcome `incomplete`; Gemini
//! has no terminal event: its body must end after every candidate's
//! `finishReason`; an OpenAI Chat body that ends without `[DONE]` after
//! every choice's `finish_reason` and its announced usage is complete, with
//! a `terminal_missing` warning; [`Stream::is_complete_at_end`] tells
//! before `finish` whether the body may end here).
//!
//! **Warnings** (a `warning` event; folding goes on; the offending event is
//! ignored unless said otherwise), by code:
//!
//! | code | when |
//! | --- | --- |
//! | `unterminated_final_event` | at `finish`, the stream's last event lacked its dispatching blank line but its data was complete JSON (or `[DONE]`): it was applied |
//! | `truncated_final_event` | at `finish`, the last undispatched event's data was not complete JSON: discarded |
//! | `event_before_start` | a content event before `message_start` / `response.created`: an empty message is started implicitly and the event applied (a later `message_start` still supplies its fields) |
//! | `duplicate_start` | a second `message_start` / `response.created` (outside a reconnection, where it means a restart: `turn_reset`) |
//! | `duplicate_event` | after `reconnect`, a Responses event whose `sequence_number` is at or below the cursor (a resumed server replaying): skipped |
//! | `out_of_order_event` | a Responses event numbered at or below one already applied on the same connection: applied |
//! | `data_after_terminal` | an event after the terminal event |
//! | `unknown_part_index` | a delta or stop for a block/item index never started |
//! | `unexpected_part_index` | a block started at an index other than the next one (folded by index anyway) |
//! | `duplicate_part_index` | a second start for an index already started |
//! | `delta_type_mismatch` | a delta whose type does not fit its block (e.g. `text_delta` on `tool_use`) |
//! | `part_already_ended` | a delta or stop for a block already stopped |
//! | `part_not_ended` | the terminal event arrived while a part was open (committed as `incomplete`; Responses: completed from the terminal `output` when it holds the item complete) |
//! | `terminal_output_mismatch` | Responses: the terminal `output`'s final text of an open item does not extend what was streamed (committed as `incomplete`) |
//! | `invalid_event` | an event whose JSON lacks a required field (e.g. no `index`) or has an unexpected shape (e.g. a non-object `delta`, a non-integer `sequence_number`, data that is not an object); what can be applied of it still is (OpenAI Chat: every other member of the chunk) |
//! | `lone_surrogate` | a tool call's arguments hold a lone surrogate escape (`"\ud83d"`, allowed by RFC 8259's grammar, accepted by `json.loads` / `JSON.parse`): decoded to U+FFFD in the parsed arguments and the path events, kept as is in the raw text |
//! | `unnamed_tool_call` | a tool call committed ready with neither id nor name (its folded name is `""`) |
//! | `lone_surrogate` | a `\uD800`-`\uDFFF` escape not part of a surrogate pair (RFC 8259's grammar allows it; JavaScript and Python accept it; serde_json does not): read as U+FFFD, wherever it is in the event (delta text, tool-argument fragment, any other member); the event is applied |
//! | `terminal_before_start` | a terminal event (`message_stop`, `[DONE]`) before the answer started (before any event that starts or fills it): a stray one, not the end; ignored, and folding goes on. Responses: a `response.completed` / `response.incomplete` whose `response` holds an `output` array is a whole answer in one event and is folded as such (warning `event_before_start`); without one it is ignored with this warning. Ollama: a `done: true` line without content first is stray only when another line follows (alone, it is an empty answer; see [`ollama`]) |
//! | `invalid_base64` | a media part's base64 text holds a character outside the alphabet, misplaced padding or a lone final character: its `media_delta`s stop there (later bytes could not be aligned); its text stays in the folded message as received |
//! | `terminal_missing` | at `finish`, the body ended without the terminal event but the answer is whole (OpenAI Chat: no `[DONE]` after every choice's `finish_reason` and, when a chunk announced it with `"usage": null`, the usage chunk — vLLM, Hugging Face TGI, several proxies): the turn ends normally (`turn_end` with the stop reason), never `Incomplete` |
//! | `path_events_dropped` | one call of the stream (a `feed`, a `finish`) reached `max_path_events_per_feed` `tool_args_path` events (one whole-arguments delta gives one per token): the rest of that call's path events are dropped, once warned; the `tool_args_delta`s and the fold are complete |
//!
//! # Usage rules
//!
//! * Anthropic: `message_start.message.usage` first; each non-null member
//!   of a `message_delta.usage` then **replaces** the member of that name
//!   (the counts are cumulative: replaced, never added); members it omits or
//!   sends as `null` keep their earlier values.
//! * OpenAI Chat: a chunk's non-null `usage` (the final usage-only chunk of
//!   `stream_options.include_usage`) replaces the usage.
//! * OpenAI Responses: a lifecycle event's `response.usage` (the running
//!   usage of `response.in_progress`), then the terminal event's, replaces.
//! * Gemini: a chunk's `usageMetadata` replaces (announced when it changed).
//! * Ollama: the counts of the `done: true` line are the usage.
//!
//! Each change is announced by a `usage` event carrying the merged object.
//!
//! # Tool calls
//!
//! Arguments go through [`crate::json::PartialJson`] as they arrive
//! (`tool_args_delta` with the raw fragment, then its `tool_args_path`
//! events). A tool call is **ready** only when its `part_end` has outcome
//! `complete`: the parser's strict `finish` returned a complete, valid
//! value. Otherwise the outcome is `invalid_arguments` (with the raw text
//! and the reason) or `incomplete` (the turn ended first).
//!
//! # Abort
//!
//! [`Stream::abort`] ends the turn at once: open parts are closed as
//! `incomplete` without further events (a tool call cut off this way is
//! never reported ready), the parts already committed stay in the folded
//! message, and the only event is one `turn_end` with stop reason
//! `aborted`. Nothing is emitted after it, and aborting twice, or after the
//! turn ended, does nothing.
//!
//! # Reconnection: restart or resume
//!
//! When a connection drops, the host asks [`crate::reconnect::Reconnector`]
//! what to do, reconnects with the cursor it names
//! ([`Stream::resume_cursor`] gives the same: `Last-Event-ID`, or the
//! Responses `sequence_number` for `starting_after`), and calls
//! [`Stream::reconnect`] before feeding the new body. The first event of the
//! new connection decides:
//!
//! * **restart** — it starts a new answer (`message_start`,
//!   `response.created`, or a chat chunk with another completion `id`): LLM
//!   APIs do not resume, they answer again. The stream emits `turn_reset`
//!   (the UI discards the partial turn), forgets the partial fold, and folds
//!   the new answer from scratch: nothing is duplicated.
//! * **resume** — anything else: the server continued where it stopped; the
//!   fold continues seamlessly. Responses events of the new connection
//!   replayed from before the cursor are skipped by their `sequence_number`
//!   (warning `duplicate_event`): nothing is applied twice, nothing is lost.
//!   Only a reconnection makes numbers skip: on one connection an event
//!   numbered out of order is applied (warning `out_of_order_event`).

pub mod anthropic;
mod args;
pub mod bedrock;
pub mod bedrock_converse;
pub mod events;
mod framing;
pub mod gemini;
mod json_path_args;
mod media;
mod message;
mod ndjson;
pub mod ollama;
pub mod openai_chat;
pub mod openai_responses;
mod raw;
mod stop;
mod turn;
mod view;

use serde_json::{Map, Value};

use crate::eventstream::{DecoderLimits, EventStreamError};
use crate::reconnect::ResumeCursor;
use crate::sse::{DecodeError, Decoder, DecoderConfig, Event};
use turn::{Dialect, DialectInfo, Flow, Turn, TurnState};

pub use events::{
    PartKind, PartOutcome, ProviderError, StreamEvent, ToolCall, ToolCallStart, ToolInputFormat, WarningCode,
};
pub use message::{MessageView, PathStep};
pub use stop::StopClass;

/// Which provider dialect a [`Stream`] folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions (and OpenAI-compatible providers).
    OpenAIChat,
    /// OpenAI Responses API.
    OpenAIResponses,
    /// Google Gemini API and Vertex AI (`streamGenerateContent?alt=sse`).
    Gemini,
    /// Ollama's native `/api/chat` (newline-delimited JSON, not SSE).
    Ollama,
    /// Amazon Bedrock `InvokeModelWithResponseStream` with an Anthropic
    /// model (AWS event-stream framing; the Anthropic fold).
    Bedrock,
    /// Amazon Bedrock `ConverseStream` (AWS event-stream framing).
    BedrockConverse,
    /// Detected from the first event.
    Auto,
}

impl Provider {
    /// The wire name: `anthropic`, `openai_chat`, `openai_responses`,
    /// `gemini`, `ollama`, `bedrock`, `bedrock_converse`, `auto`.
    pub fn name(self) -> &'static str {
        DIALECTS.iter().find(|d| d.provider == self).map_or("auto", |d| d.name)
    }

    /// Parses a wire name or CLI spelling (`openai-chat` = `openai_chat`;
    /// `openai` and `chat` = `openai_chat`, `responses` = `openai_responses`,
    /// `vertex` and `google` = `gemini`, `bedrock-invoke` and
    /// `bedrock-anthropic` = `bedrock`, `converse` = `bedrock_converse`).
    pub fn from_name(name: &str) -> Option<Provider> {
        let name = name.replace('-', "_");
        if name == "auto" {
            return Some(Provider::Auto);
        }
        DIALECTS.iter().find(|d| d.name == name || d.aliases.contains(&name.as_str())).map(|d| d.provider)
    }
}

/// Limits and options of a [`Stream`]. Every limit is checked; exceeding one
/// is a [`StreamError::LimitExceeded`], never unbounded memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamConfig {
    /// The SSE decoder's limits.
    pub sse: DecoderConfig,
    /// Most parts (blocks, tool calls, Responses items and sub-parts) per
    /// stream. Default 4096.
    pub max_parts: usize,
    /// Most bytes of one tool call's raw arguments. Default 16 MiB.
    pub max_tool_args_bytes: usize,
    /// Most bytes of text in one part (a media part: of its base64 text).
    /// Default 64 MiB.
    pub max_text_bytes: usize,
    /// Most choices (OpenAI `n`). Default 128.
    pub max_choices: usize,
    /// How the folded message shows a tool input that is still streaming,
    /// cut off or invalid (Anthropic; see [`anthropic`]): `false` (default,
    /// the official SDK's default, jiter `partial_mode=True`) drops an
    /// unfinished trailing string together with its key; `true` keeps it with
    /// the text so far (jiter `partial_mode="trailing-strings"`, what the SDK
    /// does when the request carried `anthropic-beta:
    /// fine-grained-tool-streaming-2025-05-14`). Never changes whether a
    /// tool call is ready.
    pub tool_input_trailing_strings: bool,
    /// Most bytes the stream may hold: everything it keeps — texts, tool
    /// arguments (their text and parser), media, and every value a dialect
    /// keeps (top-level, choice, candidate and delta members, signatures,
    /// citations, whole and committed parts, done items, usage). The parts
    /// are checked every 16 KiB received; the dialect's values are measured
    /// after an event whenever what arrived since (each byte at most 160
    /// bytes of tree) might reach the limit, at least every 64 KiB, so the
    /// stream goes past it by at most ~10 MiB; an event over 64 KiB is
    /// estimated against what is left before it is parsed. Over it:
    /// [`StreamError::LimitExceeded`] `max_memory_bytes`, with everything
    /// folded so far kept. A tool input whose tree would cost more than a
    /// sixteenth of it (Anthropic, Bedrock) is kept as its text (see
    /// [`MessageView`]). Default 128 MiB.
    pub max_memory_bytes: usize,
    /// The AWS event-stream framing's limits (Bedrock): the longest message
    /// and headers section accepted (defaults 16 MiB and 128 KiB, the AWS
    /// limits). Over one: [`StreamError::EventStream`] (`MessageTooLarge`,
    /// `HeadersTooLarge`).
    pub event_stream: DecoderLimits,
    /// Most `tool_args_path` events one call of the stream (a `feed`, a
    /// `finish`) emits: past it, that call's other path events are dropped,
    /// with one `path_events_dropped` warning (the arguments' text in the
    /// `tool_args_delta`s, and the fold, stay complete). A host that holds a
    /// call's events at once (the Python and Go `feed` return them as a
    /// list) thus holds at most this many, however much argument text one
    /// chunk carries (whole arguments in one delta: one path event per
    /// token). Default 16,384 (more than a 16 KiB chunk can hold).
    pub max_path_events_per_feed: usize,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            sse: DecoderConfig::default(),
            max_parts: 4096,
            max_tool_args_bytes: 16 << 20,
            max_text_bytes: 64 << 20,
            max_choices: 128,
            tool_input_trailing_strings: false,
            max_memory_bytes: 128 << 20,
            event_stream: DecoderLimits::default(),
            max_path_events_per_feed: 16_384,
        }
    }
}

/// A limit of [`StreamConfig`], as named by [`StreamError::LimitExceeded`].
/// Its wire name ([`StreamLimit::as_str`]) is the config field's name, which
/// the C ABI, Python and Go report. New limits may be added in minor releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamLimit {
    /// [`StreamConfig::max_parts`].
    MaxParts,
    /// [`StreamConfig::max_tool_args_bytes`].
    MaxToolArgsBytes,
    /// [`StreamConfig::max_text_bytes`].
    MaxTextBytes,
    /// [`StreamConfig::max_choices`].
    MaxChoices,
    /// [`StreamConfig::max_memory_bytes`].
    MaxMemoryBytes,
    /// The SSE decoder's `max_line_len` (`StreamConfig::sse`), which also
    /// bounds a line of a newline-delimited JSON body.
    MaxLineLen,
}

impl StreamLimit {
    /// The wire name: the [`StreamConfig`] field's name (`max_parts`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StreamLimit::MaxParts => "max_parts",
            StreamLimit::MaxToolArgsBytes => "max_tool_args_bytes",
            StreamLimit::MaxTextBytes => "max_text_bytes",
            StreamLimit::MaxChoices => "max_choices",
            StreamLimit::MaxMemoryBytes => "max_memory_bytes",
            StreamLimit::MaxLineLen => "max_line_len",
        }
    }
}

impl std::fmt::Display for StreamLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A fatal stream error. After one the stream is closed; the folded message
/// stays available through [`Stream::message`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The SSE layer refused the bytes.
    #[error("SSE: {0}")]
    Sse(#[from] DecodeError),
    /// The AWS event-stream framing (Bedrock) is broken: a CRC mismatch,
    /// bad lengths or headers, a message over the limits.
    #[error("event stream: {0}")]
    EventStream(#[from] EventStreamError),
    /// An event's data was not JSON.
    #[error("event {event_type:?}: data is not JSON: {message}")]
    InvalidJson {
        /// The SSE event type.
        event_type: String,
        /// The parser's message.
        message: String,
    },
    /// A limit of [`StreamConfig`] was exceeded.
    #[error("limit exceeded: {limit} ({max})")]
    LimitExceeded {
        /// Which limit.
        limit: StreamLimit,
        /// Its value.
        max: usize,
    },
    /// The provider reported an error inside the stream.
    #[error("provider error {}: {}", .0.error_type, .0.message)]
    Provider(ProviderError),
    /// [`Provider::Auto`] could not tell the dialect from the first event.
    #[error("cannot detect the provider dialect from the first event")]
    UnknownDialect,
    /// The stream was given one dialect but its first event is clearly
    /// another's (see "Dialects" in the module docs).
    #[error("the stream is {}, not {}: wrong provider (auto detects it)", .detected.name(), .expected.name())]
    DialectMismatch {
        /// The dialect the stream was given.
        expected: Provider,
        /// The dialect the first event belongs to.
        detected: Provider,
    },
    /// The stream ended before its terminal event (`expected`).
    #[error("stream ended before {expected}")]
    Incomplete {
        /// The missing terminal event.
        expected: &'static str,
    },
    /// The stream was already closed by an error or by `finish`.
    #[error("stream closed")]
    Closed,
}

/// Events larger than this are estimated against `max_memory_bytes` before
/// they are parsed (smaller ones cannot amplify past a few MiB).
const BIG_EVENT_BYTES: usize = 64 << 10;

/// The sink type the dialects emit to.
pub(crate) type Sink<'s> = dyn EventSink + 's;

/// Where the dialects emit events: any `FnMut(&StreamEvent)`, or a sink
/// that can use a delta's text as the provider escaped it (the relay).
pub(crate) trait EventSink {
    /// Takes one event.
    fn event(&mut self, event: &StreamEvent<'_>);

    /// Takes a `text_delta` or `tool_args_delta` event together with its
    /// text as the provider escaped it: the contents of the JSON string it
    /// sent, without the quotes, escaped exactly as serde_json escapes the
    /// event's text (only `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`), so that
    /// a sink writing the text as a JSON string can copy it.
    fn escaped(&mut self, event: &StreamEvent<'_>, escaped: &str) {
        let _ = escaped;
        self.event(event);
    }
}

impl<F: FnMut(&StreamEvent<'_>) + ?Sized> EventSink for F {
    fn event(&mut self, event: &StreamEvent<'_>) {
        self(event);
    }
}

/// Emits a warning.
pub(crate) fn warn(sink: &mut Sink<'_>, code: WarningCode, message: &str) {
    sink.event(&StreamEvent::Warning { code, message });
}

/// Parses event data as a JSON value, or the typed error. A lone surrogate
/// escape (which serde_json refuses) is read as U+FFFD, with a
/// `lone_surrogate` warning.
pub(crate) fn parse_value(event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Value, StreamError> {
    value_lenient(event.data(), event.event(), sink)
        .map_err(|e| StreamError::InvalidJson { event_type: event.event().to_owned(), message: e.to_string() })
}

/// Parses JSON text as a value; on serde_json's refusal, again with its lone
/// surrogate escapes replaced by `\uFFFD` (warning `lone_surrogate`, naming
/// `what`), so the common path costs nothing.
pub(crate) fn value_lenient(text: &str, what: &str, sink: &mut Sink<'_>) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text).or_else(|e| match view::replace_lone_surrogates(text) {
        Some((fixed, n)) => {
            let v = serde_json::from_str(&fixed).map_err(|_| e)?;
            warn_lone(sink, what, n);
            Ok(v)
        }
        None => Err(e),
    })
}

/// The `lone_surrogate` warning: `n` lone surrogate escapes in `what` read
/// as U+FFFD.
pub(crate) fn warn_lone(sink: &mut Sink<'_>, what: &str, n: usize) {
    let s = if n == 1 { "" } else { "s" };
    warn(
        sink,
        WarningCode::LoneSurrogate,
        &format!("{what}: {n} lone surrogate escape{s} (\\uD800-\\uDFFF unpaired) read as U+FFFD"),
    );
}

/// Warns `lone_surrogate` when a streamed string held lone surrogates (it
/// was decoded with U+FFFD in their place).
pub(crate) fn check_lone(sink: &mut Sink<'_>, what: &str, s: &view::JsonStr<'_>) {
    if s.lone_surrogates() {
        warn_lone(sink, what, 1);
    }
}

/// The event with its lone surrogate escapes replaced by `\uFFFD` (to
/// re-parse after serde_json refused it), and how many there were.
pub(crate) fn without_lone_surrogates(event: &Event<'_>) -> Option<(String, usize)> {
    view::replace_lone_surrogates(event.data())
}

/// Appends already decoded text to an open part (`text_delta`), within
/// `max_text_bytes`.
pub(crate) fn append_str(turn: &mut Turn, part: u32, text: &str, sink: &mut Sink<'_>) -> Result<(), StreamError> {
    if !text.bytes().any(|b| b == b'\\' || b < 0x20) {
        return turn.append_text(part, &view::JsonStr::decoded(text), sink);
    }
    // Re-escaped, for the turn's one append path (rare: escapes in text).
    let quoted = serde_json::to_string(text).unwrap_or_default();
    match view::JsonStr::from_raw(&quoted) {
        Some(s) => turn.append_text(part, &s, sink),
        None => Ok(()),
    }
}

/// The JSON error of a typed parse.
pub(crate) fn json_error(event: &Event<'_>, e: serde_json::Error) -> StreamError {
    StreamError::InvalidJson { event_type: event.event().to_owned(), message: e.to_string() }
}

// A `Stream` moves between threads and is shared behind locks by the
// bindings (Python objects, Go handles): keep it `Send + Sync`.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Stream>();
};

/// Every dialect, in detection order (the first whose `detects` accepts a
/// stream's first event folds it). Adding a dialect: its file (a [`Dialect`]
/// and its `DIALECT` info), a [`Provider`] variant, and one entry here.
const DIALECTS: [&DialectInfo; 7] = [
    &openai_responses::DIALECT,
    &anthropic::DIALECT,
    &openai_chat::DIALECT,
    &gemini::DIALECT,
    &ollama::DIALECT,
    &bedrock::DIALECT,
    &bedrock_converse::DIALECT,
];

/// The dialect of a [`Provider`] (none for [`Provider::Auto`]).
fn make_dialect(p: Provider) -> Option<Box<dyn Dialect>> {
    DIALECTS.iter().find(|d| d.provider == p).map(|d| (d.make)())
}

/// One streamed turn: feed it bytes (or SSE events), get normalized events,
/// read the folded message at any time.
///
/// Guarantees: events come in stream order; the result does not depend on
/// how the bytes are chunked; no input makes it panic; memory is bounded by
/// [`StreamConfig`] plus the content folded.
#[derive(Debug)]
pub struct Stream {
    provider: Provider,
    decoder: Decoder,
    /// The turn state machine and the parts (shared by every dialect).
    turn: Turn,
    /// The dialect: given, or detected from the first event.
    dialect: Option<Box<dyn Dialect>>,
    closed: bool,
    /// [`Stream::reconnect`] was called: the next event decides restart or
    /// resume.
    resuming: bool,
    aborted: bool,
    /// How the body is framed into events.
    framing: Framing,
}

/// How a [`Stream`]'s bytes become events.
#[derive(Debug)]
enum Framing {
    /// [`Provider::Auto`] before the byte that decides (see [`framing`]):
    /// the undecided start (a BOM, blank bytes) as each framing took it,
    /// once there is one.
    Undecided(Option<Box<framing::Prefix>>),
    /// Server-Sent Events.
    Sse,
    /// One JSON document per line (Ollama).
    Lines(ndjson::Lines),
    /// AWS event-stream messages (Bedrock).
    EventStream(Box<bedrock::Frames>),
}

impl Framing {
    fn of(provider: Provider, limits: DecoderLimits) -> Framing {
        match provider {
            Provider::Auto => Framing::Undecided(None),
            Provider::Ollama => Framing::Lines(ndjson::Lines::default()),
            Provider::Bedrock | Provider::BedrockConverse => Framing::event_stream(limits),
            _ => Framing::Sse,
        }
    }

    fn event_stream(limits: DecoderLimits) -> Framing {
        Framing::EventStream(Box::new(bedrock::Frames::with_limits(limits)))
    }
}

impl Stream {
    /// A stream with the default [`StreamConfig`].
    pub fn new(provider: Provider) -> Self {
        Stream::with_config(provider, StreamConfig::default())
    }

    /// A stream with the given limits.
    pub fn with_config(provider: Provider, config: StreamConfig) -> Self {
        Stream {
            provider,
            decoder: Decoder::with_config(config.sse.clone()),
            framing: Framing::of(provider, config.event_stream),
            turn: Turn::new(config),
            dialect: make_dialect(provider),
            closed: false,
            resuming: false,
            aborted: false,
        }
    }

    /// The limits the stream was made with.
    pub fn config(&self) -> &StreamConfig {
        &self.turn.config
    }

    /// The dialect: the one given, or the one detected ([`Provider::Auto`]
    /// until detection).
    pub fn provider(&self) -> Provider {
        self.dialect.as_ref().map_or(self.provider, |d| d.provider())
    }

    /// Feeds raw bytes of the HTTP body, calling `on_event` for each
    /// normalized event, in stream order.
    pub fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(&StreamEvent<'_>)) -> Result<(), StreamError> {
        self.feed_to(chunk, &mut on_event)
    }

    /// [`feed`](Self::feed) into any [`EventSink`].
    pub(crate) fn feed_to(&mut self, chunk: &[u8], sink: &mut Sink<'_>) -> Result<(), StreamError> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        self.turn.begin_call();
        let mut chunk = chunk;
        if let Framing::Undecided(prefix) = &mut self.framing {
            let (len, picked) = framing::Prefix::scan(prefix.as_deref(), chunk);
            if len > 0 {
                prefix.get_or_insert_with(Default::default).take(&chunk[..len], &mut self.decoder);
                chunk = &chunk[len..];
            }
            let Some(picked) = picked else { return Ok(()) };
            let prefix = prefix.take();
            if let Err(e) = self.pick_framing(picked, prefix) {
                self.closed = true;
                return Err(e);
            }
        }
        let Stream { decoder, turn, dialect, closed, provider, resuming, framing, .. } = self;
        if let Framing::EventStream(frames) = framing {
            let bedrock::Frames { decoder: frames, json } = &mut **frames;
            let mut failure = None;
            let r = frames.feed(chunk, |message| {
                if failure.is_none() {
                    let r = Self::dispatch_frame(*provider, dialect, turn, resuming, &message, json, sink);
                    failure = r.err();
                }
            });
            let r = match (failure, r) {
                (Some(e), _) => Err(e),
                (None, r) => r.map_err(StreamError::EventStream),
            };
            if r.is_err() {
                *closed = true;
            }
            return r;
        }
        if let Framing::Lines(lines) = framing {
            let r = lines.feed(chunk, decoder.config().max_line_len, &mut |line| {
                let e = Event::new("line", line, None, None);
                if *resuming {
                    *resuming = false;
                    Self::restart_or_resume(*provider, dialect, turn, &e, sink);
                }
                Self::dispatch_line(dialect, turn, &e, sink)
            });
            if r.is_err() {
                *closed = true;
            }
            return r;
        }
        let mut events = decoder.feed(chunk);
        while let Some(r) = events.next_event() {
            let result = match r {
                Ok(e) => {
                    if *resuming {
                        *resuming = false;
                        Self::restart_or_resume(*provider, dialect, turn, &e, sink);
                    }
                    Self::dispatch(dialect, turn, &e, sink)
                }
                Err(e) => Err(StreamError::Sse(e)),
            };
            if let Err(e) = result {
                *closed = true;
                return Err(e);
            }
        }
        Ok(())
    }

    /// [`Provider::Auto`]'s framing, picked by the first deciding byte,
    /// going on from the undecided start (see [`framing`]): the error a
    /// framing found in that start is the stream's.
    fn pick_framing(
        &mut self,
        picked: framing::Picked,
        prefix: Option<Box<framing::Prefix>>,
    ) -> Result<(), StreamError> {
        let limits = self.turn.config.event_stream;
        self.framing = match picked {
            framing::Picked::Sse => Framing::Sse,
            framing::Picked::Lines => Framing::Lines(ndjson::Lines::default()),
            framing::Picked::EventStream => Framing::event_stream(limits),
        };
        let Some(mut prefix) = prefix else { return Ok(()) };
        if picked == framing::Picked::Sse {
            return prefix.sse_error().map_or(Ok(()), |e| Err(StreamError::Sse(e)));
        }
        // The SSE decoder's blank line is of no use now.
        self.decoder.finish();
        match &mut self.framing {
            Framing::Lines(lines) => *lines = prefix.into_lines()?,
            Framing::EventStream(frames) => prefix.into_frames(&mut frames.decoder)?,
            _ => {}
        }
        Ok(())
    }

    /// Feeds one already-decoded SSE event (for hosts with their own SSE
    /// decoder). Do not mix with [`feed`](Self::feed) on the same stream.
    pub fn feed_sse(
        &mut self,
        event: &Event<'_>,
        mut on_event: impl FnMut(&StreamEvent<'_>),
    ) -> Result<(), StreamError> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        self.turn.begin_call();
        if self.resuming {
            self.resuming = false;
            Self::restart_or_resume(self.provider, &mut self.dialect, &mut self.turn, event, &mut on_event);
        }
        let r = Self::dispatch(&mut self.dialect, &mut self.turn, event, &mut on_event);
        if r.is_err() {
            self.closed = true;
        }
        r
    }

    /// The first event after [`reconnect`](Self::reconnect): when it starts
    /// a new answer, the partial turn is reset (`turn_reset`).
    fn restart_or_resume(
        provider: Provider,
        dialect: &mut Option<Box<dyn Dialect>>,
        turn: &mut Turn,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) {
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(rename = "type", default, borrow)]
            ty: Option<std::borrow::Cow<'a, str>>,
            #[serde(default, borrow)]
            id: Option<std::borrow::Cow<'a, str>>,
        }
        let Some(d) = dialect else { return };
        let head: Option<Head<'_>> = serde_json::from_str(event.data()).ok();
        let ty = head.as_ref().and_then(|h| h.ty.as_deref()).unwrap_or(event.event());
        if d.is_restart(ty, head.as_ref().and_then(|h| h.id.as_deref())) {
            sink.event(&StreamEvent::TurnReset);
            *dialect = make_dialect(provider);
            turn.reset();
        }
    }

    /// The connection dropped and the host is about to feed the body of a
    /// new one (see "Reconnection" in the module docs). The event the old
    /// connection left unfinished is discarded; the first event of the new
    /// body decides restart (`turn_reset`) or resume.
    ///
    /// # Errors
    /// [`StreamError::Closed`] after `finish`, `abort` or an error.
    pub fn reconnect(&mut self) -> Result<(), StreamError> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        self.decoder.finish();
        match &mut self.framing {
            Framing::Lines(lines) => lines.reset(),
            Framing::EventStream(frames) => {
                frames.decoder.finish();
            }
            // The new body decides anew.
            Framing::Undecided(prefix) => *prefix = None,
            Framing::Sse => {}
        }
        self.resuming = true;
        if let Some(d) = self.dialect.as_deref_mut() {
            d.on_reconnect();
        }
        Ok(())
    }

    /// What to send on reconnection: the Responses `sequence_number` to
    /// resume after (`starting_after`), else the SSE `Last-Event-ID`, else
    /// nothing.
    pub fn resume_cursor(&self) -> ResumeCursor {
        if let Some(n) = self.last_sequence_number() {
            ResumeCursor::StartingAfter(n)
        } else if let Some(id) = self.decoder.last_event_id() {
            ResumeCursor::LastEventId(id.to_owned())
        } else {
            ResumeCursor::None
        }
    }

    /// The SSE last event ID (kept across reconnections).
    pub fn last_event_id(&self) -> Option<&str> {
        self.decoder.last_event_id()
    }

    /// The server's reconnection time (`retry:`), if it sent one.
    pub fn reconnection_time(&self) -> Option<u64> {
        self.decoder.reconnection_time()
    }

    /// The highest Responses `sequence_number` applied (other dialects:
    /// `None`).
    pub fn last_sequence_number(&self) -> Option<u64> {
        self.dialect.as_ref().and_then(|d| d.last_sequence_number())
    }

    /// Aborts the turn (the user cancelled; see "Abort" in the module docs):
    /// one `turn_end` with stop reason `aborted`, and nothing after it.
    /// Open parts are closed as `incomplete` silently; committed parts stay
    /// in [`message`](Self::message). Does nothing once the turn is over.
    pub fn abort(&mut self, mut on_event: impl FnMut(&StreamEvent<'_>)) {
        self.abort_to(&mut |_: &StreamEvent<'_>| {}, &mut on_event);
    }

    /// [`abort`](Self::abort), the open parts' commits (not shown to the
    /// host) going to `closed` (the agent turn gives their calls a result).
    pub(crate) fn abort_to(&mut self, closed: &mut Sink<'_>, on_event: &mut Sink<'_>) {
        if self.closed || self.is_terminated() {
            self.closed = true;
            return;
        }
        self.closed = true;
        self.aborted = true;
        if let Some(d) = self.dialect.as_deref_mut() {
            d.start_implicitly(&mut self.turn, closed);
            self.turn.close_open(d, closed);
            self.turn.state = TurnState::Errored;
        }
        on_event.event(&StreamEvent::TurnEnd { stop_reason: Some("aborted") });
    }

    /// After an error closed the stream: commits the parts still open as
    /// `incomplete` into `closed` (not shown to the host; the agent turn
    /// gives their calls a result), as [`abort`](Self::abort) does.
    pub(crate) fn close_open_parts(&mut self, closed: &mut Sink<'_>) {
        if let Some(d) = self.dialect.as_deref_mut() {
            self.turn.close_open(d, closed);
        }
    }

    /// Whether an error, [`finish`](Self::finish) or [`abort`](Self::abort)
    /// closed the stream.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether [`abort`](Self::abort) ended the turn.
    pub fn is_aborted(&self) -> bool {
        self.aborted
    }

    /// One AWS event-stream message: detection (`chunk`: Bedrock
    /// InvokeModel, anything else: ConverseStream), the restart-or-resume
    /// decision after a reconnection, then the dialect.
    fn dispatch_frame(
        provider: Provider,
        dialect: &mut Option<Box<dyn Dialect>>,
        turn: &mut Turn,
        resuming: &mut bool,
        message: &crate::eventstream::Message<'_>,
        json: &mut Vec<u8>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let error;
        let (event, chunk) = match bedrock::frame_event(message, json, sink) {
            bedrock::Framed::Skip => return Ok(()),
            // An exception first says nothing of the dialect (InvokeModel and
            // ConverseStream fail alike): the error, with none picked.
            bedrock::Framed::Error(data) if dialect.is_none() => {
                return Self::fail(None, turn, bedrock::exception_error(&data), sink);
            }
            bedrock::Framed::Error(data) => {
                error = data;
                (Event::new("error", &error, None, None), None)
            }
            bedrock::Framed::Event { event, chunk } => (event, Some(chunk)),
        };
        let seen = if chunk == Some(true) { Provider::Bedrock } else { Provider::BedrockConverse };
        match dialect {
            None => *dialect = make_dialect(seen),
            Some(d) if turn.state == TurnState::Idle && chunk.is_some() && d.provider() != seen => {
                let expected = d.provider();
                if matches!(expected, Provider::Bedrock | Provider::BedrockConverse) {
                    return Err(StreamError::DialectMismatch { expected, detected: seen });
                }
            }
            Some(_) => {}
        }
        if *resuming {
            *resuming = false;
            Self::restart_or_resume(provider, dialect, turn, &event, sink);
        }
        Self::dispatch(dialect, turn, &event, sink)
    }

    /// One line of a newline-delimited JSON body: Ollama's, the one dialect
    /// framed this way.
    fn dispatch_line(
        dialect: &mut Option<Box<dyn Dialect>>,
        turn: &mut Turn,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        if dialect.is_none() {
            *dialect = make_dialect(Provider::Ollama);
        }
        Self::dispatch(dialect, turn, event, sink).map_err(|e| ndjson::explain_lone_cr(e, event.data()))
    }

    /// One SSE event through the turn state machine: detection, the
    /// dialect's handler, and the end of the turn it signals.
    fn dispatch(
        dialect: &mut Option<Box<dyn Dialect>>,
        turn: &mut Turn,
        event: &Event<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        if event.event() == "error"
            && !turn.is_terminated()
            && serde_json::from_str::<serde::de::IgnoredAny>(event.data()).is_err()
        {
            // `event: error` with a plain-text body (proxies, gateways): a
            // provider error all the same, with the text as its message.
            let error = ProviderError {
                error_type: String::new(),
                message: event.data().to_owned(),
                request_id: None,
                output_emitted: turn.output_emitted(),
            };
            return match dialect {
                Some(d) => {
                    d.start_implicitly(turn, sink);
                    Self::fail(Some(d.as_mut()), turn, error, sink)
                }
                None => Self::fail(None, turn, error, sink),
            };
        }
        if event.data().len() > BIG_EVENT_BYTES {
            // A large event may become a tree many times its size (a whole
            // function call's arguments `[[[[]]]],…`): refused before it is
            // parsed (to detect the dialect, or to fold it) when what it
            // would cost does not fit the budget.
            let estimate = crate::json::scan::estimate_value_bytes(event.data().as_bytes());
            let max = turn.config.max_memory_bytes;
            if turn.held().saturating_add(estimate) > max {
                return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxMemoryBytes, max });
            }
        }
        let d = match dialect {
            Some(d) => {
                if turn.state == TurnState::Idle {
                    check_dialect(d.provider(), event)?;
                }
                d
            }
            None if event.data().trim() == "[DONE]" && turn.state == TurnState::Idle => {
                // A stray terminal first: it names no dialect and ends nothing.
                warn(sink, WarningCode::TerminalBeforeStart, "[DONE] before any event; ignored");
                return Ok(());
            }
            None => dialect.insert((detect(event).ok_or(StreamError::UnknownDialect)?.make)()),
        };
        if turn.is_terminated() {
            warn(sink, WarningCode::DataAfterTerminal, &d.after_terminal(event));
            return Ok(());
        }
        let flow = d.on_event(turn, event, sink)?;
        if !matches!(flow, Flow::Fail(_)) {
            // Everything the dialect keeps counts against the budget.
            turn.check_kept(event.data().len(), || d.footprint())?;
        }
        match flow {
            Flow::Continue => Ok(()),
            Flow::End => {
                turn.close_open(d.as_mut(), sink);
                turn.state = TurnState::Done;
                let reason = d.on_turn_end(turn, sink);
                sink.event(&StreamEvent::TurnEnd { stop_reason: reason.as_deref() });
                Ok(())
            }
            Flow::Fail(error) => Self::fail(Some(d.as_mut()), turn, error, sink),
        }
    }

    /// Ends the turn on a provider error: open parts committed as
    /// `incomplete`, the `error` event, the typed error.
    fn fail(
        dialect: Option<&mut (dyn Dialect + '_)>,
        turn: &mut Turn,
        error: ProviderError,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        if let Some(d) = dialect {
            turn.close_open(d, sink);
            turn.state = TurnState::Errored;
        }
        sink.event(&StreamEvent::Error { error: &error });
        Err(StreamError::Provider(error))
    }

    /// Ends the stream. An event left undispatched by a missing final blank
    /// line is applied only if its data is complete JSON (warning
    /// `unterminated_final_event`), else discarded (warning
    /// `truncated_final_event`). Then, if the terminal event never came and
    /// the answer is not whole without it (see
    /// [`is_complete_at_end`](Self::is_complete_at_end)), open parts are
    /// committed as `incomplete` and [`StreamError::Incomplete`] is returned.
    pub fn finish(&mut self, mut on_event: impl FnMut(&StreamEvent<'_>)) -> Result<(), StreamError> {
        self.finish_to(&mut on_event)
    }

    /// [`finish`](Self::finish) into any [`EventSink`].
    pub(crate) fn finish_to(&mut self, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        if self.closed {
            return Err(StreamError::Closed);
        }
        self.turn.begin_call();
        self.closed = true;
        let unterminated = match &mut self.framing {
            Framing::Lines(lines) => {
                if let Some(line) = lines.finish() {
                    ndjson::finish_line(&mut self.dialect, &mut self.turn, &line, sink)?;
                }
                None
            }
            Framing::EventStream(frames) => {
                let end = frames.decoder.finish();
                if end.discarded_bytes > 0 {
                    let msg = format!("{} bytes of an unfinished event-stream message; discarded", end.discarded_bytes);
                    warn(sink, WarningCode::TruncatedFinalEvent, &msg);
                }
                None
            }
            Framing::Undecided(prefix) => {
                // A blank body: the default framing's (SSE's) error, if any.
                if let Some(e) = prefix.as_mut().and_then(|p| p.sse_error()) {
                    return Err(StreamError::Sse(e));
                }
                self.decoder.finish().unterminated
            }
            Framing::Sse => self.decoder.finish().unterminated,
        };
        if let Some(ev) = unterminated {
            let complete =
                ev.data.trim() == "[DONE]" || serde_json::from_str::<serde::de::IgnoredAny>(&ev.data).is_ok();
            if complete {
                warn(
                    sink,
                    WarningCode::UnterminatedFinalEvent,
                    &format!(
                        "final event {:?} had no dispatching blank line; applied (its data is complete JSON)",
                        ev.event
                    ),
                );
                Self::dispatch(&mut self.dialect, &mut self.turn, &ev.as_event(), sink)?;
            } else {
                warn(
                    sink,
                    WarningCode::TruncatedFinalEvent,
                    &format!("final event {:?} had no dispatching blank line and truncated data; discarded", ev.event),
                );
            }
        }
        let Some(d) = self.dialect.as_deref_mut() else {
            return Err(StreamError::Incomplete { expected: "any event" });
        };
        if self.turn.is_terminated() {
            return Ok(());
        }
        if d.end_of_body(&mut self.turn, sink) {
            // The answer is whole without a terminal event
            // (`complete_at_end`: Gemini, which has none; Chat without
            // `[DONE]`): the end of the body ends the turn.
            self.turn.close_open(d, sink);
            self.turn.state = TurnState::Done;
            let reason = d.on_turn_end(&self.turn, sink);
            sink.event(&StreamEvent::TurnEnd { stop_reason: reason.as_deref() });
            return Ok(());
        }
        self.turn.close_open(d, sink);
        Err(StreamError::Incomplete { expected: d.terminal() })
    }

    /// The folded message so far (also after an error): the JSON the
    /// provider's non-streaming endpoint would have returned. `null` before
    /// the dialect is known.
    pub fn message(&self) -> Value {
        self.dialect.as_ref().map_or(Value::Null, |d| d.message(&self.turn))
    }

    /// The folded message of [`message`](Self::message), lent where the
    /// dialect holds it as it is (a Responses terminal `output`): its JSON
    /// or a host's value is then built without a copy of the message first.
    pub fn message_view(&self) -> MessageView<'_> {
        self.dialect.as_ref().map_or(MessageView::Owned(Value::Null), |d| d.message_view(&self.turn))
    }

    /// Whether the terminal event was seen.
    pub fn is_terminated(&self) -> bool {
        self.turn.is_terminated()
    }

    /// Whether the body may end here: the turn ended normally (its terminal
    /// event came, or [`finish`](Self::finish) already ended it), or the
    /// answer folded so far is whole without a terminal event — Gemini (it
    /// has none) once every candidate has its `finishReason`, Bedrock
    /// Converse after `messageStop`, Ollama on a lone done line, OpenAI Chat
    /// once every choice has its `finish_reason` and the usage a chunk
    /// announced came (no `[DONE]`: vLLM, TGI, proxies).
    ///
    /// Hosts ask it when a connection's body ends, before `finish`: when
    /// true the answer is complete (no reconnection) and `finish` ends the
    /// turn normally (`turn_end` with the stop reason; for OpenAI Chat
    /// without `[DONE]`, after a `terminal_missing` warning). False after an
    /// error or [`abort`](Self::abort), and while the answer is not whole
    /// (then `finish` returns [`StreamError::Incomplete`]). It never changes
    /// the stream, and considers the events dispatched so far only: an
    /// event the body's end left without its dispatching blank line is
    /// decided by `finish` (applied when its data is complete JSON).
    pub fn is_complete_at_end(&self) -> bool {
        if self.turn.state == TurnState::Done {
            return true;
        }
        !self.closed
            && !self.turn.is_terminated()
            && self.dialect.as_deref().is_some_and(|d| d.complete_at_end(&self.turn))
    }

    /// Bytes held by the stream: its own size, the SSE decoder's buffers and
    /// the folded content (capacities).
    pub fn memory_footprint(&self) -> usize {
        core::mem::size_of::<Self>() - core::mem::size_of::<Decoder>()
            + self.decoder.memory_footprint()
            + match &self.framing {
                Framing::Lines(lines) => lines.footprint(),
                Framing::EventStream(frames) => frames.footprint(),
                Framing::Undecided(prefix) => prefix.as_ref().map_or(0, |p| p.footprint()),
                Framing::Sse => 0,
            }
            + self.turn.footprint()
            + self.dialect.as_ref().map_or(0, |d| d.footprint())
    }
}

/// [`StreamError::DialectMismatch`] when `event`, seen before the answer
/// started, is not `given`'s but another dialect's.
fn check_dialect(given: Provider, event: &Event<'_>) -> Result<(), StreamError> {
    let data = event.data().trim();
    if !data.starts_with('{') || event.event() == "error" {
        return Ok(());
    }
    let Ok(ShallowObject(value)) = serde_json::from_str::<ShallowObject>(data) else { return Ok(()) };
    let value = Value::Object(value);
    if value.get("error").is_some() || value.get("type").and_then(Value::as_str) == Some("error") {
        return Ok(());
    }
    let fits = |d: &DialectInfo| (d.detects)(data, Some(&value));
    if DIALECTS.iter().any(|d| d.provider == given && fits(d)) {
        return Ok(());
    }
    match DIALECTS.iter().find(|d| d.provider != given && fits(d)) {
        Some(other) => Err(StreamError::DialectMismatch { expected: given, detected: other.provider }),
        None => Ok(()),
    }
}

/// An event's top-level members as [`check_dialect`] needs them: scalars
/// and `error` read, every other object or array left empty (what the
/// dialects' `detects` look at, without building the rest).
struct ShallowObject(Map<String, Value>);

/// A member of a [`ShallowObject`].
struct Shallow(Value);

impl<'de> serde::Deserialize<'de> for Shallow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Shallow;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Shallow, E> {
                Ok(Shallow(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Shallow, E> {
                Ok(Shallow(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Shallow, E> {
                Ok(Shallow(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Shallow, E> {
                Ok(Shallow(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Shallow, E> {
                Ok(Shallow(Value::String(v.to_owned())))
            }
            fn visit_unit<E>(self) -> Result<Shallow, E> {
                Ok(Shallow(Value::Null))
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Shallow, S::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Shallow(Value::Array(Vec::new())))
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Shallow, M::Error> {
                while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
                Ok(Shallow(Value::Object(Map::new())))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> serde::Deserialize<'de> for ShallowObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ShallowObject;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<ShallowObject, M::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value =
                        if key == "error" { map.next_value::<Value>()? } else { map.next_value::<Shallow>()?.0 };
                    out.insert(key, value);
                }
                Ok(ShallowObject(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Detects the dialect from one event.
fn detect(event: &Event<'_>) -> Option<&'static DialectInfo> {
    let data = event.data().trim();
    // (A lone surrogate does not hide the dialect; the dialect warns.)
    let value: Option<Value> = value_lenient(data, "", &mut |_: &StreamEvent<'_>| {}).ok();
    DIALECTS.iter().copied().find(|d| (d.detects)(data, value.as_ref()))
}

#[cfg(test)]
mod shallow_tests {
    use super::*;

    /// Every dialect's `detects` answers the same on the shallow view as on
    /// the whole value, for the first JSON event of every recording and on
    /// shapes built for the nested `error` rule.
    #[test]
    fn detection_sees_the_same_in_the_shallow_view() {
        let mut firsts: Vec<String> = [
            r#"{"type":"error","error":{"type":"overloaded_error","message":"x"}}"#,
            r#"{"type":"error","error":{"code":"c","message":"x","param":null},"sequence_number":1}"#,
            r#"{"type":"error","code":"c"}"#,
            r#"{"error":{"message":"m","type":"t"}}"#,
            r#"{"candidates":null,"usageMetadata":{"a":1}}"#,
            r#"{"object":"chat.completion.chunk","choices":[{"delta":{}}]}"#,
            r#"{"type":"response.created","response":{"id":"r"}}"#,
        ]
        .map(str::to_owned)
        .to_vec();
        for (_, body) in raw::tests::bodies(&["tests/recordings"]) {
            let text = String::from_utf8_lossy(&body);
            let first = text
                .lines()
                .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
                .find(|l| l.starts_with('{'))
                .map(str::to_owned);
            firsts.extend(first);
        }
        assert!(firsts.len() > 1000, "{}", firsts.len());
        for data in &firsts {
            let Ok(full) = serde_json::from_str::<Value>(data) else { continue };
            let ShallowObject(shallow) = serde_json::from_str(data).unwrap();
            let shallow = Value::Object(shallow);
            for d in DIALECTS {
                assert_eq!((d.detects)(data, Some(&full)), (d.detects)(data, Some(&shallow)), "{}: {data}", d.name);
            }
            assert_eq!(full.get("error").is_some(), shallow.get("error").is_some());
            assert_eq!(full.get("type"), shallow.get("type"));
        }
    }
}
