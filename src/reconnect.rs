//! Reconnection policy: when to reconnect, after how long, with which
//! resume cursor — a pure state machine (sans-IO).
//!
//! The host owns the socket and the clock. It tells the [`Reconnector`] what
//! happened ([`Reconnector::on_connected`], [`Reconnector::on_activity`],
//! [`Reconnector::on_end`]) with the current time in milliseconds, and the
//! reconnector answers with a [`Decision`]. Nothing here sleeps or reads a
//! clock.
//!
//! # How the stream ended decides
//!
//! | [`StreamEnd`] | [`Decision`] |
//! | --- | --- |
//! | `Completed` (terminal event seen: `message_stop`, `[DONE]`, `response.completed`) | `Done` |
//! | `EndedEarly` (end of body without the terminal event) | `Reconnect` after the delay, or `GiveUp` when retries are exhausted |
//! | `TransportError` (connection reset, TLS error, …) | `Reconnect` / `GiveUp`, as above |
//! | `IdleTimeout` (no bytes for `idle_timeout_ms`, comments and pings counted; or a stall: no *content* for `first_content_timeout_ms` / `content_timeout_ms`, see [`StallKind`]) | `Reconnect` / `GiveUp`, as above |
//! | `HttpStatus` (the response was refused before its body: a status other than 2xx) | 408, 409, 429, 500, 502, 503, 504, 529: `Reconnect` after `Retry-After` / `retry-after-ms` (capped at `max_retry_after_ms`) or the backoff, or `GiveUp`; any other status, or `x-should-retry: false`: `GiveUp` ([`GiveUpReason::NotRetryable`]); `x-should-retry: true` retries any status |
//! | `ProviderError` (an error event inside the stream) | `Fail`: never reconnect; the error says whether its type is retryable so the host may choose to send the request again |
//! | `Aborted` (the user cancelled) | `Stop`: never reconnect |
//!
//! # Output already delivered: resume, never a silent re-POST
//!
//! Once content reached the host ([`Reconnector::on_content`]), sending the
//! request again would bill a second answer and show a different one. So a
//! connection that ends early after output is resumed where the provider
//! supports it (a `Last-Event-ID` or Responses `starting_after` cursor:
//! [`Replay::Resume`]); without a cursor the answer ends with
//! [`GiveUpReason::NotResumable`] (the host keeps what was folded) unless
//! the policy opts in with `restart_after_output` ([`Replay::Restart`]: the
//! stream then reports `turn_reset`). Before any output a retry is the same
//! request again ([`Replay::Retry`]). Every `Reconnect` says which.
//!
//! # Delays
//!
//! `initial_delay_ms × growth^attempt`, capped at `max_delay_ms`: with the
//! defaults 1000, 1500, 2250, 3375, … up to 30 000 ms, at most 2 retries. A
//! server `retry:` value takes precedence over the computed delay, capped at
//! `max_server_retry_ms` (10 minutes by default: a hostile or broken
//! `retry: 99999999999` must not park the host for years); an HTTP
//! `Retry-After` the same way, capped at `max_retry_after_ms` (60 s). Jitter
//! spreads a computed delay by ±`jitter` (a fraction; 0.2 by default); the
//! randomness comes from a seed the host gives
//! ([`Reconnector::seed_jitter`]), so the policy stays deterministic.
//!
//! # Resume cursors
//!
//! Where the server sends SSE ids, the cursor is `Last-Event-ID`; for the
//! OpenAI Responses API it is the last `sequence_number` (sent as
//! `starting_after`). `max_retries` bounds the reconnections of the whole
//! answer, not per outage: a server that drops every connection after a few
//! events (or restarts the answer each time) cannot keep a host busy forever.

/// The knobs of the reconnection policy. See the module docs for the rules.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconnectPolicy {
    /// Delay before the first retry, in milliseconds (default 1000).
    pub initial_delay_ms: u64,
    /// Factor applied to the delay for each further retry (default 1.5).
    pub growth: f64,
    /// Upper bound of the computed delay, in milliseconds (default 30 000).
    pub max_delay_ms: u64,
    /// How many reconnections in a row before giving up (default 2).
    pub max_retries: u32,
    /// Jitter as a fraction of a computed delay: 0.2 (the default) spreads
    /// it over ±20 %; 0: none. A server's `retry:` or `Retry-After` is not
    /// jittered.
    pub jitter: f64,
    /// A connection that delivers no bytes for this long is treated as
    /// dropped (default: none).
    pub idle_timeout_ms: Option<u64>,
    /// Upper bound of a server's `retry:` value, in milliseconds (default
    /// 600 000, 10 minutes). The server's value still takes precedence over
    /// the backoff, up to this cap.
    pub max_server_retry_ms: u64,
    /// Upper bound of an HTTP `Retry-After` / `retry-after-ms` wait, in
    /// milliseconds (default 60 000).
    pub max_retry_after_ms: u64,
    /// Send the request again after output was delivered when the answer
    /// cannot be resumed (default false: the answer ends incomplete, see
    /// the module docs).
    pub restart_after_output: bool,
    /// A stall: a connection that delivers no content (text, arguments,
    /// media, a part starting or ending, usage, the stop reason; not pings,
    /// comments or keep-alive events) for this long after it opened, before
    /// the answer's first content (default 300 000 ms; `None`: no limit).
    pub first_content_timeout_ms: Option<u64>,
    /// A stall between contents: no content for this long once the answer
    /// has started (default 120 000 ms; `None`: no limit).
    pub content_timeout_ms: Option<u64>,
}

