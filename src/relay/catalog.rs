//! The [`RelayFormat::Catalog`](super::RelayFormat::Catalog) format: the
//! named events of the CMS agent design's browser streaming (the table in
//! the README), each an SSE `event:` name and a JSON `data:` object with the
//! seed's members (extra members come besides them, never instead). The
//! answer streams as `text-delta`s, a tool call's arguments as
//! `tool-input-delta`s, a ready call is one `tool-call`, a step ends with
//! `step-completed` and the run with `finish` ([`FinishReason`]);
//! [`CATALOG_EVENT_NAMES`] lists every name written.

use serde_json::Value;

use super::dialect::{provider_executed_call, server_item, server_result, tool_input, ServerResult};
use super::frame::{self, begin_frame, end_frame, DeltaText, JsonObject};
use super::writer::{is_text, PartState, Writer};
use crate::providers::{PartKind, PartOutcome, StreamEvent};

/// The response headers of the catalog format.
pub(super) const HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("connection", "keep-alive"),
    ("x-accel-buffering", "no"),
];

/// Every event name the [`RelayFormat::Catalog`](super::RelayFormat::Catalog)
/// format writes: the seed's eight (`text-delta`, `tool-call`, `tool-result`, `approval-required`,
/// `step-completed`, `log`, `finish`, `error`) and the extras its frontend
/// ignores (`reasoning-delta`, `choice-delta` for the other choices of an
/// OpenAI `n > 1` request, `turn-reset` when the answer starts over,
/// `tool-input-delta` for a call's arguments as they stream). A
/// browser's `EventSource` hears a named event only through a listener for
/// that name: this is the list to register.
pub const CATALOG_EVENT_NAMES: &[&str] = &[
    "text-delta",
    "tool-call",
    "tool-result",
    "approval-required",
    "step-completed",
    "log",
    "finish",
    "error",
    "reasoning-delta",
    "choice-delta",
    "turn-reset",
    "tool-input-delta",
];

/// The catalog `error` code of a broken provider stream.
pub const STREAM_ERROR_CODE: &str = "stream_error";
/// The catalog `error` code of a tool call with invalid arguments
/// (recoverable: the model can be told and try again).
pub const INVALID_ARGUMENTS_CODE: &str = "invalid_tool_arguments";

/// The catalog `finish` event's `finishReason`: how the agent's run ended,
/// one of the seed's four.
///
/// From the provider's last stop reason, through
/// [`StopClass`](crate::providers::StopClass) ([`FinishReason::of`]):
///
/// | stop class | provider stop reasons (e.g.) | `finishReason` |
/// | --- | --- | --- |
/// | `Normal` | `end_turn`, `stop_sequence`, `pause_turn`, `stop`, `completed`, `STOP` | `stop` |
/// | `Refusal` | `refusal` (the model answered, declining) | `stop` |
/// | `ToolUse` | `tool_use`, `tool_calls`, `function_call`: the run ended while the model still called tools, i.e. the host's step limit | `max-steps` |
/// | `Length` | `max_tokens`, `length`, `max_output_tokens`, `MAX_TOKENS`, `model_context_window_exceeded`: the answer was cut | `error` |
/// | `ContentFilter` | `content_filter`, `SAFETY`, `guardrail_intervened`, …: the provider cut the answer | `error` |
/// | `Other` | `MALFORMED_FUNCTION_CALL`, `OTHER`, Responses `incomplete`, any unknown reason | `error` |
/// | `Aborted` | `aborted` (the host aborted the turn) | `cancelled` |
/// | — | no stop reason (a host-only relay, a cut stream) | `stop` |
///
/// A relayed error that is not recoverable (a provider error, a broken
/// stream, [`Relay::error`](super::Relay::error) with `recoverable: false`) makes it `error`,
/// unless the turn was aborted (`cancelled`). The provider's own reason is
/// in the event's `stopReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FinishReason {
    /// The model ended its answer.
    Stop,
    /// The host stopped the run while the model still called tools.
    MaxSteps,
    /// The run failed, or its answer was cut short.
    Error,
    /// The host aborted the run.
    Cancelled,
}

