"""SSEDecoder / ServerSentEvent / SSEEncoder: the WHATWG golden cases and
the SDK recordings in every chunking, limits, errors, value semantics."""

from __future__ import annotations

import json
import pathlib
import random

import pytest

import ssefold
from conftest import GOLDEN, chunkings, decode, decode_lenient, peer_fixture_files

GOLDEN_CASES = json.loads(GOLDEN.read_text(encoding="utf-8"))


def as_dict(ev: ssefold.ServerSentEvent) -> dict:
    return {"event": ev.event, "data": ev.data, "id": ev.id, "retry": ev.retry}


@pytest.mark.parametrize("case", GOLDEN_CASES, ids=[c["name"] for c in GOLDEN_CASES])
def test_golden_spec_case_in_every_chunking(case: dict) -> None:
    data = bytes.fromhex(case["input_hex"]) if case.get("input_hex") else case["input"].encode("utf-8")
    for how, chunks in chunkings(data):
        events, decoder = decode(chunks)
        assert [as_dict(e) for e in events] == case["events"], how
        if "last_event_id" in case:
            assert decoder.last_event_id == case["last_event_id"], how
        if "reconnection_time" in case:
            assert decoder.reconnection_time == case["reconnection_time"], how
        if "discarded_bytes" in case:
            assert decoder.discarded_bytes == case["discarded_bytes"], how
        if "unterminated" in case:
            want = case["unterminated"]
            got = decoder.unterminated
            assert (as_dict(got) if got is not None else None) == want, how


def test_the_peer_fixtures_are_all_there() -> None:
    assert len(peer_fixture_files()) == 45


def test_peer_fixture_in_every_chunking(peer_fixture: pathlib.Path) -> None:
    data = peer_fixture.read_bytes()
    whole, ref = decode([data])
    assert len(whole) >= 2
    openai = "openai" in peer_fixture.parent.name
    for ev in whole:
        if openai and ev.data == "[DONE]":
            continue
        payload = json.loads(ev.data)
        if not openai:
            assert payload["type"] == ev.event
    for how, chunks in chunkings(data):
        events, decoder = decode(chunks)
        assert events == whole, how
        assert decoder.discarded_bytes == ref.discarded_bytes, how
        assert decoder.unterminated == ref.unterminated, how
    if data.endswith(b"\n\n"):
        assert ref.discarded_bytes == 0 and ref.unterminated is None
        assert whole[-1].data == "[DONE]" or whole[-1].event == "message_stop"
    else:
        # WHATWG: the unterminated last event is not dispatched, but shown.
        assert ref.discarded_bytes > 0
        assert ref.unterminated is not None and ref.unterminated.event == "message_stop"
        assert all(e.event != "message_stop" for e in whole)


