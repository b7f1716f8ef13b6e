#!/usr/bin/env python3
"""Seed 000's `querier_service/*` rows, ours beside the seed's, from a committed run: the newest measurement of
each `querier_service` ticket. Each row gives the time of one do_get consumed to the end, the seed's time and
their ratio, planning and its share, and the mechanism: manifests read, files reached and read, bytes scanned,
rows out. The seed's times come from seed-000-querier-service.json (transcribed; the seed gives times only).
Prints Markdown.

usage: python3 benchmarks/querier/service_table.py [results/querier_service.jsonl]
"""
import json, os, sys

from seed_table import mean_time, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import results_stream  # noqa: E402


def newest(path):
    """The newest measurement of each ticket."""
    return results_stream.newest(path, "querier_service", lambda v: v.get("ticket"))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "results", "querier_service.jsonl")
    ours = newest(path)
    seed = json.load(open(os.path.join(HERE, "seed-000-querier-service.json")))
    print("| Seed row | Ticket | Time (seed's) | Seed / ours | Planning (share) | Manifests read "
          "| Files reached, read | Bytes scanned | Rows out |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in seed["rows"]:
        r = ours.get(row["ticket"])
        if r is None:
            print(f"| {row['name']} | `{row['ticket']}` | (no run) ({time(row['time_ns'])}) | | | | | | |")
            continue
        m = lambda metric: r["metrics"][metric]["value"]
        query, planning = m("query_time"), m("planning_time")
        checked = [c["values"][0] for c in r.get("checks", []) if c.get("invariant") == "rows_out == rows"]
        rows = f"{checked[0]:,}" if checked else ""
        missed = r["metrics"].get("trace_rows_missed", {}).get("value")  # absent where no trace is looked up
        if missed:
            rows += f", {missed:.0f} outside the hint"
        print(f"| {row['name']} | `{row['ticket']}` | {time(query)} ({time(row['time_ns'])}) "
              f"| x{row['time_ns'] / query:.1f} | {time(planning)} ({planning / mean_time(r):.0%}) "
              f"| {m('manifests_read'):.0f} | {m('files_reached'):.0f}, {m('files_read'):.0f} "
              f"| {m('bytes_scanned'):,.0f} | {rows} |")
    print()
    print(f"Ours: a committed run of `results/querier_service.jsonl`, in memory, footer cache warm, 2 target "
          f"partitions; in parentheses the seed's ({seed['note']}). Seed / ours above 1: ours is faster.")


if __name__ == "__main__":
    main()
