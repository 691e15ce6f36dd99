//! Python values <-> Rust values: input bytes and cached strings.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

/// Runs `f` over the bytes of a `bytes`, `bytearray` or `memoryview`.
pub fn with_bytes<R>(data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(f(b.as_bytes()));
    }
    if let Ok(b) = data.cast::<PyByteArray>() {
        // Copied: the bytearray could be resized while we read it.
        return Ok(f(&b.to_vec()));
    }
    if data.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("expected bytes, got str (encode it first)"));
    }
    if data.is_instance_of::<PyMemoryView>() {
        let copy = data.py().get_type::<PyBytes>().call1((data,))?;
        let b = copy.cast::<PyBytes>()?;
        return Ok(f(b.as_bytes()));
    }
    Err(PyTypeError::new_err(format!("expected bytes-like object, got {}", data.get_type().name()?)))
}

/// Python strings for a small set of recurring values (event types, ids):
/// most streams use a handful, so each is built once.
#[derive(Default)]
pub struct StringCache {
    entries: Vec<(String, Py<PyString>)>,
}

impl StringCache {
    /// At most this many distinct strings are kept; past that, new ones are
    /// built each time (still correct, just not cached).
    const CAP: usize = 32;

    /// The Python string for `s`.
    #[inline]
    pub fn get(&mut self, py: Python<'_>, s: &str) -> Py<PyString> {
        for (k, v) in &self.entries {
            if k == s {
                return v.clone_ref(py);
            }
        }
        let v = PyString::new(py, s).unbind();
        if self.entries.len() < Self::CAP && s.len() <= 64 {
            self.entries.push((s.to_owned(), v.clone_ref(py)));
        }
        v
    }
}

/// The last id seen, reused while it stays the same (the id in force is
/// repeated on every event after an `id` field).
#[derive(Default)]
pub struct LastString {
    last: Option<(String, Py<PyString>)>,
}

impl LastString {
    /// The Python string for `s`.
    #[inline]
    pub fn get(&mut self, py: Python<'_>, s: &str) -> Py<PyString> {
        if let Some((k, v)) = &self.last {
            if k == s {
                return v.clone_ref(py);
            }
        }
        let v = PyString::new(py, s).unbind();
        self.last = Some((s.to_owned(), v.clone_ref(py)));
        v
    }
}

/// The folded message as Python objects (what `value_to_py` gives for
/// [`MessageView::into_value`]), built from what the stream lends: no Rust
/// copy of the message first.
pub fn message_to_py<'py>(py: Python<'py>, view: ssefold::providers::MessageView<'_>) -> PyResult<Bound<'py, PyAny>> {
    use ssefold::providers::{MessageView, PathStep};
    match view {
        MessageView::Owned(value) => value_to_py(py, &value),
        MessageView::Object { base, key, value } => {
            let dict = pyo3::types::PyDict::new(py);
            let list = |py: Python<'py>| -> PyResult<Bound<'py, PyAny>> {
                let list = pyo3::types::PyList::empty(py);
                for item in value {
                    list.append(value_to_py(py, item)?)?;
                }
                Ok(list.into_any())
            };
            for (k, v) in base {
                let v = if k == key { list(py)? } else { value_to_py(py, v)? };
                dict.set_item(PyString::new(py, k), v)?;
            }
            if !base.contains_key(key) {
                dict.set_item(PyString::new(py, key), list(py)?)?;
            }
            Ok(dict.into_any())
        }
        // Values the stream keeps as text are built now (the caller asked
        // for objects), by Python's own `json.loads`: no Rust tree of them
        // first (16 MB of `[[[]]],…` is a 1.1 GB tree). A text with a `\u`
        // escape of a surrogate goes the Rust way, a lone one becoming
        // U+FFFD as everywhere else; so does one `json.loads` refuses (too
        // deep for its recursion limit).
        MessageView::Spliced { value, raw } => {
            let message = value_to_py(py, &value)?;
            let loads = py.import("json")?.getattr("loads")?;
            for (path, text) in raw {
                let Some((last, parents)) = path.split_last() else { continue };
                let step = |obj: &Bound<'py, PyAny>, step: &PathStep| match step {
                    PathStep::Key(k) => obj.get_item(*k),
                    PathStep::Index(i) => obj.get_item(*i),
                };
                let mut slot = message.clone();
                for s in parents {
                    slot = step(&slot, s)?;
                }
                let surrogate = text.get().as_bytes().windows(4).any(|w| {
                    w[..2] == *b"\\u"
                        && matches!(w[2], b'd' | b'D')
                        && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                });
                let parsed = match (!surrogate).then(|| loads.call1((text.get(),))) {
                    Some(Ok(v)) => v,
                    _ => {
                        let one =
                            MessageView::Spliced { value: serde_json::Value::Null, raw: vec![(Vec::new(), text)] };
                        value_to_py(py, &one.into_value())?
                    }
                };
                match last {
                    PathStep::Key(k) => slot.set_item(*k, parsed)?,
                    PathStep::Index(i) => slot.set_item(*i, parsed)?,
                }
            }
            Ok(message)
        }
    }
}

