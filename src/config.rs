//! The configuration's names, defaults and ranges, once: every binding reads
//! them from here (the C ABI's `*_config_default` and its checks, the Python
//! `StreamConfig` and keywords, the Go options), and `tests/parity.rs`
//! checks each binding's hand-written list against [`STREAM_LIMITS`].
//!
//! # One semantics for every limit
//!
//! A limit is a number and means that number: the core never reads a value
//! as "the default". Each limit has a range ([`Limit::min`], [`Limit::max`]);
//! a value outside it is a [`ConfigError`], reported by
//! [`StreamConfig::validate`](crate::providers::StreamConfig::validate) (and
//! [`DecoderConfig::validate`](crate::sse::DecoderConfig::validate)), which
//! every binding calls before it builds a stream:
//!
//! - `0` is out of range for every limit that bounds what a stream accepts
//!   (a line, an event, an id, parts, bytes, choices, memory, an event-stream
//!   message or headers section): a stream with such a limit of `0` could
//!   accept nothing. The one limit whose range starts at `0` is
//!   `max_path_events_per_feed`, a budget of events handed out, where `0`
//!   means "no path events".
//! - A negative number cannot be written to a limit (its type is unsigned):
//!   converting it is the binding's job and fails there (Python
//!   `OverflowError`, Go an `*Error` with `ResultInvalidArgument`).
//! - Above [`Limit::max`] (the field's type: `u32` for the event-stream
//!   limits) is out of range.
//!
//! Leaving a field out is not a value: C starts from
//! `ssefold_stream_config_default`, Python from the keyword's default or
//! `StreamConfig()`'s, Go from a zero field (Go has no optional fields: a
//! zero field is "not set", so Go cannot ask for a `0`, and asks for "no path
//! events" with a negative `MaxPathEventsPerFeed`). Each of them is the
//! [`StreamConfig::default`](crate::providers::StreamConfig) value.

use crate::providers::StreamConfig;

/// A configuration the core refuses: which field, what it was given and
/// why. Every binding reports it as its invalid-argument error (C
/// `SSEFOLD_RESULT_INVALID_ARGUMENT` with this message, Python `ValueError`,
/// Go `*Error` with `ResultInvalidArgument`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A limit below its range (a `0` where `0` would accept nothing).
    #[error("{field} must be at least {min}, got {value}")]
    TooSmall {
        /// The field's name ([`Limit::name`]).
        field: &'static str,
        /// The value given.
        value: u64,
        /// The smallest value accepted.
        min: u64,
    },
    /// A limit above its range (more than its type holds).
    #[error("{field} must be at most {max}, got {value}")]
    TooLarge {
        /// The field's name ([`Limit::name`]).
        field: &'static str,
        /// The value given.
        value: u64,
        /// The largest value accepted.
        max: u64,
    },
    /// A name that is not one of the field's values (`utf8`: `replace` or
    /// `strict`).
    #[error("{field} must be one of {allowed}, got {value:?}")]
    UnknownValue {
        /// The field's name.
        field: &'static str,
        /// The value given.
        value: String,
        /// The names accepted, comma-separated.
        allowed: &'static str,
    },
    /// A field name that is not part of the configuration.
    #[error("unknown configuration field {0:?}")]
    UnknownField(String),
}

impl ConfigError {
    /// The name of the field the error is about (`""` for an unknown one).
    pub fn field(&self) -> &str {
        match self {
            ConfigError::TooSmall { field, .. }
            | ConfigError::TooLarge { field, .. }
            | ConfigError::UnknownValue { field, .. } => field,
            ConfigError::UnknownField(name) => name,
        }
    }
}

/// One limit of a configuration `C`: its name (the Python keyword and
/// `StreamConfig` attribute, the C field's name, the Go field's name in
/// snake_case, [`StreamLimit::name`](crate::providers::StreamLimit::name)
/// when it is one), its range, and how to read and write it.
pub struct Limit<C> {
    /// The name every binding uses.
    pub name: &'static str,
    /// The smallest value accepted.
    pub min: u64,
    /// The largest value accepted (the field's type).
    pub max: u64,
    /// Reads the field.
    pub get: fn(&C) -> u64,
    /// Writes the field (`value` within `min..=max`).
    pub set: fn(&mut C, u64),
}

impl<C: Default> Limit<C> {
    /// The default value (of `C::default()`).
    pub fn default_value(&self) -> u64 {
        (self.get)(&C::default())
    }
}

impl<C> Limit<C> {
    /// Checks `value` against the range.
    pub fn check(&self, value: u64) -> Result<u64, ConfigError> {
        if value < self.min {
            return Err(ConfigError::TooSmall { field: self.name, value, min: self.min });
        }
        if value > self.max {
            return Err(ConfigError::TooLarge { field: self.name, value, max: self.max });
        }
        Ok(value)
    }

    /// Checks `value` and writes it to `config`.
    pub fn apply(&self, config: &mut C, value: u64) -> Result<(), ConfigError> {
        (self.set)(config, self.check(value)?);
        Ok(())
    }
}

impl<C> std::fmt::Debug for Limit<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limit").field("name", &self.name).field("min", &self.min).field("max", &self.max).finish()
    }
}

