"""Iterate the events of a byte stream (sync and async): raw SSE events,
or a provider's normalized events."""

from __future__ import annotations

from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Optional, Union, overload

from ._ssefold import ServerSentEvent, SSEDecoder, Stream, StreamEvent

__all__ = ["iter_events", "aiter_events"]


def _stream(provider: Union[str, "Stream[Any]"]) -> "Stream[Any]":
    return provider if isinstance(provider, Stream) else Stream(provider)


@overload
def iter_events(
    chunks: Iterable[bytes], provider: None = None, *, decoder: Optional[SSEDecoder] = None
) -> Iterator[ServerSentEvent]: ...
@overload
def iter_events(
    chunks: Iterable[bytes], provider: Union[str, "Stream[Any]"], *, decoder: None = None
) -> Iterator[StreamEvent]: ...


def iter_events(
    chunks: Iterable[bytes],
    provider: Union[None, str, "Stream[Any]"] = None,
    *,
    decoder: Optional[SSEDecoder] = None,
) -> Iterator[Union[ServerSentEvent, StreamEvent]]:
    """Yields the events of ``chunks`` (any chunking), then ends the stream.

    * ``provider=None``: raw :class:`ServerSentEvent` objects. Pass your own
      ``decoder`` to set limits or to read ``discarded_bytes`` /
      ``unterminated`` afterwards (a truncated stream is visible there).
    * ``provider="anthropic" | "openai_chat" | "openai_responses" | "auto"``
      (or a :class:`Stream` instance, to read its ``message`` afterwards):
      normalized :class:`StreamEvent` objects; at the end
      :class:`IncompleteStreamError` if the terminal event never came.
    """
    if provider is None:
        dec = SSEDecoder() if decoder is None else decoder
        for chunk in chunks:
            yield from dec.feed(chunk)
        yield from dec.finish()
        return
    stream = _stream(provider)
    for chunk in chunks:
        yield from stream.feed(chunk)
    yield from stream.finish()


@overload
def aiter_events(
    chunks: AsyncIterable[bytes], provider: None = None, *, decoder: Optional[SSEDecoder] = None
) -> AsyncIterator[ServerSentEvent]: ...
@overload
def aiter_events(
    chunks: AsyncIterable[bytes], provider: Union[str, "Stream[Any]"], *, decoder: None = None
) -> AsyncIterator[StreamEvent]: ...


async def aiter_events(
    chunks: AsyncIterable[bytes],
    provider: Union[None, str, "Stream[Any]"] = None,
    *,
    decoder: Optional[SSEDecoder] = None,
) -> AsyncIterator[Union[ServerSentEvent, StreamEvent]]:
    """The async twin of :func:`iter_events` (e.g. over
    ``httpx.Response.aiter_bytes()``)."""
    if provider is None:
        dec = SSEDecoder() if decoder is None else decoder
        async for chunk in chunks:
            for event in dec.feed(chunk):
                yield event
        for event in dec.finish():
            yield event
        return
    stream = _stream(provider)
    async for chunk in chunks:
        for ev in stream.feed(chunk):
            yield ev
    for ev in stream.finish():
        yield ev
