//! Borrowed views for the typed payload parsers.
//!
//! Names and ids are [`Str`] (borrowed unless escaped); delta text and tool
//! arguments are [`JsonStr`] (always borrowed, raw, decoded straight into
//! the part's buffer), so a delta costs no allocation of its own whatever
//! escapes it holds; [`scan_str`] reads a JSON string strictly for the
//! exact-bytes fast paths, which fall back to serde_json on anything else,
//! and [`UncheckedStr`] reads one the same way as it decodes it, for a fast
//! path that knows where the string ends (one pass over an escaped delta,
//! not a scan and then a decode).

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::ops::Deref;

use serde::de::{Deserialize, Deserializer, Visitor};
use serde_json::value::RawValue;

use crate::json::scan::{escape_char, json_plain_prefix, json_plain_prefix_whole};

/// A JSON string borrowed from the payload when it has no escapes, owned
/// otherwise. Unlike a bare `Cow<str>` (which serde borrows only as a direct
/// field), it also borrows inside `Option` and `Vec`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Str<'a>(pub(crate) Cow<'a, str>);

impl Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Str<'_> {
    /// The owned string.
    pub(crate) fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A JSON string exactly as it appears in the payload (the text between
/// its quotes), borrowed: escapes are decoded only when the string is
/// appended to the caller's buffer ([`JsonStr::push_to`]), so a delta with
/// escapes (`\n`, `\"` — nearly every tool-argument fragment) costs no
/// allocation of its own.
///
/// Deserializing it accepts what serde_json's skip of a raw value accepts
/// (RFC 8259's grammar): a `\u` escape naming a lone surrogate, which
/// serde_json refuses into a `String` (and JavaScript and Python accept), is
/// decoded to U+FFFD and flagged ([`JsonStr::lone_surrogates`]: the dialect
/// warns `lone_surrogate`). Appending can never fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct JsonStr<'a> {
    /// The text between the quotes, escapes undecoded.
    raw: &'a str,
    /// Whether `raw` holds a backslash.
    escaped: bool,
    /// Whether `raw` holds a `\u` escape of a lone surrogate (decoded to
    /// U+FFFD).
    lone: bool,
    /// Whether `raw` is the decoded text escaped exactly as serde_json
    /// escapes it: its only escapes are `\"`, `\\`, `\b`, `\f`, `\n`, `\r`
    /// and `\t` (no `\u`, no `\/`).
    canonical: bool,
}

impl<'a> JsonStr<'a> {
    /// The string of a raw JSON value, `None` if the value is not a string
    /// or has a malformed escape. A lone surrogate is accepted (decoded to
    /// U+FFFD, flagged).
    pub(crate) fn from_raw(value: &'a str) -> Option<Self> {
        let raw = value.strip_prefix('"')?.strip_suffix('"')?;
        let b = raw.as_bytes();
        let Some(first) = memchr::memchr(b'\\', b) else {
            return Some(JsonStr { raw, escaped: false, lone: false, canonical: true });
        };
        // Only `\u` escapes can be lone surrogates (serde_json's skip
        // checked the rest): look for one, stepping over each escape.
        let mut at = first;
        let mut lone = false;
        let mut canonical = true;
        loop {
            match b.get(at + 1) {
                Some(b'u') => {
                    lone = unescape(raw, &mut Discard).ok()?;
                    canonical = false;
                    break;
                }
                Some(b'/') => canonical = false,
                _ => {}
            }
            match memchr::memchr(b'\\', b.get(at + 2..).unwrap_or_default()) {
                Some(next) => at += 2 + next,
                None => break,
            }
        }
        Some(JsonStr { raw, escaped: true, lone, canonical })
    }

    /// Whether the decoded string is empty (an escape never decodes to
    /// nothing).
    pub(crate) fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Whether the string holds a lone surrogate escape (decoded to U+FFFD).
    pub(crate) fn lone_surrogates(&self) -> bool {
        self.lone
    }

