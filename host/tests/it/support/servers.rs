//! Real servers for the fleet test, on 127.0.0.1 and free ports, stopped when dropped: a private PostgreSQL
//! cluster (`initdb` and `pg_ctl` of Debian's postgresql package) and s3s-fs, an S3 server on a directory
//! (built by `.ci/run` from crates.io).

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const PG_USER: &str = "bench";
pub const PG_PASSWORD: &str = "fleet-password";
pub const S3_KEY: &str = "fleetkey";
pub const S3_SECRET: &str = "fleet-secret-key";
pub const BUCKET: &str = "fleet";

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_for(port: u16, what: &str) {
    let listening = || TcpStream::connect(("127.0.0.1", port)).is_ok();
    wait_until(Duration::from_secs(30), &format!("{what} did not listen on 127.0.0.1:{port} within 30 s"), listening);
}

/// Polls `done` until it is true; fails with `what` after `within`.
pub fn wait_until(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The directory of PostgreSQL's server programs: BENCHHOST_PG_BIN, or Debian's newest.
pub fn postgres_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("BENCHHOST_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<PathBuf> =
        std::fs::read_dir("/usr/lib/postgresql").ok()?.flatten().map(|e| e.path()).collect();
    versions.sort();
    versions.into_iter().rev().map(|v| v.join("bin")).find(|bin| bin.join("initdb").exists())
}

/// The s3s-fs binary: BENCHHOST_S3S_FS, or where `.ci/run` installs it.
pub fn s3s_fs_bin() -> Option<PathBuf> {
    let cached = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/benchhost/s3s-fs-0.14.1/bin/s3s-fs"));
    std::env::var_os("BENCHHOST_S3S_FS").map(PathBuf::from).or(cached).filter(|p| p.exists())
}

/// A PostgreSQL cluster of its own, with one user, `bench`, who logs in by password (scram-sha-256).
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
}

impl Postgres {
    pub fn start(bin: &Path) -> Postgres {
        let dir = tempfile::tempdir().unwrap();
        let pg = Postgres { dir, bin: bin.to_owned(), port: free_port() };
        // PostgreSQL refuses to run as root: the cluster then belongs to the `postgres` user.
        if is_root() {
            std::fs::set_permissions(pg.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::write(pg.dir.path().join("password"), PG_PASSWORD).unwrap();
        pg.own(pg.dir.path());
        let data = pg.dir.path().join("data");
        let pwfile = format!("--pwfile={}", pg.dir.path().join("password").display());
        pg.run("initdb", &["-D", &data.to_string_lossy(), "-U", PG_USER, &pwfile, "--auth=scram-sha-256", "--no-sync"]);
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=200",
            pg.port,
            pg.dir.path().display()
        );
        let log = pg.dir.path().join("log").to_string_lossy().into_owned();
        pg.run("pg_ctl", &["-D", &data.to_string_lossy(), "-l", &log, "-o", &options, "-w", "-t", "30", "start"]);
        wait_for(pg.port, "PostgreSQL");
        pg
    }

    /// The catalog URI (no password: that is PGPASSWORD's).
    pub fn uri(&self) -> String {
        format!("postgres://{PG_USER}@127.0.0.1:{}/postgres", self.port)
    }

    /// `psql` on the catalog's database, quiet, unaligned and stopping at the first error.
    pub fn psql(&self) -> Command {
        let mut psql = Command::new(self.bin.join("psql"));
        psql.args(["-qtA", "-v", "ON_ERROR_STOP=1", "-d", &self.uri()]).env("PGPASSWORD", PG_PASSWORD);
        psql
    }

    /// What `sql` answers, trimmed.
    pub fn ask(&self, sql: &str) -> String {
        let output = self.psql().args(["-c", sql]).output().unwrap();
        assert!(output.status.success(), "psql -c {sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    fn own(&self, path: &Path) {
        if is_root() {
            let status = Command::new("chown").args(["-R", "postgres"]).arg(path).status().unwrap();
            assert!(status.success(), "chown -R postgres {}", path.display());
        }
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let program = self.bin.join(tool);
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let output = command.args(args).stdin(Stdio::null()).output().unwrap();
        assert!(output.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&output.stderr));
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        self.run("pg_ctl", &["-D", &data.to_string_lossy(), "-m", "immediate", "stop"]);
    }
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

/// s3s-fs serving a directory, with one bucket, `fleet`.
pub struct S3Server {
    child: Child,
    pub root: tempfile::TempDir,
    pub port: u16,
}

impl S3Server {
    pub fn start(binary: &Path) -> S3Server {
        let root = tempfile::tempdir().unwrap();
        // s3s-fs keeps a bucket as a directory of its root.
        std::fs::create_dir(root.path().join(BUCKET)).unwrap();
        let port = free_port();
        let child = Command::new(binary)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--access-key", S3_KEY])
            .args(["--secret-key", S3_SECRET])
            .arg(root.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting s3s-fs");
        wait_for(port, "s3s-fs");
        S3Server { child, root, port }
    }

    /// The environment a publisher reads the store's address and keys from.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", S3_KEY.to_string()),
            ("AWS_SECRET_ACCESS_KEY", S3_SECRET.to_string()),
            ("AWS_REGION", "us-east-1".to_string()),
            ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", self.port)),
        ]
    }

    /// The files under `prefix` of the bucket.
    pub fn files(&self, prefix: &str) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() { walk(&path, out) } else { out.push(path) }
            }
        }
        let mut out = Vec::new();
        walk(&self.root.path().join(BUCKET).join(prefix), &mut out);
        out
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
