//! What the fuzz targets check, one function a target (each panics when its
//! property fails), and what they share: a stream folded whole or chunked,
//! the chunk-size cycle a seed picks, AWS event-stream framing. The main
//! crate's `tests/fuzz_regressions.rs` includes this file and replays the
//! committed crashers of `fuzz/regressions/<target>/` through the same
//! functions.
#![allow(dead_code)]

use ssefold::agent::{AgentTurn, TurnAction, TurnConfig, TurnEvent};
use ssefold::eventstream::{Decoder as FrameDecoder, DecoderLimits};
use ssefold::providers::{Provider, Stream, StreamConfig};
use ssefold::sse::{DecodeError, Decoder, DecoderConfig, EndOfStream, OwnedEvent, Utf8Mode};
use ssefold::tools::{SchedulerConfig, ToolOptions};

/// Every normalized event (JSON form), the folded message, and how the
/// stream ended (`ok` or the first error; `finish` only when no feed
/// failed).
pub fn fold(
    provider: Provider,
    config: &StreamConfig,
    chunks: &[&[u8]],
) -> (Vec<serde_json::Value>, serde_json::Value, String) {
    let mut s = Stream::with_config(provider, config.clone());
    let mut events = Vec::new();
    let mut end = String::from("ok");
    for c in chunks {
        if let Err(e) = s.feed(c, |e| events.push(e.to_json())) {
            end = format!("{e:?}");
            break;
        }
    }
    if end == "ok" {
        if let Err(e) = s.finish(|e| events.push(e.to_json())) {
            end = format!("{e:?}");
        }
    }
    (events, s.message(), end)
}

/// `body` cut into pieces of 1 to 13 bytes, in a cycle `seed` shifts.
pub fn chunked(body: &[u8], seed: usize) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let (mut pos, mut i) = (0, 0);
    while pos < body.len() {
        let n = (1 + (seed + i * 7) % 13).min(body.len() - pos);
        chunks.push(&body[pos..pos + n]);
        pos += n;
        i += 1;
    }
    chunks
}

/// The dialect byte 0 of `providers` and `agent_turn` picks: bits 0–1
/// Anthropic, OpenAI Chat, OpenAI Responses, auto; with bit 3 set Gemini,
/// Ollama, Gemini, Ollama.
fn dialect_of(flags: u8) -> Provider {
    const DIALECTS: [Provider; 8] = [
        Provider::Anthropic,
        Provider::OpenAIChat,
        Provider::OpenAIResponses,
        Provider::Auto,
        Provider::Gemini,
        Provider::Ollama,
        Provider::Gemini,
        Provider::Ollama,
    ];
    DIALECTS[((flags & 3) | (flags >> 1 & 4)) as usize]
}

/// Target `providers`: byte 0 picks the dialect (bits 0–1: Anthropic,
/// OpenAI Chat, OpenAI Responses, auto; with bit 3 set: Gemini, Ollama,
/// Gemini, Ollama) and small or default limits (bit 2), byte 1 the
/// chunk-size cycle seed, the rest is the stream. Same events, message and
/// result whole and chunked.
pub fn check_providers(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let provider = dialect_of(data[0]);
    let mut config = StreamConfig::default();
    if data[0] & 4 != 0 {
        config.max_parts = 3;
        config.max_tool_args_bytes = 64;
        config.max_text_bytes = 64;
        config.max_choices = 2;
    }
    let seed = data[1] as usize;
    let body = &data[2..];
    let whole = fold(provider, &config, &[body]);
    assert_eq!(whole, fold(provider, &config, &chunked(body, seed)));
}

/// Target `agent_turn`: the sans-IO agent turn over a provider stream.
/// Byte 0 picks the dialect as for `providers` (bits 0–1 and 3) and the
/// turn's settings: bit 2 small stream limits and at most 2 calls running
/// at once, bit 4 no reconnection policy, bit 5 every tool exclusive, bit 6
/// every tool aborting its siblings on an error; byte 1 the chunk-size
/// cycle seed; the rest is the body. The host answers no call while the
/// body streams, then each started call in order (every third one an
/// error). Whole and chunked, no panic and the same stream events, the same
/// tool execution events, the same actions and the same outcome (message,
/// stop reason, failure, calls, results, the next request), and
/// `into_outcome` equal to `outcome` in both. The tool
/// events are compared as their own sequence: the turn shows them after
/// the stream events of the same feed, so where they fall among those
/// depends on where the chunks end.
pub fn check_agent_turn(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    check_agent_turn_as(dialect_of(data[0]), data[0], data[1] as usize, &data[2..]);
}

