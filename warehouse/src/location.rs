//! Where a warehouse is: its catalog and its data files.
//!
//! - One machine: a directory, `DIR/catalog.sqlite` (iceberg's SQL catalog on sqlite) and `DIR/data/`.
//! - A fleet: a PostgreSQL catalog, `postgres://USER@HOST[:PORT]/DB`, and an S3 prefix, `s3://BUCKET/PREFIX`.
//!   Secrets never come from argv (visible in `ps` and shell history) nor land in records: the password comes
//!   from `PGPASSWORD` or `~/.pgpass` (read by the driver), the S3 keys from `AWS_ACCESS_KEY_ID`,
//!   `AWS_SECRET_ACCESS_KEY`, with `AWS_REGION` and `AWS_ENDPOINT_URL` (an S3-compatible server).
//! - A REST catalog, `rest://HOST[:PORT]/PREFIX` (see [`Rest`]), with `--storage s3://BUCKET/PREFIX` when the
//!   server keeps its tables on S3.
//!
//! Before anything is written, [`Location::check`] asks each server once, so that an unreachable catalog,
//! refused credentials or a missing bucket is a one-line error in about a second, not the pool's 30 s timeout
//! or a bucket created by a lenient server.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use iceberg::io::{
    S3_ACCESS_KEY_ID, S3_DISABLE_EC2_METADATA, S3_ENDPOINT, S3_PATH_STYLE_ACCESS, S3_REGION, S3_SECRET_ACCESS_KEY,
};
use opendal::Operator;
use sqlx::Connection;
use url::Url;

use crate::rest::Rest;
use crate::schema::NAMESPACE;

/// How long a server has to answer the first question.
const PROBE: Duration = Duration::from_secs(5);

/// Where a warehouse is.
#[derive(Debug, Clone)]
pub enum Location {
    /// One machine: a directory with the sqlite catalog and the data.
    Dir(PathBuf),
    /// A fleet: a PostgreSQL catalog and data on S3.
    Fleet { catalog: Url, data: Box<S3> },
    /// A REST catalog, and the S3 store its server places the table on (none: this machine's filesystem).
    Rest { catalog: Box<Rest>, data: Option<Box<S3>> },
}

/// An S3 prefix and how to reach it.
#[derive(Debug, Clone)]
pub struct S3 {
    pub bucket: String,
    /// The key prefix, without slashes at either end (may be empty).
    pub prefix: String,
    /// An S3-compatible server (`AWS_ENDPOINT_URL`); AWS itself when absent.
    pub endpoint: Option<String>,
    pub region: String,
    key_id: Option<String>,
    secret: Option<String>,
}

const SCHEMES: &str =
    "a directory, postgres://USER@HOST[:PORT]/DB with --storage s3://BUCKET/PREFIX, or rest://HOST[:PORT]/PREFIX";

impl Location {
    /// The location named by `--warehouse` (and `--storage`), with the S3 keys from the environment.
    pub fn parse(warehouse: &str, storage: Option<&str>) -> Result<Location> {
        let Some((scheme, _)) = warehouse.split_once("://") else {
            if let Some(storage) = storage {
                bail!(
                    "--storage {storage} goes with a catalog URI; the warehouse directory {warehouse} holds its data"
                );
            }
            return Ok(Location::Dir(PathBuf::from(warehouse)));
        };
        if scheme == "rest" {
            let data = storage.map(S3::parse).transpose()?.map(Box::new);
            return Ok(Location::Rest { catalog: Box::new(Rest::parse(warehouse)?), data });
        }
        if !matches!(scheme, "postgres" | "postgresql") {
            bail!("--warehouse {warehouse}: unknown scheme `{scheme}://`; give {SCHEMES}");
        }
        let catalog = Url::parse(warehouse).with_context(|| format!("--warehouse {warehouse}"))?;
        if catalog.password().is_some() {
            bail!(
                "--warehouse: the catalog URI holds a password, which every user of this machine can read in `ps`; \
                 give it in PGPASSWORD or ~/.pgpass"
            );
        }
        let storage = storage.ok_or_else(|| anyhow!("--warehouse {warehouse} needs --storage s3://BUCKET/PREFIX"))?;
        Ok(Location::Fleet { catalog, data: Box::new(S3::parse(storage)?) })
    }

