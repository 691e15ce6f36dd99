"""Hostile input and scale through the Python API (the cases of
tests/hostile.rs), generated here: a 1 MiB id then 20 000 events, ids at and
past ``max_id_len``, a huge server ``retry:``, lone surrogates given to the
encoder."""

from __future__ import annotations

import contextlib
import gc
import http.server
import json
import threading
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import ssefold


def long_id_then_events(id_len: int, events: int) -> bytes:
    return b"id: " + b"x" * id_len + b"\n" + b"".join(b"data: %d\n\n" % i for i in range(events))


def test_a_long_id_is_refused_by_default_and_decoding_goes_on() -> None:
    d = ssefold.SSEDecoder()
    assert d.max_id_len == 4096
    with pytest.raises(ssefold.IdTooLongError) as info:
        d.feed(long_id_then_events(1 << 20, 20_000))
    assert isinstance(info.value, ssefold.DecodeError)
    assert (info.value.limit, info.value.offset) == (4096, 0)  # type: ignore[attr-defined]
    events = info.value.events  # type: ignore[attr-defined]
    assert len(events) == 19_999
    assert all(e.id is None for e in events)
    assert d.last_event_id is None


def test_the_id_is_one_str_object_shared_until_it_changes() -> None:
    d = ssefold.SSEDecoder(max_id_len=2 << 20)
    data = long_id_then_events(1 << 20, 20_000)
    events: List[ssefold.ServerSentEvent] = []
    for i in range(0, len(data), 65536):
        events += d.feed(data[i : i + 65536])
    assert len(events) == 20_000
    first = events[0].id
    assert first is not None and len(first) == 1 << 20
    assert all(e.id is first for e in events)
    more = d.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n\ndata: c\n\n")
    assert [e.id for e in more] == ["1", "2", "2"]
    assert more[1].id is more[2].id


def test_an_id_at_the_limit_is_accepted_and_the_id_in_force_is_kept() -> None:
    d = ssefold.SSEDecoder(max_id_len=3)
    assert "max_id_len=3" in repr(d)
    with pytest.raises(ssefold.IdTooLongError) as info:
        d.feed(b"id: abc\ndata: 1\n\nid: abcd\ndata: 2\n\ndata: 3\n\n")
    assert [(e.data, e.id) for e in info.value.events] == [("1", "abc"), ("3", "abc")]  # type: ignore[attr-defined]
    assert d.last_event_id == "abc"


def test_streams_take_max_id_len_too() -> None:
    s = ssefold.Stream("anthropic", config=ssefold.StreamConfig(max_id_len=4))
    with pytest.raises(ssefold.IdTooLongError):
        s.feed(b"id: 12345\ndata: {}\n\n")


@pytest.mark.parametrize("retry", [99_999_999_999, 18_446_744_073_709_551_615])
def test_a_huge_server_retry_is_capped_by_the_policy(retry: int) -> None:
    d = ssefold.SSEDecoder()
    d.feed(b"retry: %d\ndata: x\n\n" % retry)
    assert d.reconnection_time == retry
    policy = ssefold.ReconnectPolicy()
    assert policy.max_server_retry_ms == 600_000
    assert policy.next_delay_ms(0, d.reconnection_time) == 600_000
    assert ssefold.ReconnectPolicy(max_server_retry_ms=5000).next_delay_ms(0, retry) == 5000
    assert policy.next_delay_ms(3, 250) == 250  # below the cap the server wins
    r = ssefold.Reconnector(policy)
    r.on_connected(0)
    r.on_event(None, None, d.reconnection_time)
    decision = r.on_end(ssefold.StreamEnd.ended_early())
    assert (decision.kind, decision.delay_ms) == ("reconnect", 600_000)


