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

use serde::Deserialize;
use serde_json::{Map, Value};

use super::args::{ArgsEnd, PushError, ToolArgs};
use super::events::{PartKind, PartOutcome, ProviderError, StreamEvent};
use super::view::{Few, JsonStr, JsonText, MaybeStr, RawObject, Str};
use super::FoldState as State;
use super::{json_error, warn, Shared, Sink, StreamError};
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

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Open,
    Complete,
    Invalid(String),
    Incomplete,
}

#[derive(Debug)]
struct TextPart {
    part: u32,
    text: String,
    outcome: Outcome,
}

#[derive(Debug)]
struct Call {
    part: u32,
    index: u32,
    id: Option<String>,
    ty: String,
    name: String,
    args: ToolArgs,
    outcome: Outcome,
}

impl Call {
    fn to_json(&self) -> Value {
        let mut f = Map::new();
        f.insert("name".into(), Value::String(self.name.clone()));
        f.insert("arguments".into(), Value::String(self.args.raw().to_owned()));
        let mut m = Map::new();
        m.insert("id".into(), self.id.clone().map_or(Value::Null, Value::String));
        m.insert("type".into(), Value::String(self.ty.clone()));
        m.insert("function".into(), Value::Object(f));
        Value::Object(m)
    }
}

#[derive(Debug, Default)]
struct Choice {
    index: u32,
    role: Option<String>,
    text: Option<TextPart>,
    refusal: Option<TextPart>,
    reasoning: Option<(&'static str, TextPart)>,
    calls: Vec<Call>,
    finish_reason: Option<String>,
    logprobs_seen: bool,
    logprobs_content: Option<Vec<Value>>,
    logprobs_refusal: Option<Vec<Value>>,
}

impl Choice {
    fn to_json(&self) -> Value {
        let mut msg = Map::new();
        msg.insert("role".into(), self.role.as_deref().unwrap_or("assistant").into());
        let text = |t: &Option<TextPart>| t.as_ref().map_or(Value::Null, |t| Value::String(t.text.clone()));
        msg.insert("content".into(), text(&self.text));
        msg.insert("refusal".into(), text(&self.refusal));
        if let Some((field, r)) = &self.reasoning {
            msg.insert((*field).into(), Value::String(r.text.clone()));
        }
        if !self.calls.is_empty() {
            msg.insert("tool_calls".into(), Value::Array(self.calls.iter().map(Call::to_json).collect()));
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
}

/// The OpenAI Chat Completions fold.
#[derive(Debug, Default)]
pub(crate) struct ChatFold {
    state: State,
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

impl ChatFold {
    pub(crate) fn is_terminated(&self) -> bool {
        matches!(self.state, State::Done | State::Errored)
    }

    pub(crate) fn footprint(&self) -> usize {
        let t = |p: &Option<TextPart>| p.as_ref().map_or(0, |p| p.text.capacity());
        core::mem::size_of::<Self>()
            + self
                .choices
                .iter()
                .map(|c| {
                    core::mem::size_of::<Choice>()
                        + t(&c.text)
                        + t(&c.refusal)
                        + c.reasoning.as_ref().map_or(0, |r| r.1.text.capacity())
                        + c.calls.iter().map(|k| core::mem::size_of::<Call>() + k.args.capacity()).sum::<usize>()
                })
                .sum::<usize>()
    }

    /// The completion's `id`, once a chunk carried one.
    pub(crate) fn completion_id(&self) -> Option<String> {
        self.top.get("id").and_then(Value::as_str).map(str::to_owned)
    }

    /// The folded `ChatCompletion`.
    pub(crate) fn message(&self) -> Value {
        if self.state == State::Idle {
            return Value::Null;
        }
        let mut m = self.top.clone();
        m.insert("object".into(), "chat.completion".into());
        let mut order: Vec<&Choice> = self.choices.iter().collect();
        order.sort_by_key(|c| c.index);
        m.insert("choices".into(), Value::Array(order.iter().map(|c| c.to_json()).collect()));
        m.insert("usage".into(), self.usage.clone().unwrap_or(Value::Null));
        Value::Object(m)
    }

    pub(crate) fn on_event(
        &mut self,
        event: &Event<'_>,
        shared: &mut Shared,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
        let data = event.data();
        if self.is_terminated() {
            warn(sink, "data_after_terminal", "chunk after [DONE]; ignored");
            return Ok(());
        }
        if data == "[DONE]" {
            self.start_if_idle(None, sink);
            self.close_all(true, sink);
            self.state = State::Done;
            let reason = self.choices.iter().find(|c| c.index == 0).and_then(|c| c.finish_reason.as_deref());
            sink(&StreamEvent::TurnEnd { stop_reason: reason });
            return Ok(());
        }
        let chunk: Chunk<'_> = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() {
                    warn(sink, "invalid_event", &format!("chunk of unexpected shape ({e}); ignored"));
                    return Ok(());
                }
                return Err(json_error(event, e));
            }
        };
        if self.state == State::Idle {
            self.start_if_idle(Some(data), sink);
        }
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            let pe = provider_error(&err, shared.output_emitted());
            self.close_all(false, sink);
            self.state = State::Errored;
            sink(&StreamEvent::Error { error: &pe });
            return Err(StreamError::Provider(pe));
        }
        for c in chunk.choices.iter().flat_map(Few::iter) {
            self.on_choice(c, shared, sink)?;
        }
        if let Some(u) = chunk.usage.filter(|u| !u.is_null()) {
            let usage = self.usage.insert(u);
            sink(&StreamEvent::Usage { usage });
        }
        Ok(())
    }

