//! `ssefold_stream`: a provider stream — HTTP body bytes in, normalized
//! events out through a callback, the folded message as JSON text.

use core::ffi::c_void;

use super::handle::{self, check_not_null, Castable, Failure, Handle};
use super::json::{ssefold_container_kind, ssefold_path_event_kind, ssefold_path_segment};
use super::reconnect::{cursor_view, ssefold_resume_cursor};
use super::result::ssefold_result;
use super::slice::{bytes_from_raw, ssefold_bytes, ssefold_str, write_json, write_json_text, JsonSource};
use super::sse::{ssefold_sse_decoder_config, ssefold_utf8_mode};
use crate::eventstream::DecoderLimits;
use crate::json::{ContainerKind, PathEvent, PathSegment};
use crate::providers::{
    PartOutcome, Provider, Stream, StreamConfig, StreamError, StreamEvent, ToolCall, ToolCallStart, ToolInputFormat,
};
use crate::reconnect::ResumeCursor;
use crate::sse::{DecoderConfig, Utf8Mode};
use crate::ui::UiState;

/// Which provider dialect a stream folds.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_provider {
    /// Detected from the first event.
    Auto = 0,
    /// Anthropic Messages API.
    Anthropic = 1,
    /// OpenAI Chat Completions (and compatible providers).
    OpenaiChat = 2,
    /// OpenAI Responses API.
    OpenaiResponses = 3,
    /// Google Gemini API and Vertex AI.
    Gemini = 4,
    /// Ollama's native chat API (newline-delimited JSON).
    Ollama = 5,
    /// Amazon Bedrock `InvokeModelWithResponseStream`, Anthropic models
    /// (AWS event-stream framing).
    Bedrock = 6,
    /// Amazon Bedrock `ConverseStream` (AWS event-stream framing).
    BedrockConverse = 7,
}

/// Limits of a stream. Start from `ssefold_stream_config_default` (the
/// core's defaults). Every limit means its number: `ssefold_stream_new`
/// refuses one out of the core's range with `SSEFOLD_RESULT_INVALID_ARGUMENT`
/// (`0` for every limit but `max_path_events_per_feed`, where it means no
/// path events; see the README's "Limits").
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_stream_config {
    /// The SSE decoder's options.
    pub sse: ssefold_sse_decoder_config,
    /// Most parts per stream (default 4096).
    pub max_parts: usize,
    /// Most bytes of one tool call's raw arguments (default 16 MiB).
    pub max_tool_args_bytes: usize,
    /// Most bytes of text in one part (default 64 MiB).
    pub max_text_bytes: usize,
    /// Most choices (OpenAI `n`, default 128).
    pub max_choices: usize,
    /// Anthropic: keep an unfinished trailing string in a partial tool input
    /// (jiter `partial_mode="trailing-strings"`; default false: dropped).
    pub tool_input_trailing_strings: bool,
    /// Most bytes the stream may hold: everything it keeps (texts, tool
    /// arguments, media and every member and value of the fold; default 128
    /// MiB). Over it: `SSEFOLD_RESULT_STREAM_LIMIT_EXCEEDED`
    /// (`max_memory_bytes`), with everything folded so far kept. A tool
    /// input whose tree would cost more than a sixteenth of it stays text:
    /// `message_json` writes it as it came.
    pub max_memory_bytes: usize,
    /// The AWS event-stream framing's limits (Bedrock).
    pub event_stream: ssefold_event_stream_limits,
    /// Most `TOOL_ARGS_PATH` events one call (`feed`, `finish`)
    /// delivers (default 16,384): past it, that call's other path events are
    /// dropped with one `path_events_dropped` warning; the arguments' text
    /// (`TOOL_ARGS_DELTA`) and the fold stay whole. A host that collects a
    /// call's events before using them holds at most this many, however
    /// much argument text one chunk carries (one path event per JSON token
    /// of a whole-arguments delta). 0: no path events (one warning per call
    /// that had some).
    pub max_path_events_per_feed: usize,
}

/// Limits of the AWS event-stream framing (Bedrock bodies). Over one:
/// `SSEFOLD_RESULT_STREAM_EVENT_STREAM`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_event_stream_limits {
    /// Longest message accepted, in bytes (default 16 MiB, the AWS limit).
    pub max_message_len: u32,
    /// Longest headers section accepted, in bytes (default 128 KiB, the AWS
    /// limit).
    pub max_headers_len: u32,
}

/// The kind of a normalized event (its wire name is in `name`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_stream_event_kind {
    /// `message_start`: the turn began.
    MessageStart = 0,
    /// `part_start`: a part (text, reasoning, tool call, refusal, other) opened.
    PartStart = 1,
    /// `text_delta`: text appended to a part (`text`).
    TextDelta = 2,
    /// `tool_args_delta`: a raw fragment of a tool call's JSON arguments (`text`).
    ToolArgsDelta = 3,
    /// `tool_args_path`: a partial-JSON path event of a tool call's arguments.
    ToolArgsPath = 4,
    /// `part_metadata`: metadata set on a part.
    PartMetadata = 5,
    /// `part_end`: a part was committed (a tool call is ready when its outcome is `complete`).
    PartEnd = 6,
    /// `usage`: usage so far.
    Usage = 7,
    /// `stop_reason`: a stop / finish reason became known.
    StopReason = 8,
    /// `turn_end`: the terminal event arrived.
    TurnEnd = 9,
    /// `error`: the provider reported an error; the turn ends.
    Error = 10,
    /// `warning`: recoverable bad input.
    Warning = 11,
    /// `unknown`: an event or delta of an unknown type, carried through.
    Unknown = 12,
    /// `turn_reset`: after a reconnection the server restarted the answer;
    /// discard the partial turn (what follows rebuilds it).
    TurnReset = 13,
    /// `media_delta`: bytes appended to a media part (`data`, decoded from
    /// the provider's base64; its `mime_type`).
    MediaDelta = 14,
}

