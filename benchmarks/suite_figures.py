"""The figures of the guide's page on existing suites (docs/src/criterion-suite.md, issue 82), each generated from
results/criterion-proof.json: the registry suites under the rename, the A/A over layouts of their ids, and the
A/B of the example suite. prose_figures.figure finds them here."""
import statistics

from prose_figures import load, seconds


def suites(harness):
    """The registry suites of `harness` (criterion, divan), each with its row of part `suites`."""
    proof = load("criterion-proof.json")
    return [(crate, row["suites"]) for crate, row in proof.items()
            if "suites" in row and row["suites"].get("harness", "criterion") == harness]


def criterion_suites():
    """Issue 82's registry suites: their ids against Criterion's, each run, and the cost of the plugins."""
    parts = []
    for crate, s in suites("criterion"):
        ran = "each measured" if s["every_id_ran"] else f"{len(s['measured_ids'])} measured"
        parts.append(f"{crate} {s['version']}: {len(s['renamed_ids'])} ids in {len(s['rigs'])} bench targets, "
                     f"{'the same' if s['same_ids'] else 'not the same'} as Criterion lists them, {ran}, "
                     f"{len(s['failures'])} failures")
    return "; ".join(parts)


def criterion_cost():
    """`benchhost build --benches` beside `cargo bench --no-run`, arrow-array's."""
    s = load("criterion-proof.json")["arrow-array"]["suites"]
    return (f"`cargo bench --no-run` took {seconds(s['plain_no_run_cold_s'])} cold with Criterion and "
            f"{seconds(s['renamed_no_run_cold_s'])} with the rename; `benchhost build --benches` then "
            f"{seconds(s['build_benches_cold_s'])}; after one bench file changed, {seconds(s['build_benches_warm_s'])} "
            f"against `cargo bench --no-run`'s {seconds(s['cargo_no_run_warm_s'])}; a `--quick` run of all "
            f"{len(s['renamed_ids'])} ids, {seconds(s['run_all_quick_s'])}")


def criterion_aa():
    """Issue 82's A/A over layouts (two link seeds of one build) on ids of the registry suites, a row per id."""
    rows = ["| suite | bench target: id | comparisons | `no_change` | `inconclusive` | alarms | CI95 holds 1 | wall (median) |",
            "|---|---|---|---|---|---|---|---|"]
    for crate, proof in load("criterion-proof.json").items():
        for key, runs in proof.get("aa", {}).items():
            decisions = [c["decision"] for c in runs]
            held = sum(c["ci95"][0] <= 1 <= c["ci95"][1] for c in runs)
            alarms = decisions.count("regressed") + decisions.count("improved")
            rig, bench_id = key.split(":", 1)
            rows.append(f"| {crate} | {rig}: `{bench_id}` | {len(runs)} | {decisions.count('no_change')} | "
                        f"{decisions.count('inconclusive')} | {alarms} | {held} | "
                        f"{seconds(statistics.median(c['wall_s'] for c in runs))} |")
    return "\n".join(rows)


def criterion_processes():
    """Criterion itself on the noisiest id of the A/A, one process a run: how far its estimates lie apart."""
    row = load("criterion-proof.json")["arrow-array"]["criterion_processes"]
    middles = [e[1] for e in row["estimates_us"]]
    return f"{min(middles):.2f} µs to {max(middles):.2f} µs in {len(middles)} processes"


def criterion_aa_summary():
    """The A/A over layouts of the registry suites, all ids at once."""
    runs = [c for proof in load("criterion-proof.json").values() for v in proof.get("aa", {}).values() for c in v]
    alarms = sum(c["decision"] in ("regressed", "improved") for c in runs)
    held = sum(c["ci95"][0] <= 1 <= c["ci95"][1] for c in runs)
    return f"{alarms} of {len(runs)} comparisons called identical source `regressed` or `improved`, and the CI95 held 1 in {held}"



