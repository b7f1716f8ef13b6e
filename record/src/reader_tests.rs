use super::*;

const GOOD: &str = r#"{"schema":1,"bench":"b","kind":"measurement","run":{"ts_ms":1,"host":"h","cpu":"c","cores":2,"os":"linux/x86_64","profile":"release"},"variant":{"a":1},"metrics":{"m":{"value":1.5,"unit":"ns","higher_is_better":false}}}"#;

#[test]
fn torn_last_line_is_reported_and_complete_records_kept() {
    // regression guard: a writer killed mid-line must not cost the records before it.
    let text = format!("{GOOD}\n{GOOD}\n{}", &GOOD[..40]);
    let stream = parse(Path::new("r.jsonl"), text.as_bytes()).unwrap();
    assert_eq!(stream.records.len(), 2);
    assert_eq!(stream.problems.len(), 1);
    assert!(stream.problems[0].starts_with("r.jsonl:3: torn last line"), "{}", stream.problems[0]);
}

#[test]
fn other_schema_is_rejected_with_file_line_and_version() {
    let text = format!("{GOOD}\n{}\n", GOOD.replace("\"schema\":1", "\"schema\":2"));
    let err = parse(Path::new("r.jsonl"), text.as_bytes()).unwrap_err().to_string();
    assert_eq!(err, "r.jsonl:2: schema version 2 is not supported (this benchhost reads schema 1)");
}

#[test]
fn unknown_fields_are_skipped() {
    let text = GOOD.replace("\"variant\"", "\"future_field\":{\"x\":[1,2]},\"variant\"");
    let stream = parse(Path::new("r.jsonl"), text.as_bytes()).unwrap();
    assert_eq!(stream.records.len(), 1);
    assert!(stream.problems.is_empty());
}

#[test]
fn a_record_with_a_null_where_a_number_belongs_costs_one_warning_not_the_file() {
    // regression: a verdict whose ratio was NaN was written as `"ci95":[null,null]`, and from then on every
    // command failed on the whole file with `invalid type: null, expected f64`.
    let verdict = GOOD.replace(r#""variant""#, r#""verdict":{"test":"t","ratio":null,"ci95":[null,null],"threshold":0.03,"decision":"inconclusive"},"variant""#);
    let text = format!("{GOOD}\n{verdict}\n{GOOD}\n");
    let stream = parse(Path::new("r.jsonl"), text.as_bytes()).unwrap();
    assert_eq!(stream.records.len(), 2);
    assert_eq!(stream.problems.len(), 1);
    assert!(stream.problems[0].starts_with("r.jsonl:2: invalid schema-1 record skipped"), "{:?}", stream.problems);
}

#[test]
fn corrupt_middle_line_is_reported_not_fatal() {
    let text = format!("{GOOD}\n{{\"schema\":1,\"ben\n{GOOD}\n");
    let stream = parse(Path::new("r.jsonl"), text.as_bytes()).unwrap();
    assert_eq!(stream.records.len(), 2);
    assert!(stream.problems[0].contains(":2: corrupt line"), "{:?}", stream.problems);
}

#[test]
fn a_whole_record_glued_to_a_torn_one_is_kept_and_the_torn_part_named() {
    // A writer killed mid-line, then a writer that did not start a fresh line.
    let text = format!("{GOOD}\n{}{GOOD}\n{GOOD}\n", &GOOD[..60]);
    let stream = parse(Path::new("r.jsonl"), text.as_bytes()).unwrap();
    assert_eq!(stream.records.iter().map(|(line, _)| *line).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(
        stream.problems,
        ["r.jsonl:2: torn record skipped (60 bytes) before a complete one at column 61; kept that one"]
    );
}

#[test]
fn entries_say_where_their_text_is() {
    let text = format!("{GOOD}\n\n{}{GOOD}\n", &GOOD[..10]);
    let mut entries = Vec::new();
    let block = Block { first_line: 1, offset: 0, bytes: text.as_bytes(), last: true };
    assert!(parse_block("r", block, &|e, _| e, &mut entries).is_none());
    let places: Vec<(usize, u64, usize)> = entries
        .iter()
        .filter_map(|e| match e {
            Scanned::Record(e) => Some((e.line, e.offset, e.len)),
            Scanned::Problem(_) => None,
        })
        .collect();
    let second = (GOOD.len() + 2 + 10) as u64;
    assert_eq!(places, [(1, 0, GOOD.len()), (3, second, GOOD.len())]);
    assert_eq!(&text[second as usize..][..GOOD.len()], GOOD);
}
