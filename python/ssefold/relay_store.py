"""Replay stores: a relayed stream kept where every server process can serve it.

A :class:`~ssefold.Relay` keeps the last frames it wrote for
``Relay.replay_after`` in its own process. Production servers run several
processes and restart them, so a browser that reconnects with
``Last-Event-ID`` may land on a process that never saw the stream. A replay
store holds each frame under its event id where any process reaches it:

- the process that relays the provider stream appends every call's frames
  (``Relay.frames()``) and, at the end, the finished marker with
  ``Relay.trailer`` (:meth:`ReplayStore.save` does both);
- any process serves ``GET /stream/<id>`` with :meth:`ReplayStore.after`:
  the frames after the browser's ``Last-Event-ID``, then the new ones as they
  are appended, until the finished marker (and its trailer).

Exactly once: frames are stored under their event ids and an id already
stored is refused, so a producer that appends a call again stores nothing
twice; a reader sends the frames with greater ids than ``Last-Event-ID``
only, in order. Where to resume is decided by the core
(:func:`ssefold.resume_point`): an id newer than the store holds raises
``RelayError(kind="unknown_event_id")``, an id whose next frame is no longer
held (the stream expired) ``RelayError(kind="replay_too_old")``, as
``Relay.replay_after`` does.

:class:`MemoryReplayStore` keeps streams in this process (tests, one-process
servers); :class:`RedisReplayStore` keeps them in Redis Streams (the
``redis`` package: ``pip install 'ssefold[redis]'``). Both move bytes only:
they never read the frames' JSON.

.. code-block:: python

    store = RedisReplayStore(redis.asyncio.Redis.from_url(url))
    # the producer: save after every relay call (its frames only)
    relay = Relay("catalog")
    async for chunk in provider_body:
        relay.feed(chunk)
        await store.save(turn_id, relay)
    relay.end_of_input()
    await store.save(turn_id, relay)
    relay.finish()
    await store.save(turn_id, relay)  # the finish frame, then the marker
    # any process, per request
    async for frame in store.after(turn_id, request.headers.get("last-event-id")):
        await send(frame or b": keep-alive\\n\\n")
"""

from __future__ import annotations

import abc
import asyncio
import bisect
import time
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any, Optional, Union

from ._ssefold import Relay, resume_point

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["ReplayStore", "MemoryReplayStore", "RedisReplayStore", "DEFAULT_TTL_SECONDS", "DEFAULT_BLOCK_MS"]

#: How long a stream is kept after its last write (24 h).
DEFAULT_TTL_SECONDS = 24 * 60 * 60
#: How long a reader waits for a new frame before it yields ``b""`` (the
#: moment for a keep-alive comment).
DEFAULT_BLOCK_MS = 5_000


class ReplayStore(abc.ABC):
    """Frames of relayed streams by stream id and event id (see the module docs)."""

    @abc.abstractmethod
    async def append(self, stream_id: str, frames: Iterable[tuple[int, bytes]]) -> int:
        """Stores ``(event_id, frame)`` pairs (``Relay.frames()``); ids
        already stored, or older than the newest stored, are refused.
        Returns how many were stored. Refreshes the stream's expiry."""

    @abc.abstractmethod
    async def finish(self, stream_id: str, trailer: bytes = b"") -> None:
        """Marks the stream finished; readers send ``trailer``
        (``Relay.trailer``) after its last frame, then end. Nothing can be
        appended afterwards."""

    @abc.abstractmethod
    def after(self, stream_id: str, last_event_id: Optional[str] = None) -> AsyncIterator[bytes]:
        """The frames after ``last_event_id`` (the browser's
        ``Last-Event-ID`` header; ``None``: from the first), then each new
        frame as it is appended, then the trailer when the stream finished.
        Yields ``b""`` when no frame came for the block time (send a
        keep-alive comment then). Raises ``RelayError`` (before yielding)
        as ``ssefold.resume_point``. Ends early when the stream expires
        while followed (its producer died): the browser's reconnection then
        gets ``RelayError(kind="replay_too_old")``; a stream not written yet
        is waited for."""

    async def save(self, stream_id: str, relay: Relay) -> int:
        """Appends the frames of the relay's last call, and finishes the
        stream when the relay has finished. Returns the frames stored."""
        stored = await self.append(stream_id, relay.frames())
        if relay.is_finished:
            await self.finish(stream_id, relay.trailer)
        return stored


