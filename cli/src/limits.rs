//! The limit flags of `fold` and `sse`: the library's configuration
//! (`DecoderConfig`, `StreamConfig`) under the same names, as in C, Python
//! and Go (`--max-id-len` is `max_id_len`; the underscore spelling is
//! accepted too). Sizes take a binary suffix (`64K`, `16MiB`, `1G`).

use clap::{Args, ValueEnum};
use ssefold::config::stream_limit;
use ssefold::providers::StreamConfig;
use ssefold::sse::{DecoderConfig, Utf8Mode};

/// The paragraph `--help` adds after the options.
pub const HELP: &str = "\
Limits:
  The --max-* options are the library's configuration under the same names
  (Rust DecoderConfig / StreamConfig, C ssefold_*_config, Python keyword
  arguments, Go options); --max_id_len and the like are accepted too. A
  size takes K, M or G (KiB, MiB, GiB: 64K, 16MiB). Going over a limit is
  an error on standard error and exit status 1 (the SSE decoder skips to
  the next event and goes on; a stream keeps what it folded).";

/// A size: a number of bytes or items, with an optional binary suffix.
fn size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let n: u64 = number.parse().map_err(|_| format!("{s:?} is not a size (a number, then K, M or G)"))?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => return Err(format!("unknown size suffix {other:?} (K, M or G: KiB, MiB, GiB)")),
    };
    let bytes = n.checked_mul(1 << shift).ok_or_else(|| format!("{s:?} is out of range"))?;
    usize::try_from(bytes).map_err(|_| format!("{s:?} is too large for this machine"))
}

/// A size that fits in 32 bits (the AWS event-stream lengths).
fn size32(s: &str) -> Result<u32, String> {
    size(s).and_then(|n| u32::try_from(n).map_err(|_| format!("{s:?} is over 4 GiB - 1")))
}

/// The parser of the flag of the library's limit `name`: a size, in the
/// range the library gives it (`ssefold::config`: `0` is refused for every
/// limit but `max_path_events_per_feed`), as in C, Python and Go.
fn limit(name: &'static str) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |s| {
        let n = size(s)?;
        let l = stream_limit(name).unwrap_or_else(|| panic!("no library limit {name}"));
        l.check(n as u64).map_err(|e| e.to_string())?;
        Ok(n)
    }
}

/// [`limit`] for a 32-bit limit (the AWS event-stream lengths).
fn limit32(name: &'static str) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
    move |s| {
        let n = size32(s)?;
        limit(name)(s)?;
        Ok(n)
    }
}

/// `--utf8` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Utf8Arg {
    /// Replace invalid UTF-8 with U+FFFD (what the standard says)
    Replace,
    /// Refuse an event with invalid UTF-8 (an error, decoding goes on)
    Strict,
}

/// The SSE decoder's limits (`DecoderConfig`).
#[derive(Debug, Args)]
#[command(next_help_heading = "SSE decoder limits")]
pub struct DecoderArgs {
    /// Longest line accepted, in bytes, line end excluded
    #[arg(long, alias = "max_line_len", value_name = "SIZE", value_parser = limit("max_line_len"),
          default_value_t = DecoderConfig::default().max_line_len)]
    pub max_line_len: usize,
    /// Largest data of one event, in bytes
    #[arg(long, alias = "max_event_size", value_name = "SIZE", value_parser = limit("max_event_size"),
          default_value_t = DecoderConfig::default().max_event_size)]
    pub max_event_size: usize,
    /// Longest id accepted, in bytes (a longer one is an error; the id in force is kept)
    #[arg(long, alias = "max_id_len", value_name = "SIZE", value_parser = limit("max_id_len"),
          default_value_t = DecoderConfig::default().max_id_len)]
    pub max_id_len: usize,
    /// What invalid UTF-8 becomes
    #[arg(long, value_enum, default_value_t = Utf8Arg::Replace)]
    pub utf8: Utf8Arg,
}

impl DecoderArgs {
    /// The decoder configuration the flags give.
    pub fn config(&self) -> DecoderConfig {
        DecoderConfig {
            max_line_len: self.max_line_len,
            max_event_size: self.max_event_size,
            max_id_len: self.max_id_len,
            utf8: match self.utf8 {
                Utf8Arg::Replace => Utf8Mode::Replace,
                Utf8Arg::Strict => Utf8Mode::Strict,
            },
        }
    }
}

