//! The agent turn ([`ssefold::agent::AgentTurn`]) on real streams and on
//! generated ones.
//!
//! * Every golden fixture, SDK fixture and recording with tool calls, in several
//!   chunkings: each complete, host-run call of choice 0 is started exactly
//!   once with the fold's name and arguments; every call of choice 0 that
//!   the host answers gets exactly one result, in part order, ids unique;
//!   the next request pairs each call of the assistant turn with its result.
//! * The decision table of the module docs as a property test: calls of
//!   every class (complete to a registered tool, to an unknown tool,
//!   unnamed, invalid arguments, cut, provider-run) × every way a turn ends
//!   (normally, a provider error, a body that ends early, an abort, a
//!   restart after a reconnection), in random chunkings.

use crate::prov_common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{json, Value};
use ssefold::agent::{AgentTurn, TurnAction, TurnConfig, TurnEvent, TurnFailure};
use ssefold::providers::{PartOutcome, Provider, Stream, StreamEvent};
use ssefold::reconnect::ReconnectPolicy;
use ssefold::tools::{ToolOptions, ToolResultKind};

/// A call as the plain stream reports it at its `part_end`.
#[derive(Debug, Clone, PartialEq)]
struct SeenCall {
    part: u64,
    id: String,
    name: String,
    arguments: String,
    outcome: String,
    provider_executed: bool,
    choice: u64,
    provider_type: String,
}

/// The tool calls of a body, folded by a plain stream (the reference).
fn reference_calls(provider: Provider, body: &[u8]) -> (Vec<SeenCall>, Provider) {
    let mut stream = Stream::new(provider);
    let mut events = Vec::new();
    let mut on = |e: &StreamEvent<'_>| events.push(e.to_json());
    if stream.feed(body, &mut on).is_ok() {
        let _ = stream.finish(&mut on);
    }
    let mut choices = BTreeMap::new();
    let mut calls = Vec::new();
    for e in &events {
        match e["event"].as_str() {
            Some("part_start") if e["kind"] == "tool_call" => {
                let start = (e["choice"].as_u64().unwrap(), e["provider_type"].as_str().unwrap().to_owned());
                choices.insert(e["part"].as_u64().unwrap(), start);
            }
            Some("part_end") if e["kind"] == "tool_call" => {
                let c = &e["tool_call"];
                let part = e["part"].as_u64().unwrap();
                let (choice, provider_type) = choices.get(&part).cloned().unwrap_or_default();
                calls.push(SeenCall {
                    part,
                    id: c["id"].as_str().unwrap().to_owned(),
                    name: c["name"].as_str().unwrap().to_owned(),
                    arguments: c["arguments"].as_str().unwrap().to_owned(),
                    outcome: e["outcome"].as_str().unwrap().to_owned(),
                    provider_executed: c["provider_executed"].as_bool().unwrap(),
                    choice,
                    provider_type,
                });
            }
            _ => {}
        }
    }
    (calls, stream.provider())
}

/// What a turn did with a body: starts, the outcome.
struct Ran {
    started: Vec<(String, String, String)>,
    outcome: ssefold::agent::TurnOutcome,
}

/// Runs a turn over `body` in chunks of `sizes`, registering `tools`,
/// answering each start at once with `result of ID`.
fn run_turn(provider: Provider, body: &[u8], tools: &HashSet<String>, sizes: &mut dyn FnMut() -> usize) -> Ran {
    run_turn_with(provider, body, tools, ToolOptions::default(), sizes)
}

/// [`run_turn`] with every tool registered with `options`; a call started
/// while the stream still ran is recorded with a `*` after its name.
fn run_turn_with(
    provider: Provider,
    body: &[u8],
    tools: &HashSet<String>,
    options: ToolOptions,
    sizes: &mut dyn FnMut() -> usize,
) -> Ran {
    let mut turn = AgentTurn::new(TurnConfig::new(provider));
    for name in tools {
        turn.add_tool(name, options);
    }
    let mut started = Vec::new();
    let mut pos = 0;
    let answer = |turn: &mut AgentTurn, started: &mut Vec<(String, String, String)>| {
        while let Some(action) = turn.poll_action() {
            if let TurnAction::StartTool(s) = action {
                let name = if turn.is_stream_ended() { s.name.clone() } else { format!("{}*", s.name) };
                started.push((s.call_id.clone(), name, s.arguments.clone()));
                turn.tool_result(&s.call_id, &format!("result of {}", s.call_id), false, |_| {}).unwrap();
            }
        }
    };
    while pos < body.len() && !turn.is_stream_ended() {
        let n = sizes().max(1).min(body.len() - pos);
        turn.feed(&body[pos..pos + n], 0, |_| {});
        pos += n;
        answer(&mut turn, &mut started);
    }
    turn.end_of_body(0, |_| {});
    answer(&mut turn, &mut started);
    assert!(turn.is_finished(), "a turn whose tools all answered is finished");
    Ran { started, outcome: turn.outcome() }
}

