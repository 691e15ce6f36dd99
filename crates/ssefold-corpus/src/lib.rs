//! Deterministic synthetic LLM streams, for ssefold's benchmarks, tests and
//! the other language bindings' benchmarks. A development crate, not part of
//! the library: its binary (`cargo run -p ssefold-corpus -- NAME BYTES`)
//! writes [`by_name`] to stdout, so the Python and Go benchmarks decode the
//! very same bytes.
//!
//! Every corpus is a **concatenation of whole turns**: each turn is one
//! complete streamed response as the provider sends it, and the next turn's
//! first event follows the previous turn's last event directly (nothing in
//! between). Decode a corpus as one stream; a provider layer folding it sees
//! one message per turn.
//!
//! The bytes depend only on the corpus name and the target size: a small
//! built-in PRNG (SplitMix64, fixed seed per corpus) drives every choice, so
//! the same call gives the same bytes on every machine and every run. The
//! size is near the target: the last turn is shortened so the corpus ends
//! within a few KiB above `target_bytes` (and always holds at least one
//! whole turn).
//!
//! Shapes (each SSE event is written as `event: X\ndata: {json}\n\n` for
//! Anthropic and `data: {json}\n\n` for OpenAI; all lines end with LF):
//!
//! * [`anthropic_text`]: Anthropic Messages text turns: `message_start`
//!   (id `msg_…`, model, empty content, null stop reason, usage),
//!   `content_block_start` (text), an early `ping` and occasional later ones,
//!   many `content_block_delta` / `text_delta` events of 3–30 bytes of
//!   English-like text (with occasional newlines, quotes, backslashes,
//!   non-ASCII such as `é` and emoji), `content_block_stop`, `message_delta`
//!   (stop reason `end_turn`, output tokens) and `message_stop`.
//! * [`anthropic_tool_use`]: Anthropic turns with a short text block, then one
//!   or two `tool_use` blocks whose `input_json_delta` fragments (5–40 bytes
//!   of `partial_json`, split anywhere except inside a UTF-8 character, so
//!   also inside escapes; after a first empty one, as the API sends, and the
//!   last one possibly shorter) build
//!   a large input `{"path": "src/….rs", "content": "<KBs of escaped source>"}`;
//!   stop reason `tool_use`.
//! * [`anthropic_tool_stress`]: the stress case for tool arguments: turns of
//!   one or two `tool_use` blocks (no text) whose input
//!   `{"path": …, "mode": "overwrite", "lines": ["…", "…", …]}` holds one
//!   short string per source line (hundreds per block), streamed in the same
//!   5–40-byte fragments: many small values, so many path events.
//! * [`openai_chat_parallel_tools`]: OpenAI Chat Completions chunks: a role
//!   chunk, some content deltas, 2–3 parallel `tool_calls` (a first fragment
//!   with index, id, type, function name and empty arguments, then argument
//!   fragments interleaved across indexes), a `finish_reason: "tool_calls"`
//!   chunk, a usage chunk with `"choices":[]`, then `data: [DONE]` (the only
//!   data that is not JSON).
//! * [`bedrock_converse`]: Amazon Bedrock `ConverseStream` turns in the AWS
//!   event-stream binary framing (not SSE; not cut by [`turns`]): see its
//!   docs.

mod bedrock;
pub use bedrock::bedrock_converse;

/// Names of the SSE corpora accepted by [`by_name`], in a stable order.
pub const NAMES: [&str; 4] = ["anthropic-text", "anthropic-tool-use", "openai-chat", "anthropic-tool-stress"];

/// Names of the AWS event-stream corpora accepted by [`by_name`].
pub const EVENTSTREAM_NAMES: [&str; 1] = ["bedrock-converse"];

/// The corpus called `name` (one of [`NAMES`] or [`EVENTSTREAM_NAMES`]) of about `target_bytes`
/// bytes, or `None` for an unknown name.
pub fn by_name(name: &str, target_bytes: usize) -> Option<Vec<u8>> {
    match name {
        "anthropic-text" => Some(anthropic_text(target_bytes)),
        "anthropic-tool-use" => Some(anthropic_tool_use(target_bytes)),
        "openai-chat" => Some(openai_chat_parallel_tools(target_bytes)),
        "anthropic-tool-stress" => Some(anthropic_tool_stress(target_bytes)),
        "bedrock-converse" => Some(bedrock_converse(target_bytes)),
        _ => None,
    }
}

