//! Opaque handles: boxing, casting, the per-handle state (in use, poisoned)
//! and the per-handle last error.
//!
//! Each C handle type is a zero-sized `_private` struct tied to its Rust
//! type by [`Castable`]; pointers are converted only through the helpers
//! here, never with a bare cast elsewhere. The Rust value lives in a
//! [`Handle`], whose bookkeeping (state, last error) sits in cells next to
//! the value so that a call re-entering from a callback is detected without
//! ever creating a second `&mut` to the value.
//!
//! The state is atomic: every call claims the handle (`Idle` → `Busy`, one
//! compare-and-swap with acquire ordering) before it touches the value or
//! the last error, and gives it back with a release store. Two threads that
//! call into one handle at once (which the threading rule forbids) thus get
//! a typed `BAD_STATE` for the call that loses the race, never two
//! references to one value: the rule is enforced, not only documented.

use core::cell::{RefCell, UnsafeCell};
use core::sync::atomic::{AtomicU8, Ordering};
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::panic::payload_text;
use super::result::ssefold_result;

/// Ties an opaque C type to the Rust value behind it.
pub(crate) trait Castable {
    /// The value a pointer to the C type really points at.
    type Inner;
}

/// Where a handle stands (stored as a `u8` in an [`AtomicU8`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum State {
    Idle = 0,
    /// A call is running (its callback may be running now), on this thread
    /// or another.
    Busy = 1,
    /// A panic was caught: the value may be inconsistent; refuse all work.
    Poisoned = 2,
}

impl State {
    fn from_u8(v: u8) -> State {
        match v {
            0 => State::Idle,
            1 => State::Busy,
            _ => State::Poisoned,
        }
    }
}

/// The atomic state of a handle.
struct AtomicState(AtomicU8);

impl AtomicState {
    fn new() -> Self {
        AtomicState(AtomicU8::new(State::Idle as u8))
    }

    /// Claims the handle for one call: `Ok` when it was idle (it is now
    /// busy, and everything the previous call wrote is visible), else the
    /// status to return (`BAD_STATE` when a call runs, on this thread from
    /// a callback or on another, `POISONED`).
    fn claim(&self) -> Result<(), ssefold_result> {
        match self.0.compare_exchange(State::Idle as u8, State::Busy as u8, Ordering::Acquire, Ordering::Acquire) {
            Ok(_) => Ok(()),
            Err(v) => Err(match State::from_u8(v) {
                State::Poisoned => ssefold_result::Poisoned,
                State::Idle | State::Busy => ssefold_result::BadState,
            }),
        }
    }

    /// Gives the handle back after a claim (`Idle`, or `Poisoned` after a
    /// panic), publishing what the call wrote to the next claimer.
    fn release(&self, to: State) {
        self.0.store(to as u8, Ordering::Release);
    }

    /// Claims the handle whatever its state but `Busy` (the last error is
    /// readable on a poisoned handle); returns the state to give back.
    fn claim_any(&self) -> Result<State, ssefold_result> {
        let mut current = self.0.load(Ordering::Relaxed);
        loop {
            if State::from_u8(current) == State::Busy {
                return Err(ssefold_result::BadState);
            }
            match self.0.compare_exchange_weak(current, State::Busy as u8, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Ok(State::from_u8(current)),
                Err(v) => current = v,
            }
        }
    }
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
    state: AtomicState,
    /// The last error, NUL-terminated so C may also print it directly.
    last_error: RefCell<CString>,
    value: UnsafeCell<T>,
}

impl<T> Handle<T> {
    /// Boxes `value` and returns the opaque pointer for C.
    pub(crate) fn into_raw<C: Castable<Inner = Handle<T>>>(value: T) -> *mut C {
        let handle = Handle { state: AtomicState::new(), last_error: RefCell::default(), value: value.into() };
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
    // Busy: re-entered from the handle's own callback, or called from another thread while a call runs; the
    // running call owns the value.
    if let Err(code) = handle.state.claim() {
        return code;
    }
    // SAFETY: this call moved the state from Idle to Busy atomically, so no other reference to the value
    // exists: every other call (re-entrant or from another thread) fails its claim until the release below.
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
    handle.state.release(state);
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
    // A read claims the handle too: it may set the last error, and a write on another thread must not run
    // under it.
    if let Err(code) = handle.state.claim() {
        return code;
    }
    // SAFETY: claimed (Idle -> Busy): no `&mut` to the value exists (see `with_mut`), so a shared one is fine.
    let value = unsafe { &*handle.value.get() };
    let (state, code) = match catch_unwind(AssertUnwindSafe(|| f(value))) {
        Ok(Ok(())) => (State::Idle, ssefold_result::Ok),
        Ok(Err(failure)) => {
            handle.set_error(&failure.message);
            (State::Idle, failure.code)
        }
        Err(payload) => {
            handle.set_error(&format!("panic in ssefold (the handle is now poisoned): {}", payload_text(&*payload)));
            (State::Poisoned, ssefold_result::Panic)
        }
    };
    handle.state.release(state);
    code
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
    let state = handle.state.claim_any()?;
    let text: *const core::ffi::CStr = handle.last_error().as_c_str();
    handle.state.release(state);
    // SAFETY: the CString lives in the handle and is replaced only by a later call on the handle, which the
    // ownership rule says ends the view's validity; no `RefMut` was alive while it was read (claimed).
    Ok(unsafe { &*text })
}

/// Frees a handle. NULL is a no-op; a handle whose call is running (a free
/// from its own callback, or from another thread during a call) is left
/// alone rather than freed under the call.
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
    if handle.state.claim_any().is_err() {
        return;
    }
    // SAFETY: the pointer came from `Box::into_raw` of a `Handle<T>` (contract) and is not in use (claimed:
    // no call runs on it, on any thread); the caller gives it up.
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

