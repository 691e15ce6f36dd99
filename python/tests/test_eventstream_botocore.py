"""Differential test of ssefold's AWS event-stream decoder against botocore's
own parser (``botocore.eventstream.EventStreamBuffer``, pinned in
requirements-test.txt): random valid streams decode to the same headers and
payloads; streams with one corrupted byte are refused by both, after the same
messages. ssefold's side runs through ``cargo run --example eventstream_dump``
(built once per session), in whole and in small chunks."""

from __future__ import annotations

import binascii
import json
import os
import random
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

eventstream = pytest.importorskip("botocore.eventstream")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dump() -> str:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    # The test profile: `cargo test` (make rust-test) built the example so.
    subprocess.run(
        ["cargo", "build", "-q", "--profile", "test", "--example", "eventstream_dump"],
        cwd=ROOT,
        check=True,
    )
    return str(target / "debug" / "examples" / "eventstream_dump")


def encode(headers: list[tuple[str, int, bytes]], payload: bytes) -> bytes:
    """One message, built from the format's definition."""
    h = b""
    for name, kind, value in headers:
        raw = name.encode()
        h += bytes([len(raw)]) + raw + bytes([kind])
        if kind in (6, 7):
            h += struct.pack("!H", len(value))
        h += value
    total = 12 + len(h) + len(payload) + 4
    prelude = struct.pack("!II", total, len(h))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + h + payload
    return body + struct.pack("!I", binascii.crc32(body) & 0xFFFFFFFF)


def random_header(rng: random.Random, name: str) -> tuple[str, int, bytes]:
    kind = rng.randrange(10)
    size = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}.get(kind)
    if kind == 7:
        value = "".join(rng.choice("abcé😀 {}:\"\n") for _ in range(rng.randrange(30))).encode()
    elif kind == 6:
        value = rng.randbytes(rng.randrange(40))
    else:
        assert size is not None
        value = rng.randbytes(size)
    return name, kind, value


def random_stream(rng: random.Random) -> bytes:
    out = b""
    for _ in range(rng.randrange(1, 6)):
        names = rng.sample([":event-type", ":message-type", ":content-type", "a", "bb", "x-amz", "seq", "id"], rng.randrange(0, 6))
        headers = [random_header(rng, n) for n in names]
        payload = rng.randbytes(rng.randrange(0, 300))
        out += encode(headers, payload)
    return out


def comparable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def botocore_side(data: bytes) -> tuple[list[dict[str, Any]], str | None]:
    buf = eventstream.EventStreamBuffer()
    buf.add_data(data)
    messages: list[dict[str, Any]] = []
    try:
        for message in buf:
            messages.append(
                {
                    "headers": {k: comparable(v) for k, v in message.headers.items()},
                    "payload": message.payload.hex(),
                }
            )
    except eventstream.ParserError as error:
        return messages, type(error).__name__
    return messages, None


def ssefold_side(dump: str, data: bytes, chunk: int) -> tuple[list[dict[str, Any]], str | None, int]:
    proc = subprocess.run([dump, str(chunk)], input=data, capture_output=True, check=False)
    messages: list[dict[str, Any]] = []
    error = None
    incomplete = 0
    for line in proc.stdout.decode().splitlines():
        obj = json.loads(line)
        if "error" in obj:
            error = obj["error"]
        elif "incomplete" in obj:
            incomplete = obj["incomplete"]
        else:
            messages.append({"headers": {k: v for k, v in obj["headers"]}, "payload": obj["payload"]})
    assert (proc.returncode != 0) == (error is not None)
    return messages, error, incomplete


# botocore's error classes for each of ours.
ERRORS = {
    "PreludeCrcMismatch": "ChecksumMismatch",
    "MessageCrcMismatch": "ChecksumMismatch",
    "HeadersTooLarge": "InvalidHeadersLength",
    "MessageTooLarge": "InvalidPayloadLength",
    "DuplicateHeader": "DuplicateHeader",
}


