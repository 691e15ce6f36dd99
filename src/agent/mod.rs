//! One agent turn, sans-IO: the stream, its tool calls and (optionally) the
//! reconnection policy and the streaming-UI state, decided once for every
//! binding.
//!
//! What a host does around a streamed answer — read the body, start each
//! tool call as soon as it is complete, hand the results back, build the
//! next request — is the same in every language. [`AgentTurn`] owns it the
//! way quinn-proto or h11 own a connection: the host tells it what happened
//! (bytes arrived, the body ended, the connection failed, a tool reported
//! progress or its result, the user aborted, the time) and it answers what
//! to do ([`TurnAction`]: start this tool with these arguments, cancel that
//! one, reconnect after N ms with this cursor) and what to show
//! ([`TurnEvent`]). It never opens a socket, never runs a tool and never
//! reads a clock.
//!
//! ```
//! use ssefold::agent::{AgentTurn, TurnAction, TurnConfig};
//! use ssefold::providers::Provider;
//! use ssefold::tools::ToolOptions;
//!
//! let body = concat!(
//!     "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":",
//!     "{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":",
//!     "{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n",
//!     "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},",
//!     "\"finish_reason\":\"tool_calls\"}]}\n\n",
//!     "data: [DONE]\n\n",
//! );
//! let mut turn = AgentTurn::new(TurnConfig::new(Provider::Auto));
//! turn.add_tool("add", ToolOptions::default());
//! turn.feed(body.as_bytes(), 0, |_event| {});
//! turn.end_of_body(0, |_event| {});
//! let Some(TurnAction::StartTool(call)) = turn.poll_action() else { panic!("a call to start") };
//! assert_eq!((call.call_id.as_str(), call.name.as_str(), call.arguments.as_str()), ("call_1", "add", r#"{"a":1}"#));
//! turn.tool_result("call_1", "1", false, |_event| {}).unwrap();
//! assert!(turn.is_finished());
//! let outcome = turn.outcome();
//! assert_eq!(outcome.results[0].output, "1");
//! let next = outcome.next().unwrap();
//! let append = next.into_append(); // what the conversation gets
//! assert_eq!(append[0]["tool_calls"][0]["id"], "call_1"); // the assistant message
//! assert_eq!(append[1], serde_json::json!({"role": "tool", "tool_call_id": "call_1", "content": "1"}));
//! ```
//!
//! # The decision table
//!
//! Every tool call of the answer (choice 0; the calls of other choices of
//! an OpenAI `n > 1` request are not part of the conversation it continues)
//! gets **exactly one** result, in call order, decided here for every
//! binding. By how its part ended:
//!
//! | the call | its result |
//! | --- | --- |
//! | complete, a tool the host registered | the host runs it ([`TurnAction::StartTool`]) as soon as the scheduling rules allow ([`ToolScheduler`]: exclusive tools alone, `max_concurrency`); its result is the host's ([`ToolResultKind::Ran`]) |
//! | complete, a tool the host did not register | error `No such tool available: NAME` ([`ToolResultKind::UnknownTool`]), never run |
//! | complete, no name | error `Not run: the call has no tool name` ([`ToolResultKind::Unnamed`]) |
//! | arguments invalid JSON | error `Not run: invalid arguments for NAME: WHY` ([`ToolResultKind::InvalidInput`]) |
//! | arguments cut (the turn ended, an error or an abort came while they streamed) | error `Not run: the arguments of NAME were cut off before they were complete` ([`ToolResultKind::Incomplete`]) |
//! | run by the provider (`provider_executed`) | none from the host: its result is in the stream (and in the message) |
//!
//! and by how the turn ended:
//!
//! | the turn | calls not started | calls running |
//! | --- | --- | --- |
//! | ended normally (its terminal event) | start when the rules allow | run to their result |
//! | ended with an error (a provider error event, bad data, a limit, a connection that could not be resumed) | error `Aborted: REASON` ([`ToolResultKind::Aborted`]), never started | cancelled ([`TurnAction::CancelTool`]), error `Aborted: REASON`; a late result is dropped |
//! | aborted by the host ([`AgentTurn::abort`]) | idem, `REASON` the host's | idem |
//! | restarted by the server after a reconnection (`turn_reset`) | discarded with the answer they belonged to: not in the folded message, so no result is sent for them | cancelled, discarded |
//!
//! A call that is cut, invalid or unnamed is never started, whatever the
//! turn does. The results are handed back in call order; the next request
//! ([`TurnOutcome::next`], [`next`]) pairs every call of the folded message
//! with its result.
//!
//! # Connections
//!
//! With a [`ReconnectPolicy`] ([`TurnConfig::reconnect`]), a body that ends
//! before the answer's terminal event, a transport failure and an idle
//! connection ([`AgentTurn::tick`]) become [`TurnAction::Reconnect`] (after
//! `delay_ms`, with the resume cursor: `Last-Event-ID` or the Responses
//! `starting_after`) until the policy gives up; the server's next body
//! either resumes the answer or restarts it (see [`crate::providers`]).
//! Without one, such an ending ends the turn with an error. A provider error
//! inside the stream never reconnects (sending the request again is the
//! host's decision: [`TurnFailure`] says whether its type is transient).
//!
//! # UI state, relay
//!
//! With [`TurnConfig::ui`], the turn keeps the [`crate::ui::UiState`] of its
//! answer: every event shown, the connection state, each tool's progress
//! (the text of [`AgentTurn::tool_update`], by call id). The browser relay
//! ([`crate::relay::Relay`]) is the host's: one relay spans the turns of a
//! conversation (its steps), so the host pushes the turn's [`TurnEvent`]s
//! and tool results into it.

mod json;
pub mod next;
pub mod telemetry;
mod timings;

use std::collections::{BTreeMap, VecDeque};

use serde_json::Value;

use crate::providers::{
    PartKind, PartOutcome, Provider, Sink, StopClass, Stream, StreamConfig, StreamError, StreamEvent, ToolCall,
    ToolInputFormat,
};
use crate::reconnect::{
    ConnectionState, Decision, GiveUpReason, ReconnectPolicy, Reconnector, Replay, ResumeCursor, RetryHints, StallKind,
    StreamEnd,
};
use crate::tools::{
    Gate, SchedulerConfig, SchedulerError, ToolExecutionEvent, ToolOptions, ToolResult, ToolResultKind, ToolScheduler,
};
use crate::ui::UiState;

pub use next::{next_request, NextRequest, NextRequestError};
pub(crate) use timings::usage_tokens;
pub use timings::{Attempt, GapStats, TurnTimings};