/// The corpus split into its turns, in order: each ends with its terminal
/// event (`message_stop` or `data: [DONE]`) and that event's blank line, as
/// one HTTP response would; bytes after the last terminal event, if any,
/// form a last part. The benchmarks fold each turn with a fresh stream.
pub fn turns(corpus: &[u8]) -> Vec<&[u8]> {
    const ENDS: [&[u8]; 2] = [b"data: {\"type\":\"message_stop\"}\n\n", b"data: [DONE]\n\n"];
    let mut cuts: Vec<usize> =
        ENDS.iter().flat_map(|end| memchr::memmem::find_iter(corpus, end).map(|i| i + end.len())).collect();
    cuts.sort_unstable();
    let mut start = 0;
    let mut out = Vec::with_capacity(cuts.len() + 1);
    for cut in cuts.into_iter().chain((!corpus.is_empty()).then_some(corpus.len())) {
        if cut > start {
            out.push(&corpus[start..cut]);
            start = cut;
        }
    }
    out
}

/// Anthropic Messages text turns of about `target_bytes` bytes (see the
/// [module docs](self) for the shape).
pub fn anthropic_text(target_bytes: usize) -> Vec<u8> {
    let mut g = Gen::new(0x5353_4546_4f4c_4401, target_bytes);
    while g.wants_turn() {
        g.anthropic_message_start();
        let deltas = g.rng.range(40, 440);
        g.anthropic_text_block(0, deltas);
        g.anthropic_message_end("end_turn");
    }
    g.out
}

/// Anthropic Messages tool-use turns of about `target_bytes` bytes (see the
/// [module docs](self) for the shape).
pub fn anthropic_tool_use(target_bytes: usize) -> Vec<u8> {
    let mut g = Gen::new(0x5353_4546_4f4c_4402, target_bytes);
    while g.wants_turn() {
        g.anthropic_message_start();
        let deltas = g.rng.range(2, 11);
        g.anthropic_text_block(0, deltas);
        let tools = g.rng.range(1, 2);
        for index in 1..=tools {
            g.anthropic_tool_block(index, false);
        }
        g.anthropic_message_end("tool_use");
    }
    g.out
}

/// The stress case of tool arguments: Anthropic turns of one or two
/// `tool_use` blocks whose input is an array of many short strings, about
/// `target_bytes` bytes (see the [module docs](self)).
pub fn anthropic_tool_stress(target_bytes: usize) -> Vec<u8> {
    let mut g = Gen::new(0x5353_4546_4f4c_4404, target_bytes);
    while g.wants_turn() {
        g.anthropic_message_start();
        let tools = g.rng.range(1, 2);
        for index in 0..tools {
            g.anthropic_tool_block(index, true);
        }
        g.anthropic_message_end("tool_use");
    }
    g.out
}

/// OpenAI Chat Completions turns with parallel tool calls, of about
/// `target_bytes` bytes (see the [module docs](self) for the shape).
pub fn openai_chat_parallel_tools(target_bytes: usize) -> Vec<u8> {
    let mut g = Gen::new(0x5353_4546_4f4c_4403, target_bytes);
    while g.wants_turn() {
        g.openai_turn();
    }
    g.out
}

/// SplitMix64: tiny, fast, good enough for synthetic text, and the same on
/// every platform.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// In `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below((hi - lo + 1) as u64) as usize
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "be",
    "on",
    "not",
    "this",
    "are",
    "by",
    "can",
    "which",
    "from",
    "or",
    "an",
    "you",
    "we",
    "will",
    "if",
    "function",
    "value",
    "stream",
    "data",
    "event",
    "parser",
    "buffer",
    "request",
    "response",
    "model",
    "token",
    "message",
    "example",
    "because",
    "however",
    "should",
    "would",
    "could",
    "first",
    "second",
    "then",
    "return",
    "error",
    "result",
    "string",
    "number",
    "array",
    "object",
    "field",
    "line",
    "chunk",
    "server",
    "client",
    "memory",
    "performance",
    "simple",
    "important",
    "large",
    "small",
    "different",
    "following",
    "between",
    "without",
    "through",
    "approach",
    "question",
    "answer",
    "code",
    "Rust",
    "Python",
    "JSON",
    "HTTP",
    "API",
    "time",
    "way",
    "case",
    "point",
    "part",
    "state",
    "input",
    "output",
    "café",
    "naïve",
    "résumé",
    "Zürich",
    "façade",
    "über",
];

