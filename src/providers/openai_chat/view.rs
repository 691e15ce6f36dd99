//! The lenient views of a chunk that serde_json builds (the slow path, and
//! the shape the [fast path](super::quick) fills).
//!
//! Every container accepts any JSON value: one of the wrong type is
//! recorded as a problem (an `invalid_event` warning) and the rest of the
//! chunk is applied. Members the fold does not model are kept as raw JSON
//! text.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::providers::view::{Few, JsonStr, JsonText, Str};

/// The members of a folded choice that the fold builds itself: a chunk's
/// choice-level member of one of these names (other than `delta`, read as
/// the delta) is never kept, so it can never replace folded content.
pub(super) const MODELED_CHOICE_MEMBERS: [&str; 4] = ["index", "message", "logprobs", "finish_reason"];

/// Members kept as raw JSON text (key, value): the first few inline.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Members<'a> {
    pub(super) inline: [(Str<'a>, &'a str); 6],
    pub(super) n: usize,
    pub(super) more: Vec<(Str<'a>, &'a str)>,
}

impl<'a> Members<'a> {
    pub(super) fn push(&mut self, key: Str<'a>, raw: &'a str) {
        if self.n < self.inline.len() {
            self.inline[self.n] = (key, raw);
            self.n += 1;
        } else {
            self.more.push((key, raw));
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&str, &'a str)> + '_ {
        self.inline[..self.n].iter().chain(self.more.iter()).map(|(k, v)| (&**k, *v))
    }
}

/// Members kept as raw JSON text below the top level (rare: a `Vec`, which
/// allocates only when one is pushed).
pub(super) type Extra<'a> = Vec<(Str<'a>, &'a str)>;

/// A view built from a JSON object's members.
pub(super) trait FromMap<'de>: Sized + Default {
    /// What the object is, for warnings.
    const WHAT: &'static str;
    /// Takes one member (its value read from `map`).
    fn member<M: MapAccess<'de>>(&mut self, key: Str<'de>, map: &mut M) -> Result<(), M::Error>;
}

/// A JSON value that should be an object of view `T`: `None` when `null`,
/// `Bad` with what it was otherwise.
#[derive(Debug, PartialEq, Default)]
pub(super) enum Lenient<T> {
    #[default]
    Null,
    Ok(T),
    Bad(&'static str),
}

macro_rules! visit_other_kinds {
    ($ty:ty) => {
        fn visit_bool<E>(self, _: bool) -> Result<$ty, E> {
            Ok(Self::bad("a boolean"))
        }
        fn visit_i64<E>(self, _: i64) -> Result<$ty, E> {
            Ok(Self::bad("a number"))
        }
        fn visit_u64<E>(self, _: u64) -> Result<$ty, E> {
            Ok(Self::bad("a number"))
        }
        fn visit_f64<E>(self, _: f64) -> Result<$ty, E> {
            Ok(Self::bad("a number"))
        }
        fn visit_str<E>(self, _: &str) -> Result<$ty, E> {
            Ok(Self::bad("a string"))
        }
        fn visit_unit<E>(self) -> Result<$ty, E> {
            Ok(Self::null())
        }
        fn visit_none<E>(self) -> Result<$ty, E> {
            Ok(Self::null())
        }
    };
}

pub(super) struct ObjVisitor<T>(PhantomData<T>);

impl<T> ObjVisitor<T> {
    pub(super) fn bad(what: &'static str) -> Lenient<T> {
        Lenient::Bad(what)
    }
    pub(super) fn null() -> Lenient<T> {
        Lenient::Null
    }
}

impl<'de, T: FromMap<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = Lenient<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    visit_other_kinds!(Lenient<T>);
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Lenient<T>, S::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lenient::Bad("an array"))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Lenient<T>, M::Error> {
        let mut t = T::default();
        while let Some(key) = map.next_key::<Str<'de>>()? {
            t.member(key, &mut map)?;
        }
        Ok(Lenient::Ok(t))
    }
}

impl<'de, T: FromMap<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjVisitor(PhantomData))
    }
}

/// A JSON value that should be an array of objects of view `T`.
#[derive(Debug, PartialEq, Default)]
pub(super) enum LenientList<T> {
    #[default]
    Null,
    Ok(Few<Lenient<T>>),
    Bad(&'static str),
}

impl<T> LenientList<T> {
    pub(super) fn iter(&self) -> impl Iterator<Item = &Lenient<T>> {
        match self {
            LenientList::Ok(f) => Some(f.iter()),
            _ => None,
        }
        .into_iter()
        .flatten()
    }
}

pub(super) struct ListVisitor<T>(PhantomData<T>);

impl<T> ListVisitor<T> {
    pub(super) fn bad(what: &'static str) -> LenientList<T> {
        LenientList::Bad(what)
    }
    pub(super) fn null() -> LenientList<T> {
        LenientList::Null
    }
}

impl<'de, T: FromMap<'de>> Visitor<'de> for ListVisitor<T> {
    type Value = LenientList<T>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    visit_other_kinds!(LenientList<T>);
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<LenientList<T>, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(LenientList::Bad("an object"))
    }
    fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<LenientList<T>, S::Error> {
        Few::from_seq(seq).map(LenientList::Ok)
    }
}