/// One normalized event, as passed to the callback. Every view is valid
/// only during the callback. The hot path is typed (`kind`, `part`,
/// `text`); every field of every event is in `json` (the event's JSON form,
/// `{"event": name, ...}`) when the callback was registered with
/// `event_json`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_stream_event {
    /// What happened.
    pub kind: ssefold_stream_event_kind,
    /// The wire name (`"text_delta"`, …).
    pub name: ssefold_str,
    /// The part id for part events (0, 1, 2… in stream order); `UINT32_MAX`
    /// for events without a part.
    pub part: u32,
    /// `TEXT_DELTA`: the text; `TOOL_ARGS_DELTA`: the JSON fragment;
    /// `STOP_REASON`: the reason; `WARNING` / `ERROR`: the message; absent
    /// otherwise.
    pub text: ssefold_str,
    /// The event's JSON form when requested (`event_json`); absent otherwise.
    /// A `TOOL_ARGS_PATH` event's `path_event` is O(1) like the typed one:
    /// `{"type", "depth", "key" | "index" (the last segment, absent at the
    /// root), then "kind" | "text" | "value"}`, a closing container's
    /// `kind` and not its value.
    pub json: ssefold_str,
    /// `TOOL_ARGS_PATH`: the path event, typed (zeroed otherwise).
    pub path_event: ssefold_stream_path_event,
    /// `MEDIA_DELTA`: the media's MIME type (`audio/pcm`, `image/png`, …);
    /// absent otherwise.
    pub mime_type: ssefold_str,
    /// `MEDIA_DELTA`: the bytes appended to the media part, decoded from
    /// the provider's base64 (empty otherwise).
    pub data: ssefold_bytes,
    /// `PART_END`: how the part ended (`NONE` on every other event). A
    /// tool call is ready exactly when its `PART_END`'s outcome is
    /// `COMPLETE`.
    pub outcome: ssefold_part_outcome,
    /// `PART_START` and `PART_END` of a `tool_call` part: its call,
    /// provider-neutral (`present`); zeroed otherwise.
    pub tool_call: ssefold_tool_call,
    /// Whether the event is content (text, arguments, media, a part
    /// starting or ending, part metadata, usage, the stop reason, the end
    /// of the turn; not `MESSAGE_START`, warnings, errors, unknown events
    /// such as pings, or `TURN_RESET`): what a host reports to
    /// `ssefold_reconnector_on_content`.
    pub is_content: bool,
}

/// How a part ended (the `outcome` of a `PART_END` event; wire names
/// `complete`, `invalid_arguments`, `incomplete`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_part_outcome {
    /// Not a `PART_END` event.
    None = 0,
    /// Complete. For a tool call: its arguments are complete, valid JSON
    /// (the call is ready).
    Complete = 1,
    /// A tool call whose arguments are not valid JSON (the event's JSON
    /// form has `error` and `raw`).
    InvalidArguments = 2,
    /// The stream ended (or the turn was cut) while the part was open: a
    /// tool call with this outcome is not ready.
    Incomplete = 3,
}

/// How a tool call's input is written (wire names `json`, `text`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ssefold_tool_input_format {
    /// JSON arguments (every function / tool call): `arguments` is JSON text.
    Json = 0,
    /// Free text (an OpenAI Responses custom tool's input, the output of a
    /// grammar, not JSON): `arguments` is that text.
    Text = 1,
}

impl From<ToolInputFormat> for ssefold_tool_input_format {
    fn from(f: ToolInputFormat) -> Self {
        match f {
            ToolInputFormat::Json => ssefold_tool_input_format::Json,
            ToolInputFormat::Text => ssefold_tool_input_format::Text,
        }
    }
}

/// A tool call inside a `PART_START` / `PART_END` stream event, the same in
/// every dialect (no provider JSON needed); views valid only during the
/// callback.
///
/// On `PART_START`: what the provider sent with the start (`id` and `name`
/// absent, `ptr == NULL`, when it sent them later), `arguments` absent. On
/// `PART_END`: the whole call. `id` is the provider's, unique in the turn,
/// or, when the provider sent none or repeated an earlier call's,
/// `ssefold_call_<part>` (`_2`, `_3`… appended on a clash) with
/// `id_synthesized`; deterministic for a given stream.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_tool_call {
    /// The event is a `tool_call` part's start or end (every other member
    /// is zeroed otherwise).
    pub present: bool,
    /// The call's id (absent on `PART_START` when not known yet).
    pub id: ssefold_str,
    /// `PART_END`: whether `id` was synthesized.
    pub id_synthesized: bool,
    /// The tool's name (absent on `PART_START` when not known yet; empty
    /// when the provider sent none).
    pub name: ssefold_str,
    /// `PART_END`: the input as text: JSON for `JSON` (`{}` when the
    /// provider sent no arguments), free text for `TEXT`; the raw text
    /// received when the outcome is not `complete`. Absent on `PART_START`.
    pub arguments: ssefold_str,
    /// How the input is written.
    pub input_format: ssefold_tool_input_format,
    /// The provider runs the call itself (Anthropic server and MCP tools,
    /// Responses `mcp_call`): a host never runs it.
    pub provider_executed: bool,
}

