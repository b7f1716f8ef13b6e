//! The warehouse through its binary: concurrent publishers against one sqlite catalog lose no record, SQL
//! over files and over the warehouse gives the same answers, an export reads back every record, publishing is
//! idempotent, and `gc` removes what a killed publisher left. (The same on PostgreSQL and S3: host's
//! it/fleet.rs.)

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

#[test]
fn statements_that_write_drop_or_set_are_refused_and_queries_are_answered() {
    // regression: `query --from wal.jsonl "DELETE FROM records"` printed `count | 6` and exited 0.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wal.jsonl");
    std::fs::copy(results("wal.jsonl"), &file).unwrap();
    let before = std::fs::read(&file).unwrap();
    let from = file.to_str().unwrap();
    let warehouse = dir.path().join("wh");
    for (sql, named) in [
        ("DELETE FROM records", "DELETE is DML (it writes)"),
        ("INSERT INTO records (bench) VALUES ('x')", "INSERT is DML (it writes)"),
        ("UPDATE records SET bench = 'x'", "UPDATE is DML (it writes)"),
        ("COPY records TO 'copied.csv'", "COPY is DML (it writes)"),
        ("CREATE TABLE t AS SELECT * FROM records", "CREATE TABLE is DDL (it changes the tables)"),
        ("DROP TABLE records", "DROP is DDL (it changes the tables)"),
        ("ALTER TABLE records RENAME TO r", "ALTER TABLE is DDL (it changes the tables)"),
        ("SET datafusion.execution.batch_size = 1", "SET is a statement that sets or controls the session"),
    ] {
        let expected = format!(
            "error: query only reads: {named}, refused before it runs (ask with SELECT, WITH, EXPLAIN, SHOW or DESCRIBE)"
        );
        for source in [["--from", from], ["--warehouse", warehouse.to_str().unwrap()]] {
            let out = Command::new(bin()).current_dir(dir.path()).args(["query", sql]).args(source).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{sql}");
            assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), expected, "{sql}");
            assert!(out.stdout.is_empty(), "{sql}");
        }
    }
    assert_eq!(std::fs::read(&file).unwrap(), before, "the results file is untouched");
    assert!(!warehouse.exists() && !dir.path().join("copied.csv").exists(), "nothing was created");

    let answer = |sql: &str| query(&[sql, "--from", from]);
    let records = lines(&file);
    assert!(answer("SELECT count(*) AS n FROM records").contains(&format!("| {records} ")));
    assert!(answer("WITH w AS (SELECT bench FROM records) SELECT DISTINCT bench FROM w").contains("| wal   |"));
    assert!(answer("EXPLAIN SELECT count(*) FROM records").contains("logical_plan"));
    let tables = answer("SHOW TABLES");
    assert!(tables.contains("| records ") && tables.contains("| metrics "), "{tables}");
    assert!(answer("DESCRIBE metrics").contains("| higher_is_better "));
}

/// `wal.jsonl`'s records over `nights` nights, one day apart.
fn nights(dir: &Path, nights: u64) -> PathBuf {
    let path = dir.join("nights.jsonl");
    let records = benchhost_record::reader::records(&results("wal.jsonl")).unwrap();
    let history = benchhost_record::Record::nights_for_tests(&records, nights, 0.0);
    std::fs::write(&path, history.iter().map(|r| r.to_line() + "\n").collect::<String>()).unwrap();
    path
}

