//! One decoded message: typed headers and the payload, borrowed.

use super::EventStreamError;

/// A header value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderValue<'a> {
    /// Types 0 and 1.
    Bool(bool),
    /// Type 2.
    Byte(i8),
    /// Type 3.
    Short(i16),
    /// Type 4.
    Int(i32),
    /// Type 5.
    Long(i64),
    /// Type 6.
    Bytes(&'a [u8]),
    /// Type 7 (UTF-8 checked).
    String(&'a str),
    /// Type 8: milliseconds since the Unix epoch.
    Timestamp(i64),
    /// Type 9.
    Uuid(&'a [u8; 16]),
}

impl<'a> HeaderValue<'a> {
    /// The string, for a string header.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            HeaderValue::String(s) => Some(s),
            _ => None,
        }
    }
}

/// The headers of a message, validated; iterate or look one up by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers<'a> {
    bytes: &'a [u8],
}

/// One message: its headers and payload, borrowed from the input chunk or
/// the decoder's buffer, valid during the callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// The headers.
    pub headers: Headers<'a>,
    /// The payload bytes.
    pub payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// The `:message-type` header (`event`, `exception`, `error`).
    pub fn message_type(&self) -> Option<&'a str> {
        self.headers.get(":message-type").and_then(|v| v.as_str())
    }

    /// The `:event-type` header (`chunk`, `messageStart`, …).
    pub fn event_type(&self) -> Option<&'a str> {
        self.headers.get(":event-type").and_then(|v| v.as_str())
    }

    /// The `:exception-type` header of an exception message.
    pub fn exception_type(&self) -> Option<&'a str> {
        self.headers.get(":exception-type").and_then(|v| v.as_str())
    }

    /// The `:content-type` header.
    pub fn content_type(&self) -> Option<&'a str> {
        self.headers.get(":content-type").and_then(|v| v.as_str())
    }
}

impl<'a> Headers<'a> {
    /// Validates every header of `bytes` (the whole headers section).
    pub(crate) fn parse(bytes: &'a [u8], offset: u64) -> Result<Self, EventStreamError> {
        let headers = Headers { bytes };
        let mut rest = bytes;
        while !rest.is_empty() {
            let (_, _, tail) = next_header(rest).map_err(|reason| EventStreamError::BadHeader { offset, reason })?;
            rest = tail;
        }
        Ok(headers)
    }

    /// The first header named `name`.
    pub fn get(&self, name: &str) -> Option<HeaderValue<'a>> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The headers in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, HeaderValue<'a>)> {
        let mut rest = self.bytes;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            // Validated by `parse`.
            let (name, value, tail) = next_header(rest).ok()?;
            rest = tail;
            Some((name, value))
        })
    }
}

/// Splits `n` bytes off the front.
fn take(bytes: &[u8], n: usize) -> Result<(&[u8], &[u8]), &'static str> {
    if bytes.len() < n {
        return Err("a header runs past the headers section");
    }
    Ok(bytes.split_at(n))
}

fn be<const N: usize>(bytes: &[u8]) -> Result<([u8; N], &[u8]), &'static str> {
    let (head, tail) = take(bytes, N)?;
    let mut out = [0; N];
    out.copy_from_slice(head);
    Ok((out, tail))
}

/// One header off the front of `bytes`: (name, value, rest).
fn next_header(bytes: &[u8]) -> Result<(&str, HeaderValue<'_>, &[u8]), &'static str> {
    let ([name_len], rest) = be::<1>(bytes)?;
    if name_len == 0 {
        return Err("an empty header name");
    }
    let (name, rest) = take(rest, name_len as usize)?;
    let name = std::str::from_utf8(name).map_err(|_| "a header name that is not UTF-8")?;
    let ([kind], rest) = be::<1>(rest)?;
    let (value, rest) = match kind {
        0 => (HeaderValue::Bool(true), rest),
        1 => (HeaderValue::Bool(false), rest),
        2 => {
            let (v, r) = be::<1>(rest)?;
            (HeaderValue::Byte(i8::from_be_bytes(v)), r)
        }
        3 => {
            let (v, r) = be::<2>(rest)?;
            (HeaderValue::Short(i16::from_be_bytes(v)), r)
        }
        4 => {
            let (v, r) = be::<4>(rest)?;
            (HeaderValue::Int(i32::from_be_bytes(v)), r)
        }
        5 => {
            let (v, r) = be::<8>(rest)?;
            (HeaderValue::Long(i64::from_be_bytes(v)), r)
        }
        6 | 7 => {
            let (len, r) = be::<2>(rest)?;
            let (value, r) = take(r, u16::from_be_bytes(len) as usize)?;
            if kind == 6 {
                (HeaderValue::Bytes(value), r)
            } else {
                (HeaderValue::String(std::str::from_utf8(value).map_err(|_| "a string header that is not UTF-8")?), r)
            }
        }
        8 => {
            let (v, r) = be::<8>(rest)?;
            (HeaderValue::Timestamp(i64::from_be_bytes(v)), r)
        }
        9 => {
            let (value, r) = take(rest, 16)?;
            (HeaderValue::Uuid(value.try_into().map_err(|_| "a UUID header of the wrong size")?), r)
        }
        _ => return Err("a header value type above 9"),
    };
    Ok((name, value, rest))
}
