//! Opaque handles: boxing, casting, the per-handle state (in use, poisoned)
//! and the per-handle last error.
//!
//! Each C handle type is a zero-sized `_private` struct tied to its Rust
//! type by [`Castable`]; pointers are converted only through the helpers
//! here, never with a bare cast elsewhere. The Rust value lives in a
//! [`Handle`], whose bookkeeping (state, last error) sits in cells next to
//! the value so that a call re-entering from a callback is detected without
//! ever creating a second `&mut` to the value.

use core::cell::{Cell, RefCell, UnsafeCell};
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::panic::payload_text;
use super::result::ssefold_result;

/// Ties an opaque C type to the Rust value behind it.
pub(crate) trait Castable {
    /// The value a pointer to the C type really points at.
    type Inner;
}

/// Where a handle stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    /// A call is running (its callback may be running now).
    Busy,
    /// A panic was caught: the value may be inconsistent; refuse all work.
    Poisoned,
}

/// An error to report: the status and the handle's last error message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: ssefold_result,
    pub(crate) message: String,
}

impl Failure {
    /// A failure with a message.
    pub(crate) fn new(code: ssefold_result, message: impl Into<String>) -> Self {
        Failure { code, message: message.into() }
    }
}

impl From<ssefold_result> for Failure {
    fn from(code: ssefold_result) -> Self {
        let d = code.description();
        Failure { code, message: d[..d.len() - 1].to_owned() }
    }
}

/// A handle's value plus its bookkeeping.
pub(crate) struct Handle<T> {
    state: Cell<State>,
    /// The last error, NUL-terminated so C may also print it directly.
    last_error: RefCell<CString>,
    value: UnsafeCell<T>,
}

impl<T> Handle<T> {
    /// Boxes `value` and returns the opaque pointer for C.
    pub(crate) fn into_raw<C: Castable<Inner = Handle<T>>>(value: T) -> *mut C {
        let handle = Handle { state: Cell::new(State::Idle), last_error: RefCell::default(), value: value.into() };
        Box::into_raw(Box::new(handle)).cast::<C>()
    }

    fn set_error(&self, message: &str) {
        let text = CString::new(message.replace('\0', "\u{FFFD}")).unwrap_or_default();
        *self.last_error.borrow_mut() = text;
    }

    fn clear_error(&self) {
        self.last_error.borrow_mut().clear_into();
    }

    /// The last error message (empty when the last call succeeded).
    pub(crate) fn last_error(&self) -> core::cell::Ref<'_, CString> {
        self.last_error.borrow()
    }
}

/// Clearing a `CString` in place without reallocating when it is empty.
trait ClearInto {
    fn clear_into(&mut self);
}

impl ClearInto for CString {
    fn clear_into(&mut self) {
        if !self.as_bytes().is_empty() {
            *self = CString::default();
        }
    }
}

/// The shared bookkeeping of a handle from a C pointer.
///
/// # Safety
/// `ptr` must be NULL or a pointer returned by [`Handle::into_raw`] for this
/// `C` and not yet freed.
unsafe fn handle_from<'a, C: Castable<Inner = Handle<T>>, T>(ptr: *const C) -> Option<&'a Handle<T>> {
    // SAFETY: by the contract, a non-NULL `ptr` came from `Box::into_raw` of a `Handle<T>` that is still alive;
    // only shared references to the `Handle` are ever created (the value is reached through its `UnsafeCell`).
    unsafe { ptr.cast::<Handle<T>>().as_ref() }
}

