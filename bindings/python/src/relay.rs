//! `Relay` over `ssefold::relay`: provider bytes (`feed`) or normalized
//! events (`push`) in, the browser's SSE bytes out, plus the events the host
//! injects; and `RelayError`, its typed exception.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use ssefold::providers::{Provider, Stream as CoreStream, StreamError};
use ssefold::relay::{
    resume_point as core_resume_point, Relay as CoreRelay, RelayConfig, RelayError as CoreRelayError, RelayFormat,
};

use crate::convert::{data_text, ident, lossy, py_to_data, with_bytes};
use crate::errors::{new_err, Exc, ToPyErr};
use crate::providers::StreamEvent;

/// Sets `name = value` on an exception instance (best effort, as in `errors`).
fn with_attr<'py, V: IntoPyObject<'py>>(py: Python<'py>, err: PyErr, name: &str, value: V) -> PyErr {
    let _ = err.value(py).setattr(name, value);
    err
}

impl ToPyErr for CoreRelayError {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        let err = new_err(py, Exc::RelayError, self.to_string());
        match self {
            CoreRelayError::Finished => with_attr(py, err, "kind", "finished"),
            CoreRelayError::NoStream => with_attr(py, err, "kind", "no_stream"),
            CoreRelayError::ReplayTooOld { requested, oldest } => {
                let err = with_attr(py, err, "kind", "replay_too_old");
                let err = with_attr(py, err, "requested", requested.as_str());
                with_attr(py, err, "oldest", *oldest)
            }
            CoreRelayError::UnknownEventId(id) => {
                let err = with_attr(py, err, "kind", "unknown_event_id");
                with_attr(py, err, "requested", id.as_str())
            }
            CoreRelayError::InvalidEvent(_) => with_attr(py, err, "kind", "invalid_event"),
            _ => with_attr(py, err, "kind", "other"),
        }
    }
}

/// How deep a value handed to the relay may nest.
const MAX_DEPTH: usize = 128;

/// Normalized events (or provider bytes) in, browser Server-Sent Events out.
#[pyclass(module = "ssefold")]
pub struct Relay {
    inner: CoreRelay,
    /// The provider stream's failure on the last `feed` / `end_of_input`.
    stream_error: Option<StreamError>,
}

impl Relay {
    fn bytes<'py>(py: Python<'py>, result: Result<&[u8], CoreRelayError>) -> PyResult<Bound<'py, PyBytes>> {
        match result {
            Ok(b) => Ok(PyBytes::new(py, b)),
            Err(e) => Err(e.to_py_err(py)),
        }
    }
}