/// [`check_agent_turn`]'s property for `body` in the dialect `provider`
/// (any of the seven), the settings of `flags` (its dialect bits unused)
/// and the chunk-size cycle `seed`.
pub fn check_agent_turn_as(provider: Provider, flags: u8, seed: usize, body: &[u8]) {
    let whole = run_turn(provider, flags, &[body]);
    let split = run_turn(provider, flags, &chunked(body, seed));
    for (what, whole, split) in [
        ("stream event", &whole.0, &split.0),
        ("tool event", &whole.1, &split.1),
        ("action or outcome", &whole.2, &split.2),
    ] {
        if let Some(i) = (0..whole.len().max(split.len())).find(|&i| whole.get(i) != split.get(i)) {
            panic!("{what} {i} of {}: whole {:?}, chunked {:?}", whole.len(), whole.get(i), split.get(i));
        }
    }
}

/// Tool names the recordings' and fixtures' calls use (a call of any other
/// name is unknown to the turn: an error result, never started).
const TURN_TOOLS: [&str; 8] =
    ["get_weather", "get_current_weather", "search", "read", "write_file", "calculator", "bash", "lookup"];

/// What one turn driven as [`check_agent_turn`] says showed (stream
/// events; tool events) and decided (actions, the host's calls' answers,
/// the outcome), as text.
type TurnLog = (Vec<String>, Vec<String>, Vec<String>);

fn run_turn(provider: Provider, flags: u8, chunks: &[&[u8]]) -> TurnLog {
    let mut config = TurnConfig::new(provider);
    if flags & 4 != 0 {
        config.stream.max_parts = 4;
        config.stream.max_tool_args_bytes = 64;
        config.stream.max_text_bytes = 64;
        config.stream.max_choices = 2;
        config.scheduler = SchedulerConfig { max_concurrency: 2, max_calls: 3 };
    }
    if flags & 16 != 0 {
        config.reconnect = None;
    }
    let mut turn = AgentTurn::new(config);
    for name in TURN_TOOLS {
        turn.add_tool(name, ToolOptions::new(flags & 32 != 0, flags & 64 != 0));
    }
    let (mut events, mut tools, mut log) = (Vec::new(), Vec::new(), Vec::new());
    let mut started = std::collections::VecDeque::new();
    fn shown<'a>(events: &'a mut Vec<String>, tools: &'a mut Vec<String>) -> impl FnMut(TurnEvent<'_>) + 'a {
        move |e| match e {
            TurnEvent::Stream(s) => events.push(s.to_json().to_string()),
            TurnEvent::Tool(t) => tools.push(t.to_json().to_string()),
            _ => tools.push(String::from("?")),
        }
    }
    fn drain(turn: &mut AgentTurn, log: &mut Vec<String>, started: &mut std::collections::VecDeque<String>) {
        while let Some(action) = turn.poll_action() {
            if let TurnAction::StartTool(call) = &action {
                started.push_back(call.call_id.clone());
            }
            log.push(format!("{action:?}"));
        }
    }
    for c in chunks {
        turn.feed(c, 0, shown(&mut events, &mut tools));
        drain(&mut turn, &mut log, &mut started);
    }
    turn.end_of_body(0, shown(&mut events, &mut tools));
    drain(&mut turn, &mut log, &mut started);
    let mut answered = 0;
    while let Some(id) = started.pop_front() {
        answered += 1;
        let result = turn.tool_result(&id, "ok", answered % 3 == 0, shown(&mut events, &mut tools));
        log.push(format!("{id}: {result:?}"));
        drain(&mut turn, &mut log, &mut started);
    }
    let out = turn.outcome();
    log.push(format!("finished {} ended {} running {}", turn.is_finished(), turn.is_stream_ended(), turn.running()));
    log.push(format!("{:?} {} {:?} {}", out.provider, out.message, out.stop_reason, out.aborted));
    log.push(format!("{:?} {:?} {}", out.failure, out.gave_up, out.output_started));
    log.push(format!("{:?}", out.calls));
    log.push(format!("{:?}", out.results));
    log.push(format!("{:?}", out.next().map(|n| n.append())));
    // The consuming form moves what `outcome` copies: the same outcome.
    assert_eq!(format!("{:?}", turn.into_outcome()), format!("{out:?}"), "into_outcome differs from outcome");
    (events, tools, log)
}