    /// Appends the decoded string to `out`.
    pub(crate) fn push_to(&self, out: &mut String) {
        if self.escaped {
            // The decoded text is never longer than the raw one.
            out.reserve(self.raw.len());
            // Checked when deserialized: cannot fail.
            let _ = unescape(self.raw, out);
        } else {
            out.push_str(self.raw);
        }
    }

    /// The decoded string: borrowed unless it has escapes.
    #[cfg(test)]
    pub(crate) fn to_cow(self) -> Cow<'a, str> {
        if self.escaped {
            let mut s = String::with_capacity(self.raw.len());
            self.push_to(&mut s);
            Cow::Owned(s)
        } else {
            Cow::Borrowed(self.raw)
        }
    }

    /// The string whose text between the quotes is `raw`, which holds no
    /// quote, backslash or control character (checked by the caller).
    pub(crate) fn plain(raw: &'a str) -> Self {
        debug_assert!(!raw.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20));
        JsonStr { raw, escaped: false, lone: false, canonical: true }
    }

    /// Text already decoded that holds no backslash and no control
    /// character (checked by the caller): appended as it is, but not JSON
    /// string contents when it holds a quote (never [`canonical_raw`](Self::canonical_raw)).
    pub(crate) fn decoded(text: &'a str) -> Self {
        debug_assert!(!text.bytes().any(|b| b == b'\\' || b < 0x20));
        JsonStr { raw: text, escaped: false, lone: false, canonical: false }
    }

    /// `raw`, when it is the decoded text escaped exactly as serde_json
    /// escapes it.
    pub(crate) fn canonical_raw(&self) -> Option<&'a str> {
        self.canonical.then_some(self.raw)
    }

    /// The first character of the decoded string after leading whitespace
    /// (decoding only the escapes it passes).
    pub(crate) fn first_non_whitespace(&self) -> Option<char> {
        let mut t = self.raw;
        loop {
            t = t.trim_start();
            let (c, len) = match t.as_bytes() {
                [b'\\', b'u', ..] => {
                    let code = hex4(t.as_bytes(), 2).ok()?;
                    // A surrogate starts a pair: not whitespace.
                    (char::from_u32(u32::from(code)).unwrap_or(char::REPLACEMENT_CHARACTER), 6)
                }
                [b'\\', e, ..] => (escape_char(*e)?, 2),
                _ => return t.chars().next(),
            };
            if !c.is_whitespace() {
                return Some(c);
            }
            t = &t[len..];
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, Unexpected};
        let value = <&'de RawValue>::deserialize(d)?;
        JsonStr::from_raw(value.get())
            .ok_or_else(|| D::Error::invalid_type(Unexpected::Other(value.get()), &"a string of Unicode scalar values"))
    }
}

/// Reads the JSON string that starts at `at` (its opening quote) in `text`,
/// strictly: `None` on anything serde_json would reject (a control
/// character, an unknown escape, a bad `\u`, an unpaired surrogate, no
/// closing quote). Returns the string and the offset after its closing
/// quote. For fast paths that match a payload's exact bytes and fall back to
/// serde_json on `None`.
pub(crate) fn scan_str(text: &str, at: usize) -> Option<(JsonStr<'_>, usize)> {
    // A lone surrogate: the slow path's (it warns).
    scan_lenient(text, at).filter(|(s, _)| !s.lone)
}

