//! `SSEDecoder`, `ServerSentEvent` and `SSEEncoder`: conversion and lifetime
//! only; the decoding rules live in `ssefold::sse`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyList, PyString};

use ssefold::sse::{DecodeError as CoreDecodeError, Decoder, DecoderConfig, Encoder, Event, Utf8Mode, DEFAULT_LIMIT};

use crate::convert::{with_bytes, LastString, StringCache};
use crate::errors::{decode_error_with_events, ToPyErr};

/// One dispatched Server-Sent Event (immutable).
// `freelist`: events are made and dropped by the thousand; recycling their
// memory saved ~10 ns of the ~210 ns an event cost on the openai-chat corpus.
#[pyclass(module = "ssefold", frozen, get_all, freelist = 256)]
pub struct ServerSentEvent {
    /// The event type, `"message"` when the block had none.
    pub event: Py<PyString>,
    /// The data lines joined with `"\n"`.
    pub data: Py<PyString>,
    /// The last event ID in force at dispatch (`None` before any `id`).
    pub id: Option<Py<PyString>>,
    /// The block's own valid `retry` value in milliseconds, if any.
    pub retry: Option<u64>,
}

impl ServerSentEvent {
    fn parts<'py>(&self, py: Python<'py>) -> (&Bound<'py, PyString>, &Bound<'py, PyString>) {
        (self.event.bind(py), self.data.bind(py))
    }

    fn id_str(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.id.as_ref().map(|s| s.bind(py).to_cow().map(|c| c.into_owned())).transpose()
    }
}

#[pymethods]
impl ServerSentEvent {
    #[new]
    #[pyo3(signature = (event = "message", data = "", id = None, retry = None))]
    fn new(py: Python<'_>, event: &str, data: &str, id: Option<&str>, retry: Option<u64>) -> Self {
        let event = if event.is_empty() { "message" } else { event };
        ServerSentEvent {
            event: PyString::new(py, event).unbind(),
            data: PyString::new(py, data).unbind(),
            id: id.map(|s| PyString::new(py, s).unbind()),
            retry,
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (event, data) = self.parts(py);
        let id = match &self.id {
            Some(s) => s.bind(py).repr()?.to_string(),
            None => "None".to_owned(),
        };
        let retry = self.retry.map_or_else(|| "None".to_owned(), |r| r.to_string());
        Ok(format!("ServerSentEvent(event={}, data={}, id={id}, retry={retry})", event.repr()?, data.repr()?))
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<ServerSentEvent>() else {
            return Ok(py.NotImplemented());
        };
        let other = other.get();
        let equal = self.retry == other.retry
            && self.event.bind(py).as_any().eq(other.event.bind(py))?
            && self.data.bind(py).as_any().eq(other.data.bind(py))?
            && self.id_str(py)? == other.id_str(py)?;
        match op {
            CompareOp::Eq => Ok(equal.into_pyobject(py)?.to_owned().into_any().unbind()),
            CompareOp::Ne => Ok((!equal).into_pyobject(py)?.to_owned().into_any().unbind()),
            _ => Ok(py.NotImplemented()),
        }
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        let (event, data) = self.parts(py);
        let tuple = (event, data, self.id.as_ref().map(|s| s.bind(py)), self.retry);
        tuple.into_pyobject(py)?.hash()
    }
}

fn utf8_mode(name: &str) -> PyResult<Utf8Mode> {
    match name {
        "replace" => Ok(Utf8Mode::Replace),
        "strict" => Ok(Utf8Mode::Strict),
        other => Err(PyValueError::new_err(format!("utf8 must be 'replace' or 'strict', not {other:?}"))),
    }
}

/// Builds Python event objects, reusing the strings that recur.
#[derive(Default)]
pub struct EventBuilder {
    types: StringCache,
    ids: LastString,
}

impl EventBuilder {
    /// The Python object for a core event.
    #[inline]
    pub fn build(&mut self, py: Python<'_>, e: &Event<'_>) -> PyResult<Py<ServerSentEvent>> {
        let ev = ServerSentEvent {
            event: self.types.get(py, e.event()),
            data: PyString::new(py, e.data()).unbind(),
            id: e.id().map(|id| self.ids.get(py, id)),
            retry: e.retry(),
        };
        Py::new(py, ev)
    }
}

// The Python signature spells the core's default limit out.
const _: () = assert!(DEFAULT_LIMIT == 16777216);

/// The incremental SSE decoder (WHATWG rules, any chunking).
#[pyclass(module = "ssefold")]
pub struct SSEDecoder {
    inner: Decoder,
    builder: EventBuilder,
    discarded_bytes: u64,
    unterminated: Option<Py<ServerSentEvent>>,
    /// The events of the chunk being fed (empty between calls; kept for its capacity).
    scratch: Vec<Py<ServerSentEvent>>,
}

impl SSEDecoder {
    /// Decodes one chunk, passing each event to `on_event`; returns the
    /// decode errors met (the whole chunk is decoded regardless).
    pub fn feed_into(
        &mut self,
        py: Python<'_>,
        chunk: &[u8],
        mut on_event: impl FnMut(Py<ServerSentEvent>, &Event<'_>) -> PyResult<()>,
    ) -> PyResult<Vec<CoreDecodeError>> {
        let mut errors = Vec::new();
        let mut events = self.inner.feed(chunk);
        while let Some(item) = events.next_event() {
            match item {
                Ok(e) => {
                    let obj = self.builder.build(py, &e)?;
                    on_event(obj, &e)?;
                }
                Err(err) => errors.push(err),
            }
        }
        Ok(errors)
    }

    /// The core's end of stream, recorded on the object.
    pub fn finish_inner(&mut self, py: Python<'_>) -> PyResult<()> {
        let end = self.inner.finish();
        self.discarded_bytes = end.discarded_bytes;
        self.unterminated = match end.unterminated {
            Some(e) => Some(self.builder.build(py, &e.as_event())?),
            None => None,
        };
        Ok(())
    }

    /// The core decoder.
    pub fn core(&self) -> &Decoder {
        &self.inner
    }
}

#[pymethods]
impl SSEDecoder {
    #[new]
    #[pyo3(signature = (*, max_line_len = 16777216, max_event_size = 16777216, utf8 = "replace"))]
    fn new(max_line_len: usize, max_event_size: usize, utf8: &str) -> PyResult<Self> {
        let config = DecoderConfig { max_line_len, max_event_size, utf8: utf8_mode(utf8)? };
        Ok(SSEDecoder {
            inner: Decoder::with_config(config),
            builder: EventBuilder::default(),
            discarded_bytes: 0,
            unterminated: None,
            scratch: Vec::new(),
        })
    }

