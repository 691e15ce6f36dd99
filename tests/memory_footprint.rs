//! The memory target: a decoder handle at rest, after decoding a whole corpus,
//! takes at most 2 KiB including its buffers (`Decoder::memory_footprint`).

use ssefold::sse::Decoder;

const BUDGET: usize = 2 << 10;

#[test]
fn footprint_at_rest_after_each_corpus_is_within_2_kib() {
    for name in ssefold_corpus::NAMES {
        let corpus = ssefold_corpus::by_name(name, 2 << 20).unwrap();
        for size in [7, 4 << 10, 64 << 10, corpus.len()] {
            let mut d = Decoder::new();
            let mut events = 0;
            for chunk in corpus.chunks(size) {
                d.feed_each(chunk, |e| {
                    assert!(!e.unwrap().data().is_empty());
                    events += 1;
                });
            }
            assert_eq!(d.finish().discarded_bytes, 0);
            assert!(events > 1000);
            let footprint = d.memory_footprint();
            println!("{name}, {size}-byte chunks: {events} events, footprint {footprint} bytes");
            assert!(footprint <= BUDGET, "{name}, {size}-byte chunks: {footprint} bytes");
        }
    }
}

#[test]
fn fresh_decoder_is_small_and_footprint_counts_buffers() {
    let mut d = Decoder::new();
    let fresh = d.memory_footprint();
    assert_eq!(fresh, core::mem::size_of::<Decoder>());
    assert!(fresh <= 512, "{fresh}");
    // A line split across chunks is assembled in a buffer that is counted.
    d.feed_each(&[b'x'; 1000], |_| unreachable!());
    assert!(d.memory_footprint() >= fresh + 1000);
}
