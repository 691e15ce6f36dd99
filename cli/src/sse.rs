//! `ssefold sse`: raw SSE events as JSON Lines.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use ssefold::sse::{Decoder, DecoderConfig, Event};

use crate::exit;
use crate::render::json_printable;

/// One output line, exactly `{"event", "data", "id", "retry"}` in that order.
#[derive(Serialize)]
struct EventLine<'a> {
    event: &'a str,
    data: &'a str,
    id: Option<&'a str>,
    retry: Option<u64>,
}

impl<'a> From<&Event<'a>> for EventLine<'a> {
    fn from(e: &Event<'a>) -> Self {
        EventLine { event: e.event(), data: e.data(), id: e.id(), retry: e.retry() }
    }
}

/// Decodes chunks into JSON lines, flushing after every chunk so that live
/// input (`curl -N … | ssefold sse`) shows each event as it is dispatched.
struct JsonLines<W: Write> {
    decoder: Decoder,
    out: W,
    /// The JSON of one event (reused).
    line: Vec<u8>,
    decode_errors: usize,
}

impl<W: Write> JsonLines<W> {
    fn chunk(&mut self, chunk: &[u8]) -> io::Result<()> {
        let mut events = self.decoder.feed(chunk);
        while let Some(item) = events.next_event() {
            match item {
                Ok(e) => {
                    // C1 controls and DEL as `\u00XX` (the same JSON): nothing a terminal runs.
                    self.line.clear();
                    serde_json::to_writer(&mut self.line, &EventLine::from(&e))?;
                    let line = std::str::from_utf8(&self.line).map_err(io::Error::other)?;
                    self.out.write_all(json_printable(line).as_bytes())?;
                    self.out.write_all(b"\n")?;
                }
                Err(err) => {
                    self.decode_errors += 1;
                    eprintln!("ssefold sse: {err}");
                }
            }
        }
        self.out.flush()
    }

    fn finish(mut self) -> ExitCode {
        let end = self.decoder.finish();
        if let Err(e) = self.out.flush() {
            return io_error(&e);
        }
        if self.decode_errors > 0 {
            return ExitCode::from(exit::FAILURE);
        }
        if end.discarded_bytes > 0 {
            let what =
                if end.unterminated.is_some() { "an unterminated event" } else { "an unfinished line or comment" };
            eprintln!(
                "ssefold sse: the stream ended inside {what}: {} bytes discarded (no blank line dispatched it)",
                end.discarded_bytes
            );
            return ExitCode::from(exit::TRUNCATED);
        }
        ExitCode::SUCCESS
    }
}

fn io_error(e: &io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return ExitCode::SUCCESS;
    }
    eprintln!("ssefold sse: {e}");
    ExitCode::from(exit::FAILURE)
}

/// `ssefold sse [FILE|-]`.
pub fn run(path: Option<PathBuf>, config: DecoderConfig) -> ExitCode {
    let mut input: Box<dyn Read> = match path {
        Some(p) if p.as_os_str() != "-" => match File::open(&p) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("ssefold sse: {}: {e}", p.display());
                return ExitCode::from(exit::FAILURE);
            }
        },
        _ => Box::new(io::stdin().lock()),
    };
    let mut sink = JsonLines {
        decoder: Decoder::with_config(config),
        out: io::stdout().lock(),
        line: Vec::new(),
        decode_errors: 0,
    };
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return io_error(&e),
        };
        if let Err(e) = sink.chunk(&buf[..n]) {
            return io_error(&e);
        }
    }
    sink.finish()
}
