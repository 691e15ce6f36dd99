//! `ssefold_partial_json`: incremental partial JSON (tool arguments usable
//! while they stream). Values cross the boundary as JSON text owned by the
//! handle.

use core::ffi::c_void;

use super::handle::{self, check_not_null, Castable, Failure, Handle};
use super::result::ssefold_result;
use super::slice::{bytes_from_raw, ssefold_str, write_json};
use crate::json::{
    parse_partial_json, ContainerKind, PartialJson, PartialJsonError, PartialJsonErrorKind, PartialJsonLimits,
    PathEvent, PathSegment,
};

/// Resource limits of a partial-JSON parser.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_partial_json_limits {
    /// Most simultaneously open containers (default 512).
    pub max_depth: usize,
    /// Most bytes of one document (default 64 MiB).
    pub max_bytes: u64,
}

/// The kind of a path event.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_path_event_kind {
    /// A container (object or array) started at `path`.
    ContainerStart = 0,
    /// New decoded text (`text`) of the string at `path`.
    StringAppend = 1,
    /// The value at `path` is complete (`value_json`).
    ValueComplete = 2,
}

/// Object or array.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_container_kind {
    /// A JSON object.
    Object = 0,
    /// A JSON array.
    Array = 1,
}

/// One step of a path: an object member (`key` present) or an array
/// element (`key` absent, `index` set).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_path_segment {
    /// The member's decoded key; absent (`ptr == NULL`) for an array index.
    pub key: ssefold_str,
    /// The zero-based array index (0 for a key).
    pub index: usize,
}

/// A path event, as passed to the callback. Every view and the `path` array
/// are valid only during the callback.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_path_event {
    /// What happened.
    pub kind: ssefold_path_event_kind,
    /// The path from the root (`path_len` segments; the root is empty).
    pub path: *const ssefold_path_segment,
    /// Number of segments in `path`.
    pub path_len: usize,
    /// `CONTAINER_START`: object or array (`OBJECT` otherwise).
    pub container: ssefold_container_kind,
    /// `STRING_APPEND`: the newly decoded text (never empty); absent otherwise.
    pub text: ssefold_str,
    /// `VALUE_COMPLETE`: the value as compact JSON text. Always present for
    /// scalars; for containers only when the callback was registered with
    /// `container_values` (serializing every closing container costs its
    /// size each time); absent otherwise.
    pub value_json: ssefold_str,
}

/// The path-event callback: `user_data` as registered and the event. The
/// parser consumes each pushed fragment whole, so this callback cannot stop
/// a push (unlike the SSE callback); push smaller fragments to pace it.
pub type ssefold_path_event_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event: *const ssefold_path_event)>;

/// An incremental partial-JSON parser for one document (opaque).
pub struct ssefold_partial_json {
    _private: [u8; 0],
}

/// The Rust side of [`ssefold_partial_json`].
pub(crate) struct PartialJsonState {
    parser: PartialJson,
    callback: ssefold_path_event_callback,
    user_data: *mut c_void,
    container_values: bool,
    /// Reused per event: the path as C segments, the value's JSON text.
    segments: Vec<ssefold_path_segment>,
    scratch: String,
    /// Backs the views returned by `_value`, `_finish` and `_parse`.
    out: String,
}

impl Castable for ssefold_partial_json {
    type Inner = Handle<PartialJsonState>;
}

fn failure(e: &PartialJsonError) -> Failure {
    let code = match e.kind {
        PartialJsonErrorKind::Incomplete => ssefold_result::JsonIncomplete,
        PartialJsonErrorKind::Invalid(_) => ssefold_result::JsonInvalid,
        PartialJsonErrorKind::DepthLimit => ssefold_result::JsonDepthLimit,
        PartialJsonErrorKind::SizeLimit => ssefold_result::JsonSizeLimit,
    };
    Failure::new(code, e.to_string())
}

