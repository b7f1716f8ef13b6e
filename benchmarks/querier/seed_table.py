#!/usr/bin/env python3
"""The querier's declared-ordering table in seed 000's layout (3 shapes x 3 arms), ours beside the seed's, from
a committed run: the newest measurement of each `querier` cell with storage=memory, footer_cache=warm, pruning on,
for the shapes recent_first_topk, oldest_first_topk and ordered_full_scan and each `order`. The seed's rows come
from seed-000-declared-ordering.json (transcribed from the seed's document); the last column is ours alone: planning
and its share of the time. Prints Markdown.

usage: python3 benchmarks/querier/seed_table.py [results/querier.jsonl]
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [
    ("recent_first_topk", "ORDER BY timestamp DESC LIMIT 20"),
    ("oldest_first_topk", "ORDER BY timestamp ASC LIMIT 20"),
    ("ordered_full_scan", "ORDER BY timestamp ASC (all 60,000 rows)"),
]
ARMS = [("attested", "attested"), ("attested_split_off", "attested, split off"), ("unattested", "unattested")]


def measurements(path, bench):
    """The measurements of `bench` in the results stream at `path`, in the order written."""
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                if r.get("bench") == bench and r.get("kind") == "measurement":
                    yield r


def newest(path):
    """The newest measurement of each (shape, order) cell of the seed's configuration."""
    found = {}
    for r in measurements(path, "querier"):
        v = r.get("variant", {})
        if (v.get("storage"), v.get("footer_cache"), v.get("pruning")) != ("memory", "warm", True):
            continue
        key = (v.get("shape"), v.get("order"))
        if key not in found or r["run"]["ts_ms"] >= found[key]["run"]["ts_ms"]:
            found[key] = r
    return found


def time(ns):
    return f"{ns / 1e6:.1f} ms" if ns >= 1e6 else f"{ns / 1e3:.0f} µs"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "results", "querier.jsonl")
    ours = newest(path)
    seed = json.load(open(os.path.join(HERE, "seed-000-declared-ordering.json")))
    theirs = {(row["shape"], row["arm"]): row for row in seed["rows"]}
    print("| Shape | Files | Reached | Pruned | Read | Bytes | Sort | Time | Planning (share) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for shape, seed_shape in SHAPES:
        for i, (order, seed_arm) in enumerate(ARMS):
            s = theirs[(seed_shape, seed_arm)]
            r = ours.get((shape, order))
            label = seed_shape if i == 0 else ""
            if r is None:
                print(f"| {label} | {seed_arm} | (no run) | | | | | | |")
                continue
            m = lambda name: int(round(r["metrics"][name]["value"]))
            share = r["metrics"]["sort_kept"]["value"]  # of the timed queries whose plan kept a sort
            sort = "kept" if share == 1 else "elided" if share == 0 else f"kept in {share:.0%}"
            cells = [
                (m("files_reached"), s["files_reached"]),
                (m("files_pruned"), s["files_pruned"]),
                (m("files_read"), s["files_read"]),
                (f"{m('bytes_scanned'):,}", f"{s['bytes']:,}"),
                (sort, s["sort"]),
                (time(r["metrics"]["query_time"]["value"]), s["time"]),
            ]
            text = " | ".join(f"{a} ({b})" for a, b in cells)
            query, planning = r["metrics"]["query_time"]["value"], r["metrics"]["planning_time"]["value"]
            print(f"| {label} | {seed_arm} | {text} | {time(planning)} ({planning / mean_time(r):.0%}) |")
    print()
    print(f"Ours: a committed run of `results/querier.jsonl`, in memory, footer cache warm, 2 target partitions; "
          f"in parentheses the seed's ({seed['note']}). Planning: the mean over the timed queries of SQL to physical "
          f"plan, the manifests read (the seed gives none; its text says ~10 ms of every time); its share is of the "
          f"timed queries' mean time, as planning's is a mean.")


def mean_time(record):
    """The mean time per query of a record's samples: what planning's mean is a share of (its `query_time` is
    their median, and a mean over a median passed 100%)."""
    stats = record.get("cell", {}).get("stats", {}).get("query_time")
    return stats["mean"] if stats else record["metrics"]["query_time"]["value"]


if __name__ == "__main__":
    main()
