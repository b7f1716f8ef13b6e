#!/usr/bin/env python3
"""The proof of code layouts in paired comparisons (issue 63): a verdict must be true of a change, not of one link.

Per cell (the per-rig proof's cells of benchmarks/rigs_proof.py, plus `wal_zstd_10k`), from one build made with
`benchhost build` (its link kept, so that it can be linked again with another padding seed):
  builds  the plain build relinked twice (seeds 1001 and 1002: two builds of identical source that differ in
          their link alone, `a` and `b`), each directory with the link to make its layouts; for --ab cells also
          the `slower` build (its spin sized to about +1% of the cell), relinked with seed 1003 (`s`).
  aa1     rebuild A/A, one layout a side (`--layouts 1`, as before issue 63): how often a verdict is
          `regressed` or `improved`, and the median |ratio - 1|.
  aa      rebuild A/A with layouts (the default): `no_change` at least 95%, CI95 holding 1 at least 93%.
  truth   the slower build against the plain one over both pools of 16 layouts, each pair in 16 processes
          (`--rounds 256`, else --truth-rounds), in 2 runs (--truth-runs): the true change, of the pools the
          comparisons draw from. It is the plain mean of all the runs' processes' log ratios: each run's 16
          pairs hold each layout of each pool once, so the layouts' effects cancel into the pools' means; the
          runs are pooled because one run's processes share an error of their own.
  ab1     A/B, one layout a side: how often the sign is wrong.
  ab      A/B with layouts: never `improved`, and a CI95 holding the true change in at least 90%.
Every comparison is `benchhost run FILTER --plugin RIG --plugin-dir NEW --against OLD`, half in each role order
for A/A, saved to OUT/proof.json as soon as it ends: a rerun with the same OUT resumes. Release, idle machine.
A cell's layout floor is exp(1.96 sigma) - 1, sigma the root mean square of its `aa` comparisons' between-layout
spreads (as a run pools a stream's for a verdict's note).

Parts joined by `+` (`aa1+aa`) take turns, one comparison of each in turn, so that both see the same machine.

usage: python3 benchmarks/layout_proof.py [--parts builds,aa1,aa,truth,ab1,ab] [--cells wal_zstd_10k,...]
                                          [--comparisons 40] [--out target/layout-proof] [--build CARGO_ARGS]
       python3 benchmarks/layout_proof.py --table results/layout-proof.json
"""
import argparse, json, math, os, shutil, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rigs_proof  # noqa: E402  (its cells, `--set`s, runner and builds)

ROOT, TARGET, BH = rigs_proof.ROOT, rigs_proof.TARGET, rigs_proof.BH
# The per-rig proof's cells and the WAL cell of the measurements (shared with rigs_proof's sizing run).
rigs_proof.CELLS["wal_zstd_10k"] = ("rig-wal", "librig_wal.so", "wal", "compression=zstd rows=10000$",
                                    "roundtrip_time", "time")
CELLS = rigs_proof.CELLS
SETS = rigs_proof.SETS
# The writer's cell on one thread, as the querier's are: on the two workers of its default, on this 2-core VM, its
# processes spread 1-17% apart (a thread's placement each), wider than any layout, and its A/A over layouts read
# `no_change` in 34 of 40 (kept as `workers_2`). One thread: 0.9% in a first comparison.
SETS["writer"] = ["--set", "workers=0"]
SEEDS = {"a": 1001, "b": 1002, "s": 1003}
SLOWER = 0.01
POOL = 16  # layouts a side under `--layouts auto` (`analysis::layouts::POOL`)


def sh(args, env=None):
    return subprocess.run(args, check=True, capture_output=True, text=True, cwd=ROOT, env=env)


def benchhost_build(package, spin=None, scope=("--workspace",)):
    """`benchhost build` of `scope` (the slower feature of the rig's package with `spin` rounds): the library and
    its link."""
    env = dict(os.environ)
    features = []
    if spin is not None:
        env["BENCHHOST_SLOWER_SPIN"] = str(spin)
        features = ["--features", f"{package}/slower"]
    # The whole workspace by default: a package alone unifies its dependencies' features differently (arrow, or
    # DataFusion, compiled again), and under the wrapper only the workspace's own crates are compiled again. A cell
    # whose package needs no DataFusion is spared its release build by `--build "-p benchhost -p PACKAGE"`.
    sh([BH, "build"] + list(scope) + features, env=env)


