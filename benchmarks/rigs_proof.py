#!/usr/bin/env python3
"""The proof on every rig of rigs.toml (issue 31): for one representative cell of each, A/A comparisons of
byte-identical libraries at two paths of different lengths (half in each role order) and A/B comparisons
against a build with a known ~5% slowdown compiled in (each rig's `slower` feature: BENCHHOST_SLOWER_SPIN
rounds of `benchhost_plugin_api::slower::spin` in its hot path). Every comparison is one
`benchhost run FILTER --plugin RIG --plugin-dir NEW --against OLD` with the default plan, judged by benchhost
itself at its default ±3% threshold. Release builds, only the project's own tools.

Parts (--parts, in this order, each over every cell; every comparison is saved to OUT/proof.json as soon as it
is finished, and a rerun with the same OUT skips what is there, so a stopped proof resumes):
  builds  the plain library at two paths (OUT/a and OUT/a-copy-at-a-longer-path), and the `slower` one (OUT/b),
          its spin sized from a short plain run to ~5% of the cell, measured (the median of three A/B runs)
          and, while it is off by more than a point, resized (scaled, then along the secant), four tries at most.
  aa      --comparisons A/A comparisons, alternating which path is this build and which is --against.
  ab      --comparisons A/B comparisons: the slower build against the plain one.

usage: python3 benchmarks/rigs_proof.py [--parts builds,aa,ab] [--comparisons 40] [--cells wal,querier_cold,...]
                                        [--out target/rigs-proof]
       python3 benchmarks/rigs_proof.py --table results/rigs-proof.json
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BH = os.path.join(TARGET, "release", "benchhost")
SPIN_NS = 1.67  # one round of the slower spin on the project's VM (600 rounds per µs)

# name: (package, library, rig, filter on the cell's label, metric judged, how the metric gives time per unit)
CELLS = {
    "wal": ("rig-wal", "librig_wal.so", "wal", "compression=lz4 rows=1000$", "roundtrip_time", "time"),
    "wal_log": ("rig-wal", "librig_wal.so", "wal_log", "fsync=none", "appends_per_s", "rate"),
    "ingest": ("rig-ingest", "librig_ingest.so", "ingest", "signal=traces stage=decode_and_convert",
               "request_time", "time"),
    "cache_tier_canned": ("rig-cache-tier", "librig_cache_tier.so", "cache_tier",
                          "cache=warm rows=1000 tier=delta_hit upstream=canned", "request_time", "time"),
    "cache_tier_datafusion": ("rig-cache-tier", "librig_cache_tier.so", "cache_tier",
                              "cache=warm rows=1000 tier=passthrough upstream=datafusion", "request_time", "time"),
    "compaction": ("rig-lakehouse", "librig_lakehouse.so", "compaction", "files=6 rows_per_file=100 storage=memory",
                   "rewrite_time", "time"),
    "compaction_fs": ("rig-lakehouse", "librig_lakehouse.so", "compaction", "files=6 rows_per_file=100 storage=fs",
                      "rewrite_time", "time"),
    "querier_cold": ("rig-lakehouse", "librig_lakehouse.so", "querier",
                     "footer_cache=cold order=unattested .*shape=lookup_by_id storage=memory", "query_time", "time"),
    "querier_warm": ("rig-lakehouse", "librig_lakehouse.so", "querier",
                     "footer_cache=warm order=unattested .*shape=lookup_by_id storage=memory", "query_time", "time"),
    "querier_ordered": ("rig-lakehouse", "librig_lakehouse.so", "querier",
                        "footer_cache=warm order=attested .*shape=oldest_first_topk storage=memory", "query_time",
                        "time"),
    "querier_fs": ("rig-lakehouse", "librig_lakehouse.so", "querier",
                   "footer_cache=cold .*shape=lookup_by_id storage=fs", "query_time", "time"),
    "trace_index": ("rig-lakehouse", "librig_lakehouse.so", "trace_index",
                    "footers=per_lookup storage=memory traces=10000 workers=0$", "lookup_time", "time"),
    "writer": ("rig-lakehouse", "librig_lakehouse.so", "writer",
               "batches=1 op=append order=in_order rows=10000 storage=memory .*writers=1$", "append_time", "time"),
    # Four tenants at once on one thread, as rigs.toml's concurrent block says to compare them (issue 64).
    "writer_concurrent": ("rig-lakehouse", "librig_lakehouse.so", "writer",
                          "op=append order=in_order rows=500 storage=memory workers=0 writers=4$", "append_time",
                          "time"),
    # The querier service's PromQL range: one do_get, the plan with a window per step (issue 65).
    "querier_service": ("rig-lakehouse", "librig_lakehouse.so", "querier_service", "ticket=promql_range",
                        "query_time", "time"),
    "kafka_topology": ("rig-kafka-topology", "librig_kafka_topology.so", "kafka_topology",
                       "mode=perthread .*rate=0.0 .*work_us=10$", "records_per_s", "rate_per_core"),
}
# Parameters a cell sets beyond its matrix: the querier's lookups, its cell on disk and its service on one thread. On two
# workers on this 2-core VM each process's queries vary with how its workers are scheduled: the per-process sd
# of A/A log ratios was 2.1-3.8% there against 0.4-1.1% on one thread, which no 15 s comparison resolves to 3%.
SETS = {cell: ["--set", "workers=0"] for cell in ("querier_cold", "querier_warm", "querier_fs", "querier_service")}
UNIT_NS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run(cell, new, old, out, extra=()):
    """One comparison of the cell: `new` as this build, `old` as --against. Wall time and the verdict."""
    _, lib, rig, label, metric, _ = CELLS[cell]
    path = os.path.join(out, "run.jsonl")
    if os.path.exists(path):
        os.remove(path)
    args = [BH, "run", label, "--plugin", rig, "--no-previous", "-q", "--out", path] + SETS.get(cell, [])
    if old:
        args += ["--plugin-dir", new, "--against", old]
    start = time.monotonic()
    sh(args + list(extra), cwd=ROOT)
    wall = time.monotonic() - start
    recs = records(path)
    verdicts = [r["verdict"] for r in recs if r["kind"] == "verdict" and r["verdict"].get("metric") == metric]
    return wall, recs, (verdicts[0] if verdicts else None)


# The rig packages that build DataFusion.
ON_DATAFUSION = {"rig-cache-tier", "rig-lakehouse"}


def build(package, lib, into=None, spin=None):
    """The rig's release library (with `spin` rounds of its `slower` feature), copied into `into` if given."""
    env = dict(os.environ)
    features = []
    if spin is not None:
        env["BENCHHOST_SLOWER_SPIN"] = str(spin)
        features = ["--features", f"{package}/slower"]
    # The rigs on DataFusion build with the whole workspace, as its release build is cached: `-p rig-cache-tier`
    # alone unifies DataFusion's features differently and rebuilds all of it (~20 min); the others alone, so a
    # proof of the WAL never builds DataFusion (~35 min cold). The feature changes only the rig's own crate.
    scope = ["--workspace"] if package in ON_DATAFUSION else ["-p", "benchhost", "-p", package]
    sh(["cargo", "build", "--release"] + scope + features, cwd=ROOT, env=env)
    if into:
        os.makedirs(into, exist_ok=True)
        shutil.copy(os.path.join(TARGET, "release", lib), os.path.join(into, lib))


