//! Which store a command opens: `--store URL` (or `HECATE_STORE_URL`), else
//! `[store] url` in the config file, else the zero-config default, SQLite in the
//! data directory. `postgres://` (or `postgresql://`) URLs open the PostgreSQL
//! backend; `sqlite:PATH` a SQLite file, `sqlite::memory:` the in-memory store.

use super::GlobalArgs;
use crate::config::Config;
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::redact::redact_url;
use crate::store::pool_settings::PoolSettings;
use crate::store::{PostgresStore, SqliteStore, Store};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::store::sqlite::DB_FILE;

/// A store a command can open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreTarget {
    /// A SQLite database file.
    SqliteFile(PathBuf),
    /// The in-memory SQLite store.
    SqliteMemory,
    /// A PostgreSQL database, by URL.
    Postgres(String),
}

impl StoreTarget {
    /// The store the flags and the config name; `data_dir` holds the default.
    pub fn resolve(
        cli: &GlobalArgs,
        config: Option<&Config>,
        data_dir: &Path,
    ) -> Result<Self, HecateError> {
        let url = cli
            .store
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_string)
            .or_else(|| {
                config
                    .and_then(|c| c.file.store.url.as_deref())
                    .map(str::trim)
                    .filter(|u| !u.is_empty())
                    .map(str::to_string)
            });
        match url {
            Some(url) => Self::parse(&url),
            None if data_dir.as_os_str() == ":memory:" => Ok(Self::SqliteMemory),
            None => Ok(Self::SqliteFile(data_dir.join(DB_FILE))),
        }
    }

    /// Parses a store URL.
    pub fn parse(url: &str) -> Result<Self, HecateError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres(url.to_string()));
        }
        if let Some(rest) = url.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            return Ok(match path {
                ":memory:" => Self::SqliteMemory,
                "" => return Err(unsupported(url)),
                p => Self::SqliteFile(PathBuf::from(p)),
            });
        }
        Err(unsupported(url))
    }

    /// The backend's name.
    pub fn backend(&self) -> &'static str {
        match self {
            Self::SqliteFile(_) | Self::SqliteMemory => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }

    /// Where the store is, passwords left out.
    pub fn location(&self) -> String {
        match self {
            Self::SqliteFile(p) => p.display().to_string(),
            Self::SqliteMemory => crate::store::sqlite::MEMORY_LOCATION.to_string(),
            Self::Postgres(url) => redact_url(url),
        }
    }

    /// Where processes on this store keep their journals of records stored
    /// after the answer: a directory under `data_dir/journal` named for the
    /// store, so a journal is replayed into the store it was meant for. None for
    /// the in-memory store, which a stopped process takes with it.
    pub fn journal_dir(&self, data_dir: &std::path::Path) -> Option<std::path::PathBuf> {
        use sha2::Digest;
        if matches!(self, Self::SqliteMemory) {
            return None;
        }
        let digest = sha2::Sha256::digest(self.location().as_bytes());
        let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        Some(data_dir.join("journal").join(name))
    }

    /// Opens (and migrates) the store; a PostgreSQL store's pool has the size
    /// `pool` says (SQLite keeps its own fixed connections).
    pub async fn open(&self, pool: PoolSettings) -> Result<Arc<dyn Store>, HecateError> {
        Ok(match self {
            Self::SqliteFile(p) => Arc::new(SqliteStore::open(p)?),
            Self::SqliteMemory => Arc::new(SqliteStore::open_in_memory()?),
            Self::Postgres(url) => Arc::new(PostgresStore::connect_with(url, pool).await?),
        })
    }
}

fn unsupported(url: &str) -> HecateError {
    HecateError::new(
        ErrorType::InvalidRequest,
        format!(
            "unsupported store URL {:?}: Hecate stores in PostgreSQL or SQLite",
            redact_url(url)
        ),
    )
    .with_operator_action(
        "Use postgres:// followed by USER:PASSWORD@HOST:PORT/DATABASE, or sqlite:PATH, or \
         leave --store, HECATE_STORE_URL and [store] url unset for SQLite in the data \
         directory.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_backend_and_refuses_the_rest() {
        assert_eq!(
            StoreTarget::parse("postgres://u:p@h/db"),
            Ok(StoreTarget::Postgres("postgres://u:p@h/db".into()))
        );
        assert_eq!(
            StoreTarget::parse("postgresql://h/db").map(|t| t.backend()),
            Ok("postgres")
        );
        assert_eq!(
            StoreTarget::parse("sqlite:/tmp/x.db"),
            Ok(StoreTarget::SqliteFile("/tmp/x.db".into()))
        );
        assert_eq!(
            StoreTarget::parse("sqlite::memory:"),
            Ok(StoreTarget::SqliteMemory)
        );
        let e = StoreTarget::parse("mysql://u:secret@h/db").expect_err("unsupported");
        assert_eq!(e.error_type, ErrorType::InvalidRequest);
        assert!(!e.message.contains("secret"), "{}", e.message);
        assert!(StoreTarget::parse("sqlite:").is_err());
    }

    #[test]
    fn the_location_never_shows_a_password() {
        let t = StoreTarget::parse("postgres://u:secret@h:5432/db").expect("parses");
        assert_eq!(t.location(), "postgres://u:***@h:5432/db");
    }
}
