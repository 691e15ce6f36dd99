#!/usr/bin/env python3
"""Seeds the fuzz corpora (fuzz/corpus/<target>/, not committed) from the
repository's SSE and NDJSON fixtures and recordings (the Anthropic ones also
framed as Bedrock event-stream records), plus generated hostile cases (lone
surrogate escapes, stray terminal events), each with the target's header
bytes. Run from the repository root: python3 fuzz/seeds.py"""

import base64
import hashlib
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
tests = root / "tests"


def small(paths):
    return [p for p in sorted(paths) if p.stat().st_size <= 256 << 10]


sse = small(tests.glob("**/*.sse"))
bodies = [p.read_bytes() for p in sse]
gemini = [p.read_bytes() for p in sse if "gemini" in p.parts]
ollama = [p.read_bytes() for p in small(tests.glob("**/*.ndjson"))]
bedrock = [p.read_bytes() for p in small(tests.glob("recordings/bedrock/**/*.bin"))]
converse = [p.read_bytes() for p in small(tests.glob("recordings/bedrock_converse/**/*.bin"))]
anthropic = [p.read_bytes() for p in sse if b"event: message_start" in p.read_bytes()[:4096]]
hostile = [
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    b"data: [DONE]\n\n",
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"broken emoji: \\ud83d"}}\n\n',
    b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\\udc00"}}]}\n\n',
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","output_index":0,'
    b'"content_index":0,"delta":"\\ud800\\ud800\\udc00","sequence_number":3}\n\n',
]


def header(name, value):
    """One string header (type 7) of the AWS event-stream encoding."""
    name, value = name.encode(), value.encode()
    return bytes([len(name)]) + name + b"\x07" + len(value).to_bytes(2, "big") + value


def bedrock_records(body):
    """An Anthropic SSE body as InvokeModelWithResponseStream `chunk` records
    in the fuzz target's record layout (its bit 0)."""
    heads = header(":event-type", "chunk") + header(":content-type", "application/json") + header(":message-type", "event")
    out = b""
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:"))
        if not data:
            continue
        payload = b'{"bytes":"' + base64.b64encode(data) + b'"}'
        if len(payload) >= 1 << 16:
            continue
        out += bytes([len(heads)]) + heads + len(payload).to_bytes(2, "little") + payload
    return out


seeds = {
    "providers": [(bytes([d, 0]), body) for body in bodies + hostile for d in (0, 1, 2, 3, 7)]
    + [(bytes([d, 0]), body) for body in gemini for d in (8, 12)]
    + [(bytes([d, 0]), body) for body in ollama for d in (3, 9, 13)],
    "sse_decode": [(bytes([c, 1, 2, 3, 4]), body) for body in bodies + hostile for c in (0, 1, 2)],
    "eventstream": [(bytes([f, 0]), bedrock_records(body)) for body in anthropic for f in (1, 3, 7, 19)]
    + [(bytes([f, 0]), body) for body in bedrock for f in (0, 2, 18)]
    + [(bytes([f, 0]), body) for body in converse for f in (0, 10, 18)],
}
for target, pairs in seeds.items():
    out = root / "fuzz" / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    for head, body in pairs:
        seed = head + body
        (out / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    print(f"{target}: {len(pairs)} seeds in {out}")
