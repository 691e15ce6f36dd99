"""Differential check of the OpenAI Chat fold against the official SDK.

Folds each chat SSE file with the `openai` Python SDK
(`client.chat.completions.stream(...)` over an `httpx.MockTransport`) and
with `target/debug/ssefold fold --provider openai-chat FILE`, and prints
where the folded messages differ. The deliberate differences are listed in
the module docs of src/providers/openai_chat/mod.rs ("Deliberate differences
from the SDK"); anything else it prints is a bug on one side.

    python3 -m venv /tmp/oai-venv && /tmp/oai-venv/bin/pip install openai
    cargo build && /tmp/oai-venv/bin/python tools/chat_sdk_diff.py [FILE.sse ...]

Without arguments: tests/fixtures/openai_chat/*.sse and
tests/peer-fixtures/openai-python/*.sse. SDK model defaults (`None` members
ssefold omits) are not reported.
"""
import glob
import json
import os
import subprocess
import sys

import httpx
import openai

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SSEFOLD = os.path.join(ROOT, "target/debug/ssefold")

def sdk_fold(body: bytes):
    def handler(request):
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    client = openai.OpenAI(api_key="x", base_url="http://test/v1", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    stream = None
    error = None
    try:
        with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as stream:
            for _ in stream:
                pass
            d = stream.get_final_completion().model_dump(mode="json")
    except Exception as e:  # the SDK gave up: compare what it had folded
        error = f"{type(e).__name__}: {str(e)[:100]}"
        try:
            d = stream.current_completion_snapshot.model_dump(mode="json")
        except Exception:
            return {"__sdk_error__": error}
    for ch in d.get("choices", []):
        m = ch.get("message", {})
        if m.get("parsed") is None:
            m.pop("parsed", None)
        for tc in m.get("tool_calls") or []:
            tc.get("function", {}).pop("parsed_arguments", None)
    if error:
        d["__sdk_error__"] = error
    return d


def ours(path):
    p = subprocess.run([SSEFOLD, "fold", "--provider", "openai-chat", path], capture_output=True)
    # stdout: the streamed text (as the CLI shows it), then the folded JSON.
    text = p.stdout.decode()
    for at in [0] + [i + 1 for i in range(len(text)) if text.startswith("\n{", i)]:
        try:
            return json.loads(text[at:])
        except ValueError:
            continue
    return {"__ssefold_error__": p.stderr.decode()[-300:]}


def diff(a, b, path=""):
    out = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in b and a.get(k) is None:
                continue  # an SDK model default
            if k not in a:
                out.append(f"{path}.{k}: sdk missing, ours={json.dumps(b[k])[:120]}")
            elif k not in b:
                out.append(f"{path}.{k}: ours missing, sdk={json.dumps(a[k])[:120]}")
            else:
                out += diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, f"{path}[{i}]")
    elif a != b:
        out.append(f"{path}: sdk={json.dumps(a)[:150]} ours={json.dumps(b)[:150]}")
    return out

files = sys.argv[1:] or sorted(
    glob.glob(os.path.join(ROOT, "tests/fixtures/openai_chat/*.sse"))
    + glob.glob(os.path.join(ROOT, "tests/peer-fixtures/openai-python/*.sse"))
)
for f in files:
    with open(f, "rb") as fh:
        a = sdk_fold(fh.read())
    b = ours(f)
    d = diff(a, b)
    print(f"== {os.path.relpath(f, ROOT)}: {'same' if not d else str(len(d)) + ' differences'}")
    for line in d:
        print("   ", line)
