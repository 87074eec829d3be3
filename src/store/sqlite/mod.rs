//! The SQLite backend: one writer connection on its own thread (every write, each
//! in its transaction; `BEGIN IMMEDIATE` for those that assign sequences) and a pool
//! of reader connections on theirs (WAL lets them read while the writer writes).
//! The in-memory backend runs reads on its writer. Foreign keys on, busy timeout,
//! retries while another process sets up a new file.

mod a2a;
mod approvals;
mod audit;
mod capabilities;
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
mod reads;
mod run_ids;
mod runs;
mod session_choices;
mod sessions;
mod stored_row;
mod tasks;
mod traces;
mod turns;
mod vector_ext;

pub use database::{DB_FILE, DEFAULT_READERS, MEMORY_LOCATION, SqliteStore};
pub(crate) use op_error::{OpResult, StoreOpError};

#[cfg(test)]
mod tests;
