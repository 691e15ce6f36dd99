//! The Rust side of the C ABI benchmark (`make c-bench`, see BENCHMARKS.md).
//!
//! `capi_bench CORPUS_FILE [MIB]` writes a synthetic Anthropic text stream
//! (the shape of the core's `anthropic_text` corpus: `message_start`,
//! `content_block_start`, pings, many short `content_block_delta` text
//! deltas, `content_block_stop`, `message_delta`, `message_stop`, turn after
//! turn) to `CORPUS_FILE`, then decodes it with the Rust API the way the C
//! bench (`tests/c/bench_sse.c`) does through the C ABI: 16 KiB chunks (a
//! libcurl write), one callback per event summing the data lengths. It
//! prints the best and median of 25 runs as MB/s plus a checksum the C side must
//! match.

use std::time::Instant;

use ssefold::sse::Decoder;

/// Timed runs per process (`SSEFOLD_BENCH_RUNS` overrides); the best and the
/// median are reported.
const RUNS: usize = 25;

/// SplitMix64: deterministic synthetic text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

const WORDS: [&str; 16] = [
    "the",
    "stream",
    "folds",
    "into",
    "a",
    "message",
    "while",
    "tokens",
    "arrive",
    "é",
    "quickly",
    "\\n",
    "and",
    "\\\"quoted\\\"",
    "🙂",
    "decoder",
];

fn corpus(target: usize) -> Vec<u8> {
    let mut rng = Rng(0x5353_4546_4f4c_4401);
    let mut out = String::with_capacity(target + 4096);
    let mut turn = 0u64;
    while out.len() < target {
        turn += 1;
        out.push_str(&format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_{turn:024}\",\
             \"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\
             \"stop_reason\":null,\"stop_sequence\":null,\"usage\":{{\"input_tokens\":{},\"output_tokens\":1}}}}}}\n\n",
            rng.range(10, 5000)
        ));
        out.push_str(
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\
             \"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
        );
        for _ in 0..rng.range(40, 440) {
            let mut text = String::new();
            while text.len() < rng.range(3, 30) as usize {
                text.push_str(WORDS[(rng.next() % WORDS.len() as u64) as usize]);
                text.push(' ');
            }
            out.push_str(&format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\
                 \"delta\":{{\"type\":\"text_delta\",\"text\":\"{text}\"}}}}\n\n"
            ));
            if rng.range(0, 99) == 0 {
                out.push_str("event: ping\ndata: {\"type\": \"ping\"}\n\n");
            }
        }
        out.push_str(&format!(
            "event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\",\
             \"stop_sequence\":null}},\"usage\":{{\"output_tokens\":{}}}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
            rng.range(10, 900)
        ));
    }
    out.into_bytes()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: capi_bench CORPUS_FILE [MIB]");
    let mib: usize = args.get(2).map_or(16, |s| s.parse().expect("MIB is a number"));
    // SSEFOLD_BENCH_READ=1: decode the existing file (for instruction counts).
    let bytes = if std::env::var("SSEFOLD_BENCH_READ").is_ok_and(|v| v == "1") {
        std::fs::read(path).expect("read the corpus")
    } else {
        let bytes = corpus(mib << 20);
        std::fs::write(path, &bytes).expect("write the corpus");
        bytes
    };
    let runs: usize = std::env::var("SSEFOLD_BENCH_RUNS").map_or(RUNS, |s| s.parse().expect("a number"));
    let mut times = Vec::new();
    let (mut events, mut data_bytes) = (0u64, 0u64);
    for _ in 0..runs {
        let start = Instant::now();
        let mut decoder = Decoder::new();
        let (mut n, mut sum) = (0u64, 0u64);
        for chunk in bytes.chunks(16 * 1024) {
            let mut it = decoder.feed(chunk);
            while let Some(e) = it.next_event() {
                let e = e.expect("the corpus is valid");
                n += 1;
                sum += e.data().len() as u64;
            }
        }
        times.push(start.elapsed().as_secs_f64());
        (events, data_bytes) = (std::hint::black_box(n), std::hint::black_box(sum));
    }
    times.sort_by(f64::total_cmp);
    let (best, median) = (times[0], times[runs / 2]);
    let mbs = |t: f64| bytes.len() as f64 / t / 1e6;
    println!(
        "rust-api bytes={} events={events} data_bytes={data_bytes} median_MB/s={:.1} MB/s={:.1}",
        bytes.len(),
        mbs(median),
        mbs(best)
    );
}
