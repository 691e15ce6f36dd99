//! Partial JSON (issue 3): streaming a tool input in 16-byte fragments with path events, versus
//! one serde_json parse of the whole document, versus what SDKs do (repair the accumulated prefix
//! and re-parse it with serde_json after every fragment).
//!
//! Run: `cargo bench --bench partial_json`. Sizes: 1 KB, 10 KB, 100 KB, 1 MB. The 1 MB re-parse is
//! measured on a sample of one fragment boundary in `REPARSE_SAMPLE_1MB` and multiplied back up
//! (the bench id says so); smaller sizes re-parse after every fragment.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::Value;
use ssefold::json::{PartialJson, PathEvent};

const FRAGMENT: usize = 16;
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
                PathEvent::ValueComplete { path, .. } | PathEvent::ContainerStart { path, .. } => {
                    others += path.len() + 1
                }
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
    for (label, size) in [("1KB", 1 << 10), ("10KB", 10 << 10), ("100KB", 100 << 10), ("1MB", 1 << 20)] {
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

criterion_group!(benches, bench);
criterion_main!(benches);
