//! The JSON form of a turn's outcome: one document every binding shares
//! (the C `ssefold_agent_turn_outcome_json`, Go's `TurnResult`), written
//! once here.
//!
//! ```text
//! {
//!   "provider": "anthropic",            // the dialect's wire name ("auto": none detected)
//!   "message": {...} | null,            // the folded message
//!   "stop_reason": "tool_use" | null,
//!   "aborted": false,
//!   "failure": {"kind", "message", "retryable", "stall"?, "after_ms"?, "status"?, "retry_after_ms"?} | null,
//!   "calls": [{"part", "id", "id_synthesized", "name", "provider_type", "input_format",
//!              "provider_executed", "outcome", "arguments"}, ...],
//!   "results": [{"call_id", "id_synthesized", "name", "output", "is_error", "kind"}, ...],
//!   "next": {"assistant", "tool_results", "append"} | null,
//!   "gave_up": "not_resumable" | "retries_exhausted" | "not_retryable" | null,
//!   "output_started": true,
//!   "timings": {"started_ms", "time_to_first_content_ms", "content_gaps": {"count", "median_ms",
//!               "p95_ms", "max_ms"}, "duration_ms", "output_tokens", "input_tokens",
//!               "output_tokens_per_second", "attempts": [{"started_ms", "ended_ms", "outcome", "status"}]},
//!   "telemetry": {"attributes": {"gen_ai.*": …}, "metrics": [{"name", "unit", "value", "attributes"}]}
//! }
//! ```
//!
//! `failure.kind` is [`TurnFailure::kind`]: `stream`, `transport`,
//! `idle_timeout` (with `stall`: `idle`, `first_content` or `content`, and
//! `after_ms`), `http` (with `status`, `retry_after_ms`) or
//! `too_many_calls`; `outcome` is [`CallOutcome::name`](super::CallOutcome::name);
//! `kind` of a result is [`crate::tools::ToolResultKind::as_str`].

use serde_json::{json, Value};

use super::{NextRequest, TurnCall, TurnFailure, TurnOutcome};
use crate::tools::ToolResult;

impl TurnFailure {
    /// A stable snake_case name of the failure's kind: `stream`,
    /// `transport`, `idle_timeout`, `http`, `too_many_calls`.
    pub fn kind(&self) -> &'static str {
        match self {
            TurnFailure::Stream(_) => "stream",
            TurnFailure::Transport(_) => "transport",
            TurnFailure::IdleTimeout { .. } => "idle_timeout",
            TurnFailure::Http { .. } => "http",
            TurnFailure::TooManyCalls { .. } => "too_many_calls",
        }
    }

    /// The JSON form: `{"kind", "message", "retryable"}`, with `stall` and
    /// `after_ms` for `idle_timeout`, `status` and `retry_after_ms` for
    /// `http`.
    pub fn to_json(&self) -> Value {
        let mut doc = json!({"kind": self.kind(), "message": self.message(), "retryable": self.is_retryable()});
        match self {
            TurnFailure::IdleTimeout { stall, after_ms } => {
                doc["stall"] = stall.name().into();
                doc["after_ms"] = (*after_ms).into();
            }
            TurnFailure::Http { status, retry_after_ms } => {
                doc["status"] = (*status).into();
                doc["retry_after_ms"] = json!(retry_after_ms);
            }
            _ => {}
        }
        doc
    }
}

impl TurnCall {
    /// The JSON form: `{"part", "id", "id_synthesized", "name",
    /// "provider_type", "input_format", "provider_executed", "outcome",
    /// "arguments"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "part": self.part,
            "id": self.id,
            "id_synthesized": self.id_synthesized,
            "name": self.name,
            "provider_type": self.provider_type,
            "input_format": self.input_format.name(),
            "provider_executed": self.provider_executed,
            "outcome": self.outcome.name(),
            "arguments": self.arguments,
        })
    }
}

impl NextRequest {
    /// The JSON form: `{"assistant", "tool_results", "append"}`.
    pub fn to_json(&self) -> Value {
        json!({"assistant": self.assistant, "tool_results": self.tool_results, "append": self.append()})
    }
}

/// A result's JSON form: `{"call_id", "id_synthesized", "name", "output",
/// "is_error", "kind"}`.
fn result_json(r: &ToolResult) -> Value {
    json!({
        "call_id": r.call_id,
        "id_synthesized": r.id_synthesized,
        "name": r.name,
        "output": r.output,
        "is_error": r.is_error,
        "kind": r.kind.name(),
    })
}