impl FinishReason {
    /// The wire name: `stop`, `max-steps`, `error`, `cancelled`.
    pub fn name(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::MaxSteps => "max-steps",
            FinishReason::Error => "error",
            FinishReason::Cancelled => "cancelled",
        }
    }

    /// The finish reason of a run whose last provider stop reason is
    /// `stop_reason` (`""`: none) and which relayed a fatal error or not
    /// (`failed`); the map in the type's docs.
    pub fn of(stop_reason: &str, failed: bool) -> FinishReason {
        use crate::providers::StopClass;
        if stop_reason.is_empty() {
            return if failed { FinishReason::Error } else { FinishReason::Stop };
        }
        match StopClass::of(stop_reason) {
            StopClass::Aborted => FinishReason::Cancelled,
            _ if failed => FinishReason::Error,
            StopClass::Normal | StopClass::Refusal => FinishReason::Stop,
            StopClass::ToolUse => FinishReason::MaxSteps,
            StopClass::Length | StopClass::ContentFilter | StopClass::Other => FinishReason::Error,
        }
    }
}

/// Token counts in the seed's shape (`promptTokens`, `completionTokens`,
/// `totalTokens`); 0 for what the provider did not report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Tokens {
    pub(super) prompt: u64,
    pub(super) completion: u64,
    pub(super) total: u64,
}

impl Tokens {
    /// The counts of a usage object of any dialect (Anthropic, Responses,
    /// Chat, Gemini, Ollama, Converse): the provider's total when it states
    /// one (`total_tokens`, `totalTokens`, `totalTokenCount`), else the sum.
    pub(super) fn of(usage: &Value) -> Tokens {
        let (prompt, completion) = crate::agent::usage_tokens(usage);
        let (prompt, completion) = (prompt.unwrap_or(0), completion.unwrap_or(0));
        let stated = ["total_tokens", "totalTokens", "totalTokenCount"]
            .into_iter()
            .find_map(|k| usage.get(k).and_then(Value::as_u64));
        Tokens { prompt, completion, total: stated.unwrap_or(prompt + completion) }
    }

    pub(super) fn add(&mut self, other: Tokens) {
        self.prompt += other.prompt;
        self.completion += other.completion;
        self.total += other.total;
    }

    pub(super) fn write(&self, o: &mut JsonObject<'_>) {
        o.value("promptTokens", &self.prompt)
            .value("completionTokens", &self.completion)
            .value("totalTokens", &self.total);
    }
}

/// The `message` of an `approval-required` event the host gave none:
/// `Allow NAME to run?`.
pub fn default_approval_message(name: &str) -> String {
    format!("Allow {name} to run?")
}

