//! The scheduling rules, one test per rule, and a decision table over mixed
//! classes of calls.

use super::*;

const SAFE: ToolOptions = ToolOptions::new(false, false);
const EXCL: ToolOptions = ToolOptions::new(true, false);
const FATAL: ToolOptions = ToolOptions::new(false, true);

fn ids(results: &[ToolResult]) -> Vec<&str> {
    results.iter().map(|r| r.call_id.as_str()).collect()
}

fn events(s: &mut ToolScheduler) -> Vec<String> {
    std::iter::from_fn(|| s.next_event())
        .map(|e| match e {
            ToolExecutionEvent::Started { call_id, .. } => format!("started {call_id}"),
            ToolExecutionEvent::Update { call_id, text } => format!("update {call_id} {text}"),
            ToolExecutionEvent::Finished { call_id, is_error, .. } => format!("finished {call_id} {is_error}"),
            other => format!("{} {}", other.name(), other.call_id()),
        })
        .collect()
}

#[test]
fn concurrency_safe_calls_run_in_parallel() {
    let mut s = ToolScheduler::new();
    s.add("a", "read", "{}", SAFE).unwrap();
    s.add("b", "grep", "{}", SAFE).unwrap();
    assert_eq!(s.startable(), ["a", "b"]);
    assert_eq!(s.running(), 2);
    assert!(s.startable().is_empty(), "a call is handed out once");
}

#[test]
fn an_exclusive_call_waits_for_running_ones_runs_alone_and_blocks_later_ones() {
    let mut s = ToolScheduler::new();
    s.add("a", "read", "{}", SAFE).unwrap();
    assert_eq!(s.startable(), ["a"]);
    s.add("b", "edit", "{}", EXCL).unwrap();
    s.add("c", "read", "{}", SAFE).unwrap();
    assert!(s.startable().is_empty(), "b waits for a; c waits behind b");
    s.finish("a", "A", false).unwrap();
    assert_eq!(s.startable(), ["b"]);
    s.add("d", "read", "{}", SAFE).unwrap();
    assert!(s.startable().is_empty(), "nothing runs beside an exclusive call");
    s.finish("b", "B", false).unwrap();
    assert_eq!(s.startable(), ["c", "d"]);
}

#[test]
fn results_come_back_in_call_order_even_when_a_later_call_finishes_first() {
    let mut s = ToolScheduler::new();
    for id in ["a", "b", "c"] {
        s.add(id, "read", "{}", SAFE).unwrap();
    }
    s.startable();
    s.finish("c", "C", false).unwrap();
    s.finish("b", "B", false).unwrap();
    assert!(s.results().is_empty(), "a is still running");
    s.finish("a", "A", false).unwrap();
    assert_eq!(ids(&s.results()), ["a", "b", "c"]);
    assert!(s.results().is_empty(), "each result is returned once");
}

#[test]
fn max_concurrency_bounds_running_calls_in_order() {
    let mut s = ToolScheduler::with_config(SchedulerConfig { max_concurrency: 2, ..SchedulerConfig::default() });
    for id in ["a", "b", "c"] {
        s.add(id, "read", "{}", SAFE).unwrap();
    }
    assert_eq!(s.startable(), ["a", "b"]);
    s.finish("b", "B", false).unwrap();
    assert_eq!(s.startable(), ["c"]);
}

#[test]
fn an_unknown_tool_gets_an_error_result_at_once_and_never_runs() {
    let mut s = ToolScheduler::new();
    s.add_unknown("a", "teleport").unwrap();
    assert!(s.startable().is_empty());
    let results = s.results();
    assert_eq!(results[0].output, "No such tool available: teleport");
    assert!(results[0].is_error);
    assert_eq!(results[0].kind, ToolResultKind::UnknownTool);
    assert_eq!(events(&mut s), ["finished a true"]);
    assert_eq!(s.finish("a", "x", false), Err(SchedulerError::NotStarted("a".into())));
}

