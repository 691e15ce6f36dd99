//! `TurnCore`, one sans-IO agent turn (`ssefold::agent::AgentTurn`), and
//! what it answers: `TurnAction`s to carry out, the `TurnOutcome` with its
//! `TurnCall`s and `NextRequest`.
//!
//! The turn decides everything (which calls run, which get an error result,
//! the order, the next request); `ssefold.run_turn` / `run_turn_sync` only
//! move bytes, run tool functions and wait.

use pyo3::exceptions::{PyBaseException, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use std::sync::OnceLock;

use pyo3::types::{PyList, PyString};

use ssefold::agent::{
    AgentTurn, NextRequest as CoreNext, TurnAction as CoreAction, TurnCall as CoreCall, TurnConfig, TurnEvent,
    TurnOutcome as CoreOutcome,
};
use ssefold::providers::Provider;
use ssefold::tools::{SchedulerConfig, ToolOptions, ToolStart};

use crate::convert::{data_text, ident, value_to_py, with_bytes};
use crate::errors::{turn_failure_of, ToPyErr};
use crate::providers::{EventBuilder, Held, Stream, StreamEvent};
use crate::reconnect::{retry_hints, ReconnectPolicy, ResumeCursor};
use crate::tools::ToolResult;

/// A random jitter seed for a turn whose host gave none (the process's
/// hasher keys, drawn from the OS once, advanced for every turn).
fn random_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64)
}

/// One agent turn, sans-IO: feed it what happened (bytes, the end of the
/// body, a refused response, a failed connection, a tool's update or
/// result, an approval, an abort, the time); each input returns what to
/// show (`StreamEvent`s and `ToolExecutionEvent`s, in order), and
/// `poll_actions()` what to do (`TurnAction`s: start a tool, cancel one,
/// close or reconnect). It never reads a socket, runs a tool or reads a
/// clock (`now_ms` is yours: the default, `time.monotonic()` in ms, is read
/// only with a `reconnect` policy or an `approval_timeout_ms`).
///
/// Without `reconnect` the turn never asks for a request again (a host
/// reading one body it cannot request again); the stall timeouts of the
/// default policy still apply once `connected` was told, on the clock the
/// host passes.
///
/// A host that folds the body with its own `Stream` (the HTTP helpers,
/// which reconnect by themselves) hands it that stream's events instead:
/// `apply_event`, then `end_of_events`, then `outcome(stream)`.
#[pyclass(module = "ssefold")]
pub struct TurnCore {
    inner: AgentTurn,
    builder: EventBuilder,
    /// The events of the input being handled (empty between calls; kept
    /// for its capacity).
    held: Held,
    /// A reconnection policy is in force: the default time is the clock's.
    clock: bool,
}

impl TurnCore {
    fn now_ms(&self, py: Python<'_>, now_ms: Option<u64>) -> PyResult<u64> {
        match now_ms {
            Some(t) => Ok(t),
            None if !self.clock => Ok(0),
            None => {
                let secs: f64 = py.import(intern!(py, "time"))?.call_method0(intern!(py, "monotonic"))?.extract()?;
                Ok((secs * 1000.0) as u64)
            }
        }
    }

