//! The warehouse through its binary: concurrent publishers against one sqlite catalog lose no record, SQL
//! over files and over the warehouse gives the same answers, and an export reads back every record.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_benchhost-warehouse"))
}

fn results(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../results").join(name)
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().filter(|l| !l.trim().is_empty()).count()
}

fn query(args: &[&str]) -> String {
    let out = Command::new(bin()).arg("query").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn four_concurrent_publishers_lose_no_record_and_queries_agree_with_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    let files = ["querier.jsonl", "compaction.jsonl", "cache_tier.jsonl", "wal.jsonl"].map(results);
    let expected: usize = files.iter().map(|f| lines(f)).sum();
    let publishers: Vec<_> = files
        .iter()
        .map(|file| {
            Command::new(bin())
                .args(["publish", "--warehouse"])
                .arg(&warehouse)
                .arg(file)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for publisher in publishers {
        let out = publisher.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let count = query(&["SELECT count(*) AS n FROM records", "--warehouse", warehouse.to_str().unwrap()]);
    assert!(count.contains(&format!("| {expected} ")), "expected {expected} records:\n{count}");

    // The same question over the files and over the warehouse.
    let sql =
        "SELECT bench, metric, count(*) AS n, round(avg(value), 3) AS mean FROM metrics GROUP BY 1, 2 ORDER BY 1, 2";
    let mut from_files = vec![sql, "--from"];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    from_files.extend(names.iter().map(String::as_str));
    let over_files = query(&from_files);
    let over_warehouse = query(&[sql, "--warehouse", warehouse.to_str().unwrap()]);
    assert_eq!(over_files, over_warehouse);
    assert!(over_files.contains("| querier    | query_time "), "{over_files}");

    let out = dir.path().join("export.jsonl");
    let status = Command::new(bin()).args(["export", "--warehouse"]).arg(&warehouse).arg("--out").arg(&out).status();
    assert!(status.unwrap().success());
    assert_eq!(lines(&out), expected);
}

#[test]
fn a_query_needs_exactly_one_source() {
    let out = Command::new(bin()).args(["query", "SELECT 1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give either --from FILE... or --warehouse DIR"));
}
