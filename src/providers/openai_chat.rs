//! OpenAI Chat Completions streaming (`chat.completion.chunk`), and the
//! OpenAI-compatible providers.
//!
//! * Choices are folded by `index` (`n > 1`); each choice has up to one
//!   `reasoning` part (`reasoning_content` or `reasoning`, the
//!   DeepSeek / OpenRouter / vLLM extensions), one `text` part (`content`),
//!   one `refusal` part and any number of `tool_call` parts. Parts open on
//!   their first non-null fragment (an empty string included) and are
//!   committed when the choice's `finish_reason` arrives.
//! * Tool calls are grouped by `tool_calls[].index`. A fragment carrying an
//!   `id` different from the current call's at that index starts a new
//!   call (Groq, Ollama and bridges put every call at index 0, or send each
//!   call whole); so does a fragment with a `name` and no `id` when the
//!   current call at that index already has a name and complete arguments,
//!   and so does a fragment that opens a new object or array when the
//!   current call's arguments are already one complete value: two complete
//!   JSON values are never concatenated. A fragment without `index` goes to
//!   a new call when it has an `id`, else to the last call. `arguments` sent
//!   as a JSON object or array (some bridges) is taken as its JSON text. A call replaced this
//!   way is committed at once. The folded `arguments` is the raw string; a
//!   call is ready (outcome `complete`) only when it is one complete, valid
//!   JSON value (an empty string counts as `{}`).
//! * `logprobs.content` and `logprobs.refusal` lists are concatenated.
//! * `content` may be an array of parts (Mistral's reasoning models:
//!   `[{"type": "thinking", "thinking": [{"type": "text", "text": …}]},
//!   {"type": "text", "text": …}]`): `text` parts go to the text part,
//!   `thinking` parts (a list of text parts, or a string) to a reasoning
//!   part (`provider_type` `thinking`). When thinking came this way the
//!   folded `content` is Mistral's own non-streaming shape: the thinking
//!   chunk, then the text chunk; otherwise `content` is the string.
//! * The deprecated `function_call` (`name`, then `arguments` fragments) is
//!   a `tool_call` part (`provider_type` `function_call`) whose arguments
//!   stream like a tool call's, folded back as `message.function_call`.
//! * **Members not modelled are merged, not dropped**, by the SDK's
//!   `accumulate_delta` rule: strings concatenated, objects merged member by
//!   member, lists of objects with an `index` merged by it, other lists
//!   appended, anything else replaced, `null` never erasing. So `audio`
//!   (`data` and `transcript` concatenated), `annotations` (appended),
//!   OpenRouter's `reasoning_details` (by `index`) and `images`, a
//!   non-string `reasoning`, and on tool calls Gemini's `extra_content`
//!   (the thought signature the next request needs) and unknown `function`
//!   members. Only the typed members (role, content, refusal, reasoning,
//!   tool calls) take the fast path; this merge costs nothing unless such a
//!   member appears.
//! * `audio` is also the choice's `media` part (`provider_type` `audio`,
//!   MIME type `audio/pcm`: the audio models stream `pcm16` only, and the
//!   chunks do not name the format): its base64 `data` fragments as
//!   `media_delta`s of the decoded bytes (split anywhere; a fragment padded
//!   on its own is fine), its `transcript` fragments as `text_delta`s;
//!   committed with the choice's other parts, its content the merged
//!   `audio` object. The folded `audio` stays the SDK's merge.
//! * **Top-level members** (and a choice's members other than `delta`,
//!   `logprobs`, `finish_reason`, e.g. Azure's `content_filter_results`,
//!   vLLM's `stop_reason`) are taken from the first chunk that carries them
//!   and updated by later non-null ones (objects member by member): vLLM's
//!   `system_fingerprint` in the last chunk only, `service_tier`, Groq's
//!   `x_groq` (its `usage` comes last), llama.cpp's `timings`,
//!   `moderation`. `id`, `object`, `created` and `model` come from the first
//!   `chat.completion.chunk` only: a chunk of another `object` (Azure's
//!   first chunk — empty `object`, `id`, `model`, `created: 0`, `choices: []`,
//!   `prompt_filter_results` — and its asynchronous content-filter chunks)
//!   never sets them, but what else it carries is kept
//!   (`prompt_filter_results`, the choices' `content_filter_results`).
//! * A choice-level member the fold models itself (`message`, `index`,
//!   `logprobs`, `finish_reason`) is never kept from a chunk: Writer's
//!   chunks echo each delta in a `message` beside `delta`, which a generic
//!   merge would let replace the whole answer with the last chunk's
//!   (the SDK ignores it too). Other choice-level members are kept as
//!   above; none ever replaces folded content.
//! * `obfuscation` (transport padding, at the top level or in a delta) is
//!   never folded.
//! * **Usage rule**: a chunk's non-null `usage` replaces the message's
//!   usage (the final usage-only chunk of `stream_options.include_usage`).
//! * `data: {"error": {...}}` is a provider error.
//! * The terminal event is `data: [DONE]`, matched exactly. A body that
//!   ends without it once the answer is whole — at least one choice, every
//!   choice with its `finish_reason`, and, when a chunk announced the usage
//!   (`"usage": null`, as `stream_options.include_usage` sends before the
//!   usage-only chunk), that usage — is complete (vLLM, Hugging Face TGI
//!   and several proxies never send `[DONE]`): warning `terminal_missing`,
//!   then `turn_end` with the stop reason, as with `[DONE]`. Otherwise it is
//!   [`StreamError::Incomplete`].
//! * Bad input: a member of the wrong shape (`choices` not an array, a
//!   non-object `delta` or tool call, `content: 5`, a non-integer `index`,
//!   …) is an `invalid_event` warning naming it, and **the rest of the chunk
//!   is applied**; `choices: null` is accepted silently. A tool call
//!   committed ready with neither id nor name is an `unnamed_tool_call`
//!   warning (its folded name is `""`).
//!
//! The folded message is a `ChatCompletion`: the top-level members above
//! with `object: "chat.completion"`, `choices` and `usage`.
//!
//! # Deliberate differences from the SDK
//!
//! The reference is the `openai` Python SDK's `ChatCompletionStreamState`
//! (checked against 3.54.0). ssefold does not copy these of its behaviours:
//!
//! * Tool calls: the SDK merges every fragment at one `index` into one call
//!   (concatenating ids, names and arguments: `"call_1call_2"`,
//!   `"addmul"`); ssefold splits calls as described above (Groq, Ollama and
//!   bridges put parallel calls all at index 0). The SDK also leaves each
//!   delta's `index` in the folded `tool_calls[]`; the non-streaming
//!   message has none, nor does ssefold's.
//! * `role` repeated in several chunks: the SDK concatenates
//!   (`"assistantassistant"`); ssefold keeps it.
//! * `choices: null`: the SDK raises `TypeError`; ssefold accepts it.
//! * Chunks whose `object` is not `chat.completion.chunk`: the SDK skips
//!   them whole (losing Azure's `prompt_filter_results` and the filter's
//!   final `content_filter_results`); ssefold keeps what they carry.
//! * Top-level members: the SDK keeps the first chunk's, except
//!   `system_fingerprint` and `usage` which it takes from the *last* chunk
//!   even when that chunk has none (`null` erases) and `moderation`; a
//!   choice's other members come from the chunk that created the choice.
//!   ssefold: first carrier, updated by later non-null values (so a late
//!   `x_groq.usage`, `timings` or `stop_reason` is kept, and a `null` never
//!   erases).
//! * Generic merge: the SDK adds numbers and concatenates every string,
//!   `id` and `format` included (an `audio.id` sent twice becomes
//!   `"audio_1audio_1"`, `expires_at` doubles, OpenRouter's
//!   `"anthropic-claude-v1"` repeats); ssefold replaces numbers and `id`,
//!   `format`, `type`, `index`. A list of objects without `index` sent in
//!   two chunks (`annotations`) makes the SDK raise `RuntimeError`;
//!   ssefold appends.
//! * `obfuscation` inside a delta: the SDK keeps it in the message (it pops
//!   only the top-level one); ssefold drops both.
//! * `content` as an array of parts: once `content` is a string (Mistral's
//!   first chunk sends `""`) the SDK silently drops every array delta, so
//!   the thinking and any text sent as parts are lost; when an array comes
//!   first it keeps it, raises `RuntimeError` on a second array and drops
//!   string deltas after it. ssefold folds as described above.
//! * Text, refusal or tool-call fragments after a choice's `finish_reason`:
//!   the SDK appends them; ssefold ignores them with `part_already_ended`.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::args::ToolArgs;
use super::events::WarningCode;
use super::events::{PartKind, ProviderError, StreamEvent, ToolInputFormat};
use super::media;
use super::turn::{CallInit, Dialect, DialectInfo, Flow, Outcome, Part, Turn, TurnState};
use super::view::{Few, JsonStr, JsonText, Str};
use super::StreamLimit;
use super::{
    check_lone, json_error, value_lenient, warn, warn_lone, without_lone_surrogates, Provider, Sink, StreamError,
};
use crate::json::scan::{escape_char, json_plain_prefix, map_heap_bytes, value_heap_bytes};
use crate::sse::Event;

