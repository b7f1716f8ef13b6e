//! The guide (`docs/src/`), the README and `results/README.md` checked with the code: every relative link leads to
//! a file (and an anchor to a heading in it), every page is in the book's SUMMARY.md, every `benchhost` command
//! line in a shell block parses as benchhost parses its arguments, every measured figure is what
//! `benchmarks/docs_figures.py` generates from `results/`, and the command-line reference is the parser's own help.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};

use super::Cli;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// README.md, results/README.md and every page of the guide.
fn documents() -> Vec<PathBuf> {
    fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("docs/src") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                pages(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![root().join("README.md"), root().join("results/README.md")];
    pages(&root().join("docs/src"), &mut out);
    out.sort();
    out
}

/// The lines of `markdown`, those of fenced code blocks blank, inline code spans blanked out (so a line's index
/// is its number - 1).
fn prose(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let code = regex::Regex::new(r"`[^`]*`").expect("a regex");
    markdown
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return String::new();
            }
            if fenced { String::new() } else { code.replace_all(line, "").into_owned() }
        })
        .collect()
}

/// The anchors of a page's headings (outside code blocks), as GitHub and mdBook make them: lower case, letters,
/// digits, `-` and `_` kept (a code span's text too), spaces made `-`.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !fenced) else { continue };
        let title = title.trim_start_matches('#').trim().to_lowercase();
        let slug: String = title.chars().filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_')).collect();
        out.insert(slug.replace(' ', "-"));
    }
    out
}

/// Every `[text](target)` of the prose of `markdown`: its line and target.
fn links(markdown: &str) -> Vec<(usize, String)> {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("a regex");
    let mut out = Vec::new();
    for (i, line) in prose(markdown).iter().enumerate() {
        for m in link.captures_iter(line) {
            out.push((i + 1, m[1].to_string()));
        }
    }
    out
}

