#!/usr/bin/env python3
"""Seed 000's `compactor/rewrite_6_files`, ours beside the seed's, from a committed run: the newest measurement of
each `compaction` cell. The seed's row is our 6 files x 100 rows in memory (its configuration); our other arms
(on disk, 24 files x 1,000 rows) follow it, with each part of the rewrite's time (load, read, sort, write,
commit: the rig times each) and what each rewrite read and wrote. The seed's time is transcribed
from its document (10.36 ms, Criterion's mean). Prints Markdown.

usage: python3 benchmarks/compaction/seed_table.py [results/compaction.jsonl]
"""
import os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import results_stream  # noqa: E402
SEED_NS = 10_360_000  # compactor/rewrite_6_files


def newest(path):
    """The newest measurement of each cell, by (files, rows_per_file, storage)."""
    return results_stream.newest(path, "compaction", lambda v: (v["files"], v["rows_per_file"], v["storage"]))


PARTS = ["load", "read", "sort", "write", "commit"]


def ms(ns):
    return f"{ns / 1e6:.2f} ms"


def part(record, name):
    """One part's mean time per rewrite, or a dash for a record from before the rig timed its parts."""
    metric = record["metrics"].get(f"{name}_time")
    return ms(metric["value"]) if metric else "–"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "results", "compaction.jsonl")
    cells = newest(path)
    print("| Arm | Rewrite (seed's) | Seed / ours | Load | Read | Sort | Write | Commit | Files in, out "
          "| Bytes read, written |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    order = sorted(cells, key=lambda k: (k != (6, 100, "memory"), k[0], k[2] != "memory"))
    for key in order:
        r = cells[key]
        m = lambda name: r["metrics"][name]["value"]
        files, rows, storage = key
        seed = key == (6, 100, "memory")
        label = f"{files} x {rows:,} rows, {storage}" + (" (`rewrite_6_files`)" if seed else "")
        time = ms(m("rewrite_time")) + (f" ({ms(SEED_NS)})" if seed else "")
        ratio = f"x{SEED_NS / m('rewrite_time'):.2f}" if seed else ""
        parts = " | ".join(part(r, name) for name in PARTS)
        print(f"| {label} | {time} | {ratio} | {parts} | {m('input_files'):.0f}, {m('output_files'):.0f} "
              f"| {m('bytes_read'):,.0f}, {m('bytes_written'):,.0f} |")
    print()
    print("Ours: a committed run of `results/compaction.jsonl`, one thread, each part its mean per rewrite; in "
          "parentheses the seed's (Criterion's mean of `execute_candidate` on a fresh in-memory table of 6 appends "
          "of 100 rows, its nightly runner). Seed / ours above 1: ours is faster.")


if __name__ == "__main__":
    main()
