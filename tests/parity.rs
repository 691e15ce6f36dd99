//! Parity: what a new dialect or a new C function must reach, checked so that
//! forgetting a step fails here with the file to edit, instead of a binding
//! that silently lacks it (CONTRIBUTING.md has the checklists).
//!
//! * [`every_dialect_is_known_everywhere`]: each dialect of
//!   `src/providers/detect.rs`'s `DIALECTS` (its variant and wire name read from
//!   the `DIALECT` of its file, or of its directory's `mod.rs`) is in the C
//!   ABI, the Python and Go bindings, the command line and the test lists that
//!   enumerate dialects.
//! * [`every_c_function_is_wrapped`]: each function of `include/ssefold.h` is
//!   called by `include/ssefold.hpp` and by the Go package, or is listed in
//!   `tests/parity/not_wrapped.txt` with the reason.
//! * [`the_provider_lists_hold_nothing_else`]: the Python `_Provider`
//!   Literal, the Go `Provider` constants and the C `ssefold_provider`
//!   values are the dialects and `auto`, no more.
//! * [`every_event_name_is_known_everywhere`]: `StreamEvent::NAMES` (the
//!   core's table) is what `StreamEvent::name` gives, the Python
//!   `_StreamEventType` Literal, one C `ssefold_stream_event_kind` value and
//!   one Go `EventKind` constant each, and what the relay's `push_json` reads.
//! * [`every_config_limit_is_known_everywhere_with_the_cores_default`]
//!   checks that every limit of `ssefold::config::STREAM_LIMITS` is a C
//!   field, a Go field and a CLI flag, and that every default the Python
//!   stub and the PyO3 signatures spell out is the core's.
//! * [`every_test_file_is_compiled`]: each file of `tests/` is a module of
//!   `tests/behaviour.rs` or a test binary of its own in Cargo.toml.
//! * [`one_version_everywhere`]: the workspace's version is the crate's, the
//!   command line's and the Python extension's (so the wheel's), the C
//!   header's `SSEFOLD_VERSION` macros and the Go `BindingVersion`, and
//!   CHANGELOG.md has its section (under an `Unreleased` one at most).

use std::collections::BTreeSet;
use std::path::Path;

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// A dialect as the core defines it: `Provider::<variant>`, wire `name`.
struct Dialect {
    module: String,
    variant: String,
    name: String,
}

/// The text after `key` up to the next `end` (trimmed).
fn field<'a>(text: &'a str, key: &str, end: char) -> Option<&'a str> {
    let at = text.find(key)? + key.len();
    let rest = &text[at..];
    Some(rest[..rest.find(end)?].trim())
}

/// Every dialect, from the `DIALECTS` table and each file's `DIALECT`.
fn dialects() -> Vec<Dialect> {
    let mod_rs = read("src/providers/detect.rs");
    let table = field(&mod_rs, "const DIALECTS: [&DialectInfo; ", ']').expect("DIALECTS in src/providers/detect.rs");
    let len: usize = table.parse().expect("the length of DIALECTS");
    let body = field(&mod_rs[mod_rs.find("const DIALECTS").unwrap()..], "= [", ']').unwrap();
    let modules: Vec<&str> =
        body.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.trim_start_matches('&')).collect();
    assert_eq!(modules.len(), len, "DIALECTS in src/providers/detect.rs: {modules:?}");
    modules
        .iter()
        .map(|entry| {
            let module = entry.strip_suffix("::DIALECT").unwrap_or_else(|| panic!("DIALECTS entry {entry}"));
            // A dialect's module is a file, or a directory with its `mod.rs`.
            let file = format!("src/providers/{module}.rs");
            let dir = format!("src/providers/{module}/mod.rs");
            let file = if Path::new(env!("CARGO_MANIFEST_DIR")).join(&file).exists() { file } else { dir };
            let text = read(&file);
            let info =
                &text[text.find("const DIALECT: DialectInfo").unwrap_or_else(|| panic!("no DIALECT in {file}"))..];
            let variant = field(info, "provider: Provider::", ',').unwrap().to_owned();
            let name = field(info, "name: \"", '"').unwrap().to_owned();
            Dialect { module: module.to_owned(), variant, name }
        })
        .collect()
}

