//! The relay's state ([`Writer`]: everything but the provider stream) and
//! what both formats share: the run's steps and turns, the parts seen so
//! far, the usage, errors, and the dispatch of each stream event to the
//! format written ([`ai_sdk`](super::ai_sdk), [`catalog`](super::catalog)).

use serde_json::Value;

use super::ai_sdk::UiIdText;
use super::catalog::Tokens;
use super::replay::ReplayBuffer;
use super::{RelayConfig, RelayError, RelayFormat};
use crate::providers::{EventSink, PartKind, StreamEvent, ToolCall};

/// What a relayed part is.
#[derive(Debug, Clone, Default)]
pub(super) struct PartState {
    pub(super) kind: Option<PartKind>,
    pub(super) call_id: Option<String>,
    pub(super) name: Option<String>,
    /// The `*-start` chunk was written.
    pub(super) opened: bool,
    /// A tool call's argument text received so far: held back (ai-sdk)
    /// until the call's id and name are known, and its input once it is
    /// ready (copied, not re-encoded from the folded value, when it is one
    /// line without `\u` escapes).
    pub(super) args: String,
    /// A text part's UI id, written once at its start.
    pub(super) ui_id: UiIdText,
    /// An open tool call's id as a JSON string, escaped once for all its
    /// argument deltas.
    pub(super) call_id_json: Vec<u8>,
    /// A tool the provider runs itself (Anthropic `server_tool_use`,
    /// `mcp_tool_use`; Responses `mcp_call`): its result comes in the
    /// stream, not from the host.
    pub(super) provider_executed: bool,
    /// The choice (OpenAI `n > 1`) the part answers; the catalog's answer
    /// is choice 0.
    pub(super) choice: u32,
    /// A media part's bytes so far (its `file` chunk at its end), and
    /// their MIME type.
    pub(super) media: Vec<u8>,
    pub(super) mime_type: String,
    /// A Responses partial image: a preview the final image replaces (no
    /// `file` chunk; the final image is the call's).
    pub(super) preview: bool,
    /// A tool call whose input is free text (`inputEncoding: "text"`).
    pub(super) text_input: bool,
}

/// Everything but the stream (so that the stream can call into it).
#[derive(Debug)]
pub(super) struct Writer {
    pub(super) config: RelayConfig,
    /// The frames kept for replay, then the current call's output.
    pub(super) replay: ReplayBuffer,
    /// The id of the last event written (0: none yet).
    pub(super) last_id: u64,
    pub(super) parts: Vec<PartState>,
    /// Parts are numbered below this (what `parts` may grow to).
    pub(super) max_parts: usize,
    /// Provider-executed calls shown to the UI whose result block has not
    /// come yet (Anthropic: the result is a later block of the message).
    pub(super) server_calls: Vec<String>,
    pub(super) started: bool,
    pub(super) step_open: bool,
    pub(super) steps: u32,
    /// The provider's stop reason (reused: no allocation per turn).
    pub(super) stop_reason: String,
    /// The usage as JSON text (reused; empty: none yet).
    pub(super) usage: Vec<u8>,
    pub(super) finished: bool,
    /// The provider turn of the open step has ended.
    pub(super) turn_ended: bool,
    /// Output was written since the last keep-alive check.
    pub(super) active: bool,
    pub(super) last_activity_ms: Option<u64>,
    /// Calls shown to the catalog UI (`tool-call`, `approval-required`)
    /// whose result has not been relayed: (id, name), for the result's
    /// `name`.
    pub(super) call_names: Vec<(String, String)>,
    /// The open step's token counts (from its last usage).
    pub(super) step_tokens: Tokens,
    /// The counts of the closed steps, summed.
    pub(super) total_tokens: Tokens,
    /// An error that ends the run (not recoverable) was relayed.
    pub(super) failed: bool,
    /// Argument text held back ([`RelayConfig::tool_input_coalesce_bytes`]):
    /// the part it belongs to, its call id as a JSON string, the text.
    pub(super) held_part: Option<u32>,
    pub(super) held_call_id: Vec<u8>,
    /// The held text, escaped as a JSON string's contents (each delta
    /// escaped once, or copied as the provider escaped it).
    pub(super) held: Vec<u8>,
    /// The host's time when the text began to be held (`None`: unknown,
    /// due at the next tick).
    pub(super) held_since: Option<u64>,
    /// The host's latest time ([`Relay::tick`], [`Relay::keep_alive`]).
    pub(super) now_ms: Option<u64>,
    /// The sources shown in the message: (key, `sourceId`).
    pub(super) sources: Vec<(String, String)>,
    /// Responses annotations of the open text part
    /// (`response.output_text.annotation.added`: the folded part keeps
    /// none).
    pub(super) annotations: Vec<Value>,
    /// The dialect of the turn (`MessageStart`).
    pub(super) provider: &'static str,
    /// A Gemini turn ended: its grounding sources are read from the folded
    /// message once the stream call returns.
    pub(super) grounding_due: bool,
}

