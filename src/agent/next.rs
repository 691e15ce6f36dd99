//! The next request: what a host appends to its conversation to continue
//! after a turn, in the shape each provider's request takes.
//!
//! | dialect | assistant turn ([`NextRequest::assistant`]) | tool results ([`NextRequest::tool_results`]) |
//! | --- | --- | --- |
//! | Anthropic, Bedrock `InvokeModel` | `{"role": "assistant", "content": BLOCKS}` — the folded message's content blocks as they are (thinking signatures, server tool blocks and their results included) | one user message of `tool_result` blocks |
//! | OpenAI Chat | `{"role": "assistant", "content", "refusal"?, "tool_calls"?, "function_call"?, "audio"?}` of choice 0 (`audio` as `{"id"}`; reasoning members left out: they are no request member) | `tool` messages; a deprecated `function_call`'s result is a `function` message |
//! | OpenAI Responses | the folded `output` items, as input items (a custom tool call without its output-only `status`; an `output_text`'s annotations without those that lack a member the input requires) | `function_call_output` items (`custom_tool_call_output` for a custom tool) |
//! | Gemini / Vertex AI | `candidates[0].content` (`{"role": "model", "parts"}`, thought signatures kept) | one user content of `functionResponse` parts |
//! | Ollama | the folded `message` (`role`, `content`, `thinking`, `tool_calls`; a call's `arguments` always an object: `{}` for arguments that were not one) | `tool` messages with `tool_name` |
//! | Bedrock Converse | `output.message` (`{"role": "assistant", "content"}`) | one user message of `toolResult` blocks |
//!
//! A call whose id was synthesized ([`crate::providers::ToolCall::id`])
//! carries that id in the assistant turn and in its result wherever the
//! provider matches results to calls by id (the folded message keeps the
//! provider's `null`, as the SDK does); Gemini and Ollama match results by
//! name and order, and get no synthesized id. The shapes of the results
//! are [`crate::tools::tool_results`]'.

use serde_json::{json, Map, Value};

use super::TurnCall;
use crate::providers::{Provider, ToolInputFormat};
use crate::tools::{tool_results, ToolResult};

/// What to append to the conversation to continue after a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct NextRequest {
    /// The assistant turn as the provider expects it back: one message
    /// (every dialect but Responses), or the list of input items (Responses).
    pub assistant: Value,
    /// The tool results, shaped for the provider (see the module docs);
    /// `null` when the turn had none.
    pub tool_results: Value,
}

impl NextRequest {
    /// Everything to append to the conversation's `messages` (Responses:
    /// `input`; Gemini: `contents`), in order: the assistant turn's
    /// message(s) or items, then the results' (copies; see
    /// [`into_append`](Self::into_append)).
    pub fn append(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for part in [&self.assistant, &self.tool_results] {
            match part {
                Value::Null => {}
                Value::Array(items) => out.extend(items.iter().cloned()),
                one => out.push(one.clone()),
            }
        }
        out
    }

    /// [`append`](Self::append), moving the values instead of copying them.
    pub fn into_append(self) -> Vec<Value> {
        let mut out = Vec::new();
        for part in [self.assistant, self.tool_results] {
            match part {
                Value::Null => {}
                Value::Array(items) => out.extend(items),
                one => out.push(one),
            }
        }
        out
    }
}

/// Why no next request could be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NextRequestError {
    /// No dialect was detected (nothing arrived).
    #[error("no dialect: the stream named none")]
    NoDialect,
    /// The folded message has no answer to continue (the stream ended, or
    /// was aborted, before the answer started).
    #[error("the folded message has no {0} to continue")]
    NoAnswer(&'static str),
}

