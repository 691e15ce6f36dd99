//! Writing one SSE frame into a reused buffer: `id:`, optional `event:`, one
//! `data:` line of JSON, blank line. JSON text never holds a raw CR or LF
//! (strings are escaped here as serde_json escapes them: every control
//! character), so no text a model or a tool produced can end a line, start
//! a field or inject an event.

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
        self.buf.extend_from_slice(if self.first { b"\"" } else { b",\"" });
        self.first = false;
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// A member with a string value (escaped).
    pub(crate) fn str(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        write_json_str(self.buf, value);
        self
    }

    /// A member whose value is an object written by `fill`.
    pub(crate) fn object(&mut self, key: &str, fill: impl FnOnce(&mut JsonObject<'_>)) -> &mut Self {
        self.key(key);
        let mut inner = JsonObject::new(self.buf);
        fill(&mut inner);
        inner.end();
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

    /// A member with a JSON value, written as serde_json writes it
    /// (compact, members in order) with this module's string escape.
    pub(crate) fn json(&mut self, key: &str, value: &serde_json::Value) -> &mut Self {
        self.key(key);
        write_json_value(self.buf, value);
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
    pub(crate) fn raw(&mut self, key: &str, json: &[u8]) -> &mut Self {
        self.key(key);
        self.buf.extend_from_slice(json);
        self
    }

    /// Ends `}`.
    pub(crate) fn end(&mut self) {
        self.buf.push(b'}');
    }
}

/// Bytes with each of these set: the words of the escape scan.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The bytes of `word` (little-endian) that need escaping in a JSON
/// string, a control character (below 0x20), `"` or `\\`, flagged by their
/// high bit. Exact up to the first flagged byte (a borrow only carries
/// upwards), so `trailing_zeros / 8` is the first such byte.
fn escape_mask(word: u64) -> u64 {
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    below_space | zero_bytes(word ^ (ONES * u64::from(b'"'))) | zero_bytes(word ^ (ONES * u64::from(b'\\')))
}

fn byte_needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Writes `value` as a JSON string, escaped exactly as serde_json escapes
/// (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as
/// `\u00XX`, everything else as it is). The next byte to escape is found
/// eight bytes at a time, and the plain text before it copied as one run.
pub(crate) fn write_json_str(buf: &mut Vec<u8>, value: &str) {
    buf.reserve(value.len() + 2);
    buf.push(b'"');
    write_json_str_contents(buf, value);
    buf.push(b'"');
}

/// [`write_json_str`] without the quotes: the escaped contents (escaping is
/// per character, so the contents of a concatenation are the
/// concatenation of the contents).
pub(crate) fn write_json_str_contents(buf: &mut Vec<u8>, value: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = value.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    loop {
        // The next byte to escape, or the end.
        loop {
            match bytes.get(i..i + 8) {
                Some(word) => {
                    let mask = escape_mask(u64::from_le_bytes(word.try_into().unwrap_or([0; 8])));
                    if mask != 0 {
                        i += (mask.trailing_zeros() / 8) as usize;
                        break;
                    }
                    i += 8;
                }
                None => {
                    while i < bytes.len() && !byte_needs_escape(bytes[i]) {
                        i += 1;
                    }
                    break;
                }
            }
        }
        let Some(&b) = bytes.get(i) else { break };
        buf.extend_from_slice(&bytes[copied..i]);
        match b {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            0x08 => buf.extend_from_slice(b"\\b"),
            0x0c => buf.extend_from_slice(b"\\f"),
            _ => buf.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]),
        }
        i += 1;
        copied = i;
    }
    buf.extend_from_slice(&bytes[copied..]);
}

