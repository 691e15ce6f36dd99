//! `Stream` and one subclass per dialect (`AnthropicStream`,
//! `OpenAIChatStream`, `OpenAIResponsesStream`, `GeminiStream`,
//! `OllamaStream`, `BedrockStream`, `BedrockConverseStream`: the `dialect!`
//! lines at the end) over `ssefold::providers`: normalized events as
//! `StreamEvent` objects, the folded message as a `dict`.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use pyo3::exceptions::{PyAttributeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyType};

use ssefold::providers::{
    PartKind, Provider, Stream as CoreStream, StreamConfig as CoreConfig, StreamEvent as CoreEvent,
    ToolCall as CoreToolCall, ToolCallStart as CoreToolCallStart, ToolInputFormat,
};
use ssefold::reconnect::ConnectionState;
use ssefold::sse::Event;
use ssefold::ui::UiState as CoreUiState;

use crate::config::{stream_config_arg, StreamConfig};
use crate::convert::{
    ident, lossy, message_to_py, py_to_data, py_to_value, value_to_py, with_bytes, LazyText, SharedText, StringCache,
    TextArena,
};
use crate::errors::{with_events, ToPyErr};
use crate::partial_json::{HeldPath, PathCache, PathEvent};
use crate::reconnect::ResumeCursor;
use crate::sse::ServerSentEvent;
use crate::tools::ToolExecutionEvent;

/// One normalized stream event (immutable): `.type` is its wire name, every
/// other field of the wire form is an attribute (`.part`, `.text`, …).
#[pyclass(module = "ssefold", frozen)]
pub struct StreamEvent {
    repr: Repr,
    /// The core's `StreamEvent::is_content`, noted when the event was made.
    content: bool,
}

/// What a `StreamEvent` holds. The frequent deltas are compact: their part
/// and their text as Rust owns it (copied while the GIL was released), the
/// `str` built on first access and kept; the rest are a `dict` of fields.
enum Repr {
    /// `text_delta` (field `text`) or `tool_args_delta` (field `json`).
    Delta { args: bool, part: u32, text: LazyText },
    /// `tool_args_path`: its `PathEvent` built on first access (most
    /// callers count or skip path events), then kept.
    /// Its text, if any, a range of `texts` (the call's shared buffer).
    Path { part: u32, held: HeldPath, texts: Arc<SharedText>, event: OnceLock<Py<PathEvent>> },
    /// Any other event: its wire name and fields; a `part_end`'s `content`
    /// (the whole part: a long text's every byte) converted when first read.
    Fields { type_: Py<PyString>, fields: Py<PyDict>, lazy: Option<Box<LazyField>> },
}

/// A last field kept as JSON (copied while the GIL was released), its
/// Python value built on first access and kept.
struct LazyField {
    key: &'static str,
    value: serde_json::Value,
    py_value: OnceLock<Py<PyAny>>,
}

impl LazyField {
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(v) = self.py_value.get() {
            return Ok(v.bind(py).clone());
        }
        let v = value_to_py(py, &self.value)?;
        Ok(self.py_value.get_or_init(|| v.unbind()).bind(py).clone())
    }
}

impl StreamEvent {
    fn type_<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        match &self.repr {
            Repr::Delta { args: false, .. } => intern!(py, "text_delta").clone(),
            Repr::Delta { args: true, .. } => intern!(py, "tool_args_delta").clone(),
            Repr::Path { .. } => intern!(py, "tool_args_path").clone(),
            Repr::Fields { type_, .. } => type_.bind(py).clone(),
        }
    }

    /// The fields besides `type`, in wire order.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyString>, Bound<'py, PyAny>)>> {
        Ok(match &self.repr {
            Repr::Delta { args, part, .. } => {
                let key = if *args { intern!(py, "json") } else { intern!(py, "text") };
                vec![
                    (intern!(py, "part").clone(), part.into_pyobject(py)?.into_any()),
                    (key.clone(), self.delta_text(py).into_any()),
                ]
            }
            Repr::Path { part, .. } => vec![
                (intern!(py, "part").clone(), part.into_pyobject(py)?.into_any()),
                (intern!(py, "path_event").clone(), self.held_path_event(py)?.into_any()),
            ],
            Repr::Fields { fields, lazy, .. } => {
                let mut items = fields
                    .bind(py)
                    .iter()
                    .map(|(k, v)| Ok((k.cast_into::<PyString>()?, v)))
                    .collect::<PyResult<Vec<_>>>()?;
                if let Some(lazy) = lazy {
                    items.push((PyString::intern(py, lazy.key), lazy.get(py)?));
                }
                items
            }
        })
    }

    /// A `tool_args_path` event's `PathEvent`, built on first access.
    fn held_path_event<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PathEvent>> {
        let Repr::Path { held, texts, event, .. } = &self.repr else {
            return Err(PyAttributeError::new_err("path_event"));
        };
        if let Some(e) = event.get() {
            return Ok(e.bind(py).clone());
        }
        let built = Py::new(py, PathEvent::from_held(py, held, texts)?)?;
        Ok(event.get_or_init(|| built).bind(py).clone())
    }

    /// A delta's text as a `str`, built on first access.
    fn delta_text<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        match &self.repr {
            Repr::Delta { text, .. } => text.get(py).clone(),
            _ => PyString::new(py, ""),
        }
    }

    /// The field `name`, or `AttributeError` when this event has none.
    fn field<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let found = match &self.repr {
            Repr::Delta { args, part, .. } => match name {
                "part" => Some(part.into_pyobject(py)?.into_any()),
                "json" if *args => Some(self.delta_text(py).into_any()),
                "text" if !*args => Some(self.delta_text(py).into_any()),
                _ => None,
            },
            Repr::Path { part, .. } => match name {
                "part" => Some(part.into_pyobject(py)?.into_any()),
                "path_event" => Some(self.held_path_event(py)?.into_any()),
                _ => None,
            },
            Repr::Fields { fields, lazy, .. } => match lazy {
                Some(lazy) if lazy.key == name => Some(lazy.get(py)?),
                _ => fields.bind(py).get_item(name)?,
            },
        };
        found.ok_or_else(|| {
            let ty = self.type_(py);
            PyAttributeError::new_err(format!("{:?} event has no attribute {name:?}", ty.to_string_lossy()))
        })
    }
}

