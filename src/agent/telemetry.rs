//! What a turn reports to OpenTelemetry, named once for every binding after
//! the GenAI semantic conventions (`gen_ai.*`): the span's attributes and the
//! client metrics. A binding's instrumentation (Python's `ssefold.otel`, Go's
//! `ssefoldotel` package in `bindings/go/otel`) creates the span `chat {model}`
//! and records these values as they are; it never reads the provider's
//! message itself.
//!
//! | attribute | value |
//! | --- | --- |
//! | `gen_ai.operation.name` | `chat` |
//! | `gen_ai.provider.name` | `anthropic`, `openai`, `gcp.gemini`, `aws.bedrock`, `ollama` |
//! | `gen_ai.response.id` | the message's id (Anthropic `id`, Chat / Responses `id`, Gemini `responseId`) |
//! | `gen_ai.response.model` | the message's model (`model`, Gemini `modelVersion`) |
//! | `gen_ai.response.finish_reasons` | every choice's stop reason (Chat: each choice's `finish_reason`; others: the one) |
//! | `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` | from the provider's usage |
//! | `error.type` | the failure's kind (`stream`, `transport`, `idle_timeout`, `http`, `too_many_calls`) or `aborted` |
//!
//! | metric | unit | value |
//! | --- | --- | --- |
//! | `gen_ai.client.operation.duration` | `s` | from the first request to the end of the stream |
//! | `gen_ai.client.operation.time_to_first_chunk` | `s` | time to the first content |
//! | `gen_ai.client.token.usage` | `{token}` | input and output tokens (`gen_ai.token.type` `input` / `output`) |
//! | `gen_ai.client.operation.time_per_output_chunk` | `s` | each gap between contents: recorded as the median, the 95th percentile and the largest (with `ssefold.gap.stat`: `median`, `p95`, `max`) |
//!
//! Metrics carry the span's `gen_ai.operation.name`, `gen_ai.provider.name`,
//! `gen_ai.response.model` and `error.type` attributes too.

use serde_json::{json, Map, Value};

use super::TurnOutcome;
use crate::providers::Provider;

/// The `gen_ai.provider.name` of a dialect (`None` for an undetected one).
pub fn provider_name(provider: Provider) -> Option<&'static str> {
    match provider {
        Provider::Anthropic => Some("anthropic"),
        Provider::OpenAIChat | Provider::OpenAIResponses => Some("openai"),
        Provider::Gemini => Some("gcp.gemini"),
        Provider::Bedrock | Provider::BedrockConverse => Some("aws.bedrock"),
        Provider::Ollama => Some("ollama"),
        Provider::Auto => None,
    }
}

impl TurnOutcome {
    /// The span attributes (see the module docs), absent values left out.
    pub fn gen_ai_attributes(&self) -> Map<String, Value> {
        let mut a = Map::new();
        a.insert("gen_ai.operation.name".into(), "chat".into());
        if let Some(name) = provider_name(self.provider) {
            a.insert("gen_ai.provider.name".into(), name.into());
        }
        let m = &self.message;
        let text = |v: Option<&Value>| v.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        let (id, model) = match self.provider {
            Provider::Gemini => (text(m.get("responseId")), text(m.get("modelVersion"))),
            Provider::BedrockConverse => (None, None),
            _ => (text(m.get("id")), text(m.get("model"))),
        };
        if let Some(id) = id {
            a.insert("gen_ai.response.id".into(), id.into());
        }
        if let Some(model) = model {
            a.insert("gen_ai.response.model".into(), model.into());
        }
        let reasons: Vec<Value> = match (self.provider, m.get("choices").and_then(Value::as_array)) {
            (Provider::OpenAIChat, Some(choices)) => {
                choices.iter().filter_map(|c| c.get("finish_reason").and_then(Value::as_str)).map(Value::from).collect()
            }
            _ => self.stop_reason.iter().map(|r| Value::from(r.as_str())).collect(),
        };
        if !reasons.is_empty() {
            a.insert("gen_ai.response.finish_reasons".into(), Value::Array(reasons));
        }
        if let Some(n) = self.timings.input_tokens {
            a.insert("gen_ai.usage.input_tokens".into(), n.into());
        }
        if let Some(n) = self.timings.output_tokens {
            a.insert("gen_ai.usage.output_tokens".into(), n.into());
        }
        if let Some(f) = &self.failure {
            a.insert("error.type".into(), f.kind().into());
        } else if self.aborted {
            a.insert("error.type".into(), "aborted".into());
        }
        a
    }

