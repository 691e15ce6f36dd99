//! `ssefold fold`: a provider stream rendered live, then the folded message.
//!
//! ```text
//! ssefold fold [--provider anthropic|openai-chat|openai-responses|auto] [FILE|-] [--jsonl]
//! ```
//!
//! Without `--jsonl`: the answer is written live to stdout (reasoning dimmed
//! with ANSI when stdout is a terminal, tool calls as `name(arguments)` with
//! the arguments streaming in), then the folded message as pretty JSON.
//! With `--jsonl`: one normalized event per line (`StreamEvent::to_json`),
//! flushed per event, and nothing else on stdout.
//! Warnings and errors go to stderr. Exit status: 0 the turn ended
//! normally, 1 an error (provider error, invalid data, I/O), 2 usage,
//! 3 the stream ended before its terminal event.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::process::ExitCode;

use ssefold::providers::{PartKind, PartOutcome, Provider, Stream, StreamError, StreamEvent};

const USAGE: &str = "usage: ssefold fold [--provider anthropic|openai-chat|openai-responses|auto] [FILE|-] [--jsonl]";

/// Live terminal rendering of the normalized events.
struct Renderer<W: Write> {
    out: W,
    jsonl: bool,
    color: bool,
    kinds: HashMap<u32, PartKind>,
    at_line_start: bool,
}

impl<W: Write> Renderer<W> {
    fn write(&mut self, s: &str) -> io::Result<()> {
        if !s.is_empty() {
            self.at_line_start = s.ends_with('\n');
        }
        self.out.write_all(s.as_bytes())
    }

    fn newline(&mut self) -> io::Result<()> {
        if self.at_line_start {
            Ok(())
        } else {
            self.write("\n")
        }
    }

    fn style(&mut self, code: &str, s: &str) -> io::Result<()> {
        if self.color {
            self.write(&format!("\x1b[{code}m{s}\x1b[0m"))
        } else {
            self.write(s)
        }
    }

    fn event(&mut self, e: &StreamEvent<'_>) -> io::Result<()> {
        if self.jsonl {
            serde_json::to_writer(&mut self.out, &e.to_json())?;
            self.out.write_all(b"\n")?;
            return self.out.flush();
        }
        match *e {
            StreamEvent::PartStart { part, kind, provider_type, .. } => {
                self.kinds.insert(part, kind);
                match kind {
                    PartKind::Reasoning => {
                        self.newline()?;
                        self.style("2", "[thinking] ")?;
                    }
                    PartKind::Refusal => {
                        self.newline()?;
                        self.style("31", "[refusal] ")?;
                    }
                    PartKind::ToolCall => {
                        self.newline()?;
                        self.style("36", "[tool call] ")?;
                    }
                    PartKind::Text => {}
                    // `Other`, and kinds newer than this match.
                    _ => {
                        self.newline()?;
                        self.style("2", &format!("[{provider_type}]\n"))?;
                    }
                }
            }
            StreamEvent::TextDelta { part, text } => match self.kinds.get(&part) {
                Some(PartKind::Reasoning) => self.style("2", text)?,
                _ => self.write(text)?,
            },
            StreamEvent::PartMetadata { key: "name", value, .. } => {
                let name = value.as_str().unwrap_or("?").to_owned();
                self.style("36;1", &format!("{name} "))?;
            }
            StreamEvent::ToolArgsDelta { json, .. } => self.style("36", json)?,
            StreamEvent::PartEnd { kind, outcome, .. } => {
                if let PartOutcome::InvalidArguments { error, .. } = outcome {
                    self.newline()?;
                    self.style("31", &format!("[invalid arguments: {error}]"))?;
                } else if outcome == PartOutcome::Incomplete {
                    self.newline()?;
                    self.style("33", "[incomplete]")?;
                }
                if kind != PartKind::Text {
                    self.newline()?;
                }
            }
            StreamEvent::Warning { code, message } => eprintln!("ssefold fold: warning {code}: {message}"),
            StreamEvent::Error { error } => {
                eprintln!("ssefold fold: provider error {}: {}", error.error_type, error.message)
            }
            StreamEvent::Unknown { scope, provider_type, .. } => {
                eprintln!("ssefold fold: unknown {scope} {provider_type:?} passed through")
            }
            _ => {}
        }
        self.out.flush()
    }
}

/// Runs `ssefold fold` with the arguments after `fold`.
pub fn run(args: &[String]) -> ExitCode {
    let mut provider = Provider::Auto;
    let mut jsonl = false;
    let mut path: Option<&str> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--jsonl" => jsonl = true,
            "--provider" => match it.next().and_then(|p| Provider::from_name(p)) {
                Some(p) => provider = p,
                None => return usage("--provider needs anthropic, openai-chat, openai-responses or auto"),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            s if s.starts_with("--provider=") => match Provider::from_name(&s["--provider=".len()..]) {
                Some(p) => provider = p,
                None => return usage("unknown provider"),
            },
            s if s.starts_with('-') && s != "-" => return usage(&format!("unknown option {s:?}")),
            s if path.is_none() => path = Some(s),
            _ => return usage("only one FILE"),
        }
    }
    let input: Box<dyn Read> = match path {
        None | Some("-") => Box::new(io::stdin().lock()),
        Some(p) => match File::open(p) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("ssefold fold: {p}: {e}");
                return ExitCode::from(1);
            }
        },
    };
    fold_input(input, provider, jsonl)
}

/// Folds everything `input` yields as one `provider` stream, rendering it
/// live (or as JSON Lines with `jsonl`), then prints the folded message.
pub fn fold_input(mut input: impl Read, provider: Provider, jsonl: bool) -> ExitCode {
    let stdout = io::stdout();
    let color = !jsonl && stdout.is_terminal();
    let mut r = Renderer { out: stdout.lock(), jsonl, color, kinds: HashMap::new(), at_line_start: true };
    let mut stream = Stream::new(provider);
    let mut io_err: Option<io::Error> = None;
    let mut buf = vec![0u8; 16 * 1024];
    let mut result: Result<(), StreamError> = Ok(());
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("ssefold fold: read: {e}");
                return ExitCode::from(1);
            }
        };
        result = stream.feed(&buf[..n], |e| {
            if io_err.is_none() {
                io_err = r.event(e).err();
            }
        });
        if result.is_err() || io_err.is_some() {
            break;
        }
    }
    if result.is_ok() && io_err.is_none() {
        result = stream.finish(|e| {
            if io_err.is_none() {
                io_err = r.event(e).err();
            }
        });
    }
    if let Some(e) = io_err {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
        eprintln!("ssefold fold: {e}");
        return ExitCode::from(1);
    }
    if !jsonl {
        let _ = r.newline();
        let message = serde_json::to_string_pretty(&stream.message()).unwrap_or_default();
        if writeln!(r.out, "{message}").and_then(|()| r.out.flush()).is_err() {
            return ExitCode::from(1);
        }
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(StreamError::Incomplete { expected }) => {
            eprintln!("ssefold fold: the stream ended before {expected}");
            ExitCode::from(3)
        }
        Err(StreamError::Provider(_)) => ExitCode::from(1),
        Err(e) => {
            eprintln!("ssefold fold: {e}");
            ExitCode::from(1)
        }
    }
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("ssefold fold: {msg}\n{USAGE}");
    ExitCode::from(2)
}
