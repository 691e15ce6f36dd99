//! `ssefold_agent_turn`: one agent turn, sans-IO (`crate::agent::AgentTurn`)
//! — the stream, its tool calls and (optionally) the reconnection policy,
//! decided once for every binding.
//!
//! The host tells the turn what happened (`_connected`, `_feed`,
//! `_end_of_body`, `_connection_failed`, `_tick`, `_tool_update`,
//! `_tool_result`, `_abort`), gets what to show through its callback (the
//! normalized stream events as `ssefold_stream_event`, the
//! `tool_execution_*` events as `ssefold_tool_event`, in the order they
//! happened), and drains what to do with `_poll_action` after each input:
//! start a tool (on the host's thread), cancel one, close the connection,
//! reconnect after a delay. The turn never opens a socket, never runs a tool
//! and never reads a clock. When `_is_finished`, `_outcome_json` is the
//! turn's result: the folded message, one result per call, and the next
//! request.
//!
//! A tool runs on whatever thread the host likes, but every call on the
//! turn (its result included) comes from one thread at a time, as for every
//! handle: a pool's workers post their results to the thread that drives the
//! turn.

use core::ffi::c_void;

use super::handle::{self, check_not_null, Castable, Failure, Handle};
use super::reconnect::{
    cursor_view, default_policy, policy_from_c, replay_c, ssefold_reconnect_policy, ssefold_replay,
    ssefold_resume_cursor, ssefold_retry_hints, ssefold_stall_kind, stall_c,
};
use super::result::ssefold_result;
use super::slice::{bytes_from_raw, ssefold_str};
use super::stream::{
    default_config, provider_from_c, ssefold_stream_config, ssefold_stream_event, ssefold_tool_input_format,
    with_event_view, EventViews,
};
use super::tools::{ssefold_tool_event, ssefold_tool_options, ssefold_tool_scheduler_config, tool_event_view};
use crate::agent::{AgentTurn, TurnAction, TurnConfig, TurnError, TurnEvent, TurnFailure};
use crate::reconnect::{ReconnectPolicy, ResumeCursor, RetryHints};
use crate::tools::SchedulerConfig;

/// One agent turn (opaque).
pub struct ssefold_agent_turn {
    _private: [u8; 0],
}

/// How a turn is made. Start from `ssefold_agent_turn_config_default`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_agent_turn_config {
    /// A `ssefold_provider` value (default `AUTO`: detected from the body).
    pub provider: u32,
    /// The stream's limits.
    pub stream: ssefold_stream_config,
    /// The tool scheduler's limits (`max_concurrency`, `max_calls`).
    pub scheduler: ssefold_tool_scheduler_config,
    /// Retry, resume or (opted in) restart a connection that is refused
    /// with a transient HTTP status, ends early, fails or stalls, with
    /// `reconnect_policy` (default true). False: never send a request
    /// again (a host that reads one body); the policy's stall timeouts
    /// still apply.
    pub reconnect: bool,
    /// The reconnection policy (its stall timeouts apply either way).
    pub reconnect_policy: ssefold_reconnect_policy,
    /// A call waiting for approval that gets no answer for this long is
    /// denied, in milliseconds (0, the default: it waits for the host).
    pub approval_timeout_ms: u64,
    /// A random number for the retry jitter (0: the fixed default sequence).
    pub jitter_seed: u64,
}

/// The turn's event callback: exactly one of `stream_event` (a normalized
/// event of the stream) and `tool_event` (a `tool_execution_*` event) is
/// non-NULL. Every view is valid only during the call. The callback must
/// not call functions on the turn (they return `BAD_STATE`).
pub type ssefold_agent_turn_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        stream_event: *const ssefold_stream_event,
        tool_event: *const ssefold_tool_event,
    ),
>;

/// What the host does next (the `kind` of [`ssefold_agent_turn_action`]).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_agent_turn_action_kind {
    /// Start the call `call_id` of the tool `name` with `arguments` (on the
    /// host's thread), then report `ssefold_agent_turn_tool_result`.
    StartTool = 0,
    /// Cancel the running call `call_id`: the turn already gave it its
    /// result (a late result is dropped).
    CancelTool = 1,
    /// Close the connection now (it went idle); what follows (a
    /// reconnection, or the end of the turn) is already decided.
    CloseConnection = 2,
    /// Send the request again after `delay_ms` with `cursor`, then report
    /// `ssefold_agent_turn_connected` and feed the new body.
    Reconnect = 3,
}

