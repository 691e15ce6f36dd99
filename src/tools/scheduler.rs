//! [`ToolScheduler`]: which ready tool calls run now, and which results can be
//! handed back, for a host that runs the tools itself.

use std::collections::{HashMap, VecDeque};

use super::{SchedulerError, ToolExecutionEvent, ToolOptions, ToolResult, ToolResultKind};
use crate::providers::ToolCall;

/// Limits and policy of a [`ToolScheduler`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// At most this many calls run at once (0: no limit beyond the
    /// exclusivity rules). Default 0.
    pub max_concurrency: usize,
    /// At most this many calls in one turn; one more is
    /// [`SchedulerError::TooManyCalls`]. Default [`SchedulerConfig::DEFAULT_MAX_CALLS`].
    pub max_calls: usize,
}

/// cbindgen:ignore
impl SchedulerConfig {
    /// Default [`SchedulerConfig::max_calls`]: 4096 calls in one turn (models
    /// send tens at most; the bound keeps a hostile stream from growing the
    /// call table without limit).
    pub const DEFAULT_MAX_CALLS: usize = 4096;

    /// Checks the limits as every binding does before it builds a scheduler
    /// or a turn: `max_calls` is at least 1 (a turn allowed no call could
    /// answer none); `max_concurrency` takes any value (0: no limit beyond
    /// the exclusivity rules).
    pub fn validate(&self) -> Result<(), crate::config::ConfigError> {
        if self.max_calls == 0 {
            return Err(crate::config::ConfigError::TooSmall { field: "max_calls", value: 0, min: 1 });
        }
        Ok(())
    }
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig { max_concurrency: 0, max_calls: Self::DEFAULT_MAX_CALLS }
    }
}

/// Where a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Ready, not started yet.
    Queued,
    /// Handed to the host by [`ToolScheduler::startable`].
    Running,
    /// Has its result (from the host or made by the scheduler).
    Done,
}

/// What a queued call may wait for before it can start (see
/// [`ToolScheduler::add_gated`]): each gate is opened by the host's answer
/// ([`ToolScheduler::open_gate`]) or the call is settled while it waits
/// ([`ToolScheduler::settle_waiting`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// The user's approval.
    Approval,
    /// The end of the turn with a stop reason that allows tools.
    TurnEnd,
}

impl Gate {
    fn bit(self) -> u8 {
        match self {
            Gate::Approval => 1,
            Gate::TurnEnd => 2,
        }
    }
}

#[derive(Debug)]
struct Call {
    id: String,
    id_synthesized: bool,
    name: String,
    options: ToolOptions,
    phase: Phase,
    /// The [`Gate`] bits still closed: a call starts only once none is.
    gates: u8,
    /// Whether the host started it (a `tool_execution_started` was emitted).
    started: bool,
    result: Option<(String, bool, ToolResultKind)>,
}

impl Call {
    /// The call's result as handed back, once it has one.
    fn to_result(&self) -> Option<ToolResult> {
        let (output, is_error, kind) = self.result.as_ref()?;
        Some(ToolResult {
            call_id: self.id.clone(),
            id_synthesized: self.id_synthesized,
            name: self.name.clone(),
            output: output.clone(),
            is_error: *is_error,
            kind: *kind,
        })
    }
}

/// What happened to the turn as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TurnState {
    Open,
    /// A call marked `abort_siblings_on_error` failed: its siblings, running
    /// or still to come, get a cancelled result.
    SiblingFailed {
        name: String,
        id: String,
    },
    /// The user aborted: every unfinished call has an aborted result and
    /// calls added later get one at once.
    Aborted {
        reason: String,
    },
    /// A streaming fallback: the turn's tool work is thrown away.
    Discarded,
}

/// What [`ToolScheduler::finish`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finished {
    /// The host's result was recorded (false: the call had already been
    /// given a result by the scheduler — cancelled, aborted or discarded —
    /// and the late result was dropped, as it must be).
    pub recorded: bool,
    /// Running calls the host must cancel now: the call failed and was
    /// added with `abort_siblings_on_error`. They already have their
    /// cancelled result.
    pub cancel: Vec<String>,
}

