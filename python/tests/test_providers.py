"""Provider streams: the core's golden fixtures (tests/fixtures/<dialect>/)
through the Python objects in every chunking: the same normalized events
(as their wire dicts), the same folded message, the same ending."""

from __future__ import annotations

import base64
import json
import pathlib
import random
from typing import Any, List, Optional, Tuple, Type

import pytest

import ssefold
from conftest import ROOT, peer_fixture_files

FIXTURES = ROOT / "tests" / "fixtures"
CLASSES = {
    "anthropic": ssefold.AnthropicStream,
    "openai_chat": ssefold.OpenAIChatStream,
    "openai_responses": ssefold.OpenAIResponsesStream,
    "gemini": ssefold.GeminiStream,
    "ollama": ssefold.OllamaStream,
    "bedrock": ssefold.BedrockStream,
    "bedrock_converse": ssefold.BedrockConverseStream,
}
# The Debug form of the core's StreamError (last line of each .jsonl) -> the
# Python exception.
ERRORS: List[Tuple[str, Type[ssefold.Error]]] = [
    ("Provider(", ssefold.ProviderError),
    ("Incomplete", ssefold.IncompleteStreamError),
    ("InvalidJson", ssefold.InvalidEventError),
    ("LimitExceeded", ssefold.LimitExceededError),
    ("UnknownDialect", ssefold.UnknownDialectError),
    ("Sse(", ssefold.DecodeError),
    ("EventStream(", ssefold.EventStreamError),
]


def golden_files() -> List[pathlib.Path]:
    return sorted([*FIXTURES.glob("*/*.sse"), *FIXTURES.glob("*/*.ndjson"), *FIXTURES.glob("*/*.bin")])


def wire(event: ssefold.StreamEvent) -> dict:
    """The event's wire form (``to_dict()``, as the golden JSON lines; a
    ``media_delta``'s bytes are base64 there)."""
    d = event.to_dict()
    if d["event"] == "media_delta":
        d["data"] = base64.b64encode(d["data"]).decode()
    return d


def run(stream: ssefold.Stream, chunks: List[bytes]) -> Tuple[List[dict], Optional[ssefold.Error]]:
    """Feeds ``chunks`` then finishes; the wire dicts and the error, if any
    (the events carried by the error included)."""
    out: List[dict] = []
    try:
        for c in chunks:
            out += [wire(e) for e in stream.feed(c)]
        out += [wire(e) for e in stream.finish()]
    except ssefold.Error as err:
        out += [wire(e) for e in getattr(err, "events", [])]
        return out, err
    return out, None


def chunkings(data: bytes) -> List[Tuple[str, List[bytes]]]:
    rng = random.Random(len(data))
    ways = [("whole", [data]), ("bytewise", [data[i : i + 1] for i in range(len(data))])]
    for n in range(3):
        cuts = sorted({rng.randrange(len(data) + 1) for _ in range(3 + 5 * n)} | {0, len(data)})
        ways.append((f"random{n}", [data[a:b] for a, b in zip(cuts, cuts[1:])]))
    return ways


def test_golden_fixtures_are_there() -> None:
    assert len(golden_files()) >= 15
    dialects = {p.parent.name for p in golden_files()}
    assert set(CLASSES) <= dialects, set(CLASSES) - dialects


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden_fixture_in_every_chunking(path: pathlib.Path) -> None:
    lines = [json.loads(line) for line in path.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()]
    *want_events, end = lines
    want_message = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    data = path.read_bytes()
    for how, chunks in chunkings(data):
        for stream in (CLASSES[path.parent.name](), ssefold.Stream("auto")):
            events, err = run(stream, chunks)
            assert events == want_events, how
            assert stream.message == want_message, how
            assert stream.provider == path.parent.name
            if end["end"] == "ok":
                assert err is None, how
                assert stream.is_terminated
            else:
                want = next(cls for prefix, cls in ERRORS if end["end"].startswith(prefix))
                assert type(err) is want or isinstance(err, want), (how, err)


def test_provider_error_has_type_message_and_the_events() -> None:
    data = (FIXTURES / "anthropic" / "error_mid_stream.sse").read_bytes()
    s = ssefold.AnthropicStream()
    with pytest.raises(ssefold.ProviderError) as info:
        s.feed(data)
    err = info.value
    assert err.type == "overloaded_error" and err.message
    assert err.output_emitted is True
    assert err.events[-1].type == "error"
    with pytest.raises(ssefold.StreamClosedError):
        s.feed(b"data: {}\n\n")
    assert s.message["content"][0]["text"] == "Partial ans"