/// One action of `ssefold_agent_turn_poll_action`. Views are owned by the
/// turn until its next call; members that do not apply to `kind` are zero
/// or absent.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_agent_turn_action {
    /// What to do.
    pub kind: ssefold_agent_turn_action_kind,
    /// `START_TOOL`, `CANCEL_TOOL`: the call's id (the provider's, or
    /// synthesized: unique in the turn).
    pub call_id: ssefold_str,
    /// `START_TOOL`: the tool's name (one the host registered).
    pub name: ssefold_str,
    /// `START_TOOL`: the call's input as text (JSON, or free text for a
    /// `TEXT` call).
    pub arguments: ssefold_str,
    /// `START_TOOL`: how `arguments` is written.
    pub input_format: ssefold_tool_input_format,
    /// `START_TOOL`: whether `call_id` was synthesized (the provider sent
    /// none, or repeated an earlier call's).
    pub id_synthesized: bool,
    /// `RECONNECT`: how long to wait first, in milliseconds.
    pub delay_ms: u64,
    /// `RECONNECT`: which reconnection this is (1 for the first).
    pub attempt: u32,
    /// `RECONNECT`: what to send so the server can resume.
    pub cursor: ssefold_resume_cursor,
    /// `RECONNECT`: what the request is (a retry before any output, a
    /// resume, or a restart the policy opted in to).
    pub replay: ssefold_replay,
}

/// Why a turn ended with an error (the `kind` of
/// [`ssefold_turn_failure`]; wire names `stream`, `transport`,
/// `idle_timeout`, `too_many_calls`, `http` in the outcome's JSON).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_turn_failure_kind {
    /// No failure (yet).
    None = 0,
    /// The stream failed: bad data, a limit, a provider error event, a body
    /// that ended before the answer did (`status` is the stream's).
    Stream = 1,
    /// The connection failed and was not (or could no longer be) resumed.
    Transport = 2,
    /// The connection went idle or stalled (`stall` says which timeout)
    /// and was not (or could no longer be) resumed.
    IdleTimeout = 3,
    /// The answer has more tool calls than the scheduler's `max_calls`: the
    /// calls past it get no result.
    TooManyCalls = 4,
    /// The response was refused with an HTTP status (`http_status`) and not
    /// (or no longer) retried.
    Http = 5,
}

/// A turn's failure, typed. Views are owned by the turn until its next call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_turn_failure {
    /// Which failure (`NONE`: the turn has none).
    pub kind: ssefold_turn_failure_kind,
    /// The status the failure has as a call's result: `STREAM`: what
    /// `ssefold_stream_feed` / `_finish` would have returned
    /// (`STREAM_INCOMPLETE`, `STREAM_PROVIDER_ERROR`, …); `TOO_MANY_CALLS`:
    /// `TOOL_TOO_MANY_CALLS`; `OK` otherwise.
    pub status: ssefold_result,
    /// A one-line description (absent for `NONE`).
    pub message: ssefold_str,
    /// Whether sending the request again may succeed (a transient provider
    /// error type, a transport failure, an idle connection). Retrying is the
    /// host's decision.
    pub retryable: bool,
    /// `IDLE_TIMEOUT`: which timeout fired.
    pub stall: ssefold_stall_kind,
    /// `IDLE_TIMEOUT`: its length in milliseconds.
    pub after_ms: u64,
    /// `HTTP`: the status (0 otherwise).
    pub http_status: u16,
}

/// The Rust side of [`ssefold_agent_turn`]: the turn plus the values that
/// back the views it hands out.
pub(crate) struct AgentTurnState {
    turn: AgentTurn,
    callback: ssefold_agent_turn_callback,
    user_data: *mut c_void,
    event_json: bool,
    /// Lends each stream event's view (and its JSON form) during the callback.
    views: EventViews,
    /// Backs a tool event's JSON form during the callback.
    tool_json: String,
    /// Backs the views of the last `_poll_action`.
    action: Option<TurnAction>,
    /// Backs the view of `_outcome_json` and `_failure`'s message.
    text: String,
}

impl Castable for ssefold_agent_turn {
    type Inner = Handle<AgentTurnState>;
}

