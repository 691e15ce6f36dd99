//! Newline-delimited JSON framing (Ollama's native API): one JSON document
//! per line.
//!
//! The line rules are the table "Framing" of the [`ollama`](super::ollama)
//! module docs.
//!
//! Guarantees: the lines handed out do not depend on how the bytes are
//! chunked; a line longer than the limit is an error, never unbounded
//! memory.

use super::{warn, Sink, StreamError, StreamLimit, WarningCode};
use crate::sse::Event;

/// The UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Splits bytes into lines, buffering only an unfinished line.
#[derive(Debug)]
pub(crate) struct Lines {
    pending: Vec<u8>,
    /// At the body's start: how many BOM bytes were matched so far; `None`
    /// once the BOM question is settled.
    bom: Option<u8>,
}

impl Default for Lines {
    fn default() -> Self {
        Lines { pending: Vec::new(), bom: Some(0) }
    }
}

impl Lines {
    /// Calls `each` with every complete, non-blank line of `chunk` (after
    /// what earlier chunks left unfinished), its line end removed. A line
    /// longer than `max` bytes: [`StreamError::LimitExceeded`]
    /// `max_line_len`.
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        max: usize,
        each: &mut dyn FnMut(&str) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let too_long = || StreamError::LimitExceeded { limit: StreamLimit::MaxLineLen, max };
        let mut rest = chunk;
        if self.bom.is_some() {
            let Some(after) = self.strip_bom(rest) else { return Ok(()) };
            rest = after;
        }
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            let line = &rest[..nl];
            rest = &rest[nl + 1..];
            if self.pending.is_empty() {
                if line.len() > max + 1 {
                    return Err(too_long());
                }
                emit(line, max, each)?;
            } else {
                if self.pending.len() + line.len() > max + 1 {
                    return Err(too_long());
                }
                let mut whole = std::mem::take(&mut self.pending);
                whole.extend_from_slice(line);
                let r = emit(&whole, max, each);
                whole.clear();
                self.pending = whole;
                r?;
            }
        }
        if self.pending.len() + rest.len() > max + 1 {
            return Err(too_long());
        }
        self.pending.extend_from_slice(rest);
        Ok(())
    }

    /// Consumes the BOM bytes at the start of `chunk` (the body's start):
    /// the rest of the chunk, or `None` when the chunk ran out while the BOM
    /// could still be complete. Bytes that turn out not to be a BOM start
    /// the first line.
    fn strip_bom<'c>(&mut self, chunk: &'c [u8]) -> Option<&'c [u8]> {
        let mut matched = self.bom.unwrap_or(0) as usize;
        let mut at = 0;
        while matched < BOM.len() && at < chunk.len() && chunk[at] == BOM[matched] {
            matched += 1;
            at += 1;
        }
        if matched < BOM.len() && at == chunk.len() {
            self.bom = Some(matched as u8);
            return None;
        }
        self.bom = None;
        if matched < BOM.len() {
            self.pending.extend_from_slice(&BOM[..matched]);
        }
        Some(&chunk[at..])
    }

    /// The unfinished last line (no line end came), if it is not blank;
    /// the buffer is emptied.
    pub(crate) fn finish(&mut self) -> Option<String> {
        let mut line = std::mem::take(&mut self.pending);
        if let Some(matched) = self.bom.take() {
            // The body was the start of a BOM and nothing else.
            line.extend_from_slice(&BOM[..matched as usize]);
        }
        let text = String::from_utf8_lossy(strip_cr(&line)).into_owned();
        (!text.trim().is_empty()).then_some(text)
    }

    /// Forgets an unfinished line (a dropped connection): the next body
    /// starts afresh (its BOM stripped).
    pub(crate) fn reset(&mut self) {
        self.pending.clear();
        self.bom = Some(0);
    }

    /// Bytes held.
    pub(crate) fn footprint(&self) -> usize {
        self.pending.capacity()
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn emit(line: &[u8], max: usize, each: &mut dyn FnMut(&str) -> Result<(), StreamError>) -> Result<(), StreamError> {
    let line = strip_cr(line);
    if line.len() > max {
        return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxLineLen, max });
    }
    // Valid UTF-8 (the usual case) checked in one SIMD pass, borrowed.
    let text = match simdutf8::basic::from_utf8(line) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(line),
    };
    // A line that starts with a visible ASCII byte (`{`: every JSON line)
    // is not blank; only the others are trimmed to tell.
    let visible = text.as_bytes().first().is_some_and(|&b| b.is_ascii() && !char::from(b).is_whitespace());
    if !visible && text.trim().is_empty() {
        return Ok(());
    }
    each(&text)
}

