//! Amazon Bedrock `ConverseStream` bodies in the AWS event-stream binary
//! framing (`application/vnd.amazon.eventstream`), for the event-stream
//! decoder's benchmarks.

use super::{Rng, WORDS};

/// `ConverseStream` turns of about `target_bytes` bytes: per turn a
/// `messageStart`, a text block of 20–120 `contentBlockDelta` messages
/// whose JSON payloads are 100–300 bytes (a few words of text and the `p`
/// padding Bedrock adds), a `contentBlockStop`, then in one turn of three a
/// `toolUse` block whose input arrives in 1–16 KiB `contentBlockDelta`
/// payloads, then `messageStop` and `metadata`. Every message has the
/// `:event-type`, `:content-type` and `:message-type` string headers and
/// valid CRCs.
pub fn bedrock_converse(target_bytes: usize) -> Vec<u8> {
    let mut rng = Rng(0x5353_4546_4f4c_4404);
    let mut out = Vec::with_capacity(target_bytes + (64 << 10));
    while out.len() < target_bytes.max(1) {
        message(&mut out, "messageStart", &with_padding(&mut rng, r#"{"role":"assistant""#, 120));
        for _ in 0..rng.range(20, 120) {
            let mut text = String::new();
            while text.len() < rng.range(3, 40) {
                text.push(' ');
                text.push_str(rng.pick(WORDS));
            }
            let head = format!(r#"{{"contentBlockIndex":0,"delta":{{"text":"{text}"}}"#);
            let size = rng.range(100, 300);
            message(&mut out, "contentBlockDelta", &with_padding(&mut rng, &head, size));
        }
        message(&mut out, "contentBlockStop", &with_padding(&mut rng, r#"{"contentBlockIndex":0"#, 100));
        let tool = rng.one_in(3);
        if tool {
            let start = r#"{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_x","name":"write_file"}}"#;
            message(&mut out, "contentBlockStart", &with_padding(&mut rng, start, 160));
            for _ in 0..rng.range(1, 4) {
                let size = rng.range(1 << 10, 16 << 10);
                let mut input = String::with_capacity(size);
                while input.len() < size {
                    input.push_str(rng.pick(WORDS));
                    input.push_str(if rng.one_in(8) { "\\n" } else { " " });
                }
                let head = format!(r#"{{"contentBlockIndex":1,"delta":{{"toolUse":{{"input":"{input}"}}}}"#);
                message(&mut out, "contentBlockDelta", &with_padding(&mut rng, &head, 0));
            }
            message(&mut out, "contentBlockStop", &with_padding(&mut rng, r#"{"contentBlockIndex":1"#, 100));
        }
        let reason = if tool { "tool_use" } else { "end_turn" };
        message(&mut out, "messageStop", &with_padding(&mut rng, &format!(r#"{{"stopReason":"{reason}""#), 100));
        let metadata =
            r#"{"usage":{"inputTokens":1200,"outputTokens":310,"totalTokens":1510},"metrics":{"latencyMs":2150}"#;
        message(&mut out, "metadata", &with_padding(&mut rng, metadata, 0));
    }
    out
}

/// `head` (an unclosed JSON object) with Bedrock's `p` padding member so the
/// payload is about `size` bytes (at least a short padding), closed.
fn with_padding(rng: &mut Rng, head: &str, size: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let pad = size.saturating_sub(head.len() + 8).max(rng.range(1, 12));
    let p: String = (0..pad).map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize] as char).collect();
    format!(r#"{head},"p":"{p}"}}"#)
}

/// Appends one event-stream message (prelude, CRC, three string headers,
/// the payload, the message CRC).
fn message(out: &mut Vec<u8>, event_type: &str, payload: &str) {
    let mut headers = Vec::new();
    for (name, value) in
        [(":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")]
    {
        headers.push(name.len() as u8);
        headers.extend_from_slice(name.as_bytes());
        headers.push(7);
        headers.extend_from_slice(&(value.len() as u16).to_be_bytes());
        headers.extend_from_slice(value.as_bytes());
    }
    let total = 12 + headers.len() + payload.len() + 4;
    let start = out.len();
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out[start..start + 8]);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&headers);
    out.extend_from_slice(payload.as_bytes());
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message decodes (CRCs, headers) with ssefold's decoder in any
    /// chunking; the payloads are JSON of the documented sizes; the bytes
    /// are the same on every call.
    #[test]
    fn decodes_with_the_documented_shape() {
        let body = bedrock_converse(1 << 20);
        assert!(body.len() >= 1 << 20 && body.len() < (1 << 20) + (256 << 10), "{}", body.len());
        assert_eq!(body, bedrock_converse(1 << 20));
        let mut sizes = Vec::new();
        let mut types = std::collections::BTreeSet::new();
        let mut decoder = ssefold::eventstream::Decoder::new();
        for chunk in body.chunks(4093) {
            decoder
                .feed(chunk, |m| {
                    assert_eq!(m.message_type(), Some("event"));
                    assert_eq!(m.content_type(), Some("application/json"));
                    types.insert(m.event_type().unwrap().to_owned());
                    serde_json::from_slice::<serde_json::Value>(m.payload).unwrap();
                    sizes.push(m.payload.len());
                })
                .unwrap();
        }
        assert_eq!(decoder.finish().discarded_bytes, 0);
        let small = sizes.iter().filter(|&&n| (100..=310).contains(&n)).count();
        let large = sizes.iter().filter(|&&n| n >= 1 << 10).count();
        assert!(small * 10 > sizes.len() * 8, "{small} of {}", sizes.len());
        assert!(large > 10, "{large}");
        let want =
            ["contentBlockDelta", "contentBlockStart", "contentBlockStop", "messageStart", "messageStop", "metadata"];
        assert_eq!(types.iter().map(String::as_str).collect::<Vec<_>>(), want);
    }
}