impl AgentTurnState {
    /// The turn and the event sink its inputs report through.
    fn split(&mut self) -> (&mut AgentTurn, impl FnMut(TurnEvent<'_>) + '_) {
        let AgentTurnState { turn, callback, user_data, event_json, views, tool_json, .. } = self;
        let (callback, user_data, event_json) = (*callback, *user_data, *event_json);
        let sink = move |e: TurnEvent<'_>| {
            let Some(cb) = callback else { return };
            match e {
                TurnEvent::Stream(event) => with_event_view(event, event_json, views, |v| {
                    // SAFETY: the host registered `cb` for `user_data`; `v` outlives the call.
                    unsafe { cb(user_data, v, core::ptr::null()) }
                }),
                TurnEvent::Tool(event) => {
                    *tool_json = event.to_json().to_string();
                    let v = tool_event_view(event, tool_json);
                    // SAFETY: as above.
                    unsafe { cb(user_data, core::ptr::null(), &v) }
                }
            }
        };
        (turn, sink)
    }
}

fn turn_error(e: TurnError) -> Failure {
    match e {
        TurnError::Scheduler(e) => super::tools::failure(&e),
    }
}

fn action_view(a: &TurnAction) -> ssefold_agent_turn_action {
    let mut v = ssefold_agent_turn_action {
        kind: ssefold_agent_turn_action_kind::StartTool,
        call_id: ssefold_str::ABSENT,
        name: ssefold_str::ABSENT,
        arguments: ssefold_str::ABSENT,
        input_format: ssefold_tool_input_format::Json,
        id_synthesized: false,
        delay_ms: 0,
        attempt: 0,
        cursor: cursor_view(&ResumeCursor::None),
        replay: ssefold_replay::Retry,
    };
    match a {
        TurnAction::StartTool(s) => {
            v.call_id = ssefold_str::new(&s.call_id);
            v.name = ssefold_str::new(&s.name);
            v.arguments = ssefold_str::new(&s.arguments);
            v.input_format = s.input_format.into();
            v.id_synthesized = s.id_synthesized;
        }
        TurnAction::CancelTool { call_id } => {
            v.kind = ssefold_agent_turn_action_kind::CancelTool;
            v.call_id = ssefold_str::new(call_id);
        }
        TurnAction::CloseConnection => v.kind = ssefold_agent_turn_action_kind::CloseConnection,
        TurnAction::Reconnect { delay_ms, attempt, cursor, replay } => {
            v.kind = ssefold_agent_turn_action_kind::Reconnect;
            v.delay_ms = *delay_ms;
            v.attempt = *attempt;
            v.cursor = cursor_view(cursor);
            v.replay = replay_c(*replay);
        }
    }
    v
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

fn config_from_c(c: &ssefold_agent_turn_config) -> Result<TurnConfig, Failure> {
    let provider = provider_from_c(c.provider)
        .ok_or_else(|| Failure::new(ssefold_result::InvalidArgument, format!("unknown provider {}", c.provider)))?;
    let mut config = TurnConfig::new(provider);
    config.stream = super::stream::config_from_c(&c.stream)?;
    config.scheduler = super::tools::config_from_c(&c.scheduler)?;
    let policy = policy_from_c(&c.reconnect_policy)?;
    config.reconnect = Some(if c.reconnect { policy } else { ReconnectPolicy { max_retries: 0, ..policy } });
    config.approval_timeout_ms = (c.approval_timeout_ms != 0).then_some(c.approval_timeout_ms);
    config.jitter_seed = c.jitter_seed;
    Ok(config)
}

/// Writes the default configuration to `*out`: provider `AUTO`, the default
/// stream and scheduler limits, reconnection on with the default policy
/// (retries before output, resume after it, the stall timeouts), no
/// approval timeout.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_config_default(out: *mut ssefold_agent_turn_config) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        let d = SchedulerConfig::default();
        let c = ssefold_agent_turn_config {
            provider: 0,
            stream: default_config(),
            scheduler: ssefold_tool_scheduler_config { max_concurrency: d.max_concurrency, max_calls: d.max_calls },
            reconnect: true,
            reconnect_policy: default_policy(),
            approval_timeout_ms: 0,
            jitter_seed: 0,
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, c) };
        ssefold_result::Ok
    }
}

