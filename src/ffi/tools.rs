//! `ssefold_tool_scheduler`: which ready tool calls a host runs now, and
//! their results handed back in call order (`crate::tools::ToolScheduler`).
//!
//! The scheduler never runs a tool: the host owns its threads. It adds each
//! ready tool call (`ssefold_tool_scheduler_add`), starts the ids of
//! `ssefold_tool_scheduler_startable`, reports `finish` from whatever thread
//! ran the tool (calls on one scheduler serialized by the host, as for every
//! handle), and releases `ssefold_tool_scheduler_results`. Every list and
//! view returned is owned by the scheduler until its next call.

use super::handle::{self, check_not_null, Castable, Failure, Handle};
use super::result::ssefold_result;
use super::slice::ssefold_str;
use crate::tools::{
    tool_results, SchedulerConfig, SchedulerError, ToolExecutionEvent, ToolOptions, ToolResult, ToolResultKind,
    ToolScheduler, ToolStart,
};

/// A tool scheduler (opaque): one turn's tool calls.
pub struct ssefold_tool_scheduler {
    _private: [u8; 0],
}

/// Limits of a scheduler. Start from `ssefold_tool_scheduler_config_default`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_tool_scheduler_config {
    /// At most this many calls run at once (0: no limit beyond the
    /// exclusivity rules). Default 0.
    pub max_concurrency: usize,
    /// At most this many calls in one turn (default 4096); one more is
    /// `SSEFOLD_RESULT_TOOL_TOO_MANY_CALLS`. Must be positive.
    pub max_calls: usize,
}

/// How a tool is scheduled.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ssefold_tool_options {
    /// Not safe beside other tools (an edit, a shell command): it starts when
    /// nothing runs, runs alone, and later calls wait for it.
    pub exclusive: bool,
    /// An error result of this call cancels its running siblings and the
    /// calls still to run in this turn.
    pub abort_siblings_on_error: bool,
    /// When a ready call may start: a `ssefold_tool_start` value (default
    /// `AUTO`: as soon as it is ready, unless the tool is exclusive, then
    /// once the turn ended with a stop reason that allows tools). Another
    /// value is `INVALID_ARGUMENT`.
    pub start: u32,
    /// A ready call waits for the host's approval
    /// (`ssefold_agent_turn_approve` / `_deny`) first. Default false.
    /// `start` and `needs_approval` are applied by an agent turn; a
    /// standalone scheduler checks `start` and otherwise ignores both.
    pub needs_approval: bool,
}

/// When a ready call may start (wire names `auto`, `ready`, `turn_end`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ssefold_tool_start {
    /// `READY` for a tool that may run beside others, `TURN_END` for an
    /// exclusive one.
    #[default]
    Auto = 0,
    /// As soon as the call is ready.
    Ready = 1,
    /// Only once the turn ended with a normal or tool-use stop.
    TurnEnd = 2,
}

/// The core options of C options (an unknown `start` value is refused).
pub(super) fn options_from_c(o: &ssefold_tool_options) -> Result<ToolOptions, Failure> {
    let start = [
        (ssefold_tool_start::Auto, ToolStart::Auto),
        (ssefold_tool_start::Ready, ToolStart::Ready),
        (ssefold_tool_start::TurnEnd, ToolStart::TurnEnd),
    ]
    .into_iter()
    .find(|(c, _)| *c as u32 == o.start)
    .map(|(_, s)| s)
    .ok_or_else(|| Failure::new(ssefold_result::InvalidArgument, format!("unknown tool start {}", o.start)))?;
    Ok(ToolOptions {
        exclusive: o.exclusive,
        abort_siblings_on_error: o.abort_siblings_on_error,
        start,
        needs_approval: o.needs_approval,
    })
}

