//! The incremental partial-JSON parser.
//!
//! A byte-level state machine, never recursive: the stack of open containers is a `Vec`. It is
//! built in three layers, each in its own file:
//!
//! * the tokenizer (`lexer.rs`) reads the inside of a string, number or literal, resumable at
//!   any byte: strings are scanned for the next quote or backslash eight bytes at a time and
//!   validated with the standard UTF-8 validator; a multi-byte character, an escape or a `\u`
//!   surrogate pair split across fragments is carried over in a few bytes of state;
//! * the structure (`structure.rs`) reads the bytes between tokens against the grammar, keeps
//!   the path and reports the [`PathEvent`]s;
//! * the builder (`build.rs`) keeps what the parser's mode asks for of each completed value: the
//!   tree of values ([`PartialJson::new`]), only its shape (a skeleton parser, which reports a
//!   closing container with its text), or the tree within a budget.
//!
//! Every byte is looked at a bounded number of times, so `push` costs time proportional to its
//! fragment (plus the events it reports).

mod build;
mod lexer;
mod structure;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

use serde_json::Value;

use super::error::{PartialJsonError, PartialJsonErrorKind, PartialJsonLimits};
use super::events::{OwnedPathEvent, PathEvent, PathSegment};
use super::tree::{self, Frame};
use lexer::{Lexer, Scan};
use structure::Expect;

/// What a parser builds, and so how it reports a closing container: the one setting that tells
/// a tree parser ([`PartialJson::with_limits`]) from a skeleton one ([`PartialJson::skeleton`],
/// [`PartialJson::skeleton_with_tree`], [`PartialJson::with_container_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The tree of values (`value*`, `finish`); a closing container is reported as
    /// [`PathEvent::ValueComplete`] with its value.
    Tree,
    /// No tree: the path stack and the value being read only. A closing container is reported
    /// as [`PathEvent::ContainerComplete`] with its text (scalars as `ValueComplete`).
    Skeleton,
    /// A skeleton parser's events, and the tree of values while its estimated size stays within
    /// `budget` bytes; `dropped`: it outgrew the budget and the tree was dropped (a plain
    /// skeleton parser from then on, until [`reset`](PartialJson::reset)).
    Bounded { budget: usize, dropped: bool },
}

impl Mode {
    /// Whether closing containers are reported with their text (a skeleton parser, with or
    /// without a tree).
    #[inline]
    fn skeleton(self) -> bool {
        !matches!(self, Mode::Tree)
    }

    /// Whether the tree of values is kept.
    #[inline]
    fn has_tree(self) -> bool {
        match self {
            Mode::Tree => true,
            Mode::Skeleton => false,
            Mode::Bounded { dropped, .. } => !dropped,
        }
    }
}

/// Strings at least this long are moved into the tree on completion instead of copied.
const MOVE_STRING_THRESHOLD: usize = 256;

/// A skeleton parser fed the whole document keeps at most this much of a value string's
/// decoded text (what its `StringAppend` events need); a longer string's value is decoded from
/// the document when it closes, instead of held twice while it streams.
const STRING_TRIM: usize = 64 << 10;

/// A string buffer at most this large is kept for the next string; a larger one is freed.
const REUSE_STRING_MAX: usize = 2 * STRING_TRIM;

