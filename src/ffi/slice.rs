//! Borrowed views passed across the boundary: `ssefold_str` and
//! `ssefold_bytes` (pointer + length, never NUL-terminated).

use core::ffi::c_char;

use super::result::ssefold_result;

/// A borrowed UTF-8 string view: `len` bytes at `ptr`, **not**
/// NUL-terminated. `ptr == NULL` means "absent" (for optional values such
/// as an event id); an empty but present string has a non-NULL `ptr` and
/// `len == 0`. Views returned by ssefold are owned by the handle (or the
/// callback's event) they came from; see the ownership rule.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct ssefold_str {
    /// First byte, or NULL when absent.
    pub ptr: *const c_char,
    /// Length in bytes.
    pub len: usize,
}

/// A borrowed byte view: `len` bytes at `ptr` (`ptr` may be NULL only when
/// `len == 0`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct ssefold_bytes {
    /// First byte.
    pub ptr: *const u8,
    /// Length in bytes.
    pub len: usize,
}

impl ssefold_str {
    /// The absent value (`ptr == NULL`).
    pub const ABSENT: ssefold_str = ssefold_str { ptr: core::ptr::null(), len: 0 };

    /// A view of `s`.
    pub fn new(s: &str) -> Self {
        // An empty `&str` still has a non-NULL, dangling-but-aligned pointer.
        ssefold_str { ptr: s.as_ptr().cast(), len: s.len() }
    }

    /// `Some(view)` or the absent value.
    pub fn from_option(s: Option<&str>) -> Self {
        s.map_or(ssefold_str::ABSENT, ssefold_str::new)
    }

    /// Reads a view received from C: `Ok(None)` when absent, the string when
    /// present and valid UTF-8.
    ///
    /// # Errors
    /// `InvalidArgument` for a length over `isize::MAX`, `InvalidUtf8Argument`
    /// for bytes that are not UTF-8. (`ptr == NULL` with `len > 0` is read as
    /// absent-with-garbage: `NullParameter`.)
    ///
    /// # Safety
    /// When `ptr` is non-NULL it must point to `len` readable bytes that stay
    /// valid and unchanged for `'a`.
    pub unsafe fn to_option<'a>(self) -> Result<Option<&'a str>, ssefold_result> {
        if self.ptr.is_null() {
            return if self.len == 0 { Ok(None) } else { Err(ssefold_result::NullParameter) };
        }
        // SAFETY: non-NULL and, by this function's contract, `len` readable bytes for 'a.
        let bytes = unsafe { bytes_from_raw(self.ptr.cast(), self.len)? };
        core::str::from_utf8(bytes).map(Some).map_err(|_| ssefold_result::InvalidUtf8Argument)
    }

    /// As [`to_option`](Self::to_option), absent read as `""`.
    ///
    /// # Errors
    /// As [`to_option`](Self::to_option).
    ///
    /// # Safety
    /// As [`to_option`](Self::to_option).
    pub unsafe fn to_str_or_empty<'a>(self) -> Result<&'a str, ssefold_result> {
        // SAFETY: same contract as ours.
        Ok(unsafe { self.to_option()? }.unwrap_or(""))
    }
}

/// What [`write_json_text`] writes: JSON text that is UTF-8 by construction.
pub(crate) enum JsonSource<'a, 'm> {
    /// A value, written by serde_json.
    Value(&'a serde_json::Value),
    /// A folded message, written by serde_json with the stream's validated
    /// raw JSON texts (`&str`s) spliced in.
    Message(&'a crate::providers::MessageView<'m>),
}

/// Serializes `value` into `out` (cleared first, its buffer reused).
pub(crate) fn write_json(value: &serde_json::Value, out: &mut String) {
    write_json_text(out, JsonSource::Value(value));
}

/// Writes `source` as JSON text into `out` (cleared first, its buffer
/// reused), without a second pass over the text to check it is UTF-8.
pub(crate) fn write_json_text(out: &mut String, source: JsonSource<'_, '_>) {
    let mut bytes = core::mem::take(out).into_bytes();
    bytes.clear();
    match source {
        // Writing a `Value` to memory cannot fail.
        JsonSource::Value(v) => serde_json::to_writer(&mut bytes, v).unwrap_or_default(),
        JsonSource::Message(m) => m.write_json(&mut bytes),
    }
    debug_assert!(core::str::from_utf8(&bytes).is_ok());
    // SAFETY: both writers emit UTF-8 only: serde_json writes JSON text from
    // `String`s and `&str`s (escaping nothing into invalid bytes), and a
    // message view splices in raw JSON texts that are `&str`s.
    *out = unsafe { String::from_utf8_unchecked(bytes) };
}

impl ssefold_bytes {
    /// A view of `b`.
    pub fn new(b: &[u8]) -> Self {
        ssefold_bytes { ptr: b.as_ptr(), len: b.len() }
    }
}

/// Reads `len` bytes at `ptr` passed by C: `(NULL, 0)` is the empty slice.
///
/// # Errors
/// `NullParameter` for `ptr == NULL` with `len > 0`; `InvalidArgument` for
/// `len > isize::MAX` (no Rust slice can be that long).
///
/// # Safety
/// When `ptr` is non-NULL it must point to `len` readable bytes that stay
/// valid and unchanged for `'a`.
pub unsafe fn bytes_from_raw<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8], ssefold_result> {
    if len > isize::MAX as usize {
        return Err(ssefold_result::InvalidArgument);
    }
    if ptr.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(ssefold_result::NullParameter) };
    }
    // SAFETY: non-NULL, `len` fits a slice, and the caller guarantees `len` readable bytes for 'a.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}
