#!/usr/bin/env python3
"""cache_tier's table beside seed 001's, from a committed run (the newest warm measurement of each cell):

1. Per tier and size: our time, allocations and bytes per request (the canned upstream, the seed's fake one),
   and in parentheses the seed's (Apple M3 Max, Go).
2. The delta rebuild's cost per row: the slope between 100 and 10,000 rows of time, allocations and bytes.
3. The crossover, like for like: a delta hit (the rebuild alone) against a delta miss of the same statement
   (the DataFusion origin's date_bin aggregation, the fill, the rebuild), at each size; beside them, named as
   another statement, the DataFusion origin's passthrough of `SELECT now(), * FROM cpu`.

The seed's figures are transcribed from its document (seeds/001, "Recorded results"). Prints Markdown.

usage: python3 benchmarks/cache_tier/seed_table.py [results/cache_tier.jsonl]
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))

# rows -> tier -> (ns, bytes, allocations): the seed's table.
SEED = {
    100: {"delta_hit": (76e3, 101 * 1024, 945), "object_hit": (8.3e3, 9 * 1024, 83), "passthrough": (10.6e3, 10 * 1024, 101)},
    1000: {"delta_hit": (269e3, 664 * 1024, 5465), "object_hit": (11.6e3, 29 * 1024, 83), "passthrough": (13.6e3, 30 * 1024, 101)},
    10000: {"delta_hit": (2.05e6, 6.5 * 1024 * 1024, 50627), "object_hit": (26.4e3, 220 * 1024, 83),
            "passthrough": (28.9e3, 221 * 1024, 101)},
}
TIERS = ["delta_hit", "object_hit", "passthrough"]


def measurements(path):
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    found = [r for r in records if r.get("bench") == "cache_tier" and r.get("kind") == "measurement"]
    return sorted(found, key=lambda r: r["run"]["ts_ms"])


def newest(records, **wanted):
    """(ns, bytes, allocations) of the newest warm record with the wanted variant, or None."""
    wanted = {"cache": "warm", **wanted}
    hit = [r for r in records if all(r["variant"].get(k) == v for k, v in wanted.items())]
    if not hit:
        return None
    m = hit[-1]["metrics"]
    scale = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}[m["request_time"]["unit"]]
    return m["request_time"]["value"] * scale, m["allocated_bytes"]["value"], m["allocations"]["value"]


def time(ns):
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} µs"


def size(b):
    return f"{b / 1024 / 1024:.1f} MiB" if b >= 1024 * 1024 else f"{b / 1024:.0f} KiB"


def cell(ours, seed):
    if ours is None:
        return "(not run)"
    return f"{time(ours[0])}, {size(ours[1])}, {ours[2]:,.0f} ({time(seed[0])}, {size(seed[1])}, {seed[2]:,})"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "results", "cache_tier.jsonl")
    records = measurements(path)
    print("| rows | delta_hit | object_hit | passthrough (canned origin) |")
    print("|---|---|---|---|")
    ours = {(rows, tier): newest(records, rows=rows, tier=tier, upstream="canned") for rows in SEED for tier in TIERS}
    for rows in SEED:
        print(f"| {rows:,} | " + " | ".join(cell(ours[rows, t], SEED[rows][t]) for t in TIERS) + " |")
    print()
    small, large = ours[100, "delta_hit"], ours[10000, "delta_hit"]
    if small and large:
        per = [(large[i] - small[i]) / (10000 - 100) for i in range(3)]
        print(f"The delta rebuild per row (slope from 100 to 10,000 rows): {per[0]:.0f} ns, {per[1]:.0f} bytes, "
              f"{per[2]:.2f} allocations (the seed: ~200 ns, ~650 bytes, ~5 allocations).")
        print()
    print("| rows | delta hit (the rebuild) | delta miss, the same statement (the DataFusion origin's date_bin, "
          "the fill, the rebuild) | miss / hit | another statement: `SELECT now(), * FROM cpu` through to the "
          "DataFusion origin |")
    print("|---|---|---|---|---|")
    for rows in SEED:
        hit = ours[rows, "delta_hit"]
        miss = newest(records, rows=rows, tier="delta_hit", upstream="datafusion", cache="cold")
        origin = newest(records, rows=rows, tier="passthrough", upstream="datafusion")
        if hit and miss:
            other = time(origin[0]) if origin else "(not run)"
            print(f"| {rows:,} | {time(hit[0])} | {time(miss[0])} | {miss[0] / hit[0]:.1f}x | {other} |")


if __name__ == "__main__":
    main()
