//! The rules between the stages of `host/src`, checked on the source itself (as a lint would, without one):
//! each group uses only the groups the table allows, so there is no import cycle between groups; inside a
//! group no file imports another in a circle (its `mod.rs` counts as a file); the pure groups do no I/O and
//! start no process; clap stays in `cli`; only `child` opens a plugin library to run it; and no code of the
//! host reads or writes a record line itself (that is `benchhost-record`'s stream). The same circle rule
//! holds between the modules of `benchhost-record` and `benchhost-warehouse`, and `record` does no process or
//! network I/O. Test code is exempt.
//!
//! Sources are read as tokens (comments and string literals dropped), so every path is seen: grouped imports
//! (`use crate::{a, b::{c}}`), `super::` and `super::super::`, paths inside expressions, and code after a
//! `#[cfg(test)]` item in the middle of a file (only that item is cut).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::layout_scan::{Module, Source, circles};

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
    ("bisect", &["proc", "plugin", "analysis"]),
    ("cli", &["stats", "plan", "analysis", "report", "import", "proc", "plugin", "child", "run", "bisect"]),
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

/// What `benchhost-record` must not do: it reads and writes files, never starts a process or opens a socket
/// (its own process id, for a file name, is not process I/O).
const PROCESS_OR_NETWORK: &[&str] =
    &["Command::new", "process::Command", "process::Stdio", "process::Child", "std::net", "TcpStream", "UdpSocket"];

fn crate_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join(name).join("src")
}

/// The non-test sources of `group` of the host.
fn sources(group: &str) -> Vec<Source> {
    let sources = Source::read_dir(&crate_dir("host").join(group), &[group]);
    assert!(!sources.is_empty(), "group {group} has no source");
    sources
}

/// The groups the code of `group` names, with the first file that names each.
fn used_groups(group: &str) -> BTreeMap<String, String> {
    let groups: BTreeSet<&str> = ALLOWED.iter().map(|(g, _)| *g).collect();
    let mut used = BTreeMap::new();
    for source in sources(group) {
        for path in source.paths() {
            let Some(first) = path.first() else { continue };
            if first != group && groups.contains(first.as_str()) {
                used.entry(first.clone()).or_insert_with(|| source.file.clone());
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
    let on_disk: BTreeSet<String> = std::fs::read_dir(crate_dir("host"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = ALLOWED.iter().map(|(g, _)| g.to_string()).collect();
    assert_eq!(on_disk, listed, "every folder of host/src is a group of the table");
}

#[test]
fn no_file_of_a_group_imports_another_in_a_circle() {
    let mut problems = Vec::new();
    for (group, _) in ALLOWED {
        let modules: Vec<Module> = sources(group).iter().map(|s| s.module_uses(&[group])).collect();
        problems.extend(circles(&modules).into_iter().map(|c| format!("{group}/: {}", c.join(" -> "))));
    }
    assert!(problems.is_empty(), "import circles between the files of a group: {problems:#?}");
}

#[test]
fn the_modules_of_record_and_warehouse_import_each_other_in_no_circle() {
    let mut problems = Vec::new();
    for krate in ["record", "warehouse"] {
        // The crate's root (`lib.rs`) and the warehouse's binary (`main.rs`) may use every module.
        let sources = Source::read_dir(&crate_dir(krate), &[]);
        let modules: Vec<Module> =
            sources.iter().filter(|s| s.file != "lib.rs" && s.file != "main.rs").map(|s| s.module_uses(&[])).collect();
        assert!(modules.len() > 3, "{krate} has modules");
        problems.extend(circles(&modules).into_iter().map(|c| format!("{krate}: {}", c.join(" -> "))));
    }
    assert!(problems.is_empty(), "import circles between modules: {problems:#?}");
}

#[test]
fn record_does_no_process_or_network_io() {
    let mut problems = Vec::new();
    for source in Source::read_dir(&crate_dir("record"), &[]) {
        for token in PROCESS_OR_NETWORK.iter().filter(|t| source.code.contains(*t)) {
            problems.push(format!("{} uses `{token}`", source.file));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_pure_groups_do_no_io_and_start_no_process() {
    let mut problems = Vec::new();
    for group in PURE {
        for source in sources(group) {
            for token in IO.iter().filter(|t| source.code.contains(*t)) {
                problems.push(format!("{} uses `{token}`", source.file));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn clap_stays_in_cli_and_only_child_opens_a_library_and_records_are_the_streams_business() {
    let mut problems = Vec::new();
    for (group, _) in ALLOWED {
        for source in sources(group) {
            let (file, code) = (&source.file, &source.code);
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

/// The checks themselves: each would fail on the layout it guards against.
mod checks {
    use super::*;

    fn module(file: &str, text: &str, group: &[&str]) -> Module {
        Source::parse(file, text, group).module_uses(group)
    }

    #[test]
    fn grouped_imports_super_super_and_code_after_a_test_module_are_all_seen() {
        let text = "use crate::{plan::matrix, report::{self, format}};\n\
                    #[cfg(test)]\nmod tests { use crate::cli::x; }\n\
                    fn f() { super::super::child::run(); super::duels::go(); }\n\
                    #[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod tests2;\n\
                    // crate::import::nothing, a comment\n\
                    const S: &str = \"crate::import::nothing either\";";
        let source = Source::parse("run/context.rs", text, &["run"]);
        let firsts: BTreeSet<String> = source.paths().iter().filter_map(|p| p.first().cloned()).collect();
        assert_eq!(firsts, BTreeSet::from(["child", "plan", "report", "run"].map(String::from)));
        assert!(source.code.contains("super::super::child"), "code after the test module is kept");
        assert!(!source.code.contains("cli"), "the test module is cut");
        let uses = module("run/context.rs", text, &["run"]);
        assert_eq!(uses.uses, BTreeSet::from(["duels".to_string()]));
    }

    #[test]
    fn a_circle_between_two_files_or_through_mod_rs_is_found() {
        let a = module("run/a.rs", "use crate::run::b::X;", &["run"]);
        let b = module("run/b.rs", "use super::{c, a::Y};", &["run"]);
        let c = module("run/c.rs", "fn f() { crate::run::helper(); }", &["run"]);
        let root = module("run/mod.rs", "pub mod a;\nfn helper() { c::go() }\nuse self::c;", &["run"]);
        assert_eq!(circles(&[a.clone(), b.clone()]), [vec!["a", "b", "a"]]);
        assert_eq!(circles(&[c.clone(), root.clone()]), [vec!["c", "mod", "c"]]);
        let lone = module("run/a.rs", "use crate::run::b::X;", &["run"]);
        assert!(circles(&[lone, c]).is_empty());
        let flat = module("merge.rs", "use crate::{reader::x, scan};", &[]);
        assert_eq!(flat.uses, BTreeSet::from(["reader".to_string(), "scan".to_string()]));
    }
}
