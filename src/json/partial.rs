//! The incremental partial-JSON parser.
//!
//! A byte-level state machine, never recursive: the stack of open containers is a `Vec`. Strings
//! are scanned with `memchr` for the next quote or backslash, and validated with the standard
//! UTF-8 validator; a multi-byte character, an escape or a `\u` surrogate pair split across
//! fragments is carried over in a few bytes of state. Every byte is looked at a bounded number of
//! times, so `push` costs time proportional to its fragment (plus the events it reports).

use std::borrow::Cow;

use serde_json::Value;

use super::error::{PartialJsonError, PartialJsonErrorKind, PartialJsonLimits};
use super::events::{ContainerKind, OwnedPathEvent, PathEvent, PathSegment};
use super::scan::{ascii_plain_prefix, escape_char, find_quote_or_backslash};
use super::tree::{self, Frame};

/// What the structural (between-tokens) state expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The top-level value (only whitespace so far).
    RootValue,
    /// The top-level value is complete: only whitespace may follow.
    AfterRoot,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After `:`: a member value.
    MemberValue,
    /// After `[`: an element or `]`.
    ElementOrEnd,
    /// After `,` in an array: an element.
    Element,
    /// After a member value: `,` or `}`.
    ObjectCommaOrEnd,
    /// After an element: `,` or `]`.
    ArrayCommaOrEnd,
}

/// Inside a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StrState {
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
enum NumState {
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
    fn is_terminal(self) -> bool {
        matches!(self, NumState::Zero | NumState::Int | NumState::Frac | NumState::ExpInt)
    }
}

/// The lexical mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Structural,
    Str(StrState),
    Number(NumState),
    /// Inside `true`, `false` or `null`: `matched` bytes of `word` read so far.
    Literal {
        word: &'static [u8],
        matched: u8,
    },
}

const TRUE: &[u8] = b"true";
const FALSE: &[u8] = b"false";
const NULL: &[u8] = b"null";

/// Strings at least this long are moved into the tree on completion instead of copied.
const MOVE_STRING_THRESHOLD: usize = 256;

/// A skeleton parser fed the whole document keeps at most this much of a value string's
/// decoded text (what its `StringAppend` events need); a longer string's value is decoded from
/// the document when it closes, instead of held twice while it streams.
const STRING_TRIM: usize = 64 << 10;

/// A string buffer at most this large is kept for the next string; a larger one is freed.
const REUSE_STRING_MAX: usize = 2 * STRING_TRIM;

/// Result of processing one fragment: `Ok` or the error (already made sticky).
type Step = Result<(), PartialJsonError>;

/// What [`PartialJson::value_at_end`] does with a string still being read at the end of the
/// input (jiter's `partial_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PartialStrings {
    /// Dropped together with its key (jiter `partial_mode=True`).
    #[default]
    Drop,
    /// Kept with the text so far (jiter `partial_mode="trailing-strings"`).
    Keep,
}

/// An incremental parser for one JSON document arriving in fragments.
///
/// * [`push`](Self::push) accepts the next fragment, split at any byte, and reports path-level
///   [`PathEvent`]s in document order. Its cost is proportional to the fragment (plus events),
///   never to what came before, and it allocates nothing per fragment in steady state.
/// * [`value`](Self::value) / [`value_with`](Self::value_with) give the best-effort current
///   value in time proportional to its size.
/// * [`finish`](Self::finish) gives the strict result, identical to `serde_json::from_slice` of
///   all the bytes pushed (except the nesting limit: serde_json stops at 128 levels, this parser at
///   [`PartialJsonLimits::max_depth`], 512 by default).
///
/// Invalid input (not merely incomplete) puts the parser in a sticky error state: that `push` and
/// every later one return the same error, at an offset that does not depend on fragmentation.
/// Events for the bytes before the error are still reported.
#[derive(Debug)]
pub struct PartialJson {
    limits: PartialJsonLimits,
    /// Bytes accepted so far (offset of the next byte).
    pushed: u64,
    mode: Mode,
    expect: Expect,
    /// Open containers, outermost first.
    stack: Vec<Frame>,
    /// `path[i]` is the current member segment of `stack[i]`; always `path.len() == stack.len()`.
    path: Vec<PathSegment>,
    /// Spare key strings, reused for object frames (no allocation per container in steady state).
    spare_keys: Vec<String>,
    /// The completed top-level value.
    root: Option<Value>,
    /// The string being decoded (a key or a value).
    sbuf: String,
    /// Whether `sbuf` is an object key (keys emit no events and are never partial values).
    in_key: bool,
    /// Length of `sbuf` already reported by `StringAppend`.
    reported: usize,
    /// Offset of the opening quote of the value string being read.
    str_start: u64,
    /// The value string being read was trimmed (see [`STRING_TRIM`]): `sbuf` holds only its
    /// text not yet reported, its value comes from the document.
    str_trimmed: bool,
    /// The push under way is [`push_document`](Self::push_document)'s (offsets index the text).
    in_document: bool,
    /// Bytes of an incomplete UTF-8 character at the end of the previous fragment.
    utf8: [u8; 4],
    utf8_len: u8,
    /// Offset of the first byte of `utf8`.
    utf8_offset: u64,
    /// The number being read.
    nbuf: Vec<u8>,
    /// Offset of the first byte of `nbuf`.
    num_offset: u64,
    /// The sticky error.
    error: Option<PartialJsonError>,
    /// Whether a lone surrogate escape decodes to U+FFFD instead of failing.
    lossy_surrogates: bool,
    /// Lone surrogate escapes replaced so far.
    replaced_surrogates: u64,
    /// Estimated heap bytes of the tree of completed values (held, or in a skeleton parser what
    /// materializing it would cost; see [`held_bytes`](Self::held_bytes)).
    tree_bytes: usize,
    /// A skeleton parser reports closing containers with their text (see
    /// [`skeleton`](Self::skeleton)).
    skeleton: bool,
    /// A skeleton parser's opening bracket offsets, innermost last (parallel to `stack`).
    starts: Vec<u64>,
    /// A skeleton parser's tree budget: while `tree_bytes` stays within it, the parser keeps the
    /// values as a tree parser does (see [`skeleton_with_tree`](Self::skeleton_with_tree)); 0 for
    /// none.
    tree_budget: usize,
    /// The tree outgrew `tree_budget` and was dropped (until [`reset`](Self::reset)).
    tree_dropped: bool,
    /// A skeleton parser's top-level value is complete.
    root_done: bool,
}

impl Default for PartialJson {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialJson {
    /// A parser with the default [`PartialJsonLimits`] (depth 512, 64 MiB).
    pub fn new() -> Self {
        Self::with_limits(PartialJsonLimits::default())
    }

    /// A parser with the given limits.
    pub fn with_limits(limits: PartialJsonLimits) -> Self {
        PartialJson {
            limits,
            pushed: 0,
            mode: Mode::Structural,
            expect: Expect::RootValue,
            stack: Vec::new(),
            path: Vec::new(),
            spare_keys: Vec::new(),
            root: None,
            sbuf: String::new(),
            in_key: false,
            reported: 0,
            str_start: 0,
            str_trimmed: false,
            in_document: false,
            utf8: [0; 4],
            utf8_len: 0,
            utf8_offset: 0,
            nbuf: Vec::new(),
            num_offset: 0,
            error: None,
            lossy_surrogates: false,
            replaced_surrogates: 0,
            tree_bytes: 0,
            skeleton: false,
            starts: Vec::new(),
            tree_budget: 0,
            tree_dropped: false,
            root_done: false,
        }
    }

