//! Behaviour tests of the incremental partial-JSON parser.
//!
//! The reference for best-effort values is a deliberately naive oracle: repair the prefix (drop
//! what is incomplete, close what is open) and parse it with serde_json.

use proptest::prelude::*;
use serde_json::Value;
use ssefold::json::{
    parse_partial_json, ContainerKind, OwnedPathEvent, PartialJson, PartialJsonError, PartialJsonErrorKind,
    PartialJsonLimits, PathSegment,
};

// ----- the oracle -----------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    Open(u8),
    Close,
    Comma,
    Colon,
    /// A string token from `start` (the quote) to `end`; `complete` when the closing quote is in.
    Str {
        start: usize,
        end: usize,
        complete: bool,
    },
    /// A number or literal; `complete` when it cannot grow any more.
    Scalar {
        end: usize,
        complete: bool,
    },
}

fn tokenize(text: &[u8]) -> Vec<Tok> {
    let n = text.len();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < n {
        let b = text[i];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'{' | b'[' => {
                toks.push(Tok::Open(b));
                i += 1
            }
            b'}' | b']' => {
                toks.push(Tok::Close);
                i += 1
            }
            b',' => {
                toks.push(Tok::Comma);
                i += 1
            }
            b':' => {
                toks.push(Tok::Colon);
                i += 1
            }
            b'"' => {
                let mut j = i + 1;
                let mut complete = false;
                while j < n {
                    match text[j] {
                        b'\\' => j += 2,
                        b'"' => {
                            complete = true;
                            j += 1;
                            break;
                        }
                        _ => j += 1,
                    }
                }
                let end = j.min(n);
                toks.push(Tok::Str { start: i, end, complete });
                i = end;
            }
            _ => {
                let mut j = i;
                while j < n && !b" \t\n\r,:]}".contains(&text[j]) {
                    j += 1;
                }
                let word = &text[i..j];
                let complete = j < n || matches!(word, b"true" | b"false" | b"null");
                toks.push(Tok::Scalar { end: j, complete });
                i = j;
            }
        }
    }
    toks
}

/// Longest prefix of the string token starting at `start` that holds only complete characters
/// and escapes (a high surrogate escape counts only with its low half).
fn safe_string_cut(text: &[u8], start: usize) -> usize {
    let n = text.len();
    let mut j = start + 1;
    loop {
        if j >= n {
            return n;
        }
        let len = if text[j] == b'\\' {
            if j + 1 < n && text[j + 1] == b'u' {
                let hex = std::str::from_utf8(text.get(j + 2..j + 6).unwrap_or(b"zzzz")).unwrap_or("zzzz");
                match u32::from_str_radix(hex, 16) {
                    Ok(code) if (0xD800..0xDC00).contains(&code) => 12,
                    _ => 6,
                }
            } else {
                2
            }
        } else {
            match text[j] {
                0xF0..=0xFF => 4,
                0xE0..=0xEF => 3,
                0xC0..=0xDF => 2,
                _ => 1,
            }
        };
        if j + len > n {
            return j;
        }
        j += len;
    }
}

/// The naive reference: repair `prefix` (a prefix of a valid document) and parse it.
fn oracle(prefix: &[u8], partial_strings: bool) -> Option<Value> {
    let mut toks = tokenize(prefix);
    // Which string tokens are keys.
    let is_key = |toks: &[Tok], k: usize| -> bool {
        let mut stack = Vec::new();
        for t in &toks[..k] {
            match t {
                Tok::Open(b) => stack.push(*b),
                Tok::Close => {
                    stack.pop();
                }
                _ => {}
            }
        }
        stack.last() == Some(&b'{') && (k == 0 || matches!(toks[k - 1], Tok::Open(_) | Tok::Comma))
    };
    let mut cut = prefix.len();
    let mut close_quote = false;
    if let Some(&last) = toks.last() {
        let k = toks.len() - 1;
        match last {
            Tok::Str { start, complete: false, .. } => {
                if partial_strings && !is_key(&toks, k) {
                    cut = safe_string_cut(prefix, start);
                    close_quote = true;
                } else {
                    toks.pop();
                }
            }
            Tok::Scalar { complete: false, .. } => {
                toks.pop();
            }
            _ => {}
        }
    }
    loop {
        let k = toks.len();
        match toks.last() {
            Some(Tok::Comma) => {
                toks.pop();
            }
            Some(Tok::Colon) => {
                toks.pop();
                toks.pop();
            }
            Some(Tok::Str { complete: true, .. }) if is_key(&toks, k - 1) => {
                toks.pop();
            }
            _ => break,
        }
    }
    if !close_quote {
        cut = match toks.last() {
            None => return None,
            Some(Tok::Open(_)) | Some(Tok::Close) => {
                // End of the bracket token: find it by re-scanning positions.
                bracket_end(prefix, toks.len())
            }
            Some(Tok::Str { end, .. }) | Some(Tok::Scalar { end, .. }) => *end,
            Some(_) => unreachable!(),
        };
    }
    let mut repaired = prefix[..cut].to_vec();
    if close_quote {
        repaired.push(b'"');
    }
    let mut stack = Vec::new();
    for t in &toks {
        match t {
            Tok::Open(b) => stack.push(*b),
            Tok::Close => {
                stack.pop();
            }
            _ => {}
        }
    }
    while let Some(b) = stack.pop() {
        repaired.push(if b == b'{' { b'}' } else { b']' });
    }
    Some(serde_json::from_slice(&repaired).unwrap_or_else(|e| {
        panic!(
            "oracle repair failed: {e}: {:?} -> {:?}",
            String::from_utf8_lossy(prefix),
            String::from_utf8_lossy(&repaired)
        )
    }))
}

