//! A long history read as users read it: `show` one row per series with its count and trend, `--all` every
//! record; verify and merge over a stream of several read blocks, with duplicates far apart.

use crate::support::Sandbox;
use benchhost_record::Record;

/// `results/wal.jsonl`'s records (6 series) over `nights` nights, one day apart, each night a run of its own.
fn nights(nights: u64) -> Vec<Record> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/wal.jsonl");
    Record::nights_for_tests(&benchhost_record::reader::records(&path).unwrap(), nights, 0.01)
}

fn text(records: &[Record]) -> String {
    records.iter().map(|r| r.to_line() + "\n").collect()
}

fn stdout(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

#[test]
fn show_prints_the_newest_record_of_each_series_with_its_count_and_trend_and_all_prints_every_one() {
    let sandbox = Sandbox::new();
    sandbox.write("h.jsonl", &text(&nights(10)));
    let shown = stdout(&sandbox.cmd().args(["show", "h.jsonl"]).assert().success());
    assert!(shown.contains("records") && shown.contains("trend (last runs)"), "{shown}");
    let rows: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("│ ") && l[4..].trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 6, "one row per series:\n{shown}");
    assert!(rows.iter().all(|r| r.contains("┆ 10 ")), "each has 10 records:\n{shown}");
    // The values grow 1% a night: the newest is the highest of the last 8, +0.9% on the one before.
    assert!(shown.contains("▁▂▃▄▅▆▇█ +0.9%"), "{shown}");

    let all = stdout(&sandbox.cmd().args(["show", "--all", "h.jsonl"]).assert().success());
    let numbered =
        all.lines().filter(|l| l.starts_with("│ ") && l[4..].trim_start().starts_with(|c: char| c.is_ascii_digit()));
    assert_eq!(numbered.count(), 60, "every record");
    assert!(all.contains("│ 60 "), "rows numbered through");
}

#[test]
fn verify_and_merge_find_duplicates_blocks_apart() {
    // ~8 MB: more than one read block (4 MiB), so the duplicate of line 1 is parsed by another worker.
    let sandbox = Sandbox::new();
    let mut records = nights(700);
    let first = records[0].clone();
    records.push(first);
    sandbox.write("h.jsonl", &text(&records));
    assert!(std::fs::metadata(sandbox.path().join("h.jsonl")).unwrap().len() > 5 << 20);
    let lines = records.len();
    let verify = sandbox.cmd().args(["verify", "h.jsonl"]).assert().code(1);
    assert_eq!(stdout(&verify), format!("h.jsonl:{lines}: duplicate of the record on line 1\n"));

    let merge = sandbox.cmd().args(["merge", "all.jsonl", "h.jsonl", "h.jsonl"]).assert().success();
    let summary = format!(
        "{} records in all.jsonl ({} added), {} identical duplicates dropped, 0 conflicts, 0 unreadable lines\n",
        lines - 1,
        lines - 1,
        lines + 1
    );
    assert_eq!(stdout(&merge), summary);
    let (merged, problems) = sandbox.records("all.jsonl");
    assert!(problems.is_empty());
    let (read, _) = sandbox.records("h.jsonl");
    assert!(merged == read[..lines - 1], "every record once, in the order first seen");
}

#[test]
fn a_streamed_report_file_gets_the_mode_of_a_plain_write_and_never_a_partial_file() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    sandbox.write("h.jsonl", &text(&nights(2)));
    sandbox.cmd().args(["report", "h.jsonl", "--format", "csv", "--out", "r.csv"]).assert().success();
    let mode = std::fs::metadata(sandbox.path().join("r.csv")).unwrap().permissions().mode() & 0o777;
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let umask = status.lines().find_map(|l| l.strip_prefix("Umask:")).unwrap().trim();
    let expected = 0o666 & !u32::from_str_radix(umask, 8).unwrap();
    assert_eq!(mode, expected, "the mode a plain write gives under umask {umask}, not a temporary file's 0600");
    // A stream that ends the read (another schema) leaves no report behind.
    sandbox.write("v2.jsonl", &format!("{}{}", text(&nights(1)), r#"{"schema":2}"#));
    sandbox.cmd().args(["report", "v2.jsonl", "--format", "json", "--out", "v2.json"]).assert().code(2);
    assert!(!sandbox.path().join("v2.json").exists());
}