    /// The location for messages (holds no secret: neither form can).
    pub fn describe(&self) -> String {
        match self {
            Location::Dir(dir) => dir.display().to_string(),
            Location::Fleet { catalog, data } => format!("{catalog} with data in {}", data.url()),
            Location::Rest { catalog, data: Some(data) } => {
                format!("{} with data in {}", catalog.describe(), data.url())
            }
            Location::Rest { catalog, data: None } => catalog.describe(),
        }
    }

    /// The S3 store of the data, if it is on one.
    pub fn s3(&self) -> Option<&S3> {
        match self {
            Location::Dir(_) | Location::Rest { data: None, .. } => None,
            Location::Fleet { data, .. } | Location::Rest { data: Some(data), .. } => Some(data),
        }
    }

    /// The namespace of the records table, level by level.
    pub fn namespace(&self) -> Vec<String> {
        match self {
            Location::Rest { catalog, .. } => catalog.namespace.clone(),
            Location::Dir(_) | Location::Fleet { .. } => vec![NAMESPACE.to_string()],
        }
    }

    /// Asks the catalog and the object store once, so that each problem is one line before anything is
    /// written: the catalog does not answer, it refuses the credentials, the bucket does not exist or refuses
    /// the keys.
    pub async fn check(&self) -> Result<()> {
        match self {
            Location::Dir(_) => return Ok(()),
            Location::Rest { catalog, .. } => catalog.check(PROBE).await?,
            Location::Fleet { catalog, .. } => check_postgres(catalog).await?,
        }
        let Some(data) = self.s3() else { return Ok(()) };
        let (operator, dir) = (data.operator()?, data.dir());
        let list = operator.list_with(&dir).limit(1);
        match tokio::time::timeout(PROBE, list).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => bail!("the storage {}: {}", data.url(), e.to_string().lines().next().unwrap_or("")),
            Err(_) => bail!("the storage {} does not answer within {} s", data.url(), PROBE.as_secs()),
        }
    }
}

/// Connects to the PostgreSQL catalog and logs in once.
async fn check_postgres(catalog: &Url) -> Result<()> {
    let host = catalog.host_str().unwrap_or("localhost");
    let port = catalog.port().unwrap_or(5432);
    let connect = tokio::net::TcpStream::connect((host, port));
    match tokio::time::timeout(PROBE, connect).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => bail!("the catalog {catalog} does not answer: {e}"),
        Err(_) => bail!("the catalog {catalog} does not answer within {} s", PROBE.as_secs()),
    }
    let login = sqlx::PgConnection::connect(catalog.as_str());
    match tokio::time::timeout(PROBE, login).await {
        Ok(Ok(connection)) => drop(connection.close().await),
        Ok(Err(e)) => bail!("the catalog {catalog} refused the connection: {e}"),
        Err(_) => bail!("the catalog {catalog} did not let us log in within {} s", PROBE.as_secs()),
    }
    Ok(())
}

impl S3 {
    fn parse(storage: &str) -> Result<S3> {
        let url = Url::parse(storage).with_context(|| format!("--storage {storage}"))?;
        if url.scheme() != "s3" {
            bail!("--storage {storage}: unknown scheme `{}://`; give s3://BUCKET/PREFIX", url.scheme());
        }
        let bucket = url.host_str().filter(|b| !b.is_empty());
        let bucket = bucket.ok_or_else(|| anyhow!("--storage {storage}: no bucket; give s3://BUCKET/PREFIX"))?;
        let env = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        Ok(S3 {
            bucket: bucket.to_string(),
            prefix: url.path().trim_matches('/').to_string(),
            endpoint: env("AWS_ENDPOINT_URL"),
            region: env("AWS_REGION").unwrap_or_else(|| "us-east-1".to_string()),
            key_id: env("AWS_ACCESS_KEY_ID"),
            secret: env("AWS_SECRET_ACCESS_KEY"),
        })
    }