#[test]
fn input_that_is_not_json_never_runs() {
    let mut s = ToolScheduler::new();
    s.add("a", "read", r#"{"path": "a"#, SAFE).unwrap();
    assert!(s.startable().is_empty());
    let r = &s.results()[0];
    assert!(r.is_error && r.kind == ToolResultKind::InvalidInput, "{r:?}");
    assert!(r.output.starts_with("Invalid tool input for read: "), "{}", r.output);
}

#[test]
fn a_failing_call_marked_so_cancels_its_siblings_and_the_turn_goes_on() {
    let mut s = ToolScheduler::new();
    s.add("a", "bash", "{}", FATAL).unwrap();
    s.add("b", "read", "{}", SAFE).unwrap();
    s.add("c", "edit", "{}", EXCL).unwrap();
    assert_eq!(s.startable(), ["a", "b"]);
    let finished = s.finish("a", "exit 1", true).unwrap();
    assert_eq!(finished, Finished { recorded: true, cancel: vec!["b".to_owned()] });
    let results = s.results();
    assert_eq!(ids(&results), ["a", "b", "c"]);
    assert_eq!(results[0].kind, ToolResultKind::Ran);
    assert_eq!(results[1].output, "Cancelled: parallel tool call bash (a) errored");
    assert_eq!(results[2].kind, ToolResultKind::Cancelled, "the queued call never starts");
    // The cancelled call's late result is dropped, not an error.
    assert_eq!(s.finish("b", "late", false), Ok(Finished { recorded: false, cancel: vec![] }));
    s.add("d", "read", "{}", SAFE).unwrap();
    assert_eq!(s.results()[0].kind, ToolResultKind::Cancelled, "later calls of the turn too");
    assert!(s.startable().is_empty());
}

#[test]
fn an_error_of_a_call_not_marked_so_cancels_nothing() {
    let mut s = ToolScheduler::new();
    s.add("a", "read", "{}", SAFE).unwrap();
    s.add("b", "read", "{}", SAFE).unwrap();
    s.startable();
    assert_eq!(s.finish("a", "ENOENT", true).unwrap().cancel, Vec::<String>::new());
    s.finish("b", "B", false).unwrap();
    assert_eq!(s.results().iter().map(|r| r.is_error).collect::<Vec<_>>(), [true, false]);
}

#[test]
fn discard_drops_queued_work_and_ends_running_calls() {
    let mut s = ToolScheduler::new();
    s.add("a", "read", "{}", SAFE).unwrap();
    s.add("b", "edit", "{}", EXCL).unwrap();
    assert_eq!(s.startable(), ["a"]);
    assert_eq!(s.discard(), ["a"]);
    assert!(s.startable().is_empty());
    assert!(s.results().is_empty());
    assert!(s.is_settled() && s.is_discarded());
    assert_eq!(s.add("c", "read", "{}", SAFE), Err(SchedulerError::AddAfterDiscard));
    assert_eq!(s.all_results(), Err(SchedulerError::Discarded));
    assert_eq!(events(&mut s), ["started a", "finished a true"]);
    assert!(!s.finish("a", "late", false).unwrap().recorded);
}

#[test]
fn abort_gives_every_unfinished_call_an_aborted_result() {
    let mut s = ToolScheduler::new();
    s.add("a", "read", "{}", SAFE).unwrap();
    s.add("b", "read", "{}", SAFE).unwrap();
    s.add("c", "edit", "{}", EXCL).unwrap();
    s.startable();
    s.finish("a", "A", false).unwrap();
    assert_eq!(s.abort("user pressed Esc"), ["b"]);
    assert!(s.startable().is_empty(), "nothing starts after abort");
    s.add("d", "read", "{}", SAFE).unwrap();
    let results = s.results();
    assert_eq!(ids(&results), ["a", "b", "c", "d"]);
    assert_eq!(results[0].kind, ToolResultKind::Ran);
    for r in &results[1..] {
        assert_eq!(
            (r.kind, r.is_error, r.output.as_str()),
            (ToolResultKind::Aborted, true, "Aborted: user pressed Esc")
        );
    }
    assert!(s.is_settled());
    assert!(s.abort("again").is_empty());
}

#[test]
fn misuse_is_a_typed_error_that_changes_nothing() {
    let mut s = ToolScheduler::with_config(SchedulerConfig { max_calls: 2, ..SchedulerConfig::default() });
    s.add("a", "read", "{}", SAFE).unwrap();
    assert_eq!(s.add("a", "read", "{}", SAFE), Err(SchedulerError::DuplicateCallId("a".into())));
    assert_eq!(s.finish("zz", "", false), Err(SchedulerError::UnknownCallId("zz".into())));
    assert_eq!(s.finish("a", "", false), Err(SchedulerError::NotStarted("a".into())));
    assert_eq!(s.update("a", "50%"), Err(SchedulerError::NotStarted("a".into())));
    s.startable();
    s.finish("a", "A", false).unwrap();
    assert_eq!(s.finish("a", "A", false), Err(SchedulerError::AlreadyFinished("a".into())));
    assert_eq!(s.update("a", "x"), Err(SchedulerError::AlreadyFinished("a".into())));
    s.add("b", "read", "{}", SAFE).unwrap();
    assert_eq!(s.add("c", "read", "{}", SAFE), Err(SchedulerError::TooManyCalls { limit: 2 }));
    assert_eq!(s.all_results(), Err(SchedulerError::Unfinished("b".into())));
    assert_eq!(s.len(), 2);
    assert_eq!(SchedulerError::TooManyCalls { limit: 2 }.kind(), "too_many_calls");
}

#[test]
fn events_come_in_a_defined_order_and_updates_coalesce() {
    let mut s = ToolScheduler::new();
    s.add("a", "bash", "{}", SAFE).unwrap();
    s.add_unknown("b", "nope").unwrap();
    s.startable();
    s.update("a", "10%").unwrap();
    s.update("a", "20%").unwrap();
    s.finish("a", "done", false).unwrap();
    assert_eq!(events(&mut s), ["finished b true", "started a", "update a 20%", "finished a false"]);
    let json = ToolExecutionEvent::Finished { call_id: "a".into(), name: "bash".into(), is_error: false }.to_json();
    assert_eq!(json.to_string(), r#"{"event":"tool_execution_finished","call_id":"a","name":"bash","is_error":false}"#);
}

#[test]
fn results_are_shaped_for_each_providers_next_request() {
    let results = [
        ToolResult {
            call_id: "t1".into(),
            id_synthesized: false,
            name: "read".into(),
            output: "text".into(),
            is_error: false,
            kind: ToolResultKind::Ran,
        },
        ToolResult {
            call_id: "t2".into(),
            id_synthesized: false,
            name: "bash".into(),
            output: "exit 1".into(),
            is_error: true,
            kind: ToolResultKind::Ran,
        },
    ];
    assert_eq!(
        tool_results(Provider::Anthropic, &results).unwrap(),
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "text"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "exit 1", "is_error": true}]})
    );
    assert_eq!(
        tool_results(Provider::OpenAIChat, &results).unwrap(),
        json!([{"role": "tool", "tool_call_id": "t1", "content": "text"},
               {"role": "tool", "tool_call_id": "t2", "content": "Error: exit 1"}])
    );
    assert_eq!(
        tool_results(Provider::OpenAIResponses, &results).unwrap(),
        json!([{"type": "function_call_output", "call_id": "t1", "output": "text"},
               {"type": "function_call_output", "call_id": "t2", "output": "Error: exit 1"}])
    );
    assert_eq!(tool_results(Provider::Auto, &results), Err(SchedulerError::UnsupportedProvider("auto")));
}