    /// Decodes a chunk; returns the events it completed.
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let mut events = std::mem::take(&mut self.scratch);
        let errors = with_bytes(data, |chunk| {
            self.feed_into(py, chunk, |obj, _| {
                events.push(obj);
                Ok(())
            })
        })??;
        // One exactly sized list (no growth while appending); the vector is kept for the next chunk.
        let list = PyList::new(py, events.drain(..))?;
        self.scratch = events;
        if errors.is_empty() {
            Ok(list)
        } else {
            Err(decode_error_with_events(py, &errors, &list))
        }
    }

    /// Ends the stream. Always `[]`: per the spec an unterminated event is
    /// discarded; see `discarded_bytes` and `unterminated`.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.finish_inner(py)?;
        Ok(PyList::empty(py))
    }

    /// Forgets everything, including the last event ID.
    fn reset(&mut self) {
        self.inner.reset();
        self.discarded_bytes = 0;
        self.unterminated = None;
    }

    /// Bytes discarded by the last `finish()` (0 for a clean end).
    #[getter]
    fn discarded_bytes(&self) -> u64 {
        self.discarded_bytes
    }

    /// The event the last `finish()` discarded, had a blank line followed.
    #[getter]
    fn unterminated(&self, py: Python<'_>) -> Option<Py<ServerSentEvent>> {
        self.unterminated.as_ref().map(|e| e.clone_ref(py))
    }

    /// The last event ID (for `Last-Event-ID` on reconnection).
    #[getter]
    fn last_event_id(&self) -> Option<&str> {
        self.inner.last_event_id()
    }

    /// The last valid `retry` value of the stream, in milliseconds.
    #[getter]
    fn reconnection_time(&self) -> Option<u64> {
        self.inner.reconnection_time()
    }

    #[getter]
    fn max_line_len(&self) -> usize {
        self.inner.config().max_line_len
    }

    #[getter]
    fn max_event_size(&self) -> usize {
        self.inner.config().max_event_size
    }

    #[getter]
    fn utf8(&self) -> &'static str {
        match self.inner.config().utf8 {
            Utf8Mode::Replace => "replace",
            Utf8Mode::Strict => "strict",
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "SSEDecoder(max_line_len={}, max_event_size={}, utf8={:?})",
            self.max_line_len(),
            self.max_event_size(),
            self.utf8()
        )
    }
}

/// The SSE encoder: writes events into a buffer that `take_bytes()` empties.
#[pyclass(module = "ssefold")]
#[derive(Default)]
pub struct SSEEncoder {
    inner: Encoder,
}

#[pymethods]
impl SSEEncoder {
    #[new]
    fn new() -> Self {
        SSEEncoder::default()
    }

    /// Appends one event; raises `EncodeError` (writing nothing) for a line
    /// break in `event`/`id` or a NUL in `id`.
    #[pyo3(signature = (data, *, event = None, id = None, retry = None))]
    fn event(
        &mut self,
        py: Python<'_>,
        data: &str,
        event: Option<&str>,
        id: Option<&str>,
        retry: Option<u64>,
    ) -> PyResult<()> {
        self.inner.event(event, data, id, retry).map_err(|e| e.to_py_err(py))
    }

    /// Appends a decoded event again.
    fn write_event(&mut self, py: Python<'_>, event: &Bound<'_, ServerSentEvent>) -> PyResult<()> {
        let e = event.get();
        let (name, data) = e.parts(py);
        let id = e.id.as_ref().map(|s| s.bind(py).to_cow()).transpose()?;
        let (name, data) = (name.to_cow()?, data.to_cow()?);
        self.inner.write_event(&Event::new(&name, &data, id.as_deref(), e.retry)).map_err(|e| e.to_py_err(py))
    }

    /// Appends a standalone `retry` field.
    fn retry(&mut self, ms: u64) {
        self.inner.retry(ms);
    }

    /// Appends a comment (one `:` line per line of `text`).
    fn comment(&mut self, text: &str) {
        self.inner.comment(text);
    }

    /// Appends a keep-alive (`:\n`).
    fn keep_alive(&mut self) {
        self.inner.keep_alive();
    }

    /// Takes the bytes written so far, leaving the encoder empty.
    fn take_bytes<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes = PyBytes::new(py, self.inner.as_bytes());
        self.inner.clear();
        bytes
    }

    /// The bytes written so far (a copy).
    fn getvalue<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.as_bytes())
    }

    /// Forgets the bytes written so far.
    fn clear(&mut self) {
        self.inner.clear();
    }

    fn __len__(&self) -> usize {
        self.inner.as_bytes().len()
    }
}