/// Default of [`ReconnectPolicy::max_retry_after_ms`]: 60 s.
pub const DEFAULT_MAX_RETRY_AFTER_MS: u64 = 60_000;
/// Default of [`ReconnectPolicy::first_content_timeout_ms`]: 5 minutes (a
/// reasoning model may think that long before its first output).
pub const DEFAULT_FIRST_CONTENT_TIMEOUT_MS: u64 = 300_000;
/// Default of [`ReconnectPolicy::content_timeout_ms`]: 2 minutes.
pub const DEFAULT_CONTENT_TIMEOUT_MS: u64 = 120_000;
/// Default of [`ReconnectPolicy::jitter`]: ±20 %.
pub const DEFAULT_JITTER: f64 = 0.2;

/// The HTTP statuses retried before any output: 408 (request timeout), 409
/// (conflict: a lock), 429 (rate limited), 500, 502, 503, 504 and 529
/// (Anthropic's overloaded).
pub const RETRYABLE_STATUSES: [u16; 8] = [408, 409, 429, 500, 502, 503, 504, 529];

/// Default of [`ReconnectPolicy::max_server_retry_ms`]: 10 minutes.
pub const DEFAULT_MAX_SERVER_RETRY_MS: u64 = 600_000;

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            initial_delay_ms: 1000,
            growth: 1.5,
            max_delay_ms: 30_000,
            max_retries: 2,
            jitter: DEFAULT_JITTER,
            idle_timeout_ms: None,
            max_server_retry_ms: DEFAULT_MAX_SERVER_RETRY_MS,
            max_retry_after_ms: DEFAULT_MAX_RETRY_AFTER_MS,
            restart_after_output: false,
            first_content_timeout_ms: Some(DEFAULT_FIRST_CONTENT_TIMEOUT_MS),
            content_timeout_ms: Some(DEFAULT_CONTENT_TIMEOUT_MS),
        }
    }
}

impl ReconnectPolicy {
    /// The delay before retry number `attempt` (0 for the first retry):
    /// `server_retry_ms` (capped at `max_server_retry_ms`) when the server
    /// sent one, else the capped exponential backoff. No jitter.
    ///
    /// ```
    /// let p = ssefold::reconnect::ReconnectPolicy::default();
    /// assert_eq!([0, 1, 2, 3].map(|a| p.next_delay_ms(a, None)), [1000, 1500, 2250, 3375]);
    /// assert_eq!(p.next_delay_ms(40, None), 30_000);
    /// assert_eq!(p.next_delay_ms(0, Some(250)), 250);
    /// assert_eq!(p.next_delay_ms(0, Some(u64::MAX)), 600_000); // max_server_retry_ms
    /// ```
    pub fn next_delay_ms(&self, attempt: u32, server_retry_ms: Option<u64>) -> u64 {
        if let Some(ms) = server_retry_ms {
            return ms.min(self.max_server_retry_ms);
        }
        let growth = if self.growth.is_finite() && self.growth >= 1.0 { self.growth } else { 1.0 };
        let delay = self.initial_delay_ms as f64 * growth.powi(attempt.min(i32::MAX as u32) as i32);
        if delay.is_finite() && delay < self.max_delay_ms as f64 {
            delay.round() as u64
        } else {
            self.max_delay_ms
        }
    }

    /// [`next_delay_ms`](Self::next_delay_ms) spread by the jitter:
    /// `random_unit` in `[0, 1)` from the host maps to `[-jitter, +jitter]`.
    /// A server `retry:` value is not jittered.
    pub fn jittered_delay_ms(&self, attempt: u32, server_retry_ms: Option<u64>, random_unit: f64) -> u64 {
        let base = self.next_delay_ms(attempt, server_retry_ms);
        let jitter = if self.jitter.is_finite() { self.jitter.clamp(0.0, 1.0) } else { 0.0 };
        if server_retry_ms.is_some() || jitter == 0.0 || !random_unit.is_finite() {
            return base;
        }
        let spread = jitter * (2.0 * random_unit.clamp(0.0, 1.0) - 1.0);
        (base as f64 * (1.0 + spread)).round().max(0.0) as u64
    }
}

/// How a connection ended, as the host saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// The dialect's terminal event arrived.
    Completed,
    /// The body ended without the terminal event.
    EndedEarly,
    /// The transport failed; the text says how.
    TransportError(String),
    /// No bytes for the idle timeout.
    IdleTimeout,
    /// The provider sent an error event inside the stream.
    ProviderError {
        /// The provider's error type (`overloaded_error`, `server_error`, …).
        error_type: String,
        /// The provider's message.
        message: String,
    },
    /// The user aborted.
    Aborted,
    /// The response was refused before its body: a status other than 2xx,
    /// with the hints of its headers ([`RetryHints::from_headers`]).
    HttpStatus {
        /// The HTTP status.
        status: u16,
        /// `retry-after-ms` or `Retry-After`, in milliseconds.
        retry_after_ms: Option<u64>,
        /// `x-should-retry`: the provider's own verdict, when it sent one.
        should_retry: Option<bool>,
    },
}

impl StreamEnd {
    /// The wire name: `completed`, `ended_early`, `transport_error`,
    /// `idle_timeout`, `provider_error`, `aborted`, `http_status`.
    pub fn name(&self) -> &'static str {
        match self {
            StreamEnd::Completed => "completed",
            StreamEnd::EndedEarly => "ended_early",
            StreamEnd::TransportError(_) => "transport_error",
            StreamEnd::IdleTimeout => "idle_timeout",
            StreamEnd::ProviderError { .. } => "provider_error",
            StreamEnd::Aborted => "aborted",
            StreamEnd::HttpStatus { .. } => "http_status",
        }
    }
}