/// Runs `f` on the handle's value for a call that may change it: checks
/// NULL, re-entrance and poisoning; catches a panic (poisoning the handle);
/// records the last error (cleared on success).
///
/// `f` returns `Ok(status)` for a non-failure (OK or STOPPED) or the failure.
///
/// # Safety
/// As [`handle_from`].
pub(crate) unsafe fn with_mut<C, T>(
    ptr: *mut C,
    f: impl FnOnce(&mut T) -> Result<ssefold_result, Failure>,
) -> ssefold_result
where
    C: Castable<Inner = Handle<T>>,
{
    // SAFETY: forwarded contract.
    let Some(handle) = (unsafe { handle_from::<C, T>(ptr) }) else {
        return ssefold_result::NullParameter;
    };
    match handle.state.get() {
        State::Idle => {}
        State::Busy => {
            // Re-entered from the handle's own callback: the running call owns the value.
            return ssefold_result::BadState;
        }
        State::Poisoned => return ssefold_result::Poisoned,
    }
    handle.state.set(State::Busy);
    // SAFETY: the state was Idle, so no other reference to the value exists (calls on one handle are not
    // concurrent by the documented threading rule, and re-entrant calls stop at the Busy check above).
    let value = unsafe { &mut *handle.value.get() };
    let outcome = catch_unwind(AssertUnwindSafe(|| f(value)));
    let (state, code) = match outcome {
        Ok(Ok(code)) => {
            if code == ssefold_result::Ok {
                handle.clear_error();
            } else {
                handle.set_error(&Failure::from(code).message);
            }
            (State::Idle, code)
        }
        Ok(Err(failure)) => {
            handle.set_error(&failure.message);
            (State::Idle, failure.code)
        }
        Err(payload) => {
            handle.set_error(&format!("panic in ssefold (the handle is now poisoned): {}", payload_text(&*payload)));
            (State::Poisoned, ssefold_result::Panic)
        }
    };
    handle.state.set(state);
    code
}

/// Runs `f` on the handle's value for a read-only call: checks NULL,
/// re-entrance and poisoning; catches a panic. Leaves the last error as it
/// is (except after a panic).
///
/// # Safety
/// As [`handle_from`].
pub(crate) unsafe fn with_ref<C, T>(ptr: *const C, f: impl FnOnce(&T) -> Result<(), Failure>) -> ssefold_result
where
    C: Castable<Inner = Handle<T>>,
{
    // SAFETY: forwarded contract.
    let Some(handle) = (unsafe { handle_from::<C, T>(ptr) }) else {
        return ssefold_result::NullParameter;
    };
    match handle.state.get() {
        State::Idle => {}
        State::Busy => return ssefold_result::BadState,
        State::Poisoned => return ssefold_result::Poisoned,
    }
    // SAFETY: Idle: no `&mut` to the value exists (see `with_mut`), so a shared one is fine.
    let value = unsafe { &*handle.value.get() };
    match catch_unwind(AssertUnwindSafe(|| f(value))) {
        Ok(Ok(())) => ssefold_result::Ok,
        Ok(Err(failure)) => {
            handle.set_error(&failure.message);
            failure.code
        }
        Err(payload) => {
            handle.set_error(&format!("panic in ssefold (the handle is now poisoned): {}", payload_text(&*payload)));
            handle.state.set(State::Poisoned);
            ssefold_result::Panic
        }
    }
}

/// The last error of a handle, readable even when the handle is poisoned
/// (that is when it matters most). The view stays valid until the next call
/// on the handle.
///
/// # Safety
/// As [`handle_from`].
pub(crate) unsafe fn last_error<'a, C, T>(ptr: *const C) -> Result<&'a core::ffi::CStr, ssefold_result>
where
    C: Castable<Inner = Handle<T>>,
{
    // SAFETY: forwarded contract.
    let handle = unsafe { handle_from::<C, T>(ptr) }.ok_or(ssefold_result::NullParameter)?;
    if handle.state.get() == State::Busy {
        return Err(ssefold_result::BadState);
    }
    let text: *const core::ffi::CStr = handle.last_error().as_c_str();
    // SAFETY: the CString lives in the handle and is replaced only by a later call on the handle, which the
    // ownership rule says ends the view's validity; no `RefMut` is alive now (the handle is not Busy).
    Ok(unsafe { &*text })
}

/// Frees a handle. NULL is a no-op; a handle whose call is running (a free
/// from its own callback) is left alone rather than freed under the call.
///
/// # Safety
/// As [`handle_from`]; the pointer must not be used afterwards.
pub(crate) unsafe fn free<C, T>(ptr: *mut C)
where
    C: Castable<Inner = Handle<T>>,
{
    // SAFETY: forwarded contract.
    let Some(handle) = (unsafe { handle_from::<C, T>(ptr) }) else {
        return;
    };
    if handle.state.get() == State::Busy {
        return;
    }
    // SAFETY: the pointer came from `Box::into_raw` of a `Handle<T>` (contract) and is not in use; the
    // caller gives it up.
    drop(unsafe { Box::from_raw(ptr.cast::<Handle<T>>()) });
}

