//! What the fast paths of the dialects whose chunks are whole documents
//! (Gemini, Ollama) share besides [`super::fastpath`]'s `Cursor`: the test
//! switches that send every payload down the `Value` path and count the
//! payloads a fast path took, and the fold-side helpers that apply a member's raw JSON text to a folded map,
//! in place when they can.

use serde_json::{Map, Value};

#[cfg(test)]
thread_local! {
    /// Test switch: every payload takes the slow path.
    pub(crate) static SLOW_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Test counter: payloads the fast paths took.
    pub(crate) static QUICK_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether a fast path may try this payload (always, outside tests).
pub(crate) fn quick_allowed() -> bool {
    #[cfg(test)]
    if SLOW_ONLY.get() {
        return false;
    }
    true
}

/// Counts a payload a fast path took (tests only).
pub(crate) fn quick_taken() {
    #[cfg(test)]
    QUICK_TAKEN.set(QUICK_TAKEN.get() + 1);
}

/// The value of raw JSON text (validated by the reader that found it, and
/// free of lone surrogate escapes: [`super::fastpath::Cursor::skip`]).
pub(crate) fn value_of(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

/// Sets `map[key]` to the value of `raw` (a new key goes last): a plain
/// string over a string and a boolean over a boolean are written in place,
/// anything else parsed. What `map.insert(key, value_of(raw))` does, without
/// its allocations in the usual case.
pub(crate) fn set_raw(map: &mut Map<String, Value>, key: &str, raw: &str) {
    if let Some(old) = map.get_mut(key) {
        match old {
            Value::String(s) => {
                if let Some(inner) = plain_string(raw) {
                    if s != inner {
                        s.clear();
                        s.push_str(inner);
                    }
                    return;
                }
            }
            Value::Bool(b) if raw == "true" || raw == "false" => {
                *b = raw == "true";
                return;
            }
            _ => {}
        }
        *old = value_of(raw);
        return;
    }
    map.insert(key.to_owned(), value_of(raw));
}

/// The text of a JSON string literal that has no escape (its decoded text
/// is the raw one).
pub(crate) fn plain_string(raw: &str) -> Option<&str> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then_some(inner)
}

#[cfg(test)]
pub(crate) mod tests;
