//! Relaying a provider stream to a web page as Server-Sent Events.
//!
//! A [`Relay`] takes normalized stream events (from a [`Stream`], or provider
//! bytes fed straight through [`Relay::feed`]) and events the host injects
//! (tool results, approvals, log lines, errors, the finish), and writes the
//! browser's SSE bytes in one of two [`RelayFormat`]s:
//!
//! - [`RelayFormat::AiSdk`]: the Vercel AI SDK's UI message stream protocol
//!   (`useChat` reads it): `data:` lines of JSON chunks `start`,
//!   `start-step`, `text-start/-delta/-end`, `reasoning-start/-delta/-end`,
//!   `tool-input-start/-delta/-available` (`tool-input-error` for invalid
//!   arguments), `tool-output-available` / `tool-output-error`,
//!   `tool-approval-request`, `data-log`, `finish-step`, `finish`, `error`,
//!   then `data: [DONE]`; response headers in [`Relay::headers`] (with
//!   `x-vercel-ai-ui-message-stream: v1`). Tools the provider runs itself
//!   (Anthropic `server_tool_use` / `mcp_tool_use` and their `*_tool_result`
//!   blocks, Responses `web_search_call`, `mcp_call`, …) are tool parts with
//!   `providerExecuted: true` and the provider's output. What `ai` 7
//!   defines, where the relay has the fact: `source-url` /
//!   `source-document` for each source the answer cites, once (Anthropic
//!   `citations`, Responses annotations, Converse `citation`s, after their
//!   text's `text-end`, which carries them as `citations`; a Gemini
//!   candidate's `groundingMetadata` / `citationMetadata` after its turn,
//!   read from the folded message: only with [`Relay::with_stream`]); `file`
//!   (a `data:` URL) for a media part and a Responses generated image;
//!   `message-metadata` with the provider's usage when a turn ends;
//!   `reset-step` when the server restarts the answer ([`StreamEvent::TurnReset`]:
//!   the open step's parts are dropped and rebuilt; `ai` 6 does not know
//!   this chunk); `abort` instead of `finish` when the turn was aborted
//!   (stop reason `aborted`; [`Relay::abort`]); `inputEncoding: "text"` on the
//!   `tool-input-start` of a call whose input is free text (a Responses
//!   custom tool). A tool call's argument deltas are coalesced
//!   ([`RelayConfig::tool_input_coalesce_bytes`], [`Relay::tick`]): the
//!   browser parses the whole input again on each.
//! - [`RelayFormat::Catalog`]: the named events of the CMS agent design's
//!   browser streaming (the table in the README), with its payloads member
//!   for member: `text-delta` `{delta}` (the answer only; reasoning is
//!   `reasoning-delta`), `tool-call` `{id, name, args}`, `tool-result`
//!   `{id, name, result, duration?}`, `approval-required`
//!   `{approvalId, toolName, input, message}`, `step-completed`
//!   `{stepNumber, usage}`, `log` `{level, message, metadata?, timestamp,
//!   traceId}`, `finish` `{finishReason, usage: {promptTokens,
//!   completionTokens, totalTokens}, stepCount}` ([`FinishReason`] maps the
//!   provider's stop reason), `error` `{error, code?, recoverable}`. Extra
//!   members (`providerExecuted`, `isError`, `stopReason`, `providerUsage`,
//!   `toolCallId`) come besides them, never instead. When the answer starts
//!   over (a reconnection that restarts the provider stream) the catalog
//!   writes `turn-reset` `{}` and a `text-delta` `{delta: "", snapshot: ""}`:
//!   a UI that honours the seed's `snapshot` (the full text so far) drops the
//!   abandoned text. [`CATALOG_EVENT_NAMES`] lists every event name.
//!
//! Sans-IO: every call returns the bytes to send now (a view of a buffer
//! reused across calls: zero allocations per delta in steady state) and the
//! host writes them; the relay never reads a clock ([`Relay::keep_alive`],
//! [`Relay::tick`] and [`Relay::log`] take the host's time) and never
//! buffers output beyond its replay bound, but for the argument text of one
//! tool call it holds back (coalescing), written before any other frame.
//! Besides its output it holds each open tool call's argument text (as the
//! browser does), so that the ready call's input is that text copied, not
//! its folded value encoded again. Text and argument deltas that the
//! provider escaped exactly as the relay escapes are copied as they came.
//!
//! **Resumable.** Every event carries an SSE `id` (1, 2, 3… per relay); the
//! last [`RelayConfig::replay_bytes`] of frames are kept, and
//! [`Relay::replay_after`] gives a browser that reconnects with
//! `Last-Event-ID` what it missed, or [`RelayError::ReplayTooOld`] when that
//! is no longer held.
//!
//! **Resumable across processes.** That buffer lives in one process. A host
//! that runs several (or restarts them) keeps the frames in a replay store
//! they all reach (Redis Streams in the Python and Go bindings): after each
//! call it appends [`Relay::frames`] (each frame of the call's output with
//! its event id), and after [`Relay::finish`] a finished marker with
//! [`Relay::trailer`] (what follows the last frame). Any process then serves
//! a reconnecting browser from the store, starting after
//! [`resume_point`]`(Last-Event-ID, oldest held, newest held)`, which
//! decides as [`Relay::replay_after`] does. The store's I/O is the host's:
//! the relay only cuts its output at frame boundaries.

mod cite;
mod frame;
mod replay;
mod wire;

use serde_json::Value;

use crate::providers::{EventSink, PartKind, PartOutcome, Stream, StreamError, StreamEvent, ToolCall, ToolInputFormat};

use cite::{annotations, citations, grounding_sources, FileData, Source};
use frame::{begin_frame, end_frame, DeltaText, JsonObject};
pub use replay::Frames;
use replay::{Gap, ReplayBuffer};

/// The browser protocol a [`Relay`] writes. Wire names: `ai-sdk`, `catalog`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RelayFormat {
    /// The Vercel AI SDK's UI message stream protocol (v1).
    AiSdk,
    /// Named events of the agent-backend catalog (README, "Relay").
    Catalog,
}

impl RelayFormat {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            RelayFormat::AiSdk => "ai-sdk",
            RelayFormat::Catalog => "catalog",
        }
    }

    /// Parses a wire name (`ai_sdk` is accepted too).
    pub fn from_name(name: &str) -> Option<RelayFormat> {
        match name {
            "ai-sdk" | "ai_sdk" => Some(RelayFormat::AiSdk),
            "catalog" => Some(RelayFormat::Catalog),
            _ => None,
        }
    }
}

/// Settings of a [`Relay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayConfig {
    /// The protocol written.
    pub format: RelayFormat,
    /// Bytes of recent frames kept for [`Relay::replay_after`] (default
    /// [`RelayConfig::DEFAULT_REPLAY_BYTES`]; 0 keeps none). The buffer
    /// holding them (and the output of the current call, written after
    /// them) never exceeds twice this plus that output (dropped frames are
    /// cut away in bulk, so that each byte is moved at most once).
    pub replay_bytes: usize,
    /// A keep-alive comment is due after this long without output (default
    /// 15 s, below the idle timeouts of common proxies).
    pub keep_alive_ms: u64,
    /// AI SDK format: a tool call's argument deltas are held back and
    /// written as one `tool-input-delta` once this many bytes of it are
    /// held, as written (JSON-escaped) (0: every delta is its own chunk, as
    /// the provider sent it). The
    /// browser's `useChat` parses a call's whole input text again on every
    /// delta (quadratic in the input's size: seconds for a few hundred KB
    /// sent in the usual few-byte deltas), so fewer, larger deltas are
    /// cheaper for it; the default
    /// ([`RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_BYTES`], 4 KiB) makes a
    /// 320 KB argument 80 parses instead of thousands, and is small next to
    /// a frame of text. Held text is never lost or reordered: it is
    /// written before any other frame, at the call's end, and by
    /// [`Relay::tick`] once [`tool_input_coalesce_ms`](Self::tool_input_coalesce_ms)
    /// have passed ([`Relay::flush`] writes it at once).
    pub tool_input_coalesce_bytes: usize,
    /// AI SDK format: the longest argument text is held back, by the host's
    /// clock given to [`Relay::tick`] (default
    /// [`RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_MS`], 50 ms: under the
    /// ~100 ms a reader notices, and 20 updates a second of a call's input
    /// is as smooth as a UI shows it). 0: every [`Relay::tick`] writes what
    /// is held. The relay reads no clock: without ticks, held text waits
    /// for the byte limit, another frame or the call's end.
    pub tool_input_coalesce_ms: u64,
}

impl RelayConfig {
    /// Default [`RelayConfig::replay_bytes`]: 1 MiB.
    pub const DEFAULT_REPLAY_BYTES: usize = 1 << 20;
    /// Default [`RelayConfig::keep_alive_ms`]: 15 s.
    pub const DEFAULT_KEEP_ALIVE_MS: u64 = 15_000;
    /// Default [`RelayConfig::tool_input_coalesce_bytes`]: 4 KiB.
    pub const DEFAULT_TOOL_INPUT_COALESCE_BYTES: usize = 4096;
    /// Default [`RelayConfig::tool_input_coalesce_ms`]: 50 ms.
    pub const DEFAULT_TOOL_INPUT_COALESCE_MS: u64 = 50;

    /// The defaults with `format`.
    pub fn new(format: RelayFormat) -> Self {
        RelayConfig {
            format,
            replay_bytes: Self::DEFAULT_REPLAY_BYTES,
            keep_alive_ms: Self::DEFAULT_KEEP_ALIVE_MS,
            tool_input_coalesce_bytes: Self::DEFAULT_TOOL_INPUT_COALESCE_BYTES,
            tool_input_coalesce_ms: Self::DEFAULT_TOOL_INPUT_COALESCE_MS,
        }
    }
}

