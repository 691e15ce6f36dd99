//! Google Gemini (`models/*:streamGenerateContent?alt=sse`) and Vertex AI
//! streaming.
//!
//! The body is SSE with `data:` lines only: no `event:` names and no
//! `[DONE]`. Every event's data is a whole `GenerateContentResponse` chunk:
//! `candidates[]` (`content{role, parts[]}`, `finishReason`, `index`,
//! `safetyRatings`, `citationMetadata`, `groundingMetadata`, …),
//! `usageMetadata`, `modelVersion`, `responseId`, `promptFeedback`; Vertex
//! adds `createTime` and `usageMetadata.trafficType`.
//!
//! # Parts
//!
//! Candidates are folded by `index` (absent: the candidate's position in the
//! chunk), each one a choice, and listed in `index` order. Each chunk's parts are appended to the
//! candidate's parts:
//!
//! | part | part kind | `provider_type` | folded |
//! | --- | --- | --- | --- |
//! | `text` | `text` | `text` | consecutive text parts merged into one |
//! | `text` with `thought: true` | `reasoning` | `thought` | consecutive thought parts merged into one |
//! | `functionCall` (whole `args`) | `tool_call` | `functionCall` | committed at once: a ready tool call (`part_metadata` `id` when given, `name`; its `args` as one `tool_args_delta` and its path events) |
//! | `inlineData` (`mimeType`, base64 `data`) | `media` | `inlineData` | committed at once: its bytes as `media_delta`s (MIME type `mimeType`; `application/octet-stream` when absent); kept whole (base64) in the response |
//! | Vertex's streamed `functionCall` (`willContinue: true` or `partialArgs`) | `tool_call` | `functionCall` | open until a `functionCall` without `willContinue: true`; its arguments as `tool_args_delta`s and `tool_args_path`s (see below); ready then if they are valid |
//! | anything else (`executableCode`, `codeExecutionResult`, `fileData`, `functionResponse`, unknown) | `other` | the part's first member | committed at once, kept whole |
//!
//! A text part is "merged" only when it holds nothing but `text`,
//! `thought` and `thoughtSignature`. A part that carries a `thoughtSignature`
//! is merged into the open part of its kind unless that part already has
//! one (two signatures are never merged into one part, as Google's guidance
//! on thought signatures requires); an empty text part carrying only the
//! signature (the last chunk of a thinking answer) thus puts its signature on
//! the text before it. The signature is announced as `part_metadata` key
//! `signature` on the part that holds it in the folded response, and the
//! next request must send it back on that part. Text parts stay open until
//! another kind of part arrives or the body ends.
//!
//! # Vertex's streamed function-call arguments
//!
//! A call starts with `functionCall: {name, willContinue: true}` (or a first
//! `partialArgs`); the next parts' `functionCall`s (no `name`) carry
//! `partialArgs: [{jsonPath, stringValue | numberValue | boolValue |
//! nullValue, willContinue}]`, and the first one without `willContinue:
//! true` (often `functionCall: {}`) completes the call. The arguments are
//! written back as the JSON text of one object, in order (a string whose
//! argument has `willContinue: true` continues in the next argument at the
//! same path), and go through the arguments parser like every dialect's:
//! `tool_args_delta` (that text) and `tool_args_path` events (depth and last
//! segment). The folded part is the non-streaming one: `functionCall:
//! {name, args}` (with `id` when given) and the first part's
//! `thoughtSignature`. A path that cannot be written in order (malformed,
//! the root, a member already written or closed, an array index other than
//! the next one) is a warning `invalid_event`, that argument skipped.
//! Another part (or a new call with a `name`) while a call streams: the
//! call is committed `incomplete` (warning `part_not_ended`), never ready.
//!
//! # The folded response
//!
//! The non-streaming endpoint's `GenerateContentResponse`: `candidates`
//! (each `content: {parts, role}` and every other member the chunks
//! carried: a non-null value replaces the earlier one, except
//! `citationMetadata`, whose lists — `citations` on Vertex,
//! `citationSources` on the Gemini API — are appended across chunks, an
//! entry already present skipped), then every top-level member of the
//! chunks (`usageMetadata`, `modelVersion`, `responseId`, `createTime`,
//! `promptFeedback`, …), a non-null value replacing. **Usage rule**: a
//! chunk's `usageMetadata` replaces the usage whole (the counts are running
//! totals; the last chunk's are the response's); a `usage` event when it
//! changed.
//!
//! # End of the turn, errors
//!
//! There is no terminal event. The end of the body after every candidate
//! received a `finishReason` is the normal end of the turn (the open text
//! parts committed `complete`, then `turn_end` with candidate 0's reason);
//! without one it is [`StreamError::Incomplete`] (expected `finishReason`),
//! open parts committed `incomplete`.
//!
//! A chunk `{"error": {"code", "message", "status"}}` is a provider error
//! (`error_type` the `status`, else the `code`). A `promptFeedback` with a
//! `blockReason` (the prompt was blocked: no candidates) is a provider error
//! of type `prompt_blocked` whose message is the reason (and
//! `blockReasonMessage` when given); the `promptFeedback` is folded first.
//!
//! # Deliberate differences and what is left open
//!
//! * With [`Provider::Auto`], a body whose first chunk is an `{"error": …}`
//!   is taken by the OpenAI Chat dialect (the same shape); give
//!   [`Provider::Gemini`] to have it typed as above.
//! * The `google-genai` SDKs have no stream accumulator: the fold follows
//!   the shapes the non-streaming endpoint returns, not an SDK's code.
//! * A chunk's `candidates` that is not a list, a candidate or part that is
//!   not an object: `invalid_event` warning, the rest of the chunk applied.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::events::{PartKind, ProviderError, StreamEvent, ToolInputFormat, WarningCode};
use super::fastpath::{Cursor, Seen};
use super::json_path_args::ArgsWriter;
use super::raw::{
    assign_raw, has_member, member, member_mut, plain_string, quick_allowed, quick_taken, set_raw, value_of,
};
use super::turn::{CallInit, Dialect, DialectInfo, Flow, Outcome, Part, Turn, TurnState};
use super::view::JsonStr;
use super::{append_str, parse_value, warn, Provider, Sink, StreamError, StreamLimit};
use crate::json::scan::{map_heap_bytes, value_heap_bytes};
use crate::json::PartialStrings;
use crate::sse::Event;

/// The Gemini dialect: a first event whose data is a JSON object with
/// `candidates`, `usageMetadata`, `promptFeedback` or `modelVersion`.
pub(crate) const DIALECT: DialectInfo = DialectInfo {
    provider: Provider::Gemini,
    name: "gemini",
    aliases: &["vertex", "google"],
    detects: |_, value| {
        value.and_then(Value::as_object).is_some_and(|o| {
            ["candidates", "usageMetadata", "promptFeedback", "modelVersion"].iter().any(|k| o.contains_key(*k))
        })
    },
    make: || Box::<GeminiFold>::default(),
};

