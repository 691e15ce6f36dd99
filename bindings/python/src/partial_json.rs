//! `parse_partial_json`, `PartialJSON` and its `PathEvent`s over
//! `ssefold::json`.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use ssefold::json::{
    parse_partial_json as core_parse, ContainerKind, PartialJson, PartialJsonError, PartialJsonLimits,
    PathEvent as CorePathEvent, PathSegment,
};

use crate::convert::value_to_py;
use crate::errors::{with_events, ToPyErr};

/// One path-level event of an incremental JSON parse (immutable). O(1) to
/// build however deep: the path is shared with the events before it
/// (`path` builds the tuple on first access), a closing container keeps its
/// JSON text (`value` parses it on first access).
#[pyclass(module = "ssefold", frozen)]
pub struct PathEvent {
    type_: &'static str,
    /// Number of path segments.
    depth: usize,
    /// The innermost path segment, linked to the outer ones.
    node: Option<Arc<PathNode>>,
    /// The path as a tuple, once asked for.
    path: OnceLock<Py<PyTuple>>,
    /// `"object"` / `"array"` for `container_start` and a closing container.
    kind: Option<&'static str>,
    /// The new text for `string_append`.
    text: Option<Py<PyString>>,
    /// The completed scalar value for `value_complete`.
    value: Option<Py<PyAny>>,
    /// The JSON text of a completed container (parsed into `parsed` on access).
    json: Option<Box<str>>,
    parsed: OnceLock<Py<PyAny>>,
}

/// One segment of a path, linked to its parent (shared between events).
pub struct PathNode {
    parent: Option<Arc<PathNode>>,
    segment: PathSegment,
}

/// The path as a tuple of `str` keys and `int` indexes.
fn path_tuple<'py>(py: Python<'py>, node: Option<&Arc<PathNode>>, depth: usize) -> PyResult<Bound<'py, PyTuple>> {
    let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(depth);
    let mut next = node;
    while let Some(n) = next {
        items.push(segment_py(py, &n.segment)?);
        next = n.parent.as_ref();
    }
    items.reverse();
    PyTuple::new(py, items)
}

fn segment_py<'py>(py: Python<'py>, segment: &PathSegment) -> PyResult<Bound<'py, PyAny>> {
    Ok(match segment {
        PathSegment::Key(k) => PyString::new(py, k).into_any(),
        PathSegment::Index(i) => i.into_pyobject(py)?.into_any(),
    })
}

/// One document's current path as linked nodes. Consecutive path events of
/// a document share all but the last segment of the shorter path, so each
/// event costs O(1): cut to `depth - 1` segments, add the last one (a
/// sequence that breaks that rule is rebuilt from the path, O(depth)).
#[derive(Default)]
pub struct PathCache {
    stack: Vec<Arc<PathNode>>,
}

impl PathCache {
    fn node(&mut self, path: &[PathSegment]) -> Option<Arc<PathNode>> {
        let depth = path.len();
        let last = path.last()?;
        let same = |stack: &[Arc<PathNode>], i: usize| stack.get(i).is_some_and(|n| n.segment == path[i]);
        if self.stack.len() == depth && same(&self.stack, depth - 1) && (depth < 2 || same(&self.stack, depth - 2)) {
            return self.stack.last().cloned(); // e.g. a long string's appends
        }
        self.stack.truncate(depth - 1);
        if self.stack.len() != depth - 1 || (depth >= 2 && !same(&self.stack, depth - 2)) {
            self.stack.clear();
            for segment in &path[..depth - 1] {
                self.push(segment);
            }
        }
        self.push(last);
        self.stack.last().cloned()
    }

    fn push(&mut self, segment: &PathSegment) {
        let parent = self.stack.last().cloned();
        self.stack.push(Arc::new(PathNode { parent, segment: segment.clone() }));
    }
}

