//! The relay's settings: the browser protocol it writes ([`RelayFormat`]) and
//! the bounds and timings of its output ([`RelayConfig`]).

/// The browser protocol a [`Relay`](super::Relay) writes. Wire names: `ai-sdk`, `catalog`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RelayFormat {
    /// The Vercel AI SDK's UI message stream protocol (v1).
    AiSdk,
    /// Named events of the agent-backend catalog (README, "Relay").
    Catalog,
}

impl RelayFormat {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            RelayFormat::AiSdk => "ai-sdk",
            RelayFormat::Catalog => "catalog",
        }
    }

    /// Parses a wire name (`ai_sdk` is accepted too).
    pub fn from_name(name: &str) -> Option<RelayFormat> {
        match name {
            "ai-sdk" | "ai_sdk" => Some(RelayFormat::AiSdk),
            "catalog" => Some(RelayFormat::Catalog),
            _ => None,
        }
    }
}

/// Settings of a [`Relay`](super::Relay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayConfig {
    /// The protocol written.
    pub format: RelayFormat,
    /// Bytes of recent frames kept for [`Relay::replay_after`](super::Relay::replay_after) (default
    /// [`RelayConfig::DEFAULT_REPLAY_BYTES`]; 0 keeps none). The buffer
    /// holding them (and the output of the current call, written after
    /// them) never exceeds twice this plus that output (dropped frames are
    /// cut away in bulk, so that each byte is moved at most once).
    pub replay_bytes: usize,
    /// A keep-alive comment is due after this long without output (default
    /// 15 s, below the idle timeouts of common proxies).
    pub keep_alive_ms: u64,
    /// AI SDK format: a tool call's argument deltas are held back and
    /// written as one `tool-input-delta` once this many bytes of it are
    /// held, as written (JSON-escaped) (0: every delta is its own chunk, as
    /// the provider sent it). The
    /// browser's `useChat` parses a call's whole input text again on every
    /// delta (quadratic in the input's size: seconds for a few hundred KB
    /// sent in the usual few-byte deltas), so fewer, larger deltas are
    /// cheaper for it; the default
    /// ([`RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_BYTES`], 4 KiB) makes a
    /// 320 KB argument 80 parses instead of thousands, and is small next to
    /// a frame of text. Held text is never lost or reordered: it is
    /// written before any other frame, at the call's end, and by
    /// [`Relay::tick`](super::Relay::tick) once
    /// [`tool_input_coalesce_ms`](Self::tool_input_coalesce_ms) have passed ([`Relay::flush`](super::Relay::flush) writes it at once).
    pub tool_input_coalesce_bytes: usize,
    /// AI SDK format: the longest argument text is held back, by the host's
    /// clock given to [`Relay::tick`](super::Relay::tick) (default
    /// [`RelayConfig::DEFAULT_TOOL_INPUT_COALESCE_MS`], 50 ms: under the
    /// ~100 ms a reader notices, and 20 updates a second of a call's input
    /// is as smooth as a UI shows it). 0: every [`Relay::tick`](super::Relay::tick) writes what
    /// is held. The relay reads no clock: without ticks, held text waits
    /// for the byte limit, another frame or the call's end.
    pub tool_input_coalesce_ms: u64,
}

impl RelayConfig {
    /// Default [`RelayConfig::replay_bytes`]: 1 MiB.
    pub const DEFAULT_REPLAY_BYTES: usize = 1 << 20;
    /// Default [`RelayConfig::keep_alive_ms`]: 15 s.
    pub const DEFAULT_KEEP_ALIVE_MS: u64 = 15_000;
    /// Default [`RelayConfig::tool_input_coalesce_bytes`]: 4 KiB.
    pub const DEFAULT_TOOL_INPUT_COALESCE_BYTES: usize = 4096;
    /// Default [`RelayConfig::tool_input_coalesce_ms`]: 50 ms.
    pub const DEFAULT_TOOL_INPUT_COALESCE_MS: u64 = 50;

    /// The defaults with `format`.
    pub fn new(format: RelayFormat) -> Self {
        RelayConfig {
            format,
            replay_bytes: Self::DEFAULT_REPLAY_BYTES,
            keep_alive_ms: Self::DEFAULT_KEEP_ALIVE_MS,
            tool_input_coalesce_bytes: Self::DEFAULT_TOOL_INPUT_COALESCE_BYTES,
            tool_input_coalesce_ms: Self::DEFAULT_TOOL_INPUT_COALESCE_MS,
        }
    }
}