/// [`scan_str`], but a `\u` escape of a lone surrogate accepted (flagged,
/// decoded to U+FFFD), as [`JsonStr`]'s own deserializer reads it: the
/// string [`JsonStr::from_raw`] gives, its flags from what the scan saw.
#[inline]
pub(crate) fn scan_lenient(text: &str, at: usize) -> Option<(JsonStr<'_>, usize)> {
    let b = text.as_bytes();
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let mut i = start;
    let mut escaped = false;
    let mut unicode = false;
    let mut slash = false;
    loop {
        i += json_plain_prefix(b.get(i..)?);
        match *b.get(i)? {
            b'"' => break,
            b'\\' => {}
            _ => return None,
        }
        escaped = true;
        match *b.get(i + 1)? {
            b'u' => {
                hex4(b, i + 2).ok()?;
                unicode = true;
                i += 6;
            }
            e => {
                escape_char(e)?;
                slash |= e == b'/';
                i += 2;
            }
        }
    }
    let raw = text.get(start..i)?;
    let lone = unicode && unescape(raw, &mut Discard).ok()?;
    Some((JsonStr { raw, escaped, lone, canonical: !unicode && !slash }, i + 1))
}

/// Tool arguments: a JSON string (borrowed, decoded when appended), or — as
/// some OpenAI-compatible bridges send them — a JSON object or array, kept
/// as its compact JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonText<'a> {
    /// The usual string of JSON text.
    Str(JsonStr<'a>),
    /// An object or array sent as JSON itself.
    Json(String),
}

impl JsonText<'_> {
    /// Whether the text, after leading whitespace, starts an object or array.
    pub(crate) fn starts_container(&self) -> bool {
        match self {
            JsonText::Str(s) => matches!(s.first_non_whitespace(), Some('{' | '[')),
            JsonText::Json(j) => j.starts_with(['{', '[']),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonText<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, Unexpected};
        let value = <&'de RawValue>::deserialize(d)?;
        let text = value.get();
        if let Some(s) = JsonStr::from_raw(text) {
            return Ok(JsonText::Str(s));
        }
        if text.starts_with(['{', '[']) {
            // Compact it the way serde_json prints a Value.
            let v: serde_json::Value = serde_json::from_str(text).map_err(D::Error::custom)?;
            return Ok(JsonText::Json(v.to_string()));
        }
        Err(D::Error::invalid_type(Unexpected::Other(text), &"a string, object or array"))
    }
}

/// Text that can be appended to a buffer: what [`super::args::ToolArgs`]
/// accepts as a fragment.
pub(crate) trait Fragment {
    /// Appends the decoded text to `out`.
    fn push_to(&self, out: &mut String);

    /// [`push_to`](Self::push_to), for a fragment whose text is read as it
    /// is appended ([`UncheckedStr`]): `false`, `out` left as it was, when
    /// the text is not what it must be. The others always append.
    fn try_push_to(&self, out: &mut String) -> bool {
        self.push_to(out);
        true
    }

    /// The text as the provider escaped it (a JSON string's contents), when
    /// it came as one escaped exactly as serde_json escapes.
    fn as_escaped(&self) -> Option<&str> {
        None
    }
}

impl Fragment for JsonStr<'_> {
    fn push_to(&self, out: &mut String) {
        JsonStr::push_to(self, out);
    }

    fn as_escaped(&self) -> Option<&str> {
        self.canonical_raw()
    }
}

impl Fragment for JsonText<'_> {
    fn push_to(&self, out: &mut String) {
        match self {
            JsonText::Str(s) => s.push_to(out),
            JsonText::Json(j) => out.push_str(j),
        }
    }

    fn as_escaped(&self) -> Option<&str> {
        match self {
            JsonText::Str(s) => s.canonical_raw(),
            JsonText::Json(_) => None,
        }
    }
}

impl Fragment for str {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

/// A JSON string that ends its payload, taken before its text was read: the
/// text between its quotes, read strictly (as [`scan_str`] reads it: no
/// unescaped quote, no control character, every escape valid, no lone
/// surrogate) and decoded in the same pass when it is appended, not scanned
/// first and decoded after. A fast path that knows where the string ends
/// (the payload's last bytes) hands it on; appending declines, leaving the
/// buffer as it was, when the text is not such a string, and the caller
/// falls back to the path that reads the payload whole.
#[derive(Debug, Clone)]
pub(crate) struct UncheckedStr<'a> {
    /// The string with its quotes.
    quoted: &'a str,
    /// Set when appended: whether the text is escaped exactly as
    /// serde_json escapes ([`JsonStr::canonical_raw`]).
    canonical: Cell<bool>,
}

