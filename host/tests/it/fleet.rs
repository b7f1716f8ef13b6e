//! A fleet without a shared disk: four "machines" (processes with working directories of their own) run their
//! shard of one matrix and publish at once to a warehouse on real servers, PostgreSQL for the catalog (or
//! lakana-server, an Iceberg REST catalog on PostgreSQL) and an S3 server for the data; a fifth reports and
//! queries. Every record is counted once, publishing is
//! idempotent, a publisher killed in its commit leaves the table whole, and `gc` removes what it wrote.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::lakana::{self, Lakana};
use crate::support::servers::{self, BUCKET, PG_PASSWORD, Postgres, S3Server, wait_until};
use crate::support::{Sandbox, bin, workspace_plugins};

const RIGS: &str = "[rig.wal]\nmatrix = { compression = [\"none\", \"lz4\", \"zstd\"], rows = [100, 200, 300] }\n";
const PREFIX: &str = "nightly";
/// How long a publisher may take to reach the point a test waits for.
const WAIT: Duration = Duration::from_secs(120);

/// The servers of one fleet: PostgreSQL and an S3 server, and for the REST arm lakana in front of them.
struct Fleet {
    postgres: Postgres,
    s3: S3Server,
    rest: Option<Lakana>,
}

impl Fleet {
    /// The servers, or None (skipped) on a machine without them; never skipped in CI, which installs them.
    fn start() -> Option<Fleet> {
        let (Some(pg), Some(s3)) = (servers::postgres_bin(), servers::s3s_fs_bin()) else {
            assert!(std::env::var_os("CI").is_none(), "CI must provide PostgreSQL and s3s-fs (see .ci/run)");
            eprintln!("skipped: no PostgreSQL or s3s-fs (run .ci/run once to install them)");
            return None;
        };
        Some(Fleet { postgres: Postgres::start(&pg), s3: S3Server::start(&s3), rest: None })
    }

    /// The servers with lakana-server, a REST catalog, in front of PostgreSQL and S3.
    fn start_rest() -> Option<Fleet> {
        let Some(binary) = lakana::lakana_bin() else {
            assert!(std::env::var_os("CI").is_none(), "CI must provide lakana-server (see .ci/run)");
            eprintln!("skipped: no lakana-server (run .ci/run once to install it)");
            return None;
        };
        let mut fleet = Fleet::start()?;
        fleet.rest = Some(Lakana::start(&binary, &fleet.postgres, &fleet.s3));
        Some(fleet)
    }

    /// `--warehouse` and `--storage` of this fleet.
    fn warehouse(&self) -> (String, String) {
        match &self.rest {
            Some(lakana) => (lakana.uri(), format!("s3://{BUCKET}/{}", lakana::ROOT)),
            None => (self.postgres.uri(), format!("s3://{BUCKET}/{PREFIX}")),
        }
    }

    /// `benchhost ARGS... --warehouse URI --storage s3://...` in `dir`, with the secrets in the environment.
    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let (warehouse, storage) = self.warehouse();
        self.command_at(dir, args, &warehouse, &storage)
    }

    fn command_at(&self, dir: &Path, args: &[&str], warehouse: &str, storage: &str) -> Command {
        let mut command = Command::new(bin());
        command.current_dir(dir).args(args).args(["--warehouse", warehouse, "--storage", storage]);
        command.env("PGPASSWORD", PG_PASSWORD).envs(self.s3.env()).env("ICEBERG_REST_TOKEN", Lakana::token());
        command
    }

    fn ok(&self, dir: &Path, args: &[&str]) -> String {
        let output = self.command(dir, args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "benchhost {args:?}: {stderr}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// (records, distinct identities as merge counts them) in the warehouse, read by a process of its own.
    fn counts(&self, dir: &Path) -> (u64, u64) {
        let sql = "SELECT count(*) AS n, count(DISTINCT concat(run_id, bench, kind, variant)) AS d FROM records";
        let out = self.ok(dir, &["query", sql]);
        let row = out.lines().find(|l| l.starts_with("| ") && l.chars().nth(2).is_some_and(|c| c.is_ascii_digit()));
        let cells: Vec<u64> =
            row.unwrap_or_else(|| panic!("{out}")).split('|').filter_map(|c| c.trim().parse().ok()).collect();
        (cells[0], cells[1])
    }

    /// The data files in the bucket, wherever the catalog placed the table.
    fn data_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> =
            self.s3.files("").into_iter().filter(|f| f.extension().is_some_and(|e| e == "parquet")).collect();
        files.sort();
        files
    }
}

fn run_shard(machine: &Sandbox, shard: &str, run_id: &str) {
    machine.write("rigs.toml", RIGS);
    let mut run = machine.cmd();
    run.args(["run", "--quick", "--shard", shard, "--run-id", run_id, "--out", "r.jsonl", "--plugin-dir"]);
    run.arg(workspace_plugins()).assert().success();
}

