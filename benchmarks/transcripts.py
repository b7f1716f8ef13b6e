#!/usr/bin/env python3
"""Writes the terminal transcripts of docs/src/output.md from real runs of the repository's rigs (issue 69).

A transcript is a marked block of the page:

    <!-- transcript -->
    ```text
    $ benchhost run --plugin wal --set rows=1000
    (what it printed)
    ```
    <!-- /transcript -->

Every `$ ` line is a command; this script runs them all, block after block, in one sandbox that holds the
repository's rigs.toml and a base build at `../main/target/release` (the same plugins: an A/A), and writes each
command's output (stdout, then stderr, as a terminal shows them) under it. The docs tests run the same commands
with the test build and check that each transcript still has the shape benchhost prints (its numbers masked:
`host/tests/it/transcripts.rs`), so a change of output that leaves the page behind fails them.

usage: python3 benchmarks/transcripts.py [--plugins DIR]   # DIR: the release build (default: $CARGO_TARGET_DIR/release)
"""
import argparse, os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "src", "output.md")
BLOCK = re.compile(r"(<!-- transcript -->\n```text\n)(.*?)(```\n<!-- /transcript -->)", re.S)


def commands(block):
    """The command lines of a transcript block, without their `$ `."""
    return [line[2:] for line in block.splitlines() if line.startswith("$ ")]


def run(command, work, plugins):
    words = command.split()
    assert words[0] == "benchhost", f"a transcript runs benchhost, not `{command}`"
    env = dict(os.environ, BENCHHOST_PLUGIN_PATH=plugins, COLUMNS="120", NO_COLOR="1")
    out = subprocess.run([os.path.join(plugins, "benchhost"), *words[1:]], cwd=work, env=env,
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"`{command}` exited {out.returncode}:\n{out.stderr}")
    return (out.stdout + out.stderr).rstrip("\n")


def main():
    p = argparse.ArgumentParser()
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    p.add_argument("--plugins", default=os.path.join(target, "release"))
    args = p.parse_args()
    plugins = os.path.abspath(args.plugins)
    with open(PAGE) as f:
        text = f.read()
    with tempfile.TemporaryDirectory() as sandbox:
        work = os.path.join(sandbox, "work")
        os.makedirs(os.path.join(sandbox, "main", "target"))
        os.symlink(plugins, os.path.join(sandbox, "main", "target", "release"))
        os.makedirs(work)
        shutil.copy(os.path.join(ROOT, "rigs.toml"), work)

        def fill(m):
            lines = []
            for command in commands(m.group(2)):
                lines.append(f"$ {command}")
                printed = run(command, work, plugins)
                if printed:
                    lines.append(printed)
                print(f"ran: {command}", file=sys.stderr)
            return m.group(1) + "\n".join(lines) + "\n" + m.group(3)

        new = BLOCK.sub(fill, text)
    with open(PAGE, "w") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
