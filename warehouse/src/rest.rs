//! An Iceberg REST catalog: `rest://HOST[:PORT]/PREFIX[?namespace=A.B]`, spoken over HTTP.
//!
//! The server owns the table's metadata: it writes each metadata file and swaps its pointer only if the
//! commit's requirements (the table's UUID, the main branch still at the snapshot publish checked) hold, so a
//! commit is a compare-and-swap there as it is in the SQL catalog. It assigns the table's location too; data
//! files go where it points, on S3 with `--storage` (the endpoint and keys to write there) or on this machine's
//! filesystem. The bearer token comes from `ICEBERG_REST_TOKEN`, never from argv or the URI.
//!
//! Some servers place tables only under namespaces of their choosing (lakana: `bronze`, `silver`, `gold`):
//! `?namespace=bronze.benchhost` picks the namespace, `benchhost` by default.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use iceberg_catalog_rest::REST_CATALOG_PROP_URI;
use url::Url;

use crate::schema::NAMESPACE;

/// The variable that holds the bearer token.
pub const TOKEN: &str = "ICEBERG_REST_TOKEN";

/// A REST catalog and where its table is.
#[derive(Debug, Clone)]
pub struct Rest {
    /// `http://HOST:PORT`.
    pub uri: String,
    /// The path segment after `/v1/` that names the catalog on the server (may be empty).
    pub prefix: String,
    /// The namespace of the records table, level by level.
    pub namespace: Vec<String>,
    token: Option<String>,
}

impl Rest {
    /// `rest://HOST[:PORT]/PREFIX[?namespace=A.B]`, with the token from the environment.
    pub fn parse(warehouse: &str) -> Result<Rest> {
        let url = Url::parse(warehouse).with_context(|| format!("--warehouse {warehouse}"))?;
        if !url.username().is_empty() || url.password().is_some() {
            bail!(
                "--warehouse: the catalog URI holds a credential, which every user of this machine can read in \
                 `ps`; give the token in {TOKEN}"
            );
        }
        let host = url.host_str().filter(|h| !h.is_empty());
        let host = host.ok_or_else(|| anyhow!("--warehouse {warehouse}: no host; give rest://HOST[:PORT]/PREFIX"))?;
        let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
        let mut namespace = vec![NAMESPACE.to_string()];
        for (key, value) in url.query_pairs() {
            match &*key {
                "namespace" if !value.is_empty() => namespace = value.split('.').map(str::to_string).collect(),
                _ => bail!("--warehouse {warehouse}: unknown option `{key}`; the one option is namespace=A.B"),
            }
        }
        Ok(Rest {
            uri: format!("http://{host}{port}"),
            prefix: url.path().trim_matches('/').to_string(),
            namespace,
            token: std::env::var(TOKEN).ok().filter(|t| !t.is_empty()),
        })
    }

    /// `rest://HOST:PORT/PREFIX`, without secrets.
    pub fn describe(&self) -> String {
        format!("{}/{}", self.uri.replacen("http://", "rest://", 1), self.prefix).trim_end_matches('/').to_string()
    }

    /// iceberg-catalog-rest's properties: the server, the prefix, the token.
    pub fn properties(&self) -> HashMap<String, String> {
        let mut props = HashMap::from([(REST_CATALOG_PROP_URI.to_string(), self.uri.clone())]);
        if !self.prefix.is_empty() {
            props.insert("prefix".to_string(), self.prefix.clone());
        }
        if let Some(token) = &self.token {
            props.insert("token".to_string(), token.clone());
        }
        props
    }

    /// Lists the catalog's namespaces once, so that a server that does not answer, a token it refuses or a
    /// prefix it does not know is one line before anything is written (the client's own errors carry the
    /// response's headers).
    pub async fn check(&self, probe: Duration) -> Result<()> {
        let catalog = self.describe();
        let client = reqwest::Client::builder().timeout(probe).build()?;
        let mut url = format!("{}/v1/", self.uri);
        if !self.prefix.is_empty() {
            url.push_str(&self.prefix);
            url.push('/');
        }
        url.push_str("namespaces");
        let mut request = client.get(&url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) if e.is_timeout() => bail!("the catalog {catalog} does not answer within {} s", probe.as_secs()),
            Err(e) => bail!("the catalog {catalog} does not answer: {}", innermost(&e)),
        };
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let detail = response.text().await.unwrap_or_default();
        let detail = detail.lines().next().unwrap_or("").trim();
        match status.as_u16() {
            401 | 403 => bail!("the catalog {catalog} refused the token in {TOKEN} ({status}): {detail}"),
            404 => bail!("the catalog {catalog} has no catalog `{}` (404): {detail}", self.prefix),
            _ => bail!("the catalog {catalog} answered {status}: {detail}"),
        }
    }
}

/// The innermost cause of an error: `connection refused`, not the URL again.
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = error;
    while let Some(source) = inner.source() {
        inner = source;
    }
    inner.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rest_uri_gives_the_server_the_prefix_and_the_namespace() {
        let rest = Rest::parse("rest://127.0.0.1:8181/dev?namespace=bronze.benchhost").unwrap();
        assert_eq!((rest.uri.as_str(), rest.prefix.as_str()), ("http://127.0.0.1:8181", "dev"));
        assert_eq!(rest.namespace, ["bronze", "benchhost"]);
        assert_eq!(rest.describe(), "rest://127.0.0.1:8181/dev");
        let plain = Rest::parse("rest://catalog.internal").unwrap();
        assert_eq!(
            (plain.uri.as_str(), plain.prefix.as_str(), plain.describe().as_str()),
            ("http://catalog.internal", "", "rest://catalog.internal")
        );
        assert_eq!(plain.namespace, ["benchhost"]);
        let error = |uri: &str| Rest::parse(uri).unwrap_err().to_string();
        assert!(error("rest://me:s3cret@h/dev").contains(TOKEN));
        assert!(!error("rest://me:s3cret@h/dev").contains("s3cret"));
        assert!(error("rest://h/dev?warehouse=x").contains("unknown option `warehouse`"));
    }
}