/// The scheduling core of a turn's tool execution. Sans-IO: it never runs a
/// tool and never reads a clock; the host reports what happened and asks
/// what to do.
///
/// Rules (the reference is the streaming tool executor of coding agents):
/// - a call runs only after [`ToolScheduler::add`], i.e. once its arguments
///   are complete and valid (`part_end` with outcome `complete`);
/// - calls that are not exclusive run in parallel with each other;
/// - an exclusive call (an edit, a shell command) starts only when nothing
///   runs, runs alone, and calls added after it wait for it;
/// - at most [`SchedulerConfig::max_concurrency`] calls run at once;
/// - results are released ([`ToolScheduler::results`]) in the order the
///   calls were added, as the finished prefix, even when a later call
///   finishes first;
/// - a call added with `abort_siblings_on_error` that fails cancels its
///   running siblings (their ids are returned to the host to cancel) and
///   every call still queued or added later in the turn; the turn goes on;
/// - an unknown tool ([`ToolScheduler::add_unknown`]) or invalid input gets
///   an error result at once and never runs;
/// - [`ToolScheduler::discard`] (a streaming fallback) throws the work away:
///   queued calls never start, running ones end with an error;
/// - [`ToolScheduler::abort`] gives every unfinished call an aborted result;
///   nothing starts after it.
///
/// Every misuse (an unknown id, finishing twice, finishing a call that was
/// never started, adding after `discard`, a duplicate id) is a typed
/// [`SchedulerError`] and changes nothing.
#[derive(Debug)]
pub struct ToolScheduler {
    config: SchedulerConfig,
    calls: Vec<Call>,
    by_id: HashMap<String, usize>,
    /// Calls `[0, released)` have been handed back by `results`.
    released: usize,
    running: usize,
    running_exclusive: bool,
    state: TurnState,
    events: VecDeque<ToolExecutionEvent>,
}

impl Default for ToolScheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolScheduler {
    /// A scheduler with the default [`SchedulerConfig`].
    pub fn new() -> Self {
        Self::with_config(SchedulerConfig::default())
    }

    /// A scheduler with `config`.
    pub fn with_config(config: SchedulerConfig) -> Self {
        ToolScheduler {
            config,
            calls: Vec::new(),
            by_id: HashMap::new(),
            released: 0,
            running: 0,
            running_exclusive: false,
            state: TurnState::Open,
            events: VecDeque::new(),
        }
    }

    /// Adds a ready tool call: `input` is its complete arguments as JSON
    /// text. Input that is not valid JSON gets an error result at once and
    /// the call never runs. While the turn is aborted or a sibling failed,
    /// the call gets its aborted / cancelled result at once.
    pub fn add(&mut self, call_id: &str, name: &str, input: &str, options: ToolOptions) -> Result<(), SchedulerError> {
        let index = self.push_call(call_id, name, options)?;
        if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(input) {
            self.settle(index, format!("Invalid tool input for {name}: {error}"), ToolResultKind::InvalidInput);
        } else {
            self.settle_if_turn_ended(index);
        }
        Ok(())
    }

    /// Adds a ready call as the stream gave it ([`StreamEvent::ready_tool_call`](crate::providers::StreamEvent::ready_tool_call)):
    /// its input was checked by the fold (complete, valid JSON, or the free
    /// text of a custom tool), so it is not parsed again. While the turn is
    /// aborted or a sibling failed, the call gets its aborted / cancelled
    /// result at once.
    pub fn add_call(&mut self, call: &ToolCall<'_>, options: ToolOptions) -> Result<(), SchedulerError> {
        let index = self.push_call(call.id, call.name, options)?;
        self.calls[index].id_synthesized = call.id_synthesized;
        self.settle_if_turn_ended(index);
        Ok(())
    }

