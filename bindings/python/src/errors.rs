//! The one place where core errors become Python exceptions.
//!
//! Hierarchy (every class is importable from `ssefold`). Errors about the
//! *data* (it cannot be decoded, broke a limit, or was fed to a closed
//! stream) are also `ValueError`s, like `json.JSONDecodeError`; errors the
//! *provider or the connection* caused are not, so a broad `except
//! ValueError` around parsing code never swallows a rate limit:
//!
//! ```text
//! Exception
//! └── Error
//!     ├── ProviderError              (.type, .message, .request_id, .output_emitted,
//!     │   │                           .status_code, .body, .retryable, .retry_after_ms)
//!     │   └── RetryableProviderError (a status the core retries: 408, 409, 429, 5xx but 501/505.., 529;
//!     │                               or a transient error type)
//!     ├── IncompleteStreamError      (the terminal event never came; .expected, .last)
//!     ├── DecodeError + ValueError   (.offset)
//!     │   ├── LineTooLongError       (.limit)
//!     │   ├── EventTooLargeError     (.limit)
//!     │   ├── IdTooLongError         (.limit)
//!     │   ├── InvalidUtf8Error       (.field)
//!     │   └── EventStreamError       (broken AWS event-stream framing, Bedrock: .reason)
//!     ├── EncodeError + ValueError   (.field)
//!     ├── PartialJSONError + ValueError (.kind: incomplete | invalid | depth_limit | size_limit, .offset)
//!     ├── InvalidEventError + ValueError (an event's data is not JSON; .event_type)
//!     ├── LimitExceededError + ValueError (.limit, .max)
//!     ├── UnknownDialectError + ValueError (provider="auto" could not tell)
//!     ├── DialectMismatchError + ValueError (the first event is another dialect's; .expected, .detected)
//!     ├── StreamClosedError + ValueError (fed after an error or after finish)
//!     ├── SchedulerError + ValueError (misuse of a ToolScheduler; .kind)
//!     └── RelayError + ValueError     (a relay call that cannot be served; .kind)
//! ```
//!
//! The classes are built once per interpreter (`type(name, bases, ...)`:
//! a class with two bases needs it). Raising goes through [`ToPyErr`];
//! nothing in the binding builds a `RuntimeError` or panics on input.
//!
//! A failed agent turn (`TurnOutcome.failure`) is one of these too: its
//! stream's error, an `IncompleteStreamError` for a connection that failed
//! or went idle (`.last` says how; a stall also has `.stall` and
//! `.after_ms`), a `ProviderError` with `.status_code` for a refused
//! response, a `LimitExceededError` (`max_calls`) for more calls than the
//! turn takes.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::PyErr;

use ssefold::agent::{TurnError, TurnFailure};
use ssefold::json::{PartialJsonError, PartialJsonErrorKind};
use ssefold::providers::{ProviderError as CoreProviderError, StreamError};
use ssefold::reconnect::{is_retryable_error_type, StallKind, StreamEnd as CoreEnd, RETRYABLE_STATUSES};
use ssefold::tools::SchedulerError as CoreSchedulerError;

use crate::convert::{data_text, lossy};
use crate::reconnect::{stall_kind, StreamEnd};
use ssefold::sse::{DecodeError as CoreDecodeError, EncodeError as CoreEncodeError};

/// The exception classes, in [`SPECS`] order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exc {
    Error,
    ProviderError,
    RetryableProviderError,
    IncompleteStreamError,
    DecodeError,
    LineTooLongError,
    EventTooLargeError,
    IdTooLongError,
    InvalidUtf8Error,
    EventStreamError,
    EncodeError,
    PartialJSONError,
    InvalidEventError,
    LimitExceededError,
    UnknownDialectError,
    DialectMismatchError,
    StreamClosedError,
    SchedulerError,
    RelayError,
}

/// One class: its name, its ssefold parent (`None`: `Exception`), whether
/// it is also a `ValueError`, and its docstring. A parent comes first.
struct Spec {
    name: &'static str,
    parent: Option<Exc>,
    value_error: bool,
    doc: &'static str,
}

