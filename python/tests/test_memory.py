"""No leak: decoding the same bytes many times keeps the process's resident
memory flat (orjson's test_memory idea; Linux /proc only)."""

from __future__ import annotations

import gc
import os
import pathlib

import pytest

import ssefold

from conftest import benchmark_corpus

STATM = pathlib.Path("/proc/self/statm")
pytestmark = pytest.mark.skipif(not STATM.exists(), reason="needs /proc/self/statm")


def rss() -> int:
    gc.collect()
    return int(STATM.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_decoder_objects_are_freed() -> None:
    data = benchmark_corpus("anthropic-text", 256 << 10)
    chunks = [data[i : i + 4096] for i in range(0, len(data), 4096)]

    def work() -> None:
        d = ssefold.SSEDecoder()
        for c in chunks:
            d.feed(c)
        d.finish()
        try:
            ssefold.SSEDecoder(max_line_len=8).feed(data[:4096])
        except ssefold.DecodeError:
            pass
        p = ssefold.PartialJSON()
        p.push('{"a": ["x", {"b": 1}], "c": "' + "y" * 1000)
        _ = p.value

    for _ in range(5):
        work()
    before = rss()
    for _ in range(60):
        work()
    growth = rss() - before
    # 60 runs over 256 KiB each create ~15 MB of event objects: a leak of
    # even one object per event would show as several MB.
    assert growth < 2 << 20, growth
