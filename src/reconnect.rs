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
//! | `IdleTimeout` (no bytes for `idle_timeout_ms`; comments and pings count as bytes) | `Reconnect` / `GiveUp`, as above |
//! | `ProviderError` (an error event inside the stream) | `Fail`: never reconnect; the error says whether its type is retryable so the host may choose to send the request again |
//! | `Aborted` (the user cancelled) | `Stop`: never reconnect |
//!
//! # Delays
//!
//! `initial_delay_ms × growth^attempt`, capped at `max_delay_ms`: with the
//! defaults 1000, 1500, 2250, 3375, … up to 30 000 ms, at most 2 retries. A
//! server `retry:` value takes precedence over the computed delay, capped at
//! `max_server_retry_ms` (10 minutes by default: a hostile or broken
//! `retry: 99999999999` must not park the host for years). Optional
//! jitter spreads the delay by ±`jitter` (a fraction); the host supplies the
//! random number, so the policy stays deterministic.
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
    /// Jitter as a fraction of the delay: 0.2 spreads it over ±20 %
    /// (default 0: none).
    pub jitter: f64,
    /// A connection that delivers no bytes for this long is treated as
    /// dropped (default: none).
    pub idle_timeout_ms: Option<u64>,
    /// Upper bound of a server's `retry:` value, in milliseconds (default
    /// 600 000, 10 minutes). The server's value still takes precedence over
    /// the backoff, up to this cap.
    pub max_server_retry_ms: u64,
}

