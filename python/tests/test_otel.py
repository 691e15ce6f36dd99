"""ssefold.otel: real turns (run_turn / run_turn_sync over recorded bodies,
a body cut early, an aborted turn, a turn on a clock of its own) recorded
with the OpenTelemetry SDK's InMemorySpanExporter (SimpleSpanProcessor) and
InMemoryMetricReader; every span name, kind, time, attribute and status and
every metric's name, unit, bucket boundaries, value and attributes checked,
as bindings/go/otel/otel_test.go checks the Go package. And ``import
ssefold`` without opentelemetry installed."""

from __future__ import annotations

import asyncio
import datetime
import gc
import json
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional, Tuple

import pytest

import ssefold

from conftest import ROOT

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

from ssefold.otel import SCOPE_NAME, record_turn  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
CHAT = FIXTURES / "openai_chat" / "reasoning_two_choices.sse"
ANTHROPIC = FIXTURES / "anthropic" / "thinking_text_citations.sse"

DURATION = "gen_ai.client.operation.duration"
FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk"
PER_CHUNK = "gen_ai.client.operation.time_per_output_chunk"
TOKENS = "gen_ai.client.token.usage"
UNITS = {DURATION: "s", FIRST_CHUNK: "s", PER_CHUNK: "s", TOKENS: "{token}"}
# The conventions' advisory bucket boundaries (as bindings/go/otel has them).
SECONDS_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
TOKEN_BUCKETS = tuple(float(4**i) for i in range(14))

# When the request was sent, in the tests that say so.
SENT_NS = int(datetime.datetime(2026, 11, 27, 10, 0, tzinfo=datetime.timezone.utc).timestamp()) * 1_000_000_000


@dataclass
class SDK:
    """A tracer and meter provider of the SDK with in-memory readers."""

    spans: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    reader: InMemoryMetricReader = field(default_factory=InMemoryMetricReader)

    def __post_init__(self) -> None:
        self.tracer_provider = TracerProvider(shutdown_on_exit=False)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.meter_provider = MeterProvider(metric_readers=[self.reader], shutdown_on_exit=False)
        self.tracer = self.tracer_provider.get_tracer(SCOPE_NAME)
        self.meter = self.meter_provider.get_meter(SCOPE_NAME)

    def span(self) -> ReadableSpan:
        """The one span ended."""
        ended = self.spans.get_finished_spans()
        assert len(ended) == 1, [s.name for s in ended]
        return ended[0]

    def collect(self) -> Dict[str, "Metric"]:
        """The histograms the reader holds, by name."""
        data = self.reader.get_metrics_data()
        out: Dict[str, Metric] = {}
        if data is None:
            return out
        for rm in data.resource_metrics:
            for sm in rm.scope_metrics:
                assert sm.scope.name == SCOPE_NAME
                for m in sm.metrics:
                    points = list(m.data.data_points)
                    assert all(isinstance(p, HistogramDataPoint) for p in points), m.name
                    out[m.name] = Metric(m.unit or "", m.description or "", points)  # type: ignore[arg-type]
        return out


@dataclass
class Metric:
    unit: str
    description: str
    points: List[HistogramDataPoint]

    def point(self, **attributes: Any) -> HistogramDataPoint:
        """The one data point whose attributes include ``attributes``."""
        found = [p for p in self.points if all(p.attributes.get(k) == v for k, v in attributes.items())]
        assert len(found) == 1, (attributes, [dict(p.attributes) for p in self.points])
        return found[0]


@pytest.fixture
def sdk() -> Iterator[SDK]:
    s = SDK()
    yield s
    s.tracer_provider.shutdown()
    s.meter_provider.shutdown()


def chunks(body: bytes) -> List[bytes]:
    """The body 64 bytes at a time (read with pauses: the chunks have gaps)."""
    return [body[i : i + 64] for i in range(0, len(body), 64)]