const SPECS: [Spec; 19] = [
    Spec { name: "Error", parent: None, value_error: false, doc: "Base class of every error raised by ssefold." },
    Spec {
        name: "ProviderError",
        parent: Some(Exc::Error),
        value_error: false,
        doc: "The provider reported an error: an error event in the stream (.status_code None) or an HTTP error \
              status (.status_code, .body). .type, .message, .retryable.",
    },
    Spec {
        name: "RetryableProviderError",
        parent: Some(Exc::ProviderError),
        value_error: false,
        doc: "A provider error worth sending the request again for: an HTTP status the core retries (408, 409, \
              429, 500, 502, 503, 504, 529) or an error event of a transient type.",
    },
    Spec {
        name: "IncompleteStreamError",
        parent: Some(Exc::Error),
        value_error: false,
        doc: "The stream ended before its terminal event (.expected); from the HTTP helpers, after the last \
              reconnection (.last: how the last connection ended).",
    },
    Spec {
        name: "DecodeError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "The SSE input broke a limit or held invalid UTF-8 in strict mode.",
    },
    Spec {
        name: "LineTooLongError",
        parent: Some(Exc::DecodeError),
        value_error: false,
        doc: "An SSE line was longer than `max_line_len`.",
    },
    Spec {
        name: "EventTooLargeError",
        parent: Some(Exc::DecodeError),
        value_error: false,
        doc: "An SSE event's data grew past `max_event_size`.",
    },
    Spec {
        name: "IdTooLongError",
        parent: Some(Exc::DecodeError),
        value_error: false,
        doc: "An SSE id was longer than `max_id_len`.",
    },
    Spec {
        name: "InvalidUtf8Error",
        parent: Some(Exc::DecodeError),
        value_error: false,
        doc: "Invalid UTF-8 in an SSE field under `utf8=\"strict\"`.",
    },
    Spec {
        name: "EventStreamError",
        parent: Some(Exc::DecodeError),
        value_error: false,
        doc: "The AWS event-stream framing of a Bedrock body is broken: a CRC mismatch, bad lengths or headers, a \
              message over the limits (.reason).",
    },
    Spec {
        name: "EncodeError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "An event could not be encoded (line break in event/id, NUL in id).",
    },
    Spec {
        name: "PartialJSONError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "Invalid, incomplete (at finish) or over-limit partial JSON.",
    },
    Spec {
        name: "InvalidEventError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "A provider event's data is not JSON.",
    },
    Spec {
        name: "LimitExceededError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "A provider stream limit was exceeded.",
    },
    Spec {
        name: "UnknownDialectError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "The provider dialect could not be detected.",
    },
    Spec {
        name: "DialectMismatchError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "The stream was given one provider dialect, but its first event is another's (.expected, .detected).",
    },
    Spec {
        name: "StreamClosedError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "The stream was closed by an error or by finish().",
    },
    Spec {
        name: "SchedulerError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "Misuse of a ToolScheduler (.kind: unknown_call_id, duplicate_call_id, already_finished, not_started, \
              add_after_discard, too_many_calls, unfinished, discarded, unsupported_provider); the call changed \
              nothing.",
    },
    Spec {
        name: "RelayError",
        parent: Some(Exc::Error),
        value_error: true,
        doc: "A relay call that cannot be served (.kind: finished | no_stream | replay_too_old | unknown_event_id | \
              invalid_event).",
    },
];

/// Attributes set only on some errors (`None` on the class otherwise): an
/// `IncompleteStreamError` that came from a connection has how the last
/// connection ended, which timeout fired and after how long, and why no
/// reconnection followed; a `ProviderError` of a refused response the last.
const OPTIONAL_ATTRS: [(Exc, &[&str]); 2] =
    [(Exc::IncompleteStreamError, &["last", "stall", "after_ms", "gave_up"]), (Exc::ProviderError, &["gave_up"])];

static TYPES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// Every class, built on first use.
fn types(py: Python<'_>) -> PyResult<&Vec<Py<PyType>>> {
    TYPES.get_or_try_init(py, || {
        let mut built: Vec<Py<PyType>> = Vec::with_capacity(SPECS.len());
        for spec in &SPECS {
            let parent = match spec.parent {
                Some(p) => built[p as usize].bind(py).clone(),
                None => py.get_type::<PyException>(),
            };
            let bases = if spec.value_error {
                PyTuple::new(py, [parent, py.get_type::<PyValueError>()])?
            } else {
                PyTuple::new(py, [parent])?
            };
            let dict = PyDict::new(py);
            dict.set_item("__module__", "ssefold")?;
            dict.set_item("__doc__", spec.doc)?;
            for (exc, attrs) in OPTIONAL_ATTRS {
                if spec.name == SPECS[exc as usize].name {
                    for attr in attrs {
                        dict.set_item(attr, py.None())?;
                    }
                }
            }
            let ty = py.get_type::<PyType>().call1((spec.name, bases, dict))?;
            built.push(ty.cast_into::<PyType>()?.unbind());
        }
        Ok(built)
    })
}

