//! CPython 3.13's free-threaded build (`python3.13t`): this module's classes
//! made immortal, as CPython itself does for classes defined in Python.
//!
//! Every object made adds one to its type's reference count, and every
//! object freed takes one away. On 3.13t a count changed by a thread that
//! did not create the object is one atomic `lock add` on a cache line that
//! every core writes: two threads each making and dropping thousands of
//! `ServerSentEvent`s per `feed()` fought over their class's count, and two
//! threads decoded *slower* than one (0.63×, `python/bench/threads.py`).
//! CPython 3.13t works around this for classes created by a `class`
//! statement (they use deferred reference counting and become immortal once
//! a second thread starts, gh-117783), but not for classes made from a spec
//! (`PyType_FromSpec`), which is how PyO3 makes them. 3.14 counts a heap
//! type's references per thread instead, so this is for 3.13 only.
//!
//! The classes live as long as the interpreter in any case (an extension
//! module is never unloaded); an immortal class is only never freed at
//! interpreter exit either.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};

/// Makes every class in the module's namespace whose `__module__` is ours
/// immortal (PyO3 classes and the exception classes alike).
pub fn immortalize_classes(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let namespace: Bound<'_, PyDict> = module.dict();
    for (_, value) in namespace.iter() {
        let Ok(class) = value.cast::<PyType>() else {
            continue;
        };
        let owner: String = class.getattr("__module__")?.extract()?;
        if owner == "ssefold" || owner.starts_with("ssefold.") {
            immortalize(class);
        }
    }
    Ok(())
}

/// What CPython 3.13's `_Py_SetImmortal` does, through the public layout of
/// a free-threaded `PyObject`.
fn immortalize(class: &Bound<'_, PyType>) {
    use std::sync::atomic::Ordering::Relaxed;
    let object = class.as_ptr();
    // SAFETY: `object` is a live heap type (the module's namespace holds a
    // reference while we run). Untracking a tracked GC object is what
    // `_Py_SetImmortal` does first; the garbage collector never needs to
    // visit an immortal object. The refcount fields are atomics in the
    // free-threaded layout, and `ob_tid` is written while module init still
    // holds the only path to the class (no other thread can reach it yet).
    unsafe {
        if pyo3::ffi::PyObject_GC_IsTracked(object) == 1 {
            pyo3::ffi::PyObject_GC_UnTrack(object.cast());
        }
        (*object).ob_tid = 0;
        (*object).ob_ref_local.store(u32::MAX, Relaxed);
        (*object).ob_ref_shared.store(0, Relaxed);
    }
}
