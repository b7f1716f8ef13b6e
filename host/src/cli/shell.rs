//! What a shell user expects of a command-line tool, generated from the clap definitions so it never drifts:
//! completions (`benchhost completions bash`), a man page (`benchhost man`) and the guide's command-line reference
//! (`docs/src/cli.md`, checked by a test).

use std::process::ExitCode;

use anyhow::Result;

use crate::run::output::print;

/// Completions of `command` (benchhost's, from clap) for `shell`, written to stdout.
pub fn completions(mut command: clap::Command, shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "benchhost", &mut out);
    print(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// The man page of `command` (roff), written to stdout: `benchhost man > benchhost.1`.
pub fn man(command: clap::Command) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out)?;
    print(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// The command-line reference of `command` in Markdown (`docs/src/cli.md`): each visible command's long help,
/// the global options (`-q`, `-v`) said once, in the first.
pub fn markdown(mut command: clap::Command) -> String {
    command.build();
    let mut out = String::from(
        "# Command line\n\n<!-- Generated from benchhost's clap definitions; `BENCHHOST_BLESS=1 cargo test -p benchhost \
         --lib cli_reference` rewrites it. -->\n\n",
    );
    out.push_str(&format!("```text\n{}\n```\n", command.render_long_help().to_string().trim_end()));
    let globals: Vec<String> =
        command.get_arguments().filter(|a| a.is_global_set()).map(|a| a.get_id().to_string()).collect();
    let names: Vec<String> = command
        .get_arguments()
        .filter(|a| a.is_global_set())
        .filter_map(|a| a.get_long())
        .map(|l| format!("`--{l}`"))
        .collect();
    out.push_str(&format!("\n{} (above) work with every command, and are not repeated below.\n", names.join(" and ")));
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let mut sub = sub.clone();
        for id in &globals {
            if sub.get_arguments().any(|a| a.get_id() == id.as_str()) {
                sub = sub.mut_arg(id.as_str(), |a| a.hide(true));
            }
        }
        let help = sub.render_long_help().to_string();
        out.push_str(&format!("\n## {}\n\n```text\n{}\n```\n", sub.get_name(), help.trim_end()));
    }
    out
}
