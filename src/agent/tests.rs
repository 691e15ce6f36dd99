//! Units of the agent turn: the doc example's flow in detail, the
//! reconnection paths, abort, and the events' order.

use super::*;
use crate::reconnect::ReconnectPolicy;

const CHAT_TWO_CALLS: &str = concat!(
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",",
    "\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"\"}}]}}]}\n\n",
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":",
    "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"p\\\":1}\"}}]}}]}\n\n",
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":",
    "{\"tool_calls\":[{\"index\":1,\"id\":null,\"type\":\"function\",\"function\":{\"name\":\"edit\",\"arguments\":\"{}\"}}]}}]}\n\n",
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    "data: [DONE]\n\n",
);

fn actions(turn: &mut AgentTurn) -> Vec<TurnAction> {
    std::iter::from_fn(|| turn.poll_action()).collect()
}

fn names(events: &[String]) -> Vec<&str> {
    events.iter().map(String::as_str).collect()
}

/// Records what a callback shows, by name (tool events with their call).
fn recorder(log: &mut Vec<String>) -> impl FnMut(TurnEvent<'_>) + '_ {
    move |e| {
        log.push(match e {
            TurnEvent::Stream(s) => s.name().to_owned(),
            TurnEvent::Tool(t) => format!("{} {}", t.name(), t.call_id()),
        })
    }
}

#[test]
fn calls_start_at_their_part_end_and_an_exclusive_one_waits() {
    let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
    turn.add_tool("read", ToolOptions::default());
    turn.add_tool("edit", ToolOptions { exclusive: true, ..ToolOptions::default() });
    let mut log = Vec::new();
    let (first, rest) = CHAT_TWO_CALLS.split_at(CHAT_TWO_CALLS.find("{\\\"p\\\"").unwrap() + 20);
    turn.feed(first.as_bytes(), 0, recorder(&mut log));
    assert!(actions(&mut turn).is_empty(), "not complete yet");
    turn.feed(rest.as_bytes(), 1, recorder(&mut log));
    // read is complete at the next call's start; edit waits for it.
    let a = actions(&mut turn);
    assert_eq!(a.len(), 1, "{a:?}");
    assert!(matches!(&a[0], TurnAction::StartTool(s) if s.call_id == "call_a" && s.arguments == r#"{"p":1}"#));
    assert!(turn.is_stream_ended());
    assert!(!turn.is_finished());
    let started = log.iter().position(|l| l == "tool_execution_started call_a").unwrap();
    let part_end = log.iter().position(|l| l == "part_end").unwrap();
    assert!(part_end < started, "{log:?}");
    turn.tool_result("call_a", "data", false, recorder(&mut log)).unwrap();
    let a = actions(&mut turn);
    let TurnAction::StartTool(edit) = &a[0] else { panic!("{a:?}") };
    assert_eq!((edit.name.as_str(), edit.call_id.as_str()), ("edit", "ssefold_call_1"), "synthesized id");
    turn.tool_result("ssefold_call_1", "ok", false, recorder(&mut log)).unwrap();
    assert!(turn.is_finished());
    let out = turn.outcome();
    assert_eq!(out.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(out.results.len(), 2);
    let next = out.next().unwrap();
    assert_eq!(next.append().len(), 3);
    assert_eq!(next.append()[0]["tool_calls"][1]["id"], "ssefold_call_1", "the assistant carries the synthesized id");
    assert_eq!(next.append()[2]["tool_call_id"], "ssefold_call_1");
    assert_eq!(out.message["choices"][0]["message"]["tool_calls"][1]["id"], Value::Null, "the fold is the SDK's");
}

#[test]
fn unknown_and_unregistered_calls_get_error_results_without_running() {
    let mut turn = AgentTurn::new(TurnConfig::new(Provider::Auto));
    turn.add_tool("read", ToolOptions::default());
    turn.feed(CHAT_TWO_CALLS.as_bytes(), 0, |_| {});
    let a = actions(&mut turn);
    assert_eq!(a.len(), 1);
    turn.tool_result("call_a", "x", false, |_| {}).unwrap();
    assert!(turn.is_finished());
    let out = turn.outcome();
    assert_eq!(out.results[1].kind, ToolResultKind::UnknownTool);
    assert_eq!(out.results[1].output, "No such tool available: edit");
    assert!(out.results[1].is_error);
}

#[test]
fn abort_cancels_running_calls_and_every_call_gets_a_result() {
    let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
    turn.add_tool("read", ToolOptions::default());
    turn.add_tool("edit", ToolOptions::default());
    // Cut inside the second call's arguments.
    let cut = CHAT_TWO_CALLS.find("\"edit\",\"arguments\":\"{").unwrap() + 22;
    let body = CHAT_TWO_CALLS[..cut].to_owned() + "\"}}]}}]}\n\n";
    let _ = body;
    let mut log = Vec::new();
    turn.feed(&CHAT_TWO_CALLS.as_bytes()[..CHAT_TWO_CALLS.find("\"index\":1").unwrap()], 0, recorder(&mut log));
    turn.feed(b"", 0, recorder(&mut log));
    assert!(actions(&mut turn).is_empty());
    turn.abort("user pressed Esc", recorder(&mut log));
    assert_eq!(log.last().map(String::as_str), Some("tool_execution_finished call_a"), "{log:?}");
    assert!(names(&log).contains(&"turn_end"));
    assert!(turn.is_finished());
    let out = turn.outcome();
    assert!(out.aborted);
    assert_eq!(out.stop_reason.as_deref(), Some("aborted"));
    assert_eq!(out.results.len(), 1, "{:?}", out.results);
    assert_eq!(out.results[0].kind, ToolResultKind::Incomplete, "the open call was cut by the abort");
    // A late result of nothing running is refused.
    assert!(turn.tool_result("call_a", "late", false, |_| {}).is_err());
}

#[test]
fn an_abort_while_a_tool_runs_cancels_it() {
    let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
    turn.add_tool("read", ToolOptions::default());
    turn.add_tool("edit", ToolOptions::default());
    turn.feed(CHAT_TWO_CALLS.as_bytes(), 0, |_| {});
    assert_eq!(actions(&mut turn).len(), 2);
    turn.tool_result("call_a", "done", false, |_| {}).unwrap();
    turn.abort("stop", |_| {});
    assert_eq!(actions(&mut turn), [TurnAction::CancelTool { call_id: "ssefold_call_1".into() }]);
    let out = turn.outcome();
    assert_eq!(out.results[0].kind, ToolResultKind::Ran);
    assert_eq!((out.results[1].kind, out.results[1].output.as_str()), (ToolResultKind::Aborted, "Aborted: stop"));
    // The late result is dropped, not an error.
    turn.tool_result("ssefold_call_1", "late", false, |_| {}).unwrap();
    assert_eq!(turn.outcome().results[1].output, "Aborted: stop");
}

/// Where the choice's finish chunk starts: a body cut there ended before
/// the answer did.
fn before_finish(body: &str) -> usize {
    body.find("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},")
        .unwrap()
}

#[test]
fn a_body_that_ends_early_is_restarted_when_opted_in_and_the_restart_discards_the_calls() {
    let policy = ReconnectPolicy { restart_after_output: true, ..ReconnectPolicy::default() };
    let config = TurnConfig { reconnect: Some(policy), ..TurnConfig::new(Provider::OpenAIChat) };
    let mut turn = AgentTurn::new(config);
    turn.add_tool("read", ToolOptions::default());
    turn.add_tool("edit", ToolOptions::default());
    turn.connected(0);
    turn.feed(&CHAT_TWO_CALLS.as_bytes()[..before_finish(CHAT_TWO_CALLS)], 1, |_| {});
    assert!(actions(&mut turn).is_empty(), "Chat commits its calls at the choice's finish");
    turn.end_of_body(2, |_| {});
    let a = actions(&mut turn);
    assert!(matches!(a.as_slice(), [TurnAction::Reconnect { attempt: 1, replay: Replay::Restart, .. }]), "{a:?}");
    assert!(!turn.is_stream_ended());
    // The server answers again from the start (another completion id).
    turn.connected(1000);
    let again = CHAT_TWO_CALLS.replace("\"c1\"", "\"c2\"");
    let mut log = Vec::new();
    turn.feed(again.as_bytes(), 1001, recorder(&mut log));
    assert!(names(&log).contains(&"turn_reset"));
    let a = actions(&mut turn);
    assert_eq!(a.iter().filter(|x| matches!(x, TurnAction::StartTool(_))).count(), 2, "{a:?}");
    turn.tool_result("call_a", "2", false, |_| {}).unwrap();
    turn.tool_result("ssefold_call_1", "3", false, |_| {}).unwrap();
    assert!(turn.is_finished());
    let out = turn.outcome();
    assert_eq!(out.results.iter().map(|r| r.output.as_str()).collect::<Vec<_>>(), ["2", "3"]);
    assert_eq!(out.message["id"], "c2");
    assert_eq!(out.timings.attempts.iter().map(|a| a.outcome).collect::<Vec<_>>(), ["ended_early", "completed"]);
}

#[test]
fn after_output_a_cut_answer_is_not_sent_again_by_default() {
    let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
    turn.add_tool("read", ToolOptions::default());
    turn.connected(0);
    turn.feed(&CHAT_TWO_CALLS.as_bytes()[..before_finish(CHAT_TWO_CALLS)], 1, |_| {});
    turn.connection_failed("reset by peer", 2, |_| {});
    let a = actions(&mut turn);
    assert!(!a.iter().any(|x| matches!(x, TurnAction::Reconnect { .. })), "no silent re-POST: {a:?}");
    let out = turn.outcome();
    assert_eq!(out.gave_up, Some(GiveUpReason::NotResumable));
    assert!(out.output_started);
    assert!(matches!(out.failure, Some(TurnFailure::Transport(_))), "{:?}", out.failure);
    assert_eq!(out.message["choices"][0]["message"]["tool_calls"][0]["id"], "call_a", "everything folded is kept");
    assert_eq!(out.results.iter().map(|r| r.kind).collect::<Vec<_>>(), [ToolResultKind::Incomplete; 2]);
}

#[test]
fn without_a_policy_a_body_that_ends_early_fails_the_turn_and_cut_calls_get_results() {
    let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
    turn.add_tool("read", ToolOptions::default());
    turn.add_tool("edit", ToolOptions::default());
    let cut = CHAT_TWO_CALLS.find("{\\\"p\\\"").unwrap() + 5;
    turn.feed(&CHAT_TWO_CALLS.as_bytes()[..cut], 0, |_| {});
    turn.end_of_body(0, |_| {});
    assert!(turn.is_finished());
    let out = turn.outcome();
    assert!(matches!(out.failure, Some(TurnFailure::Stream(StreamError::Incomplete { .. }))), "{:?}", out.failure);
    assert_eq!(out.results.len(), 1);
    assert_eq!(out.results[0].kind, ToolResultKind::Incomplete);
    assert!(out.results[0].output.contains("cut off"));
}

#[test]
fn idle_connections_are_closed_and_reconnected() {
    let policy = ReconnectPolicy { idle_timeout_ms: Some(100), ..ReconnectPolicy::default() };
    let mut turn = AgentTurn::new(TurnConfig { reconnect: Some(policy), ..TurnConfig::new(Provider::OpenAIChat) });
    turn.connected(0);
    turn.feed(b": keep-alive\n\n", 50, |_| {});
    assert_eq!(turn.deadline_ms(), Some(150));
    turn.tick(149, |_| {});
    assert!(actions(&mut turn).is_empty());
    turn.tick(150, |_| {});
    let a = actions(&mut turn);
    assert!(matches!(a.as_slice(), [TurnAction::CloseConnection, TurnAction::Reconnect { .. }]), "{a:?}");
}

#[test]
fn with_the_hosts_own_stream_an_abort_cuts_the_open_call_and_it_gets_its_result() {
    let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
    turn.add_tool("read", ToolOptions::default());
    let mut stream = Stream::new(Provider::OpenAIChat);
    let cut = CHAT_TWO_CALLS.find("\"index\":1").unwrap();
    stream.feed(&CHAT_TWO_CALLS.as_bytes()[..cut], |e| turn.apply_event(e, |_| {})).unwrap();
    stream.abort(|e| turn.apply_event(e, |_| {}));
    let mut log = Vec::new();
    turn.abort("user", recorder(&mut log));
    assert_eq!(log, ["tool_execution_finished call_a"]);
    assert!(turn.is_finished());
    let out = turn.outcome_with_message(stream.provider(), stream.message());
    assert_eq!(out.results.len(), 1);
    assert_eq!((out.results[0].call_id.as_str(), out.results[0].kind), ("call_a", ToolResultKind::Incomplete));
    let next = out.next().unwrap();
    assert_eq!(next.append()[0]["tool_calls"][0]["id"], "call_a");
    assert_eq!(next.append()[1]["tool_call_id"], "call_a");
}

#[test]
fn the_ui_state_follows_the_turn_its_calls_and_their_progress() {
    let config =
        TurnConfig { ui: true, reconnect: Some(ReconnectPolicy::default()), ..TurnConfig::new(Provider::OpenAIChat) };
    let mut turn = AgentTurn::new(config);
    turn.add_tool("read", ToolOptions::default());
    turn.add_tool("edit", ToolOptions::default());
    turn.connected(5);
    assert_eq!(turn.ui().unwrap().connection(), crate::reconnect::ConnectionState::Connected);
    turn.feed(CHAT_TWO_CALLS.as_bytes(), 10, |_| {});
    let started: Vec<String> = actions(&mut turn)
        .into_iter()
        .filter_map(|a| match a {
            TurnAction::StartTool(s) => Some(s.call_id),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["call_a", "ssefold_call_1"]);
    turn.tool_update("ssefold_call_1", "half way", |_| {}).unwrap();
    let ui = turn.ui().unwrap().to_json();
    assert_eq!(ui["connection"], "disconnected", "the stream is over");
    let calls: Vec<&Value> = ui["parts"].as_array().unwrap().iter().map(|p| &p["tool_call"]).collect();
    assert_eq!(calls[1]["id"], "ssefold_call_1", "the synthesized id, as the host's progress names it");
    assert_eq!(ui["tool_progress"]["ssefold_call_1"], "half way");
    assert!(AgentTurn::new(TurnConfig::new(Provider::Auto)).ui().is_none());
}

/// An Anthropic answer of `n` complete calls to `read`, all with the id `id` when given.
fn anthropic_calls(n: usize, id: Option<&str>) -> String {
    let mut body = String::from(concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",",
        "\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"stop_reason\":null,\"stop_sequence\":null,",
        "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
    ));
    for i in 0..n {
        let call_id = id.map_or_else(|| format!("toolu_{i}"), str::to_owned);
        body += &format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"{call_id}\",\"name\":\"read\",\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{\\\"i\\\":{i}}}\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n"
        );
    }
    body + "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":2}}\n\n\
            event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
}

#[test]
fn a_repeated_provider_id_is_replaced_so_that_every_call_runs_and_is_answered() {
    let mut turn = AgentTurn::new(TurnConfig::new(Provider::Anthropic));
    turn.add_tool("read", ToolOptions::default());
    turn.feed(anthropic_calls(3, Some("toolu_same")).as_bytes(), 0, |_| {});
    let ids: Vec<String> = actions(&mut turn)
        .into_iter()
        .filter_map(|a| match a {
            TurnAction::StartTool(s) => Some(s.call_id),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["toolu_same", "ssefold_call_1", "ssefold_call_2"]);
    for id in &ids {
        turn.tool_result(id, "ok", false, |_| {}).unwrap();
    }
    let next = turn.outcome().next().unwrap();
    let uses: Vec<&Value> = next.assistant["content"].as_array().unwrap().iter().map(|b| &b["id"]).collect();
    assert_eq!(uses, ["toolu_same", "ssefold_call_1", "ssefold_call_2"], "the assistant turn carries the ids answered");
}

#[test]
fn more_calls_than_max_calls_is_a_typed_failure_and_the_calls_within_it_are_answered() {
    let config = TurnConfig {
        scheduler: SchedulerConfig { max_calls: 4, ..SchedulerConfig::default() },
        ..TurnConfig::new(Provider::Anthropic)
    };
    let mut turn = AgentTurn::new(config);
    turn.add_tool("read", ToolOptions::default());
    turn.feed(anthropic_calls(6, None).as_bytes(), 0, |_| {});
    let started = actions(&mut turn).len();
    assert_eq!(started, 4);
    for i in 0..4 {
        turn.tool_result(&format!("toolu_{i}"), "ok", false, |_| {}).unwrap();
    }
    assert!(turn.is_finished());
    let out = turn.outcome();
    assert_eq!(out.failure, Some(TurnFailure::TooManyCalls { limit: 4 }));
    assert_eq!(out.results.len(), 4);
    assert_eq!(out.calls.len(), 6, "every call of the message is listed");
}

/// The production policies: tools and the stop reason, approvals, HTTP
/// retries, stalls, timings.
mod policies {
    use super::*;
    use crate::reconnect::{RetryHints, StallKind};
    use crate::tools::ToolStart;
    use proptest::prelude::*;

    /// One Chat answer with one complete call of `tool`, finished with
    /// `reason`.
    fn one_call(reason: &str) -> String {
        format!(
            concat!(
                "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":",
                "{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_x\",\"type\":\"function\",\"function\":",
                "{{\"name\":\"tool\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n\n",
                "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":",
                "{{\"content\":\"x\"}}}}]}}\n\n",
                "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},",
                "\"finish_reason\":\"{}\"}}]}}\n\n",
                "data: [DONE]\n\n",
            ),
            reason
        )
    }

    fn turn_with(options: ToolOptions) -> AgentTurn {
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
        turn.add_tool("tool", options);
        turn.connected(0);
        turn
    }

    fn tool_events(turn: &mut AgentTurn, f: impl FnOnce(&mut AgentTurn, &mut dyn FnMut(TurnEvent<'_>))) -> Vec<String> {
        let mut log = Vec::new();
        let mut rec = |e: TurnEvent<'_>| {
            if let TurnEvent::Tool(t) = e {
                log.push(t.name().to_owned());
            }
        };
        f(turn, &mut rec);
        log
    }

    proptest! {
        /// Stop reason × start mode: a call that waits for the turn's end
        /// starts only after a normal or tool-use stop, else gets its
        /// `skipped` result; a call that started at once runs to its result
        /// and, after a bad stop, is reported running.
        #[test]
        fn stop_reason_by_start_mode(
            reason in prop::sample::select(vec![
                "stop", "tool_calls", "length", "content_filter", "function_call", "refusal", "weird_new_reason",
            ]),
            start in prop::sample::select(vec![ToolStart::Auto, ToolStart::Ready, ToolStart::TurnEnd]),
            exclusive in any::<bool>(),
            split in 0usize..600,
        ) {
            let body = one_call(reason);
            let options = ToolOptions { exclusive, start, ..ToolOptions::default() };
            let mut turn = turn_with(options);
            let split = split.min(body.len());
            let mut shown = tool_events(&mut turn, |t, on| t.feed(&body.as_bytes()[..split], 1, on));
            shown.extend(tool_events(&mut turn, |t, on| t.feed(&body.as_bytes()[split..], 2, on)));
            let started: Vec<TurnAction> =
                actions(&mut turn).into_iter().filter(|a| matches!(a, TurnAction::StartTool(_))).collect();
            let waits = options.waits_for_turn_end();
            let allows = StopClass::of(reason).allows_tools();
            prop_assert!(turn.is_stream_ended());
            if waits && !allows {
                prop_assert!(started.is_empty());
                prop_assert!(turn.is_finished());
                let out = turn.outcome();
                prop_assert_eq!(out.results[0].kind, ToolResultKind::Skipped);
                prop_assert!(out.results[0].output.contains(reason), "{}", out.results[0].output);
            } else {
                prop_assert_eq!(started.len(), 1);
                let ran_after_stop = shown.iter().any(|n| n == "tool_running_after_stop");
                // Started before the stop (ready), then the stop was bad.
                prop_assert_eq!(ran_after_stop, !waits && !allows);
                turn.tool_result("call_x", "ok", false, |_| {}).unwrap();
                prop_assert!(turn.is_finished());
                prop_assert_eq!(turn.outcome().results[0].kind, ToolResultKind::Ran);
            }
        }
    }

    #[test]
    fn a_running_call_after_a_bad_stop_can_be_cancelled() {
        let mut turn = turn_with(ToolOptions { start: ToolStart::Ready, ..ToolOptions::default() });
        let log = tool_events(&mut turn, |t, on| t.feed(one_call("length").as_bytes(), 1, on));
        assert_eq!(log, ["tool_execution_started", "tool_running_after_stop"]);
        actions(&mut turn);
        turn.cancel_tool("call_x", |_| {}).unwrap();
        assert!(turn.is_finished());
        let out = turn.outcome();
        assert_eq!(
            (out.results[0].kind, out.results[0].output.as_str()),
            (ToolResultKind::Cancelled, "Cancelled by the host")
        );
        turn.tool_result("call_x", "late", false, |_| {}).unwrap();
        assert_eq!(turn.outcome().results[0].output, "Cancelled by the host", "the late result is dropped");
    }

    #[test]
    fn approval_waits_then_the_scheduling_rules_apply() {
        let approve = ToolOptions { needs_approval: true, start: ToolStart::Ready, ..ToolOptions::default() };
        let mut turn = turn_with(approve);
        let mut requested = None;
        turn.feed(one_call("tool_calls").as_bytes(), 1, |e| {
            if let TurnEvent::Tool(ToolExecutionEvent::ApprovalRequested { approval_id, call_id, arguments, .. }) = e {
                requested = Some((approval_id.clone(), call_id.clone(), arguments.clone()));
            }
        });
        let (approval, call, args) = requested.expect("an approval request");
        assert_eq!((call.as_str(), args.as_str()), ("call_x", "{}"));
        assert!(actions(&mut turn).is_empty(), "nothing starts before the answer");
        assert!(!turn.is_finished());
        assert!(turn.approve("approval_nope", |_| {}).is_err());
        turn.approve(&approval, |_| {}).unwrap();
        assert!(matches!(actions(&mut turn).as_slice(), [TurnAction::StartTool(s)] if s.call_id == "call_x"));
        assert_eq!(turn.approve(&approval, |_| {}).unwrap_err().kind(), "not_awaiting_approval");
        turn.tool_result("call_x", "ok", false, |_| {}).unwrap();
        assert!(turn.is_finished());

        let mut turn = turn_with(approve);
        turn.feed(one_call("tool_calls").as_bytes(), 1, |_| {});
        turn.deny("approval_call_x", "not today", |_| {}).unwrap();
        assert!(actions(&mut turn).is_empty());
        assert!(turn.is_finished());
        let out = turn.outcome();
        assert_eq!(
            (out.results[0].kind, out.results[0].output.as_str()),
            (ToolResultKind::Denied, "Denied by the user: not today")
        );
        assert!(out.results[0].is_error);
    }

    #[test]
    fn an_approval_that_never_comes_is_denied_at_the_hosts_timeout() {
        let mut config = TurnConfig::new(Provider::OpenAIChat);
        config.approval_timeout_ms = Some(500);
        let mut turn = AgentTurn::new(config);
        turn.add_tool("tool", ToolOptions { needs_approval: true, ..ToolOptions::default() });
        turn.connected(0);
        turn.feed(one_call("tool_calls").as_bytes(), 100, |_| {});
        assert_eq!(turn.deadline_ms(), Some(600));
        turn.tick(599, |_| {});
        assert!(!turn.is_finished());
        turn.tick(600, |_| {});
        assert!(turn.is_finished());
        assert_eq!(turn.outcome().results[0].output, "Denied: no approval within 500 ms");
    }

    #[test]
    fn an_approved_exclusive_tool_still_runs_alone() {
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
        turn.add_tool("read", ToolOptions { start: ToolStart::Ready, ..ToolOptions::default() });
        turn.add_tool("edit", ToolOptions { exclusive: true, needs_approval: true, ..ToolOptions::default() });
        turn.feed(
            CHAT_TWO_CALLS
                .replace("\"read\"", "\"edit\"")
                .replace("\"name\":\"edit\",\"arguments\":\"{}\"", "\"name\":\"read\",\"arguments\":\"{}\"")
                .as_bytes(),
            1,
            |_| {},
        );
        // call_a (edit: exclusive, approval) waits; the read after it waits behind the exclusive call.
        assert!(actions(&mut turn).is_empty());
        turn.approve("approval_call_a", |_| {}).unwrap();
        let a = actions(&mut turn);
        assert!(matches!(a.as_slice(), [TurnAction::StartTool(s)] if s.call_id == "call_a"), "{a:?}");
        turn.tool_result("call_a", "edited", false, |_| {}).unwrap();
        let a = actions(&mut turn);
        assert!(matches!(a.as_slice(), [TurnAction::StartTool(s)] if s.name == "read"), "{a:?}");
    }

    #[test]
    fn a_rate_limit_is_retried_after_its_retry_after_and_a_400_is_not() {
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
        turn.request_sent(0);
        let hints = RetryHints::from_headers([("retry-after", "2")], 0);
        turn.http_status(429, hints, 10, |_| {});
        let a = actions(&mut turn);
        assert!(
            matches!(a.as_slice(), [TurnAction::Reconnect { delay_ms: 2000, attempt: 1, replay: Replay::Retry, .. }]),
            "{a:?}"
        );
        turn.request_sent(2010);
        turn.connected(2050);
        turn.feed(one_call("stop").as_bytes(), 2100, |_| {});
        assert!(turn.is_finished());
        let out = turn.outcome();
        assert!(out.failure.is_none());
        let attempts: Vec<_> = out.timings.attempts.iter().map(|a| (a.outcome, a.status)).collect();
        assert_eq!(attempts, [("http_status", Some(429)), ("completed", None)]);
        assert_eq!(out.timings.time_to_first_content_ms, Some(2100));

        let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
        turn.http_status(400, RetryHints::default(), 0, |_| {});
        assert!(actions(&mut turn).is_empty());
        assert!(turn.is_finished());
        assert_eq!(turn.outcome().failure, Some(TurnFailure::Http { status: 400, retry_after_ms: None }));
        assert_eq!(turn.outcome().gave_up, Some(GiveUpReason::NotRetryable));
    }

    #[test]
    fn keep_alives_only_is_a_stall_retried_before_output() {
        let policy =
            ReconnectPolicy { first_content_timeout_ms: Some(1000), jitter: 0.0, ..ReconnectPolicy::default() };
        let mut turn = AgentTurn::new(TurnConfig { reconnect: Some(policy), ..TurnConfig::new(Provider::Anthropic) });
        turn.connected(0);
        turn.feed(b"event: ping\ndata: {\"type\": \"ping\"}\n\n: PROCESSING\n\n", 400, |_| {});
        turn.feed(b": PROCESSING\n\n", 900, |_| {});
        assert_eq!(turn.deadline_ms(), Some(1000));
        turn.tick(1000, |_| {});
        let a = actions(&mut turn);
        assert!(
            matches!(a.as_slice(), [TurnAction::CloseConnection, TurnAction::Reconnect { replay: Replay::Retry, .. }]),
            "{a:?}"
        );
        // No retries left: the stall ends the turn, typed.
        let policy = ReconnectPolicy { content_timeout_ms: Some(50), max_retries: 0, ..ReconnectPolicy::default() };
        let mut turn = AgentTurn::new(TurnConfig { reconnect: Some(policy), ..TurnConfig::new(Provider::OpenAIChat) });
        turn.connected(0);
        let body = one_call("stop");
        turn.feed(&body.as_bytes()[..body.find("\n\n").unwrap() + 2], 10, |_| {});
        turn.feed(b": keep-alive\n\n", 40, |_| {});
        turn.tick(59, |_| {});
        assert!(!turn.is_stream_ended());
        turn.tick(60, |_| {});
        assert_eq!(turn.failure(), Some(&TurnFailure::IdleTimeout { stall: StallKind::Content, after_ms: 50 }));
    }

    #[test]
    fn timings_count_first_content_gaps_and_tokens() {
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
        turn.request_sent(1000);
        turn.connected(1100);
        let body = concat!(
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"usage\":null,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"usage\":null,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"usage\":null,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":40}}\n\n",
            "data: [DONE]\n\n",
        );
        let chunks: Vec<&str> = body.split_inclusive("\n\n").collect();
        let times = [1300, 1310, 1340, 2300, 2300];
        for (c, t) in chunks.iter().zip(times) {
            turn.feed(c.as_bytes(), t, |_| {});
        }
        assert!(turn.is_finished());
        let t = turn.outcome().timings;
        assert_eq!(t.started_ms, Some(1000));
        assert_eq!(t.time_to_first_content_ms, Some(300));
        // Per input that carried content: 10, 30 and 960 (`[DONE]`'s turn_end;
        // the usage-only chunk before it is no content).
        assert_eq!((t.content_gaps.count, t.content_gaps.max_ms), (3, 960));
        assert_eq!((t.content_gaps.median_ms, t.content_gaps.p95_ms), (30, 960));
        assert_eq!((t.input_tokens, t.output_tokens), (Some(7), Some(40)));
        assert_eq!(t.output_tokens_per_second, Some(40.0));
        assert_eq!(t.duration_ms, Some(1300));
    }

    #[test]
    fn the_hosts_own_stream_is_timed_at_its_events() {
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::OpenAIChat));
        let mut stream = Stream::new(Provider::OpenAIChat);
        turn.request_sent(100);
        let body = one_call("stop");
        for (chunk, t) in body.split_inclusive("\n\n").zip([400, 450, 700, 700]) {
            stream.feed(chunk.as_bytes(), |e| turn.apply_event_at(e, t, |_| {})).unwrap();
        }
        stream.finish(|e| turn.apply_event_at(e, 700, |_| {})).unwrap();
        turn.end_of_events(None, |_| {});
        let t = turn.outcome_with_message(stream.provider(), stream.message()).timings;
        assert_eq!((t.started_ms, t.time_to_first_content_ms, t.duration_ms), (Some(100), Some(300), Some(600)));
        assert_eq!(t.attempts.len(), 1);
        assert_eq!(t.attempts[0].outcome, "completed");
    }

    #[test]
    fn a_drop_after_message_start_is_retried_not_given_up() {
        // Anthropic's message_start carries the input usage: nothing was shown yet.
        let mut turn = AgentTurn::new(TurnConfig::new(Provider::Anthropic));
        turn.connected(0);
        let start = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",",
            "\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,",
            "\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
            "event: ping\ndata: {\"type\":\"ping\"}\n\n",
        );
        turn.feed(start.as_bytes(), 5, |_| {});
        turn.connection_failed("reset", 6, |_| {});
        let a = actions(&mut turn);
        assert!(matches!(a.as_slice(), [TurnAction::Reconnect { replay: Replay::Retry, .. }]), "{a:?}");
        assert!(!turn.outcome().output_started);
    }
}
