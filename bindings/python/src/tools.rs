//! `ToolScheduler`, its `ToolResult` / `ToolExecutionEvent` / `Finished`
//! values and `SchedulerError`, over `ssefold::tools`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

use ssefold::providers::Provider;
use ssefold::tools::{
    tool_results as core_tool_results, SchedulerConfig, SchedulerError as CoreError, ToolExecutionEvent as CoreEvent,
    ToolOptions, ToolResult as CoreResult, ToolResultKind, ToolScheduler as CoreScheduler,
};

use crate::convert::{data_text, ident, lossy, py_to_data, value_to_py};
use crate::errors::ToPyErr;
use crate::providers::ToolCallEnd;

fn scheduler_error(py: Python<'_>, e: &CoreError) -> PyErr {
    e.to_py_err(py)
}

/// The result of one tool call (immutable).
#[pyclass(module = "ssefold", frozen, eq, get_all)]
#[derive(Clone, PartialEq)]
pub struct ToolResult {
    /// The provider's id of the call, or the one ssefold synthesized.
    call_id: String,
    /// Whether `call_id` was synthesized (the provider sent none).
    id_synthesized: bool,
    /// The tool's name.
    name: String,
    /// What the model is told: the tool's output, or the error text.
    output: String,
    /// Whether it is an error result.
    is_error: bool,
    /// Where it came from: `ran`, `unknown_tool`, `invalid_input`,
    /// `cancelled`, `aborted`, `discarded`, `incomplete`, `unnamed`,
    /// `skipped` (the answer stopped with a reason that lets no call
    /// start), `denied` (its approval was denied).
    kind: &'static str,
}

impl ToolResult {
    pub(crate) fn from_core(r: CoreResult) -> Self {
        ToolResult {
            kind: r.kind.name(),
            call_id: r.call_id,
            id_synthesized: r.id_synthesized,
            name: r.name,
            output: r.output,
            is_error: r.is_error,
        }
    }
}

#[pymethods]
impl ToolResult {
    fn __repr__(&self) -> String {
        format!(
            "ToolResult(call_id={:?}, id_synthesized={}, name={:?}, output={:?}, is_error={}, kind={:?})",
            self.call_id,
            if self.id_synthesized { "True" } else { "False" },
            self.name,
            self.output,
            if self.is_error { "True" } else { "False" },
            self.kind
        )
    }
}

/// A `tool_execution_*` event (immutable): `.type` is its wire name.
#[pyclass(module = "ssefold", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct ToolExecutionEvent {
    inner: CoreEvent,
}

impl ToolExecutionEvent {
    pub(crate) fn new(inner: CoreEvent) -> Self {
        ToolExecutionEvent { inner }
    }
}

#[pymethods]
impl ToolExecutionEvent {
    /// `tool_execution_started`, `tool_execution_update`,
    /// `tool_execution_finished`, `tool_approval_requested` (the call waits
    /// for `TurnCore.approve` / `deny` with `approval_id`) or
    /// `tool_running_after_stop` (the answer stopped with `stop_reason`
    /// while the call ran: let it finish or `TurnCore.cancel_tool` it).
    #[getter]
    fn r#type(&self) -> &'static str {
        self.inner.name()
    }
    /// The call's id.
    #[getter]
    fn call_id(&self) -> &str {
        self.inner.call_id()
    }
    /// The tool's name (`None` for an update).
    #[getter]
    fn name(&self) -> Option<&str> {
        match &self.inner {
            CoreEvent::Started { name, .. }
            | CoreEvent::Finished { name, .. }
            | CoreEvent::ApprovalRequested { name, .. }
            | CoreEvent::RunningAfterStop { name, .. } => Some(name),
            _ => None,
        }
    }
    /// The approval's id (`tool_approval_requested`), for `approve` /
    /// `deny`.
    #[getter]
    fn approval_id(&self) -> Option<&str> {
        match &self.inner {
            CoreEvent::ApprovalRequested { approval_id, .. } => Some(approval_id),
            _ => None,
        }
    }
    /// The call's input as text (`tool_approval_requested`).
    #[getter]
    fn arguments(&self) -> Option<&str> {
        match &self.inner {
            CoreEvent::ApprovalRequested { arguments, .. } => Some(arguments),
            _ => None,
        }
    }
    /// The answer's stop reason (`tool_running_after_stop`).
    #[getter]
    fn stop_reason(&self) -> Option<&str> {
        match &self.inner {
            CoreEvent::RunningAfterStop { stop_reason, .. } => Some(stop_reason),
            _ => None,
        }
    }
    /// The progress text of an update (`None` otherwise).
    #[getter]
    fn text(&self) -> Option<&str> {
        match &self.inner {
            CoreEvent::Update { text, .. } => Some(text),
            _ => None,
        }
    }
    /// Whether a finished call's result is an error (`None` otherwise).
    #[getter]
    fn is_error(&self) -> Option<bool> {
        match &self.inner {
            CoreEvent::Finished { is_error, .. } => Some(*is_error),
            _ => None,
        }
    }
    /// The JSON form as a dict: `{"event": type, "call_id", ...}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.inner.to_json())
    }
    fn __repr__(&self) -> String {
        format!("ToolExecutionEvent({})", self.inner.to_json())
    }
}

