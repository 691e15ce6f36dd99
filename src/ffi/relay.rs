//! `ssefold_relay`: normalized events (or provider bytes) in, the browser's
//! SSE bytes out (the AI SDK UI message stream, or the agent event catalog),
//! plus the events the host injects. Every call that writes bytes returns
//! them as a view owned by the relay until its next call.

use serde_json::Value;

use super::handle::{self, check_not_null, Castable, Failure, Handle};
use super::result::ssefold_result;
use super::slice::{bytes_from_raw, ssefold_bytes, ssefold_str};
use super::stream::{config_from_c, failure as stream_failure, provider_from_c, ssefold_stream_config};
use crate::providers::{Stream, StreamConfig};
use crate::relay::{resume_point, Relay, RelayConfig, RelayError, RelayFormat};

/// The browser protocol a relay writes.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_relay_format {
    /// The Vercel AI SDK's UI message stream protocol (v1), read by `useChat`.
    AiSdk = 0,
    /// Named events of the agent-backend catalog (`text-delta`, `tool-call`, …).
    Catalog = 1,
}

/// Settings of a relay. Start from `ssefold_relay_config_default`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_relay_config {
    /// A `ssefold_relay_format` value (default `AI_SDK`).
    pub format: u32,
    /// Bytes of recent frames kept for `ssefold_relay_replay_after`
    /// (default 1 MiB; 0 keeps none).
    pub replay_bytes: usize,
    /// A keep-alive comment is due after this long without output
    /// (default 15000 ms).
    pub keep_alive_ms: u64,
    /// AI SDK format: a tool call's argument deltas are held back and
    /// written as one `tool-input-delta` once this many bytes are held
    /// (default 4096; 0: every delta as it came). The browser parses a
    /// call's whole input again on every delta; held text is written before
    /// any other frame, at the call's end, and by `ssefold_relay_tick`.
    pub tool_input_coalesce_bytes: usize,
    /// AI SDK format: the longest argument text is held back, by the host's
    /// clock given to `ssefold_relay_tick` (default 50 ms; 0: every tick
    /// writes what is held).
    pub tool_input_coalesce_ms: u64,
}

/// A relay (opaque).
pub struct ssefold_relay {
    _private: [u8; 0],
}

impl Castable for ssefold_relay {
    type Inner = Handle<Relay>;
}

/// The status of a relay error.
fn relay_failure(e: &RelayError) -> Failure {
    let code = match e {
        RelayError::Finished => ssefold_result::RelayFinished,
        RelayError::NoStream => ssefold_result::RelayNoStream,
        RelayError::ReplayTooOld { .. } => ssefold_result::RelayReplayTooOld,
        RelayError::UnknownEventId(_) => ssefold_result::RelayUnknownEventId,
        RelayError::InvalidEvent(_) => ssefold_result::RelayInvalidEvent,
    };
    Failure::new(code, e.to_string())
}

fn config_from_c_relay(c: &ssefold_relay_config) -> Result<RelayConfig, Failure> {
    let format = match c.format {
        f if f == ssefold_relay_format::AiSdk as u32 => RelayFormat::AiSdk,
        f if f == ssefold_relay_format::Catalog as u32 => RelayFormat::Catalog,
        f => return Err(Failure::new(ssefold_result::InvalidArgument, format!("unknown relay format {f}"))),
    };
    Ok(RelayConfig {
        format,
        replay_bytes: c.replay_bytes,
        keep_alive_ms: c.keep_alive_ms,
        tool_input_coalesce_bytes: c.tool_input_coalesce_bytes,
        tool_input_coalesce_ms: c.tool_input_coalesce_ms,
    })
}

/// Reads a JSON text argument (`what` names it in the error).
///
/// # Safety
/// As [`ssefold_str::to_option`].
unsafe fn json_arg(text: ssefold_str, what: &str) -> Result<Option<Value>, Failure> {
    // SAFETY: forwarded contract.
    let Some(text) = (unsafe { text.to_option()? }) else { return Ok(None) };
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| Failure::new(ssefold_result::InvalidArgument, format!("{what} is not JSON: {e}")))
}

