//! Opening the connection pool: parsing the store URL (with its TLS settings),
//! trying one connection at once so a wrong URL, a wrong password, a missing
//! database, an unreachable server or a refused certificate is a clear startup
//! error naming the fix, never a failure later.

use super::tls;
use crate::domain::error::{HecateError, Result};
use crate::domain::redact::redact_url;
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod};
use std::str::FromStr;
use std::time::Duration;
use tokio_postgres::Config;
use tokio_postgres::error::SqlState;

/// How long one connection attempt may take unless the URL says otherwise.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an operation waits for a free pooled connection.
const WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Parses `url`, builds a pool of at most `size` connections and checks that one
/// connection can be made; answers the pool and the redacted location.
pub(super) async fn open_pool(url: &str, size: usize) -> Result<(Pool, String)> {
    let location = redact_url(url);
    let split = tls::split_url(url, &location)?;
    let connector = tls::connector(&split.tls, &location)?;
    let mut config = Config::from_str(&split.url).map_err(|e| {
        HecateError::invalid(format!("invalid PostgreSQL store URL {location}: {e}"))
            .with_operator_action(
                "Write the store URL as postgres:// followed by USER:PASSWORD@HOST:PORT/DATABASE \
                 (percent-encode special characters in the password).",
            )
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
        connector,
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
        let (reason, fix) = explain(&e, Some(&config));
        return Err(HecateError::store(format!(
            "cannot open PostgreSQL store {location}: {reason}"
        ))
        .with_operator_action(fix)
        .with_detail("database", location));
    }
    Ok((pool, location))
}

/// Why a pooled connection could not be had, and the fix when it is known.
pub(super) fn explain(e: &PoolError, config: Option<&Config>) -> (String, String) {
    match e {
        PoolError::Backend(e) => explain_pg(e, config),
        PoolError::Timeout(_) => (
            "every pooled connection stayed busy".to_string(),
            "The database is overloaded or a transaction hangs: check the server's \
             activity (pg_stat_activity)."
                .to_string(),
        ),
        other => (other.to_string(), CHECK_SERVER.to_string()),
    }
}

const CHECK_SERVER: &str = "Check that PostgreSQL runs and listens at the host and port of the \
     store URL (--store, HECATE_STORE_URL or [store] url), and that nothing blocks the way.";

/// A connection error in words, with the fix for the usual causes.
fn explain_pg(e: &tokio_postgres::Error, config: Option<&Config>) -> (String, String) {
    let host = match config.and_then(|c| c.get_hosts().first()) {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "?".to_string(),
    };
    if let Some(explained) = tls::explain(e, &host) {
        return explained;
    }
    let user = config.and_then(|c| c.get_user()).unwrap_or("?").to_string();
    let db = config
        .and_then(|c| c.get_dbname())
        .map(str::to_string)
        .unwrap_or_else(|| user.clone());
    if let Some(db_error) = e.as_db_error() {
        let code = db_error.code();
        // pg_hba.conf lets this client in only over TLS ("..., no encryption").
        let plain_refused = *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            && db_error.message().ends_with("no encryption");
        let fix = if plain_refused {
            "The server accepts this connection only over TLS: add sslmode=require (or \
             sslmode=verify-full with sslrootcert) to the store URL."
                .to_string()
        } else if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            format!(
                "PostgreSQL refused the login of user {user:?}: check the user and password \
                 in the store URL."
            )
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            format!("Create the database (`createdb {db}`) or fix its name in the store URL.")
        } else {
            CHECK_SERVER.to_string()
        };
        return (db_error.message().to_string(), fix);
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return (
                format!("cannot reach the server: {io}"),
                CHECK_SERVER.to_string(),
            );
        }
        source = s.source();
    }
    (e.to_string(), CHECK_SERVER.to_string())
}
