//! `SSEDecoder`, `ServerSentEvent` and `SSEEncoder`: conversion and lifetime
//! only; the decoding rules live in `ssefold::sse`.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyList, PyString};

use core::ops::Range;

use ssefold::sse::{
    DecodeError as CoreDecodeError, Decoder, DecoderConfig, Encoder, Event, Utf8Mode, DEFAULT_LIMIT, DEFAULT_MAX_ID_LEN,
};

use crate::convert::{with_bytes, LastString, LazyText, SharedBytes, StringCache, TextArena};
use crate::errors::{decode_error_with_events, encode_error, ToPyErr};

/// One dispatched Server-Sent Event (immutable).
// No PyO3 `freelist`: its list is one mutex-guarded pool per class, which two
// threads making and dropping events contend for on a free-threaded build
// (two threads decoded at 0.63x one with it); on a GIL build it made no
// measurable difference (BENCHMARKS.md, "Free-threaded CPython 3.13t").
#[pyclass(module = "ssefold", frozen)]
pub struct ServerSentEvent {
    /// The event type; `None` for `"message"`, the type of a block without
    /// one (nearly every event of some providers: no string reference is
    /// taken and released per event).
    event: Option<Py<PyString>>,
    /// The data lines joined with `"\n"`: the `str` built on first access.
    pub data: LazyText,
    /// The last event ID in force at dispatch (`None` before any `id`).
    #[pyo3(get)]
    pub id: Option<Py<PyString>>,
    /// The block's own valid `retry` value in milliseconds, if any.
    #[pyo3(get)]
    pub retry: Option<u64>,
}

impl ServerSentEvent {
    /// The event type.
    pub fn event_type<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        match &self.event {
            Some(event) => event.bind(py).clone(),
            None => intern!(py, "message").clone(),
        }
    }

    /// The Python value of an event type (`None` for `"message"`).
    fn type_value(py: Python<'_>, event: &str, types: &mut StringCache) -> Option<Py<PyString>> {
        (event != "message").then(|| types.get(py, event))
    }

    fn parts<'py>(&self, py: Python<'py>) -> (Bound<'py, PyString>, &Bound<'py, PyString>) {
        (self.event_type(py), self.data.get(py))
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
        ServerSentEvent {
            event: (!event.is_empty() && event != "message").then(|| PyString::new(py, event).unbind()),
            data: LazyText::string(PyString::new(py, data).unbind()),
            id: id.map(|s| PyString::new(py, s).unbind()),
            retry,
        }
    }

    /// The event type, `"message"` when the block had none.
    #[getter]
    fn event(&self, py: Python<'_>) -> Py<PyString> {
        self.event_type(py).unbind()
    }

    /// The data lines joined with `"\n"`.
    #[getter]
    fn data(&self, py: Python<'_>) -> Py<PyString> {
        self.data.get(py).clone().unbind()
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
            && self.event_type(py).as_any().eq(other.event_type(py))?
            && self.data.get(py).as_any().eq(other.data.get(py))?
            && self.id_str(py)? == other.id_str(py)?;
        match op {
            CompareOp::Eq => Ok(equal.into_pyobject(py)?.to_owned().into_any().unbind()),
            CompareOp::Ne => Ok((!equal).into_pyobject(py)?.to_owned().into_any().unbind()),
            _ => Ok(py.NotImplemented()),
        }
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        let (event, data) = self.parts(py);
        let tuple = (&event, data, self.id.as_ref().map(|s| s.bind(py)), self.retry);
        tuple.into_pyobject(py)?.hash()
    }
}

/// Builds Python event objects, reusing the strings that recur.
#[derive(Default)]
pub struct EventBuilder {
    types: StringCache,
    ids: LastString,
    /// The id string of the last decoded event and the decoder's
    /// `id_generation` it was made at: shared by every event until the
    /// generation changes (no comparison of the id's bytes per event).
    decoded_id: Option<(u64, Option<Py<PyString>>)>,
}

