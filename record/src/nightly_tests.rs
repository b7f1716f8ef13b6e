use super::*;

/// A measurement line of bench `b` at `ts` on `host`, metric `m` = `value`, with a steal of `steal` percent.
fn line(ts: u64, run: &str, host: &str, value: f64, steal: f64) -> String {
    format!(
        r#"{{"schema":1,"bench":"b","kind":"measurement","run":{{"ts_ms":{ts},"id":"{run}","commit":"c{run}","host":"{host}","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"}},"variant":{{"a":1}},"metrics":{{"m":{{"value":{value},"unit":"ns","higher_is_better":false,"ci95":[{},{}]}}}},"cell":{{"index":0,"warmup_ns":0,"warmup_iterations":0,"samples":1,"wall_ms":1,"conditions":{{"steal_percent":{steal},"host_debug":false}}}}}}"#,
        value * 0.99,
        value * 1.01
    )
}

fn read(text: &str) -> BTreeMap<NightlyKey, Series> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, text).unwrap();
    let mut nightly = Nightly::default();
    nightly.read(&path).unwrap();
    nightly.into_sorted()
}

#[test]
fn values_come_in_run_order_per_series_and_machine_with_their_doubts() {
    let failure = r#"{"schema":1,"bench":"b","kind":"failure","run":{"ts_ms":5,"host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"},"variant":{"a":1},"metrics":{},"failure":{"cause":"panic","message":"boom"}}"#;
    let text = [
        line(30, "r3", "h", 3.0, 0.5),
        line(10, "r1", "h", 1.0, 0.5),
        failure.to_string(),
        line(20, "r2", "h", 2.0, 9.0),
        line(20, "r2", "h", 2.0, 9.0),
        line(40, "r4", "other", 4.0, 0.5),
        line(50, "r5", "h", 5.0, 0.5)[..60].to_string(),
    ]
    .join("\n");
    let series = read(&text);
    let keys: Vec<String> =
        series.keys().map(|k| format!("{} {} {} {}", k.bench, k.variant, k.metric, k.machine)).collect();
    assert_eq!(keys, [r#"b {"a":1} m h / c"#, r#"b {"a":1} m other / c"#]);
    let here = &series.values().next().unwrap();
    assert!(!here.higher_is_better);
    let seen: Vec<(f64, bool, Option<&str>, Option<&str>)> =
        here.points.iter().map(|p| (p.value, p.doubtful, p.run.id.as_deref(), p.run.commit.as_deref())).collect();
    assert_eq!(
        seen,
        [
            (1.0, false, Some("r1"), Some("cr1")),
            (2.0, true, Some("r2"), Some("cr2")),
            (3.0, false, Some("r3"), Some("cr3"))
        ]
    );
    let expected = (1.01f64.ln() - 0.99f64.ln()) / (2.0 * 1.96);
    assert!((f64::from(here.points[0].log_se) - expected).abs() < 1e-7, "{:?}", here.points[0]);
}

#[test]
fn a_stream_of_nothing_readable_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.jsonl");
    std::fs::write(&path, "not json\n").unwrap();
    let err = Nightly::default().read(&path).unwrap_err().to_string();
    assert!(err.contains("holds no readable record"), "{err}");
}

#[test]
fn read_beside_a_history_it_holds_what_it_holds_read_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    // Enough lines that both workers fold some, two streams, and an escaped metric name (a name the peek
    // cannot borrow from the line).
    let lines: Vec<String> = (0..3000).map(|i| line(i, &format!("r{}", i % 7), "h", 1.0 + i as f64, 0.5)).collect();
    std::fs::write(&first, lines.join("\n")).unwrap();
    let escaped = line(9000, "r9", "h", 2.0, 0.5).replace(r#""m":"#, r#""m\u0041":"#);
    std::fs::write(&second, [line(5000, "r8", "other", 3.0, 9.0), escaped].join("\n")).unwrap();

    let mut alone = Nightly::default();
    let mut history_alone = crate::history::History::new(crate::history::Needs::newest(2));
    let (mut beside, mut history) =
        (Nightly::default(), crate::history::History::new(crate::history::Needs::newest(2)));
    for path in [&first, &second] {
        alone.read(path).unwrap();
        history_alone.read(path).unwrap();
        history.read_beside(path, Some(&mut beside)).unwrap();
    }
    let (alone, beside) = (alone.into_sorted(), beside.into_sorted());
    assert_eq!(alone.len(), 3, "{:?}", alone.keys());
    assert_eq!(alone.values().next().unwrap().points.len(), 3000);
    assert_eq!(alone, beside);
    assert_eq!(history.records(), history_alone.records());
    assert_eq!(history.into_records(), history_alone.into_records());
}
