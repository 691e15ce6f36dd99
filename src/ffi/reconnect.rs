//! The reconnection policy: a plain policy struct, pure delay functions,
//! and the `ssefold_reconnector` state machine handle.

use core::ffi::c_char;

use super::handle::{self, check_not_null, Castable, Failure, Handle};
use super::result::ssefold_result;
use super::slice::ssefold_str;
use crate::reconnect::{
    is_retryable_error_type, ConnectionState, Decision, GiveUpReason, ReconnectPolicy, Reconnector, Replay,
    ResumeCursor, RetryHints, StallKind, StreamEnd, DEFAULT_MAX_RETRY_AFTER_MS, DEFAULT_MAX_SERVER_RETRY_MS,
};

/// The knobs of the reconnection policy (a plain struct: fill it from
/// `ssefold_reconnect_policy_default`, change fields, pass it by pointer).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_reconnect_policy {
    /// Delay before the first retry, in milliseconds (default 1000).
    pub initial_delay_ms: u64,
    /// Factor applied for each further retry (default 1.5; finite, >= 1).
    pub growth: f64,
    /// Upper bound of the computed delay, in milliseconds (default 30000).
    pub max_delay_ms: u64,
    /// Reconnections in a row before giving up (default 2).
    pub max_retries: u32,
    /// Jitter as a fraction of a computed delay, in [0, 1] (default 0.2;
    /// 0: none). Seed it per process with `ssefold_reconnector_seed_jitter`.
    pub jitter: f64,
    /// Idle timeout in milliseconds; 0 means none (the default).
    pub idle_timeout_ms: u64,
    /// Upper bound of a server's `retry:` value, in milliseconds (default
    /// 600000, 10 minutes; 0 also means the default); the server's value
    /// still takes precedence over the backoff up to it.
    pub max_server_retry_ms: u64,
    /// Upper bound of an HTTP `Retry-After` wait, in milliseconds (default
    /// 60000; 0 also means the default).
    pub max_retry_after_ms: u64,
    /// Send the request again after output was delivered when the answer
    /// cannot be resumed (default false: it ends incomplete).
    pub restart_after_output: bool,
    /// Stall: no content for this long after a connection opened, before
    /// the answer's first content, in milliseconds (default 300000; 0:
    /// none).
    pub first_content_timeout_ms: u64,
    /// Stall: no content for this long between contents, in milliseconds
    /// (default 120000; 0: none).
    pub content_timeout_ms: u64,
}

/// What a refused response's headers say about retrying it
/// (`ssefold_retry_hints_from_headers`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ssefold_retry_hints {
    /// Whether `retry_after_ms` was sent.
    pub has_retry_after: bool,
    /// `retry-after-ms`, or `Retry-After` (seconds or an HTTP date), in
    /// milliseconds.
    pub retry_after_ms: u64,
    /// `x-should-retry`: 0 not sent, 1 `true`, 2 `false`.
    pub should_retry: u32,
}

/// Connection state for the UI.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_connection_state {
    /// Not connected and not about to be.
    Disconnected = 0,
    /// The first request is on its way.
    Connecting = 1,
    /// Bytes are flowing.
    Connected = 2,
    /// Waiting to reconnect, or reconnecting.
    Reconnecting = 3,
}

/// How a connection ended (the `kind` of [`ssefold_stream_end`]).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_stream_end_kind {
    /// The dialect's terminal event arrived.
    Completed = 0,
    /// The body ended without the terminal event.
    EndedEarly = 1,
    /// The transport failed (`message` says how).
    TransportError = 2,
    /// No bytes for the idle timeout.
    IdleTimeout = 3,
    /// The provider sent an error event (`error_type`, `message`).
    ProviderError = 4,
    /// The user aborted.
    Aborted = 5,
    /// The response was refused before its body (`status`, `hints`).
    HttpStatus = 6,
}

