//! The benchmarks' core-only baselines (`python/bench/threads.py`): the
//! core's work on the same bytes with the GIL released and no Python object
//! built. Not in the shipped module: built with the cargo feature `bench`
//! (`maturin develop --features bench`, as `make python-bench` does).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

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

/// Adds the hooks to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_sse_decode_count, m)?)?;
    m.add_function(wrap_pyfunction!(_stream_fold_count, m)?)?;
    Ok(())
}
