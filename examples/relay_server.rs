//! A loopback server that relays a recorded provider stream to a browser in
//! the catalog format, for the headless-Chromium `EventSource` test
//! (`tests/js/eventsource_chromium.test.mjs`, run by `make js-test`).
//!
//! ```text
//! cargo run --example relay_server -- FIXTURE.sse CUT_AFTER
//! ```
//!
//! Prints `http://127.0.0.1:PORT/` and serves, one connection at a time:
//! `/` a page whose `EventSource` renders every event; `/events` the relayed
//! stream — the first connection is cut after `CUT_AFTER` events (a dropped
//! network), and a reconnection's `Last-Event-ID` is answered from the
//! relay's replay buffer (`Relay::replay_after`); `/expected` every event as
//! JSON, for the test to compare. It exits after 60 s or on `/quit`.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ssefold::providers::{Provider, Stream};
use ssefold::relay::{Relay, RelayConfig, RelayFormat, CATALOG_EVENT_NAMES};
use ssefold::sse::Decoder;

const PAGE: &str = r#"<!doctype html>
<meta charset="utf-8"><title>relay</title>
<ul id="log"></ul>
<script>
const EVENT_NAMES = /*EVENT_NAMES*/;
window.received = []; window.opens = 0; window.done = false; window.failures = 0;
const source = new EventSource("/events");
source.onopen = () => { window.opens += 1; };
source.onerror = () => { window.failures += 1; };
for (const name of EVENT_NAMES) {
  source.addEventListener(name, (e) => {
    // EventSource's own connection errors are "error" events too: the
    // catalog's error events are the ones that carry data.
    if (!(e instanceof MessageEvent)) return;
    window.received.push({ id: e.lastEventId, event: name, data: e.data });
    const li = document.createElement("li");
    li.textContent = name + " " + e.data;
    document.getElementById("log").appendChild(li);
    if (name === "finish") { source.close(); window.done = true; }
  });
}
</script>
"#;

/// The page, listening for every name the catalog sends
/// (`relay::CATALOG_EVENT_NAMES`): an `EventSource` drops a named event
/// nobody listens for.
fn page() -> String {
    PAGE.replace("/*EVENT_NAMES*/", &json!(CATALOG_EVENT_NAMES).to_string())
}

/// Splits SSE bytes into one frame per event (catalog frames hold no blank line).
fn frames(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .fold(vec![Vec::new()], |mut acc, line| {
            acc.last_mut().expect("one frame").extend_from_slice(line);
            if line == b"\n" {
                acc.push(Vec::new());
            }
            acc
        })
        .into_iter()
        .filter(|f| !f.is_empty())
        .collect()
}

fn respond(mut conn: &TcpStream, status: &str, content_type: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        conn,
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )?;
    conn.write_all(body)
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let fixture = std::fs::read(args.next().expect("usage: relay_server FIXTURE CUT_AFTER"))?;
    let cut_after: usize = args.next().and_then(|n| n.parse().ok()).expect("CUT_AFTER: a number");

    // The whole relayed stream: the provider bytes, a result for each ready
    // tool call, an approval, a log line, the finish.
    let mut relay = Relay::with_stream(RelayConfig::new(RelayFormat::Catalog), Stream::new(Provider::Auto));
    let mut all = relay.feed(&fixture).expect("has a stream").bytes.to_vec();
    all.extend_from_slice(relay.end_of_input().expect("has a stream").bytes);
    let calls: Vec<String> = frames(&all)
        .iter()
        .filter_map(|f| {
            let text = std::str::from_utf8(f).ok()?;
            text.contains("event: tool-call\n").then(|| {
                let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or("{}");
                serde_json::from_str::<Value>(data).ok()?["id"].as_str().map(str::to_owned)
            })?
        })
        .collect();
    for call in &calls {
        all.extend_from_slice(relay.tool_result(call, &json!({"ok": call}), false, Some(7)).expect("open"));
    }
    all.extend_from_slice(
        relay
            .approval_required("ap-1", "call-x", "delete_file", &json!({"path": "/tmp/x"}), Some("Delete /tmp/x?"))
            .expect("open"),
    );
    all.extend_from_slice(
        relay
            .log("info", "line one\nline two: data: not a field", None, "2025-01-15T10:30:00.000Z", "trace-demo")
            .expect("open"),
    );
    all.extend_from_slice(relay.finish(None).expect("open"));
    let frames = frames(&all);
    let expected: Vec<Value> = {
        let mut decoder = Decoder::new();
        let mut events = decoder.feed(&all);
        let mut out = Vec::new();
        while let Some(e) = events.next_event() {
            let e = e.expect("valid SSE");
            out.push(json!({"id": e.id(), "event": e.event(), "data": e.data()}));
        }
        out
    };

    let listener = TcpListener::bind("127.0.0.1:0")?;
    println!("http://{}/", listener.local_addr()?);
    std::io::stdout().flush()?;
    let deadline = Instant::now() + Duration::from_secs(60);
    listener.set_nonblocking(true)?;
    while Instant::now() < deadline {
        let conn = match listener.accept() {
            Ok((conn, _)) => conn,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            Err(e) => return Err(e),
        };
        conn.set_nonblocking(false)?;
        let mut reader = BufReader::new(conn.try_clone()?);
        let mut request = String::new();
        reader.read_line(&mut request)?;
        let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let mut last_event_id = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 || line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("last-event-id") {
                    last_event_id = Some(value.trim().to_owned());
                }
            }
        }
        match path.as_str() {
            "/" => respond(&conn, "200 OK", "text/html; charset=utf-8", page().as_bytes())?,
            "/expected" => {
                respond(&conn, "200 OK", "application/json", Value::from(expected.clone()).to_string().as_bytes())?
            }
            "/quit" => {
                respond(&conn, "200 OK", "text/plain", b"bye")?;
                return Ok(());
            }
            "/events" => {
                let mut conn = conn;
                let mut head = String::from("HTTP/1.1 200 OK\r\n");
                for (name, value) in relay.headers() {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                conn.write_all(head.as_bytes())?;
                // Reconnect quickly after the cut.
                conn.write_all(b"retry: 50\n\n")?;
                let send: Vec<Vec<u8>> = match &last_event_id {
                    None => frames[..cut_after.min(frames.len())].to_vec(),
                    Some(id) => match relay.replay_after(id) {
                        Ok(missed) => self::frames(missed),
                        Err(error) => {
                            eprintln!("relay_server: replay after {id}: {error}");
                            Vec::new()
                        }
                    },
                };
                for (i, frame) in send.iter().enumerate() {
                    conn.write_all(frame)?;
                    if i % 3 == 0 {
                        conn.write_all(b": keep-alive\n\n")?;
                    }
                    conn.flush()?;
                    std::thread::sleep(Duration::from_millis(3));
                }
                if last_event_id.is_some() {
                    // Hold the connection until the page closes it.
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                    let _ = std::io::Read::read(&mut conn, &mut [0u8; 1]);
                }
            }
            _ => respond(&conn, "404 Not Found", "text/plain", b"not found")?,
        }
    }
    Ok(())
}
