#!/usr/bin/env python3
"""Times benchhost's history commands on streams of 10k, 100k and 1M records, with DuckDB beside them.

    python3 benchmarks/history/scale.py [--sizes 10k,100k,1M] [--reps 3] [--out results/history-scale.json]

Builds the release binaries (benchhost, benchhost-warehouse) unless --no-build, generates the streams with
generate.py into --dir (default ~/.cache/benchhost/history; 1M records are ~2 GB), and runs each command --reps
times: the median wall time and the largest peak RSS (of the command's own process, by GNU time; for
`report --warehouse`, the warehouse's export is timed on its own too). DuckDB (duckdb==2.0.0 from
requirements.txt, installed into a venv under --dir) answers the question every report starts from, the
newest value of each series and metric, from the same file; its answer is checked against `report --format
bmf`, benchhost's answer to it. On the 1M stream with bad lines (torn, corrupt, duplicated, glued; a sidecar
names them), verify must name exactly those lines, and show --all must print every readable record.

Writes the figures, the argv, the commit and the machine's load to --out, prints a Markdown table, and exits 1
when a target of issue 19 is missed (1M: report md, compare, verify <= 10 s and <= 500 MB; publish >= 100k
records/s; report --warehouse md < 2 s; Chromium opens the HTML report in < 2 s; benchhost no slower than
DuckDB). Chromium's time is that of `--dump-dom` (start, load, run the page's script, write the whole DOM out);
the time to its first screen (`--screenshot`, which writes no DOM) is measured beside it.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SIZES = {"10k": 10_000, "100k": 100_000, "1M": 1_000_000}
DUCKDB_SQL = """
SET threads = 2;
SET enable_progress_bar = false;
WITH r AS (
  SELECT bench, kind, run.ts_ms AS ts, CAST(variant AS VARCHAR) AS variant, metrics
  FROM read_ndjson('{path}', ignore_errors = true, maximum_object_size = 16777216,
    columns = {{bench: 'VARCHAR', kind: 'VARCHAR', run: 'STRUCT(ts_ms UBIGINT)', variant: 'JSON',
               metrics: 'MAP(VARCHAR, STRUCT(value DOUBLE, unit VARCHAR, higher_is_better BOOLEAN))'}})
  WHERE kind <> 'verdict'),
newest AS (
  SELECT bench, variant, arg_max({{'kind': kind, 'metrics': metrics}}, ts) AS n FROM r GROUP BY bench, variant)