/// How deep an event's JSON payload may nest when it is rebuilt: the
/// deepest tool arguments the core takes, inside their part.
const JSON_DEPTH: usize = ssefold::json::PartialJsonLimits::DEFAULT_MAX_DEPTH + 8;

impl StreamEvent {
    /// The core event this object was made from, rebuilt for `f` (a turn
    /// fed by the host's own stream): scalars and texts as the object holds
    /// them, a tool call from its Rust-held call, a text part's content from
    /// the JSON kept for it; only the other JSON payloads (a message, usage,
    /// metadata, a non-text part's content, a scalar path value) are
    /// converted back from their Python objects, without JSON text.
    pub(crate) fn with_core<R>(&self, py: Python<'_>, f: impl FnOnce(&CoreEvent<'_>) -> R) -> PyResult<R> {
        use ssefold::providers::{PartOutcome, ProviderError, WarningCode};
        let (type_, fields, lazy) = match &self.repr {
            Repr::Delta { args, part, text } => {
                let text = text.to_cow(py)?;
                let part = *part;
                return Ok(if *args {
                    f(&CoreEvent::ToolArgsDelta { part, json: &text })
                } else {
                    f(&CoreEvent::TextDelta { part, text: &text })
                });
            }
            Repr::Path { part, .. } => {
                let event = self.held_path_event(py)?;
                return event.get().with_core(py, |event| f(&CoreEvent::ToolArgsPath { part: *part, event }));
            }
            Repr::Fields { type_, fields, lazy } => (type_.bind(py).to_cow()?, fields.bind(py), lazy),
        };
        let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
            fields.get_item(key)?.ok_or_else(|| PyValueError::new_err(format!("{type_} event without {key:?}")))
        };
        let text = |key: &str| -> PyResult<String> { get(key)?.extract() };
        let part = || -> PyResult<u32> { get("part")?.extract() };
        let kind = || -> PyResult<PartKind> {
            let name = text("kind")?;
            [
                PartKind::Text,
                PartKind::Reasoning,
                PartKind::ToolCall,
                PartKind::Refusal,
                PartKind::Media,
                PartKind::Other,
            ]
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| PyValueError::new_err(format!("unknown part kind {name:?}")))
        };
        let value = |key: &str| -> PyResult<serde_json::Value> { py_to_value(&get(key)?, JSON_DEPTH) };
        Ok(match type_.as_ref() {
            "message_start" => {
                let name = text("provider")?;
                let provider = Provider::from_name(&name)
                    .ok_or_else(|| PyValueError::new_err(format!("unknown provider {name:?}")))?;
                f(&CoreEvent::MessageStart { provider: provider.name(), message: &value("message")? })
            }
            "part_start" => {
                let call = fields.get_item(intern!(py, "tool_call"))?.filter(|c| !c.is_none());
                let call = call.as_ref().map(|c| c.cast::<ToolCallStart>()).transpose()?;
                f(&CoreEvent::PartStart {
                    part: part()?,
                    kind: kind()?,
                    choice: get("choice")?.extract()?,
                    index: get("index")?.extract()?,
                    provider_type: &text("provider_type")?,
                    tool_call: call.map(|c| c.get().core()),
                })
            }
            "media_delta" => {
                let data = get("data")?;
                let data = data.cast::<pyo3::types::PyBytes>()?;
                f(&CoreEvent::MediaDelta { part: part()?, mime_type: &text("mime_type")?, data: data.as_bytes() })
            }
            "part_metadata" => {
                f(&CoreEvent::PartMetadata { part: part()?, key: &text("key")?, value: &value("value")? })
            }
            "part_end" => {
                let (error, raw) = match fields.get_item(intern!(py, "error"))? {
                    Some(error) => (error.extract::<String>()?, text("raw")?),
                    None => (String::new(), String::new()),
                };
                let outcome = match text("outcome")?.as_str() {
                    "complete" => PartOutcome::Complete,
                    "invalid_arguments" => PartOutcome::InvalidArguments { error: &error, raw: &raw },
                    _ => PartOutcome::Incomplete,
                };
                let converted;
                let content = match lazy {
                    Some(lazy) if lazy.key == "content" => &lazy.value,
                    _ => {
                        converted = value("content")?;
                        &converted
                    }
                };
                let call = fields.get_item(intern!(py, "tool_call"))?.filter(|c| !c.is_none());
                let call = call.as_ref().map(|c| c.cast::<ToolCallEnd>()).transpose()?;
                f(&CoreEvent::PartEnd {
                    part: part()?,
                    kind: kind()?,
                    outcome,
                    content,
                    tool_call: call.map(|c| c.get().core()),
                })
            }
            "usage" => f(&CoreEvent::Usage { usage: &value("usage")? }),
            "stop_reason" => f(&CoreEvent::StopReason { choice: get("choice")?.extract()?, reason: &text("reason")? }),
            "turn_end" => {
                let reason: Option<String> = get("stop_reason")?.extract()?;
                f(&CoreEvent::TurnEnd { stop_reason: reason.as_deref() })
            }
            "turn_reset" => f(&CoreEvent::TurnReset),
            "error" => {
                let error = ProviderError {
                    error_type: text("error_type")?,
                    message: text("message")?,
                    request_id: get("request_id")?.extract()?,
                    output_emitted: get("output_emitted")?.extract()?,
                };
                f(&CoreEvent::Error { error: &error })
            }
            "warning" => {
                let name = text("code")?;
                let code = WarningCode::from_name(&name)
                    .ok_or_else(|| PyValueError::new_err(format!("unknown warning code {name:?}")))?;
                f(&CoreEvent::Warning { code, message: &text("message")? })
            }
            "unknown" => {
                let scope = if text("scope")? == "delta" { "delta" } else { "event" };
                f(&CoreEvent::Unknown { scope, provider_type: &text("provider_type")?, data: &text("data")? })
            }
            other => return Err(PyValueError::new_err(format!("unknown event type {other:?}"))),
        })
    }
}

