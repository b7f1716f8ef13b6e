//! The rules between the stages of `host/src`, checked on the source itself (as a lint would, without one):
//! each group uses only the groups the table allows, so there is no import cycle; the pure groups do no I/O
//! and start no process; clap stays in `cli`; only `child` opens a plugin library to run it; and no code of
//! the host reads or writes a record line itself (that is `benchhost-record`'s stream). Test code is exempt.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each group and the groups it may use. Read top to bottom, a group only uses groups above it.
const ALLOWED: &[(&str, &[&str])] = &[
    ("stats", &[]),
    ("plan", &["stats"]),
    ("analysis", &["stats"]),
    ("report", &["analysis", "stats"]),
    ("import", &[]),
    ("proc", &["plan", "stats"]),
    ("plugin", &["proc", "plan"]),
    ("child", &["proc", "plan", "plugin", "stats"]),
    ("run", &["proc", "plugin", "plan", "analysis", "stats"]),
    ("cli", &["stats", "plan", "analysis", "report", "import", "proc", "plugin", "child", "run"]),
];

/// Groups whose code must not touch files, processes, the terminal or the clock.
const PURE: &[&str] = &["stats", "analysis", "report"];
const IO: &[&str] = &[
    "std::fs",
    "File::",
    "OpenOptions",
    "std::process",
    "Command::new",
    "std::net",
    "std::env",
    "println!",
    "eprintln!",
    "print!(",
    "stdout()",
    "stderr()",
    "libc::",
    "Instant::now",
    "SystemTime",
];

/// The non-test source of every file of `group`: inline `#[cfg(test)]` modules and `*_tests.rs` files cut.
fn sources(group: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(group);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".rs") || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
        files.push((format!("{group}/{name}"), code));
    }
    assert!(!files.is_empty(), "group {group} has no source");
    files
}

/// The groups the code of `group` names, with the first file that names each.
fn used_groups(group: &str) -> BTreeMap<String, String> {
    let groups: BTreeSet<&str> = ALLOWED.iter().map(|(g, _)| *g).collect();
    let mut used = BTreeMap::new();
    for (file, code) in sources(group) {
        for part in code.split("crate::").skip(1) {
            let name: String = part.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if name != group && groups.contains(name.as_str()) {
                used.entry(name).or_insert_with(|| file.clone());
            }
        }
    }
    used
}

#[test]
fn every_group_uses_only_the_groups_before_it_so_there_is_no_cycle() {
    let mut problems = Vec::new();
    for (index, (group, allowed)) in ALLOWED.iter().enumerate() {
        for (used, file) in used_groups(group) {
            if !allowed.contains(&used.as_str()) {
                problems.push(format!("{file} uses `{used}`, which `{group}` may not"));
            }
            // The table is a topological order: an allowed group always comes earlier.
            let at = ALLOWED.iter().position(|(g, _)| *g == used).unwrap();
            assert!(at < index || !allowed.contains(&used.as_str()), "the table itself has a cycle at {group}");
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    let on_disk: BTreeSet<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = ALLOWED.iter().map(|(g, _)| g.to_string()).collect();
    assert_eq!(on_disk, listed, "every folder of host/src is a group of the table");
}

#[test]
fn the_pure_groups_do_no_io_and_start_no_process() {
    let mut problems = Vec::new();
    for group in PURE {
        for (file, code) in sources(group) {
            for token in IO.iter().filter(|t| code.contains(*t)) {
                problems.push(format!("{file} uses `{token}`"));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn clap_stays_in_cli_and_only_child_opens_a_library_and_records_are_the_streams_business() {
    let mut problems = Vec::new();
    for (group, _) in ALLOWED {
        for (file, code) in sources(group) {
            if *group != "cli" && (code.contains("clap::") || code.contains("#[arg(") || code.contains("#[command(")) {
                problems.push(format!("{file}: clap outside cli"));
            }
            if *group != "child" && *group != "plugin" && code.contains("library::open") {
                problems.push(format!("{file}: opens a plugin library outside child"));
            }
            if code.contains(".to_line()") || code.contains("::<Record>") {
                problems.push(format!("{file}: writes or parses a record line itself (use benchhost_record)"));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
