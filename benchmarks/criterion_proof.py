#!/usr/bin/env python3
"""The proof of issue 82 on real Criterion suites: arrow-array's and arrow-buffer's `benches/` (58.4.1, from the
cargo registry), unchanged but for the rename of their `criterion` dev-dependency to benchhost-criterion.

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

usage: python3 benchmarks/criterion_proof.py [--parts suites,aa] [--crates arrow-array,arrow-buffer] [--aa "CRATE:RIG:ID;..."]
                                             [--out ~/.cache/benchhost/criterion-proof]
"""
import argparse, glob, json, os, re, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VERSION = "58.4.1"
COMPAT = os.path.join(ROOT, "compat", "criterion")


def registry_copy(crate):
    """The crate's published source, as cargo unpacked it."""
    found = glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/{crate}-{VERSION}"))
    if not found:
        sys.exit(f"{crate} {VERSION} is not in ~/.cargo/registry/src: fetch it with `cargo fetch` in a crate that "
                 f"depends on it (this workspace's arrow {VERSION} does)")
    return found[0]


def renamed(manifest):
    """The manifest with its criterion dev-dependency renamed to benchhost-criterion (a path dependency: the
    version requirement is Criterion's, so it goes), every other line as published."""
    text = open(manifest).read()
    head = "[dev-dependencies.criterion]\n"
    if head not in text:
        sys.exit(f"{manifest}: no [dev-dependencies.criterion] table")
    start = text.index(head) + len(head)
    end = text.find("\n[", start)
    table = text[start:end]
    table = re.sub(r'^version = ".*"\n', "", table, flags=re.M)
    table = f'package = "benchhost-criterion"\npath = "{COMPAT}"\n' + table
    return text[:start] + table + text[end:]


def sh(args, cwd, env=None, timed=False):
    started = time.monotonic()
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} (in {cwd}) failed:\n{out.stderr[-4000:]}")
    return (out, time.monotonic() - started) if timed else out


def listed(copy, env):
    """`cargo bench -- --list`: each bench target's ids, as Criterion prints them (`ID: benchmark`)."""
    out = sh(["cargo", "bench", "--", "--list"], copy, env)
    return sorted(line[: -len(": benchmark")] for line in out.stdout.splitlines() if line.endswith(": benchmark"))


def suites(crate, out_dir, bh):
    """Part `suites` for one crate."""
    row = {"crate": crate, "version": VERSION}
    copies = {}
    for kind in ("plain", "renamed"):
        copy = os.path.join(out_dir, "suites", f"{crate}-{kind}")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(registry_copy(crate), copy)
        manifest = os.path.join(copy, "Cargo.toml")
        if kind == "renamed":
            text = renamed(manifest)
            with open(manifest, "w") as f:
                f.write(text)
        # A workspace of its own, whatever encloses OUT.
        with open(manifest, "a") as f:
            f.write("\n[workspace]\n")
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(copy, "target"))
        copies[kind] = (copy, env)
        _, row[f"{kind}_no_run_cold_s"] = sh(["cargo", "bench", "--no-run"], copy, env, timed=True)
        row[f"{kind}_ids"] = listed(copy, env)
    row["same_ids"] = row["plain_ids"] == row["renamed_ids"]
    copy, env = copies["renamed"]
    _, row["build_benches_cold_s"] = sh([bh, "build", "--benches"], copy, env, timed=True)
    bench = sorted(glob.glob(os.path.join(copy, "benches", "*.rs")))[0]
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
    label = "id=" + re.escape(bench_id) + "$"
    while len(done) < comparisons:
        new, old = (sides[1001], sides[1002]) if len(done) % 2 == 0 else (sides[1002], sides[1001])
        if os.path.exists(stream):
            os.remove(stream)
        started = time.monotonic()
        sh([bh, "run", label, "--plugin", rig, "--no-previous", "-q", "--out", stream, "--plugin-dir", new,
            "--against", old], copy, dict(os.environ, CARGO_TARGET_DIR=os.path.join(copy, "target")))
        wall = time.monotonic() - started
        verdict = next(json.loads(line)["verdict"] for line in open(stream)
                       if json.loads(line)["kind"] == "verdict" and json.loads(line)["verdict"].get("metric") == "time")
        layouts = verdict.get("method", {}).get("layouts") or {}
        done.append({"wall_s": round(wall, 2), "decision": verdict["decision"], "ratio": verdict.get("ratio"),
                     "ci95": verdict.get("ci95"), "new": os.path.basename(new), "pairs": layouts.get("pairs"),
                     "between_layouts": layouts.get("between_layouts"),
                     "between_processes": layouts.get("between_processes")})
        yield


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="suites")
    p.add_argument("--crates", default="arrow-array,arrow-buffer")
    p.add_argument("--aa", default="", help="CRATE:RIG:ID;... (the ids of part aa; ids may hold commas)")
    p.add_argument("--comparisons", type=int, default=40)
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
            print(f"{crate}: {len(row['renamed_ids'])} ids, same as Criterion's: {row['same_ids']}, every id ran: "
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


if __name__ == "__main__":
    main()
