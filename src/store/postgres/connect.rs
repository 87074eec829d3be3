//! Opening the connection pool: parsing the store URL, trying one connection at
//! once so a wrong URL, a wrong password, a missing database or an unreachable
//! server is a clear startup error naming the fix, never a failure later.

use crate::domain::error::{HecateError, Result};
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod};
use std::str::FromStr;
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Config, NoTls};

/// How long one connection attempt may take unless the URL says otherwise.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an operation waits for a free pooled connection.
const WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// `url` with its password replaced by `***`, for messages and `hecate store status`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some(parts) => parts,
        None => return url.to_string(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

/// Parses `url`, builds a pool of at most `size` connections and checks that one
/// connection can be made; answers the pool and the redacted location.
pub(super) async fn open_pool(url: &str, size: usize) -> Result<(Pool, String)> {
    let location = redact_url(url);
    let mut config = Config::from_str(url).map_err(|e| {
        HecateError::store(format!(
            "invalid PostgreSQL store URL {location}: {e} \
             (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)"
        ))
        .with_detail("database", location.clone())
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("hecate");
    }
    let manager = Manager::from_config(
        config.clone(),
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(size.max(1))
        .wait_timeout(Some(WAIT_TIMEOUT))
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .build()
        .map_err(|e| HecateError::store(format!("cannot build the pool for {location}: {e}")))?;
    if let Err(e) = pool.get().await {
        return Err(HecateError::store(format!(
            "cannot open PostgreSQL store {location}: {}",
            describe(&e, &config)
        ))
        .with_detail("database", location));
    }
    Ok((pool, location))
}

/// Why a pooled connection could not be had, with the fix when it is known.
pub(super) fn describe_pool_error(e: &PoolError) -> String {
    match e {
        PoolError::Backend(e) => describe_pg(e, None),
        PoolError::Timeout(_) => {
            "every pooled connection stayed busy (the database is overloaded or a \
             transaction hangs)"
                .to_string()
        }
        other => other.to_string(),
    }
}

fn describe(e: &PoolError, config: &Config) -> String {
    match e {
        PoolError::Backend(e) => describe_pg(e, Some(config)),
        other => describe_pool_error(other),
    }
}

/// A connection error in words, with the fix for the usual causes.
fn describe_pg(e: &tokio_postgres::Error, config: Option<&Config>) -> String {
    let user = config.and_then(|c| c.get_user()).unwrap_or("?").to_string();
    let db = config
        .and_then(|c| c.get_dbname())
        .map(str::to_string)
        .unwrap_or_else(|| user.clone());
    if let Some(db_error) = e.as_db_error() {
        let code = db_error.code();
        let fix = if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            format!(
                " (PostgreSQL refused the login of user {user:?}: check the user and \
                 password in the store URL)"
            )
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            format!(
                " (create the database, e.g. `createdb {db}`, or fix its name in the \
                 store URL)"
            )
        } else {
            String::new()
        };
        return format!("{}{fix}", db_error.message());
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return format!(
                "cannot reach the server: {io} (is PostgreSQL running and listening at \
                 the host and port of the store URL?)"
            );
        }
        source = s.source();
    }
    if e.to_string().contains("timeout") {
        return format!(
            "{e} (is PostgreSQL running and reachable at the host and port of the store URL?)"
        );
    }
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_the_password_only() {
        assert_eq!(
            redact_url("postgres://me:secret@db:5432/hecate"),
            "postgres://me:***@db:5432/hecate"
        );
        assert_eq!(
            redact_url("postgres://me@db/hecate"),
            "postgres://me@db/hecate"
        );
        assert_eq!(redact_url("nonsense"), "nonsense");
    }
}
