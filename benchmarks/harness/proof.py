#!/usr/bin/env python3
"""The side-by-side proof: benchhost's paired verdicts against Criterion 0.8's, on the four workloads of the
`harness` rig (noop, copy64k, sort10k, wal), on this machine. Only the project's own tools, release builds.

Parts (--parts, in this order, each over every workload; each workload's part is saved to OUT/proof.json as
soon as it is finished, and a rerun with the same OUT skips what is finished, so a stopped proof resumes):
  spin        the spin rounds that slow each workload by ~--slowdown (5%), found in place (bisection, each step a
              paired run of its own); every later part injects exactly that spin.
  estimates   benchhost's estimate next to Criterion's, alternating --pairs times, and the wall time of each
              (benchhost with --target-ci 1% --budget 10s, Criterion with its defaults).
  interleave  --comparisons runs of `benchhost run --interleave` with three arms: the reference, a replica (the
              same code: an A/A comparison) and the reference with the spin (an A/B one). Each run gives one
              verdict of each, judged by benchhost itself at --threshold (its default, ±3%); wall time per
              comparison is the run's wall time over its two comparisons. Saved after every run, so a stopped
              part resumes where it stopped.
  against     the same with two builds: `run --plugin-dir B --against A`, where B is the harness plugin built with
              the `slower` feature (the spin compiled in) and A the plain build; A/A compares A with a copy of
              the same library file at a second path. --comparisons runs of each.
  criterion   --trials trials of Criterion's own comparison: `--save-baseline` on the plain code, then
              `--baseline` on the plain code (A/A) and on the spun code (A/B), counting its verdicts.

usage: python3 benchmarks/harness/proof.py [--parts spin,interleave,against,criterion] [--comparisons 100]
                                           [--trials 20] [--pairs 5] [--pairing alternate]
                                           [--threshold 3%] [--slowdown 5]
                                           [--workloads noop,copy64k,sort10k,wal] [--out target/proof]
       python3 benchmarks/harness/proof.py --table results/harness-proof.json
"""
import argparse, json, os, shutil, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BH = os.path.join(TARGET, "release", "benchhost")
LIB = os.path.join(TARGET, "release", "librig_harness.so")
WORKLOADS = ["noop", "copy64k", "sort10k", "wal"]
DECISIONS = ["regressed", "improved", "no_change", "inconclusive", "undefined"]


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


THRESHOLD = []  # ["--threshold", "1%"] when --threshold is given: every benchhost run judges at it


def benchhost(out, extra):
    """One `benchhost run` of the harness rig; its wall time and records."""
    if os.path.exists(out):
        os.remove(out)
    start = time.monotonic()
    sh([BH, "run", "--plugin", "harness", "--no-previous", "--out", out] + THRESHOLD + extra, cwd=ROOT)
    return time.monotonic() - start, records(out)


def time_verdicts(recs):
    return [r for r in recs if r["kind"] == "verdict" and r["verdict"].get("metric") == "time"]


def interleaved(workload, out, arms, pairing, rounds=None):
    """One interleaved run of `arms` (rigs.toml tables of the harness rig): wall time and its time verdicts."""
    config = os.path.join(out, "arms.toml")
    with open(config, "w") as f:
        f.write("".join(f"[[rig.harness]]\n{a}\n" for a in arms))
    extra = ["--config", config, "--set", f"workload={workload}", "--interleave", "--pairing", pairing]
    wall, recs = benchhost(os.path.join(out, "run.jsonl"), extra + (["--rounds", str(rounds)] if rounds else []))
    return wall, time_verdicts(recs)


def spin_key(args):
    return f"spin_rounds_for_{args.slowdown:g}pct"


def find_spin(workload, out, pairing, target):
    """The spin rounds that slow `workload` by `target` (0.05: 5%). The effect is not proportional (a short spin
    hides in a memory-bound workload's stalls, then it climbs steeply), so: double from 1 round until the
    slowdown passes the target, then bisect, each step a paired run of its own."""

    def slowdown(rounds):
        arms = ["params = { spin_rounds = 0 }", f"params = {{ spin_rounds = {rounds} }}"]
        return interleaved(workload, out, arms, pairing)[1][0]["verdict"]["ratio"] - 1

    lo, hi = 0, 1
    while slowdown(hi) < target and hi < 1_000_000_000:
        lo, hi = hi, hi * 2
    for _ in range(6):
        if hi - lo <= 1:
            break
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if slowdown(mid) < target else (lo, mid)
    return hi