impl EventBuilder {
    /// The Python object for a core event.
    #[inline]
    pub fn build(&mut self, py: Python<'_>, e: &Event<'_>) -> PyResult<Py<ServerSentEvent>> {
        let ev = ServerSentEvent {
            event: ServerSentEvent::type_value(py, e.event(), &mut self.types),
            data: LazyText::owned(e.data()),
            id: e.id().map(|id| self.ids.get(py, id)),
            retry: e.retry(),
        };
        Py::new(py, ev)
    }

    /// Builds the events of a [`Batch`] decoded with the GIL released;
    /// `fed` is the `bytes` object decoded when the batch's data may lie in
    /// it ([`Batch::decode`] with `in_place`).
    fn build_batch(
        &mut self,
        py: Python<'_>,
        batch: &mut Batch,
        fed: Option<&Bound<'_, PyBytes>>,
        out: &mut Vec<Py<ServerSentEvent>>,
    ) -> PyResult<()> {
        out.reserve(batch.events.len());
        if batch.events.is_empty() {
            return Ok(());
        }
        let text = batch.text.share();
        let fed =
            fed.filter(|_| batch.events.iter().any(|p| p.data_in_chunk)).map(|b| SharedBytes::new(b.clone().unbind()));
        // One Python string per distinct type of the batch, not a lookup per event.
        let types: Vec<Py<PyString>> = batch.types.iter().map(|r| self.types.get(py, &text[r.clone()])).collect();
        for p in &batch.events {
            if let Some(r) = &p.new_id {
                let id = r.as_ref().map(|r| PyString::new(py, &text[r.clone()]).unbind());
                self.decoded_id = Some((p.id_generation, id));
            }
            let id = self.decoded_id.as_ref().and_then(|(_, id)| id.as_ref().map(|s| s.clone_ref(py)));
            let ev = ServerSentEvent {
                // `Batch::MESSAGE` is past the table: `None`, `"message"`.
                event: types.get(p.event).map(|t| t.clone_ref(py)),
                data: match &fed {
                    Some(fed) if p.data_in_chunk => LazyText::in_bytes(fed, p.data.clone()),
                    _ => LazyText::shared(&text, p.data.clone()),
                },
                id,
                retry: p.retry,
            };
            out.push(Py::new(py, ev)?);
        }
        Ok(())
    }
}

/// One event decoded with the GIL released, before its Python object exists.
struct Pending {
    /// The event type: an index into [`Batch::types`], or
    /// [`Batch::MESSAGE`] for `"message"`.
    event: usize,
    /// The data: a range of the chunk (`data_in_chunk`) or copied out of
    /// the decoder into the batch's text (its `str` is made on access).
    data: Range<usize>,
    data_in_chunk: bool,
    /// `Some` when the id changed (its new value, `None` for absent) since
    /// the last event converted.
    new_id: Option<Option<Range<usize>>>,
    id_generation: u64,
    retry: Option<u64>,
}

/// The events and errors of one chunk, collected by the core without the GIL
/// (kept across calls for its capacity), then turned into Python objects.
#[derive(Default)]
struct Batch {
    /// Event types, ids and data, shared by the events once built.
    text: TextArena,
    /// The event types of the batch (ranges of `text`): consecutive events
    /// of one type share an entry, and so do those of a type among the
    /// last [`Batch::TYPES_SEARCHED`] entries.
    types: Vec<Range<usize>>,
    events: Vec<Pending>,
    errors: Vec<CoreDecodeError>,
}

impl Batch {
    /// How many of the latest types an event's type is compared with
    /// before it gets an entry of its own (a stream of ever new types
    /// costs a bounded search per event).
    const TYPES_SEARCHED: usize = 8;

    /// [`Pending::event`] of an event of type `"message"` (no entry).
    const MESSAGE: usize = usize::MAX;