def cpu():
    """The CPU this machine has."""
    with open("/proc/cpuinfo") as f:
        return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))


def dirs(out, cell):
    base = os.path.join(out, cell)
    return {"a": os.path.join(base, "a"), "a-copy": os.path.join(base, "a-copy-at-a-longer-path"),
            "b": os.path.join(base, "b")}


def first_spin(cell, out):
    """Rounds that add ~5% to the cell, from a short plain run of it."""
    _, _, _, _, metric, kind = CELLS[cell]
    # Quick's plan, not `--quick`: its matrix overrides (cache_tier's `quick = { rows = 100 }`) drop the cell.
    _, recs, _ = run(cell, None, None, out, ["--warmup", "100ms", "--measurement", "300ms", "--samples", "10"])
    m = [r for r in recs if r["kind"] == "measurement"][0]["metrics"][metric]
    if kind == "time":
        unit_ns = m["value"] * UNIT_NS[m["unit"]]
    else:  # a rate: time per unit, on every core the rig keeps busy
        unit_ns = 1e9 / m["value"] * (os.cpu_count() if kind == "rate_per_core" else 1)
    return max(1, round(0.05 * unit_ns / SPIN_NS))


def slowdown(cell, ratio):
    """How much slower the `slower` build was, from its verdict's ratio: a time's ratio grows with it, a rate's
    shrinks (0.92 appends/s of the plain build's is 8.7% slower, not -8%)."""
    return ratio - 1 if CELLS[cell][5] == "time" else 1 / ratio - 1


