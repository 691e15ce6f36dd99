//! The folded message lent by the stream ([`MessageView`]): serialized or
//! converted without first copying what the stream holds into a new
//! [`Value`] (a Responses message whose terminal `output` carries 16 MB of
//! arguments would otherwise cost that much again before its JSON), and
//! without building the values the stream keeps as JSON text (an Anthropic
//! input too large for a tree).

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The folded message, as [`Stream::message`](super::Stream::message)
/// would return it, borrowed from the stream where the dialect can lend it.
/// Serializing it gives exactly the JSON of that value (member order
/// included); [`into_value`](Self::into_value) gives that value.
#[derive(Debug)]
pub enum MessageView<'a> {
    /// A value of its own (built by the dialect).
    Owned(Value),
    /// An object: `base`'s members in order, the member named `key` being
    /// the array `value` (appended after them when `base` has no such
    /// member).
    Object {
        /// The members other than `key` (a `key` member keeps its position).
        base: &'a Map<String, Value>,
        /// The member replaced (or appended).
        key: &'static str,
        /// Its elements.
        value: &'a [Value],
    },
    /// `value` with values the stream kept as JSON text without building
    /// them (an Anthropic or Bedrock tool `input` too large for a tree):
    /// each text of `raw` is written at its path, as the provider sent it
    /// (`value` holds `null` there).
    Spliced {
        /// The message, `null` where a text goes.
        value: Value,
        /// Where each text goes, and the text.
        raw: Vec<(Vec<PathStep>, &'a RawValue)>,
    },
}

/// One step of a path into a JSON value: an object's member or an array's
/// element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStep {
    /// The member of this name.
    Key(&'static str),
    /// The element at this index.
    Index(usize),
}

/// The value of JSON text the stream validated: serde_json's, or (a lone
/// surrogate escape, more than 128 levels) the incremental parser's, a lone
/// surrogate as U+FFFD.
fn raw_value(raw: &RawValue) -> Value {
    if let Ok(value) = serde_json::from_str(raw.get()) {
        return value;
    }
    let limits = crate::json::PartialJsonLimits { max_bytes: raw.get().len() as u64, ..Default::default() };
    let mut parser = crate::json::PartialJson::with_limits(limits);
    parser.set_lossy_surrogates(true);
    let _ = parser.push_str(raw.get(), |_: &crate::json::PathEvent<'_>| {});
    match parser.finish_ref() {
        Ok(_) => parser.take_root().unwrap_or(Value::Null),
        Err(_) => Value::Null,
    }
}

impl MessageView<'_> {
    /// The message as a value of its own (a copy of what is borrowed).
    pub fn into_value(self) -> Value {
        match self {
            MessageView::Owned(value) => value,
            MessageView::Object { base, key, value } => {
                let mut m = base.clone();
                m.insert(key.to_owned(), Value::Array(value.to_vec()));
                Value::Object(m)
            }
            MessageView::Spliced { mut value, raw } => {
                for (path, text) in raw {
                    let slot = path.iter().try_fold(&mut value, |v, step| match step {
                        PathStep::Key(k) => v.get_mut(*k),
                        PathStep::Index(i) => v.get_mut(*i),
                    });
                    if let Some(slot) = slot {
                        *slot = raw_value(text);
                    }
                }
                value
            }
        }
    }

    /// Compact JSON text (what `serde_json::to_writer` gives for
    /// [`into_value`](Self::into_value)), appended to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        // Serializing into memory cannot fail: every key is a string.
        serde_json::to_writer(out, self).unwrap_or_default();
    }
}

impl Serialize for MessageView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageView::Owned(value) => value.serialize(serializer),
            MessageView::Object { base, key, value } => {
                let appended = !base.contains_key(*key);
                let mut map = serializer.serialize_map(Some(base.len() + usize::from(appended)))?;
                for (k, v) in *base {
                    if k == key {
                        map.serialize_entry(k, value)?;
                    } else {
                        map.serialize_entry(k, v)?;
                    }
                }
                if appended {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
            MessageView::Spliced { value, raw } => {
                let raw: Vec<(&[PathStep], &RawValue)> = raw.iter().map(|(p, t)| (p.as_slice(), *t)).collect();
                Spliced { value, raw }.serialize(serializer)
            }
        }
    }
}

/// A value, with the texts of `raw` written at their paths (relative to it).
struct Spliced<'v> {
    value: &'v Value,
    raw: Vec<(&'v [PathStep], &'v RawValue)>,
}

impl Serialize for Spliced<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some((_, text)) = self.raw.iter().find(|(path, _)| path.is_empty()) {
            return text.serialize(serializer);
        }
        // The texts under a child, their paths relative to it.
        let under = |step: PathStep| -> Vec<(&[PathStep], &RawValue)> {
            self.raw.iter().filter(|(path, _)| path.first() == Some(&step)).map(|(path, t)| (&path[1..], *t)).collect()
        };
        match self.value {
            Value::Object(m) => {
                let mut map = serializer.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    let raw: Vec<_> = self
                        .raw
                        .iter()
                        .filter(|(path, _)| matches!(path.first(), Some(PathStep::Key(key)) if key == k))
                        .map(|(path, t)| (&path[1..], *t))
                        .collect();
                    if raw.is_empty() {
                        map.serialize_entry(k, v)?;
                    } else {
                        map.serialize_entry(k, &Spliced { value: v, raw })?;
                    }
                }
                map.end()
            }
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for (i, item) in items.iter().enumerate() {
                    let raw = under(PathStep::Index(i));
                    if raw.is_empty() {
                        seq.serialize_element(item)?;
                    } else {
                        seq.serialize_element(&Spliced { value: item, raw })?;
                    }
                }
                seq.end()
            }
            other => other.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The lent form serializes as its value does, whether the member exists (kept in place) or not
    /// (appended), compact and pretty.
    #[test]
    fn serializes_as_its_value() {
        let output = vec![json!({"type": "function_call", "arguments": "{\"a\":\"x\"}"}), json!(1)];
        for base in [json!({"id": "r", "output": null, "usage": {"n": 1}}), json!({"id": "r"})] {
            let base = base.as_object().unwrap();
            let view = MessageView::Object { base, key: "output", value: &output };
            let mut compact = Vec::new();
            view.write_json(&mut compact);
            let pretty = serde_json::to_string_pretty(&view).unwrap();
            let value = view.into_value();
            assert_eq!(String::from_utf8(compact).unwrap(), value.to_string());
            assert_eq!(pretty, serde_json::to_string_pretty(&value).unwrap());
            assert_eq!(value["output"], Value::Array(output.clone()));
        }
        let owned = MessageView::Owned(json!([1, "a"]));
        assert_eq!(serde_json::to_string(&owned).unwrap(), r#"[1,"a"]"#);
    }
}