// ---------------------------------------------------------------------------
// Views of a chunk. Every container accepts any JSON value: one of the wrong
// type is recorded as a problem (a warning) and the rest of the chunk is
// applied. Members the fold does not model are kept as raw JSON text.
// ---------------------------------------------------------------------------

/// The members of a folded choice that the fold builds itself: a chunk's
/// choice-level member of one of these names (other than `delta`, read as
/// the delta) is never kept, so it can never replace folded content.
const MODELED_CHOICE_MEMBERS: [&str; 4] = ["index", "message", "logprobs", "finish_reason"];

/// Members kept as raw JSON text (key, value): the first few inline.
#[derive(Debug, Default, PartialEq)]
struct Members<'a> {
    inline: [(Str<'a>, &'a str); 6],
    n: usize,
    more: Vec<(Str<'a>, &'a str)>,
}

impl<'a> Members<'a> {
    fn push(&mut self, key: Str<'a>, raw: &'a str) {
        if self.n < self.inline.len() {
            self.inline[self.n] = (key, raw);
            self.n += 1;
        } else {
            self.more.push((key, raw));
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&str, &'a str)> + '_ {
        self.inline[..self.n].iter().chain(self.more.iter()).map(|(k, v)| (&**k, *v))
    }
}

/// Members kept as raw JSON text below the top level (rare: a `Vec`, which
/// allocates only when one is pushed).
type Extra<'a> = Vec<(Str<'a>, &'a str)>;

/// A view built from a JSON object's members.
trait FromMap<'de>: Sized + Default {
    /// What the object is, for warnings.
    const WHAT: &'static str;
    /// Takes one member (its value read from `map`).
    fn member<M: MapAccess<'de>>(&mut self, key: Str<'de>, map: &mut M) -> Result<(), M::Error>;
}

