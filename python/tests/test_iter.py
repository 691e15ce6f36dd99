"""iter_events / aiter_events over byte iterables."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, List

import pytest

import ssefold
from conftest import peer_fixture_files

STREAM = b"event: a\ndata: 1\n\n: ping\n\nevent: b\ndata: 2\nid: x\n\ndata: cut"


def test_iter_events_any_chunking() -> None:
    want = [ssefold.ServerSentEvent("a", "1"), ssefold.ServerSentEvent("b", "2", "x")]
    for size in (1, 2, 3, 7, len(STREAM)):
        chunks = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]
        decoder = ssefold.SSEDecoder()
        assert list(ssefold.iter_events(chunks, decoder=decoder)) == want
        assert decoder.discarded_bytes == len(b"data: cut")


def test_aiter_events() -> None:
    async def body() -> AsyncIterator[bytes]:
        for i in range(0, len(STREAM), 5):
            await asyncio.sleep(0)
            yield STREAM[i : i + 5]

    async def collect() -> List[ssefold.ServerSentEvent]:
        return [e async for e in ssefold.aiter_events(body())]

    assert [e.event for e in asyncio.run(collect())] == ["a", "b"]


def test_iter_events_on_a_recorded_stream() -> None:
    path = next(p for p in peer_fixture_files() if p.name == "basic_response.txt")
    data = path.read_bytes()
    events = list(ssefold.iter_events(data[i : i + 64] for i in range(0, len(data), 64)))
    assert events[0].event == "message_start"


def test_unknown_provider_is_refused() -> None:
    with pytest.raises(ValueError):
        list(ssefold.iter_events([b""], provider="nope"))  # type: ignore[arg-type]