/// Offset just after the `count`-th token when that token is a bracket.
fn bracket_end(prefix: &[u8], count: usize) -> usize {
    // Re-tokenize while tracking offsets of bracket tokens.
    let toks = tokenize(prefix);
    let mut offsets = Vec::new();
    let mut i = 0;
    for t in &toks {
        match t {
            Tok::Str { end, .. } | Tok::Scalar { end, .. } => {
                offsets.push(*end);
                i = *end;
            }
            _ => {
                while prefix[i].is_ascii_whitespace() {
                    i += 1;
                }
                i += 1;
                offsets.push(i);
            }
        }
    }
    offsets[count - 1]
}

// ----- helpers --------------------------------------------------------------------------------

fn text(v: &Option<Value>) -> Option<String> {
    v.as_ref().map(|v| serde_json::to_string(v).unwrap())
}

/// Merges adjacent `StringAppend`s at the same path (their split depends on fragmentation).
fn normalize(events: Vec<OwnedPathEvent>) -> Vec<OwnedPathEvent> {
    let mut out: Vec<OwnedPathEvent> = Vec::new();
    for event in events {
        if let (
            Some(OwnedPathEvent::StringAppend { path: last_path, text: last_text }),
            OwnedPathEvent::StringAppend { path, text },
        ) = (out.last_mut(), &event)
        {
            if last_path == path {
                last_text.push_str(text);
                continue;
            }
        }
        out.push(event);
    }
    out
}

/// Pushes `doc` in the given fragments; returns (events, error of the pushes, finish result).
fn run_fragments(
    doc: &[u8],
    cuts: &[usize],
) -> (Vec<OwnedPathEvent>, Option<PartialJsonError>, Result<Value, PartialJsonError>) {
    let mut parser = PartialJson::new();
    let mut events = Vec::new();
    let mut error = None;
    let mut start = 0;
    for &end in cuts.iter().chain(std::iter::once(&doc.len())) {
        let end = end.clamp(start, doc.len());
        let result = parser.push(&doc[start..end], |e| {
            assert!(!matches!(e, ssefold::json::PathEvent::StringAppend { text: "", .. }), "empty append");
            events.push(e.to_owned_event())
        });
        if let Err(e) = result {
            // Sticky: the same error again, no events.
            let mut again = 0;
            assert_eq!(parser.push(b"[1]", |_| again += 1), Err(e.clone()));
            assert_eq!(again, 0);
            error = Some(e);
            break;
        }
        start = end;
    }
    let finish = parser.finish();
    (normalize(events), error, finish)
}