/// As [`run_turn`], the host folding the body with its own stream and
/// handing the turn its events ([`AgentTurn::apply_event`]).
fn run_turn_external(provider: Provider, body: &[u8], tools: &HashSet<String>) -> Ran {
    let mut turn = AgentTurn::new(TurnConfig::new(provider));
    for name in tools {
        turn.add_tool(name, ToolOptions::default());
    }
    let mut stream = Stream::new(provider);
    let mut started = Vec::new();
    let answer = |turn: &mut AgentTurn, started: &mut Vec<(String, String, String)>| {
        while let Some(action) = turn.poll_action() {
            if let TurnAction::StartTool(s) = action {
                started.push((s.call_id.clone(), s.name.clone(), s.arguments.clone()));
                turn.tool_result(&s.call_id, &format!("result of {}", s.call_id), false, |_| {}).unwrap();
            }
        }
    };
    let mut on = |e: &StreamEvent<'_>| {
        turn.apply_event(e, |_| {});
        answer(&mut turn, &mut started);
    };
    let fed = stream.feed(body, &mut on).and_then(|()| stream.finish(&mut on));
    turn.end_of_events(fed.err().map(TurnFailure::Stream), |_| {});
    answer(&mut turn, &mut started);
    assert!(turn.is_finished());
    Ran { started, outcome: turn.outcome_with_message(stream.provider(), stream.message()) }
}

/// The `agent_turn` fuzz target's property on every fixture, peer fixture and
/// recording of the seven dialects (Bedrock's event-stream bodies too), each
/// in its own dialect: the turn shows the same stream events and tool events,
/// decides the same actions and ends the same whole and in 1–13 byte chunks,
/// with the default settings, every tool exclusive, and small limits with
/// siblings aborted on an error.
#[test]
fn the_turn_is_the_same_in_every_chunking_on_every_body() {
    let bodies = bodies();
    for (i, (file, provider)) in bodies.iter().enumerate() {
        let body = std::fs::read(file).unwrap();
        for flags in [0u8, 32, 4 | 64] {
            let run = std::panic::catch_unwind(|| {
                crate::fuzz_regressions::fuzz_common::check_agent_turn_as(*provider, flags, i % 13, &body)
            });
            assert!(run.is_ok(), "{} as {provider:?} (flags {flags})", file.display());
        }
    }
    assert!(bodies.len() >= 500, "{} bodies", bodies.len());
}

/// Every golden fixture and recording body, with its dialect.
fn bodies() -> Vec<(PathBuf, Provider)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dialect in ["anthropic", "openai_chat", "openai_responses", "gemini", "ollama", "bedrock", "bedrock_converse"] {
        let provider = Provider::from_name(dialect).unwrap();
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("tests/fixtures").join(dialect))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sse" || e == "ndjson" || e == "bin"))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (f, provider)));
    }
    // The SDKs' own recorded streams (their dialect detected).
    for sdk in std::fs::read_dir(root.join("tests/peer-fixtures")).unwrap() {
        let sdk = sdk.unwrap().path();
        if !sdk.is_dir() {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&sdk)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sse" || e == "txt"))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| (f, Provider::Auto)));
    }
    for file in prov_common::recording_files() {
        let dialect = file.strip_prefix(root.join("tests/recordings")).unwrap().iter().next().unwrap();
        let provider = Provider::from_name(dialect.to_str().unwrap()).unwrap();
        out.push((file, provider));
    }
    out
}

