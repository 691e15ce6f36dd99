//! Amazon Bedrock's `InvokeModelWithResponseStream` for Anthropic models
//! ([`Provider::Bedrock`]), and the AWS event-stream framing every Bedrock
//! dialect arrives in ([`crate::eventstream`]; the
//! [`Stream`](super::Stream) driver decodes it and hands each message here).
//!
//! Each `chunk` message's payload is `{"bytes": "<base64>"}`, the base64 of
//! one Anthropic event's JSON: it goes through the Anthropic fold, so the
//! events and the folded message are exactly the Anthropic dialect's (the
//! `message_start` event names the provider `bedrock`). The last event
//! (`message_stop`) carries Bedrock's `amazon-bedrock-invocationMetrics`
//! (`inputTokenCount`, `outputTokenCount`, `invocationLatency`,
//! `firstByteLatency`): the folded message keeps them under that key, the
//! one member the Anthropic `Message` does not have.
//!
//! # Event-stream messages
//!
//! | `:message-type` | what the dialect sees |
//! | --- | --- |
//! | `event`, `chunk` | the decoded Anthropic event, named by its `type` |
//! | `event`, any other `:event-type` | the payload (UTF-8 JSON), named by the event type ([`super::bedrock_converse`]'s events) |
//! | `exception` / `error` | an `error` event `{"type": "error", "error": {"type", "message"}}`: a provider error typed by `:exception-type` (`:error-code` for `error`), its message the payload's `message` (`:error-message`); [`crate::reconnect::is_retryable_error_type`] knows which are worth a retry |
//!
//! Recoverable bad input is a warning, the message ignored: a `chunk`
//! payload that is not `{"bytes": base64 of UTF-8 JSON}`, a payload that is
//! not UTF-8, a message without `:event-type`, an unknown `:message-type`
//! (`invalid_event`, quoting the payload). A broken frame (CRC mismatch, bad
//! lengths or headers) is fatal: [`StreamError::EventStream`].

use std::borrow::Cow;

use base64::Engine;
use serde_json::{json, Value};

use super::anthropic::{self, AnthropicFold};
use super::events::{ProviderError, StreamEvent, WarningCode};
use super::fastpath::{is_object, string_members, Cursor, Seen};
use super::raw::{quick_allowed, quick_taken};
use super::turn::{Dialect, DialectInfo, Flow, Part, Turn};
use super::{warn, Provider, Sink, StreamError};
use crate::eventstream::{Decoder as FrameDecoder, DecoderLimits, Message};
use crate::sse::Event;

/// The `InvokeModelWithResponseStream` (Anthropic) dialect. Its events are
/// Anthropic's, so over SSE auto-detection picks [`Provider::Anthropic`]
/// first; an event-stream body whose first event is a `chunk` is this
/// dialect's.
pub(crate) const DIALECT: DialectInfo = DialectInfo {
    provider: Provider::Bedrock,
    name: "bedrock",
    aliases: &["bedrock_invoke", "bedrock_anthropic"],
    detects: anthropic::DIALECT.detects,
    make: || Box::<BedrockFold>::default(),
};

/// The member of the last event that carries Bedrock's invocation metrics.
pub const INVOCATION_METRICS: &str = "amazon-bedrock-invocationMetrics";

/// The Anthropic fold plus Bedrock's invocation metrics.
#[derive(Debug, Default)]
pub(crate) struct BedrockFold {
    inner: AnthropicFold,
    metrics: Option<Value>,
}

impl Dialect for BedrockFold {
    fn provider(&self) -> Provider {
        Provider::Bedrock
    }

