//! Openers of one PostgreSQL catalog taking turns, one at a time, under an advisory lock: iceberg creates the
//! catalog's tables on every open, and two openers racing to create them on PostgreSQL fail (see `connect_sql`
//! in `catalog`).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use sqlx::Connection;
use url::Url;

/// Openers of one PostgreSQL catalog take turns under this advisory lock (a session's, released when its
/// connection closes, so a publisher killed while holding it frees it). Its key is the hash of a text: a test or
/// an operator takes the same lock with the same query.
pub(crate) const CATALOG_LOCK: &str = "SELECT pg_advisory_lock(hashtext('benchhost: creating the catalog'))";
/// Opening takes milliseconds; an opener that holds the lock this long is stuck, and the wait ends in an error.
const TURN: Duration = Duration::from_secs(120);

/// A connection to the PostgreSQL catalog at `uri` that holds [`CATALOG_LOCK`].
pub(crate) async fn catalog_turn(uri: &Url) -> Result<sqlx::PgConnection> {
    let mut connection = sqlx::PgConnection::connect(uri.as_str()).await?;
    let lock = sqlx::query(CATALOG_LOCK).execute(&mut connection);
    match tokio::time::timeout(TURN, lock).await {
        Ok(locked) => _ = locked.context("waiting for the catalog's lock")?,
        Err(_) => bail!("another opener has held the catalog's lock for {} s ({CATALOG_LOCK})", TURN.as_secs()),
    }
    Ok(connection)
}
