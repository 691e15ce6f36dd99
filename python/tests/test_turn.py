"""The agent turn on every stream we have with tool calls: the golden
fixtures (tests/fixtures/<dialect>/), the SDKs' recorded streams
(tests/peer-fixtures/) and the recordings (tests/recordings/manifest.json),
each through ``run_turn`` (asyncio) and ``run_turn_sync`` (threads), fed
as bytes (the turn folds the body) and through the HTTP helpers (the turn
follows the helper's own stream).

For each: every complete call the host runs (choice 0, named, not run by
the provider) runs exactly once with the fold's name and arguments; every
call gets exactly one result, in call order; and the next request
(``TurnResult.next.append``) validates with the providers' own request
types: ``anthropic`` ``MessageParam`` (``BetaMessageParam`` for beta
blocks), ``openai`` ``ChatCompletionMessageParam`` and
``ResponseInputItemParam``, ``google.genai.types.Content``, botocore's
``Converse`` input shape and ``ollama``'s ``Message``.

Pydantic drops the members a TypedDict does not declare instead of
refusing them, so besides validating, each message is compared with what
validation kept: a member the request type does not know is a failure,
except a ``null`` one (not set) and the members a provider documents that
its package does not model yet (``EXTENSIONS``)."""

from __future__ import annotations

import asyncio
import functools
import json
import pathlib
import random
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

import ssefold
from conftest import ROOT

httpx = pytest.importorskip("httpx")

DIALECTS = ["anthropic", "openai_chat", "openai_responses", "gemini", "ollama", "bedrock", "bedrock_converse"]

# Members a provider's API documents (and accepts back) that its package's
# request type does not model, by dialect: (path pattern) -> why.
EXTENSIONS: Dict[str, Dict[Tuple[str, ...], str]] = {
    "openai_chat": {
        ("tool_calls", "*", "extra_content"): "Gemini's OpenAI endpoint: the thought signature it wants back",
    },
    "ollama": {
        ("tool_calls", "*", "id"): "Ollama's api.ToolCall.ID (ollama-python does not model it)",
        ("tool_calls", "*", "function", "index"): "Ollama's api.ToolCallFunction.Index",
    },
}


# --------------------------------------------------------------- the bodies


@dataclass(frozen=True)
class Call:
    """A call as a plain stream reports it at its ``part_end``."""

    part: int
    id: str
    name: str
    arguments: str
    input_format: str
    outcome: str
    provider_executed: bool
    choice: int


