"""The AWS event-stream decoder against botocore's own parser, on the same
bytes in the same run.

The body is the synthetic Bedrock ``ConverseStream`` corpus
(``cargo run -p ssefold-corpus -- bedrock-converse BYTES``: 100-300-byte
text deltas, 1-16 KiB tool-input deltas, three string headers a message).
ssefold's decoder is not exposed in Python, so its side runs as the Rust
example ``eventstream_bench`` on the same file (4 KiB chunks, each
message's ``:event-type`` looked up, best of ROUNDS in thread CPU time, with
memcpy of the same chunks); botocore's side is
``botocore.eventstream.EventStreamBuffer`` fed the same 4 KiB chunks, every
message's ``:event-type`` and payload read, best of ROUNDS in process CPU
time. Prints a Markdown table.

    python python/bench/eventstream.py [MB] [ROUNDS]
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from botocore.eventstream import EventStreamBuffer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from corpus import ROOT, corpus_bytes  # noqa: E402

CHUNK = 4096


def botocore_pass(body: bytes) -> tuple[int, int]:
    buf = EventStreamBuffer()
    messages = payload = 0
    for at in range(0, len(body), CHUNK):
        buf.add_data(body[at : at + CHUNK])
        for message in buf:
            message.headers.get(":event-type")
            payload += len(message.payload)
            messages += 1
    return messages, payload


def rust_side(path: str, rounds: int) -> dict:
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if cargo is None:
        raise RuntimeError("the Rust side needs cargo")
    cmd = [cargo, "run", "--quiet", "--release", "--example", "eventstream_bench", "--", path, str(rounds)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    body = corpus_bytes("bedrock-converse", mb << 20)
    with tempfile.NamedTemporaryFile(suffix=".eventstream", delete=False) as f:
        f.write(body)
        path = f.name
    try:
        rust = rust_side(path, rounds)
    finally:
        os.unlink(path)
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        messages, payload = botocore_pass(body)
        best = min(best, time.process_time() - t)
    assert (messages, payload) == (rust["messages"], rust["payload_bytes"]), (messages, payload, rust)
    mib = len(body) / (1 << 20)
    print(f"{len(body) / 1e6:.1f} MB, {messages} messages, {payload} payload bytes; best of {rounds}")
    print()
    print("| decoder | MiB/s | M messages/s | vs ssefold |")
    print("| --- | ---: | ---: | ---: |")
    rows = [
        ("memcpy of the same 4 KiB chunks", rust["memcpy_s"]),
        ("ssefold `eventstream::Decoder` (Rust example)", rust["decode_s"]),
        (f"botocore {__import__('botocore').__version__} `EventStreamBuffer`", best),
    ]
    for name, secs in rows:
        print(f"| {name} | {mib / secs:.0f} | {messages / secs / 1e6:.2f} | {secs / rust['decode_s']:.2f}× the time |")


if __name__ == "__main__":
    main()