def test_feed_accepts_bytes_like_and_refuses_str() -> None:
    frame = b"data: a\n\n"
    for value in (frame, bytearray(frame), memoryview(frame)):
        assert ssefold.SSEDecoder().feed(value) == [ssefold.ServerSentEvent(data="a")]
    with pytest.raises(TypeError):
        ssefold.SSEDecoder().feed("data: a\n\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ssefold.SSEDecoder().feed(5)  # type: ignore[arg-type]


def test_event_data_outlives_the_chunk_and_its_changes() -> None:
    """Data read in place from a fed `bytes` object is what it was when fed,
    after the chunk is gone; a mutable chunk is never read in place."""
    d = ssefold.SSEDecoder()
    chunk = bytes(b"data: caf\xc3\xa9\n\nevent: t\ndata: x\ndata: y\n\ndata: cut ") + b"here\n\n"
    events = d.feed(chunk)
    del chunk
    assert [(e.event, e.data) for e in events] == [("message", "caf\u00e9"), ("t", "x\ny"), ("message", "cut here")]
    mutable = bytearray(b"data: before\n\ndata: ")
    events = d.feed(mutable)
    mutable[6:12] = b"AFTER!"
    events += d.feed(memoryview(bytearray(b"half\n\n")))
    assert [e.data for e in events] == ["before", "half"]
    # Events compare, hash and print by their text wherever it lies.
    again = ssefold.SSEDecoder().feed(b"data: caf\xc3\xa9\n\n")[0]
    assert again == ssefold.ServerSentEvent(data="caf\u00e9") and hash(again) == hash(ssefold.ServerSentEvent(data="caf\u00e9"))
    assert "caf\u00e9" in repr(again)


def test_finish_returns_nothing_and_reports_the_truncated_event() -> None:
    d = ssefold.SSEDecoder()
    assert d.feed(b"id: 1\ndata: one\n\nevent: last\ndata: tw") == [ssefold.ServerSentEvent("message", "one", "1")]
    assert d.finish() == []
    assert d.discarded_bytes == len(b"event: last\ndata: tw")
    assert d.unterminated == ssefold.ServerSentEvent("last", "tw", "1")
    # The decoder is ready for the next connection; the last event ID stays.
    assert d.last_event_id == "1"
    assert d.feed(b"data: again\n\n")[0].id == "1"
    assert d.finish() == [] and d.discarded_bytes == 0 and d.unterminated is None
    d.reset()
    assert d.last_event_id is None


def test_event_fields_and_retry() -> None:
    (ev,) = ssefold.SSEDecoder().feed(b"event: delta\nid: 42\nretry: 250\ndata: x\n\n")
    assert (ev.event, ev.data, ev.id, ev.retry) == ("delta", "x", "42", 250)
    assert repr(ev) == "ServerSentEvent(event='delta', data='x', id='42', retry=250)"


def test_server_sent_event_is_a_frozen_hashable_value() -> None:
    a = ssefold.ServerSentEvent("x", "1", "7", None)
    b = ssefold.SSEDecoder().feed(b"event: x\nid: 7\ndata: 1\n\n")[0]
    assert a == b and not (a != b) and hash(a) == hash(b)
    assert a != ssefold.ServerSentEvent("x", "1", None, None)
    assert a != "x" and len({a, b}) == 1
    with pytest.raises(AttributeError):
        a.data = "2"  # type: ignore[misc]
    assert ssefold.ServerSentEvent().event == "message"
    assert ssefold.ServerSentEvent(event="").event == "message"


def test_event_data_is_read_lazily_and_outlives_later_feeds_and_the_decoder() -> None:
    # The events of one feed() share one buffer of their data (the str made
    # on first access); later calls fill new buffers, and an event needs
    # nothing of its decoder.
    d = ssefold.SSEDecoder()
    first = d.feed(b"data: a\xc3\xa9\n\ndata: " + b"x" * 70000 + b"\n\nid: 3\ndata: multi\ndata: line\n\n")
    second = d.feed(b"data: later\n\ndata: \xf0\x9f\x98\x80\n\n")
    del d
    assert [e.data for e in first] == ["a\u00e9", "x" * 70000, "multi\nline"]
    assert [e.data for e in second] == ["later", "\U0001F600"]
    assert first[0].data is first[0].data
    assert first[2] == ssefold.ServerSentEvent("message", "multi\nline", "3", None)
    assert hash(first[2]) == hash(ssefold.ServerSentEvent("message", "multi\nline", "3", None))
    # An event kept alone keeps its data.
    kept = first[1]
    del first, second
    assert kept.data == "x" * 70000


def test_recycled_buffers_never_change_an_event_still_held() -> None:
    # A call's data buffer returns to its thread's pool when the last event
    # made from it is gone, and later calls (of any decoder or stream on
    # that thread) write into it: events still held, their str not yet
    # made, must keep their own text through many such reuses.
    def body(tag: str, n: int) -> bytes:
        return b"".join(f"event: t{i % 3}\ndata: {tag}-{i}-{'y' * (i % 50)}\n\n".encode() for i in range(n))

    def expected(tag: str, n: int) -> list:
        return [(f"t{i % 3}", f"{tag}-{i}-{'y' * (i % 50)}") for i in range(n)]

    held = []
    for round in range(40):
        d = ssefold.SSEDecoder()
        events = d.feed(body(f"r{round}", 200))
        if round % 4 == 0:
            held.append((f"r{round}", events))  # kept, data never read yet
        s = ssefold.Stream("openai_chat")
        deltas = s.feed(
            b"".join(
                b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
                b'"delta":{"content":"' + f"s{round}-{i}".encode() + b'"},"finish_reason":null}]}\n\n'
                for i in range(50)
            )
        )
        if round % 5 == 0:
            held.append((f"s{round}", deltas))
        del d, events, s, deltas
    for tag, events in held:
        if tag.startswith("r"):
            assert [(e.event, e.data) for e in events] == expected(tag, 200)
        else:
            texts = [e.text for e in events if e.type == "text_delta"]
            assert texts == [f"{tag}-{i}" for i in range(50)]


def test_events_made_on_one_thread_outlive_reuse_on_another() -> None:
    # The last reference may be dropped on another thread: the buffer joins
    # that thread's pool; neither thread's held events change.
    import threading

    d = ssefold.SSEDecoder()
    made = d.feed(b"".join(f"data: main-{i}\n\n".encode() for i in range(500)))
    keep = made[::7]
    errors = []

    def worker(events: list) -> None:
        try:
            del events[:]  # the last references to most of the main thread's events
            for round in range(30):
                mine = ssefold.SSEDecoder().feed(b"".join(f"data: w{round}-{i}\n\n".encode() for i in range(300)))
                assert [e.data for e in mine] == [f"w{round}-{i}" for i in range(300)]
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=worker, args=(made,))
    del made
    t.start()
    t.join()
    assert not errors
    for round in range(10):
        d.feed(b"".join(f"data: again{round}-{i}\n\n".encode() for i in range(300)))
    assert [e.data for e in keep] == [f"main-{i}" for i in range(0, 500, 7)]