/// Writes a view of `bytes` to `out`.
///
/// # Safety
/// `out` must be non-NULL and writable.
unsafe fn write_bytes(out: *mut ssefold_bytes, bytes: &[u8]) -> Result<ssefold_result, Failure> {
    // SAFETY: caller contract.
    unsafe { handle::write_out(out, ssefold_bytes::new(bytes)) };
    Ok(ssefold_result::Ok)
}

/// Writes the defaults for `format` (a `ssefold_relay_format`) to `*out`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_config_default(format: u32, out: *mut ssefold_relay_config) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        if format > 1 {
            return ssefold_result::InvalidArgument;
        }
        let c = ssefold_relay_config {
            format,
            replay_bytes: RelayConfig::DEFAULT_REPLAY_BYTES,
            keep_alive_ms: RelayConfig::DEFAULT_KEEP_ALIVE_MS,
            tool_input_coalesce_bytes: RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_BYTES,
            tool_input_coalesce_ms: RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_MS,
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, c) };
        ssefold_result::Ok
    }
}

/// Creates a relay of events the host pushes (`ssefold_relay_push_json`)
/// with `config` (NULL: the `AI_SDK` defaults) and writes it to `*out`.
///
/// # Safety
/// `config` must be NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_new(
    config: *const ssefold_relay_config,
    out: *mut *mut ssefold_relay,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: NULL or readable by contract.
        let config = match unsafe { config.as_ref() }.map(config_from_c_relay) {
            None => RelayConfig::new(RelayFormat::AiSdk),
            Some(Ok(c)) => c,
            Some(Err(f)) => return f.code,
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(Relay::new(config))) };
        ssefold_result::Ok
    }
}

/// Creates a relay that folds provider bytes itself (`ssefold_relay_feed`):
/// its stream is for `provider` (a `ssefold_provider`) with `stream_config`
/// (NULL: the defaults). `config` NULL: the `AI_SDK` defaults.
///
/// # Safety
/// `config` and `stream_config` must be NULL or readable; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_new_with_stream(
    config: *const ssefold_relay_config,
    provider: u32,
    stream_config: *const ssefold_stream_config,
    out: *mut *mut ssefold_relay,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: NULL or readable by contract.
        let config = match unsafe { config.as_ref() }.map(config_from_c_relay) {
            None => RelayConfig::new(RelayFormat::AiSdk),
            Some(Ok(c)) => c,
            Some(Err(f)) => return f.code,
        };
        let Some(provider) = provider_from_c(provider) else { return ssefold_result::InvalidArgument };
        // SAFETY: NULL or readable by contract.
        let stream_config = match unsafe { stream_config.as_ref() }.map(config_from_c) {
            None => StreamConfig::default(),
            Some(Ok(c)) => c,
            Some(Err(f)) => return f.code,
        };
        let relay = Relay::with_stream(config, Stream::with_config(provider, stream_config));
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(relay)) };
        ssefold_result::Ok
    }
}

/// Frees a relay. NULL is a no-op.
///
/// # Safety
/// `relay` must be NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_free(relay: *mut ssefold_relay) {
    // SAFETY: forwarded contract.
    ffi_panic_boundary! { unsafe { handle::free(relay) } }
}