async def apaced(parts: List[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        await asyncio.sleep(0.001)
        yield part


def paced(parts: List[bytes]) -> Iterator[bytes]:
    for part in parts:
        time.sleep(0.001)
        yield part


def run(body: bytes, provider: str, how: str) -> Tuple[ssefold.TurnResult, Optional[BaseException]]:
    """Runs a turn over ``body`` (``how``: ``async`` run_turn or ``sync``
    run_turn_sync); its result (a failed turn's from its error) and error."""
    try:
        if how == "async":

            async def main() -> ssefold.TurnResult:
                return await ssefold.run_turn(apaced(chunks(body)), {}, provider=provider)

            return asyncio.run(main()), None
        return ssefold.run_turn_sync(paced(chunks(body)), {}, provider=provider).result(), None
    except Exception as exc:
        result = getattr(exc, "result", None)
        assert isinstance(result, ssefold.TurnResult), repr(exc)
        return result, exc


def with_model(attributes: Dict[str, Any], request_model: Optional[str]) -> Dict[str, Any]:
    """The core's attributes as recorded: lists as tuples, plus the request
    model."""
    out = {k: tuple(v) if isinstance(v, list) else v for k, v in attributes.items()}
    if request_model is not None:
        out["gen_ai.request.model"] = request_model
    return out


def check_metrics(got: Dict[str, Metric], telemetry: Any, request_model: Optional[str] = None, times: int = 1) -> None:
    """The reader holds exactly the core's metrics, each recorded ``times``
    with its value, its attributes plus the request model, its unit and the
    advisory buckets; token counts as ints."""
    want = 0
    for m in telemetry["metrics"]:
        h = got[m["name"]]
        assert h.unit == m["unit"] == UNITS[m["name"]] and h.description
        matching = [p for p in h.points if dict(p.attributes) == with_model(m["attributes"], request_model)]
        assert len(matching) == 1, (m, [dict(p.attributes) for p in h.points])
        p = matching[0]
        assert p.count == times and p.sum == pytest.approx(m["value"] * times), (m, p.sum)
        if m["name"] == TOKENS:
            assert isinstance(p.sum, int) and p.explicit_bounds == TOKEN_BUCKETS
        else:
            assert p.explicit_bounds == SECONDS_BUCKETS
        want += 1
    assert sum(len(h.points) for h in got.values()) == want


@pytest.mark.parametrize("how", ["async", "sync"])
def test_a_chat_turn_is_a_client_span_and_the_genai_metrics(sdk: SDK, how: str) -> None:
    """An OpenAI Chat answer of two choices with usage, recorded on the
    providers' tracer and meter: the span ``chat {request model}`` of kind
    CLIENT from the start over the turn's duration, a child of the current
    span, every attribute (both finish reasons, the token counts as ints),
    status unset; every metric."""
    result, error = run(CHAT.read_bytes(), "openai_chat", how)
    assert error is None and result.telemetry is not None and result.timings is not None
    with sdk.tracer.start_as_current_span("agent") as parent:
        record_turn(
            result,
            tracer_provider=sdk.tracer_provider,
            meter_provider=sdk.meter_provider,
            request_model="gpt-4o-mini",
            start_time_ns=SENT_NS,
        )
    span = next(s for s in sdk.spans.get_finished_spans() if s.name != "agent")
    assert span.name == "chat gpt-4o-mini" and span.kind is SpanKind.CLIENT
    assert span.instrumentation_scope is not None and span.instrumentation_scope.name == SCOPE_NAME
    assert span.instrumentation_scope.version == ssefold.__version__
    assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id
    duration_ms = result.timings["duration_ms"]
    assert duration_ms is not None and duration_ms > 0
    assert span.start_time == SENT_NS and span.end_time == SENT_NS + duration_ms * 1_000_000
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.id": "chatcmpl-1",
        "gen_ai.response.model": "gpt-test",
        "gen_ai.response.finish_reasons": ("stop", "length"),
        "gen_ai.usage.input_tokens": 50,
        "gen_ai.usage.output_tokens": 20,
    }
    assert span.status.status_code is StatusCode.UNSET

    got = sdk.collect()
    assert {name: h.unit for name, h in got.items()} == UNITS
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.response.model": "gpt-test",
        "gen_ai.request.model": "gpt-4o-mini",
    }
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in got[TOKENS].points}
    assert tokens == {"input": 50, "output": 20}
    for p in got[TOKENS].points:
        assert dict(p.attributes) == {**common, "gen_ai.token.type": p.attributes["gen_ai.token.type"]}
    d = got[DURATION].points
    assert len(d) == 1 and dict(d[0].attributes) == common and d[0].sum == duration_ms / 1000
    first = result.timings["time_to_first_content_ms"]
    assert first is not None and got[FIRST_CHUNK].point().sum == first / 1000
    gaps = result.timings["content_gaps"]
    assert gaps["count"] > 0
    assert {p.attributes["ssefold.gap.stat"]: p.sum for p in got[PER_CHUNK].points} == {
        "median": gaps["median_ms"] / 1000,
        "p95": gaps["p95_ms"] / 1000,
        "max": gaps["max_ms"] / 1000,
    }
    check_metrics(got, result.telemetry, "gpt-4o-mini")


