"""The figures of issue 83's proof of unpaired verdicts (docs/src/reading-a-verdict.md), each generated from
results/unpaired-proof*.json (benchmarks/unpaired_proof.py): -3, the set run after the rules were fixed (out of
sample), and the two sets before it, judged again by the same rules (the second is where the unsettled rules
were found). prose_figures.figure finds them here."""
import math

from prose_figures import load

ARMS = {"aa": "A/A, idle", "hogs": "A/A, two `yes`", "ab": "+5% against the plain runs"}
WAYS = {"history": "its runs before", "alone": "the run before alone"}
SETS = ("unpaired-proof.json", "unpaired-proof-2.json", "unpaired-proof-3.json")


def counts(rows):
    decisions = [r["decision"] for r in rows]
    with_ci = [r for r in rows if r["ci95"]]
    holds = sum(r["ci95"][0] <= 1 <= r["ci95"][1] for r in with_ci)
    return decisions, holds, len(with_ci)


def alarms(decisions):
    return decisions.count("regressed") + decisions.count("improved")


def unpaired_table():
    """Per arm, cell, source of the spread and threshold of the newest set: the comparisons' decisions, how
    often the CI95 held no change, and how many were unsettled."""
    proof = load(SETS[-1])
    rows = ["| runs | cell | spread from | threshold | comparisons | `regressed` | `improved` | `no_change` | "
            "`inconclusive` | of them unsettled | CI95 holds 1 |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, cell in proof["cells"].items():
        arm, name = key.split("/")
        for way in WAYS:
            for threshold in ("3%", "1%"):
                mine = [r for r in cell["judged"] if r["way"] == way and r["threshold"] == threshold]
                decisions, holds, with_ci = counts(mine)
                unsettled = sum(bool(r.get("unsettled")) for r in mine)
                rows.append(f"| {ARMS[arm]} | {name} | {WAYS[way]} | ±{threshold} | {len(mine)} | "
                            f"{decisions.count('regressed')} | {decisions.count('improved')} | "
                            f"{decisions.count('no_change')} | {decisions.count('inconclusive')} | {unsettled} | "
                            f"{holds} of {with_ci} |")
    return "\n".join(rows)


def unpaired_spreads():
    """How far successive runs of the newest set's A/A cells were apart (the root mean square of their log
    differences), idle and under load, and how wide the intervals that counted it were."""
    proof = load(SETS[-1])["cells"]

    def rms(values):
        logs = [math.log(v) for v in values]
        return math.sqrt(sum((b - a) ** 2 for a, b in zip(logs, logs[1:])) / (len(logs) - 1))

    def span(arm):
        spreads = [rms(c["values"]) for k, c in proof.items() if k.startswith(arm + "/")]
        low, high = f"{100 * min(spreads):.1f}", f"{100 * max(spreads):.1f}"
        return f"{low}%" if low == high else f"{low}-{high}%"

    halves = [math.log(r["ci95"][1] / r["ci95"][0]) / 2 for c in proof.values() for r in c["judged"] if r["ci95"]]
    return (f"Two successive runs of these cells differ by {span('aa')} (root mean square) on this VM idle, "
            f"{span('hogs')} under load, so the intervals are ±{100 * min(halves):.0f}-{100 * max(halves):.0f}% "
            f"wide")


def unpaired_earlier():
    """The two sets before the newest, judged by the same rules: per set, the A/A alarms at ±3% from the runs
    before, how often the CI95 held 1, and how many comparisons were unsettled."""
    parts = []
    for n, name in enumerate(SETS[:-1], 1):
        rows = [r for key, cell in load(name)["cells"].items() if not key.startswith("ab/")
                for r in cell["judged"] if r["way"] == "history" and r["threshold"] == "3%"]
        decisions, holds, with_ci = counts(rows)
        unsettled = sum(bool(r.get("unsettled")) for r in rows)
        parts.append(f"set {n}: {alarms(decisions)} alarms in {len(rows)}, the CI95 holding 1 in {holds} of "
                     f"{with_ci}, {unsettled} unsettled")
    return "; ".join(parts)


def unpaired_caught():
    """How often the newest set's +5% build was called `regressed` against the plain runs before it, at ±3% and
    at ±1%, and how often `improved`."""
    rows = [r for r in load(SETS[-1])["cells"]["ab/wal"]["judged"] if r["way"] == "history"]
    said = {t: [r["decision"] for r in rows if r["threshold"] == t] for t in ("3%", "1%")}
    improved = sum(d.count("improved") for d in said.values())
    return (f"{said['3%'].count('regressed')} of {len(said['3%'])} times at ±3% "
            f"({said['1%'].count('regressed')} at ±1%), `improved` {improved} times")


def unpaired_cpu():
    """The CPU the newest set ran on."""
    return load(SETS[-1])["cpu"]


FIGURES = {
    "unpaired-table": unpaired_table,
    "unpaired-cpu": unpaired_cpu,
    "unpaired-spreads": unpaired_spreads,
    "unpaired-earlier": unpaired_earlier,
    "unpaired-caught": unpaired_caught,
}