#[test]
fn the_dialect_table_is_read() {
    let names: Vec<String> = dialects().iter().map(|d| d.name.clone()).collect();
    assert!(names.len() >= 7 && names.iter().any(|n| n == "bedrock_converse"), "{names:?}");
    for d in dialects() {
        let p = ssefold::providers::Provider::from_name(&d.name).unwrap();
        assert_eq!((p.name(), format!("{p:?}")), (d.name.as_str(), d.variant.clone()), "{}", d.module);
    }
}

/// Where one dialect must appear: `needle` in `file`, inside the list from
/// `list.0` to the next `list.1` when one is given.
struct Place {
    file: &'static str,
    list: Option<(&'static str, &'static str)>,
    needle: String,
    how: &'static str,
}

fn place(file: &'static str, list: Option<(&'static str, &'static str)>, needle: String, how: &'static str) -> Place {
    Place { file, list, needle, how }
}

/// Every place a dialect must appear.
fn places(d: &Dialect) -> Vec<Place> {
    let (name, variant, upper) = (&d.name, &d.variant, d.name.to_uppercase());
    let quoted = format!("\"{name}\"");
    vec![
        // The C ABI.
        place(
            "src/ffi/stream.rs",
            None,
            format!("=> Some(Provider::{variant})"),
            "a number in provider_from_c (and a ssefold_provider variant)",
        ),
        place(
            "include/ssefold.h",
            None,
            format!("SSEFOLD_PROVIDER_{upper} = "),
            "a ssefold_provider variant in src/ffi/stream.rs, then `make header`",
        ),
        // Python.
        place(
            "bindings/python/src/providers.rs",
            None,
            format!("Provider::{variant},"),
            "a `dialect!(<Name>Stream, Provider::..., doc)` line",
        ),
        place(
            "python/ssefold/_ssefold.pyi",
            Some(("_Provider = Literal[", "]")),
            quoted.clone(),
            "the `_Provider` Literal",
        ),
        // Go.
        place("bindings/go/stream.go", None, format!("{variant} Provider = "), "a Provider constant (the C number)"),
        place("bindings/go/stream.go", None, format!("return {quoted}"), "a case of Provider.String"),
        // The command line.
        place(
            "cli/src/main.rs",
            None,
            format!("=> Provider::{variant},"),
            "a ProviderArg variant and its arm in From<ProviderArg>",
        ),
        // The test lists that enumerate the dialects.
        place(
            "tests/golden_providers.rs",
            None,
            format!("Provider::{variant})"),
            "a `<name>_golden` test over tests/fixtures/<name>",
        ),
        place("tests/agent_turn.rs", Some(("for dialect in [", "]")), quoted.clone(), "the dialect list of bodies()"),
        place(
            "tests/hostile.rs",
            Some(("const KEPT_CASES", "];")),
            format!("\"{name} "),
            "its cases in KEPT_CASES and kept()'s arm",
        ),
        place("python/tests/test_providers.py", None, format!("{quoted}: ssefold."), "the name -> stream class map"),
        place("python/tests/test_turn.py", Some(("DIALECTS = [", "]")), quoted.clone(), "DIALECTS"),
        place(
            "bindings/go/golden_test.go",
            Some(("var dialects = map[string]Provider{", "}")),
            format!("{quoted}:"),
            "the dialects map",
        ),
        place(
            "tests/c/test_stream.cpp",
            None,
            format!("{{{quoted}, SSEFOLD_PROVIDER_{upper}, "),
            "the goldens' dialect table",
        ),
        place(
            "tests/c/test_agent.cpp",
            None,
            format!("{{{quoted}, SSEFOLD_PROVIDER_{upper}}}"),
            "provider_of()'s names",
        ),
        place(
            "tests/c/test_agent.cpp",
            Some(("for (const char *dialect :", ")")),
            quoted,
            "the dialect loop of bodies()",
        ),
    ]
}