/// One part of a candidate, the Gemini side (its text lives in the turn's
/// [`Part`]).
#[derive(Debug)]
struct Slot {
    part: u32,
    /// A merged text part: `Some(thought)`; any other part: `None`.
    text: Option<bool>,
    /// A text part's thought signature (moved into `whole` at commit).
    signature: Option<String>,
    /// A part kept whole: its JSON as received (a streamed call: without
    /// `partialArgs` and `willContinue`; its `args` set at commit); a text
    /// part once committed: its JSON, built of its text and signature.
    whole: Option<Value>,
    /// A Vertex function call whose arguments stream (`partialArgs`).
    streamed: Option<Box<ArgsWriter>>,
}

impl Slot {
    fn to_json(&self, part: &Part) -> Value {
        if let (Some(v), Some(_)) = (&self.whole, &self.streamed) {
            // Still streaming: the arguments so far.
            let args = part.args.as_ref().and_then(|a| a.partial_value(PartialStrings::Drop));
            return with_args(v.clone(), args.unwrap_or_else(|| Value::Object(Map::new())));
        }
        if let Some(v) = &self.whole {
            return v.clone();
        }
        text_part(part.text.clone(), self.text == Some(true), self.signature.clone())
    }

    /// [`to_json`](Self::to_json), the slot and the part's text moved into
    /// the value instead of copied.
    fn into_json(self, part: &mut Part) -> Value {
        match self.whole {
            Some(v) if self.streamed.is_some() => {
                let args = part.args.as_ref().and_then(|a| a.partial_value(PartialStrings::Drop));
                with_args(v, args.unwrap_or_else(|| Value::Object(Map::new())))
            }
            Some(v) => v,
            None => text_part(core::mem::take(&mut part.text), self.text == Some(true), self.signature),
        }
    }
}

/// A merged text part's JSON: `text`, then `thought` and `thoughtSignature`
/// when it has them.
fn text_part(text: String, thought: bool, signature: Option<String>) -> Value {
    let mut m = Map::new();
    m.insert("text".into(), Value::String(text));
    if thought {
        m.insert("thought".into(), Value::Bool(true));
    }
    if let Some(sig) = signature {
        m.insert("thoughtSignature".into(), Value::String(sig));
    }
    Value::Object(m)
}

/// One candidate (a choice).
#[derive(Debug)]
struct Candidate {
    index: u64,
    role: Option<Value>,
    /// Every member but `content`, as folded.
    fields: Map<String, Value>,
    slots: Vec<Slot>,
    /// The slot of the open text part.
    open: Option<usize>,
    /// The slot of the function call whose arguments stream.
    streaming: Option<usize>,
    finished: bool,
    /// The raw members last applied to `fields` by the fast path.
    raw: SeenRaw,
    /// The entries of `citationMetadata`'s lists, indexed for merging.
    citations: CitationIndex,
}

/// The Gemini fold.
#[derive(Debug, Default)]
pub(crate) struct GeminiFold {
    /// Top-level members (`candidates` first, as a placeholder).
    message: Map<String, Value>,
    candidates: Vec<Candidate>,
    /// The raw top-level members last applied to `message` by the fast path.
    top_raw: SeenRaw,
}

/// The raw text of the object and array members last applied to a folded
/// map by the fast path, so that one repeated unchanged (a usage object, a
/// safety rating) is neither parsed nor stored again (a string, boolean or
/// number member is written in place without being kept, since that costs
/// no more than comparing it; a kept member is one allocation, its key and
/// text together). Valid only while nothing else writes those members: the slow
/// path clears it.
#[derive(Debug, Default)]
struct SeenRaw {
    /// Per member: the key's length, and the key followed by the raw text.
    seen: Vec<(usize, String)>,
}

impl SeenRaw {
    /// Whether `raw` is the text last applied for `key` (always `false` for
    /// a scalar); otherwise records it, or forgets the key for a scalar (the
    /// caller then applies it).
    fn unchanged(&mut self, key: &str, raw: &str) -> bool {
        let kept = raw.starts_with(['{', '[']);
        match self.seen.iter().position(|(n, s)| &s[..*n] == key) {
            Some(i) if kept => {
                let (n, s) = &mut self.seen[i];
                if &s[*n..] == raw {
                    return true;
                }
                s.truncate(*n);
                s.push_str(raw);
            }
            Some(i) => {
                self.seen.swap_remove(i);
            }
            None if kept => {
                let mut s = String::with_capacity(key.len() + raw.len());
                s.push_str(key);
                s.push_str(raw);
                self.seen.push((key.len(), s));
            }
            None => {}
        }
        false
    }

    /// Forgets every member (something else wrote the map).
    fn clear(&mut self) {
        self.seen.clear();
    }

    /// Heap bytes held.
    fn footprint(&self) -> usize {
        self.seen.capacity() * core::mem::size_of::<(usize, String)>()
            + self.seen.iter().map(|(_, s)| s.capacity()).sum::<usize>()
    }
}

/// Up to [`Members::MAX`] members of an object on the fast path, each its
/// key and its raw JSON text ([`Cursor::skip`]), in order. A key
/// given twice, a `null` value or more members decline (the slow path's).
#[derive(Clone, Copy)]
struct Members<'a> {
    list: [(&'a str, &'a str); Members::MAX],
    n: usize,
}

impl<'a> Members<'a> {
    /// The most members a fast-path object may have.
    const MAX: usize = 12;

    fn new() -> Self {
        Members { list: [("", ""); Members::MAX], n: 0 }
    }

    /// Adds a member; `None` when `key` is already there, `raw` is `null`
    /// or the list is full.
    fn push(&mut self, key: &'a str, raw: &'a str) -> Option<()> {
        if raw == "null" || self.n == Members::MAX || self.iter().any(|(k, _)| k == key) {
            return None;
        }
        self.list[self.n] = (key, raw);
        self.n += 1;
        Some(())
    }

    /// Reads a member's value (any JSON value) and adds it.
    fn read(&mut self, key: &'a str, c: &mut Cursor<'a>) -> Option<()> {
        let raw = c.skip()?;
        self.push(key, raw)
    }

    /// The members in order.
    fn iter(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        self.list[..self.n].iter().copied()
    }