    fn clear(&mut self) {
        self.text.clear();
        self.types.clear();
        self.events.clear();
        self.errors.clear();
    }

    fn push_text(&mut self, s: &str) -> Range<usize> {
        self.text.push(s)
    }

    /// The entry of [`Batch::types`] for `event_type`, made if new.
    fn type_index(&mut self, event_type: &str) -> usize {
        let searched = self.types.len().saturating_sub(Self::TYPES_SEARCHED);
        let text = self.text.as_str();
        if let Some(i) = self.types[searched..].iter().rposition(|r| &text[r.clone()] == event_type) {
            return searched + i;
        }
        let range = self.text.push(event_type);
        self.types.push(range);
        self.types.len() - 1
    }

    /// Decodes `chunk` into the batch. `last_generation` is the id
    /// generation of the last event already converted (`None`: none yet).
    /// With `in_place` (the chunk is an immutable `bytes` object the events
    /// may keep), data lying in the chunk is recorded as a range of it
    /// instead of copied.
    fn decode(&mut self, decoder: &mut Decoder, chunk: &[u8], mut last_generation: Option<u64>, in_place: bool) {
        self.clear();
        let mut events = decoder.feed(chunk);
        while let Some(item) = events.next_event() {
            match item {
                Ok(e) => {
                    let event = if e.event() == "message" { Self::MESSAGE } else { self.type_index(e.event()) };
                    let data = e.data();
                    // Where the data lies in the chunk, if it does (a whole
                    // event, nearly every one, is a slice of it).
                    let at = (data.as_ptr() as usize).wrapping_sub(chunk.as_ptr() as usize);
                    let data_in_chunk = in_place && at <= chunk.len() && data.len() <= chunk.len() - at;
                    let data = if data_in_chunk { at..at + data.len() } else { self.push_text(data) };
                    let generation = e.id_generation();
                    let new_id = if last_generation == Some(generation) {
                        None
                    } else {
                        last_generation = Some(generation);
                        Some(e.id().map(|id| self.push_text(id)))
                    };
                    self.events.push(Pending {
                        event,
                        data,
                        data_in_chunk,
                        new_id,
                        id_generation: generation,
                        retry: e.retry(),
                    });
                }
                Err(err) => self.errors.push(err),
            }
        }
    }
}

// The Python signature spells the core's default limit out.
const _: () = assert!(DEFAULT_LIMIT == 16777216 && DEFAULT_MAX_ID_LEN == 4096);

/// The incremental SSE decoder (WHATWG rules, any chunking).
#[pyclass(module = "ssefold")]
pub struct SSEDecoder {
    inner: Decoder,
    builder: EventBuilder,
    discarded_bytes: u64,
    unterminated: Option<Py<ServerSentEvent>>,
    /// The events of the chunk being fed (empty between calls; kept for its capacity).
    scratch: Vec<Py<ServerSentEvent>>,
    /// The core's events of the chunk being fed, collected without the GIL.
    batch: Batch,
}

#[pymethods]
impl SSEDecoder {
    #[new]
    #[pyo3(signature = (*, max_line_len = 16777216, max_event_size = 16777216, max_id_len = 4096, utf8 = "replace"))]
    fn new(
        py: Python<'_>,
        max_line_len: usize,
        max_event_size: usize,
        max_id_len: usize,
        utf8: &str,
    ) -> PyResult<Self> {
        let utf8 = Utf8Mode::from_name(utf8).map_err(|e| e.to_py_err(py))?;
        let config = DecoderConfig { max_line_len, max_event_size, max_id_len, utf8 };
        // The ranges are the core's (`ssefold::config`): a zero limit is refused.
        config.validate().map_err(|e| e.to_py_err(py))?;
        Ok(SSEDecoder {
            inner: Decoder::with_config(config),
            builder: EventBuilder::default(),
            discarded_bytes: 0,
            unterminated: None,
            scratch: Vec::new(),
            batch: Batch::default(),
        })
    }

