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
//! * **Usage rule**: a chunk's non-null `usage` replaces the message's
//!   usage (the final usage-only chunk of `stream_options.include_usage`).
//! * `data: {"error": {...}}` is a provider error.
//! * The terminal event is `data: [DONE]`, matched exactly.
//!
//! The folded message is a `ChatCompletion`: the first chunk's top-level
//! members (id, created, model, system_fingerprint, service_tier, unknown
//! ones) with `object: "chat.completion"`, `choices` and `usage`. Unknown
//! members inside a delta are not folded.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::args::ToolArgs;
use super::events::{PartKind, ProviderError, StreamEvent};
use super::turn::{Dialect, DialectInfo, Flow, Part, Turn};
use super::view::{Few, JsonStr, JsonText, MaybeStr, RawObject, Str};
use super::{json_error, warn, Provider, Sink, StreamError};
use crate::sse::Event;

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Option<Few<ChoiceView<'a>>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChoiceView<'a> {
    #[serde(default)]
    index: u32,
    #[serde(default, borrow)]
    delta: Option<DeltaView<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Str<'a>>,
    #[serde(default)]
    logprobs: Option<Value>,
}

#[derive(Deserialize)]
struct DeltaView<'a> {
    #[serde(default, borrow)]
    role: Option<Str<'a>>,
    #[serde(default, borrow)]
    content: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    refusal: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    reasoning_content: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    reasoning: Option<MaybeStr<'a>>,
    #[serde(default, borrow)]
    tool_calls: Option<Few<ToolCallView<'a>>>,
}

#[derive(Deserialize)]
struct ToolCallView<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default, borrow)]
    id: Option<Str<'a>>,
    #[serde(rename = "type", default, borrow)]
    ty: Option<Str<'a>>,
    #[serde(default, borrow)]
    function: Option<FunctionView<'a>>,
}

#[derive(Deserialize)]
struct FunctionView<'a> {
    #[serde(default, borrow)]
    name: Option<Str<'a>>,
    #[serde(default, borrow)]
    arguments: Option<JsonText<'a>>,
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
}

impl Call {
    fn to_json(&self, part: &Part) -> Value {
        let mut f = Map::new();
        f.insert("name".into(), Value::String(self.name.clone()));
        let raw = part.args.as_ref().map_or("", ToolArgs::raw);
        f.insert("arguments".into(), Value::String(raw.to_owned()));
        let mut m = Map::new();
        m.insert("id".into(), self.id.clone().map_or(Value::Null, Value::String));
        m.insert("type".into(), Value::String(self.ty.clone()));
        m.insert("function".into(), Value::Object(f));
        Value::Object(m)
    }
}

/// Where a part of a choice sits ([`Part::sub`]).
const SUB_REASONING: u32 = 0;
const SUB_TEXT: u32 = 1;
const SUB_REFUSAL: u32 = 2;
/// Tool call `n` of the choice is sub `SUB_CALLS + n`.
const SUB_CALLS: u32 = 3;

