"""Two threads feeding two independent decoders (or provider streams): do
`SSEDecoder.feed` and `Stream.feed` scale now that the core decodes (and
folds) with the GIL released?

    maturin develop --features bench   (--release too for the figures; make python-bench does both)
    python python/bench/threads.py [--size BYTES] [--chunk BYTES] [--repeats N] [--only sse|streams] [--read-text]

For each workload it times one thread decoding the input N times, then two
threads each decoding it N times on their own decoder (twice the work), and
prints the scaling ratio = 2 x t(one) / t(two): 2.0 is perfect, 1.0 is no
gain (the GIL serializes). Needs two idle cores to reach its best. The
figures are recorded in BENCHMARKS.md "Hostile input and scale".
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import threading
import time
from typing import Callable, List

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import corpus as corpora  # noqa: E402

import ssefold  # noqa: E402


def sse_work(read_data: bool = False) -> Callable[[bytes, int, int], int]:
    """`SSEDecoder.feed`, a fresh decoder per repeat; with `read_data`, the
    host also reads every event's `.data` (the `str` is made on first access)."""

    def run(data: bytes, chunk: int, repeats: int) -> int:
        chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
        n = 0
        for _ in range(repeats):
            d = ssefold.SSEDecoder()
            for piece in chunks:
                events = d.feed(piece)
                n += len(events)
                if read_data:
                    n += sum(len(e.data) for e in events)
        return n

    return run


def hook(name: str) -> Callable[..., int]:
    """A core-only baseline of the extension: only in a build with the cargo
    feature `bench` (bindings/python/src/bench.rs), never in the wheel."""
    f = getattr(ssefold._ssefold, name, None)
    if f is None:
        sys.exit(f"ssefold._ssefold.{name} is missing: build with `maturin develop --release --features bench`")
    return f  # type: ignore[no-any-return]


def core_only(data: bytes, chunk: int, repeats: int) -> int:
    count = hook("_sse_decode_count")
    return sum(count(data, chunk) for _ in range(repeats))


def fold_work(provider: str, read_text: bool = False) -> Callable[[bytes, int, int], int]:
    """`Stream.feed` over one long turn, a fresh stream per repeat; with
    `read_text`, the host also reads every delta's `.text`."""

    def run(data: bytes, chunk: int, repeats: int) -> int:
        # The chunks as a host receives them (bytes objects), cut once: slicing
        # copies, with the GIL held, and is not the library's work.
        chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
        n = 0
        for _ in range(repeats):
            s = ssefold.Stream(provider)
            for piece in chunks:
                events = s.feed(piece)
                n += len(events)
                if read_text:
                    n += sum(len(e.text) for e in events if e.type == "text_delta")
            n += len(s.finish())
        return n

    return run


def fold_core_only(provider: str) -> Callable[[bytes, int, int], int]:
    count = hook("_stream_fold_count")

    def run(data: bytes, chunk: int, repeats: int) -> int:
        return sum(count(data, chunk, provider) for _ in range(repeats))

    return run


