#!/usr/bin/env python3
"""Which pairing gives run-style rigs the tighter paired interval on this machine: `rounds` (each arm in a
process of its own per round, the order reversed every other round), `alternate` (both arms in one process,
whole runs alternating A B B A, over processes) or `concurrent` (both arms at once, one process per core, the
cores swapped between rounds)? Seed 004's rule 6 says to run arms concurrently.

For each rig and mode, --comparisons runs of `benchhost run --plugin RIG --interleave --pairing MODE` over the
rig's arms in the file given (--config), alternating the modes run by run; prints, per verdict series, the
median CI95 half-width and ratio of each mode, and the wall time per run. Release build. Resumable: a run
whose records and wall time are in --out is not run again.

usage: python3 benchmarks/run_style_pairing.py [--comparisons 5] [--rigs kafka_topology,wal_log]
                                               [--modes rounds,alternate,concurrent]
                                               [--config benchmarks/run_style_pairing.toml] [--out target/pairing]
"""
import argparse, json, os, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BH = os.path.join(TARGET, "release", "benchhost")
def run(rig, mode, k, config, out):
    path = os.path.join(out, f"{rig}-{mode}-{k}.jsonl")
    done = path + ".wall"
    if os.path.exists(done):
        with open(done) as f:
            wall = float(f.read())
    else:
        if os.path.exists(path):
            os.remove(path)
        start = time.monotonic()
        subprocess.run([BH, "run", "--plugin", rig, "--config", config, "--interleave", "--pairing", mode,
                        "--no-previous", "--out", path], cwd=ROOT, check=True, capture_output=True)
        wall = time.monotonic() - start
        with open(done, "w") as f:
            f.write(f"{wall:.3f}")
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return wall, [r for r in records if r["kind"] == "verdict"]


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--comparisons", type=int, default=5)
    p.add_argument("--rigs", default="kafka_topology,wal_log")
    p.add_argument("--modes", default="rounds,alternate,concurrent")
    p.add_argument("--config", default=os.path.join(ROOT, "benchmarks", "run_style_pairing.toml"))
    p.add_argument("--out", default=os.path.join(TARGET, "pairing"))
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    modes = args.modes.split(",")
    results = {}
    for rig in args.rigs.split(","):
        series = {}
        walls = {m: [] for m in modes}
        for k in range(args.comparisons):
            for mode in modes:
                wall, verdicts = run(rig, mode, k, args.config, args.out)
                walls[mode].append(wall)
                for v in verdicts:
                    key = f"{json.dumps(v['variant'], sort_keys=True)} {v['verdict']['metric']}"
                    lo, hi = v["verdict"].get("ci95") or (float("nan"), float("nan"))
                    entry = series.setdefault(key, {m: {"half": [], "ratio": [], "decision": []} for m in modes})
                    entry[mode]["half"].append((hi - lo) / 2)
                    entry[mode]["ratio"].append(v["verdict"].get("ratio"))
                    entry[mode]["decision"].append(v["verdict"]["decision"])
        results[rig] = {"series": series, "walls": walls}
        print(f"## {rig}")
        print("| series | " + " | ".join(f"{m}: ratio, CI95 ±" for m in modes) + " |")
        print("|---" * (len(modes) + 1) + "|")
        for key, entry in series.items():
            cells = [f"{med(entry[m]['ratio']):.3f}, ±{100 * med(entry[m]['half']):.1f}%" for m in modes]
            print(f"| {key} | " + " | ".join(cells) + " |")
        print("wall per run: " + ", ".join(f"{m} {med(walls[m]):.0f} s" for m in modes) + "\n")
        sys.stdout.flush()
    with open(os.path.join(args.out, "run_style_pairing.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
