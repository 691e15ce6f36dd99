#!/usr/bin/env python3
"""Generates a provider stream whose one tool call carries hostile arguments
(the reliability issue's shapes), for BENCHMARKS.md's "Hostile input and
scale" measurements. Nothing is committed: run it into a temporary file.

    tools/hostile_args.py SHAPE [--bytes N] [--depth D] [--dialect D] [--chunk C] > /tmp/x.sse
    tools/hostile_args.py members --dialect D [--at W] [--count N] [--member-bytes B] > /tmp/x.sse

Shapes (the arguments are about N bytes, default 16 MiB minus a margin so
they stay inside the default max_tool_args_bytes):
  nested   {"a":[[[[[[]]]]],[[[[[]]]]],...]}   (empty arrays, depth 6)
  numbers  {"a":[0,0,0,...]}                 (N/2 numbers)
  keys     {"a":[{"0":0,"1":0,...}]}         (N/10 keys)
  deep     {"a":[[...D deep...0...],...]}    (D-deep arrays, repeated)
  string   {"a":"xxxx..."}                   (one long string: the baseline)

Issue 26 item 4, what a fold keeps besides texts, arguments and media: a
text ("hi") first, then --count N chunks (default 300) that each add a
value of --member-bytes B (default 1 MiB) under a new key, so they add up
(the bedrock dialects are AWS event-stream framed: binary):
  members          a new member per chunk; --at names where, per dialect:
                     anthropic, bedrock: top (message_delta, default), delta
                       (message_delta.delta), usage (message_delta.usage), block
                       (a new block of an unknown type per content_block_start)
                     openai_chat: top (default), choice, delta
                     openai_responses: top (response.in_progress's response,
                       default), item (a new output item of an unknown type)
                     gemini: top (default), candidate
                     ollama: top (default), message
                     bedrock_converse: top (metadata, before messageStop)
                   --same: every chunk writes the SAME key (replaced: no growth;
                     but openai_chat --at delta concatenates strings: it grows)
  signatures       anthropic (bedrock): N thinking blocks, each a signature_delta
                   of B bytes; gemini: N thought parts, each a thoughtSignature;
                   bedrock_converse: N reasoning blocks, each a signature
  executable_code  gemini: N executableCode parts of B bytes (--dialect ignored)
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
import zlib


def arguments(shape: str, n: int, depth: int) -> str:
    if shape == "nested":
        body = ",".join(["[[[[[]]]]]"] * (n // 11))
    elif shape == "numbers":
        body = ",".join(["0"] * (n // 2))
    elif shape == "keys":
        body = "{" + ",".join(f'"{i:x}":0' for i in range(n // 11)) + "}"
    elif shape == "deep":
        unit = "[" * depth + "0" + "]" * depth
        body = ",".join([unit] * max(1, n // (len(unit) + 1)))
    elif shape == "string":
        return '{"a":"' + "x" * n + '"}'
    else:
        raise SystemExit(f"unknown shape {shape!r}")
    return '{"a":[' + body + "]}"


def anthropic(args: str, chunk: int) -> str:
    def event(name: str, data: object) -> str:
        return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"

    out = [
        event("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        event("content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}),
    ]
    for i in range(0, len(args), chunk):
        out.append(event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                 "delta": {"type": "input_json_delta", "partial_json": args[i:i + chunk]}}))
    out.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                                       "usage": {"output_tokens": 2}}))
    out.append(event("message_stop", {"type": "message_stop"}))
    return "".join(out)


def openai_chat(args: str, chunk: int) -> str:
    def chunk_event(delta: object, finish: object = None) -> str:
        data = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(data, separators=(',', ':'))}\n\n"

    out = [chunk_event({"role": "assistant", "tool_calls": [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}]})]
    for i in range(0, len(args), chunk):
        out.append(chunk_event({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + chunk]}}]}))
    out.append(chunk_event({}, "tool_calls"))
    out.append("data: [DONE]\n\n")
    return "".join(out)


def openai_responses(args: str, chunk: int) -> str:
    """A function call: its deltas, then the `.done` events, which carry the
    arguments again (as the API does; their data line must fit the SSE
    decoder's max_line_len, 16 MiB by default, which the keys shape's
    escaped quotes exceed)."""
    seq = iter(range(1 << 62))

    def event(name: str, data: dict) -> str:
        data = {"type": name, "sequence_number": next(seq), **data}
        return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"

    response = {"id": "resp_1", "object": "response", "created_at": 0, "status": "in_progress", "model": "m",
                "output": [], "usage": None, "error": None, "incomplete_details": None}
    item = {"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1",
            "name": "f"}
    out = [event("response.created", {"response": response}),
           event("response.output_item.added", {"output_index": 0, "item": item})]
    for i in range(0, len(args), chunk):
        out.append(event("response.function_call_arguments.delta",
                         {"item_id": "fc_1", "output_index": 0, "delta": args[i:i + chunk]}))
    out.append(event("response.function_call_arguments.done",
                     {"item_id": "fc_1", "output_index": 0, "arguments": args}))
    out.append(event("response.output_item.done",
                     {"output_index": 0, "item": {**item, "status": "completed", "arguments": args}}))
    out.append(event("response.completed", {"response": {**response, "status": "completed", "usage": {
        "input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}}))
    return "".join(out)


def gemini(args: str, chunk: int) -> str:
    """One whole function call (Gemini sends a call's `args` whole, as a JSON
    value), then the finishing chunk: `chunk` is not used."""
    del chunk
    head = '{"candidates":[{"index":0,"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":'
    call = "data: " + head + args + '}}]}}]}\n\n'
    done = {"candidates": [{"index": 0, "content": {"role": "model", "parts": []}, "finishReason": "STOP"}]}
    return call + "data: " + json.dumps(done, separators=(",", ":")) + "\n\n"


def ollama(args: str, chunk: int) -> str:
    """Ollama's native chat: one line with a whole tool call (`arguments` a
    JSON value), then the `done` line: `chunk` is not used."""
    del chunk
    head = '{"model":"m","created_at":"t","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":'
    line = head + args + '}}]},"done":false}\n'
    done = {"model": "m", "created_at": "t", "message": {"role": "assistant", "content": ""}, "done": True,
            "done_reason": "stop"}
    return line + json.dumps(done, separators=(",", ":")) + "\n"


def gemini_citations(n: int) -> str:
    """Gemini: one citation, then one chunk with `n` new ones, then the end."""
    def src(i: int) -> dict:
        return {"startIndex": i, "endIndex": i + 1, "uri": f"https://e/{i}"}

    def chunk(sources: list, finish: bool = False) -> str:
        cand: dict = {"index": 0, "content": {"role": "model", "parts": [{"text": "x"}]},
                      "citationMetadata": {"citationSources": sources}}
        if finish:
            cand["finishReason"] = "STOP"
        return "data: " + json.dumps({"candidates": [cand]}, separators=(",", ":")) + "\n\n"

    return chunk([src(0)]) + chunk([src(i) for i in range(1, n + 1)]) + chunk([src(1)], True)


def vertex_keys(n: int) -> str:
    """Vertex AI: one streamed call whose partialArgs write `n` keys, 1000 a chunk."""
    def chunk(args: list, more: bool, name: bool = False) -> str:
        fc: dict = {"partialArgs": args, "willContinue": more}
        if name:
            fc["name"] = "f"
        data = {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": fc}]}, "index": 0}]}
        return "data: " + json.dumps(data, separators=(",", ":")) + "\n\n"

    out = [chunk([{"jsonPath": f"$.k{i}", "numberValue": i} for i in range(s, min(n, s + 1000))], True, s == 0)
           for s in range(0, n, 1000)]
    out.append(chunk([], False))
    out.append('data: {"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"STOP","index":0}]}\n\n')
    return "".join(out)


def _compact(data: object) -> str:
    return json.dumps(data, separators=(",", ":"))


def _es_message(headers: list[tuple[str, str]], payload: bytes) -> bytes:
    """One AWS event-stream message (string headers), CRCs included."""
    h = b"".join(struct.pack(">B", len(k)) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
                 for k, v in headers)
    prelude = struct.pack(">II", 12 + len(h) + len(payload) + 4, len(h))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + h + payload
    return head + struct.pack(">I", zlib.crc32(head))


def _es_event(event_type: str, payload: object) -> bytes:
    return _es_message([(":event-type", event_type), (":content-type", "application/json"),
                        (":message-type", "event")], _compact(payload).encode())


def anthropic_events(events: list[dict], bedrock: bool) -> bytes:
    """Anthropic events as SSE, or (Bedrock InvokeModel) as event-stream
    `chunk` messages of base64 JSON."""
    if bedrock:
        return b"".join(_es_event("chunk", {"bytes": base64.b64encode(_compact(e).encode()).decode()})
                        for e in events)
    return "".join(f"event: {e['type']}\ndata: {_compact(e)}\n\n" for e in events).encode()


def anthropic_kept(shape: str, at: str, n: int, size: int, same: bool, bedrock: bool) -> bytes:
    """An Anthropic turn: a text block "hi", then `shape`'s N chunks."""
    key = (lambda i: "x") if same else (lambda i: f"x_{i}")
    blob = "y" * size
    ev = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0}]
    if shape == "signatures":
        for i in range(1, n + 1):
            ev += [{"type": "content_block_start", "index": i,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                   {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": "t"}},
                   {"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": blob}},
                   {"type": "content_block_stop", "index": i}]
    elif at == "block":
        for i in range(1, n + 1):
            ev += [{"type": "content_block_start", "index": i, "content_block": {"type": "x_block", "data": blob}},
                   {"type": "content_block_stop", "index": i}]
    else:
        for i in range(n):
            d: dict = {"type": "message_delta", "delta": {"stop_reason": None}, "usage": {"output_tokens": 1}}
            {"top": d, "delta": d["delta"], "usage": d["usage"]}[at][key(i)] = blob
            ev.append(d)
    ev += [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
           {"type": "message_stop"}]
    return anthropic_events(ev, bedrock)


def openai_chat_kept(at: str, n: int, size: int, same: bool) -> bytes:
    def chunk(delta: dict, finish: object = None, top: dict | None = None, choice: dict | None = None) -> str:
        data = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, **(choice or {})}], **(top or {})}
        return f"data: {_compact(data)}\n\n"

    blob = "y" * size
    out = [chunk({"role": "assistant", "content": "hi"})]
    for i in range(n):
        m = {("x" if same else f"x_{i}"): blob}
        out.append({"top": lambda: chunk({}, top=m), "choice": lambda: chunk({}, choice=m),
                    "delta": lambda: chunk(m)}[at]())
    out += [chunk({}, "stop"), "data: [DONE]\n\n"]
    return "".join(out).encode()