def kept_link(lib, into, kept=os.path.join(TARGET, "release", "layouts")):
    """Copies the library's link line (valid while its objects last) from `kept` into `into`."""
    os.makedirs(into, exist_ok=True)
    shutil.copy(os.path.join(kept, lib + ".link"), os.path.join(into, lib + ".link"))


def build_dir(lib, link_dir, seed, into):
    """A build directory `into` holding the layout `seed` of the link in `link_dir` as its library, and that link
    (so that the run makes its other layouts from the same objects): one build of identical source."""
    out = os.path.join(into, lib)
    os.makedirs(os.path.join(into, "layouts"), exist_ok=True)
    link = os.path.join(link_dir, lib + ".link")
    text = open(link).read()
    # The link's output is the build's library: make this layout by running it with another output and a seed.
    words = split_printed(text)
    env = dict(os.environ)
    while "=" in words[0] and not words[0].startswith("-"):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    i = words.index("-o") + 1
    words[i] = out
    subprocess.run(words + [f"-Wl,--randomize-section-padding={seed}"], check=True, env=env, capture_output=True)
    shutil.copy(link, os.path.join(into, "layouts", lib + ".link"))
    sha = sh(["sha256sum", out]).stdout.split()[0]
    with open(os.path.join(into, "layouts", lib + ".sha256"), "w") as f:
        f.write(sha)
    shutil.rmtree(os.path.join(into, "layouts", lib[:-3]), ignore_errors=True)


def split_printed(text):
    """The words of rustc's printed link line: `NAME="v"` or `"v"`, with `\\"` and `\\\\` escaped."""
    words, i, text = [], 0, text.strip()
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        start = i
        while text[i] != '"':
            i += 1
        prefix, i, value = text[start:i], i + 1, []
        while text[i] != '"':
            if text[i] == "\\":
                i += 1
            value.append(text[i])
            i += 1
        i += 1
        words.append(prefix + "".join(value))
    return words


def dirs(out, cell):
    base = os.path.join(out, cell)
    return {k: os.path.join(base, k) for k in ("a", "b", "s", "links")}


def part_builds(cell, row, args):
    package, lib = CELLS[cell][0], CELLS[cell][1]
    d = dirs(args.out, cell)
    benchhost_build(package, scope=args.build)
    kept_link(lib, os.path.join(d["links"], "plain"))
    for side in ("a", "b"):
        build_dir(lib, os.path.join(d["links"], "plain"), SEEDS[side], d[side])
    if cell in args.ab:
        spin = row.get("spin") or first_spin(cell, args.out)
        benchhost_build(package, spin, args.build)
        kept_link(lib, os.path.join(d["links"], "slower"))
        build_dir(lib, os.path.join(d["links"], "slower"), SEEDS["s"], d["s"])
        benchhost_build(package, scope=args.build)  # the plain build (and its link) back in target/release
        row["spin"] = spin


def first_spin(cell, out):
    """Rounds that add ~1% to the cell (rigs_proof's sizing run, scaled from its 5%)."""
    return max(1, round(rigs_proof.first_spin(cell, out) * SLOWER / 0.05))


def comparison(cell, kind, i, args):
    d = dirs(args.out, cell)
    if kind in ("ab", "ab1", "truth"):
        new, old = d["s"], d["a"]
    else:
        new, old = (d["a"], d["b"]) if i % 2 == 0 else (d["b"], d["a"])
    extra = ["--layouts", "1" if kind.endswith("1") else "auto"]
    if kind == "truth":
        extra += ["--rounds", str(args.truth_rounds)]
    _, lib, rig, label, metric, _ = CELLS[cell]
    path = os.path.join(args.out, "run.jsonl")
    if os.path.exists(path):
        os.remove(path)
    cmd = [BH, "run", label, "--plugin", rig, "--no-previous", "-q", "--out", path, "--plugin-dir", new,
           "--against", old] + SETS.get(cell, []) + extra
    start = time.monotonic()
    sh(cmd)
    wall = time.monotonic() - start
    recs = rigs_proof.records(path)
    v = next((r["verdict"] for r in recs if r["kind"] == "verdict" and r["verdict"].get("metric") == metric), None)
    layouts = (v or {}).get("method", {}).get("layouts") or {}
    return {"wall_s": round(wall, 2), "decision": v["decision"] if v else "missing", "ratio": v and v.get("ratio"),
            "ci95": v and v.get("ci95"), "new": os.path.basename(new), "pairs": layouts.get("pairs"),
            "between_layouts": layouts.get("between_layouts"), "between_processes": layouts.get("between_processes"),
            "log_ratios": v and v["method"].get("log_ratios")}


