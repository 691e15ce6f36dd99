//! Property tests: any chunking of the same bytes gives the same events,
//! errors and end-of-stream report; decode(encode(events)) == events.

use crate::common;

use common::{decode_chunks, decode_split};
use proptest::prelude::*;
use ssefold::sse::{DecoderConfig, Encoder, OwnedEvent};

/// Text drawn from an alphabet that exercises the grammar: separators,
/// spaces, line breaks, multi-byte UTF-8.
fn text(max: usize) -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        8 => proptest::char::range('a', 'z'),
        2 => Just(' '),
        1 => Just(':'),
        1 => Just('\r'),
        1 => Just('\n'),
        1 => Just('é'),
        1 => Just('€'),
        1 => Just('😀'),
        1 => Just('\u{feff}'),
    ];
    proptest::collection::vec(ch, 0..max).prop_map(|v| v.into_iter().collect())
}

fn one_line(max: usize) -> impl Strategy<Value = String> {
    text(max).prop_map(|s| s.replace(['\r', '\n'], ""))
}

/// A stream built from SSE-ish lines with mixed line endings.
fn sse_stream() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        4 => one_line(12).prop_map(|v| format!("data: {v}")),
        1 => one_line(6).prop_map(|v| format!("data:{v}")),
        1 => Just("data".to_owned()),
        2 => one_line(6).prop_map(|v| format!("event: {v}")),
        1 => one_line(4).prop_map(|v| format!("id: {v}")),
        1 => Just("id".to_owned()),
        1 => "[0-9 x]{0,4}".prop_map(|v| format!("retry: {v}")),
        1 => one_line(8).prop_map(|v| format!(":{v}")),
        1 => one_line(8),
        3 => Just(String::new()),
    ];
    let ending = prop_oneof![Just("\n"), Just("\r"), Just("\r\n")];
    (proptest::collection::vec((line, ending), 0..40), any::<bool>()).prop_map(|(lines, bom)| {
        let mut out = if bom { "\u{feff}".to_owned() } else { String::new() };
        for (l, e) in lines {
            out.push_str(&l);
            out.push_str(e);
        }
        out.into_bytes()
    })
}

fn cuts(len: usize) -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(0..=len, 0..12).prop_map(|mut v| {
        v.sort_unstable();
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn any_chunking_gives_the_same_result((bytes, cuts) in sse_stream().prop_flat_map(|b| { let n = b.len(); (Just(b), cuts(n)) })) {
        for config in [DecoderConfig::default(), DecoderConfig { max_line_len: 10, max_event_size: 16, ..DecoderConfig::default() }] {
            let whole = decode_chunks(&config, [&bytes[..]]);
            prop_assert_eq!(&decode_split(&config, &bytes, &cuts), &whole);
            prop_assert_eq!(&decode_chunks(&config, bytes.chunks(1)), &whole);
        }
    }

    #[test]
    fn decode_of_encode_gives_the_events_back(
        events in proptest::collection::vec(
            (proptest::option::of(one_line(8)), text(20), proptest::option::of(one_line(6).prop_map(|s| s.replace('\0', ""))), proptest::option::of(0u64..100_000)),
            0..12),
        cut_seed in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut enc = Encoder::new();
        let mut expected = Vec::new();
        let mut id_in_force: Option<String> = None;
        for (event, data, id, retry) in &events {
            enc.event(event.as_deref(), data, id.as_deref(), *retry).unwrap();
            if let Some(id) = id {
                id_in_force = Some(id.clone());
            }
            expected.push(OwnedEvent {
                event: match event.as_deref() { None | Some("") => "message".to_owned(), Some(e) => e.to_owned() },
                data: data.replace("\r\n", "\n").replace('\r', "\n"),
                id: id_in_force.clone(),
                retry: *retry,
            });
        }
        let bytes = enc.take_bytes();
        let mut cuts: Vec<usize> = cut_seed.iter().map(|i| i.index(bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let got = decode_split(&DecoderConfig::default(), &bytes, &cuts);
        prop_assert!(got.items.iter().all(Result::is_ok));
        prop_assert_eq!(got.events(), expected);
        prop_assert_eq!(got.end.discarded_bytes, 0);
    }
}