/// How a connection ended, as the host saw it (input of
/// `ssefold_reconnector_on_end`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_stream_end {
    /// A `ssefold_stream_end_kind` value.
    pub kind: u32,
    /// `PROVIDER_ERROR`: the provider's error type (absent = empty).
    pub error_type: ssefold_str,
    /// `TRANSPORT_ERROR` / `PROVIDER_ERROR`: the message (absent = empty).
    pub message: ssefold_str,
    /// `HTTP_STATUS`: the HTTP status (0 otherwise).
    pub status: u16,
    /// `HTTP_STATUS`: what its headers say about retrying.
    pub hints: ssefold_retry_hints,
}

/// What a reconnection sends (wire names `retry`, `resume`, `restart`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_replay {
    /// No output was delivered: the same request again.
    Retry = 0,
    /// Output was delivered: the request with the resume cursor.
    Resume = 1,
    /// Output was delivered and cannot be resumed; the policy opted in to
    /// sending the request again (a second answer, `TURN_RESET`).
    Restart = 2,
}

/// Why a reconnector gave up (wire names `retries_exhausted`,
/// `not_resumable`, `not_retryable`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_give_up_reason {
    /// `max_retries` reconnections were used.
    RetriesExhausted = 0,
    /// Output was delivered and the answer cannot be resumed.
    NotResumable = 1,
    /// The HTTP status is not one to retry (or `x-should-retry: false`).
    NotRetryable = 2,
}

/// Which timeout found a connection idle (wire names `idle`,
/// `first_content`, `content`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_stall_kind {
    /// No bytes for `idle_timeout_ms`.
    Idle = 0,
    /// No content for `first_content_timeout_ms` before the first.
    FirstContent = 1,
    /// No content for `content_timeout_ms` between contents.
    Content = 2,
}

pub(crate) fn replay_c(r: Replay) -> ssefold_replay {
    match r {
        Replay::Retry => ssefold_replay::Retry,
        Replay::Resume => ssefold_replay::Resume,
        Replay::Restart => ssefold_replay::Restart,
    }
}

pub(crate) fn stall_c(k: StallKind) -> ssefold_stall_kind {
    match k {
        StallKind::Idle => ssefold_stall_kind::Idle,
        StallKind::FirstContent => ssefold_stall_kind::FirstContent,
        StallKind::Content => ssefold_stall_kind::Content,
    }
}

fn hints_c(h: RetryHints) -> ssefold_retry_hints {
    ssefold_retry_hints {
        has_retry_after: h.retry_after_ms.is_some(),
        retry_after_ms: h.retry_after_ms.unwrap_or(0),
        should_retry: match h.should_retry {
            None => 0,
            Some(true) => 1,
            Some(false) => 2,
        },
    }
}

/// The core end of a C `HTTP_STATUS` end.
pub(crate) fn http_end_from_c(status: u16, h: &ssefold_retry_hints) -> Result<StreamEnd, Failure> {
    let should_retry = match h.should_retry {
        0 => None,
        1 => Some(true),
        2 => Some(false),
        n => {
            return Err(Failure::new(
                ssefold_result::InvalidArgument,
                format!("should_retry must be 0, 1 or 2, not {n}"),
            ))
        }
    };
    Ok(StreamEnd::HttpStatus { status, retry_after_ms: h.has_retry_after.then_some(h.retry_after_ms), should_retry })
}

/// What to send when reconnecting (the `kind` of [`ssefold_resume_cursor`]).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_cursor_kind {
    /// Nothing to resume from: the request starts over.
    None = 0,
    /// Send `Last-Event-ID: last_event_id`.
    LastEventId = 1,
    /// OpenAI Responses: resume with `starting_after`.
    StartingAfter = 2,
}

/// A resume cursor. `last_event_id` is a view owned by the reconnector
/// until its next call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_resume_cursor {
    /// Which cursor.
    pub kind: ssefold_cursor_kind,
    /// `LAST_EVENT_ID`: the id (absent otherwise).
    pub last_event_id: ssefold_str,
    /// `STARTING_AFTER`: the sequence number (0 otherwise).
    pub starting_after: u64,
}