#[test]
fn the_newest_export_holds_the_newest_records_of_each_series_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (warehouse, stream) = (dir.path().join("wh"), nights(dir.path(), 5));
    let status = Command::new(bin()).args(["publish", "--warehouse"]).arg(&warehouse).arg(&stream).status();
    assert!(status.unwrap().success());
    let out = dir.path().join("newest.jsonl");
    let mut export = Command::new(bin());
    export.args(["export", "--newest", "2", "--warehouse"]).arg(&warehouse).arg("--out").arg(&out);
    assert!(export.status().unwrap().success());
    // A record is named by its run and series (the history keeps slimmed records, the export whole ones).
    let name = |r: &benchhost_record::Record| format!("{:?} {:?}", r.run.id, benchhost_record::series(r));
    let mut exported: Vec<String> = benchhost_record::reader::records(&out).unwrap().iter().map(name).collect();
    let mut history = benchhost_record::history::History::new(benchhost_record::history::Needs::newest(2));
    history.read(&stream).unwrap();
    let mut expected: Vec<String> = history.into_records().iter().map(name).collect();
    exported.sort();
    expected.sort();
    assert_eq!(exported.len(), 2 * lines(&results("wal.jsonl")));
    assert_eq!(exported, expected);
}

#[test]
fn a_publish_that_fails_leaves_no_record_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    let garbage = dir.path().join("garbage.jsonl");
    std::fs::write(&garbage, "not json\n").unwrap();
    let out = Command::new(bin())
        .args(["publish", "--warehouse"])
        .arg(&warehouse)
        .arg(results("wal.jsonl"))
        .arg(&garbage)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("garbage.jsonl holds no readable record (1 lines skipped)"), "{stderr}");
    assert_eq!(
        parquet_files(&warehouse),
        Vec::<PathBuf>::new(),
        "the files of the first input were written, then removed"
    );
    let count = query(&["SELECT count(*) AS n FROM records", "--warehouse", warehouse.to_str().unwrap()]);
    assert!(count.contains("| 0 "), "{count}");
}

fn parquet_files(warehouse: &Path) -> Vec<PathBuf> {
    let files = walk(&warehouse.join("data")).into_iter().filter(|p| p.extension().is_some_and(|e| e == "parquet"));
    let mut files: Vec<PathBuf> = files.collect();
    files.sort();
    files
}

fn publish(warehouse: &Path, file: &Path) -> Command {
    let mut command = Command::new(bin());
    command.args(["publish", "--warehouse"]).arg(warehouse).arg(file);
    command
}

fn ok(command: &mut Command) -> String {
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_killed_publisher_adds_nothing_its_retry_adds_once_and_gc_removes_only_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let (warehouse, wal) = (dir.path().join("wh"), results("wal.jsonl"));
    let n = lines(&wal);
    let out = ok(&mut publish(&warehouse, &wal));
    assert!(out.contains(&format!("published {n} records")), "{out}");
    let kept = parquet_files(&warehouse);

    let stream = nights(dir.path(), 2);
    let marker = dir.path().join("stalled");
    let mut killed = publish(&warehouse, &stream).env("BENCHHOST_WAREHOUSE_STALL_COMMIT", &marker).spawn().unwrap();
    while !marker.exists() {
        assert!(killed.try_wait().unwrap().is_none(), "the publisher never stalled");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    let count = |expected: usize| {
        let count = query(&["SELECT count(*) AS n FROM records", "--warehouse", warehouse.to_str().unwrap()]);
        assert!(count.contains(&format!("| {expected} ")), "expected {expected} records:\n{count}");
    };
    count(n);
    let orphans = parquet_files(&warehouse).len() - kept.len();
    assert!(orphans > 0, "the killed publisher wrote its data files");

    let gc = |older_than: &str| {
        ok(Command::new(bin()).args(["gc", "--older-than", older_than, "--warehouse"]).arg(&warehouse))
    };
    assert!(gc("1h").contains(&format!("removed 0 orphans, kept {orphans} younger than 3600 s")));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(gc("1s").contains(&format!("removed {orphans} orphans")));
    assert_eq!(parquet_files(&warehouse), kept, "only the orphans are gone");
    count(n);

    // The retry adds the file's records once; the file again, and a file that repeats a record, add nothing.
    let out = ok(&mut publish(&warehouse, &stream));
    assert!(out.contains(&format!("published {} records", 2 * n)), "{out}");
    let out = ok(publish(&warehouse, &stream).arg(&wal));
    assert!(out.contains("published 0 records") && out.contains(&format!("{} were in it already", 3 * n)), "{out}");
    count(3 * n);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    entries.flat_map(|e| if e.path().is_dir() { walk(&e.path()) } else { vec![e.path()] }).collect()
}

#[test]
fn a_published_record_comes_back_as_its_file_held_it_with_fields_this_build_does_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    let text = std::fs::read_to_string(results("wal.jsonl")).unwrap();
    let first = text.lines().next().unwrap();
    // A field a newer benchhost may add: readers skip it, and the warehouse keeps it.
    let newer = format!("{},\"added_later\":{{\"by\":\"a newer benchhost\"}}}}", &first[..first.len() - 1]);
    let stream = dir.path().join("newer.jsonl");
    std::fs::write(&stream, format!("{newer}\n")).unwrap();
    let status = Command::new(bin()).args(["publish", "--warehouse"]).arg(&warehouse).arg(&stream).status();
    assert!(status.unwrap().success());
    let out = dir.path().join("export.jsonl");
    let mut export = Command::new(bin());
    export.args(["export", "--warehouse"]).arg(&warehouse).arg("--out").arg(&out);
    assert!(export.status().unwrap().success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("{newer}\n"));
}

