#!/usr/bin/env python3
"""The proof of issue 83, part 1: comparisons of two runs (unpaired) count how far two runs of a series differ.

The same build run back to back, 41 runs a cell (so 40 adjacent comparisons), on three cells: wal
(`compression=zstd rows=1000`), ingest (`signal=traces stage=decode_and_convert`) and the querier's warm lookup
(`workers=0`). Each comparison is `benchhost compare OLD NEW` of the real records, judged two ways:
  history     OLD holds every earlier run of the series (the spread from its own runs, from the 20th on,
              `between_runs::MIN_RUNS`; before that the comparison has no spread and is `inconclusive`, with no
              CI95)
  alone       OLD holds the previous run alone: no history, so `inconclusive` without a CI95 whatever the runs
              (the first two proof sets judged this way with `--results` holding `benchhost calibrate`'s rounds,
              a source since dropped: results/unpaired-proof.json and -2.json, "calibration")
at ±3% and at `--threshold 1%`; per way and threshold, the decisions, how often the CI95 holds 1, and how
many comparisons were unsettled (a run disturbed or a baseline off its history: `inconclusive`, no CI95).

Parts (each run appended to OUT/ARM/CELL.jsonl as it ends; a rerun with the same OUT goes on from there):
  aa          41 runs a cell, the machine idle
  hogs        41 runs a cell under two `yes` (one a core), started before each run and killed after it
  ab          wal only: 20 runs of the plain build, then 40 alternating a build slower by ~5% (`slower`
              feature, its spin sized from a plain run) and the plain one; each slower run judged against the
              plain runs before it (main's history)
  table       the counts, from what is there (also printed after the parts), and OUT/proof.json: per arm and
              cell the headline's values run by run and every comparison's decision, CI95 and origin

usage: python3 benchmarks/unpaired_proof.py [--parts aa,hogs,ab] [--runs 41] [--out DIR]
"""
import argparse, glob, json, os, shutil, signal, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BH = os.path.join(TARGET, "release", "benchhost")
# cell: (plugin, filter, sets, headline metric)
CELLS = {
    "wal": ("wal", "wal compression=zstd rows=1000$", [], "roundtrip_time"),
    "ingest": ("ingest", "ingest items=1000 signal=traces stage=decode_and_convert$", [], "request_time"),
    "querier_warm": ("querier", "footer_cache=warm order=unattested pruning=true shape=lookup_by_id storage=memory",
                     ["--set", "workers=0"], "query_time"),
}
SPIN_NS = 2.1  # ns a spin round takes here (wal_zstd_10k's 35,565 rounds added ~1% of ~7.5 ms)


def sh(args, **kw):
    out = subprocess.run(args, capture_output=True, text=True, **kw)
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} exited {out.returncode}:\n{out.stderr[-3000:]}")
    return out


def records(path):
    return [json.loads(line) for line in open(path)] if os.path.exists(path) else []


def runs_in(path):
    """The measurement records of `path`, one a run, in order."""
    return [r for r in records(path) if r["kind"] == "measurement"]


def run_cell(cell, out, plugin_dir=None):
    plugin, label, sets, _ = CELLS[cell]
    args = [BH, "run", label, "--plugin", plugin, "--out", out, "-q", "--no-previous", *sets]
    if plugin_dir:
        args += ["--plugin-dir", plugin_dir]
    sh(args, cwd=ROOT)


def part_runs(arm, cell, out_dir, n, hogs=False):
    path = os.path.join(out_dir, arm, f"{cell}.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    while len(runs_in(path)) < n:
        yes = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(2)] if hogs else []
        try:
            run_cell(cell, path)
        finally:
            for p in yes:
                p.send_signal(signal.SIGKILL)
                p.wait()


def builds(out_dir):
    """The plain and the slower (~+5%) wal libraries, each alone in a directory of its own."""
    dirs = {k: os.path.join(out_dir, "builds", k) for k in ("plain", "slower")}
    if all(os.path.exists(os.path.join(d, "librig_wal.so")) for d in dirs.values()):
        return dirs
    probe = os.path.join(out_dir, "builds", "probe.jsonl")
    if os.path.exists(probe):
        os.remove(probe)
    run_cell("wal", probe)
    ns = runs_in(probe)[0]["metrics"]["roundtrip_time"]["value"] * {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6}[
        runs_in(probe)[0]["metrics"]["roundtrip_time"]["unit"]]
    spin = max(1, round(0.05 * ns / SPIN_NS))
    lib = os.path.join(TARGET, "release", "librig_wal.so")
    for kind in ("slower", "plain"):
        env = dict(os.environ, BENCHHOST_SLOWER_SPIN=str(spin))
        features = ["--features", "rig-wal/slower"] if kind == "slower" else []
        sh(["cargo", "build", "--release", "-p", "rig-wal", *features], cwd=ROOT, env=env)
        os.makedirs(dirs[kind], exist_ok=True)
        shutil.copy(lib, dirs[kind])
    json.dump({"spin": spin, "plain_ns": ns}, open(os.path.join(out_dir, "builds", "spin.json"), "w"))
    return dirs


