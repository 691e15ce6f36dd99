#!/usr/bin/env python3
"""Seeds the fuzz corpora (fuzz/corpus/<target>/, not committed) from the
repository's SSE fixtures and recordings, plus generated hostile cases (lone
surrogate escapes, stray terminal events), each with the target's header
bytes. Run from the repository root: python3 fuzz/seeds.py"""

import hashlib
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
bodies = [p.read_bytes() for p in sorted((root / "tests").glob("**/*.sse")) if p.stat().st_size <= 256 << 10]
hostile = [
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    b"data: [DONE]\n\n",
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"broken emoji: \\ud83d"}}\n\n',
    b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\\udc00"}}]}\n\n',
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","output_index":0,'
    b'"content_index":0,"delta":"\\ud800\\ud800\\udc00","sequence_number":3}\n\n',
]
headers = {"providers": [bytes([d, 0]) for d in (0, 1, 2, 3, 7)], "sse_decode": [bytes([c, 1, 2, 3, 4]) for c in (0, 1, 2)]}
for target, heads in headers.items():
    out = root / "fuzz" / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for body in bodies + hostile:
        for head in heads:
            seed = head + body
            (out / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
            n += 1
    print(f"{target}: {n} seeds in {out}")
