//! Limits and errors of the partial-JSON parser.

use std::fmt;

/// Resource limits of a [`PartialJson`](super::PartialJson) parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartialJsonLimits {
    /// Maximum number of simultaneously open containers (default 512). Opening one more is a
    /// [`PartialJsonErrorKind::DepthLimit`] error at the offset of its bracket.
    ///
    /// The parser itself never recurses, whatever this limit. Note that serde_json's own
    /// `Clone`, `Drop` and `PartialEq` of `Value` are recursive, so very large limits (tens of
    /// thousands) can overflow the stack in those when the document really is that deep.
    pub max_depth: usize,
    /// Maximum total number of bytes of one document (default 64 MiB). The byte at offset
    /// `max_bytes` is a [`PartialJsonErrorKind::SizeLimit`] error at that offset.
    pub max_bytes: u64,
}

/// cbindgen:ignore
impl PartialJsonLimits {
    /// Default maximum depth: 512 open containers.
    pub const DEFAULT_MAX_DEPTH: usize = 512;
    /// Default maximum size: 64 MiB.
    pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
}

impl Default for PartialJsonLimits {
    fn default() -> Self {
        PartialJsonLimits { max_depth: Self::DEFAULT_MAX_DEPTH, max_bytes: Self::DEFAULT_MAX_BYTES }
    }
}

/// What went wrong; see [`PartialJsonError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PartialJsonErrorKind {
    /// The input ended before a complete value. Only [`finish`](super::PartialJson::finish)
    /// reports it (a `push` of an incomplete document is not an error).
    Incomplete,
    /// The input is not a prefix of any valid JSON document; the string is a short reason.
    Invalid(&'static str),
    /// Too many nested containers (see [`PartialJsonLimits::max_depth`]).
    DepthLimit,
    /// Too many bytes (see [`PartialJsonLimits::max_bytes`]).
    SizeLimit,
}

impl PartialJsonErrorKind {
    /// The wire name, as the bindings report it: `incomplete`, `invalid`,
    /// `depth_limit` or `size_limit`.
    pub fn name(&self) -> &'static str {
        match self {
            PartialJsonErrorKind::Incomplete => "incomplete",
            PartialJsonErrorKind::Invalid(_) => "invalid",
            PartialJsonErrorKind::DepthLimit => "depth_limit",
            PartialJsonErrorKind::SizeLimit => "size_limit",
        }
    }
}

impl fmt::Display for PartialJsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartialJsonErrorKind::Incomplete => f.write_str("incomplete JSON"),
            PartialJsonErrorKind::Invalid(reason) => write!(f, "invalid JSON: {reason}"),
            PartialJsonErrorKind::DepthLimit => f.write_str("nesting depth limit exceeded"),
            PartialJsonErrorKind::SizeLimit => f.write_str("size limit exceeded"),
        }
    }
}

/// A typed partial-JSON error with the byte offset (from the start of the document) where it was
/// detected.
///
/// Offsets do not depend on how the input was split into fragments:
/// * `Invalid`: the offset of the first byte that cannot continue a valid document, except that
///   an invalid UTF-8 sequence is reported at its first byte, an invalid `\u` escape (lone
///   surrogate) at its fourth hex digit, and a number that serde_json cannot represent
///   (e.g. `1e400`) at its first byte;
/// * `Incomplete`: the total length of the input;
/// * `DepthLimit`: the offending opening bracket; `SizeLimit`: `max_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct PartialJsonError {
    /// What went wrong.
    pub kind: PartialJsonErrorKind,
    /// Byte offset in the whole document.
    pub offset: u64,
}

impl PartialJsonError {
    pub(crate) fn invalid(reason: &'static str, offset: u64) -> Self {
        PartialJsonError { kind: PartialJsonErrorKind::Invalid(reason), offset }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_defaults() {
        let e = PartialJsonError::invalid("expected value", 7);
        assert_eq!(e.to_string(), "invalid JSON: expected value at byte 7");
        let l = PartialJsonLimits::default();
        assert_eq!((l.max_depth, l.max_bytes), (512, 64 << 20));
        let e = PartialJsonError { kind: PartialJsonErrorKind::Incomplete, offset: 3 };
        assert_eq!(e.to_string(), "incomplete JSON at byte 3");
    }
}
