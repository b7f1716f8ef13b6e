#!/usr/bin/env python3
"""The trend proof (issue 33): benchhost's change points beside Apache Otava 0.8.0's and MongoDB's
signal-processing-algorithms 2.1.6's, on the same corpus of nightly histories with known steps (corpus.py).

Parts (--parts, in this order; each saved to OUT/proof.json when finished, and skipped on a rerun):
  corpus     the corpus (corpus.py --seed --repeats) in OUT/corpus.
  benchhost  `benchhost trend OUT/corpus/corpus.jsonl --json` (the release build), its wall time and peak RSS.
  otava      Otava's `compute_change_points(values, window_len=50, max_pvalue=0.001)` (its defaults, as its
             CLI runs them) per series, in a virtualenv of its own under ~/.cache/benchhost (installed from
             PyPI on first use), the wall time of the whole corpus.
  spa        signal-processing-algorithms' `e_divisive(values, pvalue=0.05, permutations=100)` (its defaults;
             numpy seeded), in another virtualenv (it pins numpy 1.x, Otava 2.2).

Every tool is scored alike: a true step is found when a change point lies within +-2 nights of it (each point
counts for one step at most); recall per noise and step size; on the step-free series, false change points per
1,000 nights; on the stepping series, the points that match no step (precision); on drifting series, points per
1,000 nights (reported apart: a drift has no right night).

usage: python3 benchmarks/trend/proof.py [--parts corpus,benchhost,otava,spa] [--out target/trend-proof]
                                         [--seed 1] [--repeats 3]
       python3 benchmarks/trend/proof.py --table results/trend-proof.json
"""
import argparse, collections, json, os, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BH = os.path.join(TARGET, "release", "benchhost")
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "benchhost")
VENVS = {"otava": ("otava-venv", ["apache-otava==0.8.0"]),
         "spa": ("spa-venv", ["signal-processing-algorithms==2.1.6"])}

# What each Python tool runs on one series (values on stdin as JSON lists, indices out): the corpus is read once.
RUNNERS = {
    "otava": """
import json, sys, time
from otava.analysis import compute_change_points
series = json.load(sys.stdin)
start = time.monotonic()
found = {k: [int(c.index) for c in compute_change_points(v, window_len=50, max_pvalue=0.001)[0]] for k, v in series.items()}
print(json.dumps({"found": found, "wall_s": time.monotonic() - start}))
""",
    "spa": """
import json, sys, time
import numpy as np
from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive
series = json.load(sys.stdin)
np.random.seed(1)
start = time.monotonic()
found = {k: sorted(int(i) for i in e_divisive(v, pvalue=0.05, permutations=100)) for k, v in series.items()}
print(json.dumps({"found": found, "wall_s": time.monotonic() - start}))
""",
}


def venv_python(tool):
    """The tool's virtualenv's python, made and filled on first use."""
    name, packages = VENVS[tool]
    path = os.path.join(CACHE, name)
    python = os.path.join(path, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", path], check=True)
    probe = subprocess.run([python, "-m", "pip", "show", packages[0].split("==")[0]], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "-q"] + packages, check=True)
    return python


def corpus_values(out):
    values = collections.defaultdict(list)
    with open(os.path.join(out, "corpus", "corpus.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            values[str(r["variant"]["series"])].append(r["metrics"]["time"]["value"])
    return values


def score(truth, found):
    """Recall per noise and step size, false points on step-free series, unmatched points on stepping ones."""
    recall, fp_free, free_nights, unmatched, matched, drift, drift_nights = {}, 0, 0, 0, 0, 0, 0
    for s in truth:
        points = found.get(str(s["series"]), [])
        if s["kind"] == "none":
            fp_free, free_nights = fp_free + len(points), free_nights + s["nights"]
        elif s["kind"] == "drift":
            drift, drift_nights = drift + len(points), drift_nights + s["nights"]
        else:
            used = set()
            for step in s["steps"]:
                key = f"noise {100 * s['noise']:g}%, step {abs(step['pct']):g}%"
                hit = next((p for p in points if abs(p - step["night"]) <= 2 and p not in used), None)
                if hit is not None:
                    used.add(hit)
                row = recall.setdefault(key, [0, 0])
                row[0] += hit is not None
                row[1] += 1
            matched += len(used)
            unmatched += len(points) - len(used)
    return {"recall": recall, "false_per_1000_step_free_nights": round(1000 * fp_free / max(1, free_nights), 3),
            "precision": round(matched / max(1, matched + unmatched), 4), "unmatched": unmatched,
            "drift_points_per_1000_nights": round(1000 * drift / max(1, drift_nights), 3)}


def part_corpus(args):
    subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "trend", "corpus.py"), "--out",
                    os.path.join(args.out, "corpus"), "--seed", str(args.seed), "--repeats", str(args.repeats)],
                   check=True)
    return {"seed": args.seed, "repeats": args.repeats}