impl PathEvent {
    /// The wire form as a dict (see `to_dict`): O(1), the depth and the
    /// last segment rather than the path, a container's kind rather than
    /// its value.
    pub fn to_dict_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item(intern!(py, "type"), self.type_)?;
        d.set_item(intern!(py, "depth"), self.depth)?;
        if let Some(n) = &self.node {
            match &n.segment {
                PathSegment::Key(k) => d.set_item(intern!(py, "key"), k.as_str())?,
                PathSegment::Index(i) => d.set_item(intern!(py, "index"), *i)?,
            }
        }
        if let Some(kind) = self.kind {
            d.set_item(intern!(py, "kind"), kind)?;
        } else if let Some(text) = &self.text {
            d.set_item(intern!(py, "text"), text)?;
        } else if self.type_ == "value_complete" {
            d.set_item(intern!(py, "value"), self.value_py(py)?)?;
        }
        Ok(d)
    }

    fn path_py(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        if let Some(path) = self.path.get() {
            return Ok(path.clone_ref(py));
        }
        let path = path_tuple(py, self.node.as_ref(), self.depth)?.unbind();
        Ok(self.path.get_or_init(|| path).clone_ref(py))
    }

    fn value_py(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(json) = &self.json else { return Ok(self.value.as_ref().map(|v| v.clone_ref(py))) };
        if let Some(v) = self.parsed.get() {
            return Ok(Some(v.clone_ref(py)));
        }
        let event = CorePathEvent::ContainerComplete { path: &[], kind: ContainerKind::Object, json };
        let value = match event.value() {
            Some(v) => value_to_py(py, &v)?.unbind(),
            None => py.None(),
        };
        Ok(Some(self.parsed.get_or_init(|| value).clone_ref(py)))
    }

    /// The core path event this object was made from, rebuilt (O(depth):
    /// the path is copied; a scalar's value converted back), for `f`.
    pub fn with_core<R>(&self, py: Python<'_>, f: impl FnOnce(&CorePathEvent<'_>) -> R) -> PyResult<R> {
        let mut path = Vec::with_capacity(self.depth);
        let mut next = self.node.as_ref();
        while let Some(n) = next {
            path.push(n.segment.clone());
            next = n.parent.as_ref();
        }
        path.reverse();
        let kind = match self.kind {
            Some("array") => ContainerKind::Array,
            _ => ContainerKind::Object,
        };
        Ok(match (self.type_, &self.text, &self.json) {
            ("container_start", ..) => f(&CorePathEvent::ContainerStart { path: &path, kind }),
            ("string_append", Some(text), _) => {
                let text = text.bind(py).to_cow()?;
                f(&CorePathEvent::StringAppend { path: &path, text: &text })
            }
            (_, _, Some(json)) => f(&CorePathEvent::ContainerComplete { path: &path, kind, json }),
            _ => {
                let value = match &self.value {
                    Some(v) => {
                        crate::convert::py_to_value(v.bind(py), ssefold::json::PartialJsonLimits::DEFAULT_MAX_DEPTH)?
                    }
                    None => serde_json::Value::Null,
                };
                f(&CorePathEvent::ValueComplete { path: &path, value: &value })
            }
        })
    }

    /// The Python object for a core path event.
    pub fn from_core(py: Python<'_>, e: &CorePathEvent<'_>, paths: &mut PathCache) -> PyResult<Self> {
        let mut text = "";
        let held = HeldPath::from_core(e, paths, |t| {
            text = t;
            0..t.len()
        });
        Self::from_held(py, &held, text)
    }

    /// The Python object for a path event collected without the GIL; a
    /// `string_append`'s text is its range of `texts`.
    pub fn from_held(py: Python<'_>, h: &HeldPath, texts: &str) -> PyResult<Self> {
        let mut event = PathEvent {
            type_: h.payload.type_name(),
            depth: h.depth,
            node: h.node.clone(),
            path: OnceLock::new(),
            kind: None,
            text: None,
            value: None,
            json: None,
            parsed: OnceLock::new(),
        };
        match &h.payload {
            HeldPayload::Kind(kind) => event.kind = Some(kind),
            HeldPayload::Text(range) => {
                event.text = Some(PyString::new(py, texts.get(range.clone()).unwrap_or_default()).unbind())
            }
            HeldPayload::Value(value) => {
                event.kind = container_name(value);
                event.value = Some(value_to_py(py, value)?.unbind());
            }
            HeldPayload::Json(kind, json) => {
                event.kind = Some(kind);
                event.json = Some(json.clone());
            }
        }
        Ok(event)
    }
}