def trimmed(values, trim=0.2):
    """The `trim` trimmed mean of `values` and its squared standard error (Yuen's: the winsorized variance)."""
    s, n = sorted(values), len(values)
    cut = int(n * trim)
    kept = n - 2 * cut
    mean = statistics.fmean(s[cut:n - cut])
    if kept < 2:
        return mean, 0.0
    winsorized = [min(max(v, s[cut]), s[n - cut - 1]) for v in s]
    return mean, (n - 1) * statistics.variance(winsorized) / (kept * (kept - 1))


def pools_truth(runs):
    """The true change of the pools, from the `truth` runs: exp of the plain mean over their layout pairs of each
    pair's processes' 20% trimmed mean (every layout of each pool counts alike, so the layouts' effects cancel
    into the pools' means; within a pair the processes are trimmed as the verdict trims them, because a process
    a disturbance hit reads 5-10% off and the truth is the code's change, not theirs: the example suite's +1%
    truth runs' processes had a skew of 5.8, and their plain mean read x1.0115 where each pair's trimmed mean,
    averaged, reads x1.0108), its standard error (the pairs' own), and each run's own estimate. A run's
    estimate errs by more than that standard error (what one run's processes share: three of cache_tier's read
    x1.0043, x1.0079 and x1.0043 at ±0.12-0.32%), so the truth pools every run made."""
    centers, variances, processes, each = [], [], 0, []
    for run in runs:
        pairs = {}
        for i, x in enumerate(run["log_ratios"]):  # processes 2k and 2k + 1 run pair k, cycling over the pairs
            pairs.setdefault((i // 2) % (run.get("pairs") or POOL), []).append(x)
        run_centers = [trimmed(p) for p in pairs.values()]
        centers += [c for c, _ in run_centers]
        variances += [v for _, v in run_centers]
        processes += len(run["log_ratios"])
        each.append(math.exp(statistics.fmean(c for c, _ in run_centers)))
    se = math.sqrt(sum(variances)) / len(centers)
    return math.exp(statistics.fmean(centers)), se, processes, each


def summary(rows, truth=None):
    done = [r for r in rows if r["decision"] != "missing"]
    count = lambda d: sum(r["decision"] == d for r in done)
    holds = lambda x: sum(1 for r in done if r["ci95"] and r["ci95"][0] <= x <= r["ci95"][1])
    walls = sorted(r["wall_s"] for r in rows)
    spreads = [r["between_layouts"] for r in done if r.get("between_layouts") is not None]
    return {"n": len(rows), "no_change": count("no_change"), "regressed": count("regressed"),
            "improved": count("improved"), "ci_holds_1": holds(1.0),
            "ci_holds_truth": holds(truth) if truth else None,
            "wrong_sign": sum(1 for r in done if r["ratio"] and r["ratio"] < 1) if truth else None,
            "median_abs": statistics.median(abs(r["ratio"] - 1) for r in done) if done else None,
            "wall_median_s": statistics.median(walls) if walls else None,
            "between_layouts_median": statistics.median(spreads) if spreads else None,
            # Pooled as a run pools a stream's comparisons for a verdict's note (`analysis::layout_floor`).
            "between_layouts_rms": math.sqrt(sum(s * s for s in spreads) / len(spreads)) if spreads else None}


def floor(sigma):
    return math.exp(1.96 * sigma) - 1


def table(proof):
    print("| cell | one layout a side: alarms, CI95 ∋ 1, median \\|ratio - 1\\| | with layouts: no_change, CI95 ∋ 1 | "
          "layout floor | wall per comparison, one layout / layouts |")
    print("|---|---|---|---|---|")
    for cell, row in proof.items():
        one, many = summary(row.get("aa1", [])), summary(row.get("aa", []))
        if not many["n"]:
            continue
        alarms = one["regressed"] + one["improved"]
        sigma = many["between_layouts_rms"]
        fl = f"{100 * floor(sigma):.1f}%" if sigma is not None else "-"
        med = f"{100 * one['median_abs']:.2f}%" if one["median_abs"] is not None else "-"
        wall = f"{one['wall_median_s']:.1f} s / {many['wall_median_s']:.1f} s" if one["n"] else f"{many['wall_median_s']:.1f} s"
        print(f"| {cell} | {alarms}/{one['n']}, {one['ci_holds_1']}/{one['n']}, {med} | {many['no_change']}/{many['n']}, {many['ci_holds_1']}/{many['n']} "
              f"| {fl} | {wall} |")
    ab = [(c, r) for c, r in proof.items() if r.get("truth")]
    if ab:
        print()
        print("| cell (+~1%) | true change (the pools' means, ± its standard error) | "
              "one layout a side: wrong sign, regressed | with layouts: improved, CI95 holds the truth, regressed |")
        print("|---|---|---|---|")
        for cell, row in ab:
            truth, se, processes, each = pools_truth(row["truth"])
            one, many = summary(row.get("ab1", []), truth), summary(row.get("ab", []), truth)
            runs = ", ".join(f"x{r:.4f}" for r in each)
            print(f"| {cell} | x{truth:.4f} ±{100 * se:.2f}% ({processes} processes; runs {runs}) "
                  f"| {one['wrong_sign']}/{one['n']}, {one['regressed']}/{one['n']} "
                  f"| {many['improved']}/{many['n']}, {many['ci_holds_truth']}/{many['n']}, "
                  f"{many['regressed']}/{many['n']} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="builds,aa1,aa,truth,ab1,ab")
    p.add_argument("--comparisons", type=int, default=40)
    p.add_argument("--cells", default=",".join(CELLS))
    p.add_argument("--ab", default="wal_zstd_10k,querier_warm,cache_tier_datafusion",
                   help="the cells that also get an A/B of a +1%% change")
    p.add_argument("--truth-rounds", type=int, default=256, help="processes of a truth run (16 a pair at 256)")
    p.add_argument("--truth-runs", type=int, default=2, help="truth runs, pooled")
    p.add_argument("--out", default=os.path.join(TARGET, "layout-proof"))
    p.add_argument("--build", default="--workspace",
                   help="what `benchhost build` builds: `-p benchhost -p PACKAGE` spares a cell that does not use "
                        "DataFusion its 35-minute release build (a comparison's two sides are then still one build)")
    p.add_argument("--table")
    args = p.parse_args()
    args.build = args.build.split()
    if args.table:
        return table(json.load(open(args.table)))
    args.ab = args.ab.split(",")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "proof.json")
    proof = json.load(open(path)) if os.path.exists(path) else {}
    def save():  # through a file renamed into place: a run stopped while saving loses one comparison at most
        with open(path + ".partial", "w") as f:
            json.dump(proof, f, indent=1)
        os.replace(path + ".partial", path)
    for parts in args.parts.split(","):
        for cell in args.cells.split(","):
            row = proof.setdefault(cell, {"filter": CELLS[cell][3], "set": SETS.get(cell, [])})
            if parts == "builds":
                if "built" not in row:
                    part_builds(cell, row, args)
                    row["built"] = time.strftime("%Y-%m-%d %H:%M")
                    save()
                continue
            # Parts joined by `+` take turns, comparison by comparison: what the machine does meanwhile (a
            # noisy half hour) then falls on both alike, not on whichever part ran during it.
            together = [p for p in parts.split("+") if p not in ("truth", "ab1", "ab") or cell in args.ab]
            wanted = {p: args.truth_runs if p == "truth" else args.comparisons for p in together}
            for i in range(max(wanted.values(), default=0)):
                for part in together:
                    done = row.setdefault(part, [])
                    if len(done) <= i < wanted[part]:
                        done.append(comparison(cell, part, len(done), args))
                        save()
            truth = pools_truth(row["truth"])[0] if row.get("truth") else None
            for part in together:
                print(f"{cell} {part}: {summary(row[part], truth)}", flush=True)
    table(proof)


if __name__ == "__main__":
    sys.exit(main())