SELECT bench, variant, e.key AS metric, e.value.value AS value
FROM (SELECT bench, variant, unnest(map_entries(n.metrics)) AS e FROM newest WHERE n.kind = 'measurement')
"""


def sh(args, **kw):
    return subprocess.run(args, check=True, **kw)


TIME = shutil.which("time", path="/usr/bin:/bin")


def spawn(args, stdout, env=None, stderr=subprocess.DEVNULL):
    """Starts `args` under GNU time when there is one (its peak RSS then is the command's own: a child forked
    from this Python process starts from this process's RSS, which holds what the script read), and the file
    GNU time writes the peak to."""
    if not TIME:
        return subprocess.Popen(args, stdout=stdout, stderr=stderr, env=env), None
    peak = tempfile.NamedTemporaryFile(prefix="scale-rss-", delete=False)
    peak.close()
    args = [TIME, "-f", "%M", "-o", peak.name, *map(str, args)]
    return subprocess.Popen(args, stdout=stdout, stderr=stderr, env=env), Path(peak.name)


def peak_mb(usage, peak_file):
    if peak_file is None:
        return usage.ru_maxrss / 1024
    kb = int(peak_file.read_text().split()[-1])
    peak_file.unlink()
    return kb / 1024


def timed(args, stdout=subprocess.DEVNULL, env=None):
    """(wall s, peak RSS MB, exit code) of one process."""
    start = time.monotonic()
    proc, peak = spawn(args, stdout, env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    return wall, peak_mb(usage, peak), os.waitstatus_to_exitcode(status)


def measure(name, args, reps, expect=(0,), setup=None, stdout=subprocess.DEVNULL):
    walls, rss = [], []
    for _ in range(reps):
        if setup:
            setup()
        wall, peak, code = timed(args, stdout=stdout)
        if code not in expect:
            sys.exit(f"{name}: exit {code}: {' '.join(map(str, args))}")
        print(f"  {name}: {wall:.2f} s, {peak:.0f} MB", file=sys.stderr)
        walls.append(wall)
        rss.append(peak)
    return {"s": round(statistics.median(walls), 3), "mb": round(max(rss), 1), "runs": [round(w, 3) for w in walls]}


def venv_python(base):
    venv = base / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        sh([sys.executable, "-m", "venv", str(venv)])
        sh([str(python), "-m", "pip", "install", "-q", "-r", str(HERE / "requirements.txt")])
    return python


def duckdb(python, path, reps):
    """DuckDB's whole-process time and its query time, and its answer {name: value}."""
    script = (
        "import duckdb, json, sys, time\n"
        "t = time.monotonic(); con = duckdb.connect()\n"
        f"rows = con.execute({DUCKDB_SQL.format(path=path)!r}).fetchall()\n"
        "q = time.monotonic() - t\n"
        "print(json.dumps({'query_s': q, 'rows': rows}))\n"
    )
    walls, queries, rss, answer = [], [], [], None
    for _ in range(reps):
        start = time.monotonic()
        proc, peak = spawn([python, "-c", script], subprocess.PIPE, stderr=subprocess.PIPE)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"duckdb failed: {proc.stderr.read().decode()[-2000:]}")
        walls.append(time.monotonic() - start)
        rss.append(peak_mb(usage, peak))
        result = json.loads(out.decode().strip().splitlines()[-1])
        queries.append(result["query_s"])
        answer = result["rows"]
    named = {}
    for bench, variant, metric, value in answer:
        keys = json.loads(variant)
        name = "/".join([bench] + [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(keys.items())])
        named[f"{name}/{metric}"] = value
    return {"s": round(statistics.median(walls), 3), "query_s": round(statistics.median(queries), 3),
            "mb": round(max(rss), 1)}, named


def bmf_answer(bench, path):
    out = subprocess.run([bench, "report", str(path), "--format", "bmf"], check=True, capture_output=True).stdout
    return {f"{series}/{metric}": m["value"] for series, measures in json.loads(out).items()
            for metric, m in measures.items()}


def same_answers(a, b):
    if a.keys() != b.keys():
        return f"{len(a.keys() ^ b.keys())} names differ (e.g. {sorted(a.keys() ^ b.keys())[:2]})"
    wrong = [k for k in a if abs(a[k] - b[k]) > 1e-9 * max(1.0, abs(a[k]))]
    return f"{len(wrong)} values differ (e.g. {wrong[:2]})" if wrong else None


def check_bad(bench, path, expect_path):
    """verify names exactly the sidecar's lines; show --all prints every readable record."""
    expect = json.loads(expect_path.read_text())
    out = subprocess.run([bench, "verify", str(path)], capture_output=True, text=True).stdout.splitlines()
    lines = lambda pattern: [int(re.match(r"[^:]+:(\d+):", l).group(1)) for l in out if pattern in l]
    problems = []
    if sorted(lines("corrupt line")) != sorted(expect["torn"] + expect["corrupt"]):
        problems.append("verify did not name exactly the torn and corrupt lines")
    if lines("torn record skipped") != expect["glued"]:
        problems.append("verify did not name exactly the glued lines")
    if lines("duplicate of the record") != expect["duplicate"]:
        problems.append("verify did not name exactly the duplicates")
    shown = subprocess.run([bench, "show", "--all", str(path)], capture_output=True, text=True).stdout
    rows = len(re.findall(r"^│ (\d+) ", shown, re.M))
    if rows != expect["readable"]:
        problems.append(f"show --all printed {rows} records of {expect['readable']} readable")
    return {"verify_lines": len(out), "show_all_rows": rows, "expected": {k: len(v) if isinstance(v, list) else v
                                                                           for k, v in expect.items()},
            "problems": problems}