/// Feeds provider bytes through the relay's stream; `*out` gets the browser
/// bytes they produced. `*stream_result` gets `OK`, or the stream's failure
/// (`STREAM_*`, `SSE_*`) when the provider stream failed on this chunk: the
/// relay has then written an `error` event into `*out` (send it), and the
/// stream is closed. Both are written whenever the call returns `OK`.
///
/// Errors: `RELAY_NO_STREAM` (made with `ssefold_relay_new`),
/// `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; `bytes` NULL or `len` readable bytes; the
/// out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_feed(
    relay: *mut ssefold_relay,
    bytes: *const u8,
    len: usize,
    out: *mut ssefold_bytes,
    stream_result: *mut ssefold_result,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out, stream_result);
        // SAFETY: `len` readable bytes by contract (or NULL/0, checked by the helper).
        let chunk = unsafe { bytes_from_raw(bytes, len)? };
        let relayed = r.feed(chunk).map_err(|e| relay_failure(&e))?;
        let status = relayed.error.as_ref().map_or(ssefold_result::Ok, |e| stream_failure(e).code);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(stream_result, status) };
        // SAFETY: as above.
        unsafe { write_bytes(out, relayed.bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// The end of the provider's body: the stream's last events, as for
/// `ssefold_relay_feed` (`*stream_result` is `STREAM_INCOMPLETE` when the
/// terminal event never came; an `error` event is in `*out` then).
///
/// # Safety
/// `relay` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_end_of_input(
    relay: *mut ssefold_relay,
    out: *mut ssefold_bytes,
    stream_result: *mut ssefold_result,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out, stream_result);
        let relayed = r.end_of_input().map_err(|e| relay_failure(&e))?;
        let status = relayed.error.as_ref().map_or(ssefold_result::Ok, |e| stream_failure(e).code);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(stream_result, status) };
        // SAFETY: as above.
        unsafe { write_bytes(out, relayed.bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// Pushes one normalized event in its JSON form (`event->json` of a stream
/// callback registered with `event_json`): `*out` gets its browser bytes
/// (often none). Events the relay does not show (`tool_args_path`,
/// `warning`, `unknown`) give none; after `ssefold_relay_finish` every event
/// gives none.
///
/// Errors: `RELAY_INVALID_EVENT` (not JSON, not an event object, or a
/// member the relay reads is missing or mistyped; nothing written).
///
/// # Safety
/// `relay` must be NULL or live; `event_json` NULL or `len` readable bytes;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_push_json(
    relay: *mut ssefold_relay,
    event_json: ssefold_str,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        // SAFETY: view readable by contract.
        let text = unsafe { event_json.to_str_or_empty()? };
        let event: Value = serde_json::from_str(text)
            .map_err(|e| Failure::new(ssefold_result::RelayInvalidEvent, format!("event is not JSON: {e}")))?;
        let bytes = r.push_json(&event).map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// A tool's result for call `call_id`: `output_json` is the output as JSON
/// text (absent: `null`); `is_error` makes it a tool error; `duration_ms`
/// (NULL: unknown) goes into the catalog's `tool-result`.
///
/// Errors: `INVALID_ARGUMENT` (`output_json` not JSON), `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; the views NULL or `len` readable bytes;
/// `duration_ms` NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_tool_result(
    relay: *mut ssefold_relay,
    call_id: ssefold_str,
    output_json: ssefold_str,
    is_error: bool,
    duration_ms: *const u64,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        // SAFETY: views readable by contract.
        let (call_id, output) = unsafe { (call_id.to_str_or_empty()?, json_arg(output_json, "output_json")?) };
        // SAFETY: NULL or readable by contract.
        let duration = unsafe { duration_ms.as_ref() }.copied();
        let output = output.unwrap_or(Value::Null);
        let bytes = r.tool_result(call_id, &output, is_error, duration).map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// A tool call waits for the user's approval: `input_json` is the call's
/// input as JSON text (absent: `null`); `message` the sentence the user
/// reads (absent or empty: `Allow NAME to run?`). Catalog
/// `approval-required` `{approvalId, toolName, input, message}`.
///
/// Errors: `INVALID_ARGUMENT` (`input_json` not JSON), `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; the views NULL or `len` readable bytes;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_approval_required(
    relay: *mut ssefold_relay,
    approval_id: ssefold_str,
    call_id: ssefold_str,
    name: ssefold_str,
    input_json: ssefold_str,
    message: ssefold_str,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        // SAFETY: views readable by contract.
        let (approval_id, call_id, name, input, message) = unsafe {
            (
                approval_id.to_str_or_empty()?,
                call_id.to_str_or_empty()?,
                name.to_str_or_empty()?,
                json_arg(input_json, "input_json")?,
                message.to_str_or_empty()?,
            )
        };
        let input = input.unwrap_or(Value::Null);
        let message = (!message.is_empty()).then_some(message);
        let bytes = r.approval_required(approval_id, call_id, name, &input, message).map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// A log line for the UI: catalog `log`
/// `{level, message, metadata?, timestamp, traceId}` (the same object as a
/// transient `data-log`'s `data`). `metadata_json` is JSON text (absent:
/// left out); `timestamp` the host's ISO 8601 time
/// (`ssefold_relay_iso_timestamp` writes one), `trace_id` the host's trace.
///
/// Errors: `INVALID_ARGUMENT` (`metadata_json` not JSON), `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; the views NULL or `len` readable bytes;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_log(
    relay: *mut ssefold_relay,
    level: ssefold_str,
    message: ssefold_str,
    metadata_json: ssefold_str,
    timestamp: ssefold_str,
    trace_id: ssefold_str,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        // SAFETY: views readable by contract.
        let (level, message, metadata, timestamp, trace_id) = unsafe {
            (
                level.to_str_or_empty()?,
                message.to_str_or_empty()?,
                json_arg(metadata_json, "metadata_json")?,
                timestamp.to_str_or_empty()?,
                trace_id.to_str_or_empty()?,
            )
        };
        let bytes = r.log(level, message, metadata.as_ref(), timestamp, trace_id).map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// An error for the UI (catalog `error` `{error, code?, recoverable}`):
/// `code` a machine-readable code (absent or empty: left out);
/// `recoverable`: the agent goes on.
///
/// Errors: `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; `message` and `code` NULL or `len`
/// readable bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_error(
    relay: *mut ssefold_relay,
    message: ssefold_str,
    code: ssefold_str,
    recoverable: bool,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        // SAFETY: views readable by contract.
        let (message, code) = unsafe { (message.to_str_or_empty()?, code.to_str_or_empty()?) };
        let code = (!code.is_empty()).then_some(code);
        let bytes = r.error(message, code, recoverable).map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// Closes the open step, if any (`finish-step`; catalog `step-completed`).
///
/// Errors: `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_finish_step(
    relay: *mut ssefold_relay,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        let bytes = r.finish_step().map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// The end of the answer (`finish`, then `data: [DONE]` in the AI SDK
/// format). `usage_json` (absent: the usage folded from the stream)
/// replaces the usage reported. Nothing can be sent afterwards.
///
/// Errors: `INVALID_ARGUMENT` (`usage_json` not JSON), `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; `usage_json` NULL or `len` readable bytes;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_finish(
    relay: *mut ssefold_relay,
    usage_json: ssefold_str,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        // SAFETY: view readable by contract.
        let usage = unsafe { json_arg(usage_json, "usage_json")? };
        let bytes = r.finish(usage.as_ref()).map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// Metadata of the answer from the host (`metadata_json`, a JSON object,
/// e.g. `{"timings": …}` from the agent turn's outcome): AI SDK
/// `message-metadata`; the catalog writes nothing (`*out` empty).
///
/// Errors: `INVALID_ARGUMENT` (`metadata_json` not a JSON object),
/// `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; `metadata_json` NULL or `len` readable
/// bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_message_metadata(
    relay: *mut ssefold_relay,
    metadata_json: ssefold_str,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        // SAFETY: view readable by contract.
        let metadata = unsafe { json_arg(metadata_json, "metadata_json")? };
        let Some(Value::Object(metadata)) = metadata else {
            return Err(Failure::new(
                ssefold_result::InvalidArgument,
                "metadata_json must be a JSON object".to_owned(),
            ));
        };
        let bytes = r.message_metadata(&metadata).map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// The host aborted the run (the user pressed stop): the relay's provider
/// stream, if it has one, is aborted (its open parts end) and the run ends
/// aborted: AI SDK `message-metadata`, `abort`, `data: [DONE]` (no
/// `finish`); catalog `finish` with `finishReason: "cancelled"`. Nothing can
/// be sent afterwards.
///
/// Errors: `RELAY_FINISHED`.
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_abort(relay: *mut ssefold_relay, out: *mut ssefold_bytes) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        let bytes = r.abort().map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// Writes the ISO 8601 UTC time of `unix_ms` milliseconds since the Unix
/// epoch (`2025-01-15T10:30:00.000Z`, 24 bytes up to year 9999; no NUL) to
/// `buf`, and its length to `*written`: a `log` event's `timestamp` from
/// the host's clock.
///
/// Errors: `NULL_PARAMETER`; `INVALID_ARGUMENT` when `buf_len` is too small
/// (nothing is written to `buf`; `*written` is the length needed).
///
/// # Safety
/// `buf` NULL or `buf_len` writable bytes; `written` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_iso_timestamp(
    unix_ms: u64,
    buf: *mut u8,
    buf_len: usize,
    written: *mut usize,
) -> ssefold_result {
    ffi_panic_boundary! {
        if buf.is_null() || written.is_null() {
            return ssefold_result::NullParameter;
        }
        let text = crate::relay::iso_timestamp(unix_ms);
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(written, text.len()) };
        if text.len() > buf_len {
            return ssefold_result::InvalidArgument;
        }
        // SAFETY: `buf` holds `buf_len >= text.len()` writable bytes.
        unsafe { core::ptr::copy_nonoverlapping(text.as_ptr(), buf, text.len()) };
        ssefold_result::Ok
    }
}

