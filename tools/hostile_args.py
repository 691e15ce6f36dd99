#!/usr/bin/env python3
"""Generates a provider stream whose one tool call carries hostile arguments
(the reliability issue's shapes), for BENCHMARKS.md's "Hostile input and
scale" measurements. Nothing is committed: run it into a temporary file.

    tools/hostile_args.py SHAPE [--bytes N] [--depth D] [--dialect D] [--chunk C] > /tmp/x.sse

Shapes (the arguments are about N bytes, default 16 MiB minus a margin so
they stay inside the default max_tool_args_bytes):
  nested   {"a":[[[[[[]]]]],[[[[[]]]]],...]}   (empty arrays, depth 6)
  numbers  {"a":[0,0,0,...]}                 (N/2 numbers)
  keys     {"a":[{"0":0,"1":0,...}]}         (N/10 keys)
  deep     {"a":[[...D deep...0...],...]}    (D-deep arrays, repeated)
  string   {"a":"xxxx..."}                   (one long string: the baseline)
"""

from __future__ import annotations

import argparse
import json
import sys


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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("shape", choices=["nested", "numbers", "keys", "deep", "string", "citations", "vertex_keys"],
                   help="citations / vertex_keys: Gemini bodies of --count entries (--dialect ignored)")
    p.add_argument("--count", type=int, default=40_000)
    p.add_argument("--bytes", type=int, default=(16 << 20) - 4096)
    p.add_argument("--depth", type=int, default=500)
    p.add_argument("--dialect", choices=["anthropic", "openai_chat", "openai_responses", "gemini", "ollama"],
                   default="anthropic")
    p.add_argument("--chunk", type=int, default=4096, help="argument bytes per event")
    a = p.parse_args()
    if a.shape in ("citations", "vertex_keys"):
        sys.stdout.write(gemini_citations(a.count) if a.shape == "citations" else vertex_keys(a.count))
        return
    args = arguments(a.shape, a.bytes, a.depth)
    dialects = {"anthropic": anthropic, "openai_chat": openai_chat, "openai_responses": openai_responses,
                "gemini": gemini, "ollama": ollama}
    stream = dialects[a.dialect](args, a.chunk)
    sys.stdout.write(stream)


if __name__ == "__main__":
    main()