    /// A handle pointer shared between the threads of a test.
    #[derive(Clone, Copy)]
    struct Shared(*mut opaque);
    // SAFETY: the tests free the handle only after every thread using it has been joined.
    unsafe impl Send for Shared {}
    // SAFETY: as above.
    unsafe impl Sync for Shared {}

    #[test]
    fn a_call_from_another_thread_during_a_call_is_refused() {
        use std::sync::mpsc;
        let p = Shared(Handle::into_raw(vec![1]));
        let (inside_tx, inside_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let a = std::thread::spawn(move || {
            let p = p;
            // SAFETY: `p` is live until the main thread frees it after joining.
            unsafe {
                with_mut(p.0, |v: &mut Vec<u32>| {
                    inside_tx.send(()).unwrap();
                    done_rx.recv().unwrap(); // the other thread has tried everything
                    v.push(2);
                    Ok(ssefold_result::Ok)
                })
            }
        });
        inside_rx.recv().unwrap();
        // SAFETY: `p` is live (thread `a` is inside a call on it); freed once at the end.
        unsafe {
            assert_eq!(with_mut(p.0, |_: &mut Vec<u32>| Ok(ssefold_result::Ok)), ssefold_result::BadState);
            assert_eq!(with_ref(p.0 as *const opaque, |_: &Vec<u32>| Ok(())), ssefold_result::BadState);
            assert_eq!(last_error(p.0 as *const opaque).unwrap_err(), ssefold_result::BadState);
            free(p.0); // refused: the call on the other thread goes on
            done_tx.send(()).unwrap();
            assert_eq!(a.join().unwrap(), ssefold_result::Ok);
            assert_eq!(
                with_ref(p.0 as *const opaque, |v: &Vec<u32>| if *v == [1, 2] {
                    Ok(())
                } else {
                    Err(Failure::from(ssefold_result::Panic))
                }),
                ssefold_result::Ok
            );
            free(p.0);
        }
    }

    #[test]
    fn two_threads_hammering_one_handle_never_both_get_the_value() {
        // The reproducer of the non-atomic flag (a `Cell`): both threads could read Idle before either wrote Busy,
        // and both then held `&mut` to the value. Here each thread claims the handle as fast as it can for 300 ms
        // (started together); a call that holds the value checks that no other one does.
        use std::sync::atomic::{AtomicBool, AtomicUsize};
        use std::sync::{Arc, Barrier};
        use std::time::{Duration, Instant};
        static INSIDE: AtomicUsize = AtomicUsize::new(0);
        static OVERLAP: AtomicBool = AtomicBool::new(false);
        let p = Shared(Handle::into_raw(vec![0u32]));
        let barrier = Arc::new(Barrier::new(2));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    let p = p;
                    let (mut ok, mut refused, mut reads) = (0u64, 0u64, 0u64);
                    barrier.wait();
                    let start = Instant::now();
                    for i in 0u64.. {
                        if i % 1024 == 0
                            && (start.elapsed() > Duration::from_millis(300) || OVERLAP.load(Ordering::Relaxed))
                        {
                            break;
                        }
                        let body = |v: &mut Vec<u32>| {
                            if INSIDE.fetch_add(1, Ordering::SeqCst) != 0 {
                                OVERLAP.store(true, Ordering::SeqCst);
                            }
                            v[0] = v[0].wrapping_add(1);
                            INSIDE.fetch_sub(1, Ordering::SeqCst);
                            Ok(ssefold_result::Ok)
                        };
                        // SAFETY: `p` is live until both threads are joined.
                        let r = unsafe {
                            if i % 4 == 3 {
                                with_ref(p.0 as *const opaque, |_: &Vec<u32>| Ok(()))
                            } else {
                                with_mut(p.0, body)
                            }
                        };
                        match (r, i % 4 == 3) {
                            (ssefold_result::Ok, false) => ok += 1,
                            (ssefold_result::Ok, true) => reads += 1,
                            (ssefold_result::BadState, _) => refused += 1,
                            (other, _) => panic!("{other:?}"),
                        }
                    }
                    (ok, refused, reads)
                })
            })
            .collect();
        let counts: Vec<(u64, u64, u64)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(!OVERLAP.load(Ordering::SeqCst), "two calls held the value at once: {counts:?}");
        let ok: u64 = counts.iter().map(|c| c.0).sum();
        // SAFETY: both threads are joined; `p` is freed once.
        unsafe {
            let mut count = 0;
            assert_eq!(
                with_ref(p.0 as *const opaque, |v: &Vec<u32>| {
                    count = v[0];
                    Ok(())
                }),
                ssefold_result::Ok
            );
            assert_eq!(u64::from(count), ok % (1 << 32), "every call that returned OK counted once: {counts:?}");
            free(p.0);
        }
    }
}