/// A keep-alive comment when nothing was sent for the configured
/// `keep_alive_ms` by the host's clock `now_ms` (milliseconds, any epoch);
/// `*out` is empty otherwise. Call it on a timer.
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_keep_alive(
    relay: *mut ssefold_relay,
    now_ms: u64,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        let bytes = r.keep_alive(now_ms);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// The host's timer for held-back tool input (`tool_input_coalesce_bytes`):
/// at the host's time `now_ms` (milliseconds, any epoch, the clock given to
/// `ssefold_relay_keep_alive`), writes to `*out` the argument text held for
/// at least `tool_input_coalesce_ms`; empty when nothing is due. Call it
/// every `tool_input_coalesce_ms` or so while a stream is relayed.
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_tick(
    relay: *mut ssefold_relay,
    now_ms: u64,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        let bytes = r.tick(now_ms);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// Writes to `*out` the argument text held back now, whatever its age
/// (empty when nothing is held).
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_flush(relay: *mut ssefold_relay, out: *mut ssefold_bytes) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        let bytes = r.flush();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// The frames sent after event `last_event_id` (a reconnecting browser's
/// `Last-Event-ID` header), to send first on its new connection.
///
/// Errors: `RELAY_REPLAY_TOO_OLD` (no longer held: the last error names the
/// oldest id kept; reload the whole message), `RELAY_UNKNOWN_EVENT_ID`.
///
/// # Safety
/// `relay` must be NULL or live; `last_event_id` NULL or `len` readable
/// bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_replay_after(
    relay: *mut ssefold_relay,
    last_event_id: ssefold_str,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &mut Relay| {
        check_not_null!(out);
        // SAFETY: view readable by contract.
        let id = unsafe { last_event_id.to_str_or_empty()? };
        let bytes = r.replay_after(id).map_err(|e| relay_failure(&e))?;
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { write_bytes(out, bytes) }
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_mut(relay, body) }
}

/// The number of HTTP response headers the browser side needs
/// (`ssefold_relay_header` reads them).
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_header_count(relay: *const ssefold_relay, out: *mut usize) -> ssefold_result {
    let body = |r: &Relay| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, r.headers().len()) };
        Ok(())
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_ref(relay, body) }
}

