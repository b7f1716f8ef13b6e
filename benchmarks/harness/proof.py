#!/usr/bin/env python3
"""The side-by-side proof of issue 4: benchhost vs Criterion 0.8 on the same four workloads.

Runs only the project's own tools (release builds): `benchhost` with the `harness` rig, and the Criterion bench
of benchmarks/harness. Per workload:
  (1) estimate, benchhost vs Criterion, interleaved PAIRS times (median ratio);
  (2) the harness cost per iteration is the noop estimate itself;
  (3) wall time: benchhost with --target-ci 1% (and whether it got there) vs a default Criterion run;
  (4) INVOCATIONS separate `benchhost run --rounds ROUNDS` invocations, each with two arms (slowdown 0% and 5%,
      interleaved): every pair of 0% records is an A/A comparison, every (0%, 5%) pair an A/B one, each judged
      by `benchhost compare` itself at the default ±3% threshold. The spin parameter (sized to +5% by measuring the rig with and without it) stands in for a code
      change, so its variant key is normalised before comparing.
Writes OUT/proof.json and prints the README table.

usage: python3 benchmarks/harness/proof.py [--pairs 3] [--invocations 10] [--rounds 3] [--workloads noop,copy64k,sort10k,wal]
                                           [--out target/proof]
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


def judge(old, new, work):
    """benchhost's own decision for two single records of one series."""
    a, b = os.path.join(work, "a.jsonl"), os.path.join(work, "b.jsonl")
    for path, record in ((a, old), (b, new)):
        record = dict(record, variant=dict(record["variant"], spin_rounds=0))
        with open(path, "w") as f:
            f.write(json.dumps(record) + "\n")
    verdicts = os.path.join(work, "v.jsonl")
    if os.path.exists(verdicts):
        os.remove(verdicts)
    sh([BH, "compare", a, b, "--out", verdicts], cwd=ROOT)
    return [v["verdict"]["decision"] for v in records(verdicts) if v["verdict"].get("metric") == "time"][0]


def med(xs):
    return sorted(xs)[len(xs) // 2]


def spin_for_five_percent(workload, base_ns, out):
    """The spin rounds that slow `workload` by 5%, measured in place: the rig with a trial spin worth ~10% at
    an assumed 1 ns per round, against the rig without, interleaved over 5 rounds."""
    trial = max(1, int(base_ns * 0.10))
    config = os.path.join(out, "spin.toml")
    with open(config, "w") as f:
        f.write(f'[defaults]\nwarmup = "300ms"\nmeasurement = "1s"\nsamples = 20\n[rig.harness]\nmatrix = {{ spin_rounds = [0, {trial}] }}\n')
    _, recs = benchhost(workload, os.path.join(out, f"{workload}-spin.jsonl"), ["--config", config, "--rounds", "5"])
    t = {r["variant"]["spin_rounds"]: r["metrics"]["time"]["value"] for r in recs}
    per_round = max((t[trial] - t[0]) / trial, 1e-6)
    return max(1, round(0.05 * t[0] / per_round))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--invocations", type=int, default=10)
    p.add_argument("--out", default=os.path.join(TARGET, "proof"))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds per A/B invocation")
    args = p.parse_args()
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
        config = os.path.join(args.out, "rigs.toml")
        with open(config, "w") as f:
            f.write('[defaults]\nwarmup = "300ms"\nmeasurement = "1s"\nsamples = 20\n'
                    f'[rig.harness]\nmatrix = {{ spin_rounds = [0, {rounds_5}] }}\n')
        arms = {0: [], rounds_5: []}
        for i in range(args.invocations):
            _, recs = benchhost(w, os.path.join(args.out, f"{w}-ab.jsonl"), ["--config", config, "--rounds", str(args.rounds)])
            for r in recs:
                arms[r["variant"]["spin_rounds"]].append(r)
        row["spin_rounds_for_5pct"] = rounds_5
        aa = [judge(x, y, args.out) for x, y in itertools.combinations(arms[0], 2)]
        ab = [judge(x, y, args.out) for x, y in itertools.product(arms[0], arms[rounds_5])]
        row["aa"] = {d: aa.count(d) for d in set(aa)}
        row["ab"] = {d: ab.count(d) for d in set(ab)}
        results[w] = row
        print(w, json.dumps(row), file=sys.stderr)
    with open(os.path.join(args.out, "proof.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("| workload | benchhost | Criterion | ratio (median) | benchhost wall to ±1% (stop) | Criterion wall (CI95 ±) | A/A alarms | 5% detected |")
    print("|---|---|---|---|---|---|---|---|")
    for w, r in results.items():
        aa_n, ab_n = sum(r["aa"].values()), sum(r["ab"].values())
        alarms = r["aa"].get("regressed", 0) + r["aa"].get("improved", 0)
        stops = ",".join(sorted(set(r["bh_stop"])))
        print(f"| {w} | {med(r['bh_ns']):.2f} ns | {med(r['cr_ns']):.2f} ns | {med(r['ratios']):.3f} | "
              f"{med(r['bh_wall']):.1f} s ({stops}) | {med(r['cr_wall']):.1f} s (±{100 * med(r['cr_ci']):.2f}%) | "
              f"{alarms}/{aa_n} | {r['ab'].get('regressed', 0)}/{ab_n} |")


if __name__ == "__main__":
    main()