def tally(verdicts):
    decisions = [v["verdict"]["decision"] for v in verdicts]
    return {d: decisions.count(d) for d in DECISIONS if decisions.count(d)}


def tally_processes(verdicts):
    counts = {}
    for v in verdicts:
        n = (v["verdict"].get("method") or {}).get("processes")
        counts[n] = counts.get(n, 0) + 1
    return counts


def summary(aa, ab, walls):
    half = lambda v: (v["verdict"]["ci95"][1] - v["verdict"]["ci95"][0]) / 2 if v["verdict"].get("ci95") else None
    return {
        "threshold": THRESHOLD[1] if THRESHOLD else "3%",
        "aa": tally(aa),
        "ab": tally(ab),
        "ab_ratio": med([v["verdict"]["ratio"] for v in ab if v["verdict"].get("ratio")]),
        "aa_ci_half_width": med([h for h in map(half, aa) if h is not None]),
        "aa_detectable": med([v["verdict"]["detectable"] for v in aa if v["verdict"].get("detectable")]),
        "wall_per_comparison": med(walls),
        "wall_max": max(walls) if walls else None,
        "method": (aa or ab or [{"verdict": {}}])[0]["verdict"].get("method"),
        # How many verdicts rest on how many processes (a duel adds some while its interval is too wide).
        "processes": {str(n): c for n, c in sorted(tally_processes(aa + ab).items())},
        # Every verdict's ratio and CI95, to see what an undecided or wrong answer looked like.
        "aa_verdicts": [[v["verdict"].get("ratio"), v["verdict"].get("ci95")] for v in aa],
        "ab_verdicts": [[v["verdict"].get("ratio"), v["verdict"].get("ci95")] for v in ab],
    }


def kept(v):
    """What the summary reads of a verdict record, small enough to save after every run."""
    keys = ["decision", "ratio", "ci95", "detectable", "method"]
    return {"variant": v["variant"], "verdict": {k: v["verdict"].get(k) for k in keys}}


def part_interleave(w, row, args, save):
    arms = ["matrix = { replica = [0, 1] }", f"params = {{ spin_rounds = {row[spin_key(args)]} }}"]
    # Progress is saved in the row after every run and dropped when the part is finished.
    done = row.setdefault("interleave_runs", {"aa": [], "ab": [], "walls": []})
    aa, ab, walls = done["aa"], done["ab"], done["walls"]
    while len(walls) < args.comparisons:
        wall, verdicts = interleaved(w, args.out, arms, args.pairing)
        walls.append(wall / max(1, len(verdicts)))
        for v in verdicts:
            (ab if v["variant"]["spin_rounds"] else aa).append(kept(v))
        save()
    del row["interleave_runs"]
    return summary(aa, ab, walls)


def build_slower(spin, into):
    """The harness plugin with `spin` rounds compiled in (feature `slower`), copied to `into`; the plain build
    is restored afterwards (cargo keeps both builds' artifacts, so each rebuild is a relink)."""
    env = dict(os.environ, HARNESS_SLOWER_SPIN=str(spin))
    sh(["cargo", "build", "--release", "-p", "rig-harness", "--features", "slower"], cwd=ROOT, env=env)
    os.makedirs(into, exist_ok=True)
    shutil.copy(LIB, os.path.join(into, "librig_harness.so"))
    sh(["cargo", "build", "--release", "-p", "rig-harness"], cwd=ROOT)