def next_spin(sizing):
    """The spin to try after the sizing runs so far (each a spin and the slowdown its build measured): scaled
    from the first while there is one, then along the line through the nearest below 5% and the nearest above
    (a spin's effect is not proportional, and two tries on one side of 5% extrapolate wildly: 48,705 and
    54,205 rounds read 4.0% and 4.1%, and their line asked for 106,374, which read 7.1%)."""
    if len(sizing) == 1:
        return max(1, round(sizing[0]["spin"] * 0.05 / sizing[0]["slowdown"]))
    tries = [(z["spin"], z["slowdown"]) for z in sizing]
    below = [t for t in tries if t[1] < 0.05]
    above = [t for t in tries if t[1] >= 0.05]
    if not below or not above:  # all on one side: scale the nearest
        s0, d0 = min(tries, key=lambda t: abs(t[1] - 0.05))
        return max(1, round(s0 * 0.05 / d0))
    (s0, d0), (s1, d1) = max(below, key=lambda t: t[1]), min(above, key=lambda t: t[1])
    return max(1, round(s0 + (0.05 - d0) * (s1 - s0) / (d1 - d0))) if d1 != d0 else s0


def part_builds(cell, row, args):
    """The plain build at two paths and the `slower` one, its spin sized in up to three tries (resumed from
    the row's sizing runs when a proof stopped halfway)."""
    package, lib, _, _, _, _ = CELLS[cell]
    d = dirs(args.out, cell)
    build(package, lib, d["a"])
    os.makedirs(d["a-copy"], exist_ok=True)
    shutil.copy(os.path.join(d["a"], lib), os.path.join(d["a-copy"], lib))
    sizing = row.setdefault("sizing", [])
    for z in sizing:  # recomputed: a proof before the rate cells stored ratio - 1 for rates too
        z["slowdown"] = statistics.median(slowdown(cell, r) for r in z["ratios"])
    spin = next_spin(sizing) if sizing else first_spin(cell, args.out)
    while True:
        build(package, lib, d["b"], spin)
        ratios = [run(cell, d["b"], d["a"], args.out)[2]["ratio"] for _ in range(3)]
        measured = statistics.median(slowdown(cell, r) for r in ratios)
        sizing.append({"spin": spin, "ratios": ratios, "slowdown": measured})
        if len(sizing) >= 4 or abs(sizing[-1]["slowdown"] - 0.05) <= 0.01 or sizing[-1]["slowdown"] <= 0:
            break
        spin = next_spin(sizing)
    build(package, lib)  # the plain build back in target/release
    row["spin"] = spin


def comparison(cell, kind, i, args):
    d = dirs(args.out, cell)
    if kind == "ab":
        new, old = d["b"], d["a"]
    else:  # half in each role order
        new, old = (d["a"], d["a-copy"]) if i % 2 == 0 else (d["a-copy"], d["a"])
    wall, _, v = run(cell, new, old, args.out)
    return {"wall_s": round(wall, 2), "decision": v["decision"] if v else "missing",
            "ratio": v and v.get("ratio"), "ci95": v and v.get("ci95"), "detectable": v and v.get("detectable"),
            "mode": v and v["method"]["mode"], "new": os.path.basename(new),
            "log_ratios": v and v["method"].get("log_ratios")}


