"""ssefold.relay_store: the replay stores (in memory, and Redis Streams on a
real redis-server: tools/setup.sh installs Debian's redis-server), and the
example's two server processes sharing one stream through Redis while the
first is killed mid-stream (a plain HTTP client here; headless Chromium's
EventSource in tests/js/resumable_chromium.test.mjs)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal, Optional

import pytest

import ssefold
from conftest import ROOT
from ssefold.relay_store import MemoryReplayStore, RedisReplayStore, ReplayStore

aioredis = pytest.importorskip("redis.asyncio")

FIXTURE = ROOT / "tests" / "fixtures" / "anthropic" / "interleaved_tools.sse"
EXAMPLE = ROOT / "python" / "examples" / "resumable_server.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, deadline: float) -> None:
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {port}"
            time.sleep(0.02)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A throwaway redis-server (no persistence) on a free port."""
    server = shutil.which("redis-server")
    assert server, "redis-server not found: tools/setup.sh installs Debian's redis-server"
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tmp],
            stdout=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port, time.monotonic() + 10)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.kill()
            proc.wait()


def relay_steps(format: Literal["ai-sdk", "catalog"]) -> tuple[list[list[tuple[int, bytes]]], bytes, bytes]:
    """The fixture through a relay, one SSE event per call: each call's
    frames, the trailer, and all the bytes the relay wrote."""
    relay = ssefold.Relay(format)
    calls, out = [], b""
    for event in FIXTURE.read_bytes().split(b"\n\n"):
        out += relay.feed(event + b"\n\n")
        calls.append(relay.frames())
    out += relay.end_of_input()
    calls.append(relay.frames())
    out += relay.finish()
    calls.append(relay.frames())
    return calls, relay.trailer, out


async def collect(frames: AsyncIterator[bytes], limit: float = 5.0) -> bytes:
    async def run() -> bytes:
        out = b""
        async for frame in frames:
            out += frame
        return out

    return await asyncio.wait_for(run(), limit)


def make_store(kind: str, url: Optional[str], **kw: Any) -> ReplayStore:
    if kind == "memory":
        return MemoryReplayStore(**kw)
    assert url
    return RedisReplayStore(aioredis.Redis.from_url(url), prefix=f"test:{time.monotonic_ns()}:", **kw)


async def close(store: ReplayStore) -> None:
    if isinstance(store, RedisReplayStore):
        await store.client.aclose()


@pytest.fixture(params=["memory", "redis"])
def store_kind(request: Any) -> str:
    return str(request.param)