/// [`StreamError::InvalidJson`] of a line that holds a CR before its last
/// non-blank byte: the message says that a lone CR is not a line end (a
/// body with CR-only line ends reaches the parser as one line).
pub(crate) fn explain_lone_cr(error: StreamError, line: &str) -> StreamError {
    match error {
        StreamError::InvalidJson { event_type, mut message } if has_inner_cr(line) => {
            message.push_str(
                " (the line holds a CR that is not part of a CRLF: NDJSON lines end with \\n or \\r\\n, a lone CR is not a line end)",
            );
            StreamError::InvalidJson { event_type, message }
        }
        other => other,
    }
}

/// Whether `line` holds a `\r` followed by something other than blanks.
fn has_inner_cr(line: &str) -> bool {
    line.trim_end().contains('\r')
}

/// The last line of the body, which lacked its line end, at `finish` (see
/// the module docs): complete JSON is handed to `each`, JSON cut short
/// discarded, anything else handed on to be refused as any line is.
pub(crate) fn finish_line(
    line: &str,
    sink: &mut Sink<'_>,
    each: &mut dyn FnMut(&Event<'_>, &mut Sink<'_>) -> Result<(), StreamError>,
) -> Result<(), StreamError> {
    let event = Event::new("line", line, None, None);
    match LastLine::of(line) {
        LastLine::Truncated => {
            warn(
                sink,
                WarningCode::TruncatedFinalEvent,
                "the last line had no line end and its JSON is cut short; discarded",
            );
            Ok(())
        }
        LastLine::Complete => {
            warn(
                sink,
                WarningCode::UnterminatedFinalEvent,
                "the last line had no line end; applied (it is complete JSON)",
            );
            each(&event, sink)
        }
        LastLine::Invalid => each(&event, sink),
    }
}

/// What the last line is.
enum LastLine {
    /// Complete JSON: applied (warning `unterminated_final_event`).
    Complete,
    /// The parser ran out of input: discarded (warning
    /// `truncated_final_event`).
    Truncated,
    /// Not JSON: handed to the dialect, which refuses it as any line.
    Invalid,
}

impl LastLine {
    fn of(line: &str) -> LastLine {
        match serde_json::from_str::<serde::de::IgnoredAny>(line) {
            Ok(_) => LastLine::Complete,
            Err(e) if e.is_eof() => LastLine::Truncated,
            // Lone surrogate escapes, which the dialects read as U+FFFD.
            Err(_) => match super::view::replace_lone_surrogates(line) {
                Some((fixed, _)) if serde_json::from_str::<serde::de::IgnoredAny>(&fixed).is_ok() => LastLine::Complete,
                _ => LastLine::Invalid,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]], max: usize) -> (Vec<String>, Option<String>, Option<StreamError>) {
        let mut l = Lines::default();
        let mut out = Vec::new();
        for c in chunks {
            if let Err(e) = l.feed(c, max, &mut |s| {
                out.push(s.to_owned());
                Ok(())
            }) {
                return (out, None, Some(e));
            }
        }
        (out, l.finish(), None)
    }

    #[test]
    fn any_split_gives_the_same_lines() {
        let body = b"{\"a\":1}\r\n\n  \n{\"b\":\"\xc3\xa9\"}\n{\"c\"";
        let whole = lines(&[body], 64);
        assert_eq!(whole.0, ["{\"a\":1}", "{\"b\":\"\u{e9}\"}"]);
        assert_eq!(whole.1.as_deref(), Some("{\"c\""));
        for at in 0..body.len() {
            assert_eq!(lines(&[&body[..at], &body[at..]], 64), whole, "split at {at}");
        }
    }

