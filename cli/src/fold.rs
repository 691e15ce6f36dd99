//! `ssefold fold` (and `demo`): a provider stream folded into its message,
//! rendered live as it arrives.
//!
//! Standard output holds the result: the folded message as pretty JSON, or
//! with `--jsonl` one normalized event per line and the message, compact,
//! as the last line. The live render goes to standard output when it is a
//! terminal (before the message), else to standard error; `--no-render`
//! turns it off. Warnings and errors go to standard error, the first few of
//! each warning code in full and a count per code at the end.
//!
//! On a terminal a spinner turns while the stream is quiet, and Esc twice
//! (within a second) or Ctrl-C aborts the turn: the stream's abort
//! (`turn_end` with stop reason `aborted`), then the partial message.
//! Keys are read from the terminal (`/dev/tty` when the stream comes from
//! standard input), only when a terminal shows the render or the spinner.

use std::io::{self, IsTerminal, Read};
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use ssefold::providers::{Provider, Stream, StreamConfig, StreamError, StreamEvent};

use crate::exit;
use crate::interactive::{self, EscAction, EscGate, Spinner};
use crate::keys::{self, Key, Keys};
use crate::render::{Fd, Layout, Renderer};
use crate::warnings::Warnings;

/// How often the terminal is refreshed while the stream is quiet.
const TICK: Duration = Duration::from_millis(40);

/// What `fold` is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The dialect (or auto-detection).
    pub provider: Provider,
    /// Events as JSON Lines, then the message.
    pub jsonl: bool,
    /// The live render (off with `--no-render`).
    pub render: bool,
    /// The stream's limits (the `--max-…` flags).
    pub config: StreamConfig,
}

/// Where the stream comes from.
pub enum Input {
    /// Standard input.
    Stdin,
    /// Any other reader (a file, the demo).
    Reader(Box<dyn Read + Send>),
}

/// Folds everything `input` yields as one stream; see the module docs.
pub fn run(input: Input, opts: Options) -> ExitCode {
    let stdin_is_data_tty = matches!(input, Input::Stdin) && io::stdin().is_terminal();
    let reader: Box<dyn Read + Send> = match input {
        Input::Stdin => Box::new(io::stdin()),
        Input::Reader(r) => r,
    };
    let (stdout_tty, stderr_tty) = (io::stdout().is_terminal(), io::stderr().is_terminal());
    let render = match (opts.jsonl || !opts.render, stdout_tty) {
        (true, _) => None,
        (false, true) => Some(Fd::Stdout),
        (false, false) => Some(Fd::Stderr),
    };
    let width = if stdout_tty || stderr_tty { keys::width() } else { 80 };
    let layout = Layout { render, stdout_tty, stderr_tty, width };
    let stdout = Box::new(io::BufWriter::new(io::stdout()));
    let stderr = Box::new(io::BufWriter::new(io::stderr()));
    let mut r = Renderer::new(stdout, stderr, layout);
    // The spinner and the keys share the terminal only when the stream is
    // not typed on it.
    let interactive = layout.status_fd().is_some() && !stdin_is_data_tty;
    let mut keys = if interactive { Keys::enable() } else { None };
    r.set_raw(keys.is_some());

    let outcome = fold_loop(reader, &opts, &mut r, keys.as_mut(), interactive);
    drop(keys);
    r.set_raw(false);
    finish(r, &opts, outcome)
}

