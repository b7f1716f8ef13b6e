#!/usr/bin/env python3
"""When an alternating duel stops taking processes (issue 31, item 5): the rule of `analysis::duel::needs_more`
and the two it was chosen against, on simulated duels and replayed on a proof's stored comparisons.

A duel plans 10 or 20 processes and may add 4 at a time, up to EXTRA, while it is undecided. Rules compared:
  width     the earlier rule: more while the CI95 is wider than the band and reaches into it
  plain     more while the verdict would be `inconclusive`
  widened   more while it would be `inconclusive` with both intervals WIDENING times as wide (the rule)
The verdict itself is always the plain rule on the processes the duel stopped at (Yuen's interval of the 20%
trimmed mean over processes, as `analysis::duel::intervals`; regressed/improved: CI95 excludes 0 and the
estimate is beyond the threshold; no_change: CI90 within it).

usage: python3 benchmarks/stop_rule.py                       simulated duels (normal processes)
       python3 benchmarks/stop_rule.py layouts [EXTRA ...]   simulated duels over layout pairs (issue 82): each two
                                   processes a pair of layouts whose effect is drawn once; the verdict over the
                                   pairs' means (Yuen's from 7 pairs, as `analysis::duel::pair_intervals`); pairs
                                   beyond the pool of 16 cycling (as before) or fresh (`layouts::Draw` now)
       python3 benchmarks/stop_rule.py PROOF.json CELL PART PLANNED
                                   replay: each comparison's stored per-process log ratios, in process order,
                                   under each rule from PLANNED processes (10 for the querier: its processes cost
                                   ~0.7 s each; `-v` says how many a duel planned); a rule that wants more
                                   processes than were stored stops at those
"""
import json, math, random, statistics, sys
from collections import Counter

THRESHOLD, WIDENING, STEP, EXTRA = 0.03, 1.5, 4, 44  # EXTRA: run::duels::EXTRA_PROCESSES (8, then 24, in issue 82)


def t_quantile(p, df):
    """Student's t quantile: the Cornish-Fisher expansion about the normal one (within 0.1% of the tables from 5
    degrees of freedom; exact below)."""
    if df in (1, 3):
        return {0.975: {1: 12.706, 3: 3.182}, 0.95: {1: 6.314, 3: 2.353}}[p][df]
    z = statistics.NormalDist().inv_cdf(p)
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


T975 = {df: t_quantile(0.975, df) for df in range(1, 100)}
T95 = {df: t_quantile(0.95, df) for df in range(1, 100)}


def intervals(logs):
    n = len(logs)
    cut = int(n * 0.2)
    kept = n - 2 * cut
    s = sorted(logs)
    est = sum(s[cut:n - cut]) / kept
    w = [min(max(v, s[cut]), s[n - cut - 1]) for v in s]
    se = math.sqrt((n - 1) * statistics.variance(w) / (kept * (kept - 1)))
    return est, T975[kept - 1] * se, T95[kept - 1] * se


def decide(logs, widen=1.0):
    est, h95, h90 = intervals(logs)
    band = math.log(1 + THRESHOLD)
    if est - widen * h95 > 0 and est > band:
        return "regressed"
    if est + widen * h95 < 0 and est < -band:
        return "improved"
    if abs(est) + widen * h90 <= band:
        return "no_change"
    return "inconclusive"


def width_needs_more(logs):
    est, h95, _ = intervals(logs)
    band = math.log(1 + THRESHOLD)
    return 2 * h95 > band and not (est - h95 > band or est + h95 < -band)


RULES = {
    "width": width_needs_more,
    "plain": lambda logs: decide(logs) == "inconclusive",
    "widened": lambda logs: decide(logs, WIDENING) == "inconclusive",
}


def stop(logs, planned, needs_more):
    n = planned
    while n < min(len(logs), planned + EXTRA) and needs_more(logs[:n]):
        n += STEP
    return n