    /// A parser that keeps no tree, only the path stack and the value being read: memory
    /// O(depth + longest string) whatever the document. It is driven by
    /// [`push_document`](Self::push_document) and reports a closing container as
    /// [`PathEvent::ContainerComplete`] with its text (scalars as `ValueComplete`); its
    /// `value*` and `finish` know no values (use [`finish_check`](Self::finish_check), and parse
    /// the text where a value is wanted).
    pub(crate) fn skeleton(limits: PartialJsonLimits) -> Self {
        PartialJson { skeleton: true, ..Self::with_limits(limits) }
    }

    /// A skeleton parser (the same events) that also builds the tree of values as a tree parser
    /// does, while its estimated size ([`tree_estimate`](Self::tree_estimate)) stays within
    /// `budget` bytes; past it the tree is dropped and the parser is a plain skeleton one from
    /// there on ([`has_tree`](Self::has_tree) says which). So a small document's value needs no
    /// second parse, and what the parser holds stays O(`budget` + depth + longest string).
    pub(crate) fn skeleton_with_tree(limits: PartialJsonLimits, budget: usize) -> Self {
        PartialJson { skeleton: true, tree_budget: budget.max(1), ..Self::with_limits(limits) }
    }

    /// A parser that builds the tree of values as [`with_limits`](Self::with_limits) does
    /// (`value*`, `finish`), but reports a closing container as [`PathEvent::ContainerComplete`]
    /// with its text, not as `ValueComplete` with its value: every event is O(1) to hand on
    /// however deep the document (a host that keeps events converts a container only when asked,
    /// from its text). Driven by [`push_document`](Self::push_document), the caller holding the
    /// document's text.
    pub fn with_container_text(limits: PartialJsonLimits) -> Self {
        Self::skeleton_with_tree(limits, usize::MAX)
    }

    /// Whether the parser holds the tree of the values read so far (a tree parser, or a
    /// [`skeleton_with_tree`](Self::skeleton_with_tree) one within its budget): then `value*`,
    /// `finish` and [`take_root`](Self::take_root) give values.
    pub(crate) fn has_tree(&self) -> bool {
        !self.skeleton || (self.tree_budget > 0 && !self.tree_dropped)
    }

    /// Makes a lone surrogate escape (`"\ud83d"`, which RFC 8259's grammar allows and
    /// `json.loads` / `JSON.parse` accept) decode to U+FFFD instead of being an error; see
    /// [`replaced_surrogates`](Self::replaced_surrogates). `finish` then accepts what serde_json
    /// refuses for this reason alone.
    pub(crate) fn set_lossy_surrogates(&mut self, lossy: bool) {
        self.lossy_surrogates = lossy;
    }

    /// Lone surrogate escapes decoded to U+FFFD so far (with lossy surrogates).
    pub(crate) fn replaced_surrogates(&self) -> u64 {
        self.replaced_surrogates
    }

    /// Estimated heap bytes this parser holds: the tree of completed values (one `Value` per
    /// element with the vector's growth slack, a map entry and its key per member, string
    /// contents), the open containers and the scratch buffers. Updated in O(1) per value.
    pub(crate) fn held_bytes(&self) -> usize {
        (if self.has_tree() { self.tree_bytes } else { 0 })
            + self.sbuf.capacity()
            + self.starts.capacity() * core::mem::size_of::<u64>()
            + self.nbuf.capacity()
            + self.stack.capacity() * core::mem::size_of::<Frame>()
            + self.path.capacity() * core::mem::size_of::<PathSegment>()
            + self.spare_keys.iter().map(String::capacity).sum::<usize>()
    }

    /// Estimated heap bytes of the tree of the values completed so far: held (see
    /// [`held_bytes`](Self::held_bytes)) or, by a skeleton parser, what materializing them costs
    /// (when a skeleton parser keeps its tree, [`held_bytes`](Self::held_bytes) counts it).
    pub(crate) fn tree_estimate(&self) -> usize {
        self.tree_bytes
    }

    fn replace_surrogate(&mut self) {
        self.sbuf.push(char::REPLACEMENT_CHARACTER);
        self.replaced_surrogates += 1;
    }

    /// The limits this parser enforces.
    pub fn limits(&self) -> PartialJsonLimits {
        self.limits
    }

