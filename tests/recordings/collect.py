#!/usr/bin/env python3
"""Re-runnable collector for tests/recordings/.

Reads fetched bare git mirrors (one per source repository, at
$MIRRORS/<owner>+<name>/repo, default /work/.mirror), finds recorded
provider SSE streams in their test data (VCR cassettes, HAR files, raw
.sse/.txt streams, vercel/ai `*.chunks.txt`), decodes each body to the
bytes the server sent, classifies it by content into a dialect and writes
  tests/recordings/<dialect>/<source-slug>/<name>.sse
  tests/recordings/manifest.json
  tests/recordings/licenses/<owner>__<name>.LICENSE

Usage: python3 tests/recordings/collect.py [--mirrors DIR]
Only the standard library and PyYAML are needed.
"""
import argparse
import base64
import gzip
import hashlib
import json
import os
import re
import subprocess
import struct
import sys
import zlib

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_BODY = 2 * 1024 * 1024
MAX_CONTAINER = 12 * 1024 * 1024

# repo -> (slug, license id, license file in the repo, recorded?, note)
SOURCES = {
    "pydantic/pydantic-ai": ("pydantic-ai", "MIT", "LICENSE"),
    "vercel/ai": ("vercel-ai", "Apache-2.0", "LICENSE"),
    "simonw/llm": ("llm", "Apache-2.0", "LICENSE"),
    "simonw/llm-anthropic": ("llm-anthropic", "Apache-2.0", "LICENSE"),
    "simonw/llm-mistral": ("llm-mistral", "Apache-2.0", "LICENSE"),
    "simonw/llm-gemini": ("llm-gemini", "Apache-2.0", "LICENSE"),
    "Mirascope/mirascope": ("mirascope", "MIT", "LICENSE"),
    "crewAIInc/crewAI": ("crewai", "MIT", "LICENSE"),
    "anthropics/anthropic-sdk-go": ("anthropic-sdk-go", "MIT", "LICENSE"),
    "openai/openai-agents-python": ("openai-agents-python", "MIT", "LICENSE"),
    "567-labs/instructor": ("instructor", "MIT", "LICENSE"),
    "openai/openai-go": ("openai-go", "Apache-2.0", "LICENSE"),
    "traceloop/openllmetry": ("openllmetry", "Apache-2.0", "LICENSE"),
    "Arize-ai/openinference": ("openinference", "Apache-2.0", "LICENSE"),
    "pydantic/logfire": ("logfire", "MIT", "LICENSE"),
    "jackmpcollins/magentic": ("magentic", "MIT", "LICENSE"),
    "open-telemetry/opentelemetry-python-contrib": ("otel-python-contrib", "Apache-2.0", "LICENSE"),
    "tmc/langchaingo": ("langchaingo", "MIT", "LICENSE"),
    "openai/openai-python": ("openai-python", "Apache-2.0", "LICENSE"),
    "anthropics/anthropic-sdk-python": ("anthropic-sdk-python", "MIT", "LICENSE"),
    "anthropics/anthropic-sdk-typescript": ("anthropic-sdk-typescript", "MIT", "LICENSE"),
}

# Paths left out on purpose: (repo, path prefix, why).
EXCLUDE = [
    ("anthropics/anthropic-sdk-typescript", "tests/lib/fixtures/",
     "same recordings as anthropic-sdk-python's tests/lib/streaming/fixtures, already in tests/peer-fixtures "
     "(differ only in model name / trailing newline / whitespace)"),
]
EXTRA_SOURCES_FILE = os.path.join(HERE, "extra_sources.json")

# Files already in tests/peer-fixtures (skipped as duplicates), by sha256.
PEER_DIR = os.path.join(HERE, "..", "peer-fixtures")

# ---------------------------------------------------------------- git access


