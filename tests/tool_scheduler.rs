//! Property tests of `ToolScheduler` over random sequences of what a host
//! sees: calls becoming ready (known, unknown, invalid input; exclusive or
//! not; cancelling siblings on error or not), tools finishing in any order
//! with or without errors, progress updates, aborts and streaming fallbacks.
//!
//! Invariants checked after every step: nothing starts before it was added
//! or after abort/discard; no exclusive call overlaps another; at most
//! `max_concurrency` run; results are released in call order, each once;
//! misuse is a typed error; at the end every call has exactly one result
//! (unless discarded) and the events tell the same story as the calls.

use proptest::prelude::*;
use ssefold::tools::{SchedulerConfig, SchedulerError, ToolExecutionEvent, ToolOptions, ToolScheduler};

#[derive(Debug, Clone)]
enum Op {
    Add {
        exclusive: bool,
        fatal: bool,
        valid: bool,
    },
    AddUnknown,
    /// Finish the running call at this position (modulo) of the running list.
    Finish {
        pick: usize,
        is_error: bool,
    },
    Update {
        pick: usize,
    },
    Abort,
    Discard,
    /// Misuse: finish an id never added.
    FinishUnknown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<bool>(), any::<bool>(), prop::bool::weighted(0.9))
            .prop_map(|(exclusive, fatal, valid)| Op::Add { exclusive, fatal, valid }),
        1 => Just(Op::AddUnknown),
        8 => (any::<usize>(), prop::bool::weighted(0.2)).prop_map(|(pick, is_error)| Op::Finish { pick, is_error }),
        2 => any::<usize>().prop_map(|pick| Op::Update { pick }),
        1 => Just(Op::Abort),
        1 => Just(Op::Discard),
        1 => Just(Op::FinishUnknown),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn any_host_sequence_keeps_the_scheduling_rules(ops in prop::collection::vec(op(), 0..40), max_concurrency in 0usize..4) {
        let mut s = ToolScheduler::with_config(SchedulerConfig { max_concurrency, ..SchedulerConfig::default() });
        let mut added: Vec<(String, ToolOptions)> = Vec::new();
        let mut running: Vec<String> = Vec::new();
        let mut released: Vec<String> = Vec::new();
        let mut started_ever: Vec<String> = Vec::new();
        let (mut aborted, mut discarded) = (false, false);
        for op in ops {
            match op {
                Op::Add { exclusive, fatal, valid } => {
                    let id = format!("call_{}", added.len());
                    let options = ToolOptions::new(exclusive, fatal);
                    let input = if valid { r#"{"q": [1, "x"]}"# } else { r#"{"q": [1, "#  };
                    let r = s.add(&id, "tool", input, options);
                    if discarded {
                        prop_assert_eq!(r, Err(SchedulerError::AddAfterDiscard));
                        continue;
                    }
                    prop_assert!(r.is_ok());
                    added.push((id, options));
                }
                Op::AddUnknown => {
                    let id = format!("call_{}", added.len());
                    let r = s.add_unknown(&id, "nope");
                    if discarded {
                        prop_assert_eq!(r, Err(SchedulerError::AddAfterDiscard));
                        continue;
                    }
                    prop_assert!(r.is_ok());
                    added.push((id, ToolOptions::default()));
                }
                Op::Finish { pick, is_error } => {
                    if running.is_empty() {
                        continue;
                    }
                    let id = running.remove(pick % running.len());
                    let finished = s.finish(&id, "out", is_error).unwrap();
                    prop_assert!(finished.recorded);
                    running.retain(|r| !finished.cancel.contains(r));
                    // A second finish of the same call is a typed error.
                    prop_assert_eq!(s.finish(&id, "again", false), Err(SchedulerError::AlreadyFinished(id.clone())));
                }
                Op::Update { pick } => {
                    if let Some(id) = running.get(pick % running.len().max(1)) {
                        prop_assert!(s.update(id, "working").is_ok());
                    }
                }
                Op::Abort => {
                    let cancel = s.abort("user");
                    if !aborted && !discarded {
                        let mut expected = running.clone();
                        expected.sort();
                        let mut got = cancel.clone();
                        got.sort();
                        prop_assert_eq!(got, expected);
                        running.clear();
                    } else {
                        prop_assert!(cancel.is_empty());
                    }
                    aborted |= !discarded;
                }
                Op::Discard => {
                    let cancel = s.discard();
                    if !discarded {
                        let mut expected = running.clone();
                        expected.sort();
                        let mut got = cancel.clone();
                        got.sort();
                        prop_assert_eq!(got, expected);
                        running.clear();
                    }
                    discarded = true;
                }
                Op::FinishUnknown => {
                    prop_assert_eq!(s.finish("never", "", false), Err(SchedulerError::UnknownCallId("never".into())));
                }
            }
            let start = s.startable();
            prop_assert!(start.is_empty() || !(aborted || discarded), "nothing starts after abort/discard");
            for id in start {
                prop_assert!(added.iter().any(|(a, _)| *a == id), "nothing starts before it is added");
                prop_assert!(!started_ever.contains(&id), "a call starts once");
                started_ever.push(id.clone());
                running.push(id);
            }
            let exclusive_running = running.iter().any(|id| added.iter().any(|(a, o)| a == id && o.exclusive));
            prop_assert!(!exclusive_running || running.len() == 1, "an exclusive call runs alone: {:?}", running);
            prop_assert!(max_concurrency == 0 || running.len() <= max_concurrency);
            prop_assert_eq!(s.running(), running.len());
            released.extend(s.results().into_iter().map(|r| r.call_id));
            let order: Vec<&String> = added.iter().map(|(a, _)| a).take(released.len()).collect();
            prop_assert_eq!(released.iter().collect::<Vec<_>>(), order, "results in call order, each once");
        }
        // Finish what still runs, then every call has its one result.
        for id in running.drain(..) {
            let _ = s.finish(&id, "out", false).unwrap();
            for id in s.startable() { running_push_finish(&mut s, &id); }
        }
        loop {
            let start = s.startable();
            if start.is_empty() { break; }
            for id in start { running_push_finish(&mut s, &id); }
        }
        prop_assert!(s.is_settled());
        released.extend(s.results().into_iter().map(|r| r.call_id));
        if discarded {
            prop_assert_eq!(s.all_results(), Err(SchedulerError::Discarded));
        } else {
            let all: Vec<String> = added.iter().map(|(a, _)| a.clone()).collect();
            prop_assert_eq!(&released, &all);
            prop_assert_eq!(s.all_results().unwrap().len(), all.len());
        }
        // The events: a call is started at most once and before it finished;
        // each call finishes at most once.
        let mut started = Vec::new();
        let mut finished = Vec::new();
        while let Some(event) = s.next_event() {
            match event {
                ToolExecutionEvent::Started { call_id, .. } => {
                    prop_assert!(!started.contains(&call_id) && !finished.contains(&call_id));
                    started.push(call_id);
                }
                ToolExecutionEvent::Update { call_id, .. } => prop_assert!(started.contains(&call_id) && !finished.contains(&call_id)),
                ToolExecutionEvent::Finished { call_id, .. } => {
                    prop_assert!(!finished.contains(&call_id));
                    finished.push(call_id);
                }
                _ => {}
            }
        }
        if !discarded {
            prop_assert_eq!(finished.len(), added.len());
        }
    }
}

fn running_push_finish(s: &mut ToolScheduler, id: &str) {
    s.finish(id, "out", false).unwrap();
}
