//! How a body's bytes become events, behaviour by behaviour (issue 26,
//! items 18 and 19): `auto`'s framing detection with a BOM or blank bytes
//! before the body, the newline-delimited framing's BOM and line ends. Every
//! body is fed whole, in 1-byte chunks and in random chunkings, and must
//! give the same events, message and ending each way.

use crate::prov_common;

use prov_common::{es_message, lcg, run_all, warnings, Run};
use ssefold::providers::{Provider, Stream, StreamConfig};

const OLLAMA: &str = concat!(
    "{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n",
    "{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,",
    "\"done_reason\":\"stop\",\"eval_count\":1}\n",
);

const SSE: &str = concat!(
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n",
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: [DONE]\n\n",
);

const BOM: &str = "\u{feff}";

/// A ConverseStream body: messageStart, one text delta, messageStop.
fn converse() -> Vec<u8> {
    let event = |ty: &str, payload: &str| {
        es_message(
            &[(":event-type", ty), (":content-type", "application/json"), (":message-type", "event")],
            payload.as_bytes(),
        )
    };
    let mut body = event("messageStart", r#"{"role":"assistant"}"#);
    body.extend(event("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#));
    body.extend(event("contentBlockStop", r#"{"contentBlockIndex":0}"#));
    body.extend(event("messageStop", r#"{"stopReason":"end_turn"}"#));
    body
}

fn prefixed(prefix: &str, body: &[u8]) -> Vec<u8> {
    let mut out = prefix.as_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

/// A run with `config`, split at the sizes `sizes` gives, or its ending.
fn run_config(provider: Provider, config: &StreamConfig, bytes: &[u8], sizes: &mut dyn FnMut() -> usize) -> Run {
    prov_common::run_config_with(provider, config, bytes, sizes)
}

/// [`run_config`] whole, byte by byte, and at every split into two.
fn every_way(provider: Provider, config: &StreamConfig, bytes: &[u8]) -> Run {
    let whole = run_config(provider, config, bytes, &mut || usize::MAX);
    assert_eq!(run_config(provider, config, bytes, &mut || 1), whole, "1-byte chunks differ");
    for seed in 0..3 {
        assert_eq!(run_config(provider, config, bytes, &mut lcg(seed, 16)), whole, "chunking {seed} differs");
    }
    for at in 1..bytes.len().min(64) {
        let mut sizes = [at, usize::MAX].into_iter();
        assert_eq!(
            run_config(provider, config, bytes, &mut || sizes.next().unwrap_or(usize::MAX)),
            whole,
            "split {at}"
        );
    }
    whole
}

/// Item 18: blank bytes (and a BOM) before an NDJSON body are allowed: the
/// body folds as it does without them, in every chunking.
#[test]
fn blank_bytes_and_a_bom_before_ndjson_fold_in_every_chunking() {
    let plain = run_all(Provider::Auto, OLLAMA.as_bytes());
    assert_eq!((plain.error.as_deref(), plain.detected), (None, "ollama"));
    for prefix in ["\n", " ", "\r\n", " \t\r\n\n  ", BOM, &format!("{BOM}\n  ")] {
        let body = prefixed(prefix, OLLAMA.as_bytes());
        let run = every_way(Provider::Auto, &StreamConfig::default(), &body);
        assert_eq!(run, plain, "{prefix:?}");
        assert_eq!(run_all(Provider::Ollama, &body), plain, "{prefix:?}, given");
    }
}

/// Item 18: an event-stream body starts with its prelude. Blank bytes or a
/// BOM before it are a framing error (the prelude's CRC fails at offset 0),
/// the same error in every chunking, and the same as with the dialect given.
#[test]
fn blank_bytes_before_an_event_stream_are_a_framing_error_in_every_chunking() {
    let body = converse();
    let plain = run_all(Provider::Auto, &body);
    assert_eq!((plain.error.as_deref(), plain.detected), (None, "bedrock_converse"));
    assert_eq!(plain.message["output"]["message"]["content"][0]["text"], "Hi");
    let long = " ".repeat(100);
    for prefix in ["\n", " ", "\r\n", "\t\t\t\t\t\t\t\t\t\t\t", &long, BOM, &format!("{BOM}\n")] {
        let body = prefixed(prefix, &body);
        let run = every_way(Provider::Auto, &StreamConfig::default(), &body);
        let error = run.error.clone().unwrap_or_default();
        assert!(error.starts_with("EventStream(PreludeCrcMismatch { offset: 0,"), "{prefix:?}: {error}");
        assert!(run.events.is_empty(), "{prefix:?}: {:?}", run.events);
        let given = every_way(Provider::BedrockConverse, &StreamConfig::default(), &body);
        assert_eq!(given.error, run.error, "{prefix:?}: given");
    }
}

/// Item 18: blank bytes and a BOM before an SSE body are the SSE decoder's
/// to read, as with the dialect given.
#[test]
fn blank_bytes_and_a_bom_before_sse_are_read_as_sse() {
    let plain = run_all(Provider::Auto, SSE.as_bytes());
    assert_eq!((plain.error.as_deref(), plain.detected), (None, "openai_chat"));
    for prefix in ["\n", "\r\n\r\n", "\r", BOM, &format!("{BOM}\n\n")] {
        let body = prefixed(prefix, SSE.as_bytes());
        assert_eq!(every_way(Provider::Auto, &StreamConfig::default(), &body), plain, "{prefix:?}");
        assert_eq!(run_all(Provider::OpenAIChat, &body), plain, "{prefix:?}, given");
    }
    // A space before a field name makes another field name, as the SSE
    // rules say: the first event is lost to the SSE decoder, as with the
    // dialect given.
    let body = prefixed(" ", SSE.as_bytes());
    let auto = every_way(Provider::Auto, &StreamConfig::default(), &body);
    let mut given = run_all(Provider::OpenAIChat, &body);
    given.detected = auto.detected;
    assert_eq!(auto, given);
    // A BOM that is not at the very start is line bytes, not stripped.
    let body = prefixed(&format!("\n{BOM}"), SSE.as_bytes());
    assert_eq!(every_way(Provider::Auto, &StreamConfig::default(), &body), run_all(Provider::OpenAIChat, &body));
}

/// Item 18: a blank start longer than the line limit is the limit error of
/// the framing the first deciding byte picks, in every chunking.
#[test]
fn an_overlong_blank_start_is_the_picked_framings_limit_error() {
    let mut config = StreamConfig::default();
    config.sse.max_line_len = 16;
    let blank = " ".repeat(40);
    let ndjson = every_way(Provider::Auto, &config, &prefixed(&blank, b"{}\n"));
    assert_eq!(ndjson.error.as_deref(), Some("LimitExceeded { limit: MaxLineLen, max: 16 }"));
    let sse = every_way(Provider::Auto, &config, &prefixed(&blank, b"data: {}\n\n"));
    assert_eq!(sse.error.as_deref(), Some("Sse(LineTooLong { limit: 16, offset: 0 })"));
    let frames = every_way(Provider::Auto, &config, &prefixed(&blank, &converse()));
    assert!(frames.error.unwrap().starts_with("EventStream(PreludeCrcMismatch { offset: 0,"));
    // Blank only, then the end: SSE's (the default framing's) error.
    let only = every_way(Provider::Auto, &config, blank.as_bytes());
    assert_eq!(only.error.as_deref(), Some("Sse(LineTooLong { limit: 16, offset: 0 })"));
}

/// A body of blank bytes (and a BOM) only is incomplete: no event came.
#[test]
fn a_blank_body_is_incomplete() {
    for body in ["", "\n", " \r\n\t", BOM, &format!("{BOM}\n\n"), "\u{feff}"] {
        let run = every_way(Provider::Auto, &StreamConfig::default(), body.as_bytes());
        assert_eq!(run.error.as_deref(), Some("Incomplete { expected: \"any event\" }"), "{body:?}");
        assert_eq!(run.detected, "auto");
    }
    // The start of a BOM and nothing else.
    let run = every_way(Provider::Auto, &StreamConfig::default(), b"\xef\xbb");
    assert_eq!(run.error.as_deref(), Some("Incomplete { expected: \"any event\" }"));
}

/// A reconnection while the framing is undecided: the new body decides.
#[test]
fn a_reconnection_before_the_framing_is_known_starts_detection_anew() {
    let mut stream = Stream::new(Provider::Auto);
    let mut events = Vec::new();
    stream.feed(b"\n\n  ", |e| events.push(e.to_json())).unwrap();
    stream.reconnect().unwrap();
    stream.feed(&converse(), |e| events.push(e.to_json())).unwrap();
    stream.finish(|e| events.push(e.to_json())).unwrap();
    assert_eq!(stream.provider(), Provider::BedrockConverse);
    assert_eq!(stream.message()["output"]["message"]["content"][0]["text"], "Hi");
}

/// Item 19: a leading BOM on an NDJSON body is stripped (the SSE decoder
/// strips it too), with the dialect given or detected, in every chunking.
#[test]
fn a_bom_before_ndjson_is_stripped() {
    let plain = run_all(Provider::Ollama, OLLAMA.as_bytes());
    let body = prefixed(BOM, OLLAMA.as_bytes());
    assert_eq!(run_all(Provider::Ollama, &body), plain);
    assert_eq!(every_way(Provider::Auto, &StreamConfig::default(), &body), plain);
    assert_eq!(plain.message["message"]["content"], "Hi");
    // Only at the start: a BOM before a later line is that line's bytes.
    let (first, second) = OLLAMA.split_at(OLLAMA.find('\n').unwrap() + 1);
    let late = format!("{first}{BOM}{second}");
    let run = run_all(Provider::Ollama, late.as_bytes());
    assert!(run.error.unwrap().starts_with("InvalidJson"));
}

/// Item 19: a lone CR is not an NDJSON line end (`\n`, or `\r\n`): a body
/// with CR-only line ends is one line of several documents, a typed
/// `InvalidJson` that names the lone CR, whether or not the body ends with
/// a line end, in every chunking.
#[test]
fn cr_only_line_ends_are_a_typed_error_naming_the_lone_cr() {
    let cr = OLLAMA.replace('\n', "\r");
    for body in [cr.clone(), format!("{cr}\n"), cr.trim_end().to_owned()] {
        for p in [Provider::Ollama, Provider::Auto] {
            let run = run_all(p, body.as_bytes());
            let error = run.error.clone().unwrap_or_default();
            assert!(error.starts_with("InvalidJson { event_type: \"line\""), "{p:?} {body:?}: {error}");
            assert!(error.contains("a lone CR is not a line end"), "{error}");
            assert!(!warnings(&run).contains(&"truncated_final_event".to_owned()), "{:?}", run.events);
        }
    }
    // CRLF line ends are line ends.
    let crlf = OLLAMA.replace('\n', "\r\n");
    assert_eq!(run_all(Provider::Ollama, crlf.as_bytes()), run_all(Provider::Ollama, OLLAMA.as_bytes()));
    // A CR inside a line, between tokens, is JSON whitespace.
    let inner = OLLAMA.replace("\"done\":false", "\"done\":\rfalse");
    assert_eq!(run_all(Provider::Ollama, inner.as_bytes()), run_all(Provider::Ollama, OLLAMA.as_bytes()));
}

/// Item 19: the last line without its line end: complete JSON applied,
/// cut JSON discarded (then incomplete), anything else `InvalidJson`.
#[test]
fn the_last_line_without_a_line_end_is_applied_discarded_or_refused() {
    let complete = run_all(Provider::Ollama, OLLAMA.trim_end().as_bytes());
    assert_eq!(complete.error, None);
    assert_eq!(warnings(&complete), ["unterminated_final_event"]);
    let cut = run_all(Provider::Ollama, &OLLAMA.as_bytes()[..OLLAMA.len() - 5]);
    assert_eq!(cut.error.as_deref(), Some("Incomplete { expected: \"done: true\" }"));
    assert_eq!(warnings(&cut), ["truncated_final_event"]);
    let first = &OLLAMA[..OLLAMA.find('\n').unwrap() + 1];
    let garbage = run_all(Provider::Ollama, format!("{first}hello").as_bytes());
    assert!(garbage.error.unwrap().starts_with("InvalidJson { event_type: \"line\""));
}

/// Issue 26 item 21 through a stream: an empty-named header is a header
/// (the body folds); a name repeated in one message is the typed
/// `DuplicateHeader` after the messages before it, in every chunking, with
/// the dialect given or detected.
#[test]
fn event_stream_headers_follow_botocores_rules() {
    let body = converse();
    let first = es_message(
        &[(":event-type", "messageStart"), (":content-type", "application/json"), (":message-type", "event")],
        br#"{"role":"assistant"}"#,
    );
    assert!(body.starts_with(&first));
    let rest = &body[first.len()..];
    let empty = es_message(
        &[
            ("", "x"),
            (":event-type", "messageStart"),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        br#"{"role":"assistant"}"#,
    );
    let folded = run_all(Provider::BedrockConverse, &body);
    let with_empty = [empty.as_slice(), rest].concat();
    assert_eq!(run_all(Provider::BedrockConverse, &with_empty), folded);
    assert_eq!(run_all(Provider::Auto, &with_empty), folded);
    let repeated = es_message(&[(":event-type", "contentBlockDelta"), (":event-type", "contentBlockDelta")], b"{}");
    let broken = [first.as_slice(), &repeated, rest].concat();
    for p in [Provider::BedrockConverse, Provider::Auto] {
        let run = run_all(p, &broken);
        let error = run.error.unwrap();
        assert_eq!(
            error,
            format!("EventStream(DuplicateHeader {{ offset: {}, name: \":event-type\" }})", first.len()),
            "{p:?}"
        );
        assert_eq!(run.events.iter().filter(|e| e["event"] == "message_start").count(), 1);
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// A body start: pieces of a BOM, blanks, and what may follow them.
    fn start() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"\xef\xbb\xbf".to_vec()),
            Just(b"\xef".to_vec()),
            Just(b"\xef\xbb".to_vec()),
            Just(b" ".to_vec()),
            Just(b"\t".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
        ];
        prop::collection::vec(piece, 0..6).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Item 18: whatever BOM and blank bytes come first, and whichever
        /// framing's body follows, `auto` gives the same events, message
        /// and ending for every split, with small line limits too.
        #[test]
        fn auto_is_chunking_invariant_after_any_start(
            start in start(),
            body in 0usize..4,
            cut in prop::collection::vec(1usize..40, 1..8),
            small in any::<bool>(),
        ) {
            let body: Vec<u8> = match body {
                0 => OLLAMA.as_bytes().to_vec(),
                1 => SSE.as_bytes().to_vec(),
                2 => converse(),
                _ => Vec::new(),
            };
            let bytes = [start.as_slice(), &body].concat();
            let mut config = StreamConfig::default();
            if small {
                config.sse.max_line_len = 4;
            }
            let whole = run_config(Provider::Auto, &config, &bytes, &mut || usize::MAX);
            let mut sizes = cut.into_iter().cycle();
            let split = run_config(Provider::Auto, &config, &bytes, &mut || sizes.next().unwrap_or(1));
            prop_assert_eq!(&split, &whole);
            let bytewise = run_config(Provider::Auto, &config, &bytes, &mut || 1);
            prop_assert_eq!(&bytewise, &whole);
        }
    }
}
