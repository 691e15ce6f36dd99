//! The behaviour tests, one test binary: each module is one file of
//! `tests/` (one area, its own module docs). One binary instead of one per
//! file: the suite compiles and links the crate's tests once (`autotests =
//! false` in Cargo.toml). `tests/alloc_count.rs` stays a binary of its own:
//! it installs a counting global allocator.
//!
//! Run one area with a filter: `cargo test --test behaviour parity::`.

mod common;
mod prov_common;

mod agent_turn;
mod bedrock;
mod bedrock_converse;
mod c_header;
mod chat_without_done;
mod fold_anthropic;
mod fold_gemini;
mod fold_ollama;
mod fold_openai_chat;
mod fold_openai_responses;
mod framing;
mod fuzz_regressions;
mod golden_providers;
mod hostile;
mod large_inputs;
mod media_parts;
mod memory_footprint;
mod parity;
mod partial_json;
mod peer_fixtures;
mod peer_fixtures_sse;
mod providers_behaviour;
mod providers_props;
mod reconnect_flow;
mod recordings;
mod relay;
mod sse_behaviour;
mod sse_chunking_fuzz;
mod sse_props;
mod sse_spec;
mod stream_lifecycle;
mod tool_scheduler;
mod ui_state;
