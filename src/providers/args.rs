//! Tool-argument accumulation: the seam between the dialects and the
//! incremental partial-JSON parser ([`crate::json::PartialJson`]).
//!
//! Every dialect feeds argument fragments through [`ToolArgs`]; it emits
//! `tool_args_delta` (the raw fragment) and `tool_args_path` (the parser's
//! path events, as the fragment arrives), keeps the raw text, and decides at
//! the end whether the arguments are complete, valid JSON (the parser's
//! strict `finish`, identical to `serde_json`).

use serde_json::Value;

use super::events::StreamEvent;
use super::view::Fragment;
use crate::json::{PartialJson, PartialJsonLimits, PartialStrings};

/// Why pushing a fragment failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PushError {
    /// The raw arguments grew past the configured limit.
    TooLarge,
}

/// The arguments of one tool call.
#[derive(Debug, Default)]
pub(crate) struct ToolArgs {
    raw: String,
    parser: PartialJson,
}

/// How the arguments ended.
#[derive(Debug)]
pub(crate) enum ArgsEnd {
    /// No fragment at all.
    Empty,
    /// Complete, valid JSON (its value: [`ToolArgs::take_value`]).
    Valid,
    /// Not valid JSON (or incomplete); the message says why.
    Invalid(String),
}

impl ToolArgs {
    /// A fresh accumulator.
    pub(crate) fn new() -> Self {
        ToolArgs::default()
    }

    /// The raw text received so far.
    pub(crate) fn raw(&self) -> &str {
        &self.raw
    }

    /// Bytes held (raw text; the parser's own buffers are bounded by the
    /// value's depth and its longest string).
    pub(crate) fn capacity(&self) -> usize {
        self.raw.capacity() + core::mem::size_of::<PartialJson>()
    }

    /// Appends a fragment (decoded into the raw text, so an escaped
    /// fragment costs no allocation of its own), emitting `tool_args_delta`
    /// then the path events it completes. Over `max_bytes` nothing is
    /// appended. An invalid byte makes the parser stop (sticky error): later
    /// fragments are still kept raw and announced, the arguments end
    /// `invalid_arguments`.
    pub(crate) fn push(
        &mut self,
        fragment: &(impl Fragment + ?Sized),
        part: u32,
        max_bytes: usize,
        sink: &mut dyn FnMut(&StreamEvent<'_>),
    ) -> Result<(), PushError> {
        if self.raw.is_empty() && self.parser.bytes_pushed() == 0 {
            self.parser = PartialJson::with_limits(PartialJsonLimits {
                max_bytes: max_bytes as u64,
                ..PartialJsonLimits::default()
            });
        }
        let start = self.raw.len();
        fragment.push_to(&mut self.raw);
        if self.raw.len() > max_bytes {
            self.raw.truncate(start);
            return Err(PushError::TooLarge);
        }
        let fragment = &self.raw[start..];
        if fragment.is_empty() {
            return Ok(());
        }
        sink(&StreamEvent::ToolArgsDelta { part, json: fragment });
        if self.parser.error().is_none() {
            // An error is sticky in the parser and reported by `finish`.
            let _ = self.parser.push_str(fragment, |event| sink(&StreamEvent::ToolArgsPath { part, event }));
        }
        Ok(())
    }

    /// The arguments so far as if they ended here (jiter's `partial_mode`
    /// semantics, see [`PartialJson::value_at_end`]); once they are known
    /// invalid, the value of the text before the error. `None` when no value
    /// has begun (or after [`release`](Self::release)).
    pub(crate) fn partial_value(&self, strings: PartialStrings) -> Option<Value> {
        self.parser.value_at_end(strings)
    }

    /// Ends the arguments: valid only if the whole text is one complete JSON
    /// value (exactly what `serde_json` would accept).
    pub(crate) fn finish(&mut self) -> ArgsEnd {
        if self.raw.trim().is_empty() {
            return ArgsEnd::Empty;
        }
        match self.parser.finish_ref() {
            Ok(_) => ArgsEnd::Valid,
            Err(e) => ArgsEnd::Invalid(format!("{} at byte {}", e.kind, e.offset)),
        }
    }

    /// The parsed arguments after [`finish`](Self::finish) said
    /// [`ArgsEnd::Valid`], moved out (no copy); the arguments are done with
    /// (release them next).
    pub(crate) fn take_value(&mut self) -> Option<Value> {
        self.parser.take_root()
    }

    /// Frees the raw text and the parser (after the call was committed and
    /// its outcome reported).
    pub(crate) fn release(&mut self) {
        self.raw = String::new();
        self.parser = PartialJson::default();
    }

    /// Whether the arguments so far are one complete, valid JSON value.
    pub(crate) fn is_complete_value(&self) -> bool {
        self.parser.error().is_none() && self.parser.is_complete()
    }
}
