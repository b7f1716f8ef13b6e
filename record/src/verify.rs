//! `benchhost verify FILE...`: checks results streams before tools or people trust them. A stream is sound
//! when every line is a schema-1 record, no record appears twice, every metric's unit is one the unit
//! registry knows, and every acknowledgement says why. Problems are named with file and line.
//!
//! One pass in line order; per record only a 128-bit hash of its text and its place are kept (~60 bytes). Two
//! records whose hashes meet are read again and compared before one is called a duplicate.

use std::collections::HashMap;
use std::path::Path;

use crate::canon::{self, Place};
use crate::scan::{Scanned, scan};

/// What the pass keeps of a record.
struct Checked {
    place: Place,
    hash: u128,
    flaws: Vec<String>,
}

/// The problems of the stream at `path`; empty when it is sound.
pub fn problems(path: &Path) -> Vec<String> {
    let name = path.display().to_string();
    let (mut read_problems, mut record_problems) = (Vec::new(), Vec::new());
    let mut first: HashMap<u128, Place> = HashMap::new();
    let mut records = 0usize;
    let check = |entry: crate::reader::Entry| Checked {
        place: Place::from(&entry),
        hash: canon::hash(&entry.record),
        flaws: flaws(&entry.record),
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
        let line = checked.place.line;
        match first.get(&checked.hash) {
            Some(&earlier) => match canon::same_text(path, earlier, checked.place) {
                Ok(true) => {
                    record_problems.push(format!("{name}:{line}: duplicate of the record on line {}", earlier.line))
                }
                // Distinct records whose hashes meet (a chance near 2^-89 over 1M records): not a problem.
                Ok(false) => {}
                Err(e) => record_problems.push(format!("{e:#}")),
            },
            None => {
                first.insert(checked.hash, checked.place);
            }
        }
        record_problems.extend(checked.flaws.into_iter().map(|why| format!("{name}:{line}: {why}")));
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

/// What is wrong with one record on its own: a unit the registry does not know, an acknowledgement without its
/// section or without a reason.
fn flaws(record: &crate::Record) -> Vec<String> {
    let mut flaws: Vec<String> = record
        .metrics
        .iter()
        .filter(|(_, m)| !crate::UNITS.contains(&m.unit.as_str()))
        .map(|(metric, m)| format!("metric `{metric}` has unknown unit `{}`", m.unit))
        .collect();
    let acknowledgement = record.acknowledgement.as_ref();
    if (record.kind == crate::Kind::Acknowledgement) != acknowledgement.is_some() {
        flaws.push("only an acknowledgement record has an `acknowledgement` section, and it must".into());
    }
    if acknowledgement.is_some_and(|a| a.reason.trim().is_empty()) {
        flaws.push("acknowledgement without a reason".into());
    }
    flaws
}
