//! Which dialect a stream is: every dialect in detection order
//! ([`DIALECTS`]), detection from a stream's first event ([`detect`]), and
//! the check that an event given to one dialect is not clearly another's
//! ([`check_dialect`]).

use serde_json::{Map, Value};

use super::data::value_lenient;
use super::turn::{Dialect, DialectInfo};
use super::{
    anthropic, bedrock, bedrock_converse, gemini, ollama, openai_chat, openai_responses, Provider, StreamError,
    StreamEvent,
};
use crate::sse::Event;

/// Every dialect, in detection order (the first whose `detects` accepts a
/// stream's first event folds it). Adding a dialect: its file (a [`Dialect`]
/// and its `DIALECT` info), a [`Provider`] variant, and one entry here.
pub(super) const DIALECTS: [&DialectInfo; 7] = [
    &openai_responses::DIALECT,
    &anthropic::DIALECT,
    &openai_chat::DIALECT,
    &gemini::DIALECT,
    &ollama::DIALECT,
    &bedrock::DIALECT,
    &bedrock_converse::DIALECT,
];

/// The dialect of a [`Provider`] (none for [`Provider::Auto`]).
pub(super) fn make_dialect(p: Provider) -> Option<Box<dyn Dialect>> {
    DIALECTS.iter().find(|d| d.provider == p).map(|d| (d.make)())
}

/// [`StreamError::DialectMismatch`] when `event`, seen before the answer
/// started, is not `given`'s but another dialect's.
pub(super) fn check_dialect(given: Provider, event: &Event<'_>) -> Result<(), StreamError> {
    let data = event.data().trim();
    if !data.starts_with('{') || event.event() == "error" {
        return Ok(());
    }
    if given == Provider::Gemini && data.starts_with(r#"{"candidates""#) {
        // A top-level `candidates`: Gemini's detector takes it, whatever
        // the rest (an invalid document passes too); not parsed twice.
        return Ok(());
    }
    if given == Provider::OpenAIResponses && data.starts_with(r#"{"type":"response."#) {
        // A `type` of the `response.` family first: the Responses detector
        // takes it, whatever the rest; the first event of a turn (the whole
        // `response`, its tools and instructions) is not parsed twice.
        return Ok(());
    }
    let Ok(ShallowObject(value)) = serde_json::from_str::<ShallowObject>(data) else { return Ok(()) };
    let value = Value::Object(value);
    if value.get("error").is_some() || value.get("type").and_then(Value::as_str) == Some("error") {
        return Ok(());
    }
    let fits = |d: &DialectInfo| (d.detects)(data, Some(&value));
    if DIALECTS.iter().any(|d| d.provider == given && fits(d)) {
        return Ok(());
    }
    match DIALECTS.iter().find(|d| d.provider != given && fits(d)) {
        Some(other) => Err(StreamError::DialectMismatch { expected: given, detected: other.provider }),
        None => Ok(()),
    }
}

/// An event's top-level members as [`check_dialect`] needs them: scalars
/// and `error` read, every other object or array left empty (what the
/// dialects' `detects` look at, without building the rest).
struct ShallowObject(Map<String, Value>);

/// A member of a [`ShallowObject`].
struct Shallow(Value);

impl<'de> serde::Deserialize<'de> for Shallow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Shallow;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Shallow, E> {
                Ok(Shallow(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Shallow, E> {
                Ok(Shallow(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Shallow, E> {
                Ok(Shallow(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Shallow, E> {
                Ok(Shallow(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Shallow, E> {
                Ok(Shallow(Value::String(v.to_owned())))
            }
            fn visit_unit<E>(self) -> Result<Shallow, E> {
                Ok(Shallow(Value::Null))
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Shallow, S::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Shallow(Value::Array(Vec::new())))
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Shallow, M::Error> {
                while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
                Ok(Shallow(Value::Object(Map::new())))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> serde::Deserialize<'de> for ShallowObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ShallowObject;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<ShallowObject, M::Error> {
                let mut out = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value =
                        if key == "error" { map.next_value::<Value>()? } else { map.next_value::<Shallow>()?.0 };
                    out.insert(key, value);
                }
                Ok(ShallowObject(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Detects the dialect from one event.
pub(super) fn detect(event: &Event<'_>) -> Option<&'static DialectInfo> {
    let data = event.data().trim();
    // (A lone surrogate does not hide the dialect; the dialect warns.)
    let value: Option<Value> = value_lenient(data, "", &mut |_: &StreamEvent<'_>| {}).ok();
    DIALECTS.iter().copied().find(|d| (d.detects)(data, value.as_ref()))
}

#[cfg(test)]
mod shallow_tests {
    use super::*;

    /// Every dialect's `detects` answers the same on the shallow view as on
    /// the whole value, for the first JSON event of every recording and on
    /// shapes built for the nested `error` rule.
    #[test]
    fn detection_sees_the_same_in_the_shallow_view() {
        let mut firsts: Vec<String> = [
            r#"{"type":"error","error":{"type":"overloaded_error","message":"x"}}"#,
            r#"{"type":"error","error":{"code":"c","message":"x","param":null},"sequence_number":1}"#,
            r#"{"type":"error","code":"c"}"#,
            r#"{"error":{"message":"m","type":"t"}}"#,
            r#"{"candidates":null,"usageMetadata":{"a":1}}"#,
            r#"{"object":"chat.completion.chunk","choices":[{"delta":{}}]}"#,
            r#"{"type":"response.created","response":{"id":"r"}}"#,
        ]
        .map(str::to_owned)
        .to_vec();
        for (_, body) in crate::providers::raw::tests::bodies(&["tests/recordings"]) {
            let text = String::from_utf8_lossy(&body);
            let first = text
                .lines()
                .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
                .find(|l| l.starts_with('{'))
                .map(str::to_owned);
            firsts.extend(first);
        }
        assert!(firsts.len() > 1000, "{}", firsts.len());
        for data in &firsts {
            let Ok(full) = serde_json::from_str::<Value>(data) else { continue };
            let ShallowObject(shallow) = serde_json::from_str(data).unwrap();
            let shallow = Value::Object(shallow);
            for d in DIALECTS {
                assert_eq!((d.detects)(data, Some(&full)), (d.detects)(data, Some(&shallow)), "{}: {data}", d.name);
            }
            assert_eq!(full.get("error").is_some(), shallow.get("error").is_some());
            assert_eq!(full.get("type"), shallow.get("type"));
        }
    }
}
