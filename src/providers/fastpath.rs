//! The toolkit of the exact-bytes fast paths.
//!
//! Providers send their hot events compact, members in a fixed order, with
//! plain strings and small numbers. A dialect reads such an event with a
//! [`Cursor`] straight from its bytes (no allocation: every key, string and
//! raw value is borrowed from the payload) into the very view serde_json
//! would build, and declines with `None` on anything else: whitespace
//! (but for the spaced readers below),
//! escaped keys, members or shapes it does not expect, a number serde_json
//! would read differently. A declined event goes through the dialect's
//! serde_json path, so a fast path may decline anything but must never read
//! a document differently: each dialect keeps a test comparing the two.
//!
//! Three ways to read:
//!
//! * **Exact prefixes** ([`Cursor::eat_str`]): the leading members as the
//!   provider writes them, byte for byte (Anthropic's
//!   `{"type":"content_block_delta","index":`).
//! * **Member by member** ([`Cursor::object`], or [`Cursor::key`] and
//!   [`Cursor::next_member`] by hand): each key with a reader for its value,
//!   [`Cursor::skip`] for the members the view ignores, [`Seen`] to decline
//!   a member named twice where serde_json's derived structs would fail;
//!   [`string_members`] for a head of plain strings (an event's `type`, its
//!   `id`) wherever they sit in the object.
//! * **Spaced** ([`Cursor::spaced_object`], [`Cursor::spaced_array`]):
//!   member by member as above, but with JSON whitespace accepted between
//!   tokens, for the provider that does not write compactly (Gemini:
//!   `{"candidates": [{"content": {…`). [`Cursor::skip`] accepts both forms:
//!   the values it steps over are raw text serde_json reads into the same
//!   value (no lone surrogate, no number beyond `f64`).
//!
//! Every reader returns `None` (the event declined) without a guarantee on
//! where the cursor stopped.

use crate::json::scan::json_plain_prefix;

use super::view::{self, JsonStr};