/// A JSON value that should be an object of view `T`: `None` when `null`,
/// `Bad` with what it was otherwise.
#[derive(Debug, PartialEq, Default)]
enum Lenient<T> {
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

struct ObjVisitor<T>(PhantomData<T>);

impl<T> ObjVisitor<T> {
    fn bad(what: &'static str) -> Lenient<T> {
        Lenient::Bad(what)
    }
    fn null() -> Lenient<T> {
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
enum LenientList<T> {
    #[default]
    Null,
    Ok(Few<Lenient<T>>),
    Bad(&'static str),
}

impl<T> LenientList<T> {
    fn iter(&self) -> impl Iterator<Item = &Lenient<T>> {
        match self {
            LenientList::Ok(f) => Some(f.iter()),
            _ => None,
        }
        .into_iter()
        .flatten()
    }
}

struct ListVisitor<T>(PhantomData<T>);

impl<T> ListVisitor<T> {
    fn bad(what: &'static str) -> LenientList<T> {
        LenientList::Bad(what)
    }
    fn null() -> LenientList<T> {
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
fn raw<'de, M: MapAccess<'de>>(map: &mut M) -> Result<&'de str, M::Error> {
    Ok(map.next_value::<&'de RawValue>()?.get())
}

/// A leaf read as raw text and converted: `None` when `null`; a value that
/// does not convert is a problem.
fn leaf<'de, T, M: MapAccess<'de>>(
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
fn clip(s: &str) -> &str {
    let mut end = s.len().min(60);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn str_of(text: &str) -> Option<Str<'_>> {
    serde_json::from_str(text).ok()
}

fn u32_of(text: &str) -> Option<u32> {
    serde_json::from_str(text).ok()
}

/// A chunk (`chat.completion.chunk`).
#[derive(Debug, Default, PartialEq)]
struct ChunkView<'a> {
    /// `object`, raw.
    object: Option<&'a str>,
    choices: LenientList<ChoiceView<'a>>,
    usage: Option<&'a str>,
    /// The chunk has a `usage` member, `null` included
    /// (`stream_options.include_usage` puts `"usage": null` on every chunk
    /// before the usage-only one).
    usage_member: bool,
    error: Option<&'a str>,
    /// Every other top-level member (id, created, model, extras), raw.
    top: Members<'a>,
    /// The fast path's exact text holding every member of `top` (from the
    /// chunk's start to `"choices"`), empty otherwise: a chunk whose prefix
    /// is the last one applied has nothing new at the top level.
    top_text: &'a str,
    problems: Vec<String>,
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
struct ChoiceView<'a> {
    index: u32,
    delta: Lenient<DeltaView<'a>>,
    finish_reason: Option<Str<'a>>,
    logprobs: Option<&'a str>,
    /// Other members of the choice (`content_filter_results`, vLLM's
    /// `stop_reason`, …), raw.
    extra: Extra<'a>,
    problems: Vec<String>,
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
enum ContentView<'a> {
    Text(JsonStr<'a>),
    Parts(&'a str),
}

#[derive(Debug, Default, PartialEq)]
struct DeltaView<'a> {
    role: Option<Str<'a>>,
    content: Option<ContentView<'a>>,
    refusal: Option<JsonStr<'a>>,
    reasoning_content: Option<JsonStr<'a>>,
    reasoning: Option<JsonStr<'a>>,
    tool_calls: LenientList<ToolCallView<'a>>,
    /// The deprecated `function_call`, raw (rare: parsed when applied).
    function_call: Option<&'a str>,
    /// Members not modelled, merged generically (`audio`, `annotations`,
    /// `reasoning_details`, `images`, a non-string `reasoning`, …), raw.
    extra: Extra<'a>,
    problems: Vec<String>,
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
struct ToolCallView<'a> {
    index: Option<u32>,
    id: Option<Str<'a>>,
    ty: Option<Str<'a>>,
    function: Lenient<FunctionView<'a>>,
    /// Other members (Gemini's `extra_content` with the thought signature), raw.
    extra: Extra<'a>,
    problems: Vec<String>,
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
struct FunctionView<'a> {
    name: Option<Str<'a>>,
    arguments: Option<JsonText<'a>>,
    extra: Extra<'a>,
    problems: Vec<String>,
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

/// Members kept from one level of the stream (the chunk's top level, a
/// choice): the first value of each, replaced by a later non-null one.
#[derive(Debug, Default)]
struct Kept {
    map: Map<String, Value>,
    /// The raw text last applied per member (a repeat costs one compare).
    raw: Vec<(String, String)>,
}

impl Kept {
    /// Heap bytes held: the members and their raw texts.
    fn footprint(&self) -> usize {
        map_heap_bytes(&self.map)
            + self.raw.capacity() * core::mem::size_of::<(String, String)>()
            + self.raw.iter().map(|(k, v)| k.capacity() + v.capacity()).sum::<usize>()
    }
}

impl Kept {
    /// Applies one member of a chunk; `real`: of a `chat.completion.chunk`
    /// (only such a chunk sets the completion's id, object, created and
    /// model, and only the first one).
    fn apply(&mut self, key: &str, raw: &str, real: bool, sink: &mut Sink<'_>) {
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
fn overlay(old: &mut Value, new: Value) {
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
fn merge(acc: &mut Map<String, Value>, key: &str, delta: Value) {
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

fn merge_into(slot: &mut Value, key: &str, delta: Value) {
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

fn merge_list(acc: &mut Vec<Value>, delta: Vec<Value>) {
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
fn merge_members(acc: &mut Map<String, Value>, members: &Extra<'_>, sink: &mut Sink<'_>) {
    for (k, raw) in members {
        if let Ok(v) = value_lenient(raw, k, sink) {
            merge(acc, k, v);
        }
    }
}

/// One tool call of a choice (its arguments and outcome live in the turn's
/// part).
#[derive(Debug)]
struct Call {
    part: u32,
    index: u32,
    id: Option<String>,
    ty: String,
    name: String,
    /// Members of the call not modelled (`extra_content`), merged.
    extra: Map<String, Value>,
    /// Members of `function` not modelled, merged.
    fn_extra: Map<String, Value>,
}

impl Call {
    /// Heap bytes held besides the part.
    fn footprint(&self) -> usize {
        self.id.as_ref().map_or(0, String::capacity)
            + self.ty.capacity()
            + self.name.capacity()
            + map_heap_bytes(&self.extra)
            + map_heap_bytes(&self.fn_extra)
    }
}

impl Call {
    fn function_json(&self, part: &Part) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert("name".into(), Value::String(self.name.clone()));
        let raw = part.args.as_deref().map_or("", ToolArgs::raw);
        f.insert("arguments".into(), Value::String(raw.to_owned()));
        for (k, v) in &self.fn_extra {
            f.insert(k.clone(), v.clone());
        }
        f
    }

    fn to_json(&self, part: &Part) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), self.id.clone().map_or(Value::Null, Value::String));
        m.insert("type".into(), Value::String(self.ty.clone()));
        m.insert("function".into(), Value::Object(self.function_json(part)));
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }
}

/// Where a part of a choice sits ([`Part::sub`]).
const SUB_REASONING: u32 = 0;
const SUB_TEXT: u32 = 1;
const SUB_REFUSAL: u32 = 2;
/// The deprecated `function_call`.
const SUB_FUNCTION: u32 = 3;
/// Tool call `n` of the choice is sub `SUB_CALLS + n`.
const SUB_CALLS: u32 = 4;
/// The `audio` media part.
const SUB_AUDIO: u32 = u32::MAX;

/// The reasoning field of content parts of type `thinking` (Mistral).
const THINKING: &str = "thinking";

#[derive(Debug, Default)]
struct Choice {
    index: u32,
    role: Option<String>,
    text: Option<u32>,
    refusal: Option<u32>,
    /// The `audio` media part.
    audio: Option<u32>,
    reasoning: Option<(&'static str, u32)>,
    calls: Vec<Call>,
    /// The deprecated `function_call` (a call without id or type).
    function_call: Option<Call>,
    finish_reason: Option<String>,
    logprobs_seen: bool,
    logprobs_content: Option<Vec<Value>>,
    logprobs_refusal: Option<Vec<Value>>,
    /// Choice-level members not modelled (`content_filter_results`, …).
    kept: Kept,
    /// Delta members not modelled (`audio`, `annotations`, …), merged.
    delta_extra: Map<String, Value>,
}

impl Choice {
    /// Heap bytes held besides the parts: every member kept.
    fn footprint(&self) -> usize {
        let list = |l: &Option<Vec<Value>>| {
            l.as_ref().map_or(0, |l| l.capacity() * 32 + l.iter().map(value_heap_bytes).sum::<usize>())
        };
        self.role.as_ref().map_or(0, String::capacity)
            + self.calls.capacity() * core::mem::size_of::<Call>()
            + self.calls.iter().map(Call::footprint).sum::<usize>()
            + self.function_call.as_ref().map_or(0, Call::footprint)
            + self.finish_reason.as_ref().map_or(0, String::capacity)
            + list(&self.logprobs_content)
            + list(&self.logprobs_refusal)
            + self.kept.footprint()
            + map_heap_bytes(&self.delta_extra)
    }
}

impl Choice {
    fn to_json(&self, parts: &[Part]) -> Value {
        let mut msg = Map::new();
        msg.insert("role".into(), self.role.as_deref().unwrap_or("assistant").into());
        let text = |t: Option<u32>| t.map_or(Value::Null, |t| Value::String(parts[t as usize].text.clone()));
        match self.reasoning {
            Some((THINKING, r)) => {
                // Mistral's shape: the thinking chunk, then the text chunk.
                let thinking =
                    serde_json::json!({"type": "thinking", "thinking": [{"type": "text", "text": text(Some(r))}]});
                let mut content = vec![thinking];
                if let Some(t) = self.text {
                    content.push(serde_json::json!({"type": "text", "text": text(Some(t))}));
                }
                msg.insert("content".into(), Value::Array(content));
            }
            _ => {
                msg.insert("content".into(), text(self.text));
            }
        }
        msg.insert("refusal".into(), text(self.refusal));
        if let Some((field, r)) = self.reasoning.filter(|(f, _)| *f != THINKING) {
            msg.insert(field.into(), text(Some(r)));
        }
        if let Some(f) = &self.function_call {
            msg.insert("function_call".into(), Value::Object(f.function_json(&parts[f.part as usize])));
        }
        if !self.calls.is_empty() {
            let calls = self.calls.iter().map(|c| c.to_json(&parts[c.part as usize])).collect();
            msg.insert("tool_calls".into(), Value::Array(calls));
        }
        for (k, v) in &self.delta_extra {
            msg.insert(k.clone(), v.clone());
        }
        let mut m = Map::new();
        m.insert("index".into(), self.index.into());
        m.insert("message".into(), Value::Object(msg));
        let logprobs = if self.logprobs_seen {
            let list = |l: &Option<Vec<Value>>| l.clone().map_or(Value::Null, Value::Array);
            let mut lp = Map::new();
            lp.insert("content".into(), list(&self.logprobs_content));
            lp.insert("refusal".into(), list(&self.logprobs_refusal));
            Value::Object(lp)
        } else {
            Value::Null
        };
        m.insert("logprobs".into(), logprobs);
        m.insert("finish_reason".into(), self.finish_reason.clone().map_or(Value::Null, Value::String));
        for (k, v) in &self.kept.map {
            // Kept members never replace what the fold models.
            if !m.contains_key(k) {
                m.insert(k.clone(), v.clone());
            }
        }
        Value::Object(m)
    }

    /// The part ids of the choice still open, in the order they opened.
    fn open_parts(&self, parts: &[Part]) -> Vec<u32> {
        let mut ids: Vec<u32> = [self.reasoning.map(|r| r.1), self.text, self.refusal, self.audio]
            .into_iter()
            .flatten()
            .chain(self.function_call.iter().map(|c| c.part))
            .chain(self.calls.iter().map(|c| c.part))
            .filter(|&p| parts[p as usize].is_open())
            .collect();
        ids.sort_unstable();
        ids
    }
}

/// The Chat Completions dialect: `[DONE]`, a `chat.completion.chunk`, or any
/// object with `choices` or `error` (OpenAI-compatible servers).
pub(crate) const DIALECT: DialectInfo = DialectInfo {
    provider: Provider::OpenAIChat,
    name: "openai_chat",
    aliases: &["openai", "chat"],
    detects: |data, value| match value {
        None => data == "[DONE]",
        Some(v) => {
            v.get("object").and_then(Value::as_str) == Some("chat.completion.chunk")
                || v.get("choices").is_some()
                || v.get("error").is_some()
        }
    },
    make: || Box::<ChatFold>::default(),
};

/// The OpenAI Chat Completions fold.
#[derive(Debug, Default)]
pub(crate) struct ChatFold {
    started: bool,
    /// Top-level members of the chunks.
    top: Kept,
    /// The last [`ChunkView::top_text`] applied.
    top_text: String,
    choices: Vec<Choice>,
    usage: Option<Value>,
    /// A chunk had a `usage` member (`null` until the usage-only chunk):
    /// the usage is announced, and the answer is whole only once it came.
    usage_announced: bool,
}

fn text_part_json(kind: PartKind, text: &str) -> Value {
    let mut m = Map::new();
    let key = match kind {
        PartKind::Refusal => "refusal",
        _ => "text",
    };
    m.insert("type".into(), kind.name().into());
    m.insert(key.into(), text.into());
    Value::Object(m)
}

/// Members only a real chunk sets, once (a choice has none of them).
const FIRST_WINS: [&str; 4] = ["id", "object", "created", "model"];

impl Dialect for ChatFold {
    fn provider(&self) -> Provider {
        Provider::OpenAIChat
    }

    fn terminal(&self) -> &'static str {
        "[DONE]"
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        let data = event.data();
        if data == "[DONE]" {
            if turn.state == TurnState::Idle {
                // A stray terminal event: nothing to end yet.
                warn(sink, WarningCode::TerminalBeforeStart, "[DONE] before any chunk; ignored");
                return Ok(Flow::Continue);
            }
            self.start_if_idle(turn, sink);
            self.warn_open_parts(turn, "at [DONE]", sink);
            return Ok(Flow::End);
        }
        let mut quick = ChunkView::default();
        let slow;
        let chunk = match quick_chunk(data, &self.top_text, &mut quick) {
            Some(()) => &quick,
            None => {
                if let Some((fixed, n)) = without_lone_surrogates(event) {
                    // A lone surrogate escape off the fast path: in a member
                    // the lenient view would drop (an id, a name), not only
                    // in text. The chunk with `\uFFFD` (the slow path only).
                    warn_lone(sink, "chunk", n);
                    return self.on_event(turn, &Event { data: &fixed, ..*event }, sink);
                }
                match serde_json::from_str::<Lenient<ChunkView<'_>>>(data) {
                    Ok(Lenient::Ok(c)) => {
                        slow = c;
                        &slow
                    }
                    Ok(other) => {
                        self.start_if_idle(turn, sink);
                        let what = match other {
                            Lenient::Bad(w) => w,
                            _ => "null",
                        };
                        warn(sink, WarningCode::InvalidEvent, &format!("chunk is {what}, not an object; ignored"));
                        return Ok(Flow::Continue);
                    }
                    Err(e) => return Err(json_error(event, e)),
                }
            }
        };
        // A chunk of another `object` (Azure's content-filter chunks, whose
        // object, id and model are empty) does not name the completion.
        if chunk.top_text.is_empty() || chunk.top_text != self.top_text {
            let real = chunk.object.map_or(true, |o| o == "\"chat.completion.chunk\"");
            for (k, raw) in chunk.top.iter() {
                self.top.apply(k, raw, real, sink);
            }
            self.top_text.clear();
            self.top_text.push_str(chunk.top_text);
        }
        self.start_if_idle(turn, sink);
        for p in &chunk.problems {
            warn(sink, WarningCode::InvalidEvent, p);
        }
        if let Some(err) = chunk.error {
            let err: Value = serde_json::from_str(err).unwrap_or(Value::Null);
            return Ok(Flow::Fail(provider_error(&err, turn.output_emitted())));
        }
        if let LenientList::Bad(what) = &chunk.choices {
            warn(sink, WarningCode::InvalidEvent, &format!("chunk.choices is {what}, not an array; ignored"));
        }
        for c in chunk.choices.iter() {
            match c {
                Lenient::Ok(c) => self.on_choice(turn, c, sink)?,
                Lenient::Bad(what) => {
                    warn(sink, WarningCode::InvalidEvent, &format!("a choice is {what}, not an object; ignored"))
                }
                Lenient::Null => warn(sink, WarningCode::InvalidEvent, "a choice is null; ignored"),
            }
        }
        self.usage_announced |= chunk.usage_member;
        if let Some(u) = chunk.usage.and_then(|u| value_lenient(u, "usage", sink).ok()) {
            let usage = self.usage.insert(u);
            sink.event(&StreamEvent::Usage { usage });
        }
        Ok(Flow::Continue)
    }

    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value> {
        let part = &parts[id as usize];
        let choice = &self.choices[part.at as usize];
        Cow::Owned(match part.sub {
            SUB_REASONING => text_part_json(PartKind::Reasoning, &part.text),
            SUB_TEXT => text_part_json(PartKind::Text, &part.text),
            SUB_REFUSAL => text_part_json(PartKind::Refusal, &part.text),
            SUB_FUNCTION => choice.function_call.as_ref().map_or(Value::Null, |f| Value::Object(f.function_json(part))),
            SUB_AUDIO => choice.delta_extra.get("audio").cloned().unwrap_or(Value::Null),
            n => choice.calls[(n - SUB_CALLS) as usize].to_json(part),
        })
    }

    /// The folded `ChatCompletion`.
    fn message(&self, turn: &Turn) -> Value {
        if !self.started {
            return Value::Null;
        }
        let mut m = self.top.map.clone();
        m.insert("object".into(), "chat.completion".into());
        let mut order: Vec<&Choice> = self.choices.iter().collect();
        order.sort_by_key(|c| c.index);
        m.insert("choices".into(), Value::Array(order.iter().map(|c| c.to_json(&turn.parts)).collect()));
        m.insert("usage".into(), self.usage.clone().unwrap_or(Value::Null));
        Value::Object(m)
    }

    fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.top.footprint()
            + self.top_text.capacity()
            + self.usage.as_ref().map_or(0, value_heap_bytes)
            + self.choices.capacity() * core::mem::size_of::<Choice>()
            + self.choices.iter().map(Choice::footprint).sum::<usize>()
    }

    fn on_turn_end(&mut self, _turn: &Turn, _sink: &mut Sink<'_>) -> Option<String> {
        self.choices.iter().find(|c| c.index == 0).and_then(|c| c.finish_reason.clone())
    }

    /// The answer is whole without `[DONE]` (vLLM, Hugging Face TGI and
    /// several proxies end the body without it): at least one choice came,
    /// every choice has its `finish_reason`, and the usage, when announced
    /// by a `"usage": null` member, came.
    fn complete_at_end(&self, turn: &Turn) -> bool {
        turn.state == TurnState::Streaming
            && !self.choices.is_empty()
            && self.choices.iter().all(|c| c.finish_reason.is_some())
            && (!self.usage_announced || self.usage.is_some())
    }

    fn end_of_body(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) -> bool {
        if !self.complete_at_end(turn) {
            return false;
        }
        // (Every part was committed at its choice's finish_reason.)
        self.warn_open_parts(turn, "at the end of the body", sink);
        warn(
            sink,
            WarningCode::TerminalMissing,
            "the body ended after every choice's finish_reason without data: [DONE]; the answer is complete",
        );
        true
    }

    fn after_terminal(&self, _event: &Event<'_>) -> String {
        "chunk after [DONE]; ignored".to_owned()
    }

    fn is_restart(&self, _ty: &str, id: Option<&str>) -> bool {
        let current = self.top.map.get("id").and_then(Value::as_str);
        id.is_some_and(|i| !i.is_empty()) && current.is_some() && id != current
    }

    fn start_implicitly(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        self.start_if_idle(turn, sink);
    }
}

impl ChatFold {
    /// Warns `part_not_ended` for each choice with parts still open at the
    /// end of the turn (`at`; they are committed as incomplete).
    fn warn_open_parts(&self, turn: &Turn, at: &str, sink: &mut Sink<'_>) {
        for choice in &self.choices {
            if !choice.open_parts(&turn.parts).is_empty() {
                let msg =
                    format!("choice {} has open parts {at} (no finish_reason); committed as incomplete", choice.index);
                warn(sink, WarningCode::PartNotEnded, &msg);
            }
        }
    }

    fn start_if_idle(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        if !turn.begin() {
            return;
        }
        self.started = true;
        let snapshot = self.message(turn);
        sink.event(&StreamEvent::MessageStart { provider: "openai_chat", message: &snapshot });
    }

    fn choice_pos(&mut self, index: u32, turn: &Turn) -> Result<usize, StreamError> {
        if let Some(p) = self.choices.iter().position(|c| c.index == index) {
            return Ok(p);
        }
        if self.choices.len() >= turn.config.max_choices {
            return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxChoices, max: turn.config.max_choices });
        }
        self.choices.push(Choice { index, ..Choice::default() });
        Ok(self.choices.len() - 1)
    }

    /// Commits a part of a choice whose end is known; a tool call committed
    /// ready with neither id nor name is warned about.
    fn commit(&mut self, turn: &mut Turn, id: u32, sink: &mut Sink<'_>) {
        turn.commit(self, id, false, sink);
        let part = &turn.parts[id as usize];
        if part.kind != PartKind::ToolCall || part.outcome != Outcome::Complete {
            return;
        }
        let choice = &self.choices[part.at as usize];
        let call = match part.sub {
            SUB_FUNCTION => choice.function_call.as_ref(),
            n => choice.calls.get((n - SUB_CALLS) as usize),
        };
        if call.is_some_and(|c| c.id.is_none() && c.name.is_empty()) {
            let msg = format!("tool call (part {id}) is ready with neither id nor name: its name is \"\"");
            warn(sink, WarningCode::UnnamedToolCall, &msg);
        }
    }

    fn on_choice(&mut self, turn: &mut Turn, c: &ChoiceView<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        for p in &c.problems {
            warn(sink, WarningCode::InvalidEvent, p);
        }
        let pos = self.choice_pos(c.index, turn)?;
        let choice = &mut self.choices[pos];
        let ci = c.index;
        for (k, raw) in &c.extra {
            // A choice-level `message` beside `delta` (Writer echoes the
            // delta there) is never folded: the answer is the deltas'.
            if MODELED_CHOICE_MEMBERS.contains(&k.as_ref()) {
                continue;
            }
            choice.kept.apply(k, raw, true, sink);
        }
        match &c.delta {
            Lenient::Ok(d) => self.on_delta(turn, pos, d, sink)?,
            Lenient::Bad(what) => {
                warn(sink, WarningCode::InvalidEvent, &format!("choice {ci}: delta is {what}, not an object; ignored"))
            }
            Lenient::Null => {}
        }
        let choice = &mut self.choices[pos];
        match c.logprobs.map(|t| value_lenient(t, "logprobs", sink)) {
            Some(Ok(Value::Object(lp))) => {
                choice.logprobs_seen = true;
                for (key, slot) in
                    [("content", &mut choice.logprobs_content), ("refusal", &mut choice.logprobs_refusal)]
                {
                    if let Some(Value::Array(items)) = lp.get(key) {
                        slot.get_or_insert_with(Vec::new).extend(items.iter().cloned());
                    }
                }
            }
            Some(_) => {
                warn(sink, WarningCode::InvalidEvent, &format!("choice {ci}: logprobs is not an object; ignored"))
            }
            None => {}
        }
        if let Some(reason) = &c.finish_reason {
            choice.finish_reason = Some(reason.to_string());
            for id in choice.open_parts(&turn.parts) {
                self.commit(turn, id, sink);
            }
            sink.event(&StreamEvent::StopReason { choice: ci, reason });
        }
        Ok(())
    }

    fn on_delta(
        &mut self,
        turn: &mut Turn,
        pos: usize,
        d: &DeltaView<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        for p in &d.problems {
            warn(sink, WarningCode::InvalidEvent, p);
        }
        let at = pos as u32;
        let choice = &mut self.choices[pos];
        let ci = choice.index;
        if let Some(role) = &d.role {
            if choice.role.as_deref() != Some(&**role) {
                choice.role = Some(role.to_string());
            }
        }
        let reasoning = match (&d.reasoning_content, &d.reasoning) {
            (Some(r), _) => Some(("reasoning_content", r)),
            (None, Some(r)) => Some(("reasoning", r)),
            _ => None,
        };
        if let Some((field, r)) = reasoning {
            let id = self.reasoning_part(turn, pos, field, sink)?;
            append(turn, id, r, sink)?;
        }
        match &d.content {
            Some(ContentView::Text(text)) => {
                let id = self.text_part(turn, pos, sink)?;
                append(turn, id, text, sink)?;
            }
            Some(ContentView::Parts(raw)) => self.on_content_parts(turn, pos, raw, sink)?,
            None => {}
        }
        if let Some(text) = &d.refusal {
            let choice = &mut self.choices[pos];
            let id = match choice.refusal {
                Some(id) => id,
                None => *choice.refusal.insert(turn.open_part(
                    PartKind::Refusal,
                    (at, SUB_REFUSAL),
                    ci,
                    0,
                    "refusal",
                    sink,
                )?),
            };
            append(turn, id, text, sink)?;
        }
        let function_call = d.function_call.map(serde_json::from_str::<Lenient<FunctionView<'_>>>);
        match function_call.and_then(Result::ok).unwrap_or_default() {
            Lenient::Ok(f) => self.on_function_call(turn, pos, &f, sink)?,
            Lenient::Bad(what) => warn(
                sink,
                WarningCode::InvalidEvent,
                &format!("choice {ci}: function_call is {what}, not an object; ignored"),
            ),
            Lenient::Null => {}
        }
        if let LenientList::Bad(what) = &d.tool_calls {
            warn(sink, WarningCode::InvalidEvent, &format!("choice {ci}: tool_calls is {what}, not an array; ignored"));
        }
        for (n, tc) in d.tool_calls.iter().enumerate() {
            match tc {
                Lenient::Ok(tc) => self.on_tool_call(turn, pos, n, tc, sink)?,
                Lenient::Bad(what) => warn(
                    sink,
                    WarningCode::InvalidEvent,
                    &format!("choice {ci}: a tool call is {what}, not an object; ignored"),
                ),
                Lenient::Null => {
                    warn(sink, WarningCode::InvalidEvent, &format!("choice {ci}: a tool call is null; ignored"))
                }
            }
        }
        for (k, raw) in &d.extra {
            let Ok(v) = value_lenient(raw, k, sink) else { continue };
            if &**k == "audio" {
                self.on_audio(turn, pos, &v, sink)?;
            }
            merge(&mut self.choices[pos].delta_extra, k, v);
        }
        Ok(())
    }

    /// A delta's `audio`: its base64 `data` as the bytes of the choice's
    /// media part (`audio/pcm`: streamed audio is `pcm16`), its
    /// `transcript` as the part's text. The folded `audio` is the generic
    /// merge, as the SDK's.
    fn on_audio(&mut self, turn: &mut Turn, pos: usize, audio: &Value, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let data = audio.get("data").and_then(Value::as_str);
        let transcript = audio.get("transcript").and_then(Value::as_str);
        if data.is_none() && transcript.is_none() {
            return Ok(());
        }
        let choice = &mut self.choices[pos];
        let id = match choice.audio {
            Some(id) => id,
            None => {
                let mime = media::audio_mime("pcm16");
                let id = turn.open_media((pos as u32, SUB_AUDIO), choice.index, 0, "audio", &mime, sink)?;
                *choice.audio.insert(id)
            }
        };
        if !turn.parts[id as usize].is_open() {
            let msg = format!("choice {}: audio after the choice finished; kept in the message only", choice.index);
            warn(sink, WarningCode::PartAlreadyEnded, &msg);
            return Ok(());
        }
        if let Some(data) = data {
            turn.append_base64(id, data, sink)?;
        }
        if let Some(t) = transcript {
            super::append_str(turn, id, t, sink)?;
        }
        Ok(())
    }

    fn reasoning_part(
        &mut self,
        turn: &mut Turn,
        pos: usize,
        field: &'static str,
        sink: &mut Sink<'_>,
    ) -> Result<u32, StreamError> {
        let choice = &mut self.choices[pos];
        Ok(match choice.reasoning {
            Some((_, id)) => id,
            None => {
                let id =
                    turn.open_part(PartKind::Reasoning, (pos as u32, SUB_REASONING), choice.index, 0, field, sink)?;
                choice.reasoning.insert((field, id)).1
            }
        })
    }

    fn text_part(&mut self, turn: &mut Turn, pos: usize, sink: &mut Sink<'_>) -> Result<u32, StreamError> {
        let choice = &mut self.choices[pos];
        Ok(match choice.text {
            Some(id) => id,
            None => *choice.text.insert(turn.open_part(
                PartKind::Text,
                (pos as u32, SUB_TEXT),
                choice.index,
                0,
                "content",
                sink,
            )?),
        })
    }

    /// `content` as an array of parts (Mistral's reasoning models): `text`
    /// parts go to the text part, `thinking` parts (a string, or a list of
    /// text parts) to the reasoning part.
    fn on_content_parts(
        &mut self,
        turn: &mut Turn,
        pos: usize,
        raw: &str,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let ci = self.choices[pos].index;
        let Ok(parts) = serde_json::from_str::<Vec<ContentPartView<'_>>>(raw) else {
            let msg = format!("choice {ci}: content is an array of unexpected shape ({}); ignored", clip(raw));
            warn(sink, WarningCode::InvalidEvent, &msg);
            return Ok(());
        };
        for part in &parts {
            match part.ty.as_deref() {
                Some("text") => {
                    if let Some(t) = &part.text {
                        let id = self.text_part(turn, pos, sink)?;
                        append(turn, id, t, sink)?;
                    }
                }
                Some("thinking") => {
                    let texts: Vec<JsonStr<'_>> = match part.thinking.map(RawValue::get) {
                        Some(t) if t.starts_with('"') => JsonStr::from_raw(t).into_iter().collect(),
                        Some(t) => serde_json::from_str::<Vec<ContentPartView<'_>>>(t)
                            .map(|v| v.into_iter().filter_map(|p| p.text).collect())
                            .unwrap_or_default(),
                        None => Vec::new(),
                    };
                    let field = match self.choices[pos].reasoning {
                        Some((f, _)) => f,
                        None => THINKING,
                    };
                    let id = self.reasoning_part(turn, pos, field, sink)?;
                    for t in &texts {
                        append(turn, id, t, sink)?;
                    }
                }
                other => {
                    let ty = other.unwrap_or("");
                    sink.event(&StreamEvent::Unknown { scope: "delta", provider_type: ty, data: raw });
                }
            }
        }
        Ok(())
    }

    /// The deprecated `function_call`: one call per choice, name then
    /// argument fragments, like a tool call.
    fn on_function_call(
        &mut self,
        turn: &mut Turn,
        pos: usize,
        f: &FunctionView<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        for p in &f.problems {
            warn(sink, WarningCode::InvalidEvent, p);
        }
        let choice = &mut self.choices[pos];
        if choice.function_call.is_none() {
            let name = f.name.as_ref().filter(|s| !s.is_empty()).map(|s| s.as_ref());
            let init = CallInit { name, ..CallInit::default() };
            let part = turn.open_call((pos as u32, SUB_FUNCTION), choice.index, 0, "function_call", init, sink)?;
            choice.function_call = Some(Call {
                part,
                index: 0,
                id: None,
                ty: "function".into(),
                name: String::new(),
                extra: Map::new(),
                fn_extra: Map::new(),
            });
        }
        let call = self.choices[pos].function_call.as_mut().expect("just set");
        let part = call.part;
        if !turn.parts[part as usize].is_open() {
            warn(sink, WarningCode::PartAlreadyEnded, "function_call fragment after its choice finished; ignored");
            return Ok(());
        }
        if let Some(name) = f.name.as_ref().filter(|s| !s.is_empty()) {
            if call.name != **name {
                call.name.push_str(name);
                let v = Value::String(call.name.clone());
                turn.call_metadata(part, "name", &v, sink);
            }
        }
        merge_members(&mut call.fn_extra, &f.extra, sink);
        if let Some(frag) = &f.arguments {
            if let JsonText::Str(s) = frag {
                check_lone(sink, "function_call.arguments", s);
            }
            turn.push_args(part, frag, sink)?;
        }
        Ok(())
    }

    fn on_tool_call(
        &mut self,
        turn: &mut Turn,
        pos: usize,
        position: usize,
        tc: &ToolCallView<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        for p in &tc.problems {
            warn(sink, WarningCode::InvalidEvent, p);
        }
        let f = match &tc.function {
            Lenient::Ok(f) => Some(f),
            Lenient::Bad(what) => {
                warn(sink, WarningCode::InvalidEvent, &format!("tool call function is {what}, not an object; ignored"));
                None
            }
            Lenient::Null => None,
        };
        if let Some(f) = f {
            for p in &f.problems {
                warn(sink, WarningCode::InvalidEvent, p);
            }
        }
        let choice = &self.choices[pos];
        let id = tc.id.as_ref().filter(|s| !s.is_empty());
        let (name, args) = match f {
            Some(f) => (f.name.as_ref().filter(|s| !s.is_empty()), f.arguments.as_ref()),
            None => (None, None),
        };
        let index = tc.index.unwrap_or_else(|| {
            if id.is_some() {
                choice.calls.len() as u32
            } else {
                choice.calls.last().map_or(position as u32, |c| c.index)
            }
        });
        let current = choice.calls.iter().rposition(|c| c.index == index);
        let new_call = match current.map(|p| &choice.calls[p]) {
            None => true,
            Some(c) => match (&id, &c.id) {
                (Some(new), Some(old)) => ***new != **old,
                (None, _) => {
                    // A second complete value must not be glued onto a complete one.
                    let starts_value = args.is_some_and(JsonText::starts_container);
                    let complete = turn.parts[c.part as usize].args.as_deref().is_some_and(ToolArgs::is_complete_value);
                    (name.is_some() && !c.name.is_empty() || starts_value) && complete
                }
                (Some(_), None) => false,
            },
        };
        let n = if new_call {
            if let Some(p) = current {
                let part = self.choices[pos].calls[p].part;
                self.commit(turn, part, sink);
            }
            let choice = &mut self.choices[pos];
            let ty = tc.ty.as_deref().unwrap_or("function").to_owned();
            let sub = SUB_CALLS + choice.calls.len() as u32;
            let init = CallInit {
                id: id.map(|s| s.as_ref()),
                name: name.map(|s| s.as_ref()),
                format: ToolInputFormat::Json,
                provider_executed: false,
            };
            let part = turn.open_call((pos as u32, sub), choice.index, u64::from(index), &ty, init, sink)?;
            choice.calls.push(Call {
                part,
                index,
                id: None,
                ty,
                name: String::new(),
                extra: Map::new(),
                fn_extra: Map::new(),
            });
            choice.calls.len() - 1
        } else {
            current.unwrap_or_default()
        };
        let call = &mut self.choices[pos].calls[n];
        let part = call.part;
        if !turn.parts[part as usize].is_open() {
            warn(sink, WarningCode::PartAlreadyEnded, "tool call fragment after its choice finished; ignored");
            return Ok(());
        }
        if let Some(id) = id {
            if call.id.is_none() {
                call.id = Some(id.to_string());
                let v = Value::String(call.id.clone().unwrap_or_default());
                turn.call_metadata(part, "id", &v, sink);
            }
        }
        if let Some(name) = name {
            if call.name != **name {
                call.name.push_str(name);
                let v = Value::String(call.name.clone());
                turn.call_metadata(part, "name", &v, sink);
            }
        }
        if !tc.extra.is_empty() {
            merge_members(&mut call.extra, &tc.extra, sink);
        }
        if let Some(f) = f.filter(|f| !f.extra.is_empty()) {
            merge_members(&mut call.fn_extra, &f.extra, sink);
        }
        if let Some(frag) = args {
            if let JsonText::Str(s) = frag {
                check_lone(sink, "tool_calls.function.arguments", s);
            }
            turn.push_args(part, frag, sink)?;
        }
        Ok(())
    }
}

/// One element of `content` sent as an array (Mistral): `{"type": "text",
/// "text": …}` or `{"type": "thinking", "thinking": [text parts] | "…"}`.
#[derive(serde::Deserialize)]
struct ContentPartView<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<Str<'a>>,
    #[serde(default, borrow)]
    text: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    thinking: Option<&'a RawValue>,
}

/// A chunk as OpenAI writes it (compact, members of plain strings, small
/// numbers or `null`, one choice with a delta of `role` / `content` /
/// `refusal` / `reasoning_content` / one tool-call fragment), read without
/// serde_json, giving exactly the view serde_json would give. Anything else
/// (whitespace, escaped keys, other members or shapes) is `None` and goes
/// through serde_json.
///
/// `known` is the last applied [`ChunkView::top_text`]: a chunk that starts
/// with those exact bytes (every chunk of a stream, as providers send them)
/// is read from its `choices` on; its members before `choices` are not
/// parsed again, and are left out of `top` (they were applied with that
/// prefix). A member after `choices` then restarts the read from the start,
/// so that `top` holds every member whenever `top_text` is empty.
fn quick_chunk<'a>(data: &'a str, known: &str, chunk: &mut ChunkView<'a>) -> Option<()> {
    let skip = !known.is_empty() && data.len() > known.len() && data.as_bytes().starts_with(known.as_bytes());
    let mut q = Quick { s: data, at: 0 };
    if skip {
        q.at = known.len();
    } else {
        q.eat(b'{')?;
    }
    let mut after_choices = false;
    loop {
        let at = q.at;
        let key = q.key()?;
        match key {
            "choices" => {
                if !after_choices {
                    chunk.top_text = &data[..at];
                    after_choices = true;
                }
                q.eat(b'[')?;
                if q.peek()? == b']' {
                    q.at += 1;
                    chunk.choices = LenientList::Ok(Few::from_iter_opt(None));
                } else {
                    chunk.choices = LenientList::Ok(Few::from_iter_opt(Some(Lenient::Ok(ChoiceView::default()))));
                    let LenientList::Ok(few) = &mut chunk.choices else { return None };
                    let Some(Lenient::Ok(c)) = few.first_mut() else { return None };
                    q.choice(c)?;
                    q.eat(b']')?;
                }
            }
            "usage" => {
                q.null()?;
                chunk.usage_member = true;
            }
            "error" => q.null()?,
            "obfuscation" => {
                q.string()?;
            }
            _ if skip => {
                *chunk = ChunkView::default();
                return quick_chunk(data, "", chunk);
            }
            _ => {
                let v = q.scalar()?;
                if key == "object" {
                    chunk.object = Some(v);
                }
                chunk.top.push(Str(Cow::Borrowed(key)), v);
                if after_choices {
                    // A member after `choices`: the prefix does not hold them all.
                    chunk.top_text = "";
                }
            }
        }
        if q.next_member()? {
            continue;
        }
        return (q.at == data.len()).then_some(());
    }
}

/// The cursor of [`quick_chunk`].
struct Quick<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Quick<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// `,` (another member follows: true) or `}` (false).
    fn next_member(&mut self) -> Option<bool> {
        let b = self.peek()?;
        self.at += 1;
        match b {
            b',' => Some(true),
            b'}' => Some(false),
            _ => None,
        }
    }

    /// A string without escapes or control characters: its text (a byte
    /// loop: keys and names are short).
    fn plain(&mut self) -> Option<&'a str> {
        let b = self.s.as_bytes();
        if b.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let i = start + json_plain_prefix(b.get(start..)?);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        self.at = i + 1;
        self.s.get(start..i)
    }

