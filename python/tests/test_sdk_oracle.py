"""The official SDKs as oracles: every stream (golden fixtures, peer fixtures,
tests/recordings/), in every chunking, folded by ssefold and by the SDK's own
streaming helper; the two messages must agree field by field (see
sdk_oracle.py for the comparison and its normalization rules).

Where they differ, the difference must be one ssefold makes on purpose: each
is a rule of sdk_oracle.DELIBERATE (the behaviour, the streams it shows in,
why), documented in the dialect's "Deliberate differences from the SDK". A
difference no rule explains fails. `python python/tests/sdk_oracle_report.py`
prints the differences grouped."""

from __future__ import annotations

import collections
from typing import Any, Counter, List, Tuple

import pytest

import sdk_oracle as o

pytest.importorskip("anthropic")
pytest.importorskip("openai")

# Which rules explained something in this run (for the stale-rule check).
USED: Counter[Tuple[str, str]] = collections.Counter()


def _params() -> List[Any]:
    return [pytest.param(case, variant, how, id=o.param_id(case, variant, how)) for case, variant, how in o.params()]


@pytest.mark.parametrize("case,variant,how", _params())
def test_ssefold_folds_like_the_sdk(case: o.Case, variant: str, how: str) -> None:
    result = o.compare(case, variant, how)
    for d in result.diffs:
        why = o.explain(case, variant, *d)
        if why is not None:
            USED[(case.dialect, why)] += 1
    bad = o.unexplained(result)
    assert not bad, "\n" + result.describe() + "\n\nnot explained by a deliberate rule:\n" + "\n".join(
        f"  {o.diff_class(*d)}" for d in bad
    )


def test_every_stream_is_run() -> None:
    ids = {c.id.split("/")[0] for c in o.cases()}
    assert {"golden", "peer"} <= ids
    assert len(o.cases(include_recordings=False)) >= 60


def test_recordings_are_picked_up_when_present() -> None:
    manifest = o.recordings_manifest()
    if manifest is None:
        pytest.skip("no tests/recordings/manifest.json (and no SSEFOLD_RECORDINGS)")
    assert sum(c.id.startswith("rec/") for c in o.cases()) >= 150, manifest


def test_every_deliberate_rule_is_still_needed() -> None:
    """A rule that explains nothing any more (the fold now agrees, or the
    stream is gone) would hide a future regression: remove it. Runs after
    the comparisons (pytest keeps file order); skipped when they were not
    all run."""
    if o.recordings_manifest() is None or len(USED) == 0:
        pytest.skip("needs the full comparison run (recordings present)")
    unused = [(d, why) for d, _, _, why in o.DELIBERATE if (d.partition("@")[0], why) not in USED]
    assert not unused, unused
