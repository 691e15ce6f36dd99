"""Differential oracle: the official Python SDKs fold the same bytes as ssefold.

Each stream (golden fixture, peer fixture, real recording) is served to the
SDK's own streaming helper through an ``httpx2.MockTransport`` (the SDKs are
built on httpx2) as a ``text/event-stream`` body, in the same chunks that are
fed to ssefold; the SDK's final message (as the JSON dict the SDK would give
back, :func:`sdk_json`) is compared with ``stream.message`` field by field.

* ``anthropic``: ``client.messages.stream(...).get_final_message()`` and the
  beta helper ``client.beta.messages.stream(...).get_final_message()`` (the
  reference: its accumulator is a superset of the GA one).
* ``openai_chat``: ``client.chat.completions.stream(...).get_final_completion()``.
* ``openai_responses``: ``client.responses.stream(...).get_final_response()``.

Every normalization applied to either side lives in :func:`normalize`, one
comment per rule. Used by ``test_sdk_oracle.py`` and ``sdk_oracle_report.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
import pathlib
import random
import re
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import ssefold

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
PEER_FIXTURES = ROOT / "tests" / "peer-fixtures"
# The real recordings: tests/recordings/manifest.json (a JSON list of
# {"file": <relative to the manifest's directory>, "dialect": ...}). Another
# directory can be named with SSEFOLD_RECORDINGS (the directory or its
# manifest.json); absent -> no recording cases.
RECORDINGS = ROOT / "tests" / "recordings"

DIALECTS = ("anthropic", "openai_chat", "openai_responses")
STREAM_CLASSES = {
    "anthropic": ssefold.AnthropicStream,
    "openai_chat": ssefold.OpenAIChatStream,
    "openai_responses": ssefold.OpenAIResponsesStream,
}
# Which SDK helpers fold each dialect: (variant name, runner).
PEER_DIALECTS = {
    "anthropic-sdk-python": "anthropic",
    "anthropic-sdk-typescript": "anthropic",
    "anthropic-sdk-go": "anthropic",
    "openai-python": "openai_chat",
}
# Inputs longer than this are not fed one byte at a time (the SDKs' decoders
# are slow at that); they get 7-byte chunks instead.
BYTEWISE_MAX = 64 * 1024

ABSENT = "<absent>"


@dataclasses.dataclass(frozen=True)
class Case:
    id: str  # "golden/anthropic/truncated", "peer/openai-python/x.sse", "rec/<file>"
    path: pathlib.Path
    dialect: str

    def data(self) -> bytes:
        return self.path.read_bytes()


def recordings_manifest() -> Optional[pathlib.Path]:
    env = os.environ.get("SSEFOLD_RECORDINGS")
    if env:
        p = pathlib.Path(env)
        return p if p.suffix == ".json" else p / "manifest.json"
    p = RECORDINGS / "manifest.json"
    return p if p.is_file() else None


def cases(include_recordings: bool = True) -> List[Case]:
    out: List[Case] = []
    for path in sorted(FIXTURES.glob("*/*.sse")):
        out.append(Case(f"golden/{path.parent.name}/{path.stem}", path, path.parent.name))
    for path in sorted(PEER_FIXTURES.rglob("*")):
        if path.suffix in (".sse", ".txt") and path.parent.name in PEER_DIALECTS:
            out.append(Case(f"peer/{path.parent.name}/{path.name}", path, PEER_DIALECTS[path.parent.name]))
    manifest = recordings_manifest() if include_recordings else None
    if manifest is not None and manifest.is_file():
        for entry in json.loads(manifest.read_text(encoding="utf-8")):
            dialect = entry.get("dialect")
            if dialect not in DIALECTS:
                continue
            path = manifest.parent / entry["file"]
            if path.is_file():
                out.append(Case(f"rec/{entry['file']}", path, dialect))
    return out


def chunkings(data: bytes) -> List[Tuple[str, List[bytes]]]:
    """Whole; one byte at a time (7 bytes for long inputs); random cuts."""
    step = 1 if len(data) <= BYTEWISE_MAX else 7
    rng = random.Random(len(data))
    cuts = sorted({rng.randrange(len(data) + 1) for _ in range(2 + len(data) // 200)} | {0, len(data)})
    return [
        ("whole", [data]),
        ("bytewise", [data[i : i + step] for i in range(0, len(data), step)]),
        ("random", [data[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]),
    ]


CHUNKING_NAMES = ("whole", "bytewise", "random")


def chunks_for(data: bytes, how: str) -> List[bytes]:
    return next(chunks for name, chunks in chunkings(data) if name == how)


# ---------------------------------------------------------------------------
# Outcomes


@dataclasses.dataclass
class Outcome:
    message: Optional[Dict[str, Any]]  # the folded message as JSON (None: none to compare)
    error: Optional[str] = None  # "ExceptionClass: text" when the side raised

    @property
    def kind(self) -> str:
        return "ok" if self.error is None else self.error.split(":", 1)[0]


def run_ssefold(dialect: str, chunks: List[bytes]) -> Outcome:
    stream = STREAM_CLASSES[dialect]()
    error: Optional[str] = None
    try:
        for c in chunks:
            stream.feed(c)
        stream.finish()
    except ssefold.Error as err:
        error = f"{type(err).__name__}: {err}"
    message = stream.message
    return Outcome(json.loads(json.dumps(message)) if message is not None else None, error)


def _client_kwargs(chunks: List[bytes]) -> Dict[str, Any]:
    import httpx2

    def handler(request: httpx2.Request) -> httpx2.Response:
        # An iterator body: the SDK reads it chunk by chunk, as off a socket.
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", "request-id": "req_oracle"},
            content=iter(list(chunks)),
        )

    return {
        "api_key": "oracle",
        "base_url": "http://oracle.invalid",
        "max_retries": 0,
        "http_client": httpx2.Client(transport=httpx2.MockTransport(handler)),
    }


def _anthropic(chunks: List[bytes], beta: bool) -> Any:
    import anthropic

    client = anthropic.Anthropic(**_client_kwargs(chunks))
    api = client.beta.messages if beta else client.messages
    with api.stream(model="oracle", max_tokens=1, messages=[{"role": "user", "content": "hi"}]) as s:
        return s.get_final_message()


def _openai_chat(chunks: List[bytes]) -> Any:
    import openai

    client = openai.OpenAI(**_client_kwargs(chunks))
    try:
        with client.chat.completions.stream(model="oracle", messages=[{"role": "user", "content": "hi"}]) as s:
            return s.get_final_completion()
    except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as err:
        # The helper refuses to *parse* a choice cut by length / content
        # filter (even with no response_format) but hands over the folded
        # completion on the error: that is the SDK's fold of the stream.
        return err.completion


def _openai_responses(chunks: List[bytes]) -> Any:
    import openai

    client = openai.OpenAI(**_client_kwargs(chunks))
    with client.responses.stream(model="oracle", input="hi") as s:
        return s.get_final_response()


SDK_VARIANTS: Dict[str, List[Tuple[str, Callable[[List[bytes]], Any]]]] = {
    "anthropic": [
        ("anthropic.beta", lambda c: _anthropic(c, beta=True)),
        ("anthropic", lambda c: _anthropic(c, beta=False)),
    ],
    "openai_chat": [("openai.chat", _openai_chat)],
    "openai_responses": [("openai.responses", _openai_responses)],
}


def sdk_json(model: Any) -> Dict[str, Any]:
    """The SDK's view of the message as JSON: ``to_dict(mode="json")``, whose
    default ``exclude_unset=True`` keeps exactly the fields the SDK was given
    (by the wire or by its accumulator) and leaves out the model's None
    defaults for fields nobody set — what ``to_json()`` prints."""
    # warnings=False: pydantic warns when a block type the SDK's union does
    # not know (mcp_tool_use, compaction, ...) is dumped; the data is kept.
    out: Dict[str, Any] = model.to_dict(mode="json", warnings=False)
    return out


def run_sdk(variant: str, dialect: str, chunks: List[bytes]) -> Outcome:
    runner = dict(SDK_VARIANTS[dialect])[variant]
    try:
        with warnings.catch_warnings():
            # The SDKs' own pydantic serializer warnings (e.g. a tool call's
            # `arguments` sent as an object) are not a verdict on the stream;
            # under `pytest -W error` they would surface as exceptions.
            warnings.simplefilter("ignore")
            model = runner(chunks)
            return Outcome(sdk_json(model))
    except Exception as err:  # the SDK's own verdict on the stream
        text = str(err).splitlines()[0] if str(err) else ""
        return Outcome(None, f"{type(err).__module__}.{type(err).__name__}: {text[:200]}")


# ---------------------------------------------------------------------------
# Normalization: the ONE place where either side is changed before comparing.


def normalize(dialect: str, ours: Dict[str, Any], theirs: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    ours, theirs = copy.deepcopy(ours), copy.deepcopy(theirs)
    if dialect == "openai_chat":
        for choice in theirs.get("choices") or []:
            msg = choice.get("message") or {}
            # Rule C1: `parsed` is the SDK's structured-output helper
            # (parse_chat_completion sets it, None without response_format);
            # it is not in the API's ChatCompletion.
            msg.pop("parsed", None)
            # Rule C4: after its first chunk the accumulator round-trips the
            # message through model_dump(exclude_unset=False), which writes
            # every ChatCompletionMessage field the wire never sent with its
            # None default (a message folded from a single chunk has none of
            # them): dropped when None on the SDK side and absent on ours.
            for key in ("annotations", "audio", "function_call"):
                if msg.get(key, ABSENT) is None and key not in ((ours_choice(ours, choice) or {}).get("message") or {}):
                    msg.pop(key)
            # Rule C2: parse_chat_completion rewrites `tool_calls` to None when
            # the choice has none; the accumulated snapshot had no such key
            # (the wire never sent it).
            if msg.get("tool_calls", ABSENT) is None:
                msg.pop("tool_calls")
            for call in msg.get("tool_calls") or []:
                # Rule C3: `function.parsed_arguments` is the SDK's parse helper
                # (None unless a strict input tool was given); not API data.
                (call.get("function") or {}).pop("parsed_arguments", None)
                # Rule C5 (deliberate, see openai_chat's "Deliberate
                # differences"): `index` is the delta's position in the stream,
                # which accumulate_delta leaves in each call; the non-streaming
                # ChatCompletion has no such member and ssefold folds to it
                # (a message sent back as the next request's history carries
                # no stream bookkeeping).
                call.pop("index", None)
    if dialect == "openai_responses":
        for item in theirs.get("output") or []:
            # Rule R1: `parsed_arguments` on function_call items is
            # parse_response's helper (None without input tools); not API data.
            if item.get("type") == "function_call":
                item.pop("parsed_arguments", None)
            for part in item.get("content") or [] if item.get("type") == "message" else []:
                # Rule R2: `parsed` on output_text parts is parse_response's
                # structured-output helper (None without text_format).
                if part.get("type") == "output_text":
                    part.pop("parsed", None)
    return ours, theirs


def ours_choice(ours: Dict[str, Any], choice: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """Our choice with the same ``index`` as the SDK's ``choice``."""
    return next((c for c in ours.get("choices") or [] if c.get("index") == choice.get("index")), None)