fn wait_all(children: Vec<Child>) {
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a publisher failed");
    }
}

#[test]
fn four_machines_publish_at_once_and_every_record_is_counted_once() {
    if let Some(fleet) = Fleet::start() {
        publish_at_once(&fleet);
    }
}

#[test]
fn four_machines_publish_at_once_through_a_rest_catalog_and_every_record_is_counted_once() {
    if let Some(fleet) = Fleet::start_rest() {
        publish_at_once(&fleet);
    }
}

#[test]
fn a_publisher_killed_in_its_commit_adds_nothing_and_gc_removes_its_files() {
    if let Some(fleet) = Fleet::start() {
        killed_in_commit(&fleet);
    }
}

#[test]
fn a_publisher_killed_in_its_commit_to_a_rest_catalog_adds_nothing_and_gc_removes_its_files() {
    if let Some(fleet) = Fleet::start_rest() {
        killed_in_commit(&fleet);
    }
}

fn publish_at_once(fleet: &Fleet) {
    let machines: Vec<Sandbox> = (0..4).map(|_| Sandbox::new()).collect();
    for (i, machine) in machines.iter().enumerate() {
        run_shard(machine, &format!("{}/4", i + 1), "fleet-1");
    }
    let publishers = machines.iter().map(|m| fleet.command(m.path(), &["publish", "r.jsonl"]).spawn().unwrap());
    wait_all(publishers.collect());
    let reader = Sandbox::new();
    assert_eq!(fleet.counts(reader.path()), (9, 9), "the 9 cells of the matrix, once each");
    let report = fleet.ok(reader.path(), &["report", "--format", "md"]);
    let cells = report.lines().filter(|l| l.starts_with("| wal/") && l.contains("/roundtrip_time |"));
    assert_eq!(cells.count(), 9, "{report}");
    // The history read back through the warehouse: one night per series, too few for change points, each
    // series saying so (none usable at all from a debug build's runs: their numbers are doubtful).
    let trend: serde_json::Value = serde_json::from_str(&fleet.ok(reader.path(), &["trend", "--json"])).unwrap();
    let series = trend["series"].as_array().unwrap();
    assert_eq!(series.iter().filter(|s| s["bench"] == "wal" && s["metric"] == "roundtrip_time").count(), 9, "{trend}");
    let too_short = |s: &serde_json::Value| {
        s["nights"] == 1 && s["reason"].as_str().is_some_and(|r| r.ends_with(", fewer than the 10 the method needs"))
    };
    assert!(series.iter().all(too_short), "{trend}");

    // The same slice published by two machines at once, and once more: nothing is added.
    let again = (0..2).map(|_| fleet.command(machines[0].path(), &["publish", "r.jsonl"]).spawn().unwrap());
    wait_all(again.collect());
    let out = fleet.ok(machines[1].path(), &["publish", "r.jsonl"]);
    assert!(out.contains("published 0 records"), "{out}");
    assert_eq!(fleet.counts(reader.path()), (9, 9));
}

fn killed_in_commit(fleet: &Fleet) {
    let first = Sandbox::new();
    run_shard(&first, "1/1", "night-1");
    fleet.ok(first.path(), &["publish", "r.jsonl"]);
    let kept = fleet.data_files();

    let machine = Sandbox::new();
    run_shard(&machine, "1/1", "night-2");
    let marker = machine.path().join("stalled");
    let mut publisher = fleet.command(machine.path(), &["publish", "r.jsonl"]);
    let mut publisher = publisher.env("BENCHHOST_WAREHOUSE_STALL_COMMIT", &marker).spawn().unwrap();
    let stalled = || {
        assert!(publisher.try_wait().unwrap().is_none(), "the publisher ended before it stalled");
        marker.exists()
    };
    wait_until(WAIT, "the publisher never stalled", stalled);
    // SIGKILL: its data files are written, the catalog is not updated.
    publisher.kill().unwrap();
    publisher.wait().unwrap();
    let reader = Sandbox::new();
    assert_eq!(fleet.counts(reader.path()), (9, 9), "all out: the first night only");
    let orphans = fleet.data_files().len() - kept.len();
    assert!(orphans > 0, "the killed publisher wrote its data files");

    // A young orphan may be a publisher still at work: kept. Past the grace period, removed; nothing else is.
    let out = fleet.ok(reader.path(), &["gc", "--older-than", "1h"]);
    assert!(out.contains("removed 0 orphans"), "{out}");
    std::thread::sleep(Duration::from_secs(2));
    let out = fleet.ok(reader.path(), &["gc", "--older-than", "1s"]);
    assert!(out.contains(&format!("removed {orphans} orphans")), "{out}");
    assert_eq!(fleet.data_files(), kept, "only the orphans are gone");
    assert_eq!(fleet.counts(reader.path()), (9, 9));

    // The retry publishes the whole file once; a second retry adds nothing.
    let out = fleet.ok(machine.path(), &["publish", "r.jsonl"]);
    assert!(out.contains("published 9 records"), "{out}");
    let out = fleet.ok(machine.path(), &["publish", "r.jsonl"]);
    assert!(out.contains("published 0 records") && out.contains("9 were in it already"), "{out}");
    assert_eq!(fleet.counts(reader.path()), (18, 18));
}

