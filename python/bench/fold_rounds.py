"""Folds a corpus's turns with a provider stream (`AnthropicStream` or
`OpenAIChatStream`, as `bench.py` does: 16 KiB chunks, a fresh stream per
turn, the message read at the end) for a number of rounds, for instruction
counts that do not depend on the machine's load:

    valgrind --tool=callgrind python python/bench/fold_rounds.py anthropic-tool-use 1
    valgrind --tool=callgrind python python/bench/fold_rounds.py anthropic-tool-use 3

(the difference of the two, halved, is one round; divided by the printed
event count, the instructions per event, Python's side included).
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import corpus as corpora  # noqa: E402

import ssefold  # noqa: E402


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "anthropic-tool-use"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    data, _ = corpora.corpus(name, 4 << 20)
    turns = corpora.turns(data, name)
    cls = ssefold.OpenAIChatStream if name == "openai-chat" else ssefold.AnthropicStream
    events = 0
    for _ in range(rounds):
        for turn in turns:
            s = cls()
            for i in range(0, len(turn), 16384):
                events += len(s.feed(turn[i : i + 16384]))
            s.finish()
            events += s.message is not None
    print(f"{name}: {events // max(rounds, 1)} events a round, {len(turns)} turns, {rounds} rounds")


if __name__ == "__main__":
    main()