@pytest.mark.parametrize(
    "name, error_type, retryable, after_output",
    [
        ("throttling_mid_stream", "throttlingException", True, True),
        ("validation_exception", "validationException", False, False),
    ],
)
def test_bedrock_exception_frames_are_provider_errors(
    name: str, error_type: str, retryable: bool, after_output: bool
) -> None:
    data = (FIXTURES / "bedrock_converse" / f"{name}.bin").read_bytes()
    s = ssefold.BedrockConverseStream()
    with pytest.raises(ssefold.ProviderError) as info:
        s.feed(data)
    err = info.value
    assert err.type == error_type and err.message
    assert err.retryable is retryable
    assert isinstance(err, ssefold.RetryableProviderError) is retryable
    assert err.output_emitted is after_output


def test_truncated_stream_raises_incomplete_on_finish_and_keeps_the_message() -> None:
    data = (FIXTURES / "anthropic" / "truncated.sse").read_bytes()
    s = ssefold.AnthropicStream()
    events = s.feed(data)
    assert events and not s.is_terminated
    with pytest.raises(ssefold.IncompleteStreamError) as info:
        s.finish()
    assert info.value.expected == "message_stop"
    assert any(e.type == "part_end" and e.outcome == "incomplete" for e in info.value.events)
    assert isinstance(s.message, dict)


def test_is_complete_at_end_before_finish() -> None:
    """A Chat body without data: [DONE]: complete at its end once every
    choice has its finish_reason; finish() then ends the turn normally."""
    data = (FIXTURES / "openai_chat" / "no_done_vllm.sse").read_bytes()
    cut = data.rindex(b"data: ")
    s = ssefold.Stream("openai_chat")
    assert not s.is_complete_at_end
    s.feed(data[:cut])
    assert not s.is_complete_at_end and not s.is_terminated
    s.feed(data[cut:])
    assert s.is_complete_at_end and not s.is_terminated
    events = s.finish()
    assert [e.type for e in events] == ["warning", "turn_end"]
    assert events[0].code == "terminal_missing" and events[1].stop_reason == "stop"
    assert s.is_complete_at_end and s.is_terminated
    # Announced usage that never came: not complete, finish() raises.
    missing = ssefold.Stream("auto")
    missing.feed((FIXTURES / "openai_chat" / "no_done_usage_missing.sse").read_bytes())
    assert not missing.is_complete_at_end
    with pytest.raises(ssefold.IncompleteStreamError):
        missing.finish()
    assert not missing.is_complete_at_end
    # Aborted: never complete.
    aborted = ssefold.Stream("openai_chat")
    aborted.feed(data)
    aborted.abort()
    assert not aborted.is_complete_at_end


def test_stream_event_attributes() -> None:
    path = next(p for p in peer_fixture_files() if p.name == "basic_response.txt")
    s = ssefold.AnthropicStream()
    events = s.feed(path.read_bytes()) + s.finish()
    assert [e.type for e in events][:3] == ["message_start", "usage", "part_start"]
    delta = next(e for e in events if e.type == "text_delta")
    assert (delta.part, delta.text) == (0, "Hello")
    assert delta.fields() == ["part", "text"]
    assert delta.to_dict() == {"event": "text_delta", "part": 0, "text": "Hello"}
    assert all(e.to_dict()["event"] == e.type for e in events)
    assert repr(delta) == "StreamEvent(type='text_delta', part=0, text='Hello')"
    assert delta == ssefold.AnthropicStream().feed(path.read_bytes())[3]
    with pytest.raises(AttributeError):
        delta.nope  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="text_delta"):
        delta.usage
    assert s.message["content"] == [{"type": "text", "text": "Hello there!"}]
    assert s.message["stop_reason"] == "end_turn"


