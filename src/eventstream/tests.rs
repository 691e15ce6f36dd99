//! The framing, its limits and errors, any chunking.

use proptest::prelude::*;

use super::*;

/// Test-side encoder of one message (header values as (type, raw bytes)).
pub(crate) fn encode(headers: &[(&str, u8, Vec<u8>)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (name, kind, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(*kind);
        if *kind == 6 || *kind == 7 {
            h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        }
        h.extend_from_slice(value);
    }
    let total = (12 + h.len() + payload.len() + 4) as u32;
    let mut m = Vec::new();
    m.extend_from_slice(&total.to_be_bytes());
    m.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&m);
    m.extend_from_slice(&prelude_crc.to_be_bytes());
    m.extend_from_slice(&h);
    m.extend_from_slice(payload);
    let crc = crc32fast::hash(&m);
    m.extend_from_slice(&crc.to_be_bytes());
    m
}

fn string(name: &str, value: &str) -> (&'static str, u8, Vec<u8>) {
    (Box::leak(name.to_owned().into_boxed_str()), 7, value.as_bytes().to_vec())
}

/// (event type, payload) of a message.
type Decoded = (Option<String>, Vec<u8>);

/// Every message of `bytes` fed in chunks of `n`, the result, the end.
fn decode(bytes: &[u8], n: usize) -> (Vec<Decoded>, Result<(), EventStreamError>, EndOfStream) {
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    let mut result = Ok(());
    for chunk in bytes.chunks(n.max(1)) {
        result = decoder.feed(chunk, |m| out.push((m.event_type().map(str::to_owned), m.payload.to_vec())));
        if result.is_err() {
            break;
        }
    }
    (out, result, decoder.finish())
}

#[test]
fn the_empty_message_vector_of_the_aws_test_suite() {
    let empty = [0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98, 0xc8, 0xff];
    assert_eq!(encode(&[], b""), empty);
    let (messages, result, end) = decode(&empty, 16);
    assert_eq!(result, Ok(()));
    assert_eq!(messages, [(None, vec![])]);
    assert_eq!(end.discarded_bytes, 0);
}

#[test]
fn every_header_type_decodes() {
    let uuid: Vec<u8> = (0..16).collect();
    let message = encode(
        &[
            ("t", 0, vec![]),
            ("f", 1, vec![]),
            ("b", 2, vec![0xff]),
            ("s", 3, vec![0x80, 0x00]),
            ("i", 4, 7i32.to_be_bytes().to_vec()),
            ("l", 5, (-2i64).to_be_bytes().to_vec()),
            ("y", 6, vec![1, 2, 3]),
            string(":event-type", "chunk"),
            ("ts", 8, 1_700_000_000_000i64.to_be_bytes().to_vec()),
            ("u", 9, uuid.clone()),
        ],
        b"{\"bytes\":\"e30=\"}",
    );
    let mut decoder = Decoder::new();
    let mut seen = Vec::new();
    decoder
        .feed(&message, |m| {
            seen = m.headers.iter().map(|(n, v)| format!("{n}={v:?}")).collect();
            assert_eq!(m.event_type(), Some("chunk"));
            assert_eq!(m.payload, b"{\"bytes\":\"e30=\"}");
            assert_eq!(m.headers.get("u"), Some(HeaderValue::Uuid(uuid.as_slice().try_into().unwrap())));
        })
        .unwrap();
    assert_eq!(
        seen,
        [
            "t=Bool(true)",
            "f=Bool(false)",
            "b=Byte(-1)",
            "s=Short(-32768)",
            "i=Int(7)",
            "l=Long(-2)",
            "y=Bytes([1, 2, 3])",
            ":event-type=String(\"chunk\")",
            "ts=Timestamp(1700000000000)",
            "u=Uuid([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])"
        ]
    );
}

