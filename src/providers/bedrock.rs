//! Amazon Bedrock's `InvokeModelWithResponseStream` for Anthropic models:
//! the AWS event-stream framing ([`crate::eventstream`]) around the Anthropic
//! Messages events.
//!
//! Each `chunk` message's payload is `{"bytes": "<base64>"}`, the base64 of
//! one Anthropic event's JSON; [`BedrockStream`] decodes it and feeds it to
//! the Anthropic fold, so the events and the folded message are exactly the
//! Anthropic dialect's. The last event (`message_stop`) carries Bedrock's
//! `amazon-bedrock-invocationMetrics` (token counts, latencies):
//! [`BedrockStream::invocation_metrics`]. An `exception` message
//! (`throttlingException`, `modelStreamErrorException`, …) becomes the
//! stream's typed provider error (`error` event, error type = the exception
//! type; [`crate::reconnect::is_retryable_error_type`] knows which are worth
//! a retry).

use base64::Engine;
use serde_json::{json, Value};

use super::{Provider, Stream, StreamConfig, StreamError, StreamEvent};
use crate::eventstream::{Decoder as FrameDecoder, EndOfStream, EventStreamError, Message};
use crate::sse::Event;

/// A failure of a [`BedrockStream`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BedrockError {
    /// The event-stream framing is broken (fatal).
    #[error("event stream: {0}")]
    Framing(#[from] EventStreamError),
    /// A `chunk` message that is not `{"bytes": base64 of JSON}`.
    #[error("bad chunk: {0}")]
    BadChunk(String),
    /// The Anthropic fold refused an event or the stream was closed.
    #[error(transparent)]
    Stream(#[from] StreamError),
}

/// An `InvokeModelWithResponseStream` body of an Anthropic model, folded.
#[derive(Debug)]
pub struct BedrockStream {
    frames: FrameDecoder,
    stream: Stream,
    /// The decoded base64 of the current chunk (reused).
    json: Vec<u8>,
    metrics: Option<Value>,
}

impl Default for BedrockStream {
    fn default() -> Self {
        Self::new()
    }
}

impl BedrockStream {
    /// A stream with the default [`StreamConfig`].
    pub fn new() -> Self {
        Self::with_config(StreamConfig::default())
    }

    /// A stream with `config` (its limits apply to the decoded events).
    pub fn with_config(config: StreamConfig) -> Self {
        BedrockStream {
            frames: FrameDecoder::new(),
            stream: Stream::with_config(Provider::Anthropic, config),
            json: Vec::new(),
            metrics: None,
        }
    }

    /// Feeds bytes of the HTTP body (`application/vnd.amazon.eventstream`),
    /// calling `on_event` for each normalized event.
    pub fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(&StreamEvent<'_>)) -> Result<(), BedrockError> {
        let BedrockStream { frames, stream, json, metrics } = self;
        let mut failure: Option<BedrockError> = None;
        frames.feed(chunk, |message| {
            if failure.is_none() {
                if let Err(e) = relay_message(&message, stream, json, metrics, &mut on_event) {
                    failure = Some(e);
                }
            }
        })?;
        failure.map_or(Ok(()), Err)
    }

    /// The end of the body: bytes of an unfinished message are reported
    /// (`discarded_bytes`), and the fold ends (an answer without
    /// `message_stop` is incomplete, as for the SSE stream).
    pub fn finish(&mut self, on_event: impl FnMut(&StreamEvent<'_>)) -> Result<EndOfStream, BedrockError> {
        let end = self.frames.finish();
        self.stream.finish(on_event)?;
        Ok(end)
    }

    /// The folded message: the Anthropic Messages response.
    pub fn message(&self) -> Value {
        self.stream.message()
    }

    /// Bytes of an event-stream message not complete yet.
    pub fn pending_bytes(&self) -> usize {
        self.frames.buffered()
    }

    /// The `amazon-bedrock-invocationMetrics` of the last event, once seen.
    pub fn invocation_metrics(&self) -> Option<&Value> {
        self.metrics.as_ref()
    }

    /// The underlying Anthropic stream.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }
}

/// One event-stream message into the fold.
fn relay_message(
    message: &Message<'_>,
    stream: &mut Stream,
    json: &mut Vec<u8>,
    metrics: &mut Option<Value>,
    on_event: &mut impl FnMut(&StreamEvent<'_>),
) -> Result<(), BedrockError> {
    match message.message_type().unwrap_or("event") {
        "exception" | "error" => {
            let error_type = message
                .exception_type()
                .or_else(|| message.headers.get(":error-code").and_then(|v| v.as_str()))
                .unwrap_or("unknown_exception");
            let text: Value = serde_json::from_slice(message.payload).unwrap_or(Value::Null);
            let detail = text
                .get("message")
                .or_else(|| text.get("Message"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| message.headers.get(":error-message").and_then(|v| v.as_str()).map(str::to_owned))
                .unwrap_or_default();
            let data = json!({"type": "error", "error": {"type": error_type, "message": detail}}).to_string();
            stream.feed_sse(&Event::new("error", &data, None, None), on_event)?;
            Ok(())
        }
        _ if message.event_type() == Some("chunk") => {
            #[derive(serde::Deserialize)]
            struct Chunk<'a> {
                #[serde(borrow)]
                bytes: &'a str,
            }
            let chunk: Chunk<'_> =
                serde_json::from_slice(message.payload).map_err(|e| BedrockError::BadChunk(e.to_string()))?;
            json.clear();
            base64::engine::general_purpose::STANDARD
                .decode_vec(chunk.bytes, json)
                .map_err(|e| BedrockError::BadChunk(format!("bytes is not base64: {e}")))?;
            let text = std::str::from_utf8(json).map_err(|_| BedrockError::BadChunk("bytes is not UTF-8".into()))?;
            #[derive(serde::Deserialize)]
            struct Head<'a> {
                #[serde(rename = "type", borrow)]
                ty: &'a str,
                #[serde(rename = "amazon-bedrock-invocationMetrics", default)]
                metrics: Option<Value>,
            }
            let head: Head<'_> = serde_json::from_str(text)
                .map_err(|e| BedrockError::BadChunk(format!("not an Anthropic event: {e}")))?;
            if head.metrics.is_some() {
                *metrics = head.metrics;
            }
            stream.feed_sse(&Event::new(head.ty, text, None, None), on_event)?;
            Ok(())
        }
        // Other events (initial-response, …) carry nothing to fold.
        _ => Ok(()),
    }
}