/// A new exception of class `exc` with `msg` (a `TypeError`-free fallback
/// to the error that building the classes raised, which cannot happen
/// with the builtins intact).
pub fn new_err(py: Python<'_>, exc: Exc, msg: String) -> PyErr {
    match types(py) {
        Ok(t) => PyErr::from_type(t[exc as usize].bind(py).clone(), msg),
        Err(e) => e,
    }
}

/// Conversion of a core error into the matching Python exception.
pub trait ToPyErr {
    /// The exception, with its attributes set.
    fn to_py_err(&self, py: Python<'_>) -> PyErr;
}

/// Sets `name = value` on the exception instance (best effort: the
/// exception classes are plain heap types, so this cannot fail in practice).
fn with_attr<'py, V: IntoPyObject<'py>>(py: Python<'py>, err: PyErr, name: &str, value: V) -> PyErr {
    let _ = err.value(py).setattr(name, value);
    err
}

impl ToPyErr for CoreDecodeError {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        let msg = self.to_string();
        match *self {
            CoreDecodeError::LineTooLong { limit, offset } => {
                let err = with_attr(py, new_err(py, Exc::LineTooLongError, msg), "limit", limit);
                with_attr(py, err, "offset", offset)
            }
            CoreDecodeError::EventTooLarge { limit, offset } => {
                let err = with_attr(py, new_err(py, Exc::EventTooLargeError, msg), "limit", limit);
                with_attr(py, err, "offset", offset)
            }
            CoreDecodeError::IdTooLong { limit, offset } => {
                let err = with_attr(py, new_err(py, Exc::IdTooLongError, msg), "limit", limit);
                with_attr(py, err, "offset", offset)
            }
            CoreDecodeError::InvalidUtf8 { field, offset } => {
                let err = with_attr(py, new_err(py, Exc::InvalidUtf8Error, msg), "field", field);
                with_attr(py, err, "offset", offset)
            }
            // A kind newer than this binding: the base class.
            _ => with_attr(py, new_err(py, Exc::DecodeError, msg), "offset", self.offset()),
        }
    }
}

/// An `EncodeError` for `field` with `message` (for input the core never
/// sees, such as a string UTF-8 cannot encode).
pub fn encode_error(py: Python<'_>, field: &'static str, message: &str) -> PyErr {
    with_attr(py, new_err(py, Exc::EncodeError, format!("{message} (field {field:?})")), "field", field)
}

impl ToPyErr for CoreEncodeError {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        with_attr(py, new_err(py, Exc::EncodeError, self.to_string()), "field", self.field())
    }
}

/// The decode error raised from `SSEDecoder.feed`: the chunk's first error,
/// carrying every event the chunk produced (before and after it) as
/// `.events` and every error of the chunk, in order, as `.errors` (itself
/// first), so nothing is lost: the decoder stays usable.
#[cold]
pub fn decode_error_with_events(py: Python<'_>, errors: &[CoreDecodeError], events: &Bound<'_, PyList>) -> PyErr {
    let all: Vec<Py<PyAny>> = errors.iter().map(|e| e.to_py_err(py).into_value(py).into_any()).collect();
    let first = PyErr::from_value(all[0].bind(py).clone());
    let err = with_attr(py, first, "events", events);
    with_attr(py, err, "errors", all)
}

impl ToPyErr for PartialJsonError {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        let reason = match &self.kind {
            PartialJsonErrorKind::Invalid(reason) => Some(*reason),
            _ => None,
        };
        let err = with_attr(py, new_err(py, Exc::PartialJSONError, self.to_string()), "kind", self.kind.name());
        let err = with_attr(py, err, "reason", reason);
        with_attr(py, err, "offset", self.offset)
    }
}

