//! Partial JSON: streaming a tool input in 16-byte fragments with path events, versus
//! one serde_json parse of the whole document, versus what SDKs do (repair the accumulated prefix
//! and re-parse it with serde_json after every fragment).
//!
//! Run: `cargo bench --bench partial_json`. Sizes: 1 KB, 10 KB, 100 KB, 1 MB. The 1 MB re-parse is
//! measured on a sample of one fragment boundary in `REPARSE_SAMPLE_1MB` and multiplied back up
//! (the bench id says so); smaller sizes re-parse after every fragment. After the criterion
//! groups (unless a filter is given), an interleaved best-of-N pass prints the ratios as a table.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use serde_json::Value;
use ssefold::json::{PartialJson, PathEvent};

const FRAGMENT: usize = 16;
const SIZES: [(&str, usize); 4] = [("1KB", 1 << 10), ("10KB", 10 << 10), ("100KB", 100 << 10), ("1MB", 1 << 20)];
const REPARSE_SAMPLE_1MB: usize = 64;

/// Realistic source text: quotes, backslashes, newlines (escaped in JSON), tabs, some non-ASCII.
const LINES: &[&str] = &[
    "use std::path::{Path, PathBuf};",
    "",
    "/// Joins a Windows-style path: \"C:\\\\Users\\\\José\" — naïve on purpose.",
    "pub fn join(base: &Path, name: &str) -> PathBuf {",
    "    let sep = if cfg!(windows) { '\\\\' } else { '/' };",
    "    let msg = format!(\"joining {:?} and \\\"{}\\\" with {}\", base, name, sep);",
    "\tlog::debug!(\"{msg} ✓\");",
    "    if name.contains(\"..\") {",
    "        return Err(Error::new(\"refusing to escape the root: «..»\"));",
    "    }",
    "    base.join(name) // résumé: 10 µs, ±2 %",
    "}",
    "",
    "#[test]",
    "fn joins() { assert_eq!(join(Path::new(\"a\"), \"b\"), PathBuf::from(\"a/b\")); }",
];

/// A `{"path", "content", "mode"}` tool input whose JSON text is about `size` bytes.
fn document(size: usize) -> Vec<u8> {
    let mut content = String::new();
    let mut n = 0;
    // serde_json escapes `"`, `\`, newlines and tabs: the JSON text is ~8 % larger than the content.
    while content.len() * 108 / 100 < size.saturating_sub(60) {
        content.push_str(LINES[n % LINES.len()]);
        content.push('\n');
        n += 1;
    }
    let doc = serde_json::json!({"path": "src/very/deep/module/path.rs", "content": content, "mode": "overwrite"});
    serde_json::to_vec(&doc).unwrap()
}

/// Streams `doc` in 16-byte fragments and consumes every path event.
fn stream(doc: &[u8], parser: &mut PartialJson) -> (usize, usize) {
    parser.reset();
    let mut appended = 0;
    let mut others = 0;
    for fragment in doc.chunks(FRAGMENT) {
        parser
            .push(fragment, |event| match event {
                PathEvent::StringAppend { text, .. } => appended += text.len(),
                PathEvent::ValueComplete { path, .. }
                | PathEvent::ContainerComplete { path, .. }
                | PathEvent::ContainerStart { path, .. } => others += path.len() + 1,
            })
            .unwrap();
    }
    assert!(parser.is_complete());
    (appended, others)
}

/// What SDKs do after every fragment: close the open string and containers of the whole
/// accumulated buffer and parse it with serde_json.
fn repair_and_parse(buf: &[u8]) -> Option<Value> {
    let mut stack = Vec::new();
    let (mut in_string, mut escape) = (false, false);
    for &b in buf {
        if in_string {
            if escape {
                escape = false;
            } else if b == b'\\' {
                escape = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => stack.push(b),
                b'}' | b']' => {
                    stack.pop();
                }
                _ => {}
            }
        }
    }
    let mut repaired = buf.to_vec();
    if in_string {
        if escape {
            repaired.pop();
        }
        // Drop an incomplete UTF-8 character at the end.
        let tail = repaired.len().saturating_sub(4);
        if let Some(lead) = repaired[tail..].iter().rposition(|&b| b & 0xC0 != 0x80) {
            let at = tail + lead;
            let width = match repaired[at] {
                0xF0..=0xFF => 4,
                0xE0..=0xEF => 3,
                0xC0..=0xDF => 2,
                _ => 1,
            };
            if at + width > repaired.len() {
                repaired.truncate(at);
            }
        }
        repaired.push(b'"');
    }
    while let Some(b) = stack.pop() {
        repaired.push(if b == b'{' { b'}' } else { b']' });
    }
    serde_json::from_slice(&repaired).ok()
}