/// Response header `index` (lower-case name, value; static strings that
/// live forever).
///
/// Errors: `INVALID_ARGUMENT` (`index` out of range).
///
/// # Safety
/// `relay` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_header(
    relay: *const ssefold_relay,
    index: usize,
    name: *mut ssefold_str,
    value: *mut ssefold_str,
) -> ssefold_result {
    let body = |r: &Relay| {
        check_not_null!(name, value);
        let Some(&(n, v)) = r.headers().get(index) else {
            return Err(Failure::new(ssefold_result::InvalidArgument, format!("no header {index}")));
        };
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(name, ssefold_str::new(n)) };
        // SAFETY: as above.
        unsafe { handle::write_out(value, ssefold_str::new(v)) };
        Ok(())
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_ref(relay, body) }
}

/// The id of the last event sent (0 before the first) and whether
/// `ssefold_relay_finish` was called.
///
/// # Safety
/// `relay` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_status(
    relay: *const ssefold_relay,
    last_event_id: *mut u64,
    is_finished: *mut bool,
) -> ssefold_result {
    let body = |r: &Relay| {
        check_not_null!(last_event_id, is_finished);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(last_event_id, r.last_event_id()) };
        // SAFETY: as above.
        unsafe { handle::write_out(is_finished, r.is_finished()) };
        Ok(())
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_ref(relay, body) }
}

