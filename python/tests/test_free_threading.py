"""Threads, on any interpreter, and the free-threaded build (python3.13t:
`make python-test-free-threaded` runs this whole suite on one built from
Debian's source package, tools/free-threaded-python.sh).

On a GIL build these check that decoders and streams fed on several threads,
with their events dropped on yet other threads, give what one thread gives.
On a free-threaded build the same code runs truly in parallel, and the
module must not turn the GIL back on when imported."""

from __future__ import annotations

import queue
import subprocess
import sys
import sysconfig
import threading
from typing import Any, Callable, List, Tuple

import pytest

import ssefold
import ssefold._ssefold as native
from conftest import benchmark_corpus, decode

PREFIX = 20000
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
free_threaded_only = pytest.mark.skipif(not FREE_THREADED, reason="needs a free-threaded (--disable-gil) CPython")


@free_threaded_only
def test_importing_the_module_keeps_the_gil_off() -> None:
    # A fresh interpreter: CPython turns the GIL on (with a RuntimeWarning) when
    # it imports an extension that does not declare itself free-threading safe.
    code = "import sys, ssefold; print(sys._is_gil_enabled())"
    out = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False", out.stderr


@free_threaded_only
@pytest.mark.skipif(sys.version_info[:2] != (3, 13), reason="the workaround is for CPython 3.13t only")
def test_the_classes_are_immortal_on_3_13t() -> None:
    # Every object made or freed changes its class's reference count; on 3.13t,
    # from two threads, that is one contended atomic per event (see
    # bindings/python/src/free_threading.rs). Immortal objects report 2**32 - 1.
    classes = [v for v in vars(native).values() if isinstance(v, type) and v.__module__.startswith("ssefold")]
    assert ssefold.ServerSentEvent in classes and ssefold.StreamEvent in classes
    for cls in classes:
        assert sys.getrefcount(cls) == 2**32 - 1, cls


def _pieces(data: bytes, chunk: int) -> List[bytes]:
    return [data[i : i + chunk] for i in range(0, len(data), chunk)]


def _sse_events(data: bytes, chunk: int) -> List[Tuple[str, str, Any]]:
    return [(e.event, e.data, e.id) for e in decode(_pieces(data, chunk))[0]]


def _stream_events(provider: str, data: bytes, chunk: int) -> List[Tuple[str, Any]]:
    s = ssefold.Stream(provider)
    out: List[Tuple[str, Any]] = []
    for piece in _pieces(data, chunk):
        out.extend((e.type, e.to_dict()) for e in s.feed(piece))
    out.extend((e.type, e.to_dict()) for e in s.finish())
    return out


def _run_threads(target: Callable[[int], None], n: int) -> None:
    errors: List[BaseException] = []

    def guarded(i: int) -> None:
        try:
            target(i)
        except BaseException as exc:  # reported on the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("corpus", ["openai-chat", "anthropic-text"])
def test_decoders_on_many_threads_agree_with_one(corpus: str) -> None:
    data = benchmark_corpus(corpus, 256 << 10)
    chunks = [1, 7, 4096, 1 << 20]
    expected = {c: _sse_events(data, c) for c in (7, 4096)}
    assert expected[7] == expected[4096] and len(expected[7]) > 100
    expected_prefix = _sse_events(data[:PREFIX], 7)
    assert len(expected_prefix) > 10

    # Each thread decodes in its own chunking; the events are handed to a
    # consumer thread, which reads and drops them (the last reference to a
    # call's buffer goes away on a thread that did not make it).
    handoff: "queue.Queue[Tuple[int, List[ssefold.ServerSentEvent]] | None]" = queue.Queue(maxsize=64)
    got: List[List[Tuple[str, str, Any]]] = [[] for _ in chunks]

    def consume() -> None:
        while (item := handoff.get()) is not None:
            i, events = item
            got[i].extend((e.event, e.data, e.id) for e in events)

    consumer = threading.Thread(target=consume)
    consumer.start()

    def produce(i: int) -> None:
        size = chunks[i]
        end = PREFIX if size == 1 else len(data)  # byte by byte: a prefix (the rest is the same code)
        d = ssefold.SSEDecoder()
        for piece in _pieces(data[:end], size):
            handoff.put((i, d.feed(piece)))

    try:
        _run_threads(produce, len(chunks))
    finally:
        handoff.put(None)
        consumer.join()
    for i, size in enumerate(chunks):
        assert got[i] == (expected_prefix if size == 1 else expected[7]), size


@pytest.mark.parametrize("provider,corpus", [("openai-chat", "openai-chat"), ("anthropic", "anthropic-text")])
def test_streams_on_many_threads_agree_with_one(provider: str, corpus: str) -> None:
    data = benchmark_corpus(corpus, 128 << 10)
    expected = _stream_events(provider, data, 4096)
    assert len(expected) > 100
    results: List[List[Tuple[str, Any]]] = [[] for _ in range(4)]

    def run(i: int) -> None:
        results[i] = _stream_events(provider, data, [13, 512, 4096, 1 << 20][i])

    _run_threads(run, 4)
    for r in results:
        assert r == expected


def test_one_decoder_fed_from_two_threads_at_once_is_refused_not_corrupted() -> None:
    # A decoder is one stream's state: feeding it from two threads at once is
    # a host bug. The call that finds it busy raises RuntimeError; every call
    # that ran decoded whole events (what they return together is a prefix-
    # free, in-order share of the stream), and nothing crashes.
    data = benchmark_corpus("openai-chat", 256 << 10)
    blocks = [b + b"\n\n" for b in data.split(b"\n\n")[:-1]]
    groups = [b"".join(blocks[i : i + 100]) for i in range(0, len(blocks), 100)]
    expected = [_sse_events(b"".join(groups[i::2]), 4096) for i in range(2)]
    d = ssefold.SSEDecoder()
    got: List[List[Tuple[str, str, Any]]] = [[], []]

    def feed(i: int) -> None:
        for group in groups[i::2]:
            while True:
                try:
                    got[i].extend((e.event, e.data, e.id) for e in d.feed(group))
                    break
                except RuntimeError:
                    pass  # busy: the other thread is feeding it; try again

    _run_threads(feed, 2)
    # Each call fed whole events, so each thread got exactly its groups' events, in order.
    assert got == expected and len(got[0]) > 100