    fn terminal(&self) -> &'static str {
        self.inner.terminal()
    }

    fn on_event(&mut self, turn: &mut Turn, event: &Event<'_>, sink: &mut Sink<'_>) -> Result<Flow, StreamError> {
        if event.event() == "message_stop" {
            #[derive(serde::Deserialize)]
            struct Stop {
                #[serde(rename = "amazon-bedrock-invocationMetrics", default)]
                metrics: Option<Value>,
            }
            if let Ok(Stop { metrics: Some(m) }) = serde_json::from_str::<Stop>(event.data()) {
                self.metrics = Some(m);
            }
        }
        self.inner.on_event(turn, event, &mut |e: &StreamEvent<'_>| relabeled(sink, e))
    }

    fn part_content(&mut self, parts: &mut [Part], id: u32) -> Cow<'_, Value> {
        self.inner.part_content(parts, id)
    }

    /// The Anthropic `Message`, with `amazon-bedrock-invocationMetrics`
    /// once the last event brought them.
    fn message(&self, turn: &Turn) -> Value {
        let mut m = self.inner.message(turn);
        if let (Value::Object(o), Some(metrics)) = (&mut m, &self.metrics) {
            o.insert(INVOCATION_METRICS.into(), metrics.clone());
        }
        m
    }

    /// [`message`](Self::message), moved out of the fold.
    fn into_message(self: Box<Self>, turn: &mut Turn) -> Value {
        let BedrockFold { inner, metrics } = *self;
        let mut m = inner.into_message_value(turn);
        if let (Value::Object(o), Some(metrics)) = (&mut m, metrics) {
            o.insert(INVOCATION_METRICS.into(), metrics);
        }
        m
    }

    fn footprint(&self) -> usize {
        self.inner.footprint()
    }

    fn on_turn_end(&mut self, turn: &Turn, sink: &mut Sink<'_>) -> Option<String> {
        self.inner.on_turn_end(turn, &mut |e: &StreamEvent<'_>| relabeled(sink, e))
    }

    fn after_terminal(&self, event: &Event<'_>) -> String {
        self.inner.after_terminal(event)
    }

    fn is_restart(&self, ty: &str, id: Option<&str>) -> bool {
        self.inner.is_restart(ty, id)
    }

    fn start_implicitly(&mut self, turn: &mut Turn, sink: &mut Sink<'_>) {
        self.inner.start_implicitly(turn, &mut |e: &StreamEvent<'_>| relabeled(sink, e));
    }
}

/// Passes `e` on, a `message_start` naming the provider `bedrock`.
fn relabeled(sink: &mut Sink<'_>, e: &StreamEvent<'_>) {
    match *e {
        StreamEvent::MessageStart { message, .. } => {
            sink.event(&StreamEvent::MessageStart { provider: "bedrock", message })
        }
        _ => sink.event(e),
    }
}

/// The event-stream side of a [`Stream`](super::Stream): the frame decoder
/// and the buffer a `chunk`'s base64 is decoded into (reused).
#[derive(Debug, Default)]
pub(crate) struct Frames {
    pub(crate) decoder: FrameDecoder,
    pub(crate) json: Vec<u8>,
}

impl Frames {
    /// Frames decoded within `limits`.
    pub(crate) fn with_limits(limits: DecoderLimits) -> Self {
        Frames { decoder: FrameDecoder::with_limits(limits), json: Vec::new() }
    }

    /// Bytes held: a message split across chunks and the decode buffer.
    pub(crate) fn footprint(&self) -> usize {
        self.decoder.buffered() + self.json.capacity()
    }
}

/// What one event-stream message is to the fold.
pub(crate) enum Framed<'a> {
    /// An event: its name and JSON data; `chunk`: it came base64-wrapped in
    /// a `chunk` message (`InvokeModelWithResponseStream`).
    Event { event: Event<'a>, chunk: bool },
    /// An exception: the `error` event's JSON data.
    Error(String),
    /// Nothing to fold (a warning was emitted).
    Skip,
}

/// The provider error of an exception message's `error` event data (as
/// [`frame_event`] writes it), when no dialect reads it: before any event.
pub(crate) fn exception_error(data: &str) -> ProviderError {
    let body: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    let field = |name: &str| body["error"][name].as_str().unwrap_or_default().to_owned();
    ProviderError { error_type: field("type"), message: field("message"), request_id: None, output_emitted: false }
}

/// Reads one event-stream message (see the module docs).
pub(crate) fn frame_event<'a>(message: &Message<'a>, json: &'a mut Vec<u8>, sink: &mut Sink<'_>) -> Framed<'a> {
    let payload = || String::from_utf8_lossy(message.payload);
    let mtype = message.message_type().unwrap_or("event");
    match mtype {
        "exception" | "error" => {
            let error_type = message
                .exception_type()
                .or_else(|| message.headers.get(":error-code").and_then(|v| v.as_str()))
                .unwrap_or("unknown_exception");
            let body: Value = serde_json::from_slice(message.payload).unwrap_or(Value::Null);
            let detail = body
                .get("message")
                .or_else(|| body.get("Message"))
                .and_then(Value::as_str)
                .or_else(|| message.headers.get(":error-message").and_then(|v| v.as_str()))
                .unwrap_or_default();
            Framed::Error(json!({"type": "error", "error": {"type": error_type, "message": detail}}).to_string())
        }
        "event" => {
            let Some(ty) = message.event_type() else {
                invalid(sink, "event-stream message without :event-type", &payload());
                return Framed::Skip;
            };
            if ty == "chunk" {
                return match decode_chunk(message.payload, json) {
                    Ok((name, data)) => Framed::Event { event: Event::new(name, data, None, None), chunk: true },
                    Err(why) => {
                        invalid(sink, &format!("chunk: {why}"), &payload());
                        Framed::Skip
                    }
                };
            }
            // Checked in one SIMD pass, as the SSE and NDJSON paths check theirs.
            match simdutf8::basic::from_utf8(message.payload) {
                Ok(data) => Framed::Event { event: Event::new(ty, data, None, None), chunk: false },
                Err(_) => {
                    invalid(sink, &format!("{ty}: payload is not UTF-8"), &payload());
                    Framed::Skip
                }
            }
        }
        other => {
            invalid(sink, &format!("unknown :message-type {other:?}"), &payload());
            Framed::Skip
        }
    }
}

