//! What a shell user expects of a command-line tool, generated from the clap definitions so it never drifts:
//! completions (`benchhost completions bash`), a man page (`benchhost man`), and the JSON Schema of the
//! records the tool writes (`benchhost schema`, committed as `results/schema-1.json`).

use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::Cli;
use crate::output::print;

/// Completions for `shell`, written to stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "benchhost", &mut out);
    print(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// The man page (roff), written to stdout: `benchhost man > benchhost.1`.
pub fn man() -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    print(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// The JSON Schema of a schema-1 record, as committed in `results/schema-1.json`.
pub fn record_schema() -> String {
    let schema = schemars::schema_for!(crate::record::Record);
    serde_json::to_string_pretty(&schema).expect("schemas serialize") + "\n"
}

#[cfg(test)]
mod tests {
    use super::record_schema;

    #[test]
    fn the_committed_schema_matches_the_record_types() {
        let committed = include_str!("../../results/schema-1.json");
        assert!(
            committed == record_schema(),
            "results/schema-1.json is out of date: regenerate it with \
             `cargo run -p benchhost -- schema > results/schema-1.json`"
        );
    }

    #[test]
    fn the_schema_accepts_a_record_and_names_the_kinds() {
        let schema: serde_json::Value = serde_json::from_str(&record_schema()).unwrap();
        let required: Vec<&str> = schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(required, ["schema", "bench", "kind", "run"]);
        let text = record_schema();
        assert!(text.contains("\"measurement\"") && text.contains("\"verdict\"") && text.contains("\"failure\""));
    }
}
