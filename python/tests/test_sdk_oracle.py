"""The official SDKs as oracles: every stream (golden fixtures, peer fixtures,
tests/recordings/ when present), in every chunking, folded by ssefold and by
the SDK's own streaming helper; the two messages must agree field by field
(see sdk_oracle.py for the comparison and its normalization rules).

Differences known today are listed in sdk_oracle_known_diffs.json (id ->
reason) and marked xfail(strict=True): a fixed fold makes its test XPASS, and
the entry must then be removed. `python python/tests/sdk_oracle_report.py`
prints the differences grouped; `--write-known` rewrites the list."""

from __future__ import annotations

from typing import Any, List

import pytest

import sdk_oracle as o

pytest.importorskip("anthropic")
pytest.importorskip("openai")


def _params() -> List[Any]:
    out = []
    for case, variant, how in o.params():
        reason = o.known_reason(case, variant, how)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(case, variant, how, id=o.param_id(case, variant, how), marks=marks))
    return out


@pytest.mark.parametrize("case,variant,how", _params())
def test_ssefold_folds_like_the_sdk(case: o.Case, variant: str, how: str) -> None:
    result = o.compare(case, variant, how)
    assert result.ok, "\n" + result.describe()


def test_every_stream_is_run() -> None:
    ids = {c.id.split("/")[0] for c in o.cases()}
    assert {"golden", "peer"} <= ids
    assert len(o.cases(include_recordings=False)) >= 60


def test_known_diffs_name_existing_streams() -> None:
    """A stale entry (stream renamed or gone) would hide nothing and mislead."""
    have = set()
    for case, variant, how in o.params():
        have |= {f"{variant}:{case.id}", o.param_id(case, variant, how)}
    recordings = o.recordings_manifest() is not None
    stale = [k for k in o.known_diffs() if k not in have and (recordings or ":rec/" not in k)]
    assert not stale, stale


def test_recordings_are_picked_up_when_present() -> None:
    manifest = o.recordings_manifest()
    if manifest is None:
        pytest.skip("no tests/recordings/manifest.json (and no SSEFOLD_RECORDINGS)")
    assert any(c.id.startswith("rec/") for c in o.cases()), manifest
