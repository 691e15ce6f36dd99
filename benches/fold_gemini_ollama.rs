//! The Gemini, OpenAI Responses and Ollama folds next to
//! `serde_json::from_str::<Value>` on every payload of the same bodies:
//! Gemini and Responses on the real recordings of `tests/recordings/gemini/`
//! and `tests/recordings/openai_responses/` (every one a turn; recordings
//! that end in an error skipped), Ollama on a synthetic `/api/chat` body (short content
//! tokens, a thinking prefix, a tool call, the `done` line), repeated to
//! `SSEFOLD_BENCH_MB` (default 8) MiB. Each turn is fed in 4 KiB chunks to a
//! fresh stream, finished, and its message built. Fold and baseline
//! alternate for `SSEFOLD_BENCH_ROUNDS` (default 11) rounds; the best of
//! each, in this thread's CPU time, is kept.
//!
//! `cargo bench --bench fold_gemini_ollama`; instruction counts:
//! `SSEFOLD_BENCH_MB=2 SSEFOLD_BENCH_ROUNDS=1 valgrind --tool=callgrind
//! --toggle-collect='*fold_pass*' BENCH_BINARY` (and `'*serde_pass*'`);
//! `SSEFOLD_BENCH_BODY=gemini` (or `responses`, `ollama`) runs one body only;
//! `SSEFOLD_BENCH_ONLY=fold` (or `serde`) runs one side only (to profile one side, `perf record`);
//! `SSEFOLD_BENCH_ONLY=bound` runs `bound_pass` once (with `--toggle-collect='*bound_pass*'`: what any
//! fold behind this API pays, the framing and the message handed over); `SSEFOLD_BENCH_ONLY=parsed` runs
//! it with each message built from its JSON text by serde_json instead of cloned (what building its
//! `Value`s from text costs once).

use std::hint::black_box;
use std::path::Path;

use serde_json::Value;
use ssefold::providers::{Provider, Stream};

#[path = "support/mod.rs"]
mod support;
use support::{Clock, HandOver};

/// The fold of every turn ([`support::fold_turns`]); its own symbol for
/// callgrind's `--toggle-collect`.
#[inline(never)]
fn fold_pass(provider: Provider, turns: &[Vec<u8>]) -> usize {
    support::fold_turns(provider, turns).0
}

/// `serde_json::Value` of every payload; its own symbol for callgrind.
#[inline(never)]
fn serde_pass(payloads: &[String]) -> usize {
    payloads
        .iter()
        .map(|p| black_box(serde_json::from_str::<Value>(p).unwrap()).as_object().map_or(0, |o| o.len()))
        .sum()
}

/// What any fold behind this API pays per turn, whatever its parser: the
/// body framed (SSE events, or NDJSON lines, by their data alone), and the
/// folded message (`messages`, built beforehand) handed over: cloned and
/// dropped (`Value`s: the least, `SSEFOLD_BENCH_ONLY=bound`), or built from
/// its JSON text ([`support::MessageText`], `SSEFOLD_BENCH_ONLY=parsed`).
/// Its own symbol for callgrind.
#[inline(never)]
fn bound_pass(turns: &[Vec<u8>], messages: &[impl HandOver], sse: bool) -> usize {
    let mut n = 0;
    for (turn, message) in turns.iter().zip(messages) {
        if sse {
            let mut d = ssefold::sse::Decoder::new();
            for chunk in turn.chunks(support::CHUNK) {
                d.feed_each(chunk, |e| n += e.map_or(0, |e| black_box(e.data()).len()));
            }
        } else {
            n += turn.split(|b| *b == b'\n').map(|l| black_box(l).len()).sum::<usize>();
        }
        n += message.hand_over();
    }
    n
}

/// Every payload read through once and nothing kept
/// (`serde::de::IgnoredAny`): the least any reader of the payloads pays.
/// Its own symbol for callgrind; run with `SSEFOLD_BENCH_ONLY=bound`.
#[inline(never)]
fn read_pass(payloads: &[String]) -> usize {
    payloads.iter().map(|p| black_box(serde_json::from_str::<serde::de::IgnoredAny>(p).is_ok()) as usize).sum()
}

/// Every recording of `tests/recordings/DIR/` that `provider` folds without
/// error, one turn each, in a fixed order.
fn recorded_turns(dir: &str, provider: Provider) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings").join(dir);
    let mut out = Vec::new();
    for source in std::fs::read_dir(dir).unwrap() {
        for f in std::fs::read_dir(source.unwrap().path()).unwrap() {
            let bytes = std::fs::read(f.unwrap().path()).unwrap();
            let mut s = Stream::new(provider);
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
            // A terminal `[DONE]` (one Responses recording ends so) is no payload.
            out.extend(p.filter(|p| *p != "[DONE]").map(str::to_owned));
        }
    }
    out
}

fn main() {
    let mb: usize = std::env::var("SSEFOLD_BENCH_MB").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let target = mb << 20;
    let rounds: usize = std::env::var("SSEFOLD_BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(11);
    let repeat = |one: Vec<Vec<u8>>| {
        let size: usize = one.iter().map(Vec::len).sum();
        let n = target.div_ceil(size.max(1));
        one.iter().cloned().cycle().take(one.len() * n).collect::<Vec<_>>()
    };
    let sets = [
        ("gemini_recordings", Provider::Gemini, repeat(recorded_turns("gemini", Provider::Gemini)), true),
        (
            "responses_recordings",
            Provider::OpenAIResponses,
            repeat(recorded_turns("openai_responses", Provider::OpenAIResponses)),
            true,
        ),
        ("ollama_chat", Provider::Ollama, repeat(vec![ollama_turn()]), false),
    ];
    println!("{} rounds, best of each, {}:", rounds, Clock::kind());
    println!("| body | bytes | turns | payloads | fold | serde_json `Value` per payload | fold / serde |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let only = std::env::var("SSEFOLD_BENCH_BODY").unwrap_or_default();
    let side = std::env::var("SSEFOLD_BENCH_ONLY").unwrap_or_default();
    for (name, provider, turns, sse) in sets.iter().filter(|s| s.0.contains(only.as_str())) {
        let bytes: usize = turns.iter().map(Vec::len).sum();
        let p = payloads(turns, *sse);
        if side == "bound" {
            let messages = support::folded_messages(*provider, turns);
            black_box(bound_pass(turns, &messages, *sse));
            black_box(read_pass(&p));
            continue;
        }
        if side == "parsed" {
            let texts = support::message_texts(&support::folded_messages(*provider, turns));
            black_box(bound_pass(turns, &texts, *sse));
            continue;
        }
        let (mut best_fold, mut best_serde) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            if side != "serde" {
                let t = Clock::start();
                black_box(fold_pass(*provider, turns));
                best_fold = best_fold.min(t.secs());
            }
            if side != "fold" {
                let t = Clock::start();
                black_box(serde_pass(&p));
                best_serde = best_serde.min(t.secs());
            }
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
