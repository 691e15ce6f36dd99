//! `ReconnectPolicy`, `Reconnector`, `StreamEnd`, `Decision`, `ResumeCursor`:
//! the core's reconnection state machine, as Python objects.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping, PyString};

use crate::convert::{data_text, ident, lossy};
use ssefold::reconnect::{
    is_retryable_error_type as core_is_retryable, Decision as CoreDecision, ReconnectPolicy as CorePolicy,
    Reconnector as CoreReconnector, ResumeCursor as CoreCursor, RetryHints, StallKind, StreamEnd as CoreEnd,
    DEFAULT_CONTENT_TIMEOUT_MS, DEFAULT_FIRST_CONTENT_TIMEOUT_MS, DEFAULT_JITTER, DEFAULT_MAX_RETRY_AFTER_MS,
    DEFAULT_MAX_SERVER_RETRY_MS,
};

// The signature's defaults below are the core's (`ReconnectPolicy::default`).
const _: () = assert!(
    DEFAULT_MAX_RETRY_AFTER_MS == 60_000
        && DEFAULT_FIRST_CONTENT_TIMEOUT_MS == 300_000
        && DEFAULT_CONTENT_TIMEOUT_MS == 120_000
        && DEFAULT_MAX_SERVER_RETRY_MS == 600_000
        && DEFAULT_JITTER == 0.2,
    "keep ReconnectPolicy's signature in step with the core's defaults"
);

/// The wall clock in Unix milliseconds (`time.time()`), for a `Retry-After`
/// written as an HTTP date.
fn wall_ms(py: Python<'_>) -> PyResult<u64> {
    let secs: f64 = py.import(intern!(py, "time"))?.call_method0(intern!(py, "time"))?.extract()?;
    Ok((secs.max(0.0) * 1000.0) as u64)
}

/// The retry hints of a refused response's headers (a mapping, such as
/// `httpx.Headers`, or an iterable of `(name, value)` pairs), parsed by the
/// core (`RetryHints::from_headers`) against the wall clock.
pub(crate) fn retry_hints(py: Python<'_>, headers: Option<&Bound<'_, PyAny>>) -> PyResult<RetryHints> {
    let Some(headers) = headers.filter(|h| !h.is_none()) else {
        return Ok(RetryHints::default());
    };
    let pairs = match headers.cast::<PyMapping>() {
        Ok(mapping) => mapping.items()?.into_any(),
        Err(_) => headers.clone(),
    };
    let mut owned: Vec<(String, String)> = Vec::new();
    for pair in pairs.try_iter()? {
        let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair?
            .extract()
            .map_err(|_| PyTypeError::new_err("headers must be a mapping or an iterable of (name, value) pairs"))?;
        let text = |v: &Bound<'_, PyAny>| -> PyResult<String> {
            match v.cast::<PyString>() {
                Ok(s) => Ok(lossy(s)?.into_owned()),
                // bytes, as raw header lists hold them (latin-1, RFC 9110)
                Err(_) => Ok(v.extract::<Vec<u8>>()?.iter().map(|&b| b as char).collect()),
            }
        };
        owned.push((text(&name)?, text(&value)?));
    }
    Ok(RetryHints::from_headers(owned.iter().map(|(n, v)| (n.as_str(), v.as_str())), wall_ms(py)?))
}

/// The stall kind of a wire name (`idle`, `first_content`, `content`).
pub(crate) fn stall_kind(name: &str) -> Option<StallKind> {
    [StallKind::Idle, StallKind::FirstContent, StallKind::Content].into_iter().find(|k| k.name() == name)
}

/// A Python-style quoted string for reprs (single quotes, escapes).
fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Backoff, server retry and retry budget (immutable).
#[pyclass(module = "ssefold", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct ReconnectPolicy {
    pub inner: CorePolicy,
}

