//! A choice's state (its parts, tool calls, kept members) and the folded
//! `choices[]` entry and part contents built from it.

use serde_json::{Map, Value};

use super::kept::Kept;
use crate::json::scan::{map_heap_bytes, value_heap_bytes};
use crate::providers::args::ToolArgs;
use crate::providers::events::PartKind;
use crate::providers::turn::Part;

/// One tool call of a choice (its arguments and outcome live in the turn's
/// part).
#[derive(Debug, Clone)]
pub(super) struct Call {
    pub(super) part: u32,
    pub(super) index: u32,
    pub(super) id: Option<String>,
    pub(super) ty: String,
    pub(super) name: String,
    /// Members of the call not modelled (`extra_content`), merged.
    pub(super) extra: Map<String, Value>,
    /// Members of `function` not modelled, merged.
    pub(super) fn_extra: Map<String, Value>,
}

impl Call {
    /// Heap bytes held besides the part.
    pub(super) fn footprint(&self) -> usize {
        self.id.as_ref().map_or(0, String::capacity)
            + self.ty.capacity()
            + self.name.capacity()
            + map_heap_bytes(&self.extra)
            + map_heap_bytes(&self.fn_extra)
    }
}

impl Call {
    /// The call's `function` object, the fold going on (copied).
    pub(super) fn function_json(&self, part: &Part) -> Map<String, Value> {
        Self::function_of(self.name.clone(), args_raw(part).to_owned(), self.fn_extra.clone())
    }

    /// The call's `tool_calls[]` entry, the fold going on (copied).
    pub(super) fn to_json(&self, part: &Part) -> Value {
        self.clone().into_json(args_raw(part).to_owned())
    }

    /// The `tool_calls[]` entry, what the call holds moved into it, with
    /// its arguments' text `arguments`.
    fn into_json(self, arguments: String) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), self.id.map_or(Value::Null, Value::String));
        m.insert("type".into(), Value::String(self.ty));
        m.insert("function".into(), Value::Object(Self::function_of(self.name, arguments, self.fn_extra)));
        m.extend(self.extra);
        Value::Object(m)
    }

    /// `{"name", "arguments", …fn_extra}`.
    fn function_of(name: String, arguments: String, fn_extra: Map<String, Value>) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert("name".into(), Value::String(name));
        f.insert("arguments".into(), Value::String(arguments));
        f.extend(fn_extra);
        f
    }
}

/// A tool-call part's arguments as text (`""` before any came).
fn args_raw(part: &Part) -> &str {
    part.args.as_deref().map_or("", ToolArgs::raw)
}

/// What a folded JSON takes from a part: its text, or its arguments' text.
#[derive(Clone, Copy)]
enum Piece {
    Text,
    Args,
}

/// Where a part of a choice sits ([`Part::sub`]).
pub(super) const SUB_REASONING: u32 = 0;
pub(super) const SUB_TEXT: u32 = 1;
pub(super) const SUB_REFUSAL: u32 = 2;
/// The deprecated `function_call`.
pub(super) const SUB_FUNCTION: u32 = 3;
/// Tool call `n` of the choice is sub `SUB_CALLS + n`.
pub(super) const SUB_CALLS: u32 = 4;
/// The `audio` media part.
pub(super) const SUB_AUDIO: u32 = u32::MAX;

/// The reasoning field of content parts of type `thinking` (Mistral).
pub(super) const THINKING: &str = "thinking";