/// Misuse of a [`Relay`], or a resume it cannot serve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// [`Relay::finish`] was called: nothing more can be sent.
    #[error("the relay has finished")]
    Finished,
    /// [`Relay::feed`] on a relay made without a stream.
    #[error("the relay has no provider stream to feed (use Relay::with_stream)")]
    NoStream,
    /// The `Last-Event-ID` is older than the oldest event kept.
    #[error("event id {requested} is no longer held (oldest kept: {oldest:?}): reload the whole message")]
    ReplayTooOld {
        /// The id asked for.
        requested: String,
        /// The oldest id still held, if any.
        oldest: Option<u64>,
    },
    /// The `Last-Event-ID` was never sent by this relay.
    #[error("event id {0:?} was never sent by this relay")]
    UnknownEventId(String),
    /// [`Relay::push_json`] got something that is not a normalized event in
    /// its JSON form (the message says what is wrong).
    #[error("not a normalized stream event: {0}")]
    InvalidEvent(String),
}

/// What a relayed part is.
#[derive(Debug, Clone, Default)]
struct PartState {
    kind: Option<PartKind>,
    call_id: Option<String>,
    name: Option<String>,
    /// The `*-start` chunk was written.
    opened: bool,
    /// A tool call's argument text received so far: held back (ai-sdk)
    /// until the call's id and name are known, and its input once it is
    /// ready (copied, not re-encoded from the folded value, when it is one
    /// line without `\u` escapes).
    args: String,
    /// A text part's UI id, written once at its start.
    ui_id: UiIdText,
    /// An open tool call's id as a JSON string, escaped once for all its
    /// argument deltas.
    call_id_json: Vec<u8>,
    /// A tool the provider runs itself (Anthropic `server_tool_use`,
    /// `mcp_tool_use`; Responses `mcp_call`): its result comes in the
    /// stream, not from the host.
    provider_executed: bool,
    /// The choice (OpenAI `n > 1`) the part answers; the catalog's answer
    /// is choice 0.
    choice: u32,
    /// A media part's bytes so far (its `file` chunk at its end), and
    /// their MIME type.
    media: Vec<u8>,
    mime_type: String,
    /// A Responses partial image: a preview the final image replaces (no
    /// `file` chunk; the final image is the call's).
    preview: bool,
    /// A tool call whose input is free text (`inputEncoding: "text"`).
    text_input: bool,
}

/// The output of [`Relay::feed`].
#[derive(Debug)]
pub struct Relayed<'a> {
    /// The browser bytes to send now.
    pub bytes: &'a [u8],
    /// The provider stream's fatal error, if it failed on this chunk; the
    /// relay has written an `error` event for it.
    pub error: Option<StreamError>,
}

/// Normalized events in, browser SSE bytes out. See the module docs.
#[derive(Debug)]
pub struct Relay {
    stream: Option<Stream>,
    writer: Writer,
}

/// Everything but the stream (so that the stream can call into it).
#[derive(Debug)]
struct Writer {
    config: RelayConfig,
    /// The frames kept for replay, then the current call's output.
    replay: ReplayBuffer,
    /// The id of the last event written (0: none yet).
    last_id: u64,
    parts: Vec<PartState>,
    /// Parts are numbered below this (what `parts` may grow to).
    max_parts: usize,
    /// Provider-executed calls shown to the UI whose result block has not
    /// come yet (Anthropic: the result is a later block of the message).
    server_calls: Vec<String>,
    started: bool,
    step_open: bool,
    steps: u32,
    /// The provider's stop reason (reused: no allocation per turn).
    stop_reason: String,
    /// The usage as JSON text (reused; empty: none yet).
    usage: Vec<u8>,
    finished: bool,
    /// The provider turn of the open step has ended.
    turn_ended: bool,
    /// Output was written since the last keep-alive check.
    active: bool,
    last_activity_ms: Option<u64>,
    /// Calls shown to the catalog UI (`tool-call`, `approval-required`)
    /// whose result has not been relayed: (id, name), for the result's
    /// `name`.
    call_names: Vec<(String, String)>,
    /// The open step's token counts (from its last usage).
    step_tokens: Tokens,
    /// The counts of the closed steps, summed.
    total_tokens: Tokens,
    /// An error that ends the run (not recoverable) was relayed.
    failed: bool,
    /// Argument text held back ([`RelayConfig::tool_input_coalesce_bytes`]):
    /// the part it belongs to, its call id as a JSON string, the text.
    held_part: Option<u32>,
    held_call_id: Vec<u8>,
    /// The held text, escaped as a JSON string's contents (each delta
    /// escaped once, or copied as the provider escaped it).
    held: Vec<u8>,
    /// The host's time when the text began to be held (`None`: unknown,
    /// due at the next tick).
    held_since: Option<u64>,
    /// The host's latest time ([`Relay::tick`], [`Relay::keep_alive`]).
    now_ms: Option<u64>,
    /// The sources shown in the message: (key, `sourceId`).
    sources: Vec<(String, String)>,
    /// Responses annotations of the open text part
    /// (`response.output_text.annotation.added`: the folded part keeps
    /// none).
    annotations: Vec<Value>,
    /// The dialect of the turn (`MessageStart`).
    provider: &'static str,
    /// A Gemini turn ended: its grounding sources are read from the folded
    /// message once the stream call returns.
    grounding_due: bool,
}

/// The response headers of the UI message stream protocol.
const AI_SDK_HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("connection", "keep-alive"),
    ("x-vercel-ai-ui-message-stream", "v1"),
    ("x-accel-buffering", "no"),
];

/// The response headers of the catalog format.
const CATALOG_HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("connection", "keep-alive"),
    ("x-accel-buffering", "no"),
];

impl Relay {
    /// A relay of events the host pushes ([`Relay::push`]). Parts are
    /// numbered below the default `max_parts` (4096) of a stream: an event
    /// of a part beyond it is refused ([`Relay::push_json`]) or ignored
    /// ([`Relay::push`]).
    pub fn new(config: RelayConfig) -> Self {
        let max_parts = crate::providers::StreamConfig::default().max_parts;
        Relay { stream: None, writer: Writer::new(config, max_parts) }
    }

    /// A relay that folds provider bytes itself ([`Relay::feed`]); its
    /// pushed events' parts are bounded by the stream's `max_parts`.
    pub fn with_stream(config: RelayConfig, stream: Stream) -> Self {
        let max_parts = stream.config().max_parts;
        Relay { stream: Some(stream), writer: Writer::new(config, max_parts) }
    }

    /// The provider stream, when the relay has one (its folded message, its
    /// resume cursor).
    pub fn stream(&self) -> Option<&Stream> {
        self.stream.as_ref()
    }

    /// The format written.
    pub fn format(&self) -> RelayFormat {
        self.writer.config.format
    }

