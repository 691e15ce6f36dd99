//! `ssefold-corpus NAME BYTES`: writes the corpus `NAME` of about `BYTES`
//! bytes ([`ssefold_corpus::by_name`]) to stdout, for the Python and Go
//! benchmarks. Exit code 2 on bad arguments, 1 when stdout fails.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = format!(
        "usage: ssefold-corpus NAME BYTES   (NAME one of: {})",
        ssefold_corpus::NAMES.iter().chain(&ssefold_corpus::EVENTSTREAM_NAMES).copied().collect::<Vec<_>>().join(", ")
    );
    let [name, bytes] = &args[..] else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let Ok(bytes) = bytes.parse::<usize>() else {
        eprintln!("ssefold-corpus: BYTES must be a whole number, got {bytes:?}\n{usage}");
        return ExitCode::from(2);
    };
    let Some(data) = ssefold_corpus::by_name(name, bytes) else {
        eprintln!("ssefold-corpus: unknown corpus {name:?}\n{usage}");
        return ExitCode::from(2);
    };
    match std::io::stdout().lock().write_all(&data) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ssefold-corpus: {e}");
            ExitCode::from(1)
        }
    }
}