#[derive(Debug, Default)]
pub(super) struct Choice {
    pub(super) index: u32,
    pub(super) role: Option<String>,
    pub(super) text: Option<u32>,
    pub(super) refusal: Option<u32>,
    /// The `audio` media part.
    pub(super) audio: Option<u32>,
    pub(super) reasoning: Option<(&'static str, u32)>,
    pub(super) calls: Vec<Call>,
    /// The deprecated `function_call` (a call without id or type).
    pub(super) function_call: Option<Call>,
    pub(super) finish_reason: Option<String>,
    pub(super) logprobs_seen: bool,
    pub(super) logprobs_content: Option<Vec<Value>>,
    pub(super) logprobs_refusal: Option<Vec<Value>>,
    /// Choice-level members not modelled (`content_filter_results`, …).
    pub(super) kept: Kept,
    /// Delta members not modelled (`audio`, `annotations`, …), merged.
    pub(super) delta_extra: Map<String, Value>,
}

impl Choice {
    /// Heap bytes held besides the parts: every member kept.
    pub(super) fn footprint(&self) -> usize {
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
    /// The folded `choices[]` entry, the fold going on: what the choice
    /// and its parts hold is copied.
    pub(super) fn to_json(&self, parts: &[Part]) -> Value {
        let copy = Choice {
            index: self.index,
            role: self.role.clone(),
            text: self.text,
            refusal: self.refusal,
            audio: self.audio,
            reasoning: self.reasoning,
            calls: self.calls.clone(),
            function_call: self.function_call.clone(),
            finish_reason: self.finish_reason.clone(),
            logprobs_seen: self.logprobs_seen,
            logprobs_content: self.logprobs_content.clone(),
            logprobs_refusal: self.logprobs_refusal.clone(),
            // The raw texts are the fold's cache, not in the JSON.
            kept: Kept { map: self.kept.map.clone(), raw: Vec::new() },
            delta_extra: self.delta_extra.clone(),
        };
        copy.into_json_with(&mut |id, piece| match piece {
            Piece::Text => parts[id as usize].text.clone(),
            Piece::Args => args_raw(&parts[id as usize]).to_owned(),
        })
    }

    /// The folded `choices[]` entry, the fold done with: what the choice
    /// holds and its parts' texts and arguments are moved into it (the
    /// parts are left empty).
    pub(super) fn into_json(self, parts: &mut [Part]) -> Value {
        self.into_json_with(&mut |id, piece| {
            let part = &mut parts[id as usize];
            match piece {
                Piece::Text => core::mem::take(&mut part.text),
                Piece::Args => part.args.as_deref_mut().map_or_else(String::new, ToolArgs::take_raw),
            }
        })
    }

    /// The one shape of the entry: `piece` gives a part's text or
    /// arguments (each asked for once).
    fn into_json_with(self, piece: &mut dyn FnMut(u32, Piece) -> String) -> Value {
        let mut msg = Map::new();
        msg.insert("role".into(), Value::String(self.role.unwrap_or_else(|| "assistant".into())));
        let mut text = |t: Option<u32>| t.map_or(Value::Null, |t| Value::String(piece(t, Piece::Text)));
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
        if let Some(f) = self.function_call {
            let arguments = piece(f.part, Piece::Args);
            msg.insert("function_call".into(), Value::Object(Call::function_of(f.name, arguments, f.fn_extra)));
        }
        if !self.calls.is_empty() {
            let calls = self
                .calls
                .into_iter()
                .map(|c| {
                    let arguments = piece(c.part, Piece::Args);
                    c.into_json(arguments)
                })
                .collect();
            msg.insert("tool_calls".into(), Value::Array(calls));
        }
        msg.extend(self.delta_extra);
        let mut m = Map::new();
        m.insert("index".into(), self.index.into());
        m.insert("message".into(), Value::Object(msg));
        let logprobs = if self.logprobs_seen {
            let list = |l: Option<Vec<Value>>| l.map_or(Value::Null, Value::Array);
            let mut lp = Map::new();
            lp.insert("content".into(), list(self.logprobs_content));
            lp.insert("refusal".into(), list(self.logprobs_refusal));
            Value::Object(lp)
        } else {
            Value::Null
        };
        m.insert("logprobs".into(), logprobs);
        m.insert("finish_reason".into(), self.finish_reason.map_or(Value::Null, Value::String));
        for (k, v) in self.kept.map {
            // Kept members never replace what the fold models.
            if !m.contains_key(&k) {
                m.insert(k, v);
            }
        }
        Value::Object(m)
    }

    /// The part ids of the choice still open, in the order they opened.
    pub(super) fn open_parts(&self, parts: &[Part]) -> Vec<u32> {
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

pub(super) fn text_part_json(kind: PartKind, text: &str) -> Value {
    let mut m = Map::new();
    let key = match kind {
        PartKind::Refusal => "refusal",
        _ => "text",
    };
    m.insert("type".into(), kind.name().into());
    m.insert(key.into(), text.into());
    Value::Object(m)
}