/// What the host should do next (the `kind` of [`ssefold_reconnect_decision`]).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_decision_kind {
    /// The answer is complete.
    Done = 0,
    /// Reconnect after `delay_ms`, sending `cursor`.
    Reconnect = 1,
    /// Retries are exhausted: report `last_end` (and `message`).
    GiveUp = 2,
    /// The provider reported an error: do not reconnect.
    Fail = 3,
    /// The user aborted.
    Stop = 4,
}

/// A decision of `ssefold_reconnector_on_end`. Views are owned by the
/// reconnector until its next call. Fields that do not apply to `kind` are
/// zero / absent.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_reconnect_decision {
    /// What to do.
    pub kind: ssefold_decision_kind,
    /// `RECONNECT`: how long to wait first, in milliseconds.
    pub delay_ms: u64,
    /// `RECONNECT`: which reconnection this is (1 for the first).
    pub attempt: u32,
    /// `RECONNECT`: what to send so the server can resume.
    pub cursor: ssefold_resume_cursor,
    /// `GIVE_UP`: how the last connection ended.
    pub last_end: ssefold_stream_end_kind,
    /// `FAIL` (and `GIVE_UP` after a provider error): the error type.
    pub error_type: ssefold_str,
    /// `FAIL`: the provider's message; `GIVE_UP`: the transport error text.
    pub message: ssefold_str,
    /// `FAIL`: whether the error type is transient (the whole request may be
    /// sent again).
    pub retryable: bool,
    /// `RECONNECT`: what the request is (a retry, a resume, a restart).
    pub replay: ssefold_replay,
    /// `GIVE_UP`: why no reconnection follows.
    pub give_up_reason: ssefold_give_up_reason,
    /// `GIVE_UP` after `HTTP_STATUS`: the status (0 otherwise).
    pub status: u16,
}

/// A reconnection state machine for one logical stream (opaque).
pub struct ssefold_reconnector {
    _private: [u8; 0],
}

/// The Rust side of [`ssefold_reconnector`]: the machine plus the values
/// that back the views it hands out.
pub(crate) struct ReconnectorState {
    machine: Reconnector,
    decision: Option<Decision>,
    cursor: ResumeCursor,
}

impl Castable for ssefold_reconnector {
    type Inner = Handle<ReconnectorState>;
}

pub(super) fn policy_from_c(p: &ssefold_reconnect_policy) -> Result<ReconnectPolicy, Failure> {
    if !p.growth.is_finite() || p.growth < 1.0 {
        return Err(Failure::new(ssefold_result::InvalidArgument, "growth must be finite and >= 1"));
    }
    if !p.jitter.is_finite() || !(0.0..=1.0).contains(&p.jitter) {
        return Err(Failure::new(ssefold_result::InvalidArgument, "jitter must be in [0, 1]"));
    }
    Ok(ReconnectPolicy {
        initial_delay_ms: p.initial_delay_ms,
        growth: p.growth,
        max_delay_ms: p.max_delay_ms,
        max_retries: p.max_retries,
        jitter: p.jitter,
        idle_timeout_ms: (p.idle_timeout_ms != 0).then_some(p.idle_timeout_ms),
        max_server_retry_ms: match p.max_server_retry_ms {
            0 => DEFAULT_MAX_SERVER_RETRY_MS,
            ms => ms,
        },
        max_retry_after_ms: match p.max_retry_after_ms {
            0 => DEFAULT_MAX_RETRY_AFTER_MS,
            ms => ms,
        },
        restart_after_output: p.restart_after_output,
        first_content_timeout_ms: (p.first_content_timeout_ms != 0).then_some(p.first_content_timeout_ms),
        content_timeout_ms: (p.content_timeout_ms != 0).then_some(p.content_timeout_ms),
    })
}