/// The part of `text` a place searches: its list, or everything.
fn scope<'a>(text: &'a str, p: &Place) -> Option<&'a str> {
    let Some((start, end)) = p.list else { return Some(text) };
    let rest = &text[text.find(start)? + start.len()..];
    Some(&rest[..rest.find(end)?])
}

#[test]
fn every_dialect_is_known_everywhere() {
    let mut missing = Vec::new();
    for d in dialects() {
        for p in places(&d) {
            match scope(&read(p.file), &p) {
                None => {
                    let (start, end) = p.list.unwrap();
                    missing.push(format!("{}: no `{start} … {end}` (the list moved: update tests/parity.rs)", p.file));
                }
                Some(text) if !text.contains(&p.needle) => {
                    let inside = p.list.map(|(start, end)| format!(" in `{start} … {end}`")).unwrap_or_default();
                    missing.push(format!("{}: no `{}`{inside} for dialect {} ({})", p.file, p.needle, d.name, p.how));
                }
                Some(_) => {}
            }
        }
        let class = python_class(&d);
        for file in ["python/ssefold/__init__.py", "python/ssefold/_ssefold.pyi"] {
            if !read(file).contains(&format!("\"{class}\"")) {
                missing.push(format!("{file}: {class} is not exported (`__all__`) for dialect {}", d.name));
            }
        }
        if !read("python/ssefold/_ssefold.pyi").contains(&format!("class {class}(")) {
            missing.push(format!("python/ssefold/_ssefold.pyi: no `class {class}(` for dialect {}", d.name));
        }
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(&d.name);
        if !fixtures.is_dir() {
            missing.push(format!("tests/fixtures/{}/: no golden fixtures (tests/fixtures/README.md)", d.name));
        }
    }
    assert!(
        missing.is_empty(),
        "a dialect is missing from (see CONTRIBUTING.md, \"A new dialect\"):\n  {}",
        missing.join("\n  ")
    );
}

/// The Python class of a dialect, from its `dialect!` line.
fn python_class(d: &Dialect) -> String {
    let src = read("bindings/python/src/providers.rs");
    let needle = format!("Provider::{},", d.variant);
    let Some(at) = src.find(&needle) else { return format!("<the {} stream class>", d.name) };
    let start = src[..at].rfind("dialect!(").expect("dialect!( before the provider") + "dialect!(".len();
    src[start..at].trim().trim_end_matches(',').trim().to_owned()
}

/// The functions `include/ssefold.h` declares.
fn c_functions() -> BTreeSet<String> {
    let header = read("include/ssefold.h");
    let mut out = BTreeSet::new();
    for line in header.lines() {
        if line.starts_with(' ') || line.starts_with('*') || line.starts_with("/*") || line.starts_with('#') {
            continue;
        }
        let Some(paren) = line.find('(') else { continue };
        let before = &line[..paren];
        let name = before.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("");
        if name.starts_with("ssefold_") && !before.starts_with("typedef") {
            out.insert(name.to_owned());
        }
    }
    out
}

/// Whether `text` mentions `name` as a whole identifier outside `//` comments.
fn calls(text: &str, name: &str) -> bool {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).any(|code| {
        code.match_indices(name).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let after = code[at + name.len()..].chars().next();
            let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            !ident(before) && !ident(after)
        })
    })
}

/// The Go package's sources (not its tests; callbacks.c and ssefold_go.h
/// hold C helpers that call the library for it).
fn go_sources() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bindings/go");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            (n.ends_with(".go") && !n.ends_with("_test.go")) || n.ends_with(".c") || n.ends_with(".h")
        })
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect::<Vec<_>>().join("\n")
}

