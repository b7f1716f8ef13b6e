//! The independent check of a rewrite: pyiceberg, a separate implementation of the Iceberg spec, reads the
//! table the `compaction` rig rewrote from a `storage = fs` warehouse and must agree with it: one live data
//! file (the rewrite's), the same rows, the old files marked deleted, a `replace` snapshot.
//!
//! The test installs pyiceberg itself, pinned, into a virtualenv cached outside the repository
//! (`$HOME/.cache/benchhost/pyiceberg-0.12.0`, or `BENCHHOST_PYICEBERG_VENV`); it needs `python3` with `venv`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::rigs::compaction::tests_support::rewrite_one_fs_table;

const PYICEBERG: &str = "pyiceberg[pyarrow]==0.12.0";
const PYARROW: &str = "pyarrow==26.0.1";

const READER: &str = r#"
import json, sys
from pyiceberg.table import StaticTable
table = StaticTable.from_metadata(sys.argv[1])
snapshot = table.current_snapshot()
files = table.inspect.files().to_pylist()
entries = table.inspect.entries().to_pylist()
rows = table.scan().to_arrow()
print(json.dumps({
    "operation": snapshot.summary.operation.value,
    "live_files": sorted(f["file_path"] for f in files),
    "deleted_entries": sum(1 for e in entries if e["status"] == 2),
    "added_entries": sum(1 for e in entries if e["status"] == 1),
    "rows": rows.num_rows,
    "distinct_spans": len(set(rows.column("span_id").to_pylist())),
    "total_records": snapshot.summary["total-records"],
}))
"#;

/// A virtualenv with the pinned pyiceberg, made on first use.
fn venv() -> PathBuf {
    let dir = std::env::var_os("BENCHHOST_PYICEBERG_VENV").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").expect("HOME is set");
        Path::new(&home).join(".cache/benchhost/pyiceberg-0.12.0")
    });
    // The marker is written last, so an interrupted install is redone rather than half used.
    let marker = dir.join(".installed");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        run(Command::new("python3").args(["-m", "venv"]).arg(&dir));
        run(Command::new(dir.join("bin/python")).args(["-m", "pip", "install", "-q", PYICEBERG, PYARROW]));
        std::fs::write(&marker, format!("{PYICEBERG} {PYARROW}\n")).unwrap();
    }
    dir
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(out.status.success(), "{command:?}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn pyiceberg_reads_the_rewritten_table_as_one_live_file_with_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let rewritten = rewrite_one_fs_table(dir.path(), 6, 100);
    let python = venv().join("bin/python");
    let out = run(Command::new(python).args(["-c", READER]).arg(&rewritten.metadata_location));
    let seen: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(seen["operation"], "replace", "{seen}");
    assert_eq!(seen["live_files"], serde_json::json!(rewritten.written), "{seen}");
    assert_eq!((seen["deleted_entries"].as_u64(), seen["added_entries"].as_u64()), (Some(6), Some(1)), "{seen}");
    assert_eq!((seen["rows"].as_u64(), seen["distinct_spans"].as_u64()), (Some(600), Some(600)), "{seen}");
    assert_eq!(seen["total_records"], "600", "{seen}");
}
