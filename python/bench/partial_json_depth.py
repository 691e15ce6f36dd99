"""The standalone ``PartialJSON``'s cost per byte against nesting depth
(issue 26, item 11): ``{"a":[U,U,...]}`` with ``U`` = ``[`` x depth, ``0``,
``]`` x depth (``tools/hostile_args.py deep``), pushed in 64 KiB fragments,
every path event built and dropped; best of ``--runs``.

    python python/bench/partial_json_depth.py [--bytes 2000000] [--runs 3] [--access] 2 500

``--access`` also reads each event's ``.path`` and ``.value`` (what a host
that wants them pays).
"""

from __future__ import annotations

import argparse
import time

import ssefold


def document(depth: int, n: int) -> str:
    unit = "[" * depth + "0" + "]" * depth
    return '{"a":[' + ",".join([unit] * max(1, n // (len(unit) + 1))) + "]}"


def run(doc: bytes, access: bool) -> tuple[float, int]:
    start = time.perf_counter()
    p = ssefold.PartialJSON()
    events = 0
    for i in range(0, len(doc), 65536):
        batch = p.push(doc[i : i + 65536])
        events += len(batch)
        if access:
            for e in batch:
                e.path
                e.value
    p.finish()
    return time.perf_counter() - start, events


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("depths", type=int, nargs="+")
    ap.add_argument("--bytes", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--access", action="store_true")
    args = ap.parse_args()
    base = None
    for depth in args.depths:
        doc = document(depth, args.bytes).encode()
        took, events = min(run(doc, args.access) for _ in range(args.runs))
        per_byte = took / len(doc)
        base = base or per_byte
        print(f"depth {depth}: {len(doc)} bytes, {events} events, {took:.3f} s, {per_byte * 1e9:.1f} ns/byte, {per_byte / base:.2f}x")


if __name__ == "__main__":
    main()