def divan_suites():
    """Issue 82's registry Divan suite: its paths against Divan's own list, each run."""
    parts = []
    for crate, s in suites("divan"):
        ran = "each measured" if s["every_id_ran"] else f"{len(s['measured_ids'])} measured"
        parts.append(f"{crate} {s['version']}: {len(s['renamed_ids'])} benchmarks in {len(s['rigs'])} bench target"
                     f"{'' if len(s['rigs']) == 1 else 's'}, {'the same' if s['same_ids'] else 'not the same'} as "
                     f"Divan lists them, {ran}, {len(s['failures'])} failures")
    return "; ".join(parts)


def pools_truth(runs):
    """The true change of an A/B's pools of layouts, from its truth runs (layout_proof.py's estimate)."""
    import layout_proof  # noqa: E402
    return layout_proof.pools_truth(runs)


def criterion_ab():
    """The example suite's A/B over layouts, a row per arm: the compiled-in slowdown, the true change of the
    pools, and the 40 comparisons' decisions and intervals."""
    rows = ["| compiled in | id | true change (pools of layouts) | comparisons | `regressed` | `no_change` | "
            "`inconclusive` | `improved` | CI95 holds the true change | wall (median) |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for arm, row in load("criterion-proof.json").get("criterion-suite", {}).items():
        truth, se, processes, _ = pools_truth(row["truth"])
        runs = row["comparisons"]
        decisions = [c["decision"] for c in runs]
        held = sum(c["ci95"][0] <= truth <= c["ci95"][1] for c in runs)
        rows.append(f"| +{100 * row['share']:.0f}% ({row['spin']} spin rounds) | `{row['id']}` | "
                    f"x{truth:.4f} ±{100 * se:.2f}% ({processes} processes) | {len(runs)} | "
                    f"{decisions.count('regressed')} | {decisions.count('no_change')} | "
                    f"{decisions.count('inconclusive')} | {decisions.count('improved')} | {held} | "
                    f"{seconds(statistics.median(c['wall_s'] for c in runs))} |")
    return "\n".join(rows)


def criterion_ab_held():
    """The +1% arm of the example suite's A/B: how often its CI95 held the true change, and how far the
    intervals that missed lay from it."""
    row = load("criterion-proof.json")["criterion-suite"]["ab1"]
    truth = pools_truth(row["truth"])[0]
    runs = row["comparisons"]
    missed = [c for c in runs if not c["ci95"][0] <= truth <= c["ci95"][1]]
    gap = max((min(abs(truth - c["ci95"][0]), abs(truth - c["ci95"][1])) / truth for c in missed), default=0)
    widths = [(c["ci95"][1] - c["ci95"][0]) / 2 / c["ratio"] for c in missed] or [0]
    below = all(c["ci95"][1] < truth for c in missed)
    return (f"its CI95 held the true change in {len(runs) - len(missed)} of {len(runs)}; the {len(missed)} that "
            f"missed lay {'below' if below else 'beside'} it by at most {100 * gap:.2f}%, with half-widths of "
            f"{100 * min(widths):.2f}-{100 * max(widths):.2f}%")


def criterion_aa_before():
    """The A/A ids that ran again as the stop rule took more processes: their counts with 8 more, and with 24
    more that ran the pools' pairs again past 32 processes."""
    parts = []
    for crate, proof in load("criterion-proof.json").items():
        for key in proof.get("aa_extra_8", {}):
            runs = [proof[run][key] for run in ("aa_extra_8", "aa_extra_24")]
            counts = [sum(c["decision"] == "no_change" for c in r) for r in runs]
            parts.append(f"`{key.split(':', 1)[1]}` {counts[0]} and {counts[1]} of {len(runs[1])}")
    return " and ".join(parts)


FIGURES = {
    "criterion-aa-before": criterion_aa_before,
    "criterion-ab-held": criterion_ab_held,
    "criterion-aa-summary": criterion_aa_summary,
    "criterion-processes": criterion_processes,
    "criterion-aa": criterion_aa,
    "criterion-suites": criterion_suites,
    "criterion-cost": criterion_cost,
    "criterion-ab": criterion_ab,
    "divan-suites": divan_suites,
}
