"""Folds one provider stream read from a file in 64 KiB chunks (as an HTTP
body arrives), every event built and dropped, then the folded message: the
peak RSS figures of BENCHMARKS.md ("Hostile input and scale") come from
running it under /usr/bin/time -v.

    /usr/bin/time -v python python/bench/rss.py FILE [ui]

With `ui`, the stream keeps the UI state too (`Stream(ui=True)`).
"""

from __future__ import annotations

import sys
import time

import ssefold


def main() -> None:
    path = sys.argv[1]
    ui = len(sys.argv) > 2 and sys.argv[2] == "ui"
    stream = ssefold.Stream("auto", ui=ui)
    start = time.perf_counter()
    events = 0
    outcome = "ok"
    try:
        with open(path, "rb") as f:
            while chunk := f.read(65536):
                events += len(stream.feed(chunk))
        events += len(stream.finish())
    except ssefold.Error as e:
        outcome = f"{type(e).__name__}: {e}"
    message = stream.message
    took = time.perf_counter() - start
    print(f"{outcome}; {events} events; message {type(message).__name__}; {took:.2f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