#[test]
fn corrupt_crcs_lengths_and_headers_are_typed_errors_and_fatal() {
    let good = encode(&[string(":event-type", "chunk")], b"payload");
    let mut prelude = good.clone();
    prelude[3] ^= 1;
    assert!(matches!(decode(&prelude, 99).1, Err(EventStreamError::PreludeCrcMismatch { offset: 0, .. })));
    let mut body = good.clone();
    body[20] ^= 1;
    let mut two = good.clone();
    two.extend_from_slice(&body);
    let (messages, result, _) = decode(&two, 5);
    assert_eq!(messages.len(), 1, "the message before the bad one is delivered");
    assert!(matches!(result, Err(EventStreamError::MessageCrcMismatch { offset, .. }) if offset == good.len() as u64));

    let mut decoder = Decoder::new();
    assert!(decoder.feed(&body, |_| {}).is_err());
    assert_eq!(decoder.feed(&good, |_| {}), Err(EventStreamError::Failed));

    // Lengths: total below 16, headers longer than the message.
    let lengths = |total: u32, headers: u32| {
        let mut m = Vec::new();
        m.extend_from_slice(&total.to_be_bytes());
        m.extend_from_slice(&headers.to_be_bytes());
        let crc = crc32fast::hash(&m);
        m.extend_from_slice(&crc.to_be_bytes());
        m
    };
    assert!(matches!(decode(&lengths(15, 0), 64).1, Err(EventStreamError::BadLength { total_len: 15, .. })));
    assert!(matches!(decode(&lengths(40, 30), 64).1, Err(EventStreamError::BadLength { headers_len: 30, .. })));
    assert!(matches!(
        decode(&lengths(u32::MAX, 0), 64).1,
        Err(EventStreamError::MessageTooLarge { total_len: u32::MAX, .. })
    ));
    let mut small = Decoder::with_limits(DecoderLimits { max_message_len: 1024, max_headers_len: 8 });
    assert!(matches!(small.feed(&good, |_| {}), Err(EventStreamError::HeadersTooLarge { limit: 8, .. })));

    // A header of an unknown type, a value past the section.
    for headers in [vec![("x", 10u8, vec![])], vec![("x", 4, vec![0, 0])]] {
        let m = encode(&headers, b"");
        assert!(matches!(decode(&m, 3).1, Err(EventStreamError::BadHeader { .. })), "{headers:?}");
    }
}

/// botocore's header rules (`EventStreamHeaderParser._parse_headers`): an
/// empty name is a name; a name twice in one message is `DuplicateHeader`,
/// whatever the types, in every chunking, after the messages before it.
#[test]
fn an_empty_header_name_is_a_name_and_a_repeated_one_is_refused() {
    let empty = encode(&[("", 7, b"v".to_vec()), string(":event-type", "chunk")], b"p");
    let mut decoder = Decoder::new();
    let mut seen = Vec::new();
    decoder.feed(&empty, |m| seen = m.headers.iter().map(|(n, v)| format!("{n:?}={v:?}")).collect()).unwrap();
    assert_eq!(seen, ["\"\"=String(\"v\")", "\":event-type\"=String(\"chunk\")"]);
    assert_eq!(decoder.finish().discarded_bytes, 0);

    let good = encode(&[string(":event-type", "chunk")], b"p");
    for headers in [
        vec![string(":event-type", "chunk"), string(":event-type", "chunk")],
        vec![string(":event-type", "chunk"), (":event-type", 0, vec![])],
        vec![("", 0, vec![]), ("a", 1, vec![]), ("", 1, vec![])],
    ] {
        let mut bytes = good.clone();
        bytes.extend_from_slice(&encode(&headers, b"p"));
        for n in [1, 3, bytes.len()] {
            let (messages, result, _) = decode(&bytes, n);
            assert_eq!(messages.len(), 1, "{headers:?}");
            match result {
                Err(EventStreamError::DuplicateHeader { offset, name }) => {
                    assert_eq!(offset, good.len() as u64);
                    assert_eq!(name, headers[0].0);
                }
                other => panic!("{headers:?}: {other:?}"),
            }
        }
    }
    // The first bad header in order is the error: a repeat before a bad
    // type, a bad type before a repeat.
    let repeat_then_bad = encode(&[("a", 0, vec![]), ("a", 0, vec![]), ("b", 10, vec![])], b"");
    assert!(matches!(decode(&repeat_then_bad, 4).1, Err(EventStreamError::DuplicateHeader { .. })));
    let bad_then_repeat = encode(&[("a", 0, vec![]), ("b", 10, vec![]), ("a", 0, vec![])], b"");
    assert!(matches!(decode(&bad_then_repeat, 4).1, Err(EventStreamError::BadHeader { .. })));
}