impl TurnOutcome {
    /// The whole outcome as one JSON document (see the module docs of
    /// `agent::json` for its members).
    pub fn to_json(&self) -> Value {
        json!({
            "provider": self.provider.name(),
            "message": self.message,
            "stop_reason": self.stop_reason,
            "aborted": self.aborted,
            "failure": self.failure.as_ref().map(TurnFailure::to_json),
            "calls": self.calls.iter().map(TurnCall::to_json).collect::<Vec<_>>(),
            "results": self.results.iter().map(result_json).collect::<Vec<_>>(),
            "next": self.next().as_ref().map(NextRequest::to_json),
            "gave_up": self.gave_up.map(|r| r.name()),
            "output_started": self.output_started,
            "timings": self.timings.to_json(),
            "telemetry": {"attributes": self.gen_ai_attributes(), "metrics": self.gen_ai_metrics()},
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AgentTurn, TurnAction, TurnConfig};
    use crate::providers::Provider;
    use crate::tools::ToolOptions;

    const CHAT: &str = concat!(
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":",
        "{\"tool_calls\":[{\"index\":0,\"id\":null,\"type\":\"function\",\"function\":",
        "{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n",
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},",
        "\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );

    #[test]
    fn the_outcome_document_has_every_member() {
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::Auto));
        turn.add_tool("add", ToolOptions::default());
        turn.feed(CHAT.as_bytes(), 0, |_| {});
        turn.end_of_body(0, |_| {});
        let Some(TurnAction::StartTool(call)) = turn.poll_action() else { panic!("a call to start") };
        turn.tool_result(&call.call_id, "1", false, |_| {}).unwrap();
        assert!(turn.is_finished());
        let doc = turn.outcome().to_json();
        assert_eq!(doc["provider"], "openai_chat");
        assert_eq!(doc["stop_reason"], "tool_calls");
        assert_eq!(doc["aborted"], false);
        assert_eq!(doc["failure"], Value::Null);
        assert_eq!(
            doc["calls"][0],
            json!({"part": 0, "id": "ssefold_call_0", "id_synthesized": true, "name": "add",
                "provider_type": "function", "input_format": "json", "provider_executed": false,
                "outcome": "complete", "arguments": "{\"a\":1}"})
        );
        assert_eq!(
            doc["results"][0],
            json!({"call_id": "ssefold_call_0", "id_synthesized": true, "name": "add", "output": "1",
                "is_error": false, "kind": "ran"})
        );
        assert_eq!(doc["next"]["append"][1]["tool_call_id"], "ssefold_call_0");
        let append = doc["next"]["append"].as_array().unwrap();
        assert_eq!(doc["next"]["tool_results"], Value::Array(append[1..].to_vec()));
        assert_eq!(doc["message"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "add");
    }

    #[test]
    fn a_failed_turn_names_its_failure() {
        // No `finish_reason` and no `[DONE]`: the body ended before the
        // answer did; the call committed at the end is never started and
        // gets its aborted result.
        let mut config = TurnConfig::new(Provider::OpenAIChat);
        config.reconnect = None;
        let mut turn = AgentTurn::new(config);
        turn.add_tool("add", ToolOptions::default());
        let cut = CHAT
            .find("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},")
            .unwrap();
        turn.feed(&CHAT.as_bytes()[..cut], 0, |_| {});
        turn.end_of_body(0, |_| {});
        assert!(turn.is_finished());
        let doc = turn.outcome().to_json();
        assert_eq!(doc["failure"]["kind"], "stream");
        assert_eq!(doc["failure"]["retryable"], false);
        assert!(doc["failure"]["message"].as_str().unwrap().starts_with("stream ended before"), "{doc}");
        assert_eq!(doc["results"][0]["kind"], "incomplete");
        assert_eq!(doc["calls"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn failure_kinds_are_named() {
        let stall =
            TurnFailure::IdleTimeout { stall: crate::reconnect::StallKind::FirstContent, after_ms: 5 }.to_json();
        assert_eq!(
            (&stall["kind"], &stall["stall"], &stall["after_ms"]),
            (&json!("idle_timeout"), &json!("first_content"), &json!(5))
        );
        let http = TurnFailure::Http { status: 429, retry_after_ms: Some(7) }.to_json();
        assert_eq!(
            (&http["status"], &http["retry_after_ms"], &http["retryable"]),
            (&json!(429), &json!(7), &json!(true))
        );
        assert_eq!(TurnFailure::Transport("reset".into()).to_json()["retryable"], true);
        assert_eq!(TurnFailure::TooManyCalls { limit: 2 }.kind(), "too_many_calls");
    }
}
