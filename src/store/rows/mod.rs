//! How a stored row becomes a domain value (and a new value the record it is
//! stored as), written once for both backends: each record kind's column list
//! and decoder here, each backend's row type behind
//! `StoredRow` (`sqlite/stored_row.rs`, `postgres/stored_row.rs`), so the two
//! backends cannot drift apart in what a column means.

pub mod a2a;
pub mod approvals;
pub mod audit;
pub mod flow_chats;
pub mod gateway_conversations;
pub mod messages;
pub mod runs;
pub mod sessions;
mod stored_row;
pub mod tasks;
pub mod traces;

pub(crate) use stored_row::{Column, Corrupt, StoredRow};