def test_delta_events_are_compact_and_read_like_the_others() -> None:
    # Deltas keep their text on the Rust side until it is read; read twice,
    # it is the same str; every view of the event agrees with its wire form.
    data = (FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes()
    events = ssefold.AnthropicStream().feed(data)
    args = next(e for e in events if e.type == "tool_args_delta")
    assert args.json is args.json and isinstance(args.json, str)
    assert args.fields() == ["part", "json"]
    assert args.to_dict() == {"event": "tool_args_delta", "part": args.part, "json": args.json}
    assert repr(args) == f"StreamEvent(type='tool_args_delta', part={args.part}, json={args.json!r})"
    with pytest.raises(AttributeError, match="tool_args_delta"):
        args.text
    path = next(e for e in events if e.type == "tool_args_path")
    assert path.fields() == ["part", "path_event"]
    with pytest.raises(AttributeError, match="tool_args_path"):
        path.json
    text = next(e for e in events if e.type == "text_delta")
    with pytest.raises(AttributeError, match="text_delta"):
        text.json
    assert text != args and text == text


def test_a_text_parts_content_is_read_lazily_and_equals_the_folded_part() -> None:
    # A text part_end's content is converted when first read (a tool call's
    # during feed()); both equal the part in the folded message.
    data = (FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes()
    s = ssefold.AnthropicStream()
    events = s.feed(data)
    ends = [e for e in events if e.type == "part_end"]
    assert {e.kind for e in ends} >= {"text", "tool_call"}
    content = s.message["content"]
    for e in ends:
        assert e.content is e.content
        want = {"event": "part_end", "part": e.part, "kind": e.kind, "outcome": "complete", "content": e.content}
        if e.kind == "tool_call":
            # A tool call part's call follows its content, as in the wire form.
            want["tool_call"] = e.tool_call.to_dict()
        else:
            assert e.tool_call is None
        assert e.to_dict() == want
        assert e.fields() == list(want)[1:]
        assert e.content in content
    # Deltas of one feed() share a buffer: each keeps its text after the rest are gone.
    deltas = [e for e in events if e.type == "text_delta"]
    last, joined = deltas[-1], "".join(e.text for e in deltas)
    del events, deltas, ends
    assert joined.endswith(last.text)


def test_tool_args_path_events_carry_path_events() -> None:
    data = (FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes()
    events = ssefold.AnthropicStream().feed(data)
    paths = [e for e in events if e.type == "tool_args_path"]
    assert paths and all(isinstance(e.path_event, ssefold.PathEvent) for e in paths)
    assert paths[0].to_dict()["path_event"] == paths[0].path_event.to_dict()


def test_tool_args_path_events_are_the_partial_parsers_in_any_chunking() -> None:
    # A provider stream's path events (their texts held in each call's shared
    # buffer) are those PartialJSON gives for the same arguments, whatever the
    # chunking, and each keeps its text after later feeds reuse the buffers.
    import json

    args = json.dumps({"path": "src/\u00e9t\u00e9.rs", "n": [1, 2.5, None, True], "content": 'a "q"\n\\ \U0001F600' * 40})

    def event(name: str, data: object) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    body = event("message_start", {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}})
    body += event("content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}})
    for i in range(0, len(args), 7):
        body += event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "input_json_delta", "partial_json": args[i:i + 7]}})
    body += event("content_block_stop", {"type": "content_block_stop", "index": 0})
    expected = [e.to_dict() for e in ssefold.PartialJSON().push(args)]
    texts = "".join(d["text"] for d in expected if d["type"] == "string_append")
    for chunk in (1, 5, 64, len(body)):
        s = ssefold.AnthropicStream()
        paths = []
        for i in range(0, len(body), chunk):
            paths += [e.path_event for e in s.feed(body[i:i + chunk]) if e.type == "tool_args_path"]
        got = [p.to_dict() for p in paths]
        # Fragment boundaries differ with the deltas: compare the appended
        # text whole and every other event one by one.
        assert "".join(d["text"] for d in got if d["type"] == "string_append") == texts
        assert [d for d in got if d["type"] != "string_append"] == [d for d in expected if d["type"] != "string_append"]
        assert {p.path for p in paths if p.type == "string_append"} == {("path",), ("content",)}
        assert paths[-1].value == json.loads(args)