/// Every sequence of "the host finishes running call X (ok / error)" over
/// four calls of mixed classes: the invariants hold at every step.
#[test]
fn decision_table_over_four_calls_of_mixed_classes() {
    let classes = [SAFE, EXCL, FATAL];
    let mut cases = 0;
    for c0 in classes {
        for c1 in classes {
            for c2 in classes {
                for c3 in classes {
                    let options = [c0, c1, c2, c3];
                    // Each finish choice: which running call (by position in
                    // the running list) and whether it errs, 0..8 choices.
                    for seed in 0..64u32 {
                        run_case(&options, seed);
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 81 * 64);
}

fn run_case(options: &[ToolOptions; 4], mut seed: u32) {
    let mut s = ToolScheduler::new();
    let ids = ["c0", "c1", "c2", "c3"];
    let mut running: Vec<&str> = Vec::new();
    let mut released: Vec<String> = Vec::new();
    let mut added = 0;
    loop {
        // Calls become ready one by one, interleaved with finishes.
        if added < 4 && (seed & 1 == 0 || running.is_empty()) {
            s.add(ids[added], "t", "{}", options[added]).unwrap();
            added += 1;
        }
        seed = seed.rotate_right(1);
        for id in s.startable() {
            let i = ids.iter().position(|x| *x == id).unwrap();
            assert!(i < added, "nothing starts before it is added");
            running.push(ids[i]);
        }
        // No exclusive call overlaps another.
        let exclusive_running = running.iter().any(|id| options[id[1..].parse::<usize>().unwrap()].exclusive);
        assert!(!exclusive_running || running.len() == 1, "{options:?} {running:?}");
        released.extend(s.results().into_iter().map(|r| r.call_id));
        if running.is_empty() {
            if added == 4 && s.is_settled() {
                break;
            }
            continue;
        }
        let pick = (seed as usize) % running.len();
        let id = running.remove(pick);
        let is_error = seed & 2 != 0;
        seed = seed.rotate_right(2) ^ 0x9E37_79B9;
        let finished = s.finish(id, "out", is_error).unwrap();
        running.retain(|r| !finished.cancel.iter().any(|c| c == r));
    }
    released.extend(s.results().into_iter().map(|r| r.call_id));
    assert_eq!(released, ids, "every call has exactly one result, in call order");
    assert!(s
        .all_results()
        .unwrap()
        .iter()
        .all(|r| r.kind == ToolResultKind::Ran || r.kind == ToolResultKind::Cancelled));
}

#[test]
fn the_core_checks_the_scheduler_limits_for_every_binding() {
    assert_eq!(SchedulerConfig::default().validate(), Ok(()));
    assert_eq!(SchedulerConfig { max_concurrency: 0, max_calls: 1 }.validate(), Ok(()));
    let err = SchedulerConfig { max_concurrency: 3, max_calls: 0 }.validate().unwrap_err();
    assert_eq!(err, crate::config::ConfigError::TooSmall { field: "max_calls", value: 0, min: 1 });
    assert_eq!(err.to_string(), "max_calls must be at least 1, got 0");
}
