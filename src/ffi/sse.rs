//! `ssefold_sse_decoder`: bytes in, events out through a callback.

use core::ffi::{c_int, c_void};

use super::handle::{self, check_not_null, Castable, Failure, Handle};
use super::result::ssefold_result;
use super::slice::{bytes_from_raw, ssefold_str};
use crate::sse::{Decoder, DecoderConfig, Event, OwnedEvent, Utf8Mode};

/// How invalid UTF-8 in field values is handled (the `utf8_mode` of
/// [`ssefold_sse_decoder_config`]).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_utf8_mode {
    /// Replace each maximal invalid sequence with U+FFFD (the spec).
    Replace = 0,
    /// Refuse the event: `feed` returns `SSEFOLD_RESULT_SSE_INVALID_UTF8`.
    Strict = 1,
}

impl ssefold_utf8_mode {
    /// The core's mode for a C `utf8_mode` value; `None` for an unknown one.
    pub(crate) fn from_raw(raw: u32) -> Option<Utf8Mode> {
        [(Self::Replace, Utf8Mode::Replace), (Self::Strict, Utf8Mode::Strict)]
            .into_iter()
            .find_map(|(c, mode)| (c as u32 == raw).then_some(mode))
    }
}

/// Decoder options. Start from `ssefold_sse_decoder_config_default`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_sse_decoder_config {
    /// Longest line accepted, in bytes, terminator excluded (default 16 MiB).
    pub max_line_len: usize,
    /// Largest data of one event, in bytes (default 16 MiB).
    pub max_event_size: usize,
    /// A `ssefold_utf8_mode` value (default `SSEFOLD_UTF8_MODE_REPLACE`).
    pub utf8_mode: u32,
    /// Longest `id` value accepted, in bytes (default 4 KiB): a longer one
    /// gives `SSEFOLD_RESULT_SSE_ID_TOO_LONG`, the id in force is kept.
    pub max_id_len: usize,
}

/// One dispatched event, as passed to the callback. Every view is valid
/// only during the callback.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_sse_event {
    /// The event type (`"message"` when the block had none).
    pub event: ssefold_str,
    /// The data lines joined with LF.
    pub data: ssefold_str,
    /// The last event ID in force; absent (`ptr == NULL`) until an `id`
    /// field was first accepted.
    pub id: ssefold_str,
    /// Whether this event's block set a valid `retry`.
    pub has_retry: bool,
    /// The `retry` value in milliseconds when `has_retry`, else 0.
    pub retry_ms: u64,
    /// Changes whenever the decoder's last event ID may have changed: two
    /// events of one decoder with the same `id_generation` carry the same id
    /// bytes, so a host can copy the id once and share that copy until it
    /// changes (the id is repeated on every event and may be up to
    /// `max_id_len` bytes). 0 for the unterminated event of `finish`.
    pub id_generation: u64,
}

impl ssefold_sse_event {
    fn new(e: &Event<'_>) -> Self {
        ssefold_sse_event {
            event: ssefold_str::new(e.event()),
            data: ssefold_str::new(e.data()),
            id: ssefold_str::from_option(e.id()),
            has_retry: e.retry().is_some(),
            retry_ms: e.retry().unwrap_or(0),
            id_generation: e.id_generation(),
        }
    }
}

/// What `ssefold_sse_decoder_finish` found at the end of the stream.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_sse_end {
    /// Bytes after the last event boundary that were discarded (0 for a
    /// stream that ended cleanly).
    pub discarded_bytes: u64,
    /// Whether the discarded bytes held an event that was not dispatched
    /// (per the spec) and is shown in `unterminated`.
    pub has_unterminated: bool,
    /// That event (views owned by the decoder handle, valid until its next
    /// call); all views absent when `!has_unterminated`.
    pub unterminated: ssefold_sse_event,
}

