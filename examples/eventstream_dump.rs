//! Decodes an AWS event stream from stdin and prints one JSON object per
//! message (or one `{"error": …}` line and exit status 1), for the
//! differential test against botocore's parser
//! (`python/tests/test_eventstream_botocore.py`).
//!
//! ```text
//! cargo run --example eventstream_dump < body.bin
//! ```
//!
//! A message is `{"headers": [[name, value], …], "payload": "<hex>"}` with
//! values as JSON (bools, integers, strings; bytes and UUIDs as hex,
//! timestamps as milliseconds).

use std::io::{Read, Write};

use serde_json::{json, Value};
use ssefold::eventstream::{Decoder, HeaderValue};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn main() {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).expect("read stdin");
    let chunk: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(usize::MAX);
    let mut decoder = Decoder::new();
    let mut out = std::io::stdout().lock();
    for piece in input.chunks(chunk.max(1)) {
        let result = decoder.feed(piece, |message| {
            let headers: Vec<Value> = message
                .headers
                .iter()
                .map(|(name, value)| {
                    let value = match value {
                        HeaderValue::Bool(b) => json!(b),
                        HeaderValue::Byte(v) => json!(v),
                        HeaderValue::Short(v) => json!(v),
                        HeaderValue::Int(v) => json!(v),
                        HeaderValue::Long(v) | HeaderValue::Timestamp(v) => json!(v),
                        HeaderValue::Bytes(b) => json!(hex(b)),
                        HeaderValue::String(s) => json!(s),
                        HeaderValue::Uuid(u) => json!(hex(u)),
                        _ => Value::Null,
                    };
                    json!([name, value])
                })
                .collect();
            let line = json!({"headers": headers, "payload": hex(message.payload)});
            writeln!(out, "{line}").expect("write stdout");
        });
        if let Err(error) = result {
            writeln!(out, "{}", json!({"error": format!("{error:?}").split([' ', '{']).next().unwrap_or("")}))
                .expect("write stdout");
            std::process::exit(1);
        }
    }
    let end = decoder.finish();
    if end.discarded_bytes > 0 {
        writeln!(out, "{}", json!({"incomplete": end.discarded_bytes})).expect("write stdout");
    }
}
