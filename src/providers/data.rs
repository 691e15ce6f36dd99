//! Event data → JSON values, the same way for every dialect: a lone
//! surrogate escape read as U+FFFD (with a warning), a parse failure typed
//! as [`StreamError::InvalidJson`]; and decoded text appended to a part.

use serde_json::Value;

use super::sink::{warn_lone, Sink};
use super::turn::Turn;
use super::{view, StreamError};
use crate::sse::Event;

/// Parses event data as a JSON value, or the typed error. A lone surrogate
/// escape (which serde_json refuses) is read as U+FFFD, with a
/// `lone_surrogate` warning.
pub(crate) fn parse_value(event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Value, StreamError> {
    value_lenient(event.data(), event.event(), sink)
        .map_err(|e| StreamError::InvalidJson { event_type: event.event().to_owned(), message: e.to_string() })
}

/// Parses JSON text as a value; on serde_json's refusal, again with its lone
/// surrogate escapes replaced by `\uFFFD` (warning `lone_surrogate`, naming
/// `what`), so the common path costs nothing.
pub(crate) fn value_lenient(text: &str, what: &str, sink: &mut Sink<'_>) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text).or_else(|e| match view::replace_lone_surrogates(text) {
        Some((fixed, n)) => {
            let v = serde_json::from_str(&fixed).map_err(|_| e)?;
            warn_lone(sink, what, n);
            Ok(v)
        }
        None => Err(e),
    })
}

/// The event with its lone surrogate escapes replaced by `\uFFFD` (to
/// re-parse after serde_json refused it), and how many there were.
pub(crate) fn without_lone_surrogates(event: &Event<'_>) -> Option<(String, usize)> {
    view::replace_lone_surrogates(event.data())
}

/// Appends already decoded text to an open part (`text_delta`), within
/// `max_text_bytes`.
pub(crate) fn append_str(turn: &mut Turn, part: u32, text: &str, sink: &mut Sink<'_>) -> Result<(), StreamError> {
    if !text.bytes().any(|b| b == b'\\' || b < 0x20) {
        return turn.append_text(part, &view::JsonStr::decoded(text), sink);
    }
    // Re-escaped, for the turn's one append path (rare: escapes in text).
    let quoted = serde_json::to_string(text).unwrap_or_default();
    match view::JsonStr::from_raw(&quoted) {
        Some(s) => turn.append_text(part, &s, sink),
        None => Ok(()),
    }
}

/// The JSON error of a typed parse.
pub(crate) fn json_error(event: &Event<'_>, e: serde_json::Error) -> StreamError {
    StreamError::InvalidJson { event_type: event.event().to_owned(), message: e.to_string() }
}