def test_path_events_of_many_calls_open_at_once_keep_their_own_paths() -> None:
    # 20 tool calls open together, their argument fragments interleaved:
    # each call's path events are PartialJSON's for its own arguments (the
    # binding's per-call path caches: a short list, then a map).
    import json

    def event(name: str, data: object) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    calls = [json.dumps({"i": i, "path": [f"a{i}", {"k": "v" * i}], "s": "x\ny" * i}) for i in range(20)]
    body = event("message_start", {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}})
    for i in range(len(calls)):
        body += event("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
            "type": "tool_use", "id": f"t{i}", "name": "f", "input": {}}})
    for at in range(0, max(map(len, calls)), 5):
        for i, args in enumerate(calls):
            if at < len(args):
                body += event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                      "delta": {"type": "input_json_delta", "partial_json": args[at:at + 5]}})
    for i in range(len(calls)):
        body += event("content_block_stop", {"type": "content_block_stop", "index": i})
    s = ssefold.AnthropicStream()
    events = [e for c in (body[i:i + 4096] for i in range(0, len(body), 4096)) for e in s.feed(c)]
    by_part: dict = {}
    for e in events:
        if e.type == "tool_args_path":
            by_part.setdefault(e.part, []).append(e.path_event)
    assert len(by_part) == len(calls)
    for part, paths in by_part.items():
        want = [e for e in ssefold.PartialJSON().push(calls[part])]
        strip = lambda evs: [(e.type, e.path) for e in evs if e.type != "string_append"]
        assert strip(paths) == strip(want)
        assert "".join(e.text for e in paths if e.type == "string_append") == "".join(
            e.text for e in want if e.type == "string_append")
    assert [c["input"] for c in s.message["content"]] == [json.loads(c) for c in calls]


@pytest.mark.parametrize("limit", ["max_line_len", "max_event_size", "max_id_len", "max_parts", "max_tool_args_bytes",
                                   "max_text_bytes", "max_choices", "max_memory_bytes", "max_event_stream_message_len",
                                   "max_event_stream_headers_len"])
def test_a_limit_of_zero_is_refused_by_the_core(limit: str) -> None:
    # One semantics (ssefold::config): a limit means its number; 0 would
    # accept nothing and is refused, naming the field, in every binding.
    with pytest.raises(ValueError, match=f"^{limit} must be at least 1, got 0$"):
        ssefold.StreamConfig(**{limit: 0})
    if limit in ("max_line_len", "max_event_size", "max_id_len"):
        with pytest.raises(ValueError, match=f"^{limit} must be at least 1, got 0$"):
            ssefold.SSEDecoder(**{limit: 0})
    with pytest.raises(OverflowError):  # a negative is not a size: the conversion refuses it
        ssefold.StreamConfig(**{limit: -1})
    with pytest.raises(ValueError), pytest.warns(DeprecationWarning):  # the old keywords: the same check
        ssefold.Stream(**{limit: 0})  # type: ignore[misc]


