//! `ssefold._ssefold`: the Python extension module over the `ssefold` core.
//!
//! This crate owns only conversion and lifetime; every rule lives in the
//! core. Errors are mapped in [`errors`], the one place that builds Python
//! exceptions.

#[cfg(feature = "bench")]
mod bench;
mod config;
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

use pyo3::prelude::*;
use pyo3::types::PyTuple;

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
    #[cfg(feature = "bench")]
    bench::register(m)?;
    m.add_class::<partial_json::PathEvent>()?;
    m.add_class::<partial_json::PartialJSON>()?;
    m.add_function(wrap_pyfunction!(partial_json::parse_partial_json, m)?)?;
    m.add_class::<config::StreamConfig>()?;
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