#[pymethods]
impl StreamEvent {
    /// The wire name: `message_start`, `part_start`, `text_delta`,
    /// `media_delta`, `tool_args_delta`, `tool_args_path`, `part_metadata`,
    /// `part_end`, `usage`, `stop_reason`, `turn_end`, `error`, `warning`,
    /// `unknown`.
    #[getter]
    fn r#type(&self, py: Python<'_>) -> Py<PyString> {
        self.type_(py).unbind()
    }

    /// Whether the event is content (the core's `StreamEvent::is_content`):
    /// a part starting or ending, text, arguments, media, metadata, usage,
    /// the stop reason, the turn's end. A `message_start`, a keep-alive
    /// (`unknown`), an `error` or a `warning` is not: a stream that sends
    /// only those is stalled. A host tells its `Reconnector.on_content`.
    #[getter]
    fn is_content(&self) -> bool {
        self.content
    }

    // The fields of the wire form (module table of `ssefold::providers`),
    // one getter each so that they are visible to `dir()` and stubtest; an
    // event type without the field raises `AttributeError`.
    #[getter]
    fn provider<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "provider")
    }
    #[getter]
    fn message<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "message")
    }
    #[getter]
    fn part<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "part")
    }
    #[getter]
    fn kind<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "kind")
    }
    #[getter]
    fn choice<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "choice")
    }
    #[getter]
    fn index<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "index")
    }
    #[getter]
    fn provider_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "provider_type")
    }
    #[getter]
    fn text<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "text")
    }
    #[getter]
    fn json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "json")
    }
    #[getter]
    fn path_event<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "path_event")
    }
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "key")
    }
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "value")
    }
    #[getter]
    fn outcome<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "outcome")
    }
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "content")
    }
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "error")
    }
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "raw")
    }
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "usage")
    }
    #[getter]
    fn reason<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "reason")
    }
    #[getter]
    fn stop_reason<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "stop_reason")
    }
    #[getter]
    fn error_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "error_type")
    }
    #[getter]
    fn request_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "request_id")
    }
    #[getter]
    fn output_emitted<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "output_emitted")
    }
    #[getter]
    fn code<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "code")
    }
    #[getter]
    fn scope<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "scope")
    }
    /// `unknown`: the event's JSON text; `media_delta`: the decoded bytes
    /// (`bytes`).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "data")
    }
    #[getter]
    fn mime_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.field(py, "mime_type")
    }
    /// `part_start`: a `ToolCallStart`, `part_end`: a `ToolCallEnd`, for a
    /// `tool_call` part; `None` for every other event (no field lookup for
    /// the deltas).
    #[getter]
    fn tool_call<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.repr {
            Repr::Fields { fields, .. } => {
                Ok(fields.bind(py).get_item(intern!(py, "tool_call"))?.unwrap_or_else(|| py.None().into_bound(py)))
            }
            _ => Ok(py.None().into_bound(py)),
        }
    }

    /// The fields as a dict: `{"event": type, ...fields}`, the key of the
    /// event's name every binding's JSON form uses (Rust `to_json`, C
    /// `event->json`, Go `StreamEvent.JSON`, the CLI's JSON lines); before
    /// 0.2 it was `"type"`. A `tool_args_path`'s `path_event` and a tool
    /// call part's `tool_call` are dicts too.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item(intern!(py, "event"), self.type_(py))?;
        for (k, v) in self.items(py)? {
            if let Ok(pe) = v.cast::<PathEvent>() {
                d.set_item(k, pe.get().to_dict_py(py)?)?;
            } else if let Ok(call) = v.cast::<ToolCallEnd>() {
                d.set_item(k, call.get().to_dict(py)?)?;
            } else if let Ok(call) = v.cast::<ToolCallStart>() {
                d.set_item(k, call.get().to_dict(py)?)?;
            } else {
                d.set_item(k, v)?;
            }
        }
        Ok(d)
    }

    /// The names of the fields besides `type`.
    fn fields(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.items(py)?.into_iter().map(|(k, _)| k.extract()).collect()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>, py: Python<'_>) -> PyResult<bool> {
        match other.cast::<StreamEvent>() {
            Ok(o) => self.to_dict(py)?.eq(o.get().to_dict(py)?),
            Err(_) => Ok(false),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut s = format!("StreamEvent(type={}", self.type_(py).repr()?);
        for (k, v) in self.items(py)? {
            s.push_str(&format!(", {k}={}", v.repr()?));
        }
        s.push(')');
        Ok(s)
    }
}

/// What a `tool_call` part's `part_start` says of its call
/// (`StreamEvent.tool_call`, immutable): the id and the name when the
/// provider sent them with the start (else `None`), how its input is
/// written, whether the provider runs it.
#[pyclass(module = "ssefold", frozen, eq, get_all)]
#[derive(Clone, PartialEq)]
pub struct ToolCallStart {
    /// The provider's id of the call, when it came with the start.
    id: Option<String>,
    /// The tool's name, when it came with the start.
    name: Option<String>,
    /// `json` or `text` (a free-text custom tool input).
    input_format: &'static str,
    /// The provider runs the call itself: a host never runs it.
    provider_executed: bool,
}

