//! `benchhost`: hands over to the library, which parses the command line, runs it and chooses the exit code.

fn main() -> std::process::ExitCode {
    benchhost::cli::main()
}