    /// Feeds the next fragment (any byte split, even inside a UTF-8 character or an escape) and
    /// calls `on_event` for each path event, in document order.
    ///
    /// Returns the sticky error if the input so far is invalid or exceeds a limit; the events for
    /// the bytes before the error have been reported, and every later call returns the same error
    /// without reporting anything. Bytes after the error are not counted by
    /// [`bytes_pushed`](Self::bytes_pushed).
    pub fn push(&mut self, fragment: &[u8], on_event: impl FnMut(&PathEvent<'_>)) -> Result<(), PartialJsonError> {
        self.push_inner(fragment, None, 0, on_event)
    }

    /// [`push`](Self::push) of text already known to be UTF-8: the same events and errors, without
    /// validating the string contents again.
    pub fn push_str(&mut self, fragment: &str, on_event: impl FnMut(&PathEvent<'_>)) -> Result<(), PartialJsonError> {
        self.push_inner(fragment.as_bytes(), Some(fragment), 0, on_event)
    }

    /// Feeds the whole document so far, of which the first
    /// [`bytes_pushed`](Self::bytes_pushed) bytes were fed before: the parser reads the rest,
    /// and a skeleton parser reports closing containers with their text (the document holds
    /// them whole). The same events and errors as [`push_str`](Self::push_str) of the new bytes.
    pub fn push_document(
        &mut self,
        document: &str,
        on_event: impl FnMut(&PathEvent<'_>),
    ) -> Result<(), PartialJsonError> {
        let from = (self.pushed as usize).min(document.len());
        self.in_document = true;
        let result = self.push_inner(document.as_bytes(), Some(document), from, on_event);
        self.in_document = false;
        result
    }

    /// `push` of `input[from..]`, with `text` the same bytes as `&str` when the caller has them.
    fn push_inner(
        &mut self,
        input: &[u8],
        text: Option<&str>,
        from: usize,
        mut on_event: impl FnMut(&PathEvent<'_>),
    ) -> Result<(), PartialJsonError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let room = self.limits.max_bytes.saturating_sub(self.pushed);
        let fragment_len = (input.len() - from) as u64;
        let (accepted, over) =
            if fragment_len > room { (&input[..from + room as usize], true) } else { (input, false) };
        let text = text.and_then(|t| t.get(..accepted.len()));
        let result = self.run(accepted, text, from, &mut on_event);
        self.flush_append(&mut on_event);
        result?;
        if over {
            let error = PartialJsonError { kind: PartialJsonErrorKind::SizeLimit, offset: self.limits.max_bytes };
            self.error = Some(error.clone());
            return Err(error);
        }
        Ok(())
    }

    /// Like [`push`](Self::push), returning the events as owned values.
    pub fn push_owned(&mut self, fragment: &[u8]) -> Result<Vec<OwnedPathEvent>, PartialJsonError> {
        let mut events = Vec::new();
        self.push(fragment, |event| events.push(event.to_owned_event()))?;
        Ok(events)
    }

    /// Best-effort current value, partial strings included (see [`value_with`](Self::value_with)).
    pub fn value(&self) -> Option<Value> {
        self.value_with(true)
    }

    /// Best-effort current value, materialized in time proportional to its size.
    ///
    /// `None` when no value has begun: only whitespace so far, or only an incomplete top-level
    /// number or literal (or, with `partial_strings == false`, an unterminated top-level string).
    /// Otherwise the value of the input so far with open containers closed, where
    /// * a string still being read is included with the text decoded so far when
    ///   `partial_strings` is true (an incomplete escape or UTF-8 character at the end is left
    ///   out), and dropped together with its key otherwise;
    /// * an incomplete number or literal is dropped together with its key (a number is complete
    ///   only once the byte after it has arrived);
    /// * a key without a value is dropped.
    ///
    /// After an error, this is the value of the input before the error.
    pub fn value_with(&self, partial_strings: bool) -> Option<Value> {
        let partial = match self.mode {
            Mode::Str(_) if partial_strings && !self.in_key => Some(Value::String(self.sbuf.clone())),
            _ => None,
        };
        if self.stack.is_empty() {
            return self.root.clone().or(partial);
        }
        Some(tree::materialize(&self.stack, &self.path, partial))
    }

    /// The value as if the input ended here: what jiter's `from_json(bytes, partial_mode=…)`
    /// returns for the bytes pushed so far (`partial_mode=True` for [`PartialStrings::Drop`],
    /// `"trailing-strings"` for [`PartialStrings::Keep`]), which is how the official Anthropic
    /// SDKs fold a tool input still streaming or cut off. Unlike [`value_with`](Self::value_with),
    /// a number that may end here counts as complete (`{"a": 12` → `{"a": 12}`; `{"a": 1.` →
    /// `{}`); an incomplete literal, a key without a value and (with `Drop`) an unfinished string
    /// are dropped with their key; with `Keep` the unfinished string keeps the text decoded so far
    /// (an incomplete escape, `\u` sequence or UTF-8 character at its end left out).
    ///
    /// `None` where jiter raises: no value begun (only whitespace, an incomplete top-level
    /// literal or number, with `Drop` an unfinished top-level string). After a sticky error,
    /// this is the value of the input before the error (jiter would raise).
    pub fn value_at_end(&self, strings: PartialStrings) -> Option<Value> {
        let keep = strings == PartialStrings::Keep;
        let tail = match self.mode {
            Mode::Str(_) if keep && !self.in_key => Some(Value::String(self.sbuf.clone())),
            Mode::Number(state) if state.is_terminal() && self.error.is_none() => {
                serde_json::from_slice::<Value>(&self.nbuf).ok().filter(Value::is_number)
            }
            _ => None,
        };
        if self.stack.is_empty() {
            return self.root.clone().or(tail);
        }
        Some(tree::materialize(&self.stack, &self.path, tail))
    }

    /// Strict end of the document: `Ok` with the complete value (identical to
    /// `serde_json::from_slice` of all the bytes pushed), else an error: the sticky one, or
    /// [`Incomplete`](PartialJsonErrorKind::Incomplete) at offset [`bytes_pushed`](Self::bytes_pushed).
    ///
    /// Trailing whitespace is fine; trailing non-whitespace after a complete value was already
    /// reported by `push` as `Invalid` at its offset. A top-level number is completed here (no
    /// event is emitted for it; completing it is final, so a later non-whitespace byte is trailing
    /// characters). The parser keeps its state: `finish` may be called again with the
    /// same result, and [`value`](Self::value) still works; call [`reset`](Self::reset) to start a
    /// new document.
    pub fn finish(&mut self) -> Result<Value, PartialJsonError> {
        self.finish_ref().cloned()
    }

    /// [`finish`](Self::finish) without copying the value: a reference to it.
    pub fn finish_ref(&mut self) -> Result<&Value, PartialJsonError> {
        self.finish_check()?;
        match &self.root {
            Some(root) => Ok(root),
            None => Err(PartialJsonError { kind: PartialJsonErrorKind::Incomplete, offset: self.pushed }),
        }
    }

    /// [`finish`](Self::finish) without the value: whether the document is complete and valid
    /// (what a skeleton parser can tell).
    pub(crate) fn finish_check(&mut self) -> Result<(), PartialJsonError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        if self.stack.is_empty() {
            if let Mode::Number(state) = self.mode {
                if state.is_terminal() {
                    self.complete_number(&mut |_: &PathEvent<'_>| {})?;
                }
            }
        }
        match self.expect {
            Expect::AfterRoot if self.is_complete() => Ok(()),
            _ => Err(PartialJsonError { kind: PartialJsonErrorKind::Incomplete, offset: self.pushed }),
        }
    }

    /// Moves the completed top-level value out, leaving the parser as if the
    /// document were still incomplete: for a caller done with it (reset
    /// before reuse).
    pub(crate) fn take_root(&mut self) -> Option<Value> {
        self.tree_bytes = 0;
        self.root.take()
    }

    /// Number of bytes accepted so far (the offset of the next byte).
    pub fn bytes_pushed(&self) -> u64 {
        self.pushed
    }

    /// Whether a complete top-level value has been parsed (a top-level number only counts once a
    /// byte after it, e.g. whitespace, has arrived, or after [`finish`](Self::finish)).
    pub fn is_complete(&self) -> bool {
        self.root.is_some() || self.root_done
    }

    /// The sticky error, if any.
    pub fn error(&self) -> Option<&PartialJsonError> {
        self.error.as_ref()
    }

    /// Ready for a new document with the same limits; buffers are kept for reuse.
    pub fn reset(&mut self) {
        self.pushed = 0;
        self.mode = Mode::Structural;
        self.expect = Expect::RootValue;
        self.stack.clear();
        self.starts.clear();
        while let Some(segment) = self.path.pop() {
            self.recycle(segment);
        }
        self.root = None;
        self.sbuf.clear();
        self.in_key = false;
        self.reported = 0;
        self.str_trimmed = false;
        self.utf8_len = 0;
        self.nbuf.clear();
        self.error = None;
        self.replaced_surrogates = 0;
        self.tree_bytes = 0;
        self.tree_dropped = false;
        self.root_done = false;
    }

    // ----- driver -------------------------------------------------------------------------

    fn fail(&mut self, reason: &'static str, offset: u64) -> Step {
        self.fail_with(PartialJsonError::invalid(reason, offset))
    }

    fn fail_with(&mut self, error: PartialJsonError) -> Step {
        self.error = Some(error.clone());
        Err(error)
    }

    /// Processes `input[from..]`, whose first byte is at offset `self.pushed` (so `input` starts
    /// at offset `base`). `text`: the same bytes as `&str`, when known (string contents then need
    /// no validation, and a skeleton parser slices closing containers out of it).
    fn run<F: FnMut(&PathEvent<'_>)>(
        &mut self,
        input: &[u8],
        text: Option<&str>,
        from: usize,
        on_event: &mut F,
    ) -> Step {
        let base = self.pushed - from as u64;
        let mut i = from;
        let result = loop {
            if i >= input.len() {
                break Ok(());
            }
            let step = match self.mode {
                Mode::Structural => self.structural(input, text, &mut i, base, on_event),
                Mode::Str(_) => self.string(input, text, &mut i, base, on_event),
                Mode::Number(_) => self.number(input, &mut i, base, on_event),
                Mode::Literal { .. } => self.literal(input, &mut i, base, on_event),
            };
            if let Err(error) = step {
                break Err(error);
            }
        };
        self.pushed = match &result {
            Ok(()) => base + input.len() as u64,
            Err(error) => error.offset.max(base),
        };
        result
    }

    /// At the end of a push: [`report_append`](Self::report_append), then a skeleton parser fed
    /// the document drops a long string's reported text (see [`STRING_TRIM`]).
    fn flush_append<F: FnMut(&PathEvent<'_>)>(&mut self, on_event: &mut F) {
        self.report_append(on_event);
        if matches!(self.mode, Mode::Str(_))
            && !self.in_key
            && self.in_document
            && self.sbuf.len() >= STRING_TRIM
            && !self.has_tree()
        {
            self.sbuf.clear();
            self.reported = 0;
            self.str_trimmed = true;
        }
    }

    /// Reports the text decoded since the last `StringAppend` of the current value string.
    fn report_append<F: FnMut(&PathEvent<'_>)>(&mut self, on_event: &mut F) {
        if matches!(self.mode, Mode::Str(_)) && !self.in_key && self.sbuf.len() > self.reported {
            on_event(&PathEvent::StringAppend { path: &self.path, text: &self.sbuf[self.reported..] });
            self.reported = self.sbuf.len();
        }
    }

    // ----- structure ----------------------------------------------------------------------

    fn structural<F: FnMut(&PathEvent<'_>)>(
        &mut self,
        input: &[u8],
        text: Option<&str>,
        i: &mut usize,
        base: u64,
        on_event: &mut F,
    ) -> Step {
        while *i < input.len() {
            let byte = input[*i];
            let offset = base + *i as u64;
            if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
                *i += 1;
                continue;
            }
            match self.expect {
                Expect::RootValue | Expect::MemberValue | Expect::Element => {
                    *i += 1;
                    return self.begin_value(byte, offset, on_event);
                }
                Expect::ElementOrEnd => {
                    *i += 1;
                    if byte == b']' {
                        return self.close(ContainerKind::Array, offset, (text, base), on_event);
                    }
                    return self.begin_value(byte, offset, on_event);
                }
                Expect::AfterRoot => return self.fail("trailing characters", offset),
                Expect::KeyOrEnd | Expect::Key => {
                    *i += 1;
                    match byte {
                        b'"' => {
                            self.in_key = true;
                            self.sbuf.clear();
                            self.mode = Mode::Str(StrState::Normal);
                            return Ok(());
                        }
                        b'}' if self.expect == Expect::KeyOrEnd => {
                            return self.close(ContainerKind::Object, offset, (text, base), on_event)
                        }
                        _ => return self.fail("expected object key", offset),
                    }
                }
                Expect::Colon => {
                    if byte != b':' {
                        return self.fail("expected ':'", offset);
                    }
                    self.expect = Expect::MemberValue;
                }
                Expect::ObjectCommaOrEnd => match byte {
                    b',' => self.expect = Expect::Key,
                    b'}' => {
                        *i += 1;
                        return self.close(ContainerKind::Object, offset, (text, base), on_event);
                    }
                    _ => return self.fail("expected ',' or '}'", offset),
                },
                Expect::ArrayCommaOrEnd => match byte {
                    b',' => self.expect = Expect::Element,
                    b']' => {
                        *i += 1;
                        return self.close(ContainerKind::Array, offset, (text, base), on_event);
                    }
                    _ => return self.fail("expected ',' or ']'", offset),
                },
            }
            *i += 1;
        }
        Ok(())
    }

    /// The first byte of a value (already consumed).
    #[inline]
    fn begin_value<F: FnMut(&PathEvent<'_>)>(&mut self, byte: u8, offset: u64, on_event: &mut F) -> Step {
        if let Some(frame) = self.stack.last().filter(|f| !f.is_object()) {
            let index = frame.len();
            if let Some(segment) = self.path.last_mut() {
                *segment = PathSegment::Index(index);
            }
        }
        match byte {
            b'{' => self.open(ContainerKind::Object, offset, on_event),
            b'[' => self.open(ContainerKind::Array, offset, on_event),
            b'"' => {
                self.in_key = false;
                self.sbuf.clear();
                self.reported = 0;
                self.str_start = offset;
                self.str_trimmed = false;
                self.mode = Mode::Str(StrState::Normal);
                Ok(())
            }
            b'-' | b'0'..=b'9' => {
                self.nbuf.clear();
                self.nbuf.push(byte);
                self.num_offset = offset;
                self.mode = Mode::Number(match byte {
                    b'-' => NumState::Minus,
                    b'0' => NumState::Zero,
                    _ => NumState::Int,
                });
                Ok(())
            }
            b't' => self.begin_literal(TRUE),
            b'f' => self.begin_literal(FALSE),
            b'n' => self.begin_literal(NULL),
            _ => self.fail("expected value", offset),
        }
    }

    fn begin_literal(&mut self, word: &'static [u8]) -> Step {
        self.mode = Mode::Literal { word, matched: 1 };
        Ok(())
    }

    fn open<F: FnMut(&PathEvent<'_>)>(&mut self, kind: ContainerKind, offset: u64, on_event: &mut F) -> Step {
        if self.stack.len() >= self.limits.max_depth {
            return self.fail_with(PartialJsonError { kind: PartialJsonErrorKind::DepthLimit, offset });
        }
        on_event(&PathEvent::ContainerStart { path: &self.path, kind });
        if self.skeleton {
            self.starts.push(offset);
        }
        let tree = self.has_tree();
        if !tree {
            self.stack.push(Frame::Open { kind, len: 0 });
        }
        match kind {
            ContainerKind::Object => {
                if tree {
                    self.stack.push(Frame::Object(serde_json::Map::new()));
                }
                let key = self.spare_keys.pop().unwrap_or_default();
                self.path.push(PathSegment::Key(key));
                self.expect = Expect::KeyOrEnd;
            }
            ContainerKind::Array => {
                if tree {
                    self.stack.push(Frame::Array(Vec::new()));
                }
                self.path.push(PathSegment::Index(0));
                self.expect = Expect::ElementOrEnd;
            }
        }
        Ok(())
    }

    /// The closing bracket at `offset`; `doc`: the input as text (if known) and its offset.
    fn close<F: FnMut(&PathEvent<'_>)>(
        &mut self,
        kind: ContainerKind,
        offset: u64,
        doc: (Option<&str>, u64),
        on_event: &mut F,
    ) -> Step {
        let frame = match self.stack.pop() {
            Some(frame) => frame,
            None => return self.fail("unbalanced bracket", offset),
        };
        debug_assert_eq!(frame.is_object(), kind == ContainerKind::Object);
        if let Some(segment) = self.path.pop() {
            self.recycle(segment);
        }
        if self.skeleton {
            // The container's text, when the input holds it whole.
            let (text, base) = doc;
            let start = self.starts.pop().unwrap_or(0);
            let span = start.checked_sub(base).map(|s| s as usize..(offset + 1 - base) as usize);
            let json = text.zip(span).and_then(|(t, span)| t.get(span)).unwrap_or("");
            self.mode = Mode::Structural;
            self.tree_bytes += self.slot_bytes() + Self::container_bytes(kind);
            if matches!(frame, Frame::Open { .. }) {
                self.settle();
            } else {
                self.store(frame.into_value());
                self.check_tree_budget();
            }
            on_event(&PathEvent::ContainerComplete { path: &self.path, kind, json });
            return Ok(());
        }
        self.tree_bytes += Self::container_bytes(kind);
        self.complete(frame.into_value(), on_event);
        Ok(())
    }

    /// A skeleton parser past its tree budget drops the tree (see [`drop_tree`](Self::drop_tree)).
    #[inline]
    fn check_tree_budget(&mut self) {
        if self.tree_bytes > self.tree_budget {
            self.drop_tree();
        }
    }

    /// Drops the tree: the open containers keep only their kind and length, the root is
    /// forgotten, and the parser is a plain skeleton one from here on.
    #[cold]
    #[inline(never)]
    fn drop_tree(&mut self) {
        self.tree_dropped = true;
        for frame in &mut self.stack {
            let kind = if frame.is_object() { ContainerKind::Object } else { ContainerKind::Array };
            *frame = Frame::Open { kind, len: frame.len() };
        }
        self.root = None;
    }

    /// Stores a completed container in the innermost container (or as the root), setting what is
    /// expected next (its size is already counted).
    fn store(&mut self, value: Value) {
        match (self.stack.last_mut(), self.path.last()) {
            (Some(frame), Some(segment)) => {
                self.expect = if frame.is_object() { Expect::ObjectCommaOrEnd } else { Expect::ArrayCommaOrEnd };
                frame.insert(segment, value);
            }
            _ => {
                self.expect = Expect::AfterRoot;
                self.root_done = self.skeleton;
                self.root = Some(value);
            }
        }
    }

    /// Estimated heap bytes of one more member of the innermost container (or the root), as
    /// serde_json (`preserve_order`) holds it.
    fn slot_bytes(&self) -> usize {
        match (self.stack.last(), self.path.last()) {
            (Some(frame), Some(segment)) => Self::member_bytes(frame.is_object(), segment),
            _ => core::mem::size_of::<Value>(),
        }
    }

    /// [`slot_bytes`](Self::slot_bytes) of a member of an object (or an array) at `segment`.
    #[inline]
    fn member_bytes(object: bool, segment: &PathSegment) -> usize {
        const VALUE: usize = core::mem::size_of::<Value>();
        match segment {
            // An `IndexMap` entry (hash, key, value) with the vector's growth slack, its index in
            // the hash table, and the key's own allocation.
            PathSegment::Key(key) if object => 2 * (8 + 24 + VALUE) + 24 + key.len().max(24) + 8,
            // A vector element, with the vector's growth slack.
            _ => 2 * VALUE,
        }
    }

    /// Estimated heap bytes of a container's own allocations (a vector's first four elements,
    /// a map's first entries and table), whatever its members.
    fn container_bytes(kind: ContainerKind) -> usize {
        match kind {
            ContainerKind::Array => 4 * core::mem::size_of::<Value>() + 16,
            ContainerKind::Object => 320,
        }
    }

    /// Skeleton: a value completed in the innermost container (counted) or as the root.
    fn settle(&mut self) {
        match (self.stack.last_mut(), self.path.last()) {
            (Some(frame), Some(segment)) => {
                self.expect = if frame.is_object() { Expect::ObjectCommaOrEnd } else { Expect::ArrayCommaOrEnd };
                frame.insert(segment, Value::Null);
            }
            _ => {
                self.expect = Expect::AfterRoot;
                self.root_done = true;
            }
        }
    }

    fn recycle(&mut self, segment: PathSegment) {
        if let PathSegment::Key(mut key) = segment {
            key.clear();
            self.spare_keys.push(key);
        }
    }

    /// Stores a completed value in its parent (or as the root) and reports it.
    fn complete<F: FnMut(&PathEvent<'_>)>(&mut self, value: Value, on_event: &mut F) {
        self.mode = Mode::Structural;
        let text_bytes = match &value {
            Value::String(text) => text.len(),
            _ => 0,
        };
        if !self.has_tree() {
            self.tree_bytes += self.slot_bytes() + text_bytes;
            self.settle();
            on_event(&PathEvent::ValueComplete { path: &self.path, value: &value });
            if let Value::String(mut buffer) = value {
                // Reuse the string's buffer for the next one (unless it is huge).
                if buffer.capacity() > self.sbuf.capacity() && buffer.capacity() <= REUSE_STRING_MAX {
                    buffer.clear();
                    self.sbuf = buffer;
                }
            }
            return;
        }
        match (self.stack.last_mut(), self.path.last()) {
            (Some(frame), Some(segment)) => {
                let object = frame.is_object();
                self.tree_bytes += text_bytes + Self::member_bytes(object, segment);
                self.expect = if object { Expect::ObjectCommaOrEnd } else { Expect::ArrayCommaOrEnd };
                let value = frame.insert(segment, value);
                on_event(&PathEvent::ValueComplete { path: &self.path, value });
            }
            _ => {
                self.tree_bytes += text_bytes + core::mem::size_of::<Value>();
                self.expect = Expect::AfterRoot;
                self.root_done = self.skeleton;
                let value: &Value = self.root.insert(value);
                on_event(&PathEvent::ValueComplete { path: &[], value });
            }
        }
        if self.skeleton {
            self.check_tree_budget();
        }
    }

    // ----- scalars ------------------------------------------------------------------------

    fn literal<F: FnMut(&PathEvent<'_>)>(&mut self, input: &[u8], i: &mut usize, base: u64, on_event: &mut F) -> Step {
        let Mode::Literal { word, mut matched } = self.mode else { return Ok(()) };
        while *i < input.len() {
            if input[*i] != word[matched as usize] {
                return self.fail("invalid literal", base + *i as u64);
            }
            *i += 1;
            matched += 1;
            if matched as usize == word.len() {
                let value = match word {
                    TRUE => Value::Bool(true),
                    FALSE => Value::Bool(false),
                    _ => Value::Null,
                };
                self.complete(value, on_event);
                return Ok(());
            }
        }
        self.mode = Mode::Literal { word, matched };
        Ok(())
    }

    fn number<F: FnMut(&PathEvent<'_>)>(&mut self, input: &[u8], i: &mut usize, base: u64, on_event: &mut F) -> Step {
        let Mode::Number(mut state) = self.mode else { return Ok(()) };
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
                    self.mode = Mode::Number(state);
                    return self.complete_number(on_event);
                }
                _ => {
                    self.nbuf.extend_from_slice(&input[start..*i]);
                    return self.fail("invalid number", base + *i as u64);
                }
            };
            state = next;
            *i += 1;
        }
        self.nbuf.extend_from_slice(&input[start..]);
        self.mode = Mode::Number(state);
        Ok(())
    }