    /// The client metrics: `[{"name", "unit", "value", "attributes"}]`
    /// (see the module docs), the values there are.
    pub fn gen_ai_metrics(&self) -> Vec<Value> {
        let span = self.gen_ai_attributes();
        let common: Map<String, Value> = span
            .iter()
            .filter(|(k, _)| {
                matches!(
                    k.as_str(),
                    "gen_ai.operation.name" | "gen_ai.provider.name" | "gen_ai.response.model" | "error.type"
                )
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let with = |extra: &[(&str, &str)]| {
            let mut a = common.clone();
            for (k, v) in extra {
                a.insert((*k).into(), (*v).into());
            }
            Value::Object(a)
        };
        let secs = |ms: u64| ms as f64 / 1000.0;
        let t = &self.timings;
        let mut out = Vec::new();
        let mut push = |name: &str, unit: &str, value: Value, attributes: Value| {
            out.push(json!({"name": name, "unit": unit, "value": value, "attributes": attributes}));
        };
        if let Some(ms) = t.duration_ms {
            push("gen_ai.client.operation.duration", "s", secs(ms).into(), with(&[]));
        }
        if let Some(ms) = t.time_to_first_content_ms {
            push("gen_ai.client.operation.time_to_first_chunk", "s", secs(ms).into(), with(&[]));
        }
        if let Some(n) = t.input_tokens {
            push("gen_ai.client.token.usage", "{token}", n.into(), with(&[("gen_ai.token.type", "input")]));
        }
        if let Some(n) = t.output_tokens {
            push("gen_ai.client.token.usage", "{token}", n.into(), with(&[("gen_ai.token.type", "output")]));
        }
        if t.content_gaps.count > 0 {
            for (stat, ms) in
                [("median", t.content_gaps.median_ms), ("p95", t.content_gaps.p95_ms), ("max", t.content_gaps.max_ms)]
            {
                let attributes = with(&[("ssefold.gap.stat", stat)]);
                push("gen_ai.client.operation.time_per_output_chunk", "s", secs(ms).into(), attributes);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AgentTurn, TurnConfig};

    #[test]
    fn a_chat_turn_reports_its_attributes_and_metrics() {
        let body = concat!(
            "data: {\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-x\",\"usage\":null,",
            "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n",
            "data: {\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-x\",\"usage\":null,",
            "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-x\",\"choices\":[],",
            "\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2}}\n\n",
            "data: [DONE]\n\n",
        );
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
        turn.request_sent(0);
        turn.connected(100);
        for (chunk, t) in body.split_inclusive("\n\n").zip([250, 300, 400, 400]) {
            turn.feed(chunk.as_bytes(), t, |_| {});
        }
        let out = turn.outcome();
        let a = Value::Object(out.gen_ai_attributes());
        assert_eq!(
            a,
            json!({"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.response.id": "chatcmpl-9", "gen_ai.response.model": "gpt-x",
                "gen_ai.response.finish_reasons": ["stop"],
                "gen_ai.usage.input_tokens": 4, "gen_ai.usage.output_tokens": 2})
        );
        let metrics = out.gen_ai_metrics();
        let by = |name: &str| metrics.iter().filter(|m| m["name"] == name).collect::<Vec<_>>();
        assert_eq!(by("gen_ai.client.operation.duration")[0]["value"], 0.4);
        assert_eq!(by("gen_ai.client.operation.time_to_first_chunk")[0]["value"], 0.25);
        let tokens = by("gen_ai.client.token.usage");
        assert_eq!(tokens[1]["attributes"]["gen_ai.token.type"], "output");
        assert_eq!(tokens[1]["attributes"]["gen_ai.response.model"], "gpt-x");
        assert_eq!(by("gen_ai.client.operation.time_per_output_chunk").len(), 3);
    }

    #[test]
    fn a_failed_turn_names_its_error_type() {
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::Anthropic));
        turn.http_status(401, Default::default(), 0, |_| {});
        let a = turn.outcome().gen_ai_attributes();
        assert_eq!(a["error.type"], "http");
        assert_eq!(a["gen_ai.provider.name"], "anthropic");
    }
}