/// Result of processing a piece of input: `Ok` or the error (made sticky by the driver).
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
    /// What the parser builds (see [`Mode`]).
    mode: Mode,
    /// Bytes accepted so far (offset of the next byte).
    pushed: u64,
    /// The tokenizer: the token being read, the string and number buffers.
    lex: Lexer,
    /// What the structure expects next.
    expect: Expect,
    /// Open containers, outermost first.
    stack: Vec<Frame>,
    /// `path[i]` is the current member segment of `stack[i]`; always `path.len() == stack.len()`.
    path: Vec<PathSegment>,
    /// Spare key strings, reused for object frames (no allocation per container in steady state).
    spare_keys: Vec<String>,
    /// The completed top-level value.
    root: Option<Value>,
    /// Whether the string being read is an object key (keys emit no events and are never
    /// partial values).
    in_key: bool,
    /// Length of the string's decoded text (`lex.sbuf`) already reported by `StringAppend`.
    reported: usize,
    /// Offset of the opening quote of the value string being read.
    str_start: u64,
    /// The value string being read was trimmed (see [`STRING_TRIM`]): `lex.sbuf` holds only
    /// its text not yet reported, its value comes from the document.
    str_trimmed: bool,
    /// The sticky error.
    error: Option<PartialJsonError>,
    /// Estimated heap bytes of the tree of completed values (held, or in a skeleton parser what
    /// materializing it would cost; see [`held_bytes`](Self::held_bytes)).
    tree_bytes: usize,
    /// A skeleton parser's opening bracket offsets, innermost last (parallel to `stack`).
    starts: Vec<u64>,
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
            mode: Mode::Tree,
            pushed: 0,
            lex: Lexer::new(),
            expect: Expect::RootValue,
            stack: Vec::new(),
            path: Vec::new(),
            spare_keys: Vec::new(),
            root: None,
            in_key: false,
            reported: 0,
            str_start: 0,
            str_trimmed: false,
            error: None,
            tree_bytes: 0,
            starts: Vec::new(),
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
        PartialJson { mode: Mode::Skeleton, ..Self::with_limits(limits) }
    }

    /// A skeleton parser (the same events) that also builds the tree of values as a tree parser
    /// does, while its estimated size ([`tree_estimate`](Self::tree_estimate)) stays within
    /// `budget` bytes; past it the tree is dropped and the parser is a plain skeleton one from
    /// there on ([`has_tree`](Self::has_tree) says which). So a small document's value needs no
    /// second parse, and what the parser holds stays O(`budget` + depth + longest string).
    pub(crate) fn skeleton_with_tree(limits: PartialJsonLimits, budget: usize) -> Self {
        PartialJson { mode: Mode::Bounded { budget, dropped: false }, ..Self::with_limits(limits) }
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
        self.mode.has_tree()
    }

    /// Makes a lone surrogate escape (`"\ud83d"`, which RFC 8259's grammar allows and
    /// `json.loads` / `JSON.parse` accept) decode to U+FFFD instead of being an error; see
    /// [`replaced_surrogates`](Self::replaced_surrogates). `finish` then accepts what serde_json
    /// refuses for this reason alone.
    pub(crate) fn set_lossy_surrogates(&mut self, lossy: bool) {
        self.lex.lossy_surrogates = lossy;
    }

    /// Lone surrogate escapes decoded to U+FFFD so far (with lossy surrogates).
    pub(crate) fn replaced_surrogates(&self) -> u64 {
        self.lex.replaced_surrogates
    }

    /// Estimated heap bytes this parser holds: the tree of completed values (one `Value` per
    /// element with the vector's growth slack, a map entry and its key per member, string
    /// contents), the open containers and the scratch buffers. Updated in O(1) per value.
    pub(crate) fn held_bytes(&self) -> usize {
        (if self.has_tree() { self.tree_bytes } else { 0 })
            + self.lex.sbuf.capacity()
            + self.starts.capacity() * core::mem::size_of::<u64>()
            + self.lex.nbuf.capacity()
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
        self.push_inner(fragment, None, 0, false, on_event)
    }

    /// [`push`](Self::push) of text already known to be UTF-8: the same events and errors, without
    /// validating the string contents again.
    pub fn push_str(&mut self, fragment: &str, on_event: impl FnMut(&PathEvent<'_>)) -> Result<(), PartialJsonError> {
        self.push_inner(fragment.as_bytes(), Some(fragment), 0, false, on_event)
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
        self.push_inner(document.as_bytes(), Some(document), from, true, on_event)
    }

    /// `push` of `input[from..]`, with `text` the same bytes as `&str` when the caller has them;
    /// `document`: [`push_document`](Self::push_document)'s (offsets index the text).
    fn push_inner(
        &mut self,
        input: &[u8],
        text: Option<&str>,
        from: usize,
        document: bool,
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
        self.flush_append(document, &mut on_event);
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
        let partial = match self.lex.scan {
            Scan::Str(_) if partial_strings && !self.in_key => Some(Value::String(self.lex.sbuf.clone())),
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
        let tail = match self.lex.scan {
            Scan::Str(_) if keep && !self.in_key => Some(Value::String(self.lex.sbuf.clone())),
            Scan::Number(state) if state.is_terminal() && self.error.is_none() => {
                serde_json::from_slice::<Value>(&self.lex.nbuf).ok().filter(Value::is_number)
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
            if let Scan::Number(state) = self.lex.scan {
                if state.is_terminal() {
                    if let Err(error) = self.end_number(&mut |_: &PathEvent<'_>| {}) {
                        self.error = Some(error.clone());
                        return Err(error);
                    }
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
        self.lex.reset();
        self.expect = Expect::RootValue;
        self.stack.clear();
        self.starts.clear();
        while let Some(segment) = self.path.pop() {
            self.recycle(segment);
        }
        self.root = None;
        self.in_key = false;
        self.reported = 0;
        self.str_trimmed = false;
        self.error = None;
        self.tree_bytes = 0;
        if let Mode::Bounded { dropped, .. } = &mut self.mode {
            *dropped = false;
        }
        self.root_done = false;
    }

    /// Processes `input[from..]`, whose first byte is at offset `self.pushed` (so `input` starts
    /// at offset `base`): the tokenizer reads inside a token, the structure between tokens and
    /// takes each token completed. `text`: the same bytes as `&str`, when known (string contents
    /// then need no validation, and a skeleton parser slices closing containers out of it). An
    /// error is made sticky here.
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
            let step = match self.lex.scan {
                Scan::Between => self.structural(input, text, &mut i, base, on_event),
                Scan::Str(_) => match self.lex.string(input, text, &mut i, base) {
                    Ok(true) => self.end_string(text, i, base, on_event),
                    Ok(false) => Ok(()),
                    Err(error) => Err(error),
                },
                Scan::Number(_) => match self.lex.number(input, &mut i, base) {
                    Ok(true) => self.end_number(on_event),
                    Ok(false) => Ok(()),
                    Err(error) => Err(error),
                },
                Scan::Literal { .. } => match self.lex.literal(input, &mut i, base) {
                    Ok(Some(value)) => self.end_literal(value, on_event),
                    Ok(None) => Ok(()),
                    Err(error) => Err(error),
                },
            };
            if let Err(error) = step {
                self.error = Some(error.clone());
                break Err(error);
            }
        };
        self.pushed = match &result {
            Ok(()) => base + input.len() as u64,
            Err(error) => error.offset.max(base),
        };
        result
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
    if let Scan::Number(state) = parser.lex.scan {
        if parser.stack.is_empty() && state.is_terminal() {
            return parser.finish().map(Some);
        }
    }
    Ok(parser.value_with(partial_strings))
}