@pytest.mark.parametrize("format", ["ai-sdk", "catalog"])
def test_a_store_serves_every_frame_after_any_id_exactly_once(
    store_kind: str, redis_url: str, format: Literal["ai-sdk", "catalog"]
) -> None:
    calls, trailer, out = relay_steps(format)
    frames = [f for call in calls for f in call]
    assert b"".join(f for _, f in frames) + trailer == out
    assert [i for i, _ in frames] == list(range(1, len(frames) + 1))

    async def run() -> None:
        store = make_store(store_kind, redis_url)
        for call in calls:
            assert await store.append("t", call) == len(call)
        # A producer appending a call again (a retry) stores nothing twice.
        assert await store.append("t", calls[3]) == 0
        assert await store.append("t", [(2, b"not again")]) == 0
        await store.finish("t", trailer)
        assert await store.append("t", [(len(frames) + 1, b"after the end")]) == 0
        assert await collect(store.after("t")) == out
        for last in [1, 2, len(frames) // 2, len(frames) - 1, len(frames)]:
            want = b"".join(f for i, f in frames if i > last) + trailer
            assert await collect(store.after("t", str(last))) == want, last
        with pytest.raises(ssefold.RelayError) as e:
            await collect(store.after("t", str(len(frames) + 1)))
        assert e.value.kind == "unknown_event_id"
        with pytest.raises(ssefold.RelayError) as e:
            await collect(store.after("t", "abc"))
        assert e.value.kind == "unknown_event_id"
        # An expired (or never written) stream: too old to resume.
        with pytest.raises(ssefold.RelayError) as e:
            await collect(store.after("gone", "3"))
        assert e.value.kind == "replay_too_old"
        assert e.value.oldest is None
        await close(store)

    asyncio.run(run())


def test_a_reader_follows_frames_as_they_are_appended(store_kind: str, redis_url: str) -> None:
    calls, trailer, out = relay_steps("ai-sdk")

    async def run() -> None:
        store = make_store(store_kind, redis_url, block_ms=100)
        reader = asyncio.ensure_future(collect(store.after("t"), 10))
        followed = asyncio.ensure_future(collect(store.after("t"), 10))
        for call in calls:
            await store.append("t", call)
            await asyncio.sleep(0.002)
        await asyncio.sleep(0.25)  # the readers idle for a block: they get b"" (nothing added)
        await store.finish("t", trailer)
        assert await reader == out
        assert await followed == out
        await close(store)

    asyncio.run(run())


def test_a_followed_stream_that_expires_ends_its_readers(store_kind: str, redis_url: str) -> None:
    """A producer that died never finishes: once the stream expires, its
    readers end, and a reconnection is told it is too old."""

    async def run() -> None:
        store = make_store(store_kind, redis_url, block_ms=50, ttl_seconds=1)
        await store.append("t", [(1, b"id: 1\ndata: x\n\n")])
        started = time.monotonic()
        assert await collect(store.after("t"), 10) == b"id: 1\ndata: x\n\n"
        assert time.monotonic() - started >= 0.5
        with pytest.raises(ssefold.RelayError) as e:
            await collect(store.after("t", "1"))
        assert e.value.kind == "replay_too_old"
        await close(store)

    asyncio.run(run())


def test_redis_entries_expire_after_the_last_write(redis_url: str) -> None:
    async def run() -> None:
        client = aioredis.Redis.from_url(redis_url)
        store = RedisReplayStore(client, prefix="ttl:", ttl_seconds=100)
        await store.append("t", [(1, b"id: 1\ndata: x\n\n")])
        assert 0 < await client.ttl("ttl:t") <= 100
        await client.expire("ttl:t", 5)
        await store.finish("t")
        assert 5 < await client.ttl("ttl:t") <= 100, "each write refreshes the expiry"
        assert [e[0] for e in await client.xrange("ttl:t")] == [b"0-1", b"1-0"]
        await client.delete("ttl:t")
        with pytest.raises(ssefold.RelayError):
            await collect(store.after("t", "1"))
        await client.aclose()

    asyncio.run(run())


def test_a_too_old_id_is_refused_when_the_oldest_frames_are_gone(redis_url: str) -> None:
    async def run() -> None:
        client = aioredis.Redis.from_url(redis_url)
        store = RedisReplayStore(client, prefix="old:")
        await store.append("t", [(i, b"id: %d\n\n" % i) for i in range(1, 6)])
        await client.xdel("old:t", "0-1", "0-2")
        with pytest.raises(ssefold.RelayError) as e:
            await collect(store.after("t", "1"))
        assert (e.value.kind, e.value.oldest) == ("replay_too_old", 3)
        await store.finish("t")
        assert await collect(store.after("t", "2")) == b"id: 3\n\nid: 4\n\nid: 5\n\n"
        await client.aclose()

    asyncio.run(run())


def parse_sse(body: bytes) -> list[tuple[str, str, str]]:
    decoder = ssefold.SSEDecoder()
    return [(e.id or "", e.event, e.data) for e in decoder.feed(body)]


def http_get(port: int, path: str, last_event_id: Optional[str], until: bytes, deadline: float) -> bytes:
    """The body of a GET read until `until` appears, the peer closes, or the deadline."""
    with socket.create_connection(("127.0.0.1", port), 2) as s:
        extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{extra}\r\n".encode())
        data = b""
        s.settimeout(0.2)
        while until not in data and time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                continue
            except ConnectionError:
                break
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return body


def test_two_server_processes_one_killed_mid_stream(redis_url: str) -> None:
    """The producer writes to Redis; server A serves the client until it is
    SIGKILLed mid-stream; the client reconnects with Last-Event-ID to server
    B (same port, SO_REUSEPORT), which never saw the stream, and gets the
    rest: every event once, in order, ending with `finish`."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    serve = [sys.executable, str(EXAMPLE), "serve", "--redis", redis_url, "--port", str(port), "--block-ms", "200"]
    stream_id = f"turn-{time.monotonic_ns()}"
    produce = [sys.executable, str(EXAMPLE), "produce", "--redis", redis_url, "--stream", stream_id]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        first = subprocess.Popen(serve, env=env, stdout=subprocess.PIPE)
        procs.append(first)
        assert first.stdout is not None
        first.stdout.readline()
        producer = subprocess.Popen(produce + ["--fixture", str(FIXTURE), "--pace-ms", "60"], env=env, stdout=subprocess.PIPE)
        procs.append(producer)
        deadline = time.monotonic() + 20
        body = http_get(port, f"/stream/{stream_id}", None, b"event: tool-call", deadline)
        second = subprocess.Popen(serve, env=env, stdout=subprocess.PIPE)
        procs.append(second)
        assert second.stdout is not None
        second.stdout.readline()
        first.send_signal(signal.SIGKILL)
        first.wait()
        # The last complete frame is what the browser's Last-Event-ID says.
        body = body[: body.rfind(b"\n\n") + 2]
        seen = [e for e in parse_sse(body) if e[0]]
        rest = http_get(port, f"/stream/{stream_id}", seen[-1][0], b"event: finish", deadline)
        got = seen + [e for e in parse_sse(rest) if e[0]]
        assert producer.wait(20) == 0
        assert producer.stdout is not None
        produced = int(producer.stdout.read().strip())

        async def written() -> bytes:
            store = RedisReplayStore(aioredis.Redis.from_url(redis_url))
            try:
                return await collect(store.after(stream_id))
            finally:
                await close(store)

        want = parse_sse(asyncio.run(written()))
        assert len(want) == produced
        assert [int(e[0]) for e in got] == list(range(1, produced + 1)), "ids 1..N exactly once"
        assert got == want
        assert got[-1][1] == "finish"
        assert len(seen) < produced, "the first server was killed mid-stream"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            if p.stdout is not None:
                p.stdout.close()