/// `text` decoded as standard base64 (padded, no trailing bits) into
/// `out`, cleared first: by SIMD, and on a refusal by `base64` (the same
/// rules: `tests::base64_decodes_as_the_base64_crate`), which says what is
/// wrong.
fn decode_base64(text: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    if base64_simd::STANDARD.decode_append(text, out).is_ok() {
        return Ok(());
    }
    out.clear();
    base64::engine::general_purpose::STANDARD.decode_vec(text, out).map_err(|e| format!("bytes is not base64: {e}"))
}

/// A `chunk` payload's Anthropic event: its `type` and its JSON text.
fn decode_chunk<'a>(payload: &[u8], json: &'a mut Vec<u8>) -> Result<(&'a str, &'a str), String> {
    #[derive(serde::Deserialize)]
    struct Chunk<'a> {
        // (Borrowed unless the string has JSON escapes.)
        #[serde(borrow)]
        bytes: Cow<'a, str>,
    }
    let quick = if quick_allowed() { simdutf8::basic::from_utf8(payload).ok().and_then(quick_chunk) } else { None };
    let chunk: Chunk<'_> = match quick {
        Some(bytes) => Chunk { bytes: Cow::Borrowed(bytes) },
        None => {
            if !is_object(payload) {
                return Err("not {\"bytes\": base64}: not a JSON object".to_owned());
            }
            serde_json::from_slice(payload).map_err(|e| format!("not {{\"bytes\": base64}}: {e}"))?
        }
    };
    decode_base64(chunk.bytes.as_bytes(), json)?;
    let json: &'a Vec<u8> = json;
    let text = simdutf8::basic::from_utf8(json).map_err(|_| "bytes is not UTF-8".to_owned())?;
    if !is_object(json) {
        return Err("not an Anthropic event: not a JSON object".to_owned());
    }
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(rename = "type", borrow)]
        ty: Cow<'a, str>,
    }
    // The hot event, read whole as the Anthropic fold reads it (its type is
    // its first member), else its type wherever it sits.
    if text.starts_with(r#"{"type":"content_block_delta","#)
        && anthropic::quick_delta_event(text).is_some_and(|q| q.reads())
    {
        return Ok(("content_block_delta", text));
    }
    if let Some([Some(name)]) = string_members(text, ["type"]) {
        // The exact bytes, as serde_json would read them.
        return Ok((name, text));
    }
    let head: Head<'_> = serde_json::from_str(text).map_err(|e| format!("not an Anthropic event: {e}"))?;
    // The type names the event: a borrowed name (no escapes), else its
    // owner is the text itself, which only holds escaped names of unknown
    // events: those are named `chunk`.
    let name = match head.ty {
        Cow::Borrowed(s) => s,
        Cow::Owned(_) => "chunk",
    };
    Ok((name, text))
}