/// Where a result came from (wire names `ran`, `unknown_tool`,
/// `invalid_input`, `cancelled`, `aborted`, `discarded`, `incomplete`,
/// `unnamed`, `skipped`, `denied`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_tool_result_kind {
    /// The host ran the tool and reported this result.
    Ran = 0,
    /// The host has no such tool.
    UnknownTool = 1,
    /// The arguments were not valid JSON; the tool never ran.
    InvalidInput = 2,
    /// A sibling added with `abort_siblings_on_error` failed.
    Cancelled = 3,
    /// The turn was aborted.
    Aborted = 4,
    /// A streaming fallback threw the turn's tool work away.
    Discarded = 5,
    /// The call's arguments were cut off; the tool never ran.
    Incomplete = 6,
    /// The provider sent the call without a tool name; nothing ran.
    Unnamed = 7,
    /// The turn ended with a stop reason that lets no call start; the call
    /// never ran.
    Skipped = 8,
    /// The host denied the call (or its approval timed out); it never ran.
    Denied = 9,
}

/// The result of one tool call; views owned by the scheduler until its next
/// call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_tool_result {
    /// The provider's id of the call.
    pub call_id: ssefold_str,
    /// The tool's name.
    pub name: ssefold_str,
    /// What the model is told: the tool's output, or the error text.
    pub output: ssefold_str,
    /// Whether it is an error result.
    pub is_error: bool,
    /// Where it came from.
    pub kind: ssefold_tool_result_kind,
    /// Whether `call_id` was synthesized (the provider sent none).
    pub id_synthesized: bool,
}

/// The kind of a `tool_execution_*` event.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_tool_event_kind {
    /// `tool_execution_started`: the host was told to start the call.
    Started = 0,
    /// `tool_execution_update`: progress text of a running call (`text`).
    Update = 1,
    /// `tool_execution_finished`: the call has its result (`is_error`).
    Finished = 2,
    /// `tool_approval_requested`: the call waits for the host's approval
    /// (`approval_id`, `tool_name`, `text`: the arguments).
    ApprovalRequested = 3,
    /// `tool_running_after_stop`: the turn stopped with a reason that lets
    /// no call start while this one ran (`tool_name`, `text`: the stop
    /// reason); the host may cancel it.
    RunningAfterStop = 4,
}

/// One `tool_execution_*` event; views owned by the scheduler until its next
/// call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_tool_event {
    /// What happened.
    pub kind: ssefold_tool_event_kind,
    /// The wire name (`"tool_execution_started"`, …).
    pub name: ssefold_str,
    /// The call's id.
    pub call_id: ssefold_str,
    /// The tool's name; absent for `UPDATE`.
    pub tool_name: ssefold_str,
    /// `UPDATE`: the progress text; `APPROVAL_REQUESTED`: the call's
    /// arguments; `RUNNING_AFTER_STOP`: the stop reason; absent otherwise.
    pub text: ssefold_str,
    /// `FINISHED`: whether the result is an error (false otherwise).
    pub is_error: bool,
    /// The event's JSON form, `{"event": name, "call_id", …}`.
    pub json: ssefold_str,
    /// `APPROVAL_REQUESTED`: the approval's id; absent otherwise.
    pub approval_id: ssefold_str,
}

/// The scheduler plus the storage behind the views it returned last.
pub(crate) struct SchedulerState {
    scheduler: ToolScheduler,
    ids: Vec<String>,
    id_views: Vec<ssefold_str>,
    results: Vec<ToolResult>,
    result_views: Vec<ssefold_tool_result>,
    event: Option<ToolExecutionEvent>,
    text: String,
}

impl Castable for ssefold_tool_scheduler {
    type Inner = Handle<SchedulerState>;
}

impl SchedulerState {
    /// Keeps `ids` and writes their views to `out` / `count`.
    ///
    /// # Safety
    /// `out` and `count` must be non-NULL and writable.
    unsafe fn hand_out_ids(&mut self, ids: Vec<String>, out: *mut *const ssefold_str, count: *mut usize) {
        self.ids = ids;
        self.id_views.clear();
        self.id_views.extend(self.ids.iter().map(|id| ssefold_str::new(id)));
        // SAFETY: non-NULL and writable (contract).
        unsafe {
            handle::write_out(out, self.id_views.as_ptr());
            handle::write_out(count, self.id_views.len());
        }
    }