#[pymethods]
impl ReconnectPolicy {
    #[new]
    #[pyo3(signature = (
        *, initial_delay_ms = 1000, growth = 1.5, max_delay_ms = 30_000, max_retries = 2, jitter = 0.2,
        idle_timeout_ms = None, max_server_retry_ms = 600_000, max_retry_after_ms = 60_000,
        restart_after_output = false, first_content_timeout_ms = Some(300_000), content_timeout_ms = Some(120_000)
    ), text_signature = "(*, initial_delay_ms=1000, growth=1.5, max_delay_ms=30000, max_retries=2, jitter=0.2, \
        idle_timeout_ms=None, max_server_retry_ms=600000, max_retry_after_ms=60000, restart_after_output=False, \
        first_content_timeout_ms=300000, content_timeout_ms=120000)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        initial_delay_ms: u64,
        growth: f64,
        max_delay_ms: u64,
        max_retries: u32,
        jitter: f64,
        idle_timeout_ms: Option<u64>,
        max_server_retry_ms: u64,
        max_retry_after_ms: u64,
        restart_after_output: bool,
        first_content_timeout_ms: Option<u64>,
        content_timeout_ms: Option<u64>,
    ) -> PyResult<Self> {
        if !growth.is_finite() || growth < 1.0 {
            return Err(PyValueError::new_err(format!("growth must be a finite number >= 1, not {growth}")));
        }
        if !(0.0..=1.0).contains(&jitter) {
            return Err(PyValueError::new_err(format!("jitter must be within [0, 1], not {jitter}")));
        }
        let inner = CorePolicy {
            initial_delay_ms,
            growth,
            max_delay_ms,
            max_retries,
            jitter,
            idle_timeout_ms,
            max_server_retry_ms,
            max_retry_after_ms,
            restart_after_output,
            first_content_timeout_ms,
            content_timeout_ms,
        };
        Ok(ReconnectPolicy { inner })
    }

    /// The delay before retry number `attempt` (0 for the first); a server
    /// `retry:` value wins, capped at `max_server_retry_ms`.
    #[pyo3(signature = (attempt, server_retry_ms = None))]
    fn next_delay_ms(&self, attempt: u32, server_retry_ms: Option<u64>) -> u64 {
        self.inner.next_delay_ms(attempt, server_retry_ms)
    }

    /// `next_delay_ms` spread by the jitter; `random_unit` in [0, 1).
    #[pyo3(signature = (attempt, server_retry_ms, random_unit))]
    fn jittered_delay_ms(&self, attempt: u32, server_retry_ms: Option<u64>, random_unit: f64) -> u64 {
        self.inner.jittered_delay_ms(attempt, server_retry_ms, random_unit)
    }

    #[getter]
    fn initial_delay_ms(&self) -> u64 {
        self.inner.initial_delay_ms
    }
    #[getter]
    fn growth(&self) -> f64 {
        self.inner.growth
    }
    #[getter]
    fn max_delay_ms(&self) -> u64 {
        self.inner.max_delay_ms
    }
    #[getter]
    fn max_retries(&self) -> u32 {
        self.inner.max_retries
    }
    #[getter]
    fn jitter(&self) -> f64 {
        self.inner.jitter
    }
    #[getter]
    fn idle_timeout_ms(&self) -> Option<u64> {
        self.inner.idle_timeout_ms
    }
    #[getter]
    fn max_server_retry_ms(&self) -> u64 {
        self.inner.max_server_retry_ms
    }
    #[getter]
    fn max_retry_after_ms(&self) -> u64 {
        self.inner.max_retry_after_ms
    }
    #[getter]
    fn restart_after_output(&self) -> bool {
        self.inner.restart_after_output
    }
    #[getter]
    fn first_content_timeout_ms(&self) -> Option<u64> {
        self.inner.first_content_timeout_ms
    }
    #[getter]
    fn content_timeout_ms(&self) -> Option<u64> {
        self.inner.content_timeout_ms
    }

    fn __repr__(&self) -> String {
        let p = &self.inner;
        let opt = |v: Option<u64>| v.map_or_else(|| "None".to_owned(), |v| v.to_string());
        format!(
            "ReconnectPolicy(initial_delay_ms={}, growth={:?}, max_delay_ms={}, max_retries={}, jitter={:?}, \
             idle_timeout_ms={}, max_server_retry_ms={}, max_retry_after_ms={}, restart_after_output={}, \
             first_content_timeout_ms={}, content_timeout_ms={})",
            p.initial_delay_ms,
            p.growth,
            p.max_delay_ms,
            p.max_retries,
            p.jitter,
            opt(p.idle_timeout_ms),
            p.max_server_retry_ms,
            p.max_retry_after_ms,
            if p.restart_after_output { "True" } else { "False" },
            opt(p.first_content_timeout_ms),
            opt(p.content_timeout_ms),
        )
    }
}