def openai_responses_kept(at: str, n: int, size: int, same: bool) -> bytes:
    seq = iter(range(1 << 62))

    def event(name: str, data: dict) -> str:
        data = {"type": name, "sequence_number": next(seq), **data}
        return f"event: {name}\ndata: {_compact(data)}\n\n"

    blob = "y" * size
    response = {"id": "resp_1", "object": "response", "created_at": 0, "status": "in_progress", "model": "m",
                "output": []}
    msg = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    out = [event("response.created", {"response": response}),
           event("response.output_item.added", {"output_index": 0, "item": msg}),
           event("response.content_part.added", {"item_id": "msg_1", "output_index": 0, "content_index": 0,
                                                 "part": part}),
           event("response.output_text.delta", {"item_id": "msg_1", "output_index": 0, "content_index": 0,
                                                "delta": "hi"}),
           event("response.content_part.done", {"item_id": "msg_1", "output_index": 0, "content_index": 0,
                                                "part": {**part, "text": "hi"}}),
           event("response.output_item.done", {"output_index": 0, "item": {
               **msg, "status": "completed", "content": [{**part, "text": "hi"}]}})]
    for i in range(n):
        key = "x" if same else f"x_{i}"
        if at == "top":
            out.append(event("response.in_progress", {"response": {**response, key: blob}}))
        else:
            item = {"id": f"x_{i}", "type": "x_item", "status": "completed", "data": blob}
            out.append(event("response.output_item.added", {"output_index": i + 1, "item": item}))
            out.append(event("response.output_item.done", {"output_index": i + 1, "item": item}))
    # The terminal event without `output`: the streamed items are the fold.
    done = {k: v for k, v in response.items() if k != "output"}
    out.append(event("response.completed", {"response": {**done, "status": "completed"}}))
    return "".join(out).encode()