impl<'a> UncheckedStr<'a> {
    /// The string `quoted` (its quotes included, its text unread).
    pub(crate) fn new(quoted: &'a str) -> Self {
        UncheckedStr { quoted, canonical: Cell::new(false) }
    }

    /// The text between the quotes, escapes undecoded.
    fn raw(&self) -> &'a str {
        self.quoted.get(1..self.quoted.len().saturating_sub(1)).unwrap_or_default()
    }

    /// The string read by [`scan_str`], when it is one that ends where this
    /// one does: for the paths that take a [`JsonStr`].
    pub(crate) fn checked(&self) -> Option<JsonStr<'a>> {
        scan_str(self.quoted, 0).filter(|&(_, end)| end == self.quoted.len()).map(|(s, _)| s)
    }
}

impl Fragment for UncheckedStr<'_> {
    /// Appends the text if it reads ([`try_push_to`](Fragment::try_push_to)),
    /// else nothing.
    fn push_to(&self, out: &mut String) {
        let _ = self.try_push_to(out);
    }

    fn try_push_to(&self, out: &mut String) -> bool {
        let start = out.len();
        match decode_strict(self.raw(), out) {
            Some(canonical) => {
                self.canonical.set(canonical);
                true
            }
            None => {
                out.truncate(start);
                false
            }
        }
    }

    fn as_escaped(&self) -> Option<&str> {
        self.canonical.get().then(|| self.raw())
    }
}

/// Reads `raw` as a JSON string's text between its quotes, strictly (see
/// [`UncheckedStr`]), decoding it onto `out` in the same pass: whether it
/// is escaped as serde_json escapes (no `\u`, no `\/`), or `None` when it
/// is not such a text (`out` then holds part of it: the caller cuts it).
fn decode_strict(raw: &str, out: &mut String) -> Option<bool> {
    let b = raw.as_bytes();
    let mut canonical = true;
    let mut i = 0;
    loop {
        // The run ends at an ASCII byte (or the end): a character boundary.
        let n = json_plain_prefix_whole(b.get(i..)?);
        out.push_str(raw.get(i..i + n)?);
        i += n;
        match b.get(i) {
            None => return Some(canonical),
            Some(b'\\') => {}
            // An unescaped quote (the string ended before the payload's
            // end) or a control character.
            Some(_) => return None,
        }
        let e = escape_at(b, i)?;
        if e.lone {
            // A lone surrogate: the slow path's (it warns).
            return None;
        }
        // Canonical as `scan_str` has it: no `\u`, no `\/`.
        canonical &= !matches!(b[i + 1], b'u' | b'/');
        out.push(e.char);
        i += e.len;
    }
}

/// Where [`unescape`] writes.
trait Out {
    fn push_str(&mut self, s: &str);
    fn push(&mut self, c: char);
}

impl Out for String {
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
}

/// Checks without writing.
struct Discard;

impl Out for Discard {
    fn push_str(&mut self, _: &str) {}
    fn push(&mut self, _: char) {}
}

/// Decodes the escapes of a JSON string's raw text into `out`, a lone
/// surrogate (or a reversed pair) as U+FFFD; whether there was one. `Err`
/// on a malformed escape (a bad escape letter or hex digit, a trailing
/// backslash).
fn unescape(raw: &str, out: &mut impl Out) -> Result<bool, ()> {
    let mut lone = false;
    let b = raw.as_bytes();
    let mut i = 0;
    while let Some(off) = find_backslash(&b[i..]) {
        let at = i + off;
        out.push_str(&raw[i..at]);
        let e = escape_at(b, at).ok_or(())?;
        lone |= e.lone;
        out.push(e.char);
        i = at + e.len;
    }
    out.push_str(&raw[i..]);
    Ok(lone)
}