/// How one connection ended. Build it with the static constructors.
#[pyclass(module = "ssefold", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct StreamEnd {
    pub inner: CoreEnd,
}

#[pymethods]
impl StreamEnd {
    /// The terminal event arrived.
    #[staticmethod]
    fn completed() -> Self {
        StreamEnd { inner: CoreEnd::Completed }
    }
    /// The body ended without the terminal event.
    #[staticmethod]
    fn ended_early() -> Self {
        StreamEnd { inner: CoreEnd::EndedEarly }
    }
    /// The transport failed (`message`: what happened; a lone surrogate in
    /// it is U+FFFD, with a `UnicodeWarning`).
    #[staticmethod]
    fn transport_error(message: &Bound<'_, PyString>) -> PyResult<Self> {
        let message = data_text(message, "StreamEnd.transport_error message")?.into_owned();
        Ok(StreamEnd { inner: CoreEnd::TransportError(message) })
    }
    /// No bytes for the idle timeout.
    #[staticmethod]
    fn idle_timeout() -> Self {
        StreamEnd { inner: CoreEnd::IdleTimeout }
    }
    /// The provider sent an error event (lone surrogates: U+FFFD, with a
    /// `UnicodeWarning`).
    #[staticmethod]
    fn provider_error(error_type: &Bound<'_, PyString>, message: &Bound<'_, PyString>) -> PyResult<Self> {
        let error_type = data_text(error_type, "StreamEnd.provider_error error_type")?.into_owned();
        let message = data_text(message, "StreamEnd.provider_error message")?.into_owned();
        Ok(StreamEnd { inner: CoreEnd::ProviderError { error_type, message } })
    }
    /// The user aborted.
    #[staticmethod]
    fn aborted() -> Self {
        StreamEnd { inner: CoreEnd::Aborted }
    }
    /// The response was refused before its body: `status` is not 2xx.
    /// `headers` (a mapping such as `httpx.Headers`, or `(name, value)`
    /// pairs) give the retry hints, parsed by the core: `retry-after-ms`,
    /// `Retry-After` (seconds or an HTTP date, against the wall clock),
    /// `x-should-retry`; `retry_after_ms` / `should_retry`, when given,
    /// say it instead.
    #[staticmethod]
    #[pyo3(signature = (status, headers = None, *, retry_after_ms = None, should_retry = None))]
    fn http_status(
        py: Python<'_>,
        status: u16,
        headers: Option<&Bound<'_, PyAny>>,
        retry_after_ms: Option<u64>,
        should_retry: Option<bool>,
    ) -> PyResult<Self> {
        let hints = retry_hints(py, headers)?;
        Ok(StreamEnd {
            inner: CoreEnd::HttpStatus {
                status,
                retry_after_ms: retry_after_ms.or(hints.retry_after_ms),
                should_retry: should_retry.or(hints.should_retry),
            },
        })
    }