def test_an_anthropic_turn_without_a_request_model(sdk: SDK) -> None:
    """Without a request model the span is named after the response's
    model and has no gen_ai.request.model, nor have the metrics; without a
    start it ends now and starts the duration before."""
    result, error = run(ANTHROPIC.read_bytes(), "anthropic", "async")
    assert error is None and result.telemetry is not None and result.timings is not None
    before = time.time_ns()
    record_turn(result, tracer=sdk.tracer, meter=sdk.meter)
    after = time.time_ns()
    span = sdk.span()
    assert span.name == "chat claude-test" and span.kind is SpanKind.CLIENT
    assert span.status.status_code is StatusCode.UNSET
    duration_ms = result.timings["duration_ms"]
    assert duration_ms is not None and span.start_time is not None and span.end_time is not None
    assert before <= span.end_time <= after and span.end_time - span.start_time == duration_ms * 1_000_000
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.response.id": "msg_01",
        "gen_ai.response.model": "claude-test",
        "gen_ai.response.finish_reasons": ("end_turn",),
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 42,
    }
    got = sdk.collect()
    assert {DURATION, FIRST_CHUNK, TOKENS} <= set(got)
    assert {p.attributes["gen_ai.token.type"]: p.sum for p in got[TOKENS].points} == {"input": 10, "output": 42}
    check_metrics(got, result.telemetry)


@pytest.mark.parametrize("how", ["async", "sync"])
def test_a_failed_turn_has_an_error_status_and_error_type(sdk: SDK, how: str) -> None:
    """A body cut early fails the turn with error.type ``stream``: the
    span's status is ERROR described by the failure's message, and the
    metrics carry error.type."""
    result, error = run(ANTHROPIC.read_bytes()[:900], "anthropic", how)
    assert error is not None and result.failure is error and str(error)
    assert result.telemetry is not None and result.telemetry["attributes"]["error.type"] == "stream"
    record_turn(result, tracer=sdk.tracer, meter=sdk.meter, request_model="claude-x")
    span = sdk.span()
    assert span.name == "chat claude-x"
    assert span.status.status_code is StatusCode.ERROR and span.status.description == str(error)
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == "stream" and "gen_ai.response.finish_reasons" not in attributes
    assert attributes == with_model(result.telemetry["attributes"], "claude-x")
    got = sdk.collect()
    assert got[DURATION].point().attributes["error.type"] == "stream"
    check_metrics(got, result.telemetry, "claude-x")


def test_an_aborted_turn_has_an_error_status(sdk: SDK) -> None:
    """An aborted turn has error.type ``aborted`` and an ERROR status
    described so (it has no failure)."""
    body = ANTHROPIC.read_bytes()

    async def main() -> ssefold.TurnResult:
        held = asyncio.Event()

        async def source() -> AsyncIterator[bytes]:
            yield body[:400]
            await held.wait()  # the rest never comes

        turn = ssefold.run_turn(source(), {}, provider="anthropic")
        async for _ in turn:
            turn.abort("stop")
        return await turn

    result = asyncio.run(main())
    assert result.aborted and result.failure is None and result.telemetry is not None
    record_turn(result, tracer=sdk.tracer, meter=sdk.meter)
    span = sdk.span()
    assert span.name == "chat claude-test"
    assert (span.attributes or {})["error.type"] == "aborted"
    assert span.status.status_code is StatusCode.ERROR and span.status.description == "aborted"
    check_metrics(sdk.collect(), result.telemetry)