/// One AWS event-stream message framed with correct lengths and CRCs
/// around `headers` (taken as the raw headers section, valid or not) and
/// `payload`.
pub fn frame(headers: &[u8], payload: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    let total = (12 + headers.len() + payload.len() + 4) as u32;
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// One event-stream header: `name`, type `kind`, `value` (a length is
/// written before a bytes or string value).
pub fn header(name: &str, kind: u8, value: &[u8], out: &mut Vec<u8>) {
    out.push(name.len() as u8);
    out.extend_from_slice(name.as_bytes());
    out.push(kind);
    if kind == 6 || kind == 7 {
        out.extend_from_slice(&(value.len() as u16).to_be_bytes());
    }
    out.extend_from_slice(value);
}

/// The records `[headers length: u8][headers][payload length: u16 LE][payload]`
/// of `body` framed; what does not form a whole record, raw.
fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some((&hlen, tail)) = rest.split_first() {
        let hlen = hlen as usize;
        if tail.len() < hlen + 2 {
            break;
        }
        let (headers, tail) = tail.split_at(hlen);
        let plen = u16::from_le_bytes([tail[0], tail[1]]) as usize;
        let tail = &tail[2..];
        if tail.len() < plen {
            break;
        }
        let (payload, tail) = tail.split_at(plen);
        frame(headers, payload, &mut out);
        rest = tail;
    }
    out.extend_from_slice(rest);
    out
}

/// Every message as (headers, payload) in debug form, then the error or
/// the bytes left at the end.
fn decode_frames(limits: DecoderLimits, chunks: &[&[u8]]) -> (Vec<String>, String) {
    let mut decoder = FrameDecoder::with_limits(limits);
    let mut messages = Vec::new();
    for c in chunks {
        let fed = decoder.feed(c, |m| {
            let headers: Vec<_> = m.headers.iter().collect();
            messages.push(format!("{headers:?} {:?}", m.payload));
        });
        if let Err(e) = fed {
            return (messages, format!("{e:?}"));
        }
    }
    (messages, format!("{:?}", decoder.finish()))
}

/// Target `eventstream`: byte 0 holds flags — bit 0: the rest is a list of
/// records framed with correct lengths and CRCs ([`framed`]); bit 1: fold
/// through a `Stream` instead of listing the messages, bits 3–4 picking its
/// dialect (Bedrock InvokeModel, ConverseStream, auto, auto); bit 2: small
/// limits. Byte 1 seeds the chunk-size cycle. Same messages (or events,
/// message and result) whole and chunked.
pub fn check_eventstream(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let flags = data[0];
    let seed = data[1] as usize;
    let body = if flags & 1 != 0 { framed(&data[2..]) } else { data[2..].to_vec() };
    let chunks = chunked(&body, seed);
    let small = flags & 4 != 0;
    if flags & 2 != 0 {
        let mut config = StreamConfig::default();
        if small {
            config.max_parts = 3;
            config.max_tool_args_bytes = 64;
            config.max_text_bytes = 64;
        }
        let provider =
            [Provider::Bedrock, Provider::BedrockConverse, Provider::Auto, Provider::Auto][(flags >> 3 & 3) as usize];
        assert_eq!(fold(provider, &config, &[&body]), fold(provider, &config, &chunks));
    } else {
        let limits =
            if small { DecoderLimits { max_message_len: 256, max_headers_len: 64 } } else { DecoderLimits::default() };
        assert_eq!(decode_frames(limits, &[&body]), decode_frames(limits, &chunks));
    }
}