@pytest.mark.parametrize("seed", range(40))
def test_random_streams_decode_like_botocore(dump: str, seed: int) -> None:
    rng = random.Random(seed)
    data = random_stream(rng)
    expected, error = botocore_side(data)
    assert error is None
    for chunk in (len(data), 1, rng.randrange(2, 64)):
        messages, ours, incomplete = ssefold_side(dump, data, chunk)
        assert ours is None and incomplete == 0
        assert messages == expected


@pytest.mark.parametrize("seed", range(40))
def test_a_corrupted_byte_is_refused_by_both_after_the_same_messages(dump: str, seed: int) -> None:
    rng = random.Random(1000 + seed)
    data = bytearray(random_stream(rng))
    at = rng.randrange(len(data))
    data[at] ^= 1 << rng.randrange(8)
    expected, error = botocore_side(bytes(data))
    messages, ours, incomplete = ssefold_side(dump, bytes(data), rng.randrange(1, 50))
    if error is None:
        # A flipped length bit can make botocore wait for more bytes: we
        # report the same messages and an unfinished one, or refuse it.
        assert messages == expected
        assert incomplete > 0 or ours is not None
        return
    assert ours is not None, f"botocore: {error}, ssefold accepted"
    assert messages == expected
    assert ERRORS.get(ours, ours) == error or (ours == "BadLength" and error in ("ChecksumMismatch", "InvalidPayloadLength", "InvalidHeadersLength")), (ours, error)


def test_an_empty_header_name_is_accepted_like_botocore(dump: str) -> None:
    data = encode([("", 7, b"v"), (":event-type", 7, b"chunk")], b"p")
    data += encode([("", 0, b""), ("a", 4, b"\x00\x00\x00\x07")], b"")
    expected, error = botocore_side(data)
    assert error is None
    assert [m["headers"] for m in expected] == [{"": "v", ":event-type": "chunk"}, {"": True, "a": 7}]
    for chunk in (len(data), 1, 5):
        messages, ours, incomplete = ssefold_side(dump, data, chunk)
        assert (ours, incomplete) == (None, 0)
        assert messages == expected


@pytest.mark.parametrize(
    "headers",
    [
        [(":event-type", 7, b"chunk"), (":event-type", 7, b"chunk")],
        [(":event-type", 7, b"chunk"), (":event-type", 0, b"")],
        [("", 0, b""), ("a", 1, b""), ("", 1, b"")],
        [("x", 2, b"\x01"), ("y", 6, b"\x00\x01"), ("x", 9, bytes(16))],
    ],
)
def test_a_repeated_header_name_is_refused_like_botocore(dump: str, headers: list[tuple[str, int, bytes]]) -> None:
    data = encode([(":event-type", 7, b"chunk")], b"first") + encode(headers, b"second")
    expected, error = botocore_side(data)
    assert error == "DuplicateHeader"
    assert len(expected) == 1
    for chunk in (len(data), 1, 7):
        messages, ours, _ = ssefold_side(dump, data, chunk)
        assert ERRORS.get(ours, ours) == error
        assert messages == expected


@pytest.mark.parametrize("seed", range(40))
def test_random_headers_with_empty_and_repeated_names_agree_with_botocore(dump: str, seed: int) -> None:
    rng = random.Random(2000 + seed)
    data = b""
    for _ in range(rng.randrange(1, 5)):
        names = [rng.choice(["", "a", ":event-type", "bb"]) for _ in range(rng.randrange(0, 4))]
        data += encode([random_header(rng, n) for n in names], rng.randbytes(rng.randrange(0, 40)))
    expected, error = botocore_side(data)
    messages, ours, incomplete = ssefold_side(dump, data, rng.randrange(1, 40))
    assert ERRORS.get(ours, ours) == error
    assert messages == expected
    assert incomplete == 0
