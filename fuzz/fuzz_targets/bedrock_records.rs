//! Fuzz target `bedrock_records`: Bedrock event-stream messages built from
//! the input (InvokeModel `chunk`s, ConverseStream events, exceptions,
//! errors, unknown events, raw headers) go through a `Stream` and give the
//! same events, folded message and ending for any split of the body:
//! whole, in a cycle of small chunks, in two pieces, byte by byte. The
//! input layout: [`common::check_bedrock_records`].
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::check_bedrock_records(data));
