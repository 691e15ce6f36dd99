"""Two threads feeding two independent decoders: does `SSEDecoder.feed`
scale now that the core decodes with the GIL released?

    make python-develop   (or maturin develop --release for the figures)
    python python/bench/threads.py [--corpus NAME] [--size BYTES] [--chunk BYTES] [--repeats N]

For each workload it times one thread decoding the input N times, then two
threads each decoding it N times on their own decoder (twice the work), and
prints the scaling ratio = 2 x t(one) / t(two): 2.0 is perfect, 1.0 is no
gain (the GIL serializes). Needs two idle cores to reach its best. The
figures are recorded in BENCHMARKS.md "Hostile input and scale".
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Callable, List

import ssefold


def work(data: bytes, chunk: int, repeats: int) -> int:
    n = 0
    for _ in range(repeats):
        d = ssefold.SSEDecoder()
        for i in range(0, len(data), chunk):
            n += len(d.feed(data[i : i + chunk]))
    return n


def core_only(data: bytes, chunk: int, repeats: int) -> int:
    return sum(ssefold._ssefold._sse_decode_count(data, chunk) for _ in range(repeats))


def timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def one_vs_two(data: bytes, chunk: int, repeats: int, fn: Callable[[bytes, int, int], int] = work) -> float:
    def one() -> None:
        fn(data, chunk, repeats)

    def two() -> None:
        threads = [threading.Thread(target=fn, args=(data, chunk, repeats)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    best_one = min(timed(one) for _ in range(3))
    best_two = min(timed(two) for _ in range(3))
    return 2 * best_one / best_two


def big_events(size: int, event_bytes: int) -> bytes:
    line = b"data: " + b"x" * event_bytes + b"\n\n"
    return line * max(1, size // len(line))


def main(argv: List[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=4 << 20)
    ap.add_argument("--chunk", type=int, default=1 << 20, help="bytes per feed call (large chunks)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, GIL {'on' if getattr(sys, '_is_gil_enabled', lambda: True)() else 'off'}")
    workloads = [
        ("openai-chat corpus", ssefold._ssefold._corpus("openai-chat", args.size)),
        ("anthropic-text corpus", ssefold._ssefold._corpus("anthropic-text", args.size)),
        ("1 KiB events", big_events(args.size, 1 << 10)),
        ("64 KiB events", big_events(args.size, 64 << 10)),
    ]
    for name, data in workloads:
        ratio = one_vs_two(data, args.chunk, args.repeats)
        core = one_vs_two(data, args.chunk, args.repeats, core_only)
        # The share of one feed() spent without the GIL (the core's decoding)
        # and the best two threads can then do: the GIL-held parts of the
        # two threads run one after the other, so the wall time is at least
        # 2 x (1 - free) of one thread's, and at least 1.
        t_feed = min(timed(lambda: work(data, args.chunk, args.repeats)) for _ in range(3))
        t_core = min(timed(lambda: core_only(data, args.chunk, args.repeats)) for _ in range(3))
        free = min(1.0, t_core / t_feed)
        bound = 2 / max(2 * (1 - free), 1.0)
        print(
            f"{name:22} {len(data) / 1e6:4.1f} MB, {args.chunk >> 10} KiB chunks: feed() two threads = {ratio:.2f}x one; "
            f"core only = {core:.2f}x; GIL released for {free:.0%} of feed() -> bound {bound:.2f}x"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
