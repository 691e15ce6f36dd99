"""ReconnectPolicy and the Reconnector decision table."""

from __future__ import annotations

import pytest

import ssefold
from ssefold import Decision, ReconnectPolicy, Reconnector, StreamEnd


def test_policy_defaults_and_backoff() -> None:
    p = ReconnectPolicy()
    assert (p.initial_delay_ms, p.growth, p.max_delay_ms, p.max_retries, p.jitter, p.idle_timeout_ms) == (
        1000,
        1.5,
        30000,
        2,
        0.0,
        None,
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
    ],
)
def test_decision_table(end: StreamEnd, kind: str) -> None:
    r = Reconnector()
    r.on_connected(0)
    d = r.on_end(end)
    assert d.kind == kind
    if kind == "reconnect":
        assert d.cursor is not None and not d.cursor
        assert (d.delay_ms, d.attempt, d.cursor.kind) == (1000, 1, "none")
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
    r = Reconnector()
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
