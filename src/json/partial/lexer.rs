//! The tokenizer: bytes in, JSON scalars out, resumable at any byte.
//!
//! [`Lexer`] reads the inside of one token at a time: a string (decoded into
//! [`sbuf`](Lexer::sbuf), escapes and `\u` surrogate pairs included), a number (its text kept in
//! [`nbuf`](Lexer::nbuf), checked against RFC 8259's grammar), or one of the literals `true`,
//! `false`, `null`. A multi-byte character, an escape or a `\u` sequence split across fragments
//! is carried over in a few bytes of state, so a token may end in any later fragment. Between
//! tokens ([`Scan::Between`]) the lexer reads nothing: the structure ([`super::structure`]) reads
//! those bytes, and starts a token with [`begin_string`](Lexer::begin_string),
//! [`begin_number`](Lexer::begin_number) or [`begin_literal`](Lexer::begin_literal) where the
//! grammar allows a value.
//!
//! Strings are scanned eight bytes at a time for the next quote or backslash and validated with
//! the standard UTF-8 validator (not at all when the caller holds the text as `&str`). Errors are
//! returned at their offset; the parser makes them sticky.

use serde_json::Value;

use super::super::error::PartialJsonError;
use super::super::scan::{ascii_plain_prefix, escape_char, find_quote_or_backslash};

/// What the tokenizer is in the middle of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scan {
    /// Between tokens: the structure reads the next byte.
    Between,
    /// Inside a string.
    Str(StrState),
    /// Inside a number.
    Number(NumState),
    /// Inside `true`, `false` or `null`: `matched` bytes of `word` read so far.
    Literal { word: &'static [u8], matched: u8 },
}

/// Inside a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StrState {
    /// Plain content.
    Normal,
    /// After a backslash.
    Escape,
    /// Inside `\u`: `digits` hex digits read so far, accumulated in `code`; `high` is the pending
    /// high surrogate when this is the second escape of a pair.
    Hex { code: u32, digits: u8, high: Option<u32> },
    /// After a high surrogate escape: expecting `\`.
    PairBackslash { high: u32 },
    /// After a high surrogate escape and `\`: expecting `u`.
    PairU { high: u32 },
}

/// Inside a number (the grammar of RFC 8259).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NumState {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpInt,
}

impl NumState {
    /// Whether the number may end here.
    pub(super) fn is_terminal(self) -> bool {
        matches!(self, NumState::Zero | NumState::Int | NumState::Frac | NumState::ExpInt)
    }
}

pub(super) const TRUE: &[u8] = b"true";
pub(super) const FALSE: &[u8] = b"false";
pub(super) const NULL: &[u8] = b"null";

/// The tokenizer's state: the token being read and what it holds so far.
#[derive(Debug)]
pub(super) struct Lexer {
    /// The token being read.
    pub(super) scan: Scan,
    /// The string being decoded (a key or a value).
    pub(super) sbuf: String,
    /// Bytes of an incomplete UTF-8 character at the end of the previous fragment.
    utf8: [u8; 4],
    utf8_len: u8,
    /// Offset of the first byte of `utf8`.
    utf8_offset: u64,
    /// The number being read.
    pub(super) nbuf: Vec<u8>,
    /// Offset of the first byte of `nbuf`.
    num_offset: u64,
    /// Whether a lone surrogate escape decodes to U+FFFD instead of failing.
    pub(super) lossy_surrogates: bool,
    /// Lone surrogate escapes replaced so far.
    pub(super) replaced_surrogates: u64,
}

impl Lexer {
    /// Between tokens, nothing held.
    pub(super) fn new() -> Self {
        Lexer {
            scan: Scan::Between,
            sbuf: String::new(),
            utf8: [0; 4],
            utf8_len: 0,
            utf8_offset: 0,
            nbuf: Vec::new(),
            num_offset: 0,
            lossy_surrogates: false,
            replaced_surrogates: 0,
        }
    }

    /// Ready for a new document (the buffers and the surrogate setting are kept).
    pub(super) fn reset(&mut self) {
        self.scan = Scan::Between;
        self.sbuf.clear();
        self.utf8_len = 0;
        self.nbuf.clear();
        self.replaced_surrogates = 0;
    }

