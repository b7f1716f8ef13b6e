use std::path::Path;

use super::*;
use benchhost_record::MetricValue;
use benchhost_record::reader;

fn stream() -> Vec<Record> {
    let line = |ts: u64, id: &str, mode: &str, rate: f64, half: f64| {
        format!(
            r#"{{"schema":1,"bench":"kafka_topology","kind":"measurement","run":{{"ts_ms":{ts},"id":"{id}","commit":"{id:0>12}","host":"h","cpu":"Xeon, 2 GHz","cores":2,"os":"linux/x86_64","profile":"release"}},"variant":{{"mode":"{mode}","threads":4}},"metrics":{{"records_per_s":{{"value":{rate},"unit":"records/s","higher_is_better":true,"ci95":[{},{}],"n":5}},"p99_gap_us":{{"value":12.5,"unit":"us","higher_is_better":false}}}}}}"#,
            rate - half,
            rate + half
        )
    };
    let mut lines = vec![
        line(101, "a", "perthread", 100_000.0, 1000.0),
        line(102, "b", "perthread", 80_000.0, 1000.0),
        line(101, "a", "split", 50_000.0, 1000.0),
        r#"{"schema":1,"bench":"kafka_topology","kind":"failure","run":{"ts_ms":103,"host":"h","cpu":"c","cores":2,"os":"o","profile":"p"},"variant":{"mode":"split","threads":4},"metrics":{},"failure":{"cause":"panic","message":"x"}}"#.to_string(),
    ];
    // Nineteen earlier runs of perthread at the same rate: with run a, the 20 that say how far its runs differ
    // (each ±1.5%: run b's ±1.25% is no wider than runs there have been).
    lines.extend((1..=19).map(|ts| line(ts, &format!("h{ts}"), "perthread", 100_000.0, 1500.0)));
    let text = lines.join("\n");
    reader::parse(Path::new("s.jsonl"), text.as_bytes()).unwrap().records.into_iter().map(|(_, r)| r).collect()
}

#[test]
fn markdown_shows_the_newest_run_against_the_previous_one_and_a_newest_failure_as_such() {
    let md = markdown(&stream(), 0.03);
    // regression: the split series' newest run failed, and the report showed its older good number as "first run".
    let expected = "## Since the previous run\n\nEach series' newest record against its previous one (unpaired: two \
runs, judged with how far the series' earlier runs on that machine differ, `inconclusive` where fewer than 20 say or \
the two runs show the machine as those did not; `run --against` pairs two builds in one process).\n\n1 failed, 1 regressed, 1 no_change.\n\n\
| Benchmark | Estimate | vs previous run |\n|---|---|---|\n\
| kafka_topology/mode=split | FAILED (panic): x | newest run failed |\n\
| kafka_topology/mode=perthread/records_per_s | 80,000 records/s ±1.2% | -20.0% (regressed) |\n\n\
## kafka_topology\n\nFixed: threads=4\n\n| Benchmark | Estimate | vs previous run |\n|---|---|---|\n\
| kafka_topology/mode=perthread/p99_gap_us | 12.50 µs | +0.0% (no_change) |\n\
| kafka_topology/mode=perthread/records_per_s | 80,000 records/s ±1.2% | -20.0% (regressed) |\n\
| kafka_topology/mode=split | FAILED (panic): x | newest run failed |\n\n";
    assert_eq!(md, expected);
}

#[test]
fn a_change_between_two_runs_is_inconclusive_until_the_series_has_runs_enough_to_say_how_far_they_differ() {
    // Runs a and b alone: -20% within their own ±1%, but two runs of the series may differ by more.
    let records: Vec<Record> = stream().into_iter().filter(|r| r.run.ts_ms > 100).collect();
    let md = markdown(&records, 0.03);
    assert!(
        md.contains("| kafka_topology/mode=perthread/records_per_s | 80,000 records/s ±1.2% | -20.0% (inconclusive) |"),
        "{md}"
    );
    // Earlier runs 30% apart by turns: -20% is within what two runs differ by.
    let mut moving = stream();
    for (i, r) in moving.iter_mut().filter(|r| r.run.ts_ms <= 19).enumerate() {
        let rate = r.metrics.get_mut("records_per_s").unwrap();
        rate.value = if i % 2 == 0 { 70_000.0 } else { 100_000.0 };
        rate.ci95 = Some([rate.value - 1000.0, rate.value + 1000.0]);
    }
    let md = markdown(&moving, 0.03);
    assert!(md.contains("-20.0% (inconclusive)"), "{md}");
}

#[test]
fn markdown_cells_cannot_break_the_table() {
    let mut records = stream();
    records.truncate(1);
    records[0].variant.insert("codec".into(), serde_json::json!("a|b"));
    let md = markdown(&records, 0.03);
    assert!(md.contains("Fixed: codec=a\\|b mode=perthread threads=4"), "{md}");
    assert!(md.lines().filter(|l| l.starts_with("| kafka")).all(|l| l.matches(" | ").count() == 1), "{md}");
}