/// The output buffer's first capacity: most answers fit without the
/// buffer growing (and copying itself) again and again.
const INITIAL_CAPACITY: usize = 32 << 10;

/// JSON text kept as bytes, or `null` when there is none.
pub(super) fn json_or_null(json: &[u8]) -> &[u8] {
    if json.is_empty() {
        b"null"
    } else {
        json
    }
}

/// Whether parts of this kind stream text to the UI.
pub(super) fn is_text(kind: PartKind) -> bool {
    matches!(kind, PartKind::Text | PartKind::Refusal | PartKind::Reasoning)
}

impl EventSink for Writer {
    fn event(&mut self, event: &StreamEvent<'_>) {
        self.write_event(event, None);
    }

    fn escaped(&mut self, event: &StreamEvent<'_>, escaped: &str) {
        self.write_event(event, Some(escaped));
    }
}

impl Writer {
    pub(super) fn new(config: RelayConfig, max_parts: usize) -> Self {
        Writer {
            config,
            replay: ReplayBuffer::with_capacity(config.replay_bytes, INITIAL_CAPACITY),
            last_id: 0,
            parts: Vec::new(),
            max_parts,
            server_calls: Vec::new(),
            started: false,
            step_open: false,
            steps: 0,
            stop_reason: String::new(),
            usage: Vec::new(),
            finished: false,
            turn_ended: false,
            active: false,
            last_activity_ms: None,
            call_names: Vec::new(),
            step_tokens: Tokens::default(),
            total_tokens: Tokens::default(),
            failed: false,
            held_part: None,
            held_call_id: Vec::new(),
            held: Vec::new(),
            held_since: None,
            now_ms: None,
            sources: Vec::new(),
            annotations: Vec::new(),
            provider: "",
            grounding_due: false,
        }
    }

    /// Starts a host call: clears the output; refused after `finish`.
    pub(super) fn begin(&mut self) -> Result<&mut Self, RelayError> {
        if self.finished {
            return Err(RelayError::Finished);
        }
        self.replay.begin_call();
        Ok(self)
    }

    /// The usage, kept as JSON text in a reused buffer.
    pub(super) fn set_usage(&mut self, usage: &Value) {
        self.step_tokens = Tokens::of(usage);
        self.usage.clear();
        if serde_json::to_writer(&mut self.usage, usage).is_err() {
            self.usage.clear();
        }
    }

    /// `start` (once), AI SDK only: what `finish` and `error` need, which
    /// belong to no step (a step opened for them would stay empty).
    pub(super) fn ensure_message_started(&mut self) {
        if self.config.format == RelayFormat::AiSdk && !self.started {
            self.started = true;
            self.ai("start", |_| {});
        }
    }

    /// `start` (once) and `start-step` (when no step is open), AI SDK only.
    pub(super) fn ensure_started(&mut self) {
        if self.config.format != RelayFormat::AiSdk {
            if !self.step_open {
                self.step_open = true;
                self.steps += 1;
            }
            return;
        }
        if !self.started {
            self.started = true;
            self.ai("start", |_| {});
        }
        if !self.step_open {
            self.step_open = true;
            self.steps += 1;
            self.ai("start-step", |_| {});
        }
    }

    /// A provider turn begins: a step that already saw its turn end (its
    /// tool results relayed since) is closed and a new one opens.
    pub(super) fn begin_turn(&mut self) {
        if self.turn_ended {
            self.close_step();
        }
        self.turn_ended = false;
        self.parts.clear();
        self.stop_reason.clear();
        self.ensure_started();
    }

