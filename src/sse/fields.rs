//! One line → one field, per the WHATWG "event stream" interpretation.
//!
//! * an empty line dispatches the event (handled by the decoder, not here);
//! * a line starting with `:` is a comment;
//! * otherwise the field name is everything up to the first `:`, and the
//!   value everything after it, with exactly one leading space removed;
//! * a line with no `:` is a field name with an empty value.

use core::ops::Range;

/// The field a non-empty line holds. Values are byte ranges of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// `data`: appended to the data buffer.
    Data(Range<usize>),
    /// `event`: sets the event type buffer.
    Event(Range<usize>),
    /// `id`: sets the last event ID buffer (unless the value contains NUL).
    Id(Range<usize>),
    /// `retry`: sets the reconnection time (only when all ASCII digits).
    Retry(Range<usize>),
    /// A `:` comment line. Its text (after the colon) is the range.
    Comment(Range<usize>),
    /// Any other field name: ignored by the spec.
    Unknown,
}

/// Classifies a non-empty `line`.
pub fn parse_field(line: &[u8]) -> Field {
    // Fast path for `name:` with a known name (no colon search): a known
    // name holds no colon, so its colon is the first one.
    let value_after = |colon: usize| {
        let start = if line.get(colon + 1) == Some(&b' ') { colon + 2 } else { colon + 1 };
        start..line.len()
    };
    match line.first() {
        Some(b'd') if line.starts_with(b"data:") => return Field::Data(value_after(4)),
        Some(b'e') if line.starts_with(b"event:") => return Field::Event(value_after(5)),
        Some(b'i') if line.starts_with(b"id:") => return Field::Id(value_after(2)),
        Some(b'r') if line.starts_with(b"retry:") => return Field::Retry(value_after(5)),
        _ => {}
    }
    parse_field_general(line)
}

/// [`parse_field`] without the fast path.
fn parse_field_general(line: &[u8]) -> Field {
    let (name, value) = match memchr::memchr(b':', line) {
        Some(0) => return Field::Comment(1..line.len()),
        Some(colon) => {
            let mut start = colon + 1;
            if line.get(start) == Some(&b' ') {
                start += 1;
            }
            (&line[..colon], start..line.len())
        }
        None => (line, line.len()..line.len()),
    };
    match name {
        b"data" => Field::Data(value),
        b"event" => Field::Event(value),
        b"id" => Field::Id(value),
        b"retry" => Field::Retry(value),
        _ => Field::Unknown,
    }
}

/// The value of a `retry` field: `Some` only when it is all ASCII digits
/// (and not empty). Values beyond `u64` saturate.
pub fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(value.iter().fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0'))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_per_spec() {
        assert_eq!(parse_field(b"data: x"), Field::Data(6..7));
        assert_eq!(parse_field(b"data:x"), Field::Data(5..6));
        assert_eq!(parse_field(b"data:  x"), Field::Data(6..8), "only one space is removed");
        assert_eq!(parse_field(b"data"), Field::Data(4..4), "no colon: empty value");
        assert_eq!(parse_field(b"event:a:b"), Field::Event(6..9), "first colon splits");
        assert_eq!(parse_field(b": hi"), Field::Comment(1..4));
        assert_eq!(parse_field(b"Data: x"), Field::Unknown, "names are case-sensitive");
        assert_eq!(parse_field(b" data: x"), Field::Unknown);
        assert_eq!(parse_field(b"foo: x"), Field::Unknown);
        assert_eq!(parse_field(b"id"), Field::Id(2..2));
        assert_eq!(parse_field(b"retry: 5"), Field::Retry(7..8));
    }

    #[test]
    fn fast_path_agrees_with_the_general_one() {
        let parts: [&[u8]; 12] =
            [b"data", b"event", b"id", b"retry", b":", b" ", b"x", b"d", b"ata", b"  ", b"\xC3\xA9", b"ev"];
        let mut n = 0;
        for a in parts {
            for b in parts {
                for c in parts {
                    for d in parts {
                        let line = [a, b, c, d].concat();
                        assert_eq!(parse_field(&line), parse_field_general(&line), "{line:?}");
                        n += 1;
                    }
                }
            }
        }
        assert_eq!(n, 12 * 12 * 12 * 12);
        assert_eq!(parse_field(b"data:"), Field::Data(5..5));
        assert_eq!(parse_field(b"data: "), Field::Data(6..6));
        assert_eq!(parse_field(b"retry:  1"), Field::Retry(7..9));
    }

    #[test]
    fn retry_only_ascii_digits() {
        assert_eq!(parse_retry(b"1500"), Some(1500));
        assert_eq!(parse_retry(b"0"), Some(0));
        assert_eq!(parse_retry(b""), None);
        assert_eq!(parse_retry(b" 1"), None);
        assert_eq!(parse_retry(b"1.5"), None);
        assert_eq!(parse_retry(b"-1"), None);
        assert_eq!(parse_retry(b"99999999999999999999999"), Some(u64::MAX));
    }
}
