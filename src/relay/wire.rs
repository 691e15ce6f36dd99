//! Normalized events in their JSON form, as the C, Python and Go bindings
//! carry them: [`Relay::push_json`].

use serde_json::{Map, Value};

use super::{Relay, RelayError};
use crate::providers::{
    PartKind, PartOutcome, Provider, ProviderError, StreamEvent, ToolCall, ToolCallStart, ToolInputFormat,
};

/// `null`, for fields an event may leave out.
static NULL: Value = Value::Null;

/// The members of an event object, read with typed errors.
struct Fields<'a>(&'a Map<String, Value>);

impl<'a> Fields<'a> {
    fn str(&self, key: &str) -> Result<&'a str, RelayError> {
        self.opt_str(key)?.ok_or_else(|| invalid(format!("missing string member {key:?}")))
    }

    fn opt_str(&self, key: &str) -> Result<Option<&'a str>, RelayError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(format!("member {key:?} is not a string"))),
        }
    }

    fn u32(&self, key: &str) -> Result<u32, RelayError> {
        self.opt_u32(key)?.ok_or_else(|| invalid(format!("missing integer member {key:?}")))
    }

    fn opt_u32(&self, key: &str) -> Result<Option<u32>, RelayError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| invalid(format!("member {key:?} is not an integer in 0..2^32"))),
        }
    }

    fn opt_bool(&self, key: &str) -> Result<bool, RelayError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(format!("member {key:?} is not a boolean"))),
        }
    }

    fn opt_object(&self, key: &str) -> Result<Option<Fields<'a>>, RelayError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) => Ok(Some(Fields(m))),
            Some(_) => Err(invalid(format!("member {key:?} is not an object"))),
        }
    }

    fn input_format(&self) -> Result<ToolInputFormat, RelayError> {
        match self.opt_str("input_format")? {
            None => Ok(ToolInputFormat::Json),
            Some(name) => {
                ToolInputFormat::from_name(name).ok_or_else(|| invalid(format!("unknown input_format {name:?}")))
            }
        }
    }

    /// A `part_start`'s `tool_call` member.
    fn call_start(&self) -> Result<Option<ToolCallStart<'a>>, RelayError> {
        let Some(c) = self.opt_object("tool_call")? else { return Ok(None) };
        Ok(Some(ToolCallStart {
            id: c.opt_str("id")?,
            name: c.opt_str("name")?,
            input_format: c.input_format()?,
            provider_executed: c.opt_bool("provider_executed")?,
        }))
    }

    /// A `part_end`'s `tool_call` member.
    fn call(&self) -> Result<Option<ToolCall<'a>>, RelayError> {
        let Some(c) = self.opt_object("tool_call")? else { return Ok(None) };
        Ok(Some(ToolCall {
            id: c.str("id")?,
            id_synthesized: c.opt_bool("id_synthesized")?,
            name: c.opt_str("name")?.unwrap_or(""),
            arguments: c.opt_str("arguments")?.unwrap_or(""),
            input_format: c.input_format()?,
            provider_executed: c.opt_bool("provider_executed")?,
        }))
    }

    fn value(&self, key: &str) -> &'a Value {
        self.0.get(key).unwrap_or(&NULL)
    }

    fn kind(&self) -> Result<PartKind, RelayError> {
        match self.str("kind")? {
            "text" => Ok(PartKind::Text),
            "reasoning" => Ok(PartKind::Reasoning),
            "tool_call" => Ok(PartKind::ToolCall),
            "refusal" => Ok(PartKind::Refusal),
            "media" => Ok(PartKind::Media),
            "other" => Ok(PartKind::Other),
            other => Err(invalid(format!("unknown part kind {other:?}"))),
        }
    }
}

fn invalid(message: impl Into<String>) -> RelayError {
    RelayError::InvalidEvent(message.into())
}