class _Once(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = b""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(self.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(self.body)
        self.close_connection = True


@pytest.fixture
def huge_retry_server() -> Iterator[str]:
    # The body ends inside an event: an early end, so the client reconnects
    # (resumes: the event passed on has an id).
    handler = type("H", (_Once,), {"body": b"retry: 18446744073709551615\nid: 1\ndata: a\n\ndata: cut"})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join()


class _RecordingAbort:
    """Never set; records the backoff waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: List[float] = []

    def is_set(self) -> bool:
        return False

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        return False


def test_stream_events_waits_at_most_the_cap(huge_retry_server: str) -> None:
    # Before: time.sleep(1.8e16) raised OverflowError (99999999999: ~3 years).
    httpx = pytest.importorskip("httpx")
    abort = _RecordingAbort()
    policy = ssefold.ReconnectPolicy(max_retries=1)
    with httpx.Client() as client:
        with pytest.raises(ssefold.IncompleteStreamError):
            list(ssefold.stream_events(client, "GET", huge_retry_server, policy=policy, abort=abort))
    assert abort.waits == [600.0]


@pytest.mark.parametrize("field", ["data", "event", "id"])
def test_the_encoder_refuses_a_lone_surrogate_with_encode_error(field: str) -> None:
    enc = ssefold.SSEEncoder()
    kwargs: Dict[str, Any] = {"data": "x", field: "\ud800"}
    with pytest.raises(ssefold.EncodeError) as info:
        enc.event(**kwargs)
    assert info.value.field == field  # type: ignore[attr-defined]
    assert not isinstance(info.value, UnicodeError)
    assert len(enc) == 0, "nothing written"
    with pytest.raises(ssefold.EncodeError):
        enc.comment("a\udfffb")
    enc.event("ok", event="e", id="1")
    assert enc.take_bytes() == b"event: e\nid: 1\ndata: ok\n\n"


# ---- Lone surrogate escapes and stray terminal events (tests/hostile.rs) ----

import json as _json


def _sse(events: List[Any]) -> bytes:
    return "".join(f"event: {name}\ndata: {data}\n\n" for name, data in events).encode()


def anthropic_turn(block_type: str, field: str, dty: str, lit: str) -> bytes:
    start = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
             "model": "m", "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 1, "output_tokens": 1}}}
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": block_type, field: ""}}
    delta = '{"type":"content_block_delta","index":0,"delta":{"type":"%s","%s":%s}}' % (dty, field, lit)
    after = {"type": "content_block_delta", "index": 0, "delta": {"type": dty, field: " after"}}
    return _sse([
        ("message_start", _json.dumps(start)),
        ("content_block_start", _json.dumps(block)),
        ("content_block_delta", delta),
        ("content_block_delta", _json.dumps(after)),
        ("content_block_stop", '{"type":"content_block_stop","index":0}'),
        ("message_delta", '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}'),
        ("message_stop", '{"type":"message_stop"}'),
    ])


def chat_turn(field: str, lit: str) -> bytes:
    def chunk(delta: str, finish: str = "null") -> str:
        return ('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":'
                '[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}\n\n' % (delta, finish))
    return "".join([
        chunk('{"role":"assistant","content":""}'),
        chunk('{"%s":%s}' % (field, lit)),
        chunk('{"%s":" after"}' % field),
        chunk("{}", '"stop"'),
        "data: [DONE]\n\n",
    ]).encode()


def responses_turn(item_type: str, part_type: str, delta_event: str, lit: str) -> bytes:
    index_key, added, done = (
        ("summary_index", "response.reasoning_summary_part.added", "response.reasoning_summary_part.done")
        if "summary" in delta_event
        else ("content_index", "response.content_part.added", "response.content_part.done")
    )
    seq = iter(range(1, 100))

    def ev(ty: str, body: Any) -> Any:
        return (ty, _json.dumps(dict(body, type=ty, sequence_number=next(seq))))

    def resp(status: str) -> Any:
        return {"id": "resp_1", "object": "response", "status": status, "model": "m", "output": []}

    def delta(text: str) -> Any:
        ty, body = ev(delta_event, {"item_id": "it_1", "output_index": 0, index_key: 0, "delta": "PLACEHOLDER"})
        return (ty, body.replace('"PLACEHOLDER"', text))

    return _sse([
        ev("response.created", {"response": resp("in_progress")}),
        ev("response.output_item.added", {"output_index": 0, "item": {"id": "it_1", "type": item_type,
           "status": "in_progress", "content": [], "summary": []}}),
        ev(added, {"item_id": "it_1", "output_index": 0, index_key: 0, "part": {"type": part_type, "text": ""}}),
        delta(lit),
        delta('" after"'),
        ev(done, {"item_id": "it_1", "output_index": 0, index_key: 0}),
        ev("response.completed", {"response": resp("completed")}),
    ])


TEXT_STREAMS = [
    ("anthropic", lambda lit: anthropic_turn("text", "text", "text_delta", lit)),
    ("anthropic", lambda lit: anthropic_turn("thinking", "thinking", "thinking_delta", lit)),
    ("openai_chat", lambda lit: chat_turn("content", lit)),
    ("openai_chat", lambda lit: chat_turn("reasoning_content", lit)),
    ("openai_chat", lambda lit: chat_turn("refusal", lit)),
    ("openai_responses", lambda lit: responses_turn("message", "output_text", "response.output_text.delta", lit)),
    ("openai_responses", lambda lit: responses_turn("message", "refusal", "response.refusal.delta", lit)),
    ("openai_responses",
     lambda lit: responses_turn("reasoning", "reasoning_text", "response.reasoning_text.delta", lit)),
    ("openai_responses",
     lambda lit: responses_turn("reasoning", "summary_text", "response.reasoning_summary_text.delta", lit)),
]


def fold(provider: str, body: bytes) -> Any:
    s = ssefold.Stream(provider)
    events = s.feed(body) + s.finish()
    return events, s.message


@pytest.mark.parametrize("provider,make", TEXT_STREAMS)
@pytest.mark.parametrize("auto", [False, True])
def test_a_lone_surrogate_in_a_text_delta_is_u_fffd_with_a_warning(provider: str, make: Any, auto: bool) -> None:
    lit = '"broken emoji: \\ud83d"'
    # What json.loads (and JSON.parse) make of it: the lone surrogate itself.
    assert _json.loads(lit) == "broken emoji: \ud83d"
    events, message = fold("auto" if auto else provider, make(lit))
    warnings = [e for e in events if e.type == "warning" and e.code == "lone_surrogate"]
    assert len(warnings) == 1, events
    text = "".join(e.text for e in events if e.type == "text_delta")
    assert text == "broken emoji: \ufffd after"
    assert "broken emoji: \ufffd after" in _json.dumps(message, ensure_ascii=False)
    assert events[-1].type == "turn_end"
    # The same as the stream with U+FFFD written in its place, but the warning.
    clean, clean_message = fold(provider, make('"broken emoji: \\uFFFD"'))
    assert [e for e in events if e not in warnings] == clean
    assert message == clean_message


def test_a_lone_surrogate_elsewhere_in_an_event_is_not_fatal() -> None:
    body = anthropic_turn("text", "text", "text_delta", '"x"').replace(b'"id": "msg_1"', b'"id": "msg_\\ud83d"')
    events, message = fold("anthropic", body)
    assert [e.code for e in events if e.type == "warning"] == ["lone_surrogate"]
    assert message["id"] == "msg_\ufffd"
    assert message["content"][0]["text"] == "x after"


STRAY_FIRST = [
    ("anthropic", b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
     anthropic_turn("text", "text", "text_delta", '"hi"')),
    ("auto", b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
     anthropic_turn("text", "text", "text_delta", '"hi"')),
    ("openai_chat", b"data: [DONE]\n\n", chat_turn("content", '"hi"')),
    ("auto", b"data: [DONE]\n\n", chat_turn("content", '"hi"')),
    ("auto", b"data: [DONE]\n\n", anthropic_turn("text", "text", "text_delta", '"hi"')),
    ("openai_responses", b'event: response.completed\ndata: {"type":"response.completed","sequence_number":0}\n\n',
     responses_turn("message", "output_text", "response.output_text.delta", '"hi"')),
]


@pytest.mark.parametrize("provider,stray,body", STRAY_FIRST)
def test_a_terminal_event_before_the_answer_started_is_a_warning_not_the_end(
    provider: str, stray: bytes, body: bytes
) -> None:
    events, message = fold(provider, stray + body)
    assert [e.code for e in events if e.type == "warning"].count("terminal_before_start") == 1
    assert "".join(e.text for e in events if e.type == "text_delta") == "hi after"
    assert "hi after" in _json.dumps(message)
    s = ssefold.Stream(provider)
    assert [e.code for e in s.feed(stray)] == ["terminal_before_start"]
    with pytest.raises(ssefold.IncompleteStreamError):
        s.finish()

# ---- tool arguments: memory budget, lone surrogates (tests/hostile.rs) -----


def anthropic_tool_stream(args: str, chunk: int) -> bytes:
    """One Anthropic tool call whose arguments are ``args``, in fragments of
    ``chunk`` characters, then the end of the turn."""
    import json

    def event(name: str, data: Any) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    out = [
        event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
                    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
        ),
        event(
            "content_block_start",
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}},
        ),
    ]
    for i in range(0, len(args), chunk):
        delta = {"type": "input_json_delta", "partial_json": args[i : i + chunk]}
        out.append(event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
    out.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(
        event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}})
    )
    out.append(event("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()


def hostile_args(shape: str, length: int) -> str:
    """The issue's argument shapes, about ``length`` bytes, inside ``{"a": [...]}``."""
    if shape == "nested":
        body = ",".join(["[[[[[]]]]]"] * (length // 11))
    elif shape == "numbers":
        body = ",".join(["0"] * (length // 2))
    else:
        body = "{" + ",".join(f'"{i:x}":0' for i in range(length // 10)) + "}"
    return '{"a":[' + body + "]}"


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """CPython's cyclic collector paused: building the millions of lists of
    the nested shape (`json.loads`, or ssefold's message) otherwise runs it
    over and over, 4-5 s instead of 0.3 s each, whoever builds them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("shape", ["nested", "numbers", "keys"])
def test_tool_arguments_past_the_memory_budget_raise_and_keep_the_fold(shape: str) -> None:
    # Arguments are held as text (issue 26 item 13): the budget refuses what the text does not fit.
    args = hostile_args(shape, 6 << 20)
    data = anthropic_tool_stream(args, 4096)
    s = ssefold.AnthropicStream(config=ssefold.StreamConfig(max_memory_bytes=4 << 20))
    with pytest.raises(ssefold.LimitExceededError) as info:
        s.feed(data)
    assert (info.value.limit, info.value.max) == ("max_memory_bytes", 4 << 20)  # type: ignore[attr-defined]
    assert s.message is not None
    assert s.message["content"][0]["name"] == "f"
    # The default budget (128 MiB): the same 6 MB fold, kept as text (a tree would not fit
    # max_memory_bytes / 16): the part has no input, the message's JSON writes the text, the
    # message dict builds it.
    s2 = ssefold.Stream("anthropic")
    ends = [e for e in s2.feed(data) + s2.finish() if e.type == "part_end"]
    assert len(ends) == 1 and "input" not in ends[0].content
    call = ends[0].tool_call
    assert isinstance(call, ssefold.ToolCallEnd) and call.arguments == args
    with gc_paused():
        expected = json.loads(args)
        assert json.loads(s2.message_json())["content"][0]["input"] == expected
        message = s2.message
        assert message is not None and message["content"][0]["input"] == expected
        del expected, message


def members_stream(dialect: str, n: int, size: int) -> bytes:
    """A text ("hi"), then ``n`` chunks that each add a new top-level member
    of ``size`` bytes (tools/hostile_args.py members, issue 26 item 4)."""
    blob = "y" * size

    def js(v: Any) -> str:
        return _json.dumps(v, separators=(",", ":"))

    if dialect == "anthropic":
        start = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                 "model": "m", "content": [], "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}
        events: List[Dict[str, Any]] = [
            start,
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
            {"type": "content_block_stop", "index": 0},
        ]
        events += [{"type": "message_delta", "delta": {"stop_reason": None}, f"x_{i}": blob} for i in range(n)]
        events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}}, {"type": "message_stop"}]
        return "".join(f"event: {e['type']}\ndata: {js(e)}\n\n" for e in events).encode()
    if dialect == "openai_chat":
        def chunk(delta: Dict[str, Any], top: Dict[str, Any], finish: Any = None) -> str:
            data = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **top}
            return f"data: {js(data)}\n\n"

        lines = [chunk({"role": "assistant", "content": "hi"}, {})]
        lines += [chunk({}, {f"x_{i}": blob}) for i in range(n)]
        return "".join(lines + [chunk({}, {}, "stop"), "data: [DONE]\n\n"]).encode()
    if dialect == "gemini":
        def gchunk(parts: List[Any], top: Dict[str, Any], finish: bool = False) -> str:
            cand: Dict[str, Any] = {"index": 0, "content": {"role": "model", "parts": parts}}
            if finish:
                cand["finishReason"] = "STOP"
            return f"data: {js({'candidates': [cand], **top})}\n\n"

        lines = [gchunk([{"text": "hi"}], {})] + [gchunk([], {f"x_{i}": blob}) for i in range(n)]
        return "".join(lines + [gchunk([], {}, True)]).encode()

    def line(content: str, top: Dict[str, Any], done: bool = False) -> str:
        data = {"model": "m", "message": {"role": "assistant", "content": content}, "done": done, **top}
        return js(data) + "\n"

    lines = [line("hi", {})] + [line("", {f"x_{i}": blob}) for i in range(n)]
    return "".join(lines + [line("", {"done_reason": "stop"}, True)]).encode()


@pytest.mark.parametrize("dialect", ["anthropic", "openai_chat", "gemini", "ollama"])
def test_members_past_the_memory_budget_raise_and_keep_the_fold(dialect: str) -> None:
    """Issue 26 item 4: every member a fold keeps counts against
    ``max_memory_bytes`` (64 new members of 64 KiB, a 2 MiB budget)."""
    data = members_stream(dialect, 64, 64 << 10)
    s = ssefold.Stream(dialect, config=ssefold.StreamConfig(max_memory_bytes=2 << 20))
    with pytest.raises(ssefold.LimitExceededError) as info:
        for i in range(0, len(data), 16 << 10):
            s.feed(data[i : i + (16 << 10)])
    assert (info.value.limit, info.value.max) == ("max_memory_bytes", 2 << 20)  # type: ignore[attr-defined]
    kept = _json.dumps(s.message)
    assert '"hi"' in kept, "the text before the error is kept"
    assert 0 < kept.count("y" * (64 << 10)) < 64, "the members before the error are kept"
    whole = ssefold.Stream(dialect)  # the default budget (128 MiB): every member
    whole.feed(data)
    whole.finish()
    assert _json.dumps(whole.message).count("y" * (64 << 10)) == 64


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_a_lone_surrogate_in_tool_arguments_is_u_fffd_with_a_warning(chunk: int) -> None:
    args = r'{"a": "x\ud83dy", "b": "\udc00", "c": "\ud83d\ud83d\ude00", "d": "\ud83d\n", "ok": "\ud83d\ude00"}'
    s = ssefold.Stream("anthropic")
    events = s.feed(anthropic_tool_stream(args, chunk)) + s.finish()
    warnings = [e.code for e in events if e.type == "warning"]
    assert warnings and set(warnings) == {"lone_surrogate"}
    assert "".join(e.json for e in events if e.type == "tool_args_delta") == args
    assert [e.outcome for e in events if e.type == "part_end"] == ["complete"]
    assert s.message is not None
    assert s.message["content"][0]["input"] == {"a": "x\ufffdy", "b": "\ufffd", "c": "\ufffd😀", "d": "\ufffd\n", "ok": "😀"}


def test_tool_args_path_events_share_the_path_and_parse_containers_lazily() -> None:
    unit = "[" * 300 + '{"k": "v", "n": [1, {"m": null}]}' + "]" * 300
    args = '{"a": [' + unit + "," + unit + '], "b": "x"}'
    s = ssefold.Stream("anthropic")
    events = [e.path_event for e in s.feed(anthropic_tool_stream(args, 97)) if e.type == "tool_args_path"]
    assert max(e.depth for e in events) == 305  # a, 0, 300 arrays, n, 1, m
    import json

    for e in events:
        path = e.path
        assert len(path) == e.depth
        assert (path[-1] if path else None) == e.last
    containers = [e for e in events if e.type == "value_complete" and isinstance(e.value, (list, dict))]
    assert len(containers) == 2 * (300 + 3) + 2
    assert events[-1].path == () and events[-1].value == json.loads(args)
    # The same events as the JSON form's paths (every segment).
    inner = [e for e in events if e.depth == 303]
    assert inner and all(e.path[:2] == ("a", 0) or e.path[:2] == ("a", 1) for e in inner)
    assert inner[0].path[2:302] == (0,) * 300 and inner[0].path[-1] == "k"


def test_path_events_after_a_turn_reset_carry_the_new_paths() -> None:
    """Paths are shared between a tool call's consecutive events; after a
    restart (part ids begin again at 0) the new document's paths are its own."""

    def body(cid: str, key: str) -> bytes:
        args = _json.dumps({key: {"a": {"b": 1}}})
        chunk = {"id": cid, "object": "chat.completion.chunk", "created": 1, "model": "m",
                 "choices": [{"index": 0, "delta": {"tool_calls": [
                     {"index": 0, "id": "c", "type": "function", "function": {"name": "f", "arguments": args}}]},
                     "finish_reason": None}]}
        return f"data: {_json.dumps(chunk)}\n\n".encode()

    stream = ssefold.OpenAIChatStream()
    first = [e for e in stream.feed(body("one", "x")) if e.type == "tool_args_path"]
    stream.reconnect()
    second = [e for e in stream.feed(body("two", "y")) if e.type == "tool_args_path"]
    paths = lambda evs: [tuple(e.path_event.path) for e in evs if e.path_event.depth == 3]
    assert ("x", "a", "b") in paths(first)
    assert paths(second) and all(p[0] == "y" for p in paths(second)), paths(second)


# ---- issue 26, item 10: the UI state read while another thread feeds --------


def test_the_ui_state_read_while_another_thread_feeds_is_runtime_error_not_a_panic(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """`feed()` holds the stream while the core runs without the GIL; reading
    `.ui`, `UiState.snapshot()` or calling `set_connection()` meanwhile is the
    documented `RuntimeError` (they raised `PanicException`, a `BaseException`,
    with a Rust panic on stderr)."""
    s = ssefold.Stream("anthropic", ui=True)
    start = anthropic_tool_stream('{"a": 1}', 4).split(b"\n\n")[:2]
    s.feed(b"\n\n".join(start) + b"\n\n")  # a UI state with a part
    ui = s.ui
    assert ui is not None
    chunk = b": keepalive\n\n" * 50_000  # long enough for the reads to meet it
    stop = threading.Event()

    def feeder() -> None:
        while not stop.is_set():
            try:
                s.feed(chunk)
            except RuntimeError as exc:
                # A read held the stream at that moment (free-threaded
                # builds): the feeder goes on, or the reads never meet it.
                if "borrowed" not in str(exc):
                    raise

    reads: Dict[str, Any] = {
        "ui": lambda: s.ui,
        "snapshot": lambda: ui.snapshot(),
        "set_connection": lambda: ui.set_connection("connected"),
        "repr": lambda: repr(ui),
    }
    refused: Dict[str, int] = dict.fromkeys(reads, 0)
    thread = threading.Thread(target=feeder)
    thread.start()
    try:
        import time

        deadline = time.monotonic() + 60
        while min(refused.values()) == 0 and time.monotonic() < deadline:
            for name, read in reads.items():
                try:
                    read()
                except BaseException as exc:  # PanicException is a BaseException
                    assert type(exc) is RuntimeError, repr(exc)
                    assert "borrowed" in str(exc)
                    refused[name] += 1
    finally:
        stop.set()
        thread.join()
    assert min(refused.values()) > 0, refused  # each read met a feed at least once
    assert "panicked" not in capfd.readouterr().err
    assert ui.snapshot()["connection"] == "connected"  # usable once the feed is over


# ---- issue 26, items 7, 8 and 22: the HTTP helpers ---------------------------

import asyncio as _asyncio
import zlib as _zlib


def _mock_client(handler: Any, **kwargs: Any) -> Any:
    httpx = pytest.importorskip("httpx")
    return httpx.Client(transport=httpx.MockTransport(handler), **kwargs)


def _amock_client(handler: Any, **kwargs: Any) -> Any:
    httpx = pytest.importorskip("httpx")
    return httpx.AsyncClient(transport=httpx.MockTransport(handler), **kwargs)


class _Body:
    """A generated response body that counts what was read of it."""

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self.pieces = pieces
        self.taken = 0

    def __iter__(self) -> Iterator[bytes]:
        for piece in self.pieces:
            self.taken += len(piece)
            yield piece

    async def __aiter__(self) -> Any:
        for piece in self:
            yield piece


def _gzip_bomb(unpacked: int) -> Iterator[bytes]:
    """Gzip of ``unpacked`` zero bytes (about 1/1000 of it on the wire)."""
    z = _zlib.compressobj(9, _zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    for _ in range(unpacked >> 20):
        piece = z.compress(zeros)
        if piece:
            yield piece
    yield z.flush()


def _endless(total: int = 256 << 20) -> Iterator[bytes]:
    """As good as endless for the helper: 256 MiB, 64 KiB at a time."""
    piece = b"x" * 65536
    for _ in range(total // len(piece)):
        yield piece


# One retry of a transient status, at once (Retry-After capped at 1 ms).
_ONE_QUICK_RETRY = ssefold.ReconnectPolicy(initial_delay_ms=1, max_retries=1, max_retry_after_ms=1)
# A response's body read once: a transient status is not sent again.
_NO_RETRY = ssefold.ReconnectPolicy(max_retries=0)


def _fail_on_status(client: Any, asynchronous: bool, **kwargs: Any) -> Any:
    """The error ``stream_events`` (or ``astream_events``) raised."""
    policy = kwargs.pop("policy", _ONE_QUICK_RETRY)
    if not asynchronous:
        with client:
            with pytest.raises(ssefold.Error) as info:
                list(ssefold.stream_events(client, "GET", "http://test.invalid/", policy=policy, **kwargs))
        return info.value

    async def run() -> None:
        async with client:
            async for _ in ssefold.astream_events(client, "GET", "http://test.invalid/", policy=policy, **kwargs):
                pass

    with pytest.raises(ssefold.Error) as info:
        _asyncio.run(run())
    return info.value


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_gzip_bomb_error_body_is_read_only_4_kib(asynchronous: bool) -> None:
    # Before: 1 GiB unpacked, then an untyped MemoryError (here 256 MiB: the bomb's
    # first 64 KiB read alone unpacked to 64 MiB in httpx's decoder).
    body = _Body(_gzip_bomb(256 << 20))
    handler = lambda request: __import__("httpx").Response(
        500, headers={"Content-Encoding": "gzip"}, content=body if not asynchronous else body.__aiter__()
    )
    client = (_amock_client if asynchronous else _mock_client)(handler)
    err = _fail_on_status(client, asynchronous, provider="anthropic", policy=_NO_RETRY)
    assert isinstance(err, ssefold.RetryableProviderError)
    assert (err.status_code, err.type) == (500, "http_error")
    assert err.body == "\0" * 4096 and err.message == err.body
    assert body.taken < 1 << 20, body.taken


@pytest.mark.parametrize("asynchronous", [False, True])
def test_an_endless_error_body_is_read_only_4_kib(asynchronous: bool) -> None:
    body = _Body(_endless())
    handler = lambda request: __import__("httpx").Response(
        503, content=body if not asynchronous else body.__aiter__()
    )
    client = (_amock_client if asynchronous else _mock_client)(handler)
    err = _fail_on_status(client, asynchronous, policy=_NO_RETRY)
    assert isinstance(err, ssefold.RetryableProviderError) and err.status_code == 503
    assert err.body == "x" * 4096
    assert body.taken <= 128 << 10, body.taken


@pytest.mark.parametrize("coding", ["gzip", "x-gzip", "deflate", "raw-deflate", "identity", ""])
def test_an_encoded_error_body_still_gives_the_providers_error(coding: str) -> None:
    httpx = pytest.importorskip("httpx")
    error = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down \xc3\xa9"}}'
    packed = {
        "gzip": lambda b: _zlib.compress(b, wbits=31),
        "x-gzip": lambda b: _zlib.compress(b, wbits=31),
        "deflate": _zlib.compress,
        "raw-deflate": lambda b: _zlib.compress(b, wbits=-15),
    }.get(coding, lambda b: b)(error)
    header = "deflate" if coding == "raw-deflate" else coding
    headers = {"Content-Encoding": header, "Retry-After": "7"} if header else {"Retry-After": "7"}
    # Fed a byte at a time: the prefix decoder sees every split.
    handler = lambda request: httpx.Response(429, headers=headers, content=iter([packed[i : i + 1] for i in range(len(packed))]))
    err = _fail_on_status(_mock_client(handler), False)
    assert isinstance(err, ssefold.RetryableProviderError)
    assert (err.status_code, err.type, err.message) == (429, "rate_limit_error", "slow down é")
    assert err.body == error.decode()
    assert err.retry_after_ms == 7000


def test_a_long_error_body_is_its_first_4_kib_and_a_cut_character_is_left_out() -> None:
    httpx = pytest.importorskip("httpx")
    body = b"a" * 4095 + "é".encode() * 10_000  # 4095 + 20,000 bytes: é cut at 4096
    err = _fail_on_status(_mock_client(lambda request: httpx.Response(400, content=body)), False)
    assert isinstance(err, ssefold.ProviderError) and not isinstance(err, ssefold.RetryableProviderError)
    assert err.body == "a" * 4095 and err.type == "http_error"


def test_an_error_body_in_an_encoding_not_read_is_not_decoded() -> None:
    httpx = pytest.importorskip("httpx")
    body = _Body(_endless())
    headers = {"Content-Encoding": "br"}
    err = _fail_on_status(_mock_client(lambda request: httpx.Response(502, headers=headers, content=body)), False, policy=_NO_RETRY)
    assert isinstance(err, ssefold.RetryableProviderError)
    assert err.body == "(br-encoded body not decoded)" and body.taken == 0


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"Retry-After": "120"}, 120_000),
        ({"Retry-After": "1.5"}, 1500),
        ({"Retry-After": "0"}, 0),
        ({"retry-after-ms": "250.7", "Retry-After": "9"}, 250),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0),  # in the past
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-5"}, None),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "1" * 40}, (1 << 64) - 1),
        ({}, None),
    ],
)
def test_retry_after_is_on_the_error(headers: Dict[str, str], expected: Any) -> None:
    httpx = pytest.importorskip("httpx")
    body = b'{"error":{"type":"overloaded_error","message":"busy"}}'
    err = _fail_on_status(_mock_client(lambda request: httpx.Response(529, headers=headers, content=body)), False)
    assert isinstance(err, ssefold.RetryableProviderError)
    assert err.retry_after_ms == expected


def test_retry_after_as_an_http_date_in_the_future() -> None:
    import email.utils
    import time

    httpx = pytest.importorskip("httpx")
    when = email.utils.formatdate(time.time() + 90, usegmt=True)
    err = _fail_on_status(_mock_client(lambda request: httpx.Response(503, headers={"Retry-After": when})), False)
    assert isinstance(err, ssefold.ProviderError) and err.retry_after_ms is not None
    assert 85_000 <= err.retry_after_ms <= 90_000


def test_errors_without_an_http_response_have_no_retry_after() -> None:
    body = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"x"}}\n\n'
    with pytest.raises(ssefold.ProviderError) as info:
        ssefold.Stream("anthropic").feed(body)
    assert info.value.retry_after_ms is None


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_redirect_not_followed_is_a_typed_error_not_a_stream(asynchronous: bool) -> None:
    # Before: the 302's body was decoded as the stream (here it even looks like
    # one), ended early and was retried.
    httpx = pytest.importorskip("httpx")
    requests: List[Any] = []

    def handler(request: Any) -> Any:
        requests.append(request)
        return httpx.Response(302, headers={"Location": "https://elsewhere.invalid/v1"}, content=b"data: x\n\n")

    client = (_amock_client if asynchronous else _mock_client)(handler)
    err = _fail_on_status(client, asynchronous)
    assert type(err) is ssefold.ProviderError and not err.retryable
    assert (err.status_code, err.type, err.body) == (302, "http_error", "data: x\n\n")
    assert "https://elsewhere.invalid/v1" in err.message and "follow_redirects=True" in err.message
    assert len(requests) == 1


@pytest.mark.parametrize("asynchronous", [False, True])
def test_too_many_redirects_is_a_typed_error(asynchronous: bool) -> None:
    httpx = pytest.importorskip("httpx")
    handler = lambda request: httpx.Response(307, headers={"Location": str(request.url)})
    client = (_amock_client if asynchronous else _mock_client)(handler, follow_redirects=True, max_redirects=3)
    err = _fail_on_status(client, asynchronous, provider="openai_chat")
    assert type(err) is ssefold.ProviderError and err.type == "too_many_redirects" and not err.retryable
    assert isinstance(err.__cause__, httpx.TooManyRedirects)


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "TEXT/HTML", "application/xhtml+xml"])
def test_a_web_page_with_status_200_is_a_typed_error_not_a_stream(content_type: str) -> None:
    # A proxy's or captive portal's login page: before, decoded as the stream and retried.
    httpx = pytest.importorskip("httpx")
    requests: List[Any] = []
    page = b"<html><body>data: please log in</body></html>\n\n"

    def handler(request: Any) -> Any:
        requests.append(request)
        return httpx.Response(200, headers={"Content-Type": content_type}, content=_Body(iter([page] * 100_000)))

    err = _fail_on_status(_mock_client(handler), False, provider="anthropic")
    assert type(err) is ssefold.ProviderError and err.type == "unexpected_content_type"
    assert err.status_code == 200 and err.body is not None and err.body.startswith("<html>") and len(err.body) == 4096
    assert len(requests) == 1


def test_a_read_timeout_without_an_idle_policy_names_the_clients_timeout() -> None:
    # Before: "no data for None ms" (the policy has no idle timeout; the
    # client's read timeout fired).
    httpx = pytest.importorskip("httpx")

    class Stalls(_Once):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"id: 1\ndata: a\n\n")  # an id: resumed, not given up as not resumable
            self.wfile.flush()
            time.sleep(0.5)

    import time

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stalls)
    srv.daemon_threads = True
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        policy = ssefold.ReconnectPolicy(initial_delay_ms=1, max_retries=1)
        assert policy.idle_timeout_ms is None
        with httpx.Client(timeout=httpx.Timeout(5.0, read=0.05)) as client:
            with pytest.raises(ssefold.IncompleteStreamError) as info:
                url = f"http://127.0.0.1:{srv.server_address[1]}/"
                list(ssefold.stream_events(client, "GET", url, policy=policy, terminal=lambda e: False))
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join()
    assert str(info.value).startswith("no data for 50 ms; gave up after 1 reconnection(s)"), str(info.value)
    assert info.value.last is not None and info.value.last.kind == "idle_timeout"