#[derive(Debug, Default)]
struct Choice {
    index: u32,
    role: Option<String>,
    text: Option<u32>,
    refusal: Option<u32>,
    reasoning: Option<(&'static str, u32)>,
    calls: Vec<Call>,
    finish_reason: Option<String>,
    logprobs_seen: bool,
    logprobs_content: Option<Vec<Value>>,
    logprobs_refusal: Option<Vec<Value>>,
}

impl Choice {
    fn to_json(&self, parts: &[Part]) -> Value {
        let mut msg = Map::new();
        msg.insert("role".into(), self.role.as_deref().unwrap_or("assistant").into());
        let text = |t: Option<u32>| t.map_or(Value::Null, |t| Value::String(parts[t as usize].text.clone()));
        msg.insert("content".into(), text(self.text));
        msg.insert("refusal".into(), text(self.refusal));
        if let Some((field, r)) = self.reasoning {
            msg.insert(field.into(), text(Some(r)));
        }
        if !self.calls.is_empty() {
            let calls = self.calls.iter().map(|c| c.to_json(&parts[c.part as usize])).collect();
            msg.insert("tool_calls".into(), Value::Array(calls));
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
        Value::Object(m)
    }

    /// The part ids of the choice still open.
    fn open_parts<'p>(&self, parts: &'p [Part]) -> impl Iterator<Item = u32> + 'p {
        let ids: Vec<u32> = [self.reasoning.map(|r| r.1), self.text, self.refusal]
            .into_iter()
            .flatten()
            .chain(self.calls.iter().map(|c| c.part))
            .collect();
        ids.into_iter().filter(|&p| parts[p as usize].is_open())
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
    top: Map<String, Value>,
    choices: Vec<Choice>,
    usage: Option<Value>,
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
            self.start_if_idle(turn, None, sink);
            for choice in &self.choices {
                if choice.open_parts(&turn.parts).next().is_some() {
                    let msg = format!(
                        "choice {} has open parts at [DONE] (no finish_reason); committed as incomplete",
                        choice.index
                    );
                    warn(sink, "part_not_ended", &msg);
                }
            }
            return Ok(Flow::End);
        }
        let chunk: Chunk<'_> = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() {
                    warn(sink, "invalid_event", &format!("chunk of unexpected shape ({e}); ignored"));
                    return Ok(Flow::Continue);
                }
                return Err(json_error(event, e));
            }
        };
        self.start_if_idle(turn, Some(data), sink);
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            return Ok(Flow::Fail(provider_error(&err, turn.output_emitted())));
        }
        for c in chunk.choices.iter().flat_map(Few::iter) {
            self.on_choice(turn, c, sink)?;
        }
        if let Some(u) = chunk.usage.filter(|u| !u.is_null()) {
            let usage = self.usage.insert(u);
            sink(&StreamEvent::Usage { usage });
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
            n => choice.calls[(n - SUB_CALLS) as usize].to_json(part),
        })
    }

    /// The folded `ChatCompletion`.
    fn message(&self, turn: &Turn) -> Value {
        if !self.started {
            return Value::Null;
        }
        let mut m = self.top.clone();
        m.insert("object".into(), "chat.completion".into());
        let mut order: Vec<&Choice> = self.choices.iter().collect();
        order.sort_by_key(|c| c.index);
        m.insert("choices".into(), Value::Array(order.iter().map(|c| c.to_json(&turn.parts)).collect()));
        m.insert("usage".into(), self.usage.clone().unwrap_or(Value::Null));
        Value::Object(m)
    }

    fn footprint(&self) -> usize {
        core::mem::size_of::<Self>()
            + self
                .choices
                .iter()
                .map(|c| core::mem::size_of::<Choice>() + c.calls.len() * core::mem::size_of::<Call>())
                .sum::<usize>()
    }

    fn on_turn_end(&mut self, _turn: &Turn, _sink: &mut Sink<'_>) -> Option<String> {
        self.choices.iter().find(|c| c.index == 0).and_then(|c| c.finish_reason.clone())
    }

    fn after_terminal(&self, _event: &Event<'_>) -> String {
        "chunk after [DONE]; ignored".to_owned()
    }

    fn is_restart(&self, _ty: &str, id: Option<&str>) -> bool {
        let current = self.top.get("id").and_then(Value::as_str);
        id.is_some() && current.is_some() && id != current
    }

    fn start_implicitly(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        self.start_if_idle(turn, None, sink);
    }
}

impl ChatFold {
    fn start_if_idle(&mut self, turn: &mut Turn, first: Option<&str>, sink: &mut Sink<'_>) {
        if !turn.begin() {
            return;
        }
        self.started = true;
        if let Some(Ok(RawObject(top))) = first.map(serde_json::from_str::<RawObject<'_>>) {
            for (k, v) in top {
                if !matches!(&*k, "choices" | "usage" | "error") {
                    if let Ok(v) = serde_json::from_str(v.get()) {
                        self.top.insert(k.into_owned(), v);
                    }
                }
            }
        }
        let snapshot = self.message(turn);
        sink(&StreamEvent::MessageStart { provider: "openai_chat", message: &snapshot });
    }

    fn choice_pos(&mut self, index: u32, turn: &Turn) -> Result<usize, StreamError> {
        if let Some(p) = self.choices.iter().position(|c| c.index == index) {
            return Ok(p);
        }
        if self.choices.len() >= turn.config.max_choices {
            return Err(StreamError::LimitExceeded { limit: "max_choices", max: turn.config.max_choices });
        }
        self.choices.push(Choice { index, ..Choice::default() });
        Ok(self.choices.len() - 1)
    }