#[test]
fn every_c_function_is_wrapped() {
    let functions = c_functions();
    assert!(functions.len() > 100 && functions.contains("ssefold_relay_message_metadata"), "{functions:?}");
    let allowed = read("tests/parity/not_wrapped.txt");
    let mut listed = BTreeSet::new();
    let mut problems = Vec::new();
    for (n, line) in allowed.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.splitn(3, char::is_whitespace);
        let (function, binding, reason) =
            (words.next().unwrap(), words.next().unwrap_or(""), words.next().unwrap_or(""));
        if !matches!(binding, "c++" | "go") || reason.trim().is_empty() {
            problems.push(format!("tests/parity/not_wrapped.txt:{}: want `<function> c++|go <reason>`", n + 1));
        } else if !functions.contains(function) {
            problems.push(format!("tests/parity/not_wrapped.txt:{}: {function} is not in include/ssefold.h", n + 1));
        }
        listed.insert((function.to_owned(), binding.to_owned()));
    }
    let bindings = [
        ("c++", read("include/ssefold.hpp"), "include/ssefold.hpp"),
        ("go", go_sources(), "bindings/go/*.go (C.<function>)"),
    ];
    for function in &functions {
        for (binding, text, file) in &bindings {
            let is_listed = listed.contains(&(function.clone(), (*binding).to_owned()));
            match (calls(text, function), is_listed) {
                (false, false) => problems.push(format!(
                    "{function}: not called in {file}; wrap it, or list it in tests/parity/not_wrapped.txt as `{function} {binding} <reason>`"
                )),
                (true, true) => problems.push(format!(
                    "{function}: {file} calls it now; remove `{function} {binding}` from tests/parity/not_wrapped.txt"
                )),
                _ => {}
            }
        }
    }
    assert!(
        problems.is_empty(),
        "C functions and their wrappers (CONTRIBUTING.md, \"A new C function\"):\n  {}",
        problems.join("\n  ")
    );
}

/// `autotests = false`: a file of `tests/` runs only when `tests/behaviour.rs`
/// declares it (or Cargo.toml names it as a `[[test]]`); a new file left out
/// would compile nowhere and fail nothing.
#[test]
fn every_test_file_is_compiled() {
    let root = read("tests/behaviour.rs");
    let declared: BTreeSet<String> =
        root.lines().filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)).collect();
    let manifest = read("Cargo.toml");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let (Some(stem), Some("rs")) =
            (path.file_stem().and_then(|s| s.to_str()), path.extension().and_then(|e| e.to_str()))
        else {
            continue;
        };
        let own_binary = manifest.contains(&format!("path = \"tests/{stem}.rs\""));
        if !own_binary && !declared.contains(stem) {
            missing.push(format!("tests/{stem}.rs"));
        }
    }
    assert!(missing.is_empty(), "add `mod NAME;` to tests/behaviour.rs for {missing:?}");
    for name in &declared {
        assert!(dir.join(format!("{name}.rs")).exists() || dir.join(name).join("mod.rs").exists(), "tests/{name}");
    }
}

/// Every quoted string of `text`.
fn quoted(text: &str) -> Vec<&str> {
    text.split('"').skip(1).step_by(2).collect()
}

/// `max_id_len` → `MaxIDLen`: the Go spelling of a configuration name.
fn go_case(name: &str) -> String {
    name.split('_')
        .map(|w| match w {
            "id" => "ID".to_owned(),
            _ => w[..1].to_uppercase() + &w[1..],
        })
        .collect()
}