    /// Converts the complete number token with serde_json (so values are identical to its own).
    fn complete_number<F: FnMut(&PathEvent<'_>)>(&mut self, on_event: &mut F) -> Step {
        match serde_json::from_slice::<Value>(&self.nbuf) {
            Ok(value @ Value::Number(_)) => {
                self.complete(value, on_event);
                Ok(())
            }
            _ => self.fail("number out of range", self.num_offset),
        }
    }

    fn string<F: FnMut(&PathEvent<'_>)>(
        &mut self,
        input: &[u8],
        text: Option<&str>,
        i: &mut usize,
        base: u64,
        on_event: &mut F,
    ) -> Step {
        let Mode::Str(mut state) = self.mode else { return Ok(()) };
        loop {
            if *i >= input.len() {
                self.mode = Mode::Str(state);
                return Ok(());
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
                            // A trimmed string's whole text, quotes included.
                            let whole = match (text, self.str_start.checked_sub(base)) {
                                (Some(t), Some(start)) if self.str_trimmed => t.get(start as usize..*i),
                                _ => None,
                            };
                            self.end_string(whole, on_event);
                            return Ok(());
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
                        return self.fail("invalid escape", base + *i as u64);
                    };
                    self.sbuf.push(decoded);
                    *i += 1;
                    state = StrState::Normal;
                }
                StrState::Hex { mut code, mut digits, high } => {
                    let offset = base + *i as u64;
                    let Some(digit) = (input[*i] as char).to_digit(16) else {
                        return self.fail("invalid \\u escape", offset);
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
                        (Some(_), _) => return self.fail("unpaired high surrogate", offset),
                        (None, 0xDC00..=0xDFFF) if self.lossy_surrogates => {
                            self.replace_surrogate();
                            continue;
                        }
                        (None, 0xDC00..=0xDFFF) => return self.fail("lone low surrogate", offset),
                        (None, 0xD800..=0xDBFF) => {
                            state = StrState::PairBackslash { high: code };
                            continue;
                        }
                        (None, code) => code,
                    };
                    match char::from_u32(scalar) {
                        Some(c) => self.sbuf.push(c),
                        None => return self.fail("invalid \\u escape", offset),
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
                        return self.fail("unpaired high surrogate", base + *i as u64);
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
                        return self.fail("unpaired high surrogate", base + *i as u64);
                    }
                    *i += 1;
                    state = StrState::Hex { code: 0, digits: 0, high: Some(high) };
                }
            }
        }
    }

    /// Appends a run of string bytes without quote or backslash, starting at `offset`. `at_end`:
    /// the run ends the fragment, so an incomplete UTF-8 character there is carried over.
    /// `known`: the same bytes as `&str`, when the caller has them (no validation needed).
    fn plain(&mut self, run: &[u8], known: Option<&str>, offset: u64, at_end: bool) -> Step {
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
                return self.fail("invalid UTF-8", offset + valid as u64);
            }
        }
        match control {
            Some(position) => self.fail("control character in string", offset + position as u64),
            None => Ok(()),
        }
    }

    /// Continues the incomplete UTF-8 character carried over from the previous fragment.
    fn finish_utf8(&mut self, input: &[u8], i: &mut usize) -> Step {
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
                self.fail("invalid UTF-8", self.utf8_offset)
            }
        }
    }

    /// The closing quote of a key or a value string; `whole`: a trimmed value string's JSON
    /// text in the document.
    fn end_string<F: FnMut(&PathEvent<'_>)>(&mut self, whole: Option<&str>, on_event: &mut F) {
        if self.in_key {
            self.in_key = false;
            self.mode = Mode::Structural;
            self.expect = Expect::Colon;
            if let Some(PathSegment::Key(key)) = self.path.last_mut() {
                key.clear();
                key.push_str(&self.sbuf);
            }
            return;
        }
        self.report_append(on_event);
        if self.str_trimmed {
            self.str_trimmed = false;
            self.reported = 0;
            // Validated as it streamed: the document's text decodes (a lone surrogate as U+FFFD,
            // counted then). Trimming needs the document, so `whole` is there.
            debug_assert!(whole.is_some(), "a trimmed string without its document");
            let value = whole.map_or(Value::Null, value_of_text);
            self.complete(value, on_event);
            return;
        }
        let text = if !self.has_tree() || self.sbuf.len() >= MOVE_STRING_THRESHOLD {
            std::mem::take(&mut self.sbuf)
        } else {
            self.sbuf.as_str().to_owned()
        };
        self.reported = 0;
        self.complete(Value::String(text), on_event);
    }
}