#[test]
fn acknowledgements_published_twice_come_back_once_each_from_every_export() {
    let dir = tempfile::tempdir().unwrap();
    let (warehouse, stream) = (dir.path().join("wh"), nights(dir.path(), 3));
    let records = benchhost_record::reader::records(&stream).unwrap();
    // An acknowledgement of the first series on two metrics, then a revoke: three records of one `accept`.
    let ack = |metric: &str, revokes: Option<&str>| {
        let a: benchhost_record::Acknowledgement = serde_json::from_value(serde_json::json!({
            "id": "a1", "metric": metric, "decision": "regressed", "ratio": 1.05, "ci95": [1.04, 1.06],
            "higher_is_better": false, "from_ts_ms": 1, "source": "verdict", "reason": "a new check", "by": "ann",
            "revokes": revokes}))
        .unwrap();
        benchhost_record::Record::acknowledgement_on(&records[0], a, records[0].run.clone())
    };
    let acks = [ack("roundtrip_time", None), ack("bytes", None), ack("roundtrip_time", Some("a1"))];
    let file = dir.path().join("acks.jsonl");
    std::fs::write(&file, acks.iter().map(|r| r.to_line() + "\n").collect::<String>()).unwrap();
    for _ in 0..2 {
        let status =
            Command::new(bin()).args(["publish", "--warehouse"]).arg(&warehouse).arg(&stream).arg(&file).status();
        assert!(status.unwrap().success());
    }
    let kinds = query(&[
        "SELECT count(*) AS n FROM records WHERE kind = 'acknowledgement'",
        "--warehouse",
        warehouse.to_str().unwrap(),
    ]);
    assert!(kinds.contains("| 3 "), "each acknowledgement once:\n{kinds}");
    for newest in [None, Some("1")] {
        let out = dir.path().join(format!("export-{newest:?}.jsonl"));
        let mut export = Command::new(bin());
        export.arg("export").args(newest.map(|n| vec!["--newest", n]).unwrap_or_default());
        export.arg("--warehouse").arg(&warehouse).arg("--out").arg(&out);
        assert!(export.status().unwrap().success());
        let back: Vec<benchhost_record::Record> = benchhost_record::reader::records(&out)
            .unwrap()
            .into_iter()
            .filter(|r| r.kind == benchhost_record::Kind::Acknowledgement)
            .collect();
        assert_eq!(back.len(), 3, "--newest {newest:?}: every acknowledgement, once");
        for ack in &acks {
            assert!(back.contains(ack), "--newest {newest:?}: {ack:?} comes back as written");
        }
    }
}
