//! The store's contract: one async trait per kind of record, the reports they
//! answer, and `Store`, which every backend implements in full.

use super::a2a::A2aStore;
use super::capabilities::CapabilityStore;
use super::cooldowns::CooldownStore;
use super::flow_chats::FlowChatStore;
use super::gateway_conversations::GatewayConversationStore;
use super::keys::KeyStore;
use super::load_options::LoadOptions;
use super::mcp_tokens::McpTokenStore;
use super::memory::MemoryStore;
use super::pool_settings::PoolStatus;
use super::session_choices::SessionChoiceStore;
use super::tasks::TaskStore;
use super::turn::{BeginTurn, FinishTurn, NewArtifact, NewRunEvent, TurnBegun, TurnFinished};
use crate::domain::approval::{Approval, ApprovalStatus, Grant};
use crate::domain::error::Result;
use crate::domain::ids::{ApprovalId, GrantId, MessageId, RunId, SessionId};
use crate::domain::memory::HistoryStrategy;
use crate::domain::message::{Message, NewMessage};
use crate::domain::provider_call::ProviderCall;
use crate::domain::run::{Run, RunEvent, RunStatus};
use crate::domain::session::{Session, SessionSummary};
use async_trait::async_trait;
use serde::Serialize;
use std::sync::Arc;

/// Says whether an owner id names a process known to be dead (startup reconcile).
pub type OwnerIsDead = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Whether a session's owner is gone for reconcile at `now_ms`: it has no
/// lease, its lease expired, or `is_dead` knows the owner dead.
pub(crate) fn owner_gone(
    owner: Option<String>,
    lease_expires_ms: Option<i64>,
    now_ms: i64,
    is_dead: &OwnerIsDead,
) -> bool {
    match (owner, lease_expires_ms) {
        (Some(o), Some(exp)) => exp < now_ms || is_dead(&o),
        _ => true,
    }
}

/// Session rows, always addressed by (namespace, id).
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Inserts a new session.
    async fn create_session(&self, session: &Session) -> Result<()>;
    /// Reads one session, or `not_found`.
    async fn get_session(&self, namespace: &str, id: &SessionId) -> Result<Session>;
    /// Lists sessions, newest first, with counts.
    async fn list_sessions(&self, namespace: &str, limit: usize) -> Result<Vec<SessionSummary>>;
    /// Overwrites the mutable header fields of a session.
    async fn update_session(&self, session: &Session) -> Result<()>;
    /// Deletes a session and everything it owns, or `not_found`.
    async fn delete_session(&self, namespace: &str, id: &SessionId) -> Result<()>;
}

/// The message and provider-call streams of a session.
#[async_trait]
pub trait MessageStore: Send + Sync {
    /// Appends messages (assigning gap-free sequences) and, when given, the provider
    /// call that produced them, in one transaction.
    async fn append_exchange(
        &self,
        session_id: &SessionId,
        messages: Vec<NewMessage>,
        call: Option<&ProviderCall>,
    ) -> Result<Vec<Message>>;
    /// The messages `options` selects (a page on one side of a sequence, at most
    /// its limit, of its roles only when it names some), in sequence order.
    async fn load_messages(
        &self,
        session_id: &SessionId,
        options: &LoadOptions,
    ) -> Result<Vec<Message>>;
    /// Messages with sequence greater than `after`, in order, at most `limit`.
    async fn list_messages(
        &self,
        session_id: &SessionId,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        self.load_messages(session_id, &LoadOptions::after(after, limit))
            .await
    }
    /// One message of a session by its id (`not_found` when the session has no
    /// such message), read by its key.
    async fn get_message(&self, session_id: &SessionId, id: &MessageId) -> Result<Message>;
    /// The last `n` messages in sequence order, read with an SQL LIMIT.
    async fn last_messages(&self, session_id: &SessionId, n: usize) -> Result<Vec<Message>>;
    /// The sequence of the newest summary message, if any.
    async fn last_summary_sequence(&self, session_id: &SessionId) -> Result<Option<i64>>;
    /// The messages `strategy` gives a runtime, in sequence order, read in one
    /// store operation (the reads `begin_turn` makes inside its transaction).
    async fn load_history(
        &self,
        session_id: &SessionId,
        strategy: HistoryStrategy,
    ) -> Result<Vec<Message>>;
    /// Number of messages in the session.
    async fn count_messages(&self, session_id: &SessionId) -> Result<u64>;
    /// The provider calls of a session, oldest first.
    async fn list_provider_calls(&self, session_id: &SessionId) -> Result<Vec<ProviderCall>>;
    /// Up to `limit` messages with sequence below `before` (the newest when `None`),
    /// in sequence order: a transcript read a page at a time from its end.
    async fn list_messages_before(
        &self,
        session_id: &SessionId,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        self.load_messages(session_id, &LoadOptions::before(before, limit))
            .await
    }
    /// The messages `runs` wrote (each turn's prompt, tool exchanges and answer), in
    /// sequence order, read by run.
    async fn list_run_messages(
        &self,
        session_id: &SessionId,
        runs: &[RunId],
    ) -> Result<Vec<Message>>;
    /// The provider calls `runs` made, oldest first, read by run.
    async fn list_run_provider_calls(
        &self,
        session_id: &SessionId,
        runs: &[RunId],
    ) -> Result<Vec<ProviderCall>>;
    /// Stores an artifact (such as a diff) on a message.
    async fn add_artifact(&self, message_id: &MessageId, artifact: NewArtifact) -> Result<()>;
    /// The artifacts of a message as (kind, path, data).
    async fn list_artifacts(&self, message_id: &MessageId)
    -> Result<Vec<(String, String, String)>>;
}

