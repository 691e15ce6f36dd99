//! Property tests of the SSE decoder on arbitrary SSE-like bytes, run by the
//! normal `cargo test`:
//!
//! * chunking invariance: every chunking of the same bytes gives the same
//!   events, errors, end-of-stream report, last event ID and reconnection
//!   time as feeding them whole (default limits, tiny limits, strict UTF-8),
//!   also for a second stream decoded after `finish` (a reconnection);
//! * no panic, whatever the bytes;
//! * with the default limits and U+FFFD replacement the decoder agrees with
//!   a deliberately naive reference implementation of the WHATWG "event
//!   stream" interpretation written here from the spec.
//!
//! The byte alphabet is SSE-flavoured: CR, LF, CRLF, `:`, space, field names,
//! digits, NUL, the UTF-8 BOM, valid multi-byte characters and invalid UTF-8.

use proptest::prelude::*;
use ssefold::sse::{DecodeError, Decoder, DecoderConfig, EndOfStream, OwnedEvent, Utf8Mode};

const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b":",
    b": ",
    b" ",
    b"data",
    b"data:",
    b"data: ",
    b"event",
    b"event: ",
    b"id",
    b"id: ",
    b"retry",
    b"retry: ",
    b"x",
    b"message",
    b"12",
    b"99999999999999999999999",
    b"\0",
    b"\xEF\xBB\xBF",
    b"\xEF",
    b"\xBB\xBF",
    b"\xC3\xA9",
    b"\xF0\x9F\x99\x82",
    b"\xFF",
    b"\xC3",
    b"\xE2\x82",
    b"\t",
    b"Data",
];

fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..60).prop_map(|t| t.concat())
}

/// Chunk sizes, used in turn (0 means an empty chunk). Sizes past 64 let
/// the decoder's 64-byte LF windows and whole-event path run inside a chunk.
fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![3 => 1usize..8, 1 => 0usize..1, 1 => 8usize..64, 1 => 64usize..400], 1..12)
}

fn configs() -> [DecoderConfig; 4] {
    let tiny = |utf8| DecoderConfig { max_line_len: 8, max_event_size: 12, max_id_len: 3, utf8 };
    [
        DecoderConfig::default(),
        DecoderConfig { utf8: Utf8Mode::Strict, ..DecoderConfig::default() },
        tiny(Utf8Mode::Replace),
        tiny(Utf8Mode::Strict),
    ]
}

/// Everything observable from decoding one stream.
#[derive(Debug, PartialEq)]
struct Outcome {
    items: Vec<Result<OwnedEvent, DecodeError>>,
    end: EndOfStream,
    last_event_id: Option<String>,
    reconnection_time: Option<u64>,
}

/// Splits `input` by cycling through `sizes` (all zeros: empty chunks around
/// the whole input).
fn chunk<'a>(input: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    if sizes.iter().all(|&s| s == 0) {
        return vec![&[], input, &[]];
    }
    let mut out = Vec::new();
    let mut rest = input;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (a, b) = rest.split_at(size.min(rest.len()));
        out.push(a);
        rest = b;
    }
    out
}

fn decode_stream(d: &mut Decoder, chunks: &[&[u8]]) -> Outcome {
    let mut items = Vec::new();
    for c in chunks {
        d.feed_each(c, |r| items.push(r.map(|e| e.to_owned_event())));
    }
    let end = d.finish();
    Outcome {
        items,
        end,
        last_event_id: d.last_event_id().map(str::to_owned),
        reconnection_time: d.reconnection_time(),
    }
}

/// Two streams on one decoder (the second is a reconnection).
fn decode_twice(config: &DecoderConfig, first: &[&[u8]], second: &[&[u8]]) -> (Outcome, Outcome) {
    let mut d = Decoder::with_config(config.clone());
    let a = decode_stream(&mut d, first);
    let b = decode_stream(&mut d, second);
    (a, b)
}