impl ssefold_tool_call {
    /// The zeroed member of events that carry no call.
    pub(crate) const NONE: ssefold_tool_call = ssefold_tool_call {
        present: false,
        id: ssefold_str::ABSENT,
        id_synthesized: false,
        name: ssefold_str::ABSENT,
        arguments: ssefold_str::ABSENT,
        input_format: ssefold_tool_input_format::Json,
        provider_executed: false,
    };

    fn start(c: &ToolCallStart<'_>) -> Self {
        ssefold_tool_call {
            present: true,
            id: ssefold_str::from_option(c.id),
            name: ssefold_str::from_option(c.name),
            input_format: c.input_format.into(),
            provider_executed: c.provider_executed,
            ..Self::NONE
        }
    }

    fn end(c: &ToolCall<'_>) -> Self {
        ssefold_tool_call {
            present: true,
            id: ssefold_str::new(c.id),
            id_synthesized: c.id_synthesized,
            name: ssefold_str::new(c.name),
            arguments: ssefold_str::new(c.arguments),
            input_format: c.input_format.into(),
            provider_executed: c.provider_executed,
        }
    }
}

/// A tool call's argument path event inside a `TOOL_ARGS_PATH` stream
/// event, in O(1) whatever the depth: the depth and the last segment, the
/// full path on demand (`ssefold_stream_event_path`, during the callback).
/// Consecutive path events of one tool call share all but the last segment
/// of the shorter path, so a host can keep the path itself: truncate its
/// stack to `depth - 1` segments, then push `last`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ssefold_stream_path_event {
    /// What happened.
    pub kind: ssefold_path_event_kind,
    /// Number of segments of the path (0: the root value).
    pub depth: usize,
    /// The last segment of the path (key absent and index 0 at the root).
    pub last: ssefold_path_segment,
    /// `CONTAINER_START` and the `VALUE_COMPLETE` of a container: object or
    /// array (`OBJECT` otherwise).
    pub container: ssefold_container_kind,
    /// `VALUE_COMPLETE` of a container (the bracket closed).
    pub is_container: bool,
    /// `STRING_APPEND`: the newly decoded text. `VALUE_COMPLETE`: the value
    /// as JSON: a scalar's compact JSON, a container's text as received
    /// (valid JSON, whitespace kept; no copy).
    pub text: ssefold_str,
    /// Private: the path, read with `ssefold_stream_event_path`.
    pub path: *const c_void,
}

impl ssefold_stream_path_event {
    const NONE: ssefold_stream_path_event = ssefold_stream_path_event {
        kind: ssefold_path_event_kind::ContainerStart,
        depth: 0,
        last: ssefold_path_segment { key: ssefold_str::ABSENT, index: 0 },
        container: ssefold_container_kind::Object,
        is_container: false,
        text: ssefold_str::ABSENT,
        path: core::ptr::null(),
    };
}

fn c_segment(segment: &PathSegment) -> ssefold_path_segment {
    match segment {
        PathSegment::Key(k) => ssefold_path_segment { key: ssefold_str::new(k), index: 0 },
        PathSegment::Index(i) => ssefold_path_segment { key: ssefold_str::ABSENT, index: *i },
    }
}

/// The typed path event; `scratch` backs a scalar's JSON.
fn path_view(event: &PathEvent<'_>, scratch: &mut String) -> ssefold_stream_path_event {
    use ssefold_path_event_kind as K;
    let path = event.path();
    let mut v = ssefold_stream_path_event {
        depth: path.len(),
        last: path.last().map_or(ssefold_stream_path_event::NONE.last, c_segment),
        path: path.as_ptr().cast(),
        ..ssefold_stream_path_event::NONE
    };
    let array = |kind: &ContainerKind| match kind {
        ContainerKind::Object => ssefold_container_kind::Object,
        ContainerKind::Array => ssefold_container_kind::Array,
    };
    match event {
        PathEvent::ContainerStart { kind, .. } => v.container = array(kind),
        PathEvent::StringAppend { text, .. } => {
            v.kind = K::StringAppend;
            v.text = ssefold_str::new(text);
        }
        PathEvent::ValueComplete { value, .. } => {
            v.kind = K::ValueComplete;
            write_json(value, scratch);
            v.text = ssefold_str::new(scratch);
        }
        PathEvent::ContainerComplete { kind, json, .. } => {
            v.kind = K::ValueComplete;
            v.container = array(kind);
            v.is_container = true;
            v.text = ssefold_str::new(json);
        }
    }
    v
}

/// Writes segment `index` (0: outermost) of the path of a `TOOL_ARGS_PATH`
/// event to `*out`. Valid only during the callback that received `event`;
/// O(1).
///
/// # Safety
/// `event` must be NULL or the event passed to the running callback; `out`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_event_path(
    event: *const ssefold_stream_event,
    index: usize,
    out: *mut ssefold_path_segment,
) -> ssefold_result {
    ffi_panic_boundary! {
        // SAFETY: NULL or a live event by contract.
        let Some(event) = (unsafe { event.as_ref() }) else { return ssefold_result::NullParameter };
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        let p = &event.path_event;
        if event.kind != ssefold_stream_event_kind::ToolArgsPath || p.path.is_null() || index >= p.depth {
            return ssefold_result::InvalidArgument;
        }
        // SAFETY: during the callback `path` points at the parser's `depth` segments.
        let path = unsafe { core::slice::from_raw_parts(p.path.cast::<PathSegment>(), p.depth) };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, c_segment(&path[index])) };
        ssefold_result::Ok
    }
}

/// The normalized-event callback. A stream consumes each fed chunk whole,
/// so this callback cannot stop a feed (feed smaller chunks to pace it).
pub type ssefold_stream_event_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event: *const ssefold_stream_event)>;

