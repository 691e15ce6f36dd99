"""The agent turn's cost in Python: the corpora folded by ``Stream`` (its
``message`` read) against the same bytes through ``TurnCore`` (every tool
call started and answered at once, ``outcome()`` at the end of each turn),
and the same with the outcome's ``next`` request read; interleaved, best of
N, thread CPU time.

Run (release build first: ``.venv/bin/maturin develop --release``)::

    .venv/bin/python python/bench/turn_core.py [--mb 8] [--rounds 7]

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable, List, Set

import ssefold
from corpus import corpus_bytes, turns

CHUNK = 16 << 10
CORPORA = {"anthropic-tool-use": "anthropic", "openai-chat": "openai_chat", "anthropic-text": "anthropic"}


def fold(provider: str, bodies: List[bytes]) -> int:
    n = 0
    for body in bodies:
        stream = ssefold.Stream(provider)
        for i in range(0, len(body), CHUNK):
            n += len(stream.feed(body[i : i + CHUNK]))
        n += len(stream.finish())
        n += len(stream.message or {})
    return n


def tool_names(provider: str, bodies: List[bytes]) -> Set[str]:
    names: Set[str] = set()
    for body in bodies:
        stream = ssefold.Stream(provider)
        for e in stream.feed(body) + stream.finish():
            call = getattr(e, "tool_call", None)
            if e.type == "part_end" and call is not None:
                names.add(call.name)
    return names


def turn(provider: str, bodies: List[bytes], names: Set[str], next_request: bool = False) -> int:
    n = 0
    for body in bodies:
        core = ssefold.TurnCore(provider)
        for name in names:
            core.add_tool(name)
        for i in range(0, len(body), CHUNK):
            n += len(core.feed(body[i : i + CHUNK], 0))
            n += answer(core)
        n += len(core.end_of_body(0))
        n += answer(core)
        outcome = core.outcome()
        n += len(outcome.results)
        if next_request:
            n += outcome.next is not None
    return n


def answer(core: "ssefold.TurnCore") -> int:
    n = 0
    for action in core.poll_actions():
        if action.kind == "start_tool":
            n += len(core.tool_result(action.call_id, "ok"))
    return n


def best(fn: Callable[[], int], best_so_far: float) -> float:
    start = time.thread_time()
    fn()
    return min(best_so_far, time.thread_time() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    print("| corpus | Stream MB/s | TurnCore MB/s | TurnCore / Stream | with the next request / Stream |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, provider in CORPORA.items():
        data = corpus_bytes(name, args.mb << 20)
        bodies = turns(data, name)
        names = tool_names(provider, bodies)
        t_fold = t_turn = t_next = float("inf")
        for _ in range(args.rounds):
            t_fold = best(lambda: fold(provider, bodies), t_fold)
            t_turn = best(lambda: turn(provider, bodies, names), t_turn)
            t_next = best(lambda: turn(provider, bodies, names, True), t_next)
        mb = len(data) / 1e6
        print(
            f"| {name} | {mb / t_fold:.0f} | {mb / t_turn:.0f} | {t_turn / t_fold:.2f}x | {t_next / t_fold:.2f}x |"
        )


if __name__ == "__main__":
    main()
