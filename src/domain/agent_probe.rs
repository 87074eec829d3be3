//! What probing an external agent found: the stage its start reached, the
//! verdict, and the agent's own words when it failed.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where in an agent's lifecycle something happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Finding the agent's executable.
    Lookup,
    /// Starting the agent process.
    Spawn,
    /// The ACP `initialize` handshake.
    Initialize,
    /// `session/new`.
    NewSession,
    /// `session/load`.
    LoadSession,
    /// `session/resume`.
    ResumeSession,
    /// `session/close`.
    CloseSession,
    /// `session/delete`.
    DeleteSession,
    /// `session/set_mode`.
    SetMode,
    /// `session/set_config_option`.
    SetConfigOption,
    /// `session/prompt` (a turn).
    Prompt,
    /// `authenticate` (signing in with one of the agent's methods).
    Authenticate,
    /// `logout`.
    Logout,
    /// Everything succeeded.
    Ready,
}

impl Stage {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lookup => "lookup",
            Self::Spawn => "spawn",
            Self::Initialize => "initialize",
            Self::NewSession => "new_session",
            Self::LoadSession => "load_session",
            Self::ResumeSession => "resume_session",
            Self::CloseSession => "close_session",
            Self::DeleteSession => "delete_session",
            Self::SetMode => "set_mode",
            Self::SetConfigOption => "set_config_option",
            Self::Authenticate => "authenticate",
            Self::Logout => "logout",
            Self::Prompt => "prompt",
            Self::Ready => "ready",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict of a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeStatus {
    /// It started and opened a session.
    Ready,
    /// No executable was found.
    NotInstalled,
    /// The agent asked for credentials.
    AuthRequired,
    /// Anything else went wrong.
    Error,
}

/// What a probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProbe {
    /// The manifest id.
    pub adapter_id: String,
    /// The verdict.
    pub status: ProbeStatus,
    /// The stage reached (`ready`) or where it failed.
    pub stage: Stage,
    /// How long the probe took.
    pub duration_ms: u64,
    /// The failure, with the agent's own words when it gave any.
    pub error: Option<String>,
    /// The agent's last stderr lines, when it failed.
    pub stderr_tail: Option<String>,
    /// The name the agent reported.
    pub agent_name: Option<String>,
    /// The version the agent reported.
    pub agent_version: Option<String>,
    /// The executable that was started (or would have been), once found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl AgentProbe {
    /// What an operator should do next for this verdict (none when ready).
    pub fn hint(&self) -> Option<&'static str> {
        match self.status {
            ProbeStatus::Ready => None,
            ProbeStatus::NotInstalled => Some(
                "The adapter's executable was not found: install its package (see `hecate adapters list`) or put it on PATH.",
            ),
            ProbeStatus::AuthRequired => Some(
                "The adapter started but failed authentication: run its CLI login flow or set its API-key variable, then probe again.",
            ),
            ProbeStatus::Error => Some(
                "The adapter failed at the stage shown; `error` and `stderr` carry its own words.",
            ),
        }
    }
}
