"""parse_partial_json and PartialJSON: the contract examples, every prefix
and every fragmentation of documents, errors."""

from __future__ import annotations

import json
import random
from typing import Any, List

import pytest

import ssefold

DOC = {
    "path": "src/lib.rs",
    "content": 'fn main() {\n    println!("héllo 🙂 \\"x\\"");\n}\n',
    "n": [1, -2.5, 3e10, True, False, None, {"k": []}],
    "nested": {"a": {"b": ["c", {"d": ""}]}},
}
TEXT = json.dumps(DOC, ensure_ascii=False)


def test_contract_examples() -> None:
    assert ssefold.parse_partial_json('{"a": "te') == {"a": "te"}
    assert ssefold.parse_partial_json('{"a": "te', partial_strings=False) == {}
    assert ssefold.parse_partial_json('{"a": 123,') == {"a": 123}
    assert ssefold.parse_partial_json("[1, 2,") == [1, 2]
    assert ssefold.parse_partial_json("") is None
    assert ssefold.parse_partial_json("42") == 42
    assert ssefold.parse_partial_json(b'{"a": [tr') == {"a": []}


def test_every_prefix_is_a_prefix_of_the_final_value() -> None:
    data = TEXT.encode()
    for i in range(len(data) + 1):
        try:
            prefix = data[:i].decode()
        except UnicodeDecodeError:
            continue
        value = ssefold.parse_partial_json(prefix)
        if i == len(data):
            assert value == DOC


def test_incremental_in_every_fragmentation_matches_json_loads() -> None:
    rng = random.Random(3)
    data = TEXT.encode()
    want_events: List[Any] = []
    p = ssefold.PartialJSON()
    for b in data:  # byte by byte, even inside UTF-8 characters
        want_events += [e for e in p.push(bytes([b])) if e.type != "string_append"]
    assert p.finish() == DOC == json.loads(TEXT)
    assert p.is_complete and p.bytes_pushed == len(data)
    for _ in range(20):
        cuts = sorted({rng.randrange(len(TEXT) + 1) for _ in range(rng.randrange(1, 30))} | {0, len(TEXT)})
        q = ssefold.PartialJSON()
        events: List[Any] = []
        texts: dict = {}
        for a, b in zip(cuts, cuts[1:]):
            for e in q.push(TEXT[a:b]):
                if e.type == "string_append":
                    texts[e.path] = texts.get(e.path, "") + e.text
                else:
                    events.append(e)
            assert q.value is None or isinstance(q.value, dict)
        assert events == want_events
        assert q.finish() == DOC
        # The string_append texts of each string add up to the string.
        assert texts[("content",)] == DOC["content"]


def test_path_events() -> None:
    p = ssefold.PartialJSON()
    (start,) = p.push('{"pa')
    assert (start.type, start.path, start.kind) == ("container_start", (), "object")
    evs = p.push('th": [1, "x')
    assert [(e.type, e.path) for e in evs] == [
        ("container_start", ("path",)),
        ("value_complete", ("path", 0)),
        ("string_append", ("path", 1)),
    ]
    assert evs[1].value == 1 and evs[2].text == "x"
    assert evs[2].to_dict() == {"type": "string_append", "depth": 2, "index": 1, "text": "x"}
    assert evs[0].to_dict() == {"type": "container_start", "depth": 1, "key": "path", "kind": "array"}
    assert p.value == {"path": [1, "x"]}
    assert p.value_with(False) == {"path": [1]}
    evs = p.push('y"]}')
    assert evs[-1].to_dict() == {"type": "value_complete", "depth": 0, "kind": "object"}
    assert (evs[-1].kind, evs[-1].value) == ("object", {"path": [1, "xy"]})
    assert evs[-2].to_dict() == {"type": "value_complete", "depth": 1, "key": "path", "kind": "array"}
    assert "value_complete" in repr(evs[-1])


def test_errors() -> None:
    p = ssefold.PartialJSON()
    with pytest.raises(ssefold.PartialJSONError) as info:
        p.finish()
    assert (info.value.kind, info.value.offset) == ("incomplete", 0)
    p.push('{"a": 1')
    with pytest.raises(ssefold.PartialJSONError) as info:
        p.push("}}")
    assert info.value.kind == "invalid" and info.value.offset == 8
    assert [e.type for e in info.value.events] == ["value_complete", "value_complete"]
    with pytest.raises(ssefold.PartialJSONError):  # sticky
        p.push(" ")
    assert isinstance(info.value, ssefold.Error) and isinstance(info.value, ValueError)
    with pytest.raises(ssefold.PartialJSONError) as info:
        ssefold.parse_partial_json("[1, }")
    assert info.value.kind == "invalid"
    with pytest.raises(ssefold.PartialJSONError) as info:
        ssefold.PartialJSON(max_depth=3).push("[[[[")
    assert info.value.kind == "depth_limit"
    with pytest.raises(ssefold.PartialJSONError) as info:
        ssefold.PartialJSON(max_bytes=4).push('"abcdef"')
    assert info.value.kind == "size_limit"
    with pytest.raises(TypeError):
        ssefold.PartialJSON().push(3)  # type: ignore[arg-type]
    p.reset()
    p.push("[]")
    assert p.finish() == []


def test_garbage_never_crashes() -> None:
    rng = random.Random(11)
    alphabet = ['{', '}', '[', ']', '"', '\\', 'u', '1', 'e', '-', ',', ':', ' ', 't', 'é', '\ud83d' if False else '🙂']
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(30)))
        try:
            ssefold.parse_partial_json(text)
        except ssefold.PartialJSONError:
            pass
        p = ssefold.PartialJSON()
        try:
            for ch in text:
                p.push(ch)
            p.finish()
        except ssefold.PartialJSONError:
            pass
