//! `StreamConfig`: the core's `StreamConfig` as one immutable Python object
//! (pydantic-core's `CoreConfig` idea: one `config=` argument instead of a
//! keyword per option). Its names, defaults and ranges are the core's
//! (`ssefold::config::STREAM_LIMITS`); this file only converts.

use pyo3::exceptions::{PyDeprecationWarning, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use ssefold::config::{stream_limit, STREAM_LIMITS};
use ssefold::providers::StreamConfig as CoreConfig;
use ssefold::sse::Utf8Mode;

use crate::errors::ToPyErr;

/// The limits and options of a stream, immutable; every field defaults to
/// the core's value, and the core checks each one's range.
#[pyclass(module = "ssefold", name = "StreamConfig", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct StreamConfig {
    pub(crate) inner: CoreConfig,
}

/// Writes `name = value` to `config` through the core's table.
fn set(config: &mut CoreConfig, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = value.py();
    if let Some(l) = stream_limit(name) {
        // A negative or a non-integer is refused by the conversion (as for
        // any size argument): `OverflowError` / `TypeError`.
        let v: u64 = value.extract()?;
        return l.apply(config, v).map_err(|e| e.to_py_err(py));
    }
    match name {
        "utf8" => config.sse.utf8 = Utf8Mode::from_name(&value.extract::<String>()?).map_err(|e| e.to_py_err(py))?,
        "tool_input_trailing_strings" => config.tool_input_trailing_strings = value.extract()?,
        _ => return Err(PyTypeError::new_err(format!("StreamConfig got an unexpected keyword argument {name:?}"))),
    }
    Ok(())
}

/// A core configuration from keywords (the defaults for those not given).
fn from_kwargs(base: CoreConfig, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<CoreConfig> {
    let mut config = base;
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            set(&mut config, &k.cast::<PyString>()?.to_cow()?, &v)?;
        }
    }
    Ok(config)
}

/// The configuration a stream constructor is given: `config=`, or the
/// keywords it took before `StreamConfig` (deprecated: a
/// `DeprecationWarning`, then the same checks), not both.
pub(crate) fn stream_config_arg(
    py: Python<'_>,
    class: &str,
    config: Option<&Bound<'_, StreamConfig>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<CoreConfig> {
    let legacy = kwargs.filter(|k| !k.is_empty());
    match (config, legacy) {
        (Some(c), None) => Ok(c.get().inner.clone()),
        (None, None) => Ok(CoreConfig::default()),
        (Some(_), Some(_)) => {
            Err(PyTypeError::new_err(format!("{class}: pass the options in config=StreamConfig(...), not beside it")))
        }
        (None, Some(kwargs)) => {
            let names: Vec<String> = kwargs.keys().iter().map(|k| k.to_string()).collect();
            let message = format!(
                "{class}({}=...) is deprecated: pass config=ssefold.StreamConfig({}=...)",
                names.join("=..., "),
                names.join("=..., ")
            );
            PyErr::warn(py, &py.get_type::<PyDeprecationWarning>(), &std::ffi::CString::new(message)?, 1)?;
            let config = from_kwargs(CoreConfig::default(), Some(kwargs))?;
            config.validate().map_err(|e| e.to_py_err(py))?;
            Ok(config)
        }
    }
}

#[pymethods]
impl StreamConfig {
    /// `StreamConfig(max_parts=..., ...)`: the core's defaults, with the
    /// fields given; a value out of the core's range is a `ValueError`.
    #[new]
    #[pyo3(signature = (**fields))]
    fn new(py: Python<'_>, fields: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let inner = from_kwargs(CoreConfig::default(), fields)?;
        inner.validate().map_err(|e| e.to_py_err(py))?;
        Ok(StreamConfig { inner })
    }

    /// A copy with the fields given changed (`dataclasses.replace`).
    #[pyo3(signature = (**changes))]
    fn replace(&self, py: Python<'_>, changes: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let inner = from_kwargs(self.inner.clone(), changes)?;
        inner.validate().map_err(|e| e.to_py_err(py))?;
        Ok(StreamConfig { inner })
    }

    /// The fields as a dict, in the core's order (the limits, then `utf8`
    /// and `tool_input_trailing_strings`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for l in STREAM_LIMITS {
            d.set_item(l.name, (l.get)(&self.inner))?;
        }
        d.set_item("utf8", self.inner.sse.utf8.name())?;
        d.set_item("tool_input_trailing_strings", self.inner.tool_input_trailing_strings)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let mut fields: Vec<String> = Vec::new();
        let d = CoreConfig::default();
        // The fields that differ from the defaults, as pydantic does.
        for l in STREAM_LIMITS {
            if (l.get)(&self.inner) != (l.get)(&d) {
                fields.push(format!("{}={}", l.name, (l.get)(&self.inner)));
            }
        }
        if self.inner.sse.utf8 != d.sse.utf8 {
            fields.push(format!("utf8='{}'", self.inner.sse.utf8.name()));
        }
        if self.inner.tool_input_trailing_strings {
            fields.push("tool_input_trailing_strings=True".to_owned());
        }
        format!("StreamConfig({})", fields.join(", "))
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for l in STREAM_LIMITS {
            (l.get)(&self.inner).hash(&mut h);
        }
        self.inner.sse.utf8.name().hash(&mut h);
        self.inner.tool_input_trailing_strings.hash(&mut h);
        h.finish()
    }

    #[getter]
    fn max_line_len(&self) -> usize {
        self.inner.sse.max_line_len
    }
    #[getter]
    fn max_event_size(&self) -> usize {
        self.inner.sse.max_event_size
    }
    #[getter]
    fn max_id_len(&self) -> usize {
        self.inner.sse.max_id_len
    }
    #[getter]
    fn utf8(&self) -> &'static str {
        self.inner.sse.utf8.name()
    }
    #[getter]
    fn max_parts(&self) -> usize {
        self.inner.max_parts
    }
    #[getter]
    fn max_tool_args_bytes(&self) -> usize {
        self.inner.max_tool_args_bytes
    }
    #[getter]
    fn max_text_bytes(&self) -> usize {
        self.inner.max_text_bytes
    }
    #[getter]
    fn max_choices(&self) -> usize {
        self.inner.max_choices
    }
    #[getter]
    fn tool_input_trailing_strings(&self) -> bool {
        self.inner.tool_input_trailing_strings
    }
    #[getter]
    fn max_memory_bytes(&self) -> usize {
        self.inner.max_memory_bytes
    }
    #[getter]
    fn max_path_events_per_feed(&self) -> usize {
        self.inner.max_path_events_per_feed
    }
    #[getter]
    fn max_event_stream_message_len(&self) -> u32 {
        self.inner.event_stream.max_message_len
    }
    #[getter]
    fn max_event_stream_headers_len(&self) -> u32 {
        self.inner.event_stream.max_headers_len
    }
}
