"""Issue 26 item 13 through Python: an Anthropic tool input too large for a
value tree (``max_memory_bytes / 16``) stays text in the stream;
``Stream.message_json()`` writes it as it came, ``Stream.message`` builds
it (with ``json.loads``; a lone surrogate escape as U+FFFD, as everywhere
else)."""

from __future__ import annotations

import json

import ssefold


def anthropic_call(args: str, chunk: int = 4096) -> bytes:
    def event(data: dict) -> str:
        return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"

    out = [
        event({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "x",
                                                   "content": [], "stop_reason": None, "stop_sequence": None,
                                                   "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        event({"type": "content_block_start", "index": 0,
               "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}}),
    ]
    for i in range(0, len(args), chunk):
        out.append(event({"type": "content_block_delta", "index": 0,
                          "delta": {"type": "input_json_delta", "partial_json": args[i:i + chunk]}}))
    out.append(event({"type": "content_block_stop", "index": 0}))
    out.append(event({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}))
    out.append(event({"type": "message_stop"}))
    return "".join(out).encode()


def fold(args: str) -> ssefold.Stream:
    s = ssefold.Stream("anthropic", config=ssefold.StreamConfig(max_memory_bytes=32 << 20))
    ends = [e for e in s.feed(anthropic_call(args)) + s.finish() if e.type == "part_end"]
    assert len(ends) == 1 and ends[0].outcome == "complete"
    assert ends[0].content == {"type": "tool_use", "id": "toolu_1", "name": "write"}
    return s


def test_a_large_input_is_written_as_it_came_and_built_when_asked() -> None:
    args = '{"a": [' + ", ".join(["[[[[[]]]]]"] * 200_000) + "]}"
    s = fold(args)
    written = s.message_json()
    assert args.encode() in written
    message = s.message
    assert message is not None
    assert message == json.loads(written)
    assert message["content"][0]["input"] == json.loads(args)
    assert list(message["content"][0]) == ["type", "id", "name", "input"]


def test_a_lone_surrogate_in_a_large_input_is_u_fffd_in_the_dict() -> None:
    args = '{"s": "\\ud800", "a": [' + ",".join(["0"] * 300_000) + "]}"
    s = fold(args)
    assert b'"\\ud800"' in s.message_json()
    message = s.message
    assert message is not None
    assert message["content"][0]["input"]["s"] == "\ufffd"
    assert len(message["content"][0]["input"]["a"]) == 300_000
