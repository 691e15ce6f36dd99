//! The `ssefold` command line: the library's pipeline on files, pipes and an
//! embedded example stream.
//!
//! ```text
//! ssefold demo [--fast]         replay an embedded LLM stream at a realistic pace
//! ssefold sse [FILE|-]          one JSON object per SSE event (JSON Lines), live
//! ```

mod fold;
mod sse;

use std::process::ExitCode;

/// The embedded example: a realistic Anthropic Messages stream with text, a
/// tool call and usage.
const DEMO_STREAM: &[u8] = include_bytes!("demo.sse");

const USAGE: &str = "\
ssefold — Server-Sent Events for LLM streams

USAGE:
    ssefold demo [--fast] [--jsonl]
                                replay an embedded Anthropic stream (text, a tool call, usage)
                                at a realistic pace through `fold`: the answer renders live,
                                then the folded message; --fast replays it at once, --jsonl
                                prints the normalized events
    ssefold sse [FILE|-]        decode SSE from FILE or stdin ('-', the default) and print
                                one JSON object per event, flushed as events are dispatched:
                                {\"event\": str, \"data\": str, \"id\": str|null, \"retry\": int|null}
    ssefold fold [--provider P] [FILE|-] [--jsonl]   fold a provider stream (see `ssefold fold --help`)
    ssefold help                this text
    ssefold --version           the version

EXIT STATUS:
    0  the stream was decoded and ended cleanly
    1  a decoding or I/O error (reported on stderr; decoding goes on after a decoding error)
    2  a usage error
    3  the stream ended inside an event: its bytes were discarded (reported on stderr)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    match command.as_str() {
        "sse" => sse::run(rest),
        "fold" => fold::run(rest),
        "demo" => demo(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        "--version" | "-V" => {
            println!("ssefold {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("ssefold: unknown command {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// `ssefold demo`: the embedded stream, read in network-sized pieces with
/// pauses between them, through the same path as `ssefold fold`: the answer
/// renders live (text, then the tool call with its arguments streaming in),
/// then the folded message. `--jsonl` prints the normalized events instead.
fn demo(args: &[String]) -> ExitCode {
    let mut pause = Some(std::time::Duration::from_millis(35));
    let mut jsonl = false;
    for a in args {
        match a.as_str() {
            "--fast" => pause = None,
            "--jsonl" => jsonl = true,
            other => {
                eprintln!("ssefold demo: unknown option {other:?}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    fold::fold_input(Paced { rest: DEMO_STREAM, pause }, ssefold::providers::Provider::Auto, jsonl)
}

/// A reader that hands out at most 97 bytes per read (pieces that do not
/// line up with events), sleeping before each: a stream at a realistic pace.
struct Paced {
    rest: &'static [u8],
    pause: Option<std::time::Duration>,
}

impl std::io::Read for Paced {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.rest.is_empty() {
            return Ok(0);
        }
        if let Some(p) = self.pause {
            std::thread::sleep(p);
        }
        let n = buf.len().min(97).min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}