/// A JSON value as Python objects: `dict` (member order kept), `list`,
/// `str`, `int`, `float`, `bool`, `None`.
pub fn value_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = pyo3::types::PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = pyo3::types::PyDict::new(py);
            for (k, v) in map {
                dict.set_item(PyString::new(py, k), value_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

// ---- `str` arguments that UTF-8 cannot encode -------------------------------
//
// A Python `str` may hold lone surrogates (`"\ud800"`; `os.fsdecode` makes
// them of a file name that is not UTF-8: U+DC80-U+DCFF). Rust strings cannot:
// what a `str` argument is decides what happens to one.
// * A name, id or key the host chose (a call id, a tool name, an approval
//   id): the host's mistake, a typed `EncodeError` naming the argument
//   ([`ident`]).
// * Data the host passes on (a tool's output, a progress text, a message, a
//   JSON value): each lone surrogate becomes U+FFFD and a `UnicodeWarning`
//   says so ([`data_text`], [`py_to_data`]); nothing is lost but those
//   characters.
// * A word from a fixed set (a provider, a format, a state): read as it
//   comes ([`lossy`]), so the unknown word gets the usual `ValueError`.

/// A `str` argument that names or identifies something: its text, or an
/// `EncodeError` (`.field`: the argument) for a lone surrogate.
pub fn ident<'a>(s: &'a Bound<'_, PyString>, field: &'static str) -> PyResult<Cow<'a, str>> {
    s.to_cow().map_err(|_| crate::errors::encode_error(s.py(), field, "a lone surrogate cannot be encoded as UTF-8"))
}

/// A `str` as UTF-8, each lone surrogate U+FFFD; with how many there were.
pub fn lossy_counted<'a>(s: &'a Bound<'_, PyString>) -> PyResult<(Cow<'a, str>, usize)> {
    if let Ok(text) = s.to_cow() {
        return Ok((text, 0));
    }
    // `surrogatepass` writes a surrogate as the 3 bytes ED A0-BF 80-BF (which
    // valid UTF-8 never holds: after ED comes 80-9F); U+FFFD is 3 bytes too.
    let encoded = s.call_method1(pyo3::intern!(s.py(), "encode"), ("utf-8", "surrogatepass"))?;
    let mut bytes = encoded.cast::<PyBytes>()?.as_bytes().to_vec();
    let mut replaced = 0;
    let mut i = 0;
    while i + 2 < bytes.len() {
        if bytes[i] == 0xED && bytes[i + 1] >= 0xA0 {
            bytes[i..i + 3].copy_from_slice("\u{FFFD}".as_bytes());
            replaced += 1;
            i += 3;
        } else {
            i += 1;
        }
    }
    let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok((Cow::Owned(text), replaced))
}