pub(crate) fn cursor_view(c: &ResumeCursor) -> ssefold_resume_cursor {
    match c {
        ResumeCursor::None => ssefold_resume_cursor {
            kind: ssefold_cursor_kind::None,
            last_event_id: ssefold_str::ABSENT,
            starting_after: 0,
        },
        ResumeCursor::LastEventId(id) => ssefold_resume_cursor {
            kind: ssefold_cursor_kind::LastEventId,
            last_event_id: ssefold_str::new(id),
            starting_after: 0,
        },
        ResumeCursor::StartingAfter(n) => ssefold_resume_cursor {
            kind: ssefold_cursor_kind::StartingAfter,
            last_event_id: ssefold_str::ABSENT,
            starting_after: *n,
        },
    }
}

fn end_kind(e: &StreamEnd) -> ssefold_stream_end_kind {
    match e {
        StreamEnd::Completed => ssefold_stream_end_kind::Completed,
        StreamEnd::EndedEarly => ssefold_stream_end_kind::EndedEarly,
        StreamEnd::TransportError(_) => ssefold_stream_end_kind::TransportError,
        StreamEnd::IdleTimeout => ssefold_stream_end_kind::IdleTimeout,
        StreamEnd::ProviderError { .. } => ssefold_stream_end_kind::ProviderError,
        StreamEnd::Aborted => ssefold_stream_end_kind::Aborted,
        StreamEnd::HttpStatus { .. } => ssefold_stream_end_kind::HttpStatus,
    }
}

fn decision_view(d: &Decision) -> ssefold_reconnect_decision {
    let mut v = ssefold_reconnect_decision {
        kind: ssefold_decision_kind::Done,
        delay_ms: 0,
        attempt: 0,
        cursor: cursor_view(&ResumeCursor::None),
        last_end: ssefold_stream_end_kind::Completed,
        error_type: ssefold_str::ABSENT,
        message: ssefold_str::ABSENT,
        retryable: false,
        replay: ssefold_replay::Retry,
        give_up_reason: ssefold_give_up_reason::RetriesExhausted,
        status: 0,
    };
    match d {
        Decision::Done => {}
        Decision::Stop => v.kind = ssefold_decision_kind::Stop,
        Decision::Reconnect { delay_ms, attempt, cursor, replay } => {
            v.kind = ssefold_decision_kind::Reconnect;
            v.delay_ms = *delay_ms;
            v.attempt = *attempt;
            v.cursor = cursor_view(cursor);
            v.replay = replay_c(*replay);
        }
        Decision::GiveUp { last, reason } => {
            v.kind = ssefold_decision_kind::GiveUp;
            v.last_end = end_kind(last);
            v.give_up_reason = match reason {
                GiveUpReason::RetriesExhausted => ssefold_give_up_reason::RetriesExhausted,
                GiveUpReason::NotResumable => ssefold_give_up_reason::NotResumable,
                GiveUpReason::NotRetryable => ssefold_give_up_reason::NotRetryable,
            };
            match last {
                StreamEnd::HttpStatus { status, .. } => v.status = *status,
                StreamEnd::TransportError(text) => v.message = ssefold_str::new(text),
                StreamEnd::ProviderError { error_type, message } => {
                    v.error_type = ssefold_str::new(error_type);
                    v.message = ssefold_str::new(message);
                }
                _ => {}
            }
        }
        Decision::Fail { error_type, message, retryable } => {
            v.kind = ssefold_decision_kind::Fail;
            v.error_type = ssefold_str::new(error_type);
            v.message = ssefold_str::new(message);
            v.retryable = *retryable;
        }
    }
    v
}

/// Writes the default policy (1000 ms × 1.5^n capped at 30000 ms, ±20 %
/// jitter, 2 retries, `Retry-After` capped at 60 s, no restart after
/// output, no byte idle timeout, stalls after 300 s without a first content
/// or 120 s between contents) to `*out`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnect_policy_default(out: *mut ssefold_reconnect_policy) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, default_policy()) };
        ssefold_result::Ok
    }
}