AB_PLAIN = 20  # the plain runs before the first slower one: `between_runs::MIN_RUNS`, a history from the start


def slower(i):
    """Whether the ab arm's run `i` is of the slower build: after AB_PLAIN plain runs, every other one."""
    return i >= AB_PLAIN and (i - AB_PLAIN) % 2 == 0


def part_ab(out_dir, n):
    dirs = builds(out_dir)
    path = os.path.join(out_dir, "ab", "wal.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    while len(runs_in(path)) < AB_PLAIN + n - 1:
        run_cell("wal", path, dirs["slower" if slower(len(runs_in(path))) else "plain"])


def write(path, recs):
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in recs)


def compare(old, new, threshold, work):
    """`benchhost compare` of the record lists `old` and `new`: the headline verdicts' (metric, decision, ci95,
    between_runs)."""
    o, n = os.path.join(work, "old.jsonl"), os.path.join(work, "new.jsonl")
    write(o, old)
    write(n, new)
    none = os.path.join(work, "no-results.jsonl")
    out = sh([BH, "compare", o, n, "--json", "--threshold", threshold, "--results", none], cwd=work)
    return [(v["verdict"]["metric"], v["verdict"]["decision"], v["verdict"].get("ci95"),
             v["verdict"].get("between_runs") or {}) for v in json.loads(out.stdout)]


def judged(cell, arm, out_dir, work):
    """Each adjacent comparison of the arm's runs (the ab arm: each slower run against the plain ones before
    it), both ways, at both thresholds."""
    runs = runs_in(os.path.join(out_dir, arm, f"{cell}.jsonl"))
    metric = CELLS[cell][3]
    rows = []
    for k in range(1, len(runs)):
        earlier = runs[:k]
        if arm == "ab":
            if not slower(k):
                continue
            earlier = [r for i, r in enumerate(earlier) if not slower(i)]
        for threshold in ("3%", "1%"):
            for way, old in (("history", earlier), ("alone", earlier[-1:])):
                for m, decision, ci, between in compare(old, [runs[k]], threshold, work):
                    if m == metric:
                        rows.append({"k": k, "threshold": threshold, "way": way, "decision": decision,
                                     "ci95": ci, "origin": between.get("origin"),
                                     "unsettled": between.get("unsettled")})
    return rows


def table(out_dir):
    """Every comparison judged, printed as counts and saved to OUT/proof.json (results/unpaired-proof.json)."""
    work = os.path.join(out_dir, "work")
    os.makedirs(work, exist_ok=True)
    summary = {"cells": {}}
    spin = os.path.join(out_dir, "builds", "spin.json")
    if os.path.exists(spin):
        summary["ab_build"] = json.load(open(spin))
    for arm in ("aa", "hogs", "ab"):
        for cell in CELLS:
            runs = runs_in(os.path.join(out_dir, arm, f"{cell}.jsonl"))
            if not runs:
                continue
            rows = judged(cell, arm, out_dir, work)
            metric = CELLS[cell][3]
            summary["cpu"] = runs[0]["run"]["cpu"]
            summary["cells"][f"{arm}/{cell}"] = {
                "metric": metric, "unit": runs[0]["metrics"][metric]["unit"],
                "values": [r["metrics"][metric]["value"] for r in runs],
                "first": runs[0]["run"]["ts_ms"], "last": runs[-1]["run"]["ts_ms"], "judged": rows}
            for way in ("history", "alone"):
                for threshold in ("3%", "1%"):
                    mine = [r for r in rows if r["way"] == way and r["threshold"] == threshold]
                    with_ci = [r for r in mine if r["ci95"]]
                    counts = {d: sum(r["decision"] == d for r in mine) for d in
                              ("regressed", "improved", "no_change", "inconclusive")}
                    holds = sum(r["ci95"][0] <= 1 <= r["ci95"][1] for r in with_ci)
                    unsettled = sum(bool(r.get("unsettled")) for r in mine)
                    print(f"{arm:5} {cell:13} {way:7} ±{threshold:3} n={len(mine):2} {counts} "
                          f"CI95 holds 1 in {holds}/{len(with_ci)}, unsettled {unsettled}", flush=True)
    json.dump(summary, open(os.path.join(out_dir, "proof.json"), "w"), indent=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="aa,hogs,ab")
    p.add_argument("--runs", type=int, default=41)
    p.add_argument("--cells", default=",".join(CELLS))
    p.add_argument("--out", default=os.path.expanduser("~/.cache/benchhost/unpaired-proof"))
    args = p.parse_args()
    parts = args.parts.split(",")
    for cell in args.cells.split(","):
        for arm in ("aa", "hogs"):
            if arm in parts:
                part_runs(arm, cell, args.out, args.runs, hogs=arm == "hogs")
    if "ab" in parts:
        part_ab(args.out, args.runs)
    table(args.out)


if __name__ == "__main__":
    main()