    fn on_choice(&mut self, turn: &mut Turn, c: &ChoiceView<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let pos = self.choice_pos(c.index, turn)?;
        let at = pos as u32;
        let choice = &mut self.choices[pos];
        let ci = c.index;
        if let Some(d) = &c.delta {
            if let Some(role) = &d.role {
                if choice.role.as_deref() != Some(&**role) {
                    choice.role = Some(role.to_string());
                }
            }
            let reasoning = match (&d.reasoning_content, &d.reasoning) {
                (Some(r), _) => Some(("reasoning_content", r)),
                (None, Some(MaybeStr(Some(r)))) => Some(("reasoning", r)),
                _ => None,
            };
            if let Some((field, r)) = reasoning {
                let id = match choice.reasoning {
                    Some((_, id)) => id,
                    None => {
                        let id = turn.open_part(PartKind::Reasoning, (at, SUB_REASONING), ci, 0, field, sink)?;
                        choice.reasoning.insert((field, id)).1
                    }
                };
                append(turn, id, r, sink)?;
            }
            for (text, slot, kind, sub, name) in [
                (&d.content, &mut choice.text, PartKind::Text, SUB_TEXT, "content"),
                (&d.refusal, &mut choice.refusal, PartKind::Refusal, SUB_REFUSAL, "refusal"),
            ] {
                if let Some(text) = text {
                    let id = match *slot {
                        Some(id) => id,
                        None => *slot.insert(turn.open_part(kind, (at, sub), ci, 0, name, sink)?),
                    };
                    append(turn, id, text, sink)?;
                }
            }
            for (n, tc) in d.tool_calls.iter().flat_map(Few::iter).enumerate() {
                self.on_tool_call(turn, pos, n, tc, sink)?;
            }
        }
        let choice = &mut self.choices[pos];
        if let Some(Value::Object(lp)) = &c.logprobs {
            choice.logprobs_seen = true;
            for (key, slot) in [("content", &mut choice.logprobs_content), ("refusal", &mut choice.logprobs_refusal)] {
                if let Some(Value::Array(items)) = lp.get(key) {
                    slot.get_or_insert_with(Vec::new).extend(items.iter().cloned());
                }
            }
        }
        if let Some(reason) = &c.finish_reason {
            choice.finish_reason = Some(reason.to_string());
            let mut open: Vec<u32> = choice.open_parts(&turn.parts).collect();
            open.sort_unstable();
            for id in open {
                turn.commit(self, id, false, sink);
            }
            sink(&StreamEvent::StopReason { choice: ci, reason });
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
        let choice = &self.choices[pos];
        let id = tc.id.as_ref().filter(|s| !s.is_empty());
        let (name, args) = match &tc.function {
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
                    let complete = turn.parts[c.part as usize].args.as_ref().is_some_and(ToolArgs::is_complete_value);
                    (name.is_some() && !c.name.is_empty() || starts_value) && complete
                }
                (Some(_), None) => false,
            },
        };
        let n = if new_call {
            if let Some(p) = current {
                let part = self.choices[pos].calls[p].part;
                turn.commit(self, part, false, sink);
            }
            let choice = &mut self.choices[pos];
            let ty = tc.ty.as_deref().unwrap_or("function").to_owned();
            let sub = SUB_CALLS + choice.calls.len() as u32;
            let part =
                turn.open_part(PartKind::ToolCall, (pos as u32, sub), choice.index, u64::from(index), &ty, sink)?;
            choice.calls.push(Call { part, index, id: None, ty, name: String::new() });
            choice.calls.len() - 1
        } else {
            current.unwrap_or_default()
        };
        let call = &mut self.choices[pos].calls[n];
        let part = call.part;
        if !turn.parts[part as usize].is_open() {
            warn(sink, "part_already_ended", "tool call fragment after its choice finished; ignored");
            return Ok(());
        }
        if let Some(id) = id {
            if call.id.is_none() {
                call.id = Some(id.to_string());
                let v = Value::String(call.id.clone().unwrap_or_default());
                sink(&StreamEvent::PartMetadata { part, key: "id", value: &v });
            }
        }
        if let Some(name) = name {
            if call.name != **name {
                call.name.push_str(name);
                let v = Value::String(call.name.clone());
                sink(&StreamEvent::PartMetadata { part, key: "name", value: &v });
            }
        }
        if let Some(frag) = args {
            turn.push_args(part, frag, sink)?;
        }
        Ok(())
    }
}

fn append(turn: &mut Turn, id: u32, text: &JsonStr<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
    if !turn.parts[id as usize].is_open() {
        warn(sink, "part_already_ended", "text after the choice finished; ignored");
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