/// A provider stream (opaque).
pub struct ssefold_stream {
    _private: [u8; 0],
}

/// The Rust side of [`ssefold_stream`].
pub(crate) struct StreamState {
    pub(super) stream: Stream,
    callback: ssefold_stream_event_callback,
    user_data: *mut c_void,
    event_json: bool,
    /// Lends each event's view (and its JSON form).
    views: EventViews,
    /// Backs the view returned by `_message_json` and `_ui_snapshot_json`.
    pub(super) message: String,
    /// Backs the view returned by `_resume_cursor`.
    cursor: ResumeCursor,
    /// The UI state model, once `ssefold_stream_enable_ui` was called.
    pub(super) ui: Option<UiState>,
    /// The host clock (`ssefold_stream_set_time`) stamped on UI updates.
    pub(super) now_ms: u64,
    /// The stream's footprint after the last `feed` (the next one's
    /// "before", for the heap trim: one computation per feed).
    footprint: usize,
}

impl Castable for ssefold_stream {
    type Inner = Handle<StreamState>;
}

pub(super) fn failure(e: &StreamError) -> Failure {
    let code = match e {
        StreamError::Sse(d) => ssefold_result::from(d),
        StreamError::EventStream(_) => ssefold_result::StreamEventStream,
        StreamError::InvalidJson { .. } => ssefold_result::StreamInvalidJson,
        StreamError::LimitExceeded { .. } => ssefold_result::StreamLimitExceeded,
        StreamError::Provider(p) if crate::reconnect::is_retryable_error_type(&p.error_type) => {
            ssefold_result::StreamRetryableProviderError
        }
        StreamError::Provider(_) => ssefold_result::StreamProviderError,
        StreamError::UnknownDialect => ssefold_result::StreamUnknownDialect,
        StreamError::DialectMismatch { .. } => ssefold_result::StreamDialectMismatch,
        StreamError::Incomplete { .. } => ssefold_result::StreamIncomplete,
        StreamError::Closed => ssefold_result::StreamClosed,
    };
    Failure::new(code, e.to_string())
}

/// What lends the C view of each stream event: the last view built, kept
/// so that a delta after a delta (nearly every event) rewrites only its
/// kind, name, part and text (the view is about 300 bytes, and its other
/// fields hold the same absent values for every delta), and the text its
/// JSON form is written to. The kept view's pointers dangle between events;
/// it is only read while lent, after its fields were written for the event.
pub(super) struct EventViews {
    /// Backs the lent view's JSON form (`event_json`).
    json: String,
    /// The view lent last (its pointers valid only while it was lent).
    last: ssefold_stream_event,
    /// `last`'s fields other than a delta's own hold a delta's values.
    plain: bool,
}

impl EventViews {
    /// Views for a new stream or turn (a delta's view ready).
    pub(super) fn new() -> Self {
        EventViews { json: String::new(), last: Self::blank_delta(), plain: true }
    }

    /// A delta's view, its own fields (kind, name, part, text) empty.
    fn blank_delta() -> ssefold_stream_event {
        ssefold_stream_event {
            kind: ssefold_stream_event_kind::TextDelta,
            name: ssefold_str::ABSENT,
            part: 0,
            text: ssefold_str::ABSENT,
            json: ssefold_str::ABSENT,
            path_event: ssefold_stream_path_event::NONE,
            mime_type: ssefold_str::ABSENT,
            data: ssefold_bytes::new(&[]),
            outcome: ssefold_part_outcome::None,
            tool_call: ssefold_tool_call::NONE,
            // Both deltas are content.
            is_content: true,
        }
    }

    /// Writes a text or argument delta's view.
    #[inline(always)]
    fn delta(&mut self, kind: ssefold_stream_event_kind, name: &'static str, part: u32, text: &str) {
        if !self.plain {
            self.last = Self::blank_delta();
            self.plain = true;
        }
        let v = &mut self.last;
        v.kind = kind;
        v.name = ssefold_str::new(name);
        v.part = part;
        v.text = ssefold_str::new(text);
    }
}

/// The view of any event.
fn view_of_any(e: &StreamEvent<'_>) -> ssefold_stream_event {
    use ssefold_stream_event_kind as K;
    let (mut data, mut mime_type) = (ssefold_bytes::new(&[]), ssefold_str::ABSENT);
    let outcome = match e {
        StreamEvent::PartEnd { outcome: PartOutcome::Complete, .. } => ssefold_part_outcome::Complete,
        StreamEvent::PartEnd { outcome: PartOutcome::InvalidArguments { .. }, .. } => {
            ssefold_part_outcome::InvalidArguments
        }
        StreamEvent::PartEnd { .. } => ssefold_part_outcome::Incomplete,
        _ => ssefold_part_outcome::None,
    };
    let tool_call = match e {
        StreamEvent::PartStart { tool_call: Some(c), .. } => ssefold_tool_call::start(c),
        StreamEvent::PartEnd { tool_call: Some(c), .. } => ssefold_tool_call::end(c),
        _ => ssefold_tool_call::NONE,
    };
    let (kind, part, text) = match *e {
        StreamEvent::MediaDelta { part, mime_type: m, data: d } => {
            data = ssefold_bytes::new(d);
            mime_type = ssefold_str::new(m);
            (K::MediaDelta, Some(part), None)
        }
        StreamEvent::MessageStart { .. } => (K::MessageStart, None, None),
        StreamEvent::PartStart { part, .. } => (K::PartStart, Some(part), None),
        StreamEvent::TextDelta { part, text } => (K::TextDelta, Some(part), Some(text)),
        StreamEvent::ToolArgsDelta { part, json } => (K::ToolArgsDelta, Some(part), Some(json)),
        StreamEvent::ToolArgsPath { part, .. } => (K::ToolArgsPath, Some(part), None),
        StreamEvent::PartMetadata { part, .. } => (K::PartMetadata, Some(part), None),
        StreamEvent::PartEnd { part, .. } => (K::PartEnd, Some(part), None),
        StreamEvent::Usage { .. } => (K::Usage, None, None),
        StreamEvent::StopReason { reason, .. } => (K::StopReason, None, Some(reason)),
        StreamEvent::TurnEnd { stop_reason } => (K::TurnEnd, None, stop_reason),
        StreamEvent::TurnReset => (K::TurnReset, None, None),
        StreamEvent::Error { error } => (K::Error, None, Some(error.message.as_str())),
        StreamEvent::Warning { message, .. } => (K::Warning, None, Some(message)),
        StreamEvent::Unknown { .. } => (K::Unknown, None, None),
    };
    ssefold_stream_event {
        kind,
        name: ssefold_str::new(e.name()),
        part: part.unwrap_or(u32::MAX),
        text: ssefold_str::from_option(text),
        json: ssefold_str::ABSENT,
        path_event: ssefold_stream_path_event::NONE,
        mime_type,
        data,
        outcome,
        tool_call,
        is_content: e.is_content(),
    }
}

