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
}