    /// The HTTP response headers the browser side needs.
    pub fn headers(&self) -> &'static [(&'static str, &'static str)] {
        match self.writer.config.format {
            RelayFormat::AiSdk => AI_SDK_HEADERS,
            RelayFormat::Catalog => CATALOG_HEADERS,
        }
    }

    /// Feeds provider bytes through the relay's stream and returns the
    /// browser bytes they produced.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Relayed<'_>, RelayError> {
        let Some(stream) = self.stream.as_mut() else { return Err(RelayError::NoStream) };
        let writer = &mut self.writer;
        if writer.finished {
            return Err(RelayError::Finished);
        }
        writer.replay.begin_call();
        let result = stream.feed_to(chunk, writer);
        writer.relay_grounding(stream);
        let error = result.err();
        if let Some(error) = &error {
            writer.error_frame(&error.to_string(), Some(STREAM_ERROR_CODE), false);
        }
        Ok(Relayed { bytes: writer.replay.output(), error })
    }

    /// The end of the provider's body: the stream's last events. After a
    /// stream error that [`feed`](Self::feed) already relayed, it writes
    /// nothing more (`error` is then [`StreamError::Closed`]).
    pub fn end_of_input(&mut self) -> Result<Relayed<'_>, RelayError> {
        let Some(stream) = self.stream.as_mut() else { return Err(RelayError::NoStream) };
        let writer = &mut self.writer;
        if writer.finished {
            return Err(RelayError::Finished);
        }
        writer.replay.begin_call();
        let error = stream.finish_to(writer).err();
        writer.relay_grounding(stream);
        // A stream closed by an earlier error: that error was relayed.
        if let Some(error) = error.as_ref().filter(|e| !matches!(e, StreamError::Closed)) {
            writer.error_frame(&error.to_string(), Some(STREAM_ERROR_CODE), false);
        }
        Ok(Relayed { bytes: writer.replay.output(), error })
    }

    /// The bytes for one normalized event (often none: warnings, path
    /// events and metadata are not relayed). Ignored after `finish`, and for
    /// a part numbered past `max_parts` (see [`Relay::new`]).
    pub fn push(&mut self, event: &StreamEvent<'_>) -> &[u8] {
        let writer = &mut self.writer;
        writer.replay.begin_call();
        if !writer.finished {
            writer.write_event(event, None);
        }
        writer.replay.output()
    }

    /// A tool's result (`tool-output-available` / `tool-output-error`;
    /// catalog `tool-result` `{id, name, result, duration?}`, `name` the one
    /// of the call with that id that the relay showed (`""` for a call it
    /// never saw), `duration` in ms when given, and `isError: true` for a
    /// failed tool).
    pub fn tool_result(
        &mut self,
        call_id: &str,
        output: &Value,
        is_error: bool,
        duration_ms: Option<u64>,
    ) -> Result<&[u8], RelayError> {
        let w = self.writer.begin()?;
        match w.config.format {
            RelayFormat::AiSdk => {
                w.ensure_started();
                if is_error {
                    let text = output.as_str().map_or_else(|| output.to_string(), str::to_owned);
                    w.ai("tool-output-error", |o| {
                        o.str("toolCallId", call_id).str("errorText", &text);
                    });
                } else {
                    w.ai("tool-output-available", |o| {
                        o.str("toolCallId", call_id).value("output", output);
                    });
                }
            }
            RelayFormat::Catalog => {
                let name = w.take_call_name(call_id);
                w.catalog("tool-result", |o| {
                    o.str("id", call_id).str("name", &name).value("result", output);
                    if let Some(duration) = duration_ms {
                        o.value("duration", &duration);
                    }
                    if is_error {
                        o.value("isError", &true);
                    }
                });
            }
        }
        Ok(self.writer.replay.output())
    }

    /// A tool call waits for the user's approval (human in the loop):
    /// `tool-approval-request`; catalog `approval-required`
    /// `{approvalId, toolName, input, message}` (and `toolCallId`).
    /// `message` is the sentence the user reads; `None` writes
    /// [`default_approval_message`] (`Allow NAME to run?`).
    pub fn approval_required(
        &mut self,
        approval_id: &str,
        call_id: &str,
        name: &str,
        input: &Value,
        message: Option<&str>,
    ) -> Result<&[u8], RelayError> {
        let w = self.writer.begin()?;
        match w.config.format {
            RelayFormat::AiSdk => {
                w.ensure_started();
                w.ai("tool-approval-request", |o| {
                    o.str("approvalId", approval_id).str("toolCallId", call_id);
                });
            }
            RelayFormat::Catalog => {
                w.remember_call(call_id, name);
                let default;
                let message = match message {
                    Some(message) => message,
                    None => {
                        default = default_approval_message(name);
                        &default
                    }
                };
                w.catalog("approval-required", |o| {
                    o.str("approvalId", approval_id).str("toolName", name).value("input", input);
                    o.str("message", message).str("toolCallId", call_id);
                });
            }
        }
        Ok(self.writer.replay.output())
    }

    /// A log line for the UI: catalog `log`
    /// `{level, message, metadata?, timestamp, traceId}`; the same object as
    /// the `data` of a transient `data-log` (not part of the message) in
    /// the AI SDK format. `level` is `info`, `warn` or `error`; `timestamp`
    /// the host's ISO 8601 time (the relay reads no clock:
    /// [`iso_timestamp`] writes one from the host's Unix milliseconds) and
    /// `trace_id` the host's trace. `metadata` is left out when `None`.
    pub fn log(
        &mut self,
        level: &str,
        message: &str,
        metadata: Option<&Value>,
        timestamp: &str,
        trace_id: &str,
    ) -> Result<&[u8], RelayError> {
        let w = self.writer.begin()?;
        let fill = |o: &mut JsonObject<'_>| {
            o.str("level", level).str("message", message);
            if let Some(metadata) = metadata {
                o.json("metadata", metadata);
            }
            o.str("timestamp", timestamp).str("traceId", trace_id);
        };
        match w.config.format {
            RelayFormat::AiSdk => {
                w.ensure_started();
                w.ai("data-log", |o| {
                    o.object("data", fill).value("transient", &true);
                });
            }
            RelayFormat::Catalog => w.catalog("log", fill),
        }
        Ok(self.writer.replay.output())
    }

    /// Metadata of the answer from the host, e.g. a turn's timings
    /// (`TurnOutcome::timings`): AI SDK `message-metadata`
    /// `{messageMetadata: METADATA}` (useChat merges it into the message's
    /// `metadata`, beside the usage the relay sends). The catalog has no
    /// such event (the seed's frontend reads usage from `step-completed` and
    /// `finish`): nothing is written there.
    ///
    /// Errors: [`RelayError::Finished`].
    pub fn message_metadata(&mut self, metadata: &serde_json::Map<String, Value>) -> Result<&[u8], RelayError> {
        let w = self.writer.begin()?;
        if w.config.format == RelayFormat::AiSdk {
            w.ensure_message_started();
            w.ai("message-metadata", |o| {
                o.value("messageMetadata", metadata);
            });
        }
        Ok(self.writer.replay.output())
    }

    /// An error for the UI: catalog `error` `{error, code?, recoverable}`
    /// (`errorText` in the AI SDK format). `code` a machine-readable code
    /// (left out when `None`); `recoverable`: the agent goes on (a tool
    /// failed, a retry follows); otherwise the turn is over (and the
    /// catalog's `finish` says `error`).
    pub fn error(&mut self, message: &str, code: Option<&str>, recoverable: bool) -> Result<&[u8], RelayError> {
        let w = self.writer.begin()?;
        w.error_frame(message, code, recoverable);
        Ok(self.writer.replay.output())
    }

    /// Closes the current step, if one is open (`finish-step`; catalog
    /// `step-completed`): the host's step boundary, e.g. after the tools of
    /// a turn ran and before the next provider request is relayed.
    pub fn finish_step(&mut self) -> Result<&[u8], RelayError> {
        let w = self.writer.begin()?;
        w.close_step();
        Ok(self.writer.replay.output())
    }

    /// The end of the answer: closes the open step, then `finish` (with the
    /// finish reason and `messageMetadata: {usage, steps}`) and
    /// `data: [DONE]`; catalog `finish`
    /// `{finishReason, usage: {promptTokens, completionTokens, totalTokens}, stepCount}`
    /// (and `stopReason`, the provider's last stop reason, when there was
    /// one): `finishReason` is [`FinishReason::of`] the run, `usage` the sum
    /// over its steps. `usage` replaces the usage folded from the stream
    /// when given (in the catalog: the run's total).
    /// No step is opened for it (after [`Relay::finish_step`], or before any
    /// provider turn, no empty step appears). Nothing can be sent afterwards.
    pub fn finish(&mut self, usage: Option<&Value>) -> Result<&[u8], RelayError> {
        self.writer.begin()?;
        Ok(self.end_run(usage))
    }

    /// The host aborted the run (the user pressed stop): the relay's
    /// provider stream, if it has one, is aborted ([`Stream::abort`]: its
    /// open parts end), the turn ends with stop reason `aborted`, and the
    /// run ends as [`Relay::finish`] ends an aborted one: AI SDK
    /// `message-metadata` `{usage, steps}`, `abort` and `data: [DONE]` (no
    /// `finish`); catalog `finish` with `finishReason: "cancelled"`.
    /// Nothing can be sent afterwards.
    pub fn abort(&mut self) -> Result<&[u8], RelayError> {
        self.writer.begin()?;
        let writer = &mut self.writer;
        let mut ended = false;
        if let Some(stream) = self.stream.as_mut() {
            stream.abort(|event| {
                ended |= matches!(event, StreamEvent::TurnEnd { .. });
                writer.write_event(event, None);
            });
        }
        if !ended {
            // A host-only relay, or a stream already over: the run still ends aborted.
            writer.write_event(&StreamEvent::TurnEnd { stop_reason: Some("aborted") }, None);
        }
        Ok(self.end_run(None))
    }

    /// The body of [`Relay::finish`], after `begin`.
    fn end_run(&mut self, usage: Option<&Value>) -> &[u8] {
        let usage_value = usage;
        let w = &mut self.writer;
        w.ensure_message_started();
        w.close_step();
        if let Some(usage) = usage {
            w.set_usage(usage);
        }
        let (steps, stop_reason, usage) = (w.steps, std::mem::take(&mut w.stop_reason), std::mem::take(&mut w.usage));
        match w.config.format {
            RelayFormat::AiSdk
                if crate::providers::StopClass::of(&stop_reason) == crate::providers::StopClass::Aborted =>
            {
                // Aborted: the metadata, then `abort` (no `finish`: the
                // turn did not finish), as the `ai` package's own streams.
                w.ai("message-metadata", |o| {
                    o.object("messageMetadata", |m| {
                        m.raw("usage", json_or_null(&usage)).value("steps", &steps);
                    });
                });
                w.ai("abort", |_| {});
                w.replay.tail().extend_from_slice(DONE);
            }
            RelayFormat::AiSdk => {
                w.ai("finish", |o| {
                    if !stop_reason.is_empty() {
                        o.constant("finishReason", finish_reason(&stop_reason));
                    }
                    o.object("messageMetadata", |m| {
                        m.raw("usage", json_or_null(&usage)).value("steps", &steps);
                    });
                });
                w.replay.tail().extend_from_slice(DONE);
            }
            RelayFormat::Catalog => {
                let tokens = match usage_value {
                    Some(usage) => Tokens::of(usage),
                    None => w.total_tokens,
                };
                let reason = FinishReason::of(&stop_reason, w.failed);
                w.catalog("finish", |o| {
                    o.constant("finishReason", reason.name());
                    o.object("usage", |u| tokens.write(u));
                    o.value("stepCount", &steps);
                    if !stop_reason.is_empty() {
                        o.str("stopReason", &stop_reason);
                    }
                });
            }
        }
        w.finished = true;
        self.writer.replay.output()
    }

    /// A keep-alive comment (`: keep-alive`) when nothing was sent for
    /// [`RelayConfig::keep_alive_ms`] by the host's clock `now_ms`; empty
    /// otherwise. Call it on a timer (every few seconds). Comments carry no
    /// id and are not replayed.
    pub fn keep_alive(&mut self, now_ms: u64) -> &[u8] {
        let w = &mut self.writer;
        w.now_ms = Some(now_ms);
        if w.finished {
            return b"";
        }
        if w.active || w.last_activity_ms.is_none() {
            w.active = false;
            w.last_activity_ms = Some(now_ms);
            return b"";
        }
        let last = w.last_activity_ms.unwrap_or(now_ms);
        if now_ms.saturating_sub(last) >= w.config.keep_alive_ms {
            w.last_activity_ms = Some(now_ms);
            return b": keep-alive\n\n";
        }
        b""
    }

    /// The host's timer for held-back tool input
    /// ([`RelayConfig::tool_input_coalesce_bytes`]): at the host's time
    /// `now_ms`, writes the argument text held for at least
    /// [`RelayConfig::tool_input_coalesce_ms`] (by the times given to
    /// `tick` and [`Relay::keep_alive`]; text held since before any time
    /// was given is due at once). Empty when nothing is due. Call it every
    /// `tool_input_coalesce_ms` or so while a stream is relayed.
    pub fn tick(&mut self, now_ms: u64) -> &[u8] {
        let w = &mut self.writer;
        w.replay.begin_call();
        w.now_ms = Some(now_ms);
        let due = match w.held_since {
            Some(since) => now_ms.saturating_sub(since) >= w.config.tool_input_coalesce_ms,
            None => true,
        };
        if due && !w.finished {
            w.flush_held();
        }
        w.replay.output()
    }

    /// Writes the argument text held back now, whatever its age (e.g.
    /// before the host waits on something else). Empty when nothing is held.
    pub fn flush(&mut self) -> &[u8] {
        let w = &mut self.writer;
        w.replay.begin_call();
        if !w.finished {
            w.flush_held();
        }
        w.replay.output()
    }

    /// Whether argument text is held back (see [`Relay::tick`]).
    pub fn has_held_input(&self) -> bool {
        self.writer.held_part.is_some()
    }

    /// The frames sent after event `last_event_id` (the browser's
    /// `Last-Event-ID` header), to send first on its new connection.
    pub fn replay_after(&mut self, last_event_id: &str) -> Result<&[u8], RelayError> {
        let w = &mut self.writer;
        let newest = (w.last_id > 0).then_some(w.last_id);
        let id = parse_event_id(last_event_id)?;
        let done = w.finished && w.config.format == RelayFormat::AiSdk;
        match w.replay.after(id, newest) {
            // After the last frame: only the `[DONE]` that followed it.
            Ok([]) if done => Ok(DONE),
            // The frames, and the `[DONE]` written after the last one.
            Ok(bytes) => Ok(bytes),
            Err(Gap::TooOld { oldest }) => {
                Err(RelayError::ReplayTooOld { requested: last_event_id.to_owned(), oldest })
            }
            Err(Gap::Unknown) => Err(RelayError::UnknownEventId(last_event_id.to_owned())),
        }
    }

    /// The id of the last event sent (0 before the first).
    pub fn last_event_id(&self) -> u64 {
        self.writer.last_id
    }

    /// Whether [`Relay::finish`] was called.
    pub fn is_finished(&self) -> bool {
        self.writer.finished
    }

    /// The frames of the last call's output as (event id, frame bytes),
    /// oldest first: the same bytes, cut at each frame (without the
    /// [`Relay::trailer`] that ends the output of [`Relay::finish`]).
    /// Empty after [`Relay::replay_after`] and [`Relay::keep_alive`] (they
    /// write no new frame). A host that shares the stream with other
    /// processes appends each frame to its store under its id.
    pub fn frames(&self) -> Frames<'_> {
        let w = &self.writer;
        let output = w.replay.output();
        let trailer = self.trailer();
        let cut = if w.finished && !trailer.is_empty() && output.ends_with(trailer) { trailer.len() } else { 0 };
        w.replay.call_frames(cut)
    }

    /// What a reader sends after the stream's last frame, part of no
    /// frame: `data: [DONE]\n\n` in the ai-sdk format; nothing in the
    /// catalog (its `finish` event is a frame). A store keeps it with its
    /// finished marker.
    pub fn trailer(&self) -> &'static [u8] {
        match self.writer.config.format {
            RelayFormat::AiSdk => DONE,
            RelayFormat::Catalog => b"",
        }
    }
}

