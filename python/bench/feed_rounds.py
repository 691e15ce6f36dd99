"""Feeds a corpus to `SSEDecoder.feed` in 16 KiB chunks for a number of
rounds, for instruction counts that do not depend on the machine's load:

    valgrind --tool=callgrind python python/bench/feed_rounds.py openai-chat 1
    valgrind --tool=callgrind python python/bench/feed_rounds.py openai-chat 3

(the difference of the two, halved, is one round; divided by the printed
event count, the instructions per event, Python's side included). A third
argument `httpx-sse` runs httpx-sse over an `httpx.Response` of the same
chunks instead, as `bench.py` does.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import corpus as corpora  # noqa: E402

import ssefold  # noqa: E402


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "openai-chat"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    library = sys.argv[3] if len(sys.argv) > 3 else "ssefold"
    data, _ = corpora.corpus(name, 4 << 20)
    chunks = [data[i : i + 16384] for i in range(0, len(data), 16384)]
    events = 0
    for _ in range(rounds):
        if library == "httpx-sse":
            import httpx
            import httpx_sse

            response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=iter(chunks))
            events += sum(1 for _ in httpx_sse.EventSource(response).iter_sse())
            continue
        d = ssefold.SSEDecoder()
        for c in chunks:
            events += len(d.feed(c))
    print(f"{name}: {events // max(rounds, 1)} events a round, {rounds} rounds")


if __name__ == "__main__":
    main()
