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
    /// `value`, an object whose member `key` is an array some of whose
    /// elements (objects) hold one member as JSON text the stream kept
    /// without building its value (an Anthropic tool `input` too large for a
    /// tree): each `(element, member, text)` of `raw` is written there, as
    /// the provider sent it (`value` holds `null` in its place).
    Spliced {
        /// The message, `null` where a text goes.
        value: Value,
        /// The member holding the array.
        key: &'static str,
        /// Where each text goes (element index, member) and the text.
        raw: Vec<(usize, &'static str, &'a RawValue)>,
    },
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
            MessageView::Spliced { mut value, key, raw } => {
                for (i, member, text) in raw {
                    if let Some(Value::Object(element)) = value.get_mut(key).and_then(|a| a.get_mut(i)) {
                        element.insert(member.to_owned(), raw_value(text));
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
            MessageView::Spliced { value: Value::Object(m), key, raw } => {
                let mut map = serializer.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    match v {
                        Value::Array(items) if k == key => map.serialize_entry(k, &SplicedList { items, raw })?,
                        _ => map.serialize_entry(k, v)?,
                    }
                }
                map.end()
            }
            MessageView::Spliced { value, .. } => value.serialize(serializer),
        }
    }
}

/// An array whose elements `raw` names hold a member as text.
struct SplicedList<'v, 'a> {
    items: &'v [Value],
    raw: &'v [(usize, &'static str, &'a RawValue)],
}

impl Serialize for SplicedList<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.items.len()))?;
        for (i, item) in self.items.iter().enumerate() {
            match (item, self.raw.iter().find(|(at, ..)| *at == i)) {
                (Value::Object(members), Some((_, member, text))) => {
                    seq.serialize_element(&SplicedObject { members, member, text })?
                }
                _ => seq.serialize_element(item)?,
            }
        }
        seq.end()
    }
}

/// An object whose member `member` is written from `text`.
struct SplicedObject<'v> {
    members: &'v Map<String, Value>,
    member: &'v str,
    text: &'v RawValue,
}

impl Serialize for SplicedObject<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.members.len()))?;
        for (k, v) in self.members {
            if k == self.member {
                map.serialize_entry(k, self.text)?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
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