    /// Runs one input of the turn with the GIL released (the stream folds
    /// then); the events it emitted become Python objects after.
    fn run<'py, R: Send>(
        &mut self,
        py: Python<'py>,
        step: impl FnOnce(&mut AgentTurn, &mut dyn FnMut(TurnEvent<'_>)) -> R + Send,
    ) -> PyResult<(Bound<'py, PyList>, R)> {
        let mut held = std::mem::take(&mut self.held);
        let inner = &mut self.inner;
        let result = py.detach(|| step(inner, &mut |e| collect(&mut held, e)));
        let built = self.builder.build_held(py, &mut held);
        held.clear();
        self.held = held;
        Ok((built?, result))
    }
}

/// One event of the turn into the batch being collected.
fn collect(held: &mut Held, event: TurnEvent<'_>) {
    match event {
        TurnEvent::Stream(e) => held.push(e),
        TurnEvent::Tool(t) => held.push_tool(t),
        // An event kind newer than this binding: not shown.
        _ => {}
    }
}

#[pymethods]
impl TurnCore {
    #[new]
    #[pyo3(signature = (
        provider = "auto", *, max_concurrency = 0, max_calls = 4096, reconnect = None, approval_timeout_ms = None,
        jitter_seed = None
    ))]
    fn new(
        provider: &str,
        max_concurrency: usize,
        max_calls: usize,
        reconnect: Option<&Bound<'_, ReconnectPolicy>>,
        approval_timeout_ms: Option<u64>,
        jitter_seed: Option<u64>,
    ) -> PyResult<Self> {
        let p = Provider::from_name(provider)
            .ok_or_else(|| PyValueError::new_err(format!("unknown provider {provider:?}")))?;
        let mut config = TurnConfig::new(p);
        config.scheduler = SchedulerConfig { max_concurrency, max_calls };
        Python::attach(|py| config.scheduler.validate().map_err(|e| e.to_py_err(py)))?;
        config.reconnect = reconnect.map(|r| r.get().inner.clone());
        config.approval_timeout_ms = approval_timeout_ms;
        config.jitter_seed = jitter_seed.unwrap_or_else(random_seed);
        Ok(TurnCore {
            clock: config.reconnect.is_some() || approval_timeout_ms.is_some(),
            inner: AgentTurn::new(config),
            builder: EventBuilder::default(),
            held: Held::default(),
        })
    }

    /// Registers a tool the host runs: `exclusive` runs alone,
    /// `abort_siblings_on_error` cancels the running siblings when it fails,
    /// `start` says when a ready call may start (`ready`: at once;
    /// `turn_end`: once the answer ended with a normal or tool-use stop,
    /// else it is `skipped`; `auto`: `turn_end` for an exclusive tool,
    /// `ready` otherwise), `needs_approval` makes a ready call wait for
    /// `approve` / `deny` (a `tool_approval_requested` event). A call to a
    /// name not registered gets `No such tool available: NAME`.
    #[pyo3(signature = (
        name, *, exclusive = false, abort_siblings_on_error = false, start = "auto", needs_approval = false
    ))]
    fn add_tool(
        &mut self,
        name: &Bound<'_, PyString>,
        exclusive: bool,
        abort_siblings_on_error: bool,
        start: &str,
        needs_approval: bool,
    ) -> PyResult<()> {
        let start = ToolStart::from_name(start).ok_or_else(|| {
            PyValueError::new_err(format!("start must be 'auto', 'ready' or 'turn_end', not {start:?}"))
        })?;
        let options = ToolOptions { start, needs_approval, ..ToolOptions::new(exclusive, abort_siblings_on_error) };
        self.inner.add_tool(&ident(name, "name")?, options);
        Ok(())
    }

    /// The request was sent (the first, or the one a `reconnect` action
    /// asked for): the timings count from the first. Optional: without it
    /// they count from `connected`.
    #[pyo3(signature = (now_ms = None))]
    fn request_sent(&mut self, py: Python<'_>, now_ms: Option<u64>) -> PyResult<()> {
        let now = self.now_ms(py, now_ms)?;
        self.inner.request_sent(now);
        Ok(())
    }

    /// The response headers of a connection arrived with a 2xx status (the
    /// first, or the one a `reconnect` action asked for).
    #[pyo3(signature = (now_ms = None))]
    fn connected(&mut self, py: Python<'_>, now_ms: Option<u64>) -> PyResult<()> {
        let now = self.now_ms(py, now_ms)?;
        self.inner.connected(now);
        Ok(())
    }

    /// The response was refused before its body (`status` not 2xx):
    /// `headers` (a mapping such as `httpx.Headers`, or `(name, value)`
    /// pairs) give the retry hints the core reads (`retry-after-ms`,
    /// `Retry-After`, `x-should-retry`). A transient status is retried under
    /// the `reconnect` policy (a `reconnect` action after its
    /// `Retry-After`); another, or one the provider said not to retry, ends
    /// the turn (`outcome().failure`: a `ProviderError` with
    /// `.status_code`; the body is yours, for its error).
    #[pyo3(signature = (status, headers = None, now_ms = None))]
    fn http_status<'py>(
        &mut self,
        py: Python<'py>,
        status: u16,
        headers: Option<&Bound<'py, PyAny>>,
        now_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let hints = retry_hints(py, headers)?;
        let now = self.now_ms(py, now_ms)?;
        Ok(self.run(py, |t, on| t.http_status(status, hints, now, on))?.0)
    }

    /// Bytes of the body arrived: what to show. After the stream is over
    /// (its end, an error, an abort), bytes change nothing (after its
    /// terminal event the stream still warns of them:
    /// `data_after_terminal`); an error in the stream ends the turn
    /// (`outcome().failure`), it is not raised.
    #[pyo3(signature = (data, now_ms = None))]
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        now_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let now = self.now_ms(py, now_ms)?;
        let (events, ()) = with_bytes(data, |chunk| self.run(py, |t, on| t.feed(chunk, now, on)))??;
        Ok(events)
    }

    /// The body ended (the connection closed cleanly).
    #[pyo3(signature = (now_ms = None))]
    fn end_of_body<'py>(&mut self, py: Python<'py>, now_ms: Option<u64>) -> PyResult<Bound<'py, PyList>> {
        let now = self.now_ms(py, now_ms)?;
        Ok(self.run(py, |t, on| t.end_of_body(now, on))?.0)
    }

    /// The connection failed before the body ended (`error` says how).
    #[pyo3(signature = (error, now_ms = None))]
    fn connection_failed<'py>(
        &mut self,
        py: Python<'py>,
        error: &Bound<'_, PyString>,
        now_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let now = self.now_ms(py, now_ms)?;
        let error = data_text(error, "TurnCore.connection_failed error")?;
        Ok(self.run(py, |t, on| t.connection_failed(&error, now, on))?.0)
    }

    /// The time passed: a connection idle or stalled past the policy's
    /// timeouts is closed and reconnected, or ends the turn; a call waiting
    /// for approval past `approval_timeout_ms` is denied.
    #[pyo3(signature = (now_ms = None))]
    fn tick<'py>(&mut self, py: Python<'py>, now_ms: Option<u64>) -> PyResult<Bound<'py, PyList>> {
        let now = self.now_ms(py, now_ms)?;
        Ok(self.run(py, |t, on| t.tick(now, on))?.0)
    }

    /// Approves a call waiting for approval (its `tool_approval_requested`
    /// event's `approval_id`): the scheduling rules now apply to it. Raises
    /// `SchedulerError` (`.kind` `not_awaiting_approval`) for an id that
    /// is not waiting.
    fn approve<'py>(&mut self, py: Python<'py>, approval_id: &Bound<'_, PyString>) -> PyResult<Bound<'py, PyList>> {
        let approval_id = ident(approval_id, "approval_id")?;
        let (events, result) = self.run(py, |t, on| t.approve(&approval_id, on))?;
        result.map_err(|e| e.to_py_err(py))?;
        Ok(events)
    }

    /// Denies a call waiting for approval: its error result is `Denied by
    /// the user` (`: REASON` with a reason), kind `denied`, and the model
    /// sees it. Raises `SchedulerError` as `approve` does.
    #[pyo3(signature = (approval_id, reason = None), text_signature = "($self, approval_id, reason='')")]
    fn deny<'py>(
        &mut self,
        py: Python<'py>,
        approval_id: &Bound<'_, PyString>,
        reason: Option<&Bound<'_, PyString>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let approval_id = ident(approval_id, "approval_id")?;
        let reason = reason.map(|r| data_text(r, "TurnCore.deny reason")).transpose()?;
        let reason = reason.as_deref().unwrap_or("");
        let (events, result) = self.run(py, |t, on| t.deny(&approval_id, reason, on))?;
        result.map_err(|e| e.to_py_err(py))?;
        Ok(events)
    }

    /// Cancels a running call (after its `tool_running_after_stop`, say):
    /// its result is `Cancelled by the host` now and its late result is
    /// dropped; stopping the work is yours. A call that is not running is
    /// left as it is; an unknown id raises `SchedulerError`.
    fn cancel_tool<'py>(&mut self, py: Python<'py>, call_id: &Bound<'_, PyString>) -> PyResult<Bound<'py, PyList>> {
        let call_id = ident(call_id, "call_id")?;
        let (events, result) = self.run(py, |t, on| t.cancel_tool(&call_id, on))?;
        result.map_err(|e| e.to_py_err(py))?;
        Ok(events)
    }

    /// When `tick` should be called next (the connection's idle and stall
    /// deadlines, the approval timeouts, in the host's milliseconds), if
    /// ever.
    #[getter]
    fn deadline_ms(&self) -> Option<u64> {
        self.inner.deadline_ms()
    }

    /// Progress text of a running call. Raises `SchedulerError` for a call
    /// that is not running (`.kind`).
    fn tool_update<'py>(
        &mut self,
        py: Python<'py>,
        call_id: &Bound<'_, PyString>,
        text: &Bound<'_, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (call_id, text) = (ident(call_id, "call_id")?, data_text(text, "TurnCore.tool_update text")?);
        let (events, result) = self.run(py, |t, on| t.tool_update(&call_id, &text, on))?;
        result.map_err(|e| e.to_py_err(py))?;
        Ok(events)
    }

    /// The result of a call the turn told you to start (a late result of a
    /// call the turn already ended is dropped). Raises `SchedulerError` for
    /// a call it never told you to start.
    #[pyo3(signature = (call_id, output, is_error = false))]
    fn tool_result<'py>(
        &mut self,
        py: Python<'py>,
        call_id: &Bound<'_, PyString>,
        output: &Bound<'_, PyString>,
        is_error: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let (call_id, output) = (ident(call_id, "call_id")?, data_text(output, "tool output")?);
        let (events, result) = self.run(py, |t, on| t.tool_result(&call_id, &output, is_error, on))?;
        result.map_err(|e| e.to_py_err(py))?;
        Ok(events)
    }

    /// The user aborted: the stream ends (a `turn_end` with `stop_reason`
    /// `aborted`), running calls are cancelled, every call without a result
    /// gets `Aborted: REASON`. Nothing once the turn is over.
    #[pyo3(signature = (reason = None), text_signature = "($self, reason='')")]
    fn abort<'py>(&mut self, py: Python<'py>, reason: Option<&Bound<'_, PyString>>) -> PyResult<Bound<'py, PyList>> {
        let reason = reason.map(|r| data_text(r, "TurnCore.abort reason")).transpose()?;
        let reason = reason.as_deref().unwrap_or("");
        Ok(self.run(py, |t, on| t.abort(reason, on))?.0)
    }

    /// One event of the host's own stream, in order (instead of `feed`):
    /// the `ToolExecutionEvent`s it causes (not the event itself). `now_ms`
    /// times its content (the timings).
    #[pyo3(signature = (event, now_ms = None))]
    fn apply_event<'py>(
        &mut self,
        py: Python<'py>,
        event: &Bound<'py, StreamEvent>,
        now_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let now = self.now_ms(py, now_ms)?;
        let Self { inner, held, builder, .. } = self;
        event.get().with_core(py, |e| inner.apply_event_at(e, now, |t| collect(held, t)))?;
        let built = builder.build_held(py, held);
        held.clear();
        built
    }

    /// The host's own stream is over: normally (`failure` None), or with
    /// the exception it raised (a `ProviderError`, an
    /// `IncompleteStreamError`, a connection's error: every call without a
    /// result gets `Aborted: REASON`). Calls it left open get their
    /// `incomplete` result.
    #[pyo3(signature = (failure = None))]
    fn end_of_events<'py>(
        &mut self,
        py: Python<'py>,
        failure: Option<&Bound<'py, PyBaseException>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let failure = failure.map(|f| turn_failure_of(py, f.as_any())).transpose()?;
        Ok(self.run(py, |t, on| t.end_of_events(failure, on))?.0)
    }

    /// What to do now, in order (each action once).
    fn poll_actions(&mut self) -> Vec<TurnAction> {
        std::iter::from_fn(|| self.inner.poll_action()).map(|inner| TurnAction { inner }).collect()
    }

    /// The results that can be handed back now, in call order, each once
    /// (`outcome()` has them all).
    fn results(&mut self) -> Vec<ToolResult> {
        self.inner.results().into_iter().map(ToolResult::from_core).collect()
    }

    /// The stream is over and every call has its result: `outcome()` is
    /// final.
    #[getter]
    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// The stream is over (tools may still run).
    #[getter]
    fn is_stream_ended(&self) -> bool {
        self.inner.is_stream_ended()
    }

    /// Number of calls running (told to start, no result yet).
    #[getter]
    fn running(&self) -> usize {
        self.inner.running()
    }

    /// The dialect: the one given, or the one detected (`auto` until then).
    #[getter]
    fn provider(&self) -> &'static str {
        self.inner.provider().name()
    }

    /// The turn's result so far (final once `is_finished`). With `stream`
    /// (a turn fed by `apply_event`): that stream's dialect and folded
    /// message.
    #[pyo3(signature = (stream = None))]
    fn outcome(&self, py: Python<'_>, stream: Option<&Bound<'_, Stream>>) -> PyResult<TurnOutcome> {
        let outcome = match stream {
            Some(s) => {
                let s = s.try_borrow()?;
                self.inner.outcome_with_message(s.inner.provider(), s.inner.message())
            }
            None => self.inner.outcome(),
        };
        TurnOutcome::from_core(py, outcome)
    }

    fn __repr__(&self) -> String {
        format!(
            "TurnCore(provider={:?}, stream_ended={}, running={}, finished={})",
            self.inner.provider().name(),
            self.inner.is_stream_ended(),
            self.inner.running(),
            self.inner.is_finished()
        )
    }
}

