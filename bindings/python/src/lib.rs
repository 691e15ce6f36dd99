//! `ssefold._ssefold`: the Python extension module over the `ssefold` core.
//!
//! This crate owns only conversion and lifetime; every rule lives in the
//! core. Errors are mapped in [`errors`], the one place that builds Python
//! exceptions.

mod convert;
mod errors;
#[cfg(all(Py_GIL_DISABLED, not(Py_3_14)))]
mod free_threading;
mod partial_json;
mod providers;
mod reconnect;
mod relay;
mod sse;
mod tools;
mod turn;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// Decodes `data` in `chunk`-byte pieces with the GIL released and counts
/// the events, building no Python object: the core-only baseline of
/// `python/bench/threads.py` (how much of `SSEDecoder.feed` runs without
/// the GIL).
#[pyfunction]
fn _sse_decode_count(py: Python<'_>, data: &Bound<'_, PyBytes>, chunk: usize) -> usize {
    let bytes = data.as_bytes();
    py.detach(|| {
        let mut d = ssefold::sse::Decoder::new();
        let mut n = 0;
        for c in bytes.chunks(chunk.max(1)) {
            d.feed_each(c, |_| n += 1);
        }
        n
    })
}

/// Folds `data` (one provider stream) in `chunk`-byte pieces with the GIL
/// released and counts the normalized events, building no Python object:
/// the core-only baseline of `Stream.feed` in `python/bench/threads.py`.
#[pyfunction]
fn _stream_fold_count(py: Python<'_>, data: &Bound<'_, PyBytes>, chunk: usize, provider: &str) -> PyResult<usize> {
    let p = ssefold::providers::Provider::from_name(provider)
        .ok_or_else(|| PyValueError::new_err(format!("unknown provider {provider:?}")))?;
    let bytes = data.as_bytes();
    Ok(py.detach(|| {
        let mut s = ssefold::providers::Stream::new(p);
        let mut n = 0;
        for c in bytes.chunks(chunk.max(1)) {
            if s.feed(c, |_| n += 1).is_err() {
                break;
            }
        }
        let _ = s.finish(|_| n += 1);
        n
    }))
}

/// The extension module. Every class is either immutable (`frozen`) or
/// guarded by PyO3's per-object borrow flag, so no state is shared without
/// a lock: it does not need the GIL.
#[pymodule(gil_used = false)]
fn _ssefold(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("CATALOG_EVENT_NAMES", PyTuple::new(m.py(), ssefold::relay::CATALOG_EVENT_NAMES)?)?;
    errors::register(m)?;
    m.add_class::<sse::ServerSentEvent>()?;
    m.add_class::<sse::SSEDecoder>()?;
    m.add_class::<sse::SSEEncoder>()?;
    m.add_class::<reconnect::ReconnectPolicy>()?;
    m.add_class::<reconnect::StreamEnd>()?;
    m.add_class::<reconnect::ResumeCursor>()?;
    m.add_class::<reconnect::Decision>()?;
    m.add_class::<reconnect::Reconnector>()?;
    m.add_function(wrap_pyfunction!(reconnect::is_retryable_error_type, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_provider_error, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_incomplete_error, m)?)?;
    m.add_function(wrap_pyfunction!(_sse_decode_count, m)?)?;
    m.add_function(wrap_pyfunction!(_stream_fold_count, m)?)?;
    m.add_class::<partial_json::PathEvent>()?;
    m.add_class::<partial_json::PartialJSON>()?;
    m.add_function(wrap_pyfunction!(partial_json::parse_partial_json, m)?)?;
    m.add_class::<providers::StreamEvent>()?;
    m.add_class::<providers::ToolCallStart>()?;
    m.add_class::<providers::ToolCallEnd>()?;
    m.add_class::<providers::Stream>()?;
    m.add_class::<providers::UiState>()?;
    m.add_class::<providers::AnthropicStream>()?;
    m.add_class::<providers::OpenAIChatStream>()?;
    m.add_class::<providers::OpenAIResponsesStream>()?;
    tools::register(m)?;
    relay::register(m)?;
    turn::register(m)?;
    m.add_class::<providers::GeminiStream>()?;
    m.add_class::<providers::OllamaStream>()?;
    m.add_class::<providers::BedrockStream>()?;
    m.add_class::<providers::BedrockConverseStream>()?;
    #[cfg(all(Py_GIL_DISABLED, not(Py_3_14)))]
    free_threading::immortalize_classes(m)?;
    Ok(())
}