/// The event callback: `user_data` as registered, and the event (valid only
/// during the call). Return 0 to go on, non-zero to stop `feed`, which then
/// returns `SSEFOLD_RESULT_STOPPED` and how many bytes it consumed.
pub type ssefold_sse_event_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event: *const ssefold_sse_event) -> c_int>;

/// An incremental SSE decoder (opaque).
pub struct ssefold_sse_decoder {
    _private: [u8; 0],
}

/// The Rust side of [`ssefold_sse_decoder`].
pub(crate) struct SseDecoder {
    decoder: Decoder,
    callback: ssefold_sse_event_callback,
    user_data: *mut c_void,
    /// The unterminated event of the last `finish` (owned for its views).
    unterminated: Option<OwnedEvent>,
}

impl Castable for ssefold_sse_decoder {
    type Inner = Handle<SseDecoder>;
}

impl SseDecoder {
    /// Decodes `chunk` until its end, a stop, or a decode error.
    fn feed(&mut self, chunk: &[u8], consumed: &mut Option<usize>) -> Result<ssefold_result, Failure> {
        let Some(callback) = self.callback else {
            return Err(Failure::new(
                ssefold_result::BadState,
                "no callback set: call ssefold_sse_decoder_set_callback first (events would be lost)",
            ));
        };
        let user_data = self.user_data;
        let mut events = self.decoder.feed(chunk);
        loop {
            let stop = match events.next_event() {
                None => break,
                Some(Ok(event)) => {
                    let view = ssefold_sse_event::new(&event);
                    // SAFETY: the host registered `callback` for this `user_data`; `view` outlives the call.
                    (unsafe { callback(user_data, &view) }) != 0
                }
                Some(Err(e)) => {
                    *consumed = Some(events.consumed());
                    return Err(decode_failure(&e));
                }
            };
            if stop {
                *consumed = Some(events.consumed());
                return Ok(ssefold_result::Stopped);
            }
        }
        *consumed = Some(events.consumed());
        Ok(ssefold_result::Ok)
    }
}

/// The failure for a decode error (out of the event loop: its formatting
/// would otherwise weigh on how the loop is compiled).
#[cold]
#[inline(never)]
fn decode_failure(e: &crate::sse::DecodeError) -> Failure {
    let message = format!("{e}; the rest of the chunk from `consumed` on can be fed again");
    Failure::new(ssefold_result::from(e), message)
}

fn config_from_c(c: &ssefold_sse_decoder_config) -> Result<DecoderConfig, ssefold_result> {
    let utf8 = ssefold_utf8_mode::from_raw(c.utf8_mode).ok_or(ssefold_result::InvalidArgument)?;
    let config = DecoderConfig {
        max_line_len: c.max_line_len,
        max_event_size: c.max_event_size,
        max_id_len: c.max_id_len,
        utf8,
    };
    // The ranges are the core's (`crate::config`): a zero limit is refused.
    config.validate().map_err(|_| ssefold_result::InvalidArgument)?;
    Ok(config)
}

/// Writes the default decoder options (16 MiB lines and events, 4 KiB ids,
/// U+FFFD replacement) to `*out`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_config_default(out: *mut ssefold_sse_decoder_config) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        let d = DecoderConfig::default();
        let config = ssefold_sse_decoder_config {
            max_line_len: d.max_line_len,
            max_event_size: d.max_event_size,
            utf8_mode: u32::from(d.utf8 == Utf8Mode::Strict),
            max_id_len: d.max_id_len,
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, config) };
        ssefold_result::Ok
    }
}