impl ToPyErr for StreamError {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        let msg = self.to_string();
        match self {
            StreamError::Sse(e) => e.to_py_err(py),
            StreamError::EventStream(e) => {
                let err = with_attr(py, new_err(py, Exc::EventStreamError, msg), "reason", e.to_string().as_str());
                with_attr(py, err, "offset", e.offset())
            }
            StreamError::InvalidJson { event_type, message } => {
                let err = with_attr(py, new_err(py, Exc::InvalidEventError, msg), "event_type", event_type);
                with_attr(py, err, "reason", message)
            }
            StreamError::LimitExceeded { limit, max } => {
                let err = with_attr(py, new_err(py, Exc::LimitExceededError, msg), "limit", limit.name());
                with_attr(py, err, "max", *max)
            }
            StreamError::Provider(e) => {
                let err = provider_error(py, &e.error_type, &e.message, None, None);
                let err = with_attr(py, err, "request_id", e.request_id.as_deref());
                with_attr(py, err, "output_emitted", e.output_emitted)
            }
            StreamError::UnknownDialect => new_err(py, Exc::UnknownDialectError, msg),
            StreamError::DialectMismatch { expected, detected } => {
                let err = with_attr(py, new_err(py, Exc::DialectMismatchError, msg), "expected", expected.name());
                with_attr(py, err, "detected", detected.name())
            }
            StreamError::Incomplete { expected } => {
                with_attr(py, new_err(py, Exc::IncompleteStreamError, msg), "expected", *expected)
            }
            StreamError::Closed => new_err(py, Exc::StreamClosedError, msg),
            // An error newer than this binding: the base class.
            _ => new_err(py, Exc::Error, msg),
        }
    }
}

/// A configuration the core refused (a limit out of its range, an unknown
/// `utf8`): a plain `ValueError`, as for any bad argument.
impl ToPyErr for ssefold::config::ConfigError {
    #[cold]
    fn to_py_err(&self, _py: Python<'_>) -> PyErr {
        pyo3::exceptions::PyValueError::new_err(self.to_string())
    }
}

impl ToPyErr for CoreSchedulerError {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        with_attr(py, new_err(py, Exc::SchedulerError, self.to_string()), "kind", self.kind())
    }
}

impl ToPyErr for TurnError {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        match self {
            TurnError::Scheduler(e) => e.to_py_err(py),
            // An error newer than this binding: the base class.
            _ => new_err(py, Exc::Error, self.to_string()),
        }
    }
}

/// The `IncompleteStreamError` of a connection that ended the turn (`.last`:
/// how it ended).
fn connection_lost(py: Python<'_>, message: String, last: CoreEnd) -> PyErr {
    let err = with_attr(py, new_err(py, Exc::IncompleteStreamError, message), "expected", "the terminal event");
    match Py::new(py, StreamEnd { inner: last }) {
        Ok(last) => with_attr(py, err, "last", last),
        Err(e) => e,
    }
}

impl ToPyErr for TurnFailure {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        match self {
            TurnFailure::Stream(e) => e.to_py_err(py),
            TurnFailure::Transport(text) => connection_lost(py, self.message(), CoreEnd::TransportError(text.clone())),
            TurnFailure::IdleTimeout { stall, after_ms } => {
                let err =
                    with_attr(py, connection_lost(py, self.message(), CoreEnd::IdleTimeout), "stall", stall.name());
                with_attr(py, err, "after_ms", *after_ms)
            }
            TurnFailure::Http { status, retry_after_ms } => {
                provider_error_after(py, "http_error", &self.message(), Some(*status), None, *retry_after_ms)
            }
            TurnFailure::TooManyCalls { limit } => {
                let err = with_attr(py, new_err(py, Exc::LimitExceededError, self.message()), "limit", "max_calls");
                with_attr(py, err, "max", *limit)
            }
            // A failure newer than this binding: the base class.
            _ => new_err(py, Exc::Error, self.message()),
        }
    }
}

/// The turn failure of an exception the host's own stream raised (an agent
/// turn fed by `apply_event`): a `ProviderError` with a `.status_code` is a
/// refused response (`http`), another is the provider's error (its
/// `.type`, `.message`, `.request_id`, `.output_emitted`), an
/// `IncompleteStreamError` whose `.last` is an idle timeout is one (its
/// `.stall` and `.after_ms` when set), and any other exception is a failed
/// connection described by its text.
pub fn turn_failure_of(py: Python<'_>, err: &Bound<'_, PyAny>) -> PyResult<TurnFailure> {
    let classes = types(py)?;
    let attr = |name: &str| err.getattr(name).ok().filter(|v| !v.is_none());
    let text = |name: &str| attr(name).and_then(|v| v.extract::<String>().ok());
    let number = |name: &str| attr(name).and_then(|v| v.extract::<u64>().ok());
    if err.is_instance(classes[Exc::ProviderError as usize].bind(py))? {
        if let Some(status) = attr("status_code").and_then(|v| v.extract::<u16>().ok()) {
            return Ok(TurnFailure::Http { status, retry_after_ms: number("retry_after_ms") });
        }
        let error = CoreProviderError {
            error_type: text("type").unwrap_or_default(),
            message: text("message").unwrap_or_default(),
            request_id: text("request_id"),
            output_emitted: attr("output_emitted").and_then(|v| v.extract::<bool>().ok()).unwrap_or(false),
        };
        return Ok(TurnFailure::Stream(StreamError::Provider(error)));
    }
    if err.is_instance(classes[Exc::IncompleteStreamError as usize].bind(py))? {
        let idle = attr("last").is_some_and(|last| {
            last.cast::<StreamEnd>().is_ok_and(|end| matches!(end.get().inner, CoreEnd::IdleTimeout))
        });
        if idle {
            let stall = text("stall").and_then(|s| stall_kind(&s)).unwrap_or(StallKind::Idle);
            return Ok(TurnFailure::IdleTimeout { stall, after_ms: number("after_ms").unwrap_or(0) });
        }
    }
    let described = data_text(&err.str()?, "the failure's text")?.into_owned();
    let type_name = lossy(&err.get_type().name()?)?.into_owned();
    Ok(TurnFailure::Transport(if described.is_empty() { type_name } else { format!("{type_name}: {described}") }))
}

