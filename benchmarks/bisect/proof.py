#!/usr/bin/env python3
"""The figures of `benchhost bisect` (issue 32): a scratch clone of this repository with 32 new commits, one of
which slows the harness rig's iteration, bisected from the commit before them to the last.

Parts (each resumable: a finished part is kept in OUT/bisect.json and not run again):
  instructions  the culprit adds an #[inline(never)] function to the iteration; `--instructions` decides
  functions     the same on copy64k, whose iteration inlines no sort, with a heavier function: the verdict's
                `functions` must name it first
  wall          the culprit adds a ~5% spin (the harness proof's 4,352 rounds for sort10k); wall time decides
  real          the wal rig: the culprit maps `compression = "lz4"` to ZSTD (a one-word slip in real code);
                wall time on `wal compression=lz4 rows=1000` decides
  wall_layouts, real_layouts
                `wall` and `real` with every step over code layouts (`--layouts auto`, the default since issue
                63; the other parts run `--layouts 1`): each commit's library relinked with 32 padding seeds,
                each step's processes on pairs drawn from them

Every commit touches something: the even ones a comment in the rig's crate (so each step rebuilds it), the
odd ones a text file outside any crate. Needs a release build of this workspace (the host, and the harness
plugin in $CARGO_TARGET_DIR/release, which finds the rig). Run on an idle machine; nothing else building.

    python3 benchmarks/bisect/proof.py --parts instructions,wall --out ~/.cache/benchhost/bisect-proof
"""

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
COMMITS = 32
CULPRIT = 21
# Per part: the file the even commits and the culprit change, and the cell bisected.
FILES = {"instructions": "benchmarks/harness/src/lib.rs", "functions": "benchmarks/harness/src/lib.rs",
         "wall": "benchmarks/harness/src/lib.rs",
         "real": "plugins/wal/src/ipc.rs"}
CELLS = {"instructions": ["--plugin", "harness", "--set", "workload=sort10k", "--instructions"],
         "functions": ["--plugin", "harness", "--set", "workload=copy64k", "--instructions"],
         "wall": ["--plugin", "harness", "--set", "workload=sort10k"],
         "real": ["--plugin", "wal", "--set", "compression=lz4", "--set", "rows=1000"]}

SLOW_FN = """
/// Injected by benchmarks/bisect/proof.py: the regression bisect must find.
#[inline(never)]
fn injected_regression_work(values: &[u64]) -> u64 {
    values.iter().fold(0u64, |acc, v| acc.rotate_left(5) ^ v.wrapping_mul(0x9e37_79b9))
}
"""
CALL = "        black_box(value);\n        black_box(injected_regression_work(&[1, 2, 3, 4, 5, 6, 7, 8]));\n"


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def culprit_change(part, text):
    if part == "instructions":
        return text.replace("        black_box(value);\n", CALL, 1) + SLOW_FN
    if part == "functions":
        heavier = CALL.replace("&[1, 2, 3, 4, 5, 6, 7, 8]", "&[7; 256]")
        return text.replace("        black_box(value);\n", heavier, 1) + SLOW_FN
    if part == "real":
        lz4 = "Compression::Lz4 => Some(CompressionType::LZ4_FRAME),"
        assert lz4 in text
        return text.replace(lz4, "Compression::Lz4 => Some(CompressionType::ZSTD),", 1)
    spin = "extra_rounds: p.spin_rounds as u64 + BUILT_IN_SPIN,"
    assert spin in text
    return text.replace(spin, "extra_rounds: p.spin_rounds as u64 + BUILT_IN_SPIN + 4352,", 1)


def scratch(part, into):
    """The scratch clone of this repository's HEAD in `into` with `part`'s 32 commits: (repo, good, commits)."""
    repo = into / "repo"
    if not repo.exists():
        subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
        git(repo, "config", "user.email", "proof@example.com")
        git(repo, "config", "user.name", "bisect proof")
        for i in range(COMMITS):
            lib = repo / FILES[part]
            if i == CULPRIT:
                lib.write_text(culprit_change(part, lib.read_text()))
            elif i % 2 == 0:
                lib.write_text(lib.read_text() + f"// bisect proof: revision {i}\n")
            else:
                notes = repo / "scratch-notes.txt"
                notes.write_text((notes.read_text() if notes.exists() else "") + f"revision {i}\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", f"revision {i}" + (" (the culprit)" if i == CULPRIT else ""))
    commits = git(repo, "rev-list", "--reverse", "HEAD~32..HEAD").split()
    return repo, git(repo, "rev-parse", "HEAD~32"), commits


def run_part(part, out):
    base = part.removesuffix("_layouts")
    layouts = ["--layouts", "auto" if part != base else "1"]
    repo, good, commits = scratch(base, out / part)
    cmd = [str(TARGET / "release/benchhost"), "bisect", good, commits[-1], *CELLS[base], *layouts,
           "--plugin-dir", str(TARGET / "release"), "--json", "--out", str(out / part / "records.jsonl")]
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET), XDG_CACHE_HOME=str(out / part / "cache"))
    started = time.time()
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
    (out / part / "stderr.txt").write_text(done.stderr)
    answer = json.loads(done.stdout) if done.stdout.strip() else {"error": done.stderr[-2000:]}
    return {
        "exit": done.returncode,
        "wall_s": round(time.time() - started, 1),
        "culprit": commits[CULPRIT],
        "found": answer.get("first_bad") == commits[CULPRIT],
        "commits": len(commits),
        "command": " ".join(cmd[1:]),
        "answer": answer,
        "host_commit": git(ROOT, "rev-parse", "HEAD"),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="instructions,wall")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    store = args.out / "bisect.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    for part in args.parts.split(","):
        if part in results:
            print(f"{part}: kept from before")
            continue
        results[part] = run_part(part, args.out)
        store.write_text(json.dumps(results, indent=1) + "\n")
        r = results[part]
        a = r["answer"]
        print(f"{part}: found={r['found']} steps={a.get('steps')} measured={a.get('measured')} "
              f"wall={r['wall_s']} s build={a.get('build_s')} s")


if __name__ == "__main__":
    main()