#[test]
fn every_relative_link_leads_to_a_file_and_every_anchor_to_a_heading() {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("a document");
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let path = if file.is_empty() { doc.clone() } else { doc.parent().expect("a dir").join(file) };
            let name = format!("{}:{line}: {target}", doc.strip_prefix(root()).unwrap_or(&doc).display());
            if !path.exists() {
                broken.push(format!("{name}: no such file"));
            } else if !anchor.is_empty() && path.extension().is_some_and(|e| e == "md") {
                let headings = anchors(&std::fs::read_to_string(&path).expect("a page"));
                if !headings.contains(anchor) {
                    broken.push(format!("{name}: no heading `{anchor}` there"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn a_link_to_a_missing_page_or_heading_is_caught() {
    let text = "# Title\n\nSee [a](#title), [b](#nowhere) and `[c](#code)`.\n```\n[d](#fenced)\n```\n";
    assert_eq!(links(text), [(3, "#title".to_string()), (3, "#nowhere".to_string())]);
    assert!(anchors(text).contains("title") && !anchors(text).contains("nowhere"));
    assert!(anchors("## The `run` command, and more\n").contains("the-run-command-and-more"));
}

#[test]
fn every_page_of_the_guide_is_in_its_summary() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let named: BTreeSet<String> = links(&summary).into_iter().map(|(_, target)| target).collect();
    let pages: BTreeSet<String> = documents()
        .into_iter()
        .filter_map(|p| p.strip_prefix(&src).ok().map(|p| p.display().to_string()))
        .filter(|p| p != "SUMMARY.md")
        .collect();
    assert_eq!(pages, named, "pages under docs/src and the pages SUMMARY.md names");
}

/// The `benchhost` command lines of the shell blocks of `markdown`: variables assigned in the block stood in for
/// by their values (others by `1`), what follows `#`, `&&`, `|` or a redirection dropped, continued lines joined.
fn command_lines(markdown: &str) -> Vec<String> {
    let (mut out, mut shell, mut assigned, mut pending) = (Vec::new(), false, Vec::new(), String::new());
    let assignment = regex::Regex::new(r#"^([A-Z_]+)="([^"]*)"$"#).expect("a regex");
    let variable = regex::Regex::new(r"\$[A-Za-z_]+").expect("a regex");
    for line in markdown.lines() {
        let fence = line.trim_start();
        if fence.starts_with("```") {
            shell = ["```sh", "```bash", "```shell"].contains(&fence.trim_end());
            assigned.clear();
            continue;
        }
        if !shell {
            continue;
        }
        pending.push_str(line.trim_end().trim_end_matches('\\'));
        if line.trim_end().ends_with('\\') {
            pending.push(' ');
            continue;
        }
        let full = std::mem::take(&mut pending);
        if let Some(m) = assignment.captures(full.trim()) {
            assigned.push((m[1].to_string(), m[2].to_string()));
            continue;
        }
        let mut command = full.split(" #").next().unwrap_or("").to_string();
        for stop in [" && ", " | ", " > ", " >> ", " < "] {
            command = command.split(stop).next().unwrap_or("").to_string();
        }
        for (name, value) in &assigned {
            command = command.replace(&format!("${name}"), value);
        }
        let command = variable.replace_all(&command, "1");
        let words: Vec<&str> = command.split_whitespace().collect();
        if words.first().is_some_and(|w| w.ends_with("benchhost")) {
            out.push(words.join(" "));
        }
    }
    out
}

#[test]
fn every_benchhost_line_in_the_docs_parses_as_benchhost_parses_it() {
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("a document");
        for line in command_lines(&text) {
            let argv = shell_words(&line);
            if let Err(e) = Cli::try_parse_from(&argv) {
                panic!("{}: {line}\ndoes not parse: {e}", doc.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} command lines found in the docs");
}

#[test]
fn command_lines_are_taken_from_shell_blocks_only_and_cut_where_the_shell_would() {
    let text = "```sh\nWH=\"--warehouse wh\"\nbenchhost run --shard $I/$N # job I\nbenchhost report $WH \\\n  --format md > a.md\n\
                cargo build && target/release/benchhost list\n```\n```text\nbenchhost not a command\n```\n";
    assert_eq!(command_lines(text), ["benchhost run --shard 1/1", "benchhost report --warehouse wh --format md"]);
}

/// A shell line's words, quotes joined (the CI recipes' test splits its lines with it too).
pub(super) fn shell_words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quote) = (Vec::new(), String::new(), None);
    for c in line.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ' ') if !word.is_empty() => out.push(std::mem::take(&mut word)),
            (None, ' ') => {}
            _ => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The words in bold on `page`, without their markers.
fn bold_words(page: &str) -> Vec<String> {
    let bold = regex::Regex::new(r"\*\*([^*]+)\*\*").expect("a regex");
    bold.captures_iter(page).map(|c| c[1].to_string()).collect()
}

#[test]
fn every_bold_word_of_the_concepts_page_is_in_the_glossary() {
    // regression: the page said every bold word was in the glossary; parameters, metrics, invariants, the two
    // styles, threshold, baseline, CI90 and change point were not.
    let read = |page: &str| std::fs::read_to_string(root().join("docs/src").join(page)).expect("a page");
    let terms: Vec<String> = bold_words(&read("glossary.md")).iter().map(|t| t.to_lowercase()).collect();
    let covered = |word: &str| {
        let word = word.to_lowercase();
        let singular = word.strip_suffix('s').unwrap_or(&word).to_string();
        terms.iter().any(|term| {
            [&word, &singular].contains(&term)
                || term.starts_with(&format!("{word} "))
                || word.ends_with(&format!(" {term}"))
                || term.split(", ").any(|part| part == word)
        })
    };
    let missing: Vec<String> = bold_words(&read("concepts.md")).into_iter().filter(|w| !covered(w)).collect();
    assert!(missing.is_empty(), "bold on concepts.md, not in the glossary: {missing:?}");
}

#[test]
fn every_measured_figure_is_what_the_results_give() {
    let out = std::process::Command::new("python3")
        .args(["benchmarks/docs_figures.py", "--check"])
        .current_dir(root())
        .output()
        .expect("python3 runs benchmarks/docs_figures.py");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "stale or unknown figures:\n{said}{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_figure_typed_by_hand_is_found() {
    // The check above finds each figure no span generates and no comment declares given or past
    // (benchmarks/typed_figures.py); its own tests hold it to the figures issue 81 found at a3681e1.
    let out = std::process::Command::new("python3")
        .args(["-m", "unittest", "benchmarks/typed_figures_test.py"])
        .current_dir(root())
        .output()
        .expect("python3 runs benchmarks/typed_figures_test.py");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_cli_reference_is_the_parsers_own_help() {
    let path = root().join("docs/src/cli.md");
    let generated = super::shell::markdown(Cli::command());
    if std::env::var_os("BENCHHOST_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("writing docs/src/cli.md");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/src/cli.md is not `benchhost man --markdown`: `BENCHHOST_BLESS=1 cargo test -p benchhost --lib cli_reference`"
    );
}

#[test]
fn every_committed_run_is_described_by_provenance_read_from_its_records() {
    let readme = std::fs::read_to_string(root().join("results/README.md")).expect("results/README.md");
    let table = readme.split("\n## History").next().expect("text before the history");
    let typed = regex::Regex::new(r"\b[0-9a-f]{7,12}\b|\b20\d\d-\d\d-\d\d\b|\bVM\b").expect("a regex");
    let span = regex::Regex::new(r"<!-- fig:provenance:[^ ]+ -->.*?<!-- /fig -->").expect("a regex");
    let mut runs: Vec<String> = std::fs::read_dir(root().join("results"))
        .expect("results/")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".jsonl") && name != "results.jsonl")
        .collect();
    runs.sort();
    assert!(runs.len() >= 9, "{runs:?}");
    for run in runs {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| `{run}` |")))
            .unwrap_or_else(|| panic!("results/README.md has no row for results/{run}"));
        assert!(
            row.contains(&format!("<!-- fig:provenance:{run} -->")),
            "results/README.md's row of {run} does not print its provenance from the records (`provenance:{run}`)"
        );
        // regression: trace_index.jsonl was "the same run" as the querier's, compaction.jsonl "at 17c2774".
        let outside = span.replace_all(row, "");
        assert!(
            !typed.is_match(&outside),
            "results/README.md's row of {run} types a commit, a date or a machine beside its generated provenance: {}",
            typed.find(&outside).map(|m| m.as_str()).unwrap_or_default()
        );
    }
}

#[test]
fn the_books_preprocessor_points_repository_links_at_the_same_files_in_the_book() {
    // A page of docs/src/rigs links to a reference run and to the history as the repository lays them out; the
    // history's own page links back into the guide. In the book, results/ sits under the book's root.
    let chapter = |name: &str, path: &str, source: &str, content: &str| {
        serde_json::json!({"Chapter": {"name": name, "content": content, "number": null, "sub_items": [],
            "path": path, "source_path": source, "parent_names": []}})
    };
    let book = serde_json::json!({"items": [
        chapter("writer", "rigs/writer.md", "rigs/writer.md",
            "[r](../../../results/writer.jsonl), [h](../../../results/README.md#history), [w](writer.md#x), `[c](../../../results/a)`"),
        chapter("runs", "results/index.md", "results/README.md", "[s](../docs/src/record-schema.md) [p](bisect-proof.json)"),
    ]});
    let input = serde_json::to_string(&(serde_json::json!({"root": "."}), book)).expect("json");
    let mut child = std::process::Command::new("python3")
        .arg(root().join("docs/repository_links.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs docs/repository_links.py");
    use std::io::Write;
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("writing the book");
    let out = child.wait_with_output().expect("the preprocessor's book");
    assert!(out.status.success());
    let book: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a book");
    let content = |i: usize| book["items"][i]["Chapter"]["content"].as_str().expect("content").to_string();
    assert_eq!(
        content(0),
        "[r](../results/writer.jsonl), [h](../results/index.md#history), [w](writer.md#x), `[c](../../../results/a)`"
    );
    assert_eq!(content(1), "[s](../record-schema.md) [p](bisect-proof.json)");
}