def part_against(w, row, args, save):
    dirs = {name: os.path.join(args.out, f"build-{name}") for name in ["a", "a-copy", "b"]}
    for name in ["a", "a-copy"]:
        os.makedirs(dirs[name], exist_ok=True)
        shutil.copy(LIB, os.path.join(dirs[name], "librig_harness.so"))
    # A spin compiled in does not slow the workload exactly as the same spin passed as a parameter does (code
    # layout): measure the built one (the median of three runs) and, when it is off by more than a tenth of
    # the target, scale it once.
    spin, target = row[spin_key(args)], args.slowdown / 100
    build_slower(spin, dirs["b"])
    extra = ["--plugin-dir", dirs["b"], "--against", dirs["a"], "--set", f"workload={w}", "--pairing", args.pairing]
    slowdown = med([time_verdicts(benchhost(os.path.join(args.out, "against.jsonl"), extra)[1])[0]["verdict"]["ratio"]
                    for _ in range(3)]) - 1
    if abs(slowdown - target) > target / 10 and slowdown > 0:
        spin = max(1, round(spin * target / slowdown))
        build_slower(spin, dirs["b"])
    row["built_in_spin"] = spin
    aa, ab, walls = [], [], []
    for i in range(args.comparisons):
        # Alternate A/A and A/B runs, so both see the same stretch of the machine's weather.
        for new, verdicts in [("a-copy", aa), ("b", ab)]:
            extra = ["--plugin-dir", dirs[new], "--against", dirs["a"], "--set", f"workload={w}"]
            extra += ["--pairing", args.pairing]
            wall, recs = benchhost(os.path.join(args.out, "against.jsonl"), extra)
            walls.append(wall)
            verdicts.extend(time_verdicts(recs))
    return summary(aa, ab, walls)


def criterion_bin():
    built = sh(["cargo", "bench", "-p", "rig-harness", "--bench", "criterion", "--no-run", "--message-format=json"],
               cwd=ROOT)
    return [json.loads(l)["executable"] for l in built.stdout.splitlines()
            if '"executable":"' in l and "criterion" in l][-1]


def criterion(bench_bin, workload, home, spin, baseline_flag):
    """One Criterion run; its wall time and, for a comparison, its verdict."""
    env = dict(os.environ, CRITERION_HOME=home, HARNESS_SPIN_ROUNDS=str(spin))
    start = time.monotonic()
    out = sh([bench_bin, "--bench", "--noplot", "--exact", workload] + baseline_flag, cwd=ROOT, env=env).stdout
    wall = time.monotonic() - start
    if "Performance has regressed" in out:
        verdict = "regressed"
    elif "Performance has improved" in out:
        verdict = "improved"
    else:  # "No change in performance detected." or "Change within noise threshold."
        verdict = "no_change"
    return wall, verdict


def part_criterion(w, row, args, save):
    bench_bin = criterion_bin()
    home = os.path.join(args.out, "criterion")
    aa, ab, walls = {}, {}, []
    for _ in range(args.trials):
        saved, _ = criterion(bench_bin, w, home, 0, ["--save-baseline", "proof"])
        for spin, counts in [(0, aa), (row[spin_key(args)], ab)]:
            wall, verdict = criterion(bench_bin, w, home, spin, ["--baseline", "proof"])
            counts[verdict] = counts.get(verdict, 0) + 1
            # A comparison costs the saved run and the compared one.
            walls.append(saved + wall)
    return {"aa": aa, "ab": ab, "wall_per_comparison": med(walls)}


def part_estimates(w, row, args, save):
    bench_bin = criterion_bin()
    est = {"ratios": [], "bh_wall": [], "bh_stop": [], "bh_ns": [], "cr_wall": [], "cr_ns": []}
    for _ in range(args.pairs):
        wall, recs = benchhost(os.path.join(args.out, "target.jsonl"),
                               ["--set", f"workload={w}", "--target-ci", "1%", "--budget", "10s"])
        m = [r for r in recs if r["kind"] == "measurement"][0]
        home = os.path.join(args.out, "criterion")
        cr_wall, _ = criterion(bench_bin, w, home, 0, [])
        with open(os.path.join(home, w, "new", "estimates.json")) as f:
            e = json.load(f)
        crit = e["slope" if e.get("slope") else "mean"]["point_estimate"]
        est["ratios"].append(m["metrics"]["time"]["value"] / crit)
        est["bh_wall"].append(wall)
        est["bh_stop"].append(m["cell"].get("stop"))
        est["bh_ns"].append(m["metrics"]["time"]["value"])
        est["cr_wall"].append(cr_wall)
        est["cr_ns"].append(crit)
    return est