    /// `completed`, `ended_early`, `transport_error`, `idle_timeout`,
    /// `provider_error`, `aborted` or `http_status`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.name()
    }

    /// The refused response's status (`http_status`).
    #[getter]
    fn status(&self) -> Option<u16> {
        match self.inner {
            CoreEnd::HttpStatus { status, .. } => Some(status),
            _ => None,
        }
    }

    /// What the refused response's `retry-after-ms` / `Retry-After` said,
    /// in milliseconds (`http_status`).
    #[getter]
    fn retry_after_ms(&self) -> Option<u64> {
        match self.inner {
            CoreEnd::HttpStatus { retry_after_ms, .. } => retry_after_ms,
            _ => None,
        }
    }

    /// The refused response's `x-should-retry`, when it sent one
    /// (`http_status`).
    #[getter]
    fn should_retry(&self) -> Option<bool> {
        match self.inner {
            CoreEnd::HttpStatus { should_retry, .. } => should_retry,
            _ => None,
        }
    }

    /// The transport error's or provider error's message.
    #[getter]
    fn message(&self) -> Option<&str> {
        match &self.inner {
            CoreEnd::TransportError(m) | CoreEnd::ProviderError { message: m, .. } => Some(m),
            _ => None,
        }
    }

    /// The provider error's type.
    #[getter]
    fn error_type(&self) -> Option<&str> {
        match &self.inner {
            CoreEnd::ProviderError { error_type, .. } => Some(error_type),
            _ => None,
        }
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            CoreEnd::TransportError(m) => format!("StreamEnd.transport_error({})", py_str(m)),
            CoreEnd::ProviderError { error_type, message } => {
                format!("StreamEnd.provider_error({}, {})", py_str(error_type), py_str(message))
            }
            CoreEnd::HttpStatus { status, retry_after_ms, should_retry } => {
                let opt = |v: Option<String>| v.unwrap_or_else(|| "None".to_owned());
                format!(
                    "StreamEnd.http_status({status}, retry_after_ms={}, should_retry={})",
                    opt(retry_after_ms.map(|v| v.to_string())),
                    opt(should_retry.map(|v| if v { "True" } else { "False" }.to_owned()))
                )
            }
            _ => format!("StreamEnd.{}()", self.kind()),
        }
    }
}

/// What to send on the next connection so the server can resume.
#[pyclass(module = "ssefold", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct ResumeCursor {
    pub inner: CoreCursor,
}

#[pymethods]
impl ResumeCursor {
    /// `none` (start over), `last_event_id` or `starting_after`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner {
            CoreCursor::None => "none",
            CoreCursor::LastEventId(_) => "last_event_id",
            CoreCursor::StartingAfter(_) => "starting_after",
        }
    }

    /// The `Last-Event-ID` value, if that is the cursor.
    #[getter]
    fn last_event_id(&self) -> Option<&str> {
        match &self.inner {
            CoreCursor::LastEventId(id) => Some(id),
            _ => None,
        }
    }

    /// The Responses API's `starting_after`, if that is the cursor.
    #[getter]
    fn starting_after(&self) -> Option<u64> {
        match self.inner {
            CoreCursor::StartingAfter(n) => Some(n),
            _ => None,
        }
    }

    /// The request headers that carry the cursor (`{"Last-Event-ID": ...}` or
    /// `{}`).
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        if let CoreCursor::LastEventId(id) = &self.inner {
            d.set_item("Last-Event-ID", id)?;
        }
        Ok(d)
    }

    fn __bool__(&self) -> bool {
        self.inner != CoreCursor::None
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            CoreCursor::None => "ResumeCursor(kind='none')".to_owned(),
            CoreCursor::LastEventId(id) => format!("ResumeCursor(kind='last_event_id', last_event_id={})", py_str(id)),
            CoreCursor::StartingAfter(n) => format!("ResumeCursor(kind='starting_after', starting_after={n})"),
        }
    }
}

/// What the host should do after a connection ended.
#[pyclass(module = "ssefold", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct Decision {
    pub inner: CoreDecision,
}