    /// Keeps `results` and writes their views to `out` / `count`.
    ///
    /// # Safety
    /// `out` and `count` must be non-NULL and writable.
    unsafe fn hand_out_results(
        &mut self,
        results: Vec<ToolResult>,
        out: *mut *const ssefold_tool_result,
        count: *mut usize,
    ) {
        self.results = results;
        self.result_views.clear();
        self.result_views.extend(self.results.iter().map(|r| ssefold_tool_result {
            call_id: ssefold_str::new(&r.call_id),
            name: ssefold_str::new(&r.name),
            output: ssefold_str::new(&r.output),
            is_error: r.is_error,
            kind: result_kind(r.kind),
            id_synthesized: r.id_synthesized,
        }));
        // SAFETY: non-NULL and writable (contract).
        unsafe {
            handle::write_out(out, self.result_views.as_ptr());
            handle::write_out(count, self.result_views.len());
        }
    }
}

fn result_kind(kind: ToolResultKind) -> ssefold_tool_result_kind {
    match kind {
        ToolResultKind::Ran => ssefold_tool_result_kind::Ran,
        ToolResultKind::UnknownTool => ssefold_tool_result_kind::UnknownTool,
        ToolResultKind::InvalidInput => ssefold_tool_result_kind::InvalidInput,
        ToolResultKind::Cancelled => ssefold_tool_result_kind::Cancelled,
        ToolResultKind::Aborted => ssefold_tool_result_kind::Aborted,
        ToolResultKind::Discarded => ssefold_tool_result_kind::Discarded,
        ToolResultKind::Incomplete => ssefold_tool_result_kind::Incomplete,
        ToolResultKind::Unnamed => ssefold_tool_result_kind::Unnamed,
        ToolResultKind::Skipped => ssefold_tool_result_kind::Skipped,
        ToolResultKind::Denied => ssefold_tool_result_kind::Denied,
    }
}

/// The C view of a `tool_execution_*` event whose JSON form is `json`: the
/// one conversion, for schedulers and agent turns alike.
pub(super) fn tool_event_view(e: &ToolExecutionEvent, json: &str) -> ssefold_tool_event {
    let mut view = ssefold_tool_event {
        kind: ssefold_tool_event_kind::Started,
        name: ssefold_str::new(e.name()),
        call_id: ssefold_str::new(e.call_id()),
        tool_name: ssefold_str::ABSENT,
        text: ssefold_str::ABSENT,
        is_error: false,
        json: ssefold_str::new(json),
        approval_id: ssefold_str::ABSENT,
    };
    match e {
        ToolExecutionEvent::Started { name, .. } => view.tool_name = ssefold_str::new(name),
        ToolExecutionEvent::Update { text, .. } => {
            view.kind = ssefold_tool_event_kind::Update;
            view.text = ssefold_str::new(text);
        }
        ToolExecutionEvent::Finished { name, is_error, .. } => {
            view.kind = ssefold_tool_event_kind::Finished;
            view.tool_name = ssefold_str::new(name);
            view.is_error = *is_error;
        }
        ToolExecutionEvent::ApprovalRequested { approval_id, name, arguments, .. } => {
            view.kind = ssefold_tool_event_kind::ApprovalRequested;
            view.approval_id = ssefold_str::new(approval_id);
            view.tool_name = ssefold_str::new(name);
            view.text = ssefold_str::new(arguments);
        }
        ToolExecutionEvent::RunningAfterStop { name, stop_reason, .. } => {
            view.kind = ssefold_tool_event_kind::RunningAfterStop;
            view.tool_name = ssefold_str::new(name);
            view.text = ssefold_str::new(stop_reason);
        }
    }
    view
}

/// The scheduler limits of a C config, checked by the core
/// ([`SchedulerConfig::validate`]: `max_calls` 0 is refused).
pub(super) fn config_from_c(c: &ssefold_tool_scheduler_config) -> Result<SchedulerConfig, Failure> {
    let config = SchedulerConfig { max_concurrency: c.max_concurrency, max_calls: c.max_calls };
    config.validate().map_err(|e| Failure::new(ssefold_result::InvalidArgument, e.to_string()))?;
    Ok(config)
}

