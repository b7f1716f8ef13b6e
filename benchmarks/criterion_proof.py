#!/usr/bin/env python3
"""The proof of issue 82 on real suites: arrow-array's and arrow-buffer's `benches/` (Criterion, 58.4.1) and
serde_html_form's (Divan, 0.2.8), from the cargo registry, unchanged but for the rename of their `criterion` or
`divan` dev-dependency to benchhost-criterion or benchhost-divan.

Parts (each saved to OUT/proof.json as soon as it ends; a rerun with the same OUT skips what is there):
  suites  per crate: a copy as published (`plain`) and a copy renamed (`renamed`), each in its own target dir;
          `cargo bench --no-run` of both (cold), `cargo bench -- --list` of both (the ids must be the same),
          `benchhost build --benches` of the renamed copy (cold, then warm after touching one bench file, beside
          `cargo bench --no-run` warm), and a `--quick` run of every id of every bench target: a measurement per
          id listed, no failure.
  aa      per id of --aa (`CRATE:RIG:ID;...`, three a crate): the renamed copy's bench plugin relinked with link seeds
          1001 and 1002 (two builds of identical source that differ in their link alone, as layout_proof.py
          makes them), compared 40 times over layouts (`run --against`, the default `--layouts auto`), half in
          each role order: `no_change` at least 38, no `regressed` or `improved`.
  ab      on the example suite (benchmarks/criterion-suite), one id (--ab-id), per arm (+5%, +1%): its `slower`
          build, the spin sized to the arm's share of the id, against the plain one, over layouts of link seeds
          1003 and 1001; first the true change of their pools, then 40 comparisons (see `ab` below).

usage: python3 benchmarks/criterion_proof.py [--parts suites,aa,ab] [--crates arrow-array,arrow-buffer] [--aa "CRATE:RIG:ID;..."]
                                             [--arms ab5,ab1] [--ab-id bytes/checksum64k]
                                             [--out ~/.cache/benchhost/criterion-proof]
"""
import argparse, glob, json, os, re, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Each registry suite: its version, and the harness its `benches/` are written for (the dev-dependency renamed).
SUITES = {"arrow-array": ("58.4.1", "criterion"), "arrow-buffer": ("58.4.1", "criterion"),
          "serde_html_form": ("0.2.8", "divan")}
DIVAN = "0.1.21"  # benchhost-divan's own, exactly
COMPAT = {"criterion": os.path.join(ROOT, "compat", "criterion"), "divan": os.path.join(ROOT, "compat", "divan")}


def registry_copy(crate):
    """The crate's published source, as cargo unpacked it."""
    version = SUITES[crate][0]
    found = glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/{crate}-{version}"))
    if not found:
        sys.exit(f"{crate} {version} is not in ~/.cargo/registry/src: fetch it with `cargo fetch` in a crate that "
                 f"depends on it (this workspace's arrow does; `cargo add {crate}@{version}` in a scratch crate)")
    return found[0]


def renamed(manifest, harness):
    """The manifest with its `harness` (criterion, divan) dev-dependency renamed to benchhost-HARNESS (a path
    dependency: the version requirement is the harness's, so it goes), every other line as published."""
    text = open(manifest).read()
    head = f"[dev-dependencies.{harness}]\n"
    if head not in text:
        sys.exit(f"{manifest}: no {head.strip()} table")
    start = text.index(head) + len(head)
    end = text.find("\n[", start)
    table = text[start:end]
    table = re.sub(r'^version = ".*"\n', "", table, flags=re.M)
    table = f'package = "benchhost-{harness}"\npath = "{COMPAT[harness]}"\n' + table
    return text[:start] + table + text[end:]


def sh(args, cwd, env=None, timed=False):
    started = time.monotonic()
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} (in {cwd}) failed:\n{out.stderr[-4000:]}")
    return (out, time.monotonic() - started) if timed else out


