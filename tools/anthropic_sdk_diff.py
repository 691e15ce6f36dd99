"""Scratch differential check: fold Anthropic SSE recordings with the official
Python SDK's beta stream helper (over an httpx2/httpx MockTransport) and with
`ssefold fold --provider anthropic`, and print where the folded messages differ.

    python tools/anthropic_sdk_diff.py [FILE...]   (needs `pip install anthropic`)

Defaults to tests/fixtures/anthropic/*.sse and tests/peer-fixtures/anthropic-*/*.
"""
import glob
import json
import os
import subprocess
import sys

import anthropic

try:
    import httpx2 as httpx  # anthropic >= 2.x
except ImportError:  # pragma: no cover
    import httpx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "ssefold")


def sdk_fold(body: bytes):
    def handler(request):
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = anthropic.Anthropic(api_key="x", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    error = None
    stream_mgr = client.beta.messages.stream(model="m", max_tokens=1, messages=[{"role": "user", "content": "hi"}])
    stream = stream_mgr.__enter__()
    try:
        for _ in stream:
            pass
    except Exception as e:  # noqa: BLE001
        error = f"{type(e).__name__}: {str(e)[:120]}"
    snapshot = stream._MessageStream__final_message_snapshot if hasattr(stream, "_MessageStream__final_message_snapshot") else None
    if snapshot is None:
        snapshot = getattr(stream, "_BetaMessageStream__final_message_snapshot", None)
    msg = snapshot.to_dict(mode="json") if snapshot is not None else None
    return msg, error


def ours(path: str):
    out = subprocess.run([CLI, "fold", "--provider", "anthropic", path], capture_output=True, text=True)
    lines = out.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line == "{" or line == "null"), None)
    msg = json.loads("\n".join(lines[start:])) if start is not None else None
    return msg, out.stderr.strip().splitlines()


def diff(a, b, path="$"):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) is None and b.get(k) is None:
                continue  # absent = null (to_dict leaves unset fields out)
            if k not in a:
                yield f"{path}.{k}: sdk lacks, ours {json.dumps(b[k])[:100]}"
            elif k not in b:
                yield f"{path}.{k}: ours lacks, sdk {json.dumps(a[k])[:100]}"
            else:
                yield from diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: sdk {json.dumps(a)[:100]} / ours {json.dumps(b)[:100]}"


def main(files):
    files = files or sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/anthropic/*.sse"))) + sorted(
        f for f in glob.glob(os.path.join(ROOT, "tests/peer-fixtures/anthropic-*/*")) if not f.endswith("LICENSE")
    )
    same = 0
    for f in files:
        with open(f, "rb") as fh:
            body = fh.read()
        sdk, error = sdk_fold(body)
        mine, stderr = ours(f)
        diffs = list(diff(sdk, mine))
        name = os.path.relpath(f, ROOT)
        if not diffs and not error:
            same += 1
            continue
        print(f"== {name}" + (f"  [SDK raised {error}]" if error else ""))
        for d in diffs:
            print("   ", d)
    print(f"{same}/{len(files)} identical")


if __name__ == "__main__":
    main(sys.argv[1:])