/// What a refused response's headers say about retrying it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryHints {
    /// `retry-after-ms` (OpenAI) or `Retry-After` (seconds, or an HTTP date
    /// counted from `now_unix_ms`), in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// `x-should-retry: true` / `false` (Anthropic, OpenAI).
    pub should_retry: Option<bool>,
}

impl RetryHints {
    /// The hints of `headers` (names matched without regard to case; a
    /// value not understood is ignored). `now_unix_ms` is the host's wall
    /// clock, for a `Retry-After` written as an HTTP date (a date in the
    /// past is 0).
    ///
    /// ```
    /// use ssefold::reconnect::RetryHints;
    /// let h = RetryHints::from_headers([("Retry-After", "7"), ("x-should-retry", "true")], 0);
    /// assert_eq!((h.retry_after_ms, h.should_retry), (Some(7000), Some(true)));
    /// let h = RetryHints::from_headers([("retry-after", "Wed, 21 Oct 2015 07:28:05 GMT")], 1_445_412_480_000);
    /// assert_eq!(h.retry_after_ms, Some(5000));
    /// ```
    pub fn from_headers<'h>(headers: impl IntoIterator<Item = (&'h str, &'h str)>, now_unix_ms: u64) -> RetryHints {
        let mut ms = None;
        let mut after = None;
        let mut should_retry = None;
        for (name, value) in headers {
            let value = value.trim();
            if name.eq_ignore_ascii_case("retry-after-ms") {
                ms = ms.or_else(|| parse_millis(value));
            } else if name.eq_ignore_ascii_case("retry-after") {
                after = after.or_else(|| parse_retry_after(value, now_unix_ms));
            } else if name.eq_ignore_ascii_case("x-should-retry") {
                should_retry = match value {
                    v if v.eq_ignore_ascii_case("true") => Some(true),
                    v if v.eq_ignore_ascii_case("false") => Some(false),
                    _ => should_retry,
                };
            }
        }
        RetryHints { retry_after_ms: ms.or(after), should_retry }
    }
}

/// A non-negative number of milliseconds (fractions allowed, as OpenAI
/// sends them), saturating.
fn parse_millis(value: &str) -> Option<u64> {
    let ms: f64 = value.parse().ok()?;
    // `as` saturates at u64::MAX.
    (ms.is_finite() && ms >= 0.0).then_some(ms as u64)
}

/// `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
fn parse_retry_after(value: &str, now_unix_ms: u64) -> Option<u64> {
    if let Ok(secs) = value.parse::<f64>() {
        // `as` saturates at u64::MAX.
        return (secs.is_finite() && secs >= 0.0).then_some((secs * 1000.0) as u64);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    let when_ms = when.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    Some(u64::try_from(when_ms.saturating_sub(u128::from(now_unix_ms))).unwrap_or(u64::MAX))
}

/// Which timeout found a connection idle. Wire names `idle`,
/// `first_content`, `content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StallKind {
    /// No bytes at all for `idle_timeout_ms`.
    Idle,
    /// No content for `first_content_timeout_ms` before the answer's first.
    FirstContent,
    /// No content for `content_timeout_ms` between contents.
    Content,
}

impl StallKind {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            StallKind::Idle => "idle",
            StallKind::FirstContent => "first_content",
            StallKind::Content => "content",
        }
    }

    /// The wire name: the old name of [`name`](Self::name).
    #[deprecated(note = "use `name()`: every enum's wire name is `name()`")]
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// What a reconnection sends. Wire names `retry`, `resume`, `restart`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Replay {
    /// No output was delivered: the same request again (a cursor, if any,
    /// is sent too).
    Retry,
    /// Output was delivered: the request with the resume cursor, for the
    /// server to go on from it.
    Resume,
    /// Output was delivered and cannot be resumed; the policy opted in to
    /// sending the request again (`restart_after_output`): a second answer,
    /// billed again, reported as `turn_reset`.
    Restart,
}

impl Replay {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Replay::Retry => "retry",
            Replay::Resume => "resume",
            Replay::Restart => "restart",
        }
    }

    /// The wire name: the old name of [`name`](Self::name).
    #[deprecated(note = "use `name()`: every enum's wire name is `name()`")]
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// Why a reconnector gave up. Wire names `retries_exhausted`,
/// `not_resumable`, `not_retryable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GiveUpReason {
    /// `max_retries` reconnections were used.
    RetriesExhausted,
    /// Output was delivered, the provider gave no resume cursor and the
    /// policy does not restart after output: the answer is incomplete.
    NotResumable,
    /// The HTTP status is not one to retry (or `x-should-retry: false`).
    NotRetryable,
}

impl GiveUpReason {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            GiveUpReason::RetriesExhausted => "retries_exhausted",
            GiveUpReason::NotResumable => "not_resumable",
            GiveUpReason::NotRetryable => "not_retryable",
        }
    }

    /// The wire name: the old name of [`name`](Self::name).
    #[deprecated(note = "use `name()`: every enum's wire name is `name()`")]
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// Which cursor to send when reconnecting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeCursor {
    /// Nothing to resume from: the request starts over.
    None,
    /// Send the `Last-Event-ID` header with this value.
    LastEventId(String),
    /// OpenAI Responses: resume with `starting_after` = this sequence number.
    StartingAfter(u64),
}