/// What the host does next (immutable): `.kind` is `start_tool` (run
/// `name` with `arguments` and report `TurnCore.tool_result(call_id, …)`),
/// `cancel_tool` (the turn already gave `call_id` its result),
/// `close_connection` (it went idle) or `reconnect` (after `delay_ms`, with
/// `cursor`, a `replay` of kind `retry`, `resume` or `restart`; then
/// `connected()` and the new body).
#[pyclass(module = "ssefold", frozen, eq)]
#[derive(PartialEq)]
pub struct TurnAction {
    inner: CoreAction,
}

#[pymethods]
impl TurnAction {
    /// `start_tool`, `cancel_tool`, `close_connection` or `reconnect`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner {
            CoreAction::StartTool(_) => "start_tool",
            CoreAction::CancelTool { .. } => "cancel_tool",
            CoreAction::CloseConnection => "close_connection",
            CoreAction::Reconnect { .. } => "reconnect",
            _ => "unknown",
        }
    }
    /// The call (`start_tool`, `cancel_tool`).
    #[getter]
    fn call_id(&self) -> Option<&str> {
        match &self.inner {
            CoreAction::StartTool(s) => Some(&s.call_id),
            CoreAction::CancelTool { call_id } => Some(call_id),
            _ => None,
        }
    }
    /// The tool's name (`start_tool`).
    #[getter]
    fn name(&self) -> Option<&str> {
        match &self.inner {
            CoreAction::StartTool(s) => Some(&s.name),
            _ => None,
        }
    }
    /// The call's input as text (`start_tool`): JSON, or free text when
    /// `input_format` is `text`.
    #[getter]
    fn arguments(&self) -> Option<&str> {
        match &self.inner {
            CoreAction::StartTool(s) => Some(&s.arguments),
            _ => None,
        }
    }
    /// `json` or `text` (`start_tool`).
    #[getter]
    fn input_format(&self) -> Option<&'static str> {
        match &self.inner {
            CoreAction::StartTool(s) => Some(s.input_format.name()),
            _ => None,
        }
    }
    /// How long to wait before reconnecting (`reconnect`).
    #[getter]
    fn delay_ms(&self) -> Option<u64> {
        match self.inner {
            CoreAction::Reconnect { delay_ms, .. } => Some(delay_ms),
            _ => None,
        }
    }
    /// Which reconnection this is, 1 for the first (`reconnect`).
    #[getter]
    fn attempt(&self) -> Option<u32> {
        match self.inner {
            CoreAction::Reconnect { attempt, .. } => Some(attempt),
            _ => None,
        }
    }
    /// What to send so the server can resume (`reconnect`).
    #[getter]
    fn cursor(&self) -> Option<ResumeCursor> {
        match &self.inner {
            CoreAction::Reconnect { cursor, .. } => Some(ResumeCursor { inner: cursor.clone() }),
            _ => None,
        }
    }
    /// What the request is (`reconnect`): `retry` (no output yet: the same
    /// request), `resume` (with the cursor) or `restart` (a second answer
    /// the policy opted in to, reported as `turn_reset`).
    #[getter]
    fn replay(&self) -> Option<&'static str> {
        match self.inner {
            CoreAction::Reconnect { replay, .. } => Some(replay.name()),
            _ => None,
        }
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            CoreAction::StartTool(s) => format!(
                "TurnAction(kind='start_tool', call_id={:?}, name={:?}, arguments={:?}, input_format={:?})",
                s.call_id,
                s.name,
                s.arguments,
                s.input_format.name()
            ),
            CoreAction::CancelTool { call_id } => format!("TurnAction(kind='cancel_tool', call_id={call_id:?})"),
            CoreAction::Reconnect { delay_ms, attempt, replay, .. } => format!(
                "TurnAction(kind='reconnect', delay_ms={delay_ms}, attempt={attempt}, replay='{}')",
                replay.name()
            ),
            _ => format!("TurnAction(kind={:?})", self.kind()),
        }
    }
}

