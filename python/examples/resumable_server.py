"""A relayed stream that survives its server process: frames live in Redis.

Two roles, each its own process:

- ``produce``: feeds a recorded provider stream (an ``.sse`` file, paced)
  through a catalog ``Relay`` and appends every frame to Redis
  (``RedisReplayStore.save``), then the finished marker;
- ``dump``: prints the stream's events as JSON lines (for tests);
- ``serve``: serves ``GET /stream/<id>`` from Redis to browsers (the frames
  after ``Last-Event-ID``, then the new ones until ``finish``, keep-alive
  comments while waiting) and ``GET /`` a page whose ``EventSource`` reads
  ``/stream/<id>`` and records every catalog event. It listens with
  ``SO_REUSEPORT``: several ``serve`` processes share one port, and when one
  dies, the browser's reconnection lands on another, which resumes the
  stream it never saw.

::

    python resumable_server.py serve --port 8000 --redis redis://127.0.0.1:6379/0
    python resumable_server.py produce --redis ... --stream turn-1 --fixture tests/fixtures/anthropic/interleaved_tools.sse

Plain asyncio streams, no web framework: the relay only moves bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import time
from pathlib import Path
from typing import Optional

import redis.asyncio as aioredis

from ssefold import CATALOG_EVENT_NAMES, Relay, RelayError, SSEDecoder
from ssefold.relay_store import RedisReplayStore


PAGE = """<!doctype html>
<meta charset="utf-8"><title>resumable relay</title>
<ul id="log"></ul>
<script>
window.received = []; window.opens = 0; window.done = false; window.failures = 0;
const source = new EventSource("/stream/" + location.hash.slice(1));
source.onopen = () => { window.opens += 1; };
source.onerror = () => { window.failures += 1; };
for (const name of NAMES) {
  source.addEventListener(name, (e) => {
    // EventSource's own connection errors are "error" events without data.
    if (!(e instanceof MessageEvent)) return;
    window.received.push({ id: e.lastEventId, event: name, data: e.data });
    const li = document.createElement("li");
    li.textContent = name + " " + e.data;
    document.getElementById("log").appendChild(li);
    if (name === "finish") { source.close(); window.done = true; }
  });
}
</script>
""".replace("NAMES", json.dumps(list(CATALOG_EVENT_NAMES)))

# Reconnect quickly after a cut (the browser's default is about 3 s).
RETRY = b"retry: 200\n\n"
KEEP_ALIVE = b": keep-alive\n\n"


def store_for(url: str, block_ms: int) -> RedisReplayStore:
    return RedisReplayStore(aioredis.Redis.from_url(url), block_ms=block_ms)


async def produce(url: str, stream_id: str, fixture: Path, pace_ms: int) -> None:
    """The provider stream, one SSE event per `pace_ms`, relayed into Redis."""
    store = store_for(url, 1000)
    relay = Relay("catalog")
    for event in fixture.read_bytes().split(b"\n\n"):
        relay.feed(event + b"\n\n")
        await store.save(stream_id, relay)
        await asyncio.sleep(pace_ms / 1000)
    relay.end_of_input()
    await store.save(stream_id, relay)
    relay.finish()
    await store.save(stream_id, relay)
    print(relay.last_event_id, flush=True)
    await store.client.aclose()


async def dump(url: str, stream_id: str) -> None:
    """The stream's events as JSON lines (id, event, data): what the
    producer wrote, for tests to compare with what a browser got."""
    store = store_for(url, 1000)
    body = b""
    async for frame in store.after(stream_id):
        body += frame
    for event in SSEDecoder().feed(body):
        print(json.dumps({"id": event.id, "event": event.event, "data": event.data}))
    await store.client.aclose()


async def handle(store: RedisReplayStore, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        _method, path, _version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if path == "/":
            body = PAGE.encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\n"
                b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body
            )
        elif path.startswith("/stream/"):
            await stream(store, path[len("/stream/") :], headers.get("last-event-id"), writer)
        else:
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def stream(
    store: RedisReplayStore, stream_id: str, last_event_id: Optional[str], writer: asyncio.StreamWriter
) -> None:
    # Which process serves which stream (tests kill the one that does).
    print(f"stream {stream_id} after {last_event_id or 0}", flush=True)
    frames = store.after(stream_id, last_event_id)
    try:
        first = await frames.__anext__()
    except RelayError as e:
        # The stream expired (or the id is not one of its): 204 stops the
        # browser's EventSource from reconnecting; reload the whole message.
        writer.write(b"HTTP/1.1 204 No Content\r\nx-ssefold-relay-error: %s\r\n\r\n" % e.kind.encode())
        return
    except StopAsyncIteration:
        first = b""
    headers = "".join(f"{name}: {value}\r\n" for name, value in Relay("catalog", provider=None).headers())
    writer.write(b"HTTP/1.1 200 OK\r\n" + headers.encode() + b"\r\n" + RETRY + (first or KEEP_ALIVE))
    await writer.drain()
    async for frame in frames:
        writer.write(frame or KEEP_ALIVE)
        await writer.drain()


async def serve(url: str, host: str, port: int, block_ms: int) -> None:
    store = store_for(url, block_ms)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    server = await asyncio.start_server(lambda r, w: handle(store, r, w), sock=sock)
    print(f"http://{host}:{sock.getsockname()[1]}/", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="role", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--redis", required=True)
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--block-ms", type=int, default=1000)
    p = sub.add_parser("produce")
    p.add_argument("--redis", required=True)
    p.add_argument("--stream", required=True)
    p.add_argument("--fixture", type=Path, required=True)
    p.add_argument("--pace-ms", type=int, default=40)
    d = sub.add_parser("dump")
    d.add_argument("--redis", required=True)
    d.add_argument("--stream", required=True)
    args = parser.parse_args(argv)
    started = time.monotonic()
    if args.role == "serve":
        asyncio.run(serve(args.redis, args.host, args.port, args.block_ms))
    elif args.role == "dump":
        asyncio.run(dump(args.redis, args.stream))
    else:
        asyncio.run(produce(args.redis, args.stream, args.fixture, args.pace_ms))
        print(f"produced in {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
