//! Borrowed raw members for the fast paths of the dialects whose chunks are
//! whole documents (Gemini, Ollama): an object read as (key, raw JSON text)
//! pairs without building a `Value`, and the fold-side helpers that apply a
//! raw member to a folded map only when its text changed, in place when it
//! can.
//!
//! A fast path declines (the caller falls back to its `Value` path) on
//! anything it does not model; [`RawObject`] itself declines duplicate keys
//! and `null` values, and [`may_hold_lone_surrogate`] tells when a payload
//! must take the slow path (which warns `lone_surrogate`).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::view::Str;

/// A JSON object's members as raw JSON text, in order; the first eight
/// inline (no allocation for the usual chunk). Deserializing fails on a
/// value that is not an object, on a `null` member and on a key given
/// twice: what the fast paths leave to the slow one.
#[derive(Debug, Default)]
pub(crate) struct RawObject<'a> {
    inline: [(Str<'a>, &'a str); 8],
    n: usize,
    more: Vec<(Str<'a>, &'a str)>,
}

impl<'a> RawObject<'a> {
    fn push(&mut self, key: Str<'a>, raw: &'a str) -> bool {
        if self.iter().any(|(k, _)| k == &*key) {
            return false;
        }
        if self.n < self.inline.len() {
            self.inline[self.n] = (key, raw);
            self.n += 1;
        } else {
            self.more.push((key, raw));
        }
        true
    }

    /// The members in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &'a str)> + '_ {
        self.inline[..self.n].iter().chain(self.more.iter()).map(|(k, v)| (&**k, *v))
    }

    /// The raw text of member `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&'a str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawObject<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object without null members or repeated keys")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<RawObject<'de>, M::Error> {
                use serde::de::Error;
                let mut out = RawObject::default();
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    let raw = map.next_value::<&'de RawValue>()?.get();
                    if raw == "null" || !out.push(key, raw) {
                        return Err(M::Error::custom("left to the slow path"));
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// A value read in the same pass as the object holding it, under key
/// [`Nested::KEY`] (see [`Object`]).
pub(crate) trait Nested<'de>: Deserialize<'de> {
    /// The member's key.
    const KEY: &'static str;
}

/// An object read in one pass: its members raw, except member `T::KEY`,
/// deserialized as `T` (its place kept among the members, with empty raw
/// text). Declines what [`RawObject`] declines.
pub(crate) struct Object<'a, T> {
    /// Every member in order (`T::KEY` with empty text).
    pub(crate) members: RawObject<'a>,
    /// Member `T::KEY`, when present.
    pub(crate) nested: Option<T>,
}

impl<'de: 'a, 'a, T: Nested<'de>> Deserialize<'de> for Object<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Nested<'de>> Visitor<'de> for V<T> {
            type Value = Object<'de, T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object without null members or repeated keys")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Object<'de, T>, M::Error> {
                use serde::de::Error;
                let mut out = Object { members: RawObject::default(), nested: None };
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    let raw = if &*key == T::KEY {
                        out.nested = Some(map.next_value::<T>()?);
                        ""
                    } else {
                        map.next_value::<&'de RawValue>()?.get()
                    };
                    if raw == "null" || !out.members.push(key, raw) {
                        return Err(M::Error::custom("left to the slow path"));
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

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

/// Whether JSON text may hold a `\u` escape of a surrogate (`\uD800`-
/// `\uDFFF`): such a payload takes the slow path, which reads a lone one as
/// U+FFFD with a warning. (A valid pair goes there too: rare, as providers
/// send raw UTF-8.)
pub(crate) fn may_hold_lone_surrogate(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memmem::find_iter(b, b"\\u").any(|at| {
        b.get(at + 2).is_some_and(|&c| c == b'd' || c == b'D')
            && b.get(at + 3).is_some_and(|&c| matches!(c, b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
    })
}

/// The raw text of the members last applied to a folded map, so that a
/// member repeated unchanged in every chunk (a model name, a usage object,
/// a safety rating) is neither parsed nor stored again. Valid only while
/// nothing else writes those members: the slow path clears it.
#[derive(Debug, Default)]
pub(crate) struct RawCache {
    seen: Vec<(String, String)>,
}

impl RawCache {
    /// Whether `raw` is the text last applied for `key`; otherwise records it
    /// (the caller then applies it).
    pub(crate) fn unchanged(&mut self, key: &str, raw: &str) -> bool {
        match self.seen.iter_mut().find(|(k, _)| k == key) {
            Some((_, last)) if last == raw => true,
            Some((_, last)) => {
                last.clear();
                last.push_str(raw);
                false
            }
            None => {
                self.seen.push((key.to_owned(), raw.to_owned()));
                false
            }
        }
    }

    /// Forgets every member (something else wrote the map).
    pub(crate) fn clear(&mut self) {
        self.seen.clear();
    }

    /// Heap bytes held.
    pub(crate) fn footprint(&self) -> usize {
        self.seen.capacity() * core::mem::size_of::<(String, String)>()
            + self.seen.iter().map(|(k, v)| k.capacity() + v.capacity()).sum::<usize>()
    }
}

/// The value of raw JSON text (validated by the deserializer, and free of
/// surrogate escapes: see [`may_hold_lone_surrogate`]).
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
