"""Peak-RSS reproducers of the HTTP helpers (issue 26, items 7 and 8): the
body is generated as it is read (an ``httpx.MockTransport`` whose response
streams from a generator), so the figure under ``/usr/bin/time -v`` is what
``stream_events`` itself holds.

    /usr/bin/time -v python python/bench/http_rss.py ids 2000000
        # 2 M events with ids 1, 2, 3... (no provider): the replay skipping's state
    /usr/bin/time -v python python/bench/http_rss.py gzip-error 1048576
        # a 500 whose gzip body is 1 MiB on the wire (1 GiB of zeros unpacked)
    /usr/bin/time -v python python/bench/http_rss.py endless-error 2147483648
        # a 500 whose body never ends (here: 2 GiB of "x", 64 KiB at a time)

Each prints what the helper did (events, or the error it raised) and the time.
"""

from __future__ import annotations

import sys
import time
import zlib
from typing import Iterator

import httpx

import ssefold


def id_events(n: int) -> Iterator[bytes]:
    batch = []
    for i in range(1, n + 1):
        batch.append(b"id: %d\ndata: x\n\n" % i)
        if len(batch) == 4096:
            yield b"".join(batch)
            batch = []
    batch.append(b"event: done\ndata: end\n\n")
    yield b"".join(batch)


def gzip_zeros(wire_bytes: int) -> Iterator[bytes]:
    """Gzip of zeros, about ``wire_bytes`` on the wire (~1030x unpacked),
    made 64 KiB of input at a time."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(65536)
    out = 0
    while out < wire_bytes:
        piece = z.compress(zeros)
        if piece:
            out += len(piece)
            yield piece
    yield z.flush()


def endless(total: int) -> Iterator[bytes]:
    piece = b"x" * 65536
    for _ in range(total // len(piece)):
        yield piece


def main() -> None:
    mode, n = sys.argv[1], int(sys.argv[2])

    def handler(request: httpx.Request) -> httpx.Response:
        if mode == "ids":
            return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=id_events(n))
        if mode == "gzip-error":
            headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
            return httpx.Response(500, headers=headers, content=gzip_zeros(n))
        return httpx.Response(500, headers={"Content-Type": "text/plain"}, content=endless(n))

    start = time.perf_counter()
    count = 0
    outcome = "ok"
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        try:
            it = ssefold.stream_events(client, "GET", "http://bench.invalid/", terminal=lambda e: e.event == "done")
            for _ in it:
                count += 1
        except BaseException as e:  # before the fix: MemoryError
            outcome = f"{type(e).__name__}: {str(e)[:120]}"
    took = time.perf_counter() - start
    print(f"{mode} {n}: {outcome}; {count} events; {took:.2f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