const PUNCT: &[&str] = &[".", ",", ":", ";", "!", "?", " —", " (", ")"];

const SPECIAL: &[&str] =
    &["\n", "\n\n", "\n- ", "\n1. ", " \"", "\"", " `", "`", " 🙂", " 🚀", " →", " ✓", " 日本語", "\t", " \\n", " '"];

const TOOL_NAMES: &[&str] = &["get_weather", "search_files", "read_file", "run_command", "lookup_user", "get_time"];

const LIGHT_TOOL_NAMES: &[&str] = &["get_weather", "get_time"];

const CITIES: &[&str] = &["Paris, France", "São Paulo, Brazil", "Tokyo, Japan", "Zürich, Switzerland", "Austin, TX"];

const CODE_LINES: &[&str] = &[
    "use std::collections::HashMap;",
    "use std::io::{self, Read, Write};",
    "",
    "/// Parses one line of the \"event stream\" format.",
    "pub fn parse_line(line: &str) -> Option<(&str, &str)> {",
    "    let (name, value) = line.split_once(':')?;",
    "    Some((name, value.strip_prefix(' ').unwrap_or(value)))",
    "}",
    "#[derive(Debug, Clone, PartialEq)]",
    "pub struct Config {",
    "    pub name: String,",
    "    pub retries: u32,",
    "    pub path: std::path::PathBuf,",
    "impl Config {",
    "    pub fn new(name: impl Into<String>) -> Self {",
    "        Self { name: name.into(), retries: 3, path: \"./data\".into() }",
    "    }",
    "    for (i, item) in items.iter().enumerate() {",
    "        if item.is_empty() { continue; }",
    "        map.entry(item.clone()).or_insert_with(Vec::new).push(i);",
    "    let msg = format!(\"{}: {:?}\\n\", key, value);",
    "    // Résumé of the state — keep it short (≤ 80 chars).",
    "    writeln!(out, \"\\t{}\\t{}\", a, b)?;",
    "    match result {",
    "        Ok(v) => total += v,",
    "        Err(e) => return Err(e.into()),",
    "    assert_eq!(parse_line(\"data: x\"), Some((\"data\", \"x\")));",
    "    let re = r\"^\\s*(\\w+)\\s*=\\s*\"(.*)\"$\";",
    "    }",
    "}",
    "",
];

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Bytes kept free at the end for the events that close a turn.
const CLOSE_RESERVE: usize = 400;

/// The corpus under construction.
struct Gen {
    rng: Rng,
    out: Vec<u8>,
    target: usize,
    /// Seconds since the epoch for OpenAI's `created`, advancing per turn.
    created: u64,
    /// Scratch for JSON values before escaping.
    scratch: String,
    /// Bytes of the current turn written aside, still to be appended.
    held: usize,
}

impl Gen {
    fn new(seed: u64, target: usize) -> Self {
        Gen {
            rng: Rng(seed),
            out: Vec::with_capacity(target + 16 * 1024),
            target,
            created: 1_732_000_000,
            scratch: String::new(),
            held: 0,
        }
    }

    fn wants_turn(&self) -> bool {
        self.out.is_empty() || self.out.len() < self.target
    }

    /// The turn being written should wind down now.
    fn near_end(&self) -> bool {
        self.out.len() + self.held + CLOSE_RESERVE >= self.target
    }

