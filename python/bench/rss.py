"""Folds one provider stream read from a file in 64 KiB chunks (as an HTTP
body arrives), every event built and dropped, then the folded message: the
peak RSS figures of BENCHMARKS.md ("Hostile input and scale") come from
running it under /usr/bin/time -v.

    /usr/bin/time -v python python/bench/rss.py FILE [ui] [json] [paths=N]

With `ui`, the stream keeps the UI state too (`Stream(ui=True)`); with
`json`, the message is taken as its JSON (`Stream.message_json()`, bytes)
instead of a dict (a large value the stream keeps as text stays text); with
`paths=N`, `Stream(max_path_events_per_feed=N)` (default 16,384; a huge N is
the stream before the limit: every path event of a feed returned).
"""

from __future__ import annotations

import sys
import time

import ssefold


def main() -> None:
    path = sys.argv[1]
    ui = "ui" in sys.argv[2:]
    paths = [int(a[len("paths=") :]) for a in sys.argv[2:] if a.startswith("paths=")]
    stream = ssefold.Stream("auto", ui=ui, max_path_events_per_feed=paths[0] if paths else 16384)
    start = time.perf_counter()
    events = 0
    most = 0  # the most events one feed returned (held at once)
    outcome = "ok"
    try:
        with open(path, "rb") as f:
            while chunk := f.read(65536):
                n = len(stream.feed(chunk))
                events += n
                most = max(most, n)
        events += len(stream.finish())
    except ssefold.Error as e:
        outcome = f"{type(e).__name__}: {e}"
    message = stream.message_json() if "json" in sys.argv[2:] else stream.message
    took = time.perf_counter() - start
    print(f"{outcome}; {events} events, at most {most} from one feed; message {type(message).__name__}; {took:.2f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
