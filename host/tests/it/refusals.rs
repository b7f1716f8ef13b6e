//! The guide's table of refusals (`docs/src/reading-a-verdict.md`, "When a comparison is refused") shows each
//! message as the code prints it: every row is provoked here, as a user would meet it, and its message must be
//! what benchhost prints. A row this test cannot provoke fails it, so a new row comes with its trigger.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{Sandbox, Skew, fault_plugins, skewed_plugin, workspace_plugins};

fn page() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/reading-a-verdict.md")).unwrap()
}

/// The first cell of each row of the table under "When a comparison is refused", without its backticks.
fn documented_messages(page: &str) -> Vec<String> {
    let section = page.split("## When a comparison is refused").nth(1).expect("the refusals section");
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|row| {
            let cell = row.trim_start_matches("| ");
            let ticks = cell.chars().take_while(|&c| c == '`').count();
            let fence = "`".repeat(ticks);
            let inner = &cell[ticks..];
            inner[..inner.find(&fence).expect("a closed code span")].trim().to_string()
        })
        .collect()
}

/// A documented message as a pattern: `LIBRARY` and `NAME` stand for a file and a rig, `...` for the rest of
/// the line; everything else is literal.
fn pattern(message: &str) -> regex::Regex {
    let mut re = regex::escape(message);
    for (placeholder, what) in [("LIBRARY", r"\S+"), ("NAME", r"\S+"), (r"\.\.\.", ".*")] {
        re = re.replace(placeholder, what);
    }
    regex::Regex::new(&re).unwrap()
}

/// Runs benchhost with `args` in `cwd` (with `PATH` set to `path` if given); its stdout and stderr together.
fn printed(sandbox: &Sandbox, cwd: &Path, args: &[&str], path: Option<&Path>) -> String {
    let mut cmd = sandbox.cmd();
    cmd.current_dir(cwd).args(args);
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    let out = cmd.output().unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Provokes the refusal whose documented message is `message`, as a user would; what benchhost printed.
fn provoke(message: &str) -> String {
    let sandbox = Sandbox::new();
    let (top, plugins) = (sandbox.path().to_owned(), workspace_plugins());
    let plugin_dir = plugins.to_str().unwrap();
    // A tree of the user's beside which `../main` is the base's worktree.
    let work = top.join("work");
    std::fs::create_dir(&work).unwrap();
    let against = ["run", "--plugin", "wal", "--plugin-dir", plugin_dir, "--against", "../main/target/release"];
    if message.starts_with("refused: its file target/release/librig_wal.so is writable by anyone") {
        let lib = work.join("target/release/librig_wal.so");
        std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
        std::fs::copy(plugins.join("librig_wal.so"), &lib).unwrap();
        std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o666)).unwrap();
        printed(&sandbox, &work, &["list", "--plugin-dir", "target/release"], None)
    } else if message.starts_with("--against ../main/target/release: no such directory") {
        printed(&sandbox, &work, &against, None)
    } else if message.starts_with("--against ../main/target/release: no plugin there (") {
        std::fs::create_dir_all(top.join("main/target/release")).unwrap();
        printed(&sandbox, &work, &against, None)
    } else if message.starts_with("--against ../main/target/release: no plugin there provides rig `wal`") {
        // The base's directory holds a plugin, but not the rig's.
        let base = top.join("main/target/release");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::copy(fault_plugins().join("libfixture_faults.so"), base.join("libfixture_faults.so")).unwrap();
        printed(&sandbox, &work, &against, None)
    } else if message.starts_with("skipped LIBRARY: built against plugin-api 0.2.0") {
        let skewed = skewed_plugin(Skew::Version);
        printed(&sandbox, &work, &["list", "--plugin-dir", skewed.to_str().unwrap()], None)
    } else if message.starts_with("--instructions counts with Valgrind, which is not installed") {
        let args = ["run", "--plugin", "wal", "--instructions", "--plugin-dir", plugin_dir];
        printed(&sandbox, &work, &args, Some(&top))
    } else if message.starts_with("--rounds 1:") {
        let args = ["run", "--plugin", "wal", "--rounds", "1", "--plugin-dir", plugin_dir, "--against", plugin_dir];
        printed(&sandbox, &work, &args, None)
    } else if message.starts_with("not comparing records of different machines: 2 series ran on CPU A, now on CPU B") {
        let seed =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/streams/seed003.jsonl"))
                .unwrap();
        std::fs::write(work.join("old.jsonl"), seed.replace("Apple M5 Max", "CPU A")).unwrap();
        std::fs::write(work.join("new.jsonl"), seed.replace("Apple M5 Max", "CPU B")).unwrap();
        printed(&sandbox, &work, &["compare", "old.jsonl", "new.jsonl"], None)
    } else {
        panic!("the guide's refusal `{message}` has no trigger in tests/it/refusals.rs: add one")
    }
}

#[test]
fn every_refusal_the_guide_shows_is_printed_as_shown() {
    let messages = documented_messages(&page());
    assert!(messages.len() >= 8, "the refusal table's rows: {messages:?}");
    let mut stale = Vec::new();
    for message in &messages {
        let printed = provoke(message);
        if !printed.lines().any(|line| pattern(message).is_match(line)) {
            stale.push(format!("documented: {message}\nprinted:\n{printed}"));
        }
    }
    assert!(stale.is_empty(), "refusals the guide shows otherwise than benchhost prints them:\n{}", stale.join("\n\n"));
}

#[test]
fn a_documented_message_is_literal_but_for_its_placeholders() {
    let skipped = pattern("skipped LIBRARY: built against plugin-api 0.2.0, this benchhost has 0.1.0: ...");
    assert!(skipped.is_match("skipped /x/libfixture.so: built against plugin-api 0.2.0, this benchhost has 0.1.0: y"));
    assert!(!skipped.is_match("skipped /x/libfixture.so: built against plugin-api 0.3.0, this benchhost has 0.1.0: y"));
    let rounds = pattern("--rounds 1: a paired comparison (needs) 2.");
    assert!(rounds.is_match("error: --rounds 1: a paired comparison (needs) 2."));
    assert!(!rounds.is_match("--rounds 1: a paired comparison needs 2x"), "parentheses and dots are literal");
    let page = "## When a comparison is refused\n\n| message | fix |\n|---|---|\n| ``a `b` c`` | x |\n| `d` | y |\n";
    assert_eq!(documented_messages(page), ["a `b` c", "d"]);
}