/// A position in a JSON text, read forward by the fast paths.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    /// The whole text (a payload).
    text: &'a str,
    /// The offset of the next byte to read.
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    #[inline]
    pub(crate) fn new(text: &'a str) -> Self {
        Cursor { text, at: 0 }
    }

    /// A cursor at offset `at` of `text` (a known prefix skipped).
    #[inline]
    pub(crate) fn at(text: &'a str, at: usize) -> Self {
        Cursor { text, at }
    }

    /// The offset of the next byte.
    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.at
    }

    /// `Some` when the whole text was read (nothing trails, not even
    /// whitespace).
    #[inline]
    pub(crate) fn end(&self) -> Option<()> {
        (self.at == self.text.len()).then_some(())
    }

    /// The next byte, not consumed.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Consumes the byte `b`.
    #[inline]
    pub(crate) fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// Consumes the exact bytes of `s` (a prefix as providers write it).
    #[inline]
    pub(crate) fn eat_str(&mut self, s: &str) -> Option<()> {
        let rest = self.text.as_bytes().get(self.at..)?;
        rest.starts_with(s.as_bytes()).then(|| self.at += s.len())
    }

    /// After a member's value: `,` (another member follows: `true`) or `}`
    /// (the object ends: `false`). Works for arrays' `,` too, whose end the
    /// caller eats.
    #[inline]
    pub(crate) fn next_member(&mut self) -> Option<bool> {
        let b = self.peek()?;
        self.at += 1;
        match b {
            b',' => Some(true),
            b'}' => Some(false),
            _ => None,
        }
    }

    /// An object, each member's key given to `member`, which reads the
    /// value from the cursor (or declines). `{}` included.
    #[inline]
    pub(crate) fn object(&mut self, mut member: impl FnMut(&'a str, &mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            let key = self.key()?;
            member(key, self)?;
            if !self.next_member()? {
                return Some(());
            }
        }
    }

    /// A string without escapes or control characters: its text (a byte
    /// loop: keys and names are short).
    #[inline]
    pub(crate) fn plain(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        if b.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let i = start + json_plain_prefix(b.get(start..)?);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        self.at = i + 1;
        self.text.get(start..i)
    }

    /// `"key":` (a plain key: an escaped one declines).
    #[inline]
    pub(crate) fn key(&mut self) -> Option<&'a str> {
        let k = self.plain()?;
        self.eat(b':')?;
        Some(k)
    }

    /// A string, decoded lazily, as [`JsonStr`]'s own deserializer reads it:
    /// escapes checked as serde_json checks them, a lone surrogate escape
    /// accepted (flagged; decoded to U+FFFD).
    pub(crate) fn string(&mut self) -> Option<JsonStr<'a>> {
        if let Some(text) = self.plain() {
            return Some(JsonStr::plain(text));
        }
        let (v, end) = view::scan_lenient(self.text, self.at)?;
        self.at = end;
        Some(v)
    }

    /// A string read strictly ([`view::scan_str`]): a lone surrogate escape
    /// declines too (for the paths that leave its warning to serde_json's).
    #[inline]
    pub(crate) fn strict_string(&mut self) -> Option<JsonStr<'a>> {
        let (s, end) = view::scan_str(self.text, self.at)?;
        self.at = end;
        Some(s)
    }

    /// `null`.
    #[inline]
    pub(crate) fn null(&mut self) -> Option<()> {
        self.eat_str("null")
    }

    /// Whether the next value is `null` (consumed if so).
    #[inline]
    pub(crate) fn is_null(&mut self) -> Option<bool> {
        if self.peek()? == b'n' {
            self.null()?;
            return Some(true);
        }
        Some(false)
    }

    /// A string or `null`.
    #[inline]
    pub(crate) fn opt_string(&mut self) -> Option<Option<JsonStr<'a>>> {
        if self.is_null()? {
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A plain string ([`plain`](Self::plain)) or `null`.
    #[inline]
    pub(crate) fn opt_plain(&mut self) -> Option<Option<&'a str>> {
        if self.is_null()? {
            return Some(None);
        }
        self.plain().map(Some)
    }

    /// An unsigned integer of at most `max` digits as serde_json reads it
    /// (no sign, no leading zero, no fraction or exponent): its text.
    #[inline]
    pub(crate) fn digits(&mut self, max: usize) -> Option<&'a str> {
        let b = self.text.as_bytes().get(self.at..)?;
        let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > max || (n > 1 && b[0] == b'0') || matches!(b.get(n), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let text = &self.text[self.at..self.at + n];
        self.at += n;
        Some(text)
    }

    /// A `u32` of at most 9 digits.
    #[inline(always)]
    pub(crate) fn small(&mut self) -> Option<u32> {
        // (At most 9 digits: below `u32::MAX`.)
        self.int(9).map(|n| n as u32)
    }

    /// A `u64` of at most 18 digits.
    #[inline(always)]
    pub(crate) fn uint(&mut self) -> Option<u64> {
        self.int(18)
    }

    /// An unsigned integer of at most `max` (≤ 18) digits as
    /// [`digits`](Self::digits) reads it, its value summed as it is read.
    #[inline(always)]
    fn int(&mut self, max: usize) -> Option<u64> {
        let b = self.text.as_bytes();
        let start = self.at;
        let mut i = start;
        let mut n: u64 = 0;
        while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
            if i - start == max {
                return None;
            }
            n = n * 10 + u64::from(d - b'0');
            i += 1;
        }
        let len = i - start;
        if len == 0 || (len > 1 && b[start] == b'0') || matches!(b.get(i), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.at = i;
        Some(n)
    }

    /// A string ([`string`](Self::string)), an unsigned integer of at most
    /// 18 digits or `null`: its raw text.
    pub(crate) fn scalar(&mut self) -> Option<&'a str> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'n' => self.null()?,
            _ => {
                self.digits(18)?;
            }
        }
        Some(&self.text[start..self.at])
    }

    /// A number by JSON's grammar (`-`, no leading zero, fraction and
    /// exponent): its text, not converted.
    pub(crate) fn number(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let start = self.at;
        let mut i = start + usize::from(b.get(start) == Some(&b'-'));
        i = match b.get(i)? {
            b'0' => i + 1,
            b'1'..=b'9' => digits(i + 1),
            _ => return None,
        };
        if b.get(i) == Some(&b'.') {
            let end = digits(i + 1);
            if end == i + 1 {
                return None;
            }
            i = end;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            i += usize::from(matches!(b.get(i), Some(b'+' | b'-')));
            let end = digits(i);
            if end == i {
                return None;
            }
            i = end;
        }
        self.at = i;
        Some(&self.text[start..i])
    }

    /// Steps over JSON whitespace (space, tab, line feed, carriage return:
    /// what serde_json allows between tokens).
    #[inline]
    pub(crate) fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// An object as [`object`](Self::object) reads it, but with whitespace
    /// allowed around every token, for the providers that write
    /// `{"key": value,"next": …}` (Gemini): `member` gets each (plain) key
    /// with the cursor at its value, whitespace skipped, and reads the
    /// value; the whitespace after it is skipped here.
    pub(crate) fn spaced_object(&mut self, mut member: impl FnMut(&'a str, &mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.plain()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            member(key, self)?;
            self.ws();
            if !self.next_member()? {
                return Some(());
            }
            self.ws();
        }
    }

    /// An array, whitespace allowed around every token (see
    /// [`spaced_object`](Self::spaced_object)): `item` reads each element,
    /// the cursor at it. `[]` included.
    pub(crate) fn spaced_array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        self.ws();
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            item(self)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.ws();
                }
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A value a view ignores, read only to step over it: its raw text (first
    /// byte to last), which serde_json reads into the very value it reads in
    /// the whole document. Whitespace is allowed between its tokens (the
    /// spaced providers; compact text is the same without it). Strings and
    /// keys are read strictly ([`strict_string`](Self::strict_string): a
    /// lone surrogate escape declines); numbers by JSON's grammar, at most 40
    /// bytes long with an exponent of at most two digits (never out of
    /// `f64`'s range, which serde_json refuses); nested at most
    /// [`MAX_DEPTH`] deep.
    pub(crate) fn skip(&mut self) -> Option<&'a str> {
        let start = self.at;
        self.skip_nested(0)?;
        Some(&self.text[start..self.at])
    }

    /// [`skip`](Self::skip) inside `depth` containers.
    fn skip_nested(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string()?,
            b'n' => self.null()?,
            b't' => self.eat_str("true")?,
            b'f' => self.eat_str("false")?,
            b'[' if depth < MAX_DEPTH => self.spaced_array(|c| c.skip_nested(depth + 1))?,
            b'{' if depth < MAX_DEPTH => {
                self.eat(b'{')?;
                self.ws();
                if self.eat(b'}').is_some() {
                    return Some(());
                }
                loop {
                    self.skip_string()?;
                    self.ws();
                    self.eat(b':')?;
                    self.ws();
                    self.skip_nested(depth + 1)?;
                    self.ws();
                    if !self.next_member()? {
                        return Some(());
                    }
                    self.ws();
                }
            }
            b'-' | b'0'..=b'9' => {
                // serde_json refuses a number whose value overflows `f64`
                // (`1e400`): a long one or an exponent of three digits
                // declines (at most 10^139: finite).
                let n = self.number()?;
                // (An exponent of three digits needs five bytes: `1e100`.)
                let exp = || n.find(['e', 'E']).map_or(0, |e| n[e + 1..].trim_start_matches(['+', '-']).len());
                if n.len() > 40 || n.len() >= 5 && exp() > 2 {
                    return None;
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// A string stepped over as [`strict_string`](Self::strict_string)
    /// reads it: one without escapes found by a vectorized search for its
    /// closing quote (long base64 signatures), any other read by
    /// `strict_string`.
    #[inline]
    fn skip_string(&mut self) -> Option<()> {
        let b = self.text.as_bytes();
        let start = self.at + 1;
        let rest = b.get(start..)?;
        // A short string (a key, a name, an enum value) eight bytes at a
        // time: the vectorized search costs more to set up than it saves on
        // a few words.
        let head = &rest[..rest.len().min(SHORT_STRING)];
        let n = json_plain_prefix(head);
        if n < head.len() {
            if rest[n] == b'"' {
                self.at = start + n + 1;
                return Some(());
            }
            return self.strict_string().map(drop);
        }
        // The head is plain: the search and the control check go on after it.
        let from = head.len();
        if let Some(k) = memchr::memchr2(b'"', b'\\', &rest[from..]) {
            let n = from + k;
            // (OR-folded, not searched: vectorized.)
            let control = rest[from..n].iter().fold(0u8, |m, &c| m | u8::from(c < 0x20));
            if rest[n] == b'"' && control == 0 {
                self.at = start + n + 1;
                return Some(());
            }
        }
        self.strict_string().map(drop)
    }

    /// `true` or `false`.
    #[inline]
    pub(crate) fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.eat_str("true").map(|()| true),
            b'f' => self.eat_str("false").map(|()| false),
            _ => None,
        }
    }
}