/// A path event held without the GIL: its depth and shared path node (O(1),
/// never the whole path copied) and its payload, owned but for a
/// `string_append`'s text, a range of a buffer the holder keeps (a provider
/// stream's: the call's shared text buffer; no allocation per event).
pub struct HeldPath {
    depth: usize,
    node: Option<Arc<PathNode>>,
    payload: HeldPayload,
}

/// What a held path event carries; the rare ones boxed, to keep the
/// frequent `string_append` small.
enum HeldPayload {
    /// `container_start`: the container's kind.
    Kind(&'static str),
    /// `string_append`: the text's range of the holder's buffer.
    Text(Range<usize>),
    /// `value_complete` of a value given as a tree.
    Value(Box<serde_json::Value>),
    /// `value_complete` of a container given as its JSON text.
    Json(&'static str, Box<str>),
}

impl HeldPayload {
    /// The event's wire name (as the core's `PathEvent::name`).
    fn type_name(&self) -> &'static str {
        match self {
            HeldPayload::Kind(_) => "container_start",
            HeldPayload::Text(_) => "string_append",
            HeldPayload::Value(_) | HeldPayload::Json(..) => "value_complete",
        }
    }
}

/// `object` / `array` for a container value, `None` for a scalar.
fn container_name(value: &serde_json::Value) -> Option<&'static str> {
    match value {
        serde_json::Value::Object(_) => Some("object"),
        serde_json::Value::Array(_) => Some("array"),
        _ => None,
    }
}

fn kind_name(kind: &ContainerKind) -> &'static str {
    match kind {
        ContainerKind::Object => "object",
        ContainerKind::Array => "array",
    }
}

impl HeldPath {
    /// Takes what the Python object needs from a core path event (the path
    /// through `paths`, O(1) amortized); a `string_append`'s text is kept
    /// by `keep_text`, which says where it put it.
    pub fn from_core<'a>(
        e: &CorePathEvent<'a>,
        paths: &mut PathCache,
        keep_text: impl FnOnce(&'a str) -> Range<usize>,
    ) -> Self {
        let payload = match *e {
            CorePathEvent::ContainerStart { kind, .. } => HeldPayload::Kind(kind_name(&kind)),
            CorePathEvent::StringAppend { text, .. } => HeldPayload::Text(keep_text(text)),
            CorePathEvent::ValueComplete { value, .. } => HeldPayload::Value(Box::new(value.clone())),
            CorePathEvent::ContainerComplete { kind, json, .. } => HeldPayload::Json(kind_name(&kind), json.into()),
        };
        HeldPath { depth: e.path().len(), node: paths.node(e.path()), payload }
    }
}

#[pymethods]
impl PathEvent {
    /// `container_start`, `string_append` or `value_complete`.
    #[getter]
    fn r#type(&self) -> &'static str {
        self.type_
    }

    /// Where in the document: `str` keys and `int` indexes (built on first
    /// access, O(depth)).
    #[getter]
    fn path(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        self.path_py(py)
    }

    /// Number of path segments (0: the root value); O(1).
    #[getter]
    fn depth(&self) -> usize {
        self.depth
    }

    /// The last path segment (`None` at the root); O(1).
    #[getter]
    fn last<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.node.as_ref().map(|n| segment_py(py, &n.segment)).transpose()
    }

    /// `object` or `array`: a container_start, or the value_complete of a
    /// container (`None` for scalars and string_append).
    #[getter]
    fn kind(&self) -> Option<&'static str> {
        self.kind
    }

    /// The newly decoded text (string_append only).
    #[getter]
    fn text(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.text.as_ref().map(|t| t.clone_ref(py))
    }

    /// The completed value (value_complete only; `None` otherwise). A
    /// provider stream's closing container is parsed from its text on first
    /// access.
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.value_py(py)
    }

    /// The wire form, O(1) however deep: `{"type", "depth", "key" | "index"
    /// (the last path segment, absent at the root), then "kind" | "text" |
    /// "value"}`; a closing container gives its `kind`, not its value (read
    /// `.value` for it).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.to_dict_py(py)
    }

    /// Equal type, path, kind, text and value.
    fn __eq__(&self, other: &Bound<'_, PyAny>, py: Python<'_>) -> PyResult<bool> {
        let Ok(o) = other.cast::<PathEvent>() else { return Ok(false) };
        let o = o.get();
        Ok(self.to_dict(py)?.eq(o.to_dict(py)?)?
            && self.path_py(py)?.bind(py).eq(o.path_py(py)?)?
            && self.value_py(py)?.into_pyobject(py)?.eq(o.value_py(py)?)?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut s = format!("PathEvent(type='{}', path={}", self.type_, self.path_py(py)?.bind(py).repr()?);
        if let Some(kind) = self.kind {
            s.push_str(&format!(", kind='{kind}'"));
        }
        if let Some(text) = &self.text {
            s.push_str(&format!(", text={}", text.bind(py).repr()?));
        }
        if let Some(value) = self.value_py(py)? {
            s.push_str(&format!(", value={}", value.bind(py).repr()?));
        }
        s.push(')');
        Ok(s)
    }
}