/// A `str` from a fixed set of words: each lone surrogate U+FFFD (the word
/// is then unknown: the caller's usual error).
pub fn lossy<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    Ok(lossy_counted(s)?.0)
}

/// A `str` argument that is data (`what`: which, for the warning): each
/// lone surrogate U+FFFD, with a `UnicodeWarning`.
pub fn data_text<'a>(s: &'a Bound<'_, PyString>, what: &str) -> PyResult<Cow<'a, str>> {
    let (text, replaced) = lossy_counted(s)?;
    warn_replaced(s.py(), what, replaced)?;
    Ok(text)
}

/// The `UnicodeWarning` for `replaced` lone surrogates in `what` (none for 0).
pub fn warn_replaced(py: Python<'_>, what: &str, replaced: usize) -> PyResult<()> {
    if replaced == 0 {
        return Ok(());
    }
    let message = format!("{what}: {replaced} lone surrogate(s) replaced with U+FFFD (UTF-8 cannot encode them)");
    let message = std::ffi::CString::new(message).unwrap_or_default();
    let category = py.get_type::<pyo3::exceptions::PyUnicodeWarning>();
    PyErr::warn(py, category.as_any(), &message, 1)
}

/// [`py_to_value`] of data the host passes on (`what`, for the warning):
/// lone surrogates in its strings and keys are U+FFFD, with a
/// `UnicodeWarning`.
pub fn py_to_data(obj: &Bound<'_, PyAny>, max_depth: usize, what: &str) -> PyResult<serde_json::Value> {
    let mut replaced = 0;
    let value = py_to_value_at(obj, 0, max_depth, &mut replaced)?;
    warn_replaced(obj.py(), what, replaced)?;
    Ok(value)
}

/// A Python value as JSON, without JSON text: `dict` (`str` keys),
/// `list`/`tuple`, `str`, `int` (64 bits), `float` (finite), `bool`,
/// `None`, and `bytes` as base64 text (a `media_delta`'s data in the JSON
/// form); nesting at most `max_depth` deep. Anything else is a `TypeError`,
/// a value out of range or too deep a `ValueError`; a lone surrogate in a
/// string is U+FFFD (see [`py_to_data`] for the warning).
pub fn py_to_value(obj: &Bound<'_, PyAny>, max_depth: usize) -> PyResult<serde_json::Value> {
    py_to_value_at(obj, 0, max_depth, &mut 0)
}