def _id_stream(first: int, last: int) -> bytes:
    return b"".join(b"id: %d\ndata: %d\n\n" % (i, i) for i in range(first, last + 1))


@pytest.mark.parametrize(
    "server", ["ignores", "resends_the_last", "honours", "resends_from_older", "honours_then_sends_no_ids"]
)
def test_replays_are_skipped_in_constant_memory(server: str) -> None:
    """Raw mode reconnects with Last-Event-ID; whatever the server sends
    again is skipped, each event passed on once, and what the helper keeps
    for it does not grow with the stream (it kept a counter per id)."""
    httpx = pytest.importorskip("httpx")
    n = 5000
    calls: List[Any] = []

    def handler(request: Any) -> Any:
        calls.append(request.headers.get("last-event-id"))
        if len(calls) == 1:  # the connection drops inside event n + 1
            body = _id_stream(1, n) + b"id: %d\ndata: cut" % (n + 1)
        else:
            assert calls[-1] == str(n)
            if server == "honours_then_sends_no_ids":  # their id in force is still n: not a replay
                body = b"".join(b"data: %d\n\n" % i for i in range(n + 1, n + 101))
            else:
                start = {"ignores": 1, "resends_the_last": n, "honours": n + 1, "resends_from_older": n - 7}[server]
                body = _id_stream(start, n + 100)
            body += b"event: done\ndata: end\n\n"
        return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=body)

    policy = ssefold.ReconnectPolicy(initial_delay_ms=1, max_retries=2)
    with _mock_client(handler) as client:
        it = ssefold.stream_events(client, "GET", "http://test.invalid/", policy=policy, terminal=lambda e: e.event == "done")
        got = [e.data for e in it]
    assert got == [str(i) for i in range(1, n + 101)] + ["end"]
    assert len(calls) == 2
    assert len(it._session._runs) <= 16  # type: ignore[attr-defined]