impl PartialJsonState {
    fn push(&mut self, fragment: &[u8]) -> Result<ssefold_result, Failure> {
        let PartialJsonState { parser, callback, user_data, container_values, segments, scratch, .. } = self;
        let result = match *callback {
            None => parser.push(fragment, |_| {}),
            Some(cb) => parser.push(fragment, |event| {
                segments.clear();
                segments.extend(event.path().iter().map(|s| match s {
                    PathSegment::Key(k) => ssefold_path_segment { key: ssefold_str::new(k), index: 0 },
                    PathSegment::Index(i) => ssefold_path_segment { key: ssefold_str::ABSENT, index: *i },
                }));
                let mut view = ssefold_path_event {
                    kind: ssefold_path_event_kind::ContainerStart,
                    path: segments.as_ptr(),
                    path_len: segments.len(),
                    container: ssefold_container_kind::Object,
                    text: ssefold_str::ABSENT,
                    value_json: ssefold_str::ABSENT,
                };
                match event {
                    PathEvent::ContainerStart { kind, .. } => {
                        if *kind == ContainerKind::Array {
                            view.container = ssefold_container_kind::Array;
                        }
                    }
                    PathEvent::StringAppend { text, .. } => {
                        view.kind = ssefold_path_event_kind::StringAppend;
                        view.text = ssefold_str::new(text);
                    }
                    PathEvent::ValueComplete { value, .. } => {
                        view.kind = ssefold_path_event_kind::ValueComplete;
                        if *container_values || !(value.is_object() || value.is_array()) {
                            write_json(value, scratch);
                            view.value_json = ssefold_str::new(scratch);
                        }
                    }
                    // Not emitted by this parser (a provider stream's tool arguments).
                    PathEvent::ContainerComplete { kind, json, .. } => {
                        view.kind = ssefold_path_event_kind::ValueComplete;
                        if *kind == ContainerKind::Array {
                            view.container = ssefold_container_kind::Array;
                        }
                        if *container_values {
                            view.value_json = ssefold_str::new(json);
                        }
                    }
                }
                // SAFETY: the host registered `cb` for `user_data`; `view` and its arrays outlive the call.
                unsafe { cb(*user_data, &view) };
            }),
        };
        result.map_err(|e| failure(&e))?;
        Ok(ssefold_result::Ok)
    }
}

/// Writes the default limits (depth 512, 64 MiB) to `*out`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_limits_default(out: *mut ssefold_partial_json_limits) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        let d = PartialJsonLimits::default();
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, ssefold_partial_json_limits { max_depth: d.max_depth, max_bytes: d.max_bytes }) };
        ssefold_result::Ok
    }
}

/// Creates a parser with `limits` (NULL: the defaults) and writes it to
/// `*out`. Free it with `ssefold_partial_json_free`.
///
/// # Safety
/// `limits` must be NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_new(
    limits: *const ssefold_partial_json_limits,
    out: *mut *mut ssefold_partial_json,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: NULL or readable by contract.
        let limits = unsafe { limits.as_ref() }
            .map_or_else(PartialJsonLimits::default, |l| PartialJsonLimits { max_depth: l.max_depth, max_bytes: l.max_bytes });
        let state = PartialJsonState {
            parser: PartialJson::with_limits(limits),
            callback: None,
            user_data: core::ptr::null_mut(),
            container_values: false,
            segments: Vec::new(),
            scratch: String::new(),
            out: String::new(),
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(state)) };
        ssefold_result::Ok
    }
}

/// Frees a parser. NULL is a no-op.
///
/// # Safety
/// `parser` must be NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_free(parser: *mut ssefold_partial_json) {
    // SAFETY: forwarded contract.
    ffi_panic_boundary! { unsafe { handle::free(parser) } }
}

