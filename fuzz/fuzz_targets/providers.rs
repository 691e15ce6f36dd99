//! Fuzz target `providers`: a provider stream never panics, and gives the
//! same normalized events, folded message and result for every chunking of
//! the same bytes. The input layout: [`common::check_providers`].
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::check_providers(data));
