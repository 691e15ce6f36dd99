#!/usr/bin/env python3
"""Scratch differential check: fold each Responses .sse through the official
`openai` SDK (`client.responses.stream(...).get_final_response()`, over an
httpx.MockTransport) and through `target/debug/ssefold fold --provider
openai-responses`, and print where the folded responses differ.

    python tools/diff_responses_sdk.py [FILE.sse ...]

Default: tests/fixtures/openai_responses/*.sse. Needs `pip install openai`.
"""
import glob
import json
import subprocess
import sys

try:
    import httpx
except ImportError:  # newer SDKs ship httpx2
    import httpx2 as httpx
import openai

SDK_ONLY = {"parsed", "parsed_arguments"}  # the SDK's parse helpers, not the wire


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in SDK_ONLY}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def sdk_fold(body: bytes):
    transport = httpx.MockTransport(
        lambda req: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    )
    client = openai.OpenAI(api_key="x", base_url="http://test/v1", http_client=httpx.Client(transport=transport))
    last = None
    try:
        with client.responses.stream(model="m", input="hi") as stream:
            for event in stream:
                # For response.incomplete / .failed the SDK's event carries the
                # response it folded (get_final_response() only exists after
                # response.completed).
                if event.type in ("response.incomplete", "response.failed"):
                    last = event.response
            final = stream.get_final_response()
        return "ok", strip(final.model_dump(mode="json", exclude_unset=True))
    except Exception as e:  # the SDK's verdict is part of the comparison
        if last is not None:
            return f"{type(e).__name__}: {e}", strip(last.model_dump(mode="json", exclude_unset=True))
        return f"{type(e).__name__}: {e}", None


def ours(path: str):
    p = subprocess.run(
        ["target/debug/ssefold", "fold", "--provider", "openai-responses", path], capture_output=True, text=True
    )
    out = p.stdout
    at = out.find("\n{\n") + 1 if not out.startswith("{") else 0
    return p.returncode, json.loads(out[at:]) if "{" in out else None, p.stderr.strip()


def diff(a, b, path="$"):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if a != b:
            yield f"{path}: sdk {a} | ssefold {b}"
    elif type(a) is not type(b):
        yield f"{path}: sdk {json.dumps(a)[:120]} | ssefold {json.dumps(b)[:120]}"
    elif isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                yield f"{path}.{k}: only in sdk ({json.dumps(a[k])[:80]})"
            elif k not in a:
                yield f"{path}.{k}: only in ssefold ({json.dumps(b[k])[:80]})"
            else:
                yield from diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            yield f"{path}: sdk {len(a)} items | ssefold {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: sdk {json.dumps(a)[:120]} | ssefold {json.dumps(b)[:120]}"


def main():
    files = sys.argv[1:] or sorted(glob.glob("tests/fixtures/openai_responses/*.sse"))
    same = 0
    for f in files:
        verdict, want = sdk_fold(open(f, "rb").read())
        rc, got, err = ours(f)
        if want is None:
            print(f"{f}: SDK has no final response ({verdict}); ssefold rc={rc} {err.splitlines()[-1] if err else ''}")
            continue
        d = list(diff(want, got))
        if d:
            print(f"{f}: DIFFERS (sdk: {verdict}; ssefold rc={rc})")
            for line in d:
                print("   ", line)
        else:
            same += 1
            print(f"{f}: same (sdk: {verdict}; ssefold rc={rc})")
    print(f"{same}/{len(files)} identical")


if __name__ == "__main__":
    main()
