//! The two writes of a model turn, each one transaction: `begin_turn` (lease, run
//! row, user message, session header, then the history the runtime sees) before
//! the runtime sees the prompt, and `finish_turn` (the last run events, answer, its
//! provider call, artifacts, run end, session header, lease release) after. These
//! are the inputs and answers of those operations.

use crate::domain::ids::RunId;
use crate::domain::message::{Message, NewMessage};
use crate::domain::provider_call::ProviderCall;
use crate::domain::run::{Run, RunStatus};
use crate::domain::session::Session;
use crate::store::history::HistoryStrategy;
use serde_json::Value;

/// A run event to append: its sequence in the run (numbered by the engine, from 1
/// in publish order), type, data and time.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRunEvent {
    /// Position in the run, from 1; the engine and every live view share it.
    pub sequence: i64,
    /// Stable event type name.
    pub event_type: String,
    /// The event's data.
    pub data: Value,
    /// When it happened (RFC 3339).
    pub occurred_at: String,
}

/// Everything `begin_turn` writes, all or nothing.
#[derive(Debug, Clone)]
pub struct BeginTurn {
    /// The owner taking (or renewing) the session's lease.
    pub owner: String,
    /// Lease lifetime from now, in milliseconds.
    pub lease_ttl_ms: i64,
    /// The session header as it should be stored once the turn has started.
    pub session: Session,
    /// The new run (status `running`).
    pub run: Run,
    /// The prompt. Its runtime snapshot's segment id is replaced inside the
    /// transaction: the previous message's when it ran the same target, a new one
    /// otherwise (`domain::segment::next_segment_id`).
    pub user: NewMessage,
    /// Which part of the transcript (the new prompt included) to read back for
    /// the runtime, inside the same transaction.
    pub history: HistoryStrategy,
}

/// How `begin_turn` ended when it did not fail.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnBegun {
    /// The turn is recorded and its user message durable.
    Started {
        /// The stored user message, with its sequence and segment.
        user: Box<Message>,
        /// The history the strategy gives the runtime, ending with `user`.
        history: Vec<Message>,
    },
    /// Another live owner holds the session; nothing was written.
    HeldElsewhere {
        /// The holder's owner id.
        owner: String,
    },
}

/// An artifact (such as a turn diff) to store on the assistant message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewArtifact {
    /// Artifact kind, such as `turn_diff`.
    pub kind: String,
    /// Path it is about (empty for a whole-tree artifact).
    pub path: String,
    /// The artifact itself (JSON text).
    pub data: String,
}

/// Everything `finish_turn` writes, all or nothing.
#[derive(Debug, Clone)]
pub struct FinishTurn {
    /// The owner releasing the session's lease.
    pub owner: String,
    /// The session header as it should be stored once the turn has ended.
    pub session: Session,
    /// The run to finish.
    pub run_id: RunId,
    /// Its terminal status.
    pub status: RunStatus,
    /// Its error as (type, message), when it failed.
    pub error: Option<(String, String)>,
    /// The answer (partial when the turn did not complete).
    pub assistant: NewMessage,
    /// The provider call that produced the answer, when one was made.
    pub call: Option<ProviderCall>,
    /// Artifacts of the answer.
    pub artifacts: Vec<NewArtifact>,
    /// Run events not yet stored (the turn's last batch).
    pub events: Vec<NewRunEvent>,
}

/// What `finish_turn` stored and what the engine reports from it.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnFinished {
    /// The stored answer.
    pub assistant: Message,
    /// The run as finished.
    pub run: Run,
    /// Messages in the session after the answer.
    pub message_count: u64,
}