    /// [`add_call`](Self::add_call) for a call that waits behind `gates`
    /// before the scheduling rules apply to it. A waiting exclusive call
    /// keeps its place (nothing after it starts first); a waiting call that
    /// may run beside others lets later calls pass. `Ok(true)` when the call
    /// is queued, `Ok(false)` when it got its result at once (the turn was
    /// aborted, or a sibling failed).
    pub fn add_gated(
        &mut self,
        call: &ToolCall<'_>,
        options: ToolOptions,
        gates: &[Gate],
    ) -> Result<bool, SchedulerError> {
        let index = self.push_call(call.id, call.name, options)?;
        self.calls[index].id_synthesized = call.id_synthesized;
        self.calls[index].gates = gates.iter().fold(0, |bits, g| bits | g.bit());
        self.settle_if_turn_ended(index);
        Ok(self.calls[index].phase == Phase::Queued)
    }

    /// Opens `gate` of a queued call: `Ok(true)` when it was closed, `Ok(false)`
    /// when it was not (already open, or the call has its result).
    pub fn open_gate(&mut self, call_id: &str, gate: Gate) -> Result<bool, SchedulerError> {
        let index = self.index_of(call_id)?;
        let call = &mut self.calls[index];
        if call.phase != Phase::Queued || call.gates & gate.bit() == 0 {
            return Ok(false);
        }
        call.gates &= !gate.bit();
        Ok(true)
    }

    /// Opens `gate` of every queued call.
    pub fn open_gate_all(&mut self, gate: Gate) {
        for call in self.calls[self.released..].iter_mut().filter(|c| c.phase == Phase::Queued) {
            call.gates &= !gate.bit();
        }
    }

    /// Gives a call that has not started the error result `output` of
    /// `kind` (a denial, a stop that lets no call start): `Ok(true)` when
    /// it was queued, `Ok(false)` when it had started or has its result.
    pub fn settle_waiting(
        &mut self,
        call_id: &str,
        output: &str,
        kind: ToolResultKind,
    ) -> Result<bool, SchedulerError> {
        self.settle_in(Phase::Queued, call_id, output, kind)
    }

    /// Gives the call `call_id` the error result `output` of `kind` when it
    /// is in `phase`: whether it was.
    fn settle_in(
        &mut self,
        phase: Phase,
        call_id: &str,
        output: &str,
        kind: ToolResultKind,
    ) -> Result<bool, SchedulerError> {
        let index = self.index_of(call_id)?;
        if self.calls[index].phase != phase {
            return Ok(false);
        }
        self.settle(index, output.to_owned(), kind);
        Ok(true)
    }

    /// The ids of the calls that have not started, in call order.
    pub fn queued(&self) -> Vec<String> {
        self.calls.iter().filter(|c| c.phase == Phase::Queued).map(|c| c.id.clone()).collect()
    }

    /// The ids and names of the calls running now, in call order.
    pub fn running_calls(&self) -> Vec<(String, String)> {
        self.calls.iter().filter(|c| c.phase == Phase::Running).map(|c| (c.id.clone(), c.name.clone())).collect()
    }

    /// Cancels a running call (the host asked): it gets the error result
    /// `output` of `kind` now, and its late result is dropped. `Ok(false)`
    /// when it was not running.
    pub fn cancel_running(
        &mut self,
        call_id: &str,
        output: &str,
        kind: ToolResultKind,
    ) -> Result<bool, SchedulerError> {
        self.settle_in(Phase::Running, call_id, output, kind)
    }

    /// Adds a call that must not run, with the error result `output` of
    /// `kind` (a call whose arguments were cut or invalid, an unnamed call,
    /// a call to a tool the host does not have): it is a call of the
    /// message, so it still gets its result, in call order.
    pub fn reject(&mut self, call: &ToolCall<'_>, output: &str, kind: ToolResultKind) -> Result<(), SchedulerError> {
        let index = self.push_call(call.id, call.name, ToolOptions::default())?;
        self.calls[index].id_synthesized = call.id_synthesized;
        self.settle(index, output.to_owned(), kind);
        Ok(())
    }

