//! The `ssefold` command line: the library's pipeline on files, pipes and an
//! embedded example stream. `ssefold --help` and `ssefold COMMAND --help`
//! document every command, its output and its exit statuses.

mod fold;
mod interactive;
mod keys;
mod limits;
mod render;
mod sse;
mod warnings;

use std::fs::File;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ssefold::providers::Provider;

/// The exit statuses, the same for every command.
pub mod exit {
    /// A decoding, provider or I/O error (reported on standard error).
    pub const FAILURE: u8 = 1;
    /// The stream ended inside an event, or before its terminal event.
    pub const TRUNCATED: u8 = 3;
    /// The user cancelled the turn (Esc twice, or Ctrl-C, on a terminal).
    pub const CANCELLED: u8 = 130;
}

const EXIT_STATUS: &str = "\
Exit status:
  0    the stream was decoded (and folded) and ended cleanly
  1    a decoding, provider or I/O error (reported on standard error)
  2    a usage error (unknown command or option, bad value)
  3    the stream ended inside an event or before its terminal event
  130  the turn was cancelled on the terminal (Esc twice, or Ctrl-C)";

const FOLD_HELP: &str = "\
Output:
  Standard output holds only the result, so it can be piped (e.g. to jq):
  the folded message as pretty JSON (what the provider's non-streaming
  endpoint returns), or with --jsonl one normalized event per line
  ({\"event\": \"text_delta\", ...}) and, as the last line, the message.
  The live render (text as it streams, [thinking] dimmed, each tool call on
  a line of its own, updated in place on a terminal) goes to standard output
  when it is a terminal, before the message; else to standard error.
  Warnings go to standard error: the first 3 of each code, then a count.
  A --provider other than the stream's dialect fails at the first event
  (status 1), naming the dialect seen: try --provider auto.

On a terminal:
  a spinner turns while the stream is quiet; Esc twice within a second (or
  Ctrl-C) aborts the turn and prints the partial message. Keys are read from
  the terminal even when the stream comes through a pipe.

";

/// Server-Sent Events for LLM streams: decode, fold, render.
#[derive(Debug, Parser)]
#[command(name = "ssefold", version, propagate_version = true, after_help = EXIT_STATUS)]
#[command(arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay an embedded Anthropic stream (text, a tool call, usage) through `fold`
    #[command(
        long_about = "Replay an embedded Anthropic stream (text, a tool call, usage) at a realistic pace \
                      through `fold`: the answer renders live, then the folded message.",
        after_help = format!("{FOLD_HELP}{EXIT_STATUS}")
    )]
    Demo(DemoArgs),
    /// Fold a provider stream into its final message, rendering it live
    #[command(
        long_about = "Fold a provider stream (Anthropic Messages, OpenAI Chat Completions, OpenAI \
                      Responses) from FILE or standard input into the message the provider's \
                      non-streaming endpoint would have returned, rendering it live as it arrives.",
        after_help = format!("{FOLD_HELP}{}\n\n{EXIT_STATUS}", limits::HELP)
    )]
    Fold(FoldArgs),
    /// Decode SSE and print one JSON object per event (JSON Lines)
    #[command(
        long_about = "Decode Server-Sent Events (WHATWG) from FILE or standard input and print one \
                      JSON object per event, flushed as events are dispatched.",
        after_help = format!(
            "Output:\n  one line per event: {{\"event\": str, \"data\": str, \"id\": str|null, \"retry\": int|null}}\n  \
             decoding errors on standard error (decoding goes on; exit status 1)\n\n{}\n\n{EXIT_STATUS}",
            limits::HELP
        )
    )]
    Sse(SseArgs),
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// Replay the stream at once instead of at a realistic pace
    #[arg(long)]
    fast: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Args)]
struct FoldArgs {
    /// The provider's stream dialect
    #[arg(short, long, value_enum, default_value_t = ProviderArg::Auto)]
    provider: ProviderArg,
    /// The stream ('-' or none: standard input)
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    decoder: limits::DecoderArgs,
    #[command(flatten)]
    stream: limits::StreamArgs,
}

