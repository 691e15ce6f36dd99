//! Fuzz target `eventstream`: the AWS event-stream decoder, and the Bedrock
//! dialects on top of it, never panic and give the same messages (events,
//! folded message, result) for every chunking of the same bytes. The input
//! layout: [`common::check_eventstream`].
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::check_eventstream(data));
