//! Tool-argument accumulation: the seam between the dialects and the
//! incremental partial-JSON parser.
//!
//! Every dialect feeds argument fragments through [`ToolArgs`]; it emits
//! `tool_args_delta` (the raw fragment) and `tool_args_path` (the parser's
//! path events), keeps the raw text, and decides at the end whether the
//! arguments are complete, valid JSON.

use serde_json::Value;

use super::events::StreamEvent;

// Until the partial-JSON parser lands these mirror its public types exactly.
/// A step in a JSON path (mirror of `ssefold::json::PathSegment`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}
/// A container kind (mirror of `ssefold::json::ContainerKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerKind {
    /// `{`
    Object,
    /// `[`
    Array,
}
/// A partial-JSON path event (mirror of `ssefold::json::PathEvent`).
#[derive(Debug, Clone, PartialEq)]
pub enum PathEvent<'a> {
    /// A container opened at `path`.
    ContainerStart {
        /// Where.
        path: &'a [PathSegment],
        /// Object or array.
        kind: ContainerKind,
    },
    /// Text appended to the string at `path`.
    StringAppend {
        /// Where.
        path: &'a [PathSegment],
        /// The appended text.
        text: &'a str,
    },
    /// The value at `path` is complete.
    ValueComplete {
        /// Where.
        path: &'a [PathSegment],
        /// The value.
        value: &'a Value,
    },
}
impl PathEvent<'_> {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        match self {
            PathEvent::ContainerStart { .. } => "container_start",
            PathEvent::StringAppend { .. } => "string_append",
            PathEvent::ValueComplete { .. } => "value_complete",
        }
    }
}

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
    /// Set once the arguments are known invalid (the parser refused a byte).
    invalid: Option<String>,
}

/// How the arguments ended.
pub(crate) enum ArgsEnd {
    /// No fragment at all.
    Empty,
    /// Complete, valid JSON.
    Valid(Value),
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

    /// Bytes held.
    pub(crate) fn capacity(&self) -> usize {
        self.raw.capacity()
    }

    /// Appends a fragment, emitting `tool_args_delta` and the path events.
    pub(crate) fn push(
        &mut self,
        fragment: &str,
        part: u32,
        max_bytes: usize,
        sink: &mut dyn FnMut(&StreamEvent<'_>),
    ) -> Result<(), PushError> {
        if self.raw.len() + fragment.len() > max_bytes {
            return Err(PushError::TooLarge);
        }
        self.raw.push_str(fragment);
        if fragment.is_empty() {
            return Ok(());
        }
        sink(&StreamEvent::ToolArgsDelta { part, json: fragment });
        Ok(())
    }

    /// A best-effort view of the arguments so far (partial strings included),
    /// if the text parses that far.
    pub(crate) fn partial_value(&self) -> Option<Value> {
        if self.invalid.is_some() {
            return None;
        }
        serde_json::from_str(&self.raw).ok()
    }

    /// Ends the arguments: valid only if the whole text is one complete JSON
    /// value (exactly what `serde_json` would accept).
    pub(crate) fn finish(&mut self) -> ArgsEnd {
        if let Some(e) = &self.invalid {
            return ArgsEnd::Invalid(e.clone());
        }
        if self.raw.trim().is_empty() {
            return ArgsEnd::Empty;
        }
        match serde_json::from_str::<Value>(&self.raw) {
            Ok(v) => ArgsEnd::Valid(v),
            Err(e) => {
                let msg = if e.is_eof() { format!("incomplete JSON: {e}") } else { format!("invalid JSON: {e}") };
                self.invalid = Some(msg.clone());
                ArgsEnd::Invalid(msg)
            }
        }
    }

    /// Whether the arguments so far are one complete, valid JSON value.
    pub(crate) fn is_complete_value(&self) -> bool {
        self.invalid.is_none() && !self.raw.trim().is_empty() && serde_json::from_str::<Value>(&self.raw).is_ok()
    }
}