def machine():
    load = Path("/proc/loadavg").read_text().split()[:3]
    cpu = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    return {"loadavg": load, "steal_ticks": int(cpu[7]), "cores": os.cpu_count(),
            "commit": subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                                     text=True).stdout.strip()}


# The warehouse's export, which `report --warehouse` runs: a command of `benchhost-warehouse`, not of `benchhost`.
EXPORT = "benchhost-warehouse export --newest 2"
# Names the figures of earlier runs gave commands: the same command, named as it is now.
RENAMED = {"export --newest 2": EXPORT}


def table(figures):
    sizes = [s for s in SIZES if s in figures["sizes"]]
    for s in sizes:
        named = figures["sizes"][s]["commands"]
        figures["sizes"][s]["commands"] = {RENAMED.get(c, c): f for c, f in named.items()}
    commands = list(dict.fromkeys(c for s in sizes for c in figures["sizes"][s]["commands"]))
    out = ["| command | " + " | ".join(sizes) + " |", "|---|" + "---|" * len(sizes)]
    for command in commands:
        cells = []
        for s in sizes:
            f = figures["sizes"][s]["commands"].get(command)
            cells.append(f"{f['s']:.2f} s, {f['mb']:.0f} MB" if f else "–")
        out.append(f"| {command} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k,1M")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path.home() / ".cache/benchhost/history")
    ap.add_argument("--out", type=Path, default=ROOT / "results/history-scale.json")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--bin-dir", type=Path, help="the binaries to time (default: the release build)")
    args = ap.parse_args()
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not args.no_build and not args.bin_dir:
        sh(["cargo", "build", "--release", "-p", "benchhost", "-p", "benchhost-warehouse"], cwd=ROOT)
    bins = args.bin_dir or target / "release"
    bench, warehouse_bin = bins / "benchhost", bins / "benchhost-warehouse"
    args.dir.mkdir(parents=True, exist_ok=True)
    python = venv_python(args.dir)
    figures = {"argv": sys.argv, "machine": machine(), "sizes": {}}
    missed = []
    for size in args.sizes.split(","):
        n = SIZES[size]
        path, bad = args.dir / f"h{size}.jsonl", args.dir / f"h{size}-bad.jsonl"
        if not path.exists() or not bad.exists():
            sh([sys.executable, str(HERE / "generate.py"), "--records", str(n), "--out", str(path), "--bad", str(bad)])
        tail = args.dir / f"h{size}-tail.jsonl"
        tail.write_text("".join(path.read_text().splitlines(keepends=True)[-3000:]) if n <= 100_000 else
                        subprocess.run(["tail", "-n", "3000", str(path)], capture_output=True, text=True).stdout)
        work = args.dir / f"work-{size}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        merged, wh = work / "merged.jsonl", work / "wh"
        r = args.reps
        c = {}
        c["show"] = measure("show", [bench, "show", path], r)
        c["show --all"] = measure("show --all", [bench, "show", "--all", path], r)
        for fmt in ["md", "csv", "json", "bmf"]:
            c[f"report {fmt}"] = measure(fmt, [bench, "report", path, "--format", fmt], r)
        # The reports find each series' change points by default; without them they only read the newest runs.
        c["report md --no-change-points"] = measure("md", [bench, "report", path, "--format", "md",
                                                           "--no-change-points"], r)
        c["report html"] = measure("html", [bench, "report", path, "--format", "html", "--out", work / "r.html"], r)
        c["report html --no-change-points"] = measure("html", [bench, "report", path, "--format", "html",
                                                               "--no-change-points", "--out", work / "r2.html"], r)
        c["report gab"] = measure("gab", [bench, "report", path, "--format", "gab", "--out", work / "gab"], r)
        c["compare history tail"] = measure("compare", [bench, "compare", path, tail], r, expect=(0, 1))
        c["compare history history"] = measure("compare", [bench, "compare", path, path], r, expect=(0, 1))
        c["verify"] = measure("verify", [bench, "verify", path], r, expect=(0, 1))
        c["merge (new)"] = measure("merge", [bench, "merge", merged, path], r, expect=(0, 1),
                                   setup=lambda: merged.unlink(missing_ok=True))
        c["merge (all duplicates)"] = measure("merge", [bench, "merge", merged, path], r, expect=(0, 1))
        c["publish"] = measure("publish", [warehouse_bin, "publish", path, "--warehouse", wh], r,
                               setup=lambda: shutil.rmtree(wh, ignore_errors=True))
        c["publish"]["records_per_s"] = round(n / c["publish"]["s"])
        c["report --warehouse md"] = measure("wh md", [bench, "report", "--warehouse", wh, "--format", "md"], r)
        c[EXPORT] = measure("export", [warehouse_bin, "export", "--warehouse", wh, "--newest", "2",
                                       "--out", work / "newest.jsonl"], r,
                            setup=lambda: (work / "newest.jsonl").unlink(missing_ok=True))
        if n <= 100_000:
            c["query --warehouse"] = measure("query", [bench, "query", "SELECT count(*) FROM records",
                                                       "--warehouse", wh], r)
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser:
            chromium = [browser, "--headless", "--no-sandbox", "--disable-gpu"]
            page = f"file://{work / 'r.html'}"
            c["chromium html"] = measure("chromium", chromium + ["--dump-dom", page], r)
            c["chromium html, first screen"] = measure("chromium shot", chromium + [
                "--window-size=1280,1000", f"--screenshot={work / 'shot.png'}", page], r)
        duck, answer = duckdb(python, path, r)
        c["duckdb (newest per series and metric)"] = duck
        differ = same_answers(answer, bmf_answer(bench, path))
        if differ:
            missed.append(f"{size}: DuckDB and report bmf answer differently: {differ}")
        checks = check_bad(bench, bad, bad.with_suffix(".expect.json"))
        missed += [f"{size}: {p}" for p in checks["problems"]]
        c["verify (bad lines)"] = measure("verify bad", [bench, "verify", bad], r, expect=(1,))
        figures["sizes"][size] = {"records": n, "bytes": path.stat().st_size, "commands": c, "bad_input": checks}
        if n == 1_000_000:
            for command in ["report md", "compare history tail", "verify"]:
                if c[command]["s"] > 10 or c[command]["mb"] > 500:
                    missed.append(f"1M: {command} took {c[command]['s']} s, {c[command]['mb']} MB")
            if c["publish"]["records_per_s"] < 100_000:
                missed.append(f"1M: publish at {c['publish']['records_per_s']} records/s")
            if c["report --warehouse md"]["s"] >= 2:
                missed.append(f"1M: report --warehouse md took {c['report --warehouse md']['s']} s")
            if "chromium html" in c and c["chromium html"]["s"] >= 2:
                missed.append(f"1M: Chromium took {c['chromium html']['s']} s to open the HTML report")
            if c["report bmf"]["s"] > duck["s"]:
                missed.append(f"1M: report bmf {c['report bmf']['s']} s, DuckDB {duck['s']} s")
        shutil.rmtree(work, ignore_errors=True)
        print(f"{size} done", file=sys.stderr)
    figures["missed"] = missed
    figures["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    args.out.write_text(json.dumps(figures, indent=1) + "\n")
    print(table(figures))
    for line in missed:
        print(f"missed: {line}")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
