//! What the fold benchmarks (`benches/fold.rs`, `benches/fold_gemini_ollama.rs`)
//! and `examples/relay_bench.rs` share: the one "fold every turn" loop and
//! the CPU-time clock; and the event-stream decoding loop of
//! `benches/eventstream.rs` and `examples/eventstream_bench.rs` with its
//! memcpy baseline. Included by path (`#[path = …] mod support;`), so each
//! target compiles only what it uses.

#![allow(dead_code)]

use std::hint::black_box;

use ssefold::providers::{Provider, Stream};

/// The chunk size every benchmark feeds: a typical socket read.
pub const CHUNK: usize = 4096;

/// Folds every turn (a fresh stream each, fed in [`CHUNK`]-byte chunks,
/// finished, its message built by [`Stream::into_message`]); returns the normalized event count and the
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
        // The host is done with the stream: the message is moved out of it.
        let message = black_box(stream.into_message());
        folded += message.as_object().map_or(0, |m| m.len());
    }
    (events, folded)
}

/// What a bound pass hands the host for each turn: the folded message,
/// built beforehand, handed over in one of two ways ([`HandOver`]).
pub trait HandOver {
    /// Hands the message over; returns its number of top-level members.
    fn hand_over(&self) -> usize;
}

/// Cloned and dropped: the least any fold behind this API pays (an
/// `IndexMap` clone copies its table whole and reads no text).
impl HandOver for serde_json::Value {
    fn hand_over(&self) -> usize {
        black_box(self.clone()).as_object().map_or(0, |o| o.len())
    }
}

/// The message's JSON text, its `Value` built from it by serde_json and
/// dropped: what building the message's `Value`s from text costs once (a
/// fold builds them from the payloads' text, which holds at least that
/// text: the baseline's own builder, so the two compare like for like).
pub struct MessageText(pub String);

impl HandOver for MessageText {
    fn hand_over(&self) -> usize {
        let v: serde_json::Value = serde_json::from_str(&self.0).expect("a folded message serializes to JSON");
        black_box(v).as_object().map_or(0, |o| o.len())
    }
}

/// Every turn's folded message as its JSON text ([`MessageText`]).
pub fn message_texts(messages: &[serde_json::Value]) -> Vec<MessageText> {
    messages.iter().map(|m| MessageText(m.to_string())).collect()
}

/// Every turn's folded message, each turn fed whole to a fresh stream and
/// finished: what the benches' bound passes hand over ([`HandOver`]).
pub fn folded_messages<T: AsRef<[u8]>>(provider: Provider, turns: &[T]) -> Vec<serde_json::Value> {
    turns
        .iter()
        .map(|t| {
            let mut s = Stream::new(provider);
            s.feed(t.as_ref(), |_| {}).unwrap();
            s.finish(|_| {}).unwrap();
            s.into_message()
        })
        .collect()
}

/// Decodes an AWS event stream fed in [`CHUNK`]-byte chunks as a consumer
/// would (each message's `:event-type` looked up); returns the message count
/// and the payload bytes.
pub fn decode_eventstream(body: &[u8]) -> (usize, usize) {
    let mut decoder = ssefold::eventstream::Decoder::new();
    let (mut messages, mut payload) = (0usize, 0usize);
    for chunk in body.chunks(CHUNK) {
        decoder
            .feed(chunk, |m| {
                black_box(m.event_type());
                messages += 1;
                payload += m.payload.len();
            })
            .unwrap();
    }
    assert_eq!(decoder.finish().discarded_bytes, 0);
    (messages, payload)
}

/// The baseline: the same bytes copied in [`CHUNK`]-byte chunks into a
/// reused buffer (what any decoder at least reads).
pub fn memcpy_chunks(body: &[u8], buf: &mut Vec<u8>) -> usize {
    let mut n = 0;
    for chunk in body.chunks(CHUNK) {
        buf.clear();
        buf.extend_from_slice(black_box(chunk));
        n += black_box(&buf).len();
    }
    n
}

/// This thread's CPU time (so that being descheduled by other processes on a
/// shared machine does not count): `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`
/// on Linux with glibc, else `/proc/thread-self/schedstat`, else wall time.
/// The clock is read to the nanosecond: schedstat's figure for a running
/// thread that makes no system call only moves at the scheduler's ticks
/// (4 ms here), so a one-pass sample of 20-60 ms read from it was off by up
/// to a tick, and the best of several rounds took the luckiest rounding.
pub enum Clock {
    /// Thread CPU nanoseconds at the start.
    Cpu(u64),
    /// Wall time at the start.
    Wall(std::time::Instant),
}

impl Clock {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn cpu_ns() -> Option<u64> {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable `timespec` that the call only
        // writes; the clock id is a constant of this platform.
        let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        (r == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }

    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
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

/// How many calls of `f` take about 0.2 s of wall time (at least one): a
/// timed sample of a fast operation repeats it this many times (where the
/// thread CPU clock is schedstat's, it advances in scheduler ticks of a few
/// milliseconds).
pub fn reps_for(mut f: impl FnMut()) -> usize {
    let t = std::time::Instant::now();
    f();
    (0.2 / t.elapsed().as_secs_f64().max(1e-9)).ceil().clamp(1.0, 1e6) as usize
}

/// The best time of one call of `f` over `rounds` samples of `reps` calls
/// each, on the [`Clock`].
pub fn best_secs(rounds: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..rounds {
        let clock = Clock::start();
        for _ in 0..reps {
            f();
        }
        best = best.min(clock.secs() / reps as f64);
    }
    best
}

/// The seconds `f` takes on the [`Clock`].
pub fn timed(f: impl FnOnce()) -> f64 {
    let clock = Clock::start();
    f();
    clock.secs()
}
