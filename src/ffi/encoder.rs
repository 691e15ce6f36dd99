//! `ssefold_sse_encoder`: the server side, writing into a buffer the handle
//! owns.

use super::handle::{self, check_not_null, Castable, Failure, Handle};
use super::result::ssefold_result;
use super::slice::{ssefold_bytes, ssefold_str};
use crate::sse::Encoder;

/// An SSE encoder (opaque). It appends to a buffer it owns; read it with
/// `ssefold_sse_encoder_bytes`, then `ssefold_sse_encoder_clear` it once sent.
pub struct ssefold_sse_encoder {
    _private: [u8; 0],
}

impl Castable for ssefold_sse_encoder {
    type Inner = Handle<Encoder>;
}

/// Creates an encoder with an empty buffer and writes it to `*out`. Free it
/// with `ssefold_sse_encoder_free`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_new(out: *mut *mut ssefold_sse_encoder) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(Encoder::new())) };
        ssefold_result::Ok
    }
}

/// Frees an encoder and its buffer. NULL is a no-op.
///
/// # Safety
/// `encoder` must be NULL or a live encoder, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_free(encoder: *mut ssefold_sse_encoder) {
    // SAFETY: forwarded contract.
    ffi_panic_boundary! { unsafe { handle::free(encoder) } }
}

/// Appends one event: `event` (absent: no `event` field), `id` (absent: no
/// `id` field; empty: resets the client's last event ID), `retry_ms` (NULL:
/// no `retry` field), the data lines (line breaks of any kind split `data`
/// into several `data:` lines), and the blank line that dispatches it.
///
/// Errors (nothing written): `ENCODE_LINE_BREAK` (CR or LF in `event` or
/// `id`), `ENCODE_NUL_IN_ID`, `INVALID_UTF8_ARGUMENT`, `NULL_PARAMETER` (a
/// view with `ptr == NULL` and `len > 0`; `data` may be absent = empty).
///
/// # Safety
/// `encoder` must be NULL or a live encoder; each view NULL or `len`
/// readable bytes; `retry_ms` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_event(
    encoder: *mut ssefold_sse_encoder,
    event: ssefold_str,
    data: ssefold_str,
    id: ssefold_str,
    retry_ms: *const u64,
) -> ssefold_result {
    let body = |enc: &mut Encoder| {
        // SAFETY: views readable by contract.
        let (event, data, id) = unsafe { (event.to_option()?, data.to_str_or_empty()?, id.to_option()?) };
        // SAFETY: NULL or readable by contract.
        let retry = unsafe { retry_ms.as_ref() }.copied();
        enc.event(event, data, id, retry).map_err(|e| Failure::new(ssefold_result::from(&e), e.to_string()))?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `encoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(encoder, body) }
}

/// Appends a comment, one `:` line per line of `text` (absent = one empty
/// comment line).
///
/// # Safety
/// `encoder` must be NULL or a live encoder; `text` NULL or `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_comment(
    encoder: *mut ssefold_sse_encoder,
    text: ssefold_str,
) -> ssefold_result {
    let body = |enc: &mut Encoder| {
        // SAFETY: view readable by contract.
        let text = unsafe { text.to_str_or_empty()? };
        enc.comment(text);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `encoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(encoder, body) }
}

/// Appends a keep-alive: an empty comment line (`:\n`).
///
/// # Safety
/// `encoder` must be NULL or a live encoder.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_keep_alive(encoder: *mut ssefold_sse_encoder) -> ssefold_result {
    let body = |enc: &mut Encoder| {
        enc.keep_alive();
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `encoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(encoder, body) }
}

/// Appends a standalone `retry` field block (sets the client's
/// reconnection time without dispatching an event).
///
/// # Safety
/// `encoder` must be NULL or a live encoder.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_retry(encoder: *mut ssefold_sse_encoder, ms: u64) -> ssefold_result {
    let body = |enc: &mut Encoder| {
        enc.retry(ms);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `encoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(encoder, body) }
}

/// The bytes written since the last clear, as a view owned by the encoder
/// until its next call.
///
/// # Safety
/// `encoder` must be NULL or a live encoder; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_bytes(
    encoder: *const ssefold_sse_encoder,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |enc: &Encoder| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, ssefold_bytes::new(enc.as_bytes())) };
        Ok(())
    };
    // SAFETY: `encoder` is NULL or a live handle (contract).
    unsafe { handle::with_ref(encoder, body) }
}

/// Forgets the bytes written so far (keeping the buffer's capacity): call
/// it once they are sent.
///
/// # Safety
/// `encoder` must be NULL or a live encoder.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_clear(encoder: *mut ssefold_sse_encoder) -> ssefold_result {
    let body = |enc: &mut Encoder| {
        enc.clear();
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `encoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(encoder, body) }
}

/// The message of the encoder's last call (empty after success), as a
/// NUL-terminated view owned by the encoder until its next call.
///
/// # Safety
/// `encoder` must be NULL or a live encoder; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_encoder_last_error(
    encoder: *const ssefold_sse_encoder,
    out: *mut ssefold_str,
) -> ssefold_result {
    // SAFETY: forwarded contract.
    unsafe { super::write_last_error(encoder, out) }
}
