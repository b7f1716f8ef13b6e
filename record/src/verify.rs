//! `benchhost verify FILE...`: checks results streams before tools or people trust them. A stream is sound
//! when every line is a schema-1 record, no record appears twice, and every metric's unit is one the unit
//! registry knows. Problems are named with file and line.

use std::collections::HashMap;
use std::path::Path;

use crate::reader;

/// The problems of the stream at `path`; empty when it is sound.
pub fn problems(path: &Path) -> Vec<String> {
    let stream = match reader::read(path) {
        Ok(stream) => stream,
        Err(e) => return vec![format!("{e:#}")],
    };
    let name = path.display();
    let mut problems = stream.problems.clone();
    if stream.records.is_empty() {
        problems.push(format!("{name}: no record (an empty or unreadable stream is not a sound one)"));
    }
    let mut first_line: HashMap<String, usize> = HashMap::new();
    for (line, record) in &stream.records {
        let text = serde_json::to_string(record).expect("records serialize");
        if let Some(first) = first_line.get(&text) {
            problems.push(format!("{name}:{line}: duplicate of the record on line {first}"));
        } else {
            first_line.insert(text, *line);
        }
        for (metric, value) in &record.metrics {
            if !crate::UNITS.contains(&value.unit.as_str()) {
                problems.push(format!("{name}:{line}: metric `{metric}` has unknown unit `{}`", value.unit));
            }
        }
    }
    problems
}
