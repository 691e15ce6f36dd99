//! What the relay reads from a folded part in each dialect's own shape:
//! which tool calls the provider runs itself, their results and whole
//! server items (Anthropic `*_tool_result` blocks, Responses
//! `web_search_call`, `mcp_call`, …), and a ready call's input wherever the
//! dialect keeps it (`input`, `arguments`, `function.arguments`,
//! `toolUse.input`, `functionCall.args`). Both formats write what these
//! find; nothing here writes a frame but [`ToolInput::write`].

use serde_json::Value;

use super::frame::JsonObject;
use crate::providers::{ToolCall, ToolInputFormat};

/// Whether a tool-call part of this provider type is run by the provider:
/// Anthropic `server_tool_use` (web search, code execution, …) and
/// `mcp_tool_use`, OpenAI Responses `mcp_call`.
pub(super) fn provider_executed_call(provider_type: &str) -> bool {
    matches!(provider_type, "server_tool_use" | "mcp_tool_use" | "mcp_call")
}

/// The result of a provider-executed tool.
pub(super) struct ServerResult<'a> {
    pub(super) call_id: &'a str,
    pub(super) output: &'a Value,
    /// The error text, when the tool failed.
    pub(super) error: Option<String>,
}

/// The result a folded part carries for a provider-executed call: an
/// Anthropic `*_tool_result` / `mcp_tool_result` block (`tool_use_id`,
/// `content`; an error when `is_error` or the content's type ends in
/// `_error`), or a Responses `mcp_call` item (`output`, `error`).
pub(super) fn server_result(content: &Value) -> Option<ServerResult<'_>> {
    let kind = content.get("type")?.as_str()?;
    if kind == "mcp_call" {
        let error = content.get("error").filter(|e| !e.is_null()).map(error_text);
        return Some(ServerResult { call_id: "", output: content.get("output").unwrap_or(&Value::Null), error });
    }
    if !kind.ends_with("_tool_result") {
        return None;
    }
    let call_id = content.get("tool_use_id")?.as_str()?;
    let output = content.get("content").unwrap_or(&Value::Null);
    let failed = content.get("is_error") == Some(&Value::Bool(true))
        || output.get("type").and_then(Value::as_str).is_some_and(|t| t.ends_with("_error"));
    let error = failed.then(|| match output.get("error_code").and_then(Value::as_str) {
        Some(code) => code.to_owned(),
        None => error_text(output),
    });
    Some(ServerResult { call_id, output, error })
}

fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A provider-executed tool call that streams as one whole item.
pub(super) struct ServerItem<'a> {
    pub(super) id: &'a str,
    pub(super) name: &'static str,
    pub(super) input: Value,
    pub(super) error: Option<String>,
}

/// A Responses item the provider ran (`web_search_call`,
/// `file_search_call`, `code_interpreter_call`, `image_generation_call`, a
/// `tool_search_call` with `execution: server`): its id, the tool's name,
/// the input as the item states it (the search action, the code, the
/// queries), and an error when its status is `failed`. Its output is the
/// item itself.
pub(super) fn server_item(content: &Value) -> Option<ServerItem<'_>> {
    let pick = |keys: &[&str]| {
        Value::Object(keys.iter().filter_map(|k| Some(((*k).to_owned(), content.get(*k)?.clone()))).collect())
    };
    let (name, input) = match content.get("type")?.as_str()? {
        "web_search_call" => ("web_search", content.get("action").cloned().unwrap_or_else(|| pick(&[]))),
        "file_search_call" => ("file_search", pick(&["queries"])),
        "code_interpreter_call" => ("code_interpreter", pick(&["code", "container_id"])),
        "image_generation_call" => ("image_generation", pick(&[])),
        "tool_search_call" if content.get("execution").and_then(Value::as_str) == Some("server") => {
            ("tool_search", content.get("arguments").cloned().unwrap_or_else(|| pick(&[])))
        }
        _ => return None,
    };
    let id = content.get("id")?.as_str()?;
    let failed = content.get("status").and_then(Value::as_str) == Some("failed");
    let error = failed.then(|| format!("{name} failed"));
    Some(ServerItem { id, name, input, error })
}