def gemini_kept(shape: str, at: str, n: int, size: int, same: bool) -> bytes:
    def chunk(parts: list, top: dict | None = None, cand: dict | None = None, finish: bool = False) -> str:
        c: dict = {"index": 0, "content": {"role": "model", "parts": parts}, **(cand or {})}
        if finish:
            c["finishReason"] = "STOP"
        return f"data: {_compact({'candidates': [c], **(top or {})})}\n\n"

    blob = "y" * size
    out = [chunk([{"text": "hi"}])]
    for i in range(n):
        if shape == "signatures":
            # A signature on each part: never merged into the part before.
            out.append(chunk([{"text": "t", "thought": True, "thoughtSignature": blob}]))
        elif shape == "executable_code":
            out.append(chunk([{"executableCode": {"language": "PYTHON", "code": blob}}]))
        else:
            m = {("x" if same else f"x_{i}"): blob}
            out.append(chunk([], top=m) if at == "top" else chunk([], cand=m))
    out.append(chunk([], finish=True))
    return "".join(out).encode()


def ollama_kept(at: str, n: int, size: int, same: bool) -> bytes:
    def line(message: dict, top: dict | None = None, done: bool = False) -> str:
        data = {"model": "m", "created_at": "t", "message": {"role": "assistant", "content": "", **message},
                "done": done, **(top or {})}
        if done:
            data["done_reason"] = "stop"
        return _compact(data) + "\n"

    blob = "y" * size
    out = [line({"content": "hi"})]
    for i in range(n):
        m = {("x" if same else f"x_{i}"): blob}
        out.append(line({}, top=m) if at == "top" else line(m))
    out.append(line({}, done=True))
    return "".join(out).encode()