impl Relay {
    /// As [`Relay::push`], for an event in its JSON form
    /// ([`StreamEvent::to_json`]: `{"event": name, …}`, or the name under
    /// `type`), the form the
    /// bindings hand over (a `media_delta`'s `data` in base64). Every member
    /// the relay reads is checked; `tool_args_path` and `warning` events
    /// are accepted and give no bytes (the relay shows neither; of `unknown`
    /// events it reads only Responses annotations). Ignored (no bytes)
    /// after [`Relay::finish`], as `push`.
    ///
    /// # Errors
    /// [`RelayError::InvalidEvent`]: not an object, an unknown event name or
    /// part kind, or a member the relay reads missing or of the wrong type.
    /// Nothing is written then.
    pub fn push_json(&mut self, event: &Value) -> Result<&[u8], RelayError> {
        let map = event.as_object().ok_or_else(|| invalid("an event must be a JSON object"))?;
        let f = Fields(map);
        let provider_error;
        let media;
        // The name: `event` (the JSON form of every binding), or `type`
        // (what Python's `to_dict()` wrote before 0.2; still read).
        let name = match f.opt_str("event")? {
            Some(name) => name,
            None => f.str("type")?,
        };
        let e = match name {
            "message_start" => {
                let provider = f.opt_str("provider")?.and_then(Provider::from_name).unwrap_or(Provider::Auto);
                StreamEvent::MessageStart { provider: provider.name(), message: f.value("message") }
            }
            "part_start" => StreamEvent::PartStart {
                part: f.u32("part")?,
                kind: f.kind()?,
                choice: f.opt_u32("choice")?.unwrap_or(0),
                index: f.value("index").as_u64().unwrap_or(0),
                provider_type: f.opt_str("provider_type")?.unwrap_or(""),
                tool_call: f.call_start()?,
            },
            "text_delta" => StreamEvent::TextDelta { part: f.u32("part")?, text: f.str("text")? },
            "tool_args_delta" => StreamEvent::ToolArgsDelta { part: f.u32("part")?, json: f.str("json")? },
            "media_delta" => {
                use base64::Engine;
                let data = f.str("data")?;
                media = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|e| invalid(format!("media_delta data is not base64: {e}")))?;
                StreamEvent::MediaDelta { part: f.u32("part")?, mime_type: f.str("mime_type")?, data: &media }
            }
            "part_metadata" => {
                StreamEvent::PartMetadata { part: f.u32("part")?, key: f.str("key")?, value: f.value("value") }
            }
            "part_end" => {
                let outcome = match f.str("outcome")? {
                    "complete" => PartOutcome::Complete,
                    "incomplete" => PartOutcome::Incomplete,
                    "invalid_arguments" => PartOutcome::InvalidArguments {
                        error: f.opt_str("error")?.unwrap_or(""),
                        raw: f.opt_str("raw")?.unwrap_or(""),
                    },
                    other => return Err(invalid(format!("unknown part outcome {other:?}"))),
                };
                StreamEvent::PartEnd {
                    part: f.u32("part")?,
                    kind: f.kind()?,
                    outcome,
                    content: f.value("content"),
                    tool_call: f.call()?,
                }
            }
            "usage" => StreamEvent::Usage { usage: f.value("usage") },
            "stop_reason" => {
                StreamEvent::StopReason { choice: f.opt_u32("choice")?.unwrap_or(0), reason: f.str("reason")? }
            }
            "turn_end" => StreamEvent::TurnEnd { stop_reason: f.opt_str("stop_reason")? },
            "turn_reset" => StreamEvent::TurnReset,
            "error" => {
                provider_error = ProviderError {
                    error_type: f.opt_str("error_type")?.unwrap_or("").to_owned(),
                    message: f.opt_str("message")?.unwrap_or("").to_owned(),
                    request_id: f.opt_str("request_id")?.map(str::to_owned),
                    output_emitted: f.value("output_emitted").as_bool().unwrap_or(false),
                };
                StreamEvent::Error { error: &provider_error }
            }
            "unknown" => match f.opt_str("provider_type")? {
                Some(provider_type) => StreamEvent::Unknown {
                    scope: if f.opt_str("scope")? == Some("delta") { "delta" } else { "event" },
                    provider_type,
                    data: f.opt_str("data")?.unwrap_or(""),
                },
                // Nothing the relay reads.
                None => {
                    self.writer.replay.begin_call();
                    return Ok(self.writer.replay.output());
                }
            },
            "tool_args_path" | "warning" => {
                self.writer.replay.begin_call();
                return Ok(self.writer.replay.output());
            }
            other => return Err(invalid(format!("unknown event {other:?}"))),
        };
        if let Some(part) = e.part().filter(|&p| p as usize >= self.writer.max_parts) {
            let max = self.writer.max_parts;
            return Err(invalid(format!("part {part} is beyond the relay's max_parts ({max})")));
        }
        Ok(self.push(&e))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::providers::{Provider, Stream};
    use crate::relay::{RelayConfig, RelayFormat};

