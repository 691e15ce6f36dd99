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
///
/// Only the four known names matter (every other field is ignored), so the
/// name is matched as a prefix and the colon never has to be searched for.
#[inline]
pub fn parse_field(line: &[u8]) -> Field {
    match line.first() {
        Some(b':') => Field::Comment(1..line.len()),
        Some(b'd') if line.first_chunk::<4>() == Some(b"data") => value_after(line, 4, Field::Data),
        Some(b'e') if line.first_chunk::<5>() == Some(b"event") => value_after(line, 5, Field::Event),
        Some(b'i') if line.first_chunk::<2>() == Some(b"id") => value_after(line, 2, Field::Id),
        Some(b'r') if line.first_chunk::<5>() == Some(b"retry") => value_after(line, 5, Field::Retry),
        _ => Field::Unknown,
    }
}

/// The field whose name is `line[..name_len]`, if the name ends there.
#[inline]
fn value_after(line: &[u8], name_len: usize, make: fn(Range<usize>) -> Field) -> Field {
    match line.get(name_len) {
        // No colon: the whole line is the name, the value is empty.
        None => make(line.len()..line.len()),
        Some(b':') => {
            let start = if line.get(name_len + 1) == Some(&b' ') { name_len + 2 } else { name_len + 1 };
            make(start..line.len())
        }
        // A longer name ("dataX: …", "data x") is an unknown field.
        Some(_) => Field::Unknown,
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
        assert_eq!(parse_field(b"datax: 5"), Field::Unknown);
        assert_eq!(parse_field(b"data x"), Field::Unknown);
        assert_eq!(parse_field(b"dat"), Field::Unknown);
        assert_eq!(parse_field(b"ids: 1"), Field::Unknown);
        assert_eq!(parse_field(b":"), Field::Comment(1..1));
    }

    /// The spec's rule written plainly: the name is everything up to the
    /// first colon. The prefix matching of `parse_field` must agree with it.
    fn parse_field_by_the_book(line: &[u8]) -> Field {
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return Field::Comment(1..line.len()),
            Some(colon) => {
                let start = if line.get(colon + 1) == Some(&b' ') { colon + 2 } else { colon + 1 };
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

    #[test]
    fn prefix_matching_agrees_with_the_spec_rule() {
        let parts: [&[u8]; 12] =
            [b"data", b"event", b"id", b"retry", b":", b" ", b"x", b"d", b"ata", b"  ", b"\xC3\xA9", b"ev"];
        let mut n = 0;
        for a in parts {
            for b in parts {
                for c in parts {
                    for d in parts {
                        let line = [a, b, c, d].concat();
                        if !line.is_empty() {
                            assert_eq!(parse_field(&line), parse_field_by_the_book(&line), "{line:?}");
                            n += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(n, 12 * 12 * 12 * 12);
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
