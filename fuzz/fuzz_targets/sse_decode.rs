//! Fuzz target `sse_decode`: the SSE decoder never panics, gives the same
//! events, errors and end-of-stream report for every chunking of the same
//! bytes, and keeps its memory within its limits. The input layout:
//! [`common::check_sse_decode`].
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::check_sse_decode(data));
