//! Where text for people goes, and how much of it: `-q` keeps a command's own output (a report, a plan, a
//! list) and drops what only narrates (progress, tables after a run, summaries); `-v` adds each cell's end and
//! the libraries that were not loaded. Warnings and errors always go to stderr.

use std::io::Write;
use std::sync::atomic::{AtomicI8, Ordering};

use anyhow::Result;

static VERBOSITY: AtomicI8 = AtomicI8::new(0);

/// Sets the verbosity from `-q` (−1) and `-v` (+1).
pub fn set_verbosity(quiet: bool, verbose: bool) {
    VERBOSITY.store(i8::from(verbose) - i8::from(quiet), Ordering::Relaxed);
}

/// `-q` was given.
pub fn quiet() -> bool {
    VERBOSITY.load(Ordering::Relaxed) < 0
}

/// `-v` was given.
pub fn verbose() -> bool {
    VERBOSITY.load(Ordering::Relaxed) > 0
}

/// Writes a command's own output to stdout, returning broken pipes as errors for `main` to treat as a normal
/// end (`benchhost show ... | head`).
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Writes narration (a table after a run, a summary line) to stdout, unless `-q`. A reader that went away
/// (`benchhost run ... | head`) ends the narration, never the command: a run still appends its verdicts, writes
/// its exports and applies its gate.
pub fn narrate(text: &str) -> Result<()> {
    if quiet() {
        return Ok(());
    }
    match print(text) {
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) => {
            VERBOSITY.store(-1, Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

/// A note for `-v` only, on stderr.
pub fn note(text: &str) {
    if verbose() {
        eprintln!("{text}");
    }
}
