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
mod config;
mod data;
mod detect;
mod driver;
mod error;
pub mod events;
mod fastpath;
mod framing;
pub mod gemini;
mod json_path_args;
mod media;
mod message;
mod ndjson;
pub mod ollama;
pub mod openai_chat;
pub mod openai_responses;
mod prefix;
mod raw;
mod sink;
mod stop;
mod stream;
mod turn;
mod view;

use detect::DIALECTS;

pub use config::{StreamConfig, StreamLimit};
pub use error::StreamError;
pub use events::{
    PartKind, PartOutcome, ProviderError, StreamEvent, ToolCall, ToolCallStart, ToolInputFormat, WarningCode,
};
pub use message::{MessageView, PathStep};
pub use stop::StopClass;
pub use stream::Stream;

pub(crate) use data::{append_str, json_error, parse_value, value_lenient, without_lone_surrogates};
pub(crate) use sink::{check_lone, warn, warn_lone, EventSink, Sink};

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
