//! The folded message lent by the stream ([`MessageView`]): serialized or
//! converted without first copying what the stream holds into a new
//! [`Value`] (a Responses message whose terminal `output` carries 16 MB of
//! arguments would otherwise cost that much again before its JSON).

use serde::ser::{Serialize, SerializeMap, Serializer};
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