/// Runs `f` over the UTF-8 bytes of a `str` or the bytes of a `bytes`. A
/// `str` holding a lone surrogate is given as `surrogatepass` writes it (ED
/// A0-BF 80-BF, not UTF-8): the parser reports it as invalid, a
/// `PartialJSONError` at its offset.
fn with_text<R>(data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(s) = data.cast::<PyString>() {
        if let Ok(text) = s.to_cow() {
            return Ok(f(text.as_bytes()));
        }
        let bytes = s.call_method1(intern!(s.py(), "encode"), ("utf-8", "surrogatepass"))?;
        return Ok(f(bytes.cast::<PyBytes>()?.as_bytes()));
    }
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(f(b.as_bytes()));
    }
    crate::convert::with_bytes(data, f)
}

/// Best-effort value of a possibly incomplete JSON text (`None` when no
/// value has begun).
#[pyfunction]
#[pyo3(signature = (text, *, partial_strings = true))]
pub fn parse_partial_json<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    partial_strings: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let whole = text.cast::<PyString>().ok().and_then(|s| s.to_cow().ok());
    let result = if let Some(s) = whole {
        core_parse(&s, partial_strings)
    } else {
        let bytes = with_text(text, |b| b.to_vec())?;
        match std::str::from_utf8(&bytes) {
            Ok(s) => core_parse(s, partial_strings),
            Err(_) => {
                // Let the incremental parser report the exact offset.
                let mut p = PartialJson::new();
                p.push(&bytes, |_| {}).map(|_| p.value_with(partial_strings))
            }
        }
    };
    match result {
        Ok(Some(v)) => value_to_py(py, &v),
        Ok(None) => Ok(py.None().into_bound(py)),
        Err(e) => Err(e.to_py_err(py)),
    }
}

/// The incremental partial-JSON parser: push fragments, get path events,
/// read the best-effort value at any time.
///
/// Every path event is O(1) to make however deep the document: its path is
/// shared with the events before it, and a closing container is reported
/// with its text (the core's `with_container_text` parser, fed the document
/// so far), which `PathEvent.value` parses on first access. (A container's
/// value built for each closing event cost its whole subtree, depth times
/// over: 49.5x per byte at depth 500 against depth 2.)
#[pyclass(module = "ssefold")]
pub struct PartialJSON {
    inner: PartialJson,
    paths: PathCache,
    /// The document so far, for the closing containers' text.
    doc: String,
    /// The start of a UTF-8 character the last fragment cut (at most 3
    /// bytes): it joins the document with the next fragment.
    cut: Vec<u8>,
}

