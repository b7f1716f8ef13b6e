#!/usr/bin/env python3
"""Generates results streams of realistic shape for the history benchmark (scale.py): a year of nightly runs.

Every record is built from a record of the in-tree rigs (results/*.jsonl, 59 series over 8 rigs). A `branch`
variant key multiplies the series; each night and branch runs every series once (values drift and jitter around
the template's, with rare lasting steps), about 1% of cells fail (with a cause, a stderr tail, a log of 1-4 KB,
a few of 1 MiB, and salvaged samples), one night in 7 adds a verdict per series as `run --baseline` writes it,
and one night in 40 a calibration record per series.

    python3 benchmarks/history/generate.py --records 1000000 --out DIR/h1m.jsonl [--bad DIR/h1m-bad.jsonl]

Deterministic for a given --records and --seed. `--bad` also writes the same stream with, in its middle, 50 torn
lines, 50 corrupt lines, 1,000 duplicated records and 20 torn records glued to a whole new one; a sidecar
`.expect.json` names every bad line and the counts a reader must report.
"""

import argparse
import copy
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DAY_MS = 86_400_000
START_MS = 1_764_547_200_000  # 2025-12-01T00:00:00Z
TEST = "ratio of estimates; CI95 from both records' CI95 (log-normal delta method)"
CAUSES = ["panic", "rig_error", "deadline", "signal", "verification", "out_of_memory"]