    fn push(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    /// Writes `s` as the inside of a JSON string.
    fn push_escaped(&mut self, s: &str) {
        push_json_escaped(&mut self.out, s);
    }

    fn push_num(&mut self, n: u64) {
        self.push(&n.to_string());
    }

    fn push_id(&mut self, prefix: &str, len: usize) {
        self.push(prefix);
        for _ in 0..len {
            let c = ALNUM[self.rng.below(ALNUM.len() as u64) as usize];
            self.out.push(c);
        }
    }

    /// `event: name\ndata: ` (the caller writes the JSON and [`end_event`]).
    fn begin_event(&mut self, name: &str) {
        self.push("event: ");
        self.push(name);
        self.push("\ndata: ");
    }

    fn end_event(&mut self) {
        self.push("\n\n");
    }

    /// A text delta of 3–30 bytes into `self.scratch`.
    fn text_delta(&mut self) {
        self.scratch.clear();
        let want = self.rng.range(3, 30);
        while self.scratch.len() < want {
            let piece = match self.rng.below(20) {
                0 => self.rng.pick(SPECIAL),
                1 | 2 => self.rng.pick(PUNCT),
                _ => self.rng.pick(WORDS),
            };
            let space = !piece.starts_with([' ', '\n', '.', ',', ':', ';', '!', '?', ')', '"', '\t'])
                && !self.scratch.is_empty()
                && !self.scratch.ends_with([' ', '\n', '(', '\t']);
            let len = piece.len() + usize::from(space);
            if self.scratch.len() + len > 30 {
                if self.scratch.len() >= 3 {
                    break;
                }
                continue;
            }
            if space {
                self.scratch.push(' ');
            }
            self.scratch.push_str(piece);
        }
    }

    fn anthropic_message_start(&mut self) {
        let model =
            self.rng.pick(&["claude-sonnet-4-5-20250929", "claude-3-5-sonnet-20241022", "claude-3-5-haiku-20241022"]);
        let input_tokens = self.rng.range(12, 40_000) as u64;
        self.begin_event("message_start");
        self.push(r#"{"type":"message_start","message":{"id":""#);
        self.push_id("msg_01", 22);
        self.push(r#"","type":"message","role":"assistant","model":""#);
        self.push(model);
        self.push(r#"","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":"#);
        self.push_num(input_tokens);
        self.push(r#","cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}"#);
        self.end_event();
    }

    /// A text content block at `index` with up to `deltas` deltas.
    fn anthropic_text_block(&mut self, index: usize, deltas: usize) {
        self.begin_event("content_block_start");
        self.push(r#"{"type":"content_block_start","index":"#);
        self.push_num(index as u64);
        self.push(r#","content_block":{"type":"text","text":""}}"#);
        self.end_event();
        if index == 0 {
            self.ping();
        }
        for i in 0..deltas {
            if i > 0 && self.near_end() {
                break;
            }
            if self.rng.one_in(60) {
                self.ping();
            }
            self.text_delta();
            self.begin_event("content_block_delta");
            self.push(r#"{"type":"content_block_delta","index":"#);
            self.push_num(index as u64);
            self.push(r#","delta":{"type":"text_delta","text":""#);
            let text = core::mem::take(&mut self.scratch);
            self.push_escaped(&text);
            self.scratch = text;
            self.push(r#""}}"#);
            self.end_event();
        }
        self.block_stop(index);
    }

    fn ping(&mut self) {
        self.begin_event("ping");
        self.push(r#"{"type": "ping"}"#);
        self.end_event();
    }

    fn block_stop(&mut self, index: usize) {
        self.begin_event("content_block_stop");
        self.push(r#"{"type":"content_block_stop","index":"#);
        self.push_num(index as u64);
        self.push("}");
        self.end_event();
    }

    /// A `tool_use` block at `index` whose streamed input is a file write of
    /// a few KB of source code: one long string (`"content"`), or with
    /// `as_lines` an array of one short string per line (`"lines"`).
    fn anthropic_tool_block(&mut self, index: usize, as_lines: bool) {
        let name = self.rng.pick(&["write_file", "str_replace_editor", "create_file"]);
        self.begin_event("content_block_start");
        self.push(r#"{"type":"content_block_start","index":"#);
        self.push_num(index as u64);
        self.push(r#","content_block":{"type":"tool_use","id":""#);
        self.push_id("toolu_01", 22);
        self.push(r#"","name":""#);
        self.push(name);
        self.push(r#"","input":{}}}"#);
        self.end_event();
        // The input JSON text, produced lazily and cut into fragments.
        let mut pending = String::new();
        self.input_json_delta(index, "");
        pending.push_str(r#"{"path": "src/"#);
        pending.push_str(self.rng.pick(&["lib", "decoder", "parser", "config", "main", "util"]));
        pending.push_str(if as_lines { r#".rs", "mode": "overwrite", "lines": ["# } else { r#".rs", "content": ""# });
        let planned = self.rng.range(2_000, 12_000);
        let mut first_line = true;
        let mut content = 0;
        let mut closed = false;
        loop {
            // Refill from the source text until the content is complete.
            while !closed && pending.len() < 64 {
                if content >= planned || (content >= 200 && self.near_end()) {
                    pending.push_str(if as_lines { "]}" } else { "\"}" });
                    closed = true;
                } else if as_lines {
                    let line = self.rng.pick(CODE_LINES);
                    let before = pending.len();
                    let mut escaped = Vec::new();
                    push_json_escaped(&mut escaped, line);
                    if !first_line {
                        pending.push_str(", ");
                    }
                    first_line = false;
                    pending.push('"');
                    pending.push_str(core::str::from_utf8(&escaped).expect("escaping keeps UTF-8"));
                    pending.push('"');
                    content += pending.len() - before;
                } else {
                    let line = self.rng.pick(CODE_LINES);
                    let before = pending.len();
                    let mut escaped = Vec::new();
                    push_json_escaped(&mut escaped, line);
                    escaped.extend_from_slice(b"\\n");
                    pending.push_str(core::str::from_utf8(&escaped).expect("escaping keeps UTF-8"));
                    content += pending.len() - before;
                }
            }
            if pending.is_empty() {
                break;
            }
            let mut cut = self.rng.range(5, 40).min(pending.len());
            while !pending.is_char_boundary(cut) {
                cut += 1;
            }
            let fragment: String = pending.drain(..cut).collect();
            self.input_json_delta(index, &fragment);
        }
        self.block_stop(index);
    }

    fn input_json_delta(&mut self, index: usize, fragment: &str) {
        self.begin_event("content_block_delta");
        self.push(r#"{"type":"content_block_delta","index":"#);
        self.push_num(index as u64);
        self.push(r#","delta":{"type":"input_json_delta","partial_json":""#);
        self.push_escaped(fragment);
        self.push(r#""}}"#);
        self.end_event();
    }

    fn anthropic_message_end(&mut self, stop_reason: &str) {
        let output_tokens = self.rng.range(5, 4_000) as u64;
        self.begin_event("message_delta");
        self.push(r#"{"type":"message_delta","delta":{"stop_reason":""#);
        self.push(stop_reason);
        self.push(r#"","stop_sequence":null},"usage":{"output_tokens":"#);
        self.push_num(output_tokens);
        self.push("}}");
        self.end_event();
        self.begin_event("message_stop");
        self.push(r#"{"type":"message_stop"}"#);
        self.end_event();
    }

    /// `data: {"id":…,"choices":[{"index":0,"delta":` — the caller writes
    /// the delta and calls [`openai_chunk_end`].
    fn openai_chunk_begin(&mut self, id: &str, model: &str) {
        self.push(r#"data: {"id":""#);
        self.push(id);
        self.push(r#"","object":"chat.completion.chunk","created":"#);
        self.push_num(self.created);
        self.push(r#","model":""#);
        self.push(model);
        self.push(r#"","system_fingerprint":"fp_50cad350e4","choices":[{"index":0,"delta":"#);
    }

    fn openai_chunk_end(&mut self, finish_reason: Option<&str>) {
        self.push(r#","logprobs":null,"finish_reason":"#);
        match finish_reason {
            Some(r) => {
                self.push("\"");
                self.push(r);
                self.push("\"");
            }
            None => self.push("null"),
        }
        self.push(r#"}],"usage":null}"#);
        self.push("\n\n");
    }

    fn openai_turn(&mut self) {
        let model = self.rng.pick(&["gpt-4o-2024-08-06", "gpt-4o-mini-2024-07-18", "gpt-4.1-2025-04-14"]);
        let start = self.out.len();
        self.push_id("chatcmpl-", 29);
        let id = String::from_utf8(self.out[start..].to_vec()).expect("ASCII id");
        self.out.truncate(start);
        self.created += self.rng.range(1, 90) as u64;

        self.openai_chunk_begin(&id, model);
        self.push(r#"{"role":"assistant","content":"","refusal":null}"#);
        self.openai_chunk_end(None);

        // The tool calls are written first, aside, so the content deltas can
        // be cut to fit the target; near the end, calls with short arguments.
        let light = self.out.len() + 40_000 >= self.target;
        let main = core::mem::take(&mut self.out);
        // Parallel tool calls: each call's arguments, cut into fragments.
        let calls = self.rng.range(2, 3);
        let mut args: Vec<(usize, String)> = Vec::with_capacity(calls);
        for index in 0..calls {
            let name = self.rng.pick(if light { LIGHT_TOOL_NAMES } else { TOOL_NAMES });
            self.openai_chunk_begin(&id, model);
            self.push(r#"{"tool_calls":[{"index":"#);
            self.push_num(index as u64);
            self.push(r#","id":""#);
            self.push_id("call_", 24);
            self.push(r#"","type":"function","function":{"name":""#);
            self.push(name);
            self.push(r#"","arguments":""}}]}"#);
            self.openai_chunk_end(None);
            args.push((index, self.tool_arguments(name)));
        }
        while args.iter().any(|(_, a)| !a.is_empty()) {
            let live: Vec<usize> = (0..args.len()).filter(|&i| !args[i].1.is_empty()).collect();
            let slot = live[self.rng.below(live.len() as u64) as usize];
            let (index, rest) = &mut args[slot];
            let mut cut = self.rng.range(1, 12).min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            let fragment: String = rest.drain(..cut).collect();
            let index = *index;
            self.openai_chunk_begin(&id, model);
            self.push(r#"{"tool_calls":[{"index":"#);
            self.push_num(index as u64);
            self.push(r#","function":{"arguments":""#);
            self.push_escaped(&fragment);
            self.push(r#""}}]}"#);
            self.openai_chunk_end(None);
        }

        let tools = core::mem::replace(&mut self.out, main);
        self.held = tools.len();

        let deltas = self.rng.range(3, 60);
        for i in 0..deltas {
            if i > 0 && self.near_end() {
                break;
            }
            self.text_delta();
            self.openai_chunk_begin(&id, model);
            self.push(r#"{"content":""#);
            let text = core::mem::take(&mut self.scratch);
            self.push_escaped(&text);
            self.scratch = text;
            self.push(r#""}"#);
            self.openai_chunk_end(None);
        }

        self.out.extend_from_slice(&tools);
        self.held = 0;

        self.openai_chunk_begin(&id, model);
        self.push("{}");
        self.openai_chunk_end(Some("tool_calls"));

        let prompt = self.rng.range(50, 20_000) as u64;
        let completion = self.rng.range(10, 800) as u64;
        self.push(r#"data: {"id":""#);
        self.push(&id);
        self.push(r#"","object":"chat.completion.chunk","created":"#);
        self.push_num(self.created);
        self.push(r#","model":""#);
        self.push(model);
        self.push(r#"","system_fingerprint":"fp_50cad350e4","choices":[],"usage":{"prompt_tokens":"#);
        self.push_num(prompt);
        self.push(r#","completion_tokens":"#);
        self.push_num(completion);
        self.push(r#","total_tokens":"#);
        self.push_num(prompt + completion);
        self.push(
            r#","prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}"#,
        );
        self.push("\n\n");
        self.push("data: [DONE]\n\n");
    }

    /// The JSON arguments of one call to `name` (a JSON text, not escaped).
    fn tool_arguments(&mut self, name: &str) -> String {
        let mut s = String::new();
        match name {
            "get_weather" => {
                s.push_str(r#"{"location": ""#);
                s.push_str(self.rng.pick(CITIES));
                s.push_str(r#"", "unit": ""#);
                s.push_str(self.rng.pick(&["celsius", "fahrenheit"]));
                s.push_str("\"}");
            }
            "search_files" | "lookup_user" => {
                s.push_str(r#"{"query": ""#);
                for _ in 0..self.rng.range(2, 8) {
                    self.text_delta();
                    let mut esc = Vec::new();
                    push_json_escaped(&mut esc, &self.scratch);
                    s.push_str(core::str::from_utf8(&esc).expect("escaping keeps UTF-8"));
                }
                s.push_str(r#"", "max_results": "#);
                s.push_str(&self.rng.range(1, 50).to_string());
                s.push_str(r#", "include_hidden": false}"#);
            }
            "run_command" => {
                s.push_str(r#"{"command": "cargo test --workspace -- --nocapture", "timeout_ms": "#);
                s.push_str(&self.rng.range(1_000, 120_000).to_string());
                s.push_str(r#", "env": {"RUST_LOG": "debug", "CI": "1"}}"#);
            }
            _ => {
                s.push_str(r#"{"path": "src/"#);
                s.push_str(self.rng.pick(&["lib", "decoder", "parser"]));
                s.push_str(r#".rs", "lines": [1, "#);
                s.push_str(&self.rng.range(2, 400).to_string());
                s.push_str(r#"], "timezone": "Europe/Zürich"}"#);
            }
        }
        s
    }
}

/// Appends `s` escaped as the inside of a JSON string (quotes, backslashes
/// and control characters; non-ASCII stays as UTF-8, as providers send it).
fn push_json_escaped(out: &mut Vec<u8>, s: &str) {
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1F => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xF)]);
            }
            _ => out.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssefold::sse::{Decoder, OwnedEvent};

    fn events(bytes: &[u8]) -> Vec<OwnedEvent> {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        d.feed_each(bytes, |e| out.push(e.expect("corpus decodes without error").to_owned_event()));
        let end = d.finish();
        assert_eq!(end.discarded_bytes, 0, "corpus ends on an event boundary");
        out
    }

    fn json(data: &str) -> serde_json::Value {
        serde_json::from_str(data).unwrap_or_else(|e| panic!("invalid JSON {data:?}: {e}"))
    }

    #[test]
    fn every_event_is_valid_json_and_anthropic_types_match() {
        for corpus in [anthropic_text(300_000), anthropic_tool_use(300_000)] {
            let evs = events(&corpus);
            assert!(evs.len() > 1000, "{}", evs.len());
            for e in &evs {
                let v = json(&e.data);
                assert_eq!(v["type"].as_str(), Some(e.event.as_str()), "event line matches the JSON type");
            }
            assert_eq!(evs.first().unwrap().event, "message_start");
            assert_eq!(evs.last().unwrap().event, "message_stop");
        }
    }

    #[test]
    fn text_deltas_are_3_to_30_bytes_and_varied() {
        let evs = events(&anthropic_text(500_000));
        let (mut deltas, mut newline, mut quote, mut non_ascii, mut pings) = (0, 0, 0, 0, 0);
        for e in &evs {
            if e.event == "ping" {
                pings += 1;
            }
            if e.event != "content_block_delta" {
                continue;
            }
            let v = json(&e.data);
            let text = v["delta"]["text"].as_str().unwrap();
            assert!((3..=30).contains(&text.len()), "{text:?}");
            deltas += 1;
            newline += usize::from(text.contains('\n'));
            quote += usize::from(text.contains('"'));
            non_ascii += usize::from(!text.is_ascii());
        }
        assert!(deltas > 2000, "{deltas}");
        assert!(newline > 10 && quote > 10 && non_ascii > 10 && pings > 10, "{newline} {quote} {non_ascii} {pings}");
    }

    /// The concatenated `input_json_delta` fragments of every tool block,
    /// and the number of turns (each checked to stop with `tool_use`).
    fn tool_inputs(corpus: &[u8]) -> (Vec<String>, usize) {
        let evs = events(corpus);
        let mut inputs = Vec::new();
        let mut current: Option<String> = None;
        let mut stops = 0;
        for e in &evs {
            let v = json(&e.data);
            match e.event.as_str() {
                "content_block_start" if v["content_block"]["type"] == "tool_use" => current = Some(String::new()),
                "content_block_delta" if v["delta"]["type"] == "input_json_delta" => {
                    let frag = v["delta"]["partial_json"].as_str().unwrap();
                    assert!(frag.len() <= 43, "{frag:?}");
                    current.as_mut().unwrap().push_str(frag);
                }
                "content_block_stop" => inputs.extend(current.take()),
                "message_delta" => {
                    assert_eq!(v["delta"]["stop_reason"], "tool_use");
                    stops += 1;
                }
                _ => {}
            }
        }
        (inputs, stops)
    }

    #[test]
    fn tool_use_fragments_build_a_valid_input() {
        let (inputs, stops) = tool_inputs(&anthropic_tool_use(1_000_000));
        assert!(stops >= 8, "{stops}");
        assert!(inputs.len() >= stops);
        for input in &inputs {
            let v = json(input);
            assert!(v["path"].as_str().unwrap().starts_with("src/"));
            assert!(v["content"].as_str().unwrap().len() >= 150);
        }
        assert!(inputs.iter().any(|i| json(i)["content"].as_str().unwrap().len() > 4_000), "several KB inputs");
    }

    #[test]
    fn tool_stress_inputs_are_arrays_of_many_short_strings() {
        let (inputs, stops) = tool_inputs(&anthropic_tool_stress(1_000_000));
        assert!(stops >= 8, "{stops}");
        assert!(inputs.len() >= stops);
        for input in &inputs {
            let v = json(input);
            assert_eq!(v["mode"], "overwrite");
            let lines = v["lines"].as_array().unwrap();
            assert!(lines.len() >= 5, "{}", lines.len());
            assert!(lines.iter().all(|l| l.as_str().is_some_and(|s| s.len() < 120)));
        }
        assert!(inputs.iter().any(|i| json(i)["lines"].as_array().unwrap().len() > 200), "hundreds of values");
    }

    #[test]
    fn openai_turns_have_parallel_calls_usage_and_done() {
        let evs = events(&openai_chat_parallel_tools(500_000));
        let mut turns = 0;
        let mut args: Vec<String> = Vec::new();
        let mut saw_usage = false;
        for e in &evs {
            assert_eq!(e.event, "message");
            if e.data == "[DONE]" {
                assert!(saw_usage, "usage chunk before [DONE]");
                assert!((2..=3).contains(&args.len()), "{}", args.len());
                for a in args.drain(..) {
                    json(&a);
                }
                saw_usage = false;
                turns += 1;
                continue;
            }
            let v = json(&e.data);
            assert_eq!(v["object"], "chat.completion.chunk");
            let choices = v["choices"].as_array().unwrap();
            if choices.is_empty() {
                assert!(v["usage"]["total_tokens"].as_u64().unwrap() > 0);
                saw_usage = true;
                continue;
            }
            for call in v["choices"][0]["delta"]["tool_calls"].as_array().into_iter().flatten() {
                let i = call["index"].as_u64().unwrap() as usize;
                if call.get("id").is_some() {
                    assert_eq!(i, args.len());
                    assert_eq!(call["type"], "function");
                    args.push(String::new());
                }
                args[i].push_str(call["function"]["arguments"].as_str().unwrap());
            }
        }
        assert!(turns >= 15, "{turns}");
        assert_eq!(evs.last().unwrap().data, "[DONE]");
    }

    #[test]
    fn turns_are_whole_responses() {
        for name in NAMES {
            let corpus = by_name(name, 300_000).unwrap();
            let turns = turns(&corpus);
            assert!(turns.len() >= 3, "{name}: {}", turns.len());
            assert_eq!(turns.concat(), corpus, "{name}");
            for t in &turns {
                assert!(t.ends_with(b"\n\n") && (t.starts_with(b"event: message_start") || t.starts_with(b"data: {")));
                let evs = events(t);
                let last = &evs.last().unwrap().data;
                assert!(last == "[DONE]" || last == r#"{"type":"message_stop"}"#, "{name}: {last}");
            }
        }
        assert!(turns(b"").is_empty());
        assert_eq!(turns(b"data: x\n\n"), [&b"data: x\n\n"[..]]);
    }

    #[test]
    fn sizes_are_near_the_target() {
        for name in NAMES {
            // The last turn is shortened, but an OpenAI turn's tool calls
            // are always whole, so it may overshoot by a few KiB.
            for target in [50_000usize, 1 << 20, 20 << 20] {
                let len = by_name(name, target).unwrap().len();
                assert!(len >= target && len <= target + 12_288, "{name} {target}: {len}");
            }
            let tiny = by_name(name, 0).unwrap();
            assert!(!tiny.is_empty() && tiny.len() < 16_384, "one short turn: {}", tiny.len());
        }
        assert!(by_name("nope", 10).is_none());
    }

    #[test]
    fn deterministic_with_pinned_fingerprints() {
        for name in NAMES {
            assert_eq!(by_name(name, 100_000), by_name(name, 100_000));
        }
        assert_ne!(anthropic_text(10_000), anthropic_tool_use(10_000));
        // A fixed fingerprint: changing the generator changes the benchmarks'
        // bytes, which must be deliberate (update this and BENCHMARKS.md).
        let fnv = |b: &[u8]| {
            b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3))
        };
        let fp: Vec<u64> = NAMES.iter().map(|n| fnv(&by_name(n, 20_000).unwrap())).collect();
        assert_eq!(fp, [0xdf1f_ce8c_7bd9_4b35, 0x00f4_6851_a094_d57c, 0xed53_e7b2_7bd4_7325, 0x55f3_db5a_b685_ad67]);
    }
}