    #[test]
    fn long_lines_are_refused_in_any_split() {
        let body = b"{\"a\":\"0123456789\"}\n";
        for at in 0..body.len() {
            let (_, _, e) = lines(&[&body[..at], &body[at..]], 8);
            assert_eq!(e, Some(StreamError::LimitExceeded { limit: StreamLimit::MaxLineLen, max: 8 }), "split at {at}");
        }
        assert_eq!(lines(&[b"12345678\r\n"], 8).0, ["12345678"]);
    }

    #[test]
    fn a_leading_bom_is_stripped_in_any_split_and_only_at_the_start() {
        let body = b"\xef\xbb\xbf{\"a\":1}\n\xef\xbb\xbf{\"b\":2}\n";
        let whole = lines(&[body], 64);
        assert_eq!(whole.0, ["{\"a\":1}", "\u{feff}{\"b\":2}"]);
        for at in 0..body.len() {
            assert_eq!(lines(&[&body[..at], &body[at..]], 64), whole, "split at {at}");
        }
        assert_eq!(lines(&body.chunks(1).collect::<Vec<_>>(), 64), whole);
        // Not a BOM after all: its bytes start the first line.
        for body in [&b"\xef\xbb{}\n"[..], b"\xef{}\n", b"\xef\xbb"] {
            let whole = lines(&[body], 64);
            assert_eq!(whole.0.len() + whole.1.iter().count(), 1, "{body:?}: {whole:?}");
            assert!(whole.0.iter().chain(&whole.1).all(|l| l.starts_with('\u{fffd}')), "{whole:?}");
            for at in 0..body.len() {
                assert_eq!(lines(&[&body[..at], &body[at..]], 64), whole, "split at {at}");
            }
        }
        // A reconnection's body has its own BOM.
        let mut l = Lines::default();
        let mut out = Vec::new();
        let mut each = |s: &str| {
            out.push(s.to_owned());
            Ok(())
        };
        l.feed(b"\xef\xbb\xbf{}\n{\"cut", 64, &mut each).unwrap();
        l.reset();
        l.feed(b"\xef\xbb\xbf{\"b\":1}\n", 64, &mut each).unwrap();
        assert_eq!(out, ["{}", "{\"b\":1}"]);
    }

    #[test]
    fn a_lone_cr_is_not_a_line_end() {
        let body = b"{\"a\":1}\r{\"b\":2}\r\n{\"c\":3}\r";
        let whole = lines(&[body], 64);
        assert_eq!(whole.0, ["{\"a\":1}\r{\"b\":2}"]);
        assert_eq!(whole.1.as_deref(), Some("{\"c\":3}"));
        for at in 0..body.len() {
            assert_eq!(lines(&[&body[..at], &body[at..]], 64), whole, "split at {at}");
        }
        let error = StreamError::InvalidJson { event_type: "line".into(), message: "trailing characters".into() };
        let StreamError::InvalidJson { message, .. } = explain_lone_cr(error.clone(), &whole.0[0]) else { panic!() };
        assert!(message.starts_with("trailing characters (the line holds a CR"), "{message}");
        assert_eq!(explain_lone_cr(error.clone(), "{\"a\":1} \r"), error);
    }

    #[test]
    fn the_last_line_is_complete_cut_or_invalid() {
        assert!(matches!(LastLine::of("{\"a\":1}"), LastLine::Complete));
        assert!(matches!(LastLine::of("{\"a\":"), LastLine::Truncated));
        assert!(matches!(LastLine::of("{\"a\":1}\r{\"b\":2}"), LastLine::Invalid));
        assert!(matches!(LastLine::of("hello"), LastLine::Invalid));
        assert!(matches!(LastLine::of("{\"a\":\"\\ud800\"}"), LastLine::Complete));
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(lines(&[b"{\"a\":\"\xff\"}\n"], 64).0, ["{\"a\":\"\u{fffd}\"}"]);
    }
}