/// The event id in a browser's `Last-Event-ID` header (surrounding
/// whitespace ignored), or [`RelayError::UnknownEventId`] when it is not
/// one the relay writes (a decimal `u64`).
pub fn parse_event_id(last_event_id: &str) -> Result<u64, RelayError> {
    last_event_id.trim().parse().map_err(|_| RelayError::UnknownEventId(last_event_id.to_owned()))
}

/// Where a replay store resumes for a browser's `Last-Event-ID`: the id
/// after which its frames are sent (the frames with greater ids, in
/// order), given the ids it holds: `oldest..=newest` (consecutive), or
/// none (`None`: expired, or nothing written yet).
///
/// Errors as [`Relay::replay_after`]: [`RelayError::UnknownEventId`] for
/// an id that is not a number or is newer than `newest`;
/// [`RelayError::ReplayTooOld`] when frames after it are no longer held
/// (`oldest` is past the next one, or the store holds nothing and the id is
/// not 0).
///
/// ```
/// use ssefold::relay::{resume_point, RelayError};
///
/// assert_eq!(resume_point("3", Some(1), Some(9)), Ok(3));
/// assert_eq!(resume_point("9", Some(1), Some(9)), Ok(9));
/// assert!(matches!(resume_point("2", Some(5), Some(9)), Err(RelayError::ReplayTooOld { .. })));
/// assert!(matches!(resume_point("10", Some(1), Some(9)), Err(RelayError::UnknownEventId(_))));
/// assert!(matches!(resume_point("4", None, None), Err(RelayError::ReplayTooOld { oldest: None, .. })));
/// ```
pub fn resume_point(last_event_id: &str, oldest: Option<u64>, newest: Option<u64>) -> Result<u64, RelayError> {
    let id = parse_event_id(last_event_id)?;
    let too_old = || RelayError::ReplayTooOld { requested: last_event_id.to_owned(), oldest };
    match (oldest, newest) {
        (_, Some(newest)) if id > newest => Err(RelayError::UnknownEventId(last_event_id.to_owned())),
        (_, Some(newest)) if id == newest => Ok(id),
        (Some(oldest), Some(_)) if id.saturating_add(1) >= oldest => Ok(id),
        (None, None) if id == 0 => Ok(0),
        _ => Err(too_old()),
    }
}

/// The output buffer's first capacity: most answers fit without the
/// buffer growing (and copying itself) again and again.
const INITIAL_CAPACITY: usize = 32 << 10;

/// The end of the UI message stream.
const DONE: &[u8] = b"data: [DONE]\n\n";

/// JSON text kept as bytes, or `null` when there is none.
fn json_or_null(json: &[u8]) -> &[u8] {
    if json.is_empty() {
        b"null"
    } else {
        json
    }
}

/// Whether parts of this kind stream text to the UI.
fn is_text(kind: PartKind) -> bool {
    matches!(kind, PartKind::Text | PartKind::Refusal | PartKind::Reasoning)
}

/// The UI message stream's finish reason for a provider stop reason.
fn finish_reason(stop_reason: &str) -> &'static str {
    match stop_reason {
        "end_turn" | "stop" | "stop_sequence" | "completed" | "pause_turn" => "stop",
        "max_tokens" | "length" | "model_context_window_exceeded" | "incomplete" => "length",
        "tool_use" | "tool_calls" | "function_call" => "tool-calls",
        "content_filter" | "refusal" => "content-filter",
        "aborted" | "error" => "error",
        _ => "other",
    }
}

/// Every event name the [`RelayFormat::Catalog`] format writes: the seed's
/// eight (`text-delta`, `tool-call`, `tool-result`, `approval-required`,
/// `step-completed`, `log`, `finish`, `error`) and the extras its frontend
/// ignores (`reasoning-delta`, `choice-delta` for the other choices of an
/// OpenAI `n > 1` request, `turn-reset` when the answer starts over,
/// `tool-input-delta` for a call's arguments as they stream). A
/// browser's `EventSource` hears a named event only through a listener for
/// that name: this is the list to register.
pub const CATALOG_EVENT_NAMES: &[&str] = &[
    "text-delta",
    "tool-call",
    "tool-result",
    "approval-required",
    "step-completed",
    "log",
    "finish",
    "error",
    "reasoning-delta",
    "choice-delta",
    "turn-reset",
    "tool-input-delta",
];

/// The catalog `error` code of a broken provider stream.
pub const STREAM_ERROR_CODE: &str = "stream_error";
/// The catalog `error` code of a tool call with invalid arguments
/// (recoverable: the model can be told and try again).
pub const INVALID_ARGUMENTS_CODE: &str = "invalid_tool_arguments";

/// The catalog `finish` event's `finishReason`: how the agent's run ended,
/// one of the seed's four.
///
/// From the provider's last stop reason, through
/// [`StopClass`](crate::providers::StopClass) ([`FinishReason::of`]):
///
/// | stop class | provider stop reasons (e.g.) | `finishReason` |
/// | --- | --- | --- |
/// | `Normal` | `end_turn`, `stop_sequence`, `pause_turn`, `stop`, `completed`, `STOP` | `stop` |
/// | `Refusal` | `refusal` (the model answered, declining) | `stop` |
/// | `ToolUse` | `tool_use`, `tool_calls`, `function_call`: the run ended while the model still called tools, i.e. the host's step limit | `max-steps` |
/// | `Length` | `max_tokens`, `length`, `max_output_tokens`, `MAX_TOKENS`, `model_context_window_exceeded`: the answer was cut | `error` |
/// | `ContentFilter` | `content_filter`, `SAFETY`, `guardrail_intervened`, …: the provider cut the answer | `error` |
/// | `Other` | `MALFORMED_FUNCTION_CALL`, `OTHER`, Responses `incomplete`, any unknown reason | `error` |
/// | `Aborted` | `aborted` (the host aborted the turn) | `cancelled` |
/// | — | no stop reason (a host-only relay, a cut stream) | `stop` |
///
/// A relayed error that is not recoverable (a provider error, a broken
/// stream, [`Relay::error`] with `recoverable: false`) makes it `error`,
/// unless the turn was aborted (`cancelled`). The provider's own reason is
/// in the event's `stopReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FinishReason {
    /// The model ended its answer.
    Stop,
    /// The host stopped the run while the model still called tools.
    MaxSteps,
    /// The run failed, or its answer was cut short.
    Error,
    /// The host aborted the run.
    Cancelled,
}

impl FinishReason {
    /// The wire name: `stop`, `max-steps`, `error`, `cancelled`.
    pub fn name(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::MaxSteps => "max-steps",
            FinishReason::Error => "error",
            FinishReason::Cancelled => "cancelled",
        }
    }

    /// The finish reason of a run whose last provider stop reason is
    /// `stop_reason` (`""`: none) and which relayed a fatal error or not
    /// (`failed`); the map in the type's docs.
    pub fn of(stop_reason: &str, failed: bool) -> FinishReason {
        use crate::providers::StopClass;
        if stop_reason.is_empty() {
            return if failed { FinishReason::Error } else { FinishReason::Stop };
        }
        match StopClass::of(stop_reason) {
            StopClass::Aborted => FinishReason::Cancelled,
            _ if failed => FinishReason::Error,
            StopClass::Normal | StopClass::Refusal => FinishReason::Stop,
            StopClass::ToolUse => FinishReason::MaxSteps,
            StopClass::Length | StopClass::ContentFilter | StopClass::Other => FinishReason::Error,
        }
    }
}

/// Token counts in the seed's shape (`promptTokens`, `completionTokens`,
/// `totalTokens`); 0 for what the provider did not report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tokens {
    prompt: u64,
    completion: u64,
    total: u64,
}