/// The number of frames (events) in the output of the relay's last call
/// (0 after `ssefold_relay_replay_after` and `ssefold_relay_keep_alive`);
/// `ssefold_relay_frame` reads them.
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_frame_count(relay: *const ssefold_relay, out: *mut usize) -> ssefold_result {
    let body = |r: &Relay| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, r.frames().len()) };
        Ok(())
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_ref(relay, body) }
}

/// Frame `index` of the relay's last call: its event id and its bytes (a
/// view into the last call's output, valid until the relay's next call),
/// to append to a replay store shared across processes. The frames joined
/// are the output, without the trailer (`ssefold_relay_trailer`).
///
/// Errors: `INVALID_ARGUMENT` (`index` out of range).
///
/// # Safety
/// `relay` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_frame(
    relay: *const ssefold_relay,
    index: usize,
    id: *mut u64,
    out: *mut ssefold_bytes,
) -> ssefold_result {
    let body = |r: &Relay| {
        check_not_null!(id, out);
        let Some((frame_id, bytes)) = r.frames().nth(index) else {
            return Err(Failure::new(ssefold_result::InvalidArgument, format!("no frame {index}")));
        };
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(id, frame_id) };
        // SAFETY: as above.
        unsafe { handle::write_out(out, ssefold_bytes::new(bytes)) };
        Ok(())
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_ref(relay, body) }
}

/// What a reader sends after the stream's last frame, part of no frame
/// (`data: [DONE]\n\n` in the AI SDK format, empty in the catalog): a
/// static view that lives forever. A replay store keeps it with its
/// finished marker.
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_trailer(relay: *const ssefold_relay, out: *mut ssefold_bytes) -> ssefold_result {
    let body = |r: &Relay| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, ssefold_bytes::new(r.trailer())) };
        Ok(())
    };
    // SAFETY: `relay` is NULL or a live handle (contract).
    unsafe { handle::with_ref(relay, body) }
}

/// Where a replay store resumes for a browser's `Last-Event-ID`: writes to
/// `*out` the id after which its frames are sent, given the ids it holds,
/// `oldest..=newest` (both 0: it holds none; ids start at 1).
///
/// Errors (nothing written): `RELAY_UNKNOWN_EVENT_ID` (not a number, or
/// newer than `newest`), `RELAY_REPLAY_TOO_OLD` (frames after it are no
/// longer held: reload the whole message), `INVALID_ARGUMENT` (`oldest` >
/// `newest`, or only one of them 0).
///
/// # Safety
/// `last_event_id` must be NULL or `len` readable bytes; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_resume_point(
    last_event_id: ssefold_str,
    oldest: u64,
    newest: u64,
    out: *mut u64,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        if oldest > newest || (oldest == 0) != (newest == 0) {
            return ssefold_result::InvalidArgument;
        }
        // SAFETY: view readable by contract.
        let id = match unsafe { last_event_id.to_str_or_empty() } {
            Ok(id) => id,
            Err(code) => return code,
        };
        let held = |n: u64| (n > 0).then_some(n);
        match resume_point(id, held(oldest), held(newest)) {
            Ok(after) => {
                // SAFETY: non-NULL (checked) and writable by contract.
                unsafe { handle::write_out(out, after) };
                ssefold_result::Ok
            }
            Err(e) => relay_failure(&e).code,
        }
    }
}

