#!/usr/bin/env python3
"""Seed 000's `wal/record_batch_roundtrip`, ours beside the seed's, from a committed run: the newest measurement of
each `wal` cell. The seed's row is its configuration, ZSTD on the 1,000-span batch its trace fixture converts to;
our other arms (no compression, LZ4, 10,000 spans) follow it, with the stream's size and the uncompressed bytes
per second. The seed's time is transcribed from its document (375.50 µs, Criterion's mean). Prints Markdown.

usage: python3 benchmarks/wal/seed_table.py [results/wal.jsonl]
"""
import os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import results_stream  # noqa: E402
SEED_NS = 375_500  # wal/record_batch_roundtrip
SEED_CELL = ("zstd", 1000)
CODECS = ["zstd", "lz4", "none"]


def newest(path):
    """The newest measurement of each cell, by (compression, rows)."""
    return results_stream.newest(path, "wal", lambda v: (v["compression"], v["rows"]))


def us(ns):
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.0f} µs"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "results", "wal.jsonl")
    cells = newest(path)
    print("| Arm | Round trip (seed's) | Seed / ours | Stream | Uncompressed MB/s |")
    print("|---|---|---|---|---|")
    order = sorted(cells, key=lambda k: (k != SEED_CELL, k[1], CODECS.index(k[0])))
    for key in order:
        m = lambda name: cells[key]["metrics"][name]["value"]
        codec, rows = key
        seed = key == SEED_CELL
        label = f"{codec}, {rows:,} spans" + (" (`record_batch_roundtrip`)" if seed else "")
        time = us(m("roundtrip_time")) + (f" ({us(SEED_NS)})" if seed else "")
        ratio = f"x{SEED_NS / m('roundtrip_time'):.2f}" if seed else ""
        print(f"| {label} | {time} | {ratio} | {m('encoded_bytes'):,.0f} B | {m('mb_per_s'):,.0f} |")
    print()
    print("Ours: a committed run of `results/wal.jsonl`, one IPC stream written and read back per iteration; in "
          "parentheses the seed's (Criterion's mean of `record_batch_to_bytes` then `bytes_to_record_batch` on "
          "`sample_trace_request(1000)` converted, its nightly runner). Seed / ours above 1: ours is faster.")


if __name__ == "__main__":
    main()
