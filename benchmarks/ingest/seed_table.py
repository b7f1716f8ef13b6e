#!/usr/bin/env python3
"""Seed 000's six `acceptor_ingest*` rows, ours beside the seed's, from a committed run: the newest measurement
of each `ingest` cell at the seed's 1,000 items. Each signal's rows give the time of decode and conversion and of
the conversion alone, their ratio to the seed's, and the conversion's share of decode and conversion (ours and
the seed's): the split the seed's numbers show. The seed's times come from seed-000-ingest.json (transcribed).
Prints Markdown.

usage: python3 benchmarks/ingest/seed_table.py [results/ingest.jsonl]
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import results_stream  # noqa: E402


def newest(path):
    """The newest measurement of each (signal, stage) at 1,000 items."""
    at_1000 = lambda r: r["variant"].get("items") == 1000
    return results_stream.newest(path, "ingest", lambda v: (v.get("signal"), v.get("stage")), at_1000)


def us(ns):
    return f"{ns / 1e3:.0f} µs"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "results", "ingest.jsonl")
    ours = newest(path)
    seed = json.load(open(os.path.join(HERE, "seed-000-ingest.json")))
    theirs = {(row["signal"], row["stage"]): row for row in seed["rows"]}
    time = lambda key: ours[key]["metrics"]["request_time"]["value"] if key in ours else None
    print("| Seed row | Ours (seed's) | Seed / ours | Conversion's share of decode and conversion, ours (seed's) |")
    print("|---|---|---|---|")
    for row in seed["rows"]:
        key = (row["signal"], row["stage"])
        t = time(key)
        if t is None:
            print(f"| {row['name']} | (no run) ({us(row['time_ns'])}) | | |")
            continue
        share = ""
        if row["stage"] == "convert_only":
            both, seed_both = time((row["signal"], "decode_and_convert")), theirs[(row["signal"], "decode_and_convert")]
            if both:
                share = f"{t / both:.0%} ({row['time_ns'] / seed_both['time_ns']:.0%})"
        print(f"| {row['name']} | {us(t)} ({us(row['time_ns'])}) | x{row['time_ns'] / t:.2f} | {share} |")
    print()
    print(f"Ours: a committed run of `results/ingest.jsonl`, 1,000 items a request, into seed 000's whole batches; "
          f"in parentheses the seed's ({seed['note']}). Seed / ours above 1: ours is faster.")


if __name__ == "__main__":
    main()
