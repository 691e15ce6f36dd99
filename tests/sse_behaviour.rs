//! Behaviour of the SSE decoder beyond the spec's rules: limits, strict
//! UTF-8, stopping early, reconnection state.

use crate::common;

use common::{decode_chunks, decode_every_way};
use ssefold::sse::{DecodeError, Decoder, DecoderConfig, Utf8Mode};

fn limits(line: usize, event: usize) -> DecoderConfig {
    DecoderConfig { max_line_len: line, max_event_size: event, ..DecoderConfig::default() }
}

#[test]
fn too_long_line_is_an_error_and_the_decoder_resyncs_at_the_next_blank_line() {
    let input = b"data: 123456789\ndata: x\n\ndata: ok\n\n";
    let got = decode_every_way(&limits(8, 100), input);
    assert_eq!(got.items.len(), 2);
    assert_eq!(got.items[0], Err(DecodeError::LineTooLong { limit: 8, offset: 0 }));
    assert_eq!(got.items[1].as_ref().unwrap().data, "ok");
}

#[test]
fn too_large_event_is_an_error_and_the_decoder_resyncs() {
    let input = b"event: big\ndata: abc\ndata: def\n\ndata: ok\n\n";
    let got = decode_every_way(&limits(100, 5), input);
    assert_eq!(got.items[0], Err(DecodeError::EventTooLarge { limit: 5, offset: 21 }));
    let ok = got.items[1].as_ref().unwrap();
    assert_eq!((ok.event.as_str(), ok.data.as_str()), ("message", "ok"));
    assert_eq!(got.items.len(), 2);
}

#[test]
fn memory_stays_bounded_on_an_endless_line() {
    let mut d = Decoder::with_config(limits(1 << 20, 1 << 20));
    let chunk = vec![b'x'; 64 << 10];
    let mut errors = 0;
    for _ in 0..(64 << 20) / chunk.len() {
        d.feed_each(&chunk, |r| errors += usize::from(r.is_err()));
        assert!(d.memory_footprint() < (1 << 20) + 4096, "footprint {}", d.memory_footprint());
    }
    assert_eq!(errors, 1, "the overlong line is reported once");
    // Still usable: the line ends, a blank line resyncs, events flow again.
    let mut got = Vec::new();
    d.feed_each(b"\n\ndata: after\n\n", |r| got.push(r.unwrap().data().to_owned()));
    assert_eq!(got, ["after"]);
}

#[test]
fn strict_utf8_refuses_the_event_and_goes_on() {
    let config = DecoderConfig { utf8: Utf8Mode::Strict, ..DecoderConfig::default() };
    let input = b"data: ok\n\nevent: e\ndata: \xff\n\nid: \xfe\ndata: skipped\n\ndata: next\n\n";
    let got = decode_every_way(&config, input);
    assert_eq!(got.items.len(), 4, "{:?}", got.items);
    assert_eq!(got.items[0].as_ref().unwrap().data, "ok");
    assert_eq!(got.items[1], Err(DecodeError::InvalidUtf8 { field: "data", offset: 10 }));
    assert_eq!(got.items[2], Err(DecodeError::InvalidUtf8 { field: "id", offset: 28 }));
    assert_eq!(got.items[3].as_ref().unwrap().data, "next");
    // The refused id was not accepted.
    assert_eq!(got.items[3].as_ref().unwrap().id, None);
}

#[test]
fn stopping_early_leaves_the_rest_of_the_chunk_unconsumed() {
    let input: &[u8] = b"data: 1\n\ndata: 2\n\ndata: 3\n\n";
    let mut d = Decoder::new();
    let mut events = d.feed(input);
    assert_eq!(events.next_event().unwrap().unwrap().data(), "1");
    let consumed = events.consumed();
    assert_eq!(consumed, 9);
    let mut rest = Vec::new();
    d.feed_each(&input[consumed..], |r| rest.push(r.unwrap().data().to_owned()));
    assert_eq!(rest, ["2", "3"]);
}

#[test]
fn last_event_id_and_retry_survive_finish_for_reconnection() {
    let mut d = Decoder::new();
    d.feed_each(b"retry: 2500\nid: 41\ndata: a\n\nid: 42\ndata: partial", |_| {});
    let end = d.finish();
    assert_eq!(end.discarded_bytes, 20);
    assert_eq!(d.last_event_id(), Some("41"));
    assert_eq!(d.reconnection_time(), Some(2500));
    // The new connection's events carry the id in force.
    let mut got = Vec::new();
    d.feed_each(b"data: b\n\n", |r| got.push(r.unwrap().to_owned_event()));
    assert_eq!(got[0].id.as_deref(), Some("41"));
    assert_eq!(got[0].retry, None);
    d.reset();
    assert_eq!((d.last_event_id(), d.reconnection_time()), (None, None));
}

#[test]
fn a_bom_after_finish_is_stripped_again() {
    let mut d = Decoder::new();
    let mut got = Vec::new();
    d.feed_each(b"\xEF\xBB\xBFdata: a\n\n", |r| got.push(r.unwrap().data().to_owned()));
    d.finish();
    d.feed_each(b"\xEF\xBB\xBFdata: b\n\n", |r| got.push(r.unwrap().data().to_owned()));
    assert_eq!(got, ["a", "b"]);
}

#[test]
fn fresh_decoder_is_small() {
    let d = Decoder::new();
    assert!(d.memory_footprint() <= 2048, "{}", d.memory_footprint());
    let got = decode_chunks(&DecoderConfig::default(), [&b""[..]]);
    assert!(got.items.is_empty());
    assert_eq!(got.end.discarded_bytes, 0);
}
