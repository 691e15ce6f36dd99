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

// The fold, by concern: this file has the dialect (its events, turn and
// message); `view` the lenient chunk views serde_json builds; `quick` the
// fast path filling the same views from the exact bytes; `apply` a chunk's
// choices to parts and calls; `choice` a choice's state and its folded JSON;
// `kept` the members folded generically.
mod apply;
mod choice;
mod kept;
mod quick;
mod view;

use std::borrow::Cow;

use serde_json::Value;

use super::events::WarningCode;
use super::events::{PartKind, ProviderError, StreamEvent};
use super::turn::{Dialect, DialectInfo, Flow, Part, Turn, TurnState};
use super::{json_error, value_lenient, warn, warn_lone, without_lone_surrogates, Provider, Sink, StreamError};
use crate::json::scan::value_heap_bytes;
use crate::sse::Event;
use choice::{text_part_json, Choice, SUB_AUDIO, SUB_CALLS, SUB_FUNCTION, SUB_REASONING, SUB_REFUSAL, SUB_TEXT};
use kept::Kept;
use quick::quick_chunk;
use view::{ChunkView, Lenient, LenientList};

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

    /// [`message`](Self::message), the top-level members, the usage, the
    /// choices' members and the parts' texts and arguments moved into it.
    fn into_message(self: Box<Self>, turn: &mut Turn) -> Value {
        if !self.started {
            return Value::Null;
        }
        let ChatFold { top, mut choices, usage, .. } = *self;
        let mut m = top.map;
        m.insert("object".into(), "chat.completion".into());
        // Stable, as `message`'s sort of the references.
        choices.sort_by_key(|c| c.index);
        let choices = choices.into_iter().map(|c| c.into_json(&mut turn.parts)).collect();
        m.insert("choices".into(), Value::Array(choices));
        m.insert("usage".into(), usage.unwrap_or(Value::Null));
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
