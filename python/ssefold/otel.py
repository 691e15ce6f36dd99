"""Records a turn of ssefold to OpenTelemetry: one client span
``chat {model}`` and the GenAI client metrics, named after the OpenTelemetry
GenAI semantic conventions.

The names and values come from the core, which writes them once for every
binding (``TurnResult.telemetry``, ``TurnOutcome.telemetry``); this module
only moves them onto a tracer and a meter, as the Go package ``ssefoldotel``
(``bindings/go/otel``) does. It needs ``opentelemetry-api`` (the ``otel``
extra: ``pip install 'ssefold[otel]'``); ``import ssefold`` does not.

Call :func:`record_turn` once the turn has ended, with the wall-clock time
the request was sent::

    sent = time.time_ns()
    try:
        result = await ssefold.run_turn(source, tools, provider="anthropic")
    except Exception as exc:  # a failed turn: its TurnResult rides on the error
        record_turn(exc.result, request_model="claude-sonnet-4-5", start_time_ns=sent)
        raise
    record_turn(result, request_model="claude-sonnet-4-5", start_time_ns=sent)

``run_turn`` has no hook for it: the span starts when the request was sent,
which only the host knows.

The span (kind ``CLIENT``) is named ``{gen_ai.operation.name} {request_model}``
(``"chat claude-sonnet-4-5"``), the response's model when no request model
is given, or just ``"chat"``. Its attributes are ``gen_ai.request.model``
(``request_model``) and every attribute of the telemetry:
``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.response.id``,
``gen_ai.response.model``, ``gen_ai.response.finish_reasons``,
``gen_ai.usage.input_tokens`` and ``gen_ai.usage.output_tokens``, and
``error.type`` when the turn failed or was aborted (the span's status is
then ``ERROR``, described by the failure's message). It starts at
``start_time_ns`` and lasts the turn's duration (``timings["duration_ms"]``).

Each metric of the telemetry is recorded on its histogram with its
attributes plus ``gen_ai.request.model``:
``gen_ai.client.operation.duration``,
``gen_ai.client.operation.time_to_first_chunk`` and
``gen_ai.client.operation.time_per_output_chunk`` (seconds, as floats; the
chunk gaps as their median, 95th percentile and largest value, told apart
by ``ssefold.gap.stat``) and ``gen_ai.client.token.usage`` (``{token}``, as
ints; input and output, told apart by ``gen_ai.token.type``). The
histograms have the conventions' advisory bucket boundaries.
"""

from __future__ import annotations

import inspect
import json
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

try:
    from opentelemetry import metrics as _metrics
    from opentelemetry import trace as _trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        "ssefold.otel needs opentelemetry-api >= 1.30: pip install 'ssefold[otel]'",
        name=_exc.name,
    ) from _exc

# The histograms' bucket boundaries are the conventions' advice, which the
# API takes from 1.30.
if "explicit_bucket_boundaries_advisory" not in inspect.signature(_metrics.Meter.create_histogram).parameters:
    raise ImportError(
        "ssefold.otel needs opentelemetry-api >= 1.30 (histogram bucket advice): pip install 'ssefold[otel]'"
    )

from ._ssefold import TurnOutcome, __version__
from ._tools import TurnResult

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import Histogram, Meter, MeterProvider
    from opentelemetry.trace import Tracer, TracerProvider
    from opentelemetry.util.types import AttributeValue

__all__ = ["SCOPE_NAME", "record_turn"]

SCOPE_NAME = "ssefold.otel"
"""The instrumentation scope of the tracer and meter :func:`record_turn`
gets from a provider."""

