//! Property tests: any sequence of (possibly mangled) provider events, in
//! any chunking, never panics and folds the same way.

use crate::prov_common;

use proptest::prelude::*;
use ssefold::providers::Provider;

/// SSE events taken from the golden fixtures, split into event blocks.
fn blocks() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for d in ["anthropic", "openai_chat", "openai_responses"] {
        for f in std::fs::read_dir(dir.join(d)).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "sse") {
                let text = std::fs::read_to_string(p).unwrap();
                out.extend(text.split_inclusive("\n\n").map(str::to_owned));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn shuffled_events_never_panic_and_ignore_chunking(
        picks in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..4, any::<u8>()), 0..40),
        provider in prop_oneof![Just(Provider::Anthropic), Just(Provider::OpenAIChat), Just(Provider::OpenAIResponses), Just(Provider::Auto)],
        seed in any::<u64>(),
    ) {
        let all = blocks();
        let mut bytes = Vec::new();
        for (i, mangle, b) in picks {
            let mut block = all[i.index(all.len())].clone().into_bytes();
            match mangle {
                // Cut the block short (truncated data) or flip one byte.
                1 if block.len() > 2 => block.truncate(block.len() / 2),
                2 if !block.is_empty() => { let at = b as usize % block.len(); block[at] = b; }
                _ => {}
            }
            bytes.extend(block);
        }
        let whole = prov_common::run_with(provider, &bytes, &mut || usize::MAX);
        let chunked = prov_common::run_with(provider, &bytes, &mut prov_common::lcg(seed, 17));
        prop_assert_eq!(whole, chunked);
    }
}