#[derive(Debug, Args)]
struct OutputArgs {
    /// Print the normalized events as JSON Lines, then the message
    #[arg(long)]
    jsonl: bool,
    /// No live render (standard output gets the message alone in any case)
    #[arg(long)]
    no_render: bool,
}

#[derive(Debug, Args)]
struct SseArgs {
    /// The stream ('-' or none: standard input)
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    #[command(flatten)]
    decoder: limits::DecoderArgs,
}

/// `--provider` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProviderArg {
    /// Detect the dialect from the first event
    Auto,
    /// Anthropic Messages
    Anthropic,
    /// OpenAI Chat Completions (and compatible providers)
    #[value(alias = "openai_chat", alias = "openai", alias = "chat")]
    OpenaiChat,
    /// OpenAI Responses
    #[value(alias = "openai_responses", alias = "responses")]
    OpenaiResponses,
    /// Google Gemini API and Vertex AI
    #[value(alias = "vertex", alias = "google")]
    Gemini,
    /// Ollama's native chat API (newline-delimited JSON)
    Ollama,
    /// Amazon Bedrock InvokeModelWithResponseStream, Anthropic models (AWS event stream)
    #[value(
        alias = "bedrock_invoke",
        alias = "bedrock-invoke",
        alias = "bedrock_anthropic",
        alias = "bedrock-anthropic"
    )]
    Bedrock,
    /// Amazon Bedrock ConverseStream (AWS event stream)
    #[value(alias = "bedrock_converse", alias = "converse")]
    BedrockConverse,
}

impl From<ProviderArg> for Provider {
    fn from(p: ProviderArg) -> Provider {
        match p {
            ProviderArg::Auto => Provider::Auto,
            ProviderArg::Anthropic => Provider::Anthropic,
            ProviderArg::OpenaiChat => Provider::OpenAIChat,
            ProviderArg::OpenaiResponses => Provider::OpenAIResponses,
            ProviderArg::Gemini => Provider::Gemini,
            ProviderArg::Ollama => Provider::Ollama,
            ProviderArg::Bedrock => Provider::Bedrock,
            ProviderArg::BedrockConverse => Provider::BedrockConverse,
        }
    }
}

/// The embedded example: a realistic Anthropic Messages stream with text, a
/// tool call and usage.
const DEMO_STREAM: &[u8] = include_bytes!("demo.sse");

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Sse(a) => sse::run(a.file, a.decoder.config()),
        Command::Fold(a) => {
            let opts = fold::Options {
                provider: a.provider.into(),
                jsonl: a.output.jsonl,
                render: !a.output.no_render,
                config: a.stream.config(a.decoder.config()),
            };
            let input = match a.file {
                None => fold::Input::Stdin,
                Some(p) if p.as_os_str() == "-" => fold::Input::Stdin,
                Some(p) => match File::open(&p) {
                    Ok(f) => fold::Input::Reader(Box::new(f)),
                    Err(e) => {
                        eprintln!("ssefold fold: {}: {e}", p.display());
                        return ExitCode::from(exit::FAILURE);
                    }
                },
            };
            fold::run(input, opts)
        }
        Command::Demo(a) => {
            let pause = (!a.fast).then(|| std::time::Duration::from_millis(35));
            let opts = fold::Options {
                provider: Provider::Auto,
                jsonl: a.output.jsonl,
                render: !a.output.no_render,
                config: Default::default(),
            };
            fold::run(fold::Input::Reader(Box::new(Paced { rest: DEMO_STREAM, pause })), opts)
        }
    }
}

/// A reader that hands out at most 97 bytes per read (pieces that do not
/// line up with events), sleeping before each: a stream at a realistic pace.
struct Paced {
    rest: &'static [u8],
    pause: Option<std::time::Duration>,
}

impl std::io::Read for Paced {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.rest.is_empty() {
            return Ok(0);
        }
        if let Some(p) = self.pause {
            std::thread::sleep(p);
        }
        let n = buf.len().min(97).min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn provider_names_match_the_library() {
        for p in ProviderArg::value_variants() {
            let name = p.to_possible_value().unwrap().get_name().to_owned();
            assert_eq!(Provider::from_name(&name), Some(Provider::from(*p)), "{name}");
        }
    }
}
