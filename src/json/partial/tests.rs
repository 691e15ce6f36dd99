//! The parser's unit tests: splits at every byte, jiter's partial modes, skeleton parsers.

use super::*;

#[test]
fn parser_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<PartialJson>();
    assert_send_sync::<PartialJsonError>();
}

#[test]
fn escapes_split_at_every_byte() {
    let doc = br#"["\"\\\/\b\f\n\r\t\u00e9\uD834\uDD1E"]"#;
    let expected: Value = serde_json::from_slice(doc).unwrap();
    for k in 0..doc.len() {
        let mut parser = PartialJson::new();
        parser.push(&doc[..k], |_| {}).unwrap();
        parser.push(&doc[k..], |_| {}).unwrap();
        assert_eq!(parser.finish().unwrap(), expected, "split at {k}");
    }
}

#[test]
fn push_allocates_nothing_new_for_plain_string_fragments() {
    // Steady state: appending to a long string only grows the buffer amortized.
    let mut parser = PartialJson::new();
    parser.push(b"{\"content\": \"", |_| {}).unwrap();
    let mut total = 0;
    for _ in 0..1000 {
        parser
            .push(b"0123456789abcdef", |e| {
                if let PathEvent::StringAppend { text, .. } = e {
                    total += text.len()
                }
            })
            .unwrap();
    }
    assert_eq!(total, 16_000);
    assert_eq!(parser.lex.sbuf.len(), 16_000);
    assert_eq!(parser.value().unwrap()["content"].as_str().map(str::len), Some(16_000));
}