/// The status of a scheduler error, with its message as the last error.
pub(super) fn failure(e: &SchedulerError) -> Failure {
    let code = match e {
        SchedulerError::UnknownCallId(_) => ssefold_result::ToolUnknownCallId,
        SchedulerError::DuplicateCallId(_) => ssefold_result::ToolDuplicateCallId,
        SchedulerError::AlreadyFinished(_) => ssefold_result::ToolAlreadyFinished,
        SchedulerError::NotStarted(_) => ssefold_result::ToolNotStarted,
        SchedulerError::AddAfterDiscard => ssefold_result::ToolAddAfterDiscard,
        SchedulerError::TooManyCalls { .. } => ssefold_result::ToolTooManyCalls,
        SchedulerError::Unfinished(_) => ssefold_result::ToolUnfinished,
        SchedulerError::Discarded => ssefold_result::ToolDiscarded,
        SchedulerError::UnsupportedProvider(_) => ssefold_result::ToolUnsupportedProvider,
        SchedulerError::NotAwaitingApproval(_) => ssefold_result::ToolNotAwaitingApproval,
    };
    Failure::new(code, e.to_string())
}

/// A required string argument.
///
/// # Safety
/// The view must be NULL or `len` readable bytes.
unsafe fn required<'a>(view: ssefold_str, what: &str) -> Result<&'a str, Failure> {
    // SAFETY: forwarded contract.
    match unsafe { view.to_option()? } {
        Some(s) => Ok(s),
        None => Err(Failure::new(ssefold_result::NullParameter, format!("{what} is required"))),
    }
}

/// The default configuration (no concurrency limit, at most 4096 calls).
#[no_mangle]
pub extern "C" fn ssefold_tool_scheduler_config_default() -> ssefold_tool_scheduler_config {
    let d = SchedulerConfig::default();
    ssefold_tool_scheduler_config { max_concurrency: d.max_concurrency, max_calls: d.max_calls }
}

/// Creates a scheduler (`config` NULL: the default) and writes it to
/// `*out`. Free it with `ssefold_tool_scheduler_free`.
///
/// Errors: `INVALID_ARGUMENT` (`max_calls` is 0).
///
/// # Safety
/// `config` must be NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_new(
    config: *const ssefold_tool_scheduler_config,
    out: *mut *mut ssefold_tool_scheduler,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: NULL or readable by contract.
        let c = match unsafe { config.as_ref() }.map(config_from_c) {
            None => SchedulerConfig::default(),
            Some(Ok(c)) => c,
            Some(Err(f)) => return f.code,
        };
        let state = SchedulerState {
            scheduler: ToolScheduler::with_config(c),
            ids: Vec::new(),
            id_views: Vec::new(),
            results: Vec::new(),
            result_views: Vec::new(),
            event: None,
            text: String::new(),
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(state)) };
        ssefold_result::Ok
    }
}

/// Frees a scheduler. NULL is a no-op.
///
/// # Safety
/// `scheduler` must be NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_free(scheduler: *mut ssefold_tool_scheduler) {
    // SAFETY: forwarded contract.
    ffi_panic_boundary! { unsafe { handle::free(scheduler) } }
}

/// Adds a ready tool call (`input_json`: its complete arguments). Input that
/// is not valid JSON gets an error result at once and never runs; so does
/// every call added after an abort or a failed `abort_siblings_on_error`
/// sibling.
///
/// Errors: `NULL_PARAMETER` (absent `call_id` or `name`; absent
/// `input_json` reads as empty, i.e. invalid), `TOOL_DUPLICATE_CALL_ID`,
/// `TOOL_ADD_AFTER_DISCARD`, `TOOL_TOO_MANY_CALLS`.
///
/// # Safety
/// `scheduler` must be NULL or live; each view NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_add(
    scheduler: *mut ssefold_tool_scheduler,
    call_id: ssefold_str,
    name: ssefold_str,
    input_json: ssefold_str,
    options: ssefold_tool_options,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        // SAFETY: views readable by contract.
        let (id, name, input) =
            unsafe { (required(call_id, "call_id")?, required(name, "name")?, input_json.to_str_or_empty()?) };
        let options = options_from_c(&options)?;
        s.scheduler.add(id, name, input, options).map_err(|e| failure(&e))?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// Adds a call to a tool the host does not have: it gets the error result