/// The default policy, as the C struct.
pub(super) fn default_policy() -> ssefold_reconnect_policy {
    let d = ReconnectPolicy::default();
    ssefold_reconnect_policy {
        initial_delay_ms: d.initial_delay_ms,
        growth: d.growth,
        max_delay_ms: d.max_delay_ms,
        max_retries: d.max_retries,
        jitter: d.jitter,
        idle_timeout_ms: d.idle_timeout_ms.unwrap_or(0),
        max_server_retry_ms: d.max_server_retry_ms,
        max_retry_after_ms: d.max_retry_after_ms,
        restart_after_output: d.restart_after_output,
        first_content_timeout_ms: d.first_content_timeout_ms.unwrap_or(0),
        content_timeout_ms: d.content_timeout_ms.unwrap_or(0),
    }
}

/// The delay before retry number `attempt` (0 for the first retry):
/// `*server_retry_ms` when non-NULL (the server's `retry:`), else the capped
/// exponential backoff. With `random_unit` in [0, 1) from the host (pass
/// 0.5 for none), the delay is spread by the policy's jitter (a server
/// value is never jittered).
///
/// Errors: `NULL_PARAMETER` (`policy` or `out_ms`), `INVALID_ARGUMENT` (a
/// growth or jitter out of range, a non-finite `random_unit`).
///
/// # Safety
/// `policy` and `server_retry_ms` must be NULL or readable; `out_ms` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnect_next_delay_ms(
    policy: *const ssefold_reconnect_policy,
    attempt: u32,
    server_retry_ms: *const u64,
    random_unit: f64,
    out_ms: *mut u64,
) -> ssefold_result {
    ffi_panic_boundary! {
        if policy.is_null() || out_ms.is_null() {
            return ssefold_result::NullParameter;
        }
        if !random_unit.is_finite() {
            return ssefold_result::InvalidArgument;
        }
        // SAFETY: non-NULL and readable by contract.
        let policy = match policy_from_c(unsafe { &*policy }) {
            Ok(p) => p,
            Err(f) => return f.code,
        };
        // SAFETY: NULL or readable by contract.
        let server = unsafe { server_retry_ms.as_ref() }.copied();
        let ms = policy.jittered_delay_ms(attempt, server, random_unit);
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out_ms, ms) };
        ssefold_result::Ok
    }
}

/// Whether a provider error type is transient (sending the same request
/// again may succeed): `overloaded_error`, `api_error`, `rate_limit_error`,
/// `timeout_error`, `server_error`, `rate_limit_exceeded`, `internal_error`.
///
/// # Safety
/// `error_type` must be NULL or `len` readable bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnect_is_retryable_error_type(
    error_type: ssefold_str,
    out: *mut bool,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: view readable by contract.
        let t = match unsafe { error_type.to_str_or_empty() } {
            Ok(t) => t,
            Err(code) => return code,
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, is_retryable_error_type(t)) };
        ssefold_result::Ok
    }
}

/// The binding-wide name of a connection state (`"disconnected"`,
/// `"connecting"`, `"connected"`, `"reconnecting"`; `"unknown"` for any
/// other number). A static string; never fails.
#[no_mangle]
pub extern "C" fn ssefold_connection_state_name(state: u32) -> *const c_char {
    ffi_panic_boundary! {
        let s: &'static core::ffi::CStr = match state {
            0 => c"disconnected",
            1 => c"connecting",
            2 => c"connected",
            3 => c"reconnecting",
            _ => c"unknown",
        };
        s.as_ptr()
    }
}