/// Creates a turn waiting for its first bytes (`config` NULL: the defaults)
/// and writes it to `*out`. Free it with `ssefold_agent_turn_free`.
///
/// Errors: `INVALID_ARGUMENT` (an unknown provider or UTF-8 mode, a zero
/// limit that must be positive, a reconnection policy out of range).
///
/// # Safety
/// `config` must be NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_new(
    config: *const ssefold_agent_turn_config,
    out: *mut *mut ssefold_agent_turn,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: NULL or readable by contract.
        let config = match unsafe { config.as_ref() }.map(config_from_c) {
            None => TurnConfig::new(crate::providers::Provider::Auto),
            Some(Ok(c)) => c,
            Some(Err(f)) => return f.code,
        };
        let state = AgentTurnState {
            turn: AgentTurn::new(config),
            callback: None,
            user_data: core::ptr::null_mut(),
            event_json: false,
            views: EventViews::new(),
            tool_json: String::new(),
            action: None,
            text: String::new(),
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(state)) };
        ssefold_result::Ok
    }
}

/// Frees a turn. NULL is a no-op.
///
/// # Safety
/// `turn` must be NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_free(turn: *mut ssefold_agent_turn) {
    // SAFETY: forwarded contract.
    ffi_panic_boundary! { unsafe { handle::free(turn) } }
}

/// Registers a tool the host runs (`name`), and how it is scheduled. A call
/// to a name not registered gets the error result `No such tool available:
/// NAME` and is never started. Register every tool before the first feed.
///
/// Errors: `NULL_PARAMETER` (absent `name`), `INVALID_UTF8_ARGUMENT`.
///
/// # Safety
/// `turn` must be NULL or live; `name` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_add_tool(
    turn: *mut ssefold_agent_turn,
    name: ssefold_str,
    options: ssefold_tool_options,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: view readable by contract.
        let name = unsafe { required(name, "name")? };
        s.turn.add_tool(name, super::tools::options_from_c(&options)?);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// Registers the event callback (NULL: none; the turn runs the same) with
/// its `user_data`. `event_json` asks for each stream event's JSON form in
/// `stream_event->json` (a serialization per event); a tool event always
/// carries its JSON form.
///
/// # Safety
/// `turn` must be NULL or live; `callback` safe to call with `user_data`
/// until replaced or the turn freed.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_set_callback(
    turn: *mut ssefold_agent_turn,
    callback: ssefold_agent_turn_callback,
    user_data: *mut c_void,
    event_json: bool,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        s.callback = callback;
        s.user_data = user_data;
        s.event_json = event_json;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The response headers of a connection arrived at `now_ms` (host clock):
/// the first connection, or the one a `RECONNECT` action asked for.
///
/// # Safety
/// `turn` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_connected(turn: *mut ssefold_agent_turn, now_ms: u64) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        s.turn.connected(now_ms);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// Bytes of the body arrived at `now_ms`: the callback gets what to show,
/// in order; then drain `ssefold_agent_turn_poll_action`. A failure of the
/// stream (bad data, a limit, a provider error event) is no status here: it
/// ends the turn (`ssefold_agent_turn_failure`, the outcome's `failure`).
/// Bytes after the stream is over change nothing (after its terminal event
/// the stream still warns of them: `data_after_terminal`).
///
/// Errors: `NULL_PARAMETER` (`bytes` NULL with `len` > 0),
/// `INVALID_ARGUMENT` (`len` over `PTRDIFF_MAX`).
///
/// # Safety
/// `turn` must be NULL or live; `bytes` NULL or `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_feed(
    turn: *mut ssefold_agent_turn,
    bytes: *const u8,
    len: usize,
    now_ms: u64,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: `len` readable bytes by contract (or NULL/0, checked by the helper).
        let chunk = unsafe { bytes_from_raw(bytes, len)? };
        let (turn, sink) = s.split();
        turn.feed(chunk, now_ms, sink);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The body ended (the connection closed cleanly) at `now_ms`: the stream