    /// The raw text of member `key`.
    fn get(&self, key: &str) -> Option<&'a str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// A candidate's parts on the fast path: the first one inline (no
/// allocation for the usual single part).
#[derive(Default)]
struct Parts<'a> {
    first: Option<PartView<'a>>,
    rest: Vec<PartView<'a>>,
}

impl<'a> Parts<'a> {
    fn push(&mut self, p: PartView<'a>) {
        if self.first.is_none() {
            self.first = Some(p);
        } else {
            self.rest.push(p);
        }
    }
}

/// A part on the fast path.
enum PartView<'a> {
    /// A text part (`text`, `thought`, `thoughtSignature` and nothing
    /// else, with a text or a signature).
    Text { text: Option<JsonStr<'a>>, thought: bool, signature: Option<&'a str> },
    /// Any other part (its members): handed to the slow path's part handler
    /// as a map.
    Other(Box<Members<'a>>),
}

/// What the fast path makes of a part, `None` when it leaves the chunk to
/// the slow path (a text part member of an unexpected type or escaped).
fn part_view<'a>(p: &Members<'a>) -> Option<PartView<'a>> {
    if !p.iter().all(|(k, _)| matches!(k, "text" | "thought" | "thoughtSignature")) {
        return Some(PartView::Other(Box::new(*p)));
    }
    let text = match p.get("text") {
        Some(raw) => Some(JsonStr::from_raw(raw)?),
        None => None,
    };
    let thought = match p.get("thought") {
        None => false,
        Some("true") => true,
        Some("false") => false,
        Some(_) => return None,
    };
    let signature = match p.get("thoughtSignature") {
        Some(raw) => Some(plain_string(raw)?),
        None => None,
    };
    if text.is_none() && signature.is_none() {
        return Some(PartView::Other(Box::new(*p)));
    }
    Some(PartView::Text { text, thought, signature })
}

/// The one candidate of a chunk on the fast path.
struct QuickCandidate<'a> {
    /// Every member but `content`.
    members: Members<'a>,
    /// `content.role` (a plain string).
    role: Option<&'a str>,
    /// `content.parts`.
    parts: Parts<'a>,
    /// `index` (0 when absent).
    index: u64,
}

/// A chunk the fast path folds: an object without `error`,
/// `promptFeedback` or `null` members, with at most one candidate, whose
/// `index` (if any) is a non-negative integer, read from its bytes with a
/// [`Cursor`] (Gemini's `"key": value` spacing, and any other whitespace
/// between tokens, accepted). Read in place ([`parse`](Self::parse)) and
/// lent to the fold: never moved (it is most of a kilobyte).
struct QuickChunk<'a> {
    /// Every top-level member but `candidates`.
    top: Members<'a>,
    /// The chunk's candidate, when `has_candidate`.
    candidate: QuickCandidate<'a>,
    has_candidate: bool,
}

impl<'a> QuickChunk<'a> {
    /// A chunk with no member, to be read by [`parse`](Self::parse).
    fn new() -> Self {
        QuickChunk { top: Members::new(), candidate: QuickCandidate::new(), has_candidate: false }
    }

    /// Reads `data` into this (new) chunk; `None` for the slow path (the
    /// chunk then holds part of it, and is dropped).
    #[inline(never)]
    fn parse(&mut self, data: &'a str) -> Option<()> {
        if !quick_allowed() {
            return None;
        }
        let mut c = Cursor::new(data);
        let mut cands_seen = false;
        c.ws();
        c.spaced_object(|key, c| match key {
            "candidates" => {
                if std::mem::replace(&mut cands_seen, true) {
                    return None;
                }
                c.spaced_array(|c| {
                    if std::mem::replace(&mut self.has_candidate, true) {
                        return None;
                    }
                    self.candidate.parse(data, c)
                })
            }
            "error" | "promptFeedback" => None,
            _ => self.top.read(key, c),
        })?;
        c.ws();
        c.end()?;
        quick_taken();
        Some(())
    }
}

impl<'a> QuickCandidate<'a> {
    /// A candidate with no member, to be read by [`parse`](Self::parse).
    fn new() -> Self {
        QuickCandidate { members: Members::new(), role: None, parts: Parts::default(), index: 0 }
    }

    /// Reads the candidate object at the cursor into this (new) one
    /// (`data` the chunk's whole text).
    fn parse(&mut self, data: &'a str, c: &mut Cursor<'a>) -> Option<()> {
        let mut content = Seen::default();
        c.spaced_object(|key, c| match key {
            "content" => {
                content.first(1)?;
                self.content(c)
            }
            "index" => {
                let at = c.pos();
                self.index = c.uint()?;
                self.members.push(key, &data[at..c.pos()])
            }
            _ => self.members.read(key, c),
        })
    }

    /// A candidate's `content`: `parts` and `role` (each possibly `null`),
    /// nothing else.
    fn content(&mut self, c: &mut Cursor<'a>) -> Option<()> {
        let mut seen = Seen::default();
        c.spaced_object(|key, c| match key {
            "parts" => {
                seen.first(1)?;
                if c.is_null()? {
                    return Some(());
                }
                c.spaced_array(|c| {
                    let mut p = Members::new();
                    c.spaced_object(|key, c| p.read(key, c))?;
                    self.parts.push(part_view(&p)?);
                    Some(())
                })
            }
            "role" => {
                seen.first(2)?;
                self.role = c.opt_plain()?;
                Some(())
            }
            _ => None,
        })
    }
}

impl Dialect for GeminiFold {
    fn provider(&self) -> Provider {
        Provider::Gemini
    }