def part_benchhost(args, truth):
    subprocess.run(["cargo", "build", "--release", "-p", "benchhost"], cwd=ROOT, check=True, capture_output=True)
    start = time.monotonic()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", BH, "trend", os.path.join(args.out, "corpus", "corpus.jsonl"),
                           "--json"], check=True, capture_output=True, text=True)
    wall = time.monotonic() - start
    found = collections.defaultdict(list)
    for p in json.loads(done.stdout)["change_points"]:
        found[str(p["variant"]["series"])].append(p["index"])
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    return {**score(truth, found), "wall_s": round(wall, 2), "peak_rss_mib": round(peak_kib / 1024, 1)}


def part_python(tool, args, truth):
    python = venv_python(tool)
    done = subprocess.run([python, "-c", RUNNERS[tool]], input=json.dumps(corpus_values(args.out)),
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{tool} failed: {done.stderr.strip()[-2000:]}")
    result = json.loads(done.stdout)
    return {**score(truth, result["found"]), "wall_s": round(result["wall_s"], 2)}


def table(proof):
    tools = [t for t in ["benchhost", "otava", "spa"] if t in proof]
    names = {"benchhost": "benchhost trend", "otava": "Apache Otava 0.8.0", "spa": "signal-processing-algorithms 2.1.6"}
    keys = sorted({k for t in tools for k in proof[t]["recall"]},
                  key=lambda k: [float(x.split()[-1].rstrip("%,")) for x in k.split(", ")])
    print("| | " + " | ".join(names[t] for t in tools) + " |")
    print("|---" * (len(tools) + 1) + "|")
    for k in keys:
        print(f"| recall at +-2 nights, {k} | " + " | ".join(
            "{}/{}".format(*proof[t]["recall"][k]) if k in proof[t]["recall"] else "-" for t in tools) + " |")
    for label, field in [("false change points per 1,000 step-free nights", "false_per_1000_step_free_nights"),
                         ("precision on stepping series", "precision"),
                         ("points per 1,000 drifting nights", "drift_points_per_1000_nights"),
                         ("wall time, whole corpus (s)", "wall_s")]:
        print(f"| {label} | " + " | ".join(str(proof[t].get(field, "-")) for t in tools) + " |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="corpus,benchhost,otava,spa")
    p.add_argument("--out", default=os.path.join(TARGET, "trend-proof"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--table")
    args = p.parse_args()
    if args.table:
        with open(args.table) as f:
            return table(json.load(f))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "proof.json")
    proof = json.load(open(path)) if os.path.exists(path) else {}
    for part in args.parts.split(","):
        if part in proof:
            continue
        if part == "corpus":
            proof[part] = part_corpus(args)
        else:
            with open(os.path.join(args.out, "corpus", "truth.json")) as f:
                truth = json.load(f)
            proof[part] = part_benchhost(args, truth) if part == "benchhost" else part_python(part, args, truth)
        proof[part]["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        json.dump(proof, open(path, "w"), indent=1)
        print(part, json.dumps(proof[part]), file=sys.stderr, flush=True)
    table(proof)


if __name__ == "__main__":
    sys.exit(main())