    /// A string begins (its opening quote read).
    #[inline]
    pub(super) fn begin_string(&mut self) {
        self.sbuf.clear();
        self.scan = Scan::Str(StrState::Normal);
    }

    /// A number begins with `byte` (`-` or a digit), at `offset`.
    #[inline]
    pub(super) fn begin_number(&mut self, byte: u8, offset: u64) {
        self.nbuf.clear();
        self.nbuf.push(byte);
        self.num_offset = offset;
        self.scan = Scan::Number(match byte {
            b'-' => NumState::Minus,
            b'0' => NumState::Zero,
            _ => NumState::Int,
        });
    }

    /// A literal begins (its first byte read).
    #[inline]
    pub(super) fn begin_literal(&mut self, word: &'static [u8]) {
        self.scan = Scan::Literal { word, matched: 1 };
    }

    /// Reads more of a literal from `input[*i..]`: its value once its last byte is read.
    #[inline]
    pub(super) fn literal(
        &mut self,
        input: &[u8],
        i: &mut usize,
        base: u64,
    ) -> Result<Option<Value>, PartialJsonError> {
        let Scan::Literal { word, mut matched } = self.scan else { return Ok(None) };
        while *i < input.len() {
            if input[*i] != word[matched as usize] {
                return Err(PartialJsonError::invalid("invalid literal", base + *i as u64));
            }
            *i += 1;
            matched += 1;
            if matched as usize == word.len() {
                let value = match word {
                    TRUE => Value::Bool(true),
                    FALSE => Value::Bool(false),
                    _ => Value::Null,
                };
                return Ok(Some(value));
            }
        }
        self.scan = Scan::Literal { word, matched };
        Ok(None)
    }

    /// Reads more of a number from `input[*i..]`: `true` once a byte after it shows that it
    /// ended (that byte is left for the structure), its text then whole in `nbuf`.
    #[inline]
    pub(super) fn number(&mut self, input: &[u8], i: &mut usize, base: u64) -> Result<bool, PartialJsonError> {
        let Scan::Number(mut state) = self.scan else { return Ok(false) };
        let start = *i;
        while *i < input.len() {
            let byte = input[*i];
            let next = match (state, byte) {
                (NumState::Minus, b'0') => NumState::Zero,
                (NumState::Minus, b'1'..=b'9') => NumState::Int,
                (NumState::Int, b'0'..=b'9') => NumState::Int,
                (NumState::Zero | NumState::Int, b'.') => NumState::Dot,
                (NumState::Zero | NumState::Int | NumState::Frac, b'e' | b'E') => NumState::Exp,
                (NumState::Dot | NumState::Frac, b'0'..=b'9') => NumState::Frac,
                (NumState::Exp, b'+' | b'-') => NumState::ExpSign,
                (NumState::Exp | NumState::ExpSign | NumState::ExpInt, b'0'..=b'9') => NumState::ExpInt,
                _ if state.is_terminal() && !byte.is_ascii_digit() => {
                    // The number ended; the byte is structural and read again.
                    self.nbuf.extend_from_slice(&input[start..*i]);
                    self.scan = Scan::Number(state);
                    return Ok(true);
                }
                _ => {
                    self.nbuf.extend_from_slice(&input[start..*i]);
                    return Err(PartialJsonError::invalid("invalid number", base + *i as u64));
                }
            };
            state = next;
            *i += 1;
        }
        self.nbuf.extend_from_slice(&input[start..]);
        self.scan = Scan::Number(state);
        Ok(false)
    }

    /// The value of the complete number in `nbuf`, converted by serde_json (so values are
    /// identical to its own).
    pub(super) fn number_value(&self) -> Result<Value, PartialJsonError> {
        match serde_json::from_slice::<Value>(&self.nbuf) {
            Ok(value @ Value::Number(_)) => Ok(value),
            _ => Err(PartialJsonError::invalid("number out of range", self.num_offset)),
        }
    }

