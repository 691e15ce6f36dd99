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

// Where each concern lives: this file is the host's facade ([`Relay`]);
// `writer` holds the state both formats share and dispatches each event;
// `ai_sdk` and `catalog` write the two formats; `dialect` reads the
// dialects' own shapes of a folded part; `config` the settings; `frame`
// the bytes of a frame, `replay` the frames kept, `cite` sources and
// citations, `wire` events in their JSON form.
mod ai_sdk;
mod catalog;
mod cite;
mod config;
mod dialect;
mod frame;
mod replay;
mod wire;
mod writer;

use serde_json::Value;

use crate::providers::{Stream, StreamError, StreamEvent};

use ai_sdk::DONE;
pub use catalog::{
    default_approval_message, FinishReason, CATALOG_EVENT_NAMES, INVALID_ARGUMENTS_CODE, STREAM_ERROR_CODE,
};
pub use config::{RelayConfig, RelayFormat};
use frame::JsonObject;
pub use replay::Frames;
use replay::Gap;
use writer::Writer;

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

    /// The provider stream, the relay consumed: for a host done relaying,
    /// to take the folded message with [`Stream::into_message`].
    pub fn into_stream(self) -> Option<Stream> {
        self.stream
    }

    /// The format written.
    pub fn format(&self) -> RelayFormat {
        self.writer.config.format
    }

    /// The HTTP response headers the browser side needs.
    pub fn headers(&self) -> &'static [(&'static str, &'static str)] {
        match self.writer.config.format {
            RelayFormat::AiSdk => ai_sdk::HEADERS,
            RelayFormat::Catalog => catalog::HEADERS,
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
            RelayFormat::AiSdk => w.ai_tool_output(call_id, output, is_error),
            RelayFormat::Catalog => w.catalog_tool_result(call_id, output, is_error, duration_ms),
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
            RelayFormat::AiSdk => w.ai_approval_request(approval_id, call_id),
            RelayFormat::Catalog => w.catalog_approval_required(approval_id, call_id, name, input, message),
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
        let w = &mut self.writer;
        w.ensure_message_started();
        w.close_step();
        if let Some(usage) = usage {
            w.set_usage(usage);
        }
        let (steps, stop_reason, usage_json) =
            (w.steps, std::mem::take(&mut w.stop_reason), std::mem::take(&mut w.usage));
        match w.config.format {
            RelayFormat::AiSdk => w.ai_finish(steps, &stop_reason, &usage_json),
            RelayFormat::Catalog => w.catalog_finish(steps, &stop_reason, usage),
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

#[cfg(test)]
mod tests;
