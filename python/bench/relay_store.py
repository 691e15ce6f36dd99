"""What a replay store costs the producer: a long Anthropic text answer
(``--deltas`` text deltas) relayed in the catalog format, each relay call's
frames saved (``ReplayStore.save``) to a ``RedisReplayStore`` on a local
redis-server (started here on a free port, no persistence) and to a
``MemoryReplayStore``; only the ``save`` calls are timed (wall time: the
Redis round trip is the point). One provider event per call (one frame per
call), then ``--batch`` events per call. Then a reader's cost: the whole
stream read back with ``after``.

    .venv/bin/python python/bench/relay_store.py [--deltas 20000] [--batch 64]

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Callable, List

import redis.asyncio as aioredis

import ssefold
from ssefold.relay_store import MemoryReplayStore, RedisReplayStore, ReplayStore


def answer(deltas: int) -> List[bytes]:
    def ev(name: str, data: object) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    out = [
        ev("message_start", {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}}),
        ev("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ]
    for i in range(deltas):
        out.append(ev("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"word {i} "}}))
    out += [
        ev("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": deltas}}),
        ev("message_stop", {"type": "message_stop"}),
    ]
    return out


async def produce(store: ReplayStore, stream_id: str, events: List[bytes], batch: int) -> tuple[float, int]:
    relay = ssefold.Relay("catalog")
    spent = 0.0
    for i in range(0, len(events), batch):
        relay.feed(b"".join(events[i : i + batch]))
        t = time.perf_counter()
        await store.save(stream_id, relay)
        spent += time.perf_counter() - t
    for call in (relay.end_of_input, relay.finish):
        call()
        t = time.perf_counter()
        await store.save(stream_id, relay)
        spent += time.perf_counter() - t
    return spent, relay.last_event_id


async def read(store: ReplayStore, stream_id: str) -> tuple[float, int]:
    t = time.perf_counter()
    n = 0
    async for frame in store.after(stream_id):
        n += len(frame)
    return time.perf_counter() - t, n


async def main(deltas: int, batch: int, url: str) -> None:
    events = answer(deltas)
    client = aioredis.Redis.from_url(url)
    stores: List[tuple[str, Callable[[], ReplayStore]]] = [
        ("RedisReplayStore", lambda: RedisReplayStore(client, prefix=f"bench:{time.monotonic_ns()}:")),
        ("MemoryReplayStore", MemoryReplayStore),
    ]
    print(f"{deltas} text deltas, catalog format, wall time of `save` only\n")
    print("| store | events per call | frames | save per call | save per frame | read back (all frames) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, make in stores:
        for per_call in (1, batch):
            store = make()
            spent, frames = await produce(store, "t", events, per_call)
            calls = -(-len(events) // per_call) + 2
            read_s, size = await read(store, "t")
            print(
                f"| {name} | {per_call} | {frames} | {spent / calls * 1e6:.1f} µs | {spent / frames * 1e6:.1f} µs "
                f"| {read_s * 1e3:.1f} ms ({size / read_s / 1e6:.0f} MB/s) |"
            )
    await client.aclose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deltas", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    server = shutil.which("redis-server")
    assert server, "redis-server not found (Debian: apt-get install redis-server)"
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tmp],
            stdout=subprocess.DEVNULL,
        )
        try:
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), 0.1).close()
                    break
                except OSError:
                    time.sleep(0.02)
            asyncio.run(main(args.deltas, args.batch, f"redis://127.0.0.1:{port}/0"))
        finally:
            proc.kill()
            proc.wait()
