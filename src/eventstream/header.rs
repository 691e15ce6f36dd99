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
    /// The values of the `:message-type` and `:event-type` string headers,
    /// found (and their UTF-8 checked) while validating: every message's
    /// two lookups, without walking the headers or checking them again.
    message_type: Option<&'a str>,
    event_type: Option<&'a str>,
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
        self.headers.message_type
    }

    /// The `:event-type` header (`chunk`, `messageStart`, …).
    pub fn event_type(&self) -> Option<&'a str> {
        self.headers.event_type
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
    /// Validates every header of `bytes` (the whole headers section), in
    /// order, as botocore's parser does: each header's structure and UTF-8,
    /// then its name against the names before it (a repeated name:
    /// [`EventStreamError::DuplicateHeader`]). An empty name is a name.
    pub(crate) fn parse(bytes: &'a [u8], offset: u64) -> Result<Self, EventStreamError> {
        let mut headers = Headers { bytes, message_type: None, event_type: None };
        let mut names = Names::default();
        let mut rest = bytes;
        while !rest.is_empty() {
            let bad = |reason| EventStreamError::BadHeader { offset, reason };
            let (name, kind, value, tail) = split_header(rest).map_err(bad)?;
            if !is_utf8(name) {
                return Err(bad("a header name that is not UTF-8"));
            }
            if kind == 7 {
                let not_utf8 = || bad("a string header that is not UTF-8");
                match name {
                    // Checked once, kept as text.
                    b":message-type" => {
                        headers.message_type = Some(std::str::from_utf8(value).map_err(|_| not_utf8())?)
                    }
                    b":event-type" => headers.event_type = Some(std::str::from_utf8(value).map_err(|_| not_utf8())?),
                    _ if !is_utf8(value) => return Err(not_utf8()),
                    _ => {}
                }
            }
            if !names.insert(name) {
                let name = String::from_utf8_lossy(name).into_owned();
                return Err(EventStreamError::DuplicateHeader { offset, name });
            }
            rest = tail;
        }
        Ok(headers)
    }

    /// The first header named `name` (names compared as bytes: only the
    /// value found is converted).
    pub fn get(&self, name: &str) -> Option<HeaderValue<'a>> {
        let mut rest = self.bytes;
        while !rest.is_empty() {
            // Validated by `parse`.
            let (n, kind, value, tail) = split_header(rest).ok()?;
            if n == name.as_bytes() {
                return header_value(kind, value).ok();
            }
            rest = tail;
        }
        None
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

/// The header names of one message seen so far: a few compared in place
/// (the usual message has three headers), more in an ordered set, so that
/// checking a section of many short headers stays O(n log n).
#[derive(Default)]
struct Names<'a> {
    few: [&'a [u8]; FEW_NAMES],
    len: usize,
    many: std::collections::BTreeSet<&'a [u8]>,
}

const FEW_NAMES: usize = 8;

impl<'a> Names<'a> {
    /// Adds `name`; false if it was there already.
    fn insert(&mut self, name: &'a [u8]) -> bool {
        if self.len < FEW_NAMES {
            if self.few[..self.len].contains(&name) {
                return false;
            }
            self.few[self.len] = name;
            self.len += 1;
            return true;
        }
        if self.many.is_empty() {
            self.many.extend(self.few);
        }
        self.many.insert(name)
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

/// Whether `bytes` is UTF-8 (ASCII, the usual header, checked without the
/// general validator's setup).
fn is_utf8(bytes: &[u8]) -> bool {
    bytes.is_ascii() || std::str::from_utf8(bytes).is_ok()
}

/// One header's parts: (name, value type, value bytes, the bytes after it).
type HeaderParts<'a> = (&'a [u8], u8, &'a [u8], &'a [u8]);

/// The parts of one header off the front of `bytes`; no UTF-8 check.
fn split_header(bytes: &[u8]) -> Result<HeaderParts<'_>, &'static str> {
    let ([name_len], rest) = be::<1>(bytes)?;
    let (name, rest) = take(rest, name_len as usize)?;
    let ([kind], rest) = be::<1>(rest)?;
    let size = match kind {
        0 | 1 => 0,
        2 => 1,
        3 => 2,
        4 => 4,
        5 | 8 => 8,
        9 => 16,
        6 | 7 => {
            let (len, _) = be::<2>(rest)?;
            let (_, r) = take(rest, 2)?;
            let (value, r) = take(r, u16::from_be_bytes(len) as usize)?;
            return Ok((name, kind, value, r));
        }
        _ => return Err("a header value type above 9"),
    };
    let (value, r) = take(rest, size)?;
    Ok((name, kind, value, r))
}

/// The typed value of a header's value bytes (sized by [`split_header`]).
fn header_value(kind: u8, value: &[u8]) -> Result<HeaderValue<'_>, &'static str> {
    let sized = |n: usize| -> Result<[u8; 8], &'static str> {
        let mut out = [0; 8];
        out.get_mut(8 - n..)
            .ok_or("a header value of the wrong size")?
            .copy_from_slice(value.get(..n).ok_or("a header value of the wrong size")?);
        Ok(out)
    };
    Ok(match kind {
        0 => HeaderValue::Bool(true),
        1 => HeaderValue::Bool(false),
        2 => HeaderValue::Byte(i64::from_be_bytes(sized(1)?) as i8),
        3 => HeaderValue::Short(i64::from_be_bytes(sized(2)?) as i16),
        4 => HeaderValue::Int(i64::from_be_bytes(sized(4)?) as i32),
        5 => HeaderValue::Long(i64::from_be_bytes(sized(8)?)),
        6 => HeaderValue::Bytes(value),
        7 => HeaderValue::String(std::str::from_utf8(value).map_err(|_| "a string header that is not UTF-8")?),
        8 => HeaderValue::Timestamp(i64::from_be_bytes(sized(8)?)),
        9 => HeaderValue::Uuid(value.try_into().map_err(|_| "a UUID header of the wrong size")?),
        _ => return Err("a header value type above 9"),
    })
}

/// One header off the front of `bytes`: (name, value, rest).
fn next_header(bytes: &[u8]) -> Result<(&str, HeaderValue<'_>, &[u8]), &'static str> {
    let (name, kind, value, rest) = split_header(bytes)?;
    let name = std::str::from_utf8(name).map_err(|_| "a header name that is not UTF-8")?;
    Ok((name, header_value(kind, value)?, rest))
}
