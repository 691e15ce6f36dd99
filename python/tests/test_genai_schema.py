"""The Gemini fold against the official `google-genai` SDK's schema: every
golden's folded message (`tests/fixtures/gemini/*.json`, which the core's
golden test holds equal to `Stream.message`) and the message the binding
folds from the golden's stream validate as
`google.genai.types.GenerateContentResponse`, and the SDK reads the same
text and thought signatures back from it; so does the fold of every real
recording in `tests/recordings/gemini/`, whose text is the chunks' text."""

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
    if "bad_base64" in path.stem:
        # The provider's text is kept as sent; the SDK refuses it too.
        with pytest.raises(ValueError, match="base64"):
            types.GenerateContentResponse.model_validate(want)
        return
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
    # A media part's `media_delta`s are the bytes the SDK decodes from its `inlineData`.
    stream = ssefold.GeminiStream()
    try:
        events = stream.feed(path.read_bytes()) + stream.finish()
    except ssefold.Error as err:
        events = getattr(err, "events", [])
    media: dict = {}
    for e in events:
        if e.type == "media_delta":
            media[e.part] = media.get(e.part, b"") + e.data
    inline = [p.inline_data.data for c in response.candidates or [] for p in c.content.parts if p.inline_data]
    assert list(media.values()) == inline


RECORDINGS = ROOT / "tests" / "recordings" / "gemini"
# Members the live API sends that google-genai 3.3.0's schema does not know
# (its models forbid extra members): the fold passes them through as sent.
NEWER_THAN_THE_SDK = [("usageMetadata", "serviceTier")]


def recordings() -> list:
    return sorted(RECORDINGS.glob("*/*.sse"))


def test_there_are_gemini_recordings() -> None:
    assert len(recordings()) >= 100


@pytest.mark.parametrize("path", recordings(), ids=lambda p: p.stem[-60:])
def test_recording_folds_to_a_generate_content_response(path: pathlib.Path) -> None:
    stream = ssefold.GeminiStream()
    stream.feed(path.read_bytes())
    stream.finish()
    message = stream.message
    assert message is not None
    for outer, inner in NEWER_THAN_THE_SDK:
        message.get(outer, {}).pop(inner, None)
    response = types.GenerateContentResponse.model_validate(message)
    sent = [
        p.get("text")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("data:")
        for c in json.loads(line[5:]).get("candidates", [])[:1]
        for p in c.get("content", {}).get("parts", [])
    ]
    assert "".join(t for t in sent if t) == "".join(p.text or "" for p in response.candidates[0].content.parts)
