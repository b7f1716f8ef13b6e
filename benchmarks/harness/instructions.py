#!/usr/bin/env python3
"""The proof of `run --instructions` (issue 18) on the harness rig's four workloads (noop, copy64k, sort10k,
wal), release builds, this machine:
  - the count per iteration, and what one count costs in wall time next to the wall-time measurement of the
    same cell (default plan);
  - A/A: --trials runs of `run --instructions --interleave --pairing rounds --rounds 2` over arms that run
    identical code (replica 0 and 1), each count a process of its own: the spread of the A/A ratio (the
    committed proof ran `--rounds 1`, which `run` has refused with `--interleave` since paired verdicts take
    their interval over processes; the count is taken once a cell either way);
  - the same runs carry two more arms, the reference with a spin sized to +1% and +5% of its instructions
    (`spin_rounds`; where one round is more than 1%, on one iteration in `spin_every`, and then every arm has
    the same `spin_every`, so that they differ by the rounds alone): how often each is `regressed`;
  - Callgrind's own count of the same iterations (`examples/iterate.rs`, no plugin, under
    `--toggle-collect=*run_iterations*`), as a sanity ratio;
  - the cost of a count on the repository's wal and ingest rigs (rigs.toml, default plans).

usage: python3 benchmarks/harness/instructions.py [--trials 20] [--out target/instructions]
       python3 benchmarks/harness/instructions.py --table results/instructions-proof.json
"""
import argparse, json, os, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
RELEASE = os.path.join(TARGET, "release")
BH, EXAMPLE = os.path.join(RELEASE, "benchhost"), os.path.join(RELEASE, "examples", "iterate")
WORKLOADS = ["noop", "copy64k", "sort10k", "wal"]
SHORT = '[defaults]\nwarmup = "200ms"\nmeasurement = "600ms"\nsamples = 10\n'


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def run(out_dir, extra, config=None):
    """One `benchhost run --instructions`: its wall time and records."""
    out = os.path.join(out_dir, "run.jsonl")
    if os.path.exists(out):
        os.remove(out)
    args = [BH, "run", "--instructions", "--no-previous", "--plugin-dir", RELEASE, "--out", out] + extra
    if config:
        path = os.path.join(out_dir, "rigs.toml")
        with open(path, "w") as f:
            f.write(config)
        args += ["--config", path]
    start = time.monotonic()
    sh(args, cwd=ROOT)
    with open(out) as f:
        return time.monotonic() - start, [json.loads(line) for line in f if line.strip()]


def arms_config(workload, arms):
    return SHORT + "".join(f'[[rig.harness]]\nparams = {{ workload = "{workload}", {a} }}\n' for a in arms)


def count(record):
    return record["metrics"]["instructions"]["value"]


def instruction_verdicts(records):
    return [r for r in records if r["kind"] == "verdict" and r["verdict"].get("metric") == "instructions"]


def round_cost(out_dir):
    """The instructions one spin round adds."""
    arms = ["spin_rounds = 1", "spin_rounds = 101"]
    _, records = run(out_dir, ["--plugin", "harness"], arms_config("noop", arms))
    c1, c101 = [count(r) for r in records if r["kind"] == "measurement"]
    return (c101 - c1) / 100


