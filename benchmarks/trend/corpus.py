#!/usr/bin/env python3
"""A corpus of nightly histories with known change points, for the trend proof (issue 33): what `benchhost trend`
and Apache Otava are both asked to find.

Each series is one benchmark's nightly value over 300-1,000 nights: log-normal noise of 1%, 2% or 5% around a
level that steps by 2%, 3%, 5% or 10%, up or down (2-4 steps a series, at least 50 nights apart), or never steps
(the step-free series, where every change point found is false), or drifts (0.5-3% per 100 nights, no step:
reported apart, a drift has no right night). Every series also has what this project's VM does to a nightly:
outlier nights (1 in 100, 1.1-1.3x) and slow phases (1 in 150 nights starts 1-3 nights at ~1.5x, with the
hypervisor's steal in the record's conditions 7 times in 10, as measured here: 6-14% in a slow phase, below 2%
otherwise). Each record carries its own CI95 from ~20 samples of within-night noise (a third of the between-night
noise: a night's own interval never sees the night-to-night variance).

    python3 benchmarks/trend/corpus.py --out DIR [--seed 1] [--repeats 3]

writes DIR/corpus.jsonl (benchhost records, bench `corpus`, one series per variant `series=N`, metric `time`),
DIR/truth.json (per series: noise, kind, nights, the true steps as the index of the first night after each and
its size) and DIR/csv/N.csv (time,value per series, as Otava reads a CSV). Deterministic for a seed.
"""
import argparse, json, math, os, random

DAY_MS = 86_400_000
START_MS = 1_764_547_200_000  # 2025-12-01T00:00:00Z
NOISES = [0.01, 0.02, 0.05]
STEPS = [0.02, 0.03, 0.05, 0.10]
MIN_GAP = 50  # nights between two steps, and from a step to either end


def plan(rng, repeats):
    """Every series' kind, noise, length and steps: for each noise, each step size up and down `repeats` times,
    as many step-free series, and a third as many drifting ones."""
    series = []
    for noise in NOISES:
        for size in STEPS:
            for sign in (1, -1):
                for _ in range(repeats):
                    series.append({"noise": noise, "kind": "steps", "step": size * sign})
        series += [{"noise": noise, "kind": "none"} for _ in range(len(STEPS) * 2 * repeats)]
        series += [{"noise": noise, "kind": "drift"} for _ in range(max(1, len(STEPS) * 2 * repeats // 3))]
    for s in series:
        s["nights"] = rng.randint(300, 1000)
        s["steps"] = []
        if s["kind"] == "steps":
            count = rng.randint(2, 4)
            while len(s["steps"]) < count:
                at = rng.randint(MIN_GAP, s["nights"] - MIN_GAP)
                if all(abs(at - t["night"]) >= MIN_GAP for t in s["steps"]):
                    # Direction alternates a little: mostly the series' sign, sometimes back.
                    sign = 1 if rng.random() < 0.75 else -1
                    s["steps"].append({"night": at, "pct": round(100 * s["step"] * sign, 3)})
                elif s["nights"] < MIN_GAP * (count + 1) * 2:
                    count -= 1
            s["steps"].sort(key=lambda t: t["night"])
        if s["kind"] == "drift":
            s["drift_pct_per_100"] = round(rng.uniform(0.5, 3.0) * rng.choice([1, -1]), 3)
    return series


def values(rng, s):
    """The series' nights: (value, ci95, steal %)."""
    level, steps, out, slow_left = 0.0, {t["night"]: t["pct"] / 100 for t in s["steps"]}, [], 0
    base = rng.uniform(1e4, 1e7)
    for night in range(s["nights"]):
        level += math.log1p(steps.get(night, 0.0))
        if s["kind"] == "drift":
            level += math.log1p(s["drift_pct_per_100"] / 100) / 100
        noise = rng.gauss(0, s["noise"])
        if slow_left == 0 and rng.random() < 1 / 150:
            slow_left = rng.randint(1, 3)
        slow = slow_left > 0
        slow_left = max(0, slow_left - 1)
        factor = math.exp(level + noise) * (rng.uniform(1.4, 1.6) if slow else 1.0)
        if not slow and rng.random() < 0.01:
            factor *= rng.uniform(1.1, 1.3)
        value = base * factor
        within = 1.96 * s["noise"] / 3  # the night's own CI95: a third of the between-night noise
        ci = [value * math.exp(-within), value * math.exp(within)]
        steal = rng.uniform(6, 14) if slow and rng.random() < 0.7 else rng.uniform(0, 2)
        out.append((value, ci, steal))
    return out


def record(index, night, value, ci, steal, commit):
    return {
        "schema": 1, "bench": "corpus", "kind": "measurement",
        "run": {"ts_ms": START_MS + night * DAY_MS, "commit": commit, "host": "nightly", "cpu": "corpus",
                "cores": 2, "os": "linux/x86_64", "profile": "release", "id": f"night-{night:04d}",
                "trigger": "nightly"},
        "variant": {"series": index},
        "metrics": {"time": {"value": value, "unit": "ns", "higher_is_better": False, "ci95": ci, "n": 20}},
        "cell": {"index": 0, "warmup_ns": 0, "warmup_iterations": 0, "samples": 20, "wall_ms": 1000,
                 "conditions": {"steal_percent": round(steal, 2), "vm": True, "host_debug": False}},
        "checks": [],
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3, help="series per noise, step size and direction")
    args = p.parse_args()
    rng = random.Random(args.seed)
    series = plan(rng, args.repeats)
    os.makedirs(os.path.join(args.out, "csv"), exist_ok=True)
    commits = ["%012x" % rng.getrandbits(48) for _ in range(max(s["nights"] for s in series))]
    with open(os.path.join(args.out, "corpus.jsonl"), "w") as jsonl:
        for index, s in enumerate(series):
            s["series"] = index
            nights = values(rng, s)
            with open(os.path.join(args.out, "csv", f"{index}.csv"), "w") as csv:
                csv.write("time,value\n")
                for night, (value, ci, steal) in enumerate(nights):
                    jsonl.write(json.dumps(record(index, night, value, ci, steal, commits[night])) + "\n")
                    csv.write(f"{START_MS // 1000 + night * DAY_MS // 1000},{value}\n")
    with open(os.path.join(args.out, "truth.json"), "w") as f:
        json.dump(series, f, indent=1)
    total = sum(s["nights"] for s in series)
    print(f"{len(series)} series, {total} nights, {sum(len(s['steps']) for s in series)} steps -> {args.out}")


if __name__ == "__main__":
    main()
