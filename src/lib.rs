//! # ssefold
//!
//! The LLM streaming pipeline done once, in Rust, sans-IO:
//!
//! ```text
//! bytes ─▶ lines ─▶ SSE events ─▶ provider events ─▶ normalized deltas ─▶ folded message
//! ```
//!
//! * [`sse`] — Layer 1 (lines: CR / LF / CRLF across chunk boundaries) and
//!   Layer 2 (the WHATWG "event stream" interpretation), plus the encoder.
//!   Events are borrowed views; no heap allocation per event in steady state.
//! * [`json`] — incremental partial JSON: tool arguments usable while they
//!   stream, in time linear in their size.
//! * [`providers`] — Anthropic Messages, OpenAI Chat Completions, OpenAI
//!   Responses, Gemini, Ollama and Amazon Bedrock (InvokeModel,
//!   ConverseStream) streams folded into one normalized event protocol
//!   ([`providers::StreamEvent`]) and into the message the non-streaming
//!   endpoint would have returned.
//! * [`agent`] — one agent turn end to end, sans-IO: the stream, its tool
//!   calls (which run, which get an error result, in what order), the
//!   reconnection policy, and the next request for every dialect.
//! * [`tools`] — the tool scheduler ([`agent`] drives it).
//! * [`eventstream`] — the AWS event-stream framing that Bedrock's two
//!   dialects arrive in (the other framings: SSE, and Ollama's
//!   newline-delimited JSON).
//! * [`reconnect`] — when to reconnect, after how long, with which resume
//!   cursor; [`ui`] — the streaming-UI state model.
//! * [`relay`] — a stream relayed to a web page as Server-Sent Events (the
//!   AI SDK UI message stream, or the catalog format).
//! * `ffi` (cargo feature `capi`, on by default) — the C ABI over all of
//!   the above: opaque handles, callbacks, one status enum; header
//!   `include/ssefold.h`.
//!
//! The core never opens a socket or reads a clock: hosts feed bytes and get
//! events back.
//!
//! ```
//! use ssefold::sse::Decoder;
//!
//! let mut decoder = Decoder::new();
//! let mut seen = Vec::new();
//! for chunk in [&b"event: ping\nda"[..], b"ta: {}\n\n"] {
//!     let mut events = decoder.feed(chunk);
//!     while let Some(event) = events.next_event() {
//!         let event = event.unwrap();
//!         seen.push((event.event().to_owned(), event.data().to_owned()));
//!     }
//! }
//! assert_eq!(seen, [("ping".to_owned(), "{}".to_owned())]);
//! ```
#![forbid(unsafe_op_in_unsafe_fn)]
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod config;
pub mod eventstream;
// The C ABI is not part of the Rust API: its `#[no_mangle]` functions are
// exported from the cdylib/staticlib, and the module itself stays private.
#[cfg(feature = "capi")]
#[allow(unsafe_code)] // The one place with unsafe code: see the module's conventions.
mod ffi;
pub mod json;
pub mod providers;
pub mod reconnect;
pub mod relay;
pub mod sse;
pub mod tools;
pub mod ui;

/// The README's Rust code blocks, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
