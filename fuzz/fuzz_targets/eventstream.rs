//! Fuzz target `eventstream`: the AWS event-stream decoder, and the Bedrock
//! dialects on top of it, never panic and give the same messages (events,
//! folded message, result) for every chunking of the same bytes.
//!
//! Input layout: byte 0 holds flags — bit 0: the rest is a list of records
//! `[headers length: u8][headers][payload length: u16 LE][payload]`, each
//! framed with correct lengths and CRCs (so the fuzzer gets past the CRCs to
//! the headers and payloads; a trailing partial record is appended raw);
//! bit 1: fold through a `Stream` instead of listing the messages, bits 3–4
//! picking its dialect (Bedrock InvokeModel, ConverseStream, auto, auto);
//! bit 2: small limits. Byte 1 seeds the chunk-size cycle.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use ssefold::eventstream::{Decoder, DecoderLimits};
use ssefold::providers::{Provider, StreamConfig};

/// One message framed with correct lengths and CRCs around `headers` (taken
/// as the raw headers section, valid or not) and `payload`.
fn frame(headers: &[u8], payload: &[u8], out: &mut Vec<u8>) {
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

/// The records of `body` framed; what does not form a whole record, raw.
fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let Some((&hlen, tail)) = rest.split_first() else { break };
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
fn decode(limits: DecoderLimits, chunks: &[&[u8]]) -> (Vec<String>, String) {
    let mut decoder = Decoder::with_limits(limits);
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

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let flags = data[0];
    let seed = data[1] as usize;
    let body = if flags & 1 != 0 { framed(&data[2..]) } else { data[2..].to_vec() };
    let chunks = common::chunked(&body, seed);
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
        assert_eq!(common::fold(provider, &config, &[&body]), common::fold(provider, &config, &chunks));
    } else {
        let limits =
            if small { DecoderLimits { max_message_len: 256, max_headers_len: 64 } } else { DecoderLimits::default() };
        assert_eq!(decode(limits, &[&body]), decode(limits, &chunks));
    }
});