/// What the host should do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The answer is complete: nothing more to do.
    Done,
    /// Reconnect after `delay_ms`, sending `cursor`. `attempt` counts from 1.
    Reconnect {
        /// How long to wait first, in milliseconds.
        delay_ms: u64,
        /// Which reconnection this is (1 for the first).
        attempt: u32,
        /// What to send so the server can resume.
        cursor: ResumeCursor,
        /// Whether output was delivered, and so what the request is (see
        /// the module docs).
        replay: Replay,
    },
    /// Stop and report `last` (how the last connection ended): `reason`
    /// says why no reconnection follows.
    GiveUp {
        /// How the last connection ended.
        last: StreamEnd,
        /// Why.
        reason: GiveUpReason,
    },
    /// The provider reported an error: do not reconnect. `retryable` says
    /// whether its type is one a host may retry the whole request for.
    Fail {
        /// The provider's error type.
        error_type: String,
        /// The provider's message.
        message: String,
        /// Whether the error type is transient (see [`is_retryable_error_type`]).
        retryable: bool,
    },
    /// The user aborted: never reconnect.
    Stop,
}

/// Connection state for the UI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionState {
    /// Not connected and not about to be.
    Disconnected,
    /// The first request is on its way.
    Connecting,
    /// Bytes are flowing.
    Connected,
    /// Waiting to reconnect, or reconnecting.
    Reconnecting,
}

impl ConnectionState {
    /// The name used in every binding: `disconnected`, `connecting`,
    /// `connected`, `reconnecting`.
    pub fn name(self) -> &'static str {
        match self {
            ConnectionState::Disconnected => "disconnected",
            ConnectionState::Connecting => "connecting",
            ConnectionState::Connected => "connected",
            ConnectionState::Reconnecting => "reconnecting",
        }
    }
}

/// Whether a provider error type is transient, so that sending the same
/// request again may succeed: Anthropic `overloaded_error`, `api_error`,
/// `rate_limit_error`, `timeout_error`; OpenAI `server_error`,
/// `rate_limit_exceeded`, `rate_limit_error`, `internal_error`; Amazon
/// Bedrock `throttlingException`, `serviceUnavailableException`,
/// `internalServerException`, `modelStreamErrorException`,
/// `modelTimeoutException`.
pub fn is_retryable_error_type(error_type: &str) -> bool {
    matches!(
        error_type,
        "overloaded_error"
            | "api_error"
            | "rate_limit_error"
            | "timeout_error"
            | "server_error"
            | "rate_limit_exceeded"
            | "internal_error"
            // Amazon Bedrock's exception types (event-stream exception messages).
            | "throttlingException"
            | "serviceUnavailableException"
            | "internalServerException"
            | "modelStreamErrorException"
            | "modelTimeoutException"
    )
}

/// The reconnection state machine of one logical stream (one answer, across
/// however many connections it takes).
#[derive(Debug, Clone)]
pub struct Reconnector {
    policy: ReconnectPolicy,
    state: ConnectionState,
    /// Reconnections decided so far for this answer.
    attempts: u32,
    last_event_id: Option<String>,
    last_sequence_number: Option<u64>,
    server_retry_ms: Option<u64>,
    last_activity_ms: Option<u64>,
    /// Content reached the host (on any connection of the answer).
    output_started: bool,
    /// When the content clock of the current connection started: its
    /// opening, or its last content.
    content_ref_ms: Option<u64>,
    /// The jitter generator's state (xorshift64*).
    random: u64,
    finished: bool,
}

impl Reconnector {
    /// A reconnector in state `Connecting` (the host is sending the first
    /// request).
    pub fn new(policy: ReconnectPolicy) -> Self {
        Reconnector {
            policy,
            state: ConnectionState::Connecting,
            attempts: 0,
            last_event_id: None,
            last_sequence_number: None,
            server_retry_ms: None,
            last_activity_ms: None,
            output_started: false,
            content_ref_ms: None,
            random: 0x9e37_79b9_7f4a_7c15,
            finished: false,
        }
    }

    /// Seeds the jitter (a random number from the host: two hosts that
    /// retry after the same outage then wait different times). Without it
    /// the jitter is the same sequence in every process.
    pub fn seed_jitter(&mut self, seed: u64) {
        // xorshift's state must not be zero.
        self.random = seed | 1;
    }

