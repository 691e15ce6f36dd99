//! The C ABI (cargo feature `capi`, on by default). Nothing else in the
//! crate touches a raw pointer or an `extern "C"`: this module owns them all.
//! The header is `include/ssefold.h`, generated from this module by a pinned
//! cbindgen (`make header`) and committed.
//!
//! # API conventions
//!
//! These hold for every `ssefold_*` function; the per-function docs only add
//! to them.
//!
//! **Naming.** Every symbol starts with `ssefold_`; a handle type `T` has
//! `ssefold_T_new` and `ssefold_T_free`, and its functions are
//! `ssefold_T_<verb>` with the handle first. Enums are `uint32_t` with
//! explicit, stable values (`SSEFOLD_RESULT_OK` = 0, …).
//!
//! **Status.** Every function that can fail returns `ssefold_result`
//! ([`result::ssefold_result`]); `ssefold_result_str` describes a status. The
//! only functions that return something else cannot fail:
//! `ssefold_version`, `ssefold_result_str`, `ssefold_connection_state_name`
//! (static strings) and the `_free` functions (`void`).
//!
//! **Arguments.** Inputs come first, out-parameters last. A byte buffer is
//! always `(const uint8_t *ptr, size_t len)`; `(NULL, 0)` is the empty
//! buffer. Strings are passed as `ssefold_str` (pointer + length, UTF-8,
//! no NUL needed); an optional string is absent when its `ptr` is NULL. A
//! `const` handle pointer means the call does not change the handle. There
//! are no in/out parameters.
//!
//! **Out-parameters are written only on success** (`SSEFOLD_RESULT_OK`).
//! One documented exception: `ssefold_sse_decoder_feed` writes `*consumed`
//! whenever it consumed input — on `OK`, on `STOPPED` and on an SSE decode
//! error — so the host knows where to resume.
//!
//! **Errors are values, never crashes.** A NULL pointer gives
//! `SSEFOLD_RESULT_NULL_PARAMETER`; a length over `PTRDIFF_MAX` or an unknown
//! enum number `SSEFOLD_RESULT_INVALID_ARGUMENT`; a string that is not UTF-8
//! `SSEFOLD_RESULT_INVALID_UTF8_ARGUMENT`; a call on a handle that cannot do
//! it now (called from its own callback, no callback set)
//! `SSEFOLD_RESULT_BAD_STATE`.
//!
//! **Last error, per handle (no global errno).** Each handle keeps the
//! message of its last call: a call that changes the handle (non-`const`
//! handle pointer) sets it when it returns anything but `OK` and clears it
//! on `OK`; read-only calls (`const` handle pointer) leave it, except that a
//! failed read-only call sets it. Read it with `ssefold_T_last_error(handle,
//! &str)` (a NUL-terminated view as well: `str.ptr[str.len] == 0`).
//!
//! **The ownership rule** (one rule, everywhere): *every view ssefold
//! returns (`ssefold_str`, `ssefold_bytes`, strings inside returned structs)
//! is owned by the handle it came from and stays valid until the next call
//! on that handle (or its `_free`).* Views inside an event passed to a
//! callback are valid only during that callback. Copy what you keep. Static
//! strings (`ssefold_version`, `ssefold_result_str`,
//! `ssefold_connection_state_name`) live forever. Nothing returned by
//! ssefold is ever freed by the caller except handles, with their `_free`.
//!
//! **Handles.** `ssefold_T_new(…, T **out)` creates one; `ssefold_T_free`
//! releases it and accepts NULL. Handles are opaque.
//!
//! **Callbacks.** A callback is a nullable function pointer plus a `void
//! *user_data`, registered per handle (`ssefold_T_set_callback`); ssefold
//! passes `user_data` back as the first argument and never touches it. The
//! callback runs synchronously inside the call that produced the event
//! (`feed`, `push`). The SSE decoder's callback returns 0 to continue or
//! non-zero to stop (`feed` then returns `STOPPED` and how far it got); the
//! partial-JSON and provider-stream callbacks return `void`, because their
//! cores consume each fragment whole and cannot stop inside one without
//! losing events (feed smaller fragments to pace them). A callback must not
//! call
//! functions on the same handle (they return `BAD_STATE`), free the handle
//! (ignored), unwind (a C++ exception or `longjmp` through ssefold is
//! undefined behaviour), or keep the views it was given.
//!
//! **Threads.** A handle may be used from any thread, but by one thread at
//! a time (it is not internally locked): serialize calls on one handle
//! yourself. A call made while another thread's call on the same handle
//! runs is refused with `SSEFOLD_RESULT_BAD_STATE` and changes nothing (each
//! call claims the handle with one atomic compare-and-swap), so breaking
//! the rule is an error status, never two calls on one state; only the
//! views a call returned stay the caller's to guard (the next call on the
//! handle, from any thread, ends them), and a `_free` must come after
//! every other thread's last call. Separate handles share nothing and may
//! be used concurrently on separate threads. Functions without a handle
//! are thread-safe.
//!
//! **Panics.** A Rust panic never crosses the boundary: it is caught and
//! returned as `SSEFOLD_RESULT_PANIC`; the handle involved is poisoned and
//! every later call on it returns `SSEFOLD_RESULT_POISONED` (its last error
//! still says what happened; `_free` still works).
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]
#![allow(non_camel_case_types)]

#[macro_use]
pub mod panic;
pub mod agent;
pub mod encoder;
pub(crate) mod handle;
pub(crate) mod heap;
pub mod json;
pub mod reconnect;
pub mod relay;
pub mod result;
pub mod slice;
pub mod sse;
pub mod stream;
pub mod tools;
pub mod ui;

use core::ffi::c_char;

pub use result::ssefold_result;
pub use slice::ssefold_str;

/// The library's version as a static NUL-terminated string (`"0.1.0"`),
/// matching `SSEFOLD_VERSION` in the header a program was compiled with.
#[no_mangle]
pub extern "C" fn ssefold_version() -> *const c_char {
    ffi_panic_boundary! { concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast::<c_char>() }
}

/// Writes a last-error view of `handle` to `out`: the shared body of every
/// `ssefold_T_last_error`.
///
/// # Safety
/// `handle` must be NULL or a live handle of type `C`; `out` NULL or writable.
pub(crate) unsafe fn write_last_error<C, T>(handle: *const C, out: *mut ssefold_str) -> ssefold_result
where
    C: handle::Castable<Inner = handle::Handle<T>>,
{
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: forwarded contract.
        match unsafe { handle::last_error::<C, T>(handle) } {
            Ok(text) => {
                let view = ssefold_str::new(text.to_str().unwrap_or(""));
                // SAFETY: `out` is non-NULL and writable by contract.
                unsafe { handle::write_out(out, view) };
                ssefold_result::Ok
            }
            Err(code) => code,
        }
    }
}