/// Writes `value` to the out-parameter `out` (checked non-NULL by the
/// caller's `check_out!`).
///
/// # Safety
/// `out` must be non-NULL, aligned and writable.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) {
    // SAFETY: caller contract.
    unsafe { out.write(value) }
}

/// Returns `NullParameter` from the enclosing closure/function when any of
/// the given pointers is NULL.
macro_rules! check_not_null {
    ($($p:expr),+ $(,)?) => {
        if false $(|| $p.is_null())+ {
            return ::core::result::Result::Err($crate::ffi::handle::Failure::from(
                $crate::ffi::result::ssefold_result::NullParameter,
            ));
        }
    };
}
pub(crate) use check_not_null;

#[cfg(test)]
mod tests {
    use super::*;

    struct opaque {
        _private: [u8; 0],
    }
    impl Castable for opaque {
        type Inner = Handle<Vec<u32>>;
    }

    #[test]
    fn a_panic_poisons_the_handle_and_later_calls_are_refused() {
        let p: *mut opaque = Handle::into_raw(vec![1, 2]);
        // SAFETY: `p` is a live handle from `into_raw` throughout; freed once at the end.
        unsafe {
            assert_eq!(
                with_mut(p, |v: &mut Vec<u32>| {
                    v.push(3);
                    Ok(ssefold_result::Ok)
                }),
                ssefold_result::Ok
            );
            assert_eq!(last_error(p as *const opaque).unwrap().to_bytes(), b"");
            let r = with_mut(p, |_: &mut Vec<u32>| -> Result<ssefold_result, Failure> { panic!("boom") });
            assert_eq!(r, ssefold_result::Panic);
            let msg = last_error(p as *const opaque).unwrap().to_str().unwrap().to_owned();
            assert!(msg.contains("boom") && msg.contains("poisoned"), "{msg}");
            assert_eq!(with_mut(p, |_: &mut Vec<u32>| Ok(ssefold_result::Ok)), ssefold_result::Poisoned);
            assert_eq!(with_ref(p as *const opaque, |_: &Vec<u32>| Ok(())), ssefold_result::Poisoned);
            free(p);
        }
    }

    #[test]
    fn failures_set_the_last_error_and_success_clears_it() {
        let p: *mut opaque = Handle::into_raw(Vec::new());
        // SAFETY: `p` is a live handle from `into_raw` throughout; freed once at the end.
        unsafe {
            let r = with_mut(p, |_: &mut Vec<u32>| Err(Failure::new(ssefold_result::InvalidArgument, "bad\0x")));
            assert_eq!(r, ssefold_result::InvalidArgument);
            assert_eq!(last_error(p as *const opaque).unwrap().to_str().unwrap(), "bad\u{FFFD}x");
            assert_eq!(with_ref(p as *const opaque, |_: &Vec<u32>| Ok(())), ssefold_result::Ok);
            assert_eq!(last_error(p as *const opaque).unwrap().to_str().unwrap(), "bad\u{FFFD}x", "reads keep it");
            assert_eq!(with_mut(p, |_: &mut Vec<u32>| Ok(ssefold_result::Ok)), ssefold_result::Ok);
            assert_eq!(last_error(p as *const opaque).unwrap().to_bytes(), b"");
            assert_eq!(
                with_mut(core::ptr::null_mut::<opaque>(), |_| Ok(ssefold_result::Ok)),
                ssefold_result::NullParameter
            );
            free(p);
            free(core::ptr::null_mut::<opaque>());
        }
    }

    #[test]
    fn a_re_entrant_call_is_refused() {
        let p: *mut opaque = Handle::into_raw(Vec::new());
        // SAFETY: `p` is a live handle from `into_raw` throughout; freed once at the end.
        unsafe {
            let r = with_mut(p, |_: &mut Vec<u32>| {
                // As a callback calling back into the same handle would.
                assert_eq!(with_mut(p, |_: &mut Vec<u32>| Ok(ssefold_result::Ok)), ssefold_result::BadState);
                assert_eq!(with_ref(p as *const opaque, |_: &Vec<u32>| Ok(())), ssefold_result::BadState);
                free(p); // ignored while busy
                Ok(ssefold_result::Ok)
            });
            assert_eq!(r, ssefold_result::Ok);
            free(p);
        }
    }
}