impl ToolCallStart {
    fn from_core(c: &CoreToolCallStart<'_>) -> Self {
        ToolCallStart {
            id: c.id.map(str::to_owned),
            name: c.name.map(str::to_owned),
            input_format: c.input_format.name(),
            provider_executed: c.provider_executed,
        }
    }

    /// The core view of this start.
    pub(crate) fn core(&self) -> CoreToolCallStart<'_> {
        CoreToolCallStart {
            id: self.id.as_deref(),
            name: self.name.as_deref(),
            input_format: input_format_of(self.input_format),
            provider_executed: self.provider_executed,
        }
    }
}

#[pymethods]
impl ToolCallStart {
    /// The JSON form: `{"id", "name", "input_format", "provider_executed"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.core().to_json())
    }

    fn __repr__(&self) -> String {
        format!("ToolCallStart({})", self.core().to_json())
    }
}

/// A tool call as its part's `part_end` gives it, provider-neutral
/// (`StreamEvent.tool_call`, immutable): `id` (the provider's, or
/// `ssefold_call_<part>` when it sent none or repeated one:
/// `id_synthesized`), `name` (`""` when the provider sent none),
/// `arguments` (JSON text; free text when `input_format` is `text`; the raw
/// text received when the part did not end `complete`), `provider_executed`.
#[pyclass(module = "ssefold", frozen, eq, get_all)]
#[derive(Clone, PartialEq)]
pub struct ToolCallEnd {
    /// The provider's id of the call, or the synthesized one.
    id: String,
    /// Whether `id` was synthesized.
    id_synthesized: bool,
    /// The tool's name.
    name: String,
    /// The input as text.
    arguments: String,
    /// `json` or `text`.
    input_format: &'static str,
    /// The provider runs the call itself: a host never runs it.
    provider_executed: bool,
}

impl ToolCallEnd {
    fn from_core(c: &CoreToolCall<'_>) -> Self {
        ToolCallEnd {
            id: c.id.to_owned(),
            id_synthesized: c.id_synthesized,
            name: c.name.to_owned(),
            arguments: c.arguments.to_owned(),
            input_format: c.input_format.name(),
            provider_executed: c.provider_executed,
        }
    }

    /// The core view of this call.
    pub(crate) fn core(&self) -> CoreToolCall<'_> {
        CoreToolCall {
            id: &self.id,
            id_synthesized: self.id_synthesized,
            name: &self.name,
            arguments: &self.arguments,
            input_format: input_format_of(self.input_format),
            provider_executed: self.provider_executed,
        }
    }
}

#[pymethods]
impl ToolCallEnd {
    /// The JSON form: `{"id", "id_synthesized", "name", "arguments",
    /// "input_format", "provider_executed"}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &self.core().to_json())
    }

    fn __repr__(&self) -> String {
        format!("ToolCallEnd({})", self.core().to_json())
    }
}

/// The core format of a wire name this binding wrote (`json` otherwise).
fn input_format_of(name: &str) -> ToolInputFormat {
    ToolInputFormat::from_name(name).unwrap_or_default()
}

/// Builds `StreamEvent`s, with fast paths for the frequent deltas.
#[derive(Default)]
pub(crate) struct EventBuilder {
    names: StringCache,
    /// The Python strings of field names.
    keys: StringCache,
}

impl EventBuilder {
    /// The Python events of a batch collected without the GIL
    /// (`StreamEvent`s, and the `ToolExecutionEvent`s of a turn).
    pub(crate) fn build_held<'py>(&mut self, py: Python<'py>, held: &mut Held) -> PyResult<Bound<'py, PyList>> {
        let mut out: Vec<Py<PyAny>> = Vec::with_capacity(held.events.len());
        let texts = held.texts.share();
        for (h, content) in held.events.drain(..) {
            let fields;
            let mut lazy = None;
            let name = match h {
                HeldEvent::Delta { args, part, text } => {
                    let repr = Repr::Delta { args, part, text: LazyText::shared(&texts, text) };
                    out.push(Py::new(py, StreamEvent { repr, content })?.into_any());
                    continue;
                }
                HeldEvent::Media { part, mime_type, data } => {
                    fields = PyDict::new(py);
                    fields.set_item(intern!(py, "part"), part)?;
                    fields.set_item(intern!(py, "mime_type"), PyString::new(py, &mime_type))?;
                    fields.set_item(intern!(py, "data"), pyo3::types::PyBytes::new(py, &data))?;
                    "media_delta"
                }
                HeldEvent::Path { part, event } => {
                    let repr = Repr::Path { part, held: event, texts: Arc::clone(&texts), event: OnceLock::new() };
                    out.push(Py::new(py, StreamEvent { repr, content })?.into_any());
                    continue;
                }
                HeldEvent::PartStart(start) => {
                    let HeldPartStart { part, kind, choice, index, provider_type, call } = *start;
                    fields = PyDict::new(py);
                    fields.set_item(intern!(py, "part"), part)?;
                    fields.set_item(intern!(py, "kind"), kind)?;
                    fields.set_item(intern!(py, "choice"), choice)?;
                    fields.set_item(intern!(py, "index"), index)?;
                    fields.set_item(intern!(py, "provider_type"), self.names.get(py, &provider_type))?;
                    if let Some(call) = call {
                        fields.set_item(intern!(py, "tool_call"), Py::new(py, call)?)?;
                    }
                    "part_start"
                }
                HeldEvent::PartEnd(end) => {
                    let HeldPartEnd { part, kind, outcome, invalid, content, call } = *end;
                    fields = PyDict::new(py);
                    fields.set_item(intern!(py, "part"), part)?;
                    fields.set_item(intern!(py, "kind"), kind)?;
                    fields.set_item(intern!(py, "outcome"), outcome)?;
                    if let Some((error, raw)) = invalid {
                        fields.set_item(intern!(py, "error"), error)?;
                        fields.set_item(intern!(py, "raw"), raw)?;
                    }
                    match content {
                        HeldContent::Json(value) => {
                            lazy = Some(Box::new(LazyField { key: "content", value, py_value: OnceLock::new() }));
                        }
                        HeldContent::Converted(value) => fields.set_item(intern!(py, "content"), value?)?,
                    }
                    // A tool call's content is converted above (never lazy):
                    // its call follows it, in wire order.
                    if let Some(call) = call {
                        fields.set_item(intern!(py, "tool_call"), Py::new(py, call)?)?;
                    }
                    "part_end"
                }
                HeldEvent::Tool(inner) => {
                    out.push(Py::new(py, ToolExecutionEvent::new(*inner))?.into_any());
                    continue;
                }
                HeldEvent::Fields { name, fields: held } => {
                    fields = PyDict::new(py);
                    for (k, v) in &held {
                        fields.set_item(self.keys.get(py, k), value_to_py(py, v)?)?;
                    }
                    name
                }
            };
            let repr = Repr::Fields { type_: self.names.get(py, name), fields: fields.unbind(), lazy };
            out.push(Py::new(py, StreamEvent { repr, content })?.into_any());
        }
        PyList::new(py, out)
    }
}