/// One tool call of the answer (choice 0), as the turn kept it
/// (immutable).
#[pyclass(module = "ssefold", frozen, get_all)]
pub struct TurnCall {
    /// Its part id.
    part: u32,
    /// The provider's id, or the synthesized one (`id_synthesized`).
    id: String,
    /// Whether `id` was synthesized.
    id_synthesized: bool,
    /// The tool's name (`""` when the provider sent none).
    name: String,
    /// The provider's type of the part (`part_start`'s `provider_type`).
    provider_type: String,
    /// `json` or `text`.
    input_format: &'static str,
    /// The provider runs it: no result from the host.
    provider_executed: bool,
    /// How its part ended: `complete`, `invalid_arguments`, `incomplete`.
    outcome: &'static str,
    /// Its input as text (the raw text received when not complete).
    arguments: String,
}

impl TurnCall {
    fn from_core(c: CoreCall) -> Self {
        TurnCall {
            part: c.part,
            id: c.id,
            id_synthesized: c.id_synthesized,
            name: c.name,
            provider_type: c.provider_type,
            input_format: c.input_format.name(),
            provider_executed: c.provider_executed,
            outcome: c.outcome.name(),
            arguments: c.arguments,
        }
    }
}

#[pymethods]
impl TurnCall {
    fn __repr__(&self) -> String {
        format!(
            "TurnCall(part={}, id={:?}, name={:?}, outcome={:?}, provider_executed={})",
            self.part,
            self.id,
            self.name,
            self.outcome,
            if self.provider_executed { "True" } else { "False" }
        )
    }
}