    fn terminal(&self) -> &'static str {
        "finishReason"
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        let mut chunk = QuickChunk::new();
        if chunk.parse(event.data()).is_some() {
            return self.on_quick_chunk(turn, &mut chunk, sink);
        }
        // The slow path writes the members itself.
        self.top_raw.clear();
        for c in &mut self.candidates {
            c.raw.clear();
        }
        let v = parse_value(event, sink)?;
        let Value::Object(mut chunk) = v else {
            self.start(turn, sink);
            warn(sink, WarningCode::InvalidEvent, "chunk that is not a JSON object; ignored");
            return Ok(Flow::Continue);
        };
        if let Some(e) = chunk.get("error") {
            self.start(turn, sink);
            return Ok(Flow::Fail(provider_error(e, turn.output_emitted())));
        }
        let first = turn.state == TurnState::Idle;
        let blocked = chunk.get("promptFeedback").and_then(|f| {
            let reason = f.get("blockReason").and_then(Value::as_str)?;
            Some(match f.get("blockReasonMessage").and_then(Value::as_str) {
                Some(d) => format!("{reason}: {d}"),
                None => reason.to_owned(),
            })
        });
        let cands = chunk.shift_remove("candidates");
        let mut usage_changed = false;
        // The chunk is ours: its members move into the fold, never copied.
        for (k, val) in chunk.into_iter().filter(|(_, v)| !v.is_null()) {
            if k == "usageMetadata" {
                usage_changed = self.message.get(&k) != Some(&val);
            }
            self.message.insert(k, val);
        }
        if first {
            self.start(turn, sink);
        }
        match cands {
            None | Some(Value::Null) => {}
            Some(Value::Array(cands)) => {
                for (pos, c) in cands.into_iter().enumerate() {
                    match c {
                        Value::Object(c) => self.on_candidate(turn, pos, c, sink)?,
                        _ => warn(sink, WarningCode::InvalidEvent, "candidate that is not an object; ignored"),
                    }
                }
            }
            Some(_) => warn(sink, WarningCode::InvalidEvent, "candidates that is not a list; ignored"),
        }
        if usage_changed {
            if let Some(u) = member(&self.message, "usageMetadata") {
                sink.event(&StreamEvent::Usage { usage: u });
            }
        }
        if let Some(message) = blocked {
            let error = ProviderError {
                error_type: "prompt_blocked".into(),
                message,
                request_id: None,
                output_emitted: turn.output_emitted(),
            };
            return Ok(Flow::Fail(error));
        }
        Ok(Flow::Continue)
    }

    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value> {
        let part = &mut parts[id as usize];
        let slot = &mut self.candidates[part.at as usize].slots[part.sub as usize];
        if slot.streamed.take().is_some() {
            // A streamed call is committed: its `args` as the non-streaming
            // response carries them (complete, or what came of them).
            let args = part.args.as_deref_mut().and_then(|a| match part.outcome {
                Outcome::Complete => a.take_value(),
                _ => a.partial_value(PartialStrings::Drop),
            });
            let whole = slot.whole.take().unwrap_or(Value::Null);
            slot.whole = Some(with_args(whole, args.unwrap_or_else(|| Value::Object(Map::new()))));
        }
        // A text part is done: its JSON is built once, its text and
        // signature moved into it (nothing reads them from the part once
        // committed), and kept whole from here on.
        let whole = slot.whole.get_or_insert_with(|| {
            text_part(core::mem::take(&mut part.text), slot.text == Some(true), slot.signature.take())
        });
        // A part kept whole is lent as it is, not copied.
        Cow::Borrowed(whole)
    }

    /// The folded `GenerateContentResponse`.
    fn message(&self, turn: &Turn) -> Value {
        if self.message.is_empty() {
            return Value::Null;
        }
        let (single, mut sorted);
        let order: &[&Candidate] = match self.candidates.as_slice() {
            // The usual one candidate: no list to sort.
            [] => &[],
            [one] => {
                single = [one];
                &single
            }
            all => {
                sorted = all.iter().collect::<Vec<_>>();
                sorted.sort_by_key(|c| c.index);
                &sorted
            }
        };
        let cands = order
            .iter()
            .map(|c| {
                let parts = c.slots.iter().map(|s| s.to_json(&turn.parts[s.part as usize])).collect();
                candidate_json(parts, c.role.clone(), c.fields.clone())
            })
            .collect();
        response_json(self.message.clone(), cands)
    }

    /// [`message`](Self::message), every member and text moved out of the
    /// fold instead of copied.
    fn into_message(self: Box<Self>, turn: &mut Turn) -> Value {
        let GeminiFold { message, mut candidates, .. } = *self;
        if message.is_empty() {
            return Value::Null;
        }
        // Stable, as `message`'s sort of the references.
        candidates.sort_by_key(|c| c.index);
        let cands = candidates
            .into_iter()
            .map(|c| {
                let parts = c.slots.into_iter().map(|s| {
                    let part = &mut turn.parts[s.part as usize];
                    s.into_json(part)
                });
                candidate_json(parts.collect(), c.role, c.fields)
            })
            .collect();
        response_json(message, cands)
    }

    fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + map_heap_bytes(&self.message)
            + self.top_raw.footprint()
            + self
                .candidates
                .iter()
                .map(|c| {
                    core::mem::size_of::<Candidate>()
                        + c.role.as_ref().map_or(0, value_heap_bytes)
                        + map_heap_bytes(&c.fields)
                        + c.raw.footprint()
                        + c.citations.lists.values().map(ListIndex::footprint).sum::<usize>()
                        + c.slots
                            .iter()
                            .map(|s| {
                                core::mem::size_of::<Slot>()
                                    + s.signature.as_ref().map_or(0, String::capacity)
                                    + s.whole.as_ref().map_or(0, value_heap_bytes)
                                    + s.streamed.as_ref().map_or(0, |w| w.footprint())
                            })
                            .sum::<usize>()
                })
                .sum::<usize>()
    }

    fn on_turn_end(&mut self, _turn: &Turn, _sink: &mut Sink<'_>) -> Option<String> {
        let c = self.candidates.iter().find(|c| c.index == 0).or(self.candidates.first())?;
        c.fields.get("finishReason").and_then(Value::as_str).map(str::to_owned)
    }

    /// Every candidate has its `finishReason`: the final chunk came.
    fn complete_at_end(&self, turn: &Turn) -> bool {
        turn.state == TurnState::Streaming && !self.candidates.is_empty() && self.candidates.iter().all(|c| c.finished)
    }

    fn end_of_body(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) -> bool {
        if !self.complete_at_end(turn) {
            return false;
        }
        for c in 0..self.candidates.len() {
            self.close_text(turn, c, sink);
            self.cut_call(turn, c, sink);
        }
        true
    }

    fn is_restart(&self, _ty: &str, _id: Option<&str>) -> bool {
        // A new connection to `streamGenerateContent` answers from the start.
        true
    }

    fn start_implicitly(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        self.start(turn, sink);
    }
}

impl GeminiFold {
    /// Starts the turn (on its first chunk): `message_start`.
    fn start(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        if !turn.begin() {
            return;
        }
        // `candidates` first (moved there, its value kept, if already
        // present), the members in place: no map rebuilt.
        if self.message.keys().next().map(String::as_str) != Some("candidates") {
            let cands = self.message.shift_remove("candidates").unwrap_or_else(|| Value::Array(Vec::new()));
            self.message.shift_insert(0, "candidates".into(), cands);
        }
        let m = std::mem::take(&mut self.message);
        if !self.candidates.is_empty() {
            self.message = m;
            let snapshot = self.message(turn);
            sink.event(&StreamEvent::MessageStart { provider: "gemini", message: &snapshot });
            return;
        }
        // No candidate yet: the snapshot is the map itself (its empty
        // `candidates` what `message` would write), lent to the event and
        // taken back, never copied.
        let snapshot = Value::Object(m);
        sink.event(&StreamEvent::MessageStart { provider: "gemini", message: &snapshot });
        if let Value::Object(m) = snapshot {
            self.message = m;
        }
    }

    /// The position of the candidate of `index`, added when new.
    fn candidate(&mut self, turn: &Turn, index: u64) -> Result<usize, StreamError> {
        if let Some(p) = self.candidates.iter().position(|c| c.index == index) {
            return Ok(p);
        }
        if self.candidates.len() >= turn.config.max_choices {
            return Err(StreamError::LimitExceeded { limit: StreamLimit::MaxChoices, max: turn.config.max_choices });
        }
        // Usually the one candidate: room for it alone (four at once is an
        // allocation too big for the allocator's fast path).
        self.candidates.reserve_exact(1);
        self.candidates.push(Candidate {
            index,
            role: None,
            fields: Map::new(),
            slots: Vec::new(),
            open: None,
            streaming: None,
            finished: false,
            raw: SeenRaw::default(),
            citations: CitationIndex::default(),
        });
        Ok(self.candidates.len() - 1)
    }