/// The next request after a turn of `provider` whose folded message is
/// `message`, whose tool calls (choice 0, part order) are `calls` and whose
/// results (call order) are `results`. See the module docs.
pub fn next_request(
    provider: Provider,
    message: &Value,
    calls: &[TurnCall],
    results: &[ToolResult],
) -> Result<NextRequest, NextRequestError> {
    let assistant = match provider {
        Provider::Auto => return Err(NextRequestError::NoDialect),
        Provider::Anthropic | Provider::Bedrock => {
            let content =
                message.get("content").filter(|c| c.is_array()).ok_or(NextRequestError::NoAnswer("content"))?;
            let mut content = content.clone();
            patch_ids(&mut content, calls, |block| {
                let ty = block.get("type").and_then(Value::as_str)?;
                matches!(ty, "tool_use" | "server_tool_use" | "mcp_tool_use").then_some("id")
            });
            json!({"role": "assistant", "content": content})
        }
        Provider::OpenAIChat => chat_assistant(message, calls)?,
        Provider::OpenAIResponses => {
            let output = message.get("output").filter(|o| o.is_array()).ok_or(NextRequestError::NoAnswer("output"))?;
            let mut output = output.clone();
            patch_ids(&mut output, calls, |item| match item.get("type").and_then(Value::as_str)? {
                "function_call" | "custom_tool_call" => Some("call_id"),
                "mcp_call" => Some("id"),
                _ => None,
            });
            if let Value::Array(items) = &mut output {
                items.iter_mut().for_each(responses_input_item);
            }
            output
        }
        Provider::Gemini => {
            let candidates = message.get("candidates").and_then(Value::as_array);
            let first = candidates
                .and_then(|c| c.iter().find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0))
                .or_else(|| candidates.and_then(|c| c.first()));
            let mut content = first
                .and_then(|c| c.get("content"))
                .cloned()
                .ok_or(NextRequestError::NoAnswer("candidates[0].content"))?;
            if let Value::Object(m) = &mut content {
                m.entry("role").or_insert_with(|| "model".into());
            }
            content
        }
        Provider::Ollama => {
            let mut msg = message
                .get("message")
                .filter(|m| m.is_object())
                .cloned()
                .ok_or(NextRequestError::NoAnswer("message"))?;
            if let Some(Value::Array(list)) = msg.get_mut("tool_calls") {
                list.iter_mut().for_each(ollama_arguments_object);
            }
            msg
        }
        Provider::BedrockConverse => {
            let mut msg = message
                .get("output")
                .and_then(|o| o.get("message"))
                .filter(|m| m.is_object())
                .cloned()
                .ok_or(NextRequestError::NoAnswer("output.message"))?;
            if let Some(content) = msg.get_mut("content") {
                patch_ids(content, calls, |block| {
                    block.get("toolUse").is_some_and(Value::is_object).then_some("toolUse.toolUseId")
                });
            }
            msg
        }
    };
    let tool_results = if results.is_empty() {
        Value::Null
    } else {
        match provider {
            Provider::OpenAIChat => chat_results(calls, results),
            Provider::OpenAIResponses => responses_results(calls, results),
            // Every other dialect has a shape, and `Auto` returned above.
            _ => tool_results(provider, results).unwrap_or(Value::Null),
        }
    };
    Ok(NextRequest { assistant, tool_results })
}

/// Writes the synthesized ids into the call entries of `list` (the
/// entries `key_of` names the id member of, in order: the calls of the
/// message, in part order).
fn patch_ids<'c>(
    list: &mut Value,
    calls: impl IntoIterator<Item = &'c TurnCall>,
    key_of: impl Fn(&Value) -> Option<&'static str>,
) {
    let Value::Array(entries) = list else { return };
    let mut calls = calls.into_iter();
    for entry in entries.iter_mut() {
        let Some(key) = key_of(entry) else { continue };
        let Some(call) = calls.next() else { return };
        if !call.id_synthesized {
            continue;
        }
        // `toolUse.toolUseId`: a member of a member.
        let (holder, key) = match key.split_once('.') {
            Some((outer, inner)) => (entry.get_mut(outer), inner),
            None => (Some(entry), key),
        };
        if let Some(Value::Object(m)) = holder {
            m.insert(key.to_owned(), Value::String(call.id.clone()));
        }
    }
}

