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


def event_stream_messages(body):
    """(headers, payload) of each message of an AWS event-stream body."""
    out, at = [], 0
    while at + 16 <= len(body):
        total = int.from_bytes(body[at:at + 4], "big")
        hlen = int.from_bytes(body[at + 4:at + 8], "big")
        raw, headers, i = body[at + 12:at + 12 + hlen], {}, 0
        while i < len(raw):
            n = raw[i]
            name = raw[i + 1:i + 1 + n].decode()
            kind = raw[i + 1 + n]
            i += 2 + n
            if kind in (6, 7):
                size = int.from_bytes(raw[i:i + 2], "big")
                value = raw[i + 2:i + 2 + size]
                i += 2 + size
            else:
                size = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}[kind]
                value = raw[i:i + size]
                i += size
            headers[name] = value
        out.append((headers, body[at + 12 + hlen:at + total - 4]))
        at += total
    return out


SELECTORS = {b"messageStart": 2, b"contentBlockStart": 3, b"contentBlockDelta": 4, b"contentBlockStop": 5,
             b"messageStop": 6, b"metadata": 7}
EXCEPTIONS = {b"throttlingException": 8, b"modelStreamErrorException": 9, b"validationException": 10}


def bedrock_record_seeds(body):
    """A Bedrock event-stream body as the `bedrock_records` target's records
    (`chunk` payloads decoded, so that the fuzzer mutates the JSON)."""
    out = b""
    for headers, payload in event_stream_messages(body):
        kind = headers.get(":event-type", b"")
        if headers.get(":message-type") == b"exception":
            selector = EXCEPTIONS.get(headers.get(":exception-type"), 8)
        elif kind == b"chunk":
            selector = 0
            try:
                payload = base64.b64decode(__import__("json").loads(payload)["bytes"])
            except Exception:
                selector = 1
        else:
            selector = SELECTORS.get(kind, 13)
        if len(payload) >= 1 << 16:
            continue
        out += bytes([selector]) + len(payload).to_bytes(2, "little") + payload
    return out


def anthropic_records(body):
    """An Anthropic SSE body as `bedrock_records` chunk records."""
    out = b""
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:"))
        if data and len(data) < 1 << 16:
            out += b"\x00" + len(data).to_bytes(2, "little") + data
    return out


tool_bodies = [b for b in bodies if any(m in b for m in (b"tool_use", b"tool_calls", b"function_call", b"functionCall"))]
seeds = {
    "agent_turn": [(bytes([3 | (0, 32, 4, 64, 16)[i % 5], i % 13]), body) for i, body in enumerate(tool_bodies)]
    + [(bytes([3 | 16, 5]), body) for body in bodies[::8] + hostile]
    + [(bytes([d, 0]), body) for body in gemini[::2] for d in (8, 72)]
    + [(bytes([d, 0]), body) for body in ollama for d in (9, 41)],
    "providers": [(bytes([d, 0]), body) for body in bodies + hostile for d in (0, 1, 2, 3, 7)]
    + [(bytes([d, 0]), body) for body in gemini for d in (8, 12)]
    + [(bytes([d, 0]), body) for body in ollama for d in (3, 9, 13)],
    "sse_decode": [(bytes([c, 1, 2, 3, 4]), body) for body in bodies + hostile for c in (0, 1, 2)],
    "eventstream": [(bytes([f, 0]), bedrock_records(body)) for body in anthropic for f in (1, 3, 7, 19)]
    + [(bytes([f, 0]), body) for body in bedrock for f in (0, 2, 18)]
    + [(bytes([f, 0]), body) for body in converse for f in (0, 10, 18)],
    "bedrock_records": [(bytes([f, 5, 128]), bedrock_record_seeds(body)) for body in bedrock + converse for f in (0, 1, 2, 4)]
    + [(bytes([f, 3, 77]), anthropic_records(body)) for body in anthropic for f in (0, 2)]
    + [(bytes([f, 0, 9]), bedrock_record_seeds(body)) for body in converse[:8] for f in (50, 58)],
}
for target, pairs in seeds.items():
    out = root / "fuzz" / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    for head, body in pairs:
        seed = head + body
        (out / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    print(f"{target}: {len(pairs)} seeds in {out}")