impl StreamState {
    /// The event sink handed to the core: builds the view and calls back.
    fn deliver<'a>(
        callback: ssefold_stream_event_callback,
        user_data: *mut c_void,
        event_json: bool,
        views: &'a mut EventViews,
        mut ui: Option<&'a mut UiState>,
        now_ms: u64,
    ) -> impl FnMut(&StreamEvent<'_>) + 'a {
        move |e| {
            if let Some(ui) = ui.as_deref_mut() {
                ui.apply(e, now_ms);
            }
            let Some(cb) = callback else { return };
            // SAFETY: the host registered `cb` for `user_data`; the event outlives the call.
            with_event_view(e, event_json, views, |v| unsafe { cb(user_data, v) });
        }
    }
}

/// Builds the C view of `e` (its JSON form in `views` when `event_json`)
/// and lends it to `f`: the one conversion of every normalized event, for
/// streams and agent turns alike.
pub(super) fn with_event_view(
    e: &StreamEvent<'_>,
    event_json: bool,
    views: &mut EventViews,
    f: impl FnOnce(&ssefold_stream_event),
) {
    use ssefold_stream_event_kind as K;
    // Backs a path event's scalar JSON during the call.
    let mut value = String::new();
    match *e {
        StreamEvent::TextDelta { part, text } => views.delta(K::TextDelta, e.name(), part, text),
        StreamEvent::ToolArgsDelta { part, json } => views.delta(K::ToolArgsDelta, e.name(), part, json),
        _ => {
            views.last = view_of_any(e);
            views.plain = false;
            if let StreamEvent::ToolArgsPath { event, .. } = e {
                views.last.path_event = path_view(event, &mut value);
            }
        }
    }
    views.last.json = if event_json {
        write_json(&e.to_json(), &mut views.json);
        ssefold_str::new(&views.json)
    } else {
        ssefold_str::ABSENT
    };
    f(&views.last);
}

pub(super) fn config_from_c(c: &ssefold_stream_config) -> Result<StreamConfig, Failure> {
    let utf8 = ssefold_utf8_mode::from_raw(c.sse.utf8_mode).ok_or_else(|| {
        Failure::new(ssefold_result::InvalidArgument, format!("unknown utf8_mode {}", c.sse.utf8_mode))
    })?;
    let config = StreamConfig {
        sse: DecoderConfig {
            max_line_len: c.sse.max_line_len,
            max_event_size: c.sse.max_event_size,
            max_id_len: c.sse.max_id_len,
            utf8,
        },
        max_parts: c.max_parts,
        max_tool_args_bytes: c.max_tool_args_bytes,
        max_text_bytes: c.max_text_bytes,
        max_choices: c.max_choices,
        tool_input_trailing_strings: c.tool_input_trailing_strings,
        max_memory_bytes: c.max_memory_bytes,
        event_stream: DecoderLimits {
            max_message_len: c.event_stream.max_message_len,
            max_headers_len: c.event_stream.max_headers_len,
        },
        max_path_events_per_feed: c.max_path_events_per_feed,
    };
    // The ranges are the core's (`crate::config`): `0` is refused for every
    // limit but `max_path_events_per_feed`.
    config.validate().map_err(|e| Failure::new(ssefold_result::InvalidArgument, e.to_string()))?;
    Ok(config)
}

/// The provider of a `ssefold_provider` number.
pub(super) fn provider_from_c(provider: u32) -> Option<Provider> {
    match provider {
        0 => Some(Provider::Auto),
        1 => Some(Provider::Anthropic),
        2 => Some(Provider::OpenAIChat),
        3 => Some(Provider::OpenAIResponses),
        4 => Some(Provider::Gemini),
        5 => Some(Provider::Ollama),
        6 => Some(Provider::Bedrock),
        7 => Some(Provider::BedrockConverse),
        _ => None,
    }
}

/// Writes the default stream limits to `*out`.
///
/// # Safety
/// `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_config_default(out: *mut ssefold_stream_config) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, default_config()) };
        ssefold_result::Ok
    }
}