/// The ids the next request's results answer, in order, and the ids of the
/// calls its assistant turn holds (dialects that match results by id).
fn next_ids(provider: Provider, next: &ssefold::agent::NextRequest) -> (Vec<String>, Option<Vec<String>>) {
    let s = |v: &Value| v.as_str().map(str::to_owned);
    let results: Vec<String> = match provider {
        Provider::Anthropic | Provider::Bedrock => {
            next.tool_results["content"].as_array().into_iter().flatten().filter_map(|b| s(&b["tool_use_id"])).collect()
        }
        Provider::OpenAIChat => next
            .tool_results
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| s(&m["tool_call_id"]).unwrap_or_else(|| format!("function:{}", m["name"].as_str().unwrap())))
            .collect(),
        Provider::OpenAIResponses => {
            next.tool_results.as_array().into_iter().flatten().filter_map(|i| s(&i["call_id"])).collect()
        }
        Provider::BedrockConverse => next.tool_results["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| s(&b["toolResult"]["toolUseId"]))
            .collect(),
        Provider::Gemini => next.tool_results["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| s(&p["functionResponse"]["name"]).unwrap())
            .collect(),
        _ => next.tool_results.as_array().into_iter().flatten().map(|m| s(&m["tool_name"]).unwrap()).collect(),
    };
    let assistant: Option<Vec<String>> = match provider {
        Provider::Anthropic | Provider::Bedrock => Some(
            next.assistant["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| s(&b["id"]).unwrap())
                .collect(),
        ),
        Provider::OpenAIChat => Some(
            next.assistant["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| s(&c["id"]).unwrap_or_else(|| format!("MISSING {c}")))
                .chain(next.assistant.get("function_call").map(|f| format!("function:{}", f["name"].as_str().unwrap())))
                .collect(),
        ),
        Provider::OpenAIResponses => Some(
            next.assistant
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["type"] == "function_call" || i["type"] == "custom_tool_call")
                .map(|i| s(&i["call_id"]).unwrap())
                .collect(),
        ),
        Provider::BedrockConverse => Some(
            next.assistant["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|b| s(&b["toolUse"]["toolUseId"]))
                .collect(),
        ),
        _ => None,
    };
    (results, assistant)
}

/// Real traffic, every tool side-effecting (`start: turn_end`): no call
/// starts while the answer streams; after a normal or tool-use stop every
/// ready call starts once, after any other stop none does and each gets its
/// `skipped` result.
#[test]
fn every_recording_starts_side_effecting_tools_only_after_a_stop_that_allows_them() {
    use ssefold::providers::StopClass;
    use ssefold::tools::ToolStart;
    let (mut good, mut bad) = (0, 0);
    for (file, provider) in bodies() {
        let body = std::fs::read(&file).unwrap();
        let (calls, _) = reference_calls(provider, &body);
        let host_run: Vec<(String, String, String)> = calls
            .iter()
            .filter(|c| c.choice == 0 && c.outcome == "complete" && !c.provider_executed && !c.name.is_empty())
            .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
            .collect();
        if host_run.is_empty() {
            continue;
        }
        let name = file.display();
        let tools: HashSet<String> = host_run.iter().map(|c| c.1.clone()).collect();
        let options = ToolOptions { start: ToolStart::TurnEnd, ..ToolOptions::default() };
        let ran = run_turn_with(provider, &body, &tools, options, &mut prov_common::lcg(11, 61));
        let out = &ran.outcome;
        assert!(ran.started.iter().all(|s| !s.1.ends_with('*')), "{name}: started while streaming: {:?}", ran.started);
        let allows = out.stop_reason.as_deref().map_or(true, |r| StopClass::of(r).allows_tools());
        if out.failure.is_some() {
            assert!(ran.started.is_empty(), "{name}: a failed turn starts nothing that waited");
        } else if allows {
            good += 1;
            assert_eq!(ran.started, host_run, "{name}");
        } else {
            bad += 1;
            assert!(ran.started.is_empty(), "{name}");
            let skipped = out.results.iter().filter(|r| r.kind == ToolResultKind::Skipped).count();
            assert_eq!(skipped, host_run.len(), "{name}: {:?}", out.results);
        }
    }
    assert!(good >= 10, "{good} bodies with calls and a good stop");
    eprintln!("{good} bodies started their side-effecting calls after the stop, {bad} skipped them (bad stop)");
}

#[test]
fn every_fixture_and_recording_runs_each_ready_call_once_and_answers_every_call() {
    let (mut with_calls, mut checked_next) = (0, 0);
    for (file, provider) in bodies() {
        let body = std::fs::read(&file).unwrap();
        let (calls, detected) = reference_calls(provider, &body);
        if calls.is_empty() {
            continue;
        }
        with_calls += 1;
        let name = file.display();
        let tools: HashSet<String> = calls.iter().map(|c| c.name.clone()).filter(|n| !n.is_empty()).collect();
        let runs = [
            run_turn(provider, &body, &tools, &mut || usize::MAX),
            run_turn(Provider::Auto, &body, &tools, &mut prov_common::lcg(7, 97)),
            run_turn(provider, &body, &tools, &mut prov_common::lcg(3, 5)),
            run_turn_external(provider, &body, &tools),
        ];
        let choice0: Vec<&SeenCall> = calls.iter().filter(|c| c.choice == 0).collect();
        let host_run: Vec<(String, String, String)> = choice0
            .iter()
            .filter(|c| c.outcome == "complete" && !c.provider_executed && !c.name.is_empty())
            .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
            .collect();
        let answered: Vec<&&SeenCall> = choice0.iter().filter(|c| !c.provider_executed).collect();
        for ran in &runs {
            let out = &ran.outcome;
            let started: Vec<(String, String, String)> = ran
                .started
                .iter()
                .map(|(id, n, a)| (id.clone(), n.trim_end_matches('*').to_owned(), a.clone()))
                .collect();
            let ran = Ran { started, outcome: out.clone() };
            let ran = &ran;
            if out.failure.is_none() {
                assert_eq!(ran.started, host_run, "{name}: the ready calls, each started once with the fold's input");
            } else {
                // A failure after the calls: each started at most once, as the fold gave it.
                let set: HashSet<_> = ran.started.iter().collect();
                assert_eq!(set.len(), ran.started.len(), "{name}: started twice");
                assert!(ran.started.iter().all(|s| host_run.contains(s)), "{name}");
            }
            let ids: Vec<&str> = out.results.iter().map(|r| r.call_id.as_str()).collect();
            let want: Vec<&str> = answered.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(ids, want, "{name}: one result per call, in part order");
            assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "{name}: ids unique");
            for (r, c) in out.results.iter().zip(&answered) {
                let want = match (c.outcome.as_str(), c.name.is_empty()) {
                    ("incomplete", _) => ToolResultKind::Incomplete,
                    ("invalid_arguments", _) => ToolResultKind::InvalidInput,
                    (_, true) => ToolResultKind::Unnamed,
                    _ if out.failure.is_some() && r.kind == ToolResultKind::Aborted => ToolResultKind::Aborted,
                    _ => ToolResultKind::Ran,
                };
                assert_eq!(r.kind, want, "{name}: {c:?}");
                assert_eq!(r.is_error, r.kind != ToolResultKind::Ran, "{name}");
            }
            assert_eq!(out.provider, detected, "{name}");
            if let Some(next) = &out.next() {
                let (result_ids, assistant_ids) = next_ids(out.provider, next);
                assert_eq!(result_ids.len(), out.results.len(), "{name}: every result in the next request");
                if let Some(assistant_ids) = assistant_ids {
                    let host: Vec<String> = answered
                        .iter()
                        .map(|c| {
                            if out.provider == Provider::OpenAIChat && c.provider_type == "function_call" {
                                format!("function:{}", c.name)
                            } else {
                                c.id.clone()
                            }
                        })
                        .collect();
                    let in_assistant: HashSet<&String> = assistant_ids.iter().collect();
                    for id in &host {
                        assert!(
                            in_assistant.contains(id),
                            "{name}: call {id} is in the assistant turn {assistant_ids:?}"
                        );
                    }
                    assert_eq!(result_ids, host, "{name}: results answer the assistant's calls, in order");
                }
                checked_next += 1;
            }
        }
        let outcomes: Vec<(Vec<_>, Option<Value>)> = runs
            .iter()
            .map(|r| {
                let results = r.outcome.results.iter().map(|x| (x.call_id.clone(), x.kind, x.output.clone())).collect();
                (results, r.outcome.next().map(|n| Value::Array(n.append())))
            })
            .collect();
        assert_eq!(outcomes[0], outcomes[1], "{name}: chunking");
        assert_eq!(outcomes[0], outcomes[2], "{name}: chunking");
        assert_eq!(outcomes[0], outcomes[3], "{name}: the host's own stream");
    }
    eprintln!("{with_calls} streams with tool calls, {checked_next} next requests checked");
    assert!(with_calls >= 500, "{with_calls}");
}

// ----------------------------------------------------------- decision table

/// A call of the generated answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Known,
    Unknown,
    Unnamed,
    Invalid,
    Server,
}

/// How the generated turn ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Normal,
    ProviderError,
    EndsEarly,
    Abort,
    Restart,
}

fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// An Anthropic answer with `calls` (the last one cut when `cut`), ended as
/// `ending` says (`Restart` and `EndsEarly` end without a terminal event).
fn anthropic_answer(id: &str, calls: &[Class], cut: bool, ending: Ending) -> String {
    let mut out = sse(
        "message_start",
        &json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "content": [],
            "model": "m", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    );
    for (i, class) in calls.iter().enumerate() {
        let (ty, name, args) = match class {
            Class::Known => ("tool_use", "known", format!("{{\"i\": {i}}}")),
            Class::Unknown => ("tool_use", "nope", "{}".to_owned()),
            Class::Unnamed => ("tool_use", "", "{}".to_owned()),
            Class::Invalid => ("tool_use", "known", "{\"i\": x}".to_owned()),
            Class::Server => ("server_tool_use", "web_search", "{\"q\": \"x\"}".to_owned()),
        };
        out += &sse(
            "content_block_start",
            &json!({"type": "content_block_start", "index": i,
                "content_block": {"type": ty, "id": format!("toolu_{id}_{i}"), "name": name, "input": {}}}),
        );
        let last = i + 1 == calls.len();
        let args = if cut && last { args[..args.len() - 1].to_owned() } else { args };
        for piece in [&args[..args.len() / 2], &args[args.len() / 2..]] {
            out += &sse(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": piece}}),
            );
        }
        if !(cut && last) {
            out += &sse("content_block_stop", &json!({"type": "content_block_stop", "index": i}));
        }
    }
    match ending {
        Ending::Normal | Ending::Abort => {
            out += &sse(
                "message_delta",
                &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
            );
            if ending == Ending::Normal {
                out += &sse("message_stop", &json!({"type": "message_stop"}));
            }
        }
        Ending::ProviderError => {
            out += &sse("error", &json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}))
        }
        Ending::EndsEarly | Ending::Restart => {}
    }
    out
}

