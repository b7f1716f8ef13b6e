"""The figures of issue 83's proof of unpaired verdicts (docs/src/reading-a-verdict.md), each generated from
results/unpaired-proof.json (benchmarks/unpaired_proof.py). prose_figures.figure finds them here."""
from prose_figures import load

ARMS = {"aa": "A/A, idle", "hogs": "A/A, two `yes`", "ab": "+5% against the plain runs"}
WAYS = {"history": "its runs before", "calibration": "the run before and `calibrate`"}


def counts(rows):
    decisions = [r["decision"] for r in rows]
    with_ci = [r for r in rows if r["ci95"]]
    holds = sum(r["ci95"][0] <= 1 <= r["ci95"][1] for r in with_ci)
    return decisions, holds, len(with_ci)


def unpaired_table():
    """Per arm, cell, source of the spread and threshold: the comparisons' decisions and how often the CI95
    held no change."""
    proof = load("unpaired-proof.json")
    rows = ["| runs | cell | spread from | threshold | comparisons | `regressed` | `improved` | `no_change` | "
            "`inconclusive` | CI95 holds 1 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for key, cell in proof["cells"].items():
        arm, name = key.split("/")
        for way in WAYS:
            for threshold in ("3%", "1%"):
                mine = [r for r in cell["judged"] if r["way"] == way and r["threshold"] == threshold]
                decisions, holds, with_ci = counts(mine)
                rows.append(f"| {ARMS[arm]} | {name} | {WAYS[way]} | ±{threshold} | {len(mine)} | "
                            f"{decisions.count('regressed')} | {decisions.count('improved')} | "
                            f"{decisions.count('no_change')} | {decisions.count('inconclusive')} | "
                            f"{holds} of {with_ci} |")
    return "\n".join(rows)


def unpaired_spreads():
    """How far successive runs of the A/A cells were apart (the root mean square of their log differences),
    idle and under load, and how wide the intervals that counted it were."""
    import math
    proof = load("unpaired-proof.json")["cells"]

    def rms(values):
        logs = [math.log(v) for v in values]
        return math.sqrt(sum((b - a) ** 2 for a, b in zip(logs, logs[1:])) / (len(logs) - 1))

    def span(arm):
        spreads = [rms(c["values"]) for k, c in proof.items() if k.startswith(arm + "/")]
        return f"{100 * min(spreads):.0f}-{100 * max(spreads):.0f}%"

    halves = [math.log(r["ci95"][1] / r["ci95"][0]) / 2 for c in proof.values() for r in c["judged"] if r["ci95"]]
    return (f"Two successive runs of these cells differ by {span('aa')} (root mean square) on this VM idle, "
            f"{span('hogs')} under load, so the intervals are ±{100 * min(halves):.0f}-{100 * max(halves):.0f}% "
            f"wide")


def unpaired_second():
    """The second idle A/A set (results/unpaired-proof-2.json), its spread from the runs before: per cell the
    alarms at ±3% and how often the CI95 held 1, and how much slower than its median its slowest run was."""
    import statistics
    parts = []
    for key, cell in load("unpaired-proof-2.json")["cells"].items():
        mine = [r for r in cell["judged"] if r["way"] == "history" and r["threshold"] == "3%"]
        decisions, holds, with_ci = counts(mine)
        alarms = decisions.count("regressed") + decisions.count("improved")
        slowest = max(cell["values"]) / statistics.median(cell["values"]) - 1
        parts.append(f"{key.split('/')[1]} {alarms} alarms in {len(mine)}, its CI95 holding 1 in {holds} of "
                     f"{with_ci} (slowest run {100 * slowest:+.0f}% on its median)")
    return "; ".join(parts)


def unpaired_cpu():
    """The CPU the proof ran on."""
    return load("unpaired-proof.json")["cpu"]


FIGURES = {
    "unpaired-table": unpaired_table,
    "unpaired-cpu": unpaired_cpu,
    "unpaired-spreads": unpaired_spreads,
    "unpaired-second": unpaired_second,
}
