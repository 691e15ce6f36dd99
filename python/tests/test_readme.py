"""The README's Python code blocks: type-checked with ``mypy --strict`` and
pyright (strict), then run against a recorded Anthropic stream (the HTTP
client answers from memory)."""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
from typing import Any, Callable, Dict, List

import pytest

from conftest import ROOT

httpx = pytest.importorskip("httpx")
mypy_api = pytest.importorskip("mypy.api")

READMES = [ROOT / "README.md", ROOT / "python" / "README.md", ROOT / "bindings" / "python" / "README.md"]
STREAM = ROOT / "tests" / "peer-fixtures" / "anthropic-sdk-python" / "basic_response.txt"

# The names the blocks use without defining them, as parameters of the
# function each block becomes.
HEADER = """\
from __future__ import annotations

from typing import Any

import httpx


def snippet(
    chunk: bytes, t: int, response: httpx.Response, httpx_client: httpx.Client, url: str, body: dict[str, Any]
) -> None:
"""


def python_blocks() -> List[str]:
    blocks: List[str] = []
    for readme in READMES:
        if readme.exists():
            blocks += re.findall(r"^```python\n(.*?)^```", readme.read_text(encoding="utf-8"), re.M | re.S)
    return blocks


def module_source(block: str) -> str:
    return HEADER + textwrap.indent(block, "    ")


def write_modules(tmp_path: pathlib.Path, blocks: List[str]) -> List[pathlib.Path]:
    paths = []
    for i, block in enumerate(blocks):
        path = tmp_path / f"readme_block_{i}.py"
        path.write_text(module_source(block), encoding="utf-8")
        paths.append(path)
    return paths


def mypy_strict(paths: List[pathlib.Path]) -> str:
    out, err, status = mypy_api.run(["--strict", "--no-incremental", *map(str, paths)])
    return "" if status == 0 else out + err


def pyright_strict(tmp_path: pathlib.Path, paths: List[pathlib.Path]) -> str:
    exe = shutil.which("pyright", path=str(pathlib.Path(sys.executable).parent))
    if exe is None:
        pytest.skip("pyright is not installed in this environment (pip install pyright)")
    config = tmp_path / "pyrightconfig.json"
    # README lines show values as bare expressions (`ev.event, ev.data`).
    settings = {"typeCheckingMode": "strict", "pythonVersion": "3.9", "reportUnusedExpression": False}
    config.write_text(json.dumps(settings), encoding="utf-8")
    proc = subprocess.run(
        [exe, "--pythonpath", sys.executable, "--project", str(config), *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    return "" if proc.returncode == 0 else proc.stdout + proc.stderr


def test_the_readme_has_python_blocks() -> None:
    assert len(python_blocks()) >= 1


def test_readme_blocks_pass_mypy_strict(tmp_path: pathlib.Path) -> None:
    report = mypy_strict(write_modules(tmp_path, python_blocks()))
    assert report == "", report


def test_readme_blocks_pass_pyright_strict(tmp_path: pathlib.Path) -> None:
    report = pyright_strict(tmp_path, write_modules(tmp_path, python_blocks()))
    assert report == "", report


# What the stubs promise, checked the same way: each block must fail, on its
# misuse alone (every name it binds is used, so that a strict checker's
# "not accessed" report cannot pass for the error).
WRONG = [
    "s = ssefold.AnthropicStream()\nfor e in s.feed(chunk):\n    print(e.txt)",  # no such field
    "s = ssefold.AnthropicStream()\nfor e in s.feed(chunk):\n    n: int = e.text\n    print(n)",  # a str
    "s = ssefold.AnthropicStream()\nprint(s.ui.snapshot())",  # no ui=True: .ui is None
    "it = ssefold.stream_events(httpx_client, 'GET', url)\nfor e in it:\n    print(e.type)",  # raw: ServerSentEvent
    "x: ValueError = ssefold.ProviderError()\nprint(x)",  # a provider error is not a ValueError
]
# The same uses, right: no error in either checker.
RIGHT = "s = ssefold.AnthropicStream(ui=True)\nfor e in s.feed(chunk):\n    print(e.text)\nprint(s.ui.snapshot())"


def test_the_checkers_reject_each_misuse(tmp_path: pathlib.Path) -> None:
    # One module per block, all checked in one run of each checker (a run
    # costs seconds): each misuse has an error in its own module in both, the
    # right uses none.
    blocks = [*WRONG, RIGHT]
    paths = write_modules(tmp_path, ["import ssefold\n" + block + "\n" for block in blocks])
    reports = {"mypy": mypy_strict(paths), "pyright": pyright_strict(tmp_path, paths)}
    for checker, report in reports.items():
        for path, block in zip(paths, blocks):
            flagged = re.search(rf"{re.escape(path.name)}:\d+(:\d+)?(:| -) error", report) is not None
            assert flagged == (block is not RIGHT), (checker, block, report)


def serve(body: bytes) -> Callable[[Any], Any]:
    def handler(request: Any) -> Any:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    return handler


def test_readme_blocks_run(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    chunk = STREAM.read_bytes() + b"\n\n"  # the recording lacks the last blank line
    for path in write_modules(tmp_path, python_blocks()):
        namespace: Dict[str, Any] = {}
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
        with httpx.Client(transport=httpx.MockTransport(serve(chunk))) as client:
            response = httpx.Response(200, content=chunk)
            namespace["snippet"](chunk, 0, response, client, "http://test/v1/messages", {"stream": True})
    assert "Hello" in capsys.readouterr().out
