//! Wire types of the operator's adapter work: managed installs followed stage by
//! stage, the supervised agent processes running now, and the user manifests
//! that did not load.

use super::agent::AdapterDto;
pub use super::agent::AdapterManifestErrorDto;
use crate::domain::HecateError;
use crate::engine::ManifestError;
use crate::engine::{InstallJob, InstallState, LiveProcess};
use serde::Serialize;
use utoipa::ToSchema;

impl From<&ManifestError> for AdapterManifestErrorDto {
    fn from(e: &ManifestError) -> Self {
        Self {
            file: e.file.clone(),
            line: e.line,
            message: e.message.clone(),
        }
    }
}

/// One stage an install reached.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InstallStageDto {
    /// `resolving`, `cleaning`, `downloading`, `verifying`, `placing` or `done`.
    pub stage: String,
    /// When it started (RFC 3339).
    pub at: String,
    /// Milliseconds since the install started.
    pub elapsed_ms: u64,
}

/// Why an install failed, with the fix.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InstallErrorDto {
    /// The stable error code (`gateway_error` for npm's failures).
    #[serde(rename = "type")]
    pub error_type: String,
    /// What went wrong.
    pub message: String,
    /// The operator's next step.
    pub operator_action: String,
    /// The classified cause (`npm_missing`, `network`, `package_not_found` …), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<&HecateError> for InstallErrorDto {
    fn from(e: &HecateError) -> Self {
        Self {
            error_type: e.error_type.code().to_string(),
            message: e.message.clone(),
            operator_action: e.operator_action.clone(),
            reason: e
                .details
                .get("reason")
                .and_then(|v| v.as_str())
                .map(str::to_string),
        }
    }
}

/// One install of an adapter's managed npm package, as far as it got.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InstallJobDto {
    /// `inst_…`.
    pub id: String,
    /// The adapter installed.
    pub adapter_id: String,
    /// `running`, `succeeded` or `failed`.
    pub state: String,
    /// The stage reached last (none before the first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// Every stage reached, in order.
    pub stages: Vec<InstallStageDto>,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Why it failed, with the fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<InstallErrorDto>,
    /// The adapter's catalog row now (after a finished install: the new one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<AdapterDto>,
}

impl InstallJobDto {
    /// The job, with the adapter's current catalog row when known.
    pub fn new(job: &InstallJob, adapter: Option<AdapterDto>) -> Self {
        let stages: Vec<InstallStageDto> = job
            .stages
            .iter()
            .map(|m| InstallStageDto {
                stage: m.stage.as_str().to_string(),
                at: m.at.clone(),
                elapsed_ms: m.elapsed_ms,
            })
            .collect();
        Self {
            id: job.id.clone(),
            adapter_id: job.adapter_id.clone(),
            state: match job.state {
                InstallState::Running => "running",
                InstallState::Succeeded => "succeeded",
                InstallState::Failed => "failed",
            }
            .to_string(),
            stage: stages.last().map(|s| s.stage.clone()),
            stages,
            started_at: job.started_at.clone(),
            finished_at: job.finished_at.clone(),
            error: job.error.as_ref().map(InstallErrorDto::from),
            adapter,
        }
    }
}

/// `{"object": "agent_adapter_install", "data": {…}}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InstallJobResponse {
    /// Always `agent_adapter_install`.
    pub object: String,
    /// The install.
    pub data: InstallJobDto,
}

/// One supervised agent process Hecate runs now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentProcessDto {
    /// The Hecate session it serves (also the id to stop it by).
    pub session_id: String,
    /// The session's title, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_title: Option<String>,
    /// Its adapter.
    pub adapter_id: String,
    /// The agent's own session id.
    pub native_session_id: String,
    /// The process id (the leader of its process group).
    pub pid: u32,
    /// Whether the process is still running.
    pub alive: bool,
    /// Turns running on it now.
    pub turns: usize,
    /// Milliseconds since a turn last used it (absent while one runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_ms: Option<u64>,
    /// Milliseconds of idleness after which Hecate stops it (absent when it never does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_limit_ms: Option<u64>,
    /// When it attached (RFC 3339).
    pub started_at: String,
}

impl AgentProcessDto {
    /// The process, with its session's title and the idle limit.
    pub fn new(p: &LiveProcess, title: Option<String>, idle_limit_ms: Option<u64>) -> Self {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Self {
            session_id: p.session_id.to_string(),
            session_title: title,
            adapter_id: p.adapter_id.clone(),
            native_session_id: p.native_session_id.clone(),
            pid: p.pid,
            alive: p.alive,
            turns: p.turns,
            idle_ms: p.idle.map(ms),
            idle_limit_ms,
            started_at: p.started_at.clone(),
        }
    }
}

/// `{"object": "agent_processes", "data": […]}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentProcessListResponse {
    /// Always `agent_processes`.
    pub object: String,
    /// The live processes, oldest first.
    pub data: Vec<AgentProcessDto>,
}

/// `{"object": "agent_process", "data": {…}}`: the process just stopped.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentProcessResponse {
    /// Always `agent_process`.
    pub object: String,
    /// The process as it was when stopped.
    pub data: AgentProcessDto,
}