/// How an [`AgentTurn`] is made.
#[derive(Debug, Clone)]
pub struct TurnConfig {
    /// The dialect ([`Provider::Auto`]: detected from the body).
    pub provider: Provider,
    /// The stream's limits.
    pub stream: StreamConfig,
    /// The tool scheduler's limits (`max_concurrency`, `max_calls`).
    pub scheduler: SchedulerConfig,
    /// Retry, resume or (opted in) restart a connection that is refused
    /// with a transient HTTP status, ends early, fails or stalls, with this
    /// policy (default: [`ReconnectPolicy::default`], see
    /// [`crate::reconnect`]). `None`: never send a request again (a host
    /// that reads one body it cannot request again); the policy's default
    /// stall timeouts still apply.
    pub reconnect: Option<ReconnectPolicy>,
    /// Keep the streaming-UI state model ([`AgentTurn::ui`]): every event
    /// shown, the connection state, the tools' progress. Default false.
    pub ui: bool,
    /// A call waiting for approval that gets no answer for this long is
    /// denied (`None`, the default: it waits for the host).
    pub approval_timeout_ms: Option<u64>,
    /// A random number from the host for the retry jitter
    /// ([`Reconnector::seed_jitter`]); 0: the fixed default sequence.
    pub jitter_seed: u64,
}

impl TurnConfig {
    /// The default configuration for `provider`.
    pub fn new(provider: Provider) -> Self {
        TurnConfig {
            provider,
            stream: StreamConfig::default(),
            scheduler: SchedulerConfig::default(),
            reconnect: Some(ReconnectPolicy::default()),
            ui: false,
            approval_timeout_ms: None,
            jitter_seed: 0,
        }
    }
}

/// One thing to show, in the order it happened: a normalized stream event,
/// or a `tool_execution_*` event (a call was started, reported progress,
/// got its result).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum TurnEvent<'a> {
    /// A normalized event of the stream.
    Stream(&'a StreamEvent<'a>),
    /// A tool execution event.
    Tool(&'a ToolExecutionEvent),
}

/// A call the host starts now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartTool {
    /// The call's id (the provider's, or synthesized: unique in the turn).
    pub call_id: String,
    /// Whether `call_id` was synthesized (the provider sent none, or one an
    /// earlier call went by).
    pub id_synthesized: bool,
    /// The tool's name (one the host registered).
    pub name: String,
    /// The call's input as text: JSON, or free text for a
    /// [`ToolInputFormat::Text`] call.
    pub arguments: String,
    /// How `arguments` is written.
    pub input_format: ToolInputFormat,
}

/// What the host does next. Drain them with [`AgentTurn::poll_action`]
/// after each input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnAction {
    /// Start this call (on the host's thread, task or goroutine) and report
    /// its result with [`AgentTurn::tool_result`].
    StartTool(StartTool),
    /// Cancel this running call: the turn already gave it its result (a
    /// late result is dropped).
    CancelTool {
        /// The call's id.
        call_id: String,
    },
    /// Close the connection now (it went idle): its end follows as a
    /// reconnection or the end of the turn, already decided.
    CloseConnection,
    /// Send the request again after `delay_ms` with the resume cursor, then
    /// report [`AgentTurn::connected`] (or [`AgentTurn::http_status`]) and
    /// feed the new body.
    Reconnect {
        /// How long to wait first.
        delay_ms: u64,
        /// Which reconnection this is (1 for the first).
        attempt: u32,
        /// What to send so the server can resume.
        cursor: ResumeCursor,
        /// What the request is: a retry before any output, a resume, or a
        /// restart the policy opted in to.
        replay: Replay,
    },
}

/// Why a turn ended with an error.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TurnFailure {
    /// The stream failed: bad data, a limit, a provider error event, a body
    /// that ended before the answer did (see [`StreamError`]).
    Stream(StreamError),
    /// The connection failed and was not (or could no longer be) resumed;
    /// the text says how.
    Transport(String),
    /// The connection went idle or stalled (no content: see [`StallKind`])
    /// and was not (or could no longer be) resumed.
    IdleTimeout {
        /// Which timeout fired.
        stall: StallKind,
        /// Its length in ms.
        after_ms: u64,
    },
    /// The response was refused with an HTTP status (not 2xx) and not (or
    /// no longer) retried.
    Http {
        /// The status.
        status: u16,
        /// What its `Retry-After` said, in ms.
        retry_after_ms: Option<u64>,
    },
    /// The answer has more tool calls than [`SchedulerConfig::max_calls`]:
    /// the calls past it get no result.
    TooManyCalls {
        /// The limit.
        limit: usize,
    },
}

impl TurnFailure {
    /// A one-line description.
    pub fn message(&self) -> String {
        match self {
            TurnFailure::Stream(e) => e.to_string(),
            TurnFailure::Transport(t) => format!("connection failed: {t}"),
            TurnFailure::IdleTimeout { stall: StallKind::Idle, after_ms } => format!("no data for {after_ms} ms"),
            TurnFailure::IdleTimeout { stall: StallKind::FirstContent, after_ms } => {
                format!("no content for {after_ms} ms before the first (keep-alives only)")
            }
            TurnFailure::IdleTimeout { stall: StallKind::Content, after_ms } => {
                format!("no content for {after_ms} ms (keep-alives only)")
            }
            TurnFailure::Http { status, .. } => format!("HTTP status {status}"),
            TurnFailure::TooManyCalls { limit } => format!("more than {limit} tool calls in one turn"),
        }
    }

    /// Whether sending the request again may succeed: a transient provider
    /// error type ([`crate::reconnect::is_retryable_error_type`]), a
    /// transport failure or an idle connection. Retrying is the host's
    /// decision: the turn never sends a request.
    pub fn is_retryable(&self) -> bool {
        match self {
            TurnFailure::Stream(StreamError::Provider(e)) => crate::reconnect::is_retryable_error_type(&e.error_type),
            TurnFailure::Stream(_) | TurnFailure::TooManyCalls { .. } => false,
            TurnFailure::Http { status, .. } => crate::reconnect::RETRYABLE_STATUSES.contains(status),
            TurnFailure::Transport(_) | TurnFailure::IdleTimeout { .. } => true,
        }
    }
}

/// How a call's part ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallOutcome {
    /// Complete: ready.
    Complete,
    /// Its arguments were not valid JSON.
    InvalidArguments,
    /// Cut off before its arguments were complete.
    Incomplete,
}

impl CallOutcome {
    /// The wire name (the `part_end` outcome's).
    pub fn name(self) -> &'static str {
        match self {
            CallOutcome::Complete => "complete",
            CallOutcome::InvalidArguments => "invalid_arguments",
            CallOutcome::Incomplete => "incomplete",
        }
    }
}

/// One tool call of the answer (choice 0), as the turn keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnCall {
    /// Its part.
    pub part: u32,
    /// Its id (see [`ToolCall::id`]).
    pub id: String,
    /// Whether the id was synthesized.
    pub id_synthesized: bool,
    /// The tool's name.
    pub name: String,
    /// The provider's type of the part (`tool_use`, `function`,
    /// `function_call`, `custom_tool_call`, …: `part_start`'s).
    pub provider_type: String,
    /// How its input is written.
    pub input_format: ToolInputFormat,
    /// The provider runs it: no result from the host.
    pub provider_executed: bool,
    /// How its part ended.
    pub outcome: CallOutcome,
    /// Its input as text ([`ToolCall::arguments`]: the raw text received
    /// when the part did not end complete).
    pub arguments: String,
}