/// The longest string head [`Cursor::skip_string`] reads eight bytes at a
/// time before it searches the rest vectorized.
const SHORT_STRING: usize = 32;

/// The deepest a [`Cursor::skip`] goes into nested arrays and objects
/// (serde_json's own limit is 128): deeper declines.
pub(crate) const MAX_DEPTH: usize = 32;

/// The plain-string members `keys` of a compact JSON object, each `None`
/// when absent or `null`; every other member skipped
/// ([`Cursor::skip`]). `None` (the caller's serde_json path decides) when
/// the text is not such an object, a key is named twice, or one of `keys`
/// is anything but a plain string or `null`.
pub(crate) fn string_members<'a, const N: usize>(text: &'a str, keys: [&str; N]) -> Option<[Option<&'a str>; N]> {
    let mut out = [None; N];
    let mut seen = Seen::default();
    let mut c = Cursor::new(text);
    c.object(|key, c| match keys.iter().position(|k| *k == key) {
        Some(i) => {
            seen.first(1 << i)?;
            out[i] = c.opt_plain()?;
            Some(())
        }
        None => c.skip().map(drop),
    })?;
    c.end()?;
    Some(out)
}

/// The members a fast path has read, by bit: a member named twice declines
/// (serde_json's derived structs fail on a duplicate field).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Seen(u32);