impl Tokens {
    /// The counts of a usage object of any dialect (Anthropic, Responses,
    /// Chat, Gemini, Ollama, Converse): the provider's total when it states
    /// one (`total_tokens`, `totalTokens`, `totalTokenCount`), else the sum.
    fn of(usage: &Value) -> Tokens {
        let (prompt, completion) = crate::agent::usage_tokens(usage);
        let (prompt, completion) = (prompt.unwrap_or(0), completion.unwrap_or(0));
        let stated = ["total_tokens", "totalTokens", "totalTokenCount"]
            .into_iter()
            .find_map(|k| usage.get(k).and_then(Value::as_u64));
        Tokens { prompt, completion, total: stated.unwrap_or(prompt + completion) }
    }

    fn add(&mut self, other: Tokens) {
        self.prompt += other.prompt;
        self.completion += other.completion;
        self.total += other.total;
    }

    fn write(&self, o: &mut JsonObject<'_>) {
        o.value("promptTokens", &self.prompt)
            .value("completionTokens", &self.completion)
            .value("totalTokens", &self.total);
    }
}

/// The `message` of an `approval-required` event the host gave none:
/// `Allow NAME to run?`.
pub fn default_approval_message(name: &str) -> String {
    format!("Allow {name} to run?")
}

/// The ISO 8601 UTC time (`2025-01-15T10:30:00.000Z`) of `unix_ms`
/// milliseconds since the Unix epoch: a `log` event's `timestamp` from the
/// host's clock (the relay reads none). RFC 3339 years end at 9999: a later
/// time is written as its last millisecond, `9999-12-31T23:59:59.999Z`.
pub fn iso_timestamp(unix_ms: u64) -> String {
    /// The last millisecond RFC 3339 can write (year 9999).
    const LAST_MS: u64 = 253_402_300_800_000 - 1;
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms.min(LAST_MS));
    humantime::format_rfc3339_millis(at).to_string()
}

impl EventSink for Writer {
    fn event(&mut self, event: &StreamEvent<'_>) {
        self.write_event(event, None);
    }

    fn escaped(&mut self, event: &StreamEvent<'_>, escaped: &str) {
        self.write_event(event, Some(escaped));
    }
}

impl Writer {
    fn new(config: RelayConfig, max_parts: usize) -> Self {
        Writer {
            config,
            replay: ReplayBuffer::with_capacity(config.replay_bytes, INITIAL_CAPACITY),
            last_id: 0,
            parts: Vec::new(),
            max_parts,
            server_calls: Vec::new(),
            started: false,
            step_open: false,
            steps: 0,
            stop_reason: String::new(),
            usage: Vec::new(),
            finished: false,
            turn_ended: false,
            active: false,
            last_activity_ms: None,
            call_names: Vec::new(),
            step_tokens: Tokens::default(),
            total_tokens: Tokens::default(),
            failed: false,
            held_part: None,
            held_call_id: Vec::new(),
            held: Vec::new(),
            held_since: None,
            now_ms: None,
            sources: Vec::new(),
            annotations: Vec::new(),
            provider: "",
            grounding_due: false,
        }
    }

    /// Starts a host call: clears the output; refused after `finish`.
    fn begin(&mut self) -> Result<&mut Self, RelayError> {
        if self.finished {
            return Err(RelayError::Finished);
        }
        self.replay.begin_call();
        Ok(self)
    }

    /// The usage, kept as JSON text in a reused buffer.
    fn set_usage(&mut self, usage: &Value) {
        self.step_tokens = Tokens::of(usage);
        self.usage.clear();
        if serde_json::to_writer(&mut self.usage, usage).is_err() {
            self.usage.clear();
        }
    }

