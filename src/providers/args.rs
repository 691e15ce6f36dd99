//! Tool-argument accumulation: the seam between the dialects and the
//! incremental partial-JSON parser ([`crate::json::PartialJson`]).
//!
//! Every dialect feeds argument fragments through [`ToolArgs`]; it emits
//! `tool_args_delta` (the raw fragment) and `tool_args_path` (the parser's
//! path events, as the fragment arrives), keeps the raw text, and decides at
//! the end whether the arguments are complete, valid JSON (the parser's
//! strict `finish`, identical to `serde_json`).
//!
//! The arguments are kept as text: the parser is a skeleton one (the path
//! stack and the value being read), a closing container's path event carries
//! its text ([`PathEvent::ContainerComplete`]). Where the dialect turns the
//! arguments into a value (the Anthropic `input`), the parser also builds it
//! as the fragments arrive while it is small ([`TREE_BUDGET`]); past that the
//! value is parsed from the text where one is asked for (at commit or when
//! the message is built). What a stream holds for a tool call is therefore
//! its text plus O(depth + longest string), plus at most the budget's worth
//! of value.

use serde_json::Value;

use super::events::StreamEvent;
use super::events::WarningCode;
use super::view::Fragment;
use super::Sink;
use crate::json::{PartialJson, PartialJsonLimits, PartialStrings, PathEvent};

/// The estimated size (see [`PartialJson::tree_estimate`]) up to which the
/// value of materialized arguments is built as they stream: an input this
/// small is never parsed a second time; a larger one is parsed from its text
/// once, at commit.
const TREE_BUDGET: usize = 1 << 20;

/// How many `tool_args_path` events one call of the stream (a `feed`, a
/// `finish`) may still emit ([`crate::providers::StreamConfig::max_path_events_per_feed`]):
/// a host that collects a call's events before reading them (the Python and
/// Go `feed`) holds them all at once, and one whole-arguments delta can hold
/// a path event per byte. Past it the path events of that call are dropped,
/// with one `path_events_dropped` warning; the arguments' text
/// (`tool_args_delta`) and the fold are complete.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PathBudget {
    /// Path events left for this call.
    pub(crate) left: usize,
    /// The warning was emitted in this call.
    pub(crate) warned: bool,
}

impl PathBudget {
    /// A budget of `max` path events for one call (`0`: none, the drop
    /// warned once per call as for any other budget).
    pub(crate) fn new(max: usize) -> Self {
        PathBudget { left: max, warned: false }
    }
}

/// Why pushing a fragment failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PushError {
    /// The raw arguments grew past the configured limit.
    TooLarge,
    /// The fragment's text did not read ([`Fragment::try_push_to`]):
    /// nothing was appended or emitted.
    Declined,
}

/// The arguments of one tool call.
#[derive(Debug)]
pub(crate) struct ToolArgs {
    raw: String,
    parser: PartialJson,
    /// Whether the dialect turns the arguments into a value (Anthropic's
    /// `input`): then what that value would cost counts in the memory budget.
    materialized: bool,
    /// The memory budget ran out while these arguments streamed: their value
    /// is never built (it is what the budget refused).
    over_budget: bool,
    /// Free text, not JSON (a Responses custom tool's input): kept and
    /// announced, never parsed; complete whenever the provider ends it.
    text: bool,
}

impl Default for ToolArgs {
    fn default() -> Self {
        ToolArgs {
            raw: String::new(),
            parser: PartialJson::skeleton(PartialJsonLimits::default()),
            materialized: false,
            over_budget: false,
            text: false,
        }
    }
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

    /// Arguments that are free text ([`crate::providers::ToolInputFormat::Text`]):
    /// `tool_args_delta`s, no path events, no parsing.
    pub(crate) fn text() -> Self {
        ToolArgs { text: true, ..ToolArgs::default() }
    }

    /// Says that the dialect turns these arguments into a value (see
    /// [`capacity`](Self::capacity)).
    pub(crate) fn set_materialized(&mut self) {
        self.materialized = true;
    }

    /// The memory budget ran out on these arguments: no value is built from
    /// them ([`partial_value`](Self::partial_value) and
    /// [`take_value`](Self::take_value) say `None`).
    pub(crate) fn set_over_budget(&mut self) {
        self.over_budget = true;
    }

    /// The raw text received so far.
    pub(crate) fn raw(&self) -> &str {
        &self.raw
    }