/// `value_at_end` is jiter's `from_json(partial_mode=True | "trailing-strings")` (expected
/// values produced by jiter 0.19; `None` where jiter raises), however the input is split.
/// One known difference, kept for consistency with `finish` (= serde_json): `-0` is the
/// float -0.0 here, the integer 0 in jiter.
#[test]
fn value_at_end_matches_jiter_partial_mode() {
    #[rustfmt::skip]
    let cases: &[(&str, Option<&str>, Option<&str>)] = &[
        (r#"{"a": "xy"#, Some(r#"{}"#), Some(r#"{"a":"xy"}"#)),
        (r#"{"a": 1, "b": [1, 2"#, Some(r#"{"a":1,"b":[1,2]}"#), Some(r#"{"a":1,"b":[1,2]}"#)),
        (r#"{"a": 12"#, Some(r#"{"a":12}"#), Some(r#"{"a":12}"#)),
        (r#"{"a": 1."#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a": 1.5"#, Some(r#"{"a":1.5}"#), Some(r#"{"a":1.5}"#)),
        (r#"{"a": -"#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a": 1e"#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a": 1e5"#, Some(r#"{"a":100000.0}"#), Some(r#"{"a":100000.0}"#)),
        (r#"{"a": tr"#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a": true"#, Some(r#"{"a":true}"#), Some(r#"{"a":true}"#)),
        (r#"{"a": nul"#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a"#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a""#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a":"#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a": "#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"["#, Some(r#"[]"#), Some(r#"[]"#)),
        (r#""#, None, None),
        (r#"   "#, None, None),
        (r#""ab"#, None, Some(r#""ab""#)),
        (r#"12"#, Some(r#"12"#), Some(r#"12"#)),
        (r#"-"#, None, None),
        (r#"tr"#, None, None),
        (r#"{"a": "x\"#, Some(r#"{}"#), Some(r#"{"a":"x"}"#)),
        (r#"{"a": "x\u00"#, Some(r#"{}"#), Some(r#"{"a":"x"}"#)),
        (r#"{"a": "x\u00e9"#, Some(r#"{}"#), Some(r#"{"a":"xé"}"#)),
        (r#"["ab"#, Some(r#"[]"#), Some(r#"["ab"]"#)),
        (r#"["ab", "cd"#, Some(r#"["ab"]"#), Some(r#"["ab","cd"]"#)),
        (r#"{"a": {"b": "c"#, Some(r#"{"a":{}}"#), Some(r#"{"a":{"b":"c"}}"#)),
        (r#"{"a": [1, {"b": 2"#, Some(r#"{"a":[1,{"b":2}]}"#), Some(r#"{"a":[1,{"b":2}]}"#)),
        (r#"{"a": "x", "b"#, Some(r#"{"a":"x"}"#), Some(r#"{"a":"x"}"#)),
        (r#"{"a": "x", "b": ["#, Some(r#"{"a":"x","b":[]}"#), Some(r#"{"a":"x","b":[]}"#)),
        (r#"{"a": 1,"#, Some(r#"{"a":1}"#), Some(r#"{"a":1}"#)),
        (r#"[1, 2,"#, Some(r#"[1,2]"#), Some(r#"[1,2]"#)),
        (r#"{"a": 1, "a": 2"#, Some(r#"{"a":2}"#), Some(r#"{"a":2}"#)),
        (r#"{"a": [tr"#, Some(r#"{"a":[]}"#), Some(r#"{"a":[]}"#)),
        (r#"{"a": "\ud83d"#, Some(r#"{}"#), Some(r#"{"a":""}"#)),
        (r#"{"a": "\ud83d\ude00"#, Some(r#"{}"#), Some(r#"{"a":"😀"}"#)),
        (r#"{"a": 1}"#, Some(r#"{"a":1}"#), Some(r#"{"a":1}"#)),
        (r#"{"a": 12345678901234567890"#, Some(r#"{"a":12345678901234567890}"#), Some(r#"{"a":12345678901234567890}"#)),
        (r#"{"a": "é"#, Some(r#"{}"#), Some(r#"{"a":"é"}"#)),
        (r#" {"a": "\n"#, Some(r#"{}"#), Some(r#"{"a":"\n"}"#)),
        (r#"{"a": [1, 2]"#, Some(r#"{"a":[1,2]}"#), Some(r#"{"a":[1,2]}"#)),
        (r#"{"a": [1, "x"#, Some(r#"{"a":[1]}"#), Some(r#"{"a":[1,"x"]}"#)),
        (r#"{"a": {"b": "c""#, Some(r#"{"a":{"b":"c"}}"#), Some(r#"{"a":{"b":"c"}}"#)),
        (r#"{"a": {"b"#, Some(r#"{"a":{}}"#), Some(r#"{"a":{}}"#)),
        (r#"{"x": 1, "y": fal"#, Some(r#"{"x":1}"#), Some(r#"{"x":1}"#)),
        (r#"[{"a": "b"#, Some(r#"[{}]"#), Some(r#"[{"a":"b"}]"#)),
        (r#"{"a": "b""#, Some(r#"{"a":"b"}"#), Some(r#"{"a":"b"}"#)),
        (r#"{"a": 1e+"#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a": 0.0"#, Some(r#"{"a":0.0}"#), Some(r#"{"a":0.0}"#)),
        (r#"{"a": 3"#, Some(r#"{"a":3}"#), Some(r#"{"a":3}"#)),
        (r#"[3"#, Some(r#"[3]"#), Some(r#"[3]"#)),
        (r#"{"a":1} "#, Some(r#"{"a":1}"#), Some(r#"{"a":1}"#)),
        (r#"{"a": [1, 2"#, Some(r#"{"a":[1,2]}"#), Some(r#"{"a":[1,2]}"#)),
        (r#"{"a": "b", "c": {"d": [true, "e"#, Some(r#"{"a":"b","c":{"d":[true]}}"#), Some(r#"{"a":"b","c":{"d":[true,"e"]}}"#)),
        (r#"{"k": "v\"q"#, Some(r#"{}"#), Some(r#"{"k":"v\"q"}"#)),
        (r#"{"a": 1.5e"#, Some(r#"{}"#), Some(r#"{}"#)),
        (r#"{"a": -12"#, Some(r#"{"a":-12}"#), Some(r#"{"a":-12}"#)),
        (r#"  [ 1 , 2 "#, Some(r#"[1,2]"#), Some(r#"[1,2]"#)),
        (r#"{"a": "x"}  "#, Some(r#"{"a":"x"}"#), Some(r#"{"a":"x"}"#)),
        (r#"{"a": "\ud83d\"#, Some(r#"{}"#), Some(r#"{"a":""}"#)),
        (r#"{"a": "\ud83d\u"#, Some(r#"{}"#), Some(r#"{"a":""}"#)),
        (r#"{"a": "é""#, Some(r#"{"a":"é"}"#), Some(r#"{"a":"é"}"#)),

    ];
    for &(text, drop, keep) in cases {
        for split in 0..=text.len() {
            let mut parser = PartialJson::new();
            parser.push(&text.as_bytes()[..split], |_| {}).unwrap();
            parser.push(&text.as_bytes()[split..], |_| {}).unwrap();
            for (mode, expected) in [(PartialStrings::Drop, drop), (PartialStrings::Keep, keep)] {
                let expected = expected.map(|e| serde_json::from_str::<Value>(e).unwrap());
                assert_eq!(parser.value_at_end(mode), expected, "{text:?} split at {split}, {mode:?}");
            }
        }
    }
}

/// A skeleton parser fed a growing document holds a long string's text only until it is
/// reported; the string's value (escapes, a lone surrogate, multi-byte characters split
/// between pushes) is still the tree parser's, and so are the appended texts.
#[test]
fn a_long_string_is_not_held_twice() {
    let unit = r#"abc \\ \"q\" \u00e9 é 😀 \ud83d \n"#;
    let body = unit.repeat(8 * STRING_TRIM / unit.len() + 1);
    let doc = format!(r#"{{"k": ["{body}", "short", "{body}"], "n": 1}}"#);
    let mut tree = PartialJson::new();
    tree.set_lossy_surrogates(true);
    let mut expected = (String::new(), Vec::new());
    tree.push_str(&doc, |e| match e {
        PathEvent::StringAppend { text, .. } => expected.0.push_str(text),
        PathEvent::ValueComplete { value, .. } if value.is_string() => expected.1.push((*value).clone()),
        _ => {}
    })
    .unwrap();
    // Pushes of 4 KiB, of sizes that end a string just past the threshold, and all at once.
    for step in [4093, STRING_TRIM - 7, STRING_TRIM + 5, doc.len()] {
        let mut skeleton = PartialJson::skeleton(PartialJsonLimits::default());
        skeleton.set_lossy_surrogates(true);
        let mut got = (String::new(), Vec::new());
        let mut most = 0;
        let mut end = 0;
        while end < doc.len() {
            end = (end + step).min(doc.len());
            while !doc.is_char_boundary(end) {
                end += 1;
            }
            skeleton
                .push_document(&doc[..end], |e| match e {
                    PathEvent::StringAppend { text, .. } => got.0.push_str(text),
                    PathEvent::ValueComplete { value, .. } if value.is_string() => got.1.push((*value).clone()),
                    _ => {}
                })
                .unwrap();
            most = most.max(skeleton.held_bytes());
        }
        skeleton.finish_check().unwrap();
        assert_eq!(got, expected, "{step}");
        assert_eq!(skeleton.replaced_surrogates(), tree.replaced_surrogates(), "{step}");
        if step < STRING_TRIM {
            assert!(most < 3 * STRING_TRIM, "{step}: {most}");
        }
    }
}

/// The events of a skeleton parser fed a growing document are those of the tree parser, a
/// closing container's text parsing to the tree's value; it holds O(depth) whatever the size.
#[test]
fn skeleton_events_match_the_tree_parser() {
    let docs = [
        r#"{"a": [1, 2.5, {"b": "x\"y", "c": [true, null, []]}], "d": {}, "a": -0, "e": "\ud83d\ude00"}"#,
        r#"[[[[[]]]], [[]], "s", 12, {"k": {"k": {"k": [0]}}}]"#,
        r#"  "top"  "#,
        r#"{"x": "é\u00e9", "y": [1e5, 0.0, 12345678901234567890]} "#,
        r#"{"bad": [1, 2 3]}"#,
    ];
    for doc in docs {
        let mut tree = PartialJson::new();
        let mut expected = Vec::new();
        let tree_result = tree.push(doc.as_bytes(), |e| {
            let value = e.value().map(|v| v.into_owned());
            expected.push((e.name(), e.path().to_vec(), value, matches!(e, PathEvent::StringAppend { .. })))
        });
        for split in 0..=doc.len() {
            if !doc.is_char_boundary(split) {
                continue;
            }
            // A skeleton parser, one that keeps the whole tree, one whose tree outgrows its
            // budget half-way: the same events.
            for budget in [None, Some(usize::MAX), Some(300)] {
                let limits = PartialJsonLimits::default();
                let mut skeleton = match budget {
                    None => PartialJson::skeleton(limits),
                    Some(budget) => PartialJson::skeleton_with_tree(limits, budget),
                };
                let mut events = Vec::new();
                let mut on_event = |e: &PathEvent<'_>| {
                    let value = e.value().map(|v| v.into_owned());
                    events.push((e.name(), e.path().to_vec(), value, matches!(e, PathEvent::StringAppend { .. })))
                };
                let first = skeleton.push_document(&doc[..split], &mut on_event);
                if budget == Some(usize::MAX) {
                    // The tree so far is the tree parser's.
                    let mut prefix = PartialJson::new();
                    let _ = prefix.push(&doc.as_bytes()[..split], |_| {});
                    for strings in [PartialStrings::Drop, PartialStrings::Keep] {
                        assert_eq!(skeleton.value_at_end(strings), prefix.value_at_end(strings), "{doc:?} {split}");
                    }
                }
                let result = if first.is_err() { first } else { skeleton.push_document(doc, &mut on_event) };
                // Appends may be split differently; compare the rest exactly.
                let strip = |v: &[(&'static str, Vec<PathSegment>, Option<Value>, bool)]| -> Vec<_> {
                    v.iter().filter(|e| !e.3).cloned().collect()
                };
                assert_eq!(strip(&events), strip(&expected), "{doc:?} split at {split}");
                assert_eq!(result.is_err(), tree_result.is_err(), "{doc:?}");
                assert_eq!(skeleton.finish_check().is_ok(), tree.finish_ref().is_ok(), "{doc:?}");
                assert_eq!(skeleton.is_complete(), tree.is_complete() || doc.trim() == r#""top""#);
                let kept = skeleton.tree_estimate() <= budget.unwrap_or(0);
                assert_eq!(skeleton.has_tree(), kept, "{doc:?} {budget:?}");
                if kept && result.is_ok() {
                    assert_eq!(skeleton.take_root().as_ref(), tree.finish_ref().ok(), "{doc:?}");
                }
            }
        }
    }
    let mut skeleton = PartialJson::skeleton(PartialJsonLimits::default());
    let doc = "[".repeat(500) + &"]".repeat(500);
    let doc = "[".to_owned() + &vec![doc; 100].join(",") + "]";
    skeleton.push_document(&doc, |_| {}).unwrap();
    skeleton.finish_check().unwrap();
    assert!(skeleton.held_bytes() < 64 << 10, "{}", skeleton.held_bytes());
    assert!(skeleton.tree_estimate() > doc.len());
    // A tree outgrown is dropped (its memory with it), and kept again after a reset.
    let mut bounded = PartialJson::skeleton_with_tree(PartialJsonLimits::default(), 4096);
    bounded.push_document(&doc, |_| {}).unwrap();
    assert!(!bounded.has_tree() && bounded.held_bytes() < 64 << 10, "{}", bounded.held_bytes());
    bounded.reset();
    bounded.push_document("[1]", |_| {}).unwrap();
    assert_eq!(bounded.take_root(), Some(serde_json::json!([1])));
}

#[test]
fn lone_surrogates_are_u_fffd_when_lossy() {
    for (doc, expected) in [
        (r#"["\ud83d"]"#, "\u{FFFD}"),
        (r#"["\udc00x"]"#, "\u{FFFD}x"),
        (r#"["\ud83d\ud83d\ude00"]"#, "\u{FFFD}😀"),
        (r#"["\ud83d\n"]"#, "\u{FFFD}\n"),
        (r#"["\ud83d\u0041"]"#, "\u{FFFD}A"),
        (r#"["\ud83dA"]"#, "\u{FFFD}A"),
    ] {
        for split in 0..=doc.len() {
            let mut parser = PartialJson::new();
            parser.set_lossy_surrogates(true);
            parser.push(&doc.as_bytes()[..split], |_| {}).unwrap();
            parser.push(&doc.as_bytes()[split..], |_| {}).unwrap();
            assert_eq!(parser.finish().unwrap(), serde_json::json!([expected]), "{doc} split at {split}");
            assert!(parser.replaced_surrogates() >= 1);
        }
        assert!(PartialJson::new().push(doc.as_bytes(), |_| {}).is_err(), "strict by default: {doc}");
    }
}

#[test]
fn value_at_end_after_an_error_is_the_value_before_it() {
    let mut parser = PartialJson::new();
    let _ = parser.push(br#"{"a": 1, "b": "x", "c": celsius}"#, |_| {});
    assert!(parser.error().is_some());
    assert_eq!(parser.value_at_end(PartialStrings::Drop), Some(serde_json::json!({"a": 1, "b": "x"})));
    let mut parser = PartialJson::new();
    let _ = parser.push(br#"{"a": 01"#, |_| {});
    assert_eq!(parser.value_at_end(PartialStrings::Drop), Some(serde_json::json!({})));
}