/// Runs and their ordered event logs.
#[async_trait]
pub trait RunStore: Send + Sync {
    /// Inserts a run.
    async fn create_run(&self, run: &Run) -> Result<()>;
    /// Marks `end.run_id` terminal with an optional error.
    async fn finish_run(&self, end: RunEnd<'_>) -> Result<()>;
    /// Sets a non-terminal status (running / awaiting_approval) on a run and its session.
    async fn set_run_status(&self, update: RunStatusUpdate<'_>) -> Result<()>;
    /// Reads one run.
    async fn get_run(&self, run_id: &RunId) -> Result<Run>;
    /// Runs of a session, oldest first.
    async fn list_runs(&self, session_id: &SessionId) -> Result<Vec<Run>>;
    /// The newest run of a session, if it has one.
    async fn last_run(&self, session_id: &SessionId) -> Result<Option<Run>>;
    /// The runs of a session among `ids`, oldest first; ids it does not have are
    /// left out.
    async fn list_runs_by_id(&self, session_id: &SessionId, ids: &[RunId]) -> Result<Vec<Run>>;
    /// Appends events to a run under the sequences they carry (numbered by the
    /// engine); a sequence the run already has is a `conflict`.
    async fn append_run_events(&self, run_id: &RunId, events: &[NewRunEvent]) -> Result<()>;
    /// Events of a run after `after`, in order.
    async fn list_run_events(&self, run_id: &RunId, after: Option<i64>) -> Result<Vec<RunEvent>>;
    /// Events of every run of a session in one read, grouped by run and in sequence
    /// order within each. Without `delta_data`, `text_delta` and `thought_delta`
    /// events carry `null` data: the bulk of streamed text is neither read nor parsed.
    async fn list_session_run_events(
        &self,
        session_id: &SessionId,
        delta_data: bool,
    ) -> Result<Vec<RunEvent>>;
}

/// How a run ends (see [`RunStore::finish_run`]): its terminal status and,
/// when it failed, the error as (type, message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunEnd<'a> {
    /// The run.
    pub run_id: &'a RunId,
    /// The terminal status.
    pub status: RunStatus,
    /// Error type and message, when there is one.
    pub error: Option<(&'a str, &'a str)>,
}

/// A non-terminal status for a run and its session (see [`RunStore::set_run_status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunStatusUpdate<'a> {
    /// The session the run belongs to.
    pub session_id: &'a SessionId,
    /// The run.
    pub run_id: &'a RunId,
    /// `running` or `awaiting_approval`.
    pub status: RunStatus,
}