def all_bodies() -> List[Tuple[pathlib.Path, str]]:
    out: List[Tuple[pathlib.Path, str]] = []
    for dialect in DIALECTS:
        files = sorted((ROOT / "tests" / "fixtures" / dialect).iterdir())
        out += [(f, dialect) for f in files if f.suffix in (".sse", ".ndjson", ".bin")]
    for sdk in sorted(p for p in (ROOT / "tests" / "peer-fixtures").iterdir() if p.is_dir()):
        out += [(f, "auto") for f in sorted(sdk.iterdir()) if f.suffix in (".sse", ".txt")]
    manifest = json.loads((ROOT / "tests" / "recordings" / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest:
        out.append((ROOT / "tests" / "recordings" / entry["file"], entry["file"].split("/")[0]))
    return out


def reference_calls(body: bytes, dialect: str) -> Tuple[List[Call], str]:
    """The tool calls a plain stream folds from ``body``, and its dialect."""
    stream = ssefold.Stream(dialect)
    events: List[ssefold.StreamEvent] = []
    try:
        events += stream.feed(body)
        events += stream.finish()
    except ssefold.Error as err:
        events += getattr(err, "events", [])
    choices: Dict[int, int] = {}
    calls = []
    for e in events:
        if e.type == "part_start" and e.kind == "tool_call":
            choices[e.part] = e.choice
        elif e.type == "part_end" and isinstance(e.tool_call, ssefold.ToolCallEnd):
            c = e.tool_call
            calls.append(
                Call(e.part, c.id, c.name, c.arguments, c.input_format, e.outcome, c.provider_executed, choices.get(e.part, 0))
            )
    return calls, stream.provider


@functools.lru_cache(maxsize=None)
def bodies_with_calls() -> List[Tuple[pathlib.Path, str]]:
    return [(p, d) for p, d in all_bodies() if reference_calls(p.read_bytes(), d)[0]]


def body_id(item: Tuple[pathlib.Path, str]) -> str:
    return str(item[0].relative_to(ROOT / "tests"))


BODIES = bodies_with_calls()


def test_every_dialect_has_streams_with_tool_calls() -> None:
    found = {reference_calls(p.read_bytes(), d)[1] for p, d in BODIES}
    assert set(DIALECTS) <= found, set(DIALECTS) - found
    assert len(BODIES) >= 500


# ------------------------------------------------------------- the sources


def chunks_of(body: bytes) -> List[bytes]:
    """``body`` cut at a few random places (seeded by its length)."""
    rng = random.Random(len(body))
    cuts = sorted({rng.randrange(len(body) + 1) for _ in range(6)} | {0, len(body)})
    return [body[a:b] for a, b in zip(cuts, cuts[1:])]


async def areplay(chunks: List[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        await asyncio.sleep(0)
        yield chunk


def serve(body: bytes) -> Any:
    return httpx.MockTransport(lambda request: httpx.Response(200, content=body))


NO_RETRY = ssefold.ReconnectPolicy(max_retries=0)


class Recorder:
    """Tool functions that record each call and answer ``result of ID``."""

    def __init__(self, names: List[str]) -> None:
        self.names = names
        self.started: List[ssefold.ToolCall] = []

    def sync_tools(self) -> Dict[str, Callable[[ssefold.ToolCall], str]]:
        def run(call: ssefold.ToolCall) -> str:
            self.started.append(call)
            return f"result of {call.id}"

        return {n: run for n in self.names}

    def async_tools(self) -> Dict[str, Callable[[ssefold.ToolCall], Any]]:
        async def run(call: ssefold.ToolCall) -> str:
            self.started.append(call)
            await asyncio.sleep(0)
            return f"result of {call.id}"

        return {n: run for n in self.names}


def settle(run: Callable[[], ssefold.TurnResult]) -> ssefold.TurnResult:
    """The turn's result, also when it failed (the error's ``.result``)."""
    try:
        return run()
    except Exception as err:
        result: ssefold.TurnResult = getattr(err, "result")
        assert result.failure is err
        return result


def run_bytes_async(body: bytes, dialect: str, rec: Recorder) -> ssefold.TurnResult:
    async def main() -> ssefold.TurnResult:
        turn = ssefold.run_turn(areplay(chunks_of(body)), rec.async_tools(), provider=dialect)
        events = [e async for e in turn]
        assert events, "events were shown"
        return await turn

    return settle(lambda: asyncio.run(main()))


def run_bytes_sync(body: bytes, dialect: str, rec: Recorder) -> ssefold.TurnResult:
    turn = ssefold.run_turn_sync(iter(chunks_of(body)), rec.sync_tools(), provider=dialect)
    return settle(turn.result)


def run_helper_async(body: bytes, dialect: str, rec: Recorder) -> ssefold.TurnResult:
    async def main() -> ssefold.TurnResult:
        async with httpx.AsyncClient(transport=serve(body)) as client:
            source = ssefold.astream_events(client, "POST", "http://model.test/", provider=dialect, policy=NO_RETRY)
            return await ssefold.run_turn(source, rec.async_tools())

    return settle(lambda: asyncio.run(main()))


def run_helper_sync(body: bytes, dialect: str, rec: Recorder) -> ssefold.TurnResult:
    with httpx.Client(transport=serve(body)) as client:
        source = ssefold.stream_events(client, "POST", "http://model.test/", provider=dialect, policy=NO_RETRY)
        turn = ssefold.run_turn_sync(source, rec.sync_tools())
        return settle(turn.result)


# ------------------------------------------------------------ the checks


def check_turn(name: str, calls: List[Call], detected: str, rec: Recorder, result: ssefold.TurnResult) -> None:
    choice0 = [c for c in calls if c.choice == 0]
    host_run = [c for c in choice0 if c.outcome == "complete" and not c.provider_executed and c.name]
    answered = [c for c in choice0 if not c.provider_executed]
    started = [(c.id, c.name, c.arguments) for c in rec.started]
    assert len(set(s[0] for s in started)) == len(started), f"{name}: a call started twice"
    if result.failure is None:
        want = sorted((c.id, c.name, c.arguments) for c in host_run)
        assert sorted(started) == want, f"{name}: each ready call ran once, with the fold's name and arguments"
    else:
        ready = {(c.id, c.name, c.arguments) for c in host_run}
        assert set(started) <= ready, f"{name}: only ready calls ran"
    for call in rec.started:
        fmt = next(c.input_format for c in host_run if c.id == call.id)
        assert call.input == (json.loads(call.arguments) if fmt == "json" else call.arguments), name
    assert [r.call_id for r in result.results] == [c.id for c in answered], f"{name}: one result per call, in order"
    for r, c in zip(result.results, answered):
        if c.outcome == "incomplete":
            want_kind = "incomplete"
        elif c.outcome == "invalid_arguments":
            want_kind = "invalid_input"
        elif not c.name:
            want_kind = "unnamed"
        elif result.failure is not None and r.kind == "aborted":
            want_kind = "aborted"
        else:
            want_kind = "ran"
            assert r.output == f"result of {c.id}", name
        assert r.kind == want_kind, f"{name}: {c}"
        assert r.is_error == (r.kind != "ran") and r.id_synthesized == (r.call_id != c.id or c.id.startswith("ssefold_call_"))
    assert [c.id for c in result.calls] == [c.id for c in choice0], name
    assert result.provider == detected, name
    assert result.next is not None, f"{name}: the answer can be continued"
    assert result.tool_results == result.next.tool_results
    if answered:
        assert result.next.tool_results is not None
    check_next(detected, result.next.append, name)


@pytest.mark.parametrize("item", BODIES, ids=body_id)
def test_a_turn_fed_bytes_runs_each_ready_call_once_and_answers_every_call(item: Tuple[pathlib.Path, str]) -> None:
    path, dialect = item
    body = path.read_bytes()
    calls, detected = reference_calls(body, dialect)
    names = sorted({c.name for c in calls if c.name})
    for how, run in (("asyncio", run_bytes_async), ("threads", run_bytes_sync)):
        rec = Recorder(names)
        check_turn(f"{path.name} ({how})", calls, detected, rec, run(body, dialect, rec))


@pytest.mark.parametrize("item", BODIES, ids=body_id)
def test_a_turn_over_the_http_helpers_runs_each_ready_call_once(item: Tuple[pathlib.Path, str]) -> None:
    path, dialect = item
    body = path.read_bytes()
    calls, detected = reference_calls(body, dialect)
    names = sorted({c.name for c in calls if c.name})
    for how, run in (("astream_events", run_helper_async), ("stream_events", run_helper_sync)):
        rec = Recorder(names)
        check_turn(f"{path.name} ({how})", calls, detected, rec, run(body, dialect, rec))


# -------------------------------------------------- the providers' own types


def materialize(value: Any) -> Any:
    """A validated value with pydantic's lazy iterators made lists."""
    from pydantic import BaseModel

    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [materialize(v) for v in value]
    if isinstance(value, BaseModel):
        return materialize(value.model_dump(by_alias=True, exclude_unset=True))
    if type(value).__name__ == "ValidatorIterator" or isinstance(value, Iterator):
        return [materialize(v) for v in value]
    return value


def unknown_members(given: Any, kept: Any, path: Tuple[str, ...] = ()) -> Iterator[Tuple[str, ...]]:
    """The paths of the non-null members of ``given`` that validation did
    not keep in ``kept``."""
    if isinstance(given, dict) and isinstance(kept, dict):
        for k, v in given.items():
            if k not in kept:
                if v is not None:
                    yield path + (k,)
            else:
                yield from unknown_members(v, kept[k], path + (k,))
    elif isinstance(given, list) and isinstance(kept, list):
        for i, (g, k) in enumerate(zip(given, kept)):
            yield from unknown_members(g, k, path + (str(i),))


def is_extension(dialect: str, path: Tuple[str, ...]) -> bool:
    for pattern in EXTENSIONS.get(dialect, {}):
        if len(pattern) == len(path) and all(p in ("*", s) for p, s in zip(pattern, path)):
            return True
    return False


@functools.lru_cache(maxsize=None)
def adapter(name: str) -> Any:
    from pydantic import TypeAdapter

    if name == "anthropic":
        from anthropic.types import ContentBlockParam, MessageParam

        return TypeAdapter(MessageParam), TypeAdapter(ContentBlockParam)
    if name == "anthropic_beta":
        from anthropic.types.beta import BetaContentBlockParam, BetaMessageParam

        return TypeAdapter(BetaMessageParam), TypeAdapter(BetaContentBlockParam)
    if name == "openai_chat":
        from openai.types.chat import ChatCompletionMessageParam

        return TypeAdapter(ChatCompletionMessageParam)
    if name == "openai_responses":
        from openai.types.responses import ResponseInputItemParam

        return TypeAdapter(ResponseInputItemParam)
    raise KeyError(name)


def validated_anthropic(message: Dict[str, Any]) -> Dict[str, Any]:
    """``message`` validated as a ``MessageParam``, or a ``BetaMessageParam``
    when it holds a beta block (an MCP call, ...: such a request goes to
    ``client.beta.messages``); its content blocks as the TypedDicts kept
    them."""
    errors = []
    for name in ("anthropic", "anthropic_beta"):
        message_type, block_type = adapter(name)
        try:
            materialize(message_type.validate_python(message, strict=True))
            content = message["content"]
            blocks = [materialize(block_type.validate_python(b, strict=True)) for b in content] if isinstance(content, list) else content
            return {**message, "content": blocks}
        except Exception as err:  # pydantic's ValidationError
            errors.append(err)
    raise errors[-1]


def validated_converse(messages: List[Any]) -> None:
    import botocore.session  # type: ignore[import-untyped]
    from botocore.validate import ParamValidator  # type: ignore[import-untyped]

    model = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse")
    report = ParamValidator().validate({"modelId": "m", "messages": messages}, model.input_shape)
    assert not report.has_errors(), report.generate_report()


def installed(module: str) -> bool:
    """Whether ``module`` imports (the providers' packages are test
    dependencies; a free-threaded CPython lacks those built on pydantic, and
    checks only the turns there)."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


REQUEST_TYPE_PACKAGES = {
    "anthropic": "anthropic",
    "bedrock": "anthropic",
    "openai_chat": "openai",
    "openai_responses": "openai",
    "gemini": "google.genai",
    "ollama": "ollama",
    "bedrock_converse": "botocore",
}


def check_next(dialect: str, append: List[Any], name: str) -> None:
    """Each entry of ``append`` validates with ``dialect``'s request type
    (strict: no coercion) and has no member it does not know."""
    if not installed(REQUEST_TYPE_PACKAGES[dialect]):
        return
    if dialect == "bedrock_converse":
        validated_converse(append)
        return
    for entry in append:
        kept: Any
        if dialect in ("anthropic", "bedrock"):
            kept = validated_anthropic(entry)
        elif dialect in ("openai_chat", "openai_responses"):
            kept = materialize(adapter(dialect).validate_python(entry, strict=True))
        elif dialect == "gemini":
            from google.genai import types

            types.Content.model_validate(entry, strict=True)  # extra="forbid": an unknown member is refused
            continue
        else:
            import ollama

            kept = ollama.Message.model_validate(entry, strict=True).model_dump(exclude_unset=True)
        unknown = [p for p in unknown_members(entry, kept) if not is_extension(dialect, p)]
        assert not unknown, f"{name}: members the {dialect} request type does not know: {unknown}"


def test_the_request_type_check_refuses_what_a_provider_refuses() -> None:
    # The check itself: a member the type lacks, a wrong type, a missing
    # required member are refused; the documented extensions are not.
    refused = [
        ("openai_responses", {"type": "custom_tool_call", "status": "completed", "call_id": "c", "name": "n", "input": "x"}),
        ("openai_chat", {"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": "c", "type": "function", "function": {"name": "n", "arguments": "{}"}}]}),
        ("ollama", {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "n", "arguments": "{"}}]}),
        ("anthropic", {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "n", "input": {}, "z": 1}]}),
        ("anthropic", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "is_error": "yes"}]}),
        ("gemini", {"role": "model", "parts": [{"functionCall": {"name": "n", "args": {}}, "z": 1}]}),
        ("bedrock_converse", {"role": "assistant", "content": [{"toolUse": {"toolUseId": "x", "name": "n", "input": {}, "z": 1}}]}),
        ("bedrock_converse", {"role": "user", "content": [{"toolResult": {"content": [{"text": "r"}]}}]}),
    ]
    for dialect, entry in refused:
        if not installed(REQUEST_TYPE_PACKAGES[dialect]):
            continue
        with pytest.raises(Exception):
            check_next(dialect, [entry], dialect)
    accepted = [
        ("openai_chat", {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "n", "arguments": "{}"}, "extra_content": {"google": {"thought_signature": "s"}}}]}),
        ("ollama", {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": {"index": 0, "name": "n",
            "arguments": {}}}]}),
        ("anthropic", {"role": "assistant", "content": [{"type": "mcp_tool_use", "id": "m", "name": "n",
            "server_name": "s", "input": {}}]}),
    ]
    for dialect, entry in accepted:
        if installed(REQUEST_TYPE_PACKAGES[dialect]):
            check_next(dialect, [entry], dialect)


# ------------------------------------------------ no provider shapes in the shells

# The block, item and member names of the dialects' tool calls and results.
# The binding finds tool calls through the core's provider-neutral
# ``tool_call`` and writes results through the core's shapes: none of its
# sources names one (comments and docstrings included).
DIALECT_SHAPES = [
    "tool_use",
    "server_tool_use",
    "mcp_tool_use",
    "function_call",
    "function_call_output",
    "functionCall",
    "functionResponse",
    "toolUse",
    "toolResult",
    "mcp_call",
    "custom_tool_call",
    "custom_tool_call_output",
    "tool_calls",
]


def binding_sources() -> List[pathlib.Path]:
    python = sorted((ROOT / "python" / "ssefold").glob("*.py")) + sorted((ROOT / "python" / "ssefold").glob("*.pyi"))
    return python + sorted((ROOT / "bindings" / "python" / "src").glob("*.rs"))


def test_the_binding_names_no_dialect_shape() -> None:
    import re

    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, DIALECT_SHAPES)) + r")(?![A-Za-z0-9_])")
    sources = binding_sources()
    assert {p.name for p in sources} >= {"_tools.py", "_http.py", "providers.rs", "turn.rs", "tools.rs"}
    found = [
        f"{path.relative_to(ROOT)}:{n}: {m.group(1)}"
        for path in sources
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for m in pattern.finditer(line)
    ]
    assert not found, "provider JSON shapes in the binding:\n" + "\n".join(found)
    # The scan finds what it looks for.
    assert pattern.search('if block["type"] == "tool_use":') and not pattern.search("core.tool_result(id, out)")