/// What a finished (or aborted, or failed) turn gives the agent.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    /// The dialect (as detected).
    pub provider: Provider,
    /// The folded message: the provider's non-streaming response (`null`
    /// when nothing arrived).
    pub message: Value,
    /// The stop reason of the answer (choice 0), when known.
    pub stop_reason: Option<String>,
    /// The host aborted the turn.
    pub aborted: bool,
    /// Why the turn ended with an error, if it did.
    pub failure: Option<TurnFailure>,
    /// Every tool call of the answer, in part order.
    pub calls: Vec<TurnCall>,
    /// One result per call the host had to answer (every call but the
    /// provider-run ones), in call order.
    pub results: Vec<ToolResult>,
    /// Why no reconnection followed the last connection, when one was
    /// wanted ([`GiveUpReason::NotResumable`]: output was delivered and the
    /// answer could not be resumed: `message` is everything folded). A
    /// policy with `max_retries: 0` gives up at once
    /// ([`GiveUpReason::RetriesExhausted`]); a turn made without one
    /// ([`TurnConfig::reconnect`] `None`) never wants a reconnection.
    pub gave_up: Option<GiveUpReason>,
    /// Whether content reached the host (a request sent again now would
    /// bill and show a second answer unless resumed).
    pub output_started: bool,
    /// The timings, from the host's clock.
    pub timings: TurnTimings,
}

impl TurnOutcome {
    /// What to append to the conversation to continue: the assistant turn
    /// and the tool results, in the provider's request shape (`None` when
    /// no dialect was detected, or the message has no answer to continue).
    /// Written on demand from [`message`](Self::message), the calls and the
    /// results ([`next_request`]): it copies the answer, which a host that
    /// keeps its own history may not need.
    pub fn next(&self) -> Option<NextRequest> {
        next::next_request(self.provider, &self.message, &self.calls, &self.results).ok()
    }
}

/// Misuse of an [`AgentTurn`]; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// A tool result or update that does not fit the call (see
    /// [`SchedulerError`]).
    #[error(transparent)]
    Scheduler(#[from] SchedulerError),
}

impl TurnError {
    /// A stable snake_case name of the error kind (the scheduler's).
    pub fn kind(&self) -> &'static str {
        match self {
            TurnError::Scheduler(e) => e.kind(),
        }
    }
}

/// Where the turn's connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Bytes may come.
    Streaming,
    /// A reconnection was decided; the host has not reported the new
    /// connection yet.
    Reconnecting,
    /// The stream is over (its end, an error or an abort).
    Ended,
}

/// A ready call the host has not been told to start yet: its input, kept
/// until then.
#[derive(Debug)]
struct Pending {
    id_synthesized: bool,
    name: String,
    arguments: String,
    input_format: ToolInputFormat,
}

/// One sans-IO agent turn. See the module docs.
#[derive(Debug)]
pub struct AgentTurn {
    stream: Stream,
    tools: BTreeMap<String, ToolOptions>,
    scheduler_config: SchedulerConfig,
    scheduler: ToolScheduler,
    reconnector: Reconnector,
    phase: Phase,
    /// The tool call parts started and not ended yet, by part id (only
    /// choice 0's calls count).
    call_parts: BTreeMap<u32, OpenCall>,
    /// Events come from the host's own stream ([`AgentTurn::apply_event`]).
    external: bool,
    /// No event of the host's own stream came yet (its first starts the
    /// timings when the host did not say when it sent the request).
    external_start: bool,
    calls: Vec<TurnCall>,
    pending: BTreeMap<String, Pending>,
    actions: VecDeque<TurnAction>,
    stop_reason: Option<String>,
    aborted: bool,
    failure: Option<TurnFailure>,
    /// The UI state model, when asked for ([`TurnConfig::ui`]).
    ui: Option<Box<UiState>>,
    /// The host's time of its last input that had one.
    now_ms: u64,
    /// Whether the host asked for reconnections ([`TurnConfig::reconnect`]).
    reconnects: bool,
    /// Calls waiting for approval: approval id → (call id, deadline).
    approvals: BTreeMap<String, (String, Option<u64>)>,
    approval_timeout_ms: Option<u64>,
    gave_up: Option<GiveUpReason>,
    clock: Clock,
}

/// What the turn measures of time (see [`TurnTimings`]).
#[derive(Debug, Default)]
struct Clock {
    started_ms: Option<u64>,
    first_content_ms: Option<u64>,
    last_content_ms: Option<u64>,
    gaps: timings::GapHistogram,
    ended_ms: Option<u64>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    attempts: Vec<Attempt>,
}

impl Clock {
    fn attempt_started(&mut self, now_ms: u64) {
        self.started_ms.get_or_insert(now_ms);
        if self.attempts.last().map_or(true, |a| a.ended_ms.is_some()) {
            self.attempts.push(Attempt { started_ms: now_ms, ended_ms: None, outcome: "open", status: None });
        }
    }

    fn attempt_ended(&mut self, now_ms: u64, end: &StreamEnd) {
        if let Some(a) = self.attempts.last_mut().filter(|a| a.ended_ms.is_none()) {
            a.ended_ms = Some(now_ms);
            a.outcome = end.name();
            if let StreamEnd::HttpStatus { status, .. } = end {
                a.status = Some(*status);
            }
        }
    }

    fn content(&mut self, now_ms: u64) {
        match self.last_content_ms {
            None => self.first_content_ms = Some(now_ms),
            Some(last) => self.gaps.record(now_ms.saturating_sub(last)),
        }
        self.last_content_ms = Some(now_ms);
    }

    fn timings(&self) -> TurnTimings {
        let since = |t: Option<u64>| Some(t?.saturating_sub(self.started_ms?));
        let streaming_ms = match (self.first_content_ms, self.ended_ms.or(self.last_content_ms)) {
            (Some(a), Some(b)) if b > a => Some(b - a),
            _ => None,
        };
        TurnTimings {
            started_ms: self.started_ms,
            time_to_first_content_ms: since(self.first_content_ms),
            content_gaps: self.gaps.stats(),
            duration_ms: since(self.ended_ms),
            output_tokens: self.output_tokens,
            input_tokens: self.input_tokens,
            output_tokens_per_second: match (self.output_tokens, streaming_ms) {
                (Some(n), Some(ms)) => Some(n as f64 * 1000.0 / ms as f64),
                _ => None,
            },
            attempts: self.attempts.clone(),
        }
    }
}

impl AgentTurn {
    /// A turn waiting for its first bytes.
    pub fn new(config: TurnConfig) -> Self {
        let media_budget = config.stream.max_memory_bytes;
        let reconnects = config.reconnect.is_some();
        let policy = config.reconnect.unwrap_or(ReconnectPolicy { max_retries: 0, ..ReconnectPolicy::default() });
        let mut reconnector = Reconnector::new(policy);
        if config.jitter_seed != 0 {
            reconnector.seed_jitter(config.jitter_seed);
        }
        AgentTurn {
            stream: Stream::with_config(config.provider, config.stream),
            tools: BTreeMap::new(),
            scheduler: ToolScheduler::with_config(config.scheduler),
            scheduler_config: config.scheduler,
            reconnector,
            phase: Phase::Streaming,
            call_parts: BTreeMap::new(),
            external: false,
            external_start: true,
            calls: Vec::new(),
            pending: BTreeMap::new(),
            actions: VecDeque::new(),
            stop_reason: None,
            aborted: false,
            failure: None,
            ui: config.ui.then(|| Box::new(UiState::with_media_budget(media_budget))),
            now_ms: 0,
            reconnects,
            approvals: BTreeMap::new(),
            approval_timeout_ms: config.approval_timeout_ms,
            gave_up: None,
            clock: Clock::default(),
        }
    }

