//! What a [`Stream`](super::Stream)(super::Stream) is made with: its limits and options
//! ([`StreamConfig`]) and their names ([`StreamLimit`]).

use crate::eventstream::DecoderLimits;
use crate::sse::DecoderConfig;

/// Limits and options of a [`Stream`](super::Stream). Every limit is checked; exceeding one
/// is a [`StreamError::LimitExceeded`](super::StreamError::LimitExceeded), never unbounded memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamConfig {
    /// The SSE decoder's limits.
    pub sse: DecoderConfig,
    /// Most parts (blocks, tool calls, Responses items and sub-parts) per
    /// stream. Default 4096.
    pub max_parts: usize,
    /// Most bytes of one tool call's raw arguments. Default 16 MiB.
    pub max_tool_args_bytes: usize,
    /// Most bytes of text in one part (a media part: of its base64 text).
    /// Default 64 MiB.
    pub max_text_bytes: usize,
    /// Most choices (OpenAI `n`). Default 128.
    pub max_choices: usize,
    /// How the folded message shows a tool input that is still streaming,
    /// cut off or invalid (Anthropic; see [`anthropic`](super::anthropic)): `false` (default,
    /// the official SDK's default, jiter `partial_mode=True`) drops an
    /// unfinished trailing string together with its key; `true` keeps it with
    /// the text so far (jiter `partial_mode="trailing-strings"`, what the SDK
    /// does when the request carried `anthropic-beta:
    /// fine-grained-tool-streaming-2025-05-14`). Never changes whether a
    /// tool call is ready.
    pub tool_input_trailing_strings: bool,
    /// Most bytes the stream may hold: everything it keeps — texts, tool
    /// arguments (their text and parser), media, and every value a dialect
    /// keeps (top-level, choice, candidate and delta members, signatures,
    /// citations, whole and committed parts, done items, usage). The parts
    /// are checked every 16 KiB received; the dialect's values are measured
    /// after an event whenever what arrived since (each byte at most 160
    /// bytes of tree) might reach the limit, at least every 64 KiB, so the
    /// stream goes past it by at most ~10 MiB; an event over 64 KiB is
    /// estimated against what is left before it is parsed. Over it:
    /// [`StreamError::LimitExceeded`](super::StreamError::LimitExceeded) `max_memory_bytes`, with everything
    /// folded so far kept. A tool input whose tree would cost more than a
    /// sixteenth of it (Anthropic, Bedrock) is kept as its text (see
    /// [`MessageView`](super::MessageView)). Default 128 MiB.
    pub max_memory_bytes: usize,
    /// The AWS event-stream framing's limits (Bedrock): the longest message
    /// and headers section accepted (defaults 16 MiB and 128 KiB, the AWS
    /// limits). Over one: [`StreamError::EventStream`](super::StreamError::EventStream) (`MessageTooLarge`,
    /// `HeadersTooLarge`).
    pub event_stream: DecoderLimits,
    /// Most `tool_args_path` events one call of the stream (a `feed`, a
    /// `finish`) emits: past it, that call's other path events are dropped,
    /// with one `path_events_dropped` warning (the arguments' text in the
    /// `tool_args_delta`s, and the fold, stay complete). A host that holds a
    /// call's events at once (the Python and Go `feed` return them as a
    /// list) thus holds at most this many, however much argument text one
    /// chunk carries (whole arguments in one delta: one path event per
    /// token). Default 16,384 (more than a 16 KiB chunk can hold). `0`:
    /// no path events (each call that had some warns once, as above).
    pub max_path_events_per_feed: usize,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            sse: DecoderConfig::default(),
            max_parts: 4096,
            max_tool_args_bytes: 16 << 20,
            max_text_bytes: 64 << 20,
            max_choices: 128,
            tool_input_trailing_strings: false,
            max_memory_bytes: 128 << 20,
            event_stream: DecoderLimits::default(),
            max_path_events_per_feed: 16_384,
        }
    }
}

impl StreamConfig {
    /// Checks every limit against its range ([`crate::config`]: `0` is
    /// refused for every limit but `max_path_events_per_feed`). A stream
    /// made with a config that fails this still runs, refusing what goes
    /// over the limit; the C ABI, Python and Go refuse to make it.
    pub fn validate(&self) -> Result<(), crate::config::ConfigError> {
        for l in crate::config::STREAM_LIMITS {
            l.check((l.get)(self))?;
        }
        Ok(())
    }
}

/// A limit of [`StreamConfig`], as named by [`StreamError::LimitExceeded`](super::StreamError::LimitExceeded).
/// Its wire name ([`StreamLimit::name`]) is the config field's name, which
/// the C ABI, Python and Go report. New limits may be added in minor releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamLimit {
    /// [`StreamConfig::max_parts`].
    MaxParts,
    /// [`StreamConfig::max_tool_args_bytes`].
    MaxToolArgsBytes,
    /// [`StreamConfig::max_text_bytes`].
    MaxTextBytes,
    /// [`StreamConfig::max_choices`].
    MaxChoices,
    /// [`StreamConfig::max_memory_bytes`].
    MaxMemoryBytes,
    /// The SSE decoder's `max_line_len` (`StreamConfig::sse`), which also
    /// bounds a line of a newline-delimited JSON body.
    MaxLineLen,
}

impl StreamLimit {
    /// The wire name: the [`StreamConfig`] field's name (`max_parts`, …).
    pub fn name(self) -> &'static str {
        match self {
            StreamLimit::MaxParts => "max_parts",
            StreamLimit::MaxToolArgsBytes => "max_tool_args_bytes",
            StreamLimit::MaxTextBytes => "max_text_bytes",
            StreamLimit::MaxChoices => "max_choices",
            StreamLimit::MaxMemoryBytes => "max_memory_bytes",
            StreamLimit::MaxLineLen => "max_line_len",
        }
    }

    /// The wire name: the old name of [`name`](Self::name).
    #[deprecated(note = "use `name()`: every enum's wire name is `name()`")]
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

impl std::fmt::Display for StreamLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