/// `err` with `.events` set: the events produced before it was raised.
#[cold]
pub fn with_events(py: Python<'_>, err: PyErr, events: &Bound<'_, PyList>) -> PyErr {
    with_attr(py, err, "events", events)
}

/// A `ProviderError` with `.type`, `.message`, `.retryable`, `.status_code`,
/// `.body` and `.retry_after_ms` (the response's `Retry-After`, `None`
/// without one) set: a `RetryableProviderError` when the HTTP status is one
/// the core retries ([`RETRYABLE_STATUSES`]) or the type is a transient one
/// ([`is_retryable_error_type`]).
#[cold]
pub fn provider_error(
    py: Python<'_>,
    error_type: &str,
    message: &str,
    status_code: Option<u16>,
    body: Option<&str>,
) -> PyErr {
    provider_error_after(py, error_type, message, status_code, body, None)
}

/// [`provider_error`] with the response's `Retry-After`, in milliseconds.
#[cold]
fn provider_error_after(
    py: Python<'_>,
    error_type: &str,
    message: &str,
    status_code: Option<u16>,
    body: Option<&str>,
    retry_after_ms: Option<u64>,
) -> PyErr {
    let retryable = match status_code {
        Some(s) => RETRYABLE_STATUSES.contains(&s) || is_retryable_error_type(error_type),
        None => is_retryable_error_type(error_type),
    };
    let class = if retryable { Exc::RetryableProviderError } else { Exc::ProviderError };
    let text = match status_code {
        Some(s) => format!("HTTP {s}: {error_type}: {message}"),
        None => format!("{error_type}: {message}"),
    };
    let err = with_attr(py, new_err(py, class, text), "type", error_type);
    let err = with_attr(py, err, "message", message);
    let err = with_attr(py, err, "retryable", retryable);
    let err = with_attr(py, err, "status_code", status_code);
    let err = with_attr(py, err, "body", body);
    let err = with_attr(py, err, "retry_after_ms", retry_after_ms);
    let err = with_attr(py, err, "request_id", None::<&str>);
    with_attr(py, err, "output_emitted", false)
}

/// Builds (does not raise) a `ProviderError` (or `RetryableProviderError`),
/// for Python code that reports a provider error it found itself: an error
/// event, or an HTTP error status with its body (and its `Retry-After`).
#[pyfunction]
#[pyo3(signature = (error_type, message, status_code=None, body=None, retry_after_ms=None))]
pub fn _provider_error(
    py: Python<'_>,
    error_type: &Bound<'_, PyString>,
    message: &Bound<'_, PyString>,
    status_code: Option<u16>,
    body: Option<&Bound<'_, PyString>>,
    retry_after_ms: Option<u64>,
) -> PyResult<Py<PyAny>> {
    // The provider's text (an error body's JSON may hold "\ud800"): a lone
    // surrogate is U+FFFD, as in a stream's events.
    let (error_type, message) = (lossy(error_type)?, lossy(message)?);
    let body = body.map(lossy).transpose()?;
    let err = provider_error_after(py, &error_type, &message, status_code, body.as_deref(), retry_after_ms);
    Ok(err.into_value(py).into_any())
}

/// Builds (does not raise) an `IncompleteStreamError` with `.expected`.
#[pyfunction]
pub fn _incomplete_error(py: Python<'_>, message: String, expected: &str) -> Py<PyAny> {
    with_attr(py, new_err(py, Exc::IncompleteStreamError, message), "expected", expected).into_value(py).into_any()
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    for (spec, ty) in SPECS.iter().zip(types(py)?) {
        m.add(spec.name, ty.bind(py))?;
    }
    Ok(())
}