/// Creates a reconnector (state `CONNECTING`) with `policy` (NULL: the
/// default) and writes it to `*out`.
///
/// # Safety
/// `policy` must be NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_new(
    policy: *const ssefold_reconnect_policy,
    out: *mut *mut ssefold_reconnector,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: NULL or readable by contract.
        let policy = match unsafe { policy.as_ref() } {
            None => ReconnectPolicy::default(),
            Some(p) => match policy_from_c(p) {
                Ok(p) => p,
                Err(f) => return f.code,
            },
        };
        let state = ReconnectorState { machine: Reconnector::new(policy), decision: None, cursor: ResumeCursor::None };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(state)) };
        ssefold_result::Ok
    }
}

/// Frees a reconnector. NULL is a no-op.
///
/// # Safety
/// `reconnector` must be NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_free(reconnector: *mut ssefold_reconnector) {
    // SAFETY: forwarded contract.
    ffi_panic_boundary! { unsafe { handle::free(reconnector) } }
}

/// The response headers arrived at `now_ms` (host clock): bytes may flow.
///
/// # Safety
/// `reconnector` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_on_connected(
    reconnector: *mut ssefold_reconnector,
    now_ms: u64,
) -> ssefold_result {
    let body = |r: &mut ReconnectorState| {
        r.machine.on_connected(now_ms);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_mut(reconnector, body) }
}

/// Bytes arrived at `now_ms` (comments and pings included).
///
/// # Safety
/// `reconnector` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_on_activity(
    reconnector: *mut ssefold_reconnector,
    now_ms: u64,
) -> ssefold_result {
    let body = |r: &mut ReconnectorState| {
        r.machine.on_activity(now_ms);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_mut(reconnector, body) }
}

/// An event was dispatched: `id` is the SSE last event ID in force (absent
/// when none), `sequence_number` the Responses API's and `retry_ms` the
/// stream's reconnection time, each NULL when unknown. Resets the retry
/// count.
///
/// # Safety
/// `reconnector` must be NULL or live; `id` NULL or `len` readable bytes;
/// `sequence_number` and `retry_ms` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_on_event(
    reconnector: *mut ssefold_reconnector,
    id: ssefold_str,
    sequence_number: *const u64,
    retry_ms: *const u64,
) -> ssefold_result {
    let body = |r: &mut ReconnectorState| {
        // SAFETY: view readable by contract.
        let id = unsafe { id.to_option()? };
        // SAFETY: NULL or readable by contract.
        let (seq, retry) = unsafe { (sequence_number.as_ref().copied(), retry_ms.as_ref().copied()) };
        r.machine.on_event(id, seq, retry);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_mut(reconnector, body) }
}

/// A connection ended: decides what comes next and writes the decision
/// (views owned by the reconnector until its next call) to `*out`. After
/// `DONE`, `FAIL`, `GIVE_UP` or `STOP` the reconnector is finished and keeps
/// answering the same way.
///
/// Errors: `NULL_PARAMETER`, `INVALID_ARGUMENT` (unknown `end->kind`),
/// `INVALID_UTF8_ARGUMENT`.
///
/// # Safety
/// `reconnector` must be NULL or live; `end` NULL or readable (with its views
/// readable); `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_on_end(
    reconnector: *mut ssefold_reconnector,
    end: *const ssefold_stream_end,
    out: *mut ssefold_reconnect_decision,
) -> ssefold_result {
    let body = |r: &mut ReconnectorState| {
        check_not_null!(end, out);
        // SAFETY: non-NULL (checked) and readable by contract.
        let end = unsafe { &*end };
        // SAFETY: views readable by contract.
        let (error_type, message) = unsafe { (end.error_type.to_str_or_empty()?, end.message.to_str_or_empty()?) };
        let end = match end.kind {
            0 => StreamEnd::Completed,
            1 => StreamEnd::EndedEarly,
            2 => StreamEnd::TransportError(message.to_owned()),
            3 => StreamEnd::IdleTimeout,
            4 => StreamEnd::ProviderError { error_type: error_type.to_owned(), message: message.to_owned() },
            5 => StreamEnd::Aborted,
            6 => http_end_from_c(end.status, &end.hints)?,
            k => return Err(Failure::new(ssefold_result::InvalidArgument, format!("unknown stream end kind {k}"))),
        };
        let decision = r.decision.insert(r.machine.on_end(end));
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, decision_view(decision)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_mut(reconnector, body) }
}

