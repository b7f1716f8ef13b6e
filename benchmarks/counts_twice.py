#!/usr/bin/env python3
"""Issue 32's "counts to the last digit": every iterations-style cell of rigs.toml counted twice by
`benchhost run --quick --instructions`, each in a stream of its own, and the two counts compared.

Resumable: a run that ended (its stream has a `.done` beside it) is not run again. Needs a release build of
the host and the rigs' plugins (in $CARGO_TARGET_DIR/release, or target/release).

    python3 benchmarks/counts_twice.py --out ~/.cache/benchhost/counts-twice
    cp ~/.cache/benchhost/counts-twice/counts-twice.json results/

`--rigs cache_tier` counts one rig's cells only (its summary's cells then replace that rig's in the committed
file).
"""

import argparse
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
RIGS = ["wal", "ingest", "cache_tier", "compaction", "querier", "querier_service", "trace_index", "writer"]


def stream(out, index):
    return out / f"run-{index}.jsonl"


def run(out, index, rigs):
    path = stream(out, index)
    done = path.with_suffix(".done")
    if done.exists():
        return
    path.unlink(missing_ok=True)
    command = [str(TARGET / "release" / "benchhost"), "run", "--quick", "--instructions", "--out", str(path)]
    for rig in rigs:
        command += ["--plugin", rig]
    subprocess.run(command, cwd=ROOT, check=False)
    done.touch()


def counts(path):
    """Cell name -> (instructions per iteration or None, m, why not, functions)."""
    found = {}
    for line in path.open():
        record = json.loads(line)
        if record.get("kind") != "measurement":
            continue
        params = " ".join(f"{k}={v}" for k, v in sorted(record.get("variant", {}).items()))
        count = (record.get("cell") or {}).get("instructions") or {}
        value = record.get("metrics", {}).get("instructions", {}).get("value")
        found[f"{record['bench']} {params}"] = (value, count.get("iterations"), count.get("unclean"),
                                                {f["name"]: f for f in count.get("functions", [])})
    return found


def moved(first, second):
    """The functions whose per-iteration counts differ between the two runs, largest first."""
    names = set(first) | set(second)
    diffs = []
    for name in names:
        a = first.get(name, {}).get("per_iteration", 0.0)
        b = second.get(name, {}).get("per_iteration", 0.0)
        if a != b:
            diffs.append({"name": name, "difference": round(b - a, 3)})
    return sorted(diffs, key=lambda d: -abs(d["difference"]))[:6]


def summary(out, commit, rigs):
    first, second = counts(stream(out, 1)), counts(stream(out, 2))
    cells = []
    for name in first:
        (a, m1, why1, f1), (b, m2, why2, f2) = first[name], second.get(name, (None, None, None, {}))
        cell = {"cell": name, "first": a, "second": b, "iterations": [m1, m2], "same": a is not None and a == b}
        if a is None or b is None:
            cell["no_count"] = why1 or why2 or "no count"
        elif a != b:
            cell["change_pct"] = round((b / a - 1) * 100, 4)
            cell["functions_that_moved"] = moved(f1, f2)
        cells.append(cell)
    return {
        "command": f"python3 benchmarks/counts_twice.py (benchhost run --quick --instructions --plugin "
                   f"{' --plugin '.join(rigs)}, twice; release, host at {commit})",
        "same": sum(c["same"] for c in cells),
        "differ": sum("change_pct" in c for c in cells),
        "no_count": sum("no_count" in c for c in cells),
        "cells": cells,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="directory for the two streams and the summary")
    parser.add_argument("--rigs", default=",".join(RIGS), help="the rigs to count, comma-separated (all of them)")
    args = parser.parse_args()
    rigs = args.rigs.split(",")
    unknown = [rig for rig in rigs if rig not in RIGS]
    if unknown:
        parser.error(f"not an iterations-style rig of rigs.toml: {', '.join(unknown)} (known: {', '.join(RIGS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    for index in (1, 2):
        run(args.out, index, rigs)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    result = summary(args.out, commit.stdout.strip(), rigs)
    (args.out / "counts-twice.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"{result['same']} cells the same, {result['differ']} differ, {result['no_count']} not counted")
    for cell in result["cells"]:
        if not cell["same"]:
            print(f"  {cell['cell']}: {cell.get('change_pct', cell.get('no_count'))}")


if __name__ == "__main__":
    main()