/// The default limits, as the C struct.
pub(super) fn default_config() -> ssefold_stream_config {
    let d = StreamConfig::default();
    ssefold_stream_config {
        sse: ssefold_sse_decoder_config {
            max_line_len: d.sse.max_line_len,
            max_event_size: d.sse.max_event_size,
            utf8_mode: u32::from(d.sse.utf8 == Utf8Mode::Strict),
            max_id_len: d.sse.max_id_len,
        },
        max_parts: d.max_parts,
        max_tool_args_bytes: d.max_tool_args_bytes,
        max_text_bytes: d.max_text_bytes,
        max_choices: d.max_choices,
        tool_input_trailing_strings: d.tool_input_trailing_strings,
        max_memory_bytes: d.max_memory_bytes,
        event_stream: ssefold_event_stream_limits {
            max_message_len: d.event_stream.max_message_len,
            max_headers_len: d.event_stream.max_headers_len,
        },
        max_path_events_per_feed: d.max_path_events_per_feed,
    }
}

/// Creates a stream for `provider` (a `ssefold_provider` value) with
/// `config` (NULL: the defaults) and writes it to `*out`.
///
/// # Safety
/// `config` must be NULL or readable; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_new(
    provider: u32,
    config: *const ssefold_stream_config,
    out: *mut *mut ssefold_stream,
) -> ssefold_result {
    ffi_panic_boundary! {
        if out.is_null() {
            return ssefold_result::NullParameter;
        }
        let Some(provider) = provider_from_c(provider) else { return ssefold_result::InvalidArgument };
        // SAFETY: NULL or readable by contract.
        let config = match unsafe { config.as_ref() }.map(config_from_c) {
            None => StreamConfig::default(),
            Some(Ok(c)) => c,
            Some(Err(f)) => return f.code,
        };
        let stream = Stream::with_config(provider, config);
        let state = StreamState {
            footprint: stream.memory_footprint(),
            stream,
            callback: None,
            user_data: core::ptr::null_mut(),
            event_json: false,
            views: EventViews::new(),
            message: String::new(),
            cursor: ResumeCursor::None,
            ui: None,
            now_ms: 0,
        };
        // SAFETY: non-NULL and writable by contract.
        unsafe { handle::write_out(out, Handle::into_raw(state)) };
        ssefold_result::Ok
    }
}

/// Frees a stream. NULL is a no-op.
///
/// # Safety
/// `stream` must be NULL or live, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_free(stream: *mut ssefold_stream) {
    // SAFETY: forwarded contract.
    ffi_panic_boundary! { unsafe { handle::free(stream) } }
}

/// Registers the normalized-event callback (NULL: none; the folded message
/// is still built) with its `user_data`. `event_json` asks for each event's
/// JSON form in `event->json` (it costs a serialization per event).
///
/// # Safety
/// `stream` must be NULL or live; `callback` safe to call with `user_data`
/// until replaced or the stream freed.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_set_callback(
    stream: *mut ssefold_stream,
    callback: ssefold_stream_event_callback,
    user_data: *mut c_void,
    event_json: bool,
) -> ssefold_result {
    let body = |s: &mut StreamState| {
        s.callback = callback;
        s.user_data = user_data;
        s.event_json = event_json;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// Feeds bytes of the HTTP body, calling the callback for each normalized
/// event. A failure (an SSE decoding error `SSE_*`, `STREAM_INVALID_JSON`,
/// `STREAM_LIMIT_EXCEEDED`, `STREAM_PROVIDER_ERROR` or
/// `STREAM_RETRYABLE_PROVIDER_ERROR` after an `error` event,
/// `STREAM_UNKNOWN_DIALECT`) closes the stream: later feeds return
/// `STREAM_CLOSED`, and the folded message so far stays readable.
///
/// # Safety
/// `stream` must be NULL or live; `bytes` NULL or `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_feed(
    stream: *mut ssefold_stream,
    bytes: *const u8,
    len: usize,
) -> ssefold_result {
    let body = |s: &mut StreamState| {
        // SAFETY: `len` readable bytes by contract (or NULL/0, checked by the helper).
        let chunk = unsafe { bytes_from_raw(bytes, len)? };
        let StreamState { stream, callback, user_data, event_json, views, ui, now_ms, footprint, .. } = s;
        let fed =
            stream.feed(chunk, StreamState::deliver(*callback, *user_data, *event_json, views, ui.as_mut(), *now_ms));
        // (The footprint before is the last feed's after: only a feed
        // grows or frees what the fold holds; a call between two feeds that
        // frees some leaves it high, at worst one trim more.)
        let after = stream.memory_footprint();
        super::heap::trim_after_release(*footprint, after);
        *footprint = after;
        fed.map_err(|e| failure(&e))?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// Ends the stream (the end of the HTTP body): a final event without its
/// blank line is applied when its data is complete JSON (with a warning),
/// and `STREAM_INCOMPLETE` is returned when the terminal event never came
/// (open parts are committed as incomplete first). The stream is closed.
///
/// # Safety
/// `stream` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_finish(stream: *mut ssefold_stream) -> ssefold_result {
    let body = |s: &mut StreamState| {
        let StreamState { stream, callback, user_data, event_json, views, ui, now_ms, .. } = s;
        stream
            .finish(StreamState::deliver(*callback, *user_data, *event_json, views, ui.as_mut(), *now_ms))
            .map_err(|e| failure(&e))?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// The folded message so far (also after an error) as compact JSON text:
/// what the provider's non-streaming endpoint would have returned (`null`
/// before the dialect is known). The view is owned by the stream until its
/// next call.
///
/// # Safety
/// `stream` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_message_json(
    stream: *mut ssefold_stream,
    out: *mut ssefold_str,
) -> ssefold_result {
    let body = |s: &mut StreamState| {
        check_not_null!(out);
        write_json_text(&mut s.message, JsonSource::Message(&s.stream.message_view()));
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, ssefold_str::new(&s.message)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// The dialect (the one given, or the detected one; `AUTO` until detection)
/// and whether the terminal event was seen.
///
/// # Safety
/// `stream` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_status(
    stream: *const ssefold_stream,
    provider: *mut ssefold_provider,
    is_terminated: *mut bool,
) -> ssefold_result {
    let body = |s: &StreamState| {
        check_not_null!(provider, is_terminated);
        let p = match s.stream.provider() {
            Provider::Auto => ssefold_provider::Auto,
            Provider::Anthropic => ssefold_provider::Anthropic,
            Provider::OpenAIChat => ssefold_provider::OpenaiChat,
            Provider::OpenAIResponses => ssefold_provider::OpenaiResponses,
            Provider::Gemini => ssefold_provider::Gemini,
            Provider::Ollama => ssefold_provider::Ollama,
            Provider::Bedrock => ssefold_provider::Bedrock,
            Provider::BedrockConverse => ssefold_provider::BedrockConverse,
        };
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(provider, p) };
        // SAFETY: as above.
        unsafe { handle::write_out(is_terminated, s.stream.is_terminated()) };
        Ok(())
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_ref(stream, body) }
}

/// Aborts the turn (the user cancelled): delivers one `TURN_END` event
/// (its `text` is the stop reason `"aborted"`) through the callback, and
/// closes the stream; nothing is delivered after it. Idempotent: aborting a
/// closed, finished or already aborted stream delivers nothing and returns
/// `OK` (check `ssefold_stream_is_aborted`).
///
/// # Safety
/// `stream` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_abort(stream: *mut ssefold_stream) -> ssefold_result {
    let body = |s: &mut StreamState| {
        let StreamState { stream, callback, user_data, event_json, views, ui, now_ms, .. } = s;
        stream.abort(StreamState::deliver(*callback, *user_data, *event_json, views, ui.as_mut(), *now_ms));
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// Whether the stream was aborted (`ssefold_stream_abort` delivered its
/// `TURN_END`).
///
/// # Safety
/// `stream` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_is_aborted(stream: *const ssefold_stream, out: *mut bool) -> ssefold_result {
    let body = |s: &StreamState| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, s.stream.is_aborted()) };
        Ok(())
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_ref(stream, body) }
}