/// Many short distinct names (the most a 128 KiB section holds) are checked
/// in O(n log n), and a repeat among them is still found.
#[test]
fn many_distinct_header_names_are_checked_and_a_late_repeat_found() {
    let names: Vec<String> = (0..30_000u32).map(|i| format!("{:04x}", i)).collect();
    let mut headers: Vec<(&str, u8, Vec<u8>)> = names.iter().map(|n| (n.as_str(), 0, vec![])).collect();
    let limits = DecoderLimits { max_message_len: 1 << 20, max_headers_len: 1 << 20 };
    let message = encode(&headers, b"");
    let mut decoder = Decoder::with_limits(limits);
    let mut count = 0;
    decoder.feed(&message, |m| count = m.headers.iter().count()).unwrap();
    assert_eq!(count, 30_000);

    headers.push(("7530", 1, vec![]));
    headers.push(("1234", 1, vec![]));
    let mut decoder = Decoder::with_limits(limits);
    let result = decoder.feed(&encode(&headers, b""), |_| {});
    assert!(matches!(result, Err(EventStreamError::DuplicateHeader { ref name, .. }) if name == "1234"), "{result:?}");
}

#[test]
fn a_cut_stream_reports_the_discarded_bytes() {
    let good = encode(&[string(":event-type", "chunk")], b"payload");
    let (messages, result, end) = decode(&good[..good.len() - 3], 4);
    assert_eq!((messages.len(), result), (0, Ok(())));
    assert_eq!(end.discarded_bytes, good.len() - 3);
}

fn header_strategy() -> impl Strategy<Value = (String, u8, Vec<u8>)> {
    (
        "[a-z:-]{0,12}",
        prop_oneof![
            Just((0u8, 0usize)),
            Just((1, 0)),
            Just((2, 1)),
            Just((3, 2)),
            Just((4, 4)),
            Just((5, 8)),
            Just((6, 99)),
            Just((7, 99)),
            Just((8, 8)),
            Just((9, 16))
        ],
        prop::collection::vec(any::<u8>(), 0..40),
        "[a-zA-Z0-9 é]{0,20}",
    )
        .prop_map(|(name, (kind, size), bytes, text)| {
            let value = match (kind, size) {
                (7, _) => text.into_bytes(),
                (6, _) => bytes,
                (_, n) => (0..n).map(|i| bytes.get(i).copied().unwrap_or(i as u8)).collect(),
            };
            (name, kind, value)
        })
}

proptest! {
    #[test]
    fn any_chunking_gives_the_same_messages(
        messages in prop::collection::vec((prop::collection::vec(header_strategy(), 0..5), prop::collection::vec(any::<u8>(), 0..200)), 1..6),
        chunk in 1usize..300,
    ) {
        let mut bytes = Vec::new();
        let mut expected = Vec::new();
        for (headers, payload) in &messages {
            // Distinct names (a repeated one is refused).
            let mut seen = std::collections::HashSet::new();
            let headers: Vec<(&str, u8, Vec<u8>)> =
                headers.iter().filter(|(n, ..)| seen.insert(n.clone())).map(|(n, k, v)| (n.as_str(), *k, v.clone())).collect();
            bytes.extend_from_slice(&encode(&headers, payload));
            expected.push(payload.clone());
        }
        let (whole, result, end) = decode(&bytes, bytes.len());
        prop_assert_eq!(result, Ok(()));
        prop_assert_eq!(end.discarded_bytes, 0);
        prop_assert_eq!(whole.iter().map(|m| m.1.clone()).collect::<Vec<_>>(), expected);
        let (chunked, result, _) = decode(&bytes, chunk);
        prop_assert_eq!(result, Ok(()));
        prop_assert_eq!(chunked, whole);
    }
}
