//! `benchhost`: parses the command line and hands over to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = benchhost::cli::Cli::parse();
    match benchhost::cli::run(cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => match err.downcast_ref::<benchhost::interrupt::Interrupted>() {
            // Ctrl-C or SIGTERM: say which cell was cut, and exit as a signal would (130, 143).
            Some(stop) => {
                eprintln!("{stop}");
                ExitCode::from(stop.exit_code())
            }
            None => {
                eprintln!("error: {err:#}");
                ExitCode::from(2)
            }
        },
    }
}

/// `benchhost show … | head` must end quietly.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}
