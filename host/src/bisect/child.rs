//! The commands a bisection waits for (cargo, `benchhost run`), each in a process group of its own that gets
//! the signal benchhost gets: Ctrl-C ends them as it ends them in a terminal, and the bisection then cleans up.

use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

use anyhow::{Context, Result};

use crate::proc::interrupt;

/// Runs `command` to its end, forwarding signals to it; its output as configured (piped streams captured).
pub fn run(command: &mut Command) -> Result<Output> {
    stop_if_interrupted()?;
    let child = command.process_group(0).spawn().with_context(|| format!("starting {:?}", command.get_program()))?;
    let group = child.id() as libc::pid_t;
    interrupt::forward(group);
    let output = child.wait_with_output();
    interrupt::leave(group);
    stop_if_interrupted()?;
    Ok(output?)
}

/// The bisection's error once a signal came: `main` turns it into 128 + the signal.
pub fn stop_if_interrupted() -> Result<()> {
    match interrupt::received() {
        Some(signal) => Err(interrupt::Interrupted {
            signal,
            during: "a bisection".into(),
            kept: "the verdicts of finished steps are kept in the stream".into(),
        }
        .into()),
        None => Ok(()),
    }
}