impl PartialJSON {
    /// Feeds `bytes` after the cut character (if any): the valid UTF-8 joins
    /// the document and is parsed; a character cut at the end waits for the
    /// next fragment; invalid UTF-8 goes to the parser as bytes, which
    /// reports it (as `push` would) at its offset.
    fn feed(&mut self, bytes: &[u8], on_event: &mut dyn FnMut(&CorePathEvent<'_>)) -> Result<(), PartialJsonError> {
        if self.inner.error().is_some() {
            return self.inner.push(bytes, on_event); // the sticky error; the document grows no more
        }
        let joined;
        let bytes = if self.cut.is_empty() {
            bytes
        } else {
            joined = [std::mem::take(&mut self.cut).as_slice(), bytes].concat();
            joined.as_slice()
        };
        let (valid, rest) = match std::str::from_utf8(bytes) {
            Ok(text) => (text, &[][..]),
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                (std::str::from_utf8(valid).unwrap_or_default(), rest)
            }
        };
        let limits = self.inner.limits();
        let over = self.inner.bytes_pushed() + bytes.len() as u64 > limits.max_bytes;
        self.doc.push_str(valid);
        self.inner.push_document(&self.doc, &mut *on_event)?;
        if rest.is_empty() {
            return Ok(());
        }
        let invalid = std::str::from_utf8(rest).err().and_then(|e| e.error_len()).is_some();
        if invalid || over || rest.len() > 3 {
            // The parser's own error, at its offset (a cut character past
            // `max_bytes` is its size limit, as with `push`).
            return self.inner.push(rest, on_event);
        }
        self.cut.extend_from_slice(rest);
        Ok(())
    }

    /// Hands a cut character at the end to the parser (the document is over
    /// or read as it is): `finish` reports the input as incomplete at the
    /// offset `push` would have.
    fn flush_cut(&mut self) {
        if !self.cut.is_empty() {
            let cut = std::mem::take(&mut self.cut);
            let _ = self.inner.push(&cut, |_| {});
        }
    }
}

#[pymethods]
impl PartialJSON {
    #[new]
    #[pyo3(signature = (*, max_depth = 512, max_bytes = 67108864))]
    fn new(max_depth: usize, max_bytes: u64) -> Self {
        PartialJSON {
            inner: PartialJson::with_container_text(PartialJsonLimits { max_depth, max_bytes }),
            paths: PathCache::default(),
            doc: String::new(),
            cut: Vec::new(),
        }
    }

    /// Feeds the next fragment (`str` or UTF-8 `bytes`, split anywhere);
    /// returns its path events. Invalid input raises `PartialJSONError`
    /// (sticky; `.events` holds the events before the error).
    fn push<'py>(&mut self, py: Python<'py>, fragment: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let mut failed = None;
        let mut paths = std::mem::take(&mut self.paths);
        let result = with_text(fragment, |bytes| {
            self.feed(bytes, &mut |e| {
                if failed.is_none() {
                    match PathEvent::from_core(py, e, &mut paths).and_then(|ev| list.append(ev)) {
                        Ok(()) => {}
                        Err(err) => failed = Some(err),
                    }
                }
            })
        });
        self.paths = paths;
        let result = result?;
        if let Some(err) = failed {
            return Err(err);
        }
        match result {
            Ok(()) => Ok(list),
            Err(e) => Err(with_events(py, e.to_py_err(py), &list)),
        }
    }

    /// The best-effort current value, partial strings included (`None`
    /// before any value began).
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.value_with(py, true)
    }

    /// The best-effort current value; with `partial_strings=False` a string
    /// still being read is left out with its key.
    fn value_with<'py>(&self, py: Python<'py>, partial_strings: bool) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.value_with(partial_strings) {
            Some(v) => value_to_py(py, &v),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The complete value; raises `PartialJSONError` (`kind="incomplete"`
    /// or the sticky error) otherwise.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.flush_cut();
        match self.inner.finish() {
            Ok(v) => value_to_py(py, &v),
            Err(e) => Err(e.to_py_err(py)),
        }
    }

    /// Ready for a new document.
    fn reset(&mut self) {
        self.inner.reset();
        self.doc.clear();
        self.cut.clear();
    }

    /// Bytes accepted so far.
    #[getter]
    fn bytes_pushed(&self) -> u64 {
        self.inner.bytes_pushed() + self.cut.len() as u64
    }

    /// Whether a complete top-level value has been parsed.
    #[getter]
    fn is_complete(&self) -> bool {
        self.inner.is_complete()
    }
}
