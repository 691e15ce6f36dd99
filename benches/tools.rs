//! Tool scheduler: what it costs per tool call (it must be negligible next to any tool: a tool
//! takes milliseconds at least). One turn of 8 calls end to end — add, startable, finish (last
//! call first), results, the `tool_execution_*` events, `all_results` and the next request's
//! shape — for parallel calls and for exclusive calls (one at a time); criterion reports the time
//! per call (throughput in elements = calls).
//!
//! Run: `cargo bench --bench tools`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ssefold::providers::Provider;
use ssefold::tools::{tool_results, ToolOptions, ToolScheduler};

const CALLS: usize = 8;

fn turn(ids: &[String], exclusive: bool) -> usize {
    let mut s = ToolScheduler::new();
    for id in ids {
        s.add(id, "read_file", r#"{"path":"src/lib.rs","limit":200}"#, ToolOptions::new(exclusive, false)).unwrap();
    }
    let mut released = 0;
    let mut events = 0;
    loop {
        let start = s.startable();
        if start.is_empty() {
            break;
        }
        for id in start.iter().rev() {
            s.finish(id, "fn main() {}\n", false).unwrap();
        }
        released += s.results().len();
        while s.next_event().is_some() {
            events += 1;
        }
    }
    assert_eq!((released, events), (CALLS, 2 * CALLS));
    let next = tool_results(Provider::Anthropic, &s.all_results().unwrap()).unwrap();
    black_box(next);
    released
}

fn bench(c: &mut Criterion) {
    let ids: Vec<String> = (0..CALLS).map(|i| format!("toolu_01CM7Nqnu3tF2UqzksSCxsq{i}")).collect();
    let mut group = c.benchmark_group("tool_scheduler");
    group.throughput(Throughput::Elements(CALLS as u64));
    group.bench_function("turn_of_8_parallel", |b| b.iter(|| turn(black_box(&ids), false)));
    group.bench_function("turn_of_8_exclusive", |b| b.iter(|| turn(black_box(&ids), true)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