/// An output item of a Responses answer as an input item: a custom tool
/// call without its `status` (an output member the input item does not
/// take), an `output_text` part without the annotations that lack a member
/// the input requires (xAI's `url_citation`s carry only the URL).
fn responses_input_item(item: &mut Value) {
    let Value::Object(m) = item else { return };
    match m.get("type").and_then(Value::as_str) {
        Some("custom_tool_call") => {
            m.shift_remove("status");
        }
        Some("message") => {
            let Some(Value::Array(parts)) = m.get_mut("content") else { return };
            for part in parts {
                if part.get("type").and_then(Value::as_str) != Some("output_text") {
                    continue;
                }
                if let Some(Value::Array(annotations)) = part.get_mut("annotations") {
                    annotations.retain(annotation_is_complete);
                }
            }
        }
        _ => {}
    }
}

/// Whether a Responses `output_text` annotation has every member its input
/// type requires (an annotation of a type not listed here is kept).
fn annotation_is_complete(annotation: &Value) -> bool {
    let required: &[&str] = match annotation.get("type").and_then(Value::as_str) {
        Some("url_citation") => &["url", "title", "start_index", "end_index"],
        Some("file_citation") => &["file_id", "filename", "index"],
        Some("container_file_citation") => &["container_id", "file_id", "filename", "start_index", "end_index"],
        Some("file_path") => &["file_id", "index"],
        _ => &[],
    };
    required.iter().all(|k| annotation.get(*k).is_some_and(|v| !v.is_null()))
}

/// An Ollama tool call's `function.arguments` as the object the request
/// takes: a string (invalid or cut arguments, kept raw in the folded
/// message) becomes the object it parses to, else `{}` (the call's error
/// result says why it did not run).
fn ollama_arguments_object(call: &mut Value) {
    let Some(Value::Object(function)) = call.get_mut("function") else { return };
    let Some(arguments) = function.get_mut("arguments") else { return };
    if arguments.is_object() {
        return;
    }
    let parsed = arguments.as_str().and_then(|t| serde_json::from_str::<Value>(t).ok()).filter(Value::is_object);
    *arguments = parsed.unwrap_or_else(|| Value::Object(Map::new()));
}