# An OpenAI Chat answer with usage, one SSE event per chunk.
CHAT_WITH_USAGE = [
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","usage":null,'
    b'"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","usage":null,'
    b'"choices":[{"index":0,"delta":{"content":" there"}}]}\n\n',
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","usage":null,'
    b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    b'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","model":"gpt-x","choices":[],'
    b'"usage":{"prompt_tokens":4,"completion_tokens":2}}\n\ndata: [DONE]\n\n',
]


def clocked_outcome() -> ssefold.TurnOutcome:
    """A turn driven by hand on a clock of its own: request at 0, chunks at
    250, 300 and 400 ms, the end at 400."""
    core = ssefold.TurnCore("openai_chat")
    core.request_sent(0)
    core.connected(100)
    for chunk, at in zip(CHAT_WITH_USAGE, [250, 300, 400, 400]):
        core.feed(chunk, at)
    core.end_of_body(400)
    return core.outcome()


def test_times_on_the_hosts_clock(sdk: SDK) -> None:
    """TurnOutcome.telemetry is the core's, in its order; recorded, the
    exact seconds of every metric and the span's end 400 ms after its
    start."""
    outcome = clocked_outcome()
    common = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.response.model": "gpt-x"}
    assert outcome.telemetry == {
        "attributes": {
            **common,
            "gen_ai.response.id": "chatcmpl-9",
            "gen_ai.response.finish_reasons": ["stop"],
            "gen_ai.usage.input_tokens": 4,
            "gen_ai.usage.output_tokens": 2,
        },
        "metrics": [
            {"name": DURATION, "unit": "s", "value": 0.4, "attributes": common},
            {"name": FIRST_CHUNK, "unit": "s", "value": 0.25, "attributes": common},
            {"name": TOKENS, "unit": "{token}", "value": 4, "attributes": {**common, "gen_ai.token.type": "input"}},
            {"name": TOKENS, "unit": "{token}", "value": 2, "attributes": {**common, "gen_ai.token.type": "output"}},
            # the gaps between contents: 50 ms (250 to 300), 100 ms (300 to 400)
            *(
                {"name": PER_CHUNK, "unit": "s", "value": v, "attributes": {**common, "ssefold.gap.stat": stat}}
                for stat, v in [("median", 0.05), ("p95", 0.1), ("max", 0.1)]
            ),
        ],
    }
    record_turn(outcome, tracer=sdk.tracer, meter=sdk.meter, request_model="gpt-x-req", start_time_ns=SENT_NS)
    span = sdk.span()
    assert span.name == "chat gpt-x-req"
    assert span.start_time == SENT_NS and span.end_time == SENT_NS + 400_000_000
    got = sdk.collect()
    values = {}
    for name, h in got.items():
        for p in h.points:
            key = " ".join([name, *(str(p.attributes[k]) for k in ("gen_ai.token.type", "ssefold.gap.stat") if k in p.attributes)])
            values[key] = p.sum
    assert values == {
        DURATION: 0.4,
        FIRST_CHUNK: 0.25,
        f"{TOKENS} input": 4,
        f"{TOKENS} output": 2,
        f"{PER_CHUNK} median": 0.05,
        f"{PER_CHUNK} p95": 0.1,
        f"{PER_CHUNK} max": 0.1,
    }
    check_metrics(got, outcome.telemetry, "gpt-x-req")


class CountingMeter:
    """A meter that counts the histograms asked of it."""

    def __init__(self, meter: Any) -> None:
        self.meter = meter
        self.made: List[str] = []
        self.lock = threading.Lock()

    def create_histogram(self, name: str, unit: str = "", description: str = "", **advice: Any) -> Any:
        with self.lock:
            self.made.append(name)
        return self.meter.create_histogram(name, unit, description, **advice)


