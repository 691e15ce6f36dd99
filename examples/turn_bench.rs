//! The agent turn's cost over the stream alone: the fold corpora folded by
//! a plain [`Stream`] against the same bytes run through an
//! [`AgentTurn`] (every tool call decided, started, answered; the outcome
//! built at the end of each turn, as the fold builds its message), and the
//! same with the next request written from each outcome.
//!
//! ```text
//! cargo run --release --example turn_bench [MB]      (default 32 MB per corpus)
//! valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!   target/release/examples/turn_bench once CORPUS [MB]
//! callgrind_annotate --inclusive=yes cg.out | grep turn_bench::
//! ```
//!
//! `once CORPUS`: `fold_only`, `turn_only` and `turn_and_next` (never
//! inlined) run once each on one corpus, for instruction counts that do not
//! depend on the machine's load. The interleaved pass: best of 9 alternating rounds, in
//! this thread's CPU time, every turn a fresh stream / turn fed in 4 KiB
//! chunks.

use std::collections::BTreeSet;
use std::hint::black_box;

use ssefold::agent::{AgentTurn, TurnAction, TurnConfig};
use ssefold::providers::{Provider, Stream};
use ssefold::tools::ToolOptions;
use ssefold_corpus as corpus;

#[path = "../benches/support/mod.rs"]
mod support;
use support::{fold_turns, timed};

/// Folding alone (the message built at the end of each turn).
#[inline(never)]
fn fold_only(provider: Provider, turns: &[&[u8]]) -> usize {
    fold_turns(provider, turns).0
}

/// The tool names the corpus calls (the host registers them all).
fn tool_names(provider: Provider, turns: &[&[u8]]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for turn in turns {
        let mut stream = Stream::new(provider);
        stream
            .feed(turn, |e| {
                if let Some(call) = e.ready_tool_call() {
                    names.insert(call.name.to_owned());
                }
            })
            .unwrap();
    }
    names
}

/// Every turn through an agent turn: each call answered as soon as it is
/// started, the outcome (message, calls, results) built at the end.
#[inline(never)]
fn turn_only(provider: Provider, turns: &[&[u8]], tools: &BTreeSet<String>) -> usize {
    run_turns(provider, turns, tools, false)
}

/// [`turn_only`], and the next request written from each outcome.
#[inline(never)]
fn turn_and_next(provider: Provider, turns: &[&[u8]], tools: &BTreeSet<String>) -> usize {
    run_turns(provider, turns, tools, true)
}

fn run_turns(provider: Provider, turns: &[&[u8]], tools: &BTreeSet<String>, next: bool) -> usize {
    let mut events = 0usize;
    let mut results = 0usize;
    for bytes in turns {
        let mut turn = AgentTurn::new(TurnConfig::new(provider));
        for name in tools {
            turn.add_tool(name, ToolOptions::default());
        }
        for chunk in bytes.chunks(support::CHUNK) {
            turn.feed(chunk, 0, |e| {
                black_box(e);
                events += 1;
            });
            answer(&mut turn);
        }
        turn.end_of_body(0, |_| events += 1);
        answer(&mut turn);
        assert!(turn.is_finished());
        let outcome = black_box(turn.into_outcome());
        results += outcome.results.len();
        if next {
            results += black_box(outcome.next()).map_or(0, |n| n.tool_results.is_null() as usize);
        }
    }
    events + results
}

fn answer(turn: &mut AgentTurn) {
    while let Some(action) = turn.poll_action() {
        if let TurnAction::StartTool(call) = action {
            turn.tool_result(&call.call_id, "ok", false, |e| {
                black_box(e);
            })
            .unwrap();
        }
    }
}

fn corpus_of(name: &str, bytes: usize) -> (Provider, Vec<u8>) {
    match name {
        "anthropic_text" => (Provider::Anthropic, corpus::anthropic_text(bytes)),
        "anthropic_tool_use" => (Provider::Anthropic, corpus::anthropic_tool_use(bytes)),
        "openai_chat_parallel_tools" => (Provider::OpenAIChat, corpus::openai_chat_parallel_tools(bytes)),
        other => panic!("unknown corpus {other:?}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("once") {
        let mb: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
        let (provider, corpus) = corpus_of(args.get(1).map_or("", String::as_str), mb << 20);
        let turns = corpus::turns(&corpus);
        let tools = tool_names(provider, &turns);
        black_box(fold_only(provider, &turns));
        black_box(turn_only(provider, &turns, &tools));
        black_box(turn_and_next(provider, &turns, &tools));
        return;
    }
    let mb: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(32);
    println!("| corpus | fold MiB/s | turn MiB/s | turn / fold | turn + next request / fold |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for name in ["anthropic_tool_use", "openai_chat_parallel_tools", "anthropic_text"] {
        let (provider, corpus) = corpus_of(name, mb << 20);
        let turns = corpus::turns(&corpus);
        let tools = tool_names(provider, &turns);
        let (mut fold, mut turn, mut with_next) = (f64::MAX, f64::MAX, f64::MAX);
        for _ in 0..9 {
            fold = fold.min(timed(|| {
                black_box(fold_only(provider, &turns));
            }));
            turn = turn.min(timed(|| {
                black_box(turn_only(provider, &turns, &tools));
            }));
            with_next = with_next.min(timed(|| {
                black_box(turn_and_next(provider, &turns, &tools));
            }));
        }
        let mib = corpus.len() as f64 / (1 << 20) as f64;
        println!("| {name} | {:.0} | {:.0} | {:.2}x | {:.2}x |", mib / fold, mib / turn, turn / fold, with_next / fold);
    }
}