/// What to append to the conversation to continue after a turn, in the
/// provider's request shape (immutable): `assistant` (the assistant turn:
/// one message, or the Responses input items), `tool_results` (`None`
/// without results) and `append` (both, in order: the list to extend
/// `messages` / `input` / `contents` with).
#[pyclass(module = "ssefold", frozen, get_all)]
pub struct NextRequest {
    /// The assistant turn as the provider expects it back.
    assistant: Py<PyAny>,
    /// The tool results, shaped for the provider (`None` without results).
    tool_results: Py<PyAny>,
    /// Everything to append, in order.
    append: Py<PyAny>,
}

impl NextRequest {
    /// Converted once: `append` holds the very objects of `assistant` and
    /// `tool_results` (their items, for lists).
    fn from_core(py: Python<'_>, n: &CoreNext) -> PyResult<Self> {
        let assistant = value_to_py(py, &n.assistant)?;
        let tool_results = value_to_py(py, &n.tool_results)?;
        let append = PyList::empty(py);
        for part in [&assistant, &tool_results] {
            if part.is_none() {
                continue;
            }
            match part.cast::<PyList>() {
                Ok(items) => {
                    for item in items.iter() {
                        append.append(item)?;
                    }
                }
                Err(_) => append.append(part)?,
            }
        }
        Ok(NextRequest {
            assistant: assistant.unbind(),
            tool_results: tool_results.unbind(),
            append: append.into_any().unbind(),
        })
    }
}

