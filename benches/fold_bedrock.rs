//! The Bedrock folds next to the AWS event-stream decoder plus
//! `serde_json::from_slice::<Value>` on every payload of the same bodies:
//! `bedrock_converse` on the real ConverseStream recordings of
//! `tests/recordings/bedrock_converse/`, `bedrock` on the real
//! InvokeModelWithResponseStream (Anthropic) recordings of
//! `tests/recordings/bedrock/` (the baseline then also decodes each
//! `chunk`'s base64 and parses the Anthropic event inside), each repeated to
//! `SSEFOLD_BENCH_MB` (default 8) MiB. Each turn is fed in 4 KiB chunks to a
//! fresh stream, finished, and its message built. Fold and baseline
//! alternate for `SSEFOLD_BENCH_ROUNDS` (default 11) rounds; the best of
//! each (this thread's CPU time) is kept.
//!
//! `cargo bench --bench fold_bedrock`; instruction counts:
//! `SSEFOLD_BENCH_MB=1 SSEFOLD_BENCH_ROUNDS=1 valgrind --tool=callgrind
//! --toggle-collect='*fold_pass*' BENCH_BINARY` (and `'*baseline*'`);
//! `SSEFOLD_BENCH_BODY=converse` (or `invoke`) runs one body only;
//! `SSEFOLD_BENCH_ONLY=bound` runs `bound_pass` once (`--toggle-collect='*bound_pass*'`: what any
//! fold behind this API pays, the framing and the message handed over); `SSEFOLD_BENCH_ONLY=parsed`
//! runs it with each message built from its JSON text by serde_json instead of cloned.

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::path::Path;

use base64::Engine;
use serde_json::Value;
use ssefold::eventstream::Decoder;
use ssefold::providers::{Provider, Stream};
use support::{fold_turns, timed, HandOver};

/// The fold of every turn ([`fold_turns`]); its own symbol for callgrind's
/// `--toggle-collect`.
#[inline(never)]
fn fold_pass(provider: Provider, turns: &[Vec<u8>]) -> (usize, usize) {
    fold_turns(provider, turns)
}

/// The framing and one `Value` per payload (and per decoded `chunk`); its
/// own symbol for callgrind.
#[inline(never)]
fn baseline(turns: &[Vec<u8>]) -> usize {
    let mut n = 0;
    let mut buf = Vec::new();
    for turn in turns {
        let mut d = Decoder::new();
        for chunk in turn.chunks(4096) {
            d.feed(chunk, |m| {
                let v: Value = serde_json::from_slice(m.payload).unwrap();
                if let Some(b) = v.get("bytes").and_then(Value::as_str) {
                    buf.clear();
                    base64::engine::general_purpose::STANDARD.decode_vec(b, &mut buf).unwrap();
                    n += black_box(serde_json::from_slice::<Value>(&buf).unwrap()).as_object().map_or(0, |o| o.len());
                }
                n += black_box(v).as_object().map_or(0, |o| o.len());
            })
            .unwrap();
        }
    }
    n
}

/// What any fold behind this API pays per turn, whatever its parser: the
/// event-stream framing (each message's `:event-type` and payload read) and
/// the folded message (`messages`, built beforehand) handed over: cloned and
/// dropped (`Value`s: the least, `SSEFOLD_BENCH_ONLY=bound`), or built from
/// its JSON text ([`support::MessageText`], `SSEFOLD_BENCH_ONLY=parsed`).
/// Its own symbol for callgrind.
#[inline(never)]
fn bound_pass(turns: &[Vec<u8>], messages: &[impl HandOver]) -> usize {
    let mut n = 0;
    for (turn, message) in turns.iter().zip(messages) {
        let mut d = Decoder::new();
        for chunk in turn.chunks(4096) {
            d.feed(chunk, |m| {
                black_box(m.event_type());
                n += black_box(m.payload).len();
            })
            .unwrap();
        }
        n += message.hand_over();
    }
    n
}

fn turns(dir: &str, provider: Provider) -> Vec<Vec<u8>> {
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

fn main() {
    let mb: usize = std::env::var("SSEFOLD_BENCH_MB").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let target = mb << 20;
    let rounds: usize = std::env::var("SSEFOLD_BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(11);
    let only = std::env::var("SSEFOLD_BENCH_BODY").unwrap_or_default();
    let repeat = |one: Vec<Vec<u8>>| {
        let size: usize = one.iter().map(Vec::len).sum();
        let n = target.div_ceil(size.max(1));
        one.iter().cloned().cycle().take(one.len() * n).collect::<Vec<_>>()
    };
    let sets = [
        (
            "bedrock_converse_recordings",
            Provider::BedrockConverse,
            repeat(turns("bedrock_converse", Provider::BedrockConverse)),
        ),
        ("bedrock_invoke_recordings", Provider::Bedrock, repeat(turns("bedrock", Provider::Bedrock))),
    ];
    println!("| body | bytes | turns | fold | event-stream + serde_json `Value` per payload | fold / baseline |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (name, provider, turns) in sets.iter().filter(|s| s.0.contains(only.as_str())) {
        let side = std::env::var("SSEFOLD_BENCH_ONLY").unwrap_or_default();
        if side == "bound" || side == "parsed" {
            let messages = support::folded_messages(*provider, turns);
            match side.as_str() {
                "bound" => black_box(bound_pass(turns, &messages)),
                _ => black_box(bound_pass(turns, &support::message_texts(&messages))),
            };
            continue;
        }
        let bytes: usize = turns.iter().map(Vec::len).sum();
        let (mut best_fold, mut best_base) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            best_fold = best_fold.min(timed(|| {
                black_box(fold_pass(*provider, turns));
            }));
            best_base = best_base.min(timed(|| {
                black_box(baseline(turns));
            }));
        }
        let mib = |s: f64| bytes as f64 / s / (1 << 20) as f64;
        println!(
            "| {name} | {:.1} MB | {} | {:.0} MiB/s | {:.0} MiB/s | **{:.2}×** |",
            bytes as f64 / 1e6,
            turns.len(),
            mib(best_fold),
            mib(best_base),
            best_base / best_fold
        );
    }
}
