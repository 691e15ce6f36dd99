//! Fuzz target `agent_turn`: the sans-IO agent turn never panics, and
//! shows the same events, decides the same actions and ends with the same
//! outcome for every chunking of the same body. The input layout and the
//! host's part: [`common::check_agent_turn`].
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::check_agent_turn(data));
