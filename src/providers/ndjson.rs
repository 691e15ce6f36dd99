//! Newline-delimited JSON framing (Ollama's native API): one JSON document
//! per line, `\n` or `\r\n` ended, blank lines skipped.
//!
//! Guarantees: the lines handed out do not depend on how the bytes are
//! chunked; a line longer than the limit is an error, never unbounded
//! memory; invalid UTF-8 is replaced by U+FFFD (the SSE decoder's default).

use super::{StreamError, StreamLimit};

/// Splits bytes into lines, buffering only an unfinished line.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    pending: Vec<u8>,
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

    /// The unfinished last line (no line end came), if it is not blank;
    /// the buffer is emptied.
    pub(crate) fn finish(&mut self) -> Option<String> {
        let line = std::mem::take(&mut self.pending);
        let text = String::from_utf8_lossy(strip_cr(&line)).into_owned();
        (!text.trim().is_empty()).then_some(text)
    }

    /// Forgets an unfinished line (a dropped connection).
    pub(crate) fn reset(&mut self) {
        self.pending.clear();
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
    if text.trim().is_empty() {
        return Ok(());
    }
    each(&text)
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
    fn invalid_utf8_is_replaced() {
        assert_eq!(lines(&[b"{\"a\":\"\xff\"}\n"], 64).0, ["{\"a\":\"\u{fffd}\"}"]);
    }
}