def test_line_too_long_is_a_typed_error_and_the_decoder_goes_on() -> None:
    d = ssefold.SSEDecoder(max_line_len=16)
    with pytest.raises(ssefold.LineTooLongError) as info:
        d.feed(b"data: ok\n\ndata: " + b"x" * 40 + b"\n\ndata: after\n\n")
    err = info.value
    assert isinstance(err, ssefold.DecodeError) and isinstance(err, ssefold.Error) and isinstance(err, ValueError)
    assert err.limit == 16 and err.offset == len(b"data: ok\n\n")
    # Every event of the chunk, before and after the error, is kept.
    assert [e.data for e in err.events] == ["ok", "after"]
    assert err.errors == [err]
    assert d.feed(b"data: next\n\n")[0].data == "next"


def test_every_error_of_a_chunk_is_reported() -> None:
    with pytest.raises(ssefold.LineTooLongError) as info:
        ssefold.SSEDecoder(max_line_len=10).feed(b"data: 0123456789\n\ndata: ok\n\ndata: 0123456789\n\n")
    assert [(type(e), e.offset) for e in info.value.errors] == [(ssefold.LineTooLongError, 0), (ssefold.LineTooLongError, 28)]
    assert [e.data for e in info.value.events] == ["ok"]


def test_event_too_large() -> None:
    d = ssefold.SSEDecoder(max_event_size=8)
    with pytest.raises(ssefold.EventTooLargeError) as info:
        d.feed(b"data: 12345\ndata: 6789\n\n")
    assert info.value.limit == 8
    assert info.value.events == []


def test_strict_utf8() -> None:
    bad = b"data: \xff\xfe\n\n"
    assert ssefold.SSEDecoder().feed(bad)[0].data == "\ufffd\ufffd"
    d = ssefold.SSEDecoder(utf8="strict")
    assert d.utf8 == "strict"
    with pytest.raises(ssefold.InvalidUtf8Error) as info:
        d.feed(bad)
    assert info.value.field == "data"
    with pytest.raises(ValueError):
        ssefold.SSEDecoder(utf8="latin-1")  # type: ignore[arg-type]


def test_limits_are_keyword_options() -> None:
    d = ssefold.SSEDecoder(max_line_len=10, max_event_size=20)
    assert (d.max_line_len, d.max_event_size, d.utf8) == (10, 20, "replace")
    assert "max_line_len=10" in repr(d)
    with pytest.raises(TypeError):
        ssefold.SSEDecoder(10)  # type: ignore[misc]
    with pytest.raises(OverflowError):
        ssefold.SSEDecoder(max_line_len=-1)


def test_random_garbage_never_crashes_and_chunking_never_matters() -> None:
    rng = random.Random(7)
    alphabet = [b"data:", b"event:", b"id:", b"retry:", b" ", b"\r", b"\n", b":", b"x", b"\xff", b"\x00", b"\xc3"]
    for _ in range(200):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(60)))
        cut = sorted(rng.randrange(len(data) + 1) for _ in range(3))
        whole, ref = decode_lenient([data], max_line_len=24)
        parts = [data[: cut[0]], data[cut[0] : cut[1]], data[cut[1] : cut[2]], data[cut[2] :]]
        events, dec = decode_lenient(parts, max_line_len=24)
        # Errors come after their chunk's events, so compare them apart.
        assert [e for e in events if not isinstance(e, tuple)] == [e for e in whole if not isinstance(e, tuple)]
        assert sorted(e for e in events if isinstance(e, tuple)) == sorted(e for e in whole if isinstance(e, tuple))
        assert dec.discarded_bytes == ref.discarded_bytes


def test_encoder_round_trip() -> None:
    enc = ssefold.SSEEncoder()
    enc.event("line1\r\nline2\nline3", event="delta", id="9", retry=100)
    enc.comment("keep\nalive")
    enc.keep_alive()
    enc.retry(500)
    enc.event("{}")
    enc.write_event(ssefold.ServerSentEvent("ping", "p", "10"))
    assert len(enc) == len(enc.getvalue())
    wire = enc.take_bytes()
    assert len(enc) == 0
    assert wire.startswith(b"event: delta\nid: 9\nretry: 100\ndata: line1\ndata: line2\ndata: line3\n\n: keep\n: alive\n:\n")
    d = ssefold.SSEDecoder()
    got = d.feed(wire)
    assert got == [
        ssefold.ServerSentEvent("delta", "line1\nline2\nline3", "9", 100),
        ssefold.ServerSentEvent("message", "{}", "9", None),
        ssefold.ServerSentEvent("ping", "p", "10", None),
    ]
    assert d.reconnection_time == 500


def test_encoder_refuses_field_injection_and_writes_nothing() -> None:
    enc = ssefold.SSEEncoder()
    with pytest.raises(ssefold.EncodeError) as info:
        enc.event("x", event="a\nb")
    assert info.value.field == "event"
    with pytest.raises(ssefold.EncodeError) as info:
        enc.event("x", id="1\x002")
    assert info.value.field == "id"
    assert enc.getvalue() == b""
    enc.event("ok")
    enc.clear()
    assert enc.take_bytes() == b""


def test_module_surface() -> None:
    assert ssefold.__version__
    for name in ssefold.__all__:
        assert hasattr(ssefold, name), name
    assert ssefold.SSEDecoder.__module__ == "ssefold"