/// Catalog event name `index` (`relay::CATALOG_EVENT_NAMES`: every event
/// name the `catalog` format sends; a browser's `EventSource` needs a
/// listener for each) as a static string that lives forever.
///
/// Errors (nothing written): `INVALID_ARGUMENT` (`index` past the last
/// name: count them by calling with 0, 1, 2… until it).
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_catalog_event_name(index: usize, out: *mut ssefold_str) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        let Some(name) = crate::relay::CATALOG_EVENT_NAMES.get(index) else {
            return ssefold_result::InvalidArgument;
        };
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, ssefold_str::new(name)) };
        ssefold_result::Ok
    }
}

/// The message of the relay's last call (empty after success), as a
/// NUL-terminated view owned by the relay until its next call.
///
/// # Safety
/// `relay` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_relay_last_error(
    relay: *const ssefold_relay,
    out: *mut ssefold_str,
) -> ssefold_result {
    // SAFETY: forwarded contract.
    unsafe { super::write_last_error(relay, out) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Provider;

    fn bytes(b: ssefold_bytes) -> Vec<u8> {
        // SAFETY: a view just returned by the relay, read before its next call.
        unsafe { bytes_from_raw(b.ptr, b.len) }.unwrap().to_vec()
    }

    /// Provider bytes through the C ABI give the bytes of the Rust API.
    #[test]
    fn the_c_abi_relays_like_the_rust_api() {
        let body = ssefold_corpus::anthropic_tool_use(32 << 10);
        let mut rust = Relay::with_stream(RelayConfig::new(RelayFormat::AiSdk), Stream::new(Provider::Auto));
        let mut want = Vec::new();
        for chunk in body.chunks(700) {
            want.extend_from_slice(rust.feed(chunk).unwrap().bytes);
        }
        want.extend_from_slice(rust.end_of_input().unwrap().bytes);
        want.extend_from_slice(rust.finish(None).unwrap());
        let mut got = Vec::new();
        let mut r = core::ptr::null_mut();
        let mut out = ssefold_bytes::new(&[]);
        let mut status = ssefold_result::Panic;
        // SAFETY: valid pointers throughout; the handle is freed once at the end.
        unsafe {
            assert_eq!(
                ssefold_relay_new_with_stream(core::ptr::null(), 0, core::ptr::null(), &mut r),
                ssefold_result::Ok
            );
            for chunk in body.chunks(700) {
                assert_eq!(
                    ssefold_relay_feed(r, chunk.as_ptr(), chunk.len(), &mut out, &mut status),
                    ssefold_result::Ok
                );
                assert_eq!(status, ssefold_result::Ok);
                got.extend(bytes(out));
            }
            assert_eq!(ssefold_relay_end_of_input(r, &mut out, &mut status), ssefold_result::Ok);
            got.extend(bytes(out));
            assert_eq!(ssefold_relay_finish(r, ssefold_str::ABSENT, &mut out), ssefold_result::Ok);
            got.extend(bytes(out));
            assert_eq!(
                ssefold_relay_log(
                    r,
                    ssefold_str::new("info"),
                    ssefold_str::new("x"),
                    ssefold_str::ABSENT,
                    ssefold_str::new("2025-01-15T10:30:00.000Z"),
                    ssefold_str::new("trace"),
                    &mut out
                ),
                ssefold_result::RelayFinished
            );
            ssefold_relay_free(r);
        }
        assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
    }
}
