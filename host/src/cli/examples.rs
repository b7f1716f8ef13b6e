//! The `Examples:` section of each command's `--help`: the lines a user types first, as hyperfine and cargo
//! show them.

/// `benchhost list`.
pub const LIST: &str = "Examples:
  benchhost list
  benchhost list --plugin-dir target/release --json";

/// `benchhost run`.
pub const RUN: &str = "Examples:
  benchhost run --plugin wal --quick                  # a smoke run of one rig
  benchhost run '^wal .*compression=zstd'               # only the cells whose label matches
  benchhost run --plugin wal --set rows=10000 --measurement 5s --samples 50
  benchhost run --plugin kafka_topology --interleave mode   # split against perthread, in the same processes
  benchhost run --plugin wal --against ../main/target/release --fail-on regressed   # gate on the verdicts
  benchhost run --save-baseline main                  # then, on a branch: benchhost run --baseline main
  benchhost run --plugin wal --export-markdown wal.md --export-html wal.html";

/// `benchhost bisect`.
pub const BISECT: &str = "Examples:
  benchhost bisect HEAD~16 HEAD 'wal compression=zstd rows=1000' --instructions   # exact counts decide
  benchhost bisect HEAD~32 HEAD --plugin harness --set workload=sort10k --json  # wall time, the answer as JSON";

/// `benchhost build`.
pub const BUILD: &str = "Examples:
  benchhost build -p rig-wal                       # cargo build --release -p rig-wal, its link kept
  benchhost build --layouts 10 -p rig-lakehouse    # and 10 layouts a side linked now
  benchhost build --benches                        # each bench target also as target/release/benches/lib<target>.so";

/// `benchhost plan`.
pub const PLAN: &str = "Examples:
  benchhost plan
  benchhost plan --plugin kafka_topology --shard 1/4 --json";

/// `benchhost compare`.
pub const COMPARE: &str = "Examples:
  benchhost compare main results/results.jsonl --fail-on regressed
  benchhost compare old.jsonl new.jsonl --threshold 5% --out verdicts.jsonl
  benchhost compare old.jsonl new.jsonl --json";

/// `benchhost trend`.
pub const TREND: &str = "Examples:
  benchhost trend nightly.jsonl                  # the stream a nightly job appends to
  benchhost trend nightly.jsonl 'querier.*footer_cache=warm' --metric query_time --json
  benchhost trend --warehouse warehouse/ --fail-on regression --within 8   # the nightly gate";

/// `benchhost accept`.
pub const ACCEPT: &str = "Examples:
  benchhost accept '^wal .*compression=zstd' --results bench-results/pr.jsonl --out accepted.jsonl --reason 'a CRC check on every record (#412)'
  benchhost run --plugin wal --against ../main/target/release --fail-on regressed --accepted accepted.jsonl
  benchhost accept --list --results accepted.jsonl
  benchhost accept --revoke 18f3a2c9b10-4d2 --reason 'reverted in #420' --results accepted.jsonl";

/// `benchhost calibrate`.
pub const CALIBRATE: &str = "Examples:
  benchhost calibrate --plugin wal --rounds 10
  benchhost run --plugin wal --against ../main/target/release --threshold auto";

/// `benchhost import`.
pub const IMPORT: &str = "Examples:
  benchhost import criterion target/criterion --out results/criterion.jsonl";

/// `benchhost report`.
pub const REPORT: &str = "Examples:
  benchhost report results/*.jsonl --format md
  benchhost report results/*.jsonl --format html --out report.html
  benchhost report results/results.jsonl --format bmf > bmf.json";

/// `benchhost show`.
pub const SHOW: &str = "Examples:
  benchhost show results/results.jsonl
  benchhost show results/results.jsonl --all | less -S";

/// `benchhost verify`.
pub const VERIFY: &str = "Examples:
  benchhost verify results/*.jsonl";

/// `benchhost check`.
pub const CHECK: &str = "Examples:
  benchhost check target/release/libmy_rig.so
  benchhost check target/release/libmy_rig.so --deadline 30s";

/// `benchhost merge`.
pub const MERGE: &str = "Examples:
  benchhost merge nightly.jsonl shard-1.jsonl shard-2.jsonl shard-3.jsonl";

/// `benchhost publish`.
pub const PUBLISH: &str = "Examples:
  benchhost publish results/results.jsonl --warehouse wh
  PGPASSWORD=... AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... \\
    benchhost publish results/results.jsonl --warehouse postgres://bench@db.internal/benchhost \\
    --storage s3://perf-results/warehouse
  ICEBERG_REST_TOKEN=... AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... \\
    benchhost publish results/results.jsonl --warehouse 'rest://catalog.internal:8181/perf?namespace=bench' \\
    --storage s3://perf-results/warehouse";

/// `benchhost gc`.
pub const GC: &str = "Examples:
  benchhost gc --warehouse wh
  benchhost gc --warehouse postgres://bench@db.internal/benchhost --storage s3://perf-results/warehouse \\
    --older-than 1d";

/// `benchhost query`.
pub const QUERY: &str = "Examples:
  benchhost query \"SELECT bench, metric, avg(value) FROM metrics GROUP BY 1, 2\" --from results/*.jsonl
  benchhost query --warehouse wh \"SELECT decision, count(*) FROM records GROUP BY 1\"";

/// `benchhost new-rig`.
pub const NEW_RIG: &str = "Examples:
  benchhost new-rig my_rig && cd my_rig && cargo test && cargo build --release";

/// `benchhost completions`.
pub const COMPLETIONS: &str = "Examples:
  benchhost completions bash > ~/.local/share/bash-completion/completions/benchhost
  benchhost completions zsh > ~/.zfunc/_benchhost";

/// `benchhost man`.
pub const MAN: &str = "Examples:
  benchhost man > benchhost.1 && man ./benchhost.1
  benchhost man --markdown > docs/src/cli.md";

/// `benchhost schema`.
pub const SCHEMA: &str = "Examples:
  benchhost schema > schema-1.json";