/// Content reached the host at `now_ms` (text, arguments, media, a part
/// starting or ending, usage, the stop reason: `ssefold_stream_event.is_content`;
/// not pings, comments or keep-alive events): the content timeouts restart
/// and, from now on, the answer has output (it is resumed, never sent again
/// unless the policy's `restart_after_output`).
///
/// # Safety
/// `reconnector` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_on_content(
    reconnector: *mut ssefold_reconnector,
    now_ms: u64,
) -> ssefold_result {
    let body = |r: &mut ReconnectorState| {
        r.machine.on_content(now_ms);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_mut(reconnector, body) }
}

/// Seeds the jitter with a random number from the host.
///
/// # Safety
/// `reconnector` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_seed_jitter(
    reconnector: *mut ssefold_reconnector,
    seed: u64,
) -> ssefold_result {
    let body = |r: &mut ReconnectorState| {
        r.machine.seed_jitter(seed);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_mut(reconnector, body) }
}

/// Which timeout has passed at `now_ms`: writes `true` to `*stalled` and
/// the timeout to `*kind` when one has, `false` otherwise. Whether output
/// was delivered is written to `*output_started` (NULL: not asked).
///
/// # Safety
/// `reconnector` must be NULL or live; `stalled`, `kind` NULL or writable;
/// `output_started` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_stall(
    reconnector: *const ssefold_reconnector,
    now_ms: u64,
    stalled: *mut bool,
    kind: *mut ssefold_stall_kind,
    output_started: *mut bool,
) -> ssefold_result {
    let body = |r: &ReconnectorState| -> Result<(), Failure> {
        check_not_null!(stalled, kind);
        let stall = r.machine.stall(now_ms);
        // SAFETY: non-NULL (checked) and writable by contract; `output_started` NULL or writable.
        unsafe {
            handle::write_out(stalled, stall.is_some());
            handle::write_out(kind, stall_c(stall.unwrap_or(StallKind::Idle)));
            if !output_started.is_null() {
                handle::write_out(output_started, r.machine.output_started());
            }
        }
        Ok(())
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_ref(reconnector, body) }
}

/// What `n` response headers (`names[i]`: `values[i]`) say about retrying a
/// refused response: `retry-after-ms`, `Retry-After` (seconds, or an HTTP
/// date counted from `now_unix_ms`, the host's wall clock), `x-should-retry`.
///
/// Errors: `NULL_PARAMETER` (`out`, or `names` / `values` with `n` > 0),
/// `INVALID_UTF8_ARGUMENT`.
///
/// # Safety
/// `names` and `values` must be NULL (with `n` 0) or `n` readable views;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_retry_hints_from_headers(
    names: *const ssefold_str,
    values: *const ssefold_str,
    n: usize,
    now_unix_ms: u64,
    out: *mut ssefold_retry_hints,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() || (n > 0 && (names.is_null() || values.is_null())) {
            return ssefold_result::NullParameter;
        }
        let mut pairs = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: `n` readable views by contract.
            let (name, value) = unsafe { (*names.add(i), *values.add(i)) };
            // SAFETY: each view readable by contract.
            match unsafe { (name.to_str_or_empty(), value.to_str_or_empty()) } {
                (Ok(a), Ok(b)) => pairs.push((a, b)),
                _ => return ssefold_result::InvalidUtf8Argument,
            }
        }
        let hints = RetryHints::from_headers(pairs, now_unix_ms);
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, hints_c(hints)) };
        ssefold_result::Ok
    }
}

