//! The SSE encoder: the server side of the event stream.
//!
//! Writes `event`, `data`, `id` and `retry` fields, comments and
//! keep-alives. Embedded line breaks of any kind (CR, LF, CRLF) in data
//! become several `data:` lines, and in comments several comment lines. A CR
//! or LF in an event name or id could inject a field, so it is refused with
//! [`EncodeError::LineBreak`]; an id with NUL would be ignored by every
//! decoder, so it is refused too.
//!
//! Guarantee: decoding what was encoded gives the same events back, with
//! data line breaks normalized to LF, an empty event name read as
//! `"message"`, and each event's id being the last id in force.

use super::event::Event;

/// Why an event could not be encoded. Nothing is written when it fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A CR or LF in a field that must be one line.
    #[error("the SSE {field} must not contain CR or LF")]
    LineBreak {
        /// `"event"` or `"id"`.
        field: &'static str,
    },
    /// A NUL in an id: decoders ignore such ids.
    #[error("the SSE id must not contain NUL")]
    NulInId,
}

impl EncodeError {
    /// The field the error is about: `"event"` or `"id"`.
    pub fn field(&self) -> &'static str {
        match self {
            EncodeError::LineBreak { field } => field,
            EncodeError::NulInId => "id",
        }
    }
}

/// Writes events into a byte buffer that is reused.
///
/// ```
/// use ssefold::sse::Encoder;
///
/// let mut enc = Encoder::new();
/// enc.event(Some("delta"), "a\nb", Some("1"), None).unwrap();
/// assert_eq!(enc.as_bytes(), b"event: delta\nid: 1\ndata: a\ndata: b\n\n");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Encoder {
    out: Vec<u8>,
}

impl Encoder {
    /// An encoder with an empty buffer.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// Appends one event: `event` (when given), `id` (when given; `Some("")`
    /// resets the last event ID), `retry` (when given), the data lines, and
    /// the blank line that dispatches it.
    ///
    /// # Errors
    /// [`EncodeError`] when `event` or `id` holds a line break, or `id` a
    /// NUL; nothing is written then.
    pub fn event(
        &mut self,
        event: Option<&str>,
        data: &str,
        id: Option<&str>,
        retry: Option<u64>,
    ) -> Result<(), EncodeError> {
        if event.is_some_and(has_line_break) {
            return Err(EncodeError::LineBreak { field: "event" });
        }
        if let Some(id) = id {
            if has_line_break(id) {
                return Err(EncodeError::LineBreak { field: "id" });
            }
            if id.contains('\0') {
                return Err(EncodeError::NulInId);
            }
        }
        if let Some(event) = event {
            self.field("event", event);
        }
        if let Some(id) = id {
            self.field("id", id);
        }
        if let Some(ms) = retry {
            self.field("retry", itoa_u64(ms, &mut [0; 20]));
        }
        for line in split_lines(data) {
            self.field("data", line);
        }
        self.out.push(b'\n');
        Ok(())
    }

    /// Appends a decoded [`Event`] again (its event type and id as given).
    ///
    /// # Errors
    /// As [`event`](Self::event).
    pub fn write_event(&mut self, e: &Event<'_>) -> Result<(), EncodeError> {
        self.event(Some(e.event()), e.data(), e.id(), e.retry())
    }

    /// Appends a standalone `retry` field (a block with no data dispatches
    /// nothing but sets the client's reconnection time).
    pub fn retry(&mut self, ms: u64) {
        self.field("retry", itoa_u64(ms, &mut [0; 20]));
        self.out.push(b'\n');
    }

    /// Appends a comment, one `:` line per line of `text`. Comments are
    /// ignored by decoders; use them for keep-alives and notes.
    pub fn comment(&mut self, text: &str) {
        for line in split_lines(text) {
            self.out.push(b':');
            if !line.is_empty() {
                self.out.push(b' ');
                self.out.extend_from_slice(line.as_bytes());
            }
            self.out.push(b'\n');
        }
    }

    /// Appends a keep-alive: an empty comment line (`:\n`), which keeps the
    /// connection live without dispatching anything.
    pub fn keep_alive(&mut self) {
        self.out.extend_from_slice(b":\n");
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.out
    }

    /// Takes the bytes written so far, leaving the encoder empty.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.out)
    }

    /// Forgets the bytes written so far, keeping the buffer's capacity.
    pub fn clear(&mut self) {
        self.out.clear();
    }

    fn field(&mut self, name: &str, value: &str) {
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b':');
        if !value.is_empty() {
            self.out.push(b' ');
            self.out.extend_from_slice(value.as_bytes());
        }
        self.out.push(b'\n');
    }
}

fn has_line_break(s: &str) -> bool {
    memchr::memchr2(b'\n', b'\r', s.as_bytes()).is_some()
}

/// The lines of `s`, split at CR, LF and CRLF. An empty `s` is one empty
/// line; a trailing line break gives a trailing empty line.
fn split_lines(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    core::iter::from_fn(move || {
        let s = rest?;
        match memchr::memchr2(b'\n', b'\r', s.as_bytes()) {
            None => {
                rest = None;
                Some(s)
            }
            Some(i) => {
                let skip = if s[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&s[i + skip..]);
                Some(&s[..i])
            }
        }
    })
}

/// Formats `n` in decimal into `buf`.
fn itoa_u64(mut n: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    core::str::from_utf8(&buf[i..]).unwrap_or("0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_line_breaks_of_any_kind_become_data_lines() {
        let mut e = Encoder::new();
        e.event(None, "a\r\nb\rc\nd", None, None).unwrap();
        assert_eq!(e.as_bytes(), b"data: a\ndata: b\ndata: c\ndata: d\n\n");
        e.clear();
        e.event(None, "", None, None).unwrap();
        assert_eq!(e.as_bytes(), b"data:\n\n");
        e.clear();
        e.event(None, " x\n", None, Some(1500)).unwrap();
        assert_eq!(e.as_bytes(), b"retry: 1500\ndata:  x\ndata:\n\n");
    }

    #[test]
    fn injection_is_refused_and_nothing_written() {
        let mut e = Encoder::new();
        assert_eq!(e.event(Some("a\ndata: x"), "d", None, None), Err(EncodeError::LineBreak { field: "event" }));
        assert_eq!(e.event(None, "d", Some("1\r"), None), Err(EncodeError::LineBreak { field: "id" }));
        assert_eq!(e.event(None, "d", Some("1\0"), None), Err(EncodeError::NulInId));
        assert!(e.as_bytes().is_empty());
    }

    #[test]
    fn comments_and_keep_alives() {
        let mut e = Encoder::new();
        e.comment("hi\nthere");
        e.keep_alive();
        e.retry(0);
        assert_eq!(e.as_bytes(), b": hi\n: there\n:\nretry: 0\n\n");
        assert_eq!(itoa_u64(u64::MAX, &mut [0; 20]), "18446744073709551615");
    }
}
