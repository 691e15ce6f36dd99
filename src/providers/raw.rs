//! What the fast paths of the dialects whose chunks are whole documents
//! (Gemini, Ollama) share besides [`super::fastpath`]'s `Cursor`: the test
//! switches that send every payload down the `Value` path and count the
//! payloads a fast path took, and the fold-side helpers that apply a member's raw JSON text to a folded map,
//! in place when they can.

use serde_json::{Map, Value};

use super::fastpath::{Cursor, MAX_DEPTH};

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
/// A plain string, a boolean or a small unsigned integer is built directly,
/// anything else by serde_json.
pub(crate) fn value_of(raw: &str) -> Value {
    // The usual scalars built directly (what serde_json builds of them).
    if let Some(s) = plain_string(raw) {
        return Value::String(s.to_owned());
    }
    match raw {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    let mut c = Cursor::new(raw);
    if let Some(n) = c.uint().filter(|_| c.end().is_some()) {
        return Value::from(n);
    }
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

/// The most members of a map looked up by a scan rather than by the hash
/// of the key ([`member`]): a provider's objects have a handful, and
/// comparing a few short keys costs less than hashing one.
const SCAN_MAX: usize = 12;

/// `map.get(key)`, by a scan of a small map (no key hashed).
#[inline]
pub(crate) fn member<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    if map.len() <= SCAN_MAX {
        return map.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
    }
    map.get(key)
}

/// `map.get_mut(key)`, by a scan of a small map ([`member`]).
#[inline]
pub(crate) fn member_mut<'m>(map: &'m mut Map<String, Value>, key: &str) -> Option<&'m mut Value> {
    if map.len() <= SCAN_MAX {
        return map.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v);
    }
    map.get_mut(key)
}

/// `map.contains_key(key)`, by a scan of a small map ([`member`]).
#[inline]
pub(crate) fn has_member(map: &Map<String, Value>, key: &str) -> bool {
    member(map, key).is_some()
}

/// Sets `map[key]` to the value of `raw` (a new key goes last), in place
/// where it can ([`assign_raw`]). What `map.insert(key, value_of(raw))`
/// does, without its allocations in the usual case.
pub(crate) fn set_raw(map: &mut Map<String, Value>, key: &str, raw: &str) {
    if let Some(old) = member_mut(map, key) {
        assign_raw(old, raw);
        return;
    }
    map.insert(key.to_owned(), value_of(raw));
}

/// Sets `slot` to the value of `raw` (text a [`Cursor::skip`] stepped
/// over) and says whether that changed it (`*slot != value_of(raw)`
/// before). When `raw` has the shape `slot` has (each object the same keys
/// in the same order, each array the same length), the scalars are written
/// in place: no map rebuilt, no key allocated or hashed, a plain string
/// copied into the string already there (a usage object whose counts grew,
/// a list of ratings); anything else is parsed and replaces `slot`.
pub(crate) fn assign_raw(slot: &mut Value, raw: &str) -> bool {
    if let (Value::String(s), Some(inner)) = (&mut *slot, plain_string(raw)) {
        // The usual scalar member (a model version, a finish reason).
        if s == inner {
            return false;
        }
        s.clear();
        s.push_str(inner);
        return true;
    }
    let mut c = Cursor::new(raw);
    if !raw.starts_with(['{', '[']) {
        // A scalar: no shape to check.
        let mut changed = false;
        if write_in_place(slot, &mut c, &mut changed).is_some() && c.end().is_some() {
            return changed;
        }
    } else {
        let mut leaves = Vec::with_capacity(16);
        if same_shape(slot, &mut c, 0, &mut leaves).is_some() && c.end().is_some() {
            let mut changed = false;
            if write_leaves(slot, &mut leaves.iter(), &mut changed).is_some() {
                return changed;
            }
        } else if let Some(m) = slot.as_object_mut().filter(|m| !m.is_empty() && raw.len() <= REBUILD_MAX) {
            // Members added or gone (a usage gaining its candidates'
            // count): the map rebuilt from the members it keeps.
            if let Some(changed) = assign_object(m, raw) {
                return changed;
            }
        }
    }
    let new = value_of(raw);
    let changed = *slot != new;
    *slot = new;
    changed
}

/// The longest object text [`assign_object`] rebuilds a map from (it reads
/// the text twice: a long one, a grounding's rendered page, costs more
/// read twice than parsed once).
const REBUILD_MAX: usize = 1024;