/// Checks the event stream of a successfully parsed document against its value.
fn check_events(events: &[OwnedPathEvent], value: &Value) {
    let mut pending: Option<(Vec<PathSegment>, String)> = None;
    let mut open: Vec<(Vec<PathSegment>, ContainerKind)> = Vec::new();
    for event in events {
        match event {
            OwnedPathEvent::StringAppend { path, text } => {
                assert!(!text.is_empty());
                match &mut pending {
                    Some((p, buf)) if p == path => buf.push_str(text),
                    Some(_) => panic!("interleaved string appends"),
                    None => pending = Some((path.clone(), text.clone())),
                }
            }
            OwnedPathEvent::ValueComplete { path, value: v } => {
                if let Value::String(s) = v {
                    let appended = pending.take().map(|(p, buf)| {
                        assert_eq!(&p, path);
                        buf
                    });
                    assert_eq!(appended.unwrap_or_default(), *s, "appends != final string at {path:?}");
                } else {
                    assert!(pending.is_none());
                }
                if v.is_object() || v.is_array() {
                    let (p, kind) = open.pop().expect("close without start");
                    assert_eq!(&p, path);
                    assert_eq!(kind == ContainerKind::Object, v.is_object());
                }
                assert_eq!(pointer(value, path), Some(v), "value at {path:?}");
            }
            OwnedPathEvent::ContainerStart { path, kind } => {
                assert!(pending.is_none());
                open.push((path.clone(), *kind));
            }
            OwnedPathEvent::ContainerComplete { .. } => unreachable!("PartialJson::push never emits it"),
        }
    }
    assert!(open.is_empty());
    match events.last() {
        Some(OwnedPathEvent::ValueComplete { path, value: v }) if path.is_empty() => assert_eq!(v, value),
        _ if value.is_number() => {} // a top-level number completes in finish()
        other => panic!("last event {other:?}"),
    }
}

/// The value at `path` in `value` (for duplicate keys the final value; only used on documents
/// without duplicate keys or where the final value is the last one).
fn pointer<'a>(value: &'a Value, path: &[PathSegment]) -> Option<&'a Value> {
    let mut v = value;
    for s in path {
        v = match s {
            PathSegment::Key(k) => v.get(k)?,
            PathSegment::Index(i) => v.get(i)?,
        };
    }
    Some(v)
}

/// The full check of one valid document: every prefix against the oracle (both modes), events
/// and finish against serde_json under byte-by-byte, one-shot and every two-fragment split.
fn check_document(doc: &str) {
    let bytes = doc.as_bytes();
    let expected: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("corpus doc invalid: {e}: {doc}"));
    let expected_text = serde_json::to_string(&expected).unwrap();

    // Byte by byte, best-effort value after each prefix.
    let mut parser = PartialJson::new();
    let mut byte_events = Vec::new();
    for k in 0..bytes.len() {
        parser.push(&bytes[k..k + 1], |e| byte_events.push(e.to_owned_event())).unwrap();
        let prefix = &bytes[..=k];
        assert_eq!(text(&parser.value()), text(&oracle(prefix, true)), "partial_strings=true after {k}: {doc}");
        assert_eq!(text(&parser.value_with(false)), text(&oracle(prefix, false)), "partial_strings=false after {k}");
        assert_eq!(parser.bytes_pushed(), k as u64 + 1);
    }
    assert_eq!(serde_json::to_string(&parser.finish().unwrap()).unwrap(), expected_text);
    let byte_events = normalize(byte_events);
    if !has_duplicate_keys(&expected, doc) {
        check_events(&byte_events, &expected);
    }

    // One shot and every two-fragment split: same events, same result.
    let (one, err, fin) = run_fragments(bytes, &[]);
    assert_eq!(err, None);
    assert_eq!(serde_json::to_string(&fin.unwrap()).unwrap(), expected_text);
    assert_eq!(one, byte_events);
    for k in 0..=bytes.len() {
        let (events, err, fin) = run_fragments(bytes, &[k]);
        assert_eq!(err, None);
        assert_eq!(serde_json::to_string(&fin.unwrap()).unwrap(), expected_text, "split at {k}");
        assert_eq!(events, one, "events differ when split at {k}");
    }
}

fn has_duplicate_keys(_value: &Value, doc: &str) -> bool {
    doc.contains("\"dup\"")
}

// ----- corpus ---------------------------------------------------------------------------------

const CORPUS: &[&str] = &[
    r#"{"a": "test"}"#,
    r#"{"path": "src/main.rs", "content": "fn main() {\n    println!(\"héllo, wörld \\ ✓\");\n}\n"}"#,
    r#"  { "a" : [ 1 , -2 , 3.5e10 , -0.25E-3 , 0 , -0 , 1e2 , 12345678901234567890 , -9223372036854775808 ] }  "#,
    r#"{"esc": "\" \\ \/ \b \f \n \r \t", "u": "\u0041\u00e9\u20AC\uD83D\uDE00 \ud83d\ude00 end"}"#,
    r#"["😀 emoji", "日本語テキスト", "mixed é\u00e9", "\u0000\u001f"]"#,
    r#"{"empty_obj": {}, "empty_arr": [], "nested": [{}, [], [[]], {"x": {}}], "s": ""}"#,
    r#"[true, false, null, {"t": true, "f": false, "n": null}]"#,
    "\t\r\n[\n\t1,\r\n\"two\" ,\n{ \"three\"\t:\r3 }\n]\n",
    r#""top-level string with \"escapes\" and ü""#,
    "42 ",
    "-1.5e-7\n",
    "true",
    "null",
    r#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
    r#"{"a":{"b":{"c":{"d":{"e":{"f":[1,[2,[3,{"g":"h"}]]]}}}}}}"#,
    r#"{"dup": 1, "b": 2, "dup": {"x": "y"}}"#,
    r#"{"k\"ey\u00e9": "v", "": ""}"#,
    r#"[0.1, 1.7976931348623157e308, 5e-324, 1E+2, 1e-0, 100000000000000000000000000]"#,
];