def test_stream_config_is_one_frozen_object_with_the_cores_defaults() -> None:
    c = ssefold.StreamConfig()
    assert c == ssefold.StreamConfig() and hash(c) == hash(ssefold.StreamConfig()) and repr(c) == "StreamConfig()"
    assert (c.max_parts, c.max_line_len, c.utf8, c.tool_input_trailing_strings) == (4096, 16 << 20, "replace", False)
    assert list(c.to_dict()) == [
        "max_line_len", "max_event_size", "max_id_len", "max_parts", "max_tool_args_bytes", "max_text_bytes",
        "max_choices", "max_memory_bytes", "max_path_events_per_feed", "max_event_stream_message_len",
        "max_event_stream_headers_len", "utf8", "tool_input_trailing_strings",
    ]
    d = c.replace(max_parts=1, utf8="strict")
    assert repr(d) == "StreamConfig(max_parts=1, utf8='strict')" and d != c and c.max_parts == 4096
    assert ssefold.StreamConfig(**d.to_dict()) == d
    with pytest.raises(AttributeError):
        c.max_parts = 1  # type: ignore[misc]
    with pytest.raises(TypeError, match="max_part"):
        ssefold.StreamConfig(max_part=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="utf8"):
        ssefold.StreamConfig(utf8="latin-1")  # type: ignore[arg-type]
    assert ssefold.StreamConfig(max_path_events_per_feed=0).max_path_events_per_feed == 0
    data = (FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes()
    for cls in (ssefold.AnthropicStream, lambda **kw: ssefold.Stream("anthropic", **kw)):
        with pytest.raises(ssefold.LimitExceededError):
            cls(config=ssefold.StreamConfig(max_parts=1)).feed(data)


def test_the_old_keywords_still_work_with_a_deprecation_warning() -> None:
    data = (FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes()
    with pytest.warns(DeprecationWarning, match=r"config=ssefold.StreamConfig\(max_parts=...\)"):
        s = ssefold.AnthropicStream(max_parts=1)  # type: ignore[call-overload]
    with pytest.raises(ssefold.LimitExceededError):
        s.feed(data)
    with pytest.warns(DeprecationWarning, match="Stream"):
        s2 = ssefold.Stream("anthropic", max_memory_bytes=1 << 20, ui=True)
    assert s2.ui is not None
    with pytest.raises(TypeError, match="not beside it"):
        ssefold.Stream(config=ssefold.StreamConfig(), max_parts=1)


def test_the_event_key_of_to_dict_is_event_as_in_every_json_form() -> None:
    # Issue 29: `"event"`, as Rust's to_json, C's event->json, Go's JSON and
    # the CLI's lines; the relay still reads the old `"type"` key.
    events = ssefold.AnthropicStream().feed((FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes())
    assert all(set(e.to_dict()) == {"event", *e.fields()} and e.to_dict()["event"] == e.type for e in events)
    old = {("type" if k == "event" else k): v for k, v in events[0].to_dict().items()}
    assert ssefold.Relay().push(old) == ssefold.Relay().push(events[0].to_dict())


def test_auto_detects_and_unknown_provider_is_refused() -> None:
    s = ssefold.Stream()
    assert s.provider == "auto" and s.message is None
    with pytest.raises(ValueError):
        ssefold.Stream("cohere")
    with pytest.raises(ssefold.UnknownDialectError):
        s.feed(b'data: {"hello": 1}\n\n')


def test_a_wrong_provider_is_refused_at_the_first_event() -> None:
    data = (FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes()
    with pytest.raises(ssefold.DialectMismatchError) as info:
        ssefold.OpenAIChatStream().feed(data)
    assert (info.value.expected, info.value.detected) == ("openai_chat", "anthropic")
    assert info.value.events == []


def test_limits_are_keyword_options() -> None:
    data = (FIXTURES / "anthropic" / "interleaved_tools.sse").read_bytes()
    with pytest.raises(ssefold.LimitExceededError) as info:
        ssefold.AnthropicStream(config=ssefold.StreamConfig(max_parts=1)).feed(data)
    assert (info.value.limit, info.value.max) == ("max_parts", 1)


def test_every_peer_recording_folds(peer_fixture: pathlib.Path) -> None:
    s = ssefold.Stream("auto")
    data = peer_fixture.read_bytes()
    events: List[Any] = []
    for i in range(0, len(data), 97):
        events += s.feed(data[i : i + 97])
    events += s.finish()
    assert s.is_terminated
    assert events[-1].type in ("turn_end", "warning")
    assert isinstance(s.message, dict)


def test_iter_events_with_a_provider() -> None:
    data = (FIXTURES / "openai_chat" / "parallel_tools.sse").read_bytes()
    stream = ssefold.OpenAIChatStream()
    events = list(ssefold.iter_events((data[i : i + 50] for i in range(0, len(data), 50)), provider=stream))
    assert events[-1].type == "turn_end"
    assert stream.message["choices"][0]["message"]["tool_calls"]
    names = [e.type for e in ssefold.iter_events([data], provider="openai_chat")]
    assert names == [e.type for e in events]
    with pytest.raises(ssefold.IncompleteStreamError):
        list(ssefold.iter_events([data[: len(data) // 2]], provider="openai_chat"))


def test_abort_ends_the_turn_and_keeps_what_was_committed() -> None:
    data = (FIXTURES / "anthropic" / "thinking_text_citations.sse").read_bytes()
    s = ssefold.AnthropicStream()
    events = s.feed(data[: len(data) // 2])
    committed = [e.content for e in events if e.type == "part_end"]
    (end,) = s.abort()
    assert (end.type, end.stop_reason) == ("turn_end", "aborted")
    assert s.is_aborted and s.abort() == []
    assert s.message["content"] == committed
    with pytest.raises(ssefold.StreamClosedError):
        s.feed(data[len(data) // 2 :])
    with pytest.raises(ssefold.StreamClosedError):
        s.reconnect()


def test_reconnect_restart_emits_turn_reset_and_rebuilds_the_answer() -> None:
    path = next(p for p in peer_fixture_files() if p.name == "basic_response.txt")
    data = path.read_bytes()
    s = ssefold.AnthropicStream()
    cut = data.index(b"event: content_block_delta") + 20
    first = s.feed(data[:cut])
    assert first and not s.resume_cursor  # no ids: nothing to resume from
    assert (s.last_event_id, s.reconnection_time, s.last_sequence_number) == (None, None, None)
    s.reconnect()
    again = s.feed(data) + s.finish()
    assert again[0].type == "turn_reset"
    assert again[-1].type == "turn_end"
    whole = ssefold.AnthropicStream()
    whole.feed(data)
    whole.finish()
    assert s.message == whole.message


def test_stream_type_parameter_is_the_ui_type() -> None:
    # The stubs type `.ui` by a parameter; at runtime it subscripts to the class.
    assert ssefold.Stream[ssefold.UiState] is ssefold.Stream
    assert ssefold.AnthropicStream[None] is ssefold.AnthropicStream
    assert isinstance(ssefold.AnthropicStream(ui=True).ui, ssefold.UiState)
    assert ssefold.AnthropicStream().ui is None


def test_media_delta_carries_bytes_and_its_mime_type() -> None:
    audio = bytes(range(256)) * 3
    b64 = base64.b64encode(audio).decode()
    body = b""
    for i in range(0, len(b64), 7):  # cut anywhere, not at multiples of 4
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                 "choices": [{"index": 0, "delta": {"audio": {"data": b64[i : i + 7]}}, "finish_reason": None}]}
        body += b"data: " + json.dumps(chunk).encode() + b"\n\n"
    body += b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    stream = ssefold.OpenAIChatStream()
    events = stream.feed(body) + stream.finish()
    media = [e for e in events if e.type == "media_delta"]
    assert all(isinstance(e.data, bytes) and e.mime_type == "audio/pcm" and e.part == 0 for e in media)
    assert b"".join(e.data for e in media) == audio
    start = next(e for e in events if e.type == "part_start")
    assert start.kind == "media"
    assert stream.message["choices"][0]["message"]["audio"]["data"] == b64


def test_tool_call_parts_carry_their_call_as_objects() -> None:
    # Every golden fixture: the call of each tool_call part_start / part_end
    # is a typed object equal to the core's wire form; other parts have none.
    seen = {"start": 0, "end": 0, "synthesized": 0, "text": 0}
    for path in golden_files():
        stream = CLASSES[path.parent.name]()
        lines = [json.loads(line) for line in path.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()]
        events, _ = run_events(stream, path.read_bytes())
        assert len(events) == len(lines) - 1
        for e, want in zip(events, lines):
            if e.type not in ("part_start", "part_end"):
                assert e.tool_call is None and "tool_call" not in e.fields()
                continue
            call = e.tool_call
            if e.kind != "tool_call":
                assert call is None and "tool_call" not in want and "tool_call" not in e.fields()
                continue
            assert call is not None and call.to_dict() == want["tool_call"]
            if e.type == "part_start":
                assert isinstance(call, ssefold.ToolCallStart)
                seen["start"] += 1
            else:
                assert isinstance(call, ssefold.ToolCallEnd)
                assert (call.id, call.name, call.arguments) == (
                    want["tool_call"]["id"],
                    want["tool_call"]["name"],
                    want["tool_call"]["arguments"],
                )
                seen["end"] += 1
                seen["synthesized"] += call.id_synthesized
                seen["text"] += call.input_format == "text"
            assert call.provider_executed is want["tool_call"]["provider_executed"]
            assert call == call and repr(call).startswith(type(call).__name__ + "(")
    assert seen["start"] >= 20 and seen["end"] >= 20 and seen["synthesized"] >= 4 and seen["text"] >= 1, seen


def run_events(stream: ssefold.Stream, data: bytes) -> Tuple[List[ssefold.StreamEvent], Optional[ssefold.Error]]:
    """The events of ``data`` fed whole then finished (those carried by an
    error included), and the error."""
    out: List[ssefold.StreamEvent] = []
    try:
        out += stream.feed(data)
        out += stream.finish()
    except ssefold.Error as err:
        out += getattr(err, "events", [])
        return out, err
    return out, None