    /// Decodes a chunk; returns the events it completed.
    ///
    /// The core decodes with the GIL released (into a reused batch); the
    /// Python objects are built after, with it held. An event whose data
    /// lies in a fed `bytes` object reads it from there (no copy; the event
    /// keeps the chunk alive, as it kept its call's copy before).
    fn feed<'py>(&mut self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let mut events = std::mem::take(&mut self.scratch);
        let mut batch = std::mem::take(&mut self.batch);
        let last_generation = self.builder.decoded_id.as_ref().map(|(g, _)| *g);
        let inner = &mut self.inner;
        let builder = &mut self.builder;
        // A `bytes` object is immutable: events may keep ranges of it.
        let fed = data.cast::<PyBytes>().ok();
        let in_place = fed.is_some();
        let built = with_bytes(data, |chunk| {
            py.detach(|| batch.decode(inner, chunk, last_generation, in_place));
            builder.build_batch(py, &mut batch, fed, &mut events)
        })?;
        let errors = std::mem::take(&mut batch.errors);
        batch.clear();
        self.batch = batch;
        built?;
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
        let end = self.inner.finish();
        self.discarded_bytes = end.discarded_bytes;
        self.unterminated = match end.unterminated {
            Some(e) => Some(self.builder.build(py, &e.as_event())?),
            None => None,
        };
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
    fn max_id_len(&self) -> usize {
        self.inner.config().max_id_len
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
            "SSEDecoder(max_line_len={}, max_event_size={}, max_id_len={}, utf8={:?})",
            self.max_line_len(),
            self.max_event_size(),
            self.max_id_len(),
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
    ///
    /// A string that cannot be encoded as UTF-8 (a lone surrogate such as
    /// `"\ud800"`) also raises `EncodeError`, naming the field.
    #[pyo3(signature = (data, *, event = None, id = None, retry = None))]
    fn event(
        &mut self,
        py: Python<'_>,
        data: &Bound<'_, PyString>,
        event: Option<&Bound<'_, PyString>>,
        id: Option<&Bound<'_, PyString>>,
        retry: Option<u64>,
    ) -> PyResult<()> {
        let data = utf8_field(py, data, "data")?;
        let event = event.map(|s| utf8_field(py, s, "event")).transpose()?;
        let id = id.map(|s| utf8_field(py, s, "id")).transpose()?;
        self.inner.event(event.as_deref(), &data, id.as_deref(), retry).map_err(|e| e.to_py_err(py))
    }

    /// Appends a decoded event again.
    fn write_event(&mut self, py: Python<'_>, event: &Bound<'_, ServerSentEvent>) -> PyResult<()> {
        let e = event.get();
        let (name, data) = e.parts(py);
        let id = e.id.as_ref().map(|s| utf8_field(py, s.bind(py), "id")).transpose()?;
        let (name, data) = (utf8_field(py, &name, "event")?, utf8_field(py, data, "data")?);
        self.inner.write_event(&Event::new(&name, &data, id.as_deref(), e.retry)).map_err(|e| e.to_py_err(py))
    }

    /// Appends a standalone `retry` field.
    fn retry(&mut self, ms: u64) {
        self.inner.retry(ms);
    }

    /// Appends a comment (one `:` line per line of `text`).
    fn comment(&mut self, py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<()> {
        self.inner.comment(&utf8_field(py, text, "comment")?);
        Ok(())
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

/// The UTF-8 of a Python string, or `EncodeError` (field `field`) when it
/// holds a lone surrogate, which UTF-8 cannot encode.
fn utf8_field<'a>(
    py: Python<'_>,
    s: &'a Bound<'_, PyString>,
    field: &'static str,
) -> PyResult<std::borrow::Cow<'a, str>> {
    s.to_cow().map_err(|_| encode_error(py, field, "a lone surrogate cannot be encoded as UTF-8"))
}