def simulate(duels=2000):
    random.seed(3)
    for planned in (10, 20):
        for sd in (0.01, 0.02, 0.03, 0.045):
            for change in (0.0, 0.045):
                draws = [[random.gauss(math.log(1 + change), sd) for _ in range(planned + EXTRA)] for _ in range(duels)]
                print(f"planned {planned}, processes' sd {sd:.1%}, change {change:+.1%}")
                for name, needs_more in RULES.items():
                    ends = [stop(logs, planned, needs_more) for logs in draws]
                    decisions = Counter(decide(logs[:n]) for logs, n in zip(draws, ends))
                    shares = ", ".join(f"{d} {c / duels:.1%}" for d, c in sorted(decisions.items()))
                    print(f"  {name:8} {statistics.mean(ends):5.1f} processes; {shares}")


def pair_decide(means, widen=1.0):
    """The verdict over layout pairs' means: Yuen's interval from TRIMMED_PAIRS (7) pairs, the plain mean's below."""
    n = len(means)
    if n >= 7:
        est, h95, h90 = intervals(means)
    else:
        est, se = statistics.mean(means), statistics.stdev(means) / math.sqrt(n)
        h95, h90 = T975[n - 1] * se, T95[n - 1] * se
    band = math.log(1 + THRESHOLD)
    if est - widen * h95 > 0 and est > band:
        return "regressed"
    if est + widen * h95 < 0 and est < -band:
        return "improved"
    return "no_change" if abs(est) + widen * h90 <= band else "inconclusive"


def layout_duel(change, between_layouts, between_processes, extra, pool, rng, planned=20):
    """One duel over layout pairs: processes 2k and 2k + 1 on pair k (k modulo `pool` when it cycles), more
    processes by STEP while the widened verdict is inconclusive; its verdict and processes."""
    effects, processes = {}, []

    def run_to(n):
        for p in range(len(processes), n):
            k = (p // 2) % pool if pool else p // 2
            if k not in effects:
                effects[k] = rng.gauss(0, between_layouts)
            processes.append((k, math.log(1 + change) + effects[k] + rng.gauss(0, between_processes)))

    def means():
        pairs = {}
        for k, v in processes:
            pairs.setdefault(k, []).append(v)
        return [statistics.mean(v) for v in pairs.values()]

    run_to(planned)
    while len(processes) < planned + extra and pair_decide(means(), WIDENING) == "inconclusive":
        run_to(len(processes) + STEP)
    return pair_decide(means()), len(processes)


def simulate_layouts(extras, duels=2000):
    """A/A and +4.5% duels over layouts, sd between layout pairs and between processes as the registry suites'
    A/A measured them (true_count 3.7% and 3.2%, the median comparison's)."""
    for between_layouts, between_processes in ((0.037, 0.032), (0.025, 0.03), (0.015, 0.02)):
        for change in (0.0, 0.045):
            print(f"layouts' sd {between_layouts:.1%}, processes' sd {between_processes:.1%}, change {change:+.1%}")
            for extra in extras:
                for pool in (16, None):
                    rng = random.Random(5)
                    ends = [layout_duel(change, between_layouts, between_processes, extra, pool, rng)
                            for _ in range(duels)]
                    decisions = Counter(d for d, _ in ends)
                    shares = ", ".join(f"{d} {c / duels:.1%}" for d, c in sorted(decisions.items()))
                    pairs = "pool of 16, cycling" if pool else "fresh pairs"
                    print(f"  up to {extra:2} more, {pairs:19} {statistics.mean(n for _, n in ends):5.1f} "
                          f"processes; {shares}")


def replay(path, cell, part, planned):
    rows = json.load(open(path))[cell][part]
    planned = int(planned)
    for name, needs_more in RULES.items():
        outcomes = Counter()
        for row in rows:
            logs = row["log_ratios"]
            n = stop(logs, planned, needs_more)
            outcomes[(decide(logs[:n]), n)] += 1
        print(f"{name:8} " + ", ".join(f"{d} at {n}: {c}" for (d, n), c in sorted(outcomes.items())))


if __name__ == "__main__":
    if sys.argv[1:2] == ["layouts"]:
        simulate_layouts([int(e) for e in sys.argv[2:]] or [24, 44])
    elif len(sys.argv) == 5:
        replay(*sys.argv[1:5])
    else:
        simulate()