    /// Bytes held: the raw text and the parser's buffers (with the value
    /// built so far, if it is). A value the dialect builds from the text
    /// later is counted where it keeps it (and built only when it fits:
    /// [`value_fits`](Self::value_fits)).
    pub(crate) fn capacity(&self) -> usize {
        self.raw.capacity() + core::mem::size_of::<PartialJson>() + self.parser.held_bytes()
    }

    /// Whether the value of the arguments so far would cost at most `max`
    /// bytes as a `Value` tree: built as they streamed (it is small), else
    /// estimated from the text in one pass, without building it.
    pub(crate) fn value_fits(&self, max: usize) -> bool {
        if self.parser.has_tree() {
            return self.parser.tree_estimate() <= max;
        }
        crate::json::scan::estimate_value_bytes(self.raw.as_bytes()) <= max
    }

    /// Moves the raw text out (the arguments are done with: release them
    /// next).
    pub(crate) fn take_raw(&mut self) -> String {
        std::mem::take(&mut self.raw)
    }

    /// Appends a fragment (decoded into the raw text, so an escaped
    /// fragment costs no allocation of its own), emitting `tool_args_delta`
    /// then the path events it completes. Over `max_bytes` nothing is
    /// appended. An invalid byte makes the parser stop (sticky error): later
    /// fragments are still kept raw and announced, the arguments end
    /// `invalid_arguments`. A lone surrogate escape is U+FFFD in the path
    /// events and the value (the raw text keeps it), with a
    /// `lone_surrogate` warning.
    pub(crate) fn push(
        &mut self,
        fragment: &(impl Fragment + ?Sized),
        part: u32,
        max_bytes: usize,
        budget: &mut PathBudget,
        sink: &mut Sink<'_>,
    ) -> Result<(), PushError> {
        let start = self.raw.len();
        if !fragment.try_push_to(&mut self.raw) {
            return Err(PushError::Declined);
        }
        if start == 0 && self.parser.bytes_pushed() == 0 && !self.text {
            self.parser = if self.materialized {
                Self::parser(|limits| PartialJson::skeleton_with_tree(limits, TREE_BUDGET), max_bytes)
            } else {
                Self::parser(PartialJson::skeleton, max_bytes)
            };
        }
        if self.raw.len() > max_bytes {
            self.raw.truncate(start);
            return Err(PushError::TooLarge);
        }
        if self.raw.len() == start {
            return Ok(());
        }
        let delta = StreamEvent::ToolArgsDelta { part, json: &self.raw[start..] };
        match fragment.as_escaped() {
            Some(escaped) => sink.escaped(&delta, escaped),
            None => sink.event(&delta),
        }
        if self.parser.error().is_none() && !self.text {
            let replaced = self.parser.replaced_surrogates();
            // An error is sticky in the parser and reported by `finish`.
            let _ = self.parser.push_document(&self.raw, |event| {
                if budget.left > 0 {
                    budget.left -= 1;
                    sink.event(&StreamEvent::ToolArgsPath { part, event });
                } else if !budget.warned {
                    budget.warned = true;
                    let message = format!(
                        "tool call part {part}: more path events in this feed than max_path_events_per_feed; \
                         the rest of this feed's are dropped (the arguments' text is complete)"
                    );
                    sink.event(&StreamEvent::Warning { code: WarningCode::PathEventsDropped, message: &message });
                }
            });
            let lone = self.parser.replaced_surrogates() - replaced;
            if lone > 0 {
                let message = format!(
                    "tool call part {part}: {lone} lone surrogate escape(s) in the arguments decoded to U+FFFD (the raw text keeps them)"
                );
                sink.event(&StreamEvent::Warning { code: WarningCode::LoneSurrogate, message: &message });
            }
        }
        Ok(())
    }

    /// A parser for these arguments: `max_bytes`, lone surrogates as U+FFFD.
    fn parser(make: fn(PartialJsonLimits) -> PartialJson, max_bytes: usize) -> PartialJson {
        let mut parser = make(PartialJsonLimits { max_bytes: max_bytes as u64, ..PartialJsonLimits::default() });
        parser.set_lossy_surrogates(true);
        parser
    }

