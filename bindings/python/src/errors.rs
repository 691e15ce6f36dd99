//! The one place where core errors become Python exceptions.
//!
//! Hierarchy (every class is importable from `ssefold`):
//!
//! ```text
//! ValueError
//! └── Error
//!     ├── DecodeError            (.offset)
//!     │   ├── LineTooLongError   (.limit)
//!     │   ├── EventTooLargeError (.limit)
//!     │   ├── IdTooLongError     (.limit)
//!     │   └── InvalidUtf8Error   (.field)
//!     ├── EncodeError            (.field)
//!     ├── ProviderError          (.type, .message, .request_id, .output_emitted)
//!     ├── IncompleteStreamError  (the terminal event never came; .expected)
//!     ├── PartialJSONError       (.kind: incomplete | invalid | depth_limit | size_limit, .offset)
//!     ├── InvalidEventError      (an event's data is not JSON; .event_type)
//!     ├── LimitExceededError     (.limit, .max)
//!     ├── UnknownDialectError    (provider="auto" could not tell)
//!     └── StreamClosedError      (fed after an error or after finish)
//! ```
//!
//! Raising goes through [`ToPyErr`]; nothing in the binding builds a
//! `RuntimeError` or panics on input.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::{create_exception, PyErr};

use ssefold::json::{PartialJsonError, PartialJsonErrorKind};
use ssefold::providers::StreamError;
use ssefold::sse::{DecodeError as CoreDecodeError, EncodeError as CoreEncodeError};

create_exception!(ssefold, Error, PyValueError, "Base class of every error raised by ssefold (a ValueError).");
create_exception!(ssefold, DecodeError, Error, "The SSE input broke a limit or held invalid UTF-8 in strict mode.");
create_exception!(ssefold, LineTooLongError, DecodeError, "An SSE line was longer than `max_line_len`.");
create_exception!(ssefold, EventTooLargeError, DecodeError, "An SSE event's data grew past `max_event_size`.");
create_exception!(ssefold, IdTooLongError, DecodeError, "An SSE id was longer than `max_id_len`.");
create_exception!(ssefold, InvalidUtf8Error, DecodeError, "Invalid UTF-8 in an SSE field under `utf8=\"strict\"`.");
create_exception!(ssefold, EncodeError, Error, "An event could not be encoded (line break in event/id, NUL in id).");
create_exception!(ssefold, ProviderError, Error, "The provider reported an error (`.type`, `.message`).");
create_exception!(ssefold, IncompleteStreamError, Error, "The stream ended before its terminal event.");
create_exception!(ssefold, PartialJSONError, Error, "Invalid, incomplete (at finish) or over-limit partial JSON.");
create_exception!(ssefold, InvalidEventError, Error, "A provider event's data is not JSON.");
create_exception!(ssefold, LimitExceededError, Error, "A provider stream limit was exceeded.");
create_exception!(ssefold, UnknownDialectError, Error, "The provider dialect could not be detected.");
create_exception!(ssefold, StreamClosedError, Error, "The stream was closed by an error or by finish().");

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
                let err = with_attr(py, LineTooLongError::new_err(msg), "limit", limit);
                with_attr(py, err, "offset", offset)
            }
            CoreDecodeError::EventTooLarge { limit, offset } => {
                let err = with_attr(py, EventTooLargeError::new_err(msg), "limit", limit);
                with_attr(py, err, "offset", offset)
            }
            CoreDecodeError::IdTooLong { limit, offset } => {
                let err = with_attr(py, IdTooLongError::new_err(msg), "limit", limit);
                with_attr(py, err, "offset", offset)
            }
            CoreDecodeError::InvalidUtf8 { field, offset } => {
                let err = with_attr(py, InvalidUtf8Error::new_err(msg), "field", field);
                with_attr(py, err, "offset", offset)
            }
            // A kind newer than this binding: the base class.
            _ => with_attr(py, DecodeError::new_err(msg), "offset", self.offset()),
        }
    }
}

/// An `EncodeError` for `field` with `message` (for input the core never
/// sees, such as a string UTF-8 cannot encode).
pub fn encode_error(py: Python<'_>, field: &'static str, message: &str) -> PyErr {
    with_attr(py, EncodeError::new_err(format!("{message} (field {field:?})")), "field", field)
}

impl ToPyErr for CoreEncodeError {
    #[cold]
    fn to_py_err(&self, py: Python<'_>) -> PyErr {
        with_attr(py, EncodeError::new_err(self.to_string()), "field", self.field())
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
        let err = with_attr(py, PartialJSONError::new_err(self.to_string()), "kind", self.kind.name());
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
            StreamError::InvalidJson { event_type, message } => {
                let err = with_attr(py, InvalidEventError::new_err(msg), "event_type", event_type);
                with_attr(py, err, "reason", message)
            }
            StreamError::LimitExceeded { limit, max } => {
                let err = with_attr(py, LimitExceededError::new_err(msg), "limit", limit.as_str());
                with_attr(py, err, "max", *max)
            }
            StreamError::Provider(e) => {
                let err = provider_error(py, &e.error_type, &e.message);
                let err = with_attr(py, err, "request_id", e.request_id.as_deref());
                with_attr(py, err, "output_emitted", e.output_emitted)
            }
            StreamError::UnknownDialect => UnknownDialectError::new_err(msg),
            StreamError::Incomplete { expected } => {
                with_attr(py, IncompleteStreamError::new_err(msg), "expected", *expected)
            }
            StreamError::Closed => StreamClosedError::new_err(msg),
            // An error newer than this binding: the base class.
            _ => Error::new_err(msg),
        }
    }
}

/// `err` with `.events` set: the events produced before it was raised.
#[cold]
pub fn with_events(py: Python<'_>, err: PyErr, events: &Bound<'_, PyList>) -> PyErr {
    with_attr(py, err, "events", events)
}

/// A `ProviderError` with `.type` and `.message` set.
#[cold]
pub fn provider_error(py: Python<'_>, error_type: &str, message: &str) -> PyErr {
    let err = with_attr(py, ProviderError::new_err(format!("{error_type}: {message}")), "type", error_type);
    with_attr(py, err, "message", message)
}

/// Builds (does not raise) a `ProviderError` with `.type` and `.message`,
/// for Python code that reports a provider error it found itself.
#[pyfunction]
pub fn _provider_error(py: Python<'_>, error_type: &str, message: &str) -> Py<PyAny> {
    provider_error(py, error_type, message).into_value(py).into_any()
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("LineTooLongError", py.get_type::<LineTooLongError>())?;
    m.add("EventTooLargeError", py.get_type::<EventTooLargeError>())?;
    m.add("IdTooLongError", py.get_type::<IdTooLongError>())?;
    m.add("InvalidUtf8Error", py.get_type::<InvalidUtf8Error>())?;
    m.add("EncodeError", py.get_type::<EncodeError>())?;
    m.add("ProviderError", py.get_type::<ProviderError>())?;
    m.add("IncompleteStreamError", py.get_type::<IncompleteStreamError>())?;
    m.add("PartialJSONError", py.get_type::<PartialJSONError>())?;
    m.add("InvalidEventError", py.get_type::<InvalidEventError>())?;
    m.add("LimitExceededError", py.get_type::<LimitExceededError>())?;
    m.add("UnknownDialectError", py.get_type::<UnknownDialectError>())?;
    m.add("StreamClosedError", py.get_type::<StreamClosedError>())?;
    Ok(())
}