def listed(copy, env, harness):
    """`cargo bench -- --list`: each bench target's ids, as Criterion prints them (`ID: benchmark`); Divan's
    `--list --format terse` (cargo-nextest's, which Divan prints only under it) prints its paths so."""
    args = ["cargo", "bench", "--", "--list"] + (["--format", "terse"] if harness == "divan" else [])
    out = sh(args, copy, dict(env, NEXTEST="1") if harness == "divan" else env)
    return sorted(line[: -len(": benchmark")] for line in out.stdout.splitlines() if line.endswith(": benchmark"))


def suites(crate, out_dir, bh):
    """Part `suites` for one crate."""
    version, harness = SUITES[crate]
    row = {"crate": crate, "version": version, "harness": harness}
    copies = {}
    for kind in ("plain", "renamed"):
        copy = os.path.join(out_dir, "suites", f"{crate}-{kind}")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(registry_copy(crate), copy)
        manifest = os.path.join(copy, "Cargo.toml")
        if kind == "renamed":
            text = renamed(manifest, harness)
            with open(manifest, "w") as f:
                f.write(text)
        # A workspace of its own, whatever encloses OUT.
        with open(manifest, "a") as f:
            f.write("\n[workspace]\n")
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(copy, "target"))
        if harness == "divan" and kind == "plain":
            # The Divan benchhost-divan wraps (the crate's requirement, `0.1.11`, resolves to any 0.1): both copies
            # list and run under one Divan.
            sh(["cargo", "update", "-p", "divan", "--precise", DIVAN], copy, env)
        copies[kind] = (copy, env)
        _, row[f"{kind}_no_run_cold_s"] = sh(["cargo", "bench", "--no-run"], copy, env, timed=True)
        row[f"{kind}_ids"] = listed(copy, env, harness)
    row["same_ids"] = row["plain_ids"] == row["renamed_ids"]
    copy, env = copies["renamed"]
    _, row["build_benches_cold_s"] = sh([bh, "build", "--benches"], copy, env, timed=True)
    bench = sorted(glob.glob(os.path.join(copy, "benches", "**", "*.rs"), recursive=True))[0]
    for what, args in (("build_benches_warm_s", [bh, "build", "--benches"]),
                       ("cargo_no_run_warm_s", ["cargo", "bench", "--no-run"])):
        os.utime(bench)
        _, row[what] = sh(args, copy, env, timed=True)
    stream = os.path.join(out_dir, f"{crate}.jsonl")
    if os.path.exists(stream):
        os.remove(stream)
    plugins = os.path.join(copy, "target", "release", "benches")
    rigs = sorted(os.path.basename(p)[3:-3] for p in glob.glob(os.path.join(plugins, "lib*.so")))
    started = time.monotonic()
    for rig in rigs:
        subprocess.run([bh, "run", "--plugin", rig, "--plugin-dir", plugins, "--quick", "--out", stream], cwd=copy,
                       env=env, capture_output=True, text=True)
    row["run_all_quick_s"] = time.monotonic() - started
    records = [json.loads(line) for line in open(stream)] if os.path.exists(stream) else []
    row["rigs"] = rigs
    row["measured_ids"] = sorted(r["variant"]["id"] for r in records if r["kind"] == "measurement")
    row["failures"] = [{"id": r["variant"].get("id"), "cause": r.get("failure", {}).get("cause")}
                       for r in records if r["kind"] == "failure"]
    row["every_id_ran"] = row["measured_ids"] == row["renamed_ids"]
    return row