#[test]
fn every_event_name_is_known_everywhere() {
    use ssefold::providers::StreamEvent;
    let names: BTreeSet<&str> = StreamEvent::NAMES.iter().copied().collect();
    assert_eq!(names.len(), StreamEvent::NAMES.len(), "StreamEvent::NAMES has a duplicate");
    let mut problems = Vec::new();
    // The core: StreamEvent::name's arms are the table.
    let events = read("src/providers/events.rs");
    let start = events.find("pub fn name(&self) -> &'static str {\n        match self {\n            StreamEvent::");
    let arms = start.and_then(|at| events[at..].find("\n    }\n").map(|end| &events[at..at + end]));
    match arms {
        None => problems.push("src/providers/events.rs: no StreamEvent::name (update tests/parity.rs)".to_owned()),
        Some(arms) => {
            let got: BTreeSet<&str> = quoted(arms).into_iter().collect();
            if got != names {
                problems.push(format!(
                    "src/providers/events.rs: StreamEvent::name gives {got:?}, StreamEvent::NAMES says {names:?}"
                ));
            }
        }
    }
    // Python's Literal, exactly the table.
    let pyi = read("python/ssefold/_ssefold.pyi");
    let literal =
        field(&pyi, "_StreamEventType = Literal[", ']').map(|l| quoted(l).into_iter().collect::<BTreeSet<_>>());
    if literal.as_ref() != Some(&names) {
        problems.push(format!("python/ssefold/_ssefold.pyi: _StreamEventType is {literal:?}, the core's {names:?}"));
    }
    // C and Go: one constant per name, and no other.
    let header = read("include/ssefold.h");
    let go = read("bindings/go/stream.go");
    let c_count = header.lines().filter(|l| l.trim_start().starts_with("SSEFOLD_STREAM_EVENT_KIND_")).count();
    let go_count = go.lines().filter(|l| l.contains(" EventKind = ")).count();
    if c_count != names.len() || go_count != names.len() {
        problems.push(format!(
            "{} event names, {c_count} ssefold_stream_event_kind values (include/ssefold.h), {go_count} Go EventKind \
             constants (bindings/go/stream.go)",
            names.len()
        ));
    }
    let relay = read("src/relay/wire.rs");
    for name in &names {
        if !header.contains(&format!("SSEFOLD_STREAM_EVENT_KIND_{} = ", name.to_uppercase())) {
            problems.push(format!(
                "include/ssefold.h: no SSEFOLD_STREAM_EVENT_KIND_{} (src/ffi/stream.rs)",
                name.to_uppercase()
            ));
        }
        if !go.contains(&format!("Kind{} ", go_case(name))) {
            problems.push(format!("bindings/go/stream.go: no Kind{} EventKind constant", go_case(name)));
        }
        if !relay.contains(&format!("\"{name}\"")) {
            problems.push(format!("src/relay/wire.rs: push_json does not read a {name:?} event"));
        }
    }
    assert!(problems.is_empty(), "event names (StreamEvent::NAMES):\n  {}", problems.join("\n  "));
}

/// Every `name = <number>` / `name: int = <number>` default of `text`, with
/// its line.
fn defaults_of<'a>(text: &'a str, name: &str) -> Vec<(usize, &'a str)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for pattern in [format!("{name}: int = "), format!("{name} = ")] {
            for (at, _) in line.match_indices(&pattern) {
                let before = line[..at].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    continue;
                }
                let rest = &line[at + pattern.len()..];
                let value = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
                if !value.is_empty() {
                    out.push((n + 1, value));
                }
            }
        }
    }
    out
}

#[test]
fn every_config_limit_is_known_everywhere_with_the_cores_default() {
    use ssefold::config::STREAM_LIMITS;
    let mut problems = Vec::new();
    let header = read("include/ssefold.h");
    let go = read("bindings/go/stream.go") + &read("bindings/go/decoder.go");
    let cli = read("cli/src/limits.rs");
    // Files that spell the defaults out: the stub, the PyO3 signatures.
    let with_defaults =
        ["python/ssefold/_ssefold.pyi", "bindings/python/src/providers.rs", "bindings/python/src/sse.rs"];
    for l in STREAM_LIMITS {
        let default = l.default_value().to_string();
        // C: the field, in the stream's, the decoder's or the event-stream struct.
        let c_name = l.name.replace("max_event_stream_", "max_");
        if !header.contains(&format!(" {c_name};")) {
            problems.push(format!("include/ssefold.h: no field {c_name} for the limit {}", l.name));
        }
        let go_name = go_case(&c_name);
        if !go.lines().any(|line| {
            line.trim_start().strip_prefix(&go_name).is_some_and(|r| r.starts_with(' ') && r.contains("int"))
        }) {
            problems.push(format!("bindings/go: no field {go_name} for the limit {}", l.name));
        }
        if !cli.contains(&format!("pub {}: ", l.name)) {
            problems.push(format!("cli/src/limits.rs: no flag for the limit {}", l.name));
        }
        let mut seen = false;
        for file in with_defaults {
            for (line, value) in defaults_of(&read(file), l.name) {
                seen = true;
                if value != default {
                    problems.push(format!("{file}:{line}: {} = {value}, the core's default is {default}", l.name));
                }
            }
        }
        if !seen {
            problems.push(format!("python/ssefold/_ssefold.pyi: no keyword {} (with its default {default})", l.name));
        }
    }
    assert!(problems.is_empty(), "configuration limits (ssefold::config::STREAM_LIMITS):\n  {}", problems.join("\n  "));
}