fn py_to_value_at(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    max_depth: usize,
    replaced: &mut usize,
) -> PyResult<serde_json::Value> {
    use pyo3::exceptions::PyValueError;
    use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyTuple};
    use serde_json::Value;
    if depth > max_depth {
        return Err(PyValueError::new_err(format!("value nested too deeply for JSON (over {max_depth} levels)")));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(i.into());
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(u.into());
        }
        return Err(PyValueError::new_err("integer out of the 64-bit range JSON numbers use here"));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return serde_json::Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err("NaN and infinities are not JSON"));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let (text, n) = lossy_counted(s)?;
        *replaced += n;
        return Ok(Value::String(text.into_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        let text = obj.py().import("base64")?.call_method1("b64encode", (b,))?;
        return Ok(Value::String(String::from_utf8_lossy(text.cast::<PyBytes>()?.as_bytes()).into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k.cast::<PyString>().map_err(|_| PyTypeError::new_err("JSON object keys must be str"))?;
            let (key, n) = lossy_counted(key)?;
            *replaced += n;
            map.insert(key.into_owned(), py_to_value_at(&v, depth + 1, max_depth, replaced)?);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items: PyResult<Vec<Value>> =
            obj.try_iter()?.map(|item| py_to_value_at(&item?, depth + 1, max_depth, replaced)).collect();
        return Ok(Value::Array(items?));
    }
    Err(PyTypeError::new_err(format!("{} is not JSON-serializable", obj.get_type().name()?)))
}

/// Text handed to Python lazily: a range of a buffer shared by the objects
/// one call made (filled while the GIL was released: one buffer per call,
/// not one allocation per event), or of the `bytes` object the call was
/// given (no copy at all), its `str` built on first access and kept. An
/// object keeps its call's buffer alive (at most about the chunk fed).
pub struct LazyText {
    /// The shared buffer and the range of it; `None` for a `str` given.
    text: Option<(Source, Range<usize>)>,
    py_text: OnceLock<Py<PyString>>,
}

/// Where a [`LazyText`]'s bytes are.
enum Source {
    /// Texts collected by one call.
    Text(Arc<SharedText>),
    /// The `bytes` object a call was fed: the range is valid UTF-8.
    Bytes(Arc<SharedBytes>),
}

/// A `bytes` object fed to a call, shared by the objects whose text lies in
/// it (immutable, so a range of it stays what it was when decoded).
pub struct SharedBytes(Py<PyBytes>);

impl SharedBytes {
    /// Shares `bytes`.
    pub fn new(bytes: Py<PyBytes>) -> Arc<Self> {
        Arc::new(SharedBytes(bytes))
    }
}

impl LazyText {
    /// `range` of `buffer`, which must lie on character boundaries.
    pub fn shared(buffer: &Arc<SharedText>, range: Range<usize>) -> Self {
        debug_assert!(buffer.get(range.clone()).is_some());
        LazyText { text: Some((Source::Text(Arc::clone(buffer)), range)), py_text: OnceLock::new() }
    }

    /// `range` of the `bytes` object `bytes`, which must be valid UTF-8.
    pub fn in_bytes(bytes: &Arc<SharedBytes>, range: Range<usize>) -> Self {
        LazyText { text: Some((Source::Bytes(Arc::clone(bytes)), range)), py_text: OnceLock::new() }
    }

    /// A copy of `text`, its `str` made when first asked for.
    pub fn owned(text: &str) -> Self {
        let len = text.len();
        LazyText::shared(&Arc::new(SharedText(text.to_owned())), 0..len)
    }

    /// Text that is already a `str`.
    pub fn string(string: Py<PyString>) -> Self {
        LazyText { text: None, py_text: OnceLock::from(string) }
    }

    /// The `str`.
    pub fn get<'py>(&self, py: Python<'py>) -> &Bound<'py, PyString> {
        self.py_text
            .get_or_init(|| match &self.text {
                // Python's decoder checks the bytes once (valid: the decoder
                // checked them when it decoded the event).
                Some((Source::Bytes(bytes), range)) => {
                    let b = bytes.0.as_bytes(py).get(range.clone()).unwrap_or_default();
                    PyString::from_bytes(py, b)
                        .unwrap_or_else(|_| PyString::new(py, &String::from_utf8_lossy(b)))
                        .unbind()
                }
                _ => PyString::new(py, &self.text(py)).unbind(),
            })
            .bind(py)
    }

    /// The text, without making a `str`.
    pub fn to_cow<'a>(&'a self, py: Python<'a>) -> PyResult<Cow<'a, str>> {
        match &self.text {
            Some(_) => Ok(self.text(py)),
            None => self.get(py).to_cow(),
        }
    }

    /// The text from its source (`""` for a `str` given: see [`get`](Self::get)).
    fn text<'a>(&'a self, py: Python<'a>) -> Cow<'a, str> {
        match &self.text {
            Some((Source::Text(buffer), range)) => Cow::Borrowed(buffer.get(range.clone()).unwrap_or_default()),
            // Validated by the decoder when it was decoded; checked again
            // here (for `to_cow` only: `get` has Python decode the bytes) to
            // stay without `unsafe`.
            Some((Source::Bytes(bytes), range)) => {
                String::from_utf8_lossy(bytes.0.as_bytes(py).get(range.clone()).unwrap_or_default())
            }
            None => Cow::Borrowed(""),
        }
    }
}