    fn on_candidate(
        &mut self,
        turn: &mut Turn,
        pos: usize,
        mut c: Map<String, Value>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let index = match c.get("index") {
            None | Some(Value::Null) => pos as u64,
            Some(i) => match i.as_u64() {
                Some(i) => i,
                None => {
                    warn(
                        sink,
                        WarningCode::InvalidEvent,
                        "candidate index that is not a non-negative integer; ignored",
                    );
                    return Ok(());
                }
            },
        };
        let at = self.candidate(turn, index)?;
        match c.shift_remove("content") {
            None | Some(Value::Null) => {}
            Some(Value::Object(mut content)) => {
                if let Some(role) = content.shift_remove("role").filter(|r| !r.is_null()) {
                    self.candidates[at].role = Some(role);
                }
                match content.shift_remove("parts") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(parts)) => {
                        for p in parts {
                            match p {
                                Value::Object(p) => self.on_part(turn, at, p, sink)?,
                                _ => warn(sink, WarningCode::InvalidEvent, "part that is not an object; ignored"),
                            }
                        }
                    }
                    Some(_) => warn(sink, WarningCode::InvalidEvent, "content.parts that is not a list; ignored"),
                }
            }
            Some(_) => warn(sink, WarningCode::InvalidEvent, "candidate content that is not an object; ignored"),
        }
        let cand = &mut self.candidates[at];
        let mut finish = false;
        for (k, val) in c.into_iter().filter(|(_, v)| !v.is_null()) {
            finish |= k == "finishReason" && val.is_string();
            match (k.as_str(), cand.fields.get_mut(&k), val) {
                ("citationMetadata", Some(Value::Object(old)), Value::Object(new)) => {
                    merge_citations(old, &new, &mut cand.citations)
                }
                (_, _, val) => {
                    if k == "citationMetadata" {
                        cand.citations.lists.clear();
                    }
                    cand.fields.insert(k, val);
                }
            }
        }
        if finish {
            cand.finished = true;
            if let Some(reason) = cand.fields.get("finishReason").and_then(Value::as_str) {
                sink.event(&StreamEvent::StopReason { choice: choice(index), reason });
            }
        }
        Ok(())
    }

    /// Commits the candidate's open text part (complete).
    fn close_text(&mut self, turn: &mut Turn, at: usize, sink: &mut Sink<'_>) {
        if let Some(slot) = self.candidates[at].open.take() {
            let part = self.candidates[at].slots[slot].part;
            turn.commit(self, part, false, sink);
        }
    }

    fn on_part(
        &mut self,
        turn: &mut Turn,
        at: usize,
        mut p: Map<String, Value>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let fc = member(&p, "functionCall").and_then(Value::as_object);
        if let Some(slot) = self.candidates[at].streaming {
            // A call streams: a `functionCall` without a name continues it;
            // anything else means it never completed.
            match fc {
                Some(fc) if !has_member(fc, "name") => {
                    let more = member(fc, "willContinue") == Some(&Value::Bool(true));
                    return self.continue_call(turn, at, slot, member(fc, "partialArgs"), more, sink);
                }
                _ => self.cut_call(turn, at, sink),
            }
        }
        if let Some(fc) =
            fc.filter(|f| has_member(f, "partialArgs") || member(f, "willContinue") == Some(&Value::Bool(true)))
        {
            let fc = fc.clone();
            return self.start_call(turn, at, p, &fc, sink);
        }
        let signature = member(&p, "thoughtSignature").and_then(Value::as_str);
        let is_text = member(&p, "text").is_some_and(Value::is_string)
            || (signature.is_some() && p.keys().all(|k| k == "thoughtSignature" || k == "thought"));
        let only_text = p.keys().all(|k| matches!(k.as_str(), "text" | "thought" | "thoughtSignature"));
        if is_text && only_text {
            let thought = member(&p, "thought").and_then(Value::as_bool) == Some(true);
            let signature = match p.shift_remove("thoughtSignature") {
                Some(Value::String(s)) => Some(s),
                _ => None,
            };
            let text = member(&p, "text").and_then(Value::as_str).unwrap_or("");
            let slot = self.text_slot(turn, at, thought, signature.is_some(), sink)?;
            let part = self.candidates[at].slots[slot].part;
            append_str(turn, part, text, sink)?;
            if let Some(sig) = signature {
                self.sign(turn, at, slot, sig, sink)?;
            }
            return Ok(());
        }
        self.close_text(turn, at, sink);
        let call = member(&p, "functionCall").and_then(Value::as_object).filter(|f| {
            !has_member(f, "partialArgs") && !member(f, "willContinue").is_some_and(|w| w == &Value::Bool(true))
        });
        let ty = p.keys().find(|k| !matches!(k.as_str(), "thought" | "thoughtSignature")).map_or("", String::as_str);
        let media = member(&p, "inlineData").and_then(Value::as_object).and_then(|d| {
            let data = member(d, "data").and_then(Value::as_str)?;
            Some((member(d, "mimeType").and_then(Value::as_str).unwrap_or("application/octet-stream"), data))
        });
        let kind = match (&call, media) {
            (Some(_), _) => PartKind::ToolCall,
            (None, Some(_)) => PartKind::Media,
            _ => PartKind::Other,
        };
        let slot = self.open_slot(turn, at, kind, ty, None, None, call, sink)?;
        let part = self.candidates[at].slots[slot].part;
        if let Some((mime_type, data)) = media {
            turn.set_media(part, mime_type);
            turn.append_base64(part, data, sink)?;
        }
        if let Some(call) = call {
            for key in ["id", "name"] {
                if let Some(val) = member(call, key) {
                    turn.call_metadata(part, key, val, sink);
                }
            }
            if let Some(args) = member(call, "args").filter(|a| !a.is_null()) {
                let text = serde_json::to_string(args).unwrap_or_default();
                turn.push_args(part, text.as_str(), sink)?;
            }
        }
        if let Some(sig) = member(&p, "thoughtSignature").filter(|s| s.is_string()) {
            sink.event(&StreamEvent::PartMetadata { part, key: "signature", value: sig });
        }
        self.candidates[at].slots[slot].whole = Some(Value::Object(p));
        turn.commit(self, part, false, sink);
        if let Some(args) = turn.parts[part as usize].args.as_mut() {
            args.release();
        }
        Ok(())
    }

    /// A Vertex function call whose arguments stream: a `tool_call` part
    /// (`id`, `name` and `signature` metadata as a whole call's), kept open
    /// until a `functionCall` without `willContinue: true`.
    fn start_call(
        &mut self,
        turn: &mut Turn,
        at: usize,
        mut p: Map<String, Value>,
        fc: &Map<String, Value>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        self.close_text(turn, at, sink);
        let slot = self.open_slot(turn, at, PartKind::ToolCall, "functionCall", None, None, Some(fc), sink)?;
        let part = self.candidates[at].slots[slot].part;
        for key in ["id", "name"] {
            if let Some(val) = member(fc, key) {
                turn.call_metadata(part, key, val, sink);
            }
        }
        if let Some(sig) = member(&p, "thoughtSignature").filter(|s| s.is_string()) {
            sink.event(&StreamEvent::PartMetadata { part, key: "signature", value: sig });
        }
        if let Some(Value::Object(base)) = p.get_mut("functionCall") {
            base.shift_remove("partialArgs");
            base.shift_remove("willContinue");
            base.shift_remove("args");
        }
        let s = &mut self.candidates[at].slots[slot];
        s.whole = Some(Value::Object(p));
        s.streamed = Some(Box::default());
        self.candidates[at].streaming = Some(slot);
        let more = member(fc, "willContinue") == Some(&Value::Bool(true));
        self.continue_call(turn, at, slot, member(fc, "partialArgs"), more, sink)
    }

    /// Applies a `functionCall`'s `partialArgs` to the streaming call (the
    /// arguments' JSON text, through the arguments parser); without
    /// `willContinue: true` the call is complete: committed.
    fn continue_call(
        &mut self,
        turn: &mut Turn,
        at: usize,
        slot: usize,
        partial_args: Option<&Value>,
        will_continue: bool,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let part = self.candidates[at].slots[slot].part;
        let mut text = String::new();
        let Some(writer) = self.candidates[at].slots[slot].streamed.as_deref_mut() else { return Ok(()) };
        match partial_args {
            None | Some(Value::Null) => {}
            Some(Value::Array(args)) => {
                for arg in args {
                    match writer.push(arg, &mut text) {
                        Ok(()) if text.is_empty() => {}
                        Ok(()) => {
                            turn.push_args(part, text.as_str(), sink)?;
                            text.clear();
                        }
                        Err(e) => {
                            let msg = format!("functionCall.partialArgs: {}; skipped", e.0);
                            warn(sink, WarningCode::InvalidEvent, &msg);
                        }
                    }
                }
            }
            Some(_) => warn(sink, WarningCode::InvalidEvent, "functionCall.partialArgs that is not a list; ignored"),
        }
        let done = !will_continue;
        if done {
            writer.finish(&mut text);
            if !text.is_empty() {
                turn.push_args(part, text.as_str(), sink)?;
            }
        }
        if done {
            self.candidates[at].streaming = None;
            turn.commit(self, part, false, sink);
            if let Some(args) = turn.parts[part as usize].args.as_mut() {
                args.release();
            }
        }
        Ok(())
    }

    /// Another part arrived while a call's arguments streamed: the call
    /// never completed (committed `incomplete`, warning `part_not_ended`).
    fn cut_call(&mut self, turn: &mut Turn, at: usize, sink: &mut Sink<'_>) {
        let Some(slot) = self.candidates[at].streaming.take() else { return };
        let part = self.candidates[at].slots[slot].part;
        let msg = format!("function call (part {part}) still streaming (willContinue) when another part came; committed as incomplete");
        warn(sink, WarningCode::PartNotEnded, &msg);
        turn.commit(self, part, true, sink);
    }

    /// Puts a thought signature on a text slot (`part_metadata`
    /// `signature`).
    fn sign(
        &mut self,
        turn: &mut Turn,
        at: usize,
        slot: usize,
        sig: String,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        turn.check_text(sig.len())?;
        let part = self.candidates[at].slots[slot].part;
        let value = Value::String(sig);
        sink.event(&StreamEvent::PartMetadata { part, key: "signature", value: &value });
        let Value::String(sig) = value else { return Ok(()) };
        self.candidates[at].slots[slot].signature = Some(sig);
        Ok(())
    }

    /// The slot a text part goes to: the open text part of its kind unless
    /// both it and the new one carry a signature, else a new one.
    fn text_slot(
        &mut self,
        turn: &mut Turn,
        at: usize,
        thought: bool,
        signed: bool,
        sink: &mut Sink<'_>,
    ) -> Result<usize, StreamError> {
        let cand = &self.candidates[at];
        let merge = cand.open.filter(|&s| {
            let slot = &cand.slots[s];
            slot.text == Some(thought) && !(slot.signature.is_some() && signed)
        });
        if let Some(s) = merge {
            return Ok(s);
        }
        self.close_text(turn, at, sink);
        let (kind, ty) = if thought { (PartKind::Reasoning, "thought") } else { (PartKind::Text, "text") };
        let s = self.open_slot(turn, at, kind, ty, Some(thought), None, None, sink)?;
        self.candidates[at].open = Some(s);
        Ok(s)
    }

    /// A chunk of the fast path: what the slow path does with its `Value`,
    /// from the raw members (unchanged ones skipped, strings written in
    /// place).
    fn on_quick_chunk(
        &mut self,
        turn: &mut Turn,
        chunk: &mut QuickChunk<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow, StreamError> {
        let first = turn.state == TurnState::Idle;
        if first && self.message.is_empty() {
            // Where `start` puts it: no member moved then.
            self.message.insert("candidates".into(), Value::Array(Vec::new()));
        }
        let mut usage_changed = false;
        for (k, raw) in chunk.top.iter() {
            if self.top_raw.unchanged(k, raw) {
                continue;
            }
            if k == "usageMetadata" {
                // The counts grew: written over the old usage in place.
                match member_mut(&mut self.message, k) {
                    Some(old) => usage_changed = assign_raw(old, raw),
                    None => {
                        usage_changed = true;
                        self.message.insert(k.to_owned(), value_of(raw));
                    }
                }
            } else {
                set_raw(&mut self.message, k, raw);
            }
        }
        if first {
            self.start(turn, sink);
        }
        if chunk.has_candidate {
            let QuickCandidate { members, role, parts, index } = &mut chunk.candidate;
            let (role, index) = (*role, *index);
            let at = self.candidate(turn, index)?;
            if let Some(role) = role {
                if !matches!(&self.candidates[at].role, Some(Value::String(r)) if r == role) {
                    self.candidates[at].role = Some(Value::String(role.to_owned()));
                }
            }
            for p in parts.first.take().into_iter().chain(std::mem::take(&mut parts.rest)) {
                match p {
                    PartView::Text { text, thought, signature } => {
                        // As on the slow path: a text part ends a call
                        // whose arguments were still streaming.
                        self.cut_call(turn, at, sink);
                        let slot = self.text_slot(turn, at, thought, signature.is_some(), sink)?;
                        let part = self.candidates[at].slots[slot].part;
                        if let Some(text) = text {
                            turn.append_text(part, &text, sink)?;
                        }
                        if let Some(sig) = signature {
                            self.sign(turn, at, slot, sig.to_owned(), sink)?;
                        }
                    }
                    PartView::Other(p) => {
                        if let Some(slot) = self.candidates[at].streaming {
                            // A streamed call's next arguments: read from
                            // the raw `functionCall`, only its `partialArgs`
                            // built (what `on_part` reads of it).
                            if let Some((args, more)) = p.get("functionCall").and_then(quick_continuation) {
                                self.continue_call(turn, at, slot, args.as_ref(), more, sink)?;
                                continue;
                            }
                        }
                        let p = p.iter().map(|(k, raw)| (k.to_owned(), value_of(raw))).collect();
                        self.on_part(turn, at, p, sink)?;
                    }
                }
            }
            let cand = &mut self.candidates[at];
            let mut finish = false;
            for (k, raw) in members.iter() {
                finish |= k == "finishReason" && raw.starts_with('"');
                if cand.raw.unchanged(k, raw) {
                    continue;
                }
                match (k, member_mut(&mut cand.fields, k)) {
                    ("citationMetadata", Some(Value::Object(old))) => match value_of(raw) {
                        Value::Object(new) => merge_citations(old, &new, &mut cand.citations),
                        other => {
                            cand.citations.lists.clear();
                            cand.fields.insert(k.to_owned(), other);
                        }
                    },
                    _ => {
                        if k == "citationMetadata" {
                            cand.citations.lists.clear();
                        }
                        set_raw(&mut cand.fields, k, raw)
                    }
                }
            }
            if finish {
                cand.finished = true;
                if let Some(reason) = member(&cand.fields, "finishReason").and_then(Value::as_str) {
                    sink.event(&StreamEvent::StopReason { choice: choice(index), reason });
                }
            }
        }
        if usage_changed {
            if let Some(u) = member(&self.message, "usageMetadata") {
                sink.event(&StreamEvent::Usage { usage: u });
            }
        }
        Ok(Flow::Continue)
    }

    /// Opens a part of candidate `at` and its slot; returns the slot.
    #[allow(clippy::too_many_arguments)]
    fn open_slot(
        &mut self,
        turn: &mut Turn,
        at: usize,
        kind: PartKind,
        ty: &str,
        text: Option<bool>,
        whole: Option<Value>,
        call: Option<&Map<String, Value>>,
        sink: &mut Sink<'_>,
    ) -> Result<usize, StreamError> {
        let cand = &self.candidates[at];
        let sub = cand.slots.len();
        let place = (at as u32, sub as u32);
        let part = match call {
            Some(fc) => {
                let text = |k: &str| member(fc, k).and_then(Value::as_str);
                let call = CallInit {
                    id: text("id"),
                    name: text("name"),
                    format: ToolInputFormat::Json,
                    provider_executed: false,
                };
                turn.open_call(place, choice(cand.index), sub as u64, ty, call, sink)?
            }
            None => turn.open_part(kind, place, choice(cand.index), sub as u64, ty, sink)?,
        };
        self.candidates[at].slots.push(Slot { part, text, signature: None, whole, streamed: None });
        Ok(sub)
    }
}

