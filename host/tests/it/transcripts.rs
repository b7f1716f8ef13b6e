//! The guide's transcripts (`docs/src/output.md`, written by `benchmarks/transcripts.py` from release runs)
//! still show what benchhost prints: their commands run here again, in order, in one sandbox like the script's,
//! and each block must have the shape of what they print now. The numbers (times, counts, percentages, dates,
//! hashes) and the decisions differ from run to run and between a release and a test build, so they are masked
//! on both sides; every other word, column and line must be there.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::{Sandbox, workspace_plugins};

fn page() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/output.md")).unwrap()
}

/// A transcript of the page: its commands (without `$ `) and everything it shows.
struct Transcript {
    commands: Vec<String>,
    shown: String,
}

fn transcripts(page: &str) -> Vec<Transcript> {
    page.split("<!-- transcript -->\n```text\n")
        .skip(1)
        .map(|rest| {
            let block = rest.split("```\n<!-- /transcript -->").next().expect("a closed transcript");
            let commands = block.lines().filter_map(|l| l.strip_prefix("$ ")).map(str::to_owned).collect();
            Transcript { commands, shown: block.to_string() }
        })
        .collect()
}

/// The shape of printed text: each line with its numbers, units, hashes, sparklines and decisions masked, its
/// rules and runs of spaces shortened to one; the set of distinct lines (a duel that takes more processes, or a
/// table with another count of rows of one form, has the same shape), without the lines that say a number is
/// doubtful.
fn shape(text: &str) -> BTreeSet<String> {
    let masks: [(&str, &str); 8] = [
        (r"\b[0-9a-f]{7,64}\b", "HEX"),
        (r"[▁▂▃▄▅▆▇█]+", "~"),
        (r"[+\-±x×]?\d[\d,]*(\.\d+)?(e[+-]?\d+)?", "#"),
        // A detectable change past 100% reads `>±100%` (a wide interval of a loaded machine).
        (r">#", "#"),
        (r"#\s?(ns|µs|us|ms|s|min|h|B|KB|MB|GB|KiB|MiB|GiB|MB/s)\b", "#"),
        (r"#(%|/s)", "#"),
        (r"\b(improved|regressed|no_change|inconclusive)\b", "DECISION"),
        (r"([─━═\-=])[─━═\-=]+", "$1"),
    ];
    let masks: Vec<(regex::Regex, &str)> = masks.iter().map(|(re, to)| (regex::Regex::new(re).unwrap(), *to)).collect();
    let spaces = regex::Regex::new(r"\s+").unwrap();
    text.lines()
        .map(|line| {
            let mut line = line.to_string();
            for (re, to) in &masks {
                line = re.replace_all(&line, *to).into_owned();
            }
            spaces.replace_all(line.trim(), " ").into_owned()
        })
        // What the machine's state adds (a hypervisor's steal, a busy neighbour) comes and goes.
        .filter(|l| !l.is_empty() && !l.contains("doubtful"))
        .collect()
}

/// Runs `command` (`benchhost ...`) in `work` with this build's plugins; `$ command` and what it printed.
fn printed(sandbox: &Sandbox, work: &Path, command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "benchhost", "a transcript runs benchhost: {command}");
    let mut args: Vec<&str> = words[1..].to_vec();
    if args[0] == "run" {
        // As the script's release run, shorter: the test build is slower, and only the shape is compared.
        args.extend(["--warmup", "50ms", "--measurement", "200ms", "--samples", "10"]);
        if args.contains(&"--against") {
            // Four processes, as a quick paired run takes: two give no interval worth printing.
            args.extend(["--rounds", "4"]);
        }
    }
    let out = sandbox
        .cmd()
        .current_dir(work)
        .args(&args)
        .env("BENCHHOST_PLUGIN_PATH", workspace_plugins())
        .env("COLUMNS", "120")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{command}: {}", String::from_utf8_lossy(&out.stderr));
    format!("$ {command}\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn every_transcript_in_the_guide_has_the_shape_benchhost_prints_now() {
    let blocks = transcripts(&page());
    assert!(blocks.len() >= 4, "run, run --against, show and compare: {} blocks", blocks.len());
    let sandbox = Sandbox::new();
    let work = sandbox.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(sandbox.path().join("main/target")).unwrap();
    std::os::unix::fs::symlink(workspace_plugins(), sandbox.path().join("main/target/release")).unwrap();
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../rigs.toml"), work.join("rigs.toml")).unwrap();
    let mut stale = Vec::new();
    for block in &blocks {
        assert!(!block.commands.is_empty(), "a transcript without a command: {}", block.shown);
        let now: String = block.commands.iter().map(|c| printed(&sandbox, &work, c)).collect();
        let (shown, printed) = (shape(&block.shown), shape(&now));
        if shown != printed {
            let only_shown: Vec<_> = shown.difference(&printed).collect();
            let only_printed: Vec<_> = printed.difference(&shown).collect();
            stale.push(format!(
                "{}\n  only in the guide: {only_shown:#?}\n  only printed now: {only_printed:#?}",
                block.commands.join("; ")
            ));
        }
    }
    assert!(stale.is_empty(), "stale transcripts (run `python3 benchmarks/transcripts.py`):\n{}", stale.join("\n"));
}

#[test]
fn a_shape_masks_what_differs_from_run_to_run_and_keeps_the_words() {
    let a =
        shape("wal compression=zstd rows=1000   roundtrip_time  555.2 µs  +1.20% [+0.10%, +2.30%]  ±2.0%  regressed");
    let b = shape("wal compression=zstd rows=1,000 roundtrip_time 3.1 ms -0.40% [-1.10%, +0.30%] ±12.5% no_change");
    assert_eq!(a, b);
    assert_ne!(a, shape("wal compression=zstd rows=1000 round_trip 555.2 µs +1.20% [+0.10%, +2.30%] ±2.0% regressed"));
    assert_eq!(shape("─────────\nsha256 9f86d081884c7d65"), shape("───\nsha256 0123abcd4567"));
    assert_eq!(shape("▁▃▅█ +4.1%"), shape("█▁ -0.2%"));
    assert!(shape("│ ┆ doubtful: 12.5% of CPU time stolen by the hypervisor │").is_empty());
    let page = "x\n<!-- transcript -->\n```text\n$ benchhost show a\nrow\n```\n<!-- /transcript -->\n";
    let blocks = transcripts(page);
    assert_eq!((blocks.len(), blocks[0].commands.clone()), (1, vec!["benchhost show a".to_string()]));
}