/// Feeds `body` in chunks, starting nothing itself: the started calls are
/// kept running (answered at the end by the caller).
fn feed_all(
    turn: &mut AgentTurn,
    body: &[u8],
    sizes: &[usize],
    running: &mut Vec<String>,
    cancelled: &mut Vec<String>,
) {
    let mut pos = 0;
    let mut k = 0;
    while pos < body.len() {
        let n = sizes[k % sizes.len()].max(1).min(body.len() - pos);
        k += 1;
        turn.feed(&body[pos..pos + n], 0, |e| {
            if let TurnEvent::Stream(StreamEvent::PartEnd {
                outcome: PartOutcome::Complete, tool_call: Some(c), ..
            }) = e
            {
                assert!(!c.id.is_empty());
            }
        });
        pos += n;
        drain(turn, running, cancelled);
    }
}

fn drain(turn: &mut AgentTurn, running: &mut Vec<String>, cancelled: &mut Vec<String>) {
    while let Some(action) = turn.poll_action() {
        match action {
            TurnAction::StartTool(s) => {
                assert!(!running.contains(&s.call_id), "started twice: {}", s.call_id);
                assert_eq!(s.name, "known");
                running.push(s.call_id);
            }
            TurnAction::CancelTool { call_id } => cancelled.push(call_id),
            _ => {}
        }
    }
}

fn classes() -> impl Strategy<Value = Vec<Class>> {
    prop::collection::vec(
        prop_oneof![
            3 => Just(Class::Known),
            1 => Just(Class::Unknown),
            1 => Just(Class::Unnamed),
            1 => Just(Class::Invalid),
            1 => Just(Class::Server),
        ],
        0..6,
    )
}