/// A `functionCall` (raw) that continues a streamed call (an object
/// without `name`, its members once each, none `null`): its `partialArgs`
/// (each element built) and whether `willContinue` is `true`; `None` for
/// [`GeminiFold::on_part`].
fn quick_continuation(raw: &str) -> Option<(Option<Value>, bool)> {
    let mut fc = Members::new();
    Cursor::new(raw).spaced_object(|key, c| fc.read(key, c))?;
    if fc.get("name").is_some() {
        return None;
    }
    let args = match fc.get("partialArgs") {
        Some(list) => {
            let mut items = Vec::new();
            Cursor::new(list).spaced_array(|c| {
                items.push(value_of(c.skip()?));
                Some(())
            })?;
            Some(Value::Array(items))
        }
        None => None,
    };
    Some((args, fc.get("willContinue") == Some("true")))
}

/// A folded candidate: `content` (its `parts`, then its `role`) first, then
/// its other members as folded (the map kept: no key hashed again).
fn candidate_json(parts: Vec<Value>, role: Option<Value>, mut fields: Map<String, Value>) -> Value {
    let mut content = Map::new();
    content.insert("parts".into(), Value::Array(parts));
    if let Some(role) = role {
        content.insert("role".into(), role);
    }
    fields.shift_insert(0, "content".into(), Value::Object(content));
    Value::Object(fields)
}

