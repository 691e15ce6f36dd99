//! Tool execution while the answer streams: [`ToolScheduler`] decides which
//! ready tool calls a host runs now and hands their results back in call
//! order; [`tool_results`] shapes them for the provider's next request.
//!
//! Sans-IO like the rest of the crate: the scheduler never runs a tool and
//! never reads a clock. A host feeds it each ready tool call (a `part_end`
//! of kind `tool_call` with outcome `complete`: see
//! [`crate::providers::events`]), starts what [`ToolScheduler::startable`]
//! returns, reports progress and results, and releases
//! [`ToolScheduler::results`] as they come:
//!
//! ```
//! use ssefold::providers::Provider;
//! use ssefold::tools::{tool_results, ToolOptions, ToolScheduler};
//!
//! let mut scheduler = ToolScheduler::new();
//! scheduler.add("call_1", "read_file", r#"{"path":"a.rs"}"#, ToolOptions::default()).unwrap();
//! scheduler.add("call_2", "bash", r#"{"cmd":"make"}"#, ToolOptions { exclusive: true, ..ToolOptions::default() }).unwrap();
//! assert_eq!(scheduler.startable(), ["call_1"]); // bash waits until read_file is done
//! scheduler.finish("call_1", "fn main() {}", false).unwrap();
//! assert_eq!(scheduler.startable(), ["call_2"]);
//! scheduler.finish("call_2", "exit 2", true).unwrap();
//! let next = tool_results(Provider::Anthropic, &scheduler.all_results().unwrap()).unwrap();
//! assert_eq!(next["content"][1]["is_error"], true);
//! ```
//!
//! The `tool_execution_*` events ([`ToolExecutionEvent`]) name what a UI
//! shows: `tool_execution_started`, `tool_execution_update` (progress text)
//! and `tool_execution_finished` (`is_error`).

mod scheduler;

use serde_json::{json, Value};

use crate::providers::Provider;

pub(crate) use scheduler::unknown_tool_output;
pub use scheduler::{Finished, Gate, SchedulerConfig, ToolScheduler};

/// How a tool is scheduled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolOptions {
    /// Not safe to run beside other tools (an edit, a shell command): it
    /// starts when nothing runs, runs alone, and later calls wait for it.
    pub exclusive: bool,
    /// An error result of this call cancels its running siblings and the
    /// calls still to run in this turn (a failed shell command makes the
    /// parallel work pointless); the turn itself goes on.
    pub abort_siblings_on_error: bool,
    /// When a ready call may start (see [`ToolStart`]; default
    /// [`ToolStart::Auto`]: as soon as it is ready, unless the tool is
    /// exclusive, then once the turn ended normally). Applied by an
    /// [`crate::agent::AgentTurn`]; a standalone [`ToolScheduler`] knows no
    /// stop reason (its host gates a call with [`ToolScheduler::add_gated`]).
    pub start: ToolStart,
    /// A ready call waits for the host's approval
    /// ([`crate::agent::AgentTurn::approve`] / `deny`) before the scheduling
    /// rules apply to it; a denial is its error result. Default false.
    /// Applied by an [`crate::agent::AgentTurn`], as `start` is.
    pub needs_approval: bool,
}

impl ToolOptions {
    /// Options with both flags given (start [`ToolStart::Auto`], no
    /// approval).
    pub const fn new(exclusive: bool, abort_siblings_on_error: bool) -> Self {
        ToolOptions { exclusive, abort_siblings_on_error, start: ToolStart::Auto, needs_approval: false }
    }

    /// Whether a ready call of this tool waits for the turn to end
    /// normally before it starts ([`ToolStart::Auto`] resolved).
    pub fn waits_for_turn_end(&self) -> bool {
        match self.start {
            ToolStart::Auto => self.exclusive,
            ToolStart::Ready => false,
            ToolStart::TurnEnd => true,
        }
    }
}

/// When a ready call may start. Wire names `auto`, `ready`, `turn_end`.
///
/// Starting a call the moment its arguments are complete is the latency
/// win of streaming tool execution; a tool with side effects should not
/// start for an answer that then stops for its length, a content filter, a
/// refusal or an error (the AI SDK's rule since vercel/ai#19066): such a
/// tool starts only once the turn ended with a normal or tool-use stop
/// ([`crate::providers::StopClass::allows_tools`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ToolStart {
    /// [`ToolStart::Ready`] for a tool that may run beside others,
    /// [`ToolStart::TurnEnd`] for an exclusive one (an edit, a shell
    /// command: the side effects).
    #[default]
    Auto,
    /// As soon as the call is ready (and the scheduling rules allow).
    Ready,
    /// Only once the turn ended with a normal or tool-use stop.
    TurnEnd,
}