class Mirror:
    def __init__(self, gitdir):
        self.gitdir = gitdir
        self.commit = self.git("rev-parse", "HEAD").decode().strip()
        self.proc = subprocess.Popen(
            ["git", "--git-dir", gitdir, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def git(self, *args):
        return subprocess.run(["git", "--git-dir", self.gitdir, *args], check=True, capture_output=True).stdout

    def files(self):
        """(path, blob sha, size) of HEAD; size None when the blob is absent."""
        out = self.git("ls-tree", "-r", "-l", "-z", "HEAD")
        for rec in out.split(b"\0"):
            if not rec:
                continue
            meta, path = rec.split(b"\t", 1)
            mode, kind, sha, size = meta.split()
            if kind != b"blob":
                continue
            yield path.decode("utf-8", "replace"), sha.decode(), (int(size) if size.isdigit() else None)

    def blob(self, sha):
        self.proc.stdin.write(sha.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            return None
        n = int(header[2])
        data = self.proc.stdout.read(n)
        self.proc.stdout.read(1)
        return data


# ---------------------------------------------------------------- decoding


def decompress(data, encoding):
    enc = (encoding or "").lower()
    try:
        if "gzip" in enc or data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if "deflate" in enc:
            return zlib.decompress(data)
        if "br" in enc:
            try:
                import brotli  # noqa

                return brotli.decompress(data)
            except Exception:
                return None
        if "zstd" in enc:
            return None
    except Exception:
        return None
    return data


def header(headers, name):
    if not isinstance(headers, dict):
        return None
    for k, v in headers.items():
        if k.lower() == name:
            if isinstance(v, list):
                return ",".join(str(x) for x in v)
            return str(v)
    return None


def vcr_bodies(doc):
    """(interaction index, uri, bytes) of each response body of a vcrpy /
    go-vcr / pydantic-ai style cassette."""
    if isinstance(doc, dict) and "interactions" in doc:
        inter = doc["interactions"]
    elif isinstance(doc, list):
        inter = doc
    else:
        return
    for i, it in enumerate(inter or []):
        if not isinstance(it, dict):
            continue
        req = it.get("request") or {}
        resp = it.get("response") or {}
        uri = req.get("uri") or req.get("url") or ""
        body = resp.get("body")
        if isinstance(body, dict):
            body = body.get("string", body.get("base64_string"))
            if isinstance(resp.get("body"), dict) and "base64_string" in resp["body"]:
                body = base64.b64decode(resp["body"]["base64_string"])
        if body is None:
            continue
        if isinstance(body, str):
            raw = body.encode("utf-8")
        elif isinstance(body, bytes):
            raw = body
        else:
            continue
        enc = header(resp.get("headers"), "content-encoding")
        raw = decompress(raw, enc)
        if raw is None:
            continue
        yield i, uri, raw


def har_bodies(doc):
    for i, e in enumerate(((doc or {}).get("log") or {}).get("entries") or []):
        req = e.get("request") or {}
        content = (e.get("response") or {}).get("content") or {}
        text = content.get("text")
        if text is None:
            continue
        raw = base64.b64decode(text) if content.get("encoding") == "base64" else text.encode("utf-8")
        raw = decompress(raw, None)
        if raw is None:
            continue
        yield i, req.get("url", ""), raw


def dechunk(body):
    out = b""
    while body:
        line, _, rest = body.partition(b"\r\n")
        n = int(line.split(b";")[0].strip() or b"0", 16)
        if n == 0:
            break
        out += rest[:n]
        body = rest[n + 2 :]
    return out


def httprr_bodies(data):
    """langchaingo httprr traces: "httprr trace v1\n", then per exchange
    "<request bytes> <response bytes>\n", the raw request, the raw response."""
    if not data.startswith(b"httprr trace v1\n"):
        return
    pos = len(b"httprr trace v1\n")
    i = 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        a, b = (int(x) for x in data[pos:nl].split())
        req = data[nl + 1 : nl + 1 + a]
        resp = data[nl + 1 + a : nl + 1 + a + b]
        pos = nl + 1 + a + b
        first = req.split(b"\r\n", 1)[0].split(b" ")
        uri = first[1].decode() if len(first) > 1 else ""
        head, _, body = resp.partition(b"\r\n\r\n")
        hdrs = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            hdrs[k.decode().strip().lower()] = v.decode().strip()
        if "chunked" in hdrs.get("transfer-encoding", ""):
            body = dechunk(body)
        body = decompress(body, hdrs.get("content-encoding"))
        if body is not None:
            yield i, uri, body
        i += 1


# ---------------------------------------------------------------- classification

RE_ANTH = re.compile(rb'(^|\n)event: ?message_start|"type" ?: ?"message_start"')
RE_RESP = re.compile(rb'"type" ?: ?"response\.(created|in_progress|output_item|output_text|completed|failed|incomplete|queued)')
RE_CHAT = re.compile(rb'"object" ?: ?"chat\.completion\.chunk"')
RE_GEMINI = re.compile(rb'(^|\n)data: ?\{"candidates" ?: ?\[')
RE_DATA = re.compile(rb"(^|\n)data:")


def eventstream_messages(raw):
    """(headers, payload) of each AWS event-stream message of ``raw``, or
    None when it is not a whole event stream (prelude and message CRCs
    checked)."""
    out = []
    pos = 0
    while pos < len(raw):
        if len(raw) - pos < 16:
            return None
        total, hlen, pcrc = struct.unpack("!III", raw[pos:pos + 12])
        if zlib.crc32(raw[pos:pos + 8]) != pcrc or total < 16 or hlen > total - 16 or pos + total > len(raw):
            return None
        msg = raw[pos:pos + total]
        if zlib.crc32(msg[:-4]) != struct.unpack("!I", msg[-4:])[0]:
            return None
        headers, h = {}, msg[12:12 + hlen]
        i = 0
        while i < len(h):
            n = h[i]
            name = h[i + 1:i + 1 + n].decode("utf-8", "replace")
            kind = h[i + 1 + n]
            i += 2 + n
            if kind == 7 or kind == 6:
                ln = struct.unpack("!H", h[i:i + 2])[0]
                headers[name] = h[i + 2:i + 2 + ln].decode("utf-8", "replace")
                i += 2 + ln
            else:
                i += {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}.get(kind, len(h))
        out.append((headers, msg[12 + hlen:-4]))
        pos += total
    return out or None


def classify_eventstream(raw):
    """``bedrock`` (InvokeModelWithResponseStream of an Anthropic model),
    ``bedrock_converse`` (ConverseStream), or None."""
    msgs = eventstream_messages(raw)
    if not msgs:
        return None
    events = [h.get(":event-type") for h, _ in msgs if h.get(":message-type", "event") == "event"]
    if events and events[0] == "chunk":
        try:
            first = json.loads(base64.b64decode(json.loads(msgs[0][1])["bytes"]))
        except Exception:
            return None
        return "bedrock" if isinstance(first, dict) and first.get("type") == "message_start" else None
    if "messageStart" in events or "contentBlockDelta" in events:
        return "bedrock_converse"
    return None


def classify(raw):
    if raw[:1] == b"\x00":
        return classify_eventstream(raw)
    if not RE_DATA.search(raw):
        return None
    if RE_ANTH.search(raw):
        return "anthropic"
    if RE_RESP.search(raw):
        return "openai_responses"
    if RE_CHAT.search(raw):
        return "openai_chat"
    if RE_GEMINI.search(raw):
        return "gemini"
    return None


def classify_ndjson(raw):
    """Ollama's native `/api/chat` stream: newline-delimited JSON objects,
    at least two (a streamed answer), each with `done`, the ones that are
    not errors with a `message` object."""
    try:
        lines = [json.loads(line) for line in raw.decode("utf-8").split("\n") if line.strip()]
    except Exception:
        return None
    if len(lines) < 2 or not all(isinstance(o, dict) for o in lines):
        return None
    answer = [o for o in lines if "error" not in o]
    if answer and all("done" in o and isinstance(o.get("message"), dict) for o in answer):
        return "ollama"
    return None


EXTENSION = {"ollama": "ndjson", "bedrock": "bin", "bedrock_converse": "bin"}
# `"done"` as it appears in a cassette: plain, or escaped in a YAML / JSON string.
RE_DONE = re.compile(rb'\\?"done\\?"')


HOSTS = [
    ("localhost:3000/router/v2/openai", "openai"),
    ("localhost:5002", "unknown-local-server"),
    ("localhost:3000/router/v2/anthropic", "anthropic"),
    ("openai.azure.com", "azure"),
    ("crusoecloud", "crusoe"),
    ("api.z.ai", "zai"),
    ("bedrock-mantle", "bedrock-mantle"),
    ("snowflakecomputing", "snowflake-cortex"),
    ("api.writer.com", "writer"),
    ("azure", "azure"),
    ("api.openai.com", "openai"),
    ("api.anthropic.com", "anthropic"),
    ("api.groq.com", "groq"),
    ("openrouter.ai", "openrouter"),
    ("api.deepseek.com", "deepseek"),
    ("api.mistral.ai", "mistral"),
    ("api.together", "together"),
    ("fireworks.ai", "fireworks"),
    ("generativelanguage.googleapis.com", "gemini"),
    ("aiplatform.googleapis.com", "vertex"),
    ("api.x.ai", "xai"),
    ("api.cerebras.ai", "cerebras"),
    ("huggingface", "huggingface"),
    ("api.moonshot", "moonshot"),
    ("dashscope", "alibaba"),
    ("api.perplexity.ai", "perplexity"),
    ("bedrock-runtime", "bedrock"),
    ("localhost:11434", "ollama"),
    ("127.0.0.1:11434", "ollama"),
    ("ollama", "ollama"),
    ("api.cohere", "cohere"),
    ("nebius", "nebius"),
    ("api.sambanova", "sambanova"),
    ("litellm", "litellm-proxy"),
    ("vercel", "vercel-gateway"),
    ("api.githubcopilot", "github-copilot"),
    ("models.inference.ai.azure.com", "github-models"),
    ("heroku", "heroku"),
]


VERCEL_NAMES = ["github-copilot", "lmstudio", "xai", "azure", "openai", "anthropic", "deepseek", "groq", "mistral", "alibaba",
                "perplexity", "cerebras", "moonshotai", "google", "togetherai", "fireworks", "vercel"]


def provider_of(uri, path, raw, dialect):
    u = (uri or "").lower()
    if b'"model":"facebook/opt-125m"' in raw and "localhost:8000" in u:
        return "vllm"
    if path.startswith("packages/") and "__fixtures__" in path:
        fname = path.rsplit("/", 1)[1].lower()
        for n in VERCEL_NAMES:
            if fname.startswith(n + "-"):
                return {"google": "gemini"}.get(n, n)
    for key, name in HOSTS:
        if key in u:
            return name
    if b'"x_groq"' in raw:
        return "groq"
    if b'"prompt_filter_results"' in raw:
        return "azure"
    if b'"timings"' in raw:
        return "llama.cpp"
    p = path.lower()
    # vercel/ai: packages/<provider>/...
    m = re.match(r"packages/([^/]+)/", p)
    if m:
        pkg = m.group(1)
        return {"openai-compatible": "openai-compatible", "amazon-bedrock": "bedrock", "google": "gemini"}.get(pkg, pkg)
    for key in ["azure", "groq", "openrouter", "deepseek", "mistral", "together", "fireworks", "ollama", "xai", "gemini", "anthropic", "openai"]:
        if key in p:
            return key
    return {"anthropic": "anthropic", "openai_chat": "openai", "openai_responses": "openai", "gemini": "gemini"}[dialect]


# ---------------------------------------------------------------- coverage


def data_jsons(raw):
    out = []
    for line in raw.split(b"\n"):
        line = line.rstrip(b"\r")
        if line.startswith(b"data:"):
            s = line[5:].strip()
            if s and s != b"[DONE]":
                try:
                    out.append(json.loads(s))
                except Exception:
                    pass
    return out


def eventstream_covers(raw):
    """What an event-stream body holds: the exception types, and the
    block and delta kinds (ConverseStream) or Anthropic block types of its
    decoded chunks (InvokeModel)."""
    c = set()
    for headers, payload in eventstream_messages(raw) or []:
        if headers.get(":message-type") == "exception":
            c.add(headers.get(":exception-type", "exception"))
            continue
        try:
            p = json.loads(payload)
            if headers.get(":event-type") == "chunk":
                p = json.loads(base64.b64decode(p["bytes"]))
                kind = (p.get("content_block") or {}).get("type")
                if kind and kind != "text":
                    c.add(kind)
                continue
        except Exception:
            continue
        for part in ("start", "delta"):
            for k, v in (p.get(part) or {}).items():
                sub = part == "delta" and k == "reasoningContent" and isinstance(v, dict) and v
                c.add(f"{k}.{next(iter(v))}" if sub else k)
        if "trace" in p:
            c.add("trace")
    c.discard("text")
    return sorted(c)


def covers(raw, dialect):
    if dialect in ("bedrock", "bedrock_converse"):
        return eventstream_covers(raw)
    c = []
    t = raw
    objs = data_jsons(raw)

    def has(*needles):
        return any(n.encode() in t for n in needles)

    if dialect == "anthropic":
        starts = [o.get("content_block", {}).get("type") for o in objs if o.get("type") == "content_block_start"]
        if "thinking" in starts:
            c.append("thinking")
        if "redacted_thinking" in starts:
            c.append("redacted_thinking")
        if starts.count("tool_use") > 1:
            c.append("parallel_tool_calls")
        if "tool_use" in starts:
            c.append("tool_use")
        if "server_tool_use" in starts:
            c.append("server_tool_use")
        for s in sorted(x for x in set(starts) if x):
            if s and s.endswith("_tool_result"):
                c.append(s)
        if "web_search_tool_result" in starts:
            c.append("web_search")
        if any(s and "code_execution" in s for s in starts):
            c.append("code_execution")
        if any(s and s.startswith("mcp_") for s in starts):
            c.append("mcp")
        if "compaction" in starts:
            c.append("compaction")
        if has("citations_delta"):
            c.append("citations")
        if any(o.get("type") == "error" for o in objs):
            c.append("error_event")
        if any(o.get("type") == "ping" for o in objs):
            c.append("ping")
        for o in objs:
            if o.get("type") == "message_delta":
                sr = (o.get("delta") or {}).get("stop_reason")
                if sr and sr not in ("end_turn", "tool_use"):
                    c.append("stop_" + sr)
        if not any(o.get("type") == "message_stop" for o in objs):
            c.append("no_message_stop")
    elif dialect == "openai_chat":
        if objs and objs[0].get("object") == "" and "prompt_filter_results" in objs[0]:
            c.append("azure_first_chunk")
        if any("prompt_filter_results" in o for o in objs):
            c.append("prompt_filter_results")
        if any(o.get("choices") == [] for o in objs):
            c.append("empty_choices")
        if has('"content_filter_results"'):
            c.append("content_filter_results")
        if has('"x_groq"'):
            c.append("x_groq")
        if any("timings" in o for o in objs):
            c.append("llama_cpp_timings")
        if has('"reasoning_content"'):
            c.append("reasoning_content")
        if has('"reasoning_details"'):
            c.append("reasoning_details")
        if has('"extra_content"'):
            c.append("extra_content")
        deltas = [ch.get("delta") or {} for o in objs for ch in (o.get("choices") or []) if isinstance(ch, dict)]
        if any(isinstance(d.get("reasoning"), str) and d.get("reasoning") for d in deltas):
            c.append("reasoning_field")
        tc_idx = {tc.get("index") for d in deltas for tc in (d.get("tool_calls") or []) if isinstance(tc, dict)}
        if tc_idx:
            c.append("tool_calls")
        if len(tc_idx) > 1:
            c.append("parallel_tool_calls")
        if any(d.get("function_call") for d in deltas):
            c.append("function_call_deprecated")
        if any(d.get("audio") for d in deltas):
            c.append("audio")
        if any(d.get("annotations") for d in deltas):
            c.append("annotations")
        if any(d.get("refusal") for d in deltas):
            c.append("refusal")
        if has('"obfuscation"'):
            c.append("obfuscation")
        if any((ch.get("logprobs") or None) for o in objs for ch in (o.get("choices") or []) if isinstance(ch, dict)):
            c.append("logprobs")
        idx = {ch.get("index") for o in objs for ch in (o.get("choices") or []) if isinstance(ch, dict)}
        if len(idx) > 1:
            c.append("multiple_choices")
        if objs and objs[-1].get("usage"):
            c.append("usage_last_chunk")
        sf = [o.get("system_fingerprint") for o in objs if o.get("object") == "chat.completion.chunk"]
        if sf and not sf[0] and any(sf):
            c.append("system_fingerprint_late")
        if any("error" in o for o in objs):
            c.append("error_in_stream")
        fr = {ch.get("finish_reason") for o in objs for ch in (o.get("choices") or []) if isinstance(ch, dict)}
        for f in sorted(x for x in fr if x and x not in ("stop", "tool_calls")):
            c.append("finish_" + f)
        if b"data: [DONE]" not in t and b"data:[DONE]" not in t:
            c.append("no_done")
    elif dialect == "gemini":
        parts = [p for o in objs for c in (o.get("candidates") or []) if isinstance(c, dict)
                 for p in ((c.get("content") or {}).get("parts") or []) if isinstance(p, dict)]
        for key, name in [("functionCall", "function_call"), ("executableCode", "code_execution"),
                          ("inlineData", "inline_data"), ("thoughtSignature", "thought_signature")]:
            if any(key in p for p in parts):
                c.append(name)
        if any(p.get("thought") for p in parts):
            c.append("thought")
        if any("finishReason" in c2 for o in objs for c2 in (o.get("candidates") or []) if isinstance(c2, dict)):
            c.append("finish_reason")
        if any("groundingMetadata" in c2 for o in objs for c2 in (o.get("candidates") or []) if isinstance(c2, dict)):
            c.append("grounding")
    elif dialect == "ollama":
        return ollama_covers(raw)
    else:
        types = [o.get("type") for o in objs]
        items = []
        for o in objs:
            it = o.get("item")
            if isinstance(it, dict):
                items.append(it)
        itypes = {i.get("type") for i in items}
        if "reasoning" in itypes:
            c.append("reasoning")
        if any(i.get("encrypted_content") for i in items):
            c.append("encrypted_content")
        if any(t_ and t_.startswith("response.reasoning_summary") for t_ in types):
            c.append("reasoning_summary")
        if any(t_ and t_.startswith("response.reasoning_text") for t_ in types):
            c.append("reasoning_text")
        for it in sorted(x for x in itypes if x and x not in ("message", "reasoning")):
            c.append(it)
        fc = [i for i in items if i.get("type") == "function_call"]
        if len({i.get("id") for i in fc}) > 1:
            c.append("parallel_function_calls")
        if "mcp_call" in itypes or "mcp_list_tools" in itypes:
            c.append("mcp")
        if "web_search_call" in itypes:
            c.append("web_search")
        if "code_interpreter_call" in itypes:
            c.append("code_interpreter")
        for ev in ("response.incomplete", "response.failed", "error", "response.queued"):
            if ev in types:
                c.append(ev.replace("response.", "response_") if ev != "error" else "error_event")
        if "response.output_text.annotation.added" in types:
            c.append("annotations")
        if any(t_ and "refusal" in t_ for t_ in types):
            c.append("refusal")
        if has('"obfuscation"'):
            c.append("obfuscation")
        if has('"logprobs":[{') or has('"logprobs": [{'):
            c.append("logprobs")
        if not any(t_ in ("response.completed", "response.incomplete", "response.failed") for t_ in types):
            c.append("no_terminal_event")
    if re.search(rb"(^|\n)event: ?error", t):
        c.append("sse_event_error")
    if re.search(rb"(^|\n):", t):
        c.append("sse_comment")
    if re.search(rb"(^|\n)(id|retry):", t):
        c.append("sse_id_or_retry")
    if b"\r\n" in t:
        c.append("crlf")
    if not (t.endswith(b"\n\n") or t.endswith(b"\r\n\r\n")):
        c.append("no_final_blank_line")
    return c


def ollama_covers(raw):
    lines = [json.loads(line) for line in raw.decode("utf-8").split("\n") if line.strip()]
    msgs = [o.get("message") or {} for o in lines]
    c = []
    if any(m.get("thinking") for m in msgs):
        c.append("thinking")
    if any(m.get("tool_calls") for m in msgs):
        c.append("tool_calls")
    if any(m.get("images") for m in msgs):
        c.append("images")
    if any("error" in o for o in lines):
        c.append("error_line")
    reasons = sorted({str(o["done_reason"]) for o in lines if o.get("done_reason")})
    c.extend(f"done_reason_{r}" for r in reasons)
    if not any(o.get("done") is True for o in lines):
        c.append("no_done_line")
    if not raw.endswith(b"\n"):
        c.append("no_final_newline")
    return c


# ---------------------------------------------------------------- provenance


def recorded_and_note(repo, path, uri, raw, extraction):
    notes = []
    recorded = True
    if extraction.startswith("VCR"):
        notes.append("VCR cassette: the project records live HTTP traffic and replays it in tests")
    elif "__inline_snapshot__" in path:
        notes.append("inline-snapshot HTTP recording (request/response list) recorded from the live API by the SDK's test suite")
        notes[:] = notes[-1:]
    elif extraction.startswith("HAR"):
        notes.append("HAR cassette (Polly.js) recorded from live HTTP traffic")
    elif extraction.startswith("httprr"):
        notes.append("httprr trace: langchaingo records live HTTP traffic (llms/*/testdata) and replays it")
    elif extraction.startswith("vercel"):
        notes.append(
            "vercel/ai contributing/testing.md: chunk fixtures are captured from real API responses (saveRawChunks); "
            "each line is the provider's JSON chunk as re-serialized by JSON.stringify, so whitespace/escaping may differ "
            "from the wire bytes, and the SSE framing (data:/event: lines, blank lines, [DONE]) was added here"
        )
    if "localhost:5002" in (uri or ""):
        recorded = False
        notes.append("recorded from a local test server on localhost:5002, not a provider API (created is in ms): likely a mock")
    if b"sanitized" in raw:
        recorded = False
        notes.append("ids/timestamps were sanitized by the project: not unedited wire bytes")
    if "localhost:8000" in (uri or "") and b"opt-125m" in raw:
        notes.append("local vLLM server (model facebook/opt-125m, id chat-<hex>) — provider inferred from the model and port")
    if "/router/v2/" in (uri or ""):
        notes.append("recorded through Mirascope's router (a proxy in front of the provider)")
    return recorded, "; ".join(notes)


# ---------------------------------------------------------------- collection


def slugify(s):
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("_")
    return s[:150]


def wrap_chunks(text, dialect):
    out = []
    for line in text.split("\n"):
        line = line.strip("\r")
        if not line.strip():
            continue
        if dialect == "anthropic":
            typ = json.loads(line).get("type")
            out.append(f"event: {typ}\ndata: {line}\n\n")
        else:
            out.append(f"data: {line}\n\n")
    return "".join(out).encode("utf-8")


def classify_chunks(text):
    objs = []
    for line in text.split("\n"):
        if line.strip():
            try:
                objs.append(json.loads(line))
            except Exception:
                return None
    if not objs or not all(isinstance(o, dict) for o in objs):
        return None
    if any(o.get("type") == "message_start" for o in objs):
        return "anthropic"
    if any(str(o.get("type", "")).startswith("response.") for o in objs):
        return "openai_responses"
    if any(o.get("object") == "chat.completion.chunk" for o in objs):
        return "openai_chat"
    if all("candidates" in o or "usageMetadata" in o for o in objs) and any("candidates" in o for o in objs):
        return "gemini"
    return None


def candidates_of(path, size):
    p = path.lower()
    if size is None or size > MAX_CONTAINER:
        return None
    if p.endswith(".chunks.txt"):
        return "chunks"
    if p.endswith((".yaml", ".yml")) and ("cassette" in p or "fixture" in p or "testdata" in p or "vcr" in p):
        return "vcr"
    if p.endswith(".har"):
        return "har"
    if p.endswith(".httprr"):
        return "httprr"
    if p.endswith(".json") and ("cassette" in p or "__inline_snapshot__" in p):
        return "vcr_json"
    if p.endswith((".sse", ".txt", ".stream", ".jsonl", ".ndjson", ".bin")) and (
        "test" in p or "fixture" in p or "snapshot" in p
    ):
        return "raw"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", default=os.environ.get("MIRRORS", "/work/.mirror"))
    ap.add_argument("--out", default=HERE)
    args = ap.parse_args()
    sources = dict(SOURCES)
    if os.path.exists(EXTRA_SOURCES_FILE):
        for k, v in json.load(open(EXTRA_SOURCES_FILE)).items():
            sources[k] = tuple(v)

    seen = {}
    if os.path.isdir(PEER_DIR):
        for root, _, fs in os.walk(PEER_DIR):
            for f in fs:
                seen[hashlib.sha256(open(os.path.join(root, f), "rb").read()).hexdigest()] = "peer-fixtures"
    manifest = []
    names = set()
    skipped = {"dup": 0, "too_big": 0, "absent": 0}
    for repo, (slug, lic, licfile) in sorted(sources.items()):
        gitdir = os.path.join(args.mirrors, repo.replace("/", "+"), "repo")
        if not os.path.isdir(gitdir):
            print(f"missing mirror {gitdir}", file=sys.stderr)
            continue
        m = Mirror(gitdir)
        files = list(m.files())
        count = 0
        for path, sha, size in files:
            kind = candidates_of(path, size)
            if any(repo == r and path.startswith(pre) for r, pre, _ in EXCLUDE):
                continue
            if kind is None:
                if size is None and candidates_of(path, 0):
                    skipped["absent"] += 1
                continue
            data = m.blob(sha)
            if data is None:
                skipped["absent"] += 1
                continue
            bodies = []  # (raw, dialect, uri, extraction, recorded)
            if kind == "chunks":
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                d = classify_chunks(text)
                if d:
                    bodies.append((wrap_chunks(text, d), d, "", "vercel chunks.txt wrapped as SSE", None))
            elif kind in ("vcr", "vcr_json", "har", "httprr"):
                if kind != "httprr" and not (
                    b"data:" in data or b"!!binary" in data or b"base64" in data or b"gzip" in data or RE_DONE.search(data)
                ):
                    continue
                try:
                    if kind == "httprr":
                        doc = data
                    elif kind == "vcr":
                        doc = yaml.load(data, Loader=yaml.CSafeLoader)
                    else:
                        doc = json.loads(data)
                except Exception:
                    continue
                it = {"har": har_bodies, "httprr": httprr_bodies}.get(kind, vcr_bodies)(doc)
                multi = []
                try:
                    for i, uri, raw in it:
                        d = classify(raw) or classify_ndjson(raw)
                        if d:
                            what = {"har": "HAR entry", "httprr": "httprr trace response body"}.get(kind, "VCR cassette body")
                            if "__inline_snapshot__" in path:
                                what = "inline-snapshot HTTP recording body"
                            multi.append((raw, d, uri, f"{what} (interaction {i})", i))
                except Exception:
                    pass
                bodies.extend(multi)
            else:
                d = classify(data) or classify_ndjson(data)
                if d:
                    bodies.append((data, d, "", "raw file", None))
                elif path.endswith((".txt", ".jsonl", ".ndjson")):
                    try:
                        d = classify_chunks(data.decode("utf-8"))
                    except Exception:
                        d = None
                    if d:
                        bodies.append((wrap_chunks(data.decode("utf-8"), d), d, "", "JSON-lines chunks wrapped as SSE", None))
            n_in_file = len(bodies)
            for raw, d, uri, extraction, idx in bodies:
                if len(raw) > MAX_BODY:
                    skipped["too_big"] += 1
                    continue
                h = hashlib.sha256(raw).hexdigest()
                if h in seen:
                    skipped["dup"] += 1
                    continue
                seen[h] = path
                base = path
                for pre in ("tests/", "test/", "lib/", "python/tests/", "typescript/tests/", "packages/"):
                    if base.startswith(pre):
                        base = base[len(pre):]
                base = re.sub(r"\.(chunks\.txt|yaml|yml|har|json|sse|txt)$", "", base)
                base = base.replace("/src/", "/").replace("/cassettes/", "/").replace("/__fixtures__/", "/").replace("cassettes/", "")
                name = slugify(base.replace("/", "__"))
                if n_in_file > 1 and idx is not None:
                    name += f"__i{idx}"
                ext = EXTENSION.get(d, "sse")
                rel = f"{d}/{slug}/{name}.{ext}"
                k = 2
                while rel in names:
                    rel = f"{d}/{slug}/{name}_{k}.{ext}"
                    k += 1
                names.add(rel)
                dest = os.path.join(args.out, rel)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "wb") as f:
                    f.write(raw)
                recorded, note = recorded_and_note(repo, path, uri, raw, extraction)
                entry = {
                    "file": rel,
                    "dialect": d,
                    "provider": provider_of(uri, path, raw, d),
                    "repo": repo,
                    "path": path,
                    "commit": m.commit,
                    "license": lic,
                    "extraction": extraction,
                    "recorded": recorded,
                    "covers": covers(raw, d),
                }
                if uri:
                    entry["request_uri"] = re.sub(r"\?.*", "", uri)
                if note:
                    entry["note"] = note
                manifest.append(entry)
                count += 1
        if not count:
            print(f"{repo}: no streams", file=sys.stderr)
            continue
        lic_bytes = m.git("show", f"HEAD:{licfile}")
        os.makedirs(os.path.join(args.out, "licenses"), exist_ok=True)
        with open(os.path.join(args.out, "licenses", repo.replace("/", "__") + ".LICENSE"), "wb") as f:
            f.write(lic_bytes)
        print(f"{repo}: {count} streams at {m.commit}", file=sys.stderr)
    manifest.sort(key=lambda e: e["file"])
    apply_overrides(manifest)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"total {len(manifest)}; skipped {skipped}", file=sys.stderr)
    write_readme(args.out, manifest, sources, skipped)


OVERRIDES_FILE = os.path.join(HERE, "overrides.json")


def apply_overrides(manifest):
    """Per-repo / per-file corrections (recorded flag, provider) kept in
    overrides.json: {"repo or file prefix": {field: value, ...}}."""
    if not os.path.exists(OVERRIDES_FILE):
        return
    ov = json.load(open(OVERRIDES_FILE))
    for e in manifest:
        for key, fields in ov.items():
            if e["repo"] == key or e["file"].startswith(key) or e["path"].startswith(key):
                e.update(fields)


# ---------------------------------------------------------------- README

def _has(e, dialect=None, cover=None, provider=None):
    return ((dialect is None or e["dialect"] == dialect) and (cover is None or cover in e["covers"])
            and (provider is None or e["provider"] == provider))


# (shape from the brief, predicate)
SHAPES = [
    ("Azure OpenAI first chunk (`object: \"\"`, `prompt_filter_results`, empty `choices`)", lambda e: _has(e, "openai_chat", "azure_first_chunk")),
    ("Azure OpenAI (any, chat or responses)", lambda e: _has(e, provider="azure")),
    ("vLLM", lambda e: _has(e, provider="vllm")),
    ("Groq `x_groq`", lambda e: _has(e, "openai_chat", "x_groq")),
    ("Mistral", lambda e: _has(e, provider="mistral")),
    ("OpenRouter", lambda e: _has(e, provider="openrouter")),
    ("OpenRouter `reasoning_details`", lambda e: _has(e, "openai_chat", "reasoning_details", "openrouter")),
    ("`reasoning_details` (any provider)", lambda e: _has(e, "openai_chat", "reasoning_details")),
    ("Together", lambda e: _has(e, provider="together")),
    ("DeepSeek `reasoning_content`", lambda e: _has(e, "openai_chat", "reasoning_content", "deepseek")),
    ("`reasoning_content` (any provider)", lambda e: _has(e, "openai_chat", "reasoning_content")),
    ("chat `delta.reasoning` string (Ollama/Groq/OpenRouter style)", lambda e: _has(e, "openai_chat", "reasoning_field")),
    ("Ollama OpenAI endpoint", lambda e: _has(e, "openai_chat", provider="ollama")),
    ("Ollama native `/api/chat` (NDJSON)", lambda e: _has(e, "ollama")),
    ("Ollama `/api/chat` thinking", lambda e: _has(e, "ollama", "thinking")),
    ("Ollama `/api/chat` tool calls", lambda e: _has(e, "ollama", "tool_calls")),
    ("llama.cpp `timings`", lambda e: _has(e, "openai_chat", "llama_cpp_timings")),
    ("Gemini OpenAI-compatible endpoint", lambda e: _has(e, "openai_chat", provider="gemini")),
    ("Gemini `extra_content`", lambda e: _has(e, "openai_chat", "extra_content")),
    ("Fireworks", lambda e: _has(e, provider="fireworks")),
    ("xAI", lambda e: _has(e, provider="xai")),
    ("Anthropic thinking", lambda e: _has(e, "anthropic", "thinking")),
    ("Anthropic redacted_thinking", lambda e: _has(e, "anthropic", "redacted_thinking")),
    ("Anthropic server tool web_search", lambda e: _has(e, "anthropic", "web_search")),
    ("Anthropic code execution", lambda e: _has(e, "anthropic", "code_execution")),
    ("Anthropic MCP (mcp_tool_use / mcp_tool_result)", lambda e: _has(e, "anthropic", "mcp")),
    ("Anthropic compaction", lambda e: _has(e, "anthropic", "compaction")),
    ("Anthropic citations_delta", lambda e: _has(e, "anthropic", "citations")),
    ("Anthropic parallel tool_use blocks", lambda e: _has(e, "anthropic", "parallel_tool_calls")),
    ("Anthropic `error` event", lambda e: _has(e, "anthropic", "error_event")),
    ("Anthropic stop_reason max_tokens", lambda e: _has(e, "anthropic", "stop_max_tokens")),
    ("Anthropic stop_reason refusal", lambda e: _has(e, "anthropic", "stop_refusal")),
    ("Anthropic stop_reason pause_turn", lambda e: _has(e, "anthropic", "stop_pause_turn")),
    ("chat tool_calls", lambda e: _has(e, "openai_chat", "tool_calls")),
    ("chat parallel tool calls", lambda e: _has(e, "openai_chat", "parallel_tool_calls")),
    ("chat `function_call` (deprecated)", lambda e: _has(e, "openai_chat", "function_call_deprecated")),
    ("chat `audio`", lambda e: _has(e, "openai_chat", "audio")),
    ("chat `annotations`", lambda e: _has(e, "openai_chat", "annotations")),
    ("chat `refusal`", lambda e: _has(e, "openai_chat", "refusal")),
    ("chat `logprobs`", lambda e: _has(e, "openai_chat", "logprobs")),
    ("chat n>1 (several choices)", lambda e: _has(e, "openai_chat", "multiple_choices")),
    ("chat `obfuscation`", lambda e: _has(e, "openai_chat", "obfuscation")),
    ("chat `usage` in the last chunk", lambda e: _has(e, "openai_chat", "usage_last_chunk")),
    ("chat `system_fingerprint` late (null first, set later)", lambda e: _has(e, "openai_chat", "system_fingerprint_late")),
    ("chat error object inside the stream", lambda e: _has(e, "openai_chat", "error_in_stream")),
    ("chat SSE `event: error`", lambda e: _has(e, "openai_chat", "sse_event_error")),
    ("chat without `data: [DONE]`", lambda e: _has(e, "openai_chat", "no_done")),
    ("chat finish_reason length", lambda e: _has(e, "openai_chat", "finish_length")),
    ("Responses reasoning item", lambda e: _has(e, "openai_responses", "reasoning")),
    ("Responses reasoning `encrypted_content`", lambda e: _has(e, "openai_responses", "encrypted_content")),
    ("Responses reasoning summary deltas", lambda e: _has(e, "openai_responses", "reasoning_summary")),
    ("Responses function_call", lambda e: _has(e, "openai_responses", "function_call")),
    ("Responses parallel function calls", lambda e: _has(e, "openai_responses", "parallel_function_calls")),
    ("Responses custom_tool_call", lambda e: _has(e, "openai_responses", "custom_tool_call")),
    ("Responses MCP (mcp_list_tools / mcp_call)", lambda e: _has(e, "openai_responses", "mcp")),
    ("Responses mcp_call", lambda e: _has(e, "openai_responses", "mcp_call")),
    ("Responses code_interpreter_call", lambda e: _has(e, "openai_responses", "code_interpreter_call")),
    ("Responses web_search_call", lambda e: _has(e, "openai_responses", "web_search_call")),
    ("Responses file_search_call", lambda e: _has(e, "openai_responses", "file_search_call")),
    ("Responses image_generation_call", lambda e: _has(e, "openai_responses", "image_generation_call")),
    ("Responses compaction", lambda e: _has(e, "openai_responses", "compaction")),
    ("Responses `response.incomplete`", lambda e: _has(e, "openai_responses", "response_incomplete")),
    ("Responses `response.failed`", lambda e: _has(e, "openai_responses", "response_failed")),
    ("Responses `error` event", lambda e: _has(e, "openai_responses", "error_event")),
    ("Responses annotations (`response.output_text.annotation.added`)", lambda e: _has(e, "openai_responses", "annotations")),
    ("Responses refusal", lambda e: _has(e, "openai_responses", "refusal")),
    ("Responses `obfuscation`", lambda e: _has(e, "openai_responses", "obfuscation")),
    ("Responses without a terminal event", lambda e: _has(e, "openai_responses", "no_terminal_event")),
    ("CRLF line endings", lambda e: "crlf" in e["covers"]),
    ("no blank line after the last event", lambda e: "no_final_blank_line" in e["covers"]),
    ("SSE comment lines", lambda e: "sse_comment" in e["covers"]),
]


def write_readme(out, manifest, sources, skipped):
    import collections

    L = []
    w = L.append
    w("# Recorded provider streams from other projects' test suites")
    w("")
    w("Real Server-Sent-Event bodies of the Anthropic Messages, OpenAI Chat Completions, OpenAI Responses and Gemini APIs")
    w("(and of OpenAI-compatible servers), newline-delimited JSON bodies of Ollama's native `/api/chat`, and Amazon")
    w("Bedrock's AWS event-stream bodies (`InvokeModelWithResponseStream` of Anthropic models: `bedrock`; `ConverseStream`:")
    w("`bedrock_converse`), taken from the recorded HTTP traffic that public projects keep with their tests (VCR")
    w("cassettes, HAR files, httprr traces, inline-snapshot recordings, raw fixture files). They are test")
    w("data only: `tests/recordings.rs` feeds every one through `ssefold::providers` whole, in 1-byte chunks and in")
    w("random chunkings, and checks only that nothing panics, that `auto` detects the manifest's dialect and that")
    w("events, folded message and ending do not depend on the chunking. No code was copied from these projects.")
    w("")
    w("Layout: `<dialect>/<source-slug>/<name>.sse` (`.ndjson` for Ollama, `.bin` for the binary event-stream bodies); `manifest.json` has one object per file (source repository,")
    w("path, commit, license, how it was extracted, whether it is a live recording, request URI when the recording")
    w("has one, what it covers); `licenses/<owner>__<name>.LICENSE` is the license file of each source repository.")
    w("This file is generated by `collect.py` (do not edit by hand).")
    w("")
    w(f"**{len(manifest)} streams.** By dialect: " + ", ".join(f"{k} {v}" for k, v in sorted(collections.Counter(e['dialect'] for e in manifest).items())) + ".")
    w("")
    w("## Licenses and sources")
    w("")
    w("| source repository | license | commit | streams | slug |")
    w("| --- | --- | --- | --- | --- |")
    per = collections.Counter(e["repo"] for e in manifest)
    commits = {e["repo"]: e["commit"] for e in manifest}
    for repo, (slug, lic, _) in sorted(sources.items()):
        if per.get(repo):
            w(f"| {repo} | {lic} | `{commits[repo]}` | {per[repo]} | `{slug}` |")
    w("")
    w("Every file is covered by the license of its source repository (copy in `licenses/`). Apache-2.0 sources:")
    w("anyone who redistributes these files must keep this attribution and pass on the license copy.")
    w("Repositories that were searched but gave no stream: " + ", ".join(sorted(r for r in sources if not per.get(r))) + ".")
    w("")
    w("## How they were obtained")
    w("")
    w("1. Each source repository's newest stored snapshot was fetched as a bare git mirror (`<mirrors>/<owner>+<name>/repo`).")
    w("2. `python3 tests/recordings/collect.py --mirrors <dir>` walks `HEAD` of each mirror, reads candidate files")
    w("   (`*.yaml`/`*.yml` under cassette/fixture/testdata folders, `*.har`, `*.httprr`, `__inline_snapshot__/*.json`,")
    w("   `*.chunks.txt`, raw `*.sse`/`*.txt`/`*.bin` test fixtures), and extracts every response body:")
    w("   * VCR cassettes (vcrpy, pytest-recording, go-vcr, pydantic-ai's variant): YAML-loaded, `response.body.string`")
    w("     taken as is; when it is binary (`!!binary`) and gzip/deflate-encoded (Content-Encoding or magic bytes) it is")
    w("     decompressed: the file holds the bytes the server sent, after content decoding.")
    w("   * HAR (Polly.js): `entries[].response.content.text` (base64-decoded when `encoding` is base64).")
    w("   * httprr (langchaingo): the raw HTTP response after the header block (de-chunked / decompressed if needed).")
    w("   * vercel/ai `*.chunks.txt`: one JSON chunk per line, **re-serialized by the capture script**, so these are")
    w("     wrapped here as `data: <line>\\n\\n` (chat, responses) or `event: <type>\\ndata: <line>\\n\\n` (Anthropic),")
    w("     with no `[DONE]`; their `extraction` says so.")
    w("3. A body is kept when it has `data:` lines and its content is one of the dialects: `message_start` (Anthropic),")
    w("   a `\"type\":\"response.…\"` event (Responses), `chat.completion.chunk` (Chat), or a `data: {\"candidates\": [`")
    w("   line / chunk objects with `candidates` (Gemini); or, without `data:` lines, when it is two or more JSON")
    w("   objects, one per line, each with `done` and (unless it is an `error` line) a `message` object (Ollama's")
    w("   `/api/chat` with `stream: true`; `/api/generate` bodies, with `response`, are not taken). Bodies over 2 MB, byte-identical")
    w("   duplicates (also of `tests/peer-fixtures/`), error pages and non-SSE bodies are skipped. A body that is a whole AWS")
    w("   event stream (every prelude and message CRC checked) is kept when its first event is a `chunk` holding an Anthropic")
    w("   `message_start` (`bedrock`; Titan, Nova, Llama InvokeModel bodies are not) or it has `messageStart` /")
    w("   `contentBlockDelta` events (`bedrock_converse`); their `covers` lists block, delta and exception kinds. Blobs the snapshot")
    w("   does not hold (large files) are skipped.")
    w("4. `provider` is taken from the recorded request URI's host, else from the fixture's package/file name.")
    w("5. `covers` is computed from the content (see `covers()` in collect.py).")
    w("")
    w(f"Skipped during the last run: {skipped}.")
    w("")
    w("`recorded: true` means the source project records live HTTP traffic for these files (VCR / HAR / httprr /")
    w("inline-snapshot recordings, or vercel/ai's documented saveRawChunks capture). `recorded: false` has a `note`")
    w("with the reason (sanitized bodies, a local mock server). Note that some projects scrub ids or keys in their")
    w("cassettes; the bytes are kept as the project stores them.")
    w("")
    w("Caveats:")
    w("* Cassette serializers can normalize what they store: YAML literal blocks (pydantic-ai, some vcrpy setups)")
    w("  cannot hold CR characters, and several projects scrub ids, keys or headers. No recording here has CRLF line")
    w("  endings, so CRLF framing is not exercised by this set.")
    w("* vercel/ai chunk files are not wire bytes (see above); everything else is the stored response body unchanged.")
    w("* `provider` for recordings without a request URI (vercel/ai, raw files) comes from the fixture's package or")
    w("  file name; `vllm` for the two openllmetry recordings is inferred from `localhost:8000` + `facebook/opt-125m`.")
    w("* Many recordings come from the same few test suites (Mirascope alone gives about 470), so shapes are")
    w("  repeated; the coverage table below says how many streams show each shape.")
    w("")
    w("Left out on purpose:")
    for r, pre, why in EXCLUDE:
        w(f"* `{r}` `{pre}`: {why}.")
    w("")
    w("## Streams per provider")
    w("")
    w("| provider | anthropic | openai_chat | openai_responses | gemini | total |")
    w("| --- | --- | --- | --- | --- | --- |")
    pc = collections.Counter((e["provider"], e["dialect"]) for e in manifest)
    provs = collections.Counter(e["provider"] for e in manifest)
    for pname, n in provs.most_common():
        w(f"| {pname} | {pc[(pname, 'anthropic')]} | {pc[(pname, 'openai_chat')]} | {pc[(pname, 'openai_responses')]} | {pc[(pname, 'gemini')]} | {n} |")
    w("")
    w("## Coverage of the requested shapes")
    w("")
    w("| shape | streams | examples |")
    w("| --- | --- | --- |")
    missing = []
    for name, pred in SHAPES:
        hits = [e["file"] for e in manifest if pred(e)]
        if not hits:
            missing.append(name)
        ex = "<br>".join(f"`{h}`" for h in hits[:3]) if hits else "**none**"
        w(f"| {name} | {len(hits)} | {ex} |")
    w("")
    w("**Not covered by any recording:** " + ("; ".join(missing) if missing else "nothing") + ".")
    w("")
    w("## Re-running")
    w("")
    w("```")
    w("python3 tests/recordings/collect.py --mirrors /path/to/mirrors   # needs PyYAML")
    w("cargo test --test behaviour recordings::")
    w("```")
    w("")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