impl<'de, T: FromMap<'de>> Deserialize<'de> for LenientList<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor(PhantomData))
    }
}

/// Reads a member's value as raw JSON text.
pub(super) fn raw<'de, M: MapAccess<'de>>(map: &mut M) -> Result<&'de str, M::Error> {
    Ok(map.next_value::<&'de RawValue>()?.get())
}

/// A leaf read as raw text and converted: `None` when `null`; a value that
/// does not convert is a problem.
pub(super) fn leaf<'de, T, M: MapAccess<'de>>(
    map: &mut M,
    problems: &mut Vec<String>,
    what: &str,
    key: &str,
    convert: impl FnOnce(&'de str) -> Option<T>,
) -> Result<Option<T>, M::Error> {
    let text = raw(map)?;
    if text == "null" {
        return Ok(None);
    }
    let v = convert(text);
    if v.is_none() {
        problems.push(format!("{what}.{key} is not of the expected type ({}); ignored", clip(text)));
    }
    Ok(v)
}

/// At most 60 bytes of `s` for a message.
pub(super) fn clip(s: &str) -> &str {
    let mut end = s.len().min(60);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

pub(super) fn str_of(text: &str) -> Option<Str<'_>> {
    serde_json::from_str(text).ok()
}

pub(super) fn u32_of(text: &str) -> Option<u32> {
    serde_json::from_str(text).ok()
}

/// A chunk (`chat.completion.chunk`).
#[derive(Debug, Default, PartialEq)]
pub(super) struct ChunkView<'a> {
    /// `object`, raw.
    pub(super) object: Option<&'a str>,
    pub(super) choices: LenientList<ChoiceView<'a>>,
    pub(super) usage: Option<&'a str>,
    /// The chunk has a `usage` member, `null` included
    /// (`stream_options.include_usage` puts `"usage": null` on every chunk
    /// before the usage-only one).
    pub(super) usage_member: bool,
    pub(super) error: Option<&'a str>,
    /// Every other top-level member (id, created, model, extras), raw.
    pub(super) top: Members<'a>,
    /// The fast path's exact text holding every member of `top` (from the
    /// chunk's start to `"choices"`), empty otherwise: a chunk whose prefix
    /// is the last one applied has nothing new at the top level.
    pub(super) top_text: &'a str,
    pub(super) problems: Vec<String>,
}

impl<'de> FromMap<'de> for ChunkView<'de> {
    const WHAT: &'static str = "chunk";
    fn member<M: MapAccess<'de>>(&mut self, key: Str<'de>, map: &mut M) -> Result<(), M::Error> {
        match &*key {
            "choices" => self.choices = map.next_value()?,
            "usage" => {
                self.usage_member = true;
                self.usage = Some(raw(map)?).filter(|t| *t != "null");
            }
            "error" => self.error = Some(raw(map)?).filter(|t| *t != "null"),
            "obfuscation" => {
                map.next_value::<IgnoredAny>()?;
            }
            "object" => {
                let t = raw(map)?;
                self.object = Some(t);
                self.top.push(key, t);
            }
            _ => {
                let t = raw(map)?;
                self.top.push(key, t);
            }
        }
        Ok(())
    }
}

#[derive(Debug, Default, PartialEq)]
pub(super) struct ChoiceView<'a> {
    pub(super) index: u32,
    pub(super) delta: Lenient<DeltaView<'a>>,
    pub(super) finish_reason: Option<Str<'a>>,
    pub(super) logprobs: Option<&'a str>,
    /// Other members of the choice (`content_filter_results`, vLLM's
    /// `stop_reason`, …), raw.
    pub(super) extra: Extra<'a>,
    pub(super) problems: Vec<String>,
}

impl<'de> FromMap<'de> for ChoiceView<'de> {
    const WHAT: &'static str = "choice";
    fn member<M: MapAccess<'de>>(&mut self, key: Str<'de>, map: &mut M) -> Result<(), M::Error> {
        match &*key {
            "index" => self.index = leaf(map, &mut self.problems, Self::WHAT, "index", u32_of)?.unwrap_or_default(),
            "delta" => self.delta = map.next_value()?,
            "finish_reason" => self.finish_reason = leaf(map, &mut self.problems, Self::WHAT, "finish_reason", str_of)?,
            "logprobs" => self.logprobs = Some(raw(map)?).filter(|t| *t != "null"),
            _ => {
                let t = raw(map)?;
                self.extra.push((key, t));
            }
        }
        Ok(())
    }
}

