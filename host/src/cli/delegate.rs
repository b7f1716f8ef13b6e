//! `benchhost publish`, `benchhost query` and `benchhost report --warehouse` run `benchhost-warehouse`, a
//! binary of its own: the warehouse needs Iceberg and DataFusion, and the host must not make every user
//! compile them. It is looked up next to this executable, then on PATH.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

const WAREHOUSE: &str = "benchhost-warehouse";

/// Where `benchhost-warehouse` is, if it is built.
pub fn warehouse_binary() -> Option<PathBuf> {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join(WAREHOUSE)));
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    beside.into_iter().chain(on_path.map(|dir| dir.join(WAREHOUSE))).find(|p| p.is_file())
}

fn binary(command: &str) -> Result<PathBuf> {
    warehouse_binary().with_context(|| {
        format!(
            "`benchhost {command}` runs {WAREHOUSE} (Iceberg and DataFusion, built apart from the host), which is \
             not built: cargo build --release -p {WAREHOUSE}"
        )
    })
}

/// Becomes `benchhost-warehouse COMMAND ARGS...` (exec: same process, stdio and exit code), so that a signal
/// sent to `benchhost publish` reaches the publisher itself: a SIGKILL of a parent would leave its child
/// publishing.
pub fn run(command: &str, args: &[String]) -> Result<ExitCode> {
    use std::os::unix::process::CommandExt;
    // `--help` must answer even before the warehouse is built: with what the command takes, and how to get it.
    if warehouse_binary().is_none() && args.iter().any(|a| a == "--help" || a == "-h") {
        crate::run::output::print(&help(command))?;
        return Ok(ExitCode::SUCCESS);
    }
    let binary = binary(command)?;
    let error = Command::new(&binary).arg(command).args(args).exec();
    Err(error).with_context(|| format!("running {}", binary.display()))
}

fn help(command: &str) -> String {
    let usage = match command {
        "publish" => {
            "benchhost publish FILE... --warehouse DIR|postgres://USER@HOST/DB|rest://HOST/PREFIX \
             [--storage s3://BUCKET/PREFIX]\n\n\
             Appends the records of results files to the warehouse (an Iceberg table behind a SQL catalog on \
             sqlite in DIR, or on PostgreSQL with data on S3, or behind a REST catalog), in one commit, each \
             record once."
        }
        "gc" => {
            "benchhost gc --warehouse DIR|URI [--storage s3://BUCKET/PREFIX] [--older-than AGE]\n\nRemoves the \
             warehouse's data files that no snapshot references and are older than AGE (default 1h)."
        }
        _ => {
            "benchhost query \"SQL\" (--from FILE... | --warehouse DIR)\n\nDataFusion SQL over the tables \
              `records` and `metrics`, from results files or the warehouse."
        }
    };
    format!("Usage: {usage}\n\nIt runs {WAREHOUSE}, which is not built: cargo build --release -p {WAREHOUSE}\n")
}

/// Exports the `warehouse` (with its `storage`) into the stream `out`: every record, or the `newest` K of each
/// series.
pub fn export(warehouse: &str, storage: Option<&str>, out: &Path, newest: Option<usize>) -> Result<()> {
    let mut command = Command::new(binary("report --warehouse")?);
    command.args(["export", "--warehouse", warehouse]).arg("--out").arg(out);
    if let Some(storage) = storage {
        command.args(["--storage", storage]);
    }
    if let Some(k) = newest {
        command.args(["--newest", &k.to_string()]);
    }
    let output = command.output().context("running the warehouse")?;
    if !output.status.success() {
        bail!("exporting {warehouse}: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(())
}