    /// `s3://BUCKET/PREFIX`.
    pub fn url(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.prefix).trim_end_matches('/').to_string()
    }

    /// The prefix as a directory of the bucket: `PREFIX/`, or the bucket's root.
    pub fn dir(&self) -> String {
        if self.prefix.is_empty() { String::new() } else { format!("{}/", self.prefix) }
    }

    /// Iceberg's FileIO properties for this store. A local S3-compatible server is addressed by path, and
    /// no credential is ever looked for at the EC2 metadata address (nothing beyond the given endpoint).
    pub fn properties(&self) -> HashMap<String, String> {
        let mut props = HashMap::from([(S3_REGION.to_string(), self.region.clone())]);
        if let Some(endpoint) = &self.endpoint {
            props.insert(S3_ENDPOINT.to_string(), endpoint.clone());
            props.insert(S3_PATH_STYLE_ACCESS.to_string(), "true".to_string());
            props.insert(S3_DISABLE_EC2_METADATA.to_string(), "true".to_string());
        }
        if let (Some(id), Some(secret)) = (&self.key_id, &self.secret) {
            props.insert(S3_ACCESS_KEY_ID.to_string(), id.clone());
            props.insert(S3_SECRET_ACCESS_KEY.to_string(), secret.clone());
        }
        props
    }

    /// An opendal operator on the bucket, for what FileIO cannot do: list.
    pub fn operator(&self) -> Result<Operator> {
        let mut builder = opendal::services::S3::default().bucket(&self.bucket).region(&self.region);
        if let Some(endpoint) = &self.endpoint {
            builder = builder.endpoint(endpoint).disable_ec2_metadata();
        } else {
            builder = builder.enable_virtual_host_style();
        }
        if let (Some(id), Some(secret)) = (&self.key_id, &self.secret) {
            builder = builder.access_key_id(id).secret_access_key(secret);
        }
        Ok(Operator::new(builder)?.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn error(warehouse: &str, storage: Option<&str>) -> String {
        Location::parse(warehouse, storage).unwrap_err().to_string()
    }

    #[test]
    fn a_directory_a_fleet_and_what_is_refused() {
        assert!(matches!(Location::parse("wh", None).unwrap(), Location::Dir(d) if d == Path::new("wh")));
        let fleet = Location::parse("postgres://bench@127.0.0.1:5433/wh", Some("s3://results/nightly/")).unwrap();
        let Location::Fleet { catalog, data } = &fleet else { panic!("{fleet:?}") };
        assert_eq!((catalog.port(), data.bucket.as_str(), data.prefix.as_str()), (Some(5433), "results", "nightly"));
        assert_eq!((data.url(), data.dir()), ("s3://results/nightly".to_string(), "nightly/".to_string()));
        assert!(error("mysql://h/db", None).contains("unknown scheme `mysql://`"));
        assert!(error("thrift://h/catalog", Some("s3://b")).contains("unknown scheme `thrift://`"));
        let rest = Location::parse("rest://127.0.0.1:8181/dev?namespace=bronze.benchhost", None).unwrap();
        assert_eq!(
            (rest.describe(), rest.namespace()),
            ("rest://127.0.0.1:8181/dev".into(), vec!["bronze".to_string(), "benchhost".to_string()])
        );
        assert!(rest.s3().is_none());
        let on_s3 = Location::parse("rest://h/dev", Some("s3://results/wh")).unwrap();
        assert_eq!(on_s3.describe(), "rest://h/dev with data in s3://results/wh");
        assert!(error("postgres://u:hunter2@h/db", Some("s3://b")).contains("PGPASSWORD"));
        assert!(!error("postgres://u:hunter2@h/db", Some("s3://b")).contains("hunter2"));
        assert!(error("postgres://u@h/db", None).contains("needs --storage"));
        assert!(error("postgres://u@h/db", Some("gs://b/p")).contains("unknown scheme `gs://`"));
        assert!(error("postgres://u@h/db", Some("s3:///p")).contains("no bucket"));
        assert!(error("wh", Some("s3://b/p")).contains("goes with a catalog URI"));
    }
}