/// Whether content reached the host on some connection of this answer
/// (`*output_started`), and whether sending the request again now would
/// neither bill nor show a second answer (`*replay_safe`: no output yet, or
/// a resume cursor to send). Either out-pointer may be NULL.
///
/// # Safety
/// `reconnector` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_output_started(
    reconnector: *const ssefold_reconnector,
    output_started: *mut bool,
    replay_safe: *mut bool,
) -> ssefold_result {
    let body = |r: &ReconnectorState| -> Result<(), Failure> {
        // SAFETY: each out-pointer NULL or writable by contract.
        unsafe {
            if !output_started.is_null() {
                handle::write_out(output_started, r.machine.output_started());
            }
            if !replay_safe.is_null() {
                handle::write_out(replay_safe, r.machine.replay_safe());
            }
        }
        Ok(())
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_ref(reconnector, body) }
}

/// The cursor to send on the next connection (its view owned by the
/// reconnector until its next call).
///
/// # Safety
/// `reconnector` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_cursor(
    reconnector: *mut ssefold_reconnector,
    out: *mut ssefold_resume_cursor,
) -> ssefold_result {
    let body = |r: &mut ReconnectorState| {
        check_not_null!(out);
        r.cursor = r.machine.cursor();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, cursor_view(&r.cursor)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_mut(reconnector, body) }
}

/// When the idle timeout of the current connection expires (host clock):
/// `*has_deadline` is false when no idle timeout is configured or no
/// connection is open (then `*deadline_ms` is 0).
///
/// # Safety
/// `reconnector` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_idle_deadline_ms(
    reconnector: *const ssefold_reconnector,
    has_deadline: *mut bool,
    deadline_ms: *mut u64,
) -> ssefold_result {
    let body = |r: &ReconnectorState| {
        check_not_null!(has_deadline, deadline_ms);
        let d = r.machine.idle_deadline_ms();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(has_deadline, d.is_some()) };
        // SAFETY: as above.
        unsafe { handle::write_out(deadline_ms, d.unwrap_or(0)) };
        Ok(())
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_ref(reconnector, body) }
}

/// Whether the idle deadline has passed at `now_ms` (then close the
/// connection and call `on_end` with `IDLE_TIMEOUT`).
///
/// # Safety
/// `reconnector` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_is_idle(
    reconnector: *const ssefold_reconnector,
    now_ms: u64,
    out: *mut bool,
) -> ssefold_result {
    let body = |r: &ReconnectorState| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, r.machine.is_idle(now_ms)) };
        Ok(())
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_ref(reconnector, body) }
}

/// The connection state (for the UI) and the number of reconnections in a
/// row decided so far.
///
/// # Safety
/// `reconnector` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_state(
    reconnector: *const ssefold_reconnector,
    state: *mut ssefold_connection_state,
    attempts: *mut u32,
) -> ssefold_result {
    let body = |r: &ReconnectorState| {
        check_not_null!(state, attempts);
        let s = match r.machine.state() {
            ConnectionState::Disconnected => ssefold_connection_state::Disconnected,
            ConnectionState::Connecting => ssefold_connection_state::Connecting,
            ConnectionState::Connected => ssefold_connection_state::Connected,
            ConnectionState::Reconnecting => ssefold_connection_state::Reconnecting,
        };
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(state, s) };
        // SAFETY: as above.
        unsafe { handle::write_out(attempts, r.machine.attempts()) };
        Ok(())
    };
    // SAFETY: `reconnector` is NULL or a live handle (contract).
    unsafe { handle::with_ref(reconnector, body) }
}

/// The message of the reconnector's last call (empty after success), as a
/// NUL-terminated view owned by the reconnector until its next call.
///
/// # Safety
/// `reconnector` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_reconnector_last_error(
    reconnector: *const ssefold_reconnector,
    out: *mut ssefold_str,
) -> ssefold_result {
    // SAFETY: forwarded contract.
    unsafe { super::write_last_error(reconnector, out) }
}
