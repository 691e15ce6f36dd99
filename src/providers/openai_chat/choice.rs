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
#[derive(Debug)]
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
    pub(super) fn function_json(&self, part: &Part) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert("name".into(), Value::String(self.name.clone()));
        let raw = part.args.as_deref().map_or("", ToolArgs::raw);
        f.insert("arguments".into(), Value::String(raw.to_owned()));
        for (k, v) in &self.fn_extra {
            f.insert(k.clone(), v.clone());
        }
        f
    }

    pub(super) fn to_json(&self, part: &Part) -> Value {
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
    pub(super) fn to_json(&self, parts: &[Part]) -> Value {
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
