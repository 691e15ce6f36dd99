//! Writing one SSE frame into a reused buffer: `id:`, optional `event:`, one
//! `data:` line of JSON, blank line. JSON text never holds a raw CR or LF
//! (serde_json escapes control characters), so no text a model or a tool
//! produced can end a line, start a field or inject an event.

use serde::Serialize;

/// A JSON object being written into a frame's `data:` line.
pub(crate) struct JsonObject<'b> {
    buf: &'b mut Vec<u8>,
    first: bool,
}

impl<'b> JsonObject<'b> {
    /// Starts `{`.
    pub(crate) fn new(buf: &'b mut Vec<u8>) -> Self {
        buf.push(b'{');
        JsonObject { buf, first: true }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// A member with a string value (escaped).
    pub(crate) fn str(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        // Writing a &str into a Vec<u8> cannot fail.
        let _ = serde_json::to_writer(&mut *self.buf, value);
        self
    }

    /// A member whose value is a constant known to need no escaping (an
    /// event type name), written as it is.
    pub(crate) fn constant(&mut self, key: &str, value: &'static str) -> &mut Self {
        debug_assert!(value.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\'));
        self.key(key);
        self.buf.push(b'"');
        self.buf.extend_from_slice(value.as_bytes());
        self.buf.push(b'"');
        self
    }

    /// A member whose value is a string of known-safe ASCII bytes (ids the
    /// relay makes), written as it is.
    pub(crate) fn ascii(&mut self, key: &str, value: &[u8]) -> &mut Self {
        debug_assert!(value.iter().all(|b| b.is_ascii_graphic() && *b != b'"' && *b != b'\\'));
        self.key(key);
        self.buf.push(b'"');
        self.buf.extend_from_slice(value);
        self.buf.push(b'"');
        self
    }

    /// A member with any serializable value (a number, a bool, a `Value`).
    pub(crate) fn value<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> &mut Self {
        self.key(key);
        if serde_json::to_writer(&mut *self.buf, value).is_err() {
            self.buf.extend_from_slice(b"null");
        }
        self
    }

    /// A member whose value is JSON text known to be valid (arguments that
    /// the fold validated), copied as it is.
    pub(crate) fn raw(&mut self, key: &str, json: &str) -> &mut Self {
        self.key(key);
        self.buf.extend_from_slice(json.as_bytes());
        self
    }

    /// Ends `}`.
    pub(crate) fn end(&mut self) {
        self.buf.push(b'}');
    }
}

/// Writes the head of a frame: `id: N\n`, `event: NAME\n` when given, then
/// `data: `. The caller writes the JSON and calls [`end_frame`].
pub(crate) fn begin_frame(buf: &mut Vec<u8>, id: u64, event: Option<&str>) {
    let mut digits = [0u8; 20];
    let len = write_decimal(id, &mut digits);
    buf.extend_from_slice(b"id: ");
    buf.extend_from_slice(&digits[..len]);
    buf.push(b'\n');
    if let Some(event) = event {
        buf.extend_from_slice(b"event: ");
        buf.extend_from_slice(event.as_bytes());
        buf.push(b'\n');
    }
    buf.extend_from_slice(b"data: ");
}

/// Ends a frame's data line and the event.
pub(crate) fn end_frame(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"\n\n");
}

/// Writes `n` in decimal at the start of `out` (room for 20 digits);
/// returns the number of digits.
pub(crate) fn write_decimal(mut n: u64, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = digits.len() - i;
    out[..len].copy_from_slice(&digits[i..]);
    len
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimals() {
        let mut out = [0u8; 20];
        for n in [0u64, 7, 10, 99, 12345, u64::MAX] {
            let len = super::write_decimal(n, &mut out);
            assert_eq!(std::str::from_utf8(&out[..len]).unwrap(), n.to_string());
        }
    }
}
