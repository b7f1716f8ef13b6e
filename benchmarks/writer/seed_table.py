#!/usr/bin/env python3
"""The writer's two tables beside seed 000's, from a committed run (the newest measurement of each `writer` cell
in memory storage):

1. "Sort vs append": for 1k, 10k and 100k rows, the single-batch append, the sort of the same group in order and
   shuffled, and each sort's share of the append. The machines differ, so the shares are what compare.
2. The write path's nightly rows (single_batch_writes, multi_batch_writes, writer/creation, concurrent_writes,
   ingest_sort), each with our cell's time beside the seed's nightly mean.

The seed's figures are transcribed from its document (seeds/000: the nightly table of 2026-09-27 and the
"sort vs append" table under "Declared sort orders"). Prints Markdown.

usage: python3 benchmarks/writer/seed_table.py [results/writer.jsonl]
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))

# (rows, append, sort in order, sort shuffled), in ns: the seed's "sort vs append" table.
SEED_SORT_VS_APPEND = [(1_000, 4.6e6, 75e3, 111e3), (10_000, 15.3e6, 748e3, 1.45e6), (100_000, 125.6e6, 20.0e6, 35.6e6)]

# (seed benchmark, our cell's parameters, the seed's nightly mean in ns).
SEED_NIGHTLY = [
    ("single_batch_writes/100_rows_0.0MB", {"op": "append", "rows": 100}, 857.96e3),
    ("single_batch_writes/1000_rows_0.4MB", {"op": "append", "rows": 1000}, 1.54e6),
    ("single_batch_writes/10000_rows_3.5MB", {"op": "append", "rows": 10000}, 7.76e6),
    ("single_batch_writes/100000_rows_37.4MB", {"op": "append", "rows": 100000}, 62.58e6),
    ("multi_batch_writes/2_batches_2000_rows", {"op": "append", "rows": 1000, "batches": 2}, 2.40e6),
    ("multi_batch_writes/5_batches_5000_rows", {"op": "append", "rows": 1000, "batches": 5}, 4.97e6),
    ("multi_batch_writes/10_batches_10000_rows", {"op": "append", "rows": 1000, "batches": 10}, 9.20e6),
    ("multi_batch_writes/20_batches_20000_rows", {"op": "append", "rows": 1000, "batches": 20}, 18.19e6),
    ("writer/creation", {"op": "create"}, 686.67e3),
    ("concurrent_writes/2_writers", {"op": "append", "rows": 500, "writers": 2}, 1.46e6),
    ("concurrent_writes/4_writers", {"op": "append", "rows": 500, "writers": 4}, 2.45e6),
    ("concurrent_writes/8_writers", {"op": "append", "rows": 500, "writers": 8}, 4.67e6),
    ("ingest_sort/in_order/1000", {"op": "sort", "order": "in_order", "rows": 1000}, 28.89e3),
    ("ingest_sort/shuffled/1000", {"op": "sort", "order": "shuffled", "rows": 1000}, 47.67e3),
    ("ingest_sort/in_order/10000", {"op": "sort", "order": "in_order", "rows": 10000}, 251.26e3),
    ("ingest_sort/shuffled/10000", {"op": "sort", "order": "shuffled", "rows": 10000}, 546.82e3),
    ("ingest_sort/in_order/100000", {"op": "sort", "order": "in_order", "rows": 100000}, 2.80e6),
    ("ingest_sort/shuffled/100000", {"op": "sort", "order": "shuffled", "rows": 100000}, 13.27e6),
]
# The seed's concurrent tenants run on a multi-thread runtime: its rows are our two-worker arms.
DEFAULTS = {"batches": 1, "writers": 1, "order": "in_order", "storage": "memory", "workers": 2}
TIMES = {"append": "append_time", "create": "create_time", "sort": "sort_time"}


def measurements(path):
    """Every measurement of `writer`, newest last."""
    found = []
    with open(path) as f:
        for line in f:
            r = json.loads(line) if line.strip() else {}
            if r.get("bench") == "writer" and r.get("kind") == "measurement":
                found.append(r)
    return sorted(found, key=lambda r: r["run"]["ts_ms"])


def newest(records, wanted):
    """The time per iteration (ns) of the newest record whose variant has every wanted value, or None."""
    wanted = {**DEFAULTS, **wanted}
    op = wanted["op"]
    # A parameter a cell ignores (`order` of an append, `batches` of a creation) is at its default in the record.
    hits = [r for r in records if all(r["variant"].get(k) == v for k, v in wanted.items())]
    return hits[-1]["metrics"][TIMES[op]]["value"] if hits else None


def time(ns):
    if ns is None:
        return "(no run)"
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} µs"


def share(part, whole):
    return "-" if part is None or whole is None else f"{100 * part / whole:.1f}%"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "results", "writer.jsonl")
    records = measurements(path)
    print("| Rows | Append | Sort, in order | Sort, shuffled | In order / append | Shuffled / append |")
    print("|---|---|---|---|---|---|")
    for rows, s_append, s_in, s_shuf in SEED_SORT_VS_APPEND:
        append = newest(records, {"op": "append", "rows": rows})
        in_order = newest(records, {"op": "sort", "order": "in_order", "rows": rows})
        shuffled = newest(records, {"op": "sort", "order": "shuffled", "rows": rows})
        print(f"| {rows:,} | {time(append)} ({time(s_append)}) | {time(in_order)} ({time(s_in)}) | "
              f"{time(shuffled)} ({time(s_shuf)}) | {share(in_order, append)} ({share(s_in, s_append)}) | "
              f"{share(shuffled, append)} ({share(s_shuf, s_append)}) |")
    print()
    print("| Seed benchmark | Ours | Seed (nightly mean) |")
    print("|---|---|---|")
    for name, params, seed in SEED_NIGHTLY:
        print(f"| {name} | {time(newest(records, params))} | {time(seed)} |")


if __name__ == "__main__":
    main()