/// The texts of one call, shared by the objects made from them. When the
/// last of them is dropped, its memory goes back to the dropping thread's
/// pool of free buffers (see [`TextArena`]) instead of to the allocator.
pub struct SharedText(String);

impl core::ops::Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for SharedText {
    fn drop(&mut self) {
        FreeBuffers::give_back(std::mem::take(&mut self.0));
    }
}

/// How many free buffers a thread keeps for the next calls' texts.
pub const MAX_FREE_BUFFERS: usize = 4;

/// The largest buffer (capacity, bytes) a thread keeps; a larger one is
/// returned to the allocator.
pub const MAX_FREE_BUFFER_BYTES: usize = 4 << 20;

/// A thread's free text buffers (at most [`MAX_FREE_BUFFERS`], each at most
/// [`MAX_FREE_BUFFER_BYTES`]).
struct FreeBuffers;

thread_local! {
    static FREE_BUFFERS: core::cell::RefCell<Vec<String>> = const { core::cell::RefCell::new(Vec::new()) };
}

impl FreeBuffers {
    fn give_back(mut buffer: String) {
        if buffer.capacity() == 0 || buffer.capacity() > MAX_FREE_BUFFER_BYTES {
            return;
        }
        buffer.clear();
        // During thread teardown the pool may be gone: the buffer is freed.
        let _ = FREE_BUFFERS.try_with(|free| {
            if let Ok(mut free) = free.try_borrow_mut() {
                if free.len() < MAX_FREE_BUFFERS {
                    free.push(buffer);
                } else if let Some(smallest) = free.iter_mut().min_by_key(|b| b.capacity()) {
                    if smallest.capacity() < buffer.capacity() {
                        *smallest = buffer;
                    }
                }
            }
        });
    }

    /// A free buffer of at least `capacity` bytes if the thread has one,
    /// else a new one.
    fn take(capacity: usize) -> String {
        let reused = FREE_BUFFERS
            .try_with(|free| {
                let mut free = free.try_borrow_mut().ok()?;
                let i = free.iter().position(|b| b.capacity() >= capacity)?;
                Some(free.swap_remove(i))
            })
            .ok()
            .flatten();
        reused.unwrap_or_else(|| String::with_capacity(capacity))
    }
}

/// Where the texts of one call are collected without the GIL, then shared
/// by the objects made from them ([`LazyText`]).
///
/// Buffers are recycled: one whose objects are all gone returns to the
/// pool of the thread that dropped the last of them (at most
/// [`MAX_FREE_BUFFERS`] of at most [`MAX_FREE_BUFFER_BYTES`] each), and the
/// next call on that thread, of any decoder or stream, writes into it. Fresh
/// memory costs a page fault per 4 KiB, and growing a buffer copies it:
/// kernel work that two threads also contend on (before the pool, most of a
/// two-thread `feed()` on chat-sized events was page faults).
#[derive(Default)]
pub struct TextArena {
    text: String,
}

impl TextArena {
    /// Appends `s`; returns its range.
    pub fn push(&mut self, s: &str) -> Range<usize> {
        if self.text.capacity() == 0 {
            self.text = FreeBuffers::take(s.len());
        }
        let start = self.text.len();
        self.text.push_str(s);
        start..self.text.len()
    }

    /// Hands the texts over to be shared; the next call writes into a free
    /// buffer at least as large as these texts (the next call's are likely
    /// as long), or a new one.
    pub fn share(&mut self) -> Arc<SharedText> {
        let len = self.text.len();
        if len == 0 {
            return Arc::new(SharedText(String::new()));
        }
        let shared = std::mem::replace(&mut self.text, FreeBuffers::take(len));
        Arc::new(SharedText(shared))
    }

    /// The texts collected so far.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Forgets the texts (keeps the buffer).
    pub fn clear(&mut self) {
        self.text.clear();
    }
}