#[test]
fn corpus_every_prefix_and_split() {
    for doc in CORPUS {
        check_document(doc);
    }
}

#[test]
fn surrogate_pair_split_across_fragments() {
    let doc = r#"{"s": "a\uD83D\uDE00b"}"#;
    for k in 0..doc.len() {
        let mut parser = PartialJson::new();
        let mut appended = String::new();
        for part in [&doc.as_bytes()[..k], &doc.as_bytes()[k..]] {
            parser
                .push(part, |e| {
                    if let ssefold::json::PathEvent::StringAppend { text, .. } = e {
                        appended.push_str(text)
                    }
                })
                .unwrap();
        }
        assert_eq!(appended, "a😀b");
        assert_eq!(parser.finish().unwrap()["s"], "a😀b");
    }
    // While only the high half has arrived, the partial value leaves it out.
    let mut parser = PartialJson::new();
    parser.push(br#"{"s": "a\uD83D\u"#, |_| {}).unwrap();
    assert_eq!(parser.value().unwrap(), serde_json::json!({"s": "a"}));
}

#[test]
fn multibyte_utf8_split_inside_character() {
    let doc = "[\"€😀é\"]".as_bytes();
    for k in 0..doc.len() {
        let mut parser = PartialJson::new();
        parser.push(&doc[..k], |_| {}).unwrap();
        let value = parser.value();
        if let Some(Value::Array(items)) = &value {
            if let Some(Value::String(s)) = items.first() {
                assert!("€😀é".starts_with(s.as_str()), "{s:?}");
            }
        }
        parser.push(&doc[k..], |_| {}).unwrap();
        assert_eq!(parser.finish().unwrap(), serde_json::json!(["€😀é"]));
    }
}

// ----- issue examples -------------------------------------------------------------------------

#[test]
fn one_shot_examples_from_the_issue() {
    let p = |t: &str, ps: bool| parse_partial_json(t, ps).unwrap().map(|v| serde_json::to_string(&v).unwrap());
    assert_eq!(p(r#"{"a": "te"#, false).as_deref(), Some("{}"));
    assert_eq!(p(r#"{"a": "test""#, false).as_deref(), Some(r#"{"a":"test"}"#));
    assert_eq!(p(r#"{"a": 123,"#, false).as_deref(), Some(r#"{"a":123}"#));
    assert_eq!(p("[1, 2,", false).as_deref(), Some("[1,2]"));
    assert_eq!(p(r#"{"a": "te"#, true).as_deref(), Some(r#"{"a":"te"}"#));
    // Incomplete numbers and literals are dropped, keys without values too.
    assert_eq!(p(r#"{"a": 12"#, true).as_deref(), Some("{}"));
    assert_eq!(p(r#"{"a": tr"#, true).as_deref(), Some("{}"));
    assert_eq!(p(r#"{"a": true"#, true).as_deref(), Some(r#"{"a":true}"#));
    assert_eq!(p(r#"{"a": 1, "b"#, true).as_deref(), Some(r#"{"a":1}"#));
    assert_eq!(p(r#"{"a": 1, "b":"#, true).as_deref(), Some(r#"{"a":1}"#));
    assert_eq!(p(r#"[{"a": [1, {"b"#, true).as_deref(), Some(r#"[{"a":[1,{}]}]"#));
    // Nothing begun, or only an incomplete top-level scalar.
    assert_eq!(p("", true), None);
    assert_eq!(p("  \n", true), None);
    assert_eq!(p("12", true).as_deref(), Some("12"));
    assert_eq!(p("-", true), None);
    assert_eq!(p("nul", true), None);
    assert_eq!(p("\"ab", true).as_deref(), Some("\"ab\""));
    assert_eq!(p("\"ab", false), None);
    // Invalid text is an error with its offset.
    assert_eq!(parse_partial_json("[1 2]", true).unwrap_err(), PartialJsonError { kind: invalid(), offset: 3 });
}

fn invalid() -> PartialJsonErrorKind {
    PartialJsonErrorKind::Invalid("expected ',' or ']'")
}

// ----- invalid input --------------------------------------------------------------------------

/// (document, offset of the error)
const INVALID: &[(&str, u64)] = &[
    ("[1 2]", 3),
    ("[1,]", 3),
    ("{,}", 1),
    ("{\"a\" 1}", 5),
    ("{\"a\": 1,}", 8),
    ("{\"a\": 1]", 7),
    ("[1}", 2),
    ("01", 1),
    ("[-]", 2),
    ("[1.]", 3),
    ("[1.e5]", 3),
    ("[1e]", 3),
    ("[.5]", 1),
    ("[+1]", 1),
    ("tru ", 3),
    ("[nul]", 4),
    ("truex", 4),
    ("{} {}", 3),
    ("\"a\" b", 4),
    ("\"a\nb\"", 2),
    ("\"\\x\"", 2),
    ("\"\\u12G4\"", 5),
    ("\"\\uDE00\"", 6),
    ("\"ab\\uD83D\"", 9),
    ("\"ab\\uD83Dx\"", 9),
    ("\"ab\\uD83D\\n\"", 10),
    ("\"ab\\uD83D\\u0041\"", 14),
    ("\"ab\\uD83D\\uD83D\"", 14),
    ("]", 0),
    ("}", 0),
    (":", 0),
    ("[1e400]", 1),
    ("{\"a\":1}}", 7),
    ("[\"a\"\"b\"]", 4),
];

#[test]
fn invalid_inputs_same_error_under_every_fragmentation() {
    for &(doc, offset) in INVALID {
        let bytes = doc.as_bytes();
        assert!(serde_json::from_slice::<Value>(bytes).is_err(), "serde_json accepts {doc:?}");
        let (_, err, fin) = run_fragments(bytes, &[]);
        let err = err.unwrap_or_else(|| panic!("no error for {doc:?}"));
        assert!(matches!(err.kind, PartialJsonErrorKind::Invalid(_)), "{doc:?}: {err:?}");
        assert_eq!(err.offset, offset, "{doc:?}: {err}");
        assert_eq!(fin, Err(err.clone()));
        for k in 0..=bytes.len() {
            let (_, e, _) = run_fragments(bytes, &[k]);
            assert_eq!(e.as_ref(), Some(&err), "{doc:?} split at {k}");
        }
        let byte_cuts: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(run_fragments(bytes, &byte_cuts).1.as_ref(), Some(&err), "{doc:?} byte by byte");
    }
}

#[test]
fn invalid_utf8_reported_at_sequence_start() {
    let cases: &[(&[u8], u64)] = &[
        (b"[\"a\xffb\"]", 3),
        (b"[\"a\xe2\x28\xa1\"]", 3),
        (b"[\"ab\xe2\x82\"]", 4),
        (b"[\"ab\xe2\x82\\n\"]", 4),
        (b"[\"ab\xe2\x0a\"]", 4),
        (b"[\"\xc0\xaf\"]", 2),
        (b"[\"\xed\xa0\x80\"]", 2),
        (b"[\xc3\xa9]", 1),
    ];
    for &(doc, offset) in cases {
        assert!(serde_json::from_slice::<Value>(doc).is_err());
        for k in 0..=doc.len() {
            let (_, e, _) = run_fragments(doc, &[k]);
            let e = e.unwrap_or_else(|| panic!("no error for {doc:?}"));
            assert_eq!(e.offset, offset, "{doc:?} split at {k}: {e}");
        }
    }
}

#[test]
fn incomplete_finish_reports_total_length() {
    for doc in ["", "  ", "{", "[1,", "{\"a\"", "\"abc", "[1.", "tru", "-"] {
        let mut parser = PartialJson::new();
        parser.push(doc.as_bytes(), |_| {}).unwrap();
        let e = parser.finish().unwrap_err();
        assert_eq!(e, PartialJsonError { kind: PartialJsonErrorKind::Incomplete, offset: doc.len() as u64 }, "{doc:?}");
        // Not sticky: the document can still be completed.
    }
    let mut parser = PartialJson::new();
    parser.push(b"[1,", |_| {}).unwrap();
    assert!(parser.finish().is_err());
    parser.push(b"2]", |_| {}).unwrap();
    assert_eq!(parser.finish().unwrap(), serde_json::json!([1, 2]));
}

// ----- limits ---------------------------------------------------------------------------------

#[test]
fn depth_limit_default_and_configured() {
    let ok = format!("{}{}", "[".repeat(512), "]".repeat(512));
    let mut parser = PartialJson::new();
    parser.push(ok.as_bytes(), |_| {}).unwrap();
    let value = parser.finish().unwrap();
    assert!(value.is_array());
    let too_deep = "[".repeat(513);
    let mut parser = PartialJson::new();
    let e = parser.push(too_deep.as_bytes(), |_| {}).unwrap_err();
    assert_eq!(e, PartialJsonError { kind: PartialJsonErrorKind::DepthLimit, offset: 512 });
    assert_eq!(parser.push(b"]", |_| {}), Err(e));

    let mut parser = PartialJson::with_limits(PartialJsonLimits { max_depth: 2, ..Default::default() });
    parser.push(b"{\"a\": [1, ", |_| {}).unwrap();
    let e = parser.push(b"{}]}", |_| {}).unwrap_err();
    assert_eq!(e, PartialJsonError { kind: PartialJsonErrorKind::DepthLimit, offset: 10 });
    // The value before the error is still available.
    assert_eq!(parser.value().unwrap(), serde_json::json!({"a": [1]}));
}

#[test]
fn very_deep_input_does_not_overflow_the_stack() {
    // A million open brackets with a huge configured limit: the parser itself is iterative.
    let limits = PartialJsonLimits { max_depth: usize::MAX, max_bytes: u64::MAX };
    let mut parser = PartialJson::with_limits(limits);
    let opens = vec![b'['; 1_000_000];
    parser.push(&opens, |_| {}).unwrap();
    assert_eq!(parser.finish().unwrap_err().kind, PartialJsonErrorKind::Incomplete);
    // Default limit: an error, not a crash.
    let mut parser = PartialJson::new();
    assert_eq!(parser.push(&opens, |_| {}).unwrap_err().kind, PartialJsonErrorKind::DepthLimit);
}

#[test]
fn size_limit() {
    let limits = PartialJsonLimits { max_bytes: 10, ..Default::default() };
    let doc = br#"{"a": "0123456789"}"#;
    for k in 0..=doc.len() {
        let (_, _, _) = run_fragments(doc, &[k]);
        let mut parser = PartialJson::with_limits(limits);
        let mut appended = String::new();
        let r1 = parser.push(&doc[..k], |e| {
            if let ssefold::json::PathEvent::StringAppend { text, .. } = e {
                appended.push_str(text)
            }
        });
        let r2 = if r1.is_ok() {
            parser.push(&doc[k..], |e| {
                if let ssefold::json::PathEvent::StringAppend { text, .. } = e {
                    appended.push_str(text)
                }
            })
        } else {
            r1.clone()
        };
        let e = r2.unwrap_err();
        assert_eq!(e, PartialJsonError { kind: PartialJsonErrorKind::SizeLimit, offset: 10 }, "split {k}");
        assert_eq!(appended, "012");
        assert_eq!(parser.bytes_pushed(), 10);
        assert_eq!(parser.finish(), Err(e));
    }
    // Exactly at the limit is fine.
    let limits = PartialJsonLimits { max_bytes: 7, ..Default::default() };
    let mut parser = PartialJson::with_limits(limits);
    parser.push(b"[1,2,3]", |_| {}).unwrap();
    assert_eq!(parser.finish().unwrap(), serde_json::json!([1, 2, 3]));
}

// ----- API behaviour --------------------------------------------------------------------------

#[test]
fn events_in_document_order() {
    let mut parser = PartialJson::new();
    let mut events = parser.push_owned(br#"{"path": "a.rs", "lines": [1, "x"#).unwrap();
    events.extend(parser.push_owned(b"y\"]}").unwrap());
    let k = |s: &str| PathSegment::Key(s.into());
    use OwnedPathEvent::*;
    let expected = vec![
        ContainerStart { path: vec![], kind: ContainerKind::Object },
        StringAppend { path: vec![k("path")], text: "a.rs".into() },
        ValueComplete { path: vec![k("path")], value: "a.rs".into() },
        ContainerStart { path: vec![k("lines")], kind: ContainerKind::Array },
        ValueComplete { path: vec![k("lines"), PathSegment::Index(0)], value: 1.into() },
        StringAppend { path: vec![k("lines"), PathSegment::Index(1)], text: "x".into() },
        StringAppend { path: vec![k("lines"), PathSegment::Index(1)], text: "y".into() },
        ValueComplete { path: vec![k("lines"), PathSegment::Index(1)], value: "xy".into() },
        ValueComplete { path: vec![k("lines")], value: serde_json::json!([1, "xy"]) },
        ValueComplete { path: vec![], value: serde_json::json!({"path": "a.rs", "lines": [1, "xy"]}) },
    ];
    assert_eq!(events, expected);
    assert!(parser.is_complete());
}

#[test]
fn duplicate_keys_match_serde_json() {
    let doc = r#"{"a": 1, "b": [2], "a": {"c": "d"}}"#;
    let mut parser = PartialJson::new();
    let cut = doc.find(r#""d""#).unwrap() + 3;
    parser.push(&doc.as_bytes()[..cut], |_| {}).unwrap();
    // While the second "a" is open it replaces the first, at the first position.
    assert_eq!(serde_json::to_string(&parser.value().unwrap()).unwrap(), r#"{"a":{"c":"d"},"b":[2]}"#);
    parser.push(&doc.as_bytes()[cut..], |_| {}).unwrap();
    let expected: Value = serde_json::from_str(doc).unwrap();
    assert_eq!(serde_json::to_string(&parser.finish().unwrap()).unwrap(), serde_json::to_string(&expected).unwrap());
}

#[test]
fn top_level_number_completes_on_delimiter_or_finish() {
    let mut parser = PartialJson::new();
    assert!(parser.push_owned(b"12").unwrap().is_empty());
    assert_eq!(parser.value(), None);
    assert!(!parser.is_complete());
    assert_eq!(parser.finish().unwrap(), serde_json::json!(12));
    assert!(parser.is_complete());
    let mut parser = PartialJson::new();
    let events = parser.push_owned(b"12 ").unwrap();
    assert_eq!(events, vec![OwnedPathEvent::ValueComplete { path: vec![], value: serde_json::json!(12) }]);
    assert!(parser.is_complete());
}

#[test]
fn reset_starts_a_new_document() {
    let mut parser = PartialJson::new();
    assert!(parser.push(b"[1, x", |_| {}).is_err());
    parser.reset();
    assert_eq!(parser.bytes_pushed(), 0);
    assert_eq!(parser.value(), None);
    parser.push(br#"{"b": "c"}"#, |_| {}).unwrap();
    assert_eq!(parser.finish().unwrap(), serde_json::json!({"b": "c"}));
    parser.reset();
    parser.push(b"\"half", |_| {}).unwrap();
    parser.reset();
    parser.push(b"[\"whole\"]", |_| {}).unwrap();
    assert_eq!(parser.finish().unwrap(), serde_json::json!(["whole"]));
}

// ----- properties -----------------------------------------------------------------------------

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
        "[a-z\"\\\\\n\t/é€😀 ]{0,20}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z\"\\\\é]{0,4}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Rewrites every non-ASCII character (they only occur inside strings) as `\uXXXX` escapes,
/// astral characters as surrogate pairs, so the property test covers them across fragments too.
fn escape_non_ascii(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    for c in doc.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                // Mix upper- and lower-case hex digits.
                if *unit % 2 == 0 {
                    out.push_str(&format!("\\u{unit:04X}"));
                } else {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out
}

/// Cut points from a list of fragment lengths.
fn cuts_from(lengths: &[usize], total: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut at = 0;
    for &len in lengths.iter().cycle().take(total + 1) {
        at += len;
        if at >= total {
            break;
        }
        cuts.push(at);
    }
    cuts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_values_arbitrary_fragmentation(value in arb_json(), pretty in any::<bool>(), ascii in any::<bool>(),
                                                 lengths in prop::collection::vec(1usize..24, 1..8)) {
        let doc = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        let doc = if ascii { escape_non_ascii(&doc) } else { doc };
        let bytes = doc.as_bytes();
        let expected = serde_json::to_string(&serde_json::from_str::<Value>(&doc).unwrap()).unwrap();
        let cuts = cuts_from(&lengths, bytes.len());

        let mut parser = PartialJson::new();
        let mut events = Vec::new();
        let mut start = 0;
        for &end in cuts.iter().chain(std::iter::once(&bytes.len())) {
            parser.push(&bytes[start..end], |e| events.push(e.to_owned_event())).unwrap();
            let prefix = &bytes[..end];
            prop_assert_eq!(text(&parser.value()), text(&oracle(prefix, true)));
            prop_assert_eq!(text(&parser.value_with(false)), text(&oracle(prefix, false)));
            start = end;
        }
        let finished = parser.finish().unwrap();
        prop_assert_eq!(serde_json::to_string(&finished).unwrap(), expected);
        let events = normalize(events);
        check_events(&events, &finished);
        let (one, err, _) = run_fragments(bytes, &[]);
        prop_assert_eq!(err, None);
        prop_assert_eq!(events, one);
    }

    #[test]
    fn mutated_documents_same_error_everywhere_and_agree_with_serde_json(
        value in arb_json(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(
            b"{}[]:,\"\\ 0123456789.eE+-tfnu\x01\x7f\xc3\xa9\xe2\xff".to_vec())), 1..3),
        lengths in prop::collection::vec(1usize..8, 1..6),
    ) {
        let mut doc = serde_json::to_vec(&value).unwrap();
        for (at, op, byte) in edits {
            let at = at.index(doc.len() + 1);
            match op {
                0 if at < doc.len() => doc[at] = byte,
                1 if at < doc.len() => {
                    doc.remove(at);
                }
                _ => doc.insert(at, byte),
            }
        }
        let (one, err, fin) = run_fragments(&doc, &[]);
        let byte_cuts: Vec<usize> = (1..doc.len()).collect();
        for cuts in [cuts_from(&lengths, doc.len()), byte_cuts] {
            let (events, err2, fin2) = run_fragments(&doc, &cuts);
            prop_assert_eq!(&events, &one);
            prop_assert_eq!(&err, &err2);
            prop_assert_eq!(&fin, &fin2);
        }
        match (&fin, serde_json::from_slice::<Value>(&doc)) {
            (Ok(ours), Ok(theirs)) => prop_assert_eq!(serde_json::to_string(ours).unwrap(), serde_json::to_string(&theirs).unwrap()),
            (Err(_), Err(_)) => {}
            (ours, theirs) => prop_assert!(false, "disagree on {:?}: ours {:?}, serde_json {:?}", String::from_utf8_lossy(&doc), ours, theirs),
        }
        // The error offset is where the input stops being a valid prefix: the bytes before it
        // parse without error.
        if let Some(e) = err {
            let mut parser = PartialJson::new();
            let before = &doc[..(e.offset as usize).min(doc.len())];
            let pushed = parser.push(before, |_| {});
            prop_assert!(pushed.is_ok(), "{:?} before {:?}", pushed, e);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_agree_with_serde_json(
        doc in prop_oneof![
            prop::collection::vec(prop::sample::select(b"{}[]:,\"\\ \n0123456789.eE+-truefalsnu\xc3\xa9\xe2\x82\xac\xffD8".to_vec()), 0..48),
            prop::collection::vec(any::<u8>(), 0..48),
        ],
        lengths in prop::collection::vec(1usize..8, 1..6),
    ) {
        let (one, err, fin) = run_fragments(&doc, &[]);
        let (events, err2, fin2) = run_fragments(&doc, &cuts_from(&lengths, doc.len()));
        prop_assert_eq!(&events, &one);
        prop_assert_eq!(&err, &err2);
        prop_assert_eq!(&fin, &fin2);
        match (&fin, serde_json::from_slice::<Value>(&doc)) {
            (Ok(ours), Ok(theirs)) => prop_assert_eq!(serde_json::to_string(ours).unwrap(), serde_json::to_string(&theirs).unwrap()),
            (Err(_), Err(_)) => {}
            (ours, theirs) => prop_assert!(false, "disagree on {:?}: ours {:?}, serde_json {:?}", String::from_utf8_lossy(&doc), ours, theirs),
        }
        if let Some(e) = err {
            prop_assert!(e.offset <= doc.len() as u64);
        }
    }
}

/// `push_str` (text known to be UTF-8, contents not validated again) gives exactly what `push`
/// gives, under every split at a character boundary, for valid and invalid documents.
#[test]
fn push_str_matches_push_under_every_split() {
    fn run_str(
        doc: &str,
        cut: usize,
    ) -> (Vec<OwnedPathEvent>, Option<PartialJsonError>, Result<Value, PartialJsonError>) {
        let mut parser = PartialJson::new();
        let mut events = Vec::new();
        let mut error = None;
        for part in [&doc[..cut], &doc[cut..]] {
            if let Err(e) = parser.push_str(part, |e| events.push(e.to_owned_event())) {
                error = Some(e);
                break;
            }
        }
        let finish = parser.finish();
        (normalize(events), error, finish)
    }
    let docs = CORPUS.iter().copied().chain(INVALID.iter().map(|&(doc, _)| doc));
    let mut checked = 0;
    for doc in docs {
        for k in (0..=doc.len()).filter(|&k| doc.is_char_boundary(k)) {
            let want = run_fragments(doc.as_bytes(), &[k]);
            let got = run_str(doc, k);
            assert_eq!(got.0, want.0, "{doc:?} split at {k}");
            assert_eq!(got.1, want.1, "{doc:?} split at {k}");
            assert_eq!(got.2.map(|v| v.to_string()), want.2.map(|v| v.to_string()), "{doc:?} split at {k}");
            checked += 1;
        }
    }
    assert!(checked > 500, "{checked}");
}
