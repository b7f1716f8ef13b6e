//! `benchhost verify FILE...`: checks results streams before tools or people trust them. A stream is sound
//! when every line is a schema-1 record, no record appears twice, and every metric's unit is one the unit
//! registry knows. Problems are named with file and line.
//!
//! One pass in line order; per record only a 128-bit hash of its text and its line are kept (~40 bytes): two
//! distinct records of a 1M-record stream share a hash with a probability near 10^-27.

use std::collections::HashMap;
use std::path::Path;

use crate::canon;
use crate::scan::{Scanned, scan};

/// What the pass keeps of a record.
struct Checked {
    line: usize,
    hash: u128,
    unknown_units: Vec<String>,
}

/// The problems of the stream at `path`; empty when it is sound.
pub fn problems(path: &Path) -> Vec<String> {
    let name = path.display().to_string();
    let (mut read_problems, mut record_problems) = (Vec::new(), Vec::new());
    let mut first: HashMap<u128, usize> = HashMap::new();
    let mut records = 0usize;
    let check = |entry: crate::reader::Entry| Checked {
        line: entry.line,
        hash: canon::hash(&entry.record),
        unknown_units: entry
            .record
            .metrics
            .iter()
            .filter(|(_, m)| !crate::UNITS.contains(&m.unit.as_str()))
            .map(|(metric, m)| format!("metric `{metric}` has unknown unit `{}`", m.unit))
            .collect(),
    };
    let pass = scan(path, check, |item| {
        let checked = match item {
            Scanned::Problem(problem) => {
                read_problems.push(problem);
                return Ok(());
            }
            Scanned::Record(checked) => checked,
        };
        records += 1;
        let line = checked.line;
        match first.get(&checked.hash) {
            Some(earlier) => record_problems.push(format!("{name}:{line}: duplicate of the record on line {earlier}")),
            None => {
                first.insert(checked.hash, line);
            }
        }
        record_problems.extend(checked.unknown_units.into_iter().map(|why| format!("{name}:{line}: {why}")));
        Ok(())
    });
    if let Err(e) = pass {
        return vec![format!("{e:#}")];
    }
    if records == 0 {
        read_problems.push(format!("{name}: no record (an empty or unreadable stream is not a sound one)"));
    }
    read_problems.extend(record_problems);
    read_problems
}
