"""Shared helpers: the repository's fixtures and the chunkings every input
goes through (whole, byte by byte, split at every index, plus trailing data)."""

from __future__ import annotations

import importlib.util
import pathlib
import random
from typing import Iterator, List, Tuple

import pytest

import ssefold

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "sse_spec.json"
PEER_FIXTURES = ROOT / "tests" / "peer-fixtures"


def benchmark_corpus(name: str, size: int) -> bytes:
    """The benchmark corpus ``name`` of about ``size`` bytes, from the
    development crate crates/ssefold-corpus (through python/bench/corpus.py)."""
    spec = importlib.util.spec_from_file_location("ssefold_bench_corpus", ROOT / "python" / "bench" / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data: bytes = module.corpus_bytes(name, size)
    return data


def peer_fixture_files() -> List[pathlib.Path]:
    return sorted(p for p in PEER_FIXTURES.rglob("*") if p.suffix in (".sse", ".txt"))


def chunkings(data: bytes, max_splits: int = 400) -> Iterator[Tuple[str, List[bytes]]]:
    """The ways the tests split one input: whole, byte by byte, and in two at
    every index (at most ``max_splits`` of them, evenly spread, for long
    inputs: the Rust suite already splits those at every index), plus random
    cuts into many pieces."""
    yield "whole", [data]
    yield "bytewise", [data[i : i + 1] for i in range(len(data))]
    stride = max(1, len(data) // max_splits)
    for i in range(1, len(data), stride):
        yield f"split@{i}", [data[:i], data[i:]]
    rng = random.Random(len(data))
    for n in range(5):
        cuts = sorted({rng.randrange(len(data) + 1) for _ in range(2 + n * 4)} | {0, len(data)})
        yield f"random{n}", [data[a:b] for a, b in zip(cuts, cuts[1:])]


def decode(chunks: List[bytes], **options: object) -> Tuple[List[ssefold.ServerSentEvent], ssefold.SSEDecoder]:
    decoder = ssefold.SSEDecoder(**options)  # type: ignore[arg-type]
    events: List[ssefold.ServerSentEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    events += decoder.finish()
    return events, decoder


def decode_lenient(chunks: List[bytes], **options: object) -> Tuple[List[object], ssefold.SSEDecoder]:
    """Like :func:`decode`, but decode errors are collected in the output
    (as ``(class name, offset)``) with the events of their chunk."""
    decoder = ssefold.SSEDecoder(**options)  # type: ignore[arg-type]
    out: List[object] = []
    for chunk in chunks:
        try:
            out += decoder.feed(chunk)
        except ssefold.DecodeError as err:
            out += err.events
            assert err.errors[0] is err
            out += [(type(e).__name__, e.offset) for e in err.errors]
    out += decoder.finish()
    return out, decoder


@pytest.fixture(params=peer_fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def peer_fixture(request: pytest.FixtureRequest) -> pathlib.Path:
    path: pathlib.Path = request.param
    return path