/// What `ToolScheduler.finish` did (immutable).
#[pyclass(module = "ssefold", frozen, get_all)]
pub struct Finished {
    /// The result was recorded (false: the scheduler had already ended the
    /// call — cancelled, aborted, discarded — and dropped the late result).
    recorded: bool,
    /// Running calls to cancel now (the call failed and was added with
    /// `abort_siblings_on_error`).
    cancel: Vec<String>,
}

#[pymethods]
impl Finished {
    fn __repr__(&self) -> String {
        format!("Finished(recorded={}, cancel={:?})", if self.recorded { "True" } else { "False" }, self.cancel)
    }
}

/// A call's arguments as JSON text: a `str` is the text, any other JSON
/// value is written as JSON (lone surrogates U+FFFD, with a warning).
fn input_json<'a>(input: &'a Bound<'_, PyAny>) -> PyResult<std::borrow::Cow<'a, str>> {
    if let Ok(text) = input.cast::<PyString>() {
        return data_text(text, "ToolScheduler.add input");
    }
    if input.is_instance_of::<PyBytes>() || input.is_instance_of::<PyByteArray>() {
        return Err(PyTypeError::new_err("input must be JSON text (str) or a JSON value, not bytes"));
    }
    let value = py_to_data(input, MAX_INPUT_DEPTH, "ToolScheduler.add input")?;
    Ok(std::borrow::Cow::Owned(value.to_string()))
}

/// How deep an `input` given as a value may nest (the depth the JSON
/// parsers take by default).
const MAX_INPUT_DEPTH: usize = ssefold::json::PartialJsonLimits::DEFAULT_MAX_DEPTH;

fn provider_of(name: &str) -> PyResult<Provider> {
    Provider::from_name(name).ok_or_else(|| PyValueError::new_err(format!("unknown provider {name:?}")))
}

/// Which ready tool calls to run now, and their results handed back in call
/// order. Sans-IO: it never runs a tool; `ssefold.run_turn` is the asyncio
/// host.
#[pyclass(module = "ssefold")]
pub struct ToolScheduler {
    inner: CoreScheduler,
}

#[pymethods]
impl ToolScheduler {
    #[new]
    #[pyo3(signature = (*, max_concurrency = 0, max_calls = 4096))]
    fn new(max_concurrency: usize, max_calls: usize) -> PyResult<Self> {
        const _: () = assert!(SchedulerConfig::DEFAULT_MAX_CALLS == 4096, "keep the signature's default in step");
        let config = SchedulerConfig { max_concurrency, max_calls };
        Python::attach(|py| config.validate().map_err(|e| e.to_py_err(py)))?;
        Ok(ToolScheduler { inner: CoreScheduler::with_config(config) })
    }

    /// Adds a ready tool call. `input`: its complete arguments, as JSON text
    /// (`str`) or as any JSON value (a `dict`, a `list`, a number, ...),
    /// written as JSON. Its arguments are data: a lone surrogate in them is
    /// U+FFFD, with a `UnicodeWarning`; in `call_id` or `name` it is an
    /// `EncodeError`.
    #[pyo3(signature = (call_id, name, input, *, exclusive = false, abort_siblings_on_error = false))]
    fn add(
        &mut self,
        py: Python<'_>,
        call_id: &Bound<'_, PyString>,
        name: &Bound<'_, PyString>,
        input: &Bound<'_, PyAny>,
        exclusive: bool,
        abort_siblings_on_error: bool,
    ) -> PyResult<()> {
        let (call_id, name) = (ident(call_id, "call_id")?, ident(name, "name")?);
        let input = input_json(input)?;
        let options = ToolOptions::new(exclusive, abort_siblings_on_error);
        self.inner.add(&call_id, &name, &input, options).map_err(|e| scheduler_error(py, &e))
    }

    /// Adds a ready call as the stream gave it (`StreamEvent.tool_call` of
    /// a complete `part_end`): its input was checked by the fold, and a
    /// synthesized id stays marked so (`ToolResult.id_synthesized`).
    #[pyo3(signature = (call, *, exclusive = false, abort_siblings_on_error = false))]
    fn add_call(
        &mut self,
        py: Python<'_>,
        call: &Bound<'_, ToolCallEnd>,
        exclusive: bool,
        abort_siblings_on_error: bool,
    ) -> PyResult<()> {
        let options = ToolOptions::new(exclusive, abort_siblings_on_error);
        self.inner.add_call(&call.get().core(), options).map_err(|e| scheduler_error(py, &e))
    }

