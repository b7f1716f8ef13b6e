//! docs/src/ci.md's workflows: their YAML parses, and every `benchhost` command line in a step parses as benchhost
//! parses its arguments (as `--help` would get past: the command, its flags and their values).

use clap::Parser;
use yaml_rust2::{Yaml, YamlLoader};

use super::Cli;
use super::docs_tests::shell_words;

/// The text of each fenced ```yaml block of `markdown`.
fn yaml_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```yaml") => current = Some(String::new()),
            (Some(_), "```") => blocks.push(current.take().expect("in a block")),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// Every `run:` of every step of every job of a workflow.
fn step_scripts(workflow: &Yaml) -> Vec<String> {
    let jobs = workflow["jobs"].as_hash().expect("a workflow has jobs");
    jobs.values()
        .flat_map(|job| job["steps"].as_vec().expect("a job has steps").iter())
        .filter_map(|step| step["run"].as_str().map(str::to_owned))
        .collect()
}

/// A shell line's words: quotes joined, each `${{ ... }}` expression stood in for by a value, a redirection
/// and what follows it dropped.
fn words(line: &str) -> Vec<String> {
    let line = line.split(" >>").next().expect("split gives one part");
    let line = regex::Regex::new(r"\$\{\{[^}]*\}\}").expect("a regex").replace_all(line, "1");
    shell_words(&line)
}

#[test]
fn the_ci_recipes_parse_and_every_benchhost_line_in_them_is_a_valid_command() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/ci.md");
    let markdown = std::fs::read_to_string(&path).expect("docs/src/ci.md");
    let blocks = yaml_blocks(&markdown);
    assert_eq!(blocks.len(), 2, "a workflow for pull requests and one for the nightly");
    let mut commands = Vec::new();
    for block in &blocks {
        let docs = YamlLoader::load_from_str(block).unwrap_or_else(|e| panic!("{e}\n{block}"));
        for script in step_scripts(&docs[0]) {
            for line in script.lines() {
                let argv = words(line);
                if argv.first().is_some_and(|w| w.ends_with("benchhost")) {
                    commands.push(argv);
                }
            }
        }
    }
    let subcommands: Vec<&str> = commands.iter().map(|argv| argv[1].as_str()).collect();
    // Both builds of the pull request's comparison keep their links, for its code layouts; the nightly publishes
    // the acknowledgements committed with the code beside its records.
    assert_eq!(subcommands, ["build", "build", "run", "run", "publish", "publish", "report", "trend"]);
    assert!(commands[2].contains(&"--accepted".to_string()), "the gate honours the committed acknowledgements");
    for argv in &commands {
        if let Err(e) = Cli::try_parse_from(argv) {
            panic!("{argv:?} does not parse: {e}");
        }
    }
    // The parser is not lenient: a misspelt flag in a recipe would fail this test.
    let mut wrong = commands[7].clone();
    wrong.push("--within-runs".into());
    assert!(Cli::try_parse_from(&wrong).is_err());
}

#[test]
fn shell_words_join_quotes_and_stand_in_for_expressions() {
    let words = words(r#"benchhost run --run-id nightly-${{ github.run_id }} --out "a b.jsonl" >> "$X""#);
    assert_eq!(words, ["benchhost", "run", "--run-id", "nightly-1", "--out", "a b.jsonl"]);
}