def outcomes_agree(ours: Outcome, theirs: Outcome) -> bool:
    """Both fold without complaint, or both refuse the stream (any
    ssefold.Error <-> any SDK exception: each side says it is not a complete,
    well-formed answer). One side raising while the other folds is a
    difference, reported as the path ``<outcome>``."""
    return (ours.error is None) == (theirs.error is None)


# ---------------------------------------------------------------------------
# Diff


def diff(ours: Any, theirs: Any, path: str = "$") -> List[Tuple[str, Any, Any]]:
    """Field by field: (JSON path, ours, theirs); a missing key is ABSENT."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out: List[Tuple[str, Any, Any]] = []
        for key in list(ours) + [k for k in theirs if k not in ours]:
            out += diff(ours.get(key, ABSENT), theirs.get(key, ABSENT), f"{path}.{key}")
        return out
    if isinstance(ours, list) and isinstance(theirs, list):
        out = []
        for i in range(max(len(ours), len(theirs))):
            if i < len(ours) and i < len(theirs):
                out += diff(ours[i], theirs[i], f"{path}[{i}]")
            else:
                out.append((f"{path}[{i}]", ours[i] if i < len(ours) else ABSENT, theirs[i] if i < len(theirs) else ABSENT))
        return out
    # An object member that is null on one side and absent on the other is
    # the same member: the SDKs' results are pydantic models, which read an
    # optional member never set as None (`choice.logprobs is None` either
    # way); to_dict(exclude_unset) only hides which of the two the wire sent.
    # Only members of objects: a list element is never absent.
    if (ours is None and theirs == ABSENT) or (ours == ABSENT and theirs is None):
        return []
    # JSON has one number type: 1700000000 and 1700000000.0 are the same
    # value (the SDKs' models type some integers as float); bool is not a
    # number.
    number = (int, float)
    if isinstance(ours, number) and isinstance(theirs, number) and not isinstance(ours, bool) and not isinstance(theirs, bool):
        return [] if ours == theirs else [(path, ours, theirs)]
    if type(ours) is not type(theirs) or ours != theirs:
        return [(path, ours, theirs)]
    return []


@dataclasses.dataclass
class Result:
    case: Case
    variant: str
    chunking: str
    ours: Outcome
    theirs: Outcome
    diffs: List[Tuple[str, Any, Any]]

    @property
    def ok(self) -> bool:
        return not self.diffs

    def describe(self, limit: int = 40) -> str:
        lines = [f"{self.case.id} [{self.variant}, {self.chunking}]"]
        lines.append(f"  outcome: ssefold={self.ours.error or 'ok'} | sdk={self.theirs.error or 'ok'}")
        for path, a, b in self.diffs[:limit]:
            lines.append(f"  {path}: ours={short(a)} | sdk={short(b)}")
        if len(self.diffs) > limit:
            lines.append(f"  ... {len(self.diffs) - limit} more")
        return "\n".join(lines)


def short(value: Any, n: int = 160) -> str:
    text = value if value == ABSENT else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= n else text[: n - 3] + "..."


@functools.lru_cache(maxsize=None)
def sdk_reference(case: Case, variant: str) -> Outcome:
    """The SDK's fold of the whole body, computed once per stream and helper.

    ssefold's fold is compared with it in every chunking: chunking invariance
    is ssefold's guarantee to check, not the SDK's (its SSE decoder is its
    own), and feeding the SDK one byte at a time through httpx costs minutes
    over the recordings for no verdict on ssefold."""
    return run_sdk(variant, case.dialect, [case.data()])


def compare(case: Case, variant: str, chunking: str, data: Optional[bytes] = None) -> Result:
    chunks = chunks_for(case.data() if data is None else data, chunking)
    ours = run_ssefold(case.dialect, chunks)
    theirs = sdk_reference(case, variant) if data is None else run_sdk(variant, case.dialect, chunks)
    diffs: List[Tuple[str, Any, Any]] = []
    if not outcomes_agree(ours, theirs):
        diffs.append(("<outcome>", ours.error or "ok", theirs.error or "ok"))
    if ours.message is not None and theirs.message is not None:
        a, b = normalize(case.dialect, ours.message, theirs.message)
        diffs += diff(a, b)
    elif theirs.error is None and theirs.message is not None and ours.message is None:
        diffs.append(("$", None, theirs.message))
    return Result(case, variant, chunking, ours, theirs, diffs)


def params() -> Iterator[Tuple[Case, str, str]]:
    # SSEFOLD_ORACLE_CHUNKINGS=whole (comma-separated) narrows a quick run.
    hows = [h for h in os.environ.get("SSEFOLD_ORACLE_CHUNKINGS", ",".join(CHUNKING_NAMES)).split(",") if h]
    for case in cases():
        # Dialects without an official Python SDK stream helper here (Gemini,
        # Ollama: google-genai's own check is test_genai_schema.py) have no oracle.
        for variant, _ in SDK_VARIANTS.get(case.dialect, ()):
            for how in hows:
                yield case, variant, how


def param_id(case: Case, variant: str, how: str) -> str:
    return f"{variant}:{case.id}:{how}"








def pattern(path: str) -> str:
    """The diff path with list indices folded: ``$.content[1].input`` ->
    ``$.content[*].input``."""
    return re.sub(r"\[\d+\]", "[*]", path)


def diff_class(path: str, ours: Any, theirs: Any) -> str:
    """One line naming a kind of difference (no stream-specific values)."""
    if path == "<outcome>":
        sdk = str(theirs).split(":", 1)[0]
        mine = str(ours).split(":", 1)[0]
        return f"<outcome>: ssefold {mine} | sdk {sdk}"

    def kind(v: Any) -> str:
        if v == ABSENT:
            return "absent"
        if v is None:
            return "null"
        return type(v).__name__.replace("str", "string").replace("dict", "object").replace("list", "array")

    shape = f"ours {kind(ours)} | sdk {kind(theirs)}"
    if kind(ours) == kind(theirs):
        shape = f"both {kind(ours)}, values differ"
    return f"{pattern(path)}: {shape}"





# ---------------------------------------------------------------------------
# Deliberate differences: every difference the oracle finds must be one of
# these (dialect, difference class as printed by diff_class, the streams it
# may appear in, why). Each names the behaviour documented in the dialect's
# "Deliberate differences from the SDK" (src/providers/<dialect>.rs) or an SDK
# defect; a difference no rule explains fails the test. Broad classes (a text
# that differs) are limited to the streams that show the cause, so the same
# class elsewhere is a failure.
# ---------------------------------------------------------------------------

ANY = r".*"
SPLICED = r"rec/anthropic/vercel-ai/anthropic__(anthropic-programmatic-tool-calling\.1|anthropic-tool-search-.*|spliced-message-start)\.sse"
DELIBERATE: List[Tuple[str, str, str, str]] = [
    # -- Anthropic --------------------------------------------------------
    ("anthropic", r"\$\.content\[\*\]\.(content|encrypted_content): .*", ANY,
     "compaction_delta: content concatenated, encrypted_content the latest non-null (the SDK assigns both from each delta; GA ignores the delta)"),
    ("anthropic", r"\$\.content\[\*\](\.(text|thinking|signature))?: .*|\$\.(stop_reason|usage\.(input_tokens|output_tokens|server_tool_use)): .*", SPLICED,
     "several turns spliced into one recording: events after message_stop are ignored (the SDK folds them into the first message)"),
    ("anthropic", r"\$\.private_field\..*", r"peer/anthropic-sdk-python/extra_fields_response\.txt",
     "unknown message_delta members are folded (forward compatibility); the SDK drops them"),
    ("anthropic", r"<outcome>: ssefold IncompleteStreamError \| sdk ok", ANY,
     "a stream without message_stop is reported Incomplete (fold kept); the SDK returns it as if complete"),
    ("anthropic", r"<outcome>: ssefold ok \| sdk builtins\.(AttributeError|IndexError|ValueError)", ANY,
     "the SDK raises (usage omitted, bad indices, invalid tool JSON); ssefold folds with warnings or invalid_arguments"),
    # The GA helper lags the beta one (the reference): members it does not track yet.
    ("anthropic@anthropic", r"\$\.(context_management|usage\.(fallback_credit|iterations)|model|input_transformations.*|content\[\*\]\.input\..*): .*", ANY,
     "GA helper only: it does not fold context_management, fallback relabelling, input_transformations, usage.iterations/fallback_credit, mcp_tool_use input (the beta helper does)"),
    # -- OpenAI Chat --------------------------------------------------------
    ("openai_chat", r"\$\.(choices\[\*\]\.(content_filter_results.*|content_filter_offsets)|prompt_filter_results): .*", ANY,
     "Azure filter chunks (object \"\") are kept where they carry results; the SDK skips those chunks"),
    ("openai_chat", r"\$\.(system_fingerprint|usage|service_tier|x_groq.*|timings|time_info|p|sla_metrics.*|moderation.*)(\.[a-z_]+)*: .*", ANY,
     "top-level members: the first chunk that carries one sets it, later non-null values update it (the SDK keeps the first chunk's, or the last chunk's even when null)"),
    ("openai_chat", r"\$\.choices\[\*\]\.(native_finish_reason|matched_stop|seed|stop_reason|text|finish_reason|token_ids): .*", ANY,
     "choice members: later non-null values update (the SDK keeps the first chunk's values, concatenates strings, skips non-chunk objects)"),
    ("openai_chat", r"\$\.choices\[\*\]\.message\.role: .*", ANY,
     "a role repeated in every delta is kept once (the SDK concatenates: assistantassistant...); a role never sent is assistant"),
    ("openai_chat", r"\$\.choices\[\*\]\.message\.(token_id|reasoning_details\[\*\]\.(format|id)|obfuscation): .*", ANY,
     "generic delta merge: ids/format/numbers replaced, obfuscation dropped (the SDK concatenates strings and adds numbers)"),
    ("openai_chat", r"\$\.choices\[\*\]\.message\.content: ours array \| sdk string", ANY,
     "Mistral content parts with thinking fold to Mistral's own non-streaming shape (the SDK drops the array deltas)"),
    ("openai_chat", r"\$\.choices\[\*\]\.message\.(content|reasoning|tool_calls.*): .*",
     r"golden/openai_chat/(bad_input_warnings|index_zero_whole_calls)|rec/openai_chat/vercel-ai/cerebras__fixtures__cererebras-structured-output-tools\.1\.sse|rec/openai_chat/openllmetry/opentelemetry-instrumentation-writer__.*_legacy\.sse",
     "calls all at index 0 split by id, and nothing appended after a choice's finish_reason (the SDK glues ids, names, arguments and late text)"),
    ("openai_chat", r"\$\.choices\[\*\]\.message\.tool_calls\[\*\]\.(id|function\.name): both string, values differ",
     r"rec/openai_chat/llm/test_tools_streaming__test_tools_streaming_variant_a__i0\.sse",
     "a call's id and name repeated in every fragment are kept once (the SDK concatenates: 00, llm_versionllm_version)"),
    ("openai_chat", r"\$\.choices\[\*\]\.message\.tool_calls\[\*\]\.function\.arguments: ours string \| sdk null", ANY,
     "arguments: null folds to \"\" (the non-streaming shape has a string)"),
    ("openai_chat", r"\$\.unexpected: .*", r"golden/openai_chat/bad_input_warnings",
     "a chunk of the wrong shape: its other members kept (the SDK raises)"),
    ("openai_chat", r"<outcome>: ssefold IncompleteStreamError \| sdk ok", ANY,
     "a stream without [DONE] is reported Incomplete (fold kept); the SDK returns it as if complete"),
    ("openai_chat", r"<outcome>: ssefold ok \| sdk builtins\.(IndexError|RuntimeError|TypeError)", ANY,
     "the SDK raises (tool call without index, list delta without index, choices of the wrong shape); ssefold folds with warnings"),
    ("openai_chat", r"<outcome>: ssefold ok \| sdk builtins\.AssertionError", r"rec/openai_chat/openllmetry/opentelemetry-instrumentation-writer__.*_legacy\.sse",
     "the SDK asserts that a new tool call's type is \"function\" (Writer sends a later call's first fragment with type null); ssefold folds it (these bodies end without [DONE] after their finish_reason and usage: complete)"),
    # -- OpenAI Responses ---------------------------------------------------
    ("openai_responses", r"\$\.output\[\*\]: ours object \| sdk absent", r"golden/openai_responses/reasoning_text_tool",
     "a terminal output: [] while items were streamed keeps the streamed items (the SDK takes the empty list)"),
    ("openai_responses", r"<outcome>: ssefold ok \| sdk builtins\.(IndexError|RuntimeError)", ANY,
     "the SDK raises (response.incomplete instead of completed, identity changes, a delta before its part); ssefold folds with warnings"),
]


def explain(case: "Case", variant: str, path: str, ours: Any, theirs: Any) -> Optional[str]:
    """The deliberate difference that explains one difference, if any (a
    rule's dialect may name one SDK helper: ``dialect@helper``)."""
    cls = diff_class(path, ours, theirs)
    for scope, cls_re, stream_re, why in DELIBERATE:
        dialect, _, helper = scope.partition("@")
        if (
            dialect == case.dialect
            and helper in ("", variant)
            and re.fullmatch(cls_re, cls)
            and re.fullmatch(stream_re, case.id)
        ):
            return why
    return None


def unexplained(result: "Result") -> List[Tuple[str, Any, Any]]:
    """The differences of a comparison no deliberate rule explains."""
    return [d for d in result.diffs if explain(result.case, result.variant, *d) is None]
