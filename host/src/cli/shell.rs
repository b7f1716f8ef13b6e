//! What a shell user expects of a command-line tool, generated from the clap definitions so it never drifts:
//! completions (`benchhost completions bash`) and a man page (`benchhost man`).

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