    /// The provider's turn ended: its parts are closed; the step stays open
    /// for the tool results, until the host closes it (`finish_step`,
    /// `finish`) or the next turn begins.
    pub(super) fn end_turn(&mut self, stop_reason: Option<&str>) {
        if let Some(reason) = stop_reason {
            self.stop_reason.clear();
            self.stop_reason.push_str(reason);
        }
        if self.config.format == RelayFormat::AiSdk {
            self.close_parts();
            if !self.usage.is_empty() {
                // The usage as the provider reported it, while the step
                // stays open for the tools (`finish` repeats the last).
                let usage = std::mem::take(&mut self.usage);
                self.ai("message-metadata", |o| {
                    o.object("messageMetadata", |m| {
                        m.raw("usage", &usage);
                    });
                });
                self.usage = usage;
            }
            self.grounding_due = self.provider == "gemini";
        }
        self.turn_ended = true;
    }

    pub(super) fn close_step(&mut self) {
        self.turn_ended = false;
        if self.step_open {
            self.total_tokens.add(self.step_tokens);
        }
        let step_tokens = std::mem::take(&mut self.step_tokens);
        match self.config.format {
            RelayFormat::AiSdk => {
                if self.step_open {
                    self.close_parts();
                    self.step_open = false;
                    self.ai("finish-step", |_| {});
                }
            }
            RelayFormat::Catalog => {
                if self.step_open {
                    self.step_open = false;
                    let (stop_reason, usage) = (std::mem::take(&mut self.stop_reason), std::mem::take(&mut self.usage));
                    let steps = self.steps;
                    self.catalog("step-completed", |o| {
                        o.value("stepNumber", &steps).object("usage", |u| step_tokens.write(u));
                        if !stop_reason.is_empty() {
                            o.str("stopReason", &stop_reason);
                        }
                        o.raw("providerUsage", json_or_null(&usage));
                    });
                    (self.stop_reason, self.usage) = (stop_reason, usage);
                }
            }
        }
    }

    pub(super) fn error_frame(&mut self, message: &str, code: Option<&str>, recoverable: bool) {
        self.ensure_message_started();
        self.failed |= !recoverable;
        match self.config.format {
            RelayFormat::AiSdk => self.ai("error", |o| {
                o.str("errorText", message);
            }),
            RelayFormat::Catalog => self.catalog("error", |o| {
                o.str("error", message);
                if let Some(code) = code {
                    o.str("code", code);
                }
                o.value("recoverable", &recoverable);
            }),
        }
    }

    pub(super) fn part(&mut self, part: u32) -> &mut PartState {
        let index = part as usize;
        if self.parts.len() <= index {
            self.parts.resize_with(index + 1, PartState::default);
        }
        &mut self.parts[index]
    }

    /// A call the provider sent without an id goes by the id the stream gave
    /// it at its end (`ssefold_call_<part>`, the id a host's tool results
    /// name), unless the UI was shown another. Always false: a match guard
    /// run before the arms of the call's end.
    pub(super) fn adopt_call_id(&mut self, part: u32, call: Option<&ToolCall<'_>>) -> bool {
        if let Some(call) = call {
            let state = self.part(part);
            if state.call_id.is_none() {
                state.call_id = Some(call.id.to_owned());
            }
        }
        false
    }

    /// Keeps a tool call's first `id` and `name` metadata (strings); whether
    /// this one was kept.
    pub(super) fn note_call(&mut self, part: u32, key: &str, value: &serde_json::Value) -> bool {
        let Some(text) = value.as_str() else { return false };
        let state = self.part(part);
        let slot = match key {
            "id" => &mut state.call_id,
            "name" => &mut state.name,
            _ => return false,
        };
        if slot.is_some() {
            return false;
        }
        *slot = Some(text.to_owned());
        true
    }

    /// Writes the frames of one event; `escaped`: a delta's text as the
    /// provider escaped it, when known (see [`EventSink::escaped`]).
    pub(super) fn write_event(&mut self, event: &StreamEvent<'_>, escaped: Option<&str>) {
        if event.part().is_some_and(|p| p as usize >= self.max_parts) {
            // Only a host's own event can be beyond it (a stream bounds its
            // parts): nothing is written, nothing grows.
            return;
        }
        match self.config.format {
            RelayFormat::AiSdk => self.ai_event(event, escaped),
            RelayFormat::Catalog => self.catalog_event(event, escaped),
        }
    }
}
