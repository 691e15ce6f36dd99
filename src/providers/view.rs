//! Borrowed string views for the typed payload parsers.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use serde::de::{Deserialize, Deserializer, Visitor};

/// A JSON string borrowed from the payload when it has no escapes, owned
/// otherwise. Unlike a bare `Cow<str>` (which serde borrows only as a direct
/// field), it also borrows inside `Option` and `Vec`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Str<'a>(pub(crate) Cow<'a, str>);

impl Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Str<'_> {
    /// The owned string.
    pub(crate) fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Tool arguments: a JSON string (borrowed when unescaped), or — as some
/// OpenAI-compatible bridges send them — a JSON object or array, kept as its
/// compact JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct JsonText<'a>(pub(crate) Cow<'a, str>);

impl Deref for JsonText<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonText<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        use serde::de::{MapAccess, SeqAccess};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JsonText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, object or array")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(JsonText(Cow::Owned(v)))
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
                let v = serde_json::Value::deserialize(MapAccessDeserializer::new(map))?;
                Ok(JsonText(Cow::Owned(v.to_string())))
            }
            fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<Self::Value, S::Error> {
                let v = serde_json::Value::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(JsonText(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON array whose first element is stored inline: deserializing the
/// usual one-element array (`choices`, `tool_calls`) allocates nothing.
#[derive(Debug)]
pub(crate) struct Few<T> {
    first: Option<T>,
    rest: Vec<T>,
}

impl<T> Few<T> {
    /// The elements, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.first.iter().chain(self.rest.iter())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Few<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::SeqAccess;
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Few<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let first = seq.next_element()?;
                let mut rest = Vec::new();
                if first.is_some() {
                    while let Some(x) = seq.next_element()? {
                        rest.push(x);
                    }
                }
                Ok(Few { first, rest })
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_unless_escaped() {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            a: Option<Str<'a>>,
            #[serde(borrow)]
            b: Option<Str<'a>>,
        }
        let t: T<'_> = serde_json::from_str(r#"{"a":"plain","b":"esc\n"}"#).unwrap();
        assert!(matches!(t.a.unwrap().0, Cow::Borrowed("plain")));
        assert!(matches!(t.b.unwrap().0, Cow::Owned(ref s) if s == "esc\n"));
    }

    #[test]
    fn few_keeps_order() {
        let f: Few<u32> = serde_json::from_str("[1, 2, 3]").unwrap();
        assert_eq!(f.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
        let f: Few<u32> = serde_json::from_str("[]").unwrap();
        assert_eq!(f.iter().count(), 0);
        assert!(serde_json::from_str::<Few<u32>>("{}").is_err());
    }

    #[test]
    fn json_text_takes_strings_and_objects() {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            a: Option<JsonText<'a>>,
            #[serde(borrow)]
            b: Option<JsonText<'a>>,
        }
        let t: T<'_> = serde_json::from_str(r#"{"a":"{\"x\":1}","b":{"y":[1,2]}}"#).unwrap();
        assert_eq!(&*t.a.unwrap(), r#"{"x":1}"#);
        assert_eq!(&*t.b.unwrap(), r#"{"y":[1,2]}"#);
        let t: T<'_> = serde_json::from_str(r#"{"a":"plain"}"#).unwrap();
        assert!(matches!(t.a.unwrap().0, Cow::Borrowed("plain")));
    }
}