/// Default of [`ReconnectPolicy::max_server_retry_ms`]: 10 minutes.
pub const DEFAULT_MAX_SERVER_RETRY_MS: u64 = 600_000;

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            initial_delay_ms: 1000,
            growth: 1.5,
            max_delay_ms: 30_000,
            max_retries: 2,
            jitter: 0.0,
            idle_timeout_ms: None,
            max_server_retry_ms: DEFAULT_MAX_SERVER_RETRY_MS,
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
    },
    /// Retries are exhausted: stop and report `last` (how the last connection
    /// ended).
    GiveUp {
        /// How the last connection ended.
        last: StreamEnd,
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
            finished: false,
        }
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

    /// When the idle timeout of the current connection expires, in the
    /// host's milliseconds, if one is configured and a connection is open.
    pub fn idle_deadline_ms(&self) -> Option<u64> {
        match (self.state, self.policy.idle_timeout_ms, self.last_activity_ms) {
            (ConnectionState::Connected, Some(t), Some(last)) => Some(last.saturating_add(t)),
            _ => None,
        }
    }

    /// Whether the idle deadline has passed at `now_ms`. When it has, the
    /// host closes the connection and calls [`on_end`](Self::on_end) with
    /// [`StreamEnd::IdleTimeout`].
    pub fn is_idle(&self, now_ms: u64) -> bool {
        self.idle_deadline_ms().is_some_and(|d| now_ms >= d)
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
                last => Decision::GiveUp { last },
            };
        }
        let decision = match end {
            StreamEnd::Completed => Decision::Done,
            StreamEnd::Aborted => Decision::Stop,
            StreamEnd::ProviderError { error_type, message } => {
                let retryable = is_retryable_error_type(&error_type);
                Decision::Fail { error_type, message, retryable }
            }
            last @ (StreamEnd::EndedEarly | StreamEnd::TransportError(_) | StreamEnd::IdleTimeout) => {
                if self.attempts >= self.policy.max_retries {
                    Decision::GiveUp { last }
                } else {
                    let delay_ms = self.policy.next_delay_ms(self.attempts, self.server_retry_ms);
                    self.attempts += 1;
                    self.state = ConnectionState::Reconnecting;
                    return Decision::Reconnect { delay_ms, attempt: self.attempts, cursor: self.cursor() };
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

    /// The when-to-reconnect table, one row per way a connection ends.
    #[test]
    fn decision_table() {
        let err = || StreamEnd::ProviderError { error_type: "overloaded_error".into(), message: "busy".into() };
        let rows: Vec<(StreamEnd, Decision)> = vec![
            (StreamEnd::Completed, Decision::Done),
            (StreamEnd::Aborted, Decision::Stop),
            (err(), Decision::Fail { error_type: "overloaded_error".into(), message: "busy".into(), retryable: true }),
            (
                StreamEnd::ProviderError { error_type: "invalid_request_error".into(), message: "no".into() },
                Decision::Fail { error_type: "invalid_request_error".into(), message: "no".into(), retryable: false },
            ),
            (StreamEnd::EndedEarly, Decision::Reconnect { delay_ms: 1000, attempt: 1, cursor: ResumeCursor::None }),
            (
                StreamEnd::TransportError("reset".into()),
                Decision::Reconnect { delay_ms: 1000, attempt: 1, cursor: ResumeCursor::None },
            ),
            (StreamEnd::IdleTimeout, Decision::Reconnect { delay_ms: 1000, attempt: 1, cursor: ResumeCursor::None }),
        ];
        for (end, want) in rows {
            let mut r = Reconnector::new(ReconnectPolicy::default());
            r.on_connected(0);
            assert_eq!(r.on_end(end.clone()), want, "{end:?}");
        }
    }

    #[test]
    fn retries_are_exhausted_then_give_up_with_the_last_error() {
        let mut r = Reconnector::new(ReconnectPolicy::default());
        r.on_connected(0);
        assert!(matches!(r.on_end(StreamEnd::EndedEarly), Decision::Reconnect { delay_ms: 1000, attempt: 1, .. }));
        assert_eq!(r.state(), ConnectionState::Reconnecting);
        r.on_connected(10);
        assert!(matches!(r.on_end(StreamEnd::IdleTimeout), Decision::Reconnect { delay_ms: 1500, attempt: 2, .. }));
        r.on_connected(20);
        let last = StreamEnd::TransportError("refused".into());
        assert_eq!(r.on_end(last.clone()), Decision::GiveUp { last });
        assert_eq!(r.state(), ConnectionState::Disconnected);
        assert_eq!(r.on_end(StreamEnd::Completed), Decision::GiveUp { last: StreamEnd::Completed });
    }

    #[test]
    fn events_set_the_cursor_and_retries_stay_bounded() {
        let mut r = Reconnector::new(ReconnectPolicy::default());
        r.on_connected(0);
        r.on_event(Some("e1"), None, Some(250));
        assert_eq!(
            r.on_end(StreamEnd::EndedEarly),
            Decision::Reconnect { delay_ms: 250, attempt: 1, cursor: ResumeCursor::LastEventId("e1".into()) }
        );
        r.on_connected(5);
        r.on_event(Some("e2"), Some(17), None);
        assert_eq!(
            r.on_end(StreamEnd::EndedEarly),
            Decision::Reconnect { delay_ms: 250, attempt: 2, cursor: ResumeCursor::StartingAfter(17) }
        );
        // Progress on every connection does not buy more retries.
        r.on_connected(9);
        r.on_event(Some("e3"), Some(18), None);
        assert_eq!(r.on_end(StreamEnd::EndedEarly), Decision::GiveUp { last: StreamEnd::EndedEarly });
    }

    #[test]
    fn idle_deadline_follows_activity() {
        let mut r = Reconnector::new(ReconnectPolicy { idle_timeout_ms: Some(100), ..ReconnectPolicy::default() });
        assert_eq!(r.idle_deadline_ms(), None, "not connected yet");
        r.on_connected(1000);
        assert_eq!(r.idle_deadline_ms(), Some(1100));
        r.on_activity(1050);
        assert!(!r.is_idle(1149));
        assert!(r.is_idle(1150));
        assert!(matches!(r.on_end(StreamEnd::IdleTimeout), Decision::Reconnect { .. }));
        assert_eq!(r.idle_deadline_ms(), None, "no deadline while reconnecting");
    }
}
