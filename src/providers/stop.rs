//! What a stop reason means for the turn: [`StopClass`] sorts the stop and
//! finish reasons of every dialect into the few classes a host decides on
//! (may a side-effecting tool start? was the answer cut?).
//!
//! | class | Anthropic, Bedrock | OpenAI Chat | OpenAI Responses | Gemini | Ollama | Converse |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | [`Normal`](StopClass::Normal) | `end_turn`, `stop_sequence`, `pause_turn` | `stop` | `completed` | `STOP` | `stop` | `end_turn`, `stop_sequence` |
//! | [`ToolUse`](StopClass::ToolUse) | `tool_use` | `tool_calls`, `function_call` | | | | `tool_use` |
//! | [`Length`](StopClass::Length) | `max_tokens`, `model_context_window_exceeded` | `length` | `max_output_tokens` | `MAX_TOKENS` | `length` | `max_tokens`, `model_context_window_exceeded` |
//! | [`ContentFilter`](StopClass::ContentFilter) | | `content_filter` | `content_filter` | `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, `IMAGE_SAFETY` | | `guardrail_intervened`, `content_filtered` |
//! | [`Refusal`](StopClass::Refusal) | `refusal` | | | | | |
//! | [`Aborted`](StopClass::Aborted) | `aborted` (the host aborted the turn: ssefold's own stop reason) | | | | | |
//! | [`Other`](StopClass::Other) | any other reason (`MALFORMED_FUNCTION_CALL`, `OTHER`, `LANGUAGE`, Responses `incomplete`, a reason a provider adds later, …) | | | | | |
//!
//! An unknown reason is [`Other`](StopClass::Other): like the AI SDK's
//! `other`, it lets no side-effecting tool start (a new normal reason costs
//! a tool start; a new bad one would have cost a side effect).

/// The class of a stop reason. Wire names `normal`, `tool_use`, `length`,
/// `content_filter`, `refusal`, `aborted`, `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopClass {
    /// The model ended its answer (or a stop sequence did).
    Normal,
    /// The model stopped to have its tool calls run.
    ToolUse,
    /// The answer was cut by the output token limit or the context window.
    Length,
    /// A content filter or guardrail stopped the answer.
    ContentFilter,
    /// The model refused.
    Refusal,
    /// The host aborted the turn.
    Aborted,
    /// Anything else: a malformed call, an unknown reason.
    Other,
}

impl StopClass {
    /// The class of `reason` (any dialect's: the names do not collide).
    pub fn of(reason: &str) -> StopClass {
        match reason {
            "end_turn" | "stop_sequence" | "pause_turn" | "stop" | "completed" | "STOP" => StopClass::Normal,
            "tool_use" | "tool_calls" | "function_call" => StopClass::ToolUse,
            "max_tokens" | "length" | "max_output_tokens" | "MAX_TOKENS" | "model_context_window_exceeded" => {
                StopClass::Length
            }
            "content_filter"
            | "SAFETY"
            | "RECITATION"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "IMAGE_SAFETY"
            | "guardrail_intervened"
            | "content_filtered" => StopClass::ContentFilter,
            "refusal" => StopClass::Refusal,
            "aborted" => StopClass::Aborted,
            _ => StopClass::Other,
        }
    }

    /// Whether a call waiting for the turn's end may start after a stop of
    /// this class: only a normal or tool-use stop.
    pub fn allows_tools(self) -> bool {
        matches!(self, StopClass::Normal | StopClass::ToolUse)
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            StopClass::Normal => "normal",
            StopClass::ToolUse => "tool_use",
            StopClass::Length => "length",
            StopClass::ContentFilter => "content_filter",
            StopClass::Refusal => "refusal",
            StopClass::Aborted => "aborted",
            StopClass::Other => "other",
        }
    }

    /// The wire name: the old name of [`name`](Self::name).
    #[deprecated(note = "use `name()`: every enum's wire name is `name()`")]
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

#[cfg(test)]
mod tests {
    use super::StopClass;

    #[test]
    fn every_documented_reason_has_its_class() {
        let rows: &[(&[&str], StopClass)] = &[
            (&["end_turn", "stop_sequence", "pause_turn", "stop", "completed", "STOP"], StopClass::Normal),
            (&["tool_use", "tool_calls", "function_call"], StopClass::ToolUse),
            (
                &["max_tokens", "length", "max_output_tokens", "MAX_TOKENS", "model_context_window_exceeded"],
                StopClass::Length,
            ),
            (
                &["content_filter", "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"],
                StopClass::ContentFilter,
            ),
            (&["guardrail_intervened", "content_filtered"], StopClass::ContentFilter),
            (&["refusal"], StopClass::Refusal),
            (&["aborted"], StopClass::Aborted),
            (&["MALFORMED_FUNCTION_CALL", "OTHER", "incomplete", "", "End_Turn", "brand_new_reason"], StopClass::Other),
        ];
        for (reasons, class) in rows {
            for r in *reasons {
                assert_eq!(StopClass::of(r), *class, "{r}");
                assert_eq!(class.allows_tools(), matches!(class, StopClass::Normal | StopClass::ToolUse));
            }
        }
    }
}
