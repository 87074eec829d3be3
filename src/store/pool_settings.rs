//! How big a PostgreSQL store's connection pool is (`[store] max_conns`,
//! `max_idle`) and what it holds: plain data the config validates into and
//! `hecate doctor` and `hecate store status` show.

use serde::Serialize;

/// Connections a store opens unless told otherwise.
pub const DEFAULT_MAX_CONNS: usize = 16;

/// The most connections one store may be told to open.
pub const MAX_CONNS_LIMIT: usize = 1000;

/// How many connections the pool opens and keeps idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PoolSettings {
    /// Most connections open at once (1 to [`MAX_CONNS_LIMIT`]).
    pub max_conns: usize,
    /// Most unused connections kept open (0 to `max_conns`).
    pub max_idle: usize,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_conns: DEFAULT_MAX_CONNS,
            max_idle: DEFAULT_MAX_CONNS,
        }
    }
}

/// A pool's settings and what it holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PoolStatus {
    /// Most connections open at once.
    pub max_conns: usize,
    /// Most unused connections kept open.
    pub max_idle: usize,
    /// Connections open now.
    pub open: usize,
    /// Open connections nobody uses now.
    pub idle: usize,
}

impl PoolStatus {
    /// The status of `pool` under `settings`.
    pub fn of(settings: PoolSettings, status: &deadpool_postgres::Status) -> Self {
        Self {
            max_conns: settings.max_conns,
            max_idle: settings.max_idle,
            open: status.size,
            idle: status.available,
        }
    }
}