#[pymethods]
impl NextRequest {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("NextRequest(append={})", self.append.bind(py).repr()?))
    }
}

/// What a finished (or aborted, or failed) turn gives the agent
/// (immutable).
#[pyclass(module = "ssefold", frozen)]
pub struct TurnOutcome {
    /// The dialect (`auto` when nothing was detected).
    #[pyo3(get)]
    provider: &'static str,
    /// The folded message (`None` when nothing arrived).
    #[pyo3(get)]
    message: Py<PyAny>,
    /// The stop reason of the answer (choice 0), when known.
    #[pyo3(get)]
    stop_reason: Option<String>,
    /// The host aborted the turn.
    #[pyo3(get)]
    aborted: bool,
    /// Why the turn ended with an error (an `ssefold.Error`), if it did.
    #[pyo3(get)]
    failure: Option<Py<PyAny>>,
    /// Whether sending the request again may succeed after `failure`.
    #[pyo3(get)]
    retryable: bool,
    /// The kind of `failure`: `stream`, `transport`, `idle_timeout`,
    /// `http`, `too_many_calls` (`None` without one).
    #[pyo3(get)]
    failure_kind: Option<&'static str>,
    /// Why no reconnection followed the last connection, when one was
    /// wanted: `not_resumable` (output was delivered and the answer could
    /// not be resumed: `message` is everything folded), `retries_exhausted`
    /// or `not_retryable`.
    #[pyo3(get)]
    gave_up: Option<&'static str>,
    /// Whether content reached the host (a request sent again now would
    /// bill and show a second answer unless resumed).
    #[pyo3(get)]
    output_started: bool,
    /// The timings on the host's clock (a dict with the core's names):
    /// `started_ms`, `time_to_first_content_ms`, `content_gaps` (`count`,
    /// `median_ms`, `p95_ms`, `max_ms`), `duration_ms`, `output_tokens`,
    /// `input_tokens`, `output_tokens_per_second`, `attempts` (each
    /// `started_ms`, `ended_ms`, `outcome`, `status`).
    #[pyo3(get)]
    timings: Py<PyAny>,
    /// What the turn reports to OpenTelemetry, named and computed by the
    /// core after the GenAI semantic conventions (`ssefold.otel` records
    /// it): `{"attributes": {"gen_ai.*": …, "error.type": …}, "metrics":
    /// [{"name", "unit", "value", "attributes"}]}`.
    #[pyo3(get)]
    telemetry: Py<PyAny>,
    /// Every tool call of the answer, in part order.
    #[pyo3(get)]
    calls: Py<PyList>,
    /// One result per call the host answers (all but the provider-run
    /// ones), in call order.
    #[pyo3(get)]
    results: Py<PyList>,
    /// The next request as the core wrote it, converted on the first read
    /// of `next` (it copies the answer: a host that keeps its own history
    /// never pays for it).
    next_core: Option<CoreNext>,
    next: OnceLock<Option<Py<NextRequest>>>,
}