/// One normalized event held without the GIL: the frequent deltas with
/// their text, the rest in wire form.
enum HeldEvent {
    /// A `text_delta` or (`args`) a `tool_args_delta`: the text copied
    /// without the GIL into the call's [`TextArena`], shared by the
    /// `StreamEvent`s made from it.
    Delta {
        args: bool,
        part: u32,
        text: Range<usize>,
    },
    Path {
        part: u32,
        event: HeldPath,
    },
    /// A `media_delta`: its MIME type and bytes copied without the GIL.
    Media {
        part: u32,
        mime_type: Box<str>,
        data: Box<[u8]>,
    },
    /// A `part_start`, a `tool_call` part's with its call (boxed, as the
    /// other rare events: the frequent deltas stay small to move).
    PartStart(Box<HeldPartStart>),
    /// A `part_end`, a `tool_call` part's with its call.
    PartEnd(Box<HeldPartEnd>),
    /// A `tool_execution_*` event of a turn.
    Tool(Box<ssefold::tools::ToolExecutionEvent>),
    /// Any other event: its wire name and fields, named by static strings.
    Fields {
        name: &'static str,
        fields: Vec<(&'static str, serde_json::Value)>,
    },
}

/// A held `part_start`.
struct HeldPartStart {
    part: u32,
    kind: &'static str,
    choice: u32,
    index: u64,
    provider_type: String,
    call: Option<ToolCallStart>,
}

/// A held `part_end`.
struct HeldPartEnd {
    part: u32,
    kind: &'static str,
    outcome: &'static str,
    /// `invalid_arguments`: the error and the raw text.
    invalid: Option<(String, String)>,
    content: HeldContent,
    call: Option<ToolCallEnd>,
}

/// A `part_end`'s `content`: a text part's copied as JSON (its text: one
/// copy made without the GIL), converted when first read; any other part's
/// (a tool call's holds its whole arguments, of any shape) converted during
/// the step with the GIL taken back, never copied into Rust.
enum HeldContent {
    Json(serde_json::Value),
    Converted(PyResult<Py<PyAny>>),
}

/// Each open tool call's path cache, by part id: a turn has a few calls
/// open at once, found in a short list searched in order (no hashing per
/// event); past [`PartPaths::SCANNED`] open calls (a stream that keeps
/// thousands open), the others in a map, so a lookup stays O(1).
#[derive(Default)]
struct PartPaths {
    few: Vec<(u32, PathCache)>,
    many: HashMap<u32, PathCache>,
}

impl PartPaths {
    /// How many calls' caches the list holds.
    const SCANNED: usize = 8;

    /// Part `part`'s cache, made when first asked for.
    fn of(&mut self, part: u32) -> &mut PathCache {
        let at = match self.few.iter().position(|(p, _)| *p == part) {
            Some(at) => at,
            None if self.few.len() < Self::SCANNED && !self.many.contains_key(&part) => {
                self.few.push((part, PathCache::default()));
                self.few.len() - 1
            }
            None => return self.many.entry(part).or_default(),
        };
        &mut self.few[at].1
    }

    /// Forgets part `part`'s cache (its call is committed).
    fn remove(&mut self, part: u32) {
        self.few.retain(|(p, _)| *p != part);
        if !self.many.is_empty() {
            self.many.remove(&part);
        }
    }

