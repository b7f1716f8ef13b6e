//! Reads results streams. Any schema-1 record is accepted and unknown fields are skipped; another schema
//! version is rejected with file, line and version; a line that is not JSON (a writer killed mid-line) is
//! reported and skipped, and every complete record is kept.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::{Record, SCHEMA};

/// Records read from one stream, and the lines that had to be skipped.
#[derive(Debug, Default)]
pub struct Stream {
    /// The file read.
    pub path: PathBuf,
    /// Records with their 1-based line numbers.
    pub records: Vec<(usize, Record)>,
    /// Skipped lines, one message each (a torn tail, a corrupt line).
    pub problems: Vec<String>,
}

/// Reads the stream at `path`.
pub fn read(path: &Path) -> Result<Stream> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    parse(path, &bytes)
}

/// The records of the stream at `path`, for a tool that reads them to act on them: each skipped line is
/// reported on stderr (`warning: FILE:LINE: ...`), and a stream without one readable record is an error, since
/// a report of garbage must not look like a report of nothing, nor a corrupt baseline like an empty one.
pub fn records(path: &Path) -> Result<Vec<Record>> {
    let stream = read(path)?;
    for problem in &stream.problems {
        eprintln!("warning: {problem}");
    }
    if stream.records.is_empty() {
        bail!("{} holds no readable record ({} lines skipped)", path.display(), stream.problems.len());
    }
    Ok(stream.records.into_iter().map(|(_, r)| r).collect())
}

/// Parses the bytes of a stream; `path` names it in messages.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Stream> {
    let name = path.display();
    let mut stream = Stream { path: path.to_owned(), ..Stream::default() };
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let count = if ends_with_newline { lines.len() - 1 } else { lines.len() };
    for (i, raw) in lines.into_iter().take(count).enumerate() {
        let line_no = i + 1;
        let is_last = line_no == count;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_slice(raw) {
            Ok(value) => value,
            Err(e) => {
                let what = if is_last && !ends_with_newline { "torn last line" } else { "corrupt line" };
                stream.problems.push(format!("{name}:{line_no}: {what} skipped ({} bytes, {e})", raw.len()));
                continue;
            }
        };
        match value.get("schema").and_then(serde_json::Value::as_u64) {
            Some(v) if v == u64::from(SCHEMA) => {}
            Some(v) => {
                bail!("{name}:{line_no}: schema version {v} is not supported (this benchhost reads schema {SCHEMA})")
            }
            None => bail!("{name}:{line_no}: not a benchhost record (no numeric `schema` field)"),
        }
        // A schema-1 line this build cannot take (a field of the wrong type, such as the `null` an older
        // benchhost wrote for a NaN ratio) costs that line only: one warning, the rest of the stream is read.
        match serde_json::from_value::<Record>(value) {
            Ok(record) => stream.records.push((line_no, record)),
            Err(e) => stream.problems.push(format!("{name}:{line_no}: invalid schema-1 record skipped ({e})")),
        }
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
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
}