    /// Adds a call to a tool the host does not have: it gets the error
    /// result `No such tool available: NAME` at once and never runs.
    pub fn add_unknown(&mut self, call_id: &str, name: &str) -> Result<(), SchedulerError> {
        let index = self.push_call(call_id, name, ToolOptions::default())?;
        self.settle(index, unknown_tool_output(name), ToolResultKind::UnknownTool);
        Ok(())
    }

    fn push_call(&mut self, call_id: &str, name: &str, options: ToolOptions) -> Result<usize, SchedulerError> {
        if self.state == TurnState::Discarded {
            return Err(SchedulerError::AddAfterDiscard);
        }
        if self.by_id.contains_key(call_id) {
            return Err(SchedulerError::DuplicateCallId(call_id.to_owned()));
        }
        if self.calls.len() >= self.config.max_calls {
            return Err(SchedulerError::TooManyCalls { limit: self.config.max_calls });
        }
        let index = self.calls.len();
        self.calls.push(Call {
            id: call_id.to_owned(),
            id_synthesized: false,
            name: name.to_owned(),
            options,
            phase: Phase::Queued,
            gates: 0,
            started: false,
            result: None,
        });
        self.by_id.insert(call_id.to_owned(), index);
        Ok(index)
    }

    /// Gives a queued call its result now when the turn already decided it
    /// (aborted, or a sibling failed).
    fn settle_if_turn_ended(&mut self, index: usize) {
        match &self.state {
            TurnState::Aborted { reason } => {
                let output = aborted_output(reason);
                self.settle(index, output, ToolResultKind::Aborted);
            }
            TurnState::SiblingFailed { name, id } => {
                let output = cancelled_output(name, id);
                self.settle(index, output, ToolResultKind::Cancelled);
            }
            TurnState::Open | TurnState::Discarded => {}
        }
    }