/// Sets `m` to the object `raw` whose members are not `m`'s (some added,
/// gone or moved): each member `m` has is moved into the new map (its key
/// not allocated again) and written over in place where it can
/// ([`assign_raw`]), the others parsed; says whether the object changed.
/// `None` (`m` untouched) when `raw` is not an object of at most 16
/// members with plain keys, each once.
fn assign_object(m: &mut Map<String, Value>, raw: &str) -> Option<bool> {
    let mut members = [("", ""); 16];
    let mut n = 0;
    let mut c = Cursor::new(raw);
    c.spaced_object(|key, c| {
        if n == members.len() || members[..n].iter().any(|(k, _)| *k == key) {
            return None;
        }
        members[n] = (key, c.skip()?);
        n += 1;
        Some(())
    })?;
    c.end()?;
    let mut old: Vec<(String, Value)> = std::mem::take(m).into_iter().collect();
    let mut changed = false;
    let mut new = Map::with_capacity(n);
    for &(key, raw) in &members[..n] {
        let (key, value) = match old.iter().position(|(k, _)| k == key) {
            Some(i) => {
                let (key, mut value) = old.swap_remove(i);
                changed |= assign_raw(&mut value, raw);
                (key, value)
            }
            None => {
                changed = true;
                (key.to_owned(), value_of(raw))
            }
        };
        new.insert(key, value);
    }
    *m = new;
    Some(changed || !old.is_empty())
}

/// Whether the value at the cursor has `old`'s shape: where both are
/// objects, the same keys in the same order (plain keys: an escaped one
/// declines); where both are arrays, the same length. A scalar fits
/// anything (it is compared when written). The value is stepped over;
/// `leaves` gets, in the order [`write_leaves`] walks `old`, `""` for each
/// container entered and the raw text of every other value.
fn same_shape<'a>(old: &Value, c: &mut Cursor<'a>, depth: usize, leaves: &mut Vec<&'a str>) -> Option<()> {
    if depth >= MAX_DEPTH {
        return None;
    }
    match (old, c.peek()?) {
        (Value::Object(m), b'{') => {
            leaves.push("");
            let mut keys = m.iter();
            c.spaced_object(|key, c| {
                let (k, v) = keys.next()?;
                if k != key {
                    return None;
                }
                same_shape(v, c, depth + 1, leaves)
            })?;
            keys.next().is_none().then_some(())
        }
        (Value::Array(a), b'[') => {
            leaves.push("");
            let mut items = a.iter();
            c.spaced_array(|c| same_shape(items.next()?, c, depth + 1, leaves))?;
            items.next().is_none().then_some(())
        }
        _ => {
            leaves.push(c.skip()?);
            Some(())
        }
    }
}

/// Writes the texts [`same_shape`] recorded over `old`, the value it
/// walked (no text read twice for its structure): the members and elements
/// of each container entered, each other value by [`write_in_place`]; sets
/// `changed` when one differs.
fn write_leaves(old: &mut Value, leaves: &mut std::slice::Iter<'_, &str>, changed: &mut bool) -> Option<()> {
    let leaf = leaves.next()?;
    if !leaf.is_empty() {
        return write_in_place(old, &mut Cursor::new(leaf), changed);
    }
    match old {
        Value::Object(m) => m.values_mut().try_for_each(|v| write_leaves(v, leaves, changed)),
        Value::Array(a) => a.iter_mut().try_for_each(|v| write_leaves(v, leaves, changed)),
        _ => None,
    }
}

/// Writes the value at the cursor over `old`, whose shape it has
/// ([`same_shape`]); sets `changed` when a scalar differs. `None` when the
/// value cannot be read (then `old` may be partly written: the caller
/// replaces it whole).
fn write_in_place(old: &mut Value, c: &mut Cursor<'_>, changed: &mut bool) -> Option<()> {
    match (old, c.peek()?) {
        (Value::Object(m), b'{') => {
            let mut values = m.values_mut();
            c.spaced_object(|_, c| write_in_place(values.next()?, c, changed))
        }
        (Value::Array(a), b'[') => {
            let mut items = a.iter_mut();
            c.spaced_array(|c| write_in_place(items.next()?, c, changed))
        }
        (Value::String(s), b'"') => {
            match c.plain() {
                Some(inner) => {
                    if s != inner {
                        s.clear();
                        s.push_str(inner);
                        *changed = true;
                    }
                }
                None => {
                    // Escaped (a rendered page): decoded and compared.
                    let text = c.strict_string()?;
                    let mut new = String::new();
                    text.push_to(&mut new);
                    if *s != new {
                        *s = new;
                        *changed = true;
                    }
                }
            }
            Some(())
        }
        (Value::Number(n), b'0'..=b'9') if c.clone().uint().is_some() => {
            let u = c.uint()?;
            if n.as_u64() != Some(u) {
                *n = u.into();
                *changed = true;
            }
            Some(())
        }
        (old, _) => {
            let new = value_of(c.skip()?);
            if *old != new {
                *old = new;
                *changed = true;
            }
            Some(())
        }
    }
}

/// The text of a JSON string literal that has no escape (its decoded text
/// is the raw one).
pub(crate) fn plain_string(raw: &str) -> Option<&str> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    // (The vectorized search: signatures are long.)
    memchr::memchr(b'\\', inner.as_bytes()).is_none().then_some(inner)
}

#[cfg(test)]
pub(crate) mod tests;
