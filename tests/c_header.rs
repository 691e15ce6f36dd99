//! Cheap drift checks of the committed C header `include/ssefold.h` that run
//! with `cargo test` (no cbindgen needed): every exported function of
//! `src/ffi` is declared, nothing else is, and the version macros match
//! Cargo.toml (`ssefold_version()` is checked against them by the C tests). The exact regeneration check is `make header-check` (pinned
//! cbindgen), run by `make c-test`.
#![cfg(feature = "capi")]

use std::collections::BTreeSet;

const HEADER: &str = include_str!("../include/ssefold.h");

/// The names of the `#[no_mangle]` functions in `src/ffi/*.rs`.
fn exported_functions() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi");
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() != "#[no_mangle]" {
                continue;
            }
            let decl = lines.next().unwrap();
            let name = decl.split("fn ").nth(1).and_then(|rest| rest.split('(').next()).unwrap();
            names.insert(name.to_owned());
        }
    }
    names
}

/// The names of the functions declared in the header.
fn declared_functions() -> BTreeSet<String> {
    HEADER
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.starts_with("typedef") && l.contains('('))
        .filter_map(|l| l.split('(').next()?.rsplit([' ', '*']).next().map(str::to_owned))
        .filter(|n| n.starts_with("ssefold_"))
        .collect()
}

#[test]
fn every_exported_function_is_declared_and_prefixed() {
    let exported = exported_functions();
    assert!(exported.len() >= 40, "{exported:?}");
    assert!(exported.iter().all(|n| n.starts_with("ssefold_")), "{exported:?}");
    assert_eq!(declared_functions(), exported, "include/ssefold.h is stale: run `make header`");
}

#[test]
fn version_macros_match_the_crate() {
    let version = env!("CARGO_PKG_VERSION");
    assert!(HEADER.contains(&format!("#define SSEFOLD_VERSION \"{version}\"")));
    for (name, part) in ["MAJOR", "MINOR", "PATCH"].iter().zip(version.split('.')) {
        assert!(HEADER.contains(&format!("#define SSEFOLD_VERSION_{name} {part}\n")), "{name}");
    }
}

#[test]
fn the_header_has_its_guard_and_c_linkage() {
    assert!(HEADER.contains("#ifndef SSEFOLD_H\n#define SSEFOLD_H"));
    assert!(HEADER.contains("extern \"C\" {"));
    assert!(HEADER.contains("SSEFOLD_RESULT_OK = 0,"));
}

/// Every macro the header defines is in the library's namespace: a C
/// program that includes it gets no bare `DEFAULT_…` or `Type_CONST` names.
#[test]
fn every_macro_is_prefixed() {
    let macros: Vec<&str> = HEADER
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("#define "))
        .map(|rest| rest.split_whitespace().next().unwrap())
        .collect();
    assert!(macros.contains(&"SSEFOLD_H") && macros.contains(&"SSEFOLD_VERSION"), "{macros:?}");
    let bare: Vec<&&str> = macros.iter().filter(|m| !m.starts_with("SSEFOLD_")).collect();
    assert!(bare.is_empty(), "macros without the SSEFOLD_ prefix: {bare:?}");
}