impl PathEvent<'_> {
    /// The completed value of a `"value_complete"` event: borrowed for
    /// [`ValueComplete`](PathEvent::ValueComplete), parsed from the text (in time and memory
    /// proportional to it; a lone surrogate escape is U+FFFD) for
    /// [`ContainerComplete`](PathEvent::ContainerComplete); `None` for other events.
    pub fn value(&self) -> Option<Cow<'_, Value>> {
        match self {
            PathEvent::ValueComplete { value, .. } => Some(Cow::Borrowed(*value)),
            PathEvent::ContainerComplete { json, .. } => Some(Cow::Owned(value_of_text(json))),
            _ => None,
        }
    }
}

/// The value of a complete JSON text the parser validated (a skeleton parser's
/// [`PathEvent::ContainerComplete`]): as `serde_json` reads it, with any depth up to the default
/// limit and a lone surrogate escape as U+FFFD; `Null` for text that is not one complete value.
fn value_of_text(text: &str) -> Value {
    let mut parser =
        PartialJson::with_limits(PartialJsonLimits { max_bytes: u64::MAX, ..PartialJsonLimits::default() });
    parser.set_lossy_surrogates(true);
    let _ = parser.push_str(text, |_| {});
    parser.finish_check().ok().and_then(|()| parser.root.take()).unwrap_or(Value::Null)
}