/// Approval rows and grants.
#[async_trait]
pub trait ApprovalStore: Send + Sync {
    /// Inserts a pending approval.
    async fn create_approval(&self, approval: &Approval) -> Result<()>;
    /// Reads one approval.
    async fn get_approval(&self, id: &ApprovalId) -> Result<Approval>;
    /// The approvals `query` selects, oldest first.
    async fn list_approvals(&self, query: ApprovalQuery<'_>) -> Result<Vec<Approval>>;
    /// Resolves a pending approval; `conflict` when it is no longer pending.
    async fn resolve_approval(&self, resolved: &Approval) -> Result<()>;
    /// Inserts a grant.
    async fn create_grant(&self, grant: &Grant) -> Result<()>;
    /// Grants of a namespace.
    async fn list_grants(&self, namespace: &str) -> Result<Vec<Grant>>;
    /// Deletes a grant, or `not_found`.
    async fn revoke_grant(&self, namespace: &str, id: &GrantId) -> Result<()>;
    /// Retention, across namespaces: deletes resolved approvals past the limits of
    /// `pruning` and grants whose `expires_at` has passed. Pending approvals and
    /// grants without an expiry are never touched.
    async fn prune_approvals(&self, pruning: &ApprovalPruning) -> Result<PruneReport>;
}

/// Which approvals [`ApprovalStore::list_approvals`] answers: those of a
/// namespace (or one of its sessions), optionally only those with `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalQuery<'a> {
    /// The namespace whose sessions' approvals are read.
    pub namespace: &'a str,
    /// Only this session's approvals, when given.
    pub session_id: Option<&'a SessionId>,
    /// Only approvals with this status, when given.
    pub status: Option<ApprovalStatus>,
}

/// What approval retention deletes (see [`ApprovalStore::prune_approvals`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalPruning {
    /// Resolved approvals resolved before this RFC 3339 instant go.
    pub resolved_before: Option<String>,
    /// Of the resolved approvals left, only this many of the newest stay.
    pub keep_newest: Option<usize>,
    /// Now, in milliseconds since the epoch: grants that expired before it go.
    pub now_ms: i64,
}

/// What one retention pass deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// Resolved approvals deleted.
    pub approvals_deleted: usize,
    /// Expired grants deleted.
    pub grants_expired: usize,
}

/// Owner leases: which process drives a live session.
#[async_trait]
pub trait LeaseStore: Send + Sync {
    /// Takes or renews the lease for `owner` until `now + ttl_ms`; `Ok(Some(holder))`
    /// names the other live owner when the lease is held elsewhere.
    async fn acquire_lease(
        &self,
        session_id: &SessionId,
        owner: &str,
        ttl_ms: i64,
    ) -> Result<Option<String>>;
    /// Releases the lease if `owner` holds it.
    async fn release_lease(&self, session_id: &SessionId, owner: &str) -> Result<()>;
    /// Marks runs and approvals left behind by dead owners as failed / timed out.
    /// `is_dead` says whether an owner whose lease has not expired yet is known dead.
    async fn reconcile(&self, is_dead: OwnerIsDead) -> Result<ReconcileReport>;
}

/// The writes of a turn that must be atomic, each one transaction: nothing of a
/// turn's start or end is ever half stored.
#[async_trait]
pub trait TurnStore: Send + Sync {
    /// Takes (or renews) the lease for `turn.owner`, inserts the run, appends the
    /// user message and writes the session header. `HeldElsewhere` (nothing written)
    /// when another live owner holds the session; on any error nothing is written.
    async fn begin_turn(&self, turn: BeginTurn) -> Result<TurnBegun>;
    /// Appends the answer with its provider call, stores its artifacts, finishes the
    /// run, writes the session header and releases `turn.owner`'s lease; on any
    /// error nothing is written.
    async fn finish_turn(&self, turn: FinishTurn) -> Result<TurnFinished>;
}

