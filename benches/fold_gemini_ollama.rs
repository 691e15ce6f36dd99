//! The Gemini and Ollama folds next to `serde_json::from_str::<Value>` on
//! every payload of the same bodies: Gemini on the real recordings of
//! `tests/recordings/gemini/` (every one a turn; recordings that end in an
//! error skipped), Ollama on a synthetic `/api/chat` body (short content
//! tokens, a thinking prefix, a tool call, the `done` line), repeated to
//! `SSEFOLD_BENCH_MB` (default 8) MiB. Each turn is fed in 4 KiB chunks to a
//! fresh stream, finished, and its message built. Fold and baseline
//! alternate for 11 rounds; the best of each is kept.
//!
//! `cargo bench --bench fold_gemini_ollama`

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use ssefold::providers::{Provider, Stream};

fn fold(provider: Provider, turns: &[Vec<u8>]) -> usize {
    let mut events = 0usize;
    for turn in turns {
        let mut stream = Stream::new(provider);
        for chunk in turn.chunks(4096) {
            stream
                .feed(chunk, |e| {
                    black_box(e);
                    events += 1;
                })
                .unwrap();
        }
        stream.finish(|_| events += 1).unwrap();
        black_box(stream.message());
    }
    events
}

fn baseline(payloads: &[String]) -> usize {
    payloads
        .iter()
        .map(|p| black_box(serde_json::from_str::<Value>(p).unwrap()).as_object().map_or(0, |o| o.len()))
        .sum()
}

fn gemini_turns() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings/gemini");
    let mut out = Vec::new();
    for source in std::fs::read_dir(dir).unwrap() {
        for f in std::fs::read_dir(source.unwrap().path()).unwrap() {
            let bytes = std::fs::read(f.unwrap().path()).unwrap();
            let mut s = Stream::new(Provider::Gemini);
            if s.feed(&bytes, |_| {}).is_ok() && s.finish(|_| {}).is_ok() {
                out.push(bytes);
            }
        }
    }
    out.sort();
    out
}

fn ollama_turn() -> Vec<u8> {
    let mut out = String::new();
    let line = |msg: Value, done: bool| {
        serde_json::json!({"model": "qwen3:8b", "created_at": "2025-06-01T10:00:00.123456789Z", "message": msg, "done": done})
            .to_string()
            + "\n"
    };
    for i in 0..200 {
        out += &line(serde_json::json!({"role": "assistant", "content": "", "thinking": format!(" step{i}")}), false);
    }
    for i in 0..800 {
        out += &line(serde_json::json!({"role": "assistant", "content": format!(" word{i}\n")}), false);
    }
    out += &line(
        serde_json::json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2, 3]}}}]}),
        false,
    );
    let mut last: Value =
        serde_json::from_str(&line(serde_json::json!({"role": "assistant", "content": ""}), true)).unwrap();
    last["done_reason"] = "stop".into();
    last["eval_count"] = 1001.into();
    out += &(last.to_string() + "\n");
    out.into_bytes()
}

fn payloads(turns: &[Vec<u8>], sse: bool) -> Vec<String> {
    let mut out = Vec::new();
    for t in turns {
        for l in std::str::from_utf8(t).unwrap().lines() {
            let l = l.trim_end_matches('\r');
            let p = if sse { l.strip_prefix("data:").map(str::trim) } else { Some(l).filter(|l| !l.is_empty()) };
            out.extend(p.map(str::to_owned));
        }
    }
    out
}

fn main() {
    let mb: usize = std::env::var("SSEFOLD_BENCH_MB").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let target = mb << 20;
    let repeat = |one: Vec<Vec<u8>>| {
        let size: usize = one.iter().map(Vec::len).sum();
        let n = target.div_ceil(size.max(1));
        one.iter().cloned().cycle().take(one.len() * n).collect::<Vec<_>>()
    };
    let sets = [
        ("gemini_recordings", Provider::Gemini, repeat(gemini_turns()), true),
        ("ollama_chat", Provider::Ollama, repeat(vec![ollama_turn()]), false),
    ];
    println!("| body | bytes | turns | payloads | fold | serde_json `Value` per payload | fold / serde |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (name, provider, turns, sse) in &sets {
        let bytes: usize = turns.iter().map(Vec::len).sum();
        let p = payloads(turns, *sse);
        let (mut best_fold, mut best_serde) = (f64::MAX, f64::MAX);
        for _ in 0..11 {
            let t = Instant::now();
            black_box(fold(*provider, turns));
            best_fold = best_fold.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            black_box(baseline(&p));
            best_serde = best_serde.min(t.elapsed().as_secs_f64());
        }
        let mib = |s: f64| bytes as f64 / s / (1 << 20) as f64;
        println!(
            "| {name} | {:.1} MB | {} | {} | {:.0} MiB/s | {:.0} MiB/s | **{:.2}×** |",
            bytes as f64 / 1e6,
            turns.len(),
            p.len(),
            mib(best_fold),
            mib(best_serde),
            best_serde / best_fold
        );
    }
}
