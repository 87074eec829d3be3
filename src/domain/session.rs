//! Sessions: one conversation addressed by (namespace, id), with its runtime and
//! guardrails.

use crate::domain::error::{ErrorType, HecateError};
use crate::domain::ids::SessionId;
use crate::domain::memory::{HistoryStrategy, SessionMemory};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What answers a session's prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeKind {
    /// One provider call per turn.
    Model,
    /// Hecate's own tool loop.
    Agent,
    /// A supervised external ACP agent.
    ExternalAgent,
}

impl RuntimeKind {
    /// The wire name, e.g. `external_agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Agent => "agent",
            Self::ExternalAgent => "external_agent",
        }
    }

    /// Whether a turn with `next` on a session now on `self` leaves an external
    /// agent: its native session ends there, and a later turn on an agent starts
    /// a fresh one primed with the transcript (which then holds the turns between).
    pub fn leaves_external_agent(self, next: RuntimeKind) -> bool {
        self == Self::ExternalAgent && next != Self::ExternalAgent
    }
}

impl fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RuntimeKind {
    type Err = HecateError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "model" => Ok(Self::Model),
            "agent" => Ok(Self::Agent),
            "external_agent" => Ok(Self::ExternalAgent),
            other => Err(HecateError::new(
                ErrorType::RuntimeKindInvalid,
                format!("runtime_kind {other:?} is not one of model, agent, external_agent"),
            )),
        }
    }
}

/// The lifecycle state of a session as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// Created, no turn yet.
    Idle,
    /// A turn is running.
    Running,
    /// A turn waits for an approval.
    AwaitingApproval,
    /// The last turn completed.
    Completed,
    /// The last turn failed.
    Failed,
    /// The last turn was cancelled.
    Cancelled,
    /// The native session was closed; history is kept.
    Closed,
}

impl SessionStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Running => "running",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Closed => "closed",
        }
    }

    /// Parses a stored status, defaulting unknown values to `failed`.
    pub fn parse(s: &str) -> Self {
        match s {
            "idle" => Self::Idle,
            "running" => Self::Running,
            "awaiting_approval" => Self::AwaitingApproval,
            "completed" => Self::Completed,
            "cancelled" => Self::Cancelled,
            "closed" => Self::Closed,
            _ => Self::Failed,
        }
    }
}

/// Per-session limits; `None` disables a limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guardrails {
    /// Maximum number of turns in the session.
    #[serde(
        rename = "max_turns_per_session",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_turns: Option<u32>,
    /// Maximum wall-clock life of the session, from its first turn, in milliseconds.
    #[serde(
        rename = "max_session_duration_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_duration_ms: Option<u64>,
    /// Maximum idle time between turns, in milliseconds.
    #[serde(rename = "idle_timeout_ms", skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u64>,
}

/// A stored session with its header fields (the transcript is loaded separately).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// Isolation scope; two namespaces never see each other's sessions.
    pub namespace: String,
    /// The session id.
    pub id: SessionId,
    /// A human title.
    pub title: String,
    /// The runtime the session was created with (or last switched to).
    pub runtime_kind: RuntimeKind,
    /// Provider name for model and agent runtimes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model name for model and agent runtimes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// External-agent adapter id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// Canonical workspace directory, when one is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// System prompt for direct model turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Lifecycle status.
    pub status: SessionStatus,
    /// The external agent's own ACP session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_session_id: Option<String>,
    /// Limits applied before each turn.
    #[serde(flatten)]
    pub guardrails: Guardrails,
    /// The working-memory strategy its turns load history with; the config's
    /// `[history]` when `None` (sessions stored before the field existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryStrategy>,
    /// Whose long-term memory the session uses and how many recalled messages
    /// its turns get.
    #[serde(default, skip_serializing_if = "SessionMemory::is_default")]
    pub memory: SessionMemory,
    /// Turns started so far.
    pub turns_used: u32,
    /// When the first turn started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_started_at: Option<String>,
    /// When the last turn ended (or the session was created).
    pub last_activity_at: String,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
}

impl Session {
    /// A new idle session created now, with no provider, model, adapter,
    /// workspace or system prompt, default guardrails and no turns yet.
    pub fn new_idle(
        namespace: &str,
        id: SessionId,
        title: &str,
        runtime_kind: RuntimeKind,
    ) -> Self {
        let now = super::time::now_rfc3339();
        Self {
            namespace: namespace.to_string(),
            id,
            title: title.to_string(),
            runtime_kind,
            provider: None,
            model: None,
            adapter_id: None,
            workspace: None,
            system_prompt: None,
            status: SessionStatus::Idle,
            native_session_id: None,
            guardrails: Guardrails::default(),
            history: None,
            memory: SessionMemory::default(),
            turns_used: 0,
            session_started_at: None,
            last_activity_at: now.clone(),
            created_at: now.clone(),
            updated_at: now,
        }
    }
}

/// A session header plus counts, as listings show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// The session header.
    #[serde(flatten)]
    pub session: Session,
    /// Number of stored messages.
    pub message_count: u64,
    /// Number of stored provider calls.
    pub provider_call_count: u64,
    /// Summed cost of known-priced provider calls, in micro-USD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cost_micros_usd: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_turn_off_an_external_agent_leaves_it() {
        assert!(RuntimeKind::ExternalAgent.leaves_external_agent(RuntimeKind::Model));
        assert!(RuntimeKind::ExternalAgent.leaves_external_agent(RuntimeKind::Agent));
        assert!(!RuntimeKind::ExternalAgent.leaves_external_agent(RuntimeKind::ExternalAgent));
        assert!(!RuntimeKind::Model.leaves_external_agent(RuntimeKind::ExternalAgent));
        assert!(!RuntimeKind::Agent.leaves_external_agent(RuntimeKind::Model));
    }

    #[test]
    fn unknown_runtime_kind_is_a_stable_error() {
        let e = "robot".parse::<RuntimeKind>().expect_err("rejects");
        assert_eq!(e.error_type, ErrorType::RuntimeKindInvalid);
    }
}
