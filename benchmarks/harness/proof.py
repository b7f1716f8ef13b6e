#!/usr/bin/env python3
"""The side-by-side proof of issue 4: benchhost vs Criterion 0.8 on the same four workloads.

Runs only the project's own tools (release builds): `benchhost` with the `harness` rig, and the Criterion bench
of benchmarks/harness. Per workload:
  (1) estimate, benchhost vs Criterion, alternating PAIRS times (median ratio);
  (2) the harness cost per iteration is the noop estimate itself;
  (3) wall time: benchhost with --target-ci 1% (and whether it got there) vs a default Criterion run;
  (4) COMPARISONS interleaved comparisons, each one `benchhost run --rounds ROUNDS` with three arms: the
      reference, a replica of it (identical code: an A/A comparison) and the reference slowed by a spin sized
      in place to +5% (an A/B one; the table gives the slowdown it really had, the median paired ratio). Each is judged by benchhost itself (the run's paired verdicts, at the
      default ±3% threshold). Cells are short (30 ms warm-up, 100 ms measurement): between-process noise
      dominates here, so many short rounds buy more than a few long ones.
Writes OUT/proof.json and prints the README table.

usage: python3 benchmarks/harness/proof.py [--pairs 5] [--comparisons 100] [--rounds 10]
                                           [--workloads noop,copy64k,sort10k,wal] [--out target/proof]
       python3 benchmarks/harness/proof.py --table results/harness-proof.json
"""
import argparse, glob, itertools, json, os, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BH = os.path.join(TARGET, "release", "benchhost")
WORKLOADS = ["noop", "copy64k", "sort10k", "wal"]


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def benchhost(workload, out, extra):
    if os.path.exists(out):
        os.remove(out)
    start = time.monotonic()
    sh([BH, "run", "--plugin", "harness", "--set", f"workload={workload}", "--out", out] + extra, cwd=ROOT)
    return time.monotonic() - start, [r for r in records(out) if r["kind"] == "measurement"]


def criterion(bench_bin, workload, home):
    start = time.monotonic()
    sh([bench_bin, "--bench", "--noplot", "--exact", workload], cwd=ROOT, env=dict(os.environ, CRITERION_HOME=home))
    wall = time.monotonic() - start
    with open(os.path.join(home, workload, "new", "estimates.json")) as f:
        est = json.load(f)
    key = "slope" if est.get("slope") else "mean"
    point = est[key]["point_estimate"]
    ci = est["mean"]["confidence_interval"]
    return wall, point, (ci["upper_bound"] - ci["lower_bound"]) / 2 / est["mean"]["point_estimate"]