impl ToolStart {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            ToolStart::Auto => "auto",
            ToolStart::Ready => "ready",
            ToolStart::TurnEnd => "turn_end",
        }
    }

    /// The wire name: the old name of [`name`](Self::name).
    #[deprecated(note = "use `name()`: every enum's wire name is `name()`")]
    pub fn as_str(self) -> &'static str {
        self.name()
    }

    /// The value of a wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(ToolStart::Auto),
            "ready" => Some(ToolStart::Ready),
            "turn_end" => Some(ToolStart::TurnEnd),
            _ => None,
        }
    }
}

/// Where a result came from. Wire names: `ran`, `unknown_tool`,
/// `invalid_input`, `cancelled`, `aborted`, `discarded`, `incomplete`,
/// `unnamed`, `skipped`, `denied`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolResultKind {
    /// The host ran the tool and reported this result.
    Ran,
    /// The host has no such tool (`No such tool available: NAME`).
    UnknownTool,
    /// The arguments were not valid JSON; the tool never ran.
    InvalidInput,
    /// A sibling added with `abort_siblings_on_error` failed.
    Cancelled,
    /// The user aborted the turn.
    Aborted,
    /// A streaming fallback threw the turn's tool work away.
    Discarded,
    /// The call's arguments were cut off (the turn ended while they
    /// streamed); the tool never ran.
    Incomplete,
    /// The provider sent the call without a tool name; nothing ran.
    Unnamed,
    /// The turn ended with a stop reason that lets no call start (the
    /// length, a content filter, a refusal, an error: see
    /// [`ToolStart`]); the call had not started and never ran.
    Skipped,
    /// The host denied the call (or its approval timed out); it never ran.
    Denied,
}

impl ToolResultKind {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            ToolResultKind::Ran => "ran",
            ToolResultKind::UnknownTool => "unknown_tool",
            ToolResultKind::InvalidInput => "invalid_input",
            ToolResultKind::Cancelled => "cancelled",
            ToolResultKind::Aborted => "aborted",
            ToolResultKind::Discarded => "discarded",
            ToolResultKind::Incomplete => "incomplete",
            ToolResultKind::Unnamed => "unnamed",
            ToolResultKind::Skipped => "skipped",
            ToolResultKind::Denied => "denied",
        }
    }

    /// The wire name: the old name of [`name`](Self::name).
    #[deprecated(note = "use `name()`: every enum's wire name is `name()`")]
    pub fn as_str(self) -> &'static str {
        self.name()
    }

    /// Every kind, in the order of their numbers in the C ABI.
    pub fn all() -> [ToolResultKind; 10] {
        [
            ToolResultKind::Ran,
            ToolResultKind::UnknownTool,
            ToolResultKind::InvalidInput,
            ToolResultKind::Cancelled,
            ToolResultKind::Aborted,
            ToolResultKind::Discarded,
            ToolResultKind::Incomplete,
            ToolResultKind::Unnamed,
            ToolResultKind::Skipped,
            ToolResultKind::Denied,
        ]
    }
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The provider's id of the call (`tool_use_id` / `tool_call_id` / `call_id`),
    /// or the one ssefold synthesized ([`crate::providers::ToolCall::id`]).
    pub call_id: String,
    /// Whether `call_id` was synthesized (the provider sent none): the
    /// shapes of the dialects that match results by name and order
    /// (Gemini, Ollama) leave it out.
    pub id_synthesized: bool,
    /// The tool's name.
    pub name: String,
    /// What the model is told: the tool's output, or the error text.
    pub output: String,
    /// Whether it is an error result.
    pub is_error: bool,
    /// Where it came from.
    pub kind: ToolResultKind,
}