#[test]
fn the_provider_lists_hold_nothing_else() {
    // every_dialect_is_known_everywhere checks that each dialect is in each
    // list; this checks the lists that must be exactly the dialects (and
    // `auto`): a dialect removed from the core must leave them too.
    let mut want: BTreeSet<String> = dialects().into_iter().map(|d| d.name).collect();
    want.insert("auto".to_owned());
    let pyi = read("python/ssefold/_ssefold.pyi");
    let literal: Option<BTreeSet<String>> =
        field(&pyi, "_Provider = Literal[", ']').map(|l| quoted(l).into_iter().map(str::to_owned).collect());
    assert_eq!(literal.as_ref(), Some(&want), "python/ssefold/_ssefold.pyi: the _Provider Literal");
    let go = read("bindings/go/stream.go");
    let constants = go.lines().filter(|l| l.contains(" Provider = ")).count();
    assert_eq!(constants, want.len(), "bindings/go/stream.go: one Provider constant per dialect, and Auto");
    let header = read("include/ssefold.h");
    let c = header.lines().filter(|l| l.trim_start().starts_with("SSEFOLD_PROVIDER_")).count();
    assert_eq!(c, want.len(), "include/ssefold.h: one ssefold_provider value per dialect, and AUTO");
}

/// One version for every artifact: the workspace's, which the crate, the
/// command line and the Python extension inherit (maturin takes the wheel's
/// from `bindings/python`), the C header's macros carry, the Go package's
/// `BindingVersion` names, and CHANGELOG.md has a section for.
#[test]
fn one_version_everywhere() {
    let root = read("Cargo.toml");
    let workspace = root.split("[workspace.package]").nth(1).expect("a [workspace.package] table");
    let version = field(workspace, "version = \"", '"').expect("a workspace version");
    assert_eq!(version, env!("CARGO_PKG_VERSION"), "the crate's version is the workspace's");
    for manifest in ["Cargo.toml", "cli/Cargo.toml", "bindings/python/Cargo.toml"] {
        let text = read(manifest);
        let package = text.split("[package]").nth(1).expect("a [package] table");
        let package = package.split("\n[").next().unwrap_or(package);
        assert!(package.contains("version.workspace = true"), "{manifest}: version.workspace = true");
    }
    let pyproject = read("pyproject.toml");
    assert!(pyproject.contains("dynamic = [\"version\"]"), "the wheel takes its version from the extension's crate");
    assert!(read("pyproject.toml").contains("manifest-path = \"bindings/python/Cargo.toml\""));
    let header = read("include/ssefold.h");
    assert_eq!(field(&header, "#define SSEFOLD_VERSION \"", '"'), Some(version), "include/ssefold.h");
    let parts: Vec<&str> = version.split(['.', '-']).collect();
    for (name, want) in ["MAJOR", "MINOR", "PATCH"].iter().zip(&parts) {
        let got = field(&header, &format!("#define SSEFOLD_VERSION_{name} "), '\n');
        assert_eq!(got, Some(*want), "SSEFOLD_VERSION_{name}");
    }
    let go = read("bindings/go/version.go");
    assert_eq!(field(&go, "const BindingVersion = \"", '"'), Some(version), "bindings/go/version.go");
    let changelog = read("CHANGELOG.md");
    assert!(changelog.contains(&format!("\n## [{version}] - ")), "CHANGELOG.md has no section for {version}");
    let first = changelog.find("\n## [").expect("a version section");
    let top = &changelog[first + 5..];
    let top = &top[..top.find(']').unwrap()];
    assert!(top == "Unreleased" || top == version, "CHANGELOG.md's newest section is {top:?}, not {version}");
}
