#!/usr/bin/env python3
"""Publishing throughput of a fleet warehouse: PostgreSQL catalog, data on an S3 server, 1, 4 and 8 publishers.

    python3 benchmarks/warehouse/fleet.py [--records 100000] [--publishers 1,4,8] [--reps 3]
        [--store s3s-fs|garage] [--out results/warehouse-fleet.json]

Starts a private PostgreSQL cluster (initdb, pg_ctl; as the `postgres` user when run as root) and an S3 server
on 127.0.0.1: s3s-fs (as `.ci/run` installs it, or BENCHHOST_S3S_FS), or Garage 2.5.0 as a single node
(`cargo install garage@2.5.0 --locked --root ~/.cache/benchhost/garage-2.5.0`, or BENCHHOST_GARAGE);
generates --records records of realistic shape (benchmarks/history/generate.py), and splits them into as many
files as there are publishers, so every configuration publishes the same records. Each repetition publishes into a fresh database and prefix, all
publishers started at once; it takes the wall time from the first start to the last exit, and the commit
attempts each publisher reports (an attempt past the first is a commit that lost the race and was checked and
tried again). Uses the release build of benchhost-warehouse (built unless --no-build).
"""

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEY, SECRET, PASSWORD, BUCKET = "fleetkey", "fleet-secret-key", "fleet-password", "fleet"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    sys.exit(f"nothing listens on 127.0.0.1:{port}")