/// Registers the path-event callback (NULL: none; pushing without a
/// callback is fine) with its `user_data`. `container_values` asks for the
/// JSON text of containers in their `VALUE_COMPLETE` events too.
///
/// # Safety
/// `parser` must be NULL or live; `callback` safe to call with `user_data`
/// until replaced or the parser freed.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_set_callback(
    parser: *mut ssefold_partial_json,
    callback: ssefold_path_event_callback,
    user_data: *mut c_void,
    container_values: bool,
) -> ssefold_result {
    let body = |p: &mut PartialJsonState| {
        p.callback = callback;
        p.user_data = user_data;
        p.container_values = container_values;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `parser` is NULL or a live handle (contract).
    unsafe { handle::with_mut(parser, body) }
}

/// Feeds the next fragment (split anywhere, even inside a character or an
/// escape), calling the callback for each path event. An incomplete
/// document is not an error. Invalid input (`JSON_INVALID`) or an exceeded
/// limit (`JSON_DEPTH_LIMIT`, `JSON_SIZE_LIMIT`) is sticky: every later push
/// and `finish` return it (the message gives the byte offset); events for
/// the bytes before it were delivered.
///
/// # Safety
/// `parser` must be NULL or live; `bytes` NULL or `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_push(
    parser: *mut ssefold_partial_json,
    bytes: *const u8,
    len: usize,
) -> ssefold_result {
    let body = |p: &mut PartialJsonState| {
        // SAFETY: `len` readable bytes by contract (or NULL/0, checked by the helper).
        let fragment = unsafe { bytes_from_raw(bytes, len)? };
        p.push(fragment)
    };
    // SAFETY: `parser` is NULL or a live handle (contract).
    unsafe { handle::with_mut(parser, body) }
}