    /// A number in `[0, 1)` from the jitter generator.
    fn next_unit(&mut self) -> f64 {
        let mut x = self.random;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.random = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Content reached the host at `now_ms`: text, arguments, media, a part
    /// starting or ending, usage, the stop reason
    /// ([`crate::providers::StreamEvent::is_content`]). Pings, comments and
    /// keep-alive events are not content. From now on the answer has
    /// output: it is resumed, not sent again (module docs).
    pub fn on_content(&mut self, now_ms: u64) {
        self.output_started = true;
        self.content_ref_ms = Some(now_ms);
    }

    /// Whether content reached the host on some connection of this answer.
    pub fn output_started(&self) -> bool {
        self.output_started
    }

    /// Whether sending the request again now would neither bill nor show a
    /// second answer: no output yet, or a resume cursor to send.
    pub fn replay_safe(&self) -> bool {
        !self.output_started || self.cursor() != ResumeCursor::None
    }

    /// The policy in force.
    pub fn policy(&self) -> &ReconnectPolicy {
        &self.policy
    }

    /// The connection state, for the UI.
    pub fn state(&self) -> ConnectionState {
        self.state
    }

    /// How many reconnections have been decided so far for this answer.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The response headers arrived: bytes may flow.
    pub fn on_connected(&mut self, now_ms: u64) {
        if !self.finished {
            self.state = ConnectionState::Connected;
            self.last_activity_ms = Some(now_ms);
            self.content_ref_ms = Some(now_ms);
        }
    }

    /// Bytes arrived (comments and pings included): the connection is live.
    pub fn on_activity(&mut self, now_ms: u64) {
        self.last_activity_ms = Some(now_ms);
    }

    /// An event was dispatched. `id` is the SSE last event ID in force,
    /// `sequence_number` the Responses API's, `retry_ms` the stream's
    /// reconnection time (a server `retry:`), each when known.
    pub fn on_event(&mut self, id: Option<&str>, sequence_number: Option<u64>, retry_ms: Option<u64>) {
        if let Some(id) = id {
            match &mut self.last_event_id {
                Some(s) => {
                    s.clear();
                    s.push_str(id);
                }
                None => self.last_event_id = Some(id.to_owned()),
            }
        }
        if sequence_number.is_some() {
            self.last_sequence_number = sequence_number;
        }
        if retry_ms.is_some() {
            self.server_retry_ms = retry_ms;
        }
    }

    /// When the current connection counts as idle or stalled, in the
    /// host's milliseconds: the earliest of the byte idle timeout (from the
    /// last bytes) and the content timeout in force (from the connection's
    /// opening or its last content), if any is configured and a connection
    /// is open.
    pub fn idle_deadline_ms(&self) -> Option<u64> {
        self.deadlines().map(|(d, _)| d).min()
    }

    /// The deadlines in force, each with the timeout it belongs to.
    fn deadlines(&self) -> impl Iterator<Item = (u64, StallKind)> {
        let connected = self.state == ConnectionState::Connected;
        let idle = match (self.policy.idle_timeout_ms, self.last_activity_ms) {
            (Some(t), Some(last)) if connected => Some((last.saturating_add(t), StallKind::Idle)),
            _ => None,
        };
        let (timeout, kind) = if self.output_started {
            (self.policy.content_timeout_ms, StallKind::Content)
        } else {
            (self.policy.first_content_timeout_ms, StallKind::FirstContent)
        };
        let content = match (timeout, self.content_ref_ms) {
            (Some(t), Some(since)) if connected => Some((since.saturating_add(t), kind)),
            _ => None,
        };
        // Content first: when both pass at once, the stall is the content
        // one (it says more: keep-alives came, the answer did not).
        content.into_iter().chain(idle)
    }

    /// Whether a deadline has passed at `now_ms`. When one has, the host
    /// closes the connection and calls [`on_end`](Self::on_end) with
    /// [`StreamEnd::IdleTimeout`].
    pub fn is_idle(&self, now_ms: u64) -> bool {
        self.stall(now_ms).is_some()
    }

    /// Which timeout has passed at `now_ms` (the one that passed first; of
    /// two that pass at the same time, the content one), if any.
    pub fn stall(&self, now_ms: u64) -> Option<StallKind> {
        self.deadlines().filter(|(d, _)| now_ms >= *d).min_by_key(|(d, _)| *d).map(|(_, k)| k)
    }

    /// How long the timeout of `kind` is (`None`: not configured).
    pub fn stall_timeout_ms(&self, kind: StallKind) -> Option<u64> {
        match kind {
            StallKind::Idle => self.policy.idle_timeout_ms,
            StallKind::FirstContent => self.policy.first_content_timeout_ms,
            StallKind::Content => self.policy.content_timeout_ms,
        }
    }

    /// The cursor to send on the next connection.
    pub fn cursor(&self) -> ResumeCursor {
        if let Some(n) = self.last_sequence_number {
            ResumeCursor::StartingAfter(n)
        } else if let Some(id) = &self.last_event_id {
            ResumeCursor::LastEventId(id.clone())
        } else {
            ResumeCursor::None
        }
    }

    /// A connection ended: decide what comes next. After `Done`, `Fail`,
    /// `GiveUp` or `Stop` the reconnector is finished and keeps answering
    /// the same way.
    pub fn on_end(&mut self, end: StreamEnd) -> Decision {
        if self.finished {
            return match end {
                StreamEnd::Aborted => Decision::Stop,
                last => Decision::GiveUp { last, reason: GiveUpReason::RetriesExhausted },
            };
        }
        let decision = match end {
            StreamEnd::Completed => Decision::Done,
            StreamEnd::Aborted => Decision::Stop,
            StreamEnd::ProviderError { error_type, message } => {
                let retryable = is_retryable_error_type(&error_type);
                Decision::Fail { error_type, message, retryable }
            }
            StreamEnd::HttpStatus { status, retry_after_ms, should_retry }
                if !should_retry.unwrap_or(RETRYABLE_STATUSES.contains(&status)) =>
            {
                let last = StreamEnd::HttpStatus { status, retry_after_ms, should_retry };
                Decision::GiveUp { last, reason: GiveUpReason::NotRetryable }
            }
            last => {
                let cursor = self.cursor();
                let replay = match (self.output_started, &cursor) {
                    (false, _) => Some(Replay::Retry),
                    (true, ResumeCursor::None) => self.policy.restart_after_output.then_some(Replay::Restart),
                    (true, _) => Some(Replay::Resume),
                };
                match replay {
                    None => Decision::GiveUp { last, reason: GiveUpReason::NotResumable },
                    Some(_) if self.attempts >= self.policy.max_retries => {
                        Decision::GiveUp { last, reason: GiveUpReason::RetriesExhausted }
                    }
                    Some(replay) => {
                        let delay_ms = match &last {
                            StreamEnd::HttpStatus { retry_after_ms: Some(ms), .. } => {
                                (*ms).min(self.policy.max_retry_after_ms)
                            }
                            _ => match self.server_retry_ms {
                                Some(_) => self.policy.next_delay_ms(self.attempts, self.server_retry_ms),
                                None => {
                                    let unit = self.next_unit();
                                    self.policy.jittered_delay_ms(self.attempts, None, unit)
                                }
                            },
                        };
                        self.attempts += 1;
                        self.state = ConnectionState::Reconnecting;
                        return Decision::Reconnect { delay_ms, attempt: self.attempts, cursor, replay };
                    }
                }
            }
        };
        self.finished = true;
        self.state = ConnectionState::Disconnected;
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The idle and the first-content timeouts pass at the same time: the
    /// stall is the first-content one (a property test found the tie).
    #[test]
    fn a_tie_between_idle_and_content_is_the_content_stall() {
        let policy = ReconnectPolicy {
            idle_timeout_ms: Some(628),
            first_content_timeout_ms: Some(628),
            ..ReconnectPolicy::default()
        };
        let mut r = Reconnector::new(policy.clone());
        r.on_connected(0);
        assert_eq!(r.stall(627), None);
        assert_eq!(r.stall(628), Some(StallKind::FirstContent));
        let between = ReconnectPolicy { idle_timeout_ms: Some(50), content_timeout_ms: Some(50), ..policy };
        let mut r = Reconnector::new(between);
        r.on_connected(0);
        r.on_activity(10);
        r.on_content(10);
        assert_eq!(r.stall(60), Some(StallKind::Content));
    }

    #[test]
    fn backoff_sequence_and_cap() {
        let p = ReconnectPolicy::default();
        let seq: Vec<u64> = (0..12).map(|a| p.next_delay_ms(a, None)).collect();
        assert_eq!(&seq[..5], &[1000, 1500, 2250, 3375, 5063]);
        assert!(seq.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*seq.last().unwrap(), 30_000);
        assert_eq!(p.next_delay_ms(u32::MAX, None), 30_000);
        let odd = ReconnectPolicy { growth: f64::NAN, ..ReconnectPolicy::default() };
        assert_eq!(odd.next_delay_ms(5, None), 1000);
    }

    #[test]
    fn server_retry_wins_and_is_not_jittered() {
        let p = ReconnectPolicy { jitter: 0.5, ..ReconnectPolicy::default() };
        assert_eq!(p.next_delay_ms(3, Some(7)), 7);
        assert_eq!(p.jittered_delay_ms(3, Some(7), 0.99), 7);
        assert_eq!(p.jittered_delay_ms(0, None, 0.0), 500);
        assert_eq!(p.jittered_delay_ms(0, None, 0.5), 1000);
        assert_eq!(p.jittered_delay_ms(0, None, 1.0), 1500);
    }

    /// The default policy without jitter: exact delays.
    fn exact() -> ReconnectPolicy {
        ReconnectPolicy { jitter: 0.0, ..ReconnectPolicy::default() }
    }

    fn reconnect(delay_ms: u64, attempt: u32, cursor: ResumeCursor, replay: Replay) -> Decision {
        Decision::Reconnect { delay_ms, attempt, cursor, replay }
    }

    /// The when-to-reconnect table, one row per way a connection ends.
    #[test]
    fn decision_table() {
        let err = || StreamEnd::ProviderError { error_type: "overloaded_error".into(), message: "busy".into() };
        let http =
            |status, retry_after_ms, should_retry| StreamEnd::HttpStatus { status, retry_after_ms, should_retry };
        let give_up = |last, reason| Decision::GiveUp { last, reason };
        let retry = |delay| reconnect(delay, 1, ResumeCursor::None, Replay::Retry);
        let rows: Vec<(StreamEnd, Decision)> = vec![
            (StreamEnd::Completed, Decision::Done),
            (StreamEnd::Aborted, Decision::Stop),
            (err(), Decision::Fail { error_type: "overloaded_error".into(), message: "busy".into(), retryable: true }),
            (
                StreamEnd::ProviderError { error_type: "invalid_request_error".into(), message: "no".into() },
                Decision::Fail { error_type: "invalid_request_error".into(), message: "no".into(), retryable: false },
            ),
            (StreamEnd::EndedEarly, retry(1000)),
            (StreamEnd::TransportError("reset".into()), retry(1000)),
            (StreamEnd::IdleTimeout, retry(1000)),
            (http(429, Some(7000), None), retry(7000)),
            (http(503, None, None), retry(1000)),
            (http(529, Some(u64::MAX), None), retry(DEFAULT_MAX_RETRY_AFTER_MS)),
            (http(400, None, None), give_up(http(400, None, None), GiveUpReason::NotRetryable)),
            (http(429, None, Some(false)), give_up(http(429, None, Some(false)), GiveUpReason::NotRetryable)),
            (http(400, Some(5), Some(true)), retry(5)),
        ];
        for (end, want) in rows {
            let mut r = Reconnector::new(exact());
            r.on_connected(0);
            assert_eq!(r.on_end(end.clone()), want, "{end:?}");
        }
    }

    #[test]
    fn retries_are_exhausted_then_give_up_with_the_last_error() {
        let mut r = Reconnector::new(exact());
        r.on_connected(0);
        assert!(matches!(r.on_end(StreamEnd::EndedEarly), Decision::Reconnect { delay_ms: 1000, attempt: 1, .. }));
        assert_eq!(r.state(), ConnectionState::Reconnecting);
        r.on_connected(10);
        assert!(matches!(r.on_end(StreamEnd::IdleTimeout), Decision::Reconnect { delay_ms: 1500, attempt: 2, .. }));
        r.on_connected(20);
        let last = StreamEnd::TransportError("refused".into());
        assert_eq!(r.on_end(last.clone()), Decision::GiveUp { last, reason: GiveUpReason::RetriesExhausted });
        assert_eq!(r.state(), ConnectionState::Disconnected);
        assert_eq!(
            r.on_end(StreamEnd::Completed),
            Decision::GiveUp { last: StreamEnd::Completed, reason: GiveUpReason::RetriesExhausted }
        );
    }

    #[test]
    fn events_set_the_cursor_and_retries_stay_bounded() {
        let mut r = Reconnector::new(exact());
        r.on_connected(0);
        r.on_event(Some("e1"), None, Some(250));
        r.on_content(1);
        assert_eq!(
            r.on_end(StreamEnd::EndedEarly),
            reconnect(250, 1, ResumeCursor::LastEventId("e1".into()), Replay::Resume)
        );
        r.on_connected(5);
        r.on_event(Some("e2"), Some(17), None);
        assert_eq!(r.on_end(StreamEnd::EndedEarly), reconnect(250, 2, ResumeCursor::StartingAfter(17), Replay::Resume));
        // Progress on every connection does not buy more retries.
        r.on_connected(9);
        r.on_event(Some("e3"), Some(18), None);
        assert_eq!(
            r.on_end(StreamEnd::EndedEarly),
            Decision::GiveUp { last: StreamEnd::EndedEarly, reason: GiveUpReason::RetriesExhausted }
        );
    }

    #[test]
    fn output_without_a_cursor_is_never_sent_again_unless_opted_in() {
        let mut r = Reconnector::new(exact());
        r.on_connected(0);
        r.on_content(3);
        assert!(!r.replay_safe());
        assert_eq!(
            r.on_end(StreamEnd::TransportError("reset".into())),
            Decision::GiveUp { last: StreamEnd::TransportError("reset".into()), reason: GiveUpReason::NotResumable }
        );
        let mut r = Reconnector::new(ReconnectPolicy { restart_after_output: true, ..exact() });
        r.on_connected(0);
        r.on_content(3);
        assert_eq!(r.on_end(StreamEnd::EndedEarly), reconnect(1000, 1, ResumeCursor::None, Replay::Restart));
    }

    #[test]
    fn idle_deadline_follows_activity() {
        let policy = ReconnectPolicy { idle_timeout_ms: Some(100), first_content_timeout_ms: None, ..exact() };
        let mut r = Reconnector::new(policy);
        assert_eq!(r.idle_deadline_ms(), None, "not connected yet");
        r.on_connected(1000);
        assert_eq!(r.idle_deadline_ms(), Some(1100));
        r.on_activity(1050);
        assert!(!r.is_idle(1149));
        assert!(r.is_idle(1150));
        assert_eq!(r.stall(1150), Some(StallKind::Idle));
        assert!(matches!(r.on_end(StreamEnd::IdleTimeout), Decision::Reconnect { .. }));
        assert_eq!(r.idle_deadline_ms(), None, "no deadline while reconnecting");
    }

    #[test]
    fn keep_alives_do_not_hold_off_a_stall() {
        let policy = ReconnectPolicy {
            idle_timeout_ms: Some(1000),
            first_content_timeout_ms: Some(5000),
            content_timeout_ms: Some(2000),
            ..exact()
        };
        let mut r = Reconnector::new(policy);
        r.on_connected(0);
        // Pings every 500 ms: never idle, but no content.
        for t in (500..5000).step_by(500) {
            r.on_activity(t);
            assert_eq!(r.stall(t), None, "{t}");
        }
        r.on_activity(5000);
        assert_eq!(r.stall(5000), Some(StallKind::FirstContent));
        let mut r = Reconnector::new(r.policy().clone());
        r.on_connected(0);
        r.on_content(100);
        r.on_activity(1000);
        r.on_activity(1900);
        assert_eq!(r.stall(2099), None);
        assert_eq!(r.stall(2100), Some(StallKind::Content));
    }

    #[test]
    fn retry_hints_of_headers() {
        let h = RetryHints::from_headers([("retry-after-ms", "1500.5"), ("Retry-After", "9")], 0);
        assert_eq!(h.retry_after_ms, Some(1500), "retry-after-ms wins");
        let h = RetryHints::from_headers([("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")], 1_445_412_490_000);
        assert_eq!(h.retry_after_ms, Some(0), "a date in the past");
        let h = RetryHints::from_headers([("Retry-After", "soon"), ("X-Should-Retry", "FALSE")], 0);
        assert_eq!(h, RetryHints { retry_after_ms: None, should_retry: Some(false) });
        let h =
            RetryHints::from_headers([("retry-after", "-1"), ("retry-after-ms", "NaN"), ("retry-after", "1e30")], 0);
        assert_eq!(h.retry_after_ms, Some(u64::MAX), "{h:?}");
    }

    #[test]
    fn jitter_is_seeded_and_bounded() {
        let delays = |seed: u64| {
            let mut r = Reconnector::new(ReconnectPolicy { max_retries: 50, ..ReconnectPolicy::default() });
            r.seed_jitter(seed);
            (0..20)
                .map(|_| match r.on_end(StreamEnd::EndedEarly) {
                    Decision::Reconnect { delay_ms, .. } => delay_ms,
                    d => panic!("{d:?}"),
                })
                .collect::<Vec<_>>()
        };
        let (a, b) = (delays(1), delays(2));
        assert_ne!(a, b);
        assert_eq!(a, delays(1));
        let exact = exact();
        for (n, d) in a.iter().enumerate() {
            let base = exact.next_delay_ms(n as u32, None) as f64;
            assert!((*d as f64) >= base * 0.8 - 1.0 && (*d as f64) <= base * 1.2 + 1.0, "{n}: {d} vs {base}");
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn end() -> impl Strategy<Value = StreamEnd> {
            prop_oneof![
                Just(StreamEnd::EndedEarly),
                Just(StreamEnd::TransportError("x".into())),
                Just(StreamEnd::IdleTimeout),
                (400u16..600, proptest::option::of(0u64..100_000), proptest::option::of(any::<bool>())).prop_map(
                    |(status, retry_after_ms, should_retry)| StreamEnd::HttpStatus {
                        status,
                        retry_after_ms,
                        should_retry
                    }
                ),
            ]
        }

        #[derive(Debug, Clone, Copy)]
        enum Tick {
            Content,
            KeepAlive,
            Silence,
        }

        proptest! {
            /// Content vs keep-alive timelines: whatever the keep-alives,
            /// the stall fires exactly when the time since the last content
            /// (or the opening, before the first) reaches its timeout, and
            /// the byte idle timeout exactly when nothing at all came.
            #[test]
            fn stalls_follow_content_not_bytes(
                ticks in proptest::collection::vec(
                    (prop_oneof![Just(Tick::Content), Just(Tick::KeepAlive), Just(Tick::Silence)], 1u64..400),
                    1..40,
                ),
                first in 100u64..2000,
                between in 100u64..2000,
                idle in proptest::option::of(50u64..1000),
            ) {
                let policy = ReconnectPolicy {
                    idle_timeout_ms: idle,
                    first_content_timeout_ms: Some(first),
                    content_timeout_ms: Some(between),
                    ..ReconnectPolicy::default()
                };
                let mut r = Reconnector::new(policy);
                r.on_connected(0);
                let (mut now, mut last_content, mut last_byte, mut output) = (0u64, 0u64, 0u64, false);
                for (tick, dt) in ticks {
                    now += dt;
                    // What the model says at `now`, before the event.
                    let content_deadline = last_content + if output { between } else { first };
                    let idle_deadline = idle.map(|t| last_byte + t);
                    let want = [
                        (content_deadline, if output { StallKind::Content } else { StallKind::FirstContent }),
                    ]
                    .into_iter()
                    .chain(idle_deadline.map(|d| (d, StallKind::Idle)))
                    .filter(|(d, _)| now >= *d)
                    .min_by_key(|(d, _)| *d)
                    .map(|(_, k)| k);
                    prop_assert_eq!(r.stall(now), want, "at {}", now);
                    if want.is_some() {
                        break;
                    }
                    match tick {
                        Tick::Content => {
                            r.on_activity(now);
                            r.on_content(now);
                            (last_content, last_byte, output) = (now, now, true);
                        }
                        Tick::KeepAlive => {
                            r.on_activity(now);
                            last_byte = now;
                        }
                        Tick::Silence => {}
                    }
                }
            }
        }

        proptest! {
            /// Before / after output × how it ended × resumable × opt-in:
            /// a request is never sent again after output without a cursor
            /// unless the policy opts in; never more than `max_retries`;
            /// a status is retried exactly when the table says.
            #[test]
            fn the_replay_rules_hold(
                ends in proptest::collection::vec(end(), 1..8),
                output_at in proptest::option::of(0usize..8),
                cursor_at in proptest::option::of(0usize..8),
                restart in any::<bool>(),
                max_retries in 0u32..5,
            ) {
                let policy = ReconnectPolicy { restart_after_output: restart, max_retries, ..ReconnectPolicy::default() };
                let mut r = Reconnector::new(policy);
                let mut reconnections = 0u32;
                for (i, end) in ends.into_iter().enumerate() {
                    r.on_connected(i as u64);
                    if cursor_at == Some(i) {
                        r.on_event(Some("id"), None, None);
                    }
                    if output_at.is_some_and(|o| o <= i) {
                        r.on_content(i as u64);
                    }
                    let output = r.output_started();
                    let cursor = r.cursor() != ResumeCursor::None;
                    let finished_before = r.finished;
                    let status_retryable = match &end {
                        StreamEnd::HttpStatus { status, should_retry, .. } => {
                            should_retry.unwrap_or(RETRYABLE_STATUSES.contains(status))
                        }
                        _ => true,
                    };
                    match r.on_end(end.clone()) {
                        Decision::Reconnect { replay, delay_ms, .. } => {
                            reconnections += 1;
                            prop_assert!(!finished_before);
                            prop_assert!(status_retryable);
                            prop_assert!(reconnections <= max_retries);
                            let want = match (output, cursor) {
                                (false, _) => Replay::Retry,
                                (true, true) => Replay::Resume,
                                (true, false) => Replay::Restart,
                            };
                            prop_assert_eq!(replay, want);
                            prop_assert!(replay != Replay::Restart || restart);
                            if let StreamEnd::HttpStatus { retry_after_ms: Some(ms), .. } = end {
                                prop_assert_eq!(delay_ms, ms.min(DEFAULT_MAX_RETRY_AFTER_MS));
                            }
                        }
                        Decision::GiveUp { reason, .. } => {
                            if !finished_before {
                                let want = if !status_retryable {
                                    GiveUpReason::NotRetryable
                                } else if output && !cursor && !restart {
                                    GiveUpReason::NotResumable
                                } else {
                                    GiveUpReason::RetriesExhausted
                                };
                                prop_assert_eq!(reason, want);
                            }
                        }
                        d => prop_assert!(false, "{:?}", d),
                    }
                }
            }
        }
    }
}