/// A delta's text for a frame: the text, or the provider's escape of it
/// when that is byte for byte what [`write_json_str`] writes (see
/// `EventSink::escaped`), copied as it is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum DeltaText<'a> {
    /// Text to escape.
    Text(&'a str),
    /// The same text, already escaped as [`write_json_str`] escapes.
    Escaped(&'a str),
}

impl<'a> DeltaText<'a> {
    /// `escaped` when given (the provider's escape of `text`, exactly as
    /// [`write_json_str`] escapes it), else `text`.
    pub(crate) fn new(text: &'a str, escaped: Option<&'a str>) -> Self {
        match escaped {
            Some(escaped) => {
                debug_assert_eq!(
                    {
                        let mut b = Vec::new();
                        write_json_str(&mut b, text);
                        b
                    },
                    [b"\"", escaped.as_bytes(), b"\""].concat(),
                    "an escaped delta must be escaped as write_json_str escapes"
                );
                DeltaText::Escaped(escaped)
            }
            None => DeltaText::Text(text),
        }
    }

    fn len(&self) -> usize {
        match self {
            DeltaText::Text(t) | DeltaText::Escaped(t) => t.len(),
        }
    }

    /// Appends the escaped contents (no quotes) to `buf`.
    pub(crate) fn write_contents(&self, buf: &mut Vec<u8>) {
        match self {
            DeltaText::Text(text) => write_json_str_contents(buf, text),
            DeltaText::Escaped(escaped) => buf.extend_from_slice(escaped.as_bytes()),
        }
    }

    /// Writes the JSON string.
    fn write(&self, buf: &mut Vec<u8>) {
        match self {
            DeltaText::Text(text) => write_json_str(buf, text),
            DeltaText::Escaped(escaped) => {
                buf.push(b'"');
                buf.extend_from_slice(escaped.as_bytes());
                buf.push(b'"');
            }
        }
    }
}

/// Writes `value` as compact JSON, byte for byte as `serde_json::to_writer`
/// does (strings through [`write_json_str`]).
pub(crate) fn write_json_value(buf: &mut Vec<u8>, value: &serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Null => buf.extend_from_slice(b"null"),
        Value::Bool(true) => buf.extend_from_slice(b"true"),
        Value::Bool(false) => buf.extend_from_slice(b"false"),
        Value::Number(n) => {
            if serde_json::to_writer(&mut *buf, n).is_err() {
                buf.extend_from_slice(b"null");
            }
        }
        Value::String(text) => write_json_str(buf, text),
        Value::Array(items) => {
            buf.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                write_json_value(buf, item);
            }
            buf.push(b']');
        }
        Value::Object(members) => {
            buf.push(b'{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                write_json_str(buf, key);
                buf.push(b':');
                write_json_value(buf, item);
            }
            buf.push(b'}');
        }
    }
}

/// Writes the head of a frame: `id: N\n`, `event: NAME\n` when given, then
/// `data: `. The caller writes the JSON and calls [`end_frame`].
pub(crate) fn begin_frame(buf: &mut Vec<u8>, id: u64, event: Option<&str>) {
    buf.extend_from_slice(b"id: ");
    buf.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
    buf.push(b'\n');
    if let Some(event) = event {
        buf.extend_from_slice(b"event: ");
        buf.extend_from_slice(event.as_bytes());
        buf.push(b'\n');
    }
    buf.extend_from_slice(b"data: ");
}

/// A whole text delta frame of the AI SDK format, the relay's most
/// frequent: `{"type":TYPE,"id":ID,"delta":TEXT}`, as [`JsonObject`] writes
/// it, in a few copies.
pub(crate) fn ai_delta_frame(buf: &mut Vec<u8>, id: u64, chunk_type: &'static str, ui_id: &[u8], text: DeltaText<'_>) {
    buf.reserve(text.len() + 64);
    buf.extend_from_slice(b"id: ");
    buf.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
    buf.extend_from_slice(b"\ndata: {\"type\":\"");
    buf.extend_from_slice(chunk_type.as_bytes());
    buf.extend_from_slice(b"\",\"id\":\"");
    buf.extend_from_slice(ui_id);
    buf.extend_from_slice(b"\",\"delta\":");
    text.write(buf);
    buf.extend_from_slice(b"}\n\n");
}