def summary(rows):
    done = [r for r in rows if r["decision"] != "missing"]
    walls = sorted(r["wall_s"] for r in rows)
    count = lambda d: sum(r["decision"] == d for r in done)
    contains = sum(1 for r in done if r["ci95"] and r["ci95"][0] <= 1 <= r["ci95"][1])
    dets = [r["detectable"] for r in done if r["detectable"] is not None]
    return {"n": len(rows), "no_change": count("no_change"), "regressed": count("regressed"),
            "improved": count("improved"), "inconclusive": count("inconclusive"), "ci_contains_1": contains,
            "median_ratio": statistics.median([r["ratio"] for r in done]) if done else None,
            "wall_median_s": statistics.median(walls) if walls else None, "wall_longest_s": walls[-1] if walls else None,
            "detectable_median": statistics.median(dets) if dets else None}


def described(cell, row):
    """The rig, filter and `--set`s a row was measured with: as it recorded them, else as the cell is defined now."""
    _, _, rig, label, _, _ = CELLS[cell]
    return rig, row.get("filter", label), row.get("set", SETS.get(cell, []))


def table(proof):
    print("| cell | A/A no_change, alarms, CI95 ∋ 1, median ratio | A/B regressed, improved (median ratio) "
          "| wall per comparison (median, longest) | detectable (median A/A) |")
    print("|---|---|---|---|---|")
    for cell, row in proof.items():
        aa, ab = summary(row.get("aa", [])), summary(row.get("ab", []))
        alarms = aa["regressed"] + aa["improved"]
        ratio = f"{aa['median_ratio']:.4f}" if aa["median_ratio"] else "-"
        slower = f" ({ab['median_ratio']:.3f})" if ab["median_ratio"] else ""
        det = f"{100 * aa['detectable_median']:.1f}%" if aa["detectable_median"] else "-"
        rig, label, sets = described(cell, row)
        sets = " ".join(sets[1::2])
        what = f"{cell}: {rig} `{label}`" + (f" `{sets}`" if sets else "")
        if row.get("cpu"):
            what += ", " + ", ".join(sorted(set(row["cpu"].values())))
        print(f"| {what} | {aa['no_change']}/{aa['n']}, {alarms}, {aa['ci_contains_1']}/{aa['n']}, {ratio} "
              f"| {ab['regressed']}/{ab['n']}, {ab['improved']}{slower} "
              f"| {aa['wall_median_s']:.1f} s, {aa['wall_longest_s']:.1f} s | {det} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="builds,aa,ab")
    p.add_argument("--comparisons", type=int, default=40)
    p.add_argument("--cells", default=",".join(CELLS))
    p.add_argument("--out", default=os.path.join(TARGET, "rigs-proof"))
    p.add_argument("--table")
    args = p.parse_args()
    if args.table:
        with open(args.table) as f:
            return table(json.load(f))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "proof.json")
    proof = json.load(open(path)) if os.path.exists(path) else {}
    save = lambda: json.dump(proof, open(path, "w"), indent=1)
    for part in args.parts.split(","):
        for cell in args.cells.split(","):
            row = proof.setdefault(cell, {})
            row.setdefault("filter", CELLS[cell][3])
            row.setdefault("set", SETS.get(cell, []))
            if part == "builds":
                if "spin" not in row:
                    part_builds(cell, row, args)
                    save()
                continue
            done = row.setdefault(part, [])
            if len(done) < args.comparisons:
                row.setdefault("cpu", {})[part] = cpu()  # a VM's is AMD EPYC one day, Intel Xeon another
            for i in range(len(done), args.comparisons):
                done.append(comparison(cell, part, i, args))
                save()
            print(f"{cell} {part}: {summary(done)}", flush=True)
    table(proof)


if __name__ == "__main__":
    sys.exit(main())