/// ends, or, when it ended before the answer's terminal event and a policy
/// allows, a `RECONNECT` action is queued.
///
/// # Safety
/// `turn` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_end_of_body(turn: *mut ssefold_agent_turn, now_ms: u64) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        let (turn, sink) = s.split();
        turn.end_of_body(now_ms, sink);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The connection failed before the body ended (`error` says how; absent:
/// empty): reconnected when a policy allows, else the turn ends with a
/// `TRANSPORT` failure.
///
/// # Safety
/// `turn` must be NULL or live; `error` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_connection_failed(
    turn: *mut ssefold_agent_turn,
    error: ssefold_str,
    now_ms: u64,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: view readable by contract.
        let error = unsafe { error.to_str_or_empty()? };
        let (turn, sink) = s.split();
        turn.connection_failed(error, now_ms, sink);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The time passed (`now_ms`, host clock): a connection idle or stalled
/// past the policy's timeouts (no bytes; no content before the first or
/// between contents) gets a `CLOSE_CONNECTION` action, then a `RECONNECT`
/// or the end of the turn; a call waiting for approval past the turn's
/// `approval_timeout_ms` is denied (also after the stream ended). Call it
/// at `ssefold_agent_turn_deadline_ms`.
///
/// # Safety
/// `turn` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_tick(turn: *mut ssefold_agent_turn, now_ms: u64) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        let (turn, sink) = s.split();
        turn.tick(now_ms, sink);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// When `ssefold_agent_turn_tick` should be called next (host clock): the
/// earliest of the connection's idle and stall deadlines (while it
/// streams) and the approval deadlines (also after the stream ended);
/// `*has_deadline` is false (and `*deadline_ms` 0) when there is none.
///
/// # Safety
/// `turn` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_deadline_ms(
    turn: *const ssefold_agent_turn,
    has_deadline: *mut bool,
    deadline_ms: *mut u64,
) -> ssefold_result {
    let body = |s: &AgentTurnState| {
        check_not_null!(has_deadline, deadline_ms);
        let d = s.turn.deadline_ms();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(has_deadline, d.is_some()) };
        // SAFETY: as above.
        unsafe { handle::write_out(deadline_ms, d.unwrap_or(0)) };
        Ok(())
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_ref(turn, body) }
}

/// Progress text of a running call (a `tool_execution_update` event).
/// Updates of a call the turn already ended are dropped (`OK`).
///
/// Errors: `NULL_PARAMETER` (absent `call_id`), `TOOL_UNKNOWN_CALL_ID`,
/// `TOOL_NOT_STARTED`, `TOOL_ALREADY_FINISHED`; nothing changes.
///
/// # Safety
/// `turn` must be NULL or live; each view NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_tool_update(
    turn: *mut ssefold_agent_turn,
    call_id: ssefold_str,
    text: ssefold_str,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: views readable by contract.
        let (id, text) = unsafe { (required(call_id, "call_id")?, text.to_str_or_empty()?) };
        let (turn, sink) = s.split();
        turn.tool_update(id, text, sink).map_err(turn_error)?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The host's result of a call it was told to start (`START_TOOL`). A call
