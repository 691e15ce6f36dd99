"""The Gemini fold against the official `google-genai` SDK's schema: every
golden's folded message (`tests/fixtures/gemini/*.json`, which the core's
golden test holds equal to `Stream.message`) and the message the binding
folds from the golden's stream validate as
`google.genai.types.GenerateContentResponse`, and the SDK reads the same
text and thought signatures back from it."""

import base64
import json
import pathlib

import pytest

import ssefold
from conftest import ROOT

types = pytest.importorskip("google.genai.types")

GEMINI = ROOT / "tests" / "fixtures" / "gemini"


def goldens() -> list:
    return sorted(GEMINI.glob("*.sse"))


def test_there_are_gemini_goldens() -> None:
    assert len(goldens()) >= 10


@pytest.mark.parametrize("path", goldens(), ids=lambda p: p.stem)
def test_folded_message_is_a_generate_content_response(path: pathlib.Path) -> None:
    want = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    stream = ssefold.GeminiStream()
    try:
        stream.feed(path.read_bytes())
        stream.finish()
    except ssefold.Error:
        pass
    assert stream.message == want
    response = types.GenerateContentResponse.model_validate(want)
    for got, sent in zip(response.candidates or [], want["candidates"]):
        parts = sent["content"]["parts"]
        assert len(got.content.parts) == len(parts)
        for p, raw in zip(got.content.parts, parts):
            assert p.text == raw.get("text")
            assert bool(p.thought) == bool(raw.get("thought"))
            if "thoughtSignature" in raw:
                assert p.thought_signature == base64.b64decode(raw["thoughtSignature"])
            if "functionCall" in raw:
                assert p.function_call.name == raw["functionCall"]["name"]
                assert p.function_call.args == raw["functionCall"].get("args")