    /// A frame of the AI SDK format: `{"type": TYPE, …}` written by `fill`,
    /// straight into the output (which is the replay buffer).
    fn ai(&mut self, chunk_type: &'static str, fill: impl FnOnce(&mut JsonObject<'_>)) {
        self.flush_held();
        self.last_id += 1;
        let buf = self.replay.frame(self.last_id);
        begin_frame(buf, self.last_id, None);
        let mut o = JsonObject::new(buf);
        o.constant("type", chunk_type);
        fill(&mut o);
        o.end();
        end_frame(buf);
        self.active = true;
    }

    /// A frame of the catalog format: event `name`, data written by `fill`.
    fn catalog(&mut self, name: &str, fill: impl FnOnce(&mut JsonObject<'_>)) {
        self.last_id += 1;
        let buf = self.replay.frame(self.last_id);
        begin_frame(buf, self.last_id, Some(name));
        let mut o = JsonObject::new(buf);
        fill(&mut o);
        o.end();
        end_frame(buf);
        self.active = true;
    }

    /// `start` (once), AI SDK only: what `finish` and `error` need, which
    /// belong to no step (a step opened for them would stay empty).
    fn ensure_message_started(&mut self) {
        if self.config.format == RelayFormat::AiSdk && !self.started {
            self.started = true;
            self.ai("start", |_| {});
        }
    }

    /// `start` (once) and `start-step` (when no step is open), AI SDK only.
    fn ensure_started(&mut self) {
        if self.config.format != RelayFormat::AiSdk {
            if !self.step_open {
                self.step_open = true;
                self.steps += 1;
            }
            return;
        }
        if !self.started {
            self.started = true;
            self.ai("start", |_| {});
        }
        if !self.step_open {
            self.step_open = true;
            self.steps += 1;
            self.ai("start-step", |_| {});
        }
    }

    /// A provider turn begins: a step that already saw its turn end (its
    /// tool results relayed since) is closed and a new one opens.
    fn begin_turn(&mut self) {
        if self.turn_ended {
            self.close_step();
        }
        self.turn_ended = false;
        self.parts.clear();
        self.stop_reason.clear();
        self.ensure_started();
    }

    /// The provider's turn ended: its parts are closed; the step stays open
    /// for the tool results, until the host closes it (`finish_step`,
    /// `finish`) or the next turn begins.
    fn end_turn(&mut self, stop_reason: Option<&str>) {
        if let Some(reason) = stop_reason {
            self.stop_reason.clear();
            self.stop_reason.push_str(reason);
        }
        if self.config.format == RelayFormat::AiSdk {
            self.close_parts();
            if !self.usage.is_empty() {
                // The usage as the provider reported it, while the step
                // stays open for the tools (`finish` repeats the last).
                let usage = std::mem::take(&mut self.usage);
                self.ai("message-metadata", |o| {
                    o.object("messageMetadata", |m| {
                        m.raw("usage", &usage);
                    });
                });
                self.usage = usage;
            }
            self.grounding_due = self.provider == "gemini";
        }
        self.turn_ended = true;
    }

    fn close_step(&mut self) {
        self.turn_ended = false;
        if self.step_open {
            self.total_tokens.add(self.step_tokens);
        }
        let step_tokens = std::mem::take(&mut self.step_tokens);
        match self.config.format {
            RelayFormat::AiSdk => {
                if self.step_open {
                    self.close_parts();
                    self.step_open = false;
                    self.ai("finish-step", |_| {});
                }
            }
            RelayFormat::Catalog => {
                if self.step_open {
                    self.step_open = false;
                    let (stop_reason, usage) = (std::mem::take(&mut self.stop_reason), std::mem::take(&mut self.usage));
                    let steps = self.steps;
                    self.catalog("step-completed", |o| {
                        o.value("stepNumber", &steps).object("usage", |u| step_tokens.write(u));
                        if !stop_reason.is_empty() {
                            o.str("stopReason", &stop_reason);
                        }
                        o.raw("providerUsage", json_or_null(&usage));
                    });
                    (self.stop_reason, self.usage) = (stop_reason, usage);
                }
            }
        }
    }

    /// Ends the parts still open (a cut stream): text and reasoning parts
    /// get their end; a tool call whose arguments never completed gets a
    /// `tool-input-error`, so that no UI waits for it forever.
    fn close_parts(&mut self) {
        for part in 0..self.parts.len() {
            match self.parts[part].kind {
                Some(kind) if is_text(kind) && self.parts[part].opened => self.end_text_part(part as u32, None),
                Some(PartKind::ToolCall) => {
                    self.fail_tool(part as u32, "", "the stream ended before the arguments were complete")
                }
                _ => {}
            }
        }
    }

    /// A tool call that will never be ready: `tool-input-error` with the
    /// raw argument text `input` (opened first if the UI has not seen it),
    /// and the part is forgotten.
    fn fail_tool(&mut self, part: u32, input: &str, error: &str) {
        self.maybe_open_tool(part, true);
        let state = std::mem::take(&mut self.parts[part as usize]);
        let (call_id, name) = (state.call_id.unwrap_or_default(), state.name.unwrap_or_default());
        self.ai("tool-input-error", |o| {
            o.str("toolCallId", &call_id).str("toolName", &name).str("input", input);
            o.str("errorText", error);
            if state.provider_executed {
                o.value("providerExecuted", &true);
            }
        });
    }

    /// A whole part that is a provider-executed tool's call and result (a
    /// Responses `web_search_call`, …) or the result of a call shown
    /// before (Anthropic `web_search_tool_result`, `mcp_tool_result`, …):
    /// the tool part, in state `output-available` (or `output-error`).
    fn ai_server_part(&mut self, content: &Value) {
        if let Some(call) = server_item(content) {
            self.ensure_started();
            self.ai("tool-input-start", |o| {
                o.str("toolCallId", call.id).str("toolName", call.name).value("providerExecuted", &true);
            });
            self.ai("tool-input-available", |o| {
                o.str("toolCallId", call.id).str("toolName", call.name).value("input", &call.input);
                o.value("providerExecuted", &true);
            });
            let result = ServerResult { call_id: call.id, output: content, error: call.error };
            self.ai_server_output(call.id, &result);
            if let Some(image) =
                content.get("result").and_then(Value::as_str).filter(|_| call.name == "image_generation")
            {
                // The generated image, as a file of the message.
                let format = content.get("output_format").and_then(Value::as_str).unwrap_or("png");
                let mime_type = format!("image/{format}");
                self.ai_file(&mime_type, FileData::Base64(image));
            }
        } else if let Some(result) = server_result(content) {
            // Only for a call the UI knows: a result for another is refused
            // by the UI message stream reader.
            let Some(known) = self.server_calls.iter().position(|id| id == result.call_id) else { return };
            self.server_calls.swap_remove(known);
            self.ai_server_output(result.call_id, &result);
        }
    }

    fn ai_server_output(&mut self, call_id: &str, result: &ServerResult<'_>) {
        match &result.error {
            Some(error) => self.ai("tool-output-error", |o| {
                o.str("toolCallId", call_id).str("errorText", error).value("providerExecuted", &true);
            }),
            None => self.ai("tool-output-available", |o| {
                o.str("toolCallId", call_id).value("output", result.output).value("providerExecuted", &true);
            }),
        }
    }

    fn error_frame(&mut self, message: &str, code: Option<&str>, recoverable: bool) {
        self.ensure_message_started();
        self.failed |= !recoverable;
        match self.config.format {
            RelayFormat::AiSdk => self.ai("error", |o| {
                o.str("errorText", message);
            }),
            RelayFormat::Catalog => self.catalog("error", |o| {
                o.str("error", message);
                if let Some(code) = code {
                    o.str("code", code);
                }
                o.value("recoverable", &recoverable);
            }),
        }
    }

    /// Notes a call shown to the catalog UI, for its result's `name`.
    fn remember_call(&mut self, call_id: &str, name: &str) {
        if !self.call_names.iter().any(|(id, _)| id == call_id) {
            self.call_names.push((call_id.to_owned(), name.to_owned()));
        }
    }

    /// The name of a call shown, forgotten now that its result is relayed
    /// (`""` for a call never shown).
    fn take_call_name(&mut self, call_id: &str) -> String {
        match self.call_names.iter().position(|(id, _)| id == call_id) {
            Some(i) => self.call_names.swap_remove(i).1,
            None => String::new(),
        }
    }

    fn part(&mut self, part: u32) -> &mut PartState {
        let index = part as usize;
        if self.parts.len() <= index {
            self.parts.resize_with(index + 1, PartState::default);
        }
        &mut self.parts[index]
    }

    /// A call the provider sent without an id goes by the id the stream gave
    /// it at its end (`ssefold_call_<part>`, the id a host's tool results
    /// name), unless the UI was shown another. Always false: a match guard
    /// run before the arms of the call's end.
    fn adopt_call_id(&mut self, part: u32, call: Option<&ToolCall<'_>>) -> bool {
        if let Some(call) = call {
            let state = self.part(part);
            if state.call_id.is_none() {
                state.call_id = Some(call.id.to_owned());
            }
        }
        false
    }

    /// Keeps a tool call's first `id` and `name` metadata (strings); whether
    /// this one was kept.
    fn note_call(&mut self, part: u32, key: &str, value: &serde_json::Value) -> bool {
        let Some(text) = value.as_str() else { return false };
        let state = self.part(part);
        let slot = match key {
            "id" => &mut state.call_id,
            "name" => &mut state.name,
            _ => return false,
        };
        if slot.is_some() {
            return false;
        }
        *slot = Some(text.to_owned());
        true
    }

    /// Writes the frames of one event; `escaped`: a delta's text as the
    /// provider escaped it, when known (see [`EventSink::escaped`]).
    fn write_event(&mut self, event: &StreamEvent<'_>, escaped: Option<&str>) {
        if event.part().is_some_and(|p| p as usize >= self.max_parts) {
            // Only a host's own event can be beyond it (a stream bounds its
            // parts): nothing is written, nothing grows.
            return;
        }
        match self.config.format {
            RelayFormat::AiSdk => self.ai_event(event, escaped),
            RelayFormat::Catalog => self.catalog_event(event, escaped),
        }
    }

    fn ai_event(&mut self, event: &StreamEvent<'_>, escaped: Option<&str>) {
        match *event {
            StreamEvent::MessageStart { provider, .. } => {
                self.provider = provider;
                self.begin_turn();
            }
            StreamEvent::PartStart { part, kind, provider_type, tool_call, .. } => {
                self.ensure_started();
                let state = self.part(part);
                *state = PartState {
                    kind: Some(kind),
                    provider_executed: kind == PartKind::ToolCall && provider_executed_call(provider_type),
                    preview: kind == PartKind::Media && provider_type.ends_with("partial_image"),
                    text_input: tool_call.is_some_and(|c| c.input_format == ToolInputFormat::Text),
                    ..PartState::default()
                };
                if matches!(kind, PartKind::Text | PartKind::Refusal | PartKind::Reasoning) {
                    state.opened = true;
                    let ui = UiIdText::new(self.steps, part);
                    self.parts[part as usize].ui_id = ui;
                    let chunk = if kind == PartKind::Reasoning { "reasoning-start" } else { "text-start" };
                    self.ai(chunk, |o| {
                        o.ascii("id", &ui);
                    });
                }
            }
            StreamEvent::TextDelta { part, text } => {
                let Some(state) = self.parts.get(part as usize).filter(|p| p.opened) else { return };
                let Some(kind) = state.kind.filter(|k| is_text(*k)) else { return };
                let chunk = if kind == PartKind::Reasoning { "reasoning-delta" } else { "text-delta" };
                let ui = state.ui_id;
                self.flush_held();
                self.last_id += 1;
                let text = DeltaText::new(text, escaped);
                frame::ai_delta_frame(self.replay.frame(self.last_id), self.last_id, chunk, &ui, text);
                self.active = true;
            }
            StreamEvent::PartMetadata { part, key, value } if self.note_call(part, key, value) => {
                self.maybe_open_tool(part, false);
            }
            StreamEvent::MediaDelta { part, mime_type, data } => {
                let state = self.part(part);
                if state.kind == Some(PartKind::Media) && !state.preview {
                    if state.mime_type.is_empty() {
                        state.mime_type.push_str(mime_type);
                    }
                    state.media.extend_from_slice(data);
                }
            }
            StreamEvent::ToolArgsDelta { part, json } => {
                let state = self.part(part);
                let opened = state.opened;
                state.args.push_str(json);
                if !opened {
                    // Opening writes the text held back, this fragment too.
                    self.maybe_open_tool(part, false);
                    return;
                }
                let limit = self.config.tool_input_coalesce_bytes;
                if limit > 0 {
                    self.hold_args(part, DeltaText::new(json, escaped), limit);
                    return;
                }
                let call_id = &self.parts[part as usize].call_id_json;
                self.last_id += 1;
                let json = DeltaText::new(json, escaped);
                frame::ai_args_delta_frame(self.replay.frame(self.last_id), self.last_id, call_id, json);
                self.active = true;
            }
            StreamEvent::PartEnd { part, kind, outcome, content, tool_call } => match kind {
                PartKind::Text | PartKind::Refusal | PartKind::Reasoning
                    if self.parts.get(part as usize).is_some_and(|p| p.opened) =>
                {
                    self.end_text_part(part, Some(content));
                }
                PartKind::Media => {
                    let state = std::mem::take(self.part(part));
                    if !state.media.is_empty() {
                        self.ai_file(&state.mime_type, FileData::Bytes(&state.media));
                    }
                }
                PartKind::ToolCall => match outcome {
                    _ if self.adopt_call_id(part, tool_call.as_ref()) => {}
                    PartOutcome::Complete => {
                        self.maybe_open_tool(part, true);
                        let state = std::mem::take(&mut self.parts[part as usize]);
                        let (call_id, name) = (state.call_id.unwrap_or_default(), state.name.unwrap_or_default());
                        let input = tool_input(tool_call.as_ref(), content, &state.args);
                        self.ai("tool-input-available", |o| {
                            o.str("toolCallId", &call_id).str("toolName", &name);
                            input.write(o, "input");
                            if state.provider_executed {
                                o.value("providerExecuted", &true);
                            }
                        });
                        if state.provider_executed {
                            match server_result(content) {
                                // A Responses `mcp_call` item carries its own output.
                                Some(result) => self.ai_server_output(&call_id, &result),
                                None => self.server_calls.push(call_id),
                            }
                        }
                    }
                    PartOutcome::InvalidArguments { error, raw } => {
                        self.fail_tool(part, raw, &format!("invalid arguments: {error}"))
                    }
                    PartOutcome::Incomplete => {
                        self.fail_tool(part, "", "the stream ended before the arguments were complete")
                    }
                },
                PartKind::Other => self.ai_server_part(content),
                _ => {}
            },
            StreamEvent::StopReason { choice: 0, reason } => {
                self.stop_reason.clear();
                self.stop_reason.push_str(reason);
            }
            StreamEvent::Usage { usage } => self.set_usage(usage),
            StreamEvent::TurnEnd { stop_reason } => self.end_turn(stop_reason),
            StreamEvent::Unknown { provider_type: "response.output_text.annotation.added", data, .. } => {
                // Kept for the text part's end (its folded part has none).
                if let Ok(Value::Object(mut event)) = serde_json::from_str::<Value>(data) {
                    if let Some(annotation) = event.remove("annotation") {
                        self.annotations.push(annotation);
                    }
                }
            }
            StreamEvent::TurnReset => {
                // The answer starts over: `reset-step` removes what the
                // open step shows of it (text, tools, sources, files) and
                // what follows rebuilds it in the same step. The argument
                // text held back belongs to the answer thrown away.
                self.held_part = None;
                self.held.clear();
                self.parts.clear();
                self.server_calls.clear();
                self.sources.clear();
                self.annotations.clear();
                self.stop_reason.clear();
                self.turn_ended = false;
                if self.step_open {
                    self.ai("reset-step", |_| {});
                }
            }
            StreamEvent::Error { error } => {
                let message = if error.error_type.is_empty() {
                    error.message.clone()
                } else {
                    format!("{}: {}", error.error_type, error.message)
                };
                let code = (!error.error_type.is_empty()).then_some(error.error_type.as_str());
                self.error_frame(&message, code, false);
            }
            _ => {}
        }
    }

    /// Writes `tool-input-start` (and the argument text held back) once the
    /// call's id and name are known, or when `force`d (the part ends).
    /// Returns whether the call is open.
    fn maybe_open_tool(&mut self, part: u32, force: bool) -> bool {
        let state = self.part(part);
        if state.opened {
            return true;
        }
        if state.kind != Some(PartKind::ToolCall) || !(force || (state.call_id.is_some() && state.name.is_some())) {
            return false;
        }
        state.opened = true;
        let call_id = state.call_id.get_or_insert_with(|| format!("call-{part}")).clone();
        state.call_id_json.clear();
        frame::write_json_str(&mut state.call_id_json, &call_id);
        let name = state.name.clone().unwrap_or_default();
        let pending = std::mem::take(&mut state.args);
        let (provider_executed, text_input) = (state.provider_executed, state.text_input);
        self.ai("tool-input-start", |o| {
            o.str("toolCallId", &call_id).str("toolName", &name);
            if text_input {
                // Free text, not JSON: `ai` 7 shows it as it streams.
                o.constant("inputEncoding", "text");
            }
            if provider_executed {
                o.value("providerExecuted", &true);
            }
        });
        if !pending.is_empty() {
            self.ai("tool-input-delta", |o| {
                o.str("toolCallId", &call_id).str("inputTextDelta", &pending);
            });
        }
        self.parts[part as usize].args = pending;
        true
    }

    /// `text-end` / `reasoning-end`; for text whose folded part (`content`)
    /// cites sources, the `citations` (what `ai` 7 keeps on the text part),
    /// then a `source-url` / `source-document` for each source the message
    /// does not show yet.
    fn end_text_part(&mut self, part: u32, content: Option<&Value>) {
        let state = &mut self.parts[part as usize];
        state.opened = false;
        let reasoning = state.kind == Some(PartKind::Reasoning);
        let chunk = if reasoning { "reasoning-end" } else { "text-end" };
        let ui = state.ui_id;
        let added = std::mem::take(&mut self.annotations);
        let mut citations = match content {
            Some(content) if !reasoning => citations(content),
            _ => Vec::new(),
        };
        if citations.is_empty() && !reasoning {
            citations.extend(annotations(&added));
        }
        if citations.is_empty() {
            self.ai(chunk, |o| {
                o.ascii("id", &ui);
            });
            return;
        }
        let ids: Vec<(String, bool)> = citations.iter().map(|c| self.source_id(&c.source)).collect();
        let list: Vec<Value> = citations.iter().zip(&ids).map(|(c, (id, _))| c.to_json(id)).collect();
        self.ai(chunk, |o| {
            o.ascii("id", &ui).json("citations", &Value::Array(list));
        });
        for (citation, (id, new)) in citations.iter().zip(&ids) {
            if *new {
                self.ai_source(&citation.source, id);
            }
        }
    }

    /// The `sourceId` of a source, and whether it is new to the message
    /// (`src-1`, `src-2`…; the same URL or document is one source).
    fn source_id(&mut self, source: &Source<'_>) -> (String, bool) {
        let key = source.key();
        if let Some((_, id)) = self.sources.iter().find(|(k, _)| *k == key) {
            return (id.clone(), false);
        }
        let id = format!("src-{}", self.sources.len() + 1);
        self.sources.push((key, id.clone()));
        (id, true)
    }

    fn ai_source(&mut self, source: &Source<'_>, id: &str) {
        match source {
            Source::Url { url, title } => self.ai("source-url", |o| {
                o.str("sourceId", id).str("url", url);
                if let Some(title) = title {
                    o.str("title", title);
                }
            }),
            Source::Document { media_type, title, filename } => self.ai("source-document", |o| {
                o.str("sourceId", id).constant("mediaType", media_type).str("title", title);
                if let Some(filename) = filename {
                    o.str("filename", filename);
                }
            }),
        }
    }

    /// After a Gemini turn ended: the sources of candidate 0's
    /// `groundingMetadata` (`groundingChunks`: `web` / `retrievedContext`)
    /// and `citationMetadata`, read from the folded message.
    fn relay_grounding(&mut self, stream: &Stream) {
        if !std::mem::take(&mut self.grounding_due) || self.finished {
            return;
        }
        let message = stream.message();
        let Some(candidate) = message.get("candidates").and_then(|c| c.get(0)) else { return };
        for source in grounding_sources(candidate) {
            let (id, new) = self.source_id(&source);
            if new {
                self.ai_source(&source, &id);
            }
        }
    }

    /// A `file` chunk: the bytes as a `data:` URL.
    fn ai_file(&mut self, mime_type: &str, data: FileData<'_>) {
        use base64::Engine;
        let mime_type = if mime_type.is_empty() { "application/octet-stream" } else { mime_type };
        let mut url = String::with_capacity(16 + mime_type.len() + 4 * data.len() / 3);
        url.push_str("data:");
        url.push_str(mime_type);
        url.push_str(";base64,");
        match data {
            FileData::Bytes(bytes) => base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut url),
            FileData::Base64(text) => url.push_str(text),
        }
        self.ai("file", |o| {
            o.str("mediaType", mime_type).str("url", &url);
        });
    }

    /// Holds a delta of an open call's argument text back (coalescing), and
    /// writes what is held once it reaches `limit` bytes. Text of another
    /// call held before is written first.
    fn hold_args(&mut self, part: u32, json: DeltaText<'_>, limit: usize) {
        if self.held_part != Some(part) {
            self.flush_held();
            self.held_part = Some(part);
            self.held_call_id.clear();
            self.held_call_id.extend_from_slice(&self.parts[part as usize].call_id_json);
            self.held_since = self.now_ms;
        }
        json.write_contents(&mut self.held);
        if self.held.len() >= limit {
            self.flush_held();
        }
    }

    /// Writes the argument text held back, if any, as one `tool-input-delta`.
    fn flush_held(&mut self) {
        if self.held_part.take().is_none() {
            return;
        }
        self.held_since = None;
        if !self.held.is_empty() {
            self.last_id += 1;
            let buf = self.replay.frame(self.last_id);
            frame::ai_args_delta_frame_escaped(buf, self.last_id, &self.held_call_id, &self.held);
            self.held.clear();
            self.active = true;
        }
    }

    fn catalog_event(&mut self, event: &StreamEvent<'_>, escaped: Option<&str>) {
        match *event {
            StreamEvent::MessageStart { .. } => self.begin_turn(),
            StreamEvent::PartStart { part, kind, provider_type, choice, .. } => {
                *self.part(part) = PartState {
                    kind: Some(kind),
                    provider_executed: kind == PartKind::ToolCall && provider_executed_call(provider_type),
                    choice,
                    ..PartState::default()
                };
            }
            StreamEvent::TextDelta { part, text } => {
                let Some(state) = self.parts.get(part as usize).filter(|p| p.kind.is_some_and(is_text)) else {
                    return;
                };
                let choice = state.choice;
                if choice > 0 {
                    // Another choice (OpenAI `n > 1`) is not the answer.
                    let kind = state.kind.map_or("text", PartKind::name);
                    self.catalog("choice-delta", |o| {
                        o.str("delta", text).value("choice", &choice).str("kind", kind);
                    });
                    return;
                }
                // The answer's text (a refusal is one) is `text-delta`;
                // reasoning goes apart, as an event the seed's UI ignores.
                let event = if state.kind == Some(PartKind::Reasoning) { "reasoning-delta" } else { "text-delta" };
                self.last_id += 1;
                let text = DeltaText::new(text, escaped);
                frame::catalog_delta_frame(self.replay.frame(self.last_id), self.last_id, event, text);
                self.active = true;
            }
            StreamEvent::PartMetadata { part, key, value } if self.note_call(part, key, value) => {
                self.catalog_open_call(part);
            }
            StreamEvent::ToolArgsDelta { part, json } => {
                let state = self.part(part);
                if state.kind != Some(PartKind::ToolCall) {
                    return;
                }
                state.args.push_str(json);
                if state.opened {
                    let call_id = &self.parts[part as usize].call_id_json;
                    self.last_id += 1;
                    let json = DeltaText::new(json, escaped);
                    frame::catalog_args_delta_frame(self.replay.frame(self.last_id), self.last_id, call_id, json);
                    self.active = true;
                }
            }
            StreamEvent::PartEnd { part, kind: PartKind::ToolCall, outcome, content, tool_call } => {
                self.adopt_call_id(part, tool_call.as_ref());
                let state = std::mem::take(self.part(part));
                let call_id = state.call_id.unwrap_or_else(|| format!("call-{part}"));
                let name = state.name.unwrap_or_default();
                match outcome {
                    PartOutcome::Complete => {
                        let input = tool_input(tool_call.as_ref(), content, &state.args);
                        self.catalog("tool-call", |o| {
                            o.str("id", &call_id).str("name", &name);
                            input.write(o, "args");
                            if state.provider_executed {
                                o.value("providerExecuted", &true);
                            }
                        });
                        self.remember_call(&call_id, &name);
                        if let Some(result) = server_result(content).filter(|_| state.provider_executed) {
                            self.catalog_server_result(&call_id, &result);
                        }
                    }
                    PartOutcome::InvalidArguments { error, .. } => {
                        let message = format!("tool call {name} ({call_id}): invalid arguments: {error}");
                        self.error_frame(&message, Some(INVALID_ARGUMENTS_CODE), true);
                    }
                    PartOutcome::Incomplete => {}
                }
            }
            StreamEvent::PartEnd { kind: PartKind::Other, content, .. } => {
                if let Some(call) = server_item(content) {
                    self.catalog("tool-call", |o| {
                        o.str("id", call.id).str("name", call.name).value("args", &call.input);
                        o.value("providerExecuted", &true);
                    });
                    self.remember_call(call.id, call.name);
                    let result = ServerResult { call_id: call.id, output: content, error: call.error };
                    self.catalog_server_result(call.id, &result);
                } else if let Some(result) = server_result(content) {
                    self.catalog_server_result(result.call_id, &result);
                }
            }
            StreamEvent::StopReason { choice: 0, reason } => {
                self.stop_reason.clear();
                self.stop_reason.push_str(reason);
            }
            StreamEvent::Usage { usage } => self.set_usage(usage),
            StreamEvent::TurnEnd { stop_reason } => self.end_turn(stop_reason),
            StreamEvent::TurnReset => {
                // The answer starts over (a reconnection that restarts the
                // stream): `turn-reset` for a UI that drops what the
                // attempt showed, and an empty answer as the seed's
                // `snapshot` (the full text so far) for one that honours it.
                self.catalog("turn-reset", |_| {});
                self.catalog("text-delta", |o| {
                    o.str("delta", "").str("snapshot", "");
                });
            }
            StreamEvent::Error { error } => {
                let (message, error_type) = (error.message.clone(), error.error_type.clone());
                let code = (!error_type.is_empty()).then_some(error_type.as_str());
                self.error_frame(&message, code, false);
            }
            _ => {}
        }
    }

    /// The first `tool-input-delta` of a call (its `name`, and the argument
    /// text held so far) once its id and name are known: a page shows the
    /// call and its arguments filling in before the ready `tool-call`.
    fn catalog_open_call(&mut self, part: u32) {
        let state = self.part(part);
        let known = state.call_id.is_some() && state.name.is_some();
        if state.kind != Some(PartKind::ToolCall) || state.opened || !known {
            return;
        }
        let (id, name) = (state.call_id.take().unwrap_or_default(), state.name.take().unwrap_or_default());
        state.opened = true;
        state.call_id_json.clear();
        frame::write_json_str(&mut state.call_id_json, &id);
        let held = std::mem::take(&mut state.args);
        self.catalog("tool-input-delta", |o| {
            o.str("id", &id).str("name", &name).str("delta", &held);
        });
        let state = self.part(part);
        (state.call_id, state.name, state.args) = (Some(id), Some(name), held);
    }

    /// `tool-result` of a tool the provider ran (no duration: the
    /// provider does not say).
    fn catalog_server_result(&mut self, call_id: &str, result: &ServerResult<'_>) {
        let output = match &result.error {
            Some(error) => Value::String(error.clone()),
            None => result.output.clone(),
        };
        let name = self.take_call_name(call_id);
        self.catalog("tool-result", |o| {
            o.str("id", call_id).str("name", &name).value("result", &output);
            if result.error.is_some() {
                o.value("isError", &true);
            }
            o.value("providerExecuted", &true);
        });
    }
}