def test_instruments_are_created_once_per_meter(sdk: SDK) -> None:
    """record_turn creates a meter's four instruments on its first call
    only; a metric the core adds later gets a histogram of its own (with
    the core's unit) on its first use."""
    outcome = clocked_outcome()
    meter = CountingMeter(sdk.meter)
    for _ in range(3):
        record_turn(outcome, tracer=sdk.tracer, meter=meter)  # type: ignore[arg-type]
    assert sorted(meter.made) == sorted([DURATION, FIRST_CHUNK, PER_CHUNK, TOKENS])
    assert len(sdk.spans.get_finished_spans()) == 3
    check_metrics(sdk.collect(), outcome.telemetry, times=3)

    future = ssefold.TurnResult(
        message=None,
        provider="openai_chat",
        results=[],
        tool_results=None,
        telemetry={"attributes": {}, "metrics": [{"name": "gen_ai.client.future", "unit": "ms", "value": 7, "attributes": {}}]},
    )
    for _ in range(2):
        record_turn(future, tracer=sdk.tracer, meter=meter)  # type: ignore[arg-type]
    assert meter.made.count("gen_ai.client.future") == 1 and len(meter.made) == 5
    h = sdk.collect()["gen_ai.client.future"]
    assert h.unit == "ms" and h.point().count == 2 and h.point().sum == 14


class CountingProvider:
    """A meter provider that counts the meters asked of it."""

    def __init__(self, inner: MeterProvider) -> None:
        self.inner = inner
        self.asked: List[Tuple[str, Optional[str]]] = []

    def get_meter(self, name: str, version: Optional[str] = None, schema_url: Optional[str] = None, attributes: Any = None) -> Any:
        self.asked.append((name, version))
        return self.inner.get_meter(name, version, schema_url, attributes)


def test_a_providers_meter_is_asked_for_once(sdk: SDK) -> None:
    """A provider is asked for the meter named ssefold.otel once (the API's
    global proxy provider makes a new meter, kept forever, per call)."""
    provider = CountingProvider(sdk.meter_provider)
    outcome = clocked_outcome()
    for _ in range(2):
        record_turn(outcome, tracer=sdk.tracer, meter_provider=provider)  # type: ignore[arg-type]
    assert provider.asked == [(SCOPE_NAME, ssefold.__version__)]
    check_metrics(sdk.collect(), outcome.telemetry, times=2)


def test_a_meter_that_goes_away_is_not_kept(sdk: SDK) -> None:
    """The cache of instruments holds its meters weakly."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    meter = provider.get_meter("transient")
    record_turn(clocked_outcome(), tracer=sdk.tracer, meter=meter)
    assert reader.get_metrics_data() is not None
    gone = weakref.ref(meter)
    provider.shutdown()
    del meter, provider, reader
    gc.collect()
    assert gone() is None


def test_values_as_the_core_typed_them(sdk: SDK) -> None:
    """Attribute values of every JSON type (a list of one scalar type as a
    sequence, anything else as its JSON text) and an operation other than
    chat; a TurnResult built by hand without timings."""
    result = ssefold.TurnResult(
        message=None,
        provider="openai_chat",
        results=[],
        tool_results=None,
        telemetry={
            "attributes": {
                "gen_ai.operation.name": "embeddings",
                "s": "x",
                "i": 3,
                "f": 0.5,
                "b": True,
                "ss": ["a"],
                "is": [1, 2],
                "fs": [0.5],
                "bs": [True],
                "none": [],
                "mixed": ["a", 1],
                "ib": [1, True],
                "obj": {"k": "v", "a": "é"},
            },
            "metrics": [],
        },
    )
    before = time.time_ns()
    record_turn(result, tracer=sdk.tracer, meter=sdk.meter)  # type: ignore[arg-type]
    span = sdk.span()
    assert span.name == "embeddings" and span.status.status_code is StatusCode.UNSET
    assert span.start_time == span.end_time and span.start_time is not None and span.start_time >= before
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "embeddings",
        "s": "x",
        "i": 3,
        "f": 0.5,
        "b": True,
        "ss": ("a",),
        "is": (1, 2),
        "fs": (0.5,),
        "bs": (True,),
        "none": (),
        "mixed": '["a",1]',
        "ib": "[1,true]",
        "obj": '{"a":"é","k":"v"}',
    }
    assert sdk.collect() == {}


def test_records_from_many_threads(sdk: SDK) -> None:
    """record_turn from several threads at once: one set of instruments,
    every span and measurement recorded."""
    outcome = clocked_outcome()
    meter = CountingMeter(sdk.meter)
    barrier = threading.Barrier(8)

    def record() -> None:
        barrier.wait()
        for _ in range(4):
            record_turn(outcome, tracer=sdk.tracer, meter=meter)  # type: ignore[arg-type]

    threads = [threading.Thread(target=record) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(meter.made) == 4 and len(sdk.spans.get_finished_spans()) == 32
    check_metrics(sdk.collect(), outcome.telemetry, times=32)


# Imports ssefold with opentelemetry hidden (a meta path finder refusing
# it), runs a turn, then imports ssefold.otel.
WITHOUT_OTEL = r"""
import sys