#[pymethods]
impl Relay {
    /// `format`: `"ai-sdk"` (the Vercel AI SDK UI message stream, read by
    /// `useChat`) or `"catalog"` (named agent events). `provider`: the
    /// dialect `feed` folds (`"auto"` by default; `None`: events are only
    /// pushed). `replay_bytes`: recent frames kept for `replay_after`;
    /// `keep_alive_ms`: idle time before `keep_alive` sends a comment.
    /// `tool_input_coalesce_bytes` (AI SDK format): a tool call's argument
    /// deltas are held back and written as one once this many bytes are
    /// held (0: every delta as it came); `tool_input_coalesce_ms`: the
    /// longest they are held, by the clock given to `tick`.
    #[new]
    #[pyo3(
        signature = (
            format = "ai-sdk",
            *,
            provider = Some("auto"),
            replay_bytes = 1048576,
            keep_alive_ms = 15000,
            tool_input_coalesce_bytes = RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_BYTES,
            tool_input_coalesce_ms = RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_MS,
        ),
        text_signature = "(format='ai-sdk', *, provider='auto', replay_bytes=1048576, keep_alive_ms=15000, tool_input_coalesce_bytes=4096, tool_input_coalesce_ms=50)"
    )]
    fn new(
        format: &str,
        provider: Option<&str>,
        replay_bytes: usize,
        keep_alive_ms: u64,
        tool_input_coalesce_bytes: usize,
        tool_input_coalesce_ms: u64,
    ) -> PyResult<Self> {
        let format = RelayFormat::from_name(format)
            .ok_or_else(|| PyValueError::new_err(format!("format must be 'ai-sdk' or 'catalog', not {format:?}")))?;
        let config =
            RelayConfig { format, replay_bytes, keep_alive_ms, tool_input_coalesce_bytes, tool_input_coalesce_ms };
        let inner = match provider {
            None => CoreRelay::new(config),
            Some(name) => {
                let p = Provider::from_name(name)
                    .ok_or_else(|| PyValueError::new_err(format!("unknown provider {name:?}")))?;
                CoreRelay::with_stream(config, CoreStream::new(p))
            }
        };
        Ok(Relay { inner, stream_error: None })
    }

    /// Provider body bytes through the relay's stream: the browser bytes to
    /// send now. When the provider stream fails on them, the bytes hold an
    /// `error` event and `stream_error` holds the exception (not raised).
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &mut self.inner;
        let relayed = with_bytes(data, |chunk| inner.feed(chunk).map(|r| (PyBytes::new(py, r.bytes), r.error)))?;
        let (bytes, error) = relayed.map_err(|e| e.to_py_err(py))?;
        if error.is_some() {
            self.stream_error = error;
        }
        Ok(bytes)
    }

    /// The end of the provider's body: the stream's last events (an `error`
    /// event, and `stream_error`, when the terminal event never came).
    fn end_of_input<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (bytes, error) = match self.inner.end_of_input() {
            Ok(r) => (PyBytes::new(py, r.bytes), r.error),
            Err(e) => return Err(e.to_py_err(py)),
        };
        if error.is_some() {
            self.stream_error = error;
        }
        Ok(bytes)
    }

    /// One normalized event (a `StreamEvent` from a `Stream`, or its wire
    /// form as a dict, `event.to_dict()`): its browser bytes, often empty.
    /// Raises `RelayError` (`kind="invalid_event"`) for anything else.
    fn push<'py>(&mut self, py: Python<'py>, event: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        if let Ok(event) = event.cast::<StreamEvent>() {
            // The core event itself, rebuilt without JSON.
            let inner = &mut self.inner;
            return event.get().with_core(py, |e| PyBytes::new(py, inner.push(e)));
        }
        let dict = if event.is_instance_of::<PyDict>() { event.clone() } else { event.call_method0("to_dict")? };
        let value = py_to_data(&dict, MAX_DEPTH, "Relay.push")?;
        Relay::bytes(py, self.inner.push_json(&value))
    }

    /// A tool's result (`output`: any JSON-able value; `is_error`: the tool
    /// failed, `output` is its message; `duration_ms` for the catalog).
    #[pyo3(signature = (call_id, output, *, is_error = false, duration_ms = None))]
    fn tool_result<'py>(
        &mut self,
        py: Python<'py>,
        call_id: &Bound<'_, PyString>,
        output: &Bound<'_, PyAny>,
        is_error: bool,
        duration_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let call_id = ident(call_id, "call_id")?;
        let output = py_to_data(output, MAX_DEPTH, "Relay.tool_result output")?;
        Relay::bytes(py, self.inner.tool_result(&call_id, &output, is_error, duration_ms))
    }

    /// A tool call waits for the user's approval (catalog
    /// `approval-required` `{approvalId, toolName, input, message}`):
    /// `message` is the sentence the user reads (`None`: `Allow NAME to run?`).
    #[pyo3(signature = (approval_id, call_id, name, input, *, message = None))]
    fn approval_required<'py>(
        &mut self,
        py: Python<'py>,
        approval_id: &Bound<'_, PyString>,
        call_id: &Bound<'_, PyString>,
        name: &Bound<'_, PyString>,
        input: &Bound<'_, PyAny>,
        message: Option<&Bound<'_, PyString>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (approval_id, call_id) = (ident(approval_id, "approval_id")?, ident(call_id, "call_id")?);
        let name = ident(name, "name")?;
        let input = py_to_data(input, MAX_DEPTH, "Relay.approval_required input")?;
        let message = message.map(|m| data_text(m, "Relay.approval_required message")).transpose()?;
        Relay::bytes(py, self.inner.approval_required(&approval_id, &call_id, &name, &input, message.as_deref()))
    }

    /// A log line for the UI (catalog `log` `{level, message, metadata?,
    /// timestamp, traceId}`; a transient `data-log` in the AI SDK format).
    /// `timestamp` is the host's time: an ISO 8601 string, or Unix
    /// milliseconds (`int`, written as ISO 8601 UTC); `trace_id` its trace;
    /// `metadata` any JSON-able value (`None`: left out).
    #[pyo3(signature = (level, message, *, timestamp, trace_id, metadata = None))]
    fn log<'py>(
        &mut self,
        py: Python<'py>,
        level: &Bound<'_, PyString>,
        message: &Bound<'_, PyString>,
        timestamp: &Bound<'_, PyAny>,
        trace_id: &Bound<'_, PyString>,
        metadata: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (level, message) = (ident(level, "level")?, data_text(message, "Relay.log message")?);
        let timestamp = match timestamp.cast::<PyString>() {
            Ok(text) => data_text(text, "Relay.log timestamp")?.into_owned(),
            Err(_) => ssefold::relay::iso_timestamp(timestamp.extract::<u64>()?),
        };
        let trace_id = data_text(trace_id, "Relay.log trace_id")?;
        let metadata = metadata.map(|m| py_to_data(m, MAX_DEPTH, "Relay.log metadata")).transpose()?;
        Relay::bytes(py, self.inner.log(&level, &message, metadata.as_ref(), &timestamp, &trace_id))
    }

    /// An error for the UI (catalog `error` `{error, code?, recoverable}`):
    /// `code` a machine-readable code (`None`: left out); `recoverable`: the
    /// agent goes on.
    #[pyo3(signature = (message, *, code = None, recoverable = false))]
    fn error<'py>(
        &mut self,
        py: Python<'py>,
        message: &Bound<'_, PyString>,
        code: Option<&Bound<'_, PyString>>,
        recoverable: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let message = data_text(message, "Relay.error message")?;
        let code = code.map(|c| ident(c, "code")).transpose()?;
        Relay::bytes(py, self.inner.error(&message, code.as_deref(), recoverable))
    }

    /// Metadata of the answer from the host (a dict, e.g. a turn's
    /// timings): AI SDK ``message-metadata``; nothing in the catalog.
    fn message_metadata<'py>(&mut self, py: Python<'py>, metadata: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let serde_json::Value::Object(metadata) = py_to_data(metadata, MAX_DEPTH, "Relay.message_metadata metadata")?
        else {
            return Err(PyTypeError::new_err("Relay.message_metadata takes a dict"));
        };
        Relay::bytes(py, self.inner.message_metadata(&metadata))
    }

    /// Closes the open step (after the tools of a turn ran).
    fn finish_step<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Relay::bytes(py, self.inner.finish_step())
    }

    /// The end of the answer; `usage` replaces the usage folded from the
    /// stream. Nothing can be sent afterwards (`RelayError`, `kind="finished"`).
    #[pyo3(signature = (usage = None))]
    fn finish<'py>(&mut self, py: Python<'py>, usage: Option<&Bound<'_, PyAny>>) -> PyResult<Bound<'py, PyBytes>> {
        let usage = usage.map(|u| py_to_data(u, MAX_DEPTH, "Relay.finish usage")).transpose()?;
        Relay::bytes(py, self.inner.finish(usage.as_ref()))
    }

    /// The host aborted the run (the user pressed stop): the relay's
    /// provider stream, if any, is aborted and the run ends aborted (AI SDK
    /// `abort` instead of `finish`; catalog `finish` `cancelled`). Raises
    /// `RelayError` (`kind="finished"`) after the end.
    fn abort<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Relay::bytes(py, self.inner.abort())
    }

    /// A keep-alive comment when nothing was sent for `keep_alive_ms` by
    /// the host's clock `now_ms`; `b""` otherwise. Call it on a timer.
    fn keep_alive<'py>(&mut self, py: Python<'py>, now_ms: u64) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.keep_alive(now_ms))
    }

    /// The host's timer for held-back tool input: the argument text held
    /// for `tool_input_coalesce_ms` by the clock `now_ms` (the one given to
    /// `keep_alive`); `b""` when nothing is due.
    fn tick<'py>(&mut self, py: Python<'py>, now_ms: u64) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.tick(now_ms))
    }

    /// The argument text held back, whatever its age (`b""`: none).
    fn flush<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.flush())
    }

    /// What a browser reconnecting with `Last-Event-ID` missed. Raises
    /// `RelayError` (`kind="replay_too_old"` with `.oldest`, or
    /// `"unknown_event_id"`: also for an id no UTF-8 can hold, a lone
    /// surrogate, which the relay never sent).
    fn replay_after<'py>(
        &mut self,
        py: Python<'py>,
        last_event_id: &Bound<'_, PyString>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Relay::bytes(py, self.inner.replay_after(&lossy(last_event_id)?))
    }

    /// The HTTP response headers the browser side needs.
    fn headers(&self) -> Vec<(&'static str, &'static str)> {
        self.inner.headers().to_vec()
    }

    /// The format's wire name (`"ai-sdk"` or `"catalog"`).
    #[getter]
    fn format(&self) -> &'static str {
        self.inner.format().name()
    }

    /// The id of the last event sent (0 before the first).
    #[getter]
    fn last_event_id(&self) -> u64 {
        self.inner.last_event_id()
    }

    /// Whether `finish` was called.
    #[getter]
    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// The frames of the last call's output as `(event_id, frame_bytes)`,
    /// oldest first (joined, they are that output without `trailer`):
    /// what a host appends to a replay store shared across processes.
    fn frames<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .inner
            .frames()
            .map(|(id, frame)| PyTuple::new(py, [id.into_pyobject(py)?.into_any(), PyBytes::new(py, frame).into_any()]))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// What a reader sends after the stream's last frame (`b"data: [DONE]\n\n"`
    /// in the ai-sdk format, `b""` in the catalog, whose `finish` is a frame).
    #[getter]
    fn trailer<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.trailer())
    }

    /// The provider stream's failure (an `ssefold.Error`), if `feed` or
    /// `end_of_input` met one (the relay sent an `error` event for it).
    #[getter]
    fn stream_error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.stream_error.as_ref().map(|e| e.to_py_err(py).into_value(py).into_any())
    }

    fn __repr__(&self) -> String {
        format!(
            "Relay(format={:?}, last_event_id={}, finished={})",
            self.inner.format().name(),
            self.inner.last_event_id(),
            self.inner.is_finished()
        )
    }
}

/// Where a replay store resumes for a browser's `Last-Event-ID`: the id
/// after which its frames are sent, given the ids it holds, `oldest` to
/// `newest` (both `None`: it holds none). Raises `RelayError`
/// (`kind="replay_too_old"` or `"unknown_event_id"`) as `Relay.replay_after`.
#[pyfunction]
#[pyo3(signature = (last_event_id, oldest, newest))]
pub fn resume_point(
    py: Python<'_>,
    last_event_id: &Bound<'_, PyString>,
    oldest: Option<u64>,
    newest: Option<u64>,
) -> PyResult<u64> {
    core_resume_point(&lossy(last_event_id)?, oldest, newest).map_err(|e| e.to_py_err(py))
}

/// Registers `Relay`, `resume_point` and `RelayError` on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resume_point, m)?)?;
    m.add_class::<Relay>()
}