    /// Records a result the scheduler made for a call that is queued or
    /// running, and emits its `tool_execution_finished`.
    fn settle(&mut self, index: usize, output: String, kind: ToolResultKind) {
        let call = &mut self.calls[index];
        debug_assert!(call.phase != Phase::Done);
        if call.phase == Phase::Running {
            self.running -= 1;
            if call.options.exclusive {
                self.running_exclusive = false;
            }
        }
        call.phase = Phase::Done;
        call.result = Some((output, true, kind));
        self.events.push_back(ToolExecutionEvent::Finished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            is_error: true,
        });
    }

    /// The ids of the calls the host should start now, in call order; each
    /// is running from now on (its `tool_execution_started` is emitted).
    /// Empty after [`ToolScheduler::abort`] and [`ToolScheduler::discard`].
    pub fn startable(&mut self) -> Vec<String> {
        let mut start = Vec::new();
        if self.state == TurnState::Discarded || matches!(self.state, TurnState::Aborted { .. }) {
            return start;
        }
        for index in self.released..self.calls.len() {
            let call = &self.calls[index];
            if call.phase != Phase::Queued {
                continue;
            }
            if call.gates != 0 {
                if call.options.exclusive {
                    // A waiting exclusive call keeps its place.
                    break;
                }
                continue;
            }
            let below_limit = self.config.max_concurrency == 0 || self.running < self.config.max_concurrency;
            let compatible = self.running == 0 || (!call.options.exclusive && !self.running_exclusive);
            if below_limit && compatible {
                let call = &mut self.calls[index];
                call.phase = Phase::Running;
                call.started = true;
                self.running += 1;
                self.running_exclusive |= call.options.exclusive;
                self.events
                    .push_back(ToolExecutionEvent::Started { call_id: call.id.clone(), name: call.name.clone() });
                start.push(call.id.clone());
            } else if call.options.exclusive || !below_limit {
                // An exclusive call keeps its place: nothing after it starts
                // first. At the concurrency limit nothing else can start.
                break;
            }
        }
        start
    }

    fn index_of(&self, call_id: &str) -> Result<usize, SchedulerError> {
        self.by_id.get(call_id).copied().ok_or_else(|| SchedulerError::UnknownCallId(call_id.to_owned()))
    }

    /// Progress text of a running call, for the UI
    /// (`tool_execution_update`). An update still waiting in the event queue
    /// for the same call is replaced, so the queue stays bounded when the
    /// host does not drain it. Updates of a call the scheduler already
    /// ended (cancelled, aborted, discarded) are dropped.
    pub fn update(&mut self, call_id: &str, text: &str) -> Result<(), SchedulerError> {
        let index = self.index_of(call_id)?;
        let call = &self.calls[index];
        match call.phase {
            Phase::Queued => return Err(SchedulerError::NotStarted(call_id.to_owned())),
            Phase::Done if !call.started => return Err(SchedulerError::NotStarted(call_id.to_owned())),
            Phase::Done if call.result.as_ref().is_some_and(|r| r.2 == ToolResultKind::Ran) => {
                return Err(SchedulerError::AlreadyFinished(call_id.to_owned()));
            }
            Phase::Done => return Ok(()),
            Phase::Running => {}
        }
        for event in self.events.iter_mut().rev() {
            if let ToolExecutionEvent::Update { call_id: pending, text: pending_text } = event {
                if pending == call_id {
                    text.clone_into(pending_text);
                    return Ok(());
                }
            }
        }
        self.events.push_back(ToolExecutionEvent::Update { call_id: call_id.to_owned(), text: text.to_owned() });
        Ok(())
    }

    /// The host's result of a running call. A call the scheduler already
    /// ended (cancelled, aborted, discarded) takes no result: the late one is
    /// dropped (`recorded: false`). A failed call added with
    /// `abort_siblings_on_error` cancels its running siblings: their ids are
    /// in [`Finished::cancel`].
    pub fn finish(&mut self, call_id: &str, output: &str, is_error: bool) -> Result<Finished, SchedulerError> {
        let index = self.index_of(call_id)?;
        let call = &mut self.calls[index];
        match call.phase {
            Phase::Queued => return Err(SchedulerError::NotStarted(call_id.to_owned())),
            Phase::Done => {
                let ended_by_scheduler = call.result.as_ref().is_some_and(|r| r.2 != ToolResultKind::Ran);
                return match (call.started, ended_by_scheduler) {
                    (true, true) => Ok(Finished { recorded: false, cancel: Vec::new() }),
                    (true, false) => Err(SchedulerError::AlreadyFinished(call_id.to_owned())),
                    (false, _) => Err(SchedulerError::NotStarted(call_id.to_owned())),
                };
            }
            Phase::Running => {}
        }
        call.phase = Phase::Done;
        call.result = Some((output.to_owned(), is_error, ToolResultKind::Ran));
        self.running -= 1;
        if call.options.exclusive {
            self.running_exclusive = false;
        }
        let cancels_siblings = is_error && call.options.abort_siblings_on_error;
        let (name, id) = (call.name.clone(), call.id.clone());
        self.events.push_back(ToolExecutionEvent::Finished { call_id: id.clone(), name: name.clone(), is_error });
        let mut cancel = Vec::new();
        if cancels_siblings && self.state == TurnState::Open {
            let output = cancelled_output(&name, &id);
            for sibling in 0..self.calls.len() {
                match self.calls[sibling].phase {
                    Phase::Running => cancel.push(self.calls[sibling].id.clone()),
                    Phase::Queued => {}
                    Phase::Done => continue,
                }
                self.settle(sibling, output.clone(), ToolResultKind::Cancelled);
            }
            self.state = TurnState::SiblingFailed { name, id };
        }
        Ok(Finished { recorded: true, cancel })
    }

    /// The results that can be handed back now: the finished calls after the
    /// ones already returned, up to the first call without a result (call
    /// order, each returned once). Nothing after [`ToolScheduler::discard`].
    pub fn results(&mut self) -> Vec<ToolResult> {
        let mut out = Vec::new();
        if self.state == TurnState::Discarded {
            return out;
        }
        while let Some(result) = self.calls.get(self.released).and_then(Call::to_result) {
            out.push(result);
            self.released += 1;
        }
        out
    }

    /// A streaming fallback: the turn's tool work is thrown away. Queued
    /// calls never start; running ones end with an error result (their
    /// `tool_execution_finished` is emitted) and their ids are returned for
    /// the host to cancel. Afterwards nothing starts, [`ToolScheduler::results`]
    /// is empty and [`ToolScheduler::add`] is [`SchedulerError::AddAfterDiscard`].
    pub fn discard(&mut self) -> Vec<String> {
        let mut cancel = Vec::new();
        if self.state == TurnState::Discarded {
            return cancel;
        }
        for index in 0..self.calls.len() {
            if self.calls[index].phase == Phase::Running {
                cancel.push(self.calls[index].id.clone());
                self.settle(
                    index,
                    "Discarded: the answer is being streamed again".to_owned(),
                    ToolResultKind::Discarded,
                );
            }
        }
        self.state = TurnState::Discarded;
        cancel
    }

    /// A user abort: every call without a result gets the aborted error
    /// result (`Aborted: REASON`), running ones are returned for the host to
    /// cancel, nothing starts afterwards, and calls added later get the
    /// aborted result at once (every tool call of the message still gets a
    /// result, as the providers require). After `discard` it does nothing.
    pub fn abort(&mut self, reason: &str) -> Vec<String> {
        let mut cancel = Vec::new();
        if matches!(self.state, TurnState::Discarded | TurnState::Aborted { .. }) {
            return cancel;
        }
        let output = aborted_output(reason);
        for index in 0..self.calls.len() {
            match self.calls[index].phase {
                Phase::Running => cancel.push(self.calls[index].id.clone()),
                Phase::Queued => {}
                Phase::Done => continue,
            }
            self.settle(index, output.clone(), ToolResultKind::Aborted);
        }
        self.state = TurnState::Aborted { reason: reason.to_owned() };
        cancel
    }

    /// Queues an event the turn made (an approval request, a call running
    /// after a bad stop) in order with the scheduler's own.
    pub(crate) fn push_event(&mut self, event: ToolExecutionEvent) {
        self.events.push_back(event);
    }

    /// The next `tool_execution_*` event, in the order the calls above
    /// produced them: `started` when [`ToolScheduler::startable`] hands a
    /// call out, `update` from [`ToolScheduler::update`], `finished` when a
    /// call gets its result (a call that never ran — unknown tool, invalid
    /// input, cancelled or aborted while queued — has a `finished` without a
    /// `started`).
    pub fn next_event(&mut self) -> Option<ToolExecutionEvent> {
        self.events.pop_front()
    }

    /// Number of calls added this turn.
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether no call was added.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Number of calls running now (handed out, without a result).
    pub fn running(&self) -> usize {
        self.running
    }

    /// Whether every call added has its result (true for an empty turn, and
    /// after `abort` or `discard`).
    pub fn is_settled(&self) -> bool {
        self.state == TurnState::Discarded || self.calls.iter().all(|c| c.phase == Phase::Done)
    }

    /// Whether [`ToolScheduler::discard`] was called.
    pub fn is_discarded(&self) -> bool {
        self.state == TurnState::Discarded
    }

    /// Every call's result in call order (whether or not `results` already
    /// returned it), for shaping the next request; `Unfinished` names the
    /// first call without one, `Discarded` after a discard.
    pub fn all_results(&self) -> Result<Vec<ToolResult>, SchedulerError> {
        if self.state == TurnState::Discarded {
            return Err(SchedulerError::Discarded);
        }
        self.calls
            .iter()
            .map(|call| call.to_result().ok_or_else(|| SchedulerError::Unfinished(call.id.clone())))
            .collect()
    }
}

fn aborted_output(reason: &str) -> String {
    if reason.is_empty() {
        "Aborted".to_owned()
    } else {
        format!("Aborted: {reason}")
    }
}

/// The result of a call to a tool the host does not have (Claude Code's
/// wording: the model recognises it).
pub(crate) fn unknown_tool_output(name: &str) -> String {
    format!("No such tool available: {name}")
}

fn cancelled_output(name: &str, id: &str) -> String {
    format!("Cancelled: parallel tool call {name} ({id}) errored")
}