impl TurnOutcome {
    fn from_core(py: Python<'_>, o: CoreOutcome) -> PyResult<Self> {
        let next_core = o.next();
        let telemetry = serde_json::json!({"attributes": o.gen_ai_attributes(), "metrics": o.gen_ai_metrics()});
        let calls = o.calls.into_iter().map(|c| Py::new(py, TurnCall::from_core(c))).collect::<PyResult<Vec<_>>>()?;
        let results =
            o.results.into_iter().map(|r| Py::new(py, ToolResult::from_core(r))).collect::<PyResult<Vec<_>>>()?;
        Ok(TurnOutcome {
            provider: o.provider.name(),
            message: value_to_py(py, &o.message)?.unbind(),
            stop_reason: o.stop_reason,
            aborted: o.aborted,
            retryable: o.failure.as_ref().is_some_and(|f| f.is_retryable()),
            failure_kind: o.failure.as_ref().map(|f| f.kind()),
            gave_up: o.gave_up.map(|r| r.name()),
            output_started: o.output_started,
            timings: value_to_py(py, &o.timings.to_json())?.unbind(),
            telemetry: value_to_py(py, &telemetry)?.unbind(),
            failure: o
                .failure
                .map(|f| -> PyResult<Py<PyAny>> {
                    let err = f.to_py_err(py).into_value(py).into_any();
                    // Why no reconnection followed, on the error too (as the
                    // HTTP helpers' errors have it).
                    if let Some(reason) = o.gave_up {
                        err.bind(py).setattr(intern!(py, "gave_up"), reason.name())?;
                    }
                    Ok(err)
                })
                .transpose()?,
            calls: PyList::new(py, calls)?.unbind(),
            results: PyList::new(py, results)?.unbind(),
            next_core,
            next: OnceLock::new(),
        })
    }
}