/// Creates a decoder with `config` (NULL: the defaults) and writes it to
/// `*out`. Free it with `ssefold_sse_decoder_free`.
///
/// Errors: `NULL_PARAMETER` when `out` is NULL; `INVALID_ARGUMENT` for an
/// unknown `utf8_mode` or a limit out of its range (the core's: `0` for
/// every limit).
///
/// # Safety
/// `config` must be NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_new(
    config: *const ssefold_sse_decoder_config,
    out: *mut *mut ssefold_sse_decoder,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: NULL or readable by contract.
        let config = match unsafe { config.as_ref() } {
            None => DecoderConfig::default(),
            Some(c) => match config_from_c(c) {
                Ok(c) => c,
                Err(code) => return code,
            },
        };
        let state = SseDecoder {
            decoder: Decoder::with_config(config),
            callback: None,
            user_data: core::ptr::null_mut(),
            unterminated: None,
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(state)) };
        ssefold_result::Ok
    }
}

/// Frees a decoder. NULL is a no-op.
///
/// # Safety
/// `decoder` must be NULL or a live decoder, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_free(decoder: *mut ssefold_sse_decoder) {
    // SAFETY: forwarded contract.
    ffi_panic_boundary! { unsafe { handle::free(decoder) } }
}

/// Registers the event callback (NULL unregisters it) and its `user_data`,
/// which ssefold passes back untouched.
///
/// # Safety
/// `decoder` must be NULL or a live decoder; `callback` must be safe to call
/// with `user_data` until it is replaced or the decoder freed.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_set_callback(
    decoder: *mut ssefold_sse_decoder,
    callback: ssefold_sse_event_callback,
    user_data: *mut c_void,
) -> ssefold_result {
    let body = |d: &mut SseDecoder| {
        d.callback = callback;
        d.user_data = user_data;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `decoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(decoder, body) }
}

/// Decodes `len` bytes at `bytes`, calling the callback for each event.
///
/// Returns `OK` with `*consumed == len` when the whole chunk was decoded
/// (an unfinished line or event is kept for the next chunk). Returns
/// `STOPPED` when the callback returned non-zero: `*consumed` is the number
/// of bytes decoded up to and including that event; feed `bytes + consumed`
/// later and nothing is lost. Returns `SSE_LINE_TOO_LONG`,
/// `SSE_EVENT_TOO_LARGE`, `SSE_ID_TOO_LONG` or `SSE_INVALID_UTF8` for a decode error, with
/// `*consumed` set where decoding stopped and the message in the last error:
/// feed the rest to go on (after a limit error the decoder skips to the
/// next blank line; after a UTF-8 error the event is dropped).
///
/// Errors without consuming anything (`*consumed` untouched): `NULL_PARAMETER`
/// (`decoder` or `consumed` NULL, or `bytes` NULL with `len > 0`),
/// `INVALID_ARGUMENT` (`len > PTRDIFF_MAX`), `BAD_STATE` (no callback set,
/// or called from the callback).
///
/// # Safety
/// `decoder` must be NULL or a live decoder; `bytes` NULL or `len` readable
/// bytes; `consumed` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_feed(
    decoder: *mut ssefold_sse_decoder,
    bytes: *const u8,
    len: usize,
    consumed: *mut usize,
) -> ssefold_result {
    let body = |d: &mut SseDecoder| {
        check_not_null!(consumed);
        // SAFETY: `len` readable bytes by contract (or NULL/0, checked by the helper).
        let chunk = unsafe { bytes_from_raw(bytes, len)? };
        let mut n = None;
        let result = d.feed(chunk, &mut n);
        if let Some(n) = n {
            // SAFETY: non-NULL (checked) and writable by contract. Written whenever input was consumed.
            unsafe { handle::write_out(consumed, n) };
        }
        result
    };
    // SAFETY: `decoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(decoder, body) }
}