def aa(crate, rig, bench_id, out_dir, bh, comparisons, done):
    """Part `aa` for one id: `comparisons` A/A comparisons over layouts of two link seeds of one build, appended
    to `done` (a list kept in the proof) as each ends."""
    sys.path.insert(0, HERE)
    import layout_proof
    lib = f"lib{rig}.so"
    copy = os.path.join(out_dir, "suites", f"{crate}-renamed")
    plugins = os.path.join(copy, "target", "release", "benches")
    sides = {seed: os.path.join(out_dir, "aa", rig, str(seed)) for seed in (1001, 1002)}
    for seed, into in sides.items():
        if not os.path.exists(os.path.join(into, lib)):
            layout_proof.build_dir(lib, os.path.join(plugins, "layouts"), seed, into)
    stream = os.path.join(out_dir, "aa", "run.jsonl")
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(copy, "target"))
    while len(done) < comparisons:
        new, old = (sides[1001], sides[1002]) if len(done) % 2 == 0 else (sides[1002], sides[1001])
        done.append(compare(bh, rig, bench_id, new, old, stream, copy, env))
        yield


def compare(bh, rig, bench_id, new, old, stream, cwd, env, extra=()):
    """One `run --against` of one id over layouts (the default), as a row of the proof."""
    if os.path.exists(stream):
        os.remove(stream)
    label = "id=" + re.escape(bench_id) + "$"
    started = time.monotonic()
    sh([bh, "run", label, "--plugin", rig, "--no-previous", "-q", "--out", stream, "--plugin-dir", new,
        "--against", old, *extra], cwd, env)
    wall = time.monotonic() - started
    records = [json.loads(line) for line in open(stream)]
    verdict = next(r["verdict"] for r in records if r["kind"] == "verdict" and r["verdict"].get("metric") == "time")
    layouts = verdict.get("method", {}).get("layouts") or {}
    return {"wall_s": round(wall, 2), "decision": verdict["decision"], "ratio": verdict.get("ratio"),
            "ci95": verdict.get("ci95"), "new": os.path.basename(new), "pairs": layouts.get("pairs"),
            "between_layouts": layouts.get("between_layouts"),
            "between_processes": layouts.get("between_processes"),
            "log_ratios": verdict.get("method", {}).get("log_ratios")}


SUITE, SUITE_RIG, SUITE_LIB = "criterion-suite", "suite", "libsuite.so"
# Each arm of part ab: the slowdown the `slower` build compiles in, as a share of the id's time.
ARMS = {"ab5": 0.05, "ab1": 0.01}


def suite_build(bh, spin=None):
    """`benchhost build --benches` of the example suite (its `slower` build with `spin` rounds): where its bench
    plugin is, with its link kept in layouts/."""
    import layout_proof
    env, args = dict(os.environ), [bh, "build", "--benches", "-p", SUITE]
    if spin is not None:
        env["BENCHHOST_SLOWER_SPIN"] = str(spin)
        args += ["--features", f"{SUITE}/slower"]
    sh(args, ROOT, env)
    return os.path.join(layout_proof.TARGET, "release", "benches")