    fn clear(&mut self) {
        self.few.clear();
        self.many.clear();
    }
}

/// The events of one step, owned, collected with the GIL released; reused
/// from call to call (its buffers keep their capacity).
#[derive(Default)]
pub(crate) struct Held {
    /// Each event, with whether it is content (`StreamEvent::is_content`).
    events: Vec<(HeldEvent, bool)>,
    /// The deltas' texts.
    texts: TextArena,
    /// Each tool call's current path (shared nodes: a path event costs O(1)).
    paths: PartPaths,
}

impl Held {
    pub(crate) fn push(&mut self, e: &CoreEvent<'_>) {
        match *e {
            // A committed call's path stack is done with (a new document
            // starts at its root, so a reused part id rebuilds it anyway).
            CoreEvent::PartEnd { part, .. } => self.paths.remove(part),
            CoreEvent::TurnReset => self.paths.clear(),
            _ => {}
        }
        let held = match *e {
            CoreEvent::TextDelta { part, text } => HeldEvent::Delta { args: false, part, text: self.texts.push(text) },
            CoreEvent::ToolArgsDelta { part, json } => {
                HeldEvent::Delta { args: true, part, text: self.texts.push(json) }
            }
            CoreEvent::MediaDelta { part, mime_type, data } => {
                HeldEvent::Media { part, mime_type: mime_type.into(), data: data.into() }
            }
            CoreEvent::ToolArgsPath { part, event } => {
                let texts = &mut self.texts;
                let keep = |text: &str| texts.push(text);
                HeldEvent::Path { part, event: HeldPath::from_core(event, self.paths.of(part), keep) }
            }
            CoreEvent::PartStart { part, kind, choice, index, provider_type, tool_call } => {
                HeldEvent::PartStart(Box::new(HeldPartStart {
                    part,
                    kind: kind.name(),
                    choice,
                    index,
                    provider_type: provider_type.to_owned(),
                    call: tool_call.as_ref().map(ToolCallStart::from_core),
                }))
            }
            CoreEvent::PartEnd { part, kind, outcome, content, tool_call } => {
                let invalid = match outcome {
                    ssefold::providers::PartOutcome::InvalidArguments { error, raw } => {
                        Some((error.into(), raw.into()))
                    }
                    _ => None,
                };
                let content = if matches!(kind, PartKind::Text | PartKind::Reasoning | PartKind::Refusal) {
                    HeldContent::Json(content.clone())
                } else {
                    HeldContent::Converted(Python::attach(|py| value_to_py(py, content).map(Bound::unbind)))
                };
                HeldEvent::PartEnd(Box::new(HeldPartEnd {
                    part,
                    kind: kind.name(),
                    outcome: outcome.name(),
                    invalid,
                    content,
                    call: tool_call.as_ref().map(ToolCallEnd::from_core),
                }))
            }
            // The other events: their fields under the core's static names
            // (no JSON map with allocated keys).
            _ => {
                let mut fields = Vec::with_capacity(4);
                e.for_each_field(|k, v| fields.push((k, v)));
                HeldEvent::Fields { name: e.name(), fields }
            }
        };
        self.events.push((held, e.is_content()));
    }

    /// A turn's `tool_execution_*` event, in order with the stream's.
    pub(crate) fn push_tool(&mut self, e: &ssefold::tools::ToolExecutionEvent) {
        self.events.push((HeldEvent::Tool(Box::new(e.clone())), false));
    }

    /// Room for the events `bytes` of body may complete (about one per 64
    /// bytes: no provider's event is shorter), so that a new stream's
    /// first chunks do not grow the list event by event.
    pub(crate) fn reserve_for(&mut self, bytes: usize) {
        self.events.reserve((bytes / 64).min(1 << 12));
    }

    pub(crate) fn clear(&mut self) {
        self.events.clear();
        self.texts.clear();
        // A huge step does not pin its memory for the stream's life.
        if self.events.capacity() > 1 << 16 {
            self.events = Vec::new();
        }
    }
}

/// One streamed turn of a provider's API: feed the HTTP body, get
/// normalized events, read the folded message at any time.
#[pyclass(module = "ssefold", subclass)]
pub struct Stream {
    pub(crate) inner: CoreStream,
    builder: EventBuilder,
    /// The normalized events of the step being run, collected without the
    /// GIL (empty between calls; kept for its capacity).
    held: Held,
    /// The UI state model, when created with `ui=True`.
    ui: Option<CoreUiState>,
}

impl Stream {
    fn with_provider(provider: Provider, config: CoreConfig, ui: bool) -> Self {
        Stream {
            ui: ui.then(|| CoreUiState::with_media_budget(config.max_memory_bytes)),
            inner: CoreStream::with_config(provider, config),
            builder: EventBuilder::default(),
            held: Held::default(),
        }
    }

    /// The host time for the UI state: `now_ms`, else `time.monotonic()` in
    /// milliseconds (asked only when the UI state is on).
    fn now_ms(&self, py: Python<'_>, now_ms: Option<u64>) -> PyResult<u64> {
        match (now_ms, &self.ui) {
            (Some(t), _) => Ok(t),
            (None, None) => Ok(0),
            (None, Some(_)) => {
                let secs: f64 = py.import(intern!(py, "time"))?.call_method0(intern!(py, "monotonic"))?.extract()?;
                Ok((secs * 1000.0) as u64)
            }
        }
    }

    /// Runs one step of the core with the GIL released: the normalized
    /// events (and the UI state) are collected into the reused Rust-side
    /// batch, then the Python objects are built with the GIL held.
    fn run<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: Option<u64>,
        step: impl FnOnce(&mut CoreStream, &mut dyn FnMut(&CoreEvent<'_>)) -> Result<(), ssefold::providers::StreamError>
            + Send,
    ) -> PyResult<Bound<'py, PyList>> {
        let now_ms = self.now_ms(py, now_ms)?;
        let mut held = std::mem::take(&mut self.held);
        let inner = &mut self.inner;
        let ui = &mut self.ui;
        let result = py.detach(|| {
            step(inner, &mut |e| {
                if let Some(ui) = ui.as_mut() {
                    ui.apply(e, now_ms);
                }
                held.push(e);
            })
        });
        let built = self.builder.build_held(py, &mut held);
        held.clear();
        self.held = held;
        let list = built?;
        match result {
            Ok(()) => Ok(list),
            Err(e) => Err(with_events(py, e.to_py_err(py), &list)),
        }
    }
}

#[pymethods]
impl Stream {
    /// `Stream[UiState]` (the stubs' type parameter: the type of `.ui`) is
    /// `Stream` itself at runtime, so annotations evaluate.
    #[classmethod]
    fn __class_getitem__(cls: &Bound<'_, PyType>, _item: &Bound<'_, PyAny>) -> Py<PyType> {
        cls.clone().unbind()
    }