/// Ends the stream: an unterminated event is discarded (per the spec) and
/// reported in `*out` (its views owned by the decoder until its next call).
/// The decoder is then ready for a new stream (a reconnection); the last
/// event ID and reconnection time are kept. Nothing is dispatched.
///
/// # Safety
/// `decoder` must be NULL or a live decoder; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_finish(
    decoder: *mut ssefold_sse_decoder,
    out: *mut ssefold_sse_end,
) -> ssefold_result {
    let body = |d: &mut SseDecoder| {
        check_not_null!(out);
        let end = d.decoder.finish();
        d.unterminated = end.unterminated;
        let none = ssefold_sse_event {
            event: ssefold_str::ABSENT,
            data: ssefold_str::ABSENT,
            id: ssefold_str::ABSENT,
            has_retry: false,
            retry_ms: 0,
            id_generation: 0,
        };
        let report = ssefold_sse_end {
            discarded_bytes: end.discarded_bytes,
            has_unterminated: d.unterminated.is_some(),
            unterminated: d.unterminated.as_ref().map_or(none, |e| ssefold_sse_event::new(&e.as_event())),
        };
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, report) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `decoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(decoder, body) }
}

/// Forgets everything, the last event ID and reconnection time included:
/// a fresh decoder with the same options and callback (the abort of a
/// stream).
///
/// # Safety
/// `decoder` must be NULL or a live decoder.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_reset(decoder: *mut ssefold_sse_decoder) -> ssefold_result {
    let body = |d: &mut SseDecoder| {
        d.decoder.reset();
        d.unterminated = None;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `decoder` is NULL or a live handle (contract).
    unsafe { handle::with_mut(decoder, body) }
}

/// The last event ID (sent as `Last-Event-ID` on reconnection): absent
/// (`ptr == NULL`) until an `id` field was accepted. The view is owned by
/// the decoder until its next call.
///
/// # Safety
/// `decoder` must be NULL or a live decoder; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_last_event_id(
    decoder: *const ssefold_sse_decoder,
    out: *mut ssefold_str,
) -> ssefold_result {
    let body = |d: &SseDecoder| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, ssefold_str::from_option(d.decoder.last_event_id())) };
        Ok(())
    };
    // SAFETY: `decoder` is NULL or a live handle (contract).
    unsafe { handle::with_ref(decoder, body) }
}

/// The stream's reconnection time (the last valid `retry` field):
/// `*has_value` says whether there was one, `*ms` is its value (0 if not).
///
/// # Safety
/// `decoder` must be NULL or a live decoder; `has_value` and `ms` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_reconnection_time(
    decoder: *const ssefold_sse_decoder,
    has_value: *mut bool,
    ms: *mut u64,
) -> ssefold_result {
    let body = |d: &SseDecoder| {
        check_not_null!(has_value, ms);
        let t = d.decoder.reconnection_time();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(has_value, t.is_some()) };
        // SAFETY: as above.
        unsafe { handle::write_out(ms, t.unwrap_or(0)) };
        Ok(())
    };
    // SAFETY: `decoder` is NULL or a live handle (contract).
    unsafe { handle::with_ref(decoder, body) }
}

/// The message of the decoder's last call (empty after success), as a
/// NUL-terminated view owned by the decoder until its next call.
///
/// # Safety
/// `decoder` must be NULL or a live decoder; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_sse_decoder_last_error(
    decoder: *const ssefold_sse_decoder,
    out: *mut ssefold_str,
) -> ssefold_result {
    // SAFETY: forwarded contract.
    unsafe { super::write_last_error(decoder, out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collected events plus when to stop (after every `stop_every` events).
    #[derive(Default)]
    struct Sink {
        events: Vec<OwnedEvent>,
        stop_every: usize,
    }

    unsafe extern "C" fn collect(user_data: *mut c_void, event: *const ssefold_sse_event) -> c_int {
        // SAFETY: `user_data` is the `Sink` registered below and `event` is valid during the call.
        let (sink, e) = unsafe { (&mut *user_data.cast::<Sink>(), &*event) };
        // SAFETY: the views point to UTF-8 owned by the decoder, valid during the call.
        let text = |s: ssefold_str| unsafe { s.to_option() }.unwrap().map(str::to_owned);
        sink.events.push(OwnedEvent {
            event: text(e.event).unwrap(),
            data: text(e.data).unwrap(),
            id: text(e.id),
            retry: e.has_retry.then_some(e.retry_ms),
        });
        c_int::from(sink.stop_every > 0 && sink.events.len() % sink.stop_every == 0)
    }

    /// Feeds `bytes` through the C ABI in `chunk`-byte pieces, resuming after
    /// every stop and error; returns the events and the error statuses.
    fn decode_via_ffi(bytes: &[u8], chunk: usize, stop_every: usize) -> (Vec<OwnedEvent>, Vec<ssefold_result>) {
        let mut sink = Sink { events: Vec::new(), stop_every };
        let mut errors = Vec::new();
        let mut d = core::ptr::null_mut();
        // SAFETY: valid out-pointer, live handle until freed below, valid chunk pointers and lengths.
        unsafe {
            assert_eq!(ssefold_sse_decoder_new(core::ptr::null(), &mut d), ssefold_result::Ok);
            let ud = (&mut sink as *mut Sink).cast::<c_void>();
            assert_eq!(ssefold_sse_decoder_set_callback(d, Some(collect), ud), ssefold_result::Ok);
            for piece in bytes.chunks(chunk) {
                let mut at = 0;
                loop {
                    let mut consumed = usize::MAX;
                    let rc = ssefold_sse_decoder_feed(d, piece[at..].as_ptr(), piece.len() - at, &mut consumed);
                    assert!(consumed <= piece.len() - at, "{rc:?}");
                    at += consumed;
                    match rc {
                        ssefold_result::Ok => break,
                        ssefold_result::Stopped => {}
                        other => errors.push(other),
                    }
                }
            }
            ssefold_sse_decoder_free(d);
        }
        (sink.events, errors)
    }

    fn decode_via_rust(bytes: &[u8]) -> Vec<OwnedEvent> {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        d.feed_each(bytes, |e| out.push(e.unwrap().to_owned_event()));
        out
    }

    #[test]
    fn stopping_after_every_event_and_resuming_loses_nothing() {
        let demo = include_bytes!("../../cli/src/demo.sse");
        let want = decode_via_rust(demo);
        assert!(want.len() > 10);
        for chunk in [1, 2, 7, 100, demo.len()] {
            for stop in [0, 1, 3] {
                let (got, errors) = decode_via_ffi(demo, chunk, stop);
                assert!(errors.is_empty());
                assert_eq!(got, want, "chunk {chunk} stop {stop}");
            }
        }
    }

    #[test]
    fn a_decode_error_is_returned_and_decoding_resumes() {
        let config = ssefold_sse_decoder_config { max_line_len: 8, max_event_size: 64, utf8_mode: 0, max_id_len: 4096 };
        let mut d = core::ptr::null_mut();
        let mut sink = Sink::default();
        let input = b"data: far too long\n\ndata: ok\n\n";
        // SAFETY: valid pointers throughout; the handle is freed once.
        unsafe {
            assert_eq!(ssefold_sse_decoder_new(&config, &mut d), ssefold_result::Ok);
            let ud = (&mut sink as *mut Sink).cast::<c_void>();
            assert_eq!(ssefold_sse_decoder_set_callback(d, Some(collect), ud), ssefold_result::Ok);
            let mut consumed = 0;
            let rc = ssefold_sse_decoder_feed(d, input.as_ptr(), input.len(), &mut consumed);
            assert_eq!(rc, ssefold_result::SseLineTooLong);
            let mut msg = ssefold_str::ABSENT;
            assert_eq!(ssefold_sse_decoder_last_error(d, &mut msg), ssefold_result::Ok);
            assert!(msg.to_option().unwrap().unwrap().contains("longer than 8 bytes"));
            let rest = &input[consumed..];
            assert_eq!(ssefold_sse_decoder_feed(d, rest.as_ptr(), rest.len(), &mut consumed), ssefold_result::Ok);
            ssefold_sse_decoder_free(d);
        }
        assert_eq!(sink.events.len(), 1);
        assert_eq!(sink.events[0].data, "ok");
    }
}