def templates():
    """The in-tree rigs' records: one per series."""
    out = []
    for path in sorted((ROOT / "results").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                if record.get("kind") == "measurement":
                    out.append(record)
    return out


def scaled(metric, factor):
    m = dict(metric)
    m["value"] = metric["value"] * factor
    if "ci95" in m:
        m["ci95"] = [v * factor for v in metric["ci95"]]
    return m


class Night:
    """One night of one branch: its provenance and the series' values."""

    def __init__(self, rng, day, branch):
        self.rng, self.day, self.branch = rng, day, branch
        self.run_id = f"nightly-{day:04d}-b{branch:02d}"
        self.commit = "%012x" % rng.getrandbits(48)

    def run(self, template, cell):
        run = dict(template["run"])
        run.update(ts_ms=START_MS + self.day * DAY_MS + self.branch * 60_000 + cell * 5_000,
                   id=self.run_id, commit=self.commit, host="nightly-vm", trigger="ci", dirty=False)
        return run


def measurement(template, night, cell, drift):
    record = copy.deepcopy(template)
    record["run"] = night.run(template, cell)
    record["variant"]["branch"] = f"b{night.branch:02d}"
    factors = {}
    for name, metric in template["metrics"].items():
        factor = (1.0 + drift) * (1.0 + night.rng.gauss(0.0, 0.02))
        factors[name] = factor
        record["metrics"][name] = scaled(metric, factor)
    stats = (record.get("cell") or {}).get("stats") or {}
    for name, summary in stats.items():
        f = factors.get(name, 1.0)
        for key in ("median", "mean", "min", "max", "stddev", "mad"):
            if key in summary:
                summary[key] *= f
    if "cell" in record:
        record["cell"]["index"] = cell
    return record


def failure(record, rng, big):
    cause = rng.choice(CAUSES)
    record["kind"] = "failure"
    record["metrics"] = {}
    record.get("cell", {}).pop("stats", None)
    tail = [f"thread 'main' at rigs/{record['bench']}/src/lib.rs:{rng.randint(10, 400)}: step {i}" for i in range(5)]
    log_size = (1 << 20) if big else rng.randint(1024, 4096)
    record["failure"] = {
        "cause": cause,
        "phase": rng.choice(["setup", "measure", "teardown"]),
        "message": f"{cause} in the {record['bench']} rig: injected by the history benchmark",
        "stderr_tail": tail,
        "log": ("log line of a failed cell\n" * (log_size // 26 + 1))[:log_size],
        "salvaged": [{"type": "sample", "iterations": rng.randint(1, 1000), "ns": rng.randint(10**5, 10**8)}
                     for _ in range(rng.randint(0, 4))],
    }
    return record


def verdict(record, previous, rng):
    name = next((n for n, m in record["metrics"].items() if "ci95" in m), None)
    if name is None or previous is None or name not in previous["metrics"]:
        return None
    ratio = record["metrics"][name]["value"] / previous["metrics"][name]["value"]
    lo, hi = ratio * 0.985, ratio * 1.015
    decision = "regressed" if lo > 1.03 else "improved" if hi < 0.97 else \
        "no_change" if lo > 0.97 and hi < 1.03 else "inconclusive"
    higher = record["metrics"][name]["higher_is_better"]
    if higher and decision in ("regressed", "improved"):
        decision = "improved" if decision == "regressed" else "regressed"
    base = previous["run"]
    out = {
        "schema": 1, "bench": record["bench"], "kind": "verdict", "run": record["run"], "variant": record["variant"],
        "metrics": {},
        "note": f"{name} {decision}: x{ratio:.4f} [{lo:.4f}, {hi:.4f}] against run {base['id']} ({base['commit']}), "
                "threshold ±3.0%",
        "verdict": {"metric": name, "test": TEST,
                    "baseline": {"run_id": base["id"], "commit": base["commit"], "ts_ms": base["ts_ms"]},
                    "ratio": ratio, "ci95": [lo, hi], "higher_is_better": higher, "threshold": 0.03,
                    "decision": decision},
    }
    if "plugin" in record:
        out["plugin"] = record["plugin"]
    return out


def calibration(record, rng):
    name = next(iter(record["metrics"]), None)
    if name is None:
        return None
    variant = dict(record["variant"], calibration="aa", calibrated_metric=name)
    pct = lambda v: {"value": v, "unit": "%", "higher_is_better": False}
    return {"schema": 1, "bench": record["bench"], "kind": "measurement", "run": record["run"], "variant": variant,
            "metrics": {"false_alarm_pct": pct(rng.choice([0.0, 0.0, 10.0])),
                        "suggested_threshold_pct": pct(round(rng.uniform(1.0, 6.0), 1))},
            "note": "A/A: 0 of 10 round pairs alarmed at ±3.0%; rounds vary 1.20% (CV)"}


def records(total, seed):
    """Yields `total` record dicts, night by night."""
    rng = random.Random(seed)
    series = templates()
    per_night = len(series) * 8 // 7
    branches = max(1, round((total / (365 * per_night)) ** 0.5 * 2)) if total > 20_000 else 1
    big_logs = {rng.randrange(total) for _ in range(1 if total < 100_000 else 3)}
    steps = {}  # (branch, series) -> lasting step of the value
    previous = {}
    count, day = 0, 0
    while True:
        for branch in range(branches):
            night = Night(rng, day, branch)
            for cell, template in enumerate(series):
                key = (branch, cell)
                if rng.random() < 0.002:
                    steps[key] = steps.get(key, 0.0) + rng.choice([-0.08, 0.06, 0.1])
                drift = steps.get(key, 0.0) + 0.0001 * day
                record = measurement(template, night, cell, drift)
                if rng.random() < 0.01:
                    record = failure(record, rng, count in big_logs)
                extra = []
                if day % 7 == 6 and record["kind"] == "measurement":
                    extra.append(verdict(record, previous.get(key), rng))
                if day % 40 == 39 and record["kind"] == "measurement":
                    extra.append(calibration(record, rng))
                if record["kind"] == "measurement":
                    previous[key] = record
                for r in [record] + [e for e in extra if e]:
                    yield r
                    count += 1
                    if count == total:
                        return
        day += 1


def line(record):
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def write_bad(good, bad, seed):
    """`good` with bad lines in its middle; the sidecar names them."""
    rng = random.Random(seed + 1)
    lines = good.read_text().splitlines()
    middle = len(lines) // 2
    spots = sorted(rng.sample(range(middle - len(lines) // 4, middle + len(lines) // 4), 1120))
    kinds = ["torn"] * 50 + ["corrupt"] * 50 + ["duplicate"] * 1000 + ["glued"] * 20
    rng.shuffle(kinds)
    plan = dict(zip(spots, kinds))
    expect = {"torn": [], "corrupt": [], "duplicate": [], "glued": []}
    out, glued = [], 0
    for i, text in enumerate(lines):
        what = plan.get(i)
        if what == "torn":
            out.append(text[: rng.randint(20, len(text) - 20)])
        elif what == "corrupt":
            out.append(text.replace('"bench":', '"bench"#', 1))
        elif what == "duplicate":
            out.append(lines[rng.randrange(i)] if i else text)
        elif what == "glued":
            whole = json.loads(text)
            whole["run"] = dict(whole["run"], id=f"glued-{glued}")
            glued += 1
            out.append(text[: rng.randint(20, len(text) - 20)] + line(whole))
        if what:
            expect[what].append(len(out))
        out.append(text)
    bad.write_text("\n".join(out) + "\n")
    expect["lines"] = len(out)
    expect["readable"] = len(out) - 100
    expect["distinct"] = len(lines) + 20
    bad.with_suffix(".expect.json").write_text(json.dumps(expect) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--bad", type=Path)
    ap.add_argument("--seed", type=int, default=19)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as f:
        for record in records(args.records, args.seed):
            f.write(line(record) + "\n")
    if args.bad:
        write_bad(args.out, args.bad, args.seed)


if __name__ == "__main__":
    main()