    /// `Stream(provider="auto", *, config=None, ui=False)`: `config` is a
    /// `StreamConfig` (default: the core's); the keywords of its fields are
    /// deprecated (`DeprecationWarning`) and checked the same way.
    #[new]
    #[pyo3(signature = (provider = "auto", *, config = None, ui = false, **options))]
    fn new(
        py: Python<'_>,
        provider: &str,
        config: Option<&Bound<'_, StreamConfig>>,
        ui: bool,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let p = Provider::from_name(provider)
            .ok_or_else(|| PyValueError::new_err(format!("unknown provider {provider:?}")))?;
        let config = stream_config_arg(py, "Stream", config, options)?;
        Ok(Stream::with_provider(p, config, ui))
    }

    /// Feeds bytes of the HTTP body; returns the normalized events they
    /// completed. The core folds with the GIL released (other threads run
    /// meanwhile); the event objects are built after, with it held. Errors (provider error, invalid data, limits) raise an
    /// `ssefold.Error` whose `.events` holds the events before it; the
    /// stream is then closed, `message` stays readable. `now_ms` is the
    /// host time stamped on the UI state (default: `time.monotonic()` in ms).
    #[pyo3(signature = (data, now_ms = None))]
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        now_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        with_bytes(data, |chunk| {
            self.held.reserve_for(chunk.len());
            self.run(py, now_ms, |s, sink| s.feed(chunk, sink))
        })?
    }

    /// Feeds one SSE event already decoded by your own `SSEDecoder` (for
    /// hosts that reconnect: the decoder's state spans connections). Do not
    /// mix with `feed` on the same stream.
    #[pyo3(signature = (event, now_ms = None))]
    fn feed_event<'py>(
        &mut self,
        py: Python<'py>,
        event: &Bound<'py, ServerSentEvent>,
        now_ms: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let e = event.get();
        let event_type = e.event_type(py);
        let name = event_type.to_cow()?;
        let data = e.data.to_cow(py)?;
        let id = e.id.as_ref().map(|s| s.bind(py).to_cow()).transpose()?;
        let ev = Event::new(&name, &data, id.as_deref(), e.retry);
        self.run(py, now_ms, |s, sink| s.feed_sse(&ev, sink))
    }

    /// Ends the stream; returns the last events (warnings, parts committed
    /// as incomplete). Raises `IncompleteStreamError` when the terminal
    /// event never came (`.events` holds those last events).
    #[pyo3(signature = (now_ms = None))]
    fn finish<'py>(&mut self, py: Python<'py>, now_ms: Option<u64>) -> PyResult<Bound<'py, PyList>> {
        self.run(py, now_ms, |s, sink| s.finish(sink))
    }

    /// The user cancelled: returns the one `turn_end` event with
    /// `stop_reason="aborted"` (nothing when the turn was already over).
    /// Open parts are dropped silently; committed parts stay in `message`.
    #[pyo3(signature = (now_ms = None))]
    fn abort<'py>(&mut self, py: Python<'py>, now_ms: Option<u64>) -> PyResult<Bound<'py, PyList>> {
        self.run(py, now_ms, |s, sink| {
            s.abort(sink);
            Ok(())
        })
    }

    /// The connection dropped and the body of a new one follows: the event
    /// left unfinished is discarded, and the new body's first event decides
    /// restart (a `turn_reset` event, then the answer from the start) or
    /// resume. Raises `StreamClosedError` after finish/abort/an error.
    fn reconnect(&mut self, py: Python<'_>) -> PyResult<()> {
        self.inner.reconnect().map_err(|e| e.to_py_err(py))
    }

    /// What to send on reconnection (`Last-Event-ID` or the Responses
    /// `starting_after`), see `ResumeCursor.headers()`.
    #[getter]
    fn resume_cursor(&self) -> ResumeCursor {
        ResumeCursor { inner: self.inner.resume_cursor() }
    }

    /// The SSE last event ID (kept across reconnections).
    #[getter]
    fn last_event_id(&self) -> Option<&str> {
        self.inner.last_event_id()
    }

    /// The server's reconnection time (`retry:`), in milliseconds.
    #[getter]
    fn reconnection_time(&self) -> Option<u64> {
        self.inner.reconnection_time()
    }

    /// The highest Responses `sequence_number` applied.
    #[getter]
    fn last_sequence_number(&self) -> Option<u64> {
        self.inner.last_sequence_number()
    }

    /// The UI state model fed by this stream's events (`None` unless the
    /// stream was created with `ui=True`).
    ///
    /// Raises `RuntimeError` while another thread's call on this stream
    /// runs (`feed()` holds the stream), as every other method does.
    #[getter]
    fn ui(slf: &Bound<'_, Self>) -> PyResult<Option<UiState>> {
        if slf.try_borrow()?.ui.is_none() {
            return Ok(None);
        }
        Ok(Some(UiState { stream: slf.clone().unbind() }))
    }

    /// Whether `abort()` ended the turn.
    #[getter]
    fn is_aborted(&self) -> bool {
        self.inner.is_aborted()
    }

    /// The folded message: the JSON the provider's non-streaming endpoint
    /// would have returned (also after an error; `None` before the dialect
    /// is known).
    #[getter]
    fn message<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        message_to_py(py, self.inner.message_view())
    }

    /// The folded message as compact JSON (UTF-8 `bytes`; `b"null"` before
    /// the dialect is known), written from what the stream holds without
    /// building Python objects (or a value the stream keeps as text: an
    /// Anthropic input too large for a tree).
    fn message_json<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let mut out = Vec::new();
        self.inner.message_view().write_json(&mut out);
        pyo3::types::PyBytes::new(py, &out)
    }

    /// The dialect: `anthropic`, `openai_chat`, `openai_responses`,
    /// `gemini`, `ollama`, `bedrock`, `bedrock_converse` (or `auto` until
    /// detected).
    #[getter]
    fn provider(&self) -> &'static str {
        self.inner.provider().name()
    }

    /// Whether the terminal event was seen.
    #[getter]
    fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }

    /// Whether the body may end here, asked when a connection's body ends
    /// and before `finish()`: the terminal event came, or the answer is
    /// whole without one (Gemini, which has none, once every candidate has
    /// its `finishReason`; Bedrock Converse after `messageStop`; Ollama on a
    /// lone done line; OpenAI Chat without `[DONE]` once every choice has
    /// its `finish_reason` and the usage a chunk announced came). When
    /// true, `finish()` ends the turn normally (Chat without `[DONE]`: a
    /// `terminal_missing` warning, then `turn_end`); do not reconnect.
    /// False after an error or `abort()`. Never changes the stream.
    #[getter]
    fn is_complete_at_end(&self) -> bool {
        self.inner.is_complete_at_end()
    }

    fn __repr__(&self) -> String {
        format!("Stream(provider={:?}, terminated={})", self.inner.provider().name(), self.inner.is_terminated())
    }
}