/// `content`: a string, or (Mistral's reasoning models) an array of parts.
#[derive(Debug, PartialEq)]
pub(super) enum ContentView<'a> {
    Text(JsonStr<'a>),
    Parts(&'a str),
}

#[derive(Debug, Default, PartialEq)]
pub(super) struct DeltaView<'a> {
    pub(super) role: Option<Str<'a>>,
    pub(super) content: Option<ContentView<'a>>,
    pub(super) refusal: Option<JsonStr<'a>>,
    pub(super) reasoning_content: Option<JsonStr<'a>>,
    pub(super) reasoning: Option<JsonStr<'a>>,
    pub(super) tool_calls: LenientList<ToolCallView<'a>>,
    /// The deprecated `function_call`, raw (rare: parsed when applied).
    pub(super) function_call: Option<&'a str>,
    /// Members not modelled, merged generically (`audio`, `annotations`,
    /// `reasoning_details`, `images`, a non-string `reasoning`, …), raw.
    pub(super) extra: Extra<'a>,
    pub(super) problems: Vec<String>,
}

impl<'de> FromMap<'de> for DeltaView<'de> {
    const WHAT: &'static str = "delta";
    fn member<M: MapAccess<'de>>(&mut self, key: Str<'de>, map: &mut M) -> Result<(), M::Error> {
        let p = &mut self.problems;
        match &*key {
            "role" => self.role = leaf(map, p, Self::WHAT, "role", str_of)?,
            "content" => {
                self.content = leaf(map, p, Self::WHAT, "content", |t| match t.as_bytes().first() {
                    Some(b'"') => JsonStr::from_raw(t).map(ContentView::Text),
                    Some(b'[') => Some(ContentView::Parts(t)),
                    _ => None,
                })?
            }
            "refusal" => self.refusal = leaf(map, p, Self::WHAT, "refusal", JsonStr::from_raw)?,
            "reasoning_content" => {
                self.reasoning_content = leaf(map, p, Self::WHAT, "reasoning_content", JsonStr::from_raw)?
            }
            "reasoning" => {
                // A string is reasoning text; anything else (an object, some
                // providers) is merged generically.
                let t = raw(map)?;
                if t.starts_with('"') {
                    self.reasoning = JsonStr::from_raw(t);
                } else if t != "null" {
                    self.extra.push((key, t));
                }
            }
            "tool_calls" => self.tool_calls = map.next_value()?,
            "function_call" => self.function_call = Some(raw(map)?).filter(|t| *t != "null"),
            "obfuscation" => {
                map.next_value::<IgnoredAny>()?;
            }
            _ => {
                let t = raw(map)?;
                self.extra.push((key, t));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Default, PartialEq)]
pub(super) struct ToolCallView<'a> {
    pub(super) index: Option<u32>,
    pub(super) id: Option<Str<'a>>,
    pub(super) ty: Option<Str<'a>>,
    pub(super) function: Lenient<FunctionView<'a>>,
    /// Other members (Gemini's `extra_content` with the thought signature), raw.
    pub(super) extra: Extra<'a>,
    pub(super) problems: Vec<String>,
}

impl<'de> FromMap<'de> for ToolCallView<'de> {
    const WHAT: &'static str = "tool call";
    fn member<M: MapAccess<'de>>(&mut self, key: Str<'de>, map: &mut M) -> Result<(), M::Error> {
        let p = &mut self.problems;
        match &*key {
            "index" => self.index = leaf(map, p, Self::WHAT, "index", u32_of)?,
            "id" => self.id = leaf(map, p, Self::WHAT, "id", str_of)?,
            "type" => self.ty = leaf(map, p, Self::WHAT, "type", str_of)?,
            "function" => self.function = map.next_value()?,
            _ => {
                let t = raw(map)?;
                self.extra.push((key, t));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Default, PartialEq)]
pub(super) struct FunctionView<'a> {
    pub(super) name: Option<Str<'a>>,
    pub(super) arguments: Option<JsonText<'a>>,
    pub(super) extra: Extra<'a>,
    pub(super) problems: Vec<String>,
}

impl<'de> FromMap<'de> for FunctionView<'de> {
    const WHAT: &'static str = "function";
    fn member<M: MapAccess<'de>>(&mut self, key: Str<'de>, map: &mut M) -> Result<(), M::Error> {
        let p = &mut self.problems;
        match &*key {
            "name" => self.name = leaf(map, p, Self::WHAT, "name", str_of)?,
            "arguments" => self.arguments = leaf(map, p, Self::WHAT, "arguments", |t| serde_json::from_str(t).ok())?,
            _ => {
                let t = raw(map)?;
                self.extra.push((key, t));
            }
        }
        Ok(())
    }
}

/// One element of `content` sent as an array (Mistral): `{"type": "text",
/// "text": …}` or `{"type": "thinking", "thinking": [text parts] | "…"}`.
#[derive(serde::Deserialize)]
pub(super) struct ContentPartView<'a> {
    #[serde(rename = "type", default, borrow)]
    pub(super) ty: Option<Str<'a>>,
    #[serde(default, borrow)]
    pub(super) text: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    pub(super) thinking: Option<&'a RawValue>,
}