/// `No such tool available: NAME` at once and never runs.
///
/// Errors: as `ssefold_tool_scheduler_add`.
///
/// # Safety
/// `scheduler` must be NULL or live; each view NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_add_unknown(
    scheduler: *mut ssefold_tool_scheduler,
    call_id: ssefold_str,
    name: ssefold_str,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        // SAFETY: views readable by contract.
        let (id, name) = unsafe { (required(call_id, "call_id")?, required(name, "name")?) };
        s.scheduler.add_unknown(id, name).map_err(|e| failure(&e))?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// The ids of the calls to start now, in call order (`*count` of them at
/// `*ids`; owned by the scheduler until its next call). Each is running from
/// now on. None after `abort` or `discard`.
///
/// # Safety
/// `scheduler` must be NULL or live; `ids` and `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_startable(
    scheduler: *mut ssefold_tool_scheduler,
    ids: *mut *const ssefold_str,
    count: *mut usize,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        check_not_null!(ids, count);
        let start = s.scheduler.startable();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { s.hand_out_ids(start, ids, count) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// Progress text of a running call (a `tool_execution_update` event; an
/// update of the same call still queued is replaced). Updates of a call the
/// scheduler already ended are dropped (`OK`).
///
/// Errors: `NULL_PARAMETER` (absent `call_id`), `TOOL_UNKNOWN_CALL_ID`,
/// `TOOL_NOT_STARTED`, `TOOL_ALREADY_FINISHED`.
///
/// # Safety
/// `scheduler` must be NULL or live; each view NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_update(
    scheduler: *mut ssefold_tool_scheduler,
    call_id: ssefold_str,
    text: ssefold_str,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        // SAFETY: views readable by contract.
        let (id, text) = unsafe { (required(call_id, "call_id")?, text.to_str_or_empty()?) };
        s.scheduler.update(id, text).map_err(|e| failure(&e))?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// The host's result of a running call. `*recorded` is false when the
/// scheduler had already ended the call (cancelled, aborted, discarded):
/// the late result is dropped. `*cancel` / `*cancel_count`: running
/// siblings the host must cancel now (the call failed and was added with
/// `abort_siblings_on_error`); owned by the scheduler until its next call.
///
/// Errors: `NULL_PARAMETER`, `TOOL_UNKNOWN_CALL_ID`, `TOOL_NOT_STARTED`,
/// `TOOL_ALREADY_FINISHED`; nothing changes.
///
/// # Safety
/// `scheduler` must be NULL or live; each view NULL or readable; the
/// out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_finish(
    scheduler: *mut ssefold_tool_scheduler,
    call_id: ssefold_str,
    output: ssefold_str,
    is_error: bool,
    recorded: *mut bool,
    cancel: *mut *const ssefold_str,
    cancel_count: *mut usize,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        check_not_null!(recorded, cancel, cancel_count);
        // SAFETY: views readable by contract.
        let (id, output) = unsafe { (required(call_id, "call_id")?, output.to_str_or_empty()?) };
        let finished = s.scheduler.finish(id, output, is_error).map_err(|e| failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe {
            handle::write_out(recorded, finished.recorded);
            s.hand_out_ids(finished.cancel, cancel, cancel_count);
        }
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// The results that can be handed back now: the finished calls after the
/// ones already returned, up to the first call without a result (call
/// order, each once). Owned by the scheduler until its next call.
///
/// # Safety
/// `scheduler` must be NULL or live; `results` and `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_results(
    scheduler: *mut ssefold_tool_scheduler,
    results: *mut *const ssefold_tool_result,
    count: *mut usize,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        check_not_null!(results, count);
        let released = s.scheduler.results();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { s.hand_out_results(released, results, count) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// Every call's result in call order (whether or not `results` returned it
/// already). Owned by the scheduler until its next call.
///
/// Errors: `TOOL_UNFINISHED` (a call has no result yet; the last error names
/// it), `TOOL_DISCARDED`.
///
/// # Safety
/// `scheduler` must be NULL or live; `results` and `count` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_all_results(
    scheduler: *mut ssefold_tool_scheduler,
    results: *mut *const ssefold_tool_result,
    count: *mut usize,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        check_not_null!(results, count);
        let all = s.scheduler.all_results().map_err(|e| failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { s.hand_out_results(all, results, count) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// A streaming fallback: the turn's tool work is thrown away. Queued calls
/// never start; running ones end with an error result and their ids are
/// written to `*cancel` / `*cancel_count` for the host to cancel (owned by
/// the scheduler until its next call). Afterwards `add` is
/// `TOOL_ADD_AFTER_DISCARD`.
///
/// # Safety
/// `scheduler` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_discard(
    scheduler: *mut ssefold_tool_scheduler,
    cancel: *mut *const ssefold_str,
    cancel_count: *mut usize,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        check_not_null!(cancel, cancel_count);
        let ids = s.scheduler.discard();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { s.hand_out_ids(ids, cancel, cancel_count) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// A user abort: every call without a result gets `Aborted: REASON`
/// (`reason` absent or empty: `Aborted`), running ones are written to
/// `*cancel` / `*cancel_count` for the host to cancel (owned by the
/// scheduler until its next call), nothing starts afterwards, and calls
/// added later get the aborted result at once.
///
/// # Safety
/// `scheduler` must be NULL or live; `reason` NULL or readable; the
/// out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_abort(
    scheduler: *mut ssefold_tool_scheduler,
    reason: ssefold_str,
    cancel: *mut *const ssefold_str,
    cancel_count: *mut usize,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        check_not_null!(cancel, cancel_count);
        // SAFETY: view readable by contract.
        let reason = unsafe { reason.to_str_or_empty()? };
        let ids = s.scheduler.abort(reason);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { s.hand_out_ids(ids, cancel, cancel_count) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// The next `tool_execution_*` event: `*has_event` is false when there is
/// none (then `*event` is not written). The event's views are owned by the
/// scheduler until its next call.
///
/// # Safety
/// `scheduler` must be NULL or live; `event` and `has_event` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_next_event(
    scheduler: *mut ssefold_tool_scheduler,
    event: *mut ssefold_tool_event,
    has_event: *mut bool,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        check_not_null!(event, has_event);
        s.event = s.scheduler.next_event();
        let Some(e) = &s.event else {
            // SAFETY: non-NULL (checked) and writable by contract.
            unsafe { handle::write_out(has_event, false) };
            return Ok(ssefold_result::Ok);
        };
        s.text = e.to_json().to_string();
        let view = tool_event_view(e, &s.text);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe {
            handle::write_out(event, view);
            handle::write_out(has_event, true);
        }
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// Every call's result (as `ssefold_tool_scheduler_all_results`) shaped for
/// the next request of `provider` (a `ssefold_provider` value), as compact
/// JSON text owned by the scheduler until its next call: Anthropic, one
/// user message of `tool_result` blocks; OpenAI Chat, an array of `tool`
/// messages; OpenAI Responses, an array of `function_call_output` items.
///
/// Errors: `INVALID_ARGUMENT` (unknown provider number),
/// `TOOL_UNSUPPORTED_PROVIDER` (`AUTO`), `TOOL_UNFINISHED`, `TOOL_DISCARDED`.
///
/// # Safety
/// `scheduler` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_tool_results(
    scheduler: *mut ssefold_tool_scheduler,
    provider: u32,
    out: *mut ssefold_str,
) -> ssefold_result {
    let body = |s: &mut SchedulerState| {
        check_not_null!(out);
        let Some(provider) = super::stream::provider_from_c(provider) else {
            return Err(Failure::new(ssefold_result::InvalidArgument, format!("unknown provider {provider}")));
        };
        let all = s.scheduler.all_results().map_err(|e| failure(&e))?;
        s.text = tool_results(provider, &all).map_err(|e| failure(&e))?.to_string();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, ssefold_str::new(&s.text)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_mut(scheduler, body) }
}

/// Counts of the turn: calls added, calls running now, and whether every
/// call has its result (true for an empty turn, after `abort` and after
/// `discard`). Any out-pointer may be NULL (not written).
///
/// # Safety
/// `scheduler` must be NULL or live; each out-pointer NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_status(
    scheduler: *const ssefold_tool_scheduler,
    calls: *mut usize,
    running: *mut usize,
    is_settled: *mut bool,
) -> ssefold_result {
    let body = |s: &SchedulerState| {
        // SAFETY: each pointer NULL or writable by contract.
        unsafe {
            if let Some(out) = calls.as_mut() {
                *out = s.scheduler.len();
            }
            if let Some(out) = running.as_mut() {
                *out = s.scheduler.running();
            }
            if let Some(out) = is_settled.as_mut() {
                *out = s.scheduler.is_settled();
            }
        }
        Ok(())
    };
    // SAFETY: `scheduler` is NULL or a live handle (contract).
    unsafe { handle::with_ref(scheduler, body) }
}

/// The message of the scheduler's last call (empty after success), as a
/// NUL-terminated view owned by the scheduler until its next call.
///
/// # Safety
/// `scheduler` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_tool_scheduler_last_error(
    scheduler: *const ssefold_tool_scheduler,
    out: *mut ssefold_str,
) -> ssefold_result {
    // SAFETY: forwarded contract.
    unsafe { super::write_last_error(scheduler, out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> ssefold_str {
        ssefold_str::new(text)
    }

    fn ids(ptr: *const ssefold_str, n: usize) -> Vec<String> {
        // SAFETY: the views came from the scheduler and are read before its next call.
        unsafe {
            core::slice::from_raw_parts(ptr, n)
                .iter()
                .map(|v| {
                    core::str::from_utf8(core::slice::from_raw_parts(v.ptr.cast::<u8>(), v.len)).unwrap().to_owned()
                })
                .collect()
        }
    }

    #[test]
    fn misuse_is_a_typed_status_and_the_flow_works() {
        let mut p = core::ptr::null_mut();
        // SAFETY: `p` is live from `new` until `free`; every out-pointer is a local.
        unsafe {
            assert_eq!(ssefold_tool_scheduler_new(core::ptr::null(), &mut p), ssefold_result::Ok);
            let opts = ssefold_tool_options::default();
            assert_eq!(ssefold_tool_scheduler_add(p, s("a"), s("read"), s("{}"), opts), ssefold_result::Ok);
            assert_eq!(
                ssefold_tool_scheduler_add(p, s("a"), s("read"), s("{}"), opts),
                ssefold_result::ToolDuplicateCallId
            );
            let (mut recorded, mut list, mut n) = (false, core::ptr::null(), 0usize);
            assert_eq!(
                ssefold_tool_scheduler_finish(p, s("a"), s("x"), false, &mut recorded, &mut list, &mut n),
                ssefold_result::ToolNotStarted
            );
            assert_eq!(
                ssefold_tool_scheduler_finish(p, s("zz"), s("x"), false, &mut recorded, &mut list, &mut n),
                ssefold_result::ToolUnknownCallId
            );
            assert_eq!(ssefold_tool_scheduler_startable(p, &mut list, &mut n), ssefold_result::Ok);
            assert_eq!(ids(list, n), ["a"]);
            assert_eq!(
                ssefold_tool_scheduler_finish(p, s("a"), s("x"), false, &mut recorded, &mut list, &mut n),
                ssefold_result::Ok
            );
            assert!(recorded);
            assert_eq!(
                ssefold_tool_scheduler_finish(p, s("a"), s("x"), false, &mut recorded, &mut list, &mut n),
                ssefold_result::ToolAlreadyFinished
            );
            let mut out = ssefold_str::ABSENT;
            assert_eq!(ssefold_tool_scheduler_tool_results(p, 0, &mut out), ssefold_result::ToolUnsupportedProvider);
            assert_eq!(ssefold_tool_scheduler_tool_results(p, 9, &mut out), ssefold_result::InvalidArgument);
            assert_eq!(ssefold_tool_scheduler_tool_results(p, 2, &mut out), ssefold_result::Ok);
            assert_eq!(ids(&out, 1), [r#"[{"role":"tool","tool_call_id":"a","content":"x"}]"#]);
            assert_eq!(ssefold_tool_scheduler_discard(p, &mut list, &mut n), ssefold_result::Ok);
            assert_eq!(
                ssefold_tool_scheduler_add(p, s("b"), s("read"), s("{}"), opts),
                ssefold_result::ToolAddAfterDiscard
            );
            ssefold_tool_scheduler_free(p);
        }
    }
}