/// Whether a tool-call part of this provider type is run by the provider:
/// Anthropic `server_tool_use` (web search, code execution, …) and
/// `mcp_tool_use`, OpenAI Responses `mcp_call`.
fn provider_executed_call(provider_type: &str) -> bool {
    matches!(provider_type, "server_tool_use" | "mcp_tool_use" | "mcp_call")
}

/// The result of a provider-executed tool.
struct ServerResult<'a> {
    call_id: &'a str,
    output: &'a Value,
    /// The error text, when the tool failed.
    error: Option<String>,
}

/// The result a folded part carries for a provider-executed call: an
/// Anthropic `*_tool_result` / `mcp_tool_result` block (`tool_use_id`,
/// `content`; an error when `is_error` or the content's type ends in
/// `_error`), or a Responses `mcp_call` item (`output`, `error`).
fn server_result(content: &Value) -> Option<ServerResult<'_>> {
    let kind = content.get("type")?.as_str()?;
    if kind == "mcp_call" {
        let error = content.get("error").filter(|e| !e.is_null()).map(error_text);
        return Some(ServerResult { call_id: "", output: content.get("output").unwrap_or(&Value::Null), error });
    }
    if !kind.ends_with("_tool_result") {
        return None;
    }
    let call_id = content.get("tool_use_id")?.as_str()?;
    let output = content.get("content").unwrap_or(&Value::Null);
    let failed = content.get("is_error") == Some(&Value::Bool(true))
        || output.get("type").and_then(Value::as_str).is_some_and(|t| t.ends_with("_error"));
    let error = failed.then(|| match output.get("error_code").and_then(Value::as_str) {
        Some(code) => code.to_owned(),
        None => error_text(output),
    });
    Some(ServerResult { call_id, output, error })
}

fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A provider-executed tool call that streams as one whole item.
struct ServerItem<'a> {
    id: &'a str,
    name: &'static str,
    input: Value,
    error: Option<String>,
}

/// A Responses item the provider ran (`web_search_call`,
/// `file_search_call`, `code_interpreter_call`, `image_generation_call`, a
/// `tool_search_call` with `execution: server`): its id, the tool's name,
/// the input as the item states it (the search action, the code, the
/// queries), and an error when its status is `failed`. Its output is the
/// item itself.
fn server_item(content: &Value) -> Option<ServerItem<'_>> {
    let pick = |keys: &[&str]| {
        Value::Object(keys.iter().filter_map(|k| Some(((*k).to_owned(), content.get(*k)?.clone()))).collect())
    };
    let (name, input) = match content.get("type")?.as_str()? {
        "web_search_call" => ("web_search", content.get("action").cloned().unwrap_or_else(|| pick(&[]))),
        "file_search_call" => ("file_search", pick(&["queries"])),
        "code_interpreter_call" => ("code_interpreter", pick(&["code", "container_id"])),
        "image_generation_call" => ("image_generation", pick(&[])),
        "tool_search_call" if content.get("execution").and_then(Value::as_str) == Some("server") => {
            ("tool_search", content.get("arguments").cloned().unwrap_or_else(|| pick(&[])))
        }
        _ => return None,
    };
    let id = content.get("id")?.as_str()?;
    let failed = content.get("status").and_then(Value::as_str) == Some("failed");
    let error = failed.then(|| format!("{name} failed"));
    Some(ServerItem { id, name, input, error })
}

/// A text part's UI id, `s{step}-p{part}` (unique in the UI message),
/// written out on the stack.
#[derive(Debug, Clone, Copy, Default)]
struct UiIdText {
    bytes: [u8; 24],
    len: u8,
}

impl UiIdText {
    fn new(step: u32, part: u32) -> Self {
        let mut bytes = [0u8; 24];
        let mut len = 0;
        for piece in
            [&b"s"[..], itoa::Buffer::new().format(step).as_bytes(), b"-p", itoa::Buffer::new().format(part).as_bytes()]
        {
            bytes[len..len + piece.len()].copy_from_slice(piece);
            len += piece.len();
        }
        // At most 1 + 10 + 2 + 10 bytes.
        UiIdText { bytes, len: len as u8 }
    }
}

impl std::ops::Deref for UiIdText {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// A ready tool call's input. When the folded part holds its arguments as
/// a JSON string (OpenAI chat `function.arguments`, Responses `arguments`):
/// that text, parsed when it is not valid JSON on one line (`{}` when
/// empty: a call without arguments). When it holds
/// them as a value (Anthropic `input`, Bedrock `toolUse.input`, Gemini
/// `functionCall.args`, Ollama `function.arguments`): the argument text the
/// call streamed (`args`) when that is one line without `\u` escapes (the
/// fold parsed the same bytes into the value, so it is valid JSON of the
/// same value; a `\u` escape may be a lone surrogate the value holds as
/// U+FFFD), else the value written. `null` when the part has neither.
fn tool_input<'a>(call: Option<&ToolCall<'a>>, content: &'a Value, args: &'a str) -> ToolInput<'a> {
    // A custom tool's free-text input: a string, or the value when the text
    // is JSON (xAI's server tools send JSON as custom tool input).
    if let Some(call) = call.filter(|c| c.input_format == ToolInputFormat::Text) {
        return match serde_json::from_str(call.arguments) {
            Ok(value) => ToolInput::Owned(value),
            Err(_) => ToolInput::Text(call.arguments),
        };
    }
    // The commonest shapes first (a lookup each: this runs for every call).
    let (value, is_text) = match content.get("input") {
        Some(input) => (Some(input), false),
        None => match content.get("arguments").or_else(|| content.get("function")?.get("arguments")) {
            Some(arguments) => (Some(arguments), true),
            None => {
                let nested = content.get("toolUse").and_then(|t| t.get("input"));
                (nested.or_else(|| content.get("functionCall")?.get("args")), false)
            }
        },
    };
    match value {
        // No arguments at all (a call of a tool without parameters, which
        // the fold counts as complete): an empty object, as a UI shows it.
        Some(Value::String(text)) if is_text && text.trim_ascii().is_empty() => ToolInput::Json("{}"),
        Some(Value::String(text)) if is_text => {
            // Valid JSON on one line is copied as it is (no value built).
            let one_line = memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_none();
            if one_line && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
                return ToolInput::Json(text);
            }
            match serde_json::from_str(text) {
                Ok(value) => ToolInput::Owned(value),
                Err(_) => ToolInput::Text(text),
            }
        }
        Some(value) => {
            let usable = !args.trim_ascii().is_empty()
                && memchr::memchr2(b'\n', b'\r', args.as_bytes()).is_none()
                && memchr::memmem::find(args.as_bytes(), b"\\u").is_none();
            if usable {
                ToolInput::Json(args)
            } else {
                ToolInput::Value(value)
            }
        }
        // A value the fold kept as text (an Anthropic input too large for a
        // tree): the call's arguments, valid JSON, written without building
        // it (line breaks in valid JSON are whitespace between tokens).
        None => {
            match call.filter(|c| c.input_format == ToolInputFormat::Json && !c.arguments.trim_ascii().is_empty()) {
                Some(call) if memchr::memchr2(b'\n', b'\r', call.arguments.as_bytes()).is_none() => {
                    ToolInput::Json(call.arguments)
                }
                Some(call) => ToolInput::JsonLines(call.arguments),
                None => ToolInput::Value(&Value::Null),
            }
        }
    }
}

/// A tool call's input, borrowed from the folded part when it can be.
enum ToolInput<'a> {
    Value(&'a Value),
    /// Valid JSON text without line breaks.
    Json(&'a str),
    /// Valid JSON text with line breaks (written without them).
    JsonLines(&'a str),
    /// Arguments that are not JSON: shown as a string.
    Text(&'a str),
    Owned(Value),
}

impl ToolInput<'_> {
    fn write(&self, o: &mut JsonObject<'_>, key: &str) {
        match self {
            ToolInput::Value(value) => o.json(key, value),
            ToolInput::Json(json) => o.raw(key, json.as_bytes()),
            ToolInput::JsonLines(json) => {
                let one_line: Vec<u8> = json.bytes().filter(|b| !matches!(b, b'\n' | b'\r')).collect();
                o.raw(key, &one_line)
            }
            ToolInput::Text(text) => o.str(key, text),
            ToolInput::Owned(value) => o.json(key, value),
        };
    }
}

#[cfg(test)]
mod tests;