def test_a_replay_of_events_without_ids_after_the_first_is_skipped() -> None:
    """Ids in force span id-less events: a replay from the start skips them
    by their count, wherever the ids changed."""
    httpx = pytest.importorskip("httpx")
    stream = b"data: pre\n\n" + b"".join(b"id: %d\ndata: %d\n\ndata: %d+\n\n" % (i, i, i) for i in range(1, 41))
    calls: List[Any] = []

    def handler(request: Any) -> Any:
        calls.append(request.headers.get("last-event-id"))
        body = stream + (b"data: cut" if len(calls) == 1 else b"event: done\ndata: end\n\n")
        return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=body)

    policy = ssefold.ReconnectPolicy(initial_delay_ms=1, max_retries=2)
    with _mock_client(handler) as client:
        got = [e.data for e in ssefold.stream_events(client, "GET", "http://t.invalid/", policy=policy, terminal=lambda e: e.event == "done")]
    assert got == ["pre"] + [x for i in range(1, 41) for x in (str(i), f"{i}+")] + ["end"]
    assert calls == [None, "40"]


def test_a_corrupt_compressed_stream_is_a_transport_failure_not_an_untyped_error() -> None:
    httpx = pytest.importorskip("httpx")
    calls: List[Any] = []

    def handler(request: Any) -> Any:
        calls.append(request)
        packed = _zlib.compress(b"data: a\n\n" * 1000, wbits=31)
        body = iter([packed[:20], b"\xff" * 64, packed[84:]])  # a broken deflate block
        return httpx.Response(200, headers={"Content-Encoding": "gzip", "Content-Type": "text/event-stream"}, content=body)

    err = _fail_on_status(_mock_client(handler), False)
    assert isinstance(err, ssefold.IncompleteStreamError)
    assert str(err).startswith("the connection failed: DecodingError"), str(err)
    assert isinstance(err.__cause__, httpx.DecodingError) and len(calls) == 2


