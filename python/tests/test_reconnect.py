"""ReconnectPolicy and the Reconnector decision table."""

from __future__ import annotations

import pytest

import ssefold
from ssefold import Decision, ReconnectPolicy, Reconnector, StreamEnd


# The default policy without jitter: exact delays.
EXACT = ReconnectPolicy(jitter=0)


def test_policy_defaults_and_backoff() -> None:
    p = ReconnectPolicy()
    assert (p.initial_delay_ms, p.growth, p.max_delay_ms, p.max_retries, p.jitter, p.idle_timeout_ms) == (
        1000,
        1.5,
        30000,
        2,
        0.2,
        None,
    )
    assert (p.max_retry_after_ms, p.restart_after_output, p.first_content_timeout_ms, p.content_timeout_ms) == (
        60000,
        False,
        300000,
        120000,
    )
    assert [p.next_delay_ms(a) for a in range(4)] == [1000, 1500, 2250, 3375]
    assert p.next_delay_ms(50) == 30000
    assert p.next_delay_ms(2, server_retry_ms=250) == 250
    assert p.next_delay_ms(0, 7) == 7
    assert p == ReconnectPolicy() and p != ReconnectPolicy(max_retries=3)
    assert repr(p).startswith("ReconnectPolicy(initial_delay_ms=1000, growth=1.5")


def test_policy_options_and_validation() -> None:
    p = ReconnectPolicy(initial_delay_ms=100, growth=2.0, max_delay_ms=500, max_retries=5, jitter=0.5)
    assert [p.next_delay_ms(a) for a in range(5)] == [100, 200, 400, 500, 500]
    assert p.jittered_delay_ms(0, None, 0.0) == 50
    assert p.jittered_delay_ms(0, None, 1.0) == 150
    assert p.jittered_delay_ms(0, 30, 1.0) == 30
    with pytest.raises(ValueError):
        ReconnectPolicy(growth=0.5)
    with pytest.raises(ValueError):
        ReconnectPolicy(jitter=2.0)
    with pytest.raises(TypeError):
        ReconnectPolicy(1000)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("end", "kind"),
    [
        (StreamEnd.completed(), "done"),
        (StreamEnd.aborted(), "stop"),
        (StreamEnd.provider_error("overloaded_error", "busy"), "fail"),
        (StreamEnd.ended_early(), "reconnect"),
        (StreamEnd.transport_error("reset"), "reconnect"),
        (StreamEnd.idle_timeout(), "reconnect"),
        (StreamEnd.http_status(503), "reconnect"),
        (StreamEnd.http_status(400), "give_up"),
    ],
)
def test_decision_table(end: StreamEnd, kind: str) -> None:
    r = Reconnector(EXACT)
    r.on_connected(0)
    d = r.on_end(end)
    assert d.kind == kind
    if kind == "reconnect":
        assert d.cursor is not None and not d.cursor
        assert (d.delay_ms, d.attempt, d.cursor.kind, d.replay) == (1000, 1, "none", "retry")
        assert r.state == "reconnecting"
    else:
        assert d.delay_ms is None and d.cursor is None
        assert r.state == "disconnected"


def test_provider_error_decision() -> None:
    r = Reconnector()
    d = r.on_end(StreamEnd.provider_error("overloaded_error", "busy"))
    assert (d.error_type, d.message, d.retryable) == ("overloaded_error", "busy", True)
    d = Reconnector().on_end(StreamEnd.provider_error("invalid_request_error", "no"))
    assert d.retryable is False
    assert ssefold.is_retryable_error_type("rate_limit_error")
    assert not ssefold.is_retryable_error_type("authentication_error")


def test_retries_exhausted_give_up_with_the_last_end() -> None:
    r = Reconnector(ReconnectPolicy(max_retries=1))
    r.on_connected(0)
    assert r.on_end(StreamEnd.ended_early()).kind == "reconnect"
    r.on_connected(10)
    d = r.on_end(StreamEnd.transport_error("refused"))
    assert d.kind == "give_up"
    assert d.last == StreamEnd.transport_error("refused")
    assert d.last is not None and d.last.message == "refused" and d.last.kind == "transport_error"
    assert "give_up" in repr(d)


def test_events_set_the_cursor_and_retries_bound_the_whole_answer() -> None:
    r = Reconnector(EXACT)
    assert r.state == "connecting" and not r.cursor and r.cursor.headers() == {}
    r.on_connected(0)
    r.on_event("e1", None, 250)
    d = r.on_end(StreamEnd.ended_early())
    assert d.delay_ms == 250 and d.cursor is not None
    assert d.cursor.kind == "last_event_id" and d.cursor.last_event_id == "e1"
    assert d.cursor.headers() == {"Last-Event-ID": "e1"}
    r.on_connected(5)
    r.on_event(sequence_number=17)
    d = r.on_end(StreamEnd.ended_early())
    assert d.attempt == 2  # events do not reset the count (max_retries bounds the whole answer)
    assert d.cursor is not None and (d.cursor.kind, d.cursor.starting_after) == ("starting_after", 17)
    assert r.attempts == 2


