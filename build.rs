//! Build script: no code generation (the header is committed and
//! regenerated on demand by `make header`, with a pinned cbindgen).
//!
//! * Copies `include/ssefold.h` into `OUT_DIR/include` and prints
//!   `cargo:include=…`, so crates that depend on ssefold (`links =
//!   "ssefold"`) find the header through `DEP_SSEFOLD_INCLUDE`.
//! * On Linux, gives the cdylib the SONAME `libssefold.so.<major>`, or
//!   `libssefold.so.0.<minor>` before 1.0 (a 0.x minor release may break).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include/ssefold.h");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("include");
    let header = manifest.join("include/ssefold.h");
    if header.exists() {
        std::fs::create_dir_all(&out).expect("create OUT_DIR/include");
        std::fs::copy(&header, out.join("ssefold.h")).expect("copy the header");
        println!("cargo:include={}", out.display());
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets CARGO_PKG_VERSION_MAJOR");
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("cargo sets CARGO_PKG_VERSION_MINOR");
    // The ABI's version: the major, or `0.<minor>` before 1.0, where a minor
    // release may break (semver's rule for 0.x, which the CMake package's
    // version check follows too). `make install` links the same names.
    let abi = if major == "0" { format!("0.{minor}") } else { major };
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libssefold.so.{abi}");
    }
}