/// The UI state of a stream (`Stream(..., ui=True).ui`): text segments
/// with their arrival times, tool calls in progress and their readiness,
/// tool progress, usage, stop reason, connection state. Every event the
/// stream returns has already been applied to it.
#[pyclass(module = "ssefold", frozen)]
pub struct UiState {
    stream: Py<Stream>,
}

impl UiState {
    /// Runs `f` on the stream's UI state; `RuntimeError` ("Already
    /// borrowed") while another thread's call on the stream runs, as for the
    /// stream's own methods (never a panic).
    fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&mut CoreUiState) -> R) -> PyResult<R> {
        let mut stream = self.stream.bind(py).try_borrow_mut()?;
        // `ui` is only handed out when the stream has a UI state.
        Ok(f(stream.ui.get_or_insert_with(CoreUiState::new)))
    }
}

#[pymethods]
impl UiState {
    /// The state as a `dict` (`connection`, `parts` with `segments`,
    /// `tool_call` and `status`, `tool_progress`, `usage`, `stop_reason`,
    /// `error`, `ended`, `aborted`).
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = self.with(py, |ui| ui.to_json())?;
        value_to_py(py, &value)
    }

    /// Sets the connection state: `disconnected`, `connecting`, `connected`
    /// or `reconnecting`.
    fn set_connection(&self, py: Python<'_>, state: &Bound<'_, PyString>) -> PyResult<()> {
        let state = match lossy(state)?.as_ref() {
            "disconnected" => ConnectionState::Disconnected,
            "connecting" => ConnectionState::Connecting,
            "connected" => ConnectionState::Connected,
            "reconnecting" => ConnectionState::Reconnecting,
            other => return Err(PyValueError::new_err(format!("unknown connection state {other:?}"))),
        };
        self.with(py, |ui| ui.set_connection(state))
    }

    /// Sets the progress of a running tool (`id`: the tool call's id;
    /// `value`: any JSON-serializable value).
    fn set_tool_progress(&self, py: Python<'_>, id: &Bound<'_, PyString>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = ident(id, "id")?;
        let value = py_to_data(value, JSON_DEPTH, "UiState.set_tool_progress value")?;
        self.with(py, |ui| ui.set_tool_progress(&id, value))
    }

    /// The connection state's name.
    #[getter]
    fn connection(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.with(py, |ui| ui.connection().name())
    }

    /// The stop reason of choice 0, once known.
    #[getter]
    fn stop_reason(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with(py, |ui| ui.stop_reason().map(str::to_owned))
    }

    /// Whether the turn is over (terminal event, error or abort).
    #[getter]
    fn is_ended(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |ui| ui.is_ended())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |ui| {
            format!(
                "UiState(connection={:?}, parts={}, ended={})",
                ui.connection().name(),
                ui.parts().len(),
                ui.is_ended()
            )
        })
    }
}

macro_rules! dialect {
    ($name:ident, $provider:expr, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(module = "ssefold", extends = Stream)]
        pub struct $name;

        #[pymethods]
        impl $name {
            /// `config`: a `StreamConfig` (default: the core's); the
            /// keywords of its fields are deprecated (`DeprecationWarning`).
            #[new]
            #[pyo3(signature = (*, config = None, ui = false, **options))]
            fn new(
                py: Python<'_>,
                config: Option<&Bound<'_, StreamConfig>>,
                ui: bool,
                options: Option<&Bound<'_, PyDict>>,
            ) -> PyResult<($name, Stream)> {
                let config = stream_config_arg(py, stringify!($name), config, options)?;
                Ok(($name, Stream::with_provider($provider, config, ui)))
            }
        }
    };
}

dialect!(AnthropicStream, Provider::Anthropic, "An Anthropic Messages API stream.");
dialect!(OpenAIChatStream, Provider::OpenAIChat, "An OpenAI Chat Completions stream (and compatible APIs).");
dialect!(OpenAIResponsesStream, Provider::OpenAIResponses, "An OpenAI Responses API stream.");
dialect!(GeminiStream, Provider::Gemini, "A Google Gemini API / Vertex AI stream.");
dialect!(OllamaStream, Provider::Ollama, "An Ollama native chat API stream (newline-delimited JSON).");
dialect!(
    BedrockStream,
    Provider::Bedrock,
    "An Amazon Bedrock InvokeModelWithResponseStream body of an Anthropic model (AWS event stream)."
);
dialect!(BedrockConverseStream, Provider::BedrockConverse, "An Amazon Bedrock ConverseStream body (AWS event stream).");