/// What a UI shows of tool execution. Wire names: `tool_execution_started`,
/// `tool_execution_update`, `tool_execution_finished`,
/// `tool_approval_requested`, `tool_running_after_stop`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolExecutionEvent {
    /// The host was told to start the call.
    Started {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
    },
    /// Progress text of a running call (the latest replaces the earlier).
    Update {
        /// The call's id.
        call_id: String,
        /// The progress text.
        text: String,
    },
    /// The call has its result.
    Finished {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// Whether the result is an error.
        is_error: bool,
    },
    /// A ready call of a tool that needs approval waits for the host's
    /// answer (`approve` / `deny` with `approval_id`).
    ApprovalRequested {
        /// The call's id.
        call_id: String,
        /// The approval's id (unique in the turn: `approval_` + the call's
        /// id).
        approval_id: String,
        /// The tool's name.
        name: String,
        /// The call's input as text.
        arguments: String,
    },
    /// The turn ended with a stop reason that lets no call start while
    /// this call was running: the host may cancel it
    /// ([`crate::agent::AgentTurn::cancel_tool`]) or let it finish.
    RunningAfterStop {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The turn's stop reason (`length`, `max_tokens`, `error`, …).
        stop_reason: String,
    },
}

impl ToolExecutionEvent {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        match self {
            ToolExecutionEvent::Started { .. } => "tool_execution_started",
            ToolExecutionEvent::Update { .. } => "tool_execution_update",
            ToolExecutionEvent::Finished { .. } => "tool_execution_finished",
            ToolExecutionEvent::ApprovalRequested { .. } => "tool_approval_requested",
            ToolExecutionEvent::RunningAfterStop { .. } => "tool_running_after_stop",
        }
    }

    /// The call the event is about.
    pub fn call_id(&self) -> &str {
        match self {
            ToolExecutionEvent::Started { call_id, .. }
            | ToolExecutionEvent::Update { call_id, .. }
            | ToolExecutionEvent::Finished { call_id, .. }
            | ToolExecutionEvent::ApprovalRequested { call_id, .. }
            | ToolExecutionEvent::RunningAfterStop { call_id, .. } => call_id,
        }
    }

    /// The JSON form: `{"event": NAME, "call_id", …fields}`.
    pub fn to_json(&self) -> Value {
        match self {
            ToolExecutionEvent::Started { call_id, name } => {
                json!({"event": self.name(), "call_id": call_id, "name": name})
            }
            ToolExecutionEvent::Update { call_id, text } => {
                json!({"event": self.name(), "call_id": call_id, "text": text})
            }
            ToolExecutionEvent::Finished { call_id, name, is_error } => {
                json!({"event": self.name(), "call_id": call_id, "name": name, "is_error": is_error})
            }
            ToolExecutionEvent::ApprovalRequested { call_id, approval_id, name, arguments } => json!({
                "event": self.name(), "call_id": call_id, "approval_id": approval_id,
                "name": name, "arguments": arguments,
            }),
            ToolExecutionEvent::RunningAfterStop { call_id, name, stop_reason } => {
                json!({"event": self.name(), "call_id": call_id, "name": name, "stop_reason": stop_reason})
            }
        }
    }
}

/// Misuse of a [`ToolScheduler`]; the call changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchedulerError {
    /// No call has this id.
    #[error("no tool call with id {0:?}")]
    UnknownCallId(String),
    /// A call with this id was already added.
    #[error("a tool call with id {0:?} was already added")]
    DuplicateCallId(String),
    /// The call already has its result from the host.
    #[error("tool call {0:?} already finished")]
    AlreadyFinished(String),
    /// The call was never handed out by `startable`.
    #[error("tool call {0:?} was never started")]
    NotStarted(String),
    /// `add` after `discard`.
    #[error("the turn's tool work was discarded: no call can be added")]
    AddAfterDiscard,
    /// More calls than `SchedulerConfig::max_calls`.
    #[error("more than {limit} tool calls in one turn")]
    TooManyCalls {
        /// The limit.
        limit: usize,
    },
    /// Results asked for while this call has none yet.
    #[error("tool call {0:?} has no result yet")]
    Unfinished(String),
    /// Results asked for after `discard`.
    #[error("the turn's tool work was discarded")]
    Discarded,
    /// `tool_results` for a provider that has no fixed shape (`auto`).
    #[error("no tool result shape for provider {0}")]
    UnsupportedProvider(&'static str),
    /// An approval answer for a call that is not waiting for one (no such
    /// approval id, or already answered).
    #[error("no tool call waits for approval {0:?}")]
    NotAwaitingApproval(String),
}