# ---- issue 26, item 3: the path events one feed returns are bounded ----------


def _chat_call_in_one_delta(args: str, call: int = 0) -> bytes:
    """An OpenAI Chat tool call whose whole arguments come in one delta (as
    OpenAI-compatible servers often send them), then the end of the turn."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    calls = [{"index": call, "id": f"call_{call}", "type": "function", "function": {"name": "f", "arguments": args}}]
    chunk = dict(base, choices=[{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": None}])
    return f"data: {_json.dumps(chunk)}\n\n".encode()


def _chat_end() -> bytes:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    end = dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])
    return f"data: {_json.dumps(end)}\n\ndata: [DONE]\n\n".encode()


@pytest.mark.parametrize("ui", [False, True])
def test_one_whole_arguments_delta_gives_at_most_max_path_events_per_feed(ui: bool) -> None:
    # 1 MB of [[[[[]]]]] in one delta: 1,000,000 path events in one list
    # before (450 MB in the issue); now the default 16,384, then one warning.
    args = hostile_args("nested", 1_100_000)
    s = ssefold.Stream("openai_chat", ui=ui)
    assert s is not None
    events = s.feed(_chat_call_in_one_delta(args) + _chat_end()) + s.finish()
    paths = [e for e in events if e.type == "tool_args_path"]
    warnings = [e for e in events if e.type == "warning"]
    assert len(paths) == 16_384
    assert [w.code for w in warnings] == ["path_events_dropped"]
    assert "".join(e.json for e in events if e.type == "tool_args_delta") == args
    assert [e.outcome for e in events if e.type == "part_end"] == ["complete"]
    assert s.message is not None
    assert s.message["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == args
    # The events kept are the first ones, in order.
    assert [p.path_event.type for p in paths[:3]] == ["container_start", "container_start", "container_start"]
    if ui:
        assert s.ui is not None and s.ui.snapshot()["parts"][0]["tool_call"]["arguments"] == _json.loads(args)


@pytest.mark.parametrize("limit", [0, 1, 7])
def test_max_path_events_per_feed_is_per_feed_and_each_dialect_takes_it(limit: int) -> None:
    args = '{"a": [1, 2, {"b": "c"}], "d": null, "e": [true, false, 3.5, "f"]}'
    full = ssefold.Stream("openai_chat")
    expected = [e.path_event.to_dict() for e in full.feed(_chat_call_in_one_delta(args)) if e.type == "tool_args_path"]
    assert len(expected) > 2 * limit
    s = ssefold.OpenAIChatStream(config=ssefold.StreamConfig(max_path_events_per_feed=limit))
    first = s.feed(_chat_call_in_one_delta(args))
    second = s.feed(_chat_call_in_one_delta(args, call=1))  # a new feed: a new allowance
    for events in (first, second):
        assert [e.path_event.to_dict() for e in events if e.type == "tool_args_path"] == expected[:limit]
        assert [e.code for e in events if e.type == "warning"] == ["path_events_dropped"]
    s.feed(_chat_end())
    s.finish()
    assert s.message is not None
    assert [c["function"]["arguments"] for c in s.message["choices"][0]["message"]["tool_calls"]] == [args, args]
    for cls in (ssefold.AnthropicStream, ssefold.OpenAIResponsesStream):
        cls(config=ssefold.StreamConfig(max_path_events_per_feed=limit))
    with pytest.raises(OverflowError):
        ssefold.StreamConfig(max_path_events_per_feed=-1)


def test_the_default_path_events_limit_is_not_reached_by_16_kib_reads() -> None:
    args = hostile_args("numbers", 200_000)  # 100,000 numbers
    data = anthropic_tool_stream(args, 4096)
    s = ssefold.AnthropicStream()
    events = [e for i in range(0, len(data), 16384) for e in s.feed(data[i : i + 16384])]
    assert not [e for e in events if e.type == "warning"]
    assert len([e for e in events if e.type == "tool_args_path"]) == 100_000 + 4  # and {, [, ], }


# ---- issue 26, item 11: PartialJSON's events are O(1) however deep ------------


def _deep_units(depth: int, units: int) -> str:
    unit = "[" * depth + '{"k": 0}' + "]" * depth
    return '{"a": [' + ",".join([unit] * units) + "]}"


def test_partial_json_events_hold_no_values_until_asked() -> None:
    # Before: each closing container's value was converted when its event was
    # made, its whole subtree, depth times over (a 500-deep unit made 125,000
    # lists; 49.5x the cost per byte of depth 2). Now the events hold the
    # container's text; counted in live Python objects, not in time.
    import gc

    doc = _deep_units(300, 4)
    p = ssefold.PartialJSON()
    gc.collect()
    before = len(gc.get_objects())
    events = [e for i in range(0, len(doc), 4096) for e in p.push(doc[i : i + 4096])]
    assert len(gc.get_objects()) - before < 100  # PathEvents are not tracked; no list or dict was made
    containers = [e for e in events if e.type == "value_complete" and e.kind == "array"]
    assert len(containers) == 4 * 300 + 1
    value = _json.loads(doc)
    for e in containers[::97] + containers[-1:]:
        node = value
        for segment in e.path:
            node = node[segment]
        assert e.value == node and e.value is e.value  # parsed once, on first access
    assert p.finish() == value


def _lookup(value: Any, path: Any) -> Any:
    for segment in path:
        value = value[segment]
    return value


DOCS = [
    {"path": "src/é.rs", "content": "fn main() {\n  \"🙂\"\n}", "n": [1, -2.5, 3e10, True, None, {"k": []}], "e": {}},
    [[[[]]], [{"a": [{}]}], "x" * 70_000, "é" * 40_000],
    "top-level 🙂 string",
    12.5,
]


@pytest.mark.parametrize("doc", DOCS, ids=["object", "arrays and long strings", "string", "number"])
def test_partial_json_is_the_same_in_every_fragmentation(doc: Any) -> None:
    """Every fragmentation (byte by byte through UTF-8 characters, random
    cuts) gives the same events, each container's value is that part of the
    document, the value so far is `parse_partial_json`'s of the bytes so far,
    and `bytes_pushed` counts every byte (a cut character included)."""
    import random

    text = _json.dumps(doc, ensure_ascii=False) + " "
    data = text.encode()
    rng = random.Random(5)
    cuttings = [[len(data)], list(range(1, len(data) + 1)) if len(data) < 2000 else [1, 2, 3, len(data)]]
    for _ in range(8):
        cuttings.append(sorted({rng.randrange(1, len(data) + 1) for _ in range(rng.randrange(1, 40))} | {len(data)}))
    reference = None
    for cuts in cuttings:
        p = ssefold.PartialJSON()
        events: List[Any] = []
        start = 0
        for end in cuts:
            events += p.push(data[start:end])
            assert p.bytes_pushed == end
            if (end % 7 == 0 or end == len(data) or len(cuts) < 50) and not isinstance(doc, float):
                # (a top-level number is whole at the end of parse_partial_json's text only)
                assert p.value == ssefold.parse_partial_json(data[:end])
            start = end
        forms = [(e.to_dict(), e.path) for e in events if e.type != "string_append"]  # one per fragment
        texts: Dict[Any, str] = {}
        for e in events:
            if e.type == "string_append":
                texts[e.path] = texts.get(e.path, "") + e.text
            elif e.type == "value_complete":
                assert e.value == _lookup(doc, e.path)
        assert all(_lookup(doc, path) == t for path, t in texts.items())
        if reference is None:
            reference = forms
        assert forms == reference
        assert p.finish() == doc


@pytest.mark.parametrize(
    "data",
    [b'{"a": "\xe9"}', b'{"a": "x\xf0\x9f\x99"}', b'{"a": [1, \xff]}', b'["\xc3', b'{"a": "\xed\xa0\x80"}', b'[1, }'],
)
def test_partial_json_errors_are_where_the_whole_documents_are(data: bytes) -> None:
    """Invalid UTF-8 (cut or not), invalid JSON: the error's kind and offset do
    not depend on the fragmentation and are those of the one-shot parser."""
    try:
        ssefold.parse_partial_json(data)
        expected = ("incomplete", len(data))
    except ssefold.PartialJSONError as e:
        expected = (e.kind, e.offset)  # type: ignore[attr-defined]
    for cuts in ([len(data)], list(range(1, len(data) + 1))):
        p = ssefold.PartialJSON()
        start = 0
        with pytest.raises(ssefold.PartialJSONError) as info:
            for end in cuts:
                p.push(data[start:end])
                start = end
            p.finish()
        assert (info.value.kind, info.value.offset) == expected  # type: ignore[attr-defined]
        with pytest.raises(ssefold.PartialJSONError):  # sticky, and the document grows no more
            p.push(b"]" * 1000)


@pytest.mark.parametrize("limit", range(1, 12))
def test_partial_json_size_limit_through_a_cut_character(limit: int) -> None:
    data = '["é🙂x"]'.encode()
    results: set[Tuple[str, Any]] = set()
    for cuts in ([len(data)], list(range(1, len(data) + 1))):
        p = ssefold.PartialJSON(max_bytes=limit)
        start = 0
        try:
            for end in cuts:
                p.push(data[start:end])
                start = end
            results.add(("ok", _json.dumps(p.finish())))
        except ssefold.PartialJSONError as e:
            results.add((e.kind, e.offset))  # type: ignore[attr-defined]
    assert len(results) == 1, results
    (result,) = results
    assert result == ("ok", '["\\u00e9\\ud83d\\ude42x"]') if limit >= len(data) else result == ("size_limit", limit)


# ---- issue 26, items 12 and 23: lone surrogates in str arguments; add(dict) ----

LONE = "\ud800"
FILE_NAME = __import__("os").fsdecode(b"caf\xe9.txt")  # 'caf\udce9.txt': not UTF-8 on disk


def _encode_error(field: str) -> Any:
    """pytest.raises for the typed error of a lone surrogate in `field`."""

    class Raises:
        def __enter__(self) -> None:
            self.ctx = pytest.raises(ssefold.EncodeError)
            self.info = self.ctx.__enter__()

        def __exit__(self, *exc: Any) -> bool:
            handled = self.ctx.__exit__(*exc)
            assert self.info.value.field == field  # type: ignore[attr-defined]
            assert not isinstance(self.info.value, UnicodeError)
            return bool(handled)

    return Raises()


def _replaced(count: int = 1) -> Any:
    return pytest.warns(UnicodeWarning, match=f"{count} lone surrogate\\(s\\) replaced with U\\+FFFD")


def test_relay_ids_with_a_lone_surrogate_are_a_typed_error_and_texts_are_u_fffd() -> None:
    relay = ssefold.Relay("catalog", provider=None)
    with _encode_error("call_id"):
        relay.tool_result(LONE, "out")
    for field, args in [("approval_id", (LONE, "c", "f")), ("call_id", ("a", LONE, "f")), ("name", ("a", "c", LONE))]:
        with _encode_error(field):
            relay.approval_required(*args, {})
    with _encode_error("level"):
        relay.log(LONE, "m", timestamp=0, trace_id="t")
    with _encode_error("code"):
        relay.error("m", code=LONE)
    with _replaced():
        out = relay.tool_result("c1", f"listed {FILE_NAME}")
    assert "listed caf\ufffd.txt".encode() in out
    with _replaced(2):
        out = relay.tool_result("c2", {"files": [FILE_NAME], FILE_NAME: 1})
    assert out.count("caf\ufffd.txt".encode()) == 2
    with _replaced():
        assert "\ufffd".encode() in relay.log("info", LONE, timestamp=0, trace_id="t")
    with _replaced():
        assert "\ufffd".encode() in relay.log("info", "m", timestamp=0, trace_id=LONE)
    with _replaced():
        assert "\ufffd".encode() in relay.error(f"cannot open {FILE_NAME}", recoverable=True)
    with _replaced():
        relay.approval_required("a", "c", "f", {"path": FILE_NAME})
    # An id the relay never sent: the usual RelayError, not UnicodeEncodeError.
    with pytest.raises(ssefold.RelayError) as info:
        relay.replay_after(LONE)
    assert info.value.kind == "unknown_event_id"  # type: ignore[attr-defined]
    with _replaced():
        relay.finish({"note": LONE})


def test_relay_push_of_a_dict_with_a_lone_surrogate_is_u_fffd() -> None:
    relay = ssefold.Relay("ai-sdk", provider=None)
    relay.push({"type": "message_start", "provider": "anthropic", "message": {}})
    relay.push({"type": "part_start", "part": 0, "kind": "text", "choice": 0, "index": 0, "provider_type": "text"})
    with _replaced():
        out = relay.push({"type": "text_delta", "part": 0, "text": f"see {FILE_NAME}"})
    assert "see caf\ufffd.txt".encode() in out


def test_scheduler_ids_are_typed_errors_and_outputs_u_fffd() -> None:
    s = ssefold.ToolScheduler()
    with _encode_error("call_id"):
        s.add(LONE, "f", "{}")
    with _encode_error("name"):
        s.add("c", LONE, "{}")
    with _encode_error("call_id"):
        s.add_unknown(LONE, "f")
    s.add("c", "f", "{}")
    assert s.startable() == ["c"]
    with _encode_error("call_id"):
        s.finish(LONE, "out")
    with _replaced():
        s.update("c", f"reading {FILE_NAME}")
    with _replaced():
        assert s.finish("c", f"read {FILE_NAME}").recorded
    (result,) = s.results()
    assert (result.kind, result.output) == ("ran", "read caf\ufffd.txt")
    s.add("d", "f", "{}")
    with _replaced():
        s.abort(f"user left {LONE}")
    assert [r.output for r in s.all_results()][1].startswith("Aborted")


def test_scheduler_add_takes_any_json_value() -> None:
    s = ssefold.ToolScheduler()
    s.add("a", "f", {"path": "x", "n": [1, 2.5, None, True], "deep": {"k": ("t", "u")}})
    s.add("b", "f", [1, 2])
    s.add("c", "f", 3)
    s.add("d", "f", None)
    s.add("e", "f", '{"text": "as before"}')
    s.add("g", "f", "{nope")  # JSON text still checked
    with _replaced():
        s.add("h", "f", {"path": FILE_NAME})
    assert s.startable() == ["a", "b", "c", "d", "e", "h"]
    with pytest.raises(TypeError):
        s.add("i", "f", b"{}")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        s.add("j", "f", {1: 2})  # type: ignore[dict-item]
    deep: Any = []
    for _ in range(600):
        deep = [deep]
    with pytest.raises(ValueError):
        s.add("k", "f", deep)
    for call_id in ["a", "b", "c", "d", "e", "h"]:
        s.finish(call_id, "ok")
    kinds = {r.call_id: r.kind for r in s.all_results()}
    assert kinds == {"a": "ran", "b": "ran", "c": "ran", "d": "ran", "e": "ran", "g": "invalid_input", "h": "ran"}


def test_turn_core_and_reconnection_inputs() -> None:
    core = ssefold.TurnCore("anthropic")
    with _encode_error("name"):
        core.add_tool(LONE)
    with _encode_error("call_id"):
        core.tool_result(LONE, "x")
    with _encode_error("call_id"):
        core.tool_update(LONE, "x")
    with _replaced():
        core.connection_failed(f"OSError: {FILE_NAME}")
    with _replaced():
        core.abort(LONE)
    r = ssefold.Reconnector()
    with _encode_error("id"):
        r.on_event(LONE)
    with _replaced():
        end = ssefold.StreamEnd.transport_error(f"ConnectError: {FILE_NAME}")
    assert end.message == "ConnectError: caf\ufffd.txt"
    assert ssefold.is_retryable_error_type(LONE) is False


def test_ui_state_tool_progress() -> None:
    ui = ssefold.Stream("anthropic", ui=True).ui
    with _encode_error("id"):
        ui.set_tool_progress(LONE, 1)
    with _replaced():
        ui.set_tool_progress("t", {"file": FILE_NAME})
    assert ui.snapshot()["tool_progress"]["t"] == {"file": "caf\ufffd.txt"}
    with pytest.raises(ValueError):
        ui.set_connection(LONE)  # type: ignore[arg-type]


@pytest.mark.parametrize("text, offset", [('"\ud800"', 1), ('{"a": "x\udcff"}', 8), ('["\ud83d\ude00"]', 2)])
def test_partial_json_str_with_a_lone_surrogate_is_partial_json_error(text: str, offset: int) -> None:
    """A lone surrogate (two halves of a pair too: a Python str holds them
    apart) is invalid UTF-8 at its byte offset, as in bytes."""
    for parse in (lambda t: ssefold.PartialJSON().push(t), ssefold.parse_partial_json):
        with pytest.raises(ssefold.PartialJSONError) as info:
            parse(text)
        assert (info.value.kind, info.value.offset) == ("invalid", offset)  # type: ignore[attr-defined]
        assert "invalid UTF-8" in str(info.value)


def _tool_turn_body() -> bytes:
    return anthropic_tool_stream('{"dir": "."}', 4)


def test_run_turn_sync_a_tool_output_with_a_non_utf8_file_name_keeps_every_result() -> None:
    # Before: UnicodeEncodeError from the output killed the turn, every result lost.
    def listing(call: ssefold.ToolCall) -> str:
        return f"files: {FILE_NAME}"

    with _replaced():
        result = ssefold.run_turn_sync(iter([_tool_turn_body()]), {"f": listing}).result()
    assert [(r.kind, r.output) for r in result.results] == [("ran", "files: caf\ufffd.txt")]
    assert result.failure is None and result.next is not None


def test_run_turn_a_tool_failing_on_a_non_utf8_file_name_keeps_every_result() -> None:
    async def opener(call: ssefold.ToolCall) -> str:
        raise FileNotFoundError(f"no such file: {FILE_NAME}")

    async def body() -> Any:
        yield _tool_turn_body()

    async def run() -> ssefold.TurnResult:
        return await ssefold.run_turn(body(), {"f": opener})

    with _replaced():
        result = _asyncio.run(run())
    assert [(r.kind, r.is_error, r.output) for r in result.results] == [("ran", True, "no such file: caf\ufffd.txt")]


def test_an_error_body_with_a_lone_surrogate_escape_is_a_typed_provider_error() -> None:
    httpx = pytest.importorskip("httpx")
    body = b'{"error": {"type": "invalid_request_error", "message": "bad \\ud800 input"}}'
    err = _fail_on_status(_mock_client(lambda request: httpx.Response(400, content=body)), False)
    assert isinstance(err, ssefold.ProviderError) and err.message == "bad \ufffd input"