#[test]
fn an_uncorrected_latency_stands_beside_its_corrected_twin_never_on_a_line_of_its_own() {
    let us = |value: f64| MetricValue { value, unit: "us".into(), higher_is_better: false, ci95: None, n: None };
    let mut record = Record::point_for_tests(1, 10, 5.0);
    record.metrics = [
        ("p99_append_us".to_string(), us(7334.2)),
        ("p99_append_us_uncorrected".to_string(), us(1357.3)),
        ("lonely_us_uncorrected".to_string(), us(3.0)),
    ]
    .into();
    let md = markdown(std::slice::from_ref(&record), 0.03);
    assert!(md.contains("| wal/p99_append_us | 7.334 ms (uncorrected 1.357 ms) |"), "{md}");
    assert!(!md.contains("wal/p99_append_us_uncorrected"), "{md}");
    assert!(md.contains("| wal/lonely_us_uncorrected | 3.000 µs |"), "without its twin: {md}");
    let shown = crate::report::result(&record);
    assert!(shown.contains("p99_append_us 7.334 ms (uncorrected 1.357 ms)") && shown.lines().count() == 2, "{shown}");
}

/// A measurement of `bench` with `variant`, its metrics `(name, value, unit)`, run at `ts` on `cpu`.
fn measured(bench: &str, variant: serde_json::Value, metrics: &[(&str, f64, &str)], ts: u64, cpu: &str) -> Record {
    let metrics = metrics
        .iter()
        .map(|&(name, value, unit)| {
            let m = MetricValue { value, unit: unit.into(), higher_is_better: false, ci95: None, n: None };
            (name.to_string(), m)
        })
        .collect();
    let mut run = benchhost_record::RunInfo::for_tests(ts, Some("r"));
    run.cpu = cpu.into();
    Record::measurement_for_tests(bench, run, serde_json::from_value(variant).unwrap(), metrics)
}

#[test]
fn rows_read_in_numeric_order_with_counts_as_integers_and_doubts_one_per_line() {
    // regression: rows=10000 came before rows=1000, p999 before p99, `24.00 files`, and one long doubtful line.
    let metrics = [("p999_us", 30.0, "us"), ("p99_us", 20.0, "us"), ("files", 24.0, "files")];
    let mut records: Vec<Record> = [10000, 1000]
        .iter()
        .map(|&rows| measured("wal", serde_json::json!({"rows": rows}), &metrics, 1, "c"))
        .collect();
    for record in &mut records {
        let conditions = benchhost_record::Conditions { host_debug: true, ..Default::default() };
        record.cell = Some(benchhost_record::CellInfo { conditions: Some(conditions), ..Default::default() });
    }
    let md = markdown(&records, 0.03);
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| wal/")).collect();
    let names: Vec<&str> = rows.iter().map(|l| l.split(" | ").next().unwrap()).collect();
    assert_eq!(
        names,
        [
            "| wal/rows=1000/files",
            "| wal/rows=1000/p99_us",
            "| wal/rows=1000/p999_us",
            "| wal/rows=10000/files",
            "| wal/rows=10000/p99_us",
            "| wal/rows=10000/p999_us"
        ]
    );
    assert_eq!(rows[0], "| wal/rows=1000/files | 24 files |", "no previous run: no such column");
    let doubts: Vec<&str> = md.lines().filter(|l| l.starts_with("- wal/rows=")).collect();
    assert_eq!(doubts.len(), 2, "{md}");
    assert!(!md.contains("Since the previous run"), "nothing to compare with");
}

#[test]
fn a_previous_run_on_another_machine_is_not_compared_and_both_cpus_are_named() {
    // regression: `compare` and the report set Intel Xeon records against an AMD EPYC run: `+56.55% improved`.
    let variant = || serde_json::json!({"rows": 10});
    let records = [
        measured("wal", variant(), &[("t", 100.0, "ns")], 1, "Intel Xeon"),
        measured("wal", variant(), &[("t", 60.0, "ns")], 2, "AMD EPYC"),
    ];
    let md = markdown(&records, 0.03);
    assert!(md.contains("| wal/t | 60.00 ns | other machine |"), "{md}");
    assert!(
        md.contains("Other machine: 1 rows not compared; the previous run was on Intel Xeon, the newest on AMD EPYC.")
    );
    assert!(md.contains("1 not compared (the previous run was on another machine)"), "{md}");
    assert!(!md.contains("improved"), "{md}");
}

#[test]
fn the_verdicts_come_first() {
    let mut records = stream();
    let verdicts = crate::analysis::compare::compare(
        &records[..1],
        &records[1..2],
        &|_, _| 0.03,
        &crate::analysis::between_runs::Spreads::none(),
        &benchhost_record::RunInfo::for_tests(99, Some("v")),
    );
    records.extend(verdicts);
    let md = markdown(&records, 0.03);
    assert!(md.starts_with("## Verdicts\n\n### Against run a (commit 00000000000a), unpaired: "), "{md}");
    assert!(md.find("## Verdicts").unwrap() < md.find("## Since the previous run").unwrap());
}