/// A `chunk` payload's `bytes` read from the exact bytes Bedrock sends: a
/// compact object whose `bytes` member, named once, is a plain string, its
/// other members (the padding `p`) strings serde_json reads too (strictly:
/// a lone surrogate escape declines). Anything else is `None`, for
/// serde_json (which reads the same `bytes` or refuses the payload).
fn quick_chunk(payload: &str) -> Option<&str> {
    let mut c = Cursor::new(payload);
    let mut seen = Seen::default();
    let mut bytes = None;
    c.object(|key, c| {
        if key == "bytes" {
            seen.first(1)?;
            bytes = Some(c.plain()?);
            return Some(());
        }
        c.strict_string().map(drop)
    })?;
    c.end()?;
    let taken = bytes;
    if taken.is_some() {
        quick_taken();
    }
    taken
}

/// Most bytes of a payload quoted in a warning.
const QUOTE_MAX: usize = 512;

/// The `invalid_event` warning quoting the payload (cut to
/// [`QUOTE_MAX`] bytes).
fn invalid(sink: &mut Sink<'_>, why: &str, payload: &str) {
    let mut end = payload.len().min(QUOTE_MAX);
    while !payload.is_char_boundary(end) {
        end -= 1;
    }
    warn(sink, WarningCode::InvalidEvent, &format!("{why}; ignored: {}", &payload[..end]));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `chunk` message of `payload`.
    fn chunk(payload: &str) -> Vec<u8> {
        let header = |v: &str| v.as_bytes().to_vec();
        let headers = [(":event-type", 7, header("chunk")), (":message-type", 7, header("event"))];
        crate::eventstream::tests::encode(&headers, payload.as_bytes())
    }

    /// The `chunk` payload carrying `event`: `{"bytes": base64, "p": …}`.
    fn wrapped(event: &str) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(event);
        format!(r#"{{"bytes":"{b64}","p":"abcdefgh"}}"#)
    }

    /// The fast paths fold exactly as serde_json: every recorded and
    /// fixture InvokeModel body, and bodies of edge payloads, give the same
    /// events, message and ending with and without them; and they are taken.
    #[test]
    fn fast_paths_fold_as_the_value_path() {
        use crate::providers::raw::tests::{assert_fast_folds_as_slow, bodies_with};
        let mut cases: Vec<(Provider, String, Vec<u8>)> =
            bodies_with(&["tests/recordings/bedrock", "tests/fixtures/bedrock"], &["bin"])
                .into_iter()
                .map(|(name, body)| (Provider::Bedrock, name, body))
                .collect();
        assert!(cases.len() > 10, "{}", cases.len());
        let start = r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#;
        let b64 = |e: &str| base64::engine::general_purpose::STANDARD.encode(e);
        let delta = b64(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}"#);
        let escaped = format!(r#"{{"bytes":"\u00{:x}{}","p":"a"}}"#, delta.as_bytes()[0], &delta[1..]);
        let edges = [
            format!(r#"{{"p":"ab","bytes":"{delta}"}}"#),
            format!(r#"{{"bytes":"{delta}"}}"#),
            format!(r#"{{"bytes":"{delta}","bytes":"{delta}"}}"#),
            format!(r#"{{ "bytes":"{delta}"}}"#),
            format!(r#"{{"bytes":"{delta}","p":5}}"#),
            format!(r#"{{"bytes":"{delta}","p":"\ud800"}}"#),
            format!(r#"{{"bytes":"{delta}","p":"a\nb"}}"#),
            format!(r#"{{"bytes":"{delta}","p":null}}"#),
            escaped,
            format!(r#"["{delta}"]"#),
            r#"{"bytes":"!!"}"#.to_owned(),
            r#"{"bytes":null}"#.to_owned(),
            r#"{"p":"a"}"#.to_owned(),
            wrapped(r#"["content_block_delta"]"#),
            wrapped(
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"y"},"type":"ping"}"#,
            ),
            wrapped(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\u00e9\n"}}"#),
            wrapped(r#"{"type":"content_block_stop","index":0}"#),
            wrapped(
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}"#,
            ),
            wrapped(
                r#"{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":1,"outputTokenCount":2,"invocationLatency":3,"firstByteLatency":4}}"#,
            ),
        ];
        let head = [
            wrapped(start),
            wrapped(r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
        ];
        for n in 1..=edges.len() {
            let body: Vec<u8> = head.iter().chain(&edges[..n]).flat_map(|p| chunk(p)).collect();
            cases.push((Provider::Bedrock, format!("edges [..{n}]"), body));
        }
        let taken = assert_fast_folds_as_slow(&cases);
        assert!(taken > 300, "fast paths taken {taken} times");
    }

    /// Every text of up to six symbols over an alphabet of letters that
    /// end a group with and without trailing bits, the last letters of the
    /// alphabet, padding, a URL-safe letter and a space, and longer texts
    /// built from them: decoded to the same bytes as `base64` decodes
    /// them, or refused as it refuses them.
    #[test]
    fn base64_decodes_as_the_base64_crate() {
        let alphabet = *b"AQBg+/=_ ";
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        let mut last = vec![Vec::new()];
        for _ in 0..6 {
            last = last
                .iter()
                .flat_map(|t: &Vec<u8>| alphabet.iter().map(move |&b| [t.as_slice(), &[b]].concat()))
                .collect();
            texts.extend(last.iter().cloned());
        }
        // Past the SIMD loops' blocks: a long valid text with each of those
        // endings, and with one bad letter at every place.
        let long = base64::engine::general_purpose::STANDARD.encode([0x5au8; 100]);
        for ending in ["", "QQ==", "QR==", "QUE=", "QUF=", "Q===", "QQ", "=QQ="] {
            texts.push(format!("{}{ending}", &long[..long.len() - 4]).into_bytes());
        }
        for at in 0..long.len() {
            let mut t = long.clone().into_bytes();
            t[at] = b'-';
            texts.push(t);
        }
        let mut out = Vec::new();
        for t in &texts {
            let expected = base64::engine::general_purpose::STANDARD.decode(t).ok();
            let got = decode_base64(t, &mut out).ok().map(|()| out.clone());
            assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(t));
        }
    }

    #[test]
    fn chunk_decodes_to_the_anthropic_event() {
        let mut buf = Vec::new();
        let b64 = base64::engine::general_purpose::STANDARD.encode(r#"{"type":"ping"}"#);
        let payload = format!(r#"{{"bytes":"{b64}"}}"#);
        let (name, text) = decode_chunk(payload.as_bytes(), &mut buf).unwrap();
        assert_eq!((name, text), ("ping", r#"{"type":"ping"}"#));
        assert!(decode_chunk(b"{\"bytes\":\"!!\"}", &mut buf).unwrap_err().contains("base64"));
        assert!(decode_chunk(b"[]", &mut buf).is_err());
        // An array of the members in order is no chunk, and no event inside.
        assert!(decode_chunk(format!(r#"["{b64}"]"#).as_bytes(), &mut buf).unwrap_err().contains("not a JSON object"));
        let array = base64::engine::general_purpose::STANDARD.encode(r#"["ping"]"#);
        let payload = format!(r#"{{"bytes":"{array}"}}"#);
        assert!(decode_chunk(payload.as_bytes(), &mut buf).unwrap_err().contains("not an Anthropic event"));
        // A `bytes` string with JSON escapes decodes as its value.
        let escaped = format!(r#" {{"bytes":"\u00{:x}{}"}}"#, b64.as_bytes()[0], &b64[1..]);
        assert_eq!(decode_chunk(escaped.as_bytes(), &mut buf).unwrap(), ("ping", r#"{"type":"ping"}"#));
    }
}
