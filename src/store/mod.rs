//! Persistence behind one set of async traits. The SQLite backend (a file, or
//! `:memory:` for the in-memory backend) and the PostgreSQL backend (one database
//! several replicas share) implement all of them, to the same contract, checked
//! by the one conformance suite in `tests/e2e/store_conformance.rs`.

pub mod a2a;
pub mod capabilities;
mod contract;
pub mod cooldowns;
pub mod flow_chats;
pub mod gateway_conversations;
pub mod history;
pub mod journal;
pub mod keys;
mod load_options;
pub mod mcp_tokens;
pub mod memory;
mod partial_answer;
pub mod pool_settings;
pub mod postgres;
pub(crate) mod rows;
pub mod session_choices;
pub mod sqlite;
mod task_transitions;
pub mod tasks;
pub mod transfer;
pub mod turn;

pub use a2a::A2aStore;
pub use capabilities::{CapabilityKey, CapabilityStore};
pub use contract::{
    ApprovalPruning, ApprovalQuery, ApprovalStore, AuditStore, LeaseStore, McpCallRecord,
    McpToolPolicy, MessageStore, OwnerIsDead, PruneReport, ReconcileReport, RunEnd,
    RunStatusUpdate, RunStore, SessionStore, Store, StoreFailure, StoreHealth, TurnStore,
};
pub use cooldowns::{CooldownStore, ProviderCooldown};
pub use flow_chats::FlowChatStore;
pub use gateway_conversations::GatewayConversationStore;
pub use keys::{KeyStore, StoredKey};
pub use load_options::{LoadOptions, MessageCursor};
pub use mcp_tokens::{McpTokenRecord, McpTokenStore};
pub use memory::{MemoryStore, VectorSearch};
pub use postgres::PostgresStore;
pub use session_choices::{ChoiceKind, SessionChoice, SessionChoiceStore};
pub use sqlite::SqliteStore;
pub use turn::{BeginTurn, FinishTurn, NewArtifact, NewRunEvent, TurnBegun, TurnFinished};
