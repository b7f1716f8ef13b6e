//! lakana-server (PyPI), a real Iceberg REST catalog, for the fleet test's REST arm: its metadata database on
//! the test's PostgreSQL, its tables on the test's S3 server, on 127.0.0.1 and a free port, stopped when
//! dropped. `.ci/run` installs it in a cached virtualenv.
//!
//! lakana places tables only under the namespaces `bronze`, `silver` and `gold`, and serves the Iceberg REST
//! API under the name of one of its "environments" (the REST prefix), which holds the storage location.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::servers::{BUCKET, PG_PASSWORD, PG_USER, Postgres, S3_KEY, S3_SECRET, S3Server, free_port, wait_until};

const KEY_ID: &str = "benchhostkey01";
const KEY_SECRET: &str = "benchhostsecret0123456789abcdef";
/// The environment, the REST prefix.
pub const ENVIRONMENT: &str = "fleet";
/// The table's data under the bucket: short, because s3s-fs names a file of its own after each object's key
/// in base64, and lakana's table paths are long (`managed/bronze/benchhost/records-<32 hex digits>/...`).
pub const ROOT: &str = "r";

/// The lakana-server program: BENCHHOST_LAKANA, or where `.ci/run` installs it.
pub fn lakana_bin() -> Option<PathBuf> {
    let cached = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/benchhost/lakana-server-0.20.0/bin/lakana-server"));
    std::env::var_os("BENCHHOST_LAKANA").map(PathBuf::from).or(cached).filter(|p| p.exists())
}

pub struct Lakana {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Lakana {
    pub fn start(binary: &Path, postgres: &Postgres, s3: &S3Server) -> Lakana {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let database = format!("postgresql+pg8000://{PG_USER}:{PG_PASSWORD}@127.0.0.1:{}/postgres", postgres.port);
        let command = || {
            let mut command = Command::new(binary);
            command.current_dir(dir.path()).env("LAKANA_DATABASE__URL", &database);
            command.env("LAKANA_HOST", "127.0.0.1").env("LAKANA_PORT", port.to_string());
            command.env("LAKANA_BOOTSTRAP_PAT_KEY_ID", KEY_ID).env("LAKANA_BOOTSTRAP_PAT_SECRET", KEY_SECRET);
            // Nothing of this machine's AWS configuration, and never the EC2 metadata address.
            command.env("AWS_CONFIG_FILE", "/dev/null").env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null");
            command.env("AWS_EC2_METADATA_DISABLED", "true").stdin(Stdio::null());
            command
        };
        let migrated = command().arg("migrate").output().expect("running lakana-server migrate");
        assert!(migrated.status.success(), "lakana-server migrate: {}", String::from_utf8_lossy(&migrated.stderr));
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let child = command().stdout(log.try_clone().unwrap()).stderr(log).spawn().expect("starting lakana-server");
        let lakana = Lakana { child, port, _dir: dir };
        // The environment: tables on the S3 server, written in one PUT each (pyarrow's multipart uploads name
        // a file of s3s-fs's after the whole key and exceed a file name's 255 bytes).
        let environment = format!(
            r#"{{"name":"{ENVIRONMENT}","storage":{{"scheme":"s3","root":"s3://{BUCKET}/{ROOT}","options":{{
              "s3.endpoint":"http://127.0.0.1:{}","s3.region":"us-east-1","s3.force-virtual-addressing":"false",
              "s3.access-key-id":"{S3_KEY}","s3.secret-access-key":"{S3_SECRET}",
              "py-io-impl":"pyiceberg.io.fsspec.FsspecFileIO"}}}}}}"#,
            s3.port
        );
        let created = || match lakana.request("POST", "/api/v1/environments", &environment) {
            Some((201, _)) => true,
            Some((status, body)) => panic!("lakana refused the environment ({status}): {body}"),
            None => false,
        };
        wait_until(Duration::from_secs(60), "lakana-server did not answer within 60 s", created);
        lakana
    }

    /// The admin's bearer token (`ICEBERG_REST_TOKEN`).
    pub fn token() -> String {
        format!("lakana_pat_{KEY_ID}_{KEY_SECRET}")
    }

    /// The warehouse URI: the environment, and the namespace lakana allows.
    pub fn uri(&self) -> String {
        format!("rest://127.0.0.1:{}/{ENVIRONMENT}?namespace=bronze.benchhost", self.port)
    }

    /// One HTTP/1.1 request with the admin's token: its status and body, or None if nothing listens yet.
    fn request(&self, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            Lakana::token(),
            body.len()
        );
        stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body.as_bytes())).ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let status = response.split(' ').nth(1)?.parse().ok()?;
        Some((status, response))
    }
}

impl Drop for Lakana {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
