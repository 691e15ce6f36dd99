//! `ssefold fold` under a pseudo-terminal (spinner, double-Esc abort, the
//! keys read from the terminal while the stream comes through a pipe,
//! raw mode restored, a hostile stream's controls shown as escapes):
//! cli/tests/pty_session.py drives it with Python's `pty` module.

use std::path::Path;
use std::process::Command;

#[test]
fn fold_on_a_terminal_spins_and_aborts_on_double_esc() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(dir.join("tests/pty_session.py"))
        .arg(env!("CARGO_BIN_EXE_ssefold"))
        .arg(dir.join(".."))
        .output()
        .expect("python3 runs the pty session");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("ok ")).count(), 4, "{stdout}");
}