impl Seen {
    /// Marks `bit` read; `None` when it was already.
    #[inline]
    pub(crate) fn first(&mut self, bit: u32) -> Option<()> {
        if self.0 & bit != 0 {
            return None;
        }
        self.0 |= bit;
        Some(())
    }
}

/// Whether `json` opens a JSON object (after whitespace): serde's derived
/// struct readers also accept an array of the members in order, which no
/// payload read into a struct is.
#[inline]
pub(crate) fn is_object(json: &[u8]) -> bool {
    json.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json makes of `doc` as a string (decoded), if anything.
    fn serde_string(doc: &str) -> Option<String> {
        serde_json::from_str::<String>(doc).ok()
    }

    /// The lenient reader gives what `JsonStr::from_raw` gives for the same
    /// text (its flags from what its scan saw), or declines where it does.
    #[test]
    fn string_is_from_raw() {
        let pieces = view::STRING_PIECES;
        let mut read = 0;
        for x in pieces {
            for y in pieces {
                for z in pieces {
                    let doc = format!("\"{x}{y}{z}\"");
                    let mut c = Cursor::new(&doc);
                    let got = c.string();
                    let whole = got.is_some() && c.pos() == doc.len();
                    match got {
                        Some(s) if whole => {
                            assert_eq!(Some(s), view::JsonStr::from_raw(&doc), "{doc}");
                            read += 1;
                        }
                        // Ended early (an unescaped quote): the same string
                        // from the text it read.
                        Some(s) => assert_eq!(Some(s), view::JsonStr::from_raw(&doc[..c.pos()]), "{doc}"),
                        None => {
                            // serde_json's skip refuses it too (what `from_raw` is given).
                            assert!(serde_json::from_str::<&serde_json::value::RawValue>(&doc).is_err(), "{doc}");
                        }
                    }
                }
            }
        }
        assert!(read > 500, "{read}");
    }

    #[test]
    fn strings_are_serde_json_or_nothing() {
        for doc in view::TRICKY_JSON_STRINGS.iter().copied().chain([r#""a""#, r#""""#, r#""\u00e9""#, "\"a\nb\""]) {
            let mut c = Cursor::new(doc);
            let lenient = c.string();
            if let Some(s) = &lenient {
                assert_eq!(c.pos(), doc.len(), "{doc}");
                // A lone surrogate is the one string serde_json refuses and
                // the lenient reader takes (flagged).
                if !s.lone_surrogates() {
                    assert_eq!(Some(s.to_cow().into_owned()), serde_string(doc), "{doc}");
                }
            }
            let mut c = Cursor::new(doc);
            if let Some(s) = c.strict_string() {
                assert_eq!(c.pos(), doc.len(), "{doc}");
                assert_eq!(Some(s.to_cow().into_owned()), serde_string(doc), "{doc}");
                assert!(lenient.is_some(), "{doc}");
            }
            let mut c = Cursor::new(doc);
            if let Some(p) = c.plain() {
                assert_eq!(Some(p.to_owned()), serde_string(doc), "{doc}");
            }
        }
        assert!(Cursor::new(r#""\ud800""#).string().is_some_and(|s| s.lone_surrogates()));
        assert!(Cursor::new(r#""\ud800""#).strict_string().is_none());
        assert!(Cursor::new(r#""a\"b""#).plain().is_none());
        assert!(Cursor::new("\"a\tb\"").string().is_none());
    }

    #[test]
    fn numbers_are_serde_json_or_nothing() {
        for doc in ["0", "7", "01", "-1", "1e2", "1.0", "1700000000", "4294967295", "4294967296", "123456789012345678"]
        {
            let u32_serde = serde_json::from_str::<u32>(doc).ok();
            let u64_serde = serde_json::from_str::<u64>(doc).ok();
            let mut c = Cursor::new(doc);
            if let Some(n) = c.small() {
                assert_eq!((Some(n), c.end()), (u32_serde, Some(())), "{doc}");
            }
            let mut c = Cursor::new(doc);
            if let Some(n) = c.uint() {
                assert_eq!((Some(n), c.end()), (u64_serde, Some(())), "{doc}");
            }
        }
        assert_eq!(Cursor::new("7,").small(), Some(7));
        assert_eq!(Cursor::new("01").small(), None);
        assert_eq!(Cursor::new("1.5").uint(), None);
        assert_eq!(Cursor::new("1234567890").small(), None);
        assert_eq!(Cursor::new("1234567890123456789").uint(), None);
    }

    #[test]
    fn objects_read_member_by_member() {
        let doc = r#"{"type":"x","n":12,"s":"a\nb","z":null,"t":true,"f":false,"l":[],"o":{}}"#;
        let mut seen = Vec::new();
        let mut c = Cursor::new(doc);
        c.object(|k, c| {
            seen.push((k, c.skip()?));
            Some(())
        })
        .unwrap();
        assert_eq!(c.end(), Some(()));
        let want = [
            ("type", r#""x""#),
            ("n", "12"),
            ("s", r#""a\nb""#),
            ("z", "null"),
            ("t", "true"),
            ("f", "false"),
            ("l", "[]"),
            ("o", "{}"),
        ];
        assert_eq!(seen, want);
        assert_eq!(Cursor::new("{}").object(|_, _| None), Some(()));
        // An object not written compactly declines (a skipped value may be
        // spaced: `skip` reads both forms).
        for doc in [r#"{ "a":1}"#, r#"{"a" :1}"#, r#"{"a":1 }"#, r#"{"\u0061":1}"#] {
            assert!(Cursor::new(doc).object(|_, c| c.skip().map(drop)).is_none(), "{doc}");
        }
        assert!(Cursor::new(r#"{"a":[1 ]}"#).object(|_, c| c.skip().map(drop)).is_some());
        // Trailing bytes are the caller's to refuse.
        let mut c = Cursor::new(r#"{"a":1} "#);
        assert!(c.object(|_, c| c.skip().map(drop)).is_some() && c.end().is_none());
    }

    /// Whatever `skip` steps over is one JSON value serde_json reads.
    #[test]
    fn skip_is_serde_json_or_nothing() {
        let scalars = ["0", "-0", "01", "-", "1.", "1.5", "-2e10", "3E+2", "4e-", ".5", "1e400", "tru", "nul", "x"];
        let mut values: Vec<String> = scalars.iter().map(|s| (*s).to_owned()).collect();
        values.extend(view::TRICKY_JSON_STRINGS.iter().map(|s| (*s).to_owned()));
        for v in values.clone() {
            values.push(format!("[{v},{v}]"));
            values.push(format!(r#"{{"k":{v},"\n":[{v}],"":{{}}}}"#));
            values.push(format!("[{v}"));
            values.push(format!(r#"{{{v}:1}}"#));
        }
        values.push("[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH));
        let mut stepped = 0;
        for v in &values {
            // As a reader sees it: a value, then `,`.
            let doc = format!("{v},");
            let mut c = Cursor::new(&doc);
            if let Some(raw) = c.skip().filter(|_| c.next_member() == Some(true)) {
                stepped += 1;
                assert_eq!(raw, v.as_str());
                let ignored = serde_json::from_str::<serde::de::IgnoredAny>(raw);
                assert!(ignored.is_ok(), "{raw}: {ignored:?}");
            }
        }
        // A lone surrogate escape (a third of the tricky strings) declines.
        assert!(stepped > values.len() / 4, "{stepped} of {}", values.len());
        assert!(Cursor::new(&("[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1))).skip().is_none());
    }

    /// Strings around [`SHORT_STRING`] (the head read word by word, the rest
    /// searched), a control character, an escape or a closing quote at every
    /// place: stepped over exactly when serde_json reads them.
    #[test]
    fn strings_past_the_short_head_are_serde_json_or_nothing() {
        for len in [0, 1, 7, 8, 31, 32, 33, 40, 64, 100] {
            for at in 0..len {
                for special in [r"\u0001", r"\n", r"\u00e9", r"\\", r"\", "\""] {
                    let mut text = "a".repeat(len);
                    text.replace_range(at..at + 1, special);
                    let doc = format!("\"{text}\",");
                    let mut c = Cursor::new(&doc);
                    let stepped = c.skip().filter(|_| c.next_member() == Some(true));
                    let serde = serde_json::from_str::<serde::de::IgnoredAny>(&doc[..doc.len() - 1]);
                    assert_eq!(stepped.is_some(), serde.is_ok(), "{doc}");
                }
                // A raw control character, unescaped.
                let mut text = "a".repeat(len);
                text.replace_range(at..at + 1, "\u{1}");
                let doc = format!("\"{text}\",");
                assert!(Cursor::new(&doc).skip().is_none(), "{doc:?}");
            }
        }
    }

    #[test]
    fn string_members_are_serde_json_or_nothing() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Head<'a> {
            #[serde(rename = "type", default, borrow)]
            ty: Option<&'a str>,
            #[serde(default, borrow)]
            id: Option<&'a str>,
        }
        let docs = [
            r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":1}}}"#,
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"choices":[{"delta":{"content":"\u00e9"}}]}"#,
            r#"{"type":null,"id":"x","n":-1.5e3}"#,
            r#"{"type":"a","type":"b"}"#,
            r#"{"type":"a\nb"}"#,
            r#"{"type":5}"#,
            r#"["a","b"]"#,
            r#"{"type":"a"} "#,
            r#"{}"#,
        ];
        for doc in docs {
            if let Some([ty, id]) = string_members(doc, ["type", "id"]) {
                let serde: Head<'_> = serde_json::from_str(doc).unwrap();
                assert_eq!(Head { ty, id }, serde, "{doc}");
            }
        }
        assert_eq!(string_members(docs[0], ["type", "id"]), Some([Some("message_start"), None]));
        assert_eq!(string_members(docs[1], ["type", "id"]), Some([None, Some("chatcmpl-1")]));
        for doc in &docs[3..8] {
            assert_eq!(string_members(doc, ["type", "id"]), None, "{doc}");
        }
    }

    #[test]
    fn prefixes_and_literals() {
        let mut c = Cursor::new(r#"{"type":"ping"}"#);
        assert!(c.eat_str(r#"{"type":"pong"#).is_none());
        assert_eq!(c.pos(), 0);
        c.eat_str(r#"{"type":"#).unwrap();
        assert_eq!(c.pos(), 8);
        assert_eq!(c.opt_plain(), Some(Some("ping")));
        assert_eq!(c.next_member(), Some(false));
        assert_eq!(c.end(), Some(()));
        let mut c = Cursor::at("xnull,", 1);
        assert_eq!(c.opt_string(), Some(None));
        assert_eq!(c.next_member(), Some(true));
        assert!(Cursor::new("nul").null().is_none());
        assert!(Cursor::new("").peek().is_none());
    }

    #[test]
    fn a_member_twice_is_seen() {
        let mut seen = Seen::default();
        assert!(seen.first(1).is_some() && seen.first(2).is_some());
        assert!(seen.first(1).is_none());
    }

    #[test]
    fn objects_are_told_from_arrays() {
        assert!(is_object(b" \n{\"a\":1}"));
        assert!(!is_object(b"[\"a\"]"));
        assert!(!is_object(b""));
    }

    /// What `skip` steps over (whitespace anywhere between tokens)
    /// is one JSON value serde_json reads, with no surrogate left alone;
    /// `spaced_object` gives each member's key and value.
    #[test]
    fn spaced_reading_is_serde_json_or_nothing() {
        let scalars = [
            "0",
            "-0",
            "01",
            "1.",
            "1.5",
            "-2e10",
            "1e400",
            "1e-400",
            "1e99",
            "123456789012345678901234567890",
            "tru",
            "x",
            r#""a\nb""#,
            r#""\ud83d\ude00""#,
        ];
        let mut values: Vec<String> = scalars.iter().map(|s| (*s).to_owned()).collect();
        values.extend(view::TRICKY_JSON_STRINGS.iter().map(|s| (*s).to_owned()));
        for v in values.clone() {
            values.push(format!("[ {v} ,\t{v}\n]"));
            values.push(format!(r#"{{ "k" : {v},"\n": [{v}] , "":{{ }} }}"#));
            values.push(format!("[{v} {v}]"));
            values.push(format!(r#"{{"k" {v}}}"#));
        }
        let mut stepped = 0;
        for v in &values {
            // As a reader sees it: a value, then `,`.
            let doc = format!("{v} ,");
            let mut c = Cursor::new(&doc);
            if let Some(raw) = c.skip().filter(|_| {
                c.ws();
                c.eat(b',').is_some()
            }) {
                stepped += 1;
                assert_eq!(raw, v.as_str());
                let value = serde_json::from_str::<serde_json::Value>(raw);
                assert!(value.is_ok(), "{raw}: {value:?}");
            }
        }
        assert!(stepped > values.len() / 4, "{stepped} of {}", values.len());
        for lone in [r#""\ud800""#, r#"{"a": ["\udc00"]}"#, r#"{"\ud800": 1}"#, "\"a\tb\"", "{\"a\nb\": 1}", "\"ab"] {
            assert!(Cursor::new(lone).skip().is_none(), "{lone}");
        }
        let long = format!("\"{}\"", "QUJD".repeat(600));
        assert_eq!(Cursor::new(&long).skip(), Some(long.as_str()));
        let doc = "{ \"a\" :\t1 ,\"b\": [ 2 , {} ] ,\r\n\"c\":\"x\" }";
        let mut seen = Vec::new();
        let mut c = Cursor::new(doc);
        c.spaced_object(|k, c| {
            seen.push((k, c.skip()?));
            Some(())
        })
        .unwrap();
        assert_eq!(c.end(), Some(()));
        assert_eq!(seen, [("a", "1"), ("b", "[ 2 , {} ]"), ("c", r#""x""#)]);
        for bad in ["{,}", r#"{"a" 1}"#, r#"{"a":1,}"#, "[1,]", "[,]"] {
            let mut c = Cursor::new(bad);
            let read = c.spaced_object(|_, c| c.skip().map(drop)).is_some();
            let mut c = Cursor::new(bad);
            assert!(!read && c.skip().is_none(), "{bad}");
        }
    }

    #[test]
    fn booleans_are_the_literals() {
        for (doc, want) in [("true,", Some(true)), ("false}", Some(false)), ("tru", None), ("null", None), ("1", None)]
        {
            let mut c = Cursor::new(doc);
            assert_eq!(c.boolean(), want, "{doc}");
            if want.is_some() {
                assert_eq!(c.pos(), doc.len() - 1, "{doc}");
            }
        }
    }
}