    /// `"key":`.
    fn key(&mut self) -> Option<&'a str> {
        let k = self.plain()?;
        self.eat(b':')?;
        Some(k)
    }

    /// A string, decoded lazily: escapes checked as serde_json checks them
    /// (a `\\u` escape naming no character is refused by
    /// [`JsonStr::from_raw`]).
    fn string(&mut self) -> Option<JsonStr<'a>> {
        if let Some(text) = self.plain() {
            return Some(JsonStr::plain(text));
        }
        let b = self.s.as_bytes();
        if b.get(self.at) != Some(&b'"') {
            return None;
        }
        let mut i = self.at + 1;
        loop {
            i += json_plain_prefix(b.get(i..)?);
            match *b.get(i)? {
                b'"' => break,
                b'\\' => match *b.get(i + 1)? {
                    b'u' => {
                        if !b.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        i += 6;
                    }
                    e => {
                        escape_char(e)?;
                        i += 2;
                    }
                },
                _ => return None,
            }
        }
        let v = JsonStr::from_raw(self.s.get(self.at..=i)?)?;
        self.at = i + 1;
        Some(v)
    }

    /// A string or `null`.
    fn opt_string(&mut self) -> Option<Option<JsonStr<'a>>> {
        if self.peek()? == b'n' {
            self.null()?;
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A plain string or `null`, as [`Str`].
    fn opt_plain(&mut self) -> Option<Option<Str<'a>>> {
        if self.peek()? == b'n' {
            self.null()?;
            return Some(None);
        }
        self.plain().map(|t| Some(Str(Cow::Borrowed(t))))
    }

    fn null(&mut self) -> Option<()> {
        let rest = self.s.get(self.at..)?;
        rest.starts_with("null").then(|| self.at += 4)
    }

    /// An unsigned integer of at most `max` digits as serde_json reads it
    /// (no leading zero, no fraction or exponent): its text.
    fn digits(&mut self, max: usize) -> Option<&'a str> {
        let b = self.s.as_bytes().get(self.at..)?;
        let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > max || (n > 1 && b[0] == b'0') || matches!(b.get(n), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let text = &self.s[self.at..self.at + n];
        self.at += n;
        Some(text)
    }

    /// A `u32` of at most 9 digits.
    fn small(&mut self) -> Option<u32> {
        self.digits(9)?.parse().ok()
    }

    /// A string, a small unsigned integer or `null`: its raw text.
    fn scalar(&mut self) -> Option<&'a str> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'n' => self.null()?,
            _ => {
                self.digits(18)?;
            }
        }
        Some(&self.s[start..self.at])
    }

    fn choice(&mut self, c: &mut ChoiceView<'a>) -> Option<()> {
        self.eat(b'{')?;
        loop {
            match self.key()? {
                "index" => c.index = self.small()?,
                "delta" => {
                    c.delta = Lenient::Ok(DeltaView::default());
                    let Lenient::Ok(d) = &mut c.delta else { return None };
                    self.delta(d)?;
                }
                "logprobs" => self.null()?,
                "finish_reason" => c.finish_reason = self.opt_plain()?,
                _ => return None,
            }
            if !self.next_member()? {
                return Some(());
            }
        }
    }

    fn delta(&mut self, d: &mut DeltaView<'a>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            match self.key()? {
                "role" => d.role = self.opt_plain()?,
                "content" => d.content = self.opt_string()?.map(ContentView::Text),
                "refusal" => d.refusal = self.opt_string()?,
                "reasoning_content" => d.reasoning_content = self.opt_string()?,
                "tool_calls" => {
                    self.eat(b'[')?;
                    d.tool_calls = LenientList::Ok(Few::from_iter_opt(Some(Lenient::Ok(ToolCallView::default()))));
                    let LenientList::Ok(few) = &mut d.tool_calls else { return None };
                    let Some(Lenient::Ok(tc)) = few.first_mut() else { return None };
                    self.tool_call(tc)?;
                    self.eat(b']')?;
                }
                _ => return None,
            }
            if !self.next_member()? {
                return Some(());
            }
        }
    }

    fn tool_call(&mut self, tc: &mut ToolCallView<'a>) -> Option<()> {
        self.eat(b'{')?;
        loop {
            match self.key()? {
                "index" => tc.index = Some(self.small()?),
                "id" => tc.id = self.opt_plain()?,
                "type" => tc.ty = self.opt_plain()?,
                "function" => {
                    let mut f = FunctionView::default();
                    self.eat(b'{')?;
                    loop {
                        match self.key()? {
                            "name" => f.name = self.opt_plain()?,
                            "arguments" => f.arguments = self.opt_string()?.map(JsonText::Str),
                            _ => return None,
                        }
                        if !self.next_member()? {
                            break;
                        }
                    }
                    tc.function = Lenient::Ok(f);
                }
                _ => return None,
            }
            if !self.next_member()? {
                return Some(());
            }
        }
    }
}