# The core's metrics this module makes instruments for up front
# (src/agent/telemetry.rs names them all), and the attributes it reads or
# adds.
_DURATION = "gen_ai.client.operation.duration"
_FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk"
_PER_CHUNK = "gen_ai.client.operation.time_per_output_chunk"
_TOKEN_USAGE = "gen_ai.client.token.usage"
_REQUEST_MODEL = "gen_ai.request.model"
_OPERATION_NAME = "gen_ai.operation.name"
_RESPONSE_MODEL = "gen_ai.response.model"
_ERROR_TYPE = "error.type"
_DEFAULT_OPERATION = "chat"

# 10 ms to 82 s, doubling (the conventions' advice for
# gen_ai.client.operation.duration).
_SECONDS_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
# 1 to 64 Mi tokens, by fours (the conventions' advice for
# gen_ai.client.token.usage).
_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]

_SECONDS = [
    (_DURATION, "GenAI operation duration: from the first request to the end of the stream."),
    (_FIRST_CHUNK, "Time to receive the first chunk, from the first request to the first content."),
    (
        _PER_CHUNK,
        "Time between output chunks: the median, 95th percentile and largest gap of a turn (ssefold.gap.stat).",
    ),
]


class _Instruments:
    """The histograms of one meter: made up front for the core's metrics,
    on first use for one this module does not know yet (with the core's
    unit). Holds no reference to the meter (it is the cache's weak key)."""

    def __init__(self, meter: "Meter") -> None:
        self.seconds: Dict[str, "Histogram"] = {
            name: meter.create_histogram(
                name, unit="s", description=description, explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS
            )
            for name, description in _SECONDS
        }
        self.tokens = meter.create_histogram(
            _TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self._lock = threading.Lock()
        self._others: Dict[str, "Histogram"] = {}

    def histogram(self, meter: "Meter", name: str, unit: str) -> "Histogram":
        known = self.seconds.get(name)
        if known is not None:
            return known
        with self._lock:
            other = self._others.get(name)
            if other is None:
                other = self._others[name] = meter.create_histogram(name, unit=unit)
            return other


_lock = threading.Lock()
# The instruments of each meter given or got, and the meter got from each
# provider (the API's proxy provider makes a new meter per call): kept while
# the meter (the provider) lives.
_instruments: "weakref.WeakKeyDictionary[Meter, _Instruments]" = weakref.WeakKeyDictionary()
_meters: "weakref.WeakKeyDictionary[MeterProvider, Meter]" = weakref.WeakKeyDictionary()


def _cached(cache: "weakref.WeakKeyDictionary[Any, Any]", key: Any, make: Callable[[], Any]) -> Any:
    """``cache[key]``, made by ``make()`` on its first use (every time for
    a key that cannot be weakly referenced or hashed)."""
    try:
        weakref.ref(key)
        hash(key)
    except TypeError:
        return make()
    with _lock:
        value = cache.get(key)
        if value is None:
            value = cache[key] = make()
        return value


def _instruments_of(meter: "Meter") -> _Instruments:
    inst: _Instruments = _cached(_instruments, meter, lambda: _Instruments(meter))
    return inst


def _meter_of(provider: Optional["MeterProvider"]) -> "Meter":
    provider = provider if provider is not None else _metrics.get_meter_provider()
    meter: "Meter" = _cached(_meters, provider, lambda: provider.get_meter(SCOPE_NAME, __version__))
    return meter


def record_turn(
    result: Union[TurnResult, TurnOutcome],
    *,
    tracer: Optional["Tracer"] = None,
    meter: Optional["Meter"] = None,
    tracer_provider: Optional["TracerProvider"] = None,
    meter_provider: Optional["MeterProvider"] = None,
    request_model: Optional[str] = None,
    start_time_ns: Optional[int] = None,
    context: Optional["Context"] = None,
) -> None:
    """Records a finished (or aborted, or failed) turn: the span and the
    metrics (see the module docs).

    ``result``: the :class:`TurnResult` of ``run_turn`` / ``run_turn_sync``
    (a failed turn's is its error's ``.result``) or a
    :class:`TurnOutcome` of ``TurnCore.outcome()``.
    ``tracer`` / ``meter``: where to record; without them, the tracer and
    meter named :data:`SCOPE_NAME` of ``tracer_provider`` /
    ``meter_provider``, or of the global providers (no-ops until an SDK is
    set). A meter's instruments are created on its first use and kept while
    it lives.
    ``request_model``: the model the request asked for
    (``gen_ai.request.model`` and the span's name; ``None``: left out).
    ``start_time_ns``: when the request was sent (``time.time_ns()``): the
    span starts there and ends the turn's duration later (now when the turn
    has no duration). ``None``: the span ends now and starts the duration
    before.
    ``context``: the parent of the span (``None``: the current context).
    """
    telemetry = result.telemetry or {"attributes": {}, "metrics": []}
    if tracer is None:
        tracer = _trace.get_tracer(SCOPE_NAME, __version__, tracer_provider=tracer_provider)
    _span(tracer, result, telemetry["attributes"], request_model, start_time_ns, context)
    if meter is None:
        meter = _meter_of(meter_provider)
    inst = _instruments_of(meter)
    for m in telemetry["metrics"]:
        attributes = _attributes(m["attributes"], request_model)
        if m["name"] == _TOKEN_USAGE:
            inst.tokens.record(int(m["value"]), attributes, context)
        else:
            inst.histogram(meter, m["name"], m["unit"]).record(float(m["value"]), attributes, context)


def _span(
    tracer: "Tracer",
    result: Union[TurnResult, TurnOutcome],
    values: Mapping[str, Any],
    request_model: Optional[str],
    start_ns: Optional[int],
    context: Optional["Context"],
) -> None:
    """Creates and ends the turn's span."""
    op = values.get(_OPERATION_NAME)
    name = op if isinstance(op, str) and op else _DEFAULT_OPERATION
    model = values.get(_RESPONSE_MODEL)
    if request_model:
        name += " " + request_model
    elif isinstance(model, str) and model:
        name += " " + model
    end_ns = time.time_ns()
    duration_ms = result.timings.get("duration_ms") if result.timings else None
    if duration_ms is not None:
        if start_ns is None:
            start_ns = end_ns - duration_ms * 1_000_000
        else:
            end_ns = start_ns + duration_ms * 1_000_000
    elif start_ns is None:
        start_ns = end_ns
    span = tracer.start_span(
        name,
        context=context,
        kind=SpanKind.CLIENT,
        attributes=_attributes(values, request_model),
        start_time=start_ns,
    )
    error_type = values.get(_ERROR_TYPE)
    if isinstance(error_type, str):
        message = str(result.failure) if result.failure is not None else ""
        span.set_status(Status(StatusCode.ERROR, message or error_type))
    span.end(end_time=end_ns)


def _attributes(values: Mapping[str, Any], request_model: Optional[str]) -> Dict[str, "AttributeValue"]:
    """The attributes of ``values`` (as the core typed them), sorted by key,
    with ``gen_ai.request.model`` first when ``request_model`` is given."""
    out: Dict[str, "AttributeValue"] = {}
    if request_model:
        out[_REQUEST_MODEL] = request_model
    for key in sorted(values):
        out[key] = _attribute(values[key])
    return out


_SCALARS: Tuple[type, ...] = (str, bool, int, float)


def _attribute(value: Any) -> "AttributeValue":
    """One attribute value: a string, integer, float or boolean as itself, a
    list of one of them (all of the same type) as a sequence, anything else
    as its JSON text."""
    if type(value) in _SCALARS:
        scalar: "AttributeValue" = value
        return scalar
    if isinstance(value, (list, tuple)) and _homogeneous(value):
        items: Sequence[Any] = list(value)
        return items
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _homogeneous(values: Sequence[Any]) -> bool:
    kinds: List[type] = [type(v) for v in values]
    return all(k in _SCALARS for k in kinds) and len(set(kinds)) <= 1