/// The best-effort current value as compact JSON text: open containers
/// closed, a string being read included with its text so far when
/// `partial_strings`, incomplete numbers, literals and keys left out.
/// `*has_value` is false (and `*json` empty) when no value has begun. The
/// view is owned by the parser until its next call.
///
/// # Safety
/// `parser` must be NULL or live; `has_value` and `json` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_value(
    parser: *mut ssefold_partial_json,
    partial_strings: bool,
    has_value: *mut bool,
    json: *mut ssefold_str,
) -> ssefold_result {
    let body = |p: &mut PartialJsonState| {
        check_not_null!(has_value, json);
        let value = p.parser.value_with(partial_strings);
        match &value {
            Some(v) => write_json(v, &mut p.out),
            None => p.out.clear(),
        }
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(has_value, value.is_some()) };
        // SAFETY: as above.
        unsafe { handle::write_out(json, ssefold_str::new(&p.out)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `parser` is NULL or a live handle (contract).
    unsafe { handle::with_mut(parser, body) }
}

/// The strict end of the document: the complete value as compact JSON
/// text (the same value `serde_json` parses from all the bytes pushed), or
/// `JSON_INCOMPLETE` (the input ended early) or the sticky error. The
/// parser keeps its state (call `_reset` for a new document). The view is
/// owned by the parser until its next call.
///
/// # Safety
/// `parser` must be NULL or live; `json` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_finish(
    parser: *mut ssefold_partial_json,
    json: *mut ssefold_str,
) -> ssefold_result {
    let body = |p: &mut PartialJsonState| {
        check_not_null!(json);
        let value = p.parser.finish().map_err(|e| failure(&e))?;
        write_json(&value, &mut p.out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(json, ssefold_str::new(&p.out)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `parser` is NULL or a live handle (contract).
    unsafe { handle::with_mut(parser, body) }
}

/// Ready for a new document, with the same limits and callback.
///
/// # Safety
/// `parser` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_reset(parser: *mut ssefold_partial_json) -> ssefold_result {
    let body = |p: &mut PartialJsonState| {
        p.parser.reset();
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `parser` is NULL or a live handle (contract).
    unsafe { handle::with_mut(parser, body) }
}

/// Whether a complete top-level value was parsed, and how many bytes were
/// accepted so far.
///
/// # Safety
/// `parser` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_status(
    parser: *const ssefold_partial_json,
    is_complete: *mut bool,
    bytes_pushed: *mut u64,
) -> ssefold_result {
    let body = |p: &PartialJsonState| {
        check_not_null!(is_complete, bytes_pushed);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(is_complete, p.parser.is_complete()) };
        // SAFETY: as above.
        unsafe { handle::write_out(bytes_pushed, p.parser.bytes_pushed()) };
        Ok(())
    };
    // SAFETY: `parser` is NULL or a live handle (contract).
    unsafe { handle::with_ref(parser, body) }
}

/// One-shot best-effort parse of a possibly incomplete JSON `text` (as
/// `_value` describes), independent of the parser's document; the result
/// is owned by the parser handle until its next call. `*has_value` is false
/// when no value has begun. Errors: `JSON_INVALID`, the limit errors (the
/// default limits), `INVALID_UTF8_ARGUMENT`.
///
/// # Safety
/// `parser` must be NULL or live; `text` NULL or `len` readable bytes; the
/// out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_parse(
    parser: *mut ssefold_partial_json,
    text: ssefold_str,
    partial_strings: bool,
    has_value: *mut bool,
    json: *mut ssefold_str,
) -> ssefold_result {
    let body = |p: &mut PartialJsonState| {
        check_not_null!(has_value, json);
        // SAFETY: view readable by contract.
        let text = unsafe { text.to_str_or_empty()? };
        let value = parse_partial_json(text, partial_strings).map_err(|e| failure(&e))?;
        match &value {
            Some(v) => write_json(v, &mut p.out),
            None => p.out.clear(),
        }
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(has_value, value.is_some()) };
        // SAFETY: as above.
        unsafe { handle::write_out(json, ssefold_str::new(&p.out)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `parser` is NULL or a live handle (contract).
    unsafe { handle::with_mut(parser, body) }
}

/// The message of the parser's last call (empty after success), as a
/// NUL-terminated view owned by the parser until its next call.
///
/// # Safety
/// `parser` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_partial_json_last_error(
    parser: *const ssefold_partial_json,
    out: *mut ssefold_str,
) -> ssefold_result {
    // SAFETY: forwarded contract.
    unsafe { super::write_last_error(parser, out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn collect(user_data: *mut c_void, event: *const ssefold_path_event) {
        // SAFETY: `user_data` is the Vec registered below; `event` is valid during the call.
        let (log, e) = unsafe { (&mut *user_data.cast::<Vec<String>>(), &*event) };
        // SAFETY: `path` holds `path_len` segments during the call.
        let path = unsafe { core::slice::from_raw_parts(e.path, e.path_len) };
        // SAFETY: the views are valid UTF-8 during the call.
        let text = |s: ssefold_str| unsafe { s.to_option() }.unwrap().unwrap_or("-").to_owned();
        let path: Vec<String> =
            path.iter().map(|s| if s.key.ptr.is_null() { s.index.to_string() } else { text(s.key) }).collect();
        log.push(format!("{:?} {} {} {}", e.kind, path.join("/"), text(e.text), text(e.value_json)));
    }

    #[test]
    fn events_values_and_errors_through_the_c_abi() {
        let mut log: Vec<String> = Vec::new();
        let mut p = core::ptr::null_mut();
        // SAFETY: valid pointers throughout; the handle is freed once at the end.
        unsafe {
            assert_eq!(ssefold_partial_json_new(core::ptr::null(), &mut p), ssefold_result::Ok);
            let ud = (&mut log as *mut Vec<String>).cast::<c_void>();
            assert_eq!(ssefold_partial_json_set_callback(p, Some(collect), ud, false), ssefold_result::Ok);
            for fragment in [&b"{\"a\": [\"x"[..], b"y\", 2]}"] {
                assert_eq!(ssefold_partial_json_push(p, fragment.as_ptr(), fragment.len()), ssefold_result::Ok);
            }
            let mut json = ssefold_str::ABSENT;
            assert_eq!(ssefold_partial_json_finish(p, &mut json), ssefold_result::Ok);
            assert_eq!(json.to_option().unwrap(), Some(r#"{"a":["xy",2]}"#));
            assert_eq!(ssefold_partial_json_push(p, b",".as_ptr(), 1), ssefold_result::JsonInvalid);
            assert_eq!(ssefold_partial_json_finish(p, &mut json), ssefold_result::JsonInvalid);
            ssefold_partial_json_free(p);
        }
        assert_eq!(
            log,
            [
                "ContainerStart  - -",
                "ContainerStart a - -",
                "StringAppend a/0 x -",
                "StringAppend a/0 y -",
                "ValueComplete a/0 - \"xy\"",
                "ValueComplete a/1 - 2",
                "ValueComplete a - -",
                "ValueComplete  - -",
            ]
        );
    }
}
