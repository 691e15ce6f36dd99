//! The UI state model (`crate::ui::UiState`) attached to a stream.
//!
//! One design: `ssefold_stream_enable_ui` attaches a UI state to a stream;
//! from then on every event the stream delivers (feed, finish, abort) is
//! applied to it, stamped with the host clock last passed to
//! `ssefold_stream_set_time` (milliseconds, any monotonic origin; 0 until
//! set). The host reads a JSON snapshot with `ssefold_stream_ui_snapshot_json`
//! and reports what only it knows with `ssefold_stream_set_connection` and
//! `ssefold_stream_set_tool_progress`.

use super::handle::{self, check_not_null, Failure};
use super::reconnect::ssefold_connection_state;
use super::result::ssefold_result;
use super::slice::ssefold_str;
use super::stream::{ssefold_stream, StreamState};
use crate::reconnect::ConnectionState;
use crate::ui::UiState;

fn ui_of(s: &mut StreamState) -> Result<&mut UiState, Failure> {
    s.ui.as_mut()
        .ok_or_else(|| Failure::new(ssefold_result::BadState, "the UI state is not enabled (ssefold_stream_enable_ui)"))
}

/// Attaches a UI state model to the stream: every event delivered from now
/// on (by `feed`, `finish` and `abort`; a `TURN_RESET` clears it) is applied
/// to it, stamped with the host clock of `ssefold_stream_set_time`. Read it
/// with `ssefold_stream_ui_snapshot_json`; report what only the host knows
/// with `ssefold_stream_set_connection` and `ssefold_stream_set_tool_progress`.
/// Call it before the first feed. Enabling it again keeps the existing state.
/// The initial connection state is `CONNECTING`.
///
/// # Safety
/// `stream` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_enable_ui(stream: *mut ssefold_stream) -> ssefold_result {
    let body = |s: &mut StreamState| {
        let budget = s.stream.config().max_memory_bytes;
        s.ui.get_or_insert_with(|| UiState::with_media_budget(budget));
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// Sets the host clock (milliseconds) stamped on the UI updates of the
/// following calls (text segments' arrival times). Works with or without the
/// UI state enabled.
///
/// # Safety
/// `stream` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_set_time(stream: *mut ssefold_stream, now_ms: u64) -> ssefold_result {
    let body = |s: &mut StreamState| {
        s.now_ms = now_ms;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// The UI state as compact JSON text (parts with their text segments and
/// arrival times, tool calls and their readiness, tool progress, usage, stop
/// reason, connection state). The view is owned by the stream until its
/// next call.
///
/// Errors: `BAD_STATE` when the UI state is not enabled.
///
/// # Safety
/// `stream` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_ui_snapshot_json(
    stream: *mut ssefold_stream,
    out: *mut ssefold_str,
) -> ssefold_result {
    let body = |s: &mut StreamState| {
        check_not_null!(out);
        let snapshot = ui_of(s)?.to_json();
        s.message = snapshot.to_string();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, ssefold_str::new(&s.message)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// Sets the connection state shown by the UI state (the host owns the
/// connection; e.g. from `ssefold_reconnector_state`).
///
/// Errors: `INVALID_ARGUMENT` (unknown state), `BAD_STATE` (UI not enabled).
///
/// # Safety
/// `stream` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_set_connection(stream: *mut ssefold_stream, state: u32) -> ssefold_result {
    let body = |s: &mut StreamState| {
        let state = match state {
            x if x == ssefold_connection_state::Disconnected as u32 => ConnectionState::Disconnected,
            x if x == ssefold_connection_state::Connecting as u32 => ConnectionState::Connecting,
            x if x == ssefold_connection_state::Connected as u32 => ConnectionState::Connected,
            x if x == ssefold_connection_state::Reconnecting as u32 => ConnectionState::Reconnecting,
            x => return Err(Failure::new(ssefold_result::InvalidArgument, format!("unknown connection state {x}"))),
        };
        ui_of(s)?.set_connection(state);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// Sets the progress of a running tool (`id`: the tool call's id; `json`:
/// any JSON value, shown as is in the snapshot).
///
/// Errors: `NULL_PARAMETER` (absent `id` or `json`), `INVALID_UTF8_ARGUMENT`,
/// `JSON_INVALID` (`json` is not one JSON value), `BAD_STATE` (UI not enabled).
///
/// # Safety
/// `stream` must be NULL or live; `id` and `json` views readable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_set_tool_progress(
    stream: *mut ssefold_stream,
    id: ssefold_str,
    json: ssefold_str,
) -> ssefold_result {
    let body = |s: &mut StreamState| {
        // SAFETY: views readable by contract.
        let (id, json) = unsafe { (id.to_option()?, json.to_option()?) };
        let (Some(id), Some(json)) = (id, json) else {
            return Err(Failure::new(ssefold_result::NullParameter, "id and json are required"));
        };
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| Failure::new(ssefold_result::JsonInvalid, e.to_string()))?;
        ui_of(s)?.set_tool_progress(id, value);
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}