/// The largest `usize`, as the table's `u64`.
const USIZE_MAX: u64 = usize::MAX as u64;
/// The largest `u32`, as the table's `u64`.
const U32_MAX: u64 = u32::MAX as u64;

/// The limits of a [`StreamConfig`], in the order of the Python keywords
/// (the SSE decoder's first, then the stream's, then the event-stream
/// framing's). The options that are not numbers (`utf8`,
/// `tool_input_trailing_strings`) are in [`STREAM_OPTIONS`].
pub const STREAM_LIMITS: &[Limit<StreamConfig>] = &[
    Limit {
        name: "max_line_len",
        min: 1,
        max: USIZE_MAX,
        get: |c| c.sse.max_line_len as u64,
        set: |c, v| c.sse.max_line_len = v as usize,
    },
    Limit {
        name: "max_event_size",
        min: 1,
        max: USIZE_MAX,
        get: |c| c.sse.max_event_size as u64,
        set: |c, v| c.sse.max_event_size = v as usize,
    },
    Limit {
        name: "max_id_len",
        min: 1,
        max: USIZE_MAX,
        get: |c| c.sse.max_id_len as u64,
        set: |c, v| c.sse.max_id_len = v as usize,
    },
    Limit {
        name: "max_parts",
        min: 1,
        max: USIZE_MAX,
        get: |c| c.max_parts as u64,
        set: |c, v| c.max_parts = v as usize,
    },
    Limit {
        name: "max_tool_args_bytes",
        min: 1,
        max: USIZE_MAX,
        get: |c| c.max_tool_args_bytes as u64,
        set: |c, v| c.max_tool_args_bytes = v as usize,
    },
    Limit {
        name: "max_text_bytes",
        min: 1,
        max: USIZE_MAX,
        get: |c| c.max_text_bytes as u64,
        set: |c, v| c.max_text_bytes = v as usize,
    },
    Limit {
        name: "max_choices",
        min: 1,
        max: USIZE_MAX,
        get: |c| c.max_choices as u64,
        set: |c, v| c.max_choices = v as usize,
    },
    Limit {
        name: "max_memory_bytes",
        min: 1,
        max: USIZE_MAX,
        get: |c| c.max_memory_bytes as u64,
        set: |c, v| c.max_memory_bytes = v as usize,
    },
    Limit {
        name: "max_path_events_per_feed",
        min: 0,
        max: USIZE_MAX,
        get: |c| c.max_path_events_per_feed as u64,
        set: |c, v| c.max_path_events_per_feed = v as usize,
    },
    Limit {
        name: "max_event_stream_message_len",
        min: 1,
        max: U32_MAX,
        get: |c| u64::from(c.event_stream.max_message_len),
        set: |c, v| c.event_stream.max_message_len = v as u32,
    },
    Limit {
        name: "max_event_stream_headers_len",
        min: 1,
        max: U32_MAX,
        get: |c| u64::from(c.event_stream.max_headers_len),
        set: |c, v| c.event_stream.max_headers_len = v as u32,
    },
];

/// The options of a [`StreamConfig`] that are not limits, with their
/// defaults as each binding writes them: `utf8` (`"replace"` or
/// `"strict"`, [`Utf8Mode::name`](crate::sse::Utf8Mode::name)) and
/// `tool_input_trailing_strings` (`false`).
pub const STREAM_OPTIONS: &[(&str, &str)] = &[("utf8", "replace"), ("tool_input_trailing_strings", "false")];

/// The limit named `name`.
pub fn stream_limit(name: &str) -> Option<&'static Limit<StreamConfig>> {
    STREAM_LIMITS.iter().find(|l| l.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_reads_what_it_writes_and_its_default_is_in_range() {
        for l in STREAM_LIMITS {
            let mut c = StreamConfig::default();
            let d = l.default_value();
            assert!(l.check(d).is_ok(), "{}", l.name);
            l.apply(&mut c, 7).unwrap();
            assert_eq!((l.get)(&c), 7, "{}", l.name);
            // Only this field changed.
            l.apply(&mut c, d).unwrap();
            assert_eq!(c, StreamConfig::default(), "{}", l.name);
        }
    }

    #[test]
    fn zero_is_refused_except_for_the_path_event_budget() {
        let zero_ok: Vec<&str> = STREAM_LIMITS.iter().filter(|l| l.check(0).is_ok()).map(|l| l.name).collect();
        assert_eq!(zero_ok, ["max_path_events_per_feed"]);
        let e = stream_limit("max_parts").unwrap().check(0).unwrap_err();
        assert_eq!(e.to_string(), "max_parts must be at least 1, got 0");
        assert_eq!(e.field(), "max_parts");
        let e = stream_limit("max_event_stream_headers_len").unwrap().check(1 << 32).unwrap_err();
        assert_eq!(e.to_string(), "max_event_stream_headers_len must be at most 4294967295, got 4294967296");
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = STREAM_LIMITS.iter().map(|l| l.name).collect();
        names.extend(STREAM_OPTIONS.iter().map(|(n, _)| *n));
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