/// How the loop ended.
struct Outcome {
    stream: Stream,
    result: Result<(), StreamError>,
    aborted: bool,
    warnings: Warnings,
    /// An error writing the output, or reading the input (`read: …`).
    io: Option<(io::Error, &'static str)>,
}

fn fold_loop(
    mut reader: Box<dyn Read + Send>,
    opts: &Options,
    r: &mut Renderer,
    mut keys: Option<&mut Keys>,
    interactive: bool,
) -> Outcome {
    // The input is read on its own thread, so the spinner turns and keys
    // are seen while a read blocks; two chunks in flight bound the memory.
    let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(2);
    std::thread::spawn(move || loop {
        let mut buf = vec![0u8; 64 << 10];
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                buf.truncate(n);
                if tx.send(Ok(buf)).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Err(e));
                break;
            }
        }
    });

    let start = Instant::now();
    let now = || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut spinner = Spinner::new(now());
    let mut esc = EscGate::default();
    let mut o = Outcome {
        stream: Stream::with_config(opts.provider, opts.config.clone()),
        result: Ok(()),
        aborted: false,
        warnings: Warnings::default(),
        io: None,
    };
    let mut ended = false;
    while !ended {
        let chunk = if interactive {
            match rx.recv_timeout(TICK) {
                Ok(c) => Some(c),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match rx.recv() {
                Ok(c) => Some(c),
                Err(_) => break,
            }
        };
        for key in keys.as_deref_mut().map(Keys::pressed).unwrap_or_default() {
            o.aborted |= key == Key::Interrupt || esc.press(now()) == EscAction::Abort;
        }
        if o.aborted {
            let Outcome { stream, warnings, io, .. } = &mut o;
            stream.abort(|e| on_event(r, warnings, opts.jsonl, e, io));
            break;
        }
        match chunk {
            Some(Ok(bytes)) => {
                spinner.activity(now());
                let Outcome { stream, warnings, io, .. } = &mut o;
                o.result = stream.feed(&bytes, |e| on_event(r, warnings, opts.jsonl, e, io));
                ended = o.result.is_err();
            }
            Some(Err(e)) => {
                o.io = Some((e, "read"));
                break;
            }
            None => {}
        }
        let flushed = match interactive {
            true => r.refresh(interactive::status(&spinner, &esc, now())),
            false => r.flush(),
        };
        if let Err(e) = flushed {
            o.io.get_or_insert((e, "write"));
        }
        ended |= o.io.is_some();
    }
    if !o.aborted && o.result.is_ok() && o.io.is_none() {
        let Outcome { stream, warnings, io, .. } = &mut o;
        o.result = stream.finish(|e| on_event(r, warnings, opts.jsonl, e, io));
    }
    o
}

/// One normalized event: warnings and errors to standard error, then the
/// render or its JSON line. A write error is kept in `io` and stops writing.
fn on_event(
    r: &mut Renderer,
    warnings: &mut Warnings,
    jsonl: bool,
    e: &StreamEvent<'_>,
    io: &mut Option<(io::Error, &'static str)>,
) {
    if io.is_some() {
        return;
    }
    let result = (|| {
        match *e {
            StreamEvent::Warning { code, message } if warnings.note(code.name()) => {
                r.note(&format!("ssefold fold: warning {code}: {message}"))?
            }
            StreamEvent::Unknown { scope, provider_type, .. } if warnings.note("unknown") => {
                r.note(&format!("ssefold fold: warning unknown: {scope} {provider_type:?} passed through"))?
            }
            StreamEvent::Error { error } => {
                r.note(&format!("ssefold fold: provider error {}: {}", error.error_type, error.message))?
            }
            _ => {}
        }
        if jsonl {
            r.stdout_line(&e.to_json().to_string())
        } else {
            r.event(e)
        }
    })();
    if let Err(err) = result {
        *io = Some((err, "write"));
    }
}

/// The end: the render closed, the warning counts, the message, the exit
/// status.
fn finish(mut r: Renderer, opts: &Options, o: Outcome) -> ExitCode {
    let mut written = r.finish();
    for line in o.warnings.summary() {
        written = written.and_then(|()| r.note(&format!("ssefold fold: warning {line}")));
    }
    if let Some((e, what)) = o.io {
        return io_failure(&mut r, &e, what);
    }
    if let Err(e) = written {
        return io_failure(&mut r, &e, "write");
    }
    if let Err(e @ (StreamError::DialectMismatch { .. } | StreamError::UnknownDialect)) = &o.result {
        // Nothing was folded: no message, only what to do about it.
        let _ = r.note(&format!("ssefold fold: {e}; try --provider auto"));
        return ExitCode::from(exit::FAILURE);
    }
    let message = o.stream.message_view();
    let printed = if opts.jsonl {
        r.stdout_line(&serde_json::to_string(&message).unwrap_or_default())
    } else {
        r.stdout_line(&serde_json::to_string_pretty(&message).unwrap_or_default())
    };
    if let Err(e) = printed.and_then(|()| r.flush()) {
        return io_failure(&mut r, &e, "write");
    }
    if o.aborted {
        let _ = r.note("ssefold fold: aborted");
        return ExitCode::from(exit::CANCELLED);
    }
    match o.result {
        Ok(()) => ExitCode::SUCCESS,
        Err(StreamError::Incomplete { expected }) => {
            let _ = r.note(&format!("ssefold fold: the stream ended before {expected}"));
            ExitCode::from(exit::TRUNCATED)
        }
        // Reported by its `error` event.
        Err(StreamError::Provider(_)) => ExitCode::from(exit::FAILURE),
        Err(e) => {
            let _ = r.note(&format!("ssefold fold: {e}"));
            ExitCode::from(exit::FAILURE)
        }
    }
}

fn io_failure(r: &mut Renderer, e: &io::Error, what: &str) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return ExitCode::SUCCESS;
    }
    let _ = r.note(&format!("ssefold fold: {what}: {e}"));
    ExitCode::from(exit::FAILURE)
}