    /// Relays `body` twice per format, pushing the events and pushing their
    /// JSON form: the same bytes. Returns the shortest output.
    fn relay_both_ways(provider: Provider, body: &[u8]) -> usize {
        let mut shortest = usize::MAX;
        for format in [RelayFormat::AiSdk, RelayFormat::Catalog] {
            let (mut direct, mut via_json) = (Vec::new(), Vec::new());
            let mut a = Relay::new(RelayConfig::new(format));
            let mut b = Relay::new(RelayConfig::new(format));
            let mut on_event = |e: &StreamEvent<'_>| {
                direct.extend_from_slice(a.push(e));
                via_json.extend_from_slice(b.push_json(&e.to_json()).unwrap());
            };
            let mut stream = Stream::new(provider);
            stream.feed(body, &mut on_event).unwrap();
            stream.finish(&mut on_event).unwrap();
            shortest = shortest.min(direct.len());
            assert_eq!(String::from_utf8(via_json).unwrap(), String::from_utf8(direct).unwrap(), "{format:?}");
        }
        shortest
    }

    /// Pushing every event of a stream in its JSON form gives the bytes
    /// pushing the events themselves gives, in both formats.
    #[test]
    fn json_events_relay_like_the_events() {
        assert!(relay_both_ways(Provider::Auto, &ssefold_corpus::anthropic_tool_use(16 << 10)) > 1000);
    }

    /// A stream with media parts (audio with a transcript) relays through
    /// the JSON form as through the events.
    #[test]
    fn media_events_relay_like_the_events() {
        let body =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openai_chat/audio_stream.sse")).unwrap();
        relay_both_ways(Provider::OpenAIChat, &body);
        let inline =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/gemini/inline_data.sse")).unwrap();
        relay_both_ways(Provider::Gemini, &inline);
    }

    /// Citations carried by `unknown` events (Responses annotations) relay
    /// through the JSON form as through the events.
    #[test]
    fn annotations_relay_like_the_events() {
        let body = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/recordings/openai_responses/vercel-ai/openai__responses__openai-web-search-tool.1.sse"
        ))
        .unwrap();
        relay_both_ways(Provider::Auto, &body);
    }

    #[test]
    fn malformed_events_are_typed_errors_and_write_nothing() {
        let mut relay = Relay::new(RelayConfig::new(RelayFormat::AiSdk));
        for bad in [
            json!("text_delta"),
            json!({"part": 0}),
            json!({"event": "no_such_event"}),
            json!({"event": "text_delta", "part": 0}),
            json!({"event": "text_delta", "part": -1, "text": "x"}),
            json!({"event": "text_delta", "part": 0, "text": 5}),
            json!({"event": "part_start", "part": 0, "kind": "video"}),
            json!({"event": "part_end", "part": 0, "kind": "text", "outcome": "maybe"}),
            // Issue 26 item 5: a part index near 2^32 is refused, not allocated for.
            json!({"event": "part_start", "part": 4294967295u32, "kind": "text"}),
            json!({"event": "text_delta", "part": 4096, "text": "x"}),
        ] {
            assert!(matches!(relay.push_json(&bad), Err(RelayError::InvalidEvent(_))), "{bad}");
        }
        assert_eq!(relay.last_event_id(), 0);
        // The typed push of such a part writes nothing and grows nothing.
        let huge = StreamEvent::TextDelta { part: u32::MAX, text: "x" };
        assert_eq!(relay.push(&huge), b"");
        assert!(relay.writer.parts.len() < 8);
        assert_eq!(relay.push_json(&json!({"event": "warning", "code": "x", "message": "y"})).unwrap(), b"");
        let start = json!({"event": "part_start", "part": 0, "kind": "text"});
        assert!(String::from_utf8_lossy(relay.push_json(&start).unwrap()).contains("\"text-start\""));
    }
}