/// The folded top-level members with `candidates` (its placeholder
/// replaced where it stands, else appended).
fn response_json(mut message: Map<String, Value>, candidates: Vec<Value>) -> Value {
    match member_mut(&mut message, "candidates") {
        Some(slot) => *slot = Value::Array(candidates),
        None => {
            message.insert("candidates".into(), Value::Array(candidates));
        }
    }
    Value::Object(message)
}

/// The part `whole` with `functionCall.args` set.
fn with_args(mut whole: Value, args: Value) -> Value {
    if let Some(Value::Object(fc)) = whole.get_mut("functionCall") {
        fc.insert("args".into(), args);
    }
    whole
}

fn choice(index: u64) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}

/// Appends `new`'s lists to `old`'s (an entry already present skipped);
/// other members replace. Linear: each list's entries are indexed by a hash
/// of their value (`seen`), so an entry is compared only with the few kept
/// entries of the same hash.
fn merge_citations(old: &mut Map<String, Value>, new: &Map<String, Value>, seen: &mut CitationIndex) {
    for (k, v) in new {
        match (old.get_mut(k), v) {
            (Some(Value::Array(list)), Value::Array(more)) => {
                let index = seen.lists.entry(k.clone()).or_default();
                index.catch_up(&seen.hasher, list);
                for item in more {
                    let hash = value_hash(&seen.hasher, item);
                    let kept = index.by_hash.get(&hash).is_some_and(|at| at.iter().any(|&i| list[i] == *item));
                    if !kept {
                        index.by_hash.entry(hash).or_default().push(list.len());
                        list.push(item.clone());
                        index.indexed = list.len();
                    }
                }
            }
            _ => {
                old.insert(k.clone(), v.clone());
                seen.lists.remove(k);
            }
        }
    }
}

/// What [`merge_citations`] knows of a candidate's citation lists: per list
/// member, its entries by value hash.
#[derive(Debug, Default)]
struct CitationIndex {
    /// Keys chosen per stream: a server cannot aim at collisions.
    hasher: std::collections::hash_map::RandomState,
    lists: std::collections::HashMap<String, ListIndex>,
}