/// One upstream MCP tool call proxied by the MCP bridge, as the audit log keeps
/// it: who called what, what the policy decided and how it ended. Argument values
/// are not stored (they may hold secrets), only their keys and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct McpCallRecord {
    /// Record id.
    pub id: String,
    /// Namespace of the caller.
    pub namespace: String,
    /// Upstream server name (the `[mcp_servers.NAME]` alias).
    pub server: String,
    /// The tool's own name upstream.
    pub tool: String,
    /// The name the caller used (`NAME__tool`).
    pub exposed_name: String,
    /// The calling client (its `clientInfo.name` and transport).
    pub client: String,
    /// The policy that applied: `auto`, `require_approval` or `block`.
    pub policy: String,
    /// What the policy gate decided: `allowed`, `approved`, `rejected`, `blocked`, `cancelled`.
    pub decision: String,
    /// The approval that decided it, for `require_approval`.
    pub approval_id: Option<String>,
    /// How the call ended: `ok`, `tool_error`, `failed`, `cancelled`, `not_called`.
    pub outcome: String,
    /// Stable error type, when it failed.
    pub error_type: Option<String>,
    /// Error message, when it failed.
    pub error_message: Option<String>,
    /// Top-level argument names.
    pub argument_keys: Vec<String>,
    /// Size of the JSON arguments in bytes.
    pub argument_bytes: u64,
    /// When the call arrived.
    pub started_at: String,
    /// How long it took, gate included.
    pub duration_ms: i64,
}

/// The audit log of proxied upstream MCP tool calls.
#[async_trait]
pub trait AuditStore: Send + Sync {
    /// Appends records in one transaction (all or none); a record whose id is
    /// already stored is skipped, so a replayed journal writes nothing twice.
    async fn record_mcp_calls(&self, records: &[McpCallRecord]) -> Result<()>;
    /// The newest records of a namespace, newest first, at most `limit`.
    async fn list_mcp_calls(&self, namespace: &str, limit: usize) -> Result<Vec<McpCallRecord>>;
    /// Sets the policy (`auto`, `require_approval`, `block`) an operator chose
    /// for one upstream tool of a namespace, replacing an earlier one.
    async fn set_mcp_tool_policy(&self, policy: &McpToolPolicy) -> Result<()>;
    /// Every tool policy an operator set in a namespace, by server and tool.
    async fn list_mcp_tool_policies(&self, namespace: &str) -> Result<Vec<McpToolPolicy>>;
}

/// A policy an operator set for one upstream MCP tool, over the config's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpToolPolicy {
    /// Namespace it applies in.
    pub namespace: String,
    /// The upstream server's alias.
    pub server: String,
    /// The tool's own name upstream.
    pub tool: String,
    /// `auto`, `require_approval` or `block`.
    pub policy: String,
    /// When it was set.
    pub updated_at: String,
}

/// What startup reconciliation changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReconcileReport {
    /// Runs marked failed with reason `interrupted`.
    pub runs_failed: usize,
    /// Pending approvals cancelled with reason (path) `hub_restarted`.
    pub approvals_cancelled: usize,
    /// Interrupted turns whose streamed text was kept as a failed assistant message.
    pub answers_kept: usize,
}

/// Store identity and health, for `hecate doctor` and system stats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoreHealth {
    /// Backend name.
    pub backend: String,
    /// Database location (`:memory:` for the in-memory backend).
    pub location: String,
    /// Applied schema version.
    pub schema_version: i64,
    /// Size in bytes.
    pub size_bytes: u64,
    /// `ok` or the integrity check's complaint.
    pub integrity: String,
    /// The connection pool (PostgreSQL; SQLite keeps its own fixed connections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolStatus>,
}

/// Everything the engine needs from persistence.
#[async_trait]
pub trait Store:
    SessionStore
    + MessageStore
    + RunStore
    + ApprovalStore
    + LeaseStore
    + AuditStore
    + TurnStore
    + GatewayConversationStore
    + CapabilityStore
    + CooldownStore
    + KeyStore
    + McpTokenStore
    + SessionChoiceStore
    + FlowChatStore
    + MemoryStore
    + TaskStore
    + A2aStore
{
    /// Backend identity and health.
    async fn health(&self) -> Result<StoreHealth>;
}

/// A failure of the store layer, converted to the domain error at the trait edge.
#[derive(Debug, thiserror::Error)]
pub enum StoreFailure {
    /// SQLite reported an error.
    #[error("{location}: {source}")]
    Sqlite {
        /// Database file.
        location: String,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// PostgreSQL reported an error.
    #[error("{location}: {source}")]
    Postgres {
        /// Database URL, its password left out.
        location: String,
        /// The PostgreSQL error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// A stored JSON column did not parse.
    #[error("{location}: corrupt stored JSON: {source}")]
    Json {
        /// Database file.
        location: String,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

impl From<StoreFailure> for crate::domain::HecateError {
    fn from(f: StoreFailure) -> Self {
        crate::domain::HecateError::store(f.to_string())
    }
}