/// Whether the body may end here, asked when a connection's body ends and
/// before `ssefold_stream_finish`: true when the turn ended normally (its
/// terminal event came, or `finish` ended it), or when the answer is whole
/// without a terminal event (Gemini, which has none, once every candidate
/// has its `finishReason`; Bedrock Converse after `messageStop`; Ollama on
/// a lone done line; OpenAI Chat without `[DONE]` once every choice has its
/// `finish_reason` and the usage a chunk announced came). When true, the
/// answer is complete (do not reconnect) and `ssefold_stream_finish` ends
/// the turn normally (for Chat without `[DONE]`: a `terminal_missing`
/// warning, then `TURN_END`). False after an error or an abort. Never
/// changes the stream; an event the body's end left without its blank line
/// is decided by `finish`. See `Stream::is_complete_at_end`.
///
/// # Safety
/// `stream` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_is_complete_at_end(
    stream: *const ssefold_stream,
    out: *mut bool,
) -> ssefold_result {
    let body = |s: &StreamState| {
        check_not_null!(out);
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, s.stream.is_complete_at_end()) };
        Ok(())
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_ref(stream, body) }
}

/// Call before feeding the body of a new connection (after the old one
/// broke): a partial event of the old connection is dropped, and the first
/// event of the new one decides between a restart (the server started the
/// answer over: a `TURN_RESET` event is delivered, then the turn is rebuilt)
/// and a resume (the turn continues). Send the cursor from
/// `ssefold_stream_resume_cursor` with the new request.
///
/// Errors: `STREAM_CLOSED` after `finish`, `abort` or a failure.
///
/// # Safety
/// `stream` must be NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_reconnect(stream: *mut ssefold_stream) -> ssefold_result {
    let body = |s: &mut StreamState| {
        s.stream.reconnect().map_err(|e| failure(&e))?;
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// The cursor to send when reconnecting: `STARTING_AFTER` the highest
/// Responses `sequence_number`, else the SSE `LAST_EVENT_ID`, else `NONE`.
/// The `last_event_id` view is owned by the stream until its next call.
///
/// # Safety
/// `stream` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_resume_cursor(
    stream: *mut ssefold_stream,
    out: *mut ssefold_resume_cursor,
) -> ssefold_result {
    let body = |s: &mut StreamState| {
        check_not_null!(out);
        s.cursor = s.stream.resume_cursor();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(out, cursor_view(&s.cursor)) };
        Ok(ssefold_result::Ok)
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_mut(stream, body) }
}

/// The server's reconnection time (SSE `retry:`): `*has_value` is false
/// (and `*retry_ms` 0) when it sent none.
///
/// # Safety
/// `stream` must be NULL or live; the out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_reconnection_time(
    stream: *const ssefold_stream,
    has_value: *mut bool,
    retry_ms: *mut u64,
) -> ssefold_result {
    let body = |s: &StreamState| {
        check_not_null!(has_value, retry_ms);
        let t = s.stream.reconnection_time();
        // SAFETY: non-NULL (checked) and writable by contract.
        unsafe { handle::write_out(has_value, t.is_some()) };
        // SAFETY: as above.
        unsafe { handle::write_out(retry_ms, t.unwrap_or(0)) };
        Ok(())
    };
    // SAFETY: `stream` is NULL or a live handle (contract).
    unsafe { handle::with_ref(stream, body) }
}