def med(xs):
    return sorted(xs)[len(xs) // 2]


SHORT_CELLS = '[defaults]\nwarmup = "30ms"\nmeasurement = "100ms"\nsamples = 10\n'


def interleaved(workload, out, name, entries, rounds):
    """One interleaved run of `entries` (rigs.toml tables of the harness rig); its paired verdicts on time."""
    config = os.path.join(out, f"{name}.toml")
    with open(config, "w") as f:
        f.write(SHORT_CELLS + "".join(f"[[rig.harness]]\n{e}\n" for e in entries))
    path = os.path.join(out, f"{workload}-{name}.jsonl")
    benchhost(workload, path, ["--config", config, "--rounds", str(rounds)])
    return [r for r in records(path) if r["kind"] == "verdict" and r["verdict"].get("metric") == "time"]


def spin_for_five_percent(workload, base_ns, out):
    """The spin rounds that slow `workload` by 5%, found in place. The effect is not proportional (a short spin
    hides in a memory-bound workload's stalls, then it climbs steeply), so: double from an assumed 1 ns per
    round until the slowdown passes 5%, then bisect, each step measured paired over 30 interleaved rounds."""

    def slowdown(rounds):
        arms = ["params = { spin_rounds = 0 }", f"params = {{ spin_rounds = {rounds} }}"]
        return interleaved(workload, out, "spin", arms, 30)[0]["verdict"]["ratio"] - 1

    lo, hi = 0, max(1, round(0.05 * base_ns))
    while slowdown(hi) < 0.05 and hi < 1_000_000_000:
        lo, hi = hi, hi * 2
    for _ in range(5):
        if hi - lo <= 1:
            break
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if slowdown(mid) < 0.05 else (lo, mid)
    return hi


def half_width(verdict):
    lo, hi = verdict["verdict"]["ci95"]
    return (hi - lo) / 2


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--comparisons", type=int, default=100)
    p.add_argument("--out", default=os.path.join(TARGET, "proof"))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--rounds", type=int, default=10, help="interleaved rounds per comparison")
    p.add_argument("--table", metavar="PROOF_JSON", help="only print the table of an earlier run's proof.json")
    args = p.parse_args()
    if args.table:
        with open(args.table) as f:
            return table(json.load(f), args.rounds)
    os.makedirs(args.out, exist_ok=True)
    sh(["cargo", "build", "--release", "-p", "benchhost", "-p", "rig-harness"], cwd=ROOT)
    built = sh(["cargo", "bench", "-p", "rig-harness", "--bench", "criterion", "--no-run", "--message-format=json"], cwd=ROOT)
    bench_bin = [json.loads(l)["executable"] for l in built.stdout.splitlines() if '"executable":"' in l and "criterion" in l][-1]
    results = {}
    for w in args.workloads.split(","):
        row = {"ratios": [], "bh_wall": [], "bh_stop": [], "bh_ci": [], "cr_wall": [], "cr_ci": []}
        for i in range(args.pairs):
            wall, recs = benchhost(w, os.path.join(args.out, f"{w}-target.jsonl"), ["--target-ci", "1%", "--budget", "10s"])
            crit_wall, crit, crit_ci = criterion(bench_bin, w, os.path.join(args.out, "criterion"))
            m = recs[0]["metrics"]["time"]
            row["ratios"].append(m["value"] / crit)
            row["bh_wall"].append(wall)
            row["bh_stop"].append(recs[0]["cell"].get("stop"))
            row["bh_ci"].append((m["ci95"][1] - m["ci95"][0]) / 2 / m["value"])
            row["cr_wall"].append(crit_wall)
            row["cr_ci"].append(crit_ci)
            row.setdefault("bh_ns", []).append(m["value"])
            row.setdefault("cr_ns", []).append(crit)
        rounds_5 = spin_for_five_percent(w, med(row["bh_ns"]), args.out)
        arms = ["matrix = { replica = [0, 1] }", f"params = {{ spin_rounds = {rounds_5} }}"]
        aa, ab = [], []
        for i in range(args.comparisons):
            for v in interleaved(w, args.out, "ab", arms, args.rounds):
                (ab if v["variant"]["spin_rounds"] else aa).append(v)
        row["spin_rounds_for_5pct"] = rounds_5
        row["aa"] = {d: [v["verdict"]["decision"] for v in aa].count(d) for d in {v["verdict"]["decision"] for v in aa}}
        row["ab"] = {d: [v["verdict"]["decision"] for v in ab].count(d) for d in {v["verdict"]["decision"] for v in ab}}
        row["aa_ci_half_width"] = med([half_width(v) for v in aa])
        row["ab_ratio"] = med([v["verdict"]["ratio"] for v in ab])
        results[w] = row
        print(w, json.dumps(row), file=sys.stderr)
    with open(os.path.join(args.out, "proof.json"), "w") as f:
        json.dump(results, f, indent=1)
    table(results, args.rounds)


def table(results, rounds):
    print("| workload | benchhost | Criterion | ratio (median) | benchhost wall to ±1% (stop) | Criterion wall (CI95 ±) "
          "| A/A false alarms (CI95 ±) | spin slowdown: detected | rounds for 95% power |")
    print("|---|---|---|---|---|---|---|---|---|")
    for w, r in results.items():
        aa_n, ab_n = sum(r["aa"].values()), sum(r["ab"].values())
        alarms = r["aa"].get("regressed", 0) + r["aa"].get("improved", 0)
        stops = ",".join(sorted(set(r["bh_stop"])))
        print(f"| {w} | {med(r['bh_ns']):.2f} ns | {med(r['cr_ns']):.2f} ns | {med(r['ratios']):.3f} | "
              f"{med(r['bh_wall']):.1f} s ({stops}) | {med(r['cr_wall']):.1f} s (±{100 * med(r['cr_ci']):.2f}%) | "
              f"{alarms}/{aa_n} (±{100 * r['aa_ci_half_width']:.1f}%) | "
              f"+{100 * (r['ab_ratio'] - 1):.1f}%: {r['ab'].get('regressed', 0)}/{ab_n} | "
              f"{rounds_for_power(r['aa_ci_half_width'], rounds)} |")


def rounds_for_power(half_width, rounds, effect=0.05, threshold=0.03):
    """Rounds a paired comparison needs to call `effect` a regression 95% of the time at `threshold`, with the
    per-round spread implied by the A/A intervals (half-width = t(0.975, rounds-1) * sd / sqrt(rounds))."""
    if effect <= threshold:
        return "never (effect within the threshold)"
    t = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 8: 2.36, 10: 2.26, 15: 2.14, 20: 2.09}.get(rounds, 2.0)
    sd = half_width * rounds ** 0.5 / t
    return f"~{((1.96 + 1.645) * sd / (effect - threshold)) ** 2:.0f}"

if __name__ == "__main__":
    main()