fn append(turn: &mut Turn, id: u32, text: &JsonStr<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
    check_lone(sink, "delta", text);
    if !turn.parts[id as usize].is_open() {
        warn(sink, WarningCode::PartAlreadyEnded, "text after the choice finished; ignored");
        return Ok(());
    }
    turn.append_text(id, text, sink)
}

/// `{"error": {"message", "type", "code", ...}}`; the type falls back to the code.
fn provider_error(err: &Value, output_emitted: bool) -> ProviderError {
    let s = |k: &str| match err.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let message = match err {
        Value::String(s) => s.clone(),
        _ => s("message").unwrap_or_default(),
    };
    ProviderError {
        error_type: s("type").or_else(|| s("code")).unwrap_or_default(),
        message,
        request_id: s("request_id"),
        output_emitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick_view(doc: &str) -> Option<ChunkView<'_>> {
        let mut c = ChunkView::default();
        quick_chunk(doc, "", &mut c).map(|()| c)
    }

    fn serde_view(doc: &str) -> Option<ChunkView<'_>> {
        match serde_json::from_str::<Lenient<ChunkView<'_>>>(doc) {
            Ok(Lenient::Ok(c)) => Some(c),
            _ => None,
        }
    }

    /// The fast path gives exactly serde_json's view, or declines.
    #[test]
    fn quick_chunk_is_serde_json_or_nothing() {
        let strings = super::super::view::TRICKY_JSON_STRINGS;
        let numbers = ["0", "7", "01", "-1", "1e2", "1700000000", "4294967296", "1.0", "null"];
        let mut docs = Vec::new();
        let top = |n: &str| {
            format!(
                r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":{n},"model":"m","system_fingerprint":"fp","choices":["#
            )
        };
        for v in strings {
            for n in numbers {
                for delta in [
                    format!(r#"{{"content":{v}}}"#),
                    format!(r#"{{"role":"assistant","content":{v},"refusal":null}}"#),
                    format!(r#"{{"reasoning_content":{v}}}"#),
                    format!(r#"{{"tool_calls":[{{"index":{n},"function":{{"arguments":{v}}}}}]}}"#),
                    format!(
                        r#"{{"tool_calls":[{{"index":0,"id":{v},"type":"function","function":{{"name":{v},"arguments":""}}}}]}}"#
                    ),
                    "{}".to_owned(),
                ] {
                    let choice = format!(r#"{{"index":{n},"delta":{delta},"logprobs":null,"finish_reason":null}}"#);
                    docs.push(format!(r#"{}{choice}],"usage":null}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}],"usage":null}} "#, top(n)));
                    docs.push(format!(r#"{}{choice}],"obfuscation":{v}}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}, {choice}]}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}]}}x"#, top(n)));
                    docs.push(format!(r#"{} {choice}]}}"#, top(n)));
                    docs.push(format!(r#"{}]}}"#, top(n)));
                    docs.push(format!(r#"{}{choice}],"usage":{{"total_tokens":1}}}}"#, top(n)));
                    docs.push(format!(
                        r#"{}{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{v}}}]}}"#,
                        top("1")
                    ));
                }
            }
        }
        let mut quick = 0;
        let mut known = String::new();
        let mut skipped = 0;
        for doc in &docs {
            // Read again with the prefix of the last chunk read as known:
            // the same view, without the members of a matching prefix.
            let mut again = ChunkView::default();
            let read = quick_chunk(doc, &known, &mut again);
            assert_eq!(read.is_some(), quick_view(doc).is_some(), "{doc}");
            if let Some(mut full) = quick_view(doc) {
                if !known.is_empty() && doc.starts_with(&known) && !again.top_text.is_empty() {
                    assert_eq!(again.top_text, known);
                    skipped += 1;
                    full.top = Members::default();
                    full.object = None;
                }
                assert_eq!(again, full, "{doc} after {known}");
                known = full.top_text.to_owned();
            }
            if let Some(mut q) = quick_view(doc) {
                quick += 1;
                assert!(q.top_text.is_empty() || doc.starts_with(q.top_text));
                q.top_text = "";
                assert_eq!(Some(q), serde_view(doc), "{doc}");
            }
        }
        assert!(quick > docs.len() / 10, "{quick} of {}", docs.len());
        assert!(skipped > quick / 4, "{skipped} of {quick}");
    }

    #[test]
    fn the_corpus_takes_the_fast_path() {
        let corpus = ssefold_corpus::openai_chat_parallel_tools(200_000);
        let text = std::str::from_utf8(&corpus).unwrap();
        let payloads: Vec<&str> =
            text.lines().filter_map(|l| l.strip_prefix("data: ")).filter(|p| *p != "[DONE]").collect();
        let quick = payloads.iter().filter(|p| quick_view(p).is_some()).count();
        assert!(quick * 10 >= payloads.len() * 9, "{quick} of {}", payloads.len());
        for p in payloads {
            if let Some(mut q) = quick_view(p) {
                assert!(!q.top_text.is_empty());
                q.top_text = "";
                assert_eq!(Some(q), serde_view(p), "{p}");
            }
        }
    }
}
