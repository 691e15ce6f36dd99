"""Iterate the events of a byte stream (sync and async)."""

from __future__ import annotations

from typing import AsyncIterable, AsyncIterator, Iterable, Iterator, Optional

from ._ssefold import ServerSentEvent, SSEDecoder


def iter_events(
    chunks: Iterable[bytes],
    provider: None = None,
    *,
    decoder: Optional[SSEDecoder] = None,
) -> Iterator[ServerSentEvent]:
    """Yields the events of ``chunks`` (any chunking), then ends the stream.

    Pass your own ``decoder`` to set limits or to read ``discarded_bytes`` /
    ``unterminated`` afterwards (a truncated stream is visible there).
    """
    if provider is not None:
        raise ValueError(f"unknown provider {provider!r}")
    dec = SSEDecoder() if decoder is None else decoder
    for chunk in chunks:
        yield from dec.feed(chunk)
    yield from dec.finish()


async def aiter_events(
    chunks: AsyncIterable[bytes],
    provider: None = None,
    *,
    decoder: Optional[SSEDecoder] = None,
) -> AsyncIterator[ServerSentEvent]:
    """The async twin of :func:`iter_events` (e.g. over
    ``httpx.Response.aiter_bytes()``)."""
    if provider is not None:
        raise ValueError(f"unknown provider {provider!r}")
    dec = SSEDecoder() if decoder is None else decoder
    async for chunk in chunks:
        for event in dec.feed(chunk):
            yield event
    for event in dec.finish():
        yield event
