//! Statements prepared once per pooled connection. A query given as text is
//! prepared, run and closed every time (two round trips); the turn path's
//! statements go through this cache instead, so each costs one round trip after
//! the connection's first use. Only fixed SQL text belongs here: the cache keeps
//! every distinct text for the connection's life.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// Parameters of a statement.
pub(super) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// `execute`, `query`, `query_opt` and `query_one` over the connection's
/// statement cache.
#[async_trait]
pub(super) trait CachedStatements: GenericClient + Sync {
    /// Runs `sql` and answers the rows it changed.
    async fn execute_cached(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<u64, tokio_postgres::Error> {
        let statement = self.prepare_cached(sql).await?;
        self.execute(&statement, params).await
    }

    /// Runs `sql` and answers its rows.
    async fn query_cached(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let statement = self.prepare_cached(sql).await?;
        self.query(&statement, params).await
    }

    /// Runs `sql` and answers its row, if any (more than one is an error).
    async fn query_opt_cached(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        let statement = self.prepare_cached(sql).await?;
        self.query_opt(&statement, params).await
    }

    /// Runs `sql` and answers its one row (none or more is an error).
    async fn query_one_cached(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Row, tokio_postgres::Error> {
        let statement = self.prepare_cached(sql).await?;
        self.query_one(&statement, params).await
    }
}

impl<C: GenericClient + Sync> CachedStatements for C {}

/// Prepares every statement of `sqls` the connection has not prepared yet, all
/// at once. A pipelined round calls it first: its statements are then sent in
/// the order they are written, none held back by its own preparation.
pub(super) async fn prepare_all<C: GenericClient>(
    c: &C,
    sqls: &[&str],
) -> Result<(), tokio_postgres::Error> {
    futures::future::try_join_all(sqls.iter().map(|sql| c.prepare_cached(sql))).await?;
    Ok(())
}