/// A JSON escape, decoded ([`escape_at`]).
struct Escape {
    /// What it stands for (U+FFFD for a lone surrogate).
    char: char,
    /// Its length in bytes (12 for a surrogate pair).
    len: usize,
    /// Whether it is a `\u` escape of a lone surrogate (or a reversed pair's
    /// first half).
    lone: bool,
}

/// The escape at `b[at]` (a backslash): a one-letter escape, a `\u` escape,
/// or a `\u` pair of surrogates; `None` on a bad letter or hex digit.
#[inline(always)]
fn escape_at(b: &[u8], at: usize) -> Option<Escape> {
    let letter = *b.get(at + 1)?;
    if letter != b'u' {
        return Some(Escape { char: escape_char(letter)?, len: 2, lone: false });
    }
    let hi = hex4(b, at + 2).ok()?;
    let (code, len, lone) = match hi {
        0xD800..=0xDBFF => match low_after(b, at + 6) {
            Some(lo) => (0x1_0000 + ((u32::from(hi) - 0xD800) << 10) + (u32::from(lo) - 0xDC00), 12, false),
            None => (0xFFFD, 6, true),
        },
        0xDC00..=0xDFFF => (0xFFFD, 6, true),
        _ => (u32::from(hi), 6, false),
    };
    Some(Escape { char: char::from_u32(code)?, len, lone })
}

/// The first backslash in `b`: the text between two escapes of a delta is
/// short, where a plain loop beats `memchr`'s setup.
#[inline]
fn find_backslash(b: &[u8]) -> Option<usize> {
    if b.len() < 32 {
        b.iter().position(|&c| c == b'\\')
    } else {
        memchr::memchr(b'\\', b)
    }
}

/// The low surrogate escaped at `at` (`\uDC00`-`\uDFFF`), if one is.
fn low_after(b: &[u8], at: usize) -> Option<u16> {
    if b.get(at..at + 2) != Some(b"\\u") {
        return None;
    }
    hex4(b, at + 2).ok().filter(|lo| (0xDC00..=0xDFFF).contains(lo))
}

/// `data` (JSON text) with every `\u` escape of a lone surrogate replaced
/// by `\uFFFD`, and how many; `None` when it has none. RFC 8259's grammar
/// allows them (JavaScript and Python accept them); serde_json refuses them
/// into a `String` or a `Value`: a payload it refused is re-parsed from this
/// (so the common path costs nothing). Outside strings valid JSON has no
/// backslash, so escapes are found without tracking strings.
pub(crate) fn replace_lone_surrogates(data: &str) -> Option<(String, usize)> {
    let b = data.as_bytes();
    let mut out = String::new();
    let mut count = 0;
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'\\', b.get(i..).unwrap_or_default()) {
        let at = i + off;
        i = at + 2;
        if b.get(at + 1) != Some(&b'u') {
            continue;
        }
        let Ok(hi) = hex4(b, at + 2) else { continue };
        i = at + 6;
        let lone = match hi {
            0xD800..=0xDBFF => match low_after(b, i) {
                Some(_) => {
                    i += 6;
                    false
                }
                None => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            if count == 0 {
                out.reserve(data.len());
            }
            out.push_str(&data[copied..at]);
            out.push_str("\\uFFFD");
            copied = i;
            count += 1;
        }
    }
    if count == 0 {
        return None;
    }
    out.push_str(&data[copied..]);
    Some((out, count))
}

/// The four hex digits at `at`.
fn hex4(b: &[u8], at: usize) -> Result<u16, ()> {
    let digits = b.get(at..at + 4).ok_or(())?;
    let mut n = 0u16;
    for &d in digits {
        let v = (d as char).to_digit(16).ok_or(())?;
        n = n << 4 | v as u16;
    }
    Ok(n)
}