@pytest.mark.parametrize(
    ("headers", "status", "kind", "delay_ms"),
    [
        ({"Retry-After": "7"}, 429, "reconnect", 7000),
        ([("retry-after-ms", "50"), ("Retry-After", "9")], 529, "reconnect", 50),
        ({"Retry-After": "3600"}, 503, "reconnect", 60000),  # capped at max_retry_after_ms
        ({}, 500, "reconnect", 1000),
        ({"x-should-retry": "false"}, 429, "give_up", None),
        ({"x-should-retry": "true"}, 400, "reconnect", 1000),
        ({}, 401, "give_up", None),
        ([(b"Retry-After", b"2")], 408, "reconnect", 2000),
    ],
)
def test_a_refused_response_is_retried_as_its_headers_say(
    headers: object, status: int, kind: str, delay_ms: object
) -> None:
    end = StreamEnd.http_status(status, headers)  # type: ignore[arg-type]
    assert (end.kind, end.status) == ("http_status", status)
    d = Reconnector(EXACT).on_end(end)
    assert (d.kind, d.delay_ms) == (kind, delay_ms)
    if kind == "give_up":
        assert d.reason == "not_retryable" and d.last == end and "not_retryable" in repr(d)
    else:
        assert d.replay == "retry"


def test_http_status_hints_given_directly_and_an_http_date() -> None:
    end = StreamEnd.http_status(429, retry_after_ms=5, should_retry=True)
    assert (end.retry_after_ms, end.should_retry) == (5, True)
    assert repr(end) == "StreamEnd.http_status(429, retry_after_ms=5, should_retry=True)"
    assert StreamEnd.http_status(503, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}).retry_after_ms == 0
    assert StreamEnd.http_status(503, {"Retry-After": "soon"}).retry_after_ms is None
    assert StreamEnd.ended_early().status is None
    with pytest.raises(TypeError):
        StreamEnd.http_status(429, [1, 2])  # type: ignore[list-item]


def test_after_output_an_answer_is_resumed_never_sent_again() -> None:
    r = Reconnector(EXACT)
    r.on_connected(0)
    assert r.replay_safe and not r.output_started
    r.on_content(5)
    assert r.output_started and not r.replay_safe
    d = r.on_end(StreamEnd.transport_error("reset"))
    assert (d.kind, d.reason) == ("give_up", "not_resumable")
    # With a cursor: a resume.
    r = Reconnector(EXACT)
    r.on_connected(0)
    r.on_event("7")
    r.on_content(5)
    assert r.replay_safe
    d = r.on_end(StreamEnd.ended_early())
    assert (d.kind, d.replay, d.cursor and d.cursor.last_event_id) == ("reconnect", "resume", "7")
    assert "replay='resume'" in repr(d)
    # Opted in: a restart.
    r = Reconnector(ReconnectPolicy(jitter=0, restart_after_output=True))
    r.on_connected(0)
    r.on_content(5)
    assert r.on_end(StreamEnd.ended_early()).replay == "restart"


def test_keep_alives_do_not_hold_off_a_stall() -> None:
    r = Reconnector(ReconnectPolicy(idle_timeout_ms=1000, first_content_timeout_ms=5000, content_timeout_ms=2000))
    r.on_connected(0)
    for t in range(500, 5000, 500):
        r.on_activity(t)
        assert r.stall(t) is None, t
    assert r.stall(5000) == "first_content" and r.is_idle(5000)
    r.on_activity(5000)
    r.on_content(5000)
    r.on_activity(6500)
    assert r.stall(6999) is None and r.stall(7000) == "content"
    assert (r.stall_timeout_ms("idle"), r.stall_timeout_ms("first_content"), r.stall_timeout_ms("content")) == (
        1000,
        5000,
        2000,
    )
    assert ReconnectPolicy(first_content_timeout_ms=None).first_content_timeout_ms is None
    with pytest.raises(ValueError):
        r.stall_timeout_ms("nope")  # type: ignore[arg-type]


def test_the_jitter_is_seeded_and_bounded() -> None:
    def delays(seed: int) -> list:
        r = Reconnector(ReconnectPolicy(max_retries=20))
        r.seed_jitter(seed)
        return [r.on_end(StreamEnd.ended_early()).delay_ms for _ in range(5)]

    a = delays(1)
    assert a == delays(1) and a != delays(2)
    for n, d in enumerate(a):
        base = EXACT.next_delay_ms(n)
        assert base * 0.8 - 1 <= d <= base * 1.2 + 1, (n, d)


def test_idle_deadline() -> None:
    r = Reconnector(ReconnectPolicy(idle_timeout_ms=100))
    assert r.idle_deadline_ms is None
    r.on_connected(1000)
    assert r.idle_deadline_ms == 1100
    r.on_activity(1050)
    assert not r.is_idle(1149) and r.is_idle(1150)


def test_values_compare_and_repr() -> None:
    assert StreamEnd.completed() == StreamEnd.completed()
    assert StreamEnd.completed() != StreamEnd.aborted()
    assert repr(StreamEnd.provider_error("a", "it's")) == "StreamEnd.provider_error('a', 'it\\'s')"
    assert StreamEnd.provider_error("t", "m").error_type == "t"
    d = Reconnector().on_end(StreamEnd.completed())
    assert isinstance(d, Decision) and repr(d) == "Decision(kind='done')"
