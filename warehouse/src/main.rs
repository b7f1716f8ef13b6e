//! `benchhost-warehouse`: see the library's documentation.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use benchhost_warehouse::location::Location;
use benchhost_warehouse::{export, gc, publish, store::Warehouse, tables::Tables};
use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "benchhost-warehouse", version, about = "benchhost's results warehouse on Iceberg, queried with SQL")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where the warehouse is.
#[derive(Args)]
struct At {
    /// The warehouse: a directory (catalog.sqlite and data/, created on first use) for one machine, a
    /// PostgreSQL catalog, postgres://USER@HOST[:PORT]/DB (password from PGPASSWORD or ~/.pgpass), for a fleet,
    /// or an Iceberg REST catalog over HTTP, rest://HOST[:PORT]/PREFIX[?namespace=A.B] (bearer token from
    /// ICEBERG_REST_TOKEN).
    #[arg(long, value_name = "DIR|URI")]
    warehouse: String,
    /// Where a PostgreSQL catalog's data files go, or the S3 store a REST catalog keeps its tables on:
    /// s3://BUCKET/PREFIX (keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, with AWS_REGION and
    /// AWS_ENDPOINT_URL).
    #[arg(long, value_name = "s3://BUCKET/PREFIX")]
    storage: Option<String>,
}

impl At {
    async fn open(&self) -> Result<Warehouse> {
        Warehouse::open(&Location::parse(&self.warehouse, self.storage.as_deref())?).await
    }
}

#[derive(Subcommand)]
enum Command {
    /// Append the records of results files to the warehouse, in one commit.
    Publish {
        /// Results files (JSON lines, schema 1).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        at: At,
    },
    /// Run DataFusion SQL over tables `records` and `metrics`, from results files or the warehouse.
    Query {
        /// The statement, e.g. "SELECT bench, metric, avg(value) FROM metrics GROUP BY 1, 2".
        sql: Option<String>,
        /// Results files to query (the statement may follow them: `--from FILE... "SQL"`).
        #[arg(long = "from", value_name = "FILE", num_args = 1..)]
        from: Vec<PathBuf>,
        /// The warehouse to query (a directory or a catalog URI, see publish).
        #[arg(long, value_name = "DIR|URI")]
        warehouse: Option<String>,
        /// A catalog's data location on S3 (see publish).
        #[arg(long, value_name = "s3://BUCKET/PREFIX")]
        storage: Option<String>,
    },
    /// Write the warehouse's records as a results stream.
    Export {
        #[command(flatten)]
        at: At,
        /// The stream to append to.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Only the newest K measurement or failure records of each series (what a report of the newest runs
        /// reads), found without reading the others.
        #[arg(long, value_name = "K")]
        newest: Option<usize>,
    },
    /// Remove the data files no snapshot references (left by publishers killed before their commit landed).
    Gc {
        #[command(flatten)]
        at: At,
        /// Keep orphans younger than this (a publisher may still be writing them): 90s, 30m, 1h.
        #[arg(long, value_name = "AGE", default_value = "1h", value_parser = age)]
        older_than: Duration,
    },
}

/// `90s`, `30m`, `1h`, `2d`, or seconds.
fn age(text: &str) -> Result<Duration, String> {
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let number: u64 = number.parse().map_err(|_| format!("`{text}` is not an age like 90s, 30m, 1h or 2d"))?;
    let seconds = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{text}`: the unit is s, m, h or d")),
    };
    Ok(Duration::from_secs(number * seconds))
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
        Command::Publish { files, at } => {
            let store = at.open().await?;
            let p = publish::publish(&store, &files).await?;
            let to = store.location().describe();
            print!("published {} records to {to} in {} files (commit attempts: {})", p.records, p.files, p.attempts);
            println!("; {} were in it already, {} repeated within the files", p.held, p.duplicates);
        }
        Command::Query { sql, mut from, warehouse, storage } => {
            let sql = statement(sql, &mut from)?;
            // Refused before a file is read or a warehouse opened.
            benchhost_warehouse::read_only::check(&datafusion::prelude::SessionContext::new().state(), &sql)?;
            let tables = match (from.is_empty(), warehouse) {
                (false, None) => Tables::from_files(&from)?,
                (true, Some(warehouse)) => {
                    Tables::from_warehouse(&At { warehouse, storage }.open().await?.table().await?).await?
                }
                _ => bail!("give either --from FILE... or --warehouse DIR|URI"),
            };
            println!("{}", tables.query(&sql).await?);
        }
        Command::Gc { at, older_than } => {
            let collected = gc::gc(&at.open().await?, older_than).await?;
            for path in &collected.removed {
                println!("removed {path}");
            }
            println!(
                "{} data files, {} referenced by snapshots; removed {} orphans, kept {} younger than {} s",
                collected.listed,
                collected.referenced,
                collected.removed.len(),
                collected.young,
                older_than.as_secs()
            );
        }
        Command::Export { at, out, newest } => {
            let table = at.open().await?.table().await?;
            let count = match newest {
                Some(k) => export::newest(&table, k, &out).await?,
                None => export::all(&table, &out).await?,
            };
            println!("{count} records appended to {}", out.display());
        }
    }
    Ok(())
}

/// mimalloc: with glibc's, malloc and free were a quarter of publish's CPU over 1M records.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

    #[test]
    fn ages_have_a_unit_or_are_seconds() {
        assert_eq!(age("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(age("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(age("2d"), Ok(Duration::from_secs(172_800)));
        assert_eq!(age("5"), Ok(Duration::from_secs(5)));
        assert!(age("1w").unwrap_err().contains("s, m, h or d"));
        assert!(age("soon").unwrap_err().contains("not an age"));
    }
}