def long_anthropic_turn(size: int, delta_bytes: int) -> bytes:
    """One Anthropic turn of about `size` bytes: text deltas of `delta_bytes`."""
    head = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
        b'"role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,'
        b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
    )
    delta = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"' + b"word " * (delta_bytes // 5) + b'"}}\n\n'
    )
    tail = (
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
        b'"usage":{"output_tokens":2}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    return head + delta * max(1, size // len(delta)) + tail


def long_chat_turn(size: int, delta_bytes: int) -> bytes:
    """One OpenAI Chat turn of about `size` bytes: content deltas of `delta_bytes`."""
    chunk = (
        b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{"content":"' + b"word " * (delta_bytes // 5) + b'"},"logprobs":null,"finish_reason":null}]}\n\n'
    )
    end = (
        b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
        b'"delta":{},"logprobs":null,"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    return chunk * max(1, size // len(chunk)) + end


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def cpu_timed(fn: Callable[[], object]) -> float:
    """The calling thread's CPU time for `fn` (what a busy machine's other
    processes do not inflate, unlike wall time)."""
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def one_vs_two(data: bytes, chunk: int, repeats: int, fn: Callable[[bytes, int, int], int]) -> Scaling:
    # One thread is a new thread too, like each of the two: the main thread
    # allocates from glibc's main arena, new threads from their own, which
    # behave differently (a bias of the comparison, not of the library).
    def one() -> None:
        t = threading.Thread(target=fn, args=(data, chunk, repeats))
        t.start()
        t.join()

    def two() -> None:
        threads = [threading.Thread(target=fn, args=(data, chunk, repeats)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    # Interleaved rounds, best of each: a shared machine's other load comes
    # and goes, and two threads need both cores free at once.
    ones, twos = [], []
    for _ in range(ROUNDS):
        ones.append(timed(one))
        twos.append(timed(two))
    return Scaling(len(data) * repeats, min(ones), min(twos))


class Scaling:
    """One thread's best time for a workload and two threads' for twice it."""

    def __init__(self, nbytes: int, one: float, two: float) -> None:
        self.nbytes, self.one, self.two = nbytes, one, two

    @property
    def ratio(self) -> float:
        return 2 * self.one / self.two

    def throughput(self) -> str:
        """MB/s of input decoded, by one thread and by two together."""
        return f"{self.nbytes / self.one / 1e6:.0f} MB/s one, {2 * self.nbytes / self.two / 1e6:.0f} MB/s two"


ROUNDS = 9


def big_events(size: int, event_bytes: int) -> bytes:
    line = b"data: " + b"x" * event_bytes + b"\n\n"
    return line * max(1, size // len(line))


def main(argv: List[str]) -> None:
    global ROUNDS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=4 << 20)
    ap.add_argument("--chunk", type=int, default=1 << 20, help="bytes per feed call (large chunks)")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds of one and two threads (best of)")
    ap.add_argument("--only", choices=["sse", "streams"], help="run only the SSE or the provider-stream workloads")
    ap.add_argument(
        "--read-text", action="store_true", help="the host reads every delta's .text and every event's .data"
    )
    args = ap.parse_args(argv)
    ROUNDS = args.rounds
    print(f"python {sys.version.split()[0]}, GIL {'on' if getattr(sys, '_is_gil_enabled', lambda: True)() else 'off'}")
    workloads = [
        ("openai-chat corpus", corpora.corpus_bytes("openai-chat", args.size)),
        ("anthropic-text corpus", corpora.corpus_bytes("anthropic-text", args.size)),
        ("1 KiB events", big_events(args.size, 1 << 10)),
        ("64 KiB events", big_events(args.size, 64 << 10)),
    ]
    if args.only == "streams":
        workloads = []
    work = sse_work(args.read_text)
    for name, data in workloads:
        scaling = one_vs_two(data, args.chunk, args.repeats, work)
        core = one_vs_two(data, args.chunk, args.repeats, core_only)
        # The core's share of one feed() (CPU time). Not the share run
        # without the GIL: copying the events' data out is done without it
        # too, so two threads can beat 2 / (2 x (1 - share)).
        t_feed = min(cpu_timed(lambda: work(data, args.chunk, args.repeats)) for _ in range(5))
        t_core = min(cpu_timed(lambda: core_only(data, args.chunk, args.repeats)) for _ in range(5))
        share = min(1.0, t_core / t_feed)
        print(
            f"{name:22} {len(data) / 1e6:4.1f} MB, {args.chunk >> 10} KiB chunks: feed() two threads = {scaling.ratio:.2f}x one "
            f"({scaling.throughput()}); core only = {core.ratio:.2f}x; the core is {share:.0%} of feed()"
        )

    if args.only == "sse":
        return
    streams = [
        ("anthropic, 40 B deltas", "anthropic", long_anthropic_turn(args.size, 40)),
        ("anthropic, 1 KiB deltas", "anthropic", long_anthropic_turn(args.size, 1 << 10)),
        ("openai-chat, 40 B deltas", "openai_chat", long_chat_turn(args.size, 40)),
        ("openai-chat, 1 KiB deltas", "openai_chat", long_chat_turn(args.size, 1 << 10)),
    ]
    for name, provider, data in streams:
        fold, core_fold = fold_work(provider, args.read_text), fold_core_only(provider)
        scaling = one_vs_two(data, args.chunk, args.repeats, fold)
        core = one_vs_two(data, args.chunk, args.repeats, core_fold)
        # CPU time, best of 5: the share is the robust figure on a busy machine.
        t_feed = min(cpu_timed(lambda: fold(data, args.chunk, args.repeats)) for _ in range(5))
        t_core = min(cpu_timed(lambda: core_fold(data, args.chunk, args.repeats)) for _ in range(5))
        share = min(1.0, t_core / t_feed)
        print(
            f"Stream {name:26} {len(data) / 1e6:4.1f} MB, {args.chunk >> 10} KiB chunks: feed() two threads = "
            f"{scaling.ratio:.2f}x one ({scaling.throughput()}); core only = {core.ratio:.2f}x; the core is {share:.0%} of feed()"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