def ab(arm, out_dir, bh, args, row):
    """Part `ab` for one arm: the plain build (link seed 1001) against the slower one (link seed 1003), of
    --ab-id. First the true change of their pools of layouts (`truth`: --truth-runs runs of --truth-rounds
    processes, pooled as layout_proof.py pools them), then --comparisons comparisons over layouts (the default):
    +5% `regressed` in each, +1% never `improved` and its CI95 holding the truth in at least 90%. The slower
    build's objects are overwritten by the next arm's (the spin is a constant of one feature), so an arm builds
    both sides again each time it runs."""
    import layout_proof, rigs_proof
    d = os.path.join(out_dir, "ab")
    plugins = suite_build(bh)
    if "spin" not in row:  # sized from a short run of the plain build: the spin's rounds at SPIN_NS each
        stream = os.path.join(d, "size.jsonl")
        os.makedirs(d, exist_ok=True)
        sh([bh, "run", "id=" + re.escape(args.ab_id) + "$", "--plugin", SUITE_RIG, "--plugin-dir", plugins,
            "--no-previous", "-q", "--out", stream], ROOT, dict(os.environ))
        m = next(json.loads(x) for x in open(stream) if '"measurement"' in x)["metrics"]["time"]
        row["id_ns"] = m["value"] * rigs_proof.UNIT_NS[m["unit"]]
        row["spin"] = max(1, round(ARMS[arm] * row["id_ns"] / rigs_proof.SPIN_NS))
    links = os.path.join(d, "links")
    for name, spin, seed in (("plain", None, 1001), (arm, row["spin"], 1003)):
        plugins = suite_build(bh, spin)
        layout_proof.kept_link(SUITE_LIB, os.path.join(links, name), os.path.join(plugins, "layouts"))
        shutil.rmtree(os.path.join(d, name), ignore_errors=True)
        layout_proof.build_dir(SUITE_LIB, os.path.join(links, name), seed, os.path.join(d, name))
    stream, env = os.path.join(d, "run.jsonl"), dict(os.environ)
    new, old = os.path.join(d, arm), os.path.join(d, "plain")
    truth = row.setdefault("truth", [])
    while len(truth) < args.truth_runs:
        truth.append(compare(bh, SUITE_RIG, args.ab_id, new, old, stream, ROOT, env,
                             ["--rounds", str(args.truth_rounds)]))
        yield
    done = row.setdefault("comparisons", [])
    while len(done) < args.comparisons:
        done.append(compare(bh, SUITE_RIG, args.ab_id, new, old, stream, ROOT, env))
        yield


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="suites")
    p.add_argument("--crates", default="arrow-array,arrow-buffer")
    p.add_argument("--aa", default="", help="CRATE:RIG:ID;... (the ids of part aa; ids may hold commas)")
    p.add_argument("--comparisons", type=int, default=40)
    p.add_argument("--ab-id", default="bytes/checksum64k", help="the example suite's id of part ab")
    p.add_argument("--arms", default=",".join(ARMS), help="the arms of part ab")
    p.add_argument("--truth-rounds", type=int, default=256, help="processes of a truth run of part ab")
    p.add_argument("--truth-runs", type=int, default=2, help="truth runs of part ab, pooled")
    p.add_argument("--out", default=os.path.expanduser("~/.cache/benchhost/criterion-proof"))
    p.add_argument("--benchhost", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                                                       "release", "benchhost"))
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "proof.json")
    proof = json.load(open(path)) if os.path.exists(path) else {}
    for crate in args.crates.split(","):
        if "suites" in args.parts.split(",") and "suites" not in proof.get(crate, {}):
            proof.setdefault(crate, {})["suites"] = suites(crate, args.out, args.benchhost)
            with open(path, "w") as f:
                json.dump(proof, f, indent=1)
            row = proof[crate]["suites"]
            print(f"{crate}: {len(row['renamed_ids'])} ids, same as {row['harness'].title()}'s: {row['same_ids']}, every id ran: "
                  f"{row['every_id_ran']}, failures: {len(row['failures'])}")
    if "aa" in args.parts.split(","):
        for item in filter(None, args.aa.split(";")):
            crate, rig, bench_id = item.split(":", 2)
            done = proof.setdefault(crate, {}).setdefault("aa", {}).setdefault(f"{rig}:{bench_id}", [])
            for _ in aa(crate, rig, bench_id, args.out, args.benchhost, args.comparisons, done):
                with open(path, "w") as f:
                    json.dump(proof, f, indent=1)
            decisions = [c["decision"] for c in done]
            print(f"{item}: no_change {decisions.count('no_change')}/{len(done)}, "
                  f"alarms {decisions.count('regressed') + decisions.count('improved')}")
    if "ab" in args.parts.split(","):
        import layout_proof
        for arm in args.arms.split(","):
            row = proof.setdefault(SUITE, {}).setdefault(arm, {"id": args.ab_id, "share": ARMS[arm]})
            for _ in ab(arm, args.out, args.benchhost, args, row):
                with open(path, "w") as f:
                    json.dump(proof, f, indent=1)
            truth = layout_proof.pools_truth(row["truth"])[0]
            print(f"{arm}: spin {row['spin']}, truth x{truth:.4f}: {layout_proof.summary(row['comparisons'], truth)}")


if __name__ == "__main__":
    main()