#[derive(Debug, Default)]
struct ListIndex {
    /// Positions in the list, by value hash.
    by_hash: std::collections::HashMap<u64, Vec<usize>>,
    /// The list's first `indexed` entries are in `by_hash`.
    indexed: usize,
}

impl ListIndex {
    /// Indexes the entries the list gained (or all of them, when it was
    /// replaced by a shorter one) since it was last indexed.
    fn catch_up(&mut self, hasher: &std::collections::hash_map::RandomState, list: &[Value]) {
        if list.len() < self.indexed {
            self.by_hash.clear();
            self.indexed = 0;
        }
        for (i, item) in list.iter().enumerate().skip(self.indexed) {
            self.by_hash.entry(value_hash(hasher, item)).or_default().push(i);
        }
        self.indexed = list.len();
    }

    /// Heap bytes held (estimated).
    fn footprint(&self) -> usize {
        self.by_hash.capacity() * (core::mem::size_of::<u64>() + core::mem::size_of::<Vec<usize>>())
            + self.indexed * core::mem::size_of::<usize>()
    }
}

/// A hash of a JSON value equal for equal values (`Value`'s `==`: an
/// object's members in any order), in time linear in its size.
fn value_hash(state: &impl std::hash::BuildHasher, value: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    fn feed(state: &impl std::hash::BuildHasher, h: &mut impl Hasher, v: &Value) {
        match v {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => (1u8, b).hash(h),
            Value::Number(n) => (2u8, n.to_string()).hash(h),
            Value::String(s) => (3u8, s).hash(h),
            Value::Array(a) => {
                (4u8, a.len()).hash(h);
                for item in a {
                    feed(state, h, item);
                }
            }
            Value::Object(m) => {
                // Members in any order: the sum of each member's own hash.
                let sum = m.iter().fold(0u64, |acc, (k, v)| {
                    let mut member = state.build_hasher();
                    k.hash(&mut member);
                    feed(state, &mut member, v);
                    acc.wrapping_add(member.finish())
                });
                (5u8, m.len(), sum).hash(h);
            }
        }
    }
    let mut h = state.build_hasher();
    feed(state, &mut h, value);
    h.finish()
}

/// The typed error of `{"error": {"code", "message", "status"}}` (or a
/// plain string).
fn provider_error(e: &Value, output_emitted: bool) -> ProviderError {
    let (error_type, message) = match e {
        Value::String(s) => (String::new(), s.clone()),
        _ => {
            let status = e.get("status").and_then(Value::as_str).map(str::to_owned);
            let code = e.get("code").filter(|c| !c.is_null()).map(|c| match c {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let message = e.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
            (status.or(code).unwrap_or_default(), message)
        }
    };
    ProviderError { error_type, message, request_id: None, output_emitted }
}

#[cfg(test)]
mod tests {
    use super::{QuickChunk, SeenRaw};

    #[test]
    fn seen_raw_keeps_objects_and_arrays_only() {
        let mut c = SeenRaw::default();
        assert!(!c.unchanged("u", "{\"a\": 1}"));
        assert!(c.unchanged("u", "{\"a\": 1}"));
        assert!(!c.unchanged("u", "{\"a\": 2}"));
        assert!(c.unchanged("u", "{\"a\": 2}"));
        assert!(!c.unchanged("s", "[1]") && c.unchanged("s", "[1]"));
        // A scalar is never kept, and forgets what the key held.
        assert!(!c.unchanged("m", "\"x\"") && !c.unchanged("m", "\"x\""));
        assert!(!c.unchanged("u", "5"));
        assert!(!c.unchanged("u", "{\"a\": 2}"));
        assert!(c.unchanged("s", "[1]"));
        assert!(c.footprint() > 0);
        c.clear();
        assert!(!c.unchanged("s", "[1]"));
    }

    /// The fast path reads Gemini's own spacing (and any whitespace between
    /// tokens) and declines what it does not model; the fold's equality with
    /// the slow path on these lines is `raw::tests::fast_paths_fold_as_the_value_path`.
    #[test]
    fn quick_chunks_taken_and_declined() {
        let taken = [
            r#"{"candidates": [{"content": {"parts": [{"text": "a"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 3,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 3}]},"modelVersion": "gemini-2.5-flash","responseId": "r"}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"a","thought":true}]}}]}"#,
            " { \"candidates\" :\t[ { \"content\" : { \"parts\" : [ { \"text\" : \"w\" } ] } } ] } ",
            r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f","args": {"a": 1}}}]},"index": 0}]}"#,
            r#"{"candidates": [{"content": {"parts": null,"role": null}}],"modelVersion": "m"}"#,
            r#"{"candidates": [],"usageMetadata": {"n": [1.5e3, -0, 123456789012345678901234567890, "\ud83d\ude00"]}}"#,
            r#"{"modelVersion": "m"}"#,
        ];
        for line in taken {
            assert!(QuickChunk::new().parse(line).is_some(), "{line}");
        }
        let deep = format!(r#"{{"candidates": [],"x": {}{}}}"#, "[".repeat(40), "]".repeat(40));
        let declined = [
            r#"{"candidates": [{"content": {"parts": [{"text": "lone \ud800"}]}}]}"#,
            r#"{"candidates": [],"x": "\udc00"}"#,
            r#"{"candidates": [],"usageMetadata": {"n": 1e400}}"#,
            r#"{"candidates": [{"content": {"parts": [{"te\u0078t": "k"}]}}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": "t"}],"extra": 1}}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": "t","thought": null}]}}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": "t","thought": "yes"}]}}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": 5}]}}]}"#,
            r#"{"candidates": [{"content": {"parts": ["x"]}}]}"#,
            r#"{"candidates": [{"content": "x"}]}"#,
            r#"{"candidates": [{"content": null}]}"#,
            r#"{"candidates": [{"content": {"parts": [],"role": 5}}]}"#,
            r#"{"candidates": [{"content": {"parts": [],"parts": []}}]}"#,
            r#"{"candidates": [{"index": -0}]}"#,
            r#"{"candidates": [{"index": 1.0}]}"#,
            r#"{"candidates": [{"index": 0,"index": 0}]}"#,
            r#"{"candidates": [],"candidates": []}"#,
            r#"{"candidates": [{},{}]}"#,
            r#"{"candidates": null}"#,
            r#"{"candidates": [],"modelVersion": null}"#,
            r#"{"candidates": [],"modelVersion": "a","modelVersion": "b"}"#,
            r#"{"candidates": [],"error": {"code": 1}}"#,
            r#"{"promptFeedback": {"blockReason": "SAFETY"}}"#,
            r#"{"candidates": []} x"#,
            r#"{"candidates": [],}"#,
            r#"{"candidates": [1 2]}"#,
            r#"["candidates"]"#,
            deep.as_str(),
        ];
        for line in declined {
            assert!(QuickChunk::new().parse(line).is_none(), "{line}");
        }
    }
}
