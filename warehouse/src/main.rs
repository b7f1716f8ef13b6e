//! `benchhost-warehouse`: see the library's documentation.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use benchhost_warehouse::{export, publish, store::Warehouse, tables::Tables};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "benchhost-warehouse", version, about = "benchhost's results warehouse on Iceberg, queried with SQL")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Append the records of results files to the warehouse, in one commit.
    Publish {
        /// Results files (JSON lines, schema 1).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The warehouse directory (catalog.sqlite and data/; created on first use).
        #[arg(long, value_name = "DIR")]
        warehouse: PathBuf,
    },
    /// Run DataFusion SQL over tables `records` and `metrics`, from results files or the warehouse.
    Query {
        /// The statement, e.g. "SELECT bench, metric, avg(value) FROM metrics GROUP BY 1, 2".
        sql: Option<String>,
        /// Results files to query (the statement may follow them: `--from FILE... "SQL"`).
        #[arg(long = "from", value_name = "FILE", num_args = 1..)]
        from: Vec<PathBuf>,
        /// The warehouse to query.
        #[arg(long, value_name = "DIR")]
        warehouse: Option<PathBuf>,
    },
    /// Write the warehouse's records as a results stream.
    Export {
        /// The warehouse directory.
        #[arg(long, value_name = "DIR")]
        warehouse: PathBuf,
        /// The stream to append to.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Only the newest K measurement or failure records of each series (what a report of the newest runs
        /// reads), found without reading the others.
        #[arg(long, value_name = "K")]
        newest: Option<usize>,
    },
}

/// The SQL of `query`: the positional statement, or, when options came first (`--from FILE "SQL"`, as most
/// people type it), the last `--from` value that is not a file: `--from` takes several files and would
/// otherwise swallow the statement.
fn statement(sql: Option<String>, from: &mut Vec<PathBuf>) -> Result<String> {
    if let Some(sql) = sql {
        return Ok(sql);
    }
    match from.last() {
        Some(last) if !last.exists() => Ok(from.pop().expect("a last value").to_string_lossy().into_owned()),
        _ => bail!("no SQL statement: query \"SELECT ...\" --from FILE... (or --warehouse DIR)"),
    }
}

async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Publish { files, warehouse } => {
            let store = Warehouse::open(&warehouse).await?;
            let published = publish::publish(&store, &files).await?;
            println!(
                "published {} records to {} in {} files (committed on attempt {})",
                published.records,
                warehouse.display(),
                published.files,
                published.attempts
            );
        }
        Command::Query { sql, mut from, warehouse } => {
            let sql = statement(sql, &mut from)?;
            let tables = match (from.is_empty(), warehouse) {
                (false, None) => Tables::from_files(&from)?,
                (true, Some(dir)) => Tables::from_warehouse(&Warehouse::open(&dir).await?.table().await?).await?,
                _ => bail!("give either --from FILE... or --warehouse DIR"),
            };
            println!("{}", tables.query(&sql).await?);
        }
        Command::Export { warehouse, out, newest } => {
            let table = Warehouse::open(&warehouse).await?.table().await?;
            let count = match newest {
                Some(k) => export::newest(&table, k, &out).await?,
                None => export::all(&table, &out).await?,
            };
            println!("{count} records appended to {}", out.display());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
    let result = runtime.context("starting the runtime").and_then(|rt| rt.block_on(run(cli)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_may_follow_the_files_of_from() {
        // regression: `query --from FILE "SQL"` failed with only "For more information, try '--help'".
        let cli = Cli::try_parse_from(["w", "query", "--from", "Cargo.toml", "SELECT 1"]).unwrap();
        let Command::Query { sql, mut from, .. } = cli.command else { panic!() };
        assert_eq!(statement(sql, &mut from).unwrap(), "SELECT 1");
        assert_eq!(from, [PathBuf::from("Cargo.toml")]);
        let cli = Cli::try_parse_from(["w", "query", "SELECT 2", "--from", "Cargo.toml"]).unwrap();
        let Command::Query { sql, mut from, .. } = cli.command else { panic!() };
        assert_eq!(statement(sql, &mut from).unwrap(), "SELECT 2");
        let mut only_files = vec![PathBuf::from("Cargo.toml")];
        assert!(statement(None, &mut only_files).unwrap_err().to_string().starts_with("no SQL statement"));
    }
}