    fn start_if_idle(&mut self, first: Option<&str>, sink: &mut Sink<'_>) {
        if self.state != State::Idle {
            return;
        }
        self.state = State::Streaming;
        if let Some(Ok(RawObject(top))) = first.map(serde_json::from_str::<RawObject<'_>>) {
            for (k, v) in top {
                if !matches!(&*k, "choices" | "usage" | "error") {
                    if let Ok(v) = serde_json::from_str(v.get()) {
                        self.top.insert(k.into_owned(), v);
                    }
                }
            }
        }
        let snapshot = self.message();
        sink(&StreamEvent::MessageStart { provider: "openai_chat", message: &snapshot });
    }

    fn choice_pos(&mut self, index: u32, shared: &Shared) -> Result<usize, StreamError> {
        if let Some(p) = self.choices.iter().position(|c| c.index == index) {
            return Ok(p);
        }
        if self.choices.len() >= shared.config.max_choices {
            return Err(StreamError::LimitExceeded { limit: "max_choices", max: shared.config.max_choices });
        }
        self.choices.push(Choice { index, ..Choice::default() });
        Ok(self.choices.len() - 1)
    }

    fn on_choice(&mut self, c: &ChoiceView<'_>, shared: &mut Shared, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        let pos = self.choice_pos(c.index, shared)?;
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
                let slot = match &mut choice.reasoning {
                    Some((_, p)) => p,
                    None => {
                        let part = open_part(shared, PartKind::Reasoning, ci, field, sink)?;
                        &mut choice.reasoning.insert((field, part)).1
                    }
                };
                append(slot, r, shared, sink)?;
            }
            if let Some(text) = &d.content {
                let slot = match &mut choice.text {
                    Some(p) => p,
                    None => choice.text.insert(open_part(shared, PartKind::Text, ci, "content", sink)?),
                };
                append(slot, text, shared, sink)?;
            }
            if let Some(text) = &d.refusal {
                let slot = match &mut choice.refusal {
                    Some(p) => p,
                    None => choice.refusal.insert(open_part(shared, PartKind::Refusal, ci, "refusal", sink)?),
                };
                append(slot, text, shared, sink)?;
            }
            for (n, tc) in d.tool_calls.iter().flat_map(Few::iter).enumerate() {
                Self::on_tool_call(choice, n, tc, shared, sink)?;
            }
        }
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
            Self::close_choice(choice, false, sink);
            sink(&StreamEvent::StopReason { choice: ci, reason });
        }
        Ok(())
    }

    fn on_tool_call(
        choice: &mut Choice,
        position: usize,
        tc: &ToolCallView<'_>,
        shared: &mut Shared,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
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
                    (name.is_some() && !c.name.is_empty() || starts_value) && c.args.is_complete_value()
                }
                (Some(_), None) => false,
            },
        };
        let pos = if new_call {
            if let Some(p) = current {
                Self::commit_call(&mut choice.calls[p], false, sink);
            }
            let part = shared.new_part()?;
            let ty = tc.ty.as_deref().unwrap_or("function").to_owned();
            sink(&StreamEvent::PartStart {
                part,
                kind: PartKind::ToolCall,
                choice: choice.index,
                index: u64::from(index),
                provider_type: &ty,
            });
            choice.calls.push(Call {
                part,
                index,
                id: None,
                ty,
                name: String::new(),
                args: ToolArgs::new(),
                outcome: Outcome::Open,
            });
            choice.calls.len() - 1
        } else {
            current.unwrap_or_default()
        };
        let call = &mut choice.calls[pos];
        if call.outcome != Outcome::Open {
            warn(sink, "part_already_ended", "tool call fragment after its choice finished; ignored");
            return Ok(());
        }
        if let Some(id) = id {
            if call.id.is_none() {
                call.id = Some(id.to_string());
                let v = Value::String(call.id.clone().unwrap_or_default());
                sink(&StreamEvent::PartMetadata { part: call.part, key: "id", value: &v });
            }
        }
        if let Some(name) = name {
            if call.name != **name {
                call.name.push_str(name);
                let v = Value::String(call.name.clone());
                sink(&StreamEvent::PartMetadata { part: call.part, key: "name", value: &v });
            }
        }
        if let Some(frag) = args {
            let max = shared.config.max_tool_args_bytes;
            call.args.push(frag, call.part, max, sink).map_err(|PushError::TooLarge| shared.args_limit())?;
        }
        Ok(())
    }

    fn commit_call(call: &mut Call, cut: bool, sink: &mut Sink<'_>) {
        if call.outcome != Outcome::Open {
            return;
        }
        call.outcome = match call.args.finish() {
            _ if cut => Outcome::Incomplete,
            ArgsEnd::Empty | ArgsEnd::Valid => Outcome::Complete,
            ArgsEnd::Invalid(e) => Outcome::Invalid(e),
        };
        let content = call.to_json();
        let outcome = match &call.outcome {
            Outcome::Invalid(e) => PartOutcome::InvalidArguments { error: e, raw: call.args.raw() },
            Outcome::Incomplete => PartOutcome::Incomplete,
            _ => PartOutcome::Complete,
        };
        sink(&StreamEvent::PartEnd { part: call.part, kind: PartKind::ToolCall, outcome, content: &content });
    }

    /// Commits every open part of a choice, in part order.
    fn close_choice(choice: &mut Choice, cut: bool, sink: &mut Sink<'_>) {
        enum Slot {
            Reasoning,
            Text,
            Refusal,
            Call(usize),
        }
        let mut open: Vec<(u32, Slot)> = Vec::new();
        let is_open = |p: &TextPart| p.outcome == Outcome::Open;
        if let Some((_, p)) = choice.reasoning.as_ref().filter(|r| is_open(&r.1)) {
            open.push((p.part, Slot::Reasoning));
        }
        if let Some(p) = choice.text.as_ref().filter(|p| is_open(p)) {
            open.push((p.part, Slot::Text));
        }
        if let Some(p) = choice.refusal.as_ref().filter(|p| is_open(p)) {
            open.push((p.part, Slot::Refusal));
        }
        for (i, c) in choice.calls.iter().enumerate().filter(|(_, c)| c.outcome == Outcome::Open) {
            open.push((c.part, Slot::Call(i)));
        }
        open.sort_by_key(|(p, _)| *p);
        for (_, slot) in open {
            let (kind, p) = match slot {
                Slot::Call(i) => {
                    Self::commit_call(&mut choice.calls[i], cut, sink);
                    continue;
                }
                Slot::Reasoning => (PartKind::Reasoning, choice.reasoning.as_mut().map(|r| &mut r.1)),
                Slot::Text => (PartKind::Text, choice.text.as_mut()),
                Slot::Refusal => (PartKind::Refusal, choice.refusal.as_mut()),
            };
            if let Some(p) = p {
                p.outcome = if cut { Outcome::Incomplete } else { Outcome::Complete };
                let content = text_part_json(kind, &p.text);
                let outcome = if cut { PartOutcome::Incomplete } else { PartOutcome::Complete };
                sink(&StreamEvent::PartEnd { part: p.part, kind, outcome, content: &content });
            }
        }
    }

    /// Commits every open part: `warn` when the terminal event found them open.
    fn close_all(&mut self, warn_open: bool, sink: &mut Sink<'_>) {
        for choice in &mut self.choices {
            let any_open = choice.text.as_ref().is_some_and(|p| p.outcome == Outcome::Open)
                || choice.refusal.as_ref().is_some_and(|p| p.outcome == Outcome::Open)
                || choice.reasoning.as_ref().is_some_and(|p| p.1.outcome == Outcome::Open)
                || choice.calls.iter().any(|c| c.outcome == Outcome::Open);
            if any_open && warn_open {
                let msg = format!(
                    "choice {} has open parts at [DONE] (no finish_reason); committed as incomplete",
                    choice.index
                );
                warn(sink, "part_not_ended", &msg);
            }
            Self::close_choice(choice, true, sink);
        }
    }

    /// Ends the turn on a provider error reported outside the JSON chunks.
    pub(crate) fn fail(&mut self, sink: &mut Sink<'_>) {
        self.start_if_idle(None, sink);
        self.close_all(false, sink);
        self.state = State::Errored;
    }

    pub(crate) fn finish(&mut self, sink: &mut Sink<'_>) -> Result<(), StreamError> {
        if self.is_terminated() {
            return Ok(());
        }
        self.close_all(false, sink);
        Err(StreamError::Incomplete { expected: "[DONE]" })
    }
}

fn open_part(
    shared: &mut Shared,
    kind: PartKind,
    choice: u32,
    provider_type: &str,
    sink: &mut Sink<'_>,
) -> Result<TextPart, StreamError> {
    let part = shared.new_part()?;
    sink(&StreamEvent::PartStart { part, kind, choice, index: 0, provider_type });
    Ok(TextPart { part, text: String::new(), outcome: Outcome::Open })
}

fn append(p: &mut TextPart, text: &JsonStr<'_>, shared: &Shared, sink: &mut Sink<'_>) -> Result<(), StreamError> {
    if p.outcome != Outcome::Open {
        warn(sink, "part_already_ended", "text after the choice finished; ignored");
        return Ok(());
    }
    if text.is_empty() {
        return Ok(());
    }
    let text = shared.append_text(&mut p.text, text)?;
    sink(&StreamEvent::TextDelta { part: p.part, text });
    Ok(())
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
