"""The benchmark corpora: the core's own (``src/corpus.rs``, through the
extension's ``_corpus``, or ``ssefold corpus NAME BYTES`` from the CLI) or,
failing both, the same shapes generated here with a fixed seed."""

from __future__ import annotations

import json
import pathlib
import random
import shutil
import subprocess
from typing import List, Optional

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAMES = ["anthropic-text", "anthropic-tool-use", "openai-chat"]

WORDS = "the a stream of tokens model answer tool call json value parser event data line byte chunk delta \
message content block text input output usage reason stop start index fold state buffer".split()
SPECIAL = ["\n", "\n\n", '"quoted"', "back\\slash", "café", "naïve", "🙂", "→", "\t"]
PUNCT = [".", ",", ":", ";", "!", "?", "(", ")"]
CODE = [
    "pub fn parse_line(line: &str) -> Option<(&str, &str)> {",
    '    let (name, value) = line.split_once(":")?;',
    "    Some((name, value.strip_prefix(' ').unwrap_or(value)))",
    "}",
    "impl Decoder {",
    '    /// Feeds one chunk; returns "the events".',
    "    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> { todo!() }",
    "        if byte == b'\\n' { self.dispatch(); }",
    "",
]


def from_cli(name: str, size: int) -> Optional[bytes]:
    exe = ROOT / "target" / "release" / "ssefold"
    cmd = [str(exe)] if exe.exists() else None
    if cmd is None and shutil.which("ssefold"):
        cmd = ["ssefold"]
    if cmd is None:
        return None
    try:
        out = subprocess.run(cmd + ["corpus", name, str(size)], capture_output=True, check=True, timeout=60)
    except (subprocess.SubprocessError, OSError):
        return None
    return out.stdout or None


def _ev(name: str, payload: object) -> str:
    return f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}\n\n"


def _text(rng: random.Random) -> str:
    want, s = rng.randint(3, 30), ""
    while len(s.encode()) < want:
        r = rng.randrange(20)
        piece = rng.choice(SPECIAL) if r == 0 else rng.choice(PUNCT) if r < 3 else rng.choice(WORDS)
        s += ("" if not s or piece in PUNCT else " ") + piece
    return s


def _msg_start(rng: random.Random) -> str:
    mid = "msg_01" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(22))
    model = rng.choice(["claude-sonnet-4-5-20250929", "claude-3-5-haiku-20241022"])
    usage = {"input_tokens": rng.randint(12, 40000), "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
    msg = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    return _ev("message_start", {"type": "message_start", "message": msg})


def _msg_end(rng: random.Random, reason: str) -> str:
    delta = {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None}, "usage": {"output_tokens": rng.randint(5, 4000)}}
    return _ev("message_delta", delta) + _ev("message_stop", {"type": "message_stop"})


def _text_block(rng: random.Random, index: int, n: int) -> str:
    out = [_ev("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})]
    if index == 0:
        out.append('event: ping\ndata: {"type": "ping"}\n\n')
    for _ in range(n):
        d = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": _text(rng)}}
        out.append(_ev("content_block_delta", d))
    out.append(_ev("content_block_stop", {"type": "content_block_stop", "index": index}))
    return "".join(out)


def _tool_block(rng: random.Random, index: int) -> str:
    tid = "toolu_01" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(22))
    name = rng.choice(["write_file", "create_file"])
    start = {"type": "tool_use", "id": tid, "name": name, "input": {}}
    out = [_ev("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})]
    content = "\n".join(rng.choice(CODE) for _ in range(rng.randint(40, 240)))
    text = json.dumps({"path": "src/lib.rs", "content": content}, ensure_ascii=False)
    i = 0
    out.append(_ev("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}}))
    while i < len(text):
        j = min(len(text), i + rng.randint(5, 40))
        d = {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": text[i:j]}}
        out.append(_ev("content_block_delta", d))
        i = j
    out.append(_ev("content_block_stop", {"type": "content_block_stop", "index": index}))
    return "".join(out)


def _openai_turn(rng: random.Random, n: int) -> str:
    cid = "chatcmpl-" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(29))

    def chunk(delta: dict, finish: Optional[str] = None) -> str:
        c = {"id": cid, "object": "chat.completion.chunk", "created": 1732000000 + n, "model": "gpt-4o-2024-08-06",
             "system_fingerprint": "fp_50cad350e4", "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        return "data: " + json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    for _ in range(rng.randint(2, 20)):
        out.append(chunk({"content": _text(rng)}))
    calls = rng.randint(2, 3)
    args = [json.dumps({"path": f"src/f{k}.rs", "query": " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 200)))}) for k in range(calls)]
    for k in range(calls):
        fn = {"name": "search", "arguments": ""}
        out.append(chunk({"tool_calls": [{"index": k, "id": f"call_{k}{cid[-8:]}", "type": "function", "function": fn}]}))
    pos = [0] * calls
    while any(pos[k] < len(args[k]) for k in range(calls)):
        k = rng.choice([k for k in range(calls) if pos[k] < len(args[k])])
        j = min(len(args[k]), pos[k] + rng.randint(3, 30))
        out.append(chunk({"tool_calls": [{"index": k, "function": {"arguments": args[k][pos[k] : j]}}]}))
        pos[k] = j
    out.append(chunk({}, "tool_calls"))
    usage = {"id": cid, "object": "chat.completion.chunk", "created": 1732000000, "model": "gpt-4o-2024-08-06", "choices": [],
             "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}}
    out.append("data: " + json.dumps(usage, separators=(",", ":")) + "\n\n")
    out.append("data: [DONE]\n\n")
    return "".join(out)


def generate(name: str, size: int) -> bytes:
    rng = random.Random(f"ssefold-{name}")
    turns: List[str] = []
    total = 0
    while total < size:
        if name == "anthropic-text":
            t = _msg_start(rng) + _text_block(rng, 0, rng.randint(40, 440)) + _msg_end(rng, "end_turn")
        elif name == "anthropic-tool-use":
            t = _msg_start(rng) + _text_block(rng, 0, rng.randint(2, 11))
            t += "".join(_tool_block(rng, i) for i in range(1, rng.randint(1, 2) + 1)) + _msg_end(rng, "tool_use")
        elif name == "openai-chat":
            t = _openai_turn(rng, len(turns))
        else:
            raise ValueError(name)
        turns.append(t)
        total += len(t.encode())
    return "".join(turns).encode()


def corpus(name: str, size: int) -> "tuple[bytes, str]":
    try:
        from ssefold._ssefold import _corpus

        return _corpus(name, size), "src/corpus.rs (through the extension)"
    except ImportError:
        pass
    data = from_cli(name, size)
    if data is not None:
        return data, "ssefold corpus (src/corpus.rs)"
    return generate(name, size), "python/bench/corpus.py (same shapes)"


def turns(data: bytes, name: str) -> List[bytes]:
    """The corpus cut into whole turns (one HTTP response each)."""
    end = b'event: message_stop\ndata: {"type":"message_stop"}\n\n' if name.startswith("anthropic") else b"data: [DONE]\n\n"
    parts = data.split(end)
    return [p + end for p in parts if p.strip()]
