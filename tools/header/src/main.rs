//! Generates `include/ssefold.h` with the pinned cbindgen.
//!
//! `ssefold-header <crate dir>` writes the header; `ssefold-header --check
//! <crate dir>` regenerates it in memory and exits 1 when the committed one
//! differs (the drift check run by `make header-check`).

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.first().is_some_and(|a| a == "--check");
    if check {
        args.remove(0);
    }
    let dir = PathBuf::from(args.first().map_or(".", String::as_str));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("read Cargo.toml");
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("a version line in Cargo.toml")
        .to_owned();
    let parts: Vec<&str> = version.split(['.', '-']).collect();
    let mut config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("read cbindgen.toml");
    config.after_includes = Some(format!(
        "\n/* The version of the header; compare with ssefold_version() at run time. */\n\
         #define SSEFOLD_VERSION \"{version}\"\n\
         #define SSEFOLD_VERSION_MAJOR {}\n\
         #define SSEFOLD_VERSION_MINOR {}\n\
         #define SSEFOLD_VERSION_PATCH {}",
        parts[0], parts[1], parts[2]
    ));
    let bindings = cbindgen::Builder::new().with_crate(&dir).with_config(config).generate().expect("cbindgen");
    let mut out = Vec::new();
    bindings.write(&mut out);
    let path = dir.join("include/ssefold.h");
    if check {
        let committed = std::fs::read(&path).unwrap_or_default();
        if committed != out {
            eprintln!("include/ssefold.h is stale: run `make header` and commit it");
            return ExitCode::FAILURE;
        }
        println!("include/ssefold.h is up to date");
    } else {
        std::fs::create_dir_all(dir.join("include")).expect("create include/");
        std::fs::write(&path, out).expect("write the header");
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}