/// Two openers of a new PostgreSQL catalog used to race in iceberg's `CREATE TABLE IF NOT EXISTS` (one failed
/// with `type "iceberg_namespace_properties" already exists`): an opener now waits while another holds the lock
/// the warehouse takes (warehouse/src/catalog_lock.rs, CATALOG_LOCK), and creates nothing until it has it.
#[test]
fn a_publisher_waits_its_turn_to_create_a_new_catalog() {
    let Some(fleet) = Fleet::start() else { return };
    let machine = Sandbox::new();
    run_shard(&machine, "1/4", "turn-1");
    let pg = &fleet.postgres;
    let mut holder = pg.psql().stdin(Stdio::piped()).spawn().unwrap();
    let lock = "SELECT pg_advisory_lock(hashtext('benchhost: creating the catalog'));\n";
    holder.stdin.as_mut().unwrap().write_all(lock.as_bytes()).unwrap();
    let advisory = |granted: &str| format!("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND {granted}");
    wait_until(WAIT, "the holder never got the lock", || pg.ask(&advisory("granted")) == "1");

    let mut publisher = fleet.command(machine.path(), &["publish", "r.jsonl"]).spawn().unwrap();
    let waiting = || {
        assert!(publisher.try_wait().unwrap().is_none(), "the publisher did not wait for its turn");
        pg.ask(&advisory("NOT granted")) == "1"
    };
    wait_until(WAIT, "the publisher never asked for the lock", waiting);
    assert_eq!(pg.ask("SELECT to_regclass('iceberg_tables') IS NULL"), "t", "nothing created while waiting");
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    wait_all(vec![publisher]);
    assert_eq!(fleet.counts(Sandbox::new().path()).0, 3, "the shard's 3 cells");
}

#[test]
fn bad_fleet_input_is_one_line_and_writes_nothing() {
    let Some(fleet) = Fleet::start() else { return };
    let machine = Sandbox::new();
    run_shard(&machine, "1/1", "night-1");
    let (dir, publish) = (machine.path(), &["publish", "r.jsonl"]);
    let (uri, storage) = fleet.warehouse();
    let closed = servers::free_port();
    let unreachable = format!("postgres://bench@127.0.0.1:{closed}/postgres");
    refused(&mut fleet.command_at(dir, publish, &unreachable, &storage), "does not answer");
    refused(fleet.command(dir, publish).env("PGPASSWORD", "wrong"), "password authentication failed");
    refused(fleet.command(dir, publish).env("AWS_SECRET_ACCESS_KEY", "wrong"), &storage);
    refused(&mut fleet.command_at(dir, publish, &uri, "s3://no-such-bucket/x"), "s3://no-such-bucket/x");
    assert!(!fleet.s3.root.path().join("no-such-bucket").exists(), "no bucket was made");
    let mysql = "mysql://bench@127.0.0.1/db";
    refused(&mut fleet.command_at(dir, publish, mysql, &storage), "unknown scheme `mysql://`");
    assert!(fleet.s3.files(PREFIX).is_empty(), "nothing was written");
}

#[test]
fn bad_rest_catalog_input_is_one_line_and_writes_nothing() {
    let Some(fleet) = Fleet::start_rest() else { return };
    let machine = Sandbox::new();
    run_shard(&machine, "1/1", "night-1");
    let (dir, publish) = (machine.path(), &["publish", "r.jsonl"]);
    let (uri, storage) = fleet.warehouse();
    let port = fleet.rest.as_ref().unwrap().port;
    let closed = servers::free_port();
    let unreachable = uri.replace(&format!(":{port}/"), &format!(":{closed}/"));
    refused(&mut fleet.command_at(dir, publish, &unreachable, &storage), "does not answer");
    refused(fleet.command(dir, publish).env("ICEBERG_REST_TOKEN", "wrong"), "refused the token in ICEBERG_REST_TOKEN");
    let unknown = uri.replace(&format!("/{}?", lakana::ENVIRONMENT), "/nosuch?");
    refused(&mut fleet.command_at(dir, publish, &unknown, &storage), "no catalog `nosuch`");
    refused(&mut fleet.command_at(dir, publish, &uri, "s3://no-such-bucket/x"), "s3://no-such-bucket/x");
    let in_uri = uri.replace("rest://", "rest://admin:hunter2@");
    refused(&mut fleet.command_at(dir, publish, &in_uri, &storage), "ICEBERG_REST_TOKEN");
    assert!(fleet.s3.files("").is_empty(), "nothing was written");
}

/// The command fails with one line on stderr that says `expect`.
fn refused(command: &mut Command, expect: &str) {
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(expect), "{expect:?} in {stderr}");
}