#[pymethods]
impl Decision {
    /// `done`, `reconnect`, `give_up`, `fail` or `stop`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner {
            CoreDecision::Done => "done",
            CoreDecision::Reconnect { .. } => "reconnect",
            CoreDecision::GiveUp { .. } => "give_up",
            CoreDecision::Fail { .. } => "fail",
            CoreDecision::Stop => "stop",
        }
    }

    /// For `reconnect`: how long to wait first, in milliseconds.
    #[getter]
    fn delay_ms(&self) -> Option<u64> {
        match self.inner {
            CoreDecision::Reconnect { delay_ms, .. } => Some(delay_ms),
            _ => None,
        }
    }

    /// For `reconnect`: which reconnection this is (1 for the first).
    #[getter]
    fn attempt(&self) -> Option<u32> {
        match self.inner {
            CoreDecision::Reconnect { attempt, .. } => Some(attempt),
            _ => None,
        }
    }

    /// For `reconnect`: what to send so the server can resume.
    #[getter]
    fn cursor(&self) -> Option<ResumeCursor> {
        match &self.inner {
            CoreDecision::Reconnect { cursor, .. } => Some(ResumeCursor { inner: cursor.clone() }),
            _ => None,
        }
    }

    /// For `reconnect`: what the request is: `retry` (no output yet: the
    /// same request), `resume` (output delivered: with the cursor) or
    /// `restart` (output delivered, no cursor, `restart_after_output`: a
    /// second answer, reported as `turn_reset`).
    #[getter]
    fn replay(&self) -> Option<&'static str> {
        match self.inner {
            CoreDecision::Reconnect { replay, .. } => Some(replay.name()),
            _ => None,
        }
    }

    /// For `give_up`: how the last connection ended.
    #[getter]
    fn last(&self) -> Option<StreamEnd> {
        match &self.inner {
            CoreDecision::GiveUp { last, .. } => Some(StreamEnd { inner: last.clone() }),
            _ => None,
        }
    }

    /// For `give_up`: why: `retries_exhausted`, `not_resumable` (output
    /// was delivered and the provider gave no cursor to resume from) or
    /// `not_retryable` (an HTTP status not to retry).
    #[getter]
    fn reason(&self) -> Option<&'static str> {
        match self.inner {
            CoreDecision::GiveUp { reason, .. } => Some(reason.name()),
            _ => None,
        }
    }

    /// For `fail`: the provider's error type.
    #[getter]
    fn error_type(&self) -> Option<&str> {
        match &self.inner {
            CoreDecision::Fail { error_type, .. } => Some(error_type),
            _ => None,
        }
    }

    /// For `fail`: the provider's message.
    #[getter]
    fn message(&self) -> Option<&str> {
        match &self.inner {
            CoreDecision::Fail { message, .. } => Some(message),
            _ => None,
        }
    }

    /// For `fail`: whether the error type is transient.
    #[getter]
    fn retryable(&self) -> Option<bool> {
        match self.inner {
            CoreDecision::Fail { retryable, .. } => Some(retryable),
            _ => None,
        }
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            CoreDecision::Reconnect { delay_ms, attempt, cursor, replay } => format!(
                "Decision(kind='reconnect', delay_ms={delay_ms}, attempt={attempt}, cursor={}, replay='{}')",
                ResumeCursor { inner: cursor.clone() }.__repr__(),
                replay.name()
            ),
            CoreDecision::GiveUp { last, reason } => format!(
                "Decision(kind='give_up', last={}, reason='{}')",
                StreamEnd { inner: last.clone() }.__repr__(),
                reason.name()
            ),
            CoreDecision::Fail { error_type, message, retryable } => format!(
                "Decision(kind='fail', error_type={}, message={}, retryable={})",
                py_str(error_type),
                py_str(message),
                if *retryable { "True" } else { "False" }
            ),
            _ => format!("Decision(kind='{}')", self.kind()),
        }
    }
}

/// The reconnection state machine of one logical stream.
#[pyclass(module = "ssefold")]
pub struct Reconnector {
    inner: CoreReconnector,
}

#[pymethods]
impl Reconnector {
    #[new]
    #[pyo3(signature = (policy = None))]
    fn new(policy: Option<ReconnectPolicy>) -> Self {
        Reconnector { inner: CoreReconnector::new(policy.map(|p| p.inner).unwrap_or_default()) }
    }

    #[getter]
    fn policy(&self) -> ReconnectPolicy {
        ReconnectPolicy { inner: self.inner.policy().clone() }
    }