    /// The streaming-UI state model ([`TurnConfig::ui`]): what a chat UI
    /// shows of the turn now (parts, tool calls and their progress, usage,
    /// the connection). `None` unless asked for.
    pub fn ui(&self) -> Option<&UiState> {
        self.ui.as_deref()
    }

    /// Moves the connection phase, and the UI's connection state with it.
    fn set_phase(&mut self, phase: Phase) {
        if phase == Phase::Ended && self.phase != Phase::Ended {
            self.clock.ended_ms = Some(self.now_ms);
        }
        self.phase = phase;
        if let Some(ui) = self.ui.as_deref_mut() {
            ui.set_connection(match phase {
                Phase::Streaming => ConnectionState::Connected,
                Phase::Reconnecting => ConnectionState::Reconnecting,
                Phase::Ended => ConnectionState::Disconnected,
            });
        }
    }

    /// Registers a tool the host runs, and how it is scheduled. A call to a
    /// name not registered gets the unknown-tool error result.
    pub fn add_tool(&mut self, name: &str, options: ToolOptions) {
        self.tools.insert(name.to_owned(), options);
    }

    /// The stream (its dialect, cursor, folded message so far).
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The dialect: the one given, or the one detected.
    pub fn provider(&self) -> Provider {
        self.stream.provider()
    }

    /// The host sent the request (the first, or the one a
    /// [`TurnAction::Reconnect`] asked for): the timings count from the
    /// first. Optional: without it they count from [`connected`](Self::connected).
    pub fn request_sent(&mut self, now_ms: u64) {
        self.now_ms = now_ms;
        if self.phase != Phase::Ended {
            self.clock.attempt_started(now_ms);
        }
    }

    /// The response headers of a connection arrived with a 2xx status (the
    /// first, or the one a [`TurnAction::Reconnect`] asked for).
    pub fn connected(&mut self, now_ms: u64) {
        self.now_ms = now_ms;
        self.reconnector.on_connected(now_ms);
        if self.phase != Phase::Ended {
            self.clock.attempt_started(now_ms);
            self.set_phase(Phase::Streaming);
        }
    }

