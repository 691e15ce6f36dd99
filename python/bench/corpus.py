"""The benchmark corpora: the very bytes the Rust benchmarks decode, written
by the development crate ``crates/ssefold-corpus`` (``cargo run --release -p
ssefold-corpus -- NAME BYTES``). The library and its wheel do not ship the
generator, so this needs cargo and the repository checkout."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
from typing import List

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAMES = ["anthropic-text", "anthropic-tool-use", "openai-chat"]
SOURCE = "crates/ssefold-corpus (cargo run -p ssefold-corpus)"


def corpus_bytes(name: str, size: int) -> bytes:
    """The corpus ``name`` of about ``size`` bytes; raises RuntimeError when
    cargo is missing or the generator fails (an unknown name, say)."""
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if cargo is None:
        raise RuntimeError("the benchmark corpora need cargo (crates/ssefold-corpus)")
    cmd = [cargo, "run", "--quiet", "--release", "-p", "ssefold-corpus", "--", name, str(size)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.decode(errors='replace')}")
    return out.stdout


def corpus(name: str, size: int) -> "tuple[bytes, str]":
    """The corpus and where its bytes come from (for the benchmark report)."""
    return corpus_bytes(name, size), SOURCE


def turns(data: bytes, name: str) -> List[bytes]:
    """The corpus cut into whole turns (one HTTP response each)."""
    end = b'event: message_stop\ndata: {"type":"message_stop"}\n\n' if name.startswith("anthropic") else b"data: [DONE]\n\n"
    parts = data.split(end)
    return [p + end for p in parts if p.strip()]