/// the turn already ended (cancelled, aborted, discarded) takes no result:
/// the late one is dropped (`OK`). A failed call of a tool registered with
/// `abort_siblings_on_error` queues `CANCEL_TOOL` for its running siblings.
///
/// Errors: `NULL_PARAMETER` (absent `call_id`), `TOOL_UNKNOWN_CALL_ID`,
/// `TOOL_NOT_STARTED`, `TOOL_ALREADY_FINISHED`; nothing changes.
///
/// # Safety
/// `turn` must be NULL or live; each view NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_tool_result(
    turn: *mut ssefold_agent_turn,
    call_id: ssefold_str,
    output: ssefold_str,
    is_error: bool,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: views readable by contract.
        let (id, output) = unsafe { (required(call_id, "call_id")?, output.to_str_or_empty()?) };
        let (turn, sink) = s.split();
        turn.tool_result(id, output, is_error, sink).map_err(turn_error)?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The host sent the request at `now_ms` (the first, or the one a
/// `RECONNECT` asked for): the timings count from the first. Optional.
///
/// # Safety
/// `turn` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_request_sent(turn: *mut ssefold_agent_turn, now_ms: u64) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        s.turn.request_sent(now_ms);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The response was refused before its body at `now_ms`: `status` is not
/// 2xx; `hints` (NULL: none) are its headers'
/// (`ssefold_retry_hints_from_headers`). A transient status (408, 409, 429,
/// 500, 502, 503, 504, 529) is retried under the policy (`RECONNECT` after
/// its `Retry-After`, capped); another, or `x-should-retry: false`, ends the
/// turn (failure `HTTP`; the body is the host's, for its error).
///
/// Errors: `INVALID_ARGUMENT` (`hints->should_retry` not 0, 1 or 2).
///
/// # Safety
/// `turn` must be NULL or live; `hints` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_http_status(
    turn: *mut ssefold_agent_turn,
    status: u16,
    hints: *const ssefold_retry_hints,
    now_ms: u64,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: NULL or readable by contract.
        let hints = unsafe { hints.as_ref() }.copied().unwrap_or_default();
        let hints = match super::reconnect::http_end_from_c(status, &hints)? {
            crate::reconnect::StreamEnd::HttpStatus { retry_after_ms, should_retry, .. } => {
                RetryHints { retry_after_ms, should_retry }
            }
            _ => RetryHints::default(),
        };
        let (turn, sink) = s.split();
        turn.http_status(status, hints, now_ms, sink);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The host approves the call waiting for `approval_id` (its
/// `TOOL_APPROVAL_REQUESTED` event): the scheduling rules now apply to it.
///
/// Errors: `NULL_PARAMETER` (absent `approval_id`),
/// `TOOL_NOT_AWAITING_APPROVAL`; nothing changes.
///
/// # Safety
/// `turn` must be NULL or live; `approval_id` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_approve(
    turn: *mut ssefold_agent_turn,
    approval_id: ssefold_str,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: view readable by contract.
        let id = unsafe { required(approval_id, "approval_id")? };
        let (turn, sink) = s.split();
        turn.approve(id, sink).map_err(turn_error)?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The host denies the call waiting for `approval_id`: its error result is
/// `Denied by the user` (`: REASON` for a non-empty `reason`).
///
/// Errors: as `ssefold_agent_turn_approve`.
///
/// # Safety
/// `turn` must be NULL or live; each view NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_deny(
    turn: *mut ssefold_agent_turn,
    approval_id: ssefold_str,
    reason: ssefold_str,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: views readable by contract.
        let (id, reason) = unsafe { (required(approval_id, "approval_id")?, reason.to_str_or_empty()?) };
        let (turn, sink) = s.split();
        turn.deny(id, reason, sink).map_err(turn_error)?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The host cancels the running call `call_id` (after a
/// `TOOL_RUNNING_AFTER_STOP` event, say): its result is `Cancelled by the
/// host` now; its late result is dropped. A call not running is left as it
/// is.
///
/// Errors: `NULL_PARAMETER`, `TOOL_UNKNOWN_CALL_ID`.
///
/// # Safety
/// `turn` must be NULL or live; `call_id` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_cancel_tool(
    turn: *mut ssefold_agent_turn,
    call_id: ssefold_str,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: view readable by contract.
        let id = unsafe { required(call_id, "call_id")? };
        let (turn, sink) = s.split();
        turn.cancel_tool(id, sink).map_err(turn_error)?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The user aborted (`reason`, absent or empty: `Aborted`): the stream ends
/// (a `TURN_END` with stop reason `aborted`), running calls get
/// `CANCEL_TOOL`, every call without a result gets `Aborted: REASON`. Does
/// nothing once the turn is over.
///
/// # Safety
/// `turn` must be NULL or live; `reason` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_abort(
    turn: *mut ssefold_agent_turn,
    reason: ssefold_str,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        // SAFETY: view readable by contract.
        let reason = unsafe { reason.to_str_or_empty()? };
        let (turn, sink) = s.split();
        turn.abort(reason, sink);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The next thing to do, in order: `*has_action` is false when there is
/// none (then `*action` is not written). The action's views are owned by
/// the turn until its next call. Drain the actions after every input.
///
/// # Safety
/// `turn` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_poll_action(
    turn: *mut ssefold_agent_turn,
    action: *mut ssefold_agent_turn_action,
    has_action: *mut bool,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        check_not_null!(action, has_action);
        s.action = s.turn.poll_action();
        if let Some(a) = &s.action {
            // SAFETY: non-NULL (checked) and writable by contract.
            unsafe { handle::write_out(action, action_view(a)) };
        }
        // SAFETY: as above.
        unsafe { handle::write_out(has_action, s.action.is_some()) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// Whether the turn is over: the stream ended (or failed, or was aborted)
/// and every call has its result. The outcome is then final.
///
/// # Safety
/// `turn` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_is_finished(
    turn: *const ssefold_agent_turn,
    out: *mut bool,
) -> ssefold_result {
    let body = |s: &AgentTurnState| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, s.turn.is_finished()) };
        Ok(())
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_ref(turn, body) }
}