impl Writer {
    /// A frame of the catalog format: event `name`, data written by `fill`.
    pub(super) fn catalog(&mut self, name: &str, fill: impl FnOnce(&mut JsonObject<'_>)) {
        self.last_id += 1;
        let buf = self.replay.frame(self.last_id);
        begin_frame(buf, self.last_id, Some(name));
        let mut o = JsonObject::new(buf);
        fill(&mut o);
        o.end();
        end_frame(buf);
        self.active = true;
    }

    /// Writes the catalog's frames of one stream event (`escaped`: see
    /// [`Writer::write_event`]).
    pub(super) fn catalog_event(&mut self, event: &StreamEvent<'_>, escaped: Option<&str>) {
        match *event {
            StreamEvent::MessageStart { .. } => self.begin_turn(),
            StreamEvent::PartStart { part, kind, provider_type, choice, .. } => {
                *self.part(part) = PartState {
                    kind: Some(kind),
                    provider_executed: kind == PartKind::ToolCall && provider_executed_call(provider_type),
                    choice,
                    ..PartState::default()
                };
            }
            StreamEvent::TextDelta { part, text } => {
                let Some(state) = self.parts.get(part as usize).filter(|p| p.kind.is_some_and(is_text)) else {
                    return;
                };
                let choice = state.choice;
                if choice > 0 {
                    // Another choice (OpenAI `n > 1`) is not the answer.
                    let kind = state.kind.map_or("text", PartKind::name);
                    self.catalog("choice-delta", |o| {
                        o.str("delta", text).value("choice", &choice).str("kind", kind);
                    });
                    return;
                }
                // The answer's text (a refusal is one) is `text-delta`;
                // reasoning goes apart, as an event the seed's UI ignores.
                let event = if state.kind == Some(PartKind::Reasoning) { "reasoning-delta" } else { "text-delta" };
                self.last_id += 1;
                let text = DeltaText::new(text, escaped);
                frame::catalog_delta_frame(self.replay.frame(self.last_id), self.last_id, event, text);
                self.active = true;
            }
            StreamEvent::PartMetadata { part, key, value } if self.note_call(part, key, value) => {
                self.catalog_open_call(part);
            }
            StreamEvent::ToolArgsDelta { part, json } => {
                let state = self.part(part);
                if state.kind != Some(PartKind::ToolCall) {
                    return;
                }
                state.args.push_str(json);
                if state.opened {
                    let call_id = &self.parts[part as usize].call_id_json;
                    self.last_id += 1;
                    let json = DeltaText::new(json, escaped);
                    frame::catalog_args_delta_frame(self.replay.frame(self.last_id), self.last_id, call_id, json);
                    self.active = true;
                }
            }
            StreamEvent::PartEnd { part, kind: PartKind::ToolCall, outcome, content, tool_call } => {
                self.adopt_call_id(part, tool_call.as_ref());
                let state = std::mem::take(self.part(part));
                let call_id = state.call_id.unwrap_or_else(|| format!("call-{part}"));
                let name = state.name.unwrap_or_default();
                match outcome {
                    PartOutcome::Complete => {
                        let input = tool_input(tool_call.as_ref(), content, &state.args);
                        self.catalog("tool-call", |o| {
                            o.str("id", &call_id).str("name", &name);
                            input.write(o, "args");
                            if state.provider_executed {
                                o.value("providerExecuted", &true);
                            }
                        });
                        self.remember_call(&call_id, &name);
                        if let Some(result) = server_result(content).filter(|_| state.provider_executed) {
                            self.catalog_server_result(&call_id, &result);
                        }
                    }
                    PartOutcome::InvalidArguments { error, .. } => {
                        let message = format!("tool call {name} ({call_id}): invalid arguments: {error}");
                        self.error_frame(&message, Some(INVALID_ARGUMENTS_CODE), true);
                    }
                    PartOutcome::Incomplete => {}
                }
            }
            StreamEvent::PartEnd { kind: PartKind::Other, content, .. } => {
                if let Some(call) = server_item(content) {
                    self.catalog("tool-call", |o| {
                        o.str("id", call.id).str("name", call.name).value("args", &call.input);
                        o.value("providerExecuted", &true);
                    });
                    self.remember_call(call.id, call.name);
                    let result = ServerResult { call_id: call.id, output: content, error: call.error };
                    self.catalog_server_result(call.id, &result);
                } else if let Some(result) = server_result(content) {
                    self.catalog_server_result(result.call_id, &result);
                }
            }
            StreamEvent::StopReason { choice: 0, reason } => {
                self.stop_reason.clear();
                self.stop_reason.push_str(reason);
            }
            StreamEvent::Usage { usage } => self.set_usage(usage),
            StreamEvent::TurnEnd { stop_reason } => self.end_turn(stop_reason),
            StreamEvent::TurnReset => {
                // The answer starts over (a reconnection that restarts the
                // stream): `turn-reset` for a UI that drops what the
                // attempt showed, and an empty answer as the seed's
                // `snapshot` (the full text so far) for one that honours it.
                self.catalog("turn-reset", |_| {});
                self.catalog("text-delta", |o| {
                    o.str("delta", "").str("snapshot", "");
                });
            }
            StreamEvent::Error { error } => {
                let (message, error_type) = (error.message.clone(), error.error_type.clone());
                let code = (!error_type.is_empty()).then_some(error_type.as_str());
                self.error_frame(&message, code, false);
            }
            _ => {}
        }
    }

    /// The first `tool-input-delta` of a call (its `name`, and the argument
    /// text held so far) once its id and name are known: a page shows the
    /// call and its arguments filling in before the ready `tool-call`.
    fn catalog_open_call(&mut self, part: u32) {
        let state = self.part(part);
        let known = state.call_id.is_some() && state.name.is_some();
        if state.kind != Some(PartKind::ToolCall) || state.opened || !known {
            return;
        }
        let (id, name) = (state.call_id.take().unwrap_or_default(), state.name.take().unwrap_or_default());
        state.opened = true;
        state.call_id_json.clear();
        frame::write_json_str(&mut state.call_id_json, &id);
        let held = std::mem::take(&mut state.args);
        self.catalog("tool-input-delta", |o| {
            o.str("id", &id).str("name", &name).str("delta", &held);
        });
        let state = self.part(part);
        (state.call_id, state.name, state.args) = (Some(id), Some(name), held);
    }

    /// `tool-result` of a tool the provider ran (no duration: the
    /// provider does not say).
    fn catalog_server_result(&mut self, call_id: &str, result: &ServerResult<'_>) {
        let output = match &result.error {
            Some(error) => Value::String(error.clone()),
            None => result.output.clone(),
        };
        let name = self.take_call_name(call_id);
        self.catalog("tool-result", |o| {
            o.str("id", call_id).str("name", &name).value("result", &output);
            if result.error.is_some() {
                o.value("isError", &true);
            }
            o.value("providerExecuted", &true);
        });
    }

    /// Notes a call shown to the catalog UI, for its result's `name`.
    fn remember_call(&mut self, call_id: &str, name: &str) {
        if !self.call_names.iter().any(|(id, _)| id == call_id) {
            self.call_names.push((call_id.to_owned(), name.to_owned()));
        }
    }

    /// The name of a call shown, forgotten now that its result is relayed
    /// (`""` for a call never shown).
    fn take_call_name(&mut self, call_id: &str) -> String {
        match self.call_names.iter().position(|(id, _)| id == call_id) {
            Some(i) => self.call_names.swap_remove(i).1,
            None => String::new(),
        }
    }

    /// A host's tool result: `tool-result` `{id, name, result, duration?}`
    /// (`isError: true` for a failed tool), `name` the one of the call
    /// shown with that id.
    pub(super) fn catalog_tool_result(
        &mut self,
        call_id: &str,
        output: &Value,
        is_error: bool,
        duration_ms: Option<u64>,
    ) {
        let name = self.take_call_name(call_id);
        self.catalog("tool-result", |o| {
            o.str("id", call_id).str("name", &name).value("result", output);
            if let Some(duration) = duration_ms {
                o.value("duration", &duration);
            }
            if is_error {
                o.value("isError", &true);
            }
        });
    }

    /// `approval-required` `{approvalId, toolName, input, message}` (and
    /// `toolCallId`); `message` [`default_approval_message`] when `None`.
    pub(super) fn catalog_approval_required(
        &mut self,
        approval_id: &str,
        call_id: &str,
        name: &str,
        input: &Value,
        message: Option<&str>,
    ) {
        self.remember_call(call_id, name);
        let default;
        let message = match message {
            Some(message) => message,
            None => {
                default = default_approval_message(name);
                &default
            }
        };
        self.catalog("approval-required", |o| {
            o.str("approvalId", approval_id).str("toolName", name).value("input", input);
            o.str("message", message).str("toolCallId", call_id);
        });
    }

    /// The end of the run, its step closed: `finish` `{finishReason,
    /// usage, stepCount}` (and `stopReason` when there was one), `usage`
    /// the host's (`usage`) or else the sum over the steps.
    pub(super) fn catalog_finish(&mut self, steps: u32, stop_reason: &str, usage: Option<&Value>) {
        let tokens = match usage {
            Some(usage) => Tokens::of(usage),
            None => self.total_tokens,
        };
        let reason = FinishReason::of(stop_reason, self.failed);
        self.catalog("finish", |o| {
            o.constant("finishReason", reason.name());
            o.object("usage", |u| tokens.write(u));
            o.value("stepCount", &steps);
            if !stop_reason.is_empty() {
                o.str("stopReason", stop_reason);
            }
        });
    }
}