/// A ready tool call's input. When the folded part holds its arguments as
/// a JSON string (OpenAI chat `function.arguments`, Responses `arguments`):
/// that text, parsed when it is not valid JSON on one line (`{}` when
/// empty: a call without arguments). When it holds
/// them as a value (Anthropic `input`, Bedrock `toolUse.input`, Gemini
/// `functionCall.args`, Ollama `function.arguments`): the argument text the
/// call streamed (`args`) when that is one line without `\u` escapes (the
/// fold parsed the same bytes into the value, so it is valid JSON of the
/// same value; a `\u` escape may be a lone surrogate the value holds as
/// U+FFFD), else the value written. `null` when the part has neither.
pub(super) fn tool_input<'a>(call: Option<&ToolCall<'a>>, content: &'a Value, args: &'a str) -> ToolInput<'a> {
    // A custom tool's free-text input: a string, or the value when the text
    // is JSON (xAI's server tools send JSON as custom tool input).
    if let Some(call) = call.filter(|c| c.input_format == ToolInputFormat::Text) {
        return match serde_json::from_str(call.arguments) {
            Ok(value) => ToolInput::Owned(value),
            Err(_) => ToolInput::Text(call.arguments),
        };
    }
    // The commonest shapes first (a lookup each: this runs for every call).
    let (value, is_text) = match content.get("input") {
        Some(input) => (Some(input), false),
        None => match content.get("arguments").or_else(|| content.get("function")?.get("arguments")) {
            Some(arguments) => (Some(arguments), true),
            None => {
                let nested = content.get("toolUse").and_then(|t| t.get("input"));
                (nested.or_else(|| content.get("functionCall")?.get("args")), false)
            }
        },
    };
    match value {
        // No arguments at all (a call of a tool without parameters, which
        // the fold counts as complete): an empty object, as a UI shows it.
        Some(Value::String(text)) if is_text && text.trim_ascii().is_empty() => ToolInput::Json("{}"),
        Some(Value::String(text)) if is_text => {
            // Valid JSON on one line is copied as it is (no value built).
            let one_line = memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_none();
            if one_line && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
                return ToolInput::Json(text);
            }
            match serde_json::from_str(text) {
                Ok(value) => ToolInput::Owned(value),
                Err(_) => ToolInput::Text(text),
            }
        }
        Some(value) => {
            let usable = !args.trim_ascii().is_empty()
                && memchr::memchr2(b'\n', b'\r', args.as_bytes()).is_none()
                && memchr::memmem::find(args.as_bytes(), b"\\u").is_none();
            if usable {
                ToolInput::Json(args)
            } else {
                ToolInput::Value(value)
            }
        }
        // A value the fold kept as text (an Anthropic input too large for a
        // tree): the call's arguments, valid JSON, written without building
        // it (line breaks in valid JSON are whitespace between tokens).
        None => {
            match call.filter(|c| c.input_format == ToolInputFormat::Json && !c.arguments.trim_ascii().is_empty()) {
                Some(call) if memchr::memchr2(b'\n', b'\r', call.arguments.as_bytes()).is_none() => {
                    ToolInput::Json(call.arguments)
                }
                Some(call) => ToolInput::JsonLines(call.arguments),
                None => ToolInput::Value(&Value::Null),
            }
        }
    }
}

/// A tool call's input, borrowed from the folded part when it can be.
pub(super) enum ToolInput<'a> {
    Value(&'a Value),
    /// Valid JSON text without line breaks.
    Json(&'a str),
    /// Valid JSON text with line breaks (written without them).
    JsonLines(&'a str),
    /// Arguments that are not JSON: shown as a string.
    Text(&'a str),
    Owned(Value),
}

impl ToolInput<'_> {
    pub(super) fn write(&self, o: &mut JsonObject<'_>, key: &str) {
        match self {
            ToolInput::Value(value) => o.json(key, value),
            ToolInput::Json(json) => o.raw(key, json.as_bytes()),
            ToolInput::JsonLines(json) => {
                let one_line: Vec<u8> = json.bytes().filter(|b| !matches!(b, b'\n' | b'\r')).collect();
                o.raw(key, &one_line)
            }
            ToolInput::Text(text) => o.str(key, text),
            ToolInput::Owned(value) => o.json(key, value),
        };
    }
}