def spins_for(base, b):
    """`spin_every`, and the `spin_rounds` that add 1% and 5% of `base` instructions per iteration with it."""
    every = max(1, -(-b // (0.01 * base)))
    return int(every), [max(1, round(share * base * every / b)) for share in (0.01, 0.05)]


def callgrind(workload, m, out_dir):
    """Callgrind's count of iterations m+1..2m of `workload`, per iteration (the window benchhost counts)."""
    totals = []
    for n in (m, 2 * m):
        out = os.path.join(out_dir, f"callgrind.{workload}.{n}")
        sh(["valgrind", "--tool=callgrind", "--toggle-collect=*run_iterations*", f"--callgrind-out-file={out}", "-q",
            EXAMPLE, workload, str(n)])
        with open(out) as f:
            totals.append(next(int(l.split()[1]) for l in f if l.startswith("summary:")))
    return (totals[1] - totals[0]) / m


def workload_part(w, b, args):
    # The cost, next to the wall-time measurement of the same cell (default plan).
    _, records = run(args.out, ["--plugin", "harness", "--set", f"workload={w}"])
    cell = records[0]["cell"]
    base, m = count(records[0]), cell["instructions"]["iterations"]
    row = {"per_iteration": base, "iterations": m, "count_wall_ms": cell["instructions"]["wall_ms"],
           "time_cell_wall_ms": cell["wall_ms"], "time_ns": records[0]["metrics"]["time"]["value"],
           "callgrind_per_iteration": callgrind(w, m, args.out)}
    row["callgrind_ratio"] = row["callgrind_per_iteration"] / base
    every, rounds = spins_for(base, b)
    row["spin_every"], row["spin_rounds"] = every, dict(zip(["1%", "5%"], rounds))
    arms = [f"spin_every = {every}, replica = {i}" for i in (0, 1)]
    arms += [f"spin_every = {every}, spin_rounds = {r}" for r in rounds]
    trials = {"aa": [], "1%": [], "5%": []}
    walls = []
    for _ in range(args.trials):
        wall, records = run(args.out, ["--plugin", "harness", "--interleave", "--pairing", "rounds", "--rounds", "2"],
                            arms_config(w, arms))
        walls.append(wall)
        verdicts = instruction_verdicts(records)
        for kind, v in zip(["aa", "1%", "5%"], verdicts):
            trials[kind].append([v["verdict"]["decision"], v["verdict"]["ratio"]])
    row["trials"] = trials
    decisions = lambda kind: {d: [t[0] for t in trials[kind]].count(d) for d in {t[0] for t in trials[kind]}}
    row["aa"], row["1%"], row["5%"] = decisions("aa"), decisions("1%"), decisions("5%")
    row["aa_max_deviation"] = max(abs(t[1] - 1) for t in trials["aa"])
    row["ratios"] = {k: sorted({t[1] for t in trials[k]}) for k in ("1%", "5%")}
    row["trial_wall_s"] = sorted(walls)[len(walls) // 2]
    return row


def rigs_part(args):
    """The cost of a count on the repository's own wal and ingest rigs, default plans."""
    _, records = run(args.out, ["--plugin", "wal", "--plugin", "ingest", "--config", os.path.join(ROOT, "rigs.toml")])
    rows = []
    for r in records:
        if r["kind"] != "measurement":
            continue
        how = r["cell"].get("instructions") or {}
        rows.append({"bench": r["bench"], "variant": r["variant"], "per_iteration": r["metrics"].get("instructions", {}).get("value"),
                     "iterations": how.get("iterations"), "count_wall_ms": how.get("wall_ms"), "unclean": how.get("unclean"),
                     "time_cell_wall_ms": r["cell"]["wall_ms"]})
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--out", default=os.path.join(TARGET, "instructions"))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--table", metavar="JSON")
    args = p.parse_args()
    if args.table:
        with open(args.table) as f:
            return table(json.load(f))
    os.makedirs(args.out, exist_ok=True)
    sh(["cargo", "build", "--release", "-p", "benchhost", "-p", "rig-harness", "-p", "rig-wal", "-p", "rig-ingest"],
       cwd=ROOT)
    sh(["cargo", "build", "--release", "-p", "rig-harness", "--example", "iterate"], cwd=ROOT)
    b = round_cost(args.out)
    result = {"spin_round": b, "workloads": {}, "valgrind": sh(["valgrind", "--version"]).stdout.strip()}
    for w in args.workloads.split(","):
        result["workloads"][w] = workload_part(w, b, args)
        print(w, json.dumps({k: v for k, v in result["workloads"][w].items() if k != "trials"}), file=sys.stderr, flush=True)
    result["rigs"] = rigs_part(args)
    with open(os.path.join(args.out, "instructions.json"), "w") as f:
        json.dump(result, f, indent=1)
    table(result)


def table(result):
    print("| workload | instructions / iteration | A/A: no_change, max deviation | +1%: regressed | +5%: regressed | "
          "count wall / cell | time cell wall | Callgrind / benchhost |")
    print("|---|---|---|---|---|---|---|---|")
    for w, r in result["workloads"].items():
        n = len(r["trials"]["aa"])
        print(f"| {w} | {r['per_iteration']:,.1f} | {r['aa'].get('no_change', 0)}/{n}, {r['aa_max_deviation']:.1e} | "
              f"{r['1%'].get('regressed', 0)}/{n} (x{min(r['ratios']['1%']):.4f}) | "
              f"{r['5%'].get('regressed', 0)}/{n} (x{min(r['ratios']['5%']):.4f}) | {r['count_wall_ms'] / 1000:.1f} s | "
              f"{r['time_cell_wall_ms'] / 1000:.1f} s | {r['callgrind_ratio']:.4f} |")
    print()
    print("| rig | variant | instructions / iteration | count wall |")
    print("|---|---|---|---|")
    for r in result["rigs"]:
        variant = " ".join(f"{k}={v}" for k, v in r["variant"].items())
        value = f"{r['per_iteration']:,.0f}" if r["per_iteration"] else f"none: {r['unclean']}"
        print(f"| {r['bench']} | {variant} | {value} | {(r['count_wall_ms'] or 0) / 1000:.1f} s |")


if __name__ == "__main__":
    main()