/// One-shot best-effort parse of a possibly incomplete JSON text.
///
/// `Ok(None)` when no value has begun (empty, whitespace, or an incomplete top-level number or
/// literal); otherwise the value as [`PartialJson::value_with`] materializes it:
/// with `partial_strings == false`, `{"a": "te` → `{}`, `{"a": "test"` → `{"a": "test"}`,
/// `{"a": 123,` → `{"a": 123}`, `[1, 2,` → `[1, 2]`; with `true`, `{"a": "te` → `{"a": "te"}`.
/// A complete top-level number (`"42"`) is returned as such. Invalid text or exceeded default
/// limits is an error (never `Incomplete`).
pub fn parse_partial_json(text: &str, partial_strings: bool) -> Result<Option<Value>, PartialJsonError> {
    let mut parser = PartialJson::new();
    parser.push(text.as_bytes(), |_| {})?;
    if let Mode::Number(state) = parser.mode {
        if parser.stack.is_empty() && state.is_terminal() {
            return parser.finish().map(Some);
        }
    }
    Ok(parser.value_with(partial_strings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<PartialJson>();
        assert_send_sync::<PartialJsonError>();
    }

    #[test]
    fn escapes_split_at_every_byte() {
        let doc = br#"["\"\\\/\b\f\n\r\t\u00e9\uD834\uDD1E"]"#;
        let expected: Value = serde_json::from_slice(doc).unwrap();
        for k in 0..doc.len() {
            let mut parser = PartialJson::new();
            parser.push(&doc[..k], |_| {}).unwrap();
            parser.push(&doc[k..], |_| {}).unwrap();
            assert_eq!(parser.finish().unwrap(), expected, "split at {k}");
        }
    }

    #[test]
    fn push_allocates_nothing_new_for_plain_string_fragments() {
        // Steady state: appending to a long string only grows the buffer amortized.
        let mut parser = PartialJson::new();
        parser.push(b"{\"content\": \"", |_| {}).unwrap();
        let mut total = 0;
        for _ in 0..1000 {
            parser
                .push(b"0123456789abcdef", |e| {
                    if let PathEvent::StringAppend { text, .. } = e {
                        total += text.len()
                    }
                })
                .unwrap();
        }
        assert_eq!(total, 16_000);
        assert_eq!(parser.sbuf.len(), 16_000);
        assert_eq!(parser.value().unwrap()["content"].as_str().map(str::len), Some(16_000));
    }

    /// `value_at_end` is jiter's `from_json(partial_mode=True | "trailing-strings")` (expected
    /// values produced by jiter 0.19; `None` where jiter raises), however the input is split.
    /// One known difference, kept for consistency with `finish` (= serde_json): `-0` is the
    /// float -0.0 here, the integer 0 in jiter.
    #[test]
    fn value_at_end_matches_jiter_partial_mode() {
        #[rustfmt::skip]
        let cases: &[(&str, Option<&str>, Option<&str>)] = &[
            (r#"{"a": "xy"#, Some(r#"{}"#), Some(r#"{"a":"xy"}"#)),
            (r#"{"a": 1, "b": [1, 2"#, Some(r#"{"a":1,"b":[1,2]}"#), Some(r#"{"a":1,"b":[1,2]}"#)),
            (r#"{"a": 12"#, Some(r#"{"a":12}"#), Some(r#"{"a":12}"#)),
            (r#"{"a": 1."#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a": 1.5"#, Some(r#"{"a":1.5}"#), Some(r#"{"a":1.5}"#)),
            (r#"{"a": -"#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a": 1e"#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a": 1e5"#, Some(r#"{"a":100000.0}"#), Some(r#"{"a":100000.0}"#)),
            (r#"{"a": tr"#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a": true"#, Some(r#"{"a":true}"#), Some(r#"{"a":true}"#)),
            (r#"{"a": nul"#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a"#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a""#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a":"#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a": "#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"["#, Some(r#"[]"#), Some(r#"[]"#)),
            (r#""#, None, None),
            (r#"   "#, None, None),
            (r#""ab"#, None, Some(r#""ab""#)),
            (r#"12"#, Some(r#"12"#), Some(r#"12"#)),
            (r#"-"#, None, None),
            (r#"tr"#, None, None),
            (r#"{"a": "x\"#, Some(r#"{}"#), Some(r#"{"a":"x"}"#)),
            (r#"{"a": "x\u00"#, Some(r#"{}"#), Some(r#"{"a":"x"}"#)),
            (r#"{"a": "x\u00e9"#, Some(r#"{}"#), Some(r#"{"a":"xé"}"#)),
            (r#"["ab"#, Some(r#"[]"#), Some(r#"["ab"]"#)),
            (r#"["ab", "cd"#, Some(r#"["ab"]"#), Some(r#"["ab","cd"]"#)),
            (r#"{"a": {"b": "c"#, Some(r#"{"a":{}}"#), Some(r#"{"a":{"b":"c"}}"#)),
            (r#"{"a": [1, {"b": 2"#, Some(r#"{"a":[1,{"b":2}]}"#), Some(r#"{"a":[1,{"b":2}]}"#)),
            (r#"{"a": "x", "b"#, Some(r#"{"a":"x"}"#), Some(r#"{"a":"x"}"#)),
            (r#"{"a": "x", "b": ["#, Some(r#"{"a":"x","b":[]}"#), Some(r#"{"a":"x","b":[]}"#)),
            (r#"{"a": 1,"#, Some(r#"{"a":1}"#), Some(r#"{"a":1}"#)),
            (r#"[1, 2,"#, Some(r#"[1,2]"#), Some(r#"[1,2]"#)),
            (r#"{"a": 1, "a": 2"#, Some(r#"{"a":2}"#), Some(r#"{"a":2}"#)),
            (r#"{"a": [tr"#, Some(r#"{"a":[]}"#), Some(r#"{"a":[]}"#)),
            (r#"{"a": "\ud83d"#, Some(r#"{}"#), Some(r#"{"a":""}"#)),
            (r#"{"a": "\ud83d\ude00"#, Some(r#"{}"#), Some(r#"{"a":"😀"}"#)),
            (r#"{"a": 1}"#, Some(r#"{"a":1}"#), Some(r#"{"a":1}"#)),
            (r#"{"a": 12345678901234567890"#, Some(r#"{"a":12345678901234567890}"#), Some(r#"{"a":12345678901234567890}"#)),
            (r#"{"a": "é"#, Some(r#"{}"#), Some(r#"{"a":"é"}"#)),
            (r#" {"a": "\n"#, Some(r#"{}"#), Some(r#"{"a":"\n"}"#)),
            (r#"{"a": [1, 2]"#, Some(r#"{"a":[1,2]}"#), Some(r#"{"a":[1,2]}"#)),
            (r#"{"a": [1, "x"#, Some(r#"{"a":[1]}"#), Some(r#"{"a":[1,"x"]}"#)),
            (r#"{"a": {"b": "c""#, Some(r#"{"a":{"b":"c"}}"#), Some(r#"{"a":{"b":"c"}}"#)),
            (r#"{"a": {"b"#, Some(r#"{"a":{}}"#), Some(r#"{"a":{}}"#)),
            (r#"{"x": 1, "y": fal"#, Some(r#"{"x":1}"#), Some(r#"{"x":1}"#)),
            (r#"[{"a": "b"#, Some(r#"[{}]"#), Some(r#"[{"a":"b"}]"#)),
            (r#"{"a": "b""#, Some(r#"{"a":"b"}"#), Some(r#"{"a":"b"}"#)),
            (r#"{"a": 1e+"#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a": 0.0"#, Some(r#"{"a":0.0}"#), Some(r#"{"a":0.0}"#)),
            (r#"{"a": 3"#, Some(r#"{"a":3}"#), Some(r#"{"a":3}"#)),
            (r#"[3"#, Some(r#"[3]"#), Some(r#"[3]"#)),
            (r#"{"a":1} "#, Some(r#"{"a":1}"#), Some(r#"{"a":1}"#)),
            (r#"{"a": [1, 2"#, Some(r#"{"a":[1,2]}"#), Some(r#"{"a":[1,2]}"#)),
            (r#"{"a": "b", "c": {"d": [true, "e"#, Some(r#"{"a":"b","c":{"d":[true]}}"#), Some(r#"{"a":"b","c":{"d":[true,"e"]}}"#)),
            (r#"{"k": "v\"q"#, Some(r#"{}"#), Some(r#"{"k":"v\"q"}"#)),
            (r#"{"a": 1.5e"#, Some(r#"{}"#), Some(r#"{}"#)),
            (r#"{"a": -12"#, Some(r#"{"a":-12}"#), Some(r#"{"a":-12}"#)),
            (r#"  [ 1 , 2 "#, Some(r#"[1,2]"#), Some(r#"[1,2]"#)),
            (r#"{"a": "x"}  "#, Some(r#"{"a":"x"}"#), Some(r#"{"a":"x"}"#)),
            (r#"{"a": "\ud83d\"#, Some(r#"{}"#), Some(r#"{"a":""}"#)),
            (r#"{"a": "\ud83d\u"#, Some(r#"{}"#), Some(r#"{"a":""}"#)),
            (r#"{"a": "é""#, Some(r#"{"a":"é"}"#), Some(r#"{"a":"é"}"#)),

        ];
        for &(text, drop, keep) in cases {
            for split in 0..=text.len() {
                let mut parser = PartialJson::new();
                parser.push(&text.as_bytes()[..split], |_| {}).unwrap();
                parser.push(&text.as_bytes()[split..], |_| {}).unwrap();
                for (mode, expected) in [(PartialStrings::Drop, drop), (PartialStrings::Keep, keep)] {
                    let expected = expected.map(|e| serde_json::from_str::<Value>(e).unwrap());
                    assert_eq!(parser.value_at_end(mode), expected, "{text:?} split at {split}, {mode:?}");
                }
            }
        }
    }

    /// The events of a skeleton parser fed a growing document are those of the tree parser, a
    /// A skeleton parser fed a growing document holds a long string's text only until it is
    /// reported; the string's value (escapes, a lone surrogate, multi-byte characters split
    /// between pushes) is still the tree parser's, and so are the appended texts.
    #[test]
    fn a_long_string_is_not_held_twice() {
        let unit = r#"abc \\ \"q\" \u00e9 é 😀 \ud83d \n"#;
        let body = unit.repeat(8 * STRING_TRIM / unit.len() + 1);
        let doc = format!(r#"{{"k": ["{body}", "short", "{body}"], "n": 1}}"#);
        let mut tree = PartialJson::new();
        tree.set_lossy_surrogates(true);
        let mut expected = (String::new(), Vec::new());
        tree.push_str(&doc, |e| match e {
            PathEvent::StringAppend { text, .. } => expected.0.push_str(text),
            PathEvent::ValueComplete { value, .. } if value.is_string() => expected.1.push((*value).clone()),
            _ => {}
        })
        .unwrap();
        // Pushes of 4 KiB, of sizes that end a string just past the threshold, and all at once.
        for step in [4093, STRING_TRIM - 7, STRING_TRIM + 5, doc.len()] {
            let mut skeleton = PartialJson::skeleton(PartialJsonLimits::default());
            skeleton.set_lossy_surrogates(true);
            let mut got = (String::new(), Vec::new());
            let mut most = 0;
            let mut end = 0;
            while end < doc.len() {
                end = (end + step).min(doc.len());
                while !doc.is_char_boundary(end) {
                    end += 1;
                }
                skeleton
                    .push_document(&doc[..end], |e| match e {
                        PathEvent::StringAppend { text, .. } => got.0.push_str(text),
                        PathEvent::ValueComplete { value, .. } if value.is_string() => got.1.push((*value).clone()),
                        _ => {}
                    })
                    .unwrap();
                most = most.max(skeleton.held_bytes());
            }
            skeleton.finish_check().unwrap();
            assert_eq!(got, expected, "{step}");
            assert_eq!(skeleton.replaced_surrogates(), tree.replaced_surrogates(), "{step}");
            if step < STRING_TRIM {
                assert!(most < 3 * STRING_TRIM, "{step}: {most}");
            }
        }
    }

    /// closing container's text parsing to the tree's value; it holds O(depth) whatever the size.
    #[test]
    fn skeleton_events_match_the_tree_parser() {
        let docs = [
            r#"{"a": [1, 2.5, {"b": "x\"y", "c": [true, null, []]}], "d": {}, "a": -0, "e": "\ud83d\ude00"}"#,
            r#"[[[[[]]]], [[]], "s", 12, {"k": {"k": {"k": [0]}}}]"#,
            r#"  "top"  "#,
            r#"{"x": "é\u00e9", "y": [1e5, 0.0, 12345678901234567890]} "#,
            r#"{"bad": [1, 2 3]}"#,
        ];
        for doc in docs {
            let mut tree = PartialJson::new();
            let mut expected = Vec::new();
            let tree_result = tree.push(doc.as_bytes(), |e| {
                let value = e.value().map(|v| v.into_owned());
                expected.push((e.name(), e.path().to_vec(), value, matches!(e, PathEvent::StringAppend { .. })))
            });
            for split in 0..=doc.len() {
                if !doc.is_char_boundary(split) {
                    continue;
                }
                // A skeleton parser, one that keeps the whole tree, one whose tree outgrows its
                // budget half-way: the same events.
                for budget in [None, Some(usize::MAX), Some(300)] {
                    let limits = PartialJsonLimits::default();
                    let mut skeleton = match budget {
                        None => PartialJson::skeleton(limits),
                        Some(budget) => PartialJson::skeleton_with_tree(limits, budget),
                    };
                    let mut events = Vec::new();
                    let mut on_event = |e: &PathEvent<'_>| {
                        let value = e.value().map(|v| v.into_owned());
                        events.push((e.name(), e.path().to_vec(), value, matches!(e, PathEvent::StringAppend { .. })))
                    };
                    let first = skeleton.push_document(&doc[..split], &mut on_event);
                    if budget == Some(usize::MAX) {
                        // The tree so far is the tree parser's.
                        let mut prefix = PartialJson::new();
                        let _ = prefix.push(&doc.as_bytes()[..split], |_| {});
                        for strings in [PartialStrings::Drop, PartialStrings::Keep] {
                            assert_eq!(skeleton.value_at_end(strings), prefix.value_at_end(strings), "{doc:?} {split}");
                        }
                    }
                    let result = if first.is_err() { first } else { skeleton.push_document(doc, &mut on_event) };
                    // Appends may be split differently; compare the rest exactly.
                    let strip = |v: &[(&'static str, Vec<PathSegment>, Option<Value>, bool)]| -> Vec<_> {
                        v.iter().filter(|e| !e.3).cloned().collect()
                    };
                    assert_eq!(strip(&events), strip(&expected), "{doc:?} split at {split}");
                    assert_eq!(result.is_err(), tree_result.is_err(), "{doc:?}");
                    assert_eq!(skeleton.finish_check().is_ok(), tree.finish_ref().is_ok(), "{doc:?}");
                    assert_eq!(skeleton.is_complete(), tree.is_complete() || doc.trim() == r#""top""#);
                    let kept = skeleton.tree_estimate() <= budget.unwrap_or(0);
                    assert_eq!(skeleton.has_tree(), kept, "{doc:?} {budget:?}");
                    if kept && result.is_ok() {
                        assert_eq!(skeleton.take_root().as_ref(), tree.finish_ref().ok(), "{doc:?}");
                    }
                }
            }
        }
        let mut skeleton = PartialJson::skeleton(PartialJsonLimits::default());
        let doc = "[".repeat(500) + &"]".repeat(500);
        let doc = "[".to_owned() + &vec![doc; 100].join(",") + "]";
        skeleton.push_document(&doc, |_| {}).unwrap();
        skeleton.finish_check().unwrap();
        assert!(skeleton.held_bytes() < 64 << 10, "{}", skeleton.held_bytes());
        assert!(skeleton.tree_estimate() > doc.len());
        // A tree outgrown is dropped (its memory with it), and kept again after a reset.
        let mut bounded = PartialJson::skeleton_with_tree(PartialJsonLimits::default(), 4096);
        bounded.push_document(&doc, |_| {}).unwrap();
        assert!(!bounded.has_tree() && bounded.held_bytes() < 64 << 10, "{}", bounded.held_bytes());
        bounded.reset();
        bounded.push_document("[1]", |_| {}).unwrap();
        assert_eq!(bounded.take_root(), Some(serde_json::json!([1])));
    }

    #[test]
    fn lone_surrogates_are_u_fffd_when_lossy() {
        for (doc, expected) in [
            (r#"["\ud83d"]"#, "\u{FFFD}"),
            (r#"["\udc00x"]"#, "\u{FFFD}x"),
            (r#"["\ud83d\ud83d\ude00"]"#, "\u{FFFD}😀"),
            (r#"["\ud83d\n"]"#, "\u{FFFD}\n"),
            (r#"["\ud83d\u0041"]"#, "\u{FFFD}A"),
            (r#"["\ud83dA"]"#, "\u{FFFD}A"),
        ] {
            for split in 0..=doc.len() {
                let mut parser = PartialJson::new();
                parser.set_lossy_surrogates(true);
                parser.push(&doc.as_bytes()[..split], |_| {}).unwrap();
                parser.push(&doc.as_bytes()[split..], |_| {}).unwrap();
                assert_eq!(parser.finish().unwrap(), serde_json::json!([expected]), "{doc} split at {split}");
                assert!(parser.replaced_surrogates() >= 1);
            }
            assert!(PartialJson::new().push(doc.as_bytes(), |_| {}).is_err(), "strict by default: {doc}");
        }
    }

    #[test]
    fn value_at_end_after_an_error_is_the_value_before_it() {
        let mut parser = PartialJson::new();
        let _ = parser.push(br#"{"a": 1, "b": "x", "c": celsius}"#, |_| {});
        assert!(parser.error().is_some());
        assert_eq!(parser.value_at_end(PartialStrings::Drop), Some(serde_json::json!({"a": 1, "b": "x"})));
        let mut parser = PartialJson::new();
        let _ = parser.push(br#"{"a": 01"#, |_| {});
        assert_eq!(parser.value_at_end(PartialStrings::Drop), Some(serde_json::json!({})));
    }
}
