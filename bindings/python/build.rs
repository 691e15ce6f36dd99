//! Exposes PyO3's interpreter cfgs (`Py_GIL_DISABLED`, `Py_3_14`, ...) to
//! this crate, for the free-threaded build's one workaround in `lib.rs`.

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
