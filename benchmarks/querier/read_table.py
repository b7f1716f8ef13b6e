#!/usr/bin/env python3
"""Seed 000's `querier_read/*` and `trace_index_scaling/*` rows, ours beside the seed's, from committed runs:
the newest measurement of each cell (in memory, pruning on). The querier's rows give the time, its planning and
planning's share of it, and the mechanism: manifests read and skipped at planning, files planned, reached and
read. The trace index's give the lookup that reads its shard's footer (the seed's) and the warm probe whose
footers were kept. The seed's times come from seed-000-querier-read.json (transcribed; the seed gives times
only). Prints Markdown.

usage: python3 benchmarks/querier/read_table.py [results/querier.jsonl [results/trace_index.jsonl]]
"""
import json, os, sys

from seed_table import mean_time, measurements, time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "..", "..", "results")
# The seed's row, and the querier cell that reproduces it.
READ_ROWS = [
    ("trace_lookup_by_id_unbounded", {"shape": "lookup_by_id", "footer_cache": "warm"}),
    ("trace_lookup_by_id_cold_without_cache", {"shape": "lookup_by_id", "footer_cache": "off"}),
    ("trace_lookup_by_id_cold_with_cache", {"shape": "lookup_by_id", "footer_cache": "cold"}),
    ("trace_lookup_by_id_warm_with_cache", {"shape": "lookup_by_id", "footer_cache": "warm"}),
    ("trace_lookup_by_id_windowed", {"shape": "lookup_by_id_windowed", "footer_cache": "warm"}),
    ("trace_lookup_by_id_via_index", {"shape": "lookup_via_index", "footer_cache": "warm"}),
    ("trace_search_groups", {"shape": "trace_search_groups", "footer_cache": "warm"}),
]


def newest_in_memory(path, bench):
    """The newest measurement of each of `bench`'s cells in memory with pruning on."""
    found = {}
    for r in measurements(path, bench):
        v = r.get("variant", {})
        if v.get("storage") == "memory" and v.get("pruning", True) is True:
            key = json.dumps(v, sort_keys=True)
            if key not in found or r["run"]["ts_ms"] >= found[key]["run"]["ts_ms"]:
                found[key] = r
    return list(found.values())


def find(cells, want):
    """The cell whose variant holds every pair of `want`; a declared-ordering `order` never matches a lookup."""
    hits = [r for r in cells if all(r["variant"].get(k) == v for k, v in want.items())]
    return hits[0] if hits else None


def querier_rows(cells, seed):
    print("| Seed row | Time (seed's) | Planning (share) | Manifests read, pruned | Files planned, reached, read "
          "| Rows out |")
    print("|---|---|---|---|---|---|")
    seed_time = {row["name"]: row["time_ns"] for row in seed["querier_read"]}
    for name, want in READ_ROWS:
        r = find(cells, want)
        if r is None:
            print(f"| {name} | (no run) ({time(seed_time[name])}) | | | | |")
            continue
        m = lambda metric: r["metrics"][metric]["value"]
        query, planning = m("query_time"), m("planning_time")
        checked = [c["values"][0] for c in r.get("checks", []) if c.get("invariant") == "rows_out == rows"]
        rows = f"{checked[0]:,}" if checked else ""
        missed = m("trace_rows_missed") if "trace_rows_missed" in r["metrics"] else 0
        if missed:
            rows += f", {missed:.0f} outside the window"
        print(f"| {name} | {time(query)} ({time(seed_time[name])}) | {time(planning)} ({planning / mean_time(r):.0%}) "
              f"| {m('manifests_read'):.0f}, {m('manifests_pruned'):.0f} "
              f"| {m('files_planned'):.0f}, {m('files_reached'):.0f}, {m('files_read'):.0f} | {rows} |")
    unbounded, windowed = find(cells, READ_ROWS[0][1]), find(cells, READ_ROWS[4][1])
    seed_ratio = seed_time[READ_ROWS[0][0]] / seed_time[READ_ROWS[4][0]]
    if unbounded and windowed:
        ratio = unbounded["metrics"]["query_time"]["value"] / windowed["metrics"]["query_time"]["value"]
        print()
        print(f"The windowed lookup against the unbounded one: x{ratio:.1f} faster (the seed's x{seed_ratio:.1f}).")


def trace_index_rows(cells, seed):
    print("| Traces | Reading the footer (seed's) | Bytes fetched | Footers kept | Bytes fetched | Row groups read |")
    print("|---|---|---|---|---|---|")
    for row in seed["trace_index_scaling"]:
        n = row["traces"]
        per = find(cells, {"traces": n, "footers": "per_lookup"})
        kept = find(cells, {"traces": n, "footers": "kept"})
        lookup = lambda r: time(r["metrics"]["lookup_time"]["value"]) if r else "(no run)"
        fetched = lambda r: f"{r['metrics']['bytes_fetched']['value']:,.0f}" if r else ""
        groups = f"{(per or kept)['metrics']['row_groups_read']['value']:.0f}" if per or kept else ""
        print(f"| {n:,} | {lookup(per)} ({time(row['time_ns'])}) | {fetched(per)} | {lookup(kept)} | {fetched(kept)} "
              f"| {groups} |")


def main():
    querier = sys.argv[1] if len(sys.argv) > 1 else os.path.join(RESULTS, "querier.jsonl")
    index = sys.argv[2] if len(sys.argv) > 2 else os.path.join(RESULTS, "trace_index.jsonl")
    seed = json.load(open(os.path.join(HERE, "seed-000-querier-read.json")))
    querier_rows(newest_in_memory(querier, "querier"), seed)
    print()
    trace_index_rows(newest_in_memory(index, "trace_index"), seed)
    print()
    print(f"Ours: committed runs of `results/querier.jsonl` and `results/trace_index.jsonl`, in memory; "
          f"in parentheses the seed's ({seed['note']}).")


if __name__ == "__main__":
    main()