/// The message of the stream's last call (empty after success), as a
/// NUL-terminated view owned by the stream until its next call.
///
/// # Safety
/// `stream` must be NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssefold_stream_last_error(
    stream: *const ssefold_stream,
    out: *mut ssefold_str,
) -> ssefold_result {
    // SAFETY: forwarded contract.
    unsafe { super::write_last_error(stream, out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view's fields, its JSON form and scalar path text read as text
    /// (they lie in buffers of the views' own, at addresses of their own).
    fn described(v: &ssefold_stream_event) -> String {
        let mut copy = *v;
        // SAFETY: the view is lent: its strings are valid during the call.
        let (json, path_text) = unsafe { (v.json.to_option().unwrap(), v.path_event.text.to_option().unwrap()) };
        copy.json = ssefold_str::ABSENT;
        copy.path_event.text = ssefold_str::ABSENT;
        format!("{copy:?} json {json:?} path text {path_text:?}")
    }

    /// A view kept and rewritten for each event lends what a view built
    /// afresh lends, event after event (deltas after deltas and after other
    /// events, path events, calls' ends, with and without the JSON form),
    /// and a delta's view is the general view of it.
    #[test]
    fn kept_views_lend_what_fresh_views_lend() {
        for e in [
            StreamEvent::TextDelta { part: 3, text: "hé" },
            StreamEvent::TextDelta { part: 0, text: "" },
            StreamEvent::ToolArgsDelta { part: 7, json: "{\"a\":" },
        ] {
            let mut views = EventViews::new();
            with_event_view(&e, false, &mut views, |v| {
                assert_eq!(format!("{v:?}"), format!("{:?}", view_of_any(&e)));
            });
        }
        let body = [
            &include_bytes!("../../tests/fixtures/anthropic/interleaved_tools.sse")[..],
            &include_bytes!("../../tests/fixtures/openai_chat/parallel_tools.sse")[..],
        ];
        let mut kinds = std::collections::BTreeSet::new();
        for (body, event_json) in body.iter().flat_map(|b| [(b, false), (b, true)]) {
            let (mut kept, mut seen) = (EventViews::new(), 0);
            let mut lend = |e: &StreamEvent<'_>| {
                let mut want = String::new();
                with_event_view(e, event_json, &mut EventViews::new(), |v| want = described(v));
                with_event_view(e, event_json, &mut kept, |v| assert_eq!(described(v), want, "{e:?}"));
                kinds.insert(e.name());
                seen += 1;
            };
            let mut stream = Stream::new(Provider::Auto);
            stream.feed(body, &mut lend).unwrap();
            stream.finish(&mut lend).unwrap();
            assert!(seen > 10, "{seen}");
        }
        for kind in ["text_delta", "tool_args_delta", "tool_args_path", "part_start", "part_end"] {
            assert!(kinds.contains(kind), "{kind}: {kinds:?}");
        }
    }

    #[derive(Default)]
    struct Sink {
        json: Vec<String>,
        text: String,
    }

    unsafe extern "C" fn collect(user_data: *mut c_void, event: *const ssefold_stream_event) {
        // SAFETY: `user_data` is the Sink registered below; `event` and its views are valid during the call.
        let (sink, e) = unsafe { (&mut *user_data.cast::<Sink>(), &*event) };
        // SAFETY: as above.
        let (json, text) = unsafe { (e.json.to_option().unwrap(), e.text.to_option().unwrap()) };
        sink.json.push(json.unwrap().to_owned());
        if e.kind == ssefold_stream_event_kind::TextDelta {
            sink.text.push_str(text.unwrap());
        }
    }

    /// The corpus folded through the C ABI in 1000-byte chunks gives the
    /// events and message the Rust API gives.
    #[test]
    fn the_c_abi_folds_like_the_rust_api() {
        let body = ssefold_corpus::anthropic_tool_use(64 << 10);
        let mut want_events = Vec::new();
        let mut rust = Stream::new(Provider::Auto);
        rust.feed(&body, |e| want_events.push(e.to_json().to_string())).unwrap();
        rust.finish(|e| want_events.push(e.to_json().to_string())).unwrap();
        let mut sink = Sink::default();
        let mut s = core::ptr::null_mut();
        // SAFETY: valid pointers throughout; the handle is freed once at the end.
        let message = unsafe {
            assert_eq!(
                ssefold_stream_new(ssefold_provider::Auto as u32, core::ptr::null(), &mut s),
                ssefold_result::Ok
            );
            let ud = (&mut sink as *mut Sink).cast::<c_void>();
            assert_eq!(ssefold_stream_set_callback(s, Some(collect), ud, true), ssefold_result::Ok);
            for chunk in body.chunks(1000) {
                assert_eq!(ssefold_stream_feed(s, chunk.as_ptr(), chunk.len()), ssefold_result::Ok);
            }
            assert_eq!(ssefold_stream_finish(s), ssefold_result::Ok);
            assert_eq!(ssefold_stream_finish(s), ssefold_result::StreamClosed);
            let mut out = ssefold_str::ABSENT;
            assert_eq!(ssefold_stream_message_json(s, &mut out), ssefold_result::Ok);
            let message = out.to_option().unwrap().unwrap().to_owned();
            ssefold_stream_free(s);
            message
        };
        assert_eq!(sink.json, want_events);
        assert!(!sink.text.is_empty());
        assert_eq!(message, rust.message().to_string());
    }
}
