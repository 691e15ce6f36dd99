//! Members the fold does not model: kept from a chunk (top level, choice)
//! by first carrier updated by later non-null values, or merged by the SDK's
//! `accumulate_delta` rule (delta members).

use serde_json::{Map, Value};

use super::view::Extra;
use crate::json::scan::map_heap_bytes;
use crate::providers::{value_lenient, Sink};

/// Members only a real chunk sets, once (a choice has none of them).
pub(super) const FIRST_WINS: [&str; 4] = ["id", "object", "created", "model"];

/// Members kept from one level of the stream (the chunk's top level, a
/// choice): the first value of each, replaced by a later non-null one.
#[derive(Debug, Default)]
pub(super) struct Kept {
    pub(super) map: Map<String, Value>,
    /// The raw text last applied per member (a repeat costs one compare).
    pub(super) raw: Vec<(String, String)>,
}

impl Kept {
    /// Heap bytes held: the members and their raw texts.
    pub(super) fn footprint(&self) -> usize {
        map_heap_bytes(&self.map)
            + self.raw.capacity() * core::mem::size_of::<(String, String)>()
            + self.raw.iter().map(|(k, v)| k.capacity() + v.capacity()).sum::<usize>()
    }
}

impl Kept {
    /// Applies one member of a chunk; `real`: of a `chat.completion.chunk`
    /// (only such a chunk sets the completion's id, object, created and
    /// model, and only the first one).
    pub(super) fn apply(&mut self, key: &str, raw: &str, real: bool, sink: &mut Sink<'_>) {
        match self.raw.iter_mut().find(|(k, _)| k == key) {
            Some((_, old)) => {
                if old == raw || raw == "null" || FIRST_WINS.contains(&key) {
                    return;
                }
                old.clear();
                old.push_str(raw);
            }
            None => {
                if !real && FIRST_WINS.contains(&key) {
                    return;
                }
                self.raw.push((key.to_owned(), raw.to_owned()));
            }
        }
        if let Ok(v) = value_lenient(raw, key, sink) {
            match self.map.get_mut(key) {
                Some(old) => overlay(old, v),
                None => {
                    self.map.insert(key.to_owned(), v);
                }
            }
        }
    }
}

/// A later value of a kept member over the earlier one: objects member by
/// member (Azure's per-chunk `content_filter_results`, Groq's `x_groq`
/// gaining `usage`), anything else replaced; `null` never erases.
pub(super) fn overlay(old: &mut Value, new: Value) {
    match (old, new) {
        (_, Value::Null) => {}
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(slot) => overlay(slot, v),
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (old, new) => *old = new,
    }
}

/// Merges one delta member into `acc` — the SDK's `accumulate_delta`:
/// strings concatenated, objects merged recursively, lists of objects with
/// an `index` merged by it, other lists appended, anything else replaced;
/// `index`, `type`, `id` and `format` replaced (never concatenated),
/// numbers replaced (never added), `null` never erases.
pub(super) fn merge(acc: &mut Map<String, Value>, key: &str, delta: Value) {
    match acc.get_mut(key) {
        Some(slot) if !slot.is_null() => merge_into(slot, key, delta),
        _ => {
            let fresh = match delta {
                Value::Array(items) => {
                    let mut list = Vec::new();
                    merge_list(&mut list, items);
                    Value::Array(list)
                }
                v => v,
            };
            acc.insert(key.to_owned(), fresh);
        }
    }
}

pub(super) fn merge_into(slot: &mut Value, key: &str, delta: Value) {
    if delta.is_null() {
        return;
    }
    if matches!(key, "index" | "type" | "id" | "format") {
        *slot = delta;
        return;
    }
    match (slot, delta) {
        (Value::String(a), Value::String(b)) => a.push_str(&b),
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a, &k, v);
            }
        }
        (Value::Array(a), Value::Array(b)) => merge_list(a, b),
        (slot, d) => *slot = d,
    }
}

pub(super) fn merge_list(acc: &mut Vec<Value>, delta: Vec<Value>) {
    for entry in delta {
        let index = entry.get("index").and_then(Value::as_u64);
        let at = index.and_then(|i| acc.iter().position(|e| e.get("index").and_then(Value::as_u64) == Some(i)));
        match (at, entry) {
            (Some(p), Value::Object(b)) => match &mut acc[p] {
                Value::Object(a) => {
                    for (k, v) in b {
                        merge(a, &k, v);
                    }
                }
                other => *other = Value::Object(b),
            },
            (_, entry) => acc.push(entry),
        }
    }
}

/// Merges raw members generically into `acc`.
pub(super) fn merge_members(acc: &mut Map<String, Value>, members: &Extra<'_>, sink: &mut Sink<'_>) {
    for (k, raw) in members {
        if let Ok(v) = value_lenient(raw, k, sink) {
            merge(acc, k, v);
        }
    }
}