    /// `disconnected`, `connecting`, `connected` or `reconnecting`.
    #[getter]
    fn state(&self) -> &'static str {
        self.inner.state().name()
    }

    /// Reconnections decided in a row so far.
    #[getter]
    fn attempts(&self) -> u32 {
        self.inner.attempts()
    }

    /// The response headers arrived.
    fn on_connected(&mut self, now_ms: u64) {
        self.inner.on_connected(now_ms);
    }

    /// Bytes arrived (comments and pings included).
    fn on_activity(&mut self, now_ms: u64) {
        self.inner.on_activity(now_ms);
    }

    /// An event was dispatched (`id`: its last event ID; a lone surrogate
    /// in it is an `EncodeError`: no header could carry it).
    #[pyo3(signature = (id = None, sequence_number = None, retry_ms = None))]
    fn on_event(
        &mut self,
        id: Option<&Bound<'_, PyString>>,
        sequence_number: Option<u64>,
        retry_ms: Option<u64>,
    ) -> PyResult<()> {
        let id = id.map(|id| ident(id, "id")).transpose()?;
        self.inner.on_event(id.as_deref(), sequence_number, retry_ms);
        Ok(())
    }

    /// Content reached the host at `now_ms` (a `StreamEvent` whose
    /// `is_content` is true; in raw SSE, a dispatched event): from now on
    /// the answer has output, so it is resumed, never sent again unless the
    /// policy says `restart_after_output`.
    fn on_content(&mut self, now_ms: u64) {
        self.inner.on_content(now_ms);
    }

    /// Whether content reached the host on some connection of this answer.
    #[getter]
    fn output_started(&self) -> bool {
        self.inner.output_started()
    }

    /// Whether sending the request again now would neither bill nor show a
    /// second answer: no output yet, or a cursor to resume from.
    #[getter]
    fn replay_safe(&self) -> bool {
        self.inner.replay_safe()
    }

    /// Seeds the retry jitter (a random number: two clients retrying after
    /// the same outage then wait different times).
    fn seed_jitter(&mut self, seed: u64) {
        self.inner.seed_jitter(seed);
    }

    /// When the connection counts as idle or stalled (host milliseconds):
    /// the earliest of the byte idle timeout and the content timeout in
    /// force, if any applies.
    #[getter]
    fn idle_deadline_ms(&self) -> Option<u64> {
        self.inner.idle_deadline_ms()
    }

    /// Whether a deadline has passed at `now_ms`.
    fn is_idle(&self, now_ms: u64) -> bool {
        self.inner.is_idle(now_ms)
    }

    /// Which timeout has passed at `now_ms`, if any: `idle` (no bytes),
    /// `first_content` (keep-alives but no content before the first) or
    /// `content` (none since the last). Close the connection and end it
    /// with `StreamEnd.idle_timeout()`.
    fn stall(&self, now_ms: u64) -> Option<&'static str> {
        self.inner.stall(now_ms).map(StallKind::name)
    }

    /// How long the timeout of `stall` (`idle`, `first_content`, `content`)
    /// is, in milliseconds (`None`: not configured).
    fn stall_timeout_ms(&self, stall: &str) -> PyResult<Option<u64>> {
        let kind = stall_kind(stall).ok_or_else(|| {
            PyValueError::new_err(format!("stall must be 'idle', 'first_content' or 'content', not {stall:?}"))
        })?;
        Ok(self.inner.stall_timeout_ms(kind))
    }

    /// The cursor to send on the next connection.
    #[getter]
    fn cursor(&self) -> ResumeCursor {
        ResumeCursor { inner: self.inner.cursor() }
    }

    /// A connection ended: what next.
    fn on_end(&mut self, end: &StreamEnd) -> Decision {
        Decision { inner: self.inner.on_end(end.inner.clone()) }
    }

    fn __repr__(&self) -> String {
        format!("Reconnector(state={:?}, attempts={})", self.inner.state().name(), self.inner.attempts())
    }
}

/// Whether a provider error type is transient (worth sending the request
/// again).
#[pyfunction]
pub fn is_retryable_error_type(error_type: &Bound<'_, PyString>) -> PyResult<bool> {
    Ok(core_is_retryable(&lossy(error_type)?))
}