    /// Adds a call that must not run, with the error result `output` of
    /// `kind` (`invalid_input`, `incomplete`, `unnamed`, `unknown_tool`):
    /// it still gets its result, in call order.
    fn reject(
        &mut self,
        py: Python<'_>,
        call: &Bound<'_, ToolCallEnd>,
        output: &Bound<'_, PyString>,
        kind: &Bound<'_, PyString>,
    ) -> PyResult<()> {
        let output = data_text(output, "ToolScheduler.reject output")?;
        let kind = lossy(kind)?;
        let kind = [
            ToolResultKind::UnknownTool,
            ToolResultKind::InvalidInput,
            ToolResultKind::Incomplete,
            ToolResultKind::Unnamed,
        ]
        .into_iter()
        .find(|k| k.name() == kind.as_ref())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "kind must be 'unknown_tool', 'invalid_input', 'incomplete' or 'unnamed', not {kind:?}"
            ))
        })?;
        self.inner.reject(&call.get().core(), &output, kind).map_err(|e| scheduler_error(py, &e))
    }

    /// Adds a call to a tool the host does not have (an error result at once).
    fn add_unknown(
        &mut self,
        py: Python<'_>,
        call_id: &Bound<'_, PyString>,
        name: &Bound<'_, PyString>,
    ) -> PyResult<()> {
        let (call_id, name) = (ident(call_id, "call_id")?, ident(name, "name")?);
        self.inner.add_unknown(&call_id, &name).map_err(|e| scheduler_error(py, &e))
    }

    /// The ids of the calls to start now, in call order.
    fn startable(&mut self) -> Vec<String> {
        self.inner.startable()
    }

    /// Progress text of a running call.
    fn update(&mut self, py: Python<'_>, call_id: &Bound<'_, PyString>, text: &Bound<'_, PyString>) -> PyResult<()> {
        let (call_id, text) = (ident(call_id, "call_id")?, data_text(text, "ToolScheduler.update text")?);
        self.inner.update(&call_id, &text).map_err(|e| scheduler_error(py, &e))
    }

    /// The host's result of a running call (a lone surrogate in `output`,
    /// say a file name `os.fsdecode` made: U+FFFD, with a `UnicodeWarning`).
    #[pyo3(signature = (call_id, output, is_error = false))]
    fn finish(
        &mut self,
        py: Python<'_>,
        call_id: &Bound<'_, PyString>,
        output: &Bound<'_, PyString>,
        is_error: bool,
    ) -> PyResult<Finished> {
        let (call_id, output) = (ident(call_id, "call_id")?, data_text(output, "ToolScheduler.finish output")?);
        let f = self.inner.finish(&call_id, &output, is_error).map_err(|e| scheduler_error(py, &e))?;
        Ok(Finished { recorded: f.recorded, cancel: f.cancel })
    }

    /// The results that can be handed back now (call order, each once).
    fn results(&mut self) -> Vec<ToolResult> {
        self.inner.results().into_iter().map(ToolResult::from_core).collect()
    }

    /// Every call's result in call order.
    fn all_results(&self, py: Python<'_>) -> PyResult<Vec<ToolResult>> {
        let all = self.inner.all_results().map_err(|e| scheduler_error(py, &e))?;
        Ok(all.into_iter().map(ToolResult::from_core).collect())
    }

    /// Throws the turn's tool work away; returns the running ids to cancel.
    fn discard(&mut self) -> Vec<String> {
        self.inner.discard()
    }

    /// A user abort; returns the running ids to cancel.
    #[pyo3(signature = (reason = None), text_signature = "($self, reason='')")]
    fn abort(&mut self, reason: Option<&Bound<'_, PyString>>) -> PyResult<Vec<String>> {
        let reason = reason.map(|r| data_text(r, "ToolScheduler.abort reason")).transpose()?;
        Ok(self.inner.abort(reason.as_deref().unwrap_or("")))
    }

    /// The next `tool_execution_*` event, or `None`.
    fn next_event(&mut self) -> Option<ToolExecutionEvent> {
        self.inner.next_event().map(|inner| ToolExecutionEvent { inner })
    }

    /// Every result shaped for the next request of `provider`, as the core
    /// shapes it (`ssefold::tools::tool_results`: one user message for
    /// Anthropic, Bedrock and Converse and Gemini's one content; a list of
    /// messages or items for OpenAI Chat, Responses and Ollama).
    fn tool_results<'py>(&self, py: Python<'py>, provider: &Bound<'_, PyString>) -> PyResult<Bound<'py, PyAny>> {
        let provider = provider_of(&lossy(provider)?)?;
        let all = self.inner.all_results().map_err(|e| scheduler_error(py, &e))?;
        let value = core_tool_results(provider, &all).map_err(|e| scheduler_error(py, &e))?;
        value_to_py(py, &value)
    }

    /// Number of calls running now.
    #[getter]
    fn running(&self) -> usize {
        self.inner.running()
    }

    /// Whether every call added has its result.
    #[getter]
    fn is_settled(&self) -> bool {
        self.inner.is_settled()
    }

    /// Whether `discard` was called.
    #[getter]
    fn is_discarded(&self) -> bool {
        self.inner.is_discarded()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// Registers the classes (`SchedulerError` is registered with the other
/// exceptions).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ToolScheduler>()?;
    m.add_class::<ToolResult>()?;
    m.add_class::<ToolExecutionEvent>()?;
    m.add_class::<Finished>()?;
    Ok(())
}