/// A JSON array whose first element is stored inline: deserializing the
/// usual one-element array (`choices`, `tool_calls`) allocates nothing.
#[derive(Debug, PartialEq)]
pub(crate) struct Few<T> {
    first: Option<T>,
    rest: Vec<T>,
}

impl<T> Few<T> {
    /// No element or one.
    pub(crate) fn from_iter_opt(first: Option<T>) -> Self {
        Few { first, rest: Vec::new() }
    }

    /// The elements of a sequence being deserialized.
    pub(crate) fn from_seq<'de, S: serde::de::SeqAccess<'de>>(mut seq: S) -> Result<Self, S::Error>
    where
        T: Deserialize<'de>,
    {
        let first = seq.next_element()?;
        let mut rest = Vec::new();
        if first.is_some() {
            while let Some(x) = seq.next_element()? {
                rest.push(x);
            }
        }
        Ok(Few { first, rest })
    }

    /// The first element.
    pub(crate) fn first_mut(&mut self) -> Option<&mut T> {
        self.first.as_mut()
    }

    /// The elements, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.first.iter().chain(self.rest.iter())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Few<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::SeqAccess;
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Few<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<Self::Value, S::Error> {
                Few::from_seq(seq)
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}

/// Pieces of a JSON string's text (escapes of every kind, surrogate pairs,
/// reversed and lone ones, bad escapes and `\u` digits, control characters,
/// an unescaped quote, a lone backslash, multibyte and plain text) that the
/// string readers' tests join three at a time between quotes.
#[cfg(test)]
pub(crate) const STRING_PIECES: [&str; 19] = [
    "a",
    "\\n",
    "\\\\",
    "\\\"",
    "\\/",
    "\\ud83d",
    "\\ude00",
    "\\u0041",
    "\\uD83D\\u0041",
    "é",
    "\\u00",
    "\\uzzzz",
    "\\q",
    "\u{1}",
    "\u{1f}",
    "\"",
    "\\",
    "0123456789abcdef",
    "\\b\\f\\r\\t",
];

/// JSON string literals the exact-bytes fast paths must read exactly as
/// serde_json does (or decline): escapes, pairs, lone surrogates in every
/// position, control characters, invalid escapes. Shared by their tests.
#[cfg(test)]
pub(crate) const TRICKY_JSON_STRINGS: [&str; 11] = [
    r#""plain""#,
    r#""a\"b\\c\n""#,
    r#""\ud83d\ude00 é""#,
    r#""\ud800""#,
    // Lone surrogates (U+FFFD, flagged) in every position.
    r#""broken emoji: \ud83d""#,
    r#""\udc00 x""#,
    r#""\ud83d\ud83d\ude00""#,
    r#""\ude00\ud83d\n""#,
    r#""""#,
    "\"a\u{1}\"",
    r#""\q""#,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_unless_escaped() {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            a: Option<Str<'a>>,
            #[serde(borrow)]
            b: Option<Str<'a>>,
        }
        let t: T<'_> = serde_json::from_str(r#"{"a":"plain","b":"esc\n"}"#).unwrap();
        assert!(matches!(t.a.unwrap().0, Cow::Borrowed("plain")));
        assert!(matches!(t.b.unwrap().0, Cow::Owned(ref s) if s == "esc\n"));
    }

    #[test]
    fn few_keeps_order() {
        let f: Few<u32> = serde_json::from_str("[1, 2, 3]").unwrap();
        assert_eq!(f.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
        let f: Few<u32> = serde_json::from_str("[]").unwrap();
        assert_eq!(f.iter().count(), 0);
        assert!(serde_json::from_str::<Few<u32>>("{}").is_err());
    }

    fn decoded(t: &JsonText<'_>) -> String {
        let mut s = String::new();
        t.push_to(&mut s);
        s
    }

    #[test]
    fn json_text_takes_strings_and_objects() {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            a: Option<JsonText<'a>>,
            #[serde(borrow)]
            b: Option<JsonText<'a>>,
        }
        let t: T<'_> = serde_json::from_str(r#"{"a":"{\"x\":1}","b":{"y":[1, 2]}}"#).unwrap();
        assert_eq!(decoded(&t.a.unwrap()), r#"{"x":1}"#);
        assert_eq!(decoded(&t.b.unwrap()), r#"{"y":[1,2]}"#);
        let t: T<'_> = serde_json::from_str(r#"{"a":"plain","b":null}"#).unwrap();
        assert!(matches!(
            t.a,
            Some(JsonText::Str(JsonStr { raw: "plain", escaped: false, lone: false, canonical: true }))
        ));
        assert!(t.b.is_none());
        assert!(serde_json::from_str::<T<'_>>(r#"{"a":5}"#).is_err());
        // A lone surrogate: U+FFFD, flagged.
        let t: T<'_> = serde_json::from_str(r#"{"a":"x\ud800"}"#).unwrap();
        assert!(matches!(&t.a, Some(JsonText::Str(s)) if s.lone_surrogates()));
        assert_eq!(decoded(&t.a.unwrap()), "x\u{FFFD}");
    }

    #[test]
    fn json_text_sees_a_leading_container() {
        for (json, starts) in [
            (r#""{\"a\":1}""#, true),
            (r#""  [1]""#, true),
            (r#""\n\t{}""#, true),
            (r#""\u0020[""#, true),
            (r#""\"a\"""#, false),
            (r#""""#, false),
            (r#"{"a":1}"#, true),
        ] {
            let t: JsonText<'_> = serde_json::from_str(json).unwrap();
            assert_eq!(t.starts_container(), starts, "{json}");
        }
    }

    #[test]
    fn replaces_lone_surrogates_only() {
        for (doc, want, n) in [
            (r#"{"a":"\ud83d"}"#, r#"{"a":"\uFFFD"}"#, 1),
            (r#"{"a":"\ud83d\ude00 \uDE00\uD83D"}"#, r#"{"a":"\ud83d\ude00 \uFFFD\uFFFD"}"#, 2),
            (r#"{"a":"\\ud83d \ud800\u0041"}"#, r#"{"a":"\\ud83d \uFFFD\u0041"}"#, 1),
            (r#"{"a":"\ud800\ud800\udc00"}"#, r#"{"a":"\uFFFD\ud800\udc00"}"#, 1),
            (r#"{"a":"tail \ud800"#, r#"{"a":"tail \uFFFD"#, 1),
        ] {
            assert_eq!(replace_lone_surrogates(doc), Some((want.to_owned(), n)), "{doc}");
            if doc.ends_with('}') {
                let v: serde_json::Value = serde_json::from_str(want).unwrap();
                assert!(v["a"].as_str().unwrap().contains('\u{FFFD}'));
            }
        }
        for doc in [r#"{"a":"\ud83d\ude00"}"#, r#"{"a":"\\ud800"}"#, "\\", "\\u12", "\\", r#""\u00e9""#] {
            assert_eq!(replace_lone_surrogates(doc), None, "{doc}");
        }
    }

    /// A string read as it is appended reads exactly the strings the
    /// strict scanner reads (a lone surrogate declined too), to the same
    /// text and escaped form; what does not read leaves the buffer as it was.
    #[test]
    fn unchecked_str_reads_as_scan_str() {
        let pieces = STRING_PIECES;
        let mut n = 0;
        for x in pieces {
            for y in pieces {
                for z in pieces {
                    let quoted = format!("\"{x}{y}{z}\"");
                    let want = scan_str(&quoted, 0)
                        .filter(|&(_, end)| end == quoted.len())
                        .map(|(s, _)| (s.to_cow().into_owned(), s.canonical_raw().map(str::to_owned)));
                    let unchecked = UncheckedStr::new(&quoted);
                    let mut out = String::from("kept");
                    let read = unchecked.try_push_to(&mut out);
                    match &want {
                        Some((text, escaped)) => {
                            assert!(read, "{quoted}");
                            assert_eq!(&out["kept".len()..], text, "{quoted}");
                            assert_eq!(unchecked.as_escaped().map(str::to_owned), *escaped, "{quoted}");
                            n += 1;
                        }
                        None => {
                            assert!(!read, "{quoted}");
                            assert_eq!(out, "kept", "{quoted}");
                        }
                    }
                    assert_eq!(unchecked.checked().is_some(), want.is_some(), "{quoted}");
                }
            }
        }
        assert!(n > 900, "{n}");
    }

    /// The strict scanner accepts exactly the strings serde_json accepts,
    /// with the same text.
    #[test]
    fn scan_str_agrees_with_serde_json() {
        let pieces = ["a", "\\n", "\\\\", "\\\"", "\\ud83d", "\\ude00", "\\u0041", "é", "\\u00", "\\q", "\u{1}", "\""];
        for x in pieces {
            for y in pieces {
                for z in pieces {
                    let doc = format!("\"{x}{y}{z}\"}}");
                    let want =
                        serde_json::Deserializer::from_str(&doc).into_iter::<String>().next().and_then(Result::ok);
                    let got = scan_str(&doc, 0).map(|(s, end)| (s.to_cow().into_owned(), end));
                    match (&want, &got) {
                        (Some(w), Some((g, end))) => {
                            assert_eq!(w, g, "{doc}");
                            // The closing quote is the one serde_json stopped at.
                            let reparsed: String = serde_json::from_str(&doc[..*end]).unwrap();
                            assert_eq!(&reparsed, w, "{doc}");
                        }
                        (None, None) => {}
                        // A string serde_json accepts that ends early (`"` piece)
                        // must be found the same way by both.
                        _ => panic!("{doc}: serde {want:?}, scan {got:?}"),
                    }
                }
            }
        }
        assert!(scan_str("x\"a\"", 0).is_none());
        assert_eq!(scan_str("x\"a\"", 1).map(|(s, e)| (s.to_cow().into_owned(), e)), Some(("a".to_owned(), 4)));
    }

    /// Decoding agrees with serde_json on every string it accepts; a lone
    /// surrogate is decoded as serde_json decodes `\uFFFD` in its place
    /// ([`replace_lone_surrogates`]), and flagged.
    #[test]
    fn json_str_decodes_like_serde_json() {
        let mut cases: Vec<String> = [
            r#""""#,
            r#""plain text""#,
            r#""a\"b\\c\/d\be\ff\ng\rh\ti""#,
            r#""\u00e9\u4e2d\uD83D\uDE00 end""#,
            r#""\ud83d\ude00\ud83d\ude00""#,
            r#""é中😀 raw""#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\ud800x""#,
            r#""\ud800\n""#,
            r#""tail\\""#,
            r#""\u12""#,
            r#""\uzzzz""#,
            r#""\x""#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every short sequence over an alphabet of escape pieces.
        let pieces = ["a", "\\n", "\\\\", "\\\"", "\\ud83d", "\\ude00", "\\u0041", "é", "\\u00"];
        for x in pieces {
            for y in pieces {
                for z in pieces {
                    cases.push(format!("\"{x}{y}{z}\""));
                }
            }
        }
        for case in &cases {
            let fixed = replace_lone_surrogates(case);
            let want = serde_json::from_str::<String>(fixed.as_ref().map_or(case, |f| &f.0)).ok();
            if fixed.is_none() && want.is_some() {
                assert!(serde_json::from_str::<String>(case).is_ok(), "{case}");
            }
            let got = serde_json::from_str::<JsonStr<'_>>(case).ok();
            assert_eq!(got.map(|s| s.lone_surrogates()), want.as_ref().map(|_| fixed.is_some()), "{case}");
            assert_eq!(got.map(|s| s.to_cow().into_owned()), want, "{case}");
        }
    }
}