/// A naive decoder of a whole stream, written from the WHATWG spec text
/// (plus this crate's documented extras: `retry` per event, saturating
/// retry values, the end-of-stream report).
fn reference(input: &[u8]) -> Outcome {
    let (body, base) = match input.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (rest, 3),
        None => (input, 0),
    };
    // (line start, line end, end of the terminator), offsets into `body`.
    let mut lines = Vec::new();
    let (mut i, mut start) = (0, 0);
    while i < body.len() {
        match body[i] {
            b'\n' => {
                lines.push((start, i, i + 1));
                i += 1;
                start = i;
            }
            b'\r' => {
                let end = if body.get(i + 1) == Some(&b'\n') { i + 2 } else { i + 1 };
                lines.push((start, i, end));
                i = end;
                start = i;
            }
            _ => i += 1,
        }
    }

    #[derive(Clone, Default)]
    struct State {
        data: Option<Vec<u8>>,
        event_type: Vec<u8>,
        id: Option<String>,
        committed_id: Option<String>,
        block_retry: Option<u64>,
        reconnection: Option<u64>,
    }
    fn field(s: &mut State, line: &[u8]) {
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return,
            Some(c) => (&line[..c], line[c + 1..].strip_prefix(b" ").unwrap_or(&line[c + 1..])),
            None => (line, &b""[..]),
        };
        match name {
            b"data" => match &mut s.data {
                Some(d) => {
                    d.push(b'\n');
                    d.extend_from_slice(value);
                }
                None => s.data = Some(value.to_vec()),
            },
            b"event" => s.event_type = value.to_vec(),
            b"id" if !value.contains(&0) => s.id = Some(String::from_utf8_lossy(value).into_owned()),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value.iter().fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0')));
                s.reconnection = Some(ms);
                s.block_retry = Some(ms);
            }
            _ => {}
        }
    }
    fn event(s: &State) -> Option<OwnedEvent> {
        let data = s.data.as_ref()?;
        let mut event = String::from_utf8_lossy(&s.event_type).into_owned();
        if event.is_empty() {
            event = "message".into();
        }
        Some(OwnedEvent {
            event,
            data: String::from_utf8_lossy(data).into_owned(),
            id: s.id.clone(),
            retry: s.block_retry,
        })
    }

    let mut s = State::default();
    let mut items = Vec::new();
    // A stripped BOM is not part of any block: it is never discarded.
    let mut boundary = base;
    for &(a, b, end) in &lines {
        if a == b {
            s.committed_id.clone_from(&s.id);
            items.extend(event(&s).map(Ok));
            s.data = None;
            s.event_type.clear();
            s.block_retry = None;
            boundary = base + end;
        } else {
            field(&mut s, &body[a..b]);
        }
    }
    let mut partial = s.clone();
    if start < body.len() {
        field(&mut partial, &body[start..]);
    }
    Outcome {
        items,
        end: EndOfStream { discarded_bytes: (input.len() - boundary) as u64, unterminated: event(&partial) },
        last_event_id: s.committed_id,
        reconnection_time: partial.reconnection,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn chunking_does_not_change_anything(input in sse_bytes(), sizes in chunk_sizes(), second in sse_bytes(), sizes2 in chunk_sizes()) {
        for config in configs() {
            let whole = decode_twice(&config, &[&input], &[&second]);
            let chunked = decode_twice(&config, &chunk(&input, &sizes), &chunk(&second, &sizes2));
            prop_assert_eq!(&chunked, &whole, "config {:?}", config);
        }
    }

    #[test]
    fn matches_the_reference_decoder(input in sse_bytes(), sizes in chunk_sizes()) {
        let mut d = Decoder::new();
        let got = decode_stream(&mut d, &chunk(&input, &sizes));
        prop_assert_eq!(got, reference(&input));
    }

    #[test]
    fn arbitrary_bytes_never_panic(input in prop::collection::vec(any::<u8>(), 0..300), sizes in chunk_sizes()) {
        for config in configs() {
            let whole = decode_twice(&config, &[&input], &[]);
            let chunked = decode_twice(&config, &chunk(&input, &sizes), &[]);
            prop_assert_eq!(chunked, whole);
        }
    }
}

/// The reference itself, on hand-checked cases (so a wrong reference cannot
/// silently agree with a wrong decoder).
#[test]
fn reference_decoder_sanity() {
    let r = reference(b"\xEF\xBB\xBFid: 1\nevent: e\ndata: a\ndata:b\r\n\r: c\nretry: 5\ndata\n\ndata: tail");
    let ev = |event: &str, data: &str, id: Option<&str>, retry| OwnedEvent {
        event: event.into(),
        data: data.into(),
        id: id.map(Into::into),
        retry,
    };
    assert_eq!(r.items, vec![Ok(ev("e", "a\nb", Some("1"), None)), Ok(ev("message", "", Some("1"), Some(5)))]);
    assert_eq!(r.end.discarded_bytes, 10);
    assert_eq!(r.end.unterminated, Some(ev("message", "tail", Some("1"), None)));
    assert_eq!(r.last_event_id.as_deref(), Some("1"));
    assert_eq!(r.reconnection_time, Some(5));
    let r = reference(b"data: \xFF\xC3(\n\n");
    assert_eq!(r.items, vec![Ok(ev("message", "\u{FFFD}\u{FFFD}(", None, None))]);
}
