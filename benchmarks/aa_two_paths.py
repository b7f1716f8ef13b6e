#!/usr/bin/env python3
"""A/A of byte-identical libraries at two paths of different lengths, 8 comparisons a cell, alternating which
path is this build (as rigs_proof.py's `aa` part, without its builds): the harness's sort10k and the querier's
warm lookup (a DataFusion cell), from the release build in CARGO_TARGET_DIR (else ~/.cache/benchhost/target).
Run after each change of the stop rule: up to 24 more processes (results/aa-stop-rule-24.json), up to 44
(results/aa-stop-rule-44.json).

usage: python3 benchmarks/aa_two_paths.py [OUT]   # writes OUT/aa.json, OUT = /tmp/aa24 unless given
"""
import json, os, shutil, subprocess, sys, time
T = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/benchhost/target")), "release")
WORK = sys.argv[1] if len(sys.argv) > 1 else "/tmp/aa24"
BH = os.path.join(T, "benchhost")
cells = {"harness_sort10k": ("librig_harness.so", "harness", "harness", ["--set", "workload=sort10k"], "time"),
         "querier_warm": ("librig_lakehouse.so", "querier", "footer_cache=warm order=unattested .*shape=lookup_by_id storage=memory", ["--set", "workers=0"], "query_time")}
out = {"cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip("\t :"), "started": time.strftime("%Y-%m-%d %H:%M")}
for cell, (lib, rig, label, sets, metric) in cells.items():
    a, b = os.path.join(WORK, cell, "a"), os.path.join(WORK, cell, "a-copy-at-a-longer-path")
    for d in (a, b):
        os.makedirs(d, exist_ok=True); shutil.copy(os.path.join(T, lib), os.path.join(d, lib))
    rows = []
    for i in range(8):
        new, old = (a, b) if i % 2 == 0 else (b, a)
        s = os.path.join(WORK, "run.jsonl")
        if os.path.exists(s): os.remove(s)
        t0 = time.monotonic()
        subprocess.run([BH, "run", label, "--plugin", rig, "--no-previous", "-q", "--out", s, "--plugin-dir", new, "--against", old] + sets, check=True, capture_output=True)
        recs = [json.loads(l) for l in open(s)]
        v = next(r["verdict"] for r in recs if r["kind"] == "verdict" and r["verdict"].get("metric") == metric)
        rows.append({"decision": v["decision"], "ratio": v.get("ratio"), "ci95": v.get("ci95"), "processes": v["method"]["processes"], "wall_s": round(time.monotonic() - t0, 1), "new": os.path.basename(new)})
        print(cell, rows[-1], flush=True)
    out[cell] = rows
out["ended"] = time.strftime("%Y-%m-%d %H:%M")
json.dump(out, open(os.path.join(WORK, "aa.json"), "w"), indent=1)