/// The Chat assistant message of choice 0, as a request message.
fn chat_assistant(message: &Value, calls: &[TurnCall]) -> Result<Value, NextRequestError> {
    let choice = message
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c.get("index").and_then(Value::as_u64) == Some(0)))
        .and_then(|c| c.get("message"))
        .and_then(Value::as_object)
        .ok_or(NextRequestError::NoAnswer("choices[0].message"))?;
    let mut m = Map::new();
    m.insert("role".into(), "assistant".into());
    m.insert("content".into(), choice.get("content").cloned().unwrap_or(Value::Null));
    if let Some(refusal) = choice.get("refusal").filter(|r| !r.is_null()) {
        m.insert("refusal".into(), refusal.clone());
    }
    // The deprecated `function_call` is no tool call: ids are the tool calls'.
    let tool_calls: Vec<&TurnCall> = calls.iter().filter(|c| c.provider_type != "function_call").collect();
    if !tool_calls.is_empty() {
        // The folded entries (their extra members kept: a thought signature
        // of Gemini's OpenAI endpoint, …) when they are the calls, in order;
        // else (a server that sent a whole `message` member, folded over the
        // deltas as the SDK does) the calls as the turn has them.
        let folded = choice.get("tool_calls").and_then(Value::as_array);
        let list = tool_calls
            .iter()
            .enumerate()
            .map(|(k, call)| {
                let entry = folded.and_then(|l| l.get(k)).filter(|e| {
                    e.get("function").and_then(|f| f.get("name")).and_then(Value::as_str) == Some(call.name.as_str())
                        && !matches!(e.get("id").and_then(Value::as_str), Some(id) if id != call.id)
                });
                let mut entry = match entry {
                    Some(e) => e.clone(),
                    None => json!({"id": call.id, "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments}}),
                };
                if let Value::Object(o) = &mut entry {
                    o.shift_remove("index");
                    o.insert("id".into(), Value::String(call.id.clone()));
                }
                entry
            })
            .collect();
        m.insert("tool_calls".into(), Value::Array(list));
    }
    if let Some(f) = choice.get("function_call").filter(|f| f.is_object()) {
        m.insert("function_call".into(), f.clone());
    }
    if let Some(id) = choice.get("audio").and_then(|a| a.get("id")).filter(|i| i.is_string()) {
        m.insert("audio".into(), json!({ "id": id }));
    }
    Ok(Value::Object(m))
}

/// Chat results: `tool` messages, a `function` message for the deprecated
/// `function_call`.
fn chat_results(calls: &[TurnCall], results: &[ToolResult]) -> Value {
    let text = |r: &ToolResult| {
        if r.is_error && !r.output.starts_with("Error") {
            format!("Error: {}", r.output)
        } else {
            r.output.clone()
        }
    };
    Value::Array(
        results
            .iter()
            .map(|r| {
                let function = calls.iter().any(|c| c.id == r.call_id && c.provider_type == "function_call");
                if function {
                    json!({"role": "function", "name": r.name, "content": text(r)})
                } else {
                    json!({"role": "tool", "tool_call_id": r.call_id, "content": text(r)})
                }
            })
            .collect(),
    )
}

/// Responses results: `function_call_output`, or `custom_tool_call_output`
/// for a custom tool (free-text input).
fn responses_results(calls: &[TurnCall], results: &[ToolResult]) -> Value {
    let shaped = tool_results(Provider::OpenAIResponses, results).unwrap_or(Value::Null);
    let Value::Array(mut items) = shaped else { return shaped };
    for (item, r) in items.iter_mut().zip(results) {
        let custom = calls.iter().any(|c| c.id == r.call_id && c.input_format == ToolInputFormat::Text);
        if custom {
            item["type"] = Value::from("custom_tool_call_output");
        }
    }
    Value::Array(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_items_become_input_items() {
        let mut custom = json!({"id": "ctc_1", "type": "custom_tool_call", "status": "completed",
            "call_id": "call_1", "name": "apply_patch", "input": "x"});
        responses_input_item(&mut custom);
        assert_eq!(
            custom,
            json!({"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_1",
            "name": "apply_patch", "input": "x"})
        );
        let complete = json!({"type": "url_citation", "url": "u", "title": "t", "start_index": 0, "end_index": 1});
        let mut message = json!({"type": "message", "role": "assistant", "status": "completed", "content": [
            {"type": "output_text", "text": "a", "annotations": [{"type": "url_citation", "url": "u"}, complete.clone(),
                {"type": "file_path", "file_id": "f", "index": 2}, {"type": "future_note", "x": 1}]},
            {"type": "refusal", "refusal": "no"}]});
        responses_input_item(&mut message);
        assert_eq!(
            message["content"][0]["annotations"],
            json!([complete, {"type": "file_path", "file_id": "f",
            "index": 2}, {"type": "future_note", "x": 1}])
        );
        assert_eq!(message["status"], "completed", "a message keeps its status (the input item takes it)");
    }

    #[test]
    fn ollama_arguments_are_always_objects() {
        for (arguments, want) in [
            (json!("{\"x\": tru"), json!({})),
            (json!("{\"x\": 1}"), json!({"x": 1})),
            (json!("[1]"), json!({})),
            (json!(null), json!({})),
            (json!({"y": [2]}), json!({"y": [2]})),
        ] {
            let mut call = json!({"function": {"name": "f", "arguments": arguments}});
            ollama_arguments_object(&mut call);
            assert_eq!(call["function"]["arguments"], want);
        }
        let mut no_arguments = json!({"function": {"name": "f"}});
        ollama_arguments_object(&mut no_arguments);
        assert_eq!(no_arguments, json!({"function": {"name": "f"}}));
    }
}