/// A whole `tool-input-delta` frame of the AI SDK format:
/// `{"type":"tool-input-delta","toolCallId":ID,"inputTextDelta":TEXT}`, as
/// [`JsonObject`] writes it; `call_id_json` is the id already written as a
/// JSON string.
pub(crate) fn ai_args_delta_frame(buf: &mut Vec<u8>, id: u64, call_id_json: &[u8], text: DeltaText<'_>) {
    buf.reserve(text.len() + call_id_json.len() + 80);
    ai_args_delta_head(buf, id, call_id_json);
    text.write(buf);
    buf.extend_from_slice(b"}\n\n");
}

/// [`ai_args_delta_frame`] of text already escaped (`escaped`: the JSON
/// string's contents, as [`write_json_str_contents`] writes them).
pub(crate) fn ai_args_delta_frame_escaped(buf: &mut Vec<u8>, id: u64, call_id_json: &[u8], escaped: &[u8]) {
    buf.reserve(escaped.len() + call_id_json.len() + 80);
    ai_args_delta_head(buf, id, call_id_json);
    buf.push(b'"');
    buf.extend_from_slice(escaped);
    buf.extend_from_slice(b"\"}\n\n");
}

fn ai_args_delta_head(buf: &mut Vec<u8>, id: u64, call_id_json: &[u8]) {
    buf.extend_from_slice(b"id: ");
    buf.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
    buf.extend_from_slice(b"\ndata: {\"type\":\"tool-input-delta\",\"toolCallId\":");
    buf.extend_from_slice(call_id_json);
    buf.extend_from_slice(b",\"inputTextDelta\":");
}

/// A whole delta frame of the catalog format: event `event` (`text-delta`,
/// or `reasoning-delta`) with data `{"delta": TEXT}` (the seed's payload).
pub(crate) fn catalog_delta_frame(buf: &mut Vec<u8>, id: u64, event: &'static str, text: DeltaText<'_>) {
    buf.reserve(text.len() + 48);
    buf.extend_from_slice(b"id: ");
    buf.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
    buf.extend_from_slice(b"\nevent: ");
    buf.extend_from_slice(event.as_bytes());
    buf.extend_from_slice(b"\ndata: {\"delta\":");
    text.write(buf);
    buf.extend_from_slice(b"}\n\n");
}

/// A whole `tool-input-delta` frame of the catalog format (not in the
/// seed): `{"id":ID,"delta":TEXT}`, as [`JsonObject`] writes it;
/// `call_id_json` is the id already written as a JSON string.
pub(crate) fn catalog_args_delta_frame(buf: &mut Vec<u8>, id: u64, call_id_json: &[u8], text: DeltaText<'_>) {
    buf.reserve(text.len() + call_id_json.len() + 64);
    buf.extend_from_slice(b"id: ");
    buf.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
    buf.extend_from_slice(b"\nevent: tool-input-delta\ndata: {\"id\":");
    buf.extend_from_slice(call_id_json);
    buf.extend_from_slice(b",\"delta\":");
    text.write(buf);
    buf.extend_from_slice(b"}\n\n");
}

/// Ends a frame's data line and the event.
pub(crate) fn end_frame(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"\n\n");
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    fn escaped(value: &str) -> String {
        let mut buf = Vec::new();
        super::write_json_str(&mut buf, value);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for value in [
            "",
            "plain",
            "a\"b\\c",
            "line\n\ndata: x\r\nid: 9",
            "\u{0}\u{1f}\u{7f}\u{8}\u{c}\t",
            "é—😀 \"twelve bytes\" ok",
        ] {
            assert_eq!(escaped(value), serde_json::to_string(value).unwrap(), "{value:?}");
        }
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let value = serde_json::json!({"a": [1, -2.5, 1e300, null, true, false, "x\"y\n"], "é\u{1}": {}, "": [], "n": {"k": 18446744073709551615u64}});
        let mut buf = Vec::new();
        super::write_json_value(&mut buf, &value);
        assert_eq!(String::from_utf8(buf).unwrap(), serde_json::to_string(&value).unwrap());
    }

    proptest! {
        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(value in "(\\PC|[\"\\\\\u{0}-\u{1f}]){0,120}") {
            prop_assert_eq!(escaped(&value), serde_json::to_string(&value).unwrap());
        }
    }
}