    /// Reads more of a string from `input[*i..]` into `sbuf`: `true` once its closing quote is
    /// read (`*i` then after it; the scan is still [`Scan::Str`] until the structure takes the
    /// string). `text`: `input` as `&str`, when the caller has it (no validation then).
    // Inlined into each monomorphization of the driver, as it was when it took the event
    // callback: out of line (called from every one of them) it cost 0.6 % more instructions on
    // the tool corpora's fold.
    #[inline(always)]
    pub(super) fn string(
        &mut self,
        input: &[u8],
        text: Option<&str>,
        i: &mut usize,
        base: u64,
    ) -> Result<bool, PartialJsonError> {
        let Scan::Str(mut state) = self.scan else { return Ok(false) };
        loop {
            if *i >= input.len() {
                self.scan = Scan::Str(state);
                return Ok(false);
            }
            match state {
                StrState::Normal => {
                    if self.utf8_len > 0 {
                        self.finish_utf8(input, i)?;
                        if self.utf8_len > 0 {
                            continue; // fragment exhausted
                        }
                    }
                    let rest = &input[*i..];
                    // Fast path: printable ASCII needs no validation.
                    let ascii = ascii_plain_prefix(rest);
                    match text.and_then(|t| t.get(*i..*i + ascii)) {
                        Some(run) => self.sbuf.push_str(run),
                        None => {
                            if let Ok(run) = std::str::from_utf8(&rest[..ascii]) {
                                self.sbuf.push_str(run);
                            }
                        }
                    }
                    let end = match rest.get(ascii) {
                        None | Some(b'"' | b'\\') => ascii,
                        Some(_) => ascii + find_quote_or_backslash(&rest[ascii..]),
                    };
                    if end > ascii {
                        let known = text.and_then(|t| t.get(*i + ascii..*i + end));
                        self.plain(&rest[ascii..end], known, base + (*i + ascii) as u64, end == rest.len())?;
                    }
                    *i += end;
                    match input.get(*i) {
                        None => {}
                        Some(b'"') => {
                            *i += 1;
                            return Ok(true);
                        }
                        Some(_) => {
                            // A backslash. Common escapes are decoded right here (fast path).
                            let simple = match input.get(*i + 1) {
                                Some(b'n') => Some(b'\n'),
                                Some(b'"') => Some(b'"'),
                                Some(b'\\') => Some(b'\\'),
                                Some(b't') => Some(b'\t'),
                                _ => None,
                            };
                            match simple {
                                Some(byte) => {
                                    self.sbuf.push(char::from(byte));
                                    *i += 2;
                                }
                                None => {
                                    *i += 1;
                                    state = StrState::Escape;
                                }
                            }
                        }
                    }
                }
                StrState::Escape => {
                    let byte = input[*i];
                    if byte == b'u' {
                        *i += 1;
                        state = StrState::Hex { code: 0, digits: 0, high: None };
                        continue;
                    }
                    let Some(decoded) = escape_char(byte) else {
                        return Err(PartialJsonError::invalid("invalid escape", base + *i as u64));
                    };
                    self.sbuf.push(decoded);
                    *i += 1;
                    state = StrState::Normal;
                }
                StrState::Hex { mut code, mut digits, high } => {
                    let offset = base + *i as u64;
                    let Some(digit) = (input[*i] as char).to_digit(16) else {
                        return Err(PartialJsonError::invalid("invalid \\u escape", offset));
                    };
                    *i += 1;
                    code = code * 16 + digit;
                    digits += 1;
                    if digits < 4 {
                        state = StrState::Hex { code, digits, high };
                        continue;
                    }
                    state = StrState::Normal;
                    let scalar = match (high, code) {
                        (Some(high), 0xDC00..=0xDFFF) => 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00),
                        (Some(_), _) if self.lossy_surrogates => {
                            // The pending high surrogate is lone; this escape starts afresh.
                            self.replace_surrogate();
                            match code {
                                0xD800..=0xDBFF => {
                                    state = StrState::PairBackslash { high: code };
                                    continue;
                                }
                                0xDC00..=0xDFFF => {
                                    self.replace_surrogate();
                                    continue;
                                }
                                code => code,
                            }
                        }
                        (Some(_), _) => return Err(PartialJsonError::invalid("unpaired high surrogate", offset)),
                        (None, 0xDC00..=0xDFFF) if self.lossy_surrogates => {
                            self.replace_surrogate();
                            continue;
                        }
                        (None, 0xDC00..=0xDFFF) => return Err(PartialJsonError::invalid("lone low surrogate", offset)),
                        (None, 0xD800..=0xDBFF) => {
                            state = StrState::PairBackslash { high: code };
                            continue;
                        }
                        (None, code) => code,
                    };
                    match char::from_u32(scalar) {
                        Some(c) => self.sbuf.push(c),
                        None => return Err(PartialJsonError::invalid("invalid \\u escape", offset)),
                    }
                }
                StrState::PairBackslash { high } => {
                    if input[*i] != b'\\' && self.lossy_surrogates {
                        // A lone high surrogate; the byte is read again as plain content.
                        self.replace_surrogate();
                        state = StrState::Normal;
                        continue;
                    }
                    if input[*i] != b'\\' {
                        return Err(PartialJsonError::invalid("unpaired high surrogate", base + *i as u64));
                    }
                    *i += 1;
                    state = StrState::PairU { high };
                }
                StrState::PairU { high } => {
                    if input[*i] != b'u' && self.lossy_surrogates {
                        // A lone high surrogate followed by another escape, read again.
                        self.replace_surrogate();
                        state = StrState::Escape;
                        continue;
                    }
                    if input[*i] != b'u' {
                        return Err(PartialJsonError::invalid("unpaired high surrogate", base + *i as u64));
                    }
                    *i += 1;
                    state = StrState::Hex { code: 0, digits: 0, high: Some(high) };
                }
            }
        }
    }

    fn replace_surrogate(&mut self) {
        self.sbuf.push(char::REPLACEMENT_CHARACTER);
        self.replaced_surrogates += 1;
    }

    /// Appends a run of string bytes without quote or backslash, starting at `offset`. `at_end`:
    /// the run ends the fragment, so an incomplete UTF-8 character there is carried over.
    /// `known`: the same bytes as `&str`, when the caller has them (no validation needed).
    fn plain(&mut self, run: &[u8], known: Option<&str>, offset: u64, at_end: bool) -> Result<(), PartialJsonError> {
        // Control characters are not allowed in JSON strings. `min` vectorizes well.
        let control = match run.iter().copied().min() {
            Some(min) if min < 0x20 => run.iter().position(|&b| b < 0x20),
            _ => None,
        };
        let checked = &run[..control.unwrap_or(run.len())];
        let checked_text = match known.and_then(|t| t.get(..checked.len())) {
            Some(t) => Ok(t),
            None => std::str::from_utf8(checked),
        };
        match checked_text {
            Ok(text) => self.sbuf.push_str(text),
            Err(error) => {
                let valid = error.valid_up_to();
                if let Ok(text) = std::str::from_utf8(&checked[..valid]) {
                    self.sbuf.push_str(text);
                }
                if error.error_len().is_none() && control.is_none() && at_end {
                    let tail = &checked[valid..];
                    self.utf8[..tail.len()].copy_from_slice(tail);
                    self.utf8_len = tail.len() as u8;
                    self.utf8_offset = offset + valid as u64;
                    return Ok(());
                }
                return Err(PartialJsonError::invalid("invalid UTF-8", offset + valid as u64));
            }
        }
        match control {
            Some(position) => Err(PartialJsonError::invalid("control character in string", offset + position as u64)),
            None => Ok(()),
        }
    }

    /// Continues the incomplete UTF-8 character carried over from the previous fragment.
    fn finish_utf8(&mut self, input: &[u8], i: &mut usize) -> Result<(), PartialJsonError> {
        let width = match self.utf8[0] {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        while (self.utf8_len as usize) < width && *i < input.len() {
            self.utf8[self.utf8_len as usize] = input[*i];
            self.utf8_len += 1;
            *i += 1;
        }
        match std::str::from_utf8(&self.utf8[..self.utf8_len as usize]) {
            Ok(text) => {
                self.sbuf.push_str(text);
                self.utf8_len = 0;
                Ok(())
            }
            Err(error) if error.error_len().is_none() => Ok(()),
            Err(_) => {
                self.utf8_len = 0;
                Err(PartialJsonError::invalid("invalid UTF-8", self.utf8_offset))
            }
        }
    }
}
