//! The `PostgresStore` handle: opening its pool, migrating, and the backend's
//! health report; `done` turns an operation's error into the domain error.

use super::op_error::{OpError, OpResult};
use super::pool::trim_idle;
use super::{connect, migrations};
use crate::domain::error::{HecateError, Result};
use crate::store::pool_settings::{PoolSettings, PoolStatus};
use crate::store::{Store, StoreFailure, StoreHealth};
use async_trait::async_trait;
use deadpool_postgres::{Object, Pool};

/// A Hecate store in one PostgreSQL database.
pub struct PostgresStore {
    pool: Pool,
    settings: PoolSettings,
    pub(super) location: String,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.location)
            .finish()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:pass@host:port/db`) and
    /// applies the migrations this build knows; a database whose schema is newer
    /// than this build is refused.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_with(url, PoolSettings::default()).await
    }

    /// `connect` with a pool of `settings`' size: at most `max_conns` connections,
    /// of which at most `max_idle` stay open unused.
    pub async fn connect_with(url: &str, settings: PoolSettings) -> Result<Self> {
        let (pool, location) = connect::open_pool(url, settings.max_conns).await?;
        trim_idle(&pool, settings);
        let store = Self {
            pool,
            settings,
            location,
        };
        store.migrate().await?;
        Ok(store)
    }

    /// Connects to the database at `url` without migrating it (for `hecate store
    /// status`, which reports what is applied).
    pub async fn connect_unmigrated(url: &str) -> Result<Self> {
        let settings = PoolSettings {
            max_conns: 2,
            max_idle: 2,
        };
        let (pool, location) = connect::open_pool(url, settings.max_conns).await?;
        Ok(Self {
            pool,
            settings,
            location,
        })
    }

    /// The pool's settings and how many connections it holds open and idle now.
    pub fn pool_status(&self) -> PoolStatus {
        PoolStatus::of(self.settings, &self.pool.status())
    }

    /// The database location, its password left out.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The migrations applied to this database, oldest first.
    pub async fn applied_migrations(&self) -> Result<Vec<migrations::Applied>> {
        let c = self.client().await?;
        let applied = migrations::applied(&c).await;
        self.done(applied)
    }

    /// Applies the migrations this build knows; answers the version reached.
    pub async fn migrate(&self) -> Result<i64> {
        let mut c = self.client().await?;
        let migrated = migrations::migrate(&mut c).await;
        self.done(migrated.map_err(|e| self.explain_privileges(e)))
    }

    /// A migration the user may not run, as an error naming the fix.
    fn explain_privileges(&self, e: OpError) -> OpError {
        let OpError::Pg(pg) = &e else { return e };
        if pg.code() != Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
            return e;
        }
        let reason = pg
            .as_db_error()
            .map_or_else(|| pg.to_string(), |d| d.message().to_string());
        HecateError::store(format!(
            "{}: cannot create Hecate's tables: {reason}",
            self.location
        ))
        .with_operator_action(
            "Let the store URL's user create tables: make it the database's owner \
             (ALTER DATABASE name OWNER TO user) or GRANT CREATE ON SCHEMA public TO it, \
             then start again.",
        )
        .with_detail("database", self.location.clone())
        .into()
    }

    /// A pooled connection, or a store error naming the database.
    pub(crate) async fn client(&self) -> Result<Object> {
        self.pool.get().await.map_err(|e| {
            let (reason, fix) = connect::explain(&e, None);
            HecateError::store(format!(
                "{}: no database connection: {reason}",
                self.location
            ))
            .with_operator_action(fix)
            .with_detail("database", self.location.clone())
        })
    }

    /// Converts an operation's answer into the domain's, naming the database.
    pub(super) fn done<T>(&self, r: OpResult<T>) -> Result<T> {
        r.map_err(|e| match e {
            OpError::Domain(d) => d,
            OpError::Pg(source) => StoreFailure::Postgres {
                location: self.location.clone(),
                source,
            }
            .into(),
            OpError::Json(source) => StoreFailure::Json {
                location: self.location.clone(),
                source,
            }
            .into(),
        })
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn health(&self) -> Result<StoreHealth> {
        let c = self.client().await?;
        let r: OpResult<(i64, i64)> = async {
            let version = migrations::current_version(&c).await?;
            let size: i64 = c
                .query_one("SELECT pg_database_size(current_database())", &[])
                .await?
                .get(0);
            Ok((version, size))
        }
        .await;
        let (schema_version, size) = self.done(r)?;
        Ok(StoreHealth {
            backend: "postgres".into(),
            location: self.location.clone(),
            schema_version,
            size_bytes: size.max(0) as u64,
            integrity: "ok".into(),
            pool: Some(self.pool_status()),
        })
    }
}