class _MemoryStream:
    __slots__ = ("frames", "trailer", "changed", "expires_at")

    def __init__(self) -> None:
        self.frames: list[tuple[int, bytes]] = []
        self.trailer: Optional[bytes] = None
        self.changed = asyncio.Event()
        self.expires_at = 0.0


class MemoryReplayStore(ReplayStore):
    """Streams kept in this process (one event loop): the default, and what
    tests use. ``ttl_seconds``: a stream is dropped that long after its
    last write; ``block_ms``: see :meth:`ReplayStore.after`."""

    def __init__(self, *, ttl_seconds: float = DEFAULT_TTL_SECONDS, block_ms: int = DEFAULT_BLOCK_MS) -> None:
        self.ttl_seconds = ttl_seconds
        self.block_ms = block_ms
        self._streams: dict[str, _MemoryStream] = {}

    def _stream(self, stream_id: str, create: bool) -> Optional[_MemoryStream]:
        now = time.monotonic()
        for key in [k for k, s in self._streams.items() if s.expires_at <= now]:
            del self._streams[key]
        stream = self._streams.get(stream_id)
        if stream is None and create:
            stream = self._streams[stream_id] = _MemoryStream()
        if stream is not None and create:
            stream.expires_at = now + self.ttl_seconds
        return stream

    def _wake(self, stream: _MemoryStream) -> None:
        stream.changed.set()
        stream.changed = asyncio.Event()

    async def append(self, stream_id: str, frames: Iterable[tuple[int, bytes]]) -> int:
        stream = self._stream(stream_id, create=True)
        assert stream is not None
        stored = 0
        for event_id, frame in frames:
            newest = stream.frames[-1][0] if stream.frames else 0
            if stream.trailer is not None or event_id <= newest:
                continue
            stream.frames.append((event_id, bytes(frame)))
            stored += 1
        if stored:
            self._wake(stream)
        return stored

    async def finish(self, stream_id: str, trailer: bytes = b"") -> None:
        stream = self._stream(stream_id, create=True)
        assert stream is not None
        if stream.trailer is None:
            stream.trailer = bytes(trailer)
            self._wake(stream)

    async def after(self, stream_id: str, last_event_id: Optional[str] = None) -> AsyncIterator[bytes]:
        stream = self._stream(stream_id, create=False)
        frames = stream.frames if stream is not None else []
        held = (frames[0][0], frames[-1][0]) if frames else (None, None)
        cursor = 0 if last_event_id is None else resume_point(last_event_id, *held)
        idle = 0.0
        while True:
            stream = self._stream(stream_id, create=False)
            if stream is None:
                if cursor > 0:
                    return  # expired while followed: a reconnection gets "too old"
                # Not written yet: wait for its first frame.
                await asyncio.sleep(0.05)
                idle += 0.05
                if idle * 1000 >= self.block_ms:
                    idle = 0.0
                    yield b""
                continue
            changed = stream.changed
            # Ids are ascending: skip to the first after the cursor.
            start = bisect.bisect_left(stream.frames, (cursor + 1,))
            for event_id, frame in stream.frames[start:]:
                cursor = event_id
                yield frame
            if stream.trailer is not None:
                if stream.trailer:
                    yield stream.trailer
                return
            try:
                await asyncio.wait_for(changed.wait(), self.block_ms / 1000)
            except asyncio.TimeoutError:
                yield b""