#[pymethods]
impl TurnOutcome {
    /// What to append to the conversation to continue (`None` when no
    /// dialect was detected or there is no answer to continue).
    #[getter]
    fn next(&self, py: Python<'_>) -> PyResult<Option<Py<NextRequest>>> {
        if let Some(next) = self.next.get() {
            return Ok(next.as_ref().map(|n| n.clone_ref(py)));
        }
        let built =
            self.next_core.as_ref().map(|n| NextRequest::from_core(py, n).and_then(|n| Py::new(py, n))).transpose()?;
        // Another thread may have built it meanwhile: the first one kept wins.
        let kept = self.next.get_or_init(|| built);
        Ok(kept.as_ref().map(|n| n.clone_ref(py)))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "TurnOutcome(provider={:?}, stop_reason={}, aborted={}, failure={}, calls={}, results={}, gave_up={}, \
             output_started={})",
            self.provider,
            self.stop_reason.as_ref().map_or_else(|| "None".to_owned(), |r| format!("{r:?}")),
            if self.aborted { "True" } else { "False" },
            match &self.failure {
                Some(f) => f.bind(py).repr()?.to_string(),
                None => "None".to_owned(),
            },
            self.calls.bind(py).len(),
            self.results.bind(py).len(),
            self.gave_up.map_or_else(|| "None".to_owned(), |r| format!("{r:?}")),
            if self.output_started { "True" } else { "False" }
        ))
    }
}

/// Registers the classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TurnCore>()?;
    m.add_class::<TurnAction>()?;
    m.add_class::<TurnCall>()?;
    m.add_class::<NextRequest>()?;
    m.add_class::<TurnOutcome>()?;
    Ok(())
}