fn ending() -> impl Strategy<Value = Ending> {
    prop_oneof![
        Just(Ending::Normal),
        Just(Ending::ProviderError),
        Just(Ending::EndsEarly),
        Just(Ending::Abort),
        Just(Ending::Restart)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The decision table: each class of call × each ending gets the
    /// result the module docs say, in call order, exactly once.
    #[test]
    fn decision_table(calls in classes(), cut in any::<bool>(), end in ending(), sizes in prop::collection::vec(1usize..200, 1..8)) {
        let cut = cut && !calls.is_empty();
        let policy = (end == Ending::Restart)
            .then(|| ReconnectPolicy { restart_after_output: true, ..ReconnectPolicy::default() });
        let mut turn = AgentTurn::new(TurnConfig { reconnect: policy, ..TurnConfig::new(Provider::Anthropic) });
        turn.add_tool("known", ToolOptions::default());
        let (mut running, mut cancelled) = (Vec::new(), Vec::new());
        let first = anthropic_answer("a", &calls, cut, end);
        feed_all(&mut turn, first.as_bytes(), &sizes, &mut running, &mut cancelled);
        // The answer whose calls count: the first, or the restarted one.
        let mut answer: (&str, Vec<Class>, bool) = ("a", calls.clone(), cut);
        match end {
            Ending::Abort => turn.abort("stop", |_| {}),
            Ending::Restart => {
                turn.end_of_body(0, |_| {});
                drain(&mut turn, &mut running, &mut cancelled);
                let again = anthropic_answer("b", &[Class::Known, Class::Unknown], false, Ending::Normal);
                turn.connected(1);
                let before = running.clone();
                feed_all(&mut turn, again.as_bytes(), &sizes, &mut running, &mut cancelled);
                // Every call of the first answer still running was cancelled (discarded).
                for id in &before {
                    prop_assert!(cancelled.contains(id), "{id} not cancelled at the restart");
                }
                running.retain(|id| !before.contains(id));
                answer = ("b", vec![Class::Known, Class::Unknown], false);
            }
            _ => {}
        }
        turn.end_of_body(2, |_| {});
        drain(&mut turn, &mut running, &mut cancelled);
        let ended_badly = matches!(end, Ending::ProviderError | Ending::EndsEarly | Ending::Abort);
        // The host answers what it runs (a cancelled call's late result is dropped).
        for id in running.clone() {
            turn.tool_result(&id, "ok", false, |_| {}).unwrap();
            drain(&mut turn, &mut running, &mut cancelled);
        }
        prop_assert!(turn.is_finished());
        let out = turn.outcome();
        let (aid, calls, cut) = answer;
        let mut want = Vec::new();
        for (i, class) in calls.iter().enumerate() {
            let id = format!("toolu_{aid}_{i}");
            let is_cut = cut && i + 1 == calls.len();
            let kind = match class {
                Class::Server => continue,
                _ if is_cut => ToolResultKind::Incomplete,
                Class::Invalid => ToolResultKind::InvalidInput,
                Class::Unnamed => ToolResultKind::Unnamed,
                Class::Unknown => ToolResultKind::UnknownTool,
                Class::Known if ended_badly => ToolResultKind::Aborted,
                Class::Known => ToolResultKind::Ran,
            };
            want.push((id, kind));
        }
        let got: Vec<(String, ToolResultKind)> = out.results.iter().map(|r| (r.call_id.clone(), r.kind)).collect();
        prop_assert_eq!(&got, &want, "{:?} cut={} {:?}", calls, cut, end);
        // Known calls ran iff the turn ended normally; a failed turn cancelled them.
        for (id, kind) in &want {
            if *kind == ToolResultKind::Aborted {
                prop_assert!(cancelled.contains(id), "{} was running and not cancelled", id);
            }
        }
        prop_assert_eq!(out.aborted, end == Ending::Abort);
        match end {
            Ending::ProviderError => prop_assert!(matches!(out.failure, Some(TurnFailure::Stream(_)))),
            Ending::EndsEarly => prop_assert!(matches!(out.failure, Some(TurnFailure::Stream(_)))),
            _ => prop_assert!(out.failure.is_none(), "{:?}", out.failure),
        }
        // The next request answers every host-answered call of the assistant turn, in order.
        let next = out.next().expect("a next request");
        let uses: Vec<String> = next.assistant["content"].as_array().unwrap().iter()
            .filter(|b| b["type"] == "tool_use").map(|b| b["id"].as_str().unwrap().to_owned()).collect();
        let answered: Vec<String> = if next.tool_results.is_null() { Vec::new() } else {
            next.tool_results["content"].as_array().unwrap().iter().map(|b| b["tool_use_id"].as_str().unwrap().to_owned()).collect()
        };
        prop_assert_eq!(uses, answered);
    }
}