# Redis: one stream key per relayed turn. Frame N is entry `0-N` (field `f`),
# so XADD refuses an id already stored (or older than the newest): exactly
# once. The finished marker is entry `1-0` (field `t`: the trailer), after
# every frame and before none, so nothing can be appended after it and a
# reader following the stream with XREAD meets it last. Each write refreshes
# the key's expiry.
_APPEND = """
local stored = 0
for i = 2, #ARGV, 2 do
  local r = redis.pcall('XADD', KEYS[1], '0-' .. ARGV[i], 'f', ARGV[i + 1])
  if type(r) ~= 'table' or r.err == nil then stored = stored + 1 end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return stored
"""
_FINISH = """
redis.pcall('XADD', KEYS[1], '1-0', 't', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""
_FRAME_IDS_END = "0-18446744073709551615"


def _entry_id(raw: Union[bytes, str]) -> tuple[int, int]:
    text = raw.decode() if isinstance(raw, bytes) else raw
    ms, _, seq = text.partition("-")
    return int(ms), int(seq)


def _field(fields: dict[Any, Any], name: str) -> bytes:
    value = fields.get(name.encode(), fields.get(name, b""))
    return value.encode() if isinstance(value, str) else bytes(value)


class RedisReplayStore(ReplayStore):
    """Streams kept in Redis Streams (``redis.asyncio.Redis``, Redis >= 5;
    the client must not decode responses): key ``prefix + stream_id``,
    frame N as entry ``0-N``, the finished marker as entry ``1-0``.
    ``ttl_seconds``: the key expires that long after its last write
    (``EXPIRE`` on every append); ``block_ms``: ``XREAD BLOCK`` time of a
    following reader."""

    def __init__(
        self,
        client: Redis,
        *,
        prefix: str = "ssefold:relay:",
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        block_ms: int = DEFAULT_BLOCK_MS,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.ttl_seconds = ttl_seconds
        self.block_ms = block_ms
        self._append = client.register_script(_APPEND)
        self._finish = client.register_script(_FINISH)

    def key(self, stream_id: str) -> str:
        """The Redis key of a stream."""
        return self.prefix + stream_id

    async def append(self, stream_id: str, frames: Iterable[tuple[int, bytes]]) -> int:
        args: list[Union[int, bytes]] = [self.ttl_seconds]
        for event_id, frame in frames:
            args += [event_id, frame]
        if len(args) == 1:
            return 0
        return int(await self._append(keys=[self.key(stream_id)], args=args))

    async def finish(self, stream_id: str, trailer: bytes = b"") -> None:
        await self._finish(keys=[self.key(stream_id)], args=[self.ttl_seconds, trailer])

    async def after(self, stream_id: str, last_event_id: Optional[str] = None) -> AsyncIterator[bytes]:
        key = self.key(stream_id)
        after = 0
        if last_event_id is not None:
            # The oldest and newest frames (the finished marker is no frame).
            first: Any = await self.client.xrange(key, "-", _FRAME_IDS_END, count=1)
            last: Any = await self.client.xrevrange(key, _FRAME_IDS_END, "-", count=1)
            oldest = _entry_id(first[0][0])[1] if first else None
            newest = _entry_id(last[0][0])[1] if last else None
            after = resume_point(last_event_id, oldest, newest)
        cursor: Union[bytes, str] = f"0-{after}"
        while True:
            reply: Any = await self.client.xread({key: cursor}, count=512, block=self.block_ms)
            if not reply:
                if _entry_id(cursor) != (0, 0) and not await self.client.exists(key):
                    return  # expired while followed: a reconnection gets "too old"
                yield b""
                continue
            # RESP2: [[key, entries]]; RESP3: {key: [entries]}.
            entries = next(iter(reply.values()))[0] if isinstance(reply, dict) else reply[0][1]
            for entry_id, fields in entries:
                cursor = entry_id
                if _entry_id(entry_id)[0] == 0:
                    yield _field(fields, "f")
                else:
                    trailer = _field(fields, "t")
                    if trailer:
                        yield trailer
                    return
