//! What the fold benchmarks (`benches/fold.rs`, `benches/fold_gemini_ollama.rs`)
//! and `examples/relay_bench.rs` share: the one "fold every turn" loop and
//! the CPU-time clock. Included by path (`#[path = …] mod support;`), so each
//! target compiles only what it uses.

#![allow(dead_code)]

use std::hint::black_box;

use ssefold::providers::{Provider, Stream};

/// The chunk size every benchmark feeds: a typical socket read.
pub const CHUNK: usize = 4096;

/// Folds every turn (a fresh stream each, fed in [`CHUNK`]-byte chunks,
/// finished, its message built); returns the normalized event count and the
/// folded messages' total number of top-level members (so that nothing is
/// optimized away).
pub fn fold_turns<T: AsRef<[u8]>>(provider: Provider, turns: &[T]) -> (usize, usize) {
    let mut events = 0usize;
    let mut folded = 0usize;
    for turn in turns {
        let mut stream = Stream::new(provider);
        for chunk in turn.as_ref().chunks(CHUNK) {
            stream
                .feed(chunk, |e| {
                    black_box(e);
                    events += 1;
                })
                .unwrap();
        }
        stream.finish(|_| events += 1).unwrap();
        let message = black_box(stream.message());
        folded += message.as_object().map_or(0, |m| m.len());
    }
    (events, folded)
}

/// This thread's CPU time from `/proc/thread-self/schedstat` (so that being
/// descheduled by other processes on a shared machine does not count), wall
/// time where that is unavailable.
pub enum Clock {
    /// Thread CPU nanoseconds at the start.
    Cpu(u64),
    /// Wall time at the start.
    Wall(std::time::Instant),
}

impl Clock {
    fn cpu_ns() -> Option<u64> {
        std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
    }

    /// Starts timing.
    pub fn start() -> Clock {
        match Self::cpu_ns() {
            Some(ns) => Clock::Cpu(ns),
            None => Clock::Wall(std::time::Instant::now()),
        }
    }

    /// Seconds since [`Clock::start`].
    pub fn secs(&self) -> f64 {
        match self {
            Clock::Cpu(start) => Self::cpu_ns().unwrap_or(*start).saturating_sub(*start) as f64 / 1e9,
            Clock::Wall(t) => t.elapsed().as_secs_f64(),
        }
    }

    /// What the clock measures here, for the printed figures.
    pub fn kind() -> &'static str {
        if Self::cpu_ns().is_some() {
            "thread CPU time"
        } else {
            "wall time"
        }
    }
}

/// The seconds `f` takes on the [`Clock`].
pub fn timed(f: impl FnOnce()) -> f64 {
    let clock = Clock::start();
    f();
    clock.secs()
}