    /// A tree parser fed the whole raw text (what a value is built from).
    fn tree(&self) -> PartialJson {
        let mut parser = Self::parser(PartialJson::with_limits, self.raw.len().max(1));
        let _ = parser.push_str(&self.raw, |_: &PathEvent<'_>| {});
        parser
    }

    /// The arguments so far as if they ended here (jiter's `partial_mode`
    /// semantics, see [`PartialJson::value_at_end`]); once they are known
    /// invalid, the value of the text before the error. `None` when no value
    /// has begun (or after [`release`](Self::release)). From the value built
    /// so far, else parsed from the text: time and memory proportional to it.
    pub(crate) fn partial_value(&self, strings: PartialStrings) -> Option<Value> {
        if self.raw.is_empty() || self.over_budget || self.text {
            return None;
        }
        if self.parser.has_tree() {
            return self.parser.value_at_end(strings);
        }
        self.tree().value_at_end(strings)
    }

    /// Ends the arguments: valid only if the whole text is one complete JSON
    /// value (exactly what `serde_json` would accept, a lone surrogate escape
    /// aside).
    pub(crate) fn finish(&mut self) -> ArgsEnd {
        if self.text {
            return if self.raw.is_empty() { ArgsEnd::Empty } else { ArgsEnd::Valid };
        }
        if self.raw.trim().is_empty() {
            return ArgsEnd::Empty;
        }
        match self.parser.finish_check() {
            Ok(()) => ArgsEnd::Valid,
            Err(e) => ArgsEnd::Invalid(format!("{} at byte {}", e.kind, e.offset)),
        }
    }

    /// The parsed arguments after [`finish`](Self::finish) said
    /// [`ArgsEnd::Valid`]: the value built as they streamed, moved out (the
    /// arguments are done with: release them next), else parsed from the
    /// text.
    pub(crate) fn take_value(&mut self) -> Option<Value> {
        if self.over_budget || self.text {
            return None;
        }
        if self.parser.has_tree() {
            if let Some(value) = self.parser.take_root() {
                return Some(value);
            }
        }
        if self.parser.replaced_surrogates() == 0 {
            // serde_json gives the same value (the parser's `finish` is
            // serde_json's), faster; it refuses only past 128 levels.
            if let Ok(value) = serde_json::from_str(&self.raw) {
                return Some(value);
            }
        }
        let mut tree = self.tree();
        tree.finish_ref().ok()?;
        tree.take_root()
    }

    /// Frees the raw text and the parser (after the call was committed and
    /// its outcome reported).
    pub(crate) fn release(&mut self) {
        self.raw = String::new();
        self.parser = PartialJson::skeleton(PartialJsonLimits::default());
    }

    /// Whether the arguments so far are one complete, valid JSON value.
    pub(crate) fn is_complete_value(&self) -> bool {
        !self.text && self.parser.error().is_none() && self.parser.is_complete()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `doc` in 7-byte fragments to materialized arguments.
    fn fed(doc: &str) -> ToolArgs {
        let mut args = ToolArgs::new();
        args.set_materialized();
        for chunk in doc.as_bytes().chunks(7) {
            let fragment = std::str::from_utf8(chunk).unwrap();
            args.push(fragment, 0, usize::MAX, &mut PathBudget::new(usize::MAX), &mut |_: &StreamEvent<'_>| {})
                .unwrap();
        }
        args
    }

    /// The value built while streaming (a small input) and the one parsed from the text (an
    /// input past the tree budget) are both serde_json's; so are the partial values.
    #[test]
    fn value_built_or_parsed_is_serde_json_value() {
        let small = r#"{"path": "a\"b", "n": [1, 2.5, -0, 1.5e300, 18446744073709551616], "o": {"k": null, "k": true}, "e": "\u00e9"}"#;
        let row = r#"{"line": "some text with \"quotes\"", "n": 12345, "f": 0.1}"#;
        let large = format!("[{}]", vec![row; 30_000].join(","));
        for doc in [small, &large] {
            let mut args = fed(doc);
            assert_eq!(args.parser.has_tree(), doc.len() < 1000, "{}", doc.len());
            let cut = &doc[..doc.len() - 3];
            let partial = fed(cut).partial_value(PartialStrings::Keep);
            let mut text = ToolArgs::new();
            text.push(cut, 0, usize::MAX, &mut PathBudget::new(usize::MAX), &mut |_: &StreamEvent<'_>| {}).unwrap();
            assert_eq!(partial, text.partial_value(PartialStrings::Keep));
            assert!(matches!(args.finish(), ArgsEnd::Valid));
            let expected: Value = serde_json::from_str(doc).unwrap();
            assert_eq!(args.take_value(), Some(expected.clone()));
            // Taken once; asked again, parsed from the text.
            assert_eq!(args.take_value(), Some(expected));
        }
    }
}
