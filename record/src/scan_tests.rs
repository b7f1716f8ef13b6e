use super::*;

const GOOD: &str = r#"{"schema":1,"bench":"b","kind":"measurement","run":{"ts_ms":1,"host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"},"variant":{"a":1},"metrics":{"m":{"value":1.5,"unit":"ns","higher_is_better":false}}}"#;

/// A stream of `n` records with a corrupt line every 7th and a torn last line.
fn stream(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        if i % 7 == 3 {
            text.push_str("{\"schema\":1,\"be\n");
        }
        text.push_str(&GOOD.replace("\"a\":1", &format!("\"a\":{i}")));
        text.push('\n');
    }
    text.push_str(&GOOD[..50]);
    text
}

/// Every item of a pass over `text`: (line, a) of each record, and each problem.
fn pass(text: &str, threads: usize, block: usize) -> (Vec<(usize, u64, i64)>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, text).unwrap();
    let (mut records, mut problems) = (Vec::new(), Vec::new());
    let map = |e: Entry, _: &str| (e.line, e.offset, e.record.variant["a"].as_i64().unwrap());
    scan_with(&path, threads, block, map, |item| {
        match item {
            Scanned::Record(r) => records.push(r),
            Scanned::Problem(p) => problems.push(p.replace(&path.display().to_string(), "r.jsonl")),
        }
        Ok(())
    })
    .unwrap();
    (records, problems)
}

#[test]
fn a_pass_yields_the_same_in_the_same_order_with_any_threads_and_blocks() {
    let text = stream(500);
    let whole = crate::reader::parse(Path::new("r.jsonl"), text.as_bytes()).unwrap();
    let expected: Vec<i64> = whole.records.iter().map(|(_, r)| r.variant["a"].as_i64().unwrap()).collect();
    assert_eq!(expected, (0..500).collect::<Vec<i64>>());
    for (threads, block) in [(1, 1 << 20), (1, 300), (2, 300), (4, 1000), (4, 7)] {
        let (records, problems) = pass(&text, threads, block);
        assert_eq!(records.iter().map(|r| r.2).collect::<Vec<_>>(), expected, "{threads} threads, {block} B");
        let lines: Vec<usize> = whole.records.iter().map(|(line, _)| *line).collect();
        assert_eq!(records.iter().map(|r| r.0).collect::<Vec<_>>(), lines, "{threads} threads, {block} B");
        for (line, offset, _) in &records {
            assert!(text[*offset as usize..].starts_with("{\"schema\":1,\"bench\""), "line {line}");
        }
        assert_eq!(problems, whole.problems, "{threads} threads, {block} B");
    }
}

#[test]
fn another_schema_ends_the_pass_after_the_lines_before_it() {
    let mut text = stream(200);
    let at = text.find(&GOOD.replace("\"a\":1", "\"a\":150")).unwrap();
    text.insert_str(at, &format!("{}\n", GOOD.replace("\"schema\":1", "\"schema\":2")));
    for (threads, block) in [(1, 1 << 20), (4, 500)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, &text).unwrap();
        let mut last = -1;
        let err = scan_with(
            &path,
            threads,
            block,
            |e, _| e.record.variant["a"].as_i64().unwrap(),
            |item| {
                if let Scanned::Record(a) = item {
                    last = a;
                }
                Ok(())
            },
        )
        .unwrap_err();
        assert!(err.to_string().ends_with("schema version 2 is not supported (this benchhost reads schema 1)"));
        assert_eq!(last, 149, "{threads} threads: every record before the line, none after");
    }
}

#[test]
fn a_missing_file_is_named() {
    let err = scan(Path::new("/nonexistent/r.jsonl"), |e| e.line, |_| Ok(())).unwrap_err();
    assert_eq!(err.to_string(), "reading /nonexistent/r.jsonl");
}

#[test]
fn an_error_of_the_fold_ends_the_pass() {
    let text = stream(300);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, text).unwrap();
    for threads in [1, 4] {
        let mut seen = 0;
        let err = scan_with(
            &path,
            threads,
            400,
            |e, _| e.line,
            |_| {
                seen += 1;
                if seen == 10 { Err(anyhow!("closed pipe")) } else { Ok(()) }
            },
        )
        .unwrap_err();
        assert_eq!((err.to_string(), seen), ("closed pipe".to_string(), 10));
    }
}
