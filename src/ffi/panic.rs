//! The panic boundary: a Rust panic never unwinds into C.
//!
//! Every exported function body runs inside [`ffi_panic_boundary!`] (for
//! functions without a handle) or inside the handle helpers of
//! [`super::handle`] (which also poison the handle). A caught panic becomes
//! [`ssefold_result::Panic`], or the type's harmless default for the few
//! functions that return something else (a static empty string, nothing).
//! We catch and return rather than abort: a host (a Python or Go process)
//! should survive a bug in one stream.

use core::ffi::c_char;

use super::result::ssefold_result;

/// What an exported function returns when a panic was caught.
pub(crate) trait PanicOrDefault {
    /// The value returned after a panic.
    fn panic_value() -> Self;
}

impl PanicOrDefault for ssefold_result {
    fn panic_value() -> Self {
        ssefold_result::Panic
    }
}

impl PanicOrDefault for () {
    fn panic_value() -> Self {}
}

impl PanicOrDefault for *const c_char {
    fn panic_value() -> Self {
        c"".as_ptr()
    }
}

/// Runs the body, turning a panic into [`PanicOrDefault::panic_value`].
/// `return` inside the body returns from the body (it is a closure).
macro_rules! ffi_panic_boundary {
    ($($body:tt)*) => {
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| { $($body)* })) {
            Ok(value) => value,
            Err(_) => $crate::ffi::panic::PanicOrDefault::panic_value(),
        }
    };
}

/// The text of a panic payload, for the handle's last error.
pub(crate) fn payload_text(payload: &(dyn core::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(non-string payload)"
    }
}