class Hide:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hide())
import ssefold

result = ssefold.run_turn_sync([BODY], {}, provider="openai_chat").result()
assert result.telemetry["attributes"]["gen_ai.provider.name"] == "openai", result.telemetry
assert not [m for m in sys.modules if m.startswith("opentelemetry")], "opentelemetry imported"
try:
    import ssefold.otel
except ImportError as exc:
    print(exc.name, str(exc), sep="\n")
else:
    print("imported")
"""


def python(code: str) -> List[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_import_ssefold_needs_no_opentelemetry() -> None:
    """``import ssefold`` and a turn work without opentelemetry (and do not
    import it); ``import ssefold.otel`` then raises an ImportError that
    says what to install."""
    body = b"".join(CHAT_WITH_USAGE)
    out = python(WITHOUT_OTEL.replace("BODY", repr(body)))
    assert out == ["opentelemetry", "ssefold.otel needs opentelemetry-api >= 1.30: pip install 'ssefold[otel]'"]


def test_an_api_too_old_for_bucket_advice_is_refused() -> None:
    """An opentelemetry-api whose histograms take no bucket advice (before
    1.30) is refused at import, saying which version is needed."""
    code = r"""
import opentelemetry.metrics as metrics

def create_histogram(self, name, unit="", description=""):
    raise AssertionError("never called")

metrics.Meter.create_histogram = create_histogram
try:
    import ssefold.otel
except ImportError as exc:
    print(exc)
"""
    assert python(code) == ["ssefold.otel needs opentelemetry-api >= 1.30 (histogram bucket advice): pip install 'ssefold[otel]'"]


def test_the_extra_and_the_test_pins() -> None:
    """pyproject's ``otel`` extra asks for the API version ssefold.otel
    needs; the test requirements pin the API and the SDK to one version."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'otel = ["opentelemetry-api>=1.30"]' in pyproject
    pins = [line for line in (ROOT / "python" / "requirements-test.txt").read_text().splitlines() if line.startswith("opentelemetry")]
    assert sorted(p.split("==")[0] for p in pins) == ["opentelemetry-api", "opentelemetry-sdk"]
    assert len({p.split("==")[1] for p in pins}) == 1


def test_turn_result_telemetry_is_the_outcomes() -> None:
    """TurnResult.telemetry is TurnOutcome.telemetry (JSON values as they are)."""
    result, error = run(b"".join(CHAT_WITH_USAGE), "openai_chat", "sync")
    assert error is None and result.telemetry is not None
    json.dumps(result.telemetry)
    assert result.telemetry["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]
    assert [m["name"] for m in result.telemetry["metrics"]][:4] == [DURATION, FIRST_CHUNK, TOKENS, TOKENS]