def bedrock_converse_kept(shape: str, n: int, size: int, same: bool) -> bytes:
    blob = "y" * size
    out = [_es_event("messageStart", {"role": "assistant"}),
           _es_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
           _es_event("contentBlockStop", {"contentBlockIndex": 0})]
    for i in range(n):
        if shape == "signatures":
            for ev in ({"delta": {"reasoningContent": {"text": "t"}}}, {"delta": {"reasoningContent": {"signature": blob}}}):
                out.append(_es_event("contentBlockDelta", {"contentBlockIndex": i + 1, **ev}))
            out.append(_es_event("contentBlockStop", {"contentBlockIndex": i + 1}))
        else:
            out.append(_es_event("metadata", {("x" if same else f"x_{i}"): blob}))
    out += [_es_event("messageStop", {"stopReason": "end_turn"}),
            _es_event("metadata", {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                                   "metrics": {"latencyMs": 1}})]
    return b"".join(out)


KEPT_AT = {"anthropic": ["top", "delta", "usage", "block"], "bedrock": ["top", "delta", "usage", "block"],
           "openai_chat": ["top", "choice", "delta"], "openai_responses": ["top", "item"],
           "gemini": ["top", "candidate"], "ollama": ["top", "message"], "bedrock_converse": ["top"]}


def kept(shape: str, dialect: str, at: str | None, n: int, size: int, same: bool) -> bytes:
    """Issue 26 item 4's reproducers (see the module docs)."""
    if shape == "executable_code":
        dialect = "gemini"
    elif shape == "signatures" and dialect not in ("anthropic", "bedrock", "gemini", "bedrock_converse"):
        raise SystemExit(f"signatures: no {dialect}")
    at = at or KEPT_AT[dialect][0]
    if shape == "members" and at not in KEPT_AT[dialect]:
        raise SystemExit(f"members --at {at}: {dialect} has {', '.join(KEPT_AT[dialect])}")
    if dialect in ("anthropic", "bedrock"):
        return anthropic_kept(shape, at, n, size, same, dialect == "bedrock")
    if dialect == "openai_chat":
        return openai_chat_kept(at, n, size, same)
    if dialect == "openai_responses":
        return openai_responses_kept(at, n, size, same)
    if dialect == "gemini":
        return gemini_kept(shape, at, n, size, same)
    if dialect == "ollama":
        return ollama_kept(at, n, size, same)
    return bedrock_converse_kept(shape, n, size, same)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("shape", choices=["nested", "numbers", "keys", "deep", "string", "citations", "vertex_keys",
                                     "members", "signatures", "executable_code"],
                   help="citations / vertex_keys: Gemini bodies of --count entries (--dialect ignored)")
    p.add_argument("--count", type=int, help="entries (default 40,000; members and the like: 300)")
    p.add_argument("--bytes", type=int, default=(16 << 20) - 4096)
    p.add_argument("--depth", type=int, default=500)
    p.add_argument("--dialect", choices=["anthropic", "openai_chat", "openai_responses", "gemini", "ollama",
                                          "bedrock", "bedrock_converse"],
                   default="anthropic", help="bedrock, bedrock_converse: members and signatures only")
    p.add_argument("--chunk", type=int, default=4096, help="argument bytes per event")
    p.add_argument("--member-bytes", type=int, default=1 << 20, help="members and the like: bytes per value")
    p.add_argument("--at", help="members: where the new member goes (see above)")
    p.add_argument("--same", action="store_true", help="members: one key for all (replaced, not added)")
    a = p.parse_args()
    if a.shape in ("members", "signatures", "executable_code"):
        body = kept(a.shape, a.dialect, a.at, 300 if a.count is None else a.count, a.member_bytes, a.same)
        sys.stdout.buffer.write(body)
        return
    count = 40_000 if a.count is None else a.count
    if a.shape in ("citations", "vertex_keys"):
        sys.stdout.write(gemini_citations(count) if a.shape == "citations" else vertex_keys(count))
        return
    if a.dialect.startswith("bedrock"):
        raise SystemExit(f"{a.shape}: no {a.dialect}")
    args = arguments(a.shape, a.bytes, a.depth)
    dialects = {"anthropic": anthropic, "openai_chat": openai_chat, "openai_responses": openai_responses,
                "gemini": gemini, "ollama": ollama}
    stream = dialects[a.dialect](args, a.chunk)
    sys.stdout.write(stream)


if __name__ == "__main__":
    main()
