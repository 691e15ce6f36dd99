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

#[test]
fn a_body_that_ends_early_is_reconnected_and_a_restart_discards_the_calls() {
    let config = TurnConfig { reconnect: Some(ReconnectPolicy::default()), ..TurnConfig::new(Provider::OpenAIChat) };
    let mut turn = AgentTurn::new(config);
    turn.add_tool("read", ToolOptions::default());
    turn.add_tool("edit", ToolOptions::default());
    turn.connected(0);
    let cut = CHAT_TWO_CALLS.find("data: [DONE]").unwrap();
    turn.feed(&CHAT_TWO_CALLS.as_bytes()[..cut], 1, |_| {});
    let started = actions(&mut turn);
    assert_eq!(started.len(), 2, "both calls ended with the choice: {started:?}");
    turn.tool_result("call_a", "1", false, |_| {}).unwrap();
    turn.end_of_body(2, |_| {});
    let a = actions(&mut turn);
    assert!(matches!(a.as_slice(), [TurnAction::Reconnect { attempt: 1, .. }]), "{a:?}");
    assert!(!turn.is_stream_ended());
    // The server answers again from the start (another completion id).
    turn.connected(1000);
    let again = CHAT_TWO_CALLS.replace("\"c1\"", "\"c2\"");
    let mut log = Vec::new();
    turn.feed(again.as_bytes(), 1001, recorder(&mut log));
    assert!(names(&log).contains(&"turn_reset"));
    let a = actions(&mut turn);
    assert_eq!(a[0], TurnAction::CancelTool { call_id: "ssefold_call_1".into() }, "{a:?}");
    assert_eq!(a.iter().filter(|x| matches!(x, TurnAction::StartTool(_))).count(), 2);
    assert!(!log.iter().any(|l| l == "tool_execution_finished ssefold_call_1"), "discarded calls are not shown");
    // The first answer's late result lands on nothing: the new call_a is running, this one was discarded.
    turn.tool_result("call_a", "2", false, |_| {}).unwrap();
    turn.tool_result("ssefold_call_1", "3", false, |_| {}).unwrap();
    assert!(turn.is_finished());
    let out = turn.outcome();
    assert_eq!(out.results.iter().map(|r| r.output.as_str()).collect::<Vec<_>>(), ["2", "3"]);
    assert_eq!(out.message["id"], "c2");
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