def pg_bin():
    if os.environ.get("BENCHHOST_PG_BIN"):
        return Path(os.environ["BENCHHOST_PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        sys.exit("no PostgreSQL: apt-get install postgresql")
    return found[-1].parent


def as_postgres(args):
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def start_postgres(base):
    base.chmod(0o755)
    (base / "password").write_text(PASSWORD)
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "postgres", str(base)], check=True)
    bin_dir, data, port = pg_bin(), base / "data", free_port()
    subprocess.run(as_postgres([str(bin_dir / "initdb"), "-D", str(data), "-U", "bench", f"--pwfile={base / 'password'}",
                                "--auth=scram-sha-256", "--no-sync"]), check=True, capture_output=True)
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c max_connections=200"
    subprocess.run(as_postgres([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-o", options, "-w",
                                "start"]), check=True, capture_output=True)
    wait_for(port)
    stop = lambda: subprocess.run(as_postgres([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"]),
                                  capture_output=True)
    return port, bin_dir, stop


def start_s3(base):
    binary = os.environ.get("BENCHHOST_S3S_FS") or str(Path.home() / ".cache/benchhost/s3s-fs-0.14.1/bin/s3s-fs")
    if not Path(binary).exists():
        sys.exit(f"no s3s-fs at {binary}: run .ci/run once, or set BENCHHOST_S3S_FS")
    (base / BUCKET).mkdir(parents=True)
    port = free_port()
    proc = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--access-key", KEY, "--secret-key",
                             SECRET, str(base)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return port, proc


def start_garage(base):
    """Garage as one node that makes its own layout, key and bucket (`--single-node --default-bucket`)."""
    binary = os.environ.get("BENCHHOST_GARAGE") or str(Path.home() / ".cache/benchhost/garage-2.5.0/bin/garage")
    if not Path(binary).exists():
        sys.exit(f"no Garage at {binary}: cargo install garage@2.5.0 --locked, or set BENCHHOST_GARAGE")
    base.mkdir(parents=True)
    s3_port, rpc_port, admin_port = free_port(), free_port(), free_port()
    config = base / "garage.toml"
    config.write_text(f"""metadata_dir = "{base / 'meta'}"
data_dir = "{base / 'data'}"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:{rpc_port}"
rpc_public_addr = "127.0.0.1:{rpc_port}"
rpc_secret = "{os.urandom(32).hex()}"

[s3_api]
s3_region = "us-east-1"
api_bind_addr = "127.0.0.1:{s3_port}"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:{admin_port}"
admin_token = "{os.urandom(32).hex()}"
""")
    config.chmod(0o600)  # Garage refuses a configuration with secrets that others can read
    env = dict(os.environ, GARAGE_CONFIG_FILE=str(config), GARAGE_DEFAULT_ACCESS_KEY=KEY,
               GARAGE_DEFAULT_SECRET_KEY=SECRET, GARAGE_DEFAULT_BUCKET=BUCKET)
    with open(base / "garage.log", "w") as log:
        proc = subprocess.Popen([binary, "server", "--single-node", "--default-bucket"], env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    wait_for(s3_port)
    return s3_port, proc


def split(stream, parts, out_dir):
    lines = stream.read_text().splitlines(keepends=True)
    files = []
    for i in range(parts):
        path = out_dir / f"part-{parts}-{i}.jsonl"
        path.write_text("".join(lines[i::parts]))
        files.append(path)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--publishers", default="1,4,8")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--store", choices=["s3s-fs", "garage"], default="s3s-fs")
    ap.add_argument("--out", type=Path, default=ROOT / "results/warehouse-fleet.json")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not args.no_build:
        # Built with benchhost, as the README does: alone, the warehouse resolves other features and rebuilds
        # DataFusion.
        subprocess.run(["cargo", "build", "--release", "-p", "benchhost", "-p", "benchhost-warehouse"], cwd=ROOT,
                       check=True)
    warehouse = target / "release/benchhost-warehouse"
    work = Path(tempfile.mkdtemp(prefix="benchhost-fleet-"))
    work.chmod(0o755)  # the postgres user must reach its cluster inside
    pg_dir, s3_dir = work / "pg", work / "s3"
    pg_dir.mkdir()
    pg_port, bin_dir, stop_pg = start_postgres(pg_dir)
    s3_port, s3 = start_garage(s3_dir) if args.store == "garage" else start_s3(s3_dir)
    env = dict(os.environ, PGPASSWORD=PASSWORD, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://127.0.0.1:{s3_port}")
    figures = {"argv": sys.argv, "store": args.store, "records": args.records, "configs": {}}
    try:
        stream = work / "stream.jsonl"
        subprocess.run([sys.executable, str(ROOT / "benchmarks/history/generate.py"), "--records", str(args.records),
                        "--out", str(stream)], check=True)
        figures["bytes"] = stream.stat().st_size
        for n in [int(p) for p in args.publishers.split(",")]:
            files = split(stream, n, work)
            walls, attempts = [], []
            for rep in range(args.reps):
                db = f"wh_{n}_{rep}"
                subprocess.run([str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(pg_port), "-U", "bench", db],
                               env=env, check=True)
                at = ["--warehouse", f"postgres://bench@127.0.0.1:{pg_port}/{db}", "--storage", f"s3://{BUCKET}/{db}"]
                # The table is made once, as a fleet's first publish would; the timed publishes find it.
                subprocess.run([str(warehouse), "gc", *at], env=env, check=True, capture_output=True)
                start = time.monotonic()
                procs = [subprocess.Popen([str(warehouse), "publish", str(f), *at], env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True) for f in files]
                outs = [p.communicate() for p in procs]
                walls.append(time.monotonic() - start)
                for proc, (out, err) in zip(procs, outs):
                    if proc.returncode != 0:
                        sys.exit(f"publish failed: {err}")
                    attempts.append(int(re.search(r"commit attempts: (\d+)", out).group(1)))
                print(f"  {n} publishers: {walls[-1]:.2f} s, attempts {attempts[-n:]}", file=sys.stderr)
            wall = statistics.median(walls)
            figures["configs"][str(n)] = {
                "publishers": n, "wall_s": round(wall, 3), "runs_s": [round(w, 3) for w in walls],
                "records_per_s": round(args.records / wall), "commits": len(attempts),
                "commits_retried": sum(1 for a in attempts if a > 1), "attempts_max": max(attempts),
            }
    finally:
        s3.kill()
        stop_pg()
        shutil.rmtree(work, ignore_errors=True)
    figures["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    args.out.write_text(json.dumps(figures, indent=1) + "\n")
    print("| publishers | wall (median) | records/s | commits retried |\n|---|---|---|---|")
    for c in figures["configs"].values():
        print(f"| {c['publishers']} | {c['wall_s']:.2f} s | {c['records_per_s']:,} | {c['commits_retried']} of "
              f"{c['commits']} (most attempts: {c['attempts_max']}) |")


if __name__ == "__main__":
    main()
