//! What the store keeps of the tasks Hecate serves over A2A, in plain data (the
//! wire types stay in `a2a_wire`, which the domain does not know): which Hecate
//! session each (agent, `contextId`) conversation is, each task's header with
//! its record as JSON, and the push notification configs registered for it.

use crate::domain::ids::SessionId;
use serde_json::Value;

/// One A2A conversation: agent `agent`'s `contextId` in a namespace is one
/// Hecate session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct A2aContext {
    /// The namespace the A2A server serves.
    pub namespace: String,
    /// The exposed agent's name (`hecate`, `agent:ID`, ...).
    pub agent: String,
    /// The client's `contextId`.
    pub context_id: String,
    /// The session that conversation is.
    pub session_id: SessionId,
    /// When it was bound (RFC 3339).
    pub created_at: String,
}

/// One A2A task as stored: the header the store filters on and the rest of
/// the record as JSON the A2A server reads back.
#[derive(Debug, Clone, PartialEq)]
pub struct A2aTaskRow {
    /// The namespace the A2A server serves.
    pub namespace: String,
    /// The task id (the turn's run id).
    pub id: String,
    /// The agent that runs it.
    pub agent: String,
    /// Its conversation.
    pub context_id: String,
    /// The session of that conversation.
    pub session_id: SessionId,
    /// Its A2A state as the wire names it (`TASK_STATE_WORKING`, ...).
    pub state: String,
    /// Whether that state is final (a write never turns a final row back).
    pub terminal: bool,
    /// The rest of the record (status message, answer, files, history,
    /// pending approval), as the A2A server writes it.
    pub record: Value,
    /// Counts the writes of the process running the task: a write older than
    /// the stored one is left out, so writes that race keep the newest.
    pub version: i64,
    /// When it was created (RFC 3339; lists are newest first).
    pub created_at: String,
    /// When it was last written.
    pub updated_at: String,
}

/// Which tasks a list answers: one agent's in a namespace, of one context and
/// in one state when given, a page of `limit` after skipping `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct A2aTaskQuery {
    /// The namespace.
    pub namespace: String,
    /// The agent.
    pub agent: String,
    /// Only this conversation's tasks, when given.
    pub context_id: Option<String>,
    /// Only tasks in this state (the wire name), when given.
    pub state: Option<String>,
    /// Tasks skipped (newest first) before the page.
    pub offset: usize,
    /// The page's size.
    pub limit: usize,
}

/// A page of tasks, newest first, and how many the query matches in all.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct A2aTaskPage {
    /// The page.
    pub tasks: Vec<A2aTaskRow>,
    /// Every task the query matches.
    pub total: u64,
}

/// One push notification config of a task, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct A2aPushConfigRow {
    /// The namespace.
    pub namespace: String,
    /// The task it is registered for.
    pub task_id: String,
    /// The config's id (unique per task).
    pub config_id: String,
    /// The config as the A2A server wrote it (URL, token, authentication).
    pub config: Value,
    /// When it was first registered (configs list in that order).
    pub created_at: String,
}