impl SchedulerError {
    /// A stable snake_case name of the error kind (the same in every binding).
    pub fn kind(&self) -> &'static str {
        match self {
            SchedulerError::UnknownCallId(_) => "unknown_call_id",
            SchedulerError::DuplicateCallId(_) => "duplicate_call_id",
            SchedulerError::AlreadyFinished(_) => "already_finished",
            SchedulerError::NotStarted(_) => "not_started",
            SchedulerError::AddAfterDiscard => "add_after_discard",
            SchedulerError::TooManyCalls { .. } => "too_many_calls",
            SchedulerError::Unfinished(_) => "unfinished",
            SchedulerError::Discarded => "discarded",
            SchedulerError::UnsupportedProvider(_) => "unsupported_provider",
            SchedulerError::NotAwaitingApproval(_) => "not_awaiting_approval",
        }
    }
}

/// The results shaped for the next request of `provider`, in the order given:
///
/// - Anthropic Messages (and Bedrock `InvokeModel`, whose body is
///   Anthropic's): one user message, `{"role": "user", "content":
///   [{"type": "tool_result", "tool_use_id", "content", "is_error"?}…]}`
///   (`is_error: true` only on error results, as the API documents);
/// - OpenAI Chat: an array of `{"role": "tool", "tool_call_id", "content"}`
///   messages;
/// - OpenAI Responses: an array of `{"type": "function_call_output",
///   "call_id", "output"}` input items;
/// - Bedrock Converse: one user message, `{"role": "user", "content":
///   [{"toolResult": {"toolUseId", "content": [{"text"}], "status"?}}…]}`
///   (`status: "error"` only on error results);
/// - Gemini / Vertex AI: one user content, `{"role": "user", "parts":
///   [{"functionResponse": {"id"?, "name", "response": {"output": TEXT}}}…]}`
///   (`{"error": TEXT}` for an error result, the keys the API documents;
///   `id` only when the call's id is the provider's: Gemini matches
///   responses to calls by name and order when it sent no ids);
/// - Ollama: an array of `{"role": "tool", "content", "tool_name"}` messages.
///
/// The OpenAI APIs and Ollama have no error flag: an error result's text is
/// sent as `Error: TEXT` (unless it already starts with `Error`), so the
/// model can tell a failed call from its output.
pub fn tool_results(provider: Provider, results: &[ToolResult]) -> Result<Value, SchedulerError> {
    let openai_text = |r: &ToolResult| {
        if r.is_error && !r.output.starts_with("Error") {
            format!("Error: {}", r.output)
        } else {
            r.output.clone()
        }
    };
    match provider {
        Provider::Anthropic | Provider::Bedrock => {
            let content: Vec<Value> = results
                .iter()
                .map(|r| {
                    let mut block = json!({"type": "tool_result", "tool_use_id": r.call_id, "content": r.output});
                    if r.is_error {
                        block["is_error"] = Value::Bool(true);
                    }
                    block
                })
                .collect();
            Ok(json!({"role": "user", "content": content}))
        }
        Provider::OpenAIChat => Ok(Value::Array(
            results
                .iter()
                .map(|r| json!({"role": "tool", "tool_call_id": r.call_id, "content": openai_text(r)}))
                .collect(),
        )),
        Provider::OpenAIResponses => Ok(Value::Array(
            results
                .iter()
                .map(|r| json!({"type": "function_call_output", "call_id": r.call_id, "output": openai_text(r)}))
                .collect(),
        )),
        Provider::BedrockConverse => {
            let content: Vec<Value> = results
                .iter()
                .map(|r| {
                    let mut result = json!({"toolUseId": r.call_id, "content": [{"text": r.output}]});
                    if r.is_error {
                        result["status"] = Value::from("error");
                    }
                    json!({ "toolResult": result })
                })
                .collect();
            Ok(json!({"role": "user", "content": content}))
        }
        Provider::Gemini => {
            let parts: Vec<Value> = results
                .iter()
                .map(|r| {
                    let key = if r.is_error { "error" } else { "output" };
                    let mut response = serde_json::Map::new();
                    if !r.id_synthesized {
                        response.insert("id".into(), Value::from(r.call_id.as_str()));
                    }
                    response.insert("name".into(), Value::from(r.name.as_str()));
                    response.insert("response".into(), json!({ key: r.output }));
                    json!({ "functionResponse": response })
                })
                .collect();
            Ok(json!({"role": "user", "parts": parts}))
        }
        Provider::Ollama => Ok(Value::Array(
            results.iter().map(|r| json!({"role": "tool", "content": openai_text(r), "tool_name": r.name})).collect(),
        )),
        Provider::Auto => Err(SchedulerError::UnsupportedProvider(Provider::Auto.name())),
    }
}

#[cfg(test)]
mod tests;