/// Whether the stream is over (the turn may still wait for tools): bytes
/// fed now are ignored, so the host may stop reading the body.
///
/// # Safety
/// `turn` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_is_stream_ended(
    turn: *const ssefold_agent_turn,
    out: *mut bool,
) -> ssefold_result {
    let body = |s: &AgentTurnState| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, s.turn.is_stream_ended()) };
        Ok(())
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_ref(turn, body) }
}

/// Why the turn ended with an error, typed (`kind` `NONE`: it did not, or
/// not yet). The message view is owned by the turn until its next call.
///
/// # Safety
/// `turn` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_failure(
    turn: *mut ssefold_agent_turn,
    out: *mut ssefold_turn_failure,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        check_not_null!(out);
        use ssefold_turn_failure_kind as K;
        let mut v = ssefold_turn_failure {
            kind: K::None,
            status: ssefold_result::Ok,
            message: ssefold_str::ABSENT,
            retryable: false,
            stall: ssefold_stall_kind::Idle,
            after_ms: 0,
            http_status: 0,
        };
        if let Some(f) = s.turn.failure() {
            (v.kind, v.status) = match f {
                TurnFailure::Stream(e) => (K::Stream, super::stream::failure(e).code),
                TurnFailure::Transport(_) => (K::Transport, ssefold_result::Ok),
                TurnFailure::IdleTimeout { stall, after_ms } => {
                    v.stall = stall_c(*stall);
                    v.after_ms = *after_ms;
                    (K::IdleTimeout, ssefold_result::Ok)
                }
                TurnFailure::Http { status, .. } => {
                    v.http_status = *status;
                    (K::Http, ssefold_result::Ok)
                }
                TurnFailure::TooManyCalls { .. } => (K::TooManyCalls, ssefold_result::ToolTooManyCalls),
            };
            v.retryable = f.is_retryable();
            s.text = f.message();
            v.message = ssefold_str::new(&s.text);
        }
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, v) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The turn's outcome so far (final once `ssefold_agent_turn_is_finished`)
/// as one compact JSON document, owned by the turn until its next call:
/// `{"provider", "message", "stop_reason", "aborted", "failure": {"kind",
/// "message", "retryable", …} | null, "calls": [{"part", "id",
/// "id_synthesized", "name", "provider_type", "input_format",
/// "provider_executed", "outcome", "arguments"}…], "results": [{"call_id",
/// "id_synthesized", "name", "output", "is_error", "kind"}…], "next":
/// {"assistant", "tool_results", "append"} | null}`: `results` holds one
/// result per call the host answers (every call but the provider-run ones),
/// in call order; `next` is what to append to the conversation to continue
/// (the assistant turn, then the results, in the provider's request shape);
/// then `"gave_up"`, `"output_started"` and `"timings"` (see the Rust
/// `agent::json` module docs for every member).
///
/// # Safety
/// `turn` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_outcome_json(
    turn: *mut ssefold_agent_turn,
    out: *mut ssefold_str,
) -> ssefold_result {
    let body = |s: &mut AgentTurnState| {
        check_not_null!(out);
        let outcome = s.turn.outcome().to_json();
        super::slice::write_json_text(&mut s.text, super::slice::JsonSource::Value(&outcome));
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, ssefold_str::new(&s.text)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `turn` is NULL or a live handle (contract).
    unsafe { handle::with_mut(turn, body) }
}

/// The message of the turn's last call (empty after success), as a
/// NUL-terminated view owned by the turn until its next call.
///
/// # Safety
/// `turn` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_agent_turn_last_error(
    turn: *const ssefold_agent_turn,
    out: *mut ssefold_str,
) -> ssefold_result {
    // SAFETY: forwarded contract.
    unsafe { super::write_last_error(turn, out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAT: &str = concat!(
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":",
        "{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":",
        "{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n",
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},",
        "\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );

    #[derive(Default)]
    struct Log(Vec<String>);

    unsafe extern "C" fn record(
        user_data: *mut c_void,
        stream_event: *const ssefold_stream_event,
        tool_event: *const ssefold_tool_event,
    ) {
        // SAFETY: `user_data` is the Log registered below; the events are valid during the call.
        let (log, s, t) = unsafe { (&mut *user_data.cast::<Log>(), stream_event.as_ref(), tool_event.as_ref()) };
        assert!(s.is_some() != t.is_some(), "exactly one event");
        // SAFETY: the views are valid during the call.
        let text = |v: ssefold_str| unsafe { v.to_option() }.unwrap().unwrap_or("").to_owned();
        log.0.push(match (s, t) {
            (Some(s), _) if s.tool_call.present => format!("{} {}", text(s.name), text(s.tool_call.id)),
            (Some(s), _) => text(s.name),
            (_, Some(t)) => format!("{} {}", text(t.name), text(t.call_id)),
            _ => unreachable!(),
        });
    }

    fn s(text: &str) -> ssefold_str {
        ssefold_str::new(text)
    }

    #[test]
    fn a_turn_through_the_c_abi_starts_answers_and_continues() {
        let mut log = Log::default();
        let mut p = core::ptr::null_mut();
        // SAFETY: `p` is live from `new` until `free`; every out-pointer is a local.
        unsafe {
            let mut c = core::mem::zeroed::<ssefold_agent_turn_config>();
            assert_eq!(ssefold_agent_turn_config_default(&mut c), ssefold_result::Ok);
            c.provider = 99;
            assert_eq!(ssefold_agent_turn_new(&c, &mut p), ssefold_result::InvalidArgument);
            c.provider = 2;
            assert_eq!(ssefold_agent_turn_new(&c, &mut p), ssefold_result::Ok);
            let ud = (&mut log as *mut Log).cast::<c_void>();
            assert_eq!(ssefold_agent_turn_set_callback(p, Some(record), ud, false), ssefold_result::Ok);
            assert_eq!(ssefold_agent_turn_add_tool(p, s("add"), ssefold_tool_options::default()), ssefold_result::Ok);
            assert_eq!(ssefold_agent_turn_connected(p, 0), ssefold_result::Ok);
            assert_eq!(ssefold_agent_turn_feed(p, CHAT.as_ptr(), CHAT.len(), 1), ssefold_result::Ok);
            let (mut a, mut has) = (core::mem::zeroed::<ssefold_agent_turn_action>(), false);
            assert_eq!(ssefold_agent_turn_poll_action(p, &mut a, &mut has), ssefold_result::Ok);
            assert!(has);
            assert_eq!(a.kind, ssefold_agent_turn_action_kind::StartTool);
            assert_eq!(a.arguments.to_option().unwrap(), Some(r#"{"a":1}"#));
            assert_eq!(ssefold_agent_turn_poll_action(p, &mut a, &mut has), ssefold_result::Ok);
            assert!(!has);
            let mut done = true;
            assert_eq!(ssefold_agent_turn_is_finished(p, &mut done), ssefold_result::Ok);
            assert!(!done);
            assert_eq!(ssefold_agent_turn_tool_result(p, s("nope"), s("x"), false), ssefold_result::ToolUnknownCallId);
            let mut err = ssefold_str::ABSENT;
            assert_eq!(ssefold_agent_turn_last_error(p, &mut err), ssefold_result::Ok);
            assert!(err.to_option().unwrap().unwrap().contains("nope"));
            assert_eq!(ssefold_agent_turn_tool_result(p, s("call_1"), s("2"), false), ssefold_result::Ok);
            assert_eq!(ssefold_agent_turn_is_finished(p, &mut done), ssefold_result::Ok);
            assert!(done);
            let mut f = core::mem::zeroed::<ssefold_turn_failure>();
            assert_eq!(ssefold_agent_turn_failure(p, &mut f), ssefold_result::Ok);
            assert_eq!(f.kind, ssefold_turn_failure_kind::None);
            let mut out = ssefold_str::ABSENT;
            assert_eq!(ssefold_agent_turn_outcome_json(p, &mut out), ssefold_result::Ok);
            let doc: serde_json::Value = serde_json::from_str(out.to_option().unwrap().unwrap()).unwrap();
            assert_eq!(doc["results"][0]["output"], "2");
            assert_eq!(doc["next"]["append"][1]["tool_call_id"], "call_1");
            ssefold_agent_turn_free(p);
            ssefold_agent_turn_free(core::ptr::null_mut());
        }
        let started = log.0.iter().position(|l| l == "tool_execution_started call_1").unwrap();
        let ended = log.0.iter().position(|l| l == "part_end call_1").unwrap();
        // Started once the chunk that completed it was folded.
        assert!(started > ended, "{:?}", log.0);
        assert_eq!(log.0[0], "message_start");
        assert!(log.0.contains(&"part_start call_1".to_owned()), "{:?}", log.0);
        assert_eq!(log.0.last().unwrap(), "tool_execution_finished call_1");
    }
}