    /// The response was refused before its body: `status` is not 2xx;
    /// `hints` are its headers' ([`RetryHints::from_headers`]). A transient
    /// status (408, 409, 429, 5xx, 529) is retried under the policy
    /// ([`TurnAction::Reconnect`] after its `Retry-After`); another, or one
    /// the provider said not to retry, ends the turn
    /// ([`TurnFailure::Http`]; the host has the body, for its error).
    pub fn http_status(
        &mut self,
        status: u16,
        hints: RetryHints,
        now_ms: u64,
        mut on_event: impl FnMut(TurnEvent<'_>),
    ) {
        self.now_ms = now_ms;
        if self.phase == Phase::Ended {
            return;
        }
        let end =
            StreamEnd::HttpStatus { status, retry_after_ms: hints.retry_after_ms, should_retry: hints.should_retry };
        // An attempt the host did not announce (`request_sent`) still counts.
        self.clock.attempt_started(now_ms);
        if self.try_reconnect(end) {
            return;
        }
        self.fail(TurnFailure::Http { status, retry_after_ms: hints.retry_after_ms }, &mut on_event);
    }

    /// Bytes of the body arrived: `on_event` gets what to show, in order;
    /// then drain [`poll_action`](Self::poll_action). After the stream is
    /// over, bytes change nothing; after its terminal event they still reach
    /// the stream, which says what it ignores (a `data_after_terminal`
    /// warning), as it does for the rest of the chunk that held that event:
    /// the same events however the body was cut.
    pub fn feed(&mut self, chunk: &[u8], now_ms: u64, mut on_event: impl FnMut(TurnEvent<'_>)) {
        if self.phase != Phase::Streaming {
            if self.phase == Phase::Ended && !self.aborted && self.failure.is_none() && self.stream.is_terminated() {
                let (_, seen) = self.shown(&mut on_event, |stream, on| stream.feed_to(chunk, on));
                self.apply_seen(seen, &mut on_event);
            }
            return;
        }
        self.now_ms = now_ms;
        self.reconnector.on_activity(now_ms);
        let (result, seen) = self.shown(&mut on_event, |stream, on| stream.feed_to(chunk, on));
        self.apply_seen(seen, &mut on_event);
        self.reconnector.on_event(
            self.stream.last_event_id(),
            self.stream.last_sequence_number(),
            self.stream.reconnection_time(),
        );
        match result {
            Ok(()) if self.stream.is_terminated() => self.end_stream(None, &mut on_event),
            Ok(()) => {}
            Err(e) => self.end_stream(Some(TurnFailure::Stream(e)), &mut on_event),
        }
    }

    /// The body ended (the connection closed cleanly).
    pub fn end_of_body(&mut self, now_ms: u64, mut on_event: impl FnMut(TurnEvent<'_>)) {
        self.now_ms = now_ms;
        if self.phase != Phase::Streaming {
            return;
        }
        if !self.stream.is_complete_at_end() && self.try_reconnect(StreamEnd::EndedEarly) {
            return;
        }
        let (result, seen) = self.shown(&mut on_event, |stream, on| stream.finish_to(on));
        self.apply_seen(seen, &mut on_event);
        match result {
            Ok(()) | Err(StreamError::Closed) => self.end_stream(None, &mut on_event),
            Err(e) => self.end_stream(Some(TurnFailure::Stream(e)), &mut on_event),
        }
    }

    /// The connection failed (`error` says how) before the body ended.
    pub fn connection_failed(&mut self, error: &str, now_ms: u64, mut on_event: impl FnMut(TurnEvent<'_>)) {
        self.now_ms = now_ms;
        if self.phase == Phase::Ended {
            return;
        }
        if self.try_reconnect(StreamEnd::TransportError(error.to_owned())) {
            return;
        }
        self.fail(TurnFailure::Transport(error.to_owned()), &mut on_event);
    }

    /// When [`tick`](Self::tick) should be called next, in the host's
    /// milliseconds: the connection's idle and stall deadlines, the
    /// approval timeouts.
    pub fn deadline_ms(&self) -> Option<u64> {
        let stream = match (self.phase, self.external) {
            (Phase::Streaming, false) => self.reconnector.idle_deadline_ms(),
            _ => None,
        };
        let approvals = self.approvals.values().filter_map(|(_, d)| *d).min();
        stream.into_iter().chain(approvals).min()
    }

    /// The time passed: a connection idle or stalled past the policy's
    /// timeouts is closed ([`TurnAction::CloseConnection`]) and
    /// reconnected, or ends the turn ([`TurnFailure::IdleTimeout`]); an
    /// approval past its timeout is denied.
    pub fn tick(&mut self, now_ms: u64, mut on_event: impl FnMut(TurnEvent<'_>)) {
        self.now_ms = now_ms;
        let expired: Vec<String> = self
            .approvals
            .iter()
            .filter(|(_, (_, d))| d.is_some_and(|d| now_ms >= d))
            .map(|(a, _)| a.clone())
            .collect();
        for approval in expired {
            let text = format!("no approval within {} ms", self.approval_timeout_ms.unwrap_or(0));
            let _ = self.answer_approval(&approval, Some(&text), &mut on_event);
        }
        let stall = match (self.phase, self.external) {
            (Phase::Streaming, false) => self.reconnector.stall(now_ms),
            _ => None,
        };
        let Some(stall) = stall else { return };
        self.actions.push_back(TurnAction::CloseConnection);
        if !self.try_reconnect(StreamEnd::IdleTimeout) {
            let after_ms = self.reconnector.stall_timeout_ms(stall).unwrap_or(0);
            self.fail(TurnFailure::IdleTimeout { stall, after_ms }, &mut on_event);
        }
    }

    /// The host approves a call waiting for approval (its
    /// `tool_approval_requested`): the scheduling rules now apply to it.
    pub fn approve(&mut self, approval_id: &str, mut on_event: impl FnMut(TurnEvent<'_>)) -> Result<(), TurnError> {
        self.answer_approval(approval_id, None, &mut on_event)
    }

    /// The host denies a call waiting for approval: its error result is
    /// `Denied by the user` (`: REASON` when `reason` is not empty), and the
    /// model sees it.
    pub fn deny(
        &mut self,
        approval_id: &str,
        reason: &str,
        mut on_event: impl FnMut(TurnEvent<'_>),
    ) -> Result<(), TurnError> {
        let text =
            if reason.is_empty() { "Denied by the user".to_owned() } else { format!("Denied by the user: {reason}") };
        self.answer_approval(approval_id, Some(&text), &mut on_event)
    }

    /// Approves (`denial` `None`) or denies a waiting call.
    fn answer_approval(
        &mut self,
        approval_id: &str,
        denial: Option<&str>,
        on_event: &mut dyn FnMut(TurnEvent<'_>),
    ) -> Result<(), TurnError> {
        let Some((call_id, _)) = self.approvals.remove(approval_id) else {
            return Err(SchedulerError::NotAwaitingApproval(approval_id.to_owned()).into());
        };
        match denial {
            None => {
                self.scheduler.open_gate(&call_id, Gate::Approval)?;
            }
            Some(text) => {
                let output = if text.starts_with("Denied") { text.to_owned() } else { format!("Denied: {text}") };
                self.scheduler.settle_waiting(&call_id, &output, ToolResultKind::Denied)?;
                self.pending.remove(&call_id);
            }
        }
        self.start_what_can_start();
        self.drain_tool_events(on_event);
        Ok(())
    }

    /// The host cancels a running call (after a `tool_running_after_stop`,
    /// say): its result is `Cancelled by the host` now and its late result
    /// is dropped. A call that is not running is left as it is.
    pub fn cancel_tool(&mut self, call_id: &str, mut on_event: impl FnMut(TurnEvent<'_>)) -> Result<(), TurnError> {
        self.scheduler.cancel_running(call_id, "Cancelled by the host", ToolResultKind::Cancelled)?;
        self.start_what_can_start();
        self.drain_tool_events(&mut on_event);
        Ok(())
    }

    /// Progress text of a running call (a `tool_execution_update`).
    pub fn tool_update(
        &mut self,
        call_id: &str,
        text: &str,
        mut on_event: impl FnMut(TurnEvent<'_>),
    ) -> Result<(), TurnError> {
        self.scheduler.update(call_id, text)?;
        if let Some(ui) = self.ui.as_deref_mut() {
            ui.set_tool_progress(call_id, Value::from(text));
        }
        self.drain_tool_events(&mut on_event);
        Ok(())
    }

    /// The host's result of a call it was told to start. A call the turn
    /// already ended (cancelled, aborted, discarded) takes no result: the
    /// late one is dropped. A failed call of a tool registered with
    /// `abort_siblings_on_error` cancels its running siblings
    /// ([`TurnAction::CancelTool`]).
    pub fn tool_result(
        &mut self,
        call_id: &str,
        output: &str,
        is_error: bool,
        mut on_event: impl FnMut(TurnEvent<'_>),
    ) -> Result<(), TurnError> {
        let finished = self.scheduler.finish(call_id, output, is_error)?;
        for id in finished.cancel {
            self.cancel(id);
        }
        self.start_what_can_start();
        self.drain_tool_events(&mut on_event);
        Ok(())
    }

    /// The user aborted: the stream ends (`turn_end` with stop reason
    /// `aborted`), running calls are cancelled, every call without a result
    /// gets `Aborted: REASON`. Does nothing once the turn is over.
    pub fn abort(&mut self, reason: &str, mut on_event: impl FnMut(TurnEvent<'_>)) {
        if self.aborted || (self.phase == Phase::Ended && self.scheduler.is_settled()) {
            return;
        }
        self.aborted = true;
        if self.external {
            // The host aborts its own stream: the calls it leaves open are
            // cut.
            self.close_open_calls();
            self.set_phase(Phase::Ended);
            self.stop_reason = Some("aborted".to_owned());
        } else if self.phase != Phase::Ended {
            // The open parts are closed silently (as `Stream::abort` does);
            // their calls still get a result.
            let mut seen = Seen::default();
            let mut shown = Seen::default();
            let (now, ui) = (self.now_ms, &mut self.ui);
            self.stream.abort_to(&mut |e: &StreamEvent<'_>| seen.note(e), &mut |e: &StreamEvent<'_>| {
                shown.note(e);
                if let Some(ui) = ui.as_deref_mut() {
                    ui.apply(e, now);
                }
                on_event(TurnEvent::Stream(e));
            });
            seen.items.append(&mut shown.items);
            self.apply_seen(seen, &mut on_event);
            self.reconnector.on_end(StreamEnd::Aborted);
            self.clock.attempt_ended(self.now_ms, &StreamEnd::Aborted);
            self.set_phase(Phase::Ended);
        }
        self.abort_calls(reason, &mut on_event);
    }

    /// For a host whose own [`Stream`] folds the body (one that reconnects
    /// by itself, say): each event that stream emits, in order, instead of
    /// [`feed`](Self::feed). `on_event` gets the `tool_execution_*` events
    /// it causes (not `event` itself: the host shows its own stream's
    /// events). The turn's stream then stays unused: end with
    /// [`end_of_events`](Self::end_of_events) and read
    /// [`outcome_with_message`](Self::outcome_with_message).
    pub fn apply_event(&mut self, event: &StreamEvent<'_>, on_event: impl FnMut(TurnEvent<'_>)) {
        self.apply_event_at(event, self.now_ms, on_event);
    }

    /// [`apply_event`](Self::apply_event) at `now_ms` (the host's clock:
    /// the timings count the contents of the host's stream).
    pub fn apply_event_at(&mut self, event: &StreamEvent<'_>, now_ms: u64, mut on_event: impl FnMut(TurnEvent<'_>)) {
        self.now_ms = self.now_ms.max(now_ms);
        if self.external_start {
            self.external_start = false;
            self.clock.attempt_started(self.now_ms);
        }
        self.external = true;
        if self.phase == Phase::Ended {
            return;
        }
        let mut seen = Seen { external: true, ..Seen::default() };
        seen.note(event);
        if let Some(ui) = self.ui.as_deref_mut() {
            ui.apply(event, self.now_ms);
        }
        self.apply_seen(seen, &mut on_event);
    }

    /// The host's own stream (see [`apply_event`](Self::apply_event)) is
    /// over: normally (`failure` `None`: its `turn_end` came, or its body
    /// ended), or with `failure`. Tool calls it left open (an abort closes
    /// them silently) get their `incomplete` result.
    pub fn end_of_events(&mut self, failure: Option<TurnFailure>, mut on_event: impl FnMut(TurnEvent<'_>)) {
        self.external = true;
        if self.phase == Phase::Ended {
            return;
        }
        self.close_open_calls();
        let end = match &failure {
            None => StreamEnd::Completed,
            Some(f) => StreamEnd::TransportError(f.message()),
        };
        self.clock.attempt_ended(self.now_ms, &end);
        self.set_phase(Phase::Ended);
        if let Some(failure) = failure {
            let reason = failure.message();
            self.failure = Some(failure);
            self.abort_calls(&reason, &mut on_event);
        } else {
            self.ended_normally();
            self.start_what_can_start();
            self.drain_tool_events(&mut on_event);
        }
    }

    /// The outcome for a host whose own stream folded the body (see
    /// [`apply_event`](Self::apply_event)): `provider` and `message` are
    /// that stream's.
    pub fn outcome_with_message(&self, provider: Provider, message: Value) -> TurnOutcome {
        let mut outcome = self.outcome_for(message);
        if provider != Provider::Auto {
            outcome.provider = provider;
        }
        outcome
    }

    /// The next thing for the host to do, in order.
    pub fn poll_action(&mut self) -> Option<TurnAction> {
        self.actions.pop_front()
    }

    /// Whether the turn is over: the stream ended (or failed, or was
    /// aborted) and every call has its result. [`outcome`](Self::outcome)
    /// is then final.
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Ended && self.scheduler.is_settled()
    }

    /// Whether the stream is over (the turn may still wait for tools).
    pub fn is_stream_ended(&self) -> bool {
        self.phase == Phase::Ended
    }

    /// Number of calls the host is running (told to start, no result yet).
    pub fn running(&self) -> usize {
        self.scheduler.running()
    }

    /// The results that can be handed back now, in call order, each once
    /// (a UI that shows results as they come; [`outcome`](Self::outcome)
    /// has them all).
    pub fn results(&mut self) -> Vec<ToolResult> {
        self.scheduler.results()
    }

    /// Why the turn ended with an error, if it did (so far).
    pub fn failure(&self) -> Option<&TurnFailure> {
        self.failure.as_ref()
    }

    /// The turn's result so far (final once [`is_finished`](Self::is_finished)).
    pub fn outcome(&self) -> TurnOutcome {
        self.outcome_for(self.stream.message())
    }

    /// The turn's result, the turn consumed: equal to
    /// [`outcome`](Self::outcome), its message built by moving the fold's
    /// members and texts ([`Stream::into_message`]) and its calls moved
    /// instead of copied (for the host done with the turn).
    pub fn into_outcome(mut self) -> TurnOutcome {
        let calls = std::mem::take(&mut self.calls);
        let mut outcome = self.outcome_for(Value::Null);
        outcome.calls = calls;
        outcome.message = self.stream.into_message();
        outcome
    }

    fn outcome_for(&self, message: Value) -> TurnOutcome {
        let results = self.scheduler.all_results().unwrap_or_default();
        TurnOutcome {
            provider: self.stream.provider(),
            message,
            stop_reason: self.stop_reason.clone(),
            aborted: self.aborted,
            failure: self.failure.clone(),
            calls: self.calls.clone(),
            results,
            gave_up: self.gave_up,
            output_started: self.reconnector.output_started(),
            timings: self.clock.timings(),
        }
    }

    // ------------------------------------------------------------ internals

    /// Runs `op` on the stream, each event it emits shown to the host (and
    /// the UI) and noted for the turn. The stream lends its events only
    /// while it emits: the turn's own state is updated from the notes
    /// afterwards ([`apply_seen`](Self::apply_seen)), in stream order.
    fn shown<R>(
        &mut self,
        on_event: &mut dyn FnMut(TurnEvent<'_>),
        op: impl FnOnce(&mut Stream, &mut Sink<'_>) -> R,
    ) -> (R, Seen) {
        let mut seen = Seen::default();
        let Self { stream, ui, now_ms, .. } = self;
        let now_ms = *now_ms;
        let mut show = |e: &StreamEvent<'_>| {
            seen.note(e);
            if let Some(ui) = ui.as_deref_mut() {
                ui.apply(e, now_ms);
            }
            on_event(TurnEvent::Stream(e));
        };
        let result = op(stream, &mut show);
        (result, seen)
    }

    /// Asks the policy whether this ending is reconnected; when it is, the
    /// reconnection is queued and the stream told that a new body follows.
    fn try_reconnect(&mut self, end: StreamEnd) -> bool {
        self.clock.attempt_ended(self.now_ms, &end);
        if !self.reconnects {
            return false;
        }
        match self.reconnector.on_end(end) {
            Decision::Reconnect { delay_ms, attempt, cursor, replay } => {
                if self.stream.reconnect().is_err() {
                    return false;
                }
                self.set_phase(Phase::Reconnecting);
                self.actions.push_back(TurnAction::Reconnect { delay_ms, attempt, cursor, replay });
                true
            }
            Decision::GiveUp { reason, .. } => {
                self.gave_up = Some(reason);
                false
            }
            _ => false,
        }
    }

    /// The stream is over: normally (`failure` `None`), or with a failure
    /// (the calls not started and the running ones get their aborted
    /// result).
    fn end_stream(&mut self, failure: Option<TurnFailure>, on_event: &mut dyn FnMut(TurnEvent<'_>)) {
        let end = match &failure {
            None => StreamEnd::Completed,
            Some(TurnFailure::Stream(StreamError::Provider(e))) => {
                StreamEnd::ProviderError { error_type: e.error_type.clone(), message: e.message.clone() }
            }
            Some(TurnFailure::Stream(StreamError::Incomplete { .. })) => StreamEnd::EndedEarly,
            Some(f) => StreamEnd::TransportError(f.message()),
        };
        self.clock.attempt_ended(self.now_ms, &end);
        self.reconnector.on_end(end);
        match failure {
            None => {
                self.set_phase(Phase::Ended);
                self.ended_normally();
                self.start_what_can_start();
                self.drain_tool_events(on_event);
            }
            Some(f) => self.fail(f, on_event),
        }
    }

    /// The stream ended normally: the calls waiting for the turn's end
    /// start if its stop reason allows tools ([`StopClass::allows_tools`];
    /// no stop reason counts as a normal end); otherwise no call that has
    /// not started starts (each gets its `skipped` result) and each running
    /// one is reported (`tool_running_after_stop`).
    fn ended_normally(&mut self) {
        let class = self.stop_reason.as_deref().map_or(StopClass::Normal, StopClass::of);
        if class.allows_tools() {
            self.scheduler.open_gate_all(Gate::TurnEnd);
            return;
        }
        let reason = self.stop_reason.clone().unwrap_or_default();
        let output = format!("Not run: the answer stopped with {reason} before the turn ended normally");
        for id in self.scheduler.queued() {
            let _ = self.scheduler.settle_waiting(&id, &output, ToolResultKind::Skipped);
            self.pending.remove(&id);
        }
        self.approvals.clear();
        for (call_id, name) in self.scheduler.running_calls() {
            self.scheduler.push_event(ToolExecutionEvent::RunningAfterStop {
                call_id,
                name,
                stop_reason: reason.clone(),
            });
        }
    }

    /// Ends the turn with `failure`: the stream is closed, and every call
    /// without a result gets `Aborted: MESSAGE`.
    fn fail(&mut self, failure: TurnFailure, on_event: &mut dyn FnMut(TurnEvent<'_>)) {
        if !self.stream.is_terminated() && !self.stream.is_aborted() {
            // Calls still open are committed (incomplete) so that they get
            // their result: shown when the stream was still open (the body
            // ended there), silently after an error closed it.
            let seen = if self.stream.is_closed() {
                let mut seen = Seen::default();
                self.stream.close_open_parts(&mut |e: &StreamEvent<'_>| seen.note(e));
                seen
            } else {
                self.shown(on_event, |stream, on| stream.finish_to(on)).1
            };
            self.apply_seen(seen, on_event);
        }
        self.set_phase(Phase::Ended);
        let reason = failure.message();
        self.failure = Some(failure);
        self.abort_calls(&reason, on_event);
    }

    fn abort_calls(&mut self, reason: &str, on_event: &mut dyn FnMut(TurnEvent<'_>)) {
        for id in self.scheduler.abort(reason) {
            self.cancel(id);
        }
        self.pending.clear();
        self.approvals.clear();
        self.drain_tool_events(on_event);
    }

    fn cancel(&mut self, call_id: String) {
        self.actions.push_back(TurnAction::CancelTool { call_id });
    }

    /// Applies what the stream emitted (in order) to the calls and the
    /// scheduler, then tells the host what to start.
    fn apply_seen(&mut self, seen: Seen, on_event: &mut dyn FnMut(TurnEvent<'_>)) {
        if seen.content {
            self.reconnector.on_content(self.now_ms);
            self.clock.content(self.now_ms);
        }
        if seen.items.is_empty() {
            // Nothing the turn acts on (most chunks: text and argument deltas).
            return;
        }
        for item in seen.items {
            match item {
                SeenItem::CallStart { part, open } => {
                    self.call_parts.insert(part, open);
                }
                SeenItem::CallMeta { part, key, value } => {
                    if let Some(open) = self.call_parts.get_mut(&part) {
                        match key {
                            MetaKey::Id => open.id = Some(value),
                            MetaKey::Name => open.name = value,
                        }
                    }
                }
                SeenItem::Call { part, outcome, call } => {
                    self.on_call(part, outcome, call);
                    // Started before the next item, as if each event came
                    // in a chunk of its own: the calls start, and their
                    // tool events come, in the same order however the
                    // body was cut (a later call's error result does not
                    // pass an earlier call's start).
                    self.start_what_can_start();
                }
                SeenItem::StopReason(reason) => self.stop_reason = Some(reason),
                SeenItem::Usage { input, output } => {
                    self.clock.input_tokens = input.or(self.clock.input_tokens);
                    self.clock.output_tokens = output.or(self.clock.output_tokens);
                }
                SeenItem::Reset => self.on_reset(),
            }
        }
        self.start_what_can_start();
        self.drain_tool_events(on_event);
    }

    /// A tool call's part ended: the decision table of the module docs.
    fn on_call(&mut self, part: u32, outcome: SeenOutcome, call: OwnedCall) {
        let OpenCall { choice, provider_type, .. } = self.call_parts.remove(&part).unwrap_or_default();
        if choice != 0 {
            return;
        }
        let view = ToolCall {
            id: &call.id,
            id_synthesized: call.id_synthesized,
            name: &call.name,
            arguments: &call.arguments,
            input_format: call.input_format,
            provider_executed: call.provider_executed,
        };
        let call_outcome = match &outcome {
            SeenOutcome::Complete => CallOutcome::Complete,
            SeenOutcome::Invalid(_) => CallOutcome::InvalidArguments,
            SeenOutcome::Incomplete => CallOutcome::Incomplete,
        };
        self.calls.push(TurnCall {
            part,
            id: call.id.clone(),
            id_synthesized: call.id_synthesized,
            name: call.name.clone(),
            provider_type,
            input_format: call.input_format,
            provider_executed: call.provider_executed,
            outcome: call_outcome,
            arguments: call.arguments.clone(),
        });
        if call.provider_executed {
            return;
        }
        let name = if call.name.is_empty() { "the tool" } else { call.name.as_str() };
        let added = match (&outcome, self.tools.get(&call.name)) {
            (SeenOutcome::Incomplete, _) => self.scheduler.reject(
                &view,
                &format!("Not run: the arguments of {name} were cut off before they were complete"),
                ToolResultKind::Incomplete,
            ),
            (SeenOutcome::Invalid(why), _) => self.scheduler.reject(
                &view,
                &format!("Not run: invalid arguments for {name}: {why}"),
                ToolResultKind::InvalidInput,
            ),
            (SeenOutcome::Complete, _) if call.name.is_empty() => {
                self.scheduler.reject(&view, "Not run: the call has no tool name", ToolResultKind::Unnamed)
            }
            (SeenOutcome::Complete, None) => self.scheduler.reject(
                &view,
                &crate::tools::unknown_tool_output(&call.name),
                ToolResultKind::UnknownTool,
            ),
            (SeenOutcome::Complete, Some(options)) => {
                let gates: &[Gate] = match (options.needs_approval, options.waits_for_turn_end()) {
                    (true, true) => &[Gate::Approval, Gate::TurnEnd],
                    (true, false) => &[Gate::Approval],
                    (false, true) => &[Gate::TurnEnd],
                    (false, false) => &[],
                };
                let added = self.scheduler.add_gated(&view, *options, gates);
                if let Ok(queued) = added {
                    if queued && options.needs_approval {
                        let approval_id = format!("approval_{}", call.id);
                        let deadline = self.approval_timeout_ms.map(|t| self.now_ms.saturating_add(t));
                        self.approvals.insert(approval_id.clone(), (call.id.clone(), deadline));
                        self.scheduler.push_event(ToolExecutionEvent::ApprovalRequested {
                            call_id: call.id.clone(),
                            approval_id,
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                        });
                    }
                    self.pending.insert(
                        call.id.clone(),
                        Pending {
                            id_synthesized: call.id_synthesized,
                            name: call.name,
                            arguments: call.arguments,
                            input_format: call.input_format,
                        },
                    );
                }
                added.map(|_| ())
            }
        };
        if added.is_err() && self.failure.is_none() {
            // Only `max_calls` refuses a call here (ids are unique in a
            // turn): the calls past it cannot get their result.
            self.failure = Some(TurnFailure::TooManyCalls { limit: self.scheduler_config.max_calls });
        }
    }

    /// Tool call parts that never ended (the stream was cut where the turn
    /// could not see their commit): each gets its `incomplete` result, with
    /// the id the stream would have given it (the provider's unless absent
    /// or already used, else `ssefold_call_<part>`).
    fn close_open_calls(&mut self) {
        let open = std::mem::take(&mut self.call_parts);
        for (part, call) in open {
            let used = |id: &str| self.calls.iter().any(|c| c.id == id);
            let (id, id_synthesized) = match call.id {
                Some(id) if !used(&id) => (id, false),
                _ => {
                    let base = format!("ssefold_call_{part}");
                    let id = std::iter::once(base.clone())
                        .chain((2u64..).map(|n| format!("{base}_{n}")))
                        .find(|id| !used(id))
                        .unwrap_or(base);
                    (id, true)
                }
            };
            let owned = OwnedCall {
                id,
                id_synthesized,
                name: call.name,
                arguments: String::new(),
                input_format: call.input_format,
                provider_executed: call.provider_executed,
            };
            self.call_parts.insert(
                part,
                OpenCall { choice: call.choice, provider_type: call.provider_type, ..OpenCall::default() },
            );
            self.on_call(part, SeenOutcome::Incomplete, owned);
        }
    }

    /// `turn_reset`: the server restarted the answer; its tool work is
    /// thrown away with it.
    fn on_reset(&mut self) {
        for id in self.scheduler.discard() {
            self.cancel(id);
        }
        // The discarded calls' `finished` events are not shown: the UI drops
        // the partial turn they belonged to.
        while self.scheduler.next_event().is_some() {}
        self.scheduler = ToolScheduler::with_config(self.scheduler_config);
        self.calls.clear();
        self.pending.clear();
        self.approvals.clear();
        self.call_parts.clear();
        self.stop_reason = None;
    }

    fn start_what_can_start(&mut self) {
        for id in self.scheduler.startable() {
            if let Some(p) = self.pending.remove(&id) {
                self.actions.push_back(TurnAction::StartTool(StartTool {
                    call_id: id,
                    id_synthesized: p.id_synthesized,
                    name: p.name,
                    arguments: p.arguments,
                    input_format: p.input_format,
                }));
            }
        }
    }

    fn drain_tool_events(&mut self, on_event: &mut dyn FnMut(TurnEvent<'_>)) {
        while let Some(event) = self.scheduler.next_event() {
            on_event(TurnEvent::Tool(&event));
        }
    }
}

/// What the turn needs of the events a stream emitted, copied while they
/// are emitted (the stream lends them only then).
#[derive(Default)]
struct Seen {
    items: Vec<SeenItem>,
    /// Some event was content ([`StreamEvent::is_content`]).
    content: bool,
    /// The events are the host's own stream's (see
    /// [`AgentTurn::apply_event`]): the id and name of every open call are
    /// kept, to give the calls its abort leaves open their result. The
    /// turn's own stream reports those calls itself.
    external: bool,
}

/// A tool call part started and not ended yet: what is known of it.
#[derive(Debug, Default)]
struct OpenCall {
    choice: u32,
    provider_type: String,
    id: Option<String>,
    name: String,
    input_format: ToolInputFormat,
    provider_executed: bool,
}

enum MetaKey {
    Id,
    Name,
}

enum SeenItem {
    CallStart { part: u32, open: OpenCall },
    CallMeta { part: u32, key: MetaKey, value: String },
    Call { part: u32, outcome: SeenOutcome, call: OwnedCall },
    StopReason(String),
    Usage { input: Option<u64>, output: Option<u64> },
    Reset,
}

enum SeenOutcome {
    Complete,
    Invalid(String),
    Incomplete,
}

struct OwnedCall {
    id: String,
    id_synthesized: bool,
    name: String,
    arguments: String,
    input_format: ToolInputFormat,
    provider_executed: bool,
}

impl Seen {
    /// Notes `event` if the turn acts on it: a cheap test first, inlined
    /// into the stream's event loop (most events are deltas).
    #[inline(always)]
    fn note(&mut self, event: &StreamEvent<'_>) {
        self.content |= event.is_content();
        if matches!(
            event,
            StreamEvent::PartStart { kind: PartKind::ToolCall, .. }
                | StreamEvent::PartEnd { tool_call: Some(_), .. }
                | StreamEvent::PartMetadata { key: "id" | "name", .. }
                | StreamEvent::StopReason { choice: 0, .. }
                | StreamEvent::TurnEnd { stop_reason: Some(_) }
                | StreamEvent::TurnReset
                | StreamEvent::Usage { .. }
        ) {
            self.note_slow(event);
        }
    }

    #[inline(never)]
    fn note_slow(&mut self, event: &StreamEvent<'_>) {
        match *event {
            StreamEvent::PartStart { part, kind: PartKind::ToolCall, choice, provider_type, tool_call, .. } => {
                let head = tool_call.unwrap_or(crate::providers::ToolCallStart {
                    id: None,
                    name: None,
                    input_format: ToolInputFormat::Json,
                    provider_executed: false,
                });
                let open = if self.external {
                    OpenCall {
                        choice,
                        provider_type: provider_type.to_owned(),
                        id: head.id.map(str::to_owned),
                        name: head.name.unwrap_or("").to_owned(),
                        input_format: head.input_format,
                        provider_executed: head.provider_executed,
                    }
                } else {
                    OpenCall { choice, provider_type: provider_type.to_owned(), ..OpenCall::default() }
                };
                self.items.push(SeenItem::CallStart { part, open });
            }
            StreamEvent::PartMetadata { part, key, value } if self.external => {
                let key = match key {
                    "id" => MetaKey::Id,
                    "name" => MetaKey::Name,
                    _ => return,
                };
                if let Some(value) = value.as_str() {
                    self.items.push(SeenItem::CallMeta { part, key, value: value.to_owned() });
                }
            }
            StreamEvent::PartEnd { part, outcome, tool_call: Some(call), .. } => {
                let outcome = match outcome {
                    PartOutcome::Complete => SeenOutcome::Complete,
                    PartOutcome::InvalidArguments { error, .. } => SeenOutcome::Invalid(error.to_owned()),
                    PartOutcome::Incomplete => SeenOutcome::Incomplete,
                };
                self.items.push(SeenItem::Call {
                    part,
                    outcome,
                    call: OwnedCall {
                        id: call.id.to_owned(),
                        id_synthesized: call.id_synthesized,
                        name: call.name.to_owned(),
                        arguments: call.arguments.to_owned(),
                        input_format: call.input_format,
                        provider_executed: call.provider_executed,
                    },
                });
            }
            StreamEvent::StopReason { choice: 0, reason } => self.items.push(SeenItem::StopReason(reason.to_owned())),
            StreamEvent::TurnEnd { stop_reason: Some(reason) } => {
                self.items.push(SeenItem::StopReason(reason.to_owned()))
            }
            StreamEvent::TurnReset => self.items.push(SeenItem::Reset),
            StreamEvent::Usage { usage } => {
                let (input, output) = timings::usage_tokens(usage);
                if input.is_some() || output.is_some() {
                    self.items.push(SeenItem::Usage { input, output });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