PARTS = {"interleave": part_interleave, "against": part_against, "criterion": part_criterion,
         "estimates": part_estimates}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="spin,interleave,against,criterion")
    p.add_argument("--comparisons", type=int, default=100)
    p.add_argument("--trials", type=int, default=20, help="Criterion trials per workload")
    p.add_argument("--pairs", type=int, default=5, help="estimate pairs per workload")
    p.add_argument("--pairing", default="alternate", help="benchhost's --pairing for interleave and against")
    p.add_argument("--threshold", help="benchhost's --threshold for every comparison (its default: 3%%)")
    p.add_argument("--slowdown", type=float, default=5, help="the A/B slowdown the spin is sized to, in %%")
    p.add_argument("--out", default=os.path.join(TARGET, "proof"))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--table", metavar="PROOF_JSON", help="only print the table of an earlier run's proof.json")
    args = p.parse_args()
    if args.table:
        with open(args.table) as f:
            return table(json.load(f))
    if args.threshold:
        THRESHOLD[:] = ["--threshold", args.threshold]
    os.makedirs(args.out, exist_ok=True)
    sh(["cargo", "build", "--release", "-p", "benchhost", "-p", "rig-harness"], cwd=ROOT)
    path = os.path.join(args.out, "proof.json")
    results = json.load(open(path)) if os.path.exists(path) else {}
    parts, workloads = args.parts.split(","), args.workloads.split(",")
    save = lambda: json.dump(results, open(path, "w"), indent=1)
    for w in workloads:
        row = results.setdefault(w, {})
        if "spin" in parts or spin_key(args) not in row:
            row[spin_key(args)] = find_spin(w, args.out, args.pairing, args.slowdown / 100)
            save()
    # Part by part, so that a proof stopped halfway has whole parts; a part already finished with the same
    # number of comparisons is kept, which is how a stopped proof resumes.
    for part in [p for p in parts if p in PARTS]:
        for w in workloads:
            row = results[w]
            if finished(row.get(part), args.trials if part == "criterion" else args.comparisons):
                continue
            row[part] = PARTS[part](w, row, args, save)
            row[part]["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            row[part]["cpu"] = cpu()
            save()
            print(w, part, json.dumps(row[part]), file=sys.stderr, flush=True)
    table(results)


def cpu():
    """The CPU this machine has (a VM's is AMD EPYC one day, Intel Xeon another): every part says which."""
    with open("/proc/cpuinfo") as f:
        return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))


def finished(part, comparisons):
    return bool(part and part.get("finished") and sum(part["aa"].values()) == comparisons)


def table(results):
    print("| workload | tool, mode | A/A: no_change / false alarms | A/B (+spin): regressed / improved | "
          "slowdown (median ratio) | A/A CI95 ± (median) | wall per comparison |")
    print("|---|---|---|---|---|---|---|")
    for w, row in results.items():
        for part, label in [("interleave", "benchhost --interleave"), ("against", "benchhost --against"),
                            ("criterion", "Criterion 0.8 --baseline")]:
            r = row.get(part)
            if not r:
                continue
            if r.get("method"):
                used = sorted(int(n) for n in r.get("processes", {})) or [r["method"]["processes"]]
                span = f"{used[0]}" if used[0] == used[-1] else f"{used[0]}-{used[-1]}"
                label += f" ({r['method']['mode']}, {span} processes)"
            if r.get("threshold", "3%") != "3%":
                label += f" at --threshold {r['threshold']}"
            if r.get("cpu"):
                label += f", {r['cpu']}"
            aa_n, ab_n = sum(r["aa"].values()), sum(r["ab"].values())
            alarms = r["aa"].get("regressed", 0) + r["aa"].get("improved", 0)
            ratio = f"+{100 * (r['ab_ratio'] - 1):.1f}%" if r.get("ab_ratio") else "–"
            half = f"±{100 * r['aa_ci_half_width']:.2f}%" if r.get("aa_ci_half_width") else "–"
            print(f"| {w} | {label} | {r['aa'].get('no_change', 0)}/{aa_n} / {alarms}/{aa_n} | "
                  f"{r['ab'].get('regressed', 0)}/{ab_n} / {r['ab'].get('improved', 0)}/{ab_n} | {ratio} | {half} | "
                  f"{r['wall_per_comparison']:.1f} s |")


if __name__ == "__main__":
    main()
