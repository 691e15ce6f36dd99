//! A chunk's choices applied to the fold: deltas to parts (text, refusal,
//! reasoning, content parts, audio), tool-call fragments to calls, and the
//! `finish_reason` that commits them.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::choice::{Call, Choice, SUB_AUDIO, SUB_CALLS, SUB_FUNCTION, SUB_REASONING, SUB_REFUSAL, SUB_TEXT, THINKING};
use super::kept::{merge, merge_members};
use super::view::{
    clip, ChoiceView, ContentPartView, ContentView, DeltaView, FunctionView, Lenient, LenientList, ToolCallView,
    MODELED_CHOICE_MEMBERS,
};
use super::ChatFold;
use crate::providers::args::ToolArgs;
use crate::providers::events::WarningCode;
use crate::providers::events::{PartKind, StreamEvent, ToolInputFormat};
use crate::providers::media;
use crate::providers::turn::{CallInit, Dialect, Outcome, Turn};
use crate::providers::view::{JsonStr, JsonText};
use crate::providers::StreamLimit;
use crate::providers::{check_lone, value_lenient, warn, Sink, StreamError};

impl ChatFold {
    /// Warns `part_not_ended` for each choice with parts still open at the
    /// end of the turn (`at`; they are committed as incomplete).
    pub(super) fn warn_open_parts(&self, turn: &Turn, at: &str, sink: &mut Sink<'_>) {
        for choice in &self.choices {
            if !choice.open_parts(&turn.parts).is_empty() {
                let msg =
                    format!("choice {} has open parts {at} (no finish_reason); committed as incomplete", choice.index);
                warn(sink, WarningCode::PartNotEnded, &msg);
            }
        }
    }

    pub(super) fn start_if_idle(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        if !turn.begin() {
            return;
        }
        self.started = true;
        let snapshot = self.message(turn);
        sink.event(&StreamEvent::MessageStart { provider: "openai_chat", message: &snapshot });
    }

    pub(super) fn choice_pos(&mut self, index: u32, turn: &Turn) -> Result<usize, StreamError> {
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
    pub(super) fn commit(&mut self, turn: &mut Turn, id: u32, sink: &mut Sink<'_>) {
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

    pub(super) fn on_choice(
        &mut self,
        turn: &mut Turn,
        c: &ChoiceView<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
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

    pub(super) fn on_delta(
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
    pub(super) fn on_audio(
        &mut self,
        turn: &mut Turn,
        pos: usize,
        audio: &Value,
        sink: &mut Sink<'_>,
    ) -> Result<(), StreamError> {
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
            crate::providers::append_str(turn, id, t, sink)?;
        }
        Ok(())
    }

    pub(super) fn reasoning_part(
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

    pub(super) fn text_part(&mut self, turn: &mut Turn, pos: usize, sink: &mut Sink<'_>) -> Result<u32, StreamError> {
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
    pub(super) fn on_content_parts(
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
    pub(super) fn on_function_call(
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

    pub(super) fn on_tool_call(
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

pub(super) fn append(turn: &mut Turn, id: u32, text: &JsonStr<'_>, sink: &mut Sink<'_>) -> Result<(), StreamError> {
    check_lone(sink, "delta", text);
    if !turn.parts[id as usize].is_open() {
        warn(sink, WarningCode::PartAlreadyEnded, "text after the choice finished; ignored");
        return Ok(());
    }
    turn.append_text(id, text, sink)
}
