"""Runs every stream through ssefold and the official SDKs (sdk_oracle.py) and
prints the differences grouped by dialect, SDK helper and difference class
(JSON path pattern + shape), with counts and one example each.

    .venv/bin/python python/tests/sdk_oracle_report.py [--chunkings whole,bytewise,random]
        [--json out.json] [--verbose]

Each class is marked with the deliberate rule that explains it
(sdk_oracle.DELIBERATE), or UNEXPLAINED (what the test fails on). Set
SSEFOLD_RECORDINGS=<dir or manifest.json> to use recordings that live
elsewhere."""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys
from typing import Any, Dict, List, Tuple

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import sdk_oracle as o  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunkings", default=",".join(o.CHUNKING_NAMES))
    ap.add_argument("--json", help="write every failing result here")
    ap.add_argument("--verbose", action="store_true", help="print every failing result in full")
    args = ap.parse_args()
    hows = args.chunkings.split(",")

    import anthropic
    import openai

    print(f"anthropic {anthropic.__version__}, openai {openai.__version__}")
    results: List[o.Result] = []
    for case, variant, how in o.params():
        if how in hows:
            results.append(o.compare(case, variant, how))
    failing = [r for r in results if not r.ok]
    streams = {(r.case.id, r.variant) for r in results}
    bad_streams = {(r.case.id, r.variant) for r in failing}
    print(f"{len(results)} comparisons over {len(streams)} stream x helper pairs "
          f"({len({r.case.id for r in results})} streams); {len(failing)} differ "
          f"({len(bad_streams)} stream x helper pairs)\n")

    # Chunking dependence: a stream whose diffs are not the same in every chunking.
    by_stream: Dict[Tuple[str, str], List[o.Result]] = collections.defaultdict(list)
    for r in results:
        by_stream[(r.case.id, r.variant)].append(r)
    for key, rs in sorted(by_stream.items()):
        shapes = {json.dumps([(p, a, b) for p, a, b in r.diffs if p != "<outcome>"], default=str) for r in rs}
        if len(shapes) > 1:
            print(f"CHUNKING-DEPENDENT: {key[1]}:{key[0]}: " + ", ".join(f"{r.chunking}={len(r.diffs)}" for r in rs))

    # Group by dialect / helper / class (only the 'whole' run of each stream
    # when present, so counts are per stream).
    groups: Dict[Tuple[str, str, str], List[Tuple[o.Result, Tuple[str, Any, Any]]]] = collections.defaultdict(list)
    for r in failing:
        if r.chunking != hows[0]:
            continue
        for d in r.diffs:
            groups[(r.case.dialect, r.variant, o.diff_class(*d))].append((r, d))
    last = None
    for (dialect, variant, cls), items in sorted(groups.items()):
        if (dialect, variant) != last:
            print(f"\n=== {dialect} / {variant} ===")
            last = (dialect, variant)
        ids = sorted({r.case.id for r, _ in items})
        r, (path, a, b) = items[0]
        why = o.explain(r.case, r.variant, path, a, b)
        print(f"- {cls}  [{len(ids)} stream(s), {len(items)} field(s)]")
        print(f"    {'deliberate: ' + why if why else 'UNEXPLAINED'}")
        print(f"    e.g. {r.case.id}: {path}: ours={o.short(a, 120)} | sdk={o.short(b, 120)}")
        print("    streams: " + ", ".join(ids))

    if args.verbose:
        print("\n=== every failing result ===")
        for r in failing:
            print(r.describe())
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps([
            {"id": o.param_id(r.case, r.variant, r.chunking), "dialect": r.case.dialect,
             "ours_error": r.ours.error, "sdk_error": r.theirs.error,
             "diffs": [{"path": p, "ours": a, "sdk": b, "class": o.diff_class(p, a, b)} for p, a, b in r.diffs]}
            for r in failing], indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
