//! The PostgreSQL backend: a pool of `tokio-postgres` connections
//! (`deadpool-postgres`), each operation one statement or one transaction on a
//! pooled connection, so several replicas can share one database. Where SQLite
//! relies on its single writer, this backend locks rows instead: a session's row
//! while its messages get their sequences, a task's row while it gets a run, the
//! queue row it claims (`FOR UPDATE SKIP LOCKED`), and one advisory lock while a
//! task event is numbered, so the event log's sequence follows commit order.

/// Runs `$body` (which may use `?`) in a transaction `$tx` on a pooled connection
/// of `$store`, commits it, and converts the answer: on any error the transaction
/// is rolled back as it drops.
macro_rules! in_transaction {
    ($store:expr, $tx:ident => $body:expr) => {{
        let mut c = $store.client().await?;
        let r = async {
            let $tx = c.transaction().await?;
            let out = $body;
            $tx.commit().await?;
            Ok(out)
        }
        .await;
        $store.done(r)
    }};
}

mod a2a;
mod approvals;
mod audit;
mod cached;
mod capabilities;
mod connect;
mod cooldowns;
mod database;
mod flow_chats;
mod gateway_conversations;
mod keys;
mod leases;
mod mcp_tokens;
mod memory;
mod messages;
pub mod migrations;
mod op_error;
mod partial;
mod pool;
mod runs;
mod session_choices;
mod sessions;
mod stored_row;
mod tasks;
mod tls;
mod traces;
mod turns;
mod values;

pub use crate::store::pool_settings::{
    DEFAULT_MAX_CONNS, MAX_CONNS_LIMIT, PoolSettings, PoolStatus,
};
pub use database::PostgresStore;
pub(crate) use op_error::{OpError, OpResult};
pub(crate) use values::{big, conflict, is_unique_violation, limit};