/// The body of a `bedrock_records` input (see [`check_bedrock_records`]):
/// Bedrock event-stream messages built from the records, with the start
/// the flags ask for before them.
pub fn bedrock_body(flags: u8, records: &[u8]) -> Vec<u8> {
    use base64::Engine as _;
    let mut out = match flags >> 3 & 7 {
        7 => b"\n".to_vec(),
        6 => "\u{feff}".as_bytes().to_vec(),
        _ => Vec::new(),
    };
    let mut rest = records;
    while let Some((&selector, tail)) = rest.split_first() {
        let (len, tail) = match tail {
            [a, b, tail @ ..] => (u16::from_le_bytes([*a, *b]) as usize, tail),
            _ => (tail.len(), &[][..]),
        };
        let (payload, tail) = tail.split_at(len.min(tail.len()));
        rest = tail;
        let mut headers = Vec::new();
        let mut body = payload.to_vec();
        let event = |ty: &str, h: &mut Vec<u8>| {
            header(":event-type", 7, ty.as_bytes(), h);
            header(":message-type", 7, b"event", h);
        };
        let exception = |ty: &str, h: &mut Vec<u8>| {
            header(":exception-type", 7, ty.as_bytes(), h);
            header(":message-type", 7, b"exception", h);
        };
        match selector & 15 {
            0 => {
                event("chunk", &mut headers);
                let b64 = base64::engine::general_purpose::STANDARD.encode(payload);
                body = format!("{{\"bytes\":\"{b64}\"}}").into_bytes();
            }
            1 => event("chunk", &mut headers),
            2 => event("messageStart", &mut headers),
            3 => event("contentBlockStart", &mut headers),
            4 => event("contentBlockDelta", &mut headers),
            5 => event("contentBlockStop", &mut headers),
            6 => event("messageStop", &mut headers),
            7 => event("metadata", &mut headers),
            8 => exception("throttlingException", &mut headers),
            9 => exception("modelStreamErrorException", &mut headers),
            10 => exception("validationException", &mut headers),
            11 => {
                header(":error-code", 7, b"InternalFailure", &mut headers);
                header(":error-message", 7, &payload[..payload.len().min(64)], &mut headers);
                header(":message-type", 7, b"error", &mut headers);
            }
            12 => event("initial-response", &mut headers),
            13 => event("futureEvent", &mut headers),
            14 => {
                // Raw headers: the payload's first byte is their length.
                let (&n, tail) = payload.split_first().unwrap_or((&0, &[]));
                let (h, b) = tail.split_at((n as usize).min(tail.len()));
                headers = h.to_vec();
                body = b.to_vec();
            }
            _ => header(":event-type", 7, b"contentBlockDelta", &mut headers),
        }
        if selector & 16 == 0 {
            header(":content-type", 7, b"application/json", &mut headers);
        }
        if selector & 32 != 0 && selector & 15 != 14 {
            header(":message-type", 7, b"event", &mut headers);
        }
        if selector & 64 != 0 {
            header("", 0, &[], &mut headers);
        }
        frame(&headers, &body, &mut out);
        if selector & 128 != 0 && selector & 64 != 0 {
            // The message CRC's last byte.
            let last = out.len() - 1;
            out[last] ^= 1;
        }
    }
    out
}