/// A provider stream's limits (`StreamConfig`, less the SSE decoder's).
#[derive(Debug, Args)]
#[command(next_help_heading = "Stream limits")]
pub struct StreamArgs {
    /// Most parts (blocks, tool calls, items) per stream
    #[arg(long, alias = "max_parts", value_name = "N", value_parser = limit("max_parts"),
          default_value_t = StreamConfig::default().max_parts)]
    pub max_parts: usize,
    /// Most bytes of one tool call's arguments
    #[arg(long, alias = "max_tool_args_bytes", value_name = "SIZE", value_parser = limit("max_tool_args_bytes"),
          default_value_t = StreamConfig::default().max_tool_args_bytes)]
    pub max_tool_args_bytes: usize,
    /// Most bytes of text in one part
    #[arg(long, alias = "max_text_bytes", value_name = "SIZE", value_parser = limit("max_text_bytes"),
          default_value_t = StreamConfig::default().max_text_bytes)]
    pub max_text_bytes: usize,
    /// Most choices (OpenAI `n`)
    #[arg(long, alias = "max_choices", value_name = "N", value_parser = limit("max_choices"),
          default_value_t = StreamConfig::default().max_choices)]
    pub max_choices: usize,
    /// Most bytes the stream may hold (texts, tool arguments, what they become)
    #[arg(long, alias = "max_memory_bytes", value_name = "SIZE", value_parser = limit("max_memory_bytes"),
          default_value_t = StreamConfig::default().max_memory_bytes)]
    pub max_memory_bytes: usize,
    /// Most tool_args_path events of one chunk (past it: dropped, one warning)
    #[arg(long, alias = "max_path_events_per_feed", value_name = "N", value_parser = limit("max_path_events_per_feed"),
          default_value_t = StreamConfig::default().max_path_events_per_feed)]
    pub max_path_events_per_feed: usize,
    /// Longest AWS event-stream message (Bedrock), in bytes
    #[arg(long, alias = "max_event_stream_message_len", value_name = "SIZE", value_parser = limit32("max_event_stream_message_len"),
          default_value_t = StreamConfig::default().event_stream.max_message_len)]
    pub max_event_stream_message_len: u32,
    /// Longest AWS event-stream headers section (Bedrock), in bytes
    #[arg(long, alias = "max_event_stream_headers_len", value_name = "SIZE", value_parser = limit32("max_event_stream_headers_len"),
          default_value_t = StreamConfig::default().event_stream.max_headers_len)]
    pub max_event_stream_headers_len: u32,
    /// Keep an unfinished trailing string of a partial Anthropic tool input in the message
    #[arg(long, alias = "tool_input_trailing_strings")]
    pub tool_input_trailing_strings: bool,
}

impl StreamArgs {
    /// The stream configuration the flags give, with the decoder's.
    pub fn config(&self, sse: DecoderConfig) -> StreamConfig {
        let mut c = StreamConfig {
            sse,
            max_parts: self.max_parts,
            max_tool_args_bytes: self.max_tool_args_bytes,
            max_text_bytes: self.max_text_bytes,
            max_choices: self.max_choices,
            max_memory_bytes: self.max_memory_bytes,
            tool_input_trailing_strings: self.tool_input_trailing_strings,
            max_path_events_per_feed: self.max_path_events_per_feed,
            ..StreamConfig::default()
        };
        c.event_stream.max_message_len = self.max_event_stream_message_len;
        c.event_stream.max_headers_len = self.max_event_stream_headers_len;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes_and_refuse_nonsense() {
        assert_eq!(size("4096"), Ok(4096));
        assert_eq!(size("64K"), Ok(64 << 10));
        assert_eq!(size("16MiB"), Ok(16 << 20));
        assert_eq!(size("2 mb"), Ok(2 << 20));
        assert_eq!(size("1G"), Ok(1 << 30));
        for bad in ["", "-1", "1.5M", "12X", "K", "99999999999999999999"] {
            assert!(size(bad).is_err(), "{bad:?}");
        }
        // The ranges are the library's: 0 is refused but for the path event budget.
        assert_eq!(limit("max_parts")("0K"), Err("max_parts must be at least 1, got 0".to_owned()));
        assert_eq!(limit("max_path_events_per_feed")("0"), Ok(0));
        assert_eq!(
            limit32("max_event_stream_headers_len")("0"),
            Err("max_event_stream_headers_len must be at least 1, got 0".to_owned())
        );
        assert_eq!(size32("4G"), Err("\"4G\" is over 4 GiB - 1".to_owned()));
        assert_eq!(size32("16M"), Ok(16 << 20));
    }

    #[test]
    fn the_defaults_are_the_librarys() {
        use clap::Parser;
        #[derive(Parser)]
        struct Both {
            #[command(flatten)]
            d: DecoderArgs,
            #[command(flatten)]
            s: StreamArgs,
        }
        let b = Both::parse_from(["x"]);
        assert_eq!(b.s.config(b.d.config()), StreamConfig::default());
        let b = Both::parse_from(["x", "--max-id-len", "8K", "--max_memory_bytes", "1M", "--utf8", "strict"]);
        let c = b.s.config(b.d.config());
        assert_eq!((c.sse.max_id_len, c.max_memory_bytes, c.sse.utf8), (8192, 1 << 20, Utf8Mode::Strict));
    }
}