/// Re-parses after every `every`-th fragment boundary; returns how many parses succeeded.
fn reparse(doc: &[u8], every: usize) -> usize {
    let mut ok = 0;
    let mut end = 0;
    let mut k = 0;
    while end < doc.len() {
        end = (end + FRAGMENT).min(doc.len());
        if k % every == 0 && repair_and_parse(&doc[..end]).is_some() {
            ok += 1;
        }
        k += 1;
    }
    ok
}

fn bench(c: &mut Criterion) {
    for (label, size) in SIZES {
        let doc = document(size);
        let mut group = c.benchmark_group(format!("partial_json/{label}"));
        group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
        group.throughput(Throughput::Bytes(doc.len() as u64));
        let mut parser = PartialJson::new();
        group.bench_function("stream_16B_with_events", |b| b.iter(|| black_box(stream(black_box(&doc), &mut parser))));
        group.bench_function("serde_json_once", |b| {
            b.iter(|| black_box(serde_json::from_slice::<Value>(black_box(&doc)).unwrap()))
        });
        let every = if size >= 1 << 20 { REPARSE_SAMPLE_1MB } else { 1 };
        group.bench_function(BenchmarkId::new("reparse_every_fragment_sampled", every), |b| {
            b.iter(|| black_box(reparse(black_box(&doc), every)))
        });
        group.finish();
    }
}

/// Best (minimum) wall time of `f` over `rounds` calls.
fn best_of(rounds: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The machine is shared and noisy: criterion measures each function in its own time window, so
/// its ratios mix different loads. Here stream and serde_json alternate round by round and the
/// best of each is kept, which gives ratios measured under the same conditions.
fn interleaved_ratios() {
    println!("\n## interleaved best-of-N (same run)");
    println!("| size | doc bytes | stream 16 B + events | serde_json once | stream / serde | re-parse every fragment | re-parse / stream |");
    println!("|---|---|---|---|---|---|---|");
    let mut stream_totals = Vec::new();
    for (label, size) in SIZES {
        let doc = document(size);
        let mut parser = PartialJson::new();
        let (mut stream_best, mut serde_best) = (f64::INFINITY, f64::INFINITY);
        let rounds = if size >= 1 << 20 { 30 } else { 200 };
        for _ in 0..rounds {
            stream_best = stream_best.min(best_of(1, || {
                black_box(stream(black_box(&doc), &mut parser));
            }));
            serde_best = serde_best.min(best_of(1, || {
                black_box(serde_json::from_slice::<Value>(black_box(&doc)).unwrap());
            }));
        }
        let (every, reparse_rounds) = match size {
            s if s >= 1 << 20 => (REPARSE_SAMPLE_1MB, 1),
            s if s >= 100 << 10 => (1, 3),
            _ => (1, 20),
        };
        let reparse_best = best_of(reparse_rounds, || {
            black_box(reparse(black_box(&doc), every));
        }) * every as f64;
        let note = if every > 1 { format!(" (sampled 1/{every}, ×{every})") } else { String::new() };
        println!(
            "| {label} | {} | {:.1} µs | {:.1} µs | {:.2}× | {:.1} ms{note} | {:.0}× |",
            doc.len(),
            stream_best * 1e6,
            serde_best * 1e6,
            stream_best / serde_best,
            reparse_best * 1e3,
            reparse_best / stream_best
        );
        stream_totals.push(stream_best);
    }
    if let [.., hundred_kb, one_mb] = stream_totals[..] {
        println!("\nlinear growth: stream 1 MB / stream 100 KB = {:.2} (target <= 12)", one_mb / hundred_kb);
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo bench --bench partial_json -- FILTER` runs only the matching criterion benches.
    let filtered = std::env::args().skip(1).any(|arg| !arg.starts_with('-'));
    if !filtered {
        interleaved_ratios();
    }
}