/// Target `bedrock_records`: framed Bedrock records through a `Stream`.
/// Byte 0: bits 0–1 the dialect (Bedrock InvokeModel, ConverseStream, auto,
/// auto), bit 2 small limits, bits 3–5 what comes before the first message
/// (7: a newline, 6: a BOM, else nothing); byte 1 seeds the chunk-size
/// cycle; byte 2 picks a split into two pieces. The rest is records
/// `[selector u8][payload length u16 LE][payload]` ([`bedrock_body`]: the
/// selector's bits 0–3 pick the message — a `chunk` wrapping the payload in
/// base64 or as is, a ConverseStream event, an exception, an error, an
/// unknown event, raw headers —, bit 4 drops `:content-type`, bit 5 repeats
/// `:message-type`, bit 6 adds an empty-named header, bits 6 and 7 together
/// break the message CRC). Same events, folded message and ending whole,
/// in the cycle's chunks, in two pieces and byte by byte.
pub fn check_bedrock_records(data: &[u8]) {
    if data.len() < 3 {
        return;
    }
    let flags = data[0];
    let provider = [Provider::Bedrock, Provider::BedrockConverse, Provider::Auto, Provider::Auto][(flags & 3) as usize];
    let mut config = StreamConfig::default();
    if flags & 4 != 0 {
        config.max_parts = 3;
        config.max_tool_args_bytes = 64;
        config.max_text_bytes = 64;
        config.event_stream = DecoderLimits { max_message_len: 512, max_headers_len: 128 };
    }
    let body = bedrock_body(flags, &data[3..]);
    let whole = fold(provider, &config, &[&body]);
    assert_eq!(whole, fold(provider, &config, &chunked(&body, data[1] as usize)), "chunked");
    let at = body.len() * data[2] as usize / 256;
    assert_eq!(whole, fold(provider, &config, &[&body[..at], &body[at..]]), "split at {at}");
    if body.len() <= 2048 {
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(whole, fold(provider, &config, &bytes), "byte by byte");
    }
}

#[derive(Debug, PartialEq)]
struct Outcome {
    items: Vec<Result<OwnedEvent, DecodeError>>,
    end: EndOfStream,
    last_event_id: Option<String>,
    reconnection_time: Option<u64>,
}

fn decode_sse(d: &mut Decoder, chunks: &[&[u8]], bound: usize) -> Outcome {
    let mut items = Vec::new();
    for c in chunks {
        d.feed_each(c, |r| items.push(r.map(|e| e.to_owned_event())));
        assert!(d.memory_footprint() <= bound, "footprint {} > {bound}", d.memory_footprint());
    }
    let end = d.finish();
    Outcome {
        items,
        end,
        last_event_id: d.last_event_id().map(str::to_owned),
        reconnection_time: d.reconnection_time(),
    }
}

/// Target `sse_decode`: byte 0 picks the configuration (default limits or
/// tiny ones, so the limit paths are hit; replacement or strict UTF-8),
/// bytes 1..=4 are the chunking seed (a cycle of chunk sizes 0..=31), the
/// rest is the stream. The stream is decoded twice on one decoder (a
/// reconnection after `finish`), whole and chunked: same events, errors
/// and end-of-stream report, memory within the limits.
pub fn check_sse_decode(input: &[u8]) {
    if input.len() < 5 {
        return;
    }
    let (head, body) = input.split_at(5);
    let utf8 = if head[0] & 1 == 0 { Utf8Mode::Replace } else { Utf8Mode::Strict };
    let config = match head[0] >> 1 & 3 {
        0 => DecoderConfig { utf8, ..DecoderConfig::default() },
        1 => DecoderConfig { max_line_len: 64, max_event_size: 64, max_id_len: 16, utf8 },
        2 => DecoderConfig { max_line_len: 64, max_event_size: 200, max_id_len: 64, utf8 },
        _ => DecoderConfig { max_line_len: 7, max_event_size: 5, max_id_len: 2, utf8 },
    };
    // Within the limits: each buffer may be over-allocated by growth (x2)
    // and U+FFFD replacement may triple its bytes.
    let bound = if config.max_line_len < 1 << 20 {
        core::mem::size_of::<Decoder>() + 16 * (config.max_line_len + config.max_event_size) + 256
    } else {
        usize::MAX
    };

    let sizes: Vec<usize> = head[1..].iter().map(|b| usize::from(b % 32)).collect();
    let mut chunks = Vec::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let size = sizes[i % sizes.len()];
        i += 1;
        // All-zero seeds still make progress: every fifth empty chunk, take one byte.
        let size = if size == 0 && i % 5 == 0 { 1 } else { size };
        let (a, b) = rest.split_at(size.min(rest.len()));
        chunks.push(a);
        rest = b;
    }

    let mut whole = Decoder::with_config(config.clone());
    let expected = (decode_sse(&mut whole, &[body], bound), decode_sse(&mut whole, &[body], bound));
    let mut chunked = Decoder::with_config(config);
    let got = (decode_sse(&mut chunked, &chunks, bound), decode_sse(&mut chunked, &chunks, bound));
    assert_eq!(got, expected);
}
