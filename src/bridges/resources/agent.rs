//! Wire types of the agent resources: adapters and their probes, approvals and
//! grants, and the files an external-agent turn changed.

use crate::domain::agent_probe::AgentProbe;
use crate::domain::approval::{Approval, Decision, Grant, Scope};
use crate::domain::file_change::TurnFileChange;
use crate::engine::AdapterStatus;
use crate::engine::diffs::RevertResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// The serde name of a unit enum value (`"ready"`, `"managed"`, …).
fn wire_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// One external-agent adapter of the catalog with its availability.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdapterDto {
    /// Adapter id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// How Hecate drives it: `acp` (a supervised process) or `a2a` (a remote
    /// agent from `[a2a_agents]`, whose `command` is its card URL).
    pub kind: String,
    /// Direct command.
    pub command: String,
    /// Whether Hecate can install and launch it from a managed package.
    pub managed: bool,
    /// The managed npm package, when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_package: Option<String>,
    /// An executable was found.
    pub available: bool,
    /// `available` or `missing` (`unavailable` for a remote A2A agent whose
    /// card does not read).
    pub status: String,
    /// Why a remote A2A agent is `unavailable` (`reason: message`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    /// The executable found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `direct` or `managed`, when found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The version it reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Tested version range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported_range: Option<String>,
    /// The version is known and outside the tested range.
    pub version_outside_range: bool,
    /// How to authenticate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_hint: Option<String>,
    /// `ok`, `unauthenticated`, `billing` or `unknown`: derived from the agent's
    /// credential env vars and login files, without starting it.
    pub auth_status: String,
    /// A short reason when `auth_status` is not `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_error: Option<String>,
    /// Always `external`: the agent bills its own provider.
    pub cost_mode: String,
    /// `builtin` or `user`.
    pub origin: String,
    /// The manifest file of a `user` adapter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_path: Option<String>,
}

impl From<&AdapterStatus> for AdapterDto {
    fn from(a: &AdapterStatus) -> Self {
        Self {
            id: a.id.clone(),
            name: a.name.clone(),
            kind: a.driver_kind.clone(),
            command: a.command.clone(),
            managed: a.package.is_some(),
            managed_package: a.package.clone(),
            available: a.availability.available,
            status: a.status.to_string(),
            unavailable_reason: a.unavailable_reason.clone(),
            path: a
                .availability
                .path
                .as_ref()
                .map(|p| p.display().to_string()),
            source: a.availability.source.as_ref().map(wire_name),
            version: a.availability.version.clone(),
            supported_range: a.tested_range.clone(),
            version_outside_range: a.availability.version_outside_range,
            auth_hint: a.auth_hint.clone(),
            auth_status: wire_name(&a.auth_status),
            auth_error: a.auth_error.clone(),
            cost_mode: a.cost_mode.clone(),
            origin: a.origin.clone(),
            manifest_path: a.manifest_path.as_ref().map(|p| p.display().to_string()),
        }
    }
}

/// `{"object": "agent_adapters", "data": […]}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdapterListResponse {
    /// Always `agent_adapters`.
    pub object: String,
    /// Every catalog adapter.
    pub data: Vec<AdapterDto>,
    /// The manifest files skipped when the catalog was read (the operator's own,
    /// with what is wrong in each).
    pub manifest_errors: Vec<AdapterManifestErrorDto>,
}

/// `{"object": "agent_adapter", "data": {…}}`: one catalog row (after a launcher
/// refresh).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdapterResponse {
    /// Always `agent_adapter`.
    pub object: String,
    /// The adapter's catalog row.
    pub data: AdapterDto,
}

/// The classified outcome of an end-to-end probe.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProbeDto {
    /// Adapter id.
    pub adapter_id: String,
    /// `ready`, `not_installed`, `auth_required` or `error`.
    pub status: String,
    /// The stage reached (`ready`) or where it failed: lookup, spawn, initialize, new_session.
    pub stage: String,
    /// How long the probe took.
    pub duration_ms: u64,
    /// The failure, in the agent's words when it gave any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The agent's last stderr lines, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The name the agent reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// The version the agent reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The executable started, once found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What to do next, unless ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl From<&AgentProbe> for ProbeDto {
    fn from(r: &AgentProbe) -> Self {
        Self {
            adapter_id: r.adapter_id.clone(),
            status: wire_name(&r.status),
            stage: r.stage.as_str().to_string(),
            duration_ms: r.duration_ms,
            error: r.error.clone(),
            stderr: r.stderr_tail.clone(),
            agent_name: r.agent_name.clone(),
            agent_version: r.agent_version.clone(),
            path: r.path.clone(),
            hint: r.hint().map(str::to_string),
        }
    }
}

/// A fresh catalog row and the probe's verdict.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdapterProbeDto {
    /// The adapter as listed.
    pub adapter: AdapterDto,
    /// The probe.
    pub health: ProbeDto,
}

/// `{"object": "agent_adapter_probe", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdapterProbeResponse {
    /// Always `agent_adapter_probe`.
    pub object: String,
    /// Row and verdict.
    pub data: AdapterProbeDto,
}

/// `{"object": "agent_adapter_health", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdapterHealthResponse {
    /// Always `agent_adapter_health`.
    pub object: String,
    /// The end-to-end probe's verdict.
    pub data: ProbeDto,
}

/// A permission request of an external agent and its resolution.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct ApprovalDto {
    /// Approval id (`appr_…`).
    pub id: String,
    /// Session.
    pub session_id: String,
    /// The turn that asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `pending`, `approved`, `rejected`, `timed_out` or `cancelled`.
    pub status: String,
    /// Tool kind (file_write, execute, ...).
    pub tool_kind: String,
    /// Human tool name or title.
    pub tool_name: String,
    /// The options the agent offered, verbatim.
    #[schema(value_type = Object)]
    pub options: Value,
    /// `approve` or `reject`, once decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Scope of the decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// How it was resolved: operator, grant, default_mode, timeout, request_cancelled, hub_restarted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The agent option chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected_option: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Resolution time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
    /// Who decided it through an authenticated face: `admin`, `key:NAME` or `cli`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
}

impl From<&Approval> for ApprovalDto {
    fn from(a: &Approval) -> Self {
        Self {
            id: a.id.to_string(),
            session_id: a.session_id.to_string(),
            run_id: a.run_id.as_ref().map(|r| r.to_string()),
            status: a.status.as_str().to_string(),
            tool_kind: a.tool_kind.clone(),
            tool_name: a.tool_name.clone(),
            options: a.options.clone(),
            decision: a.decision.clone(),
            scope: a.scope.clone(),
            path: a.path.clone(),
            selected_option: a.selected_option.clone(),
            created_at: a.created_at.clone(),
            expires_at: a.expires_at.clone(),
            resolved_at: a.resolved_at.clone(),
            resolved_by: a.resolved_by.clone(),
        }
    }
}

/// `{"object": "agent_chat_approvals", "data": […]}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ApprovalListResponse {
    /// Always `agent_chat_approvals`.
    pub object: String,
    /// The session's approvals.
    pub data: Vec<ApprovalDto>,
}

/// `{"object": "agent_chat_approval", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ApprovalResponse {
    /// Always `agent_chat_approval`.
    pub object: String,
    /// The approval.
    pub data: ApprovalDto,
}

/// Query of `GET …/{id}/approvals`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ApprovalsQuery {
    /// Only approvals with this status: pending, approved, rejected, timed_out, cancelled.
    pub status: Option<String>,
}

/// An operator's decision, as HTTP bodies, MCP arguments and the command line
/// take it.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum DecisionName {
    /// Allow.
    Approve,
    /// Refuse.
    Reject,
}

impl From<DecisionName> for Decision {
    fn from(d: DecisionName) -> Self {
        match d {
            DecisionName::Approve => Decision::Approve,
            DecisionName::Reject => Decision::Reject,
        }
    }
}

/// How far a decision reaches, as HTTP bodies, MCP arguments and the command
/// line take it.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ScopeName {
    /// This request only.
    Once,
    /// This tool kind for the rest of the session.
    Session,
    /// This tool kind in the session's workspace.
    WorkspaceTool,
    /// This tool kind for the session's adapter anywhere.
    AdapterTool,
}

impl From<ScopeName> for Scope {
    fn from(s: ScopeName) -> Self {
        match s {
            ScopeName::Once => Scope::Once,
            ScopeName::Session => Scope::Session,
            ScopeName::WorkspaceTool => Scope::WorkspaceTool,
            ScopeName::AdapterTool => Scope::AdapterTool,
        }
    }
}

/// Body of `POST …/approvals/{approval_id}/resolve`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(example = json!({"decision": "approve", "scope": "once"}))]
#[serde(deny_unknown_fields)]
pub struct ResolveApprovalRequest {
    /// `approve` or `reject`.
    pub decision: DecisionName,
    /// `once` (default), `session`, `workspace_tool` or `adapter_tool`.
    pub scope: Option<ScopeName>,
}

/// Body of `POST /hecate/v1/agent-chat/grants`: a grant asked for directly, with
/// exactly the target field its scope needs.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(example = json!({"scope": "workspace_tool", "workspace": "/home/me/project",
    "tool_kind": "edit", "decision": "approve", "expires_at": "2026-12-01T18:00:00Z"}))]
#[serde(deny_unknown_fields)]
pub struct CreateGrantRequest {
    /// `session`, `workspace_tool` or `adapter_tool`.
    pub scope: ScopeName,
    /// The session, for `session` scope.
    pub session_id: Option<String>,
    /// The workspace directory, for `workspace_tool` scope.
    pub workspace: Option<String>,
    /// The adapter, for `adapter_tool` scope.
    pub adapter_id: Option<String>,
    /// The tool kind covered (`edit`, `execute`, `read`, ...).
    pub tool_kind: String,
    /// `approve` or `reject`.
    pub decision: DecisionName,
    /// When the grant stops applying (RFC 3339); without it the grant stands until
    /// revoked. Retention never deletes a grant before its expiry.
    pub expires_at: Option<String>,
}

/// `{"object": "agent_chat_grant", "data": {…}}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrantResponse {
    /// Always `agent_chat_grant`.
    pub object: String,
    /// The grant.
    pub data: GrantDto,
}

/// A standing answer to future approvals within a scope.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct GrantDto {
    /// Grant id.
    pub id: String,
    /// `session`, `workspace_tool` or `adapter_tool`.
    pub scope: String,
    /// Session, for session scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Adapter, for adapter scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// Workspace, for workspace scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Tool kind covered.
    pub tool_kind: String,
    /// `approve` or `reject`.
    pub decision: String,
    /// Creation time.
    pub created_at: String,
    /// Expiry, when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Who made it: `admin`, `key:NAME` or `cli`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

impl From<&Grant> for GrantDto {
    fn from(g: &Grant) -> Self {
        Self {
            id: g.id.to_string(),
            scope: g.scope.clone(),
            session_id: g.session_id.as_ref().map(|s| s.to_string()),
            adapter_id: g.adapter_id.clone(),
            workspace: g.workspace.clone(),
            tool_kind: g.tool_kind.clone(),
            decision: g.decision.clone(),
            created_at: g.created_at.clone(),
            expires_at: g.expires_at.clone(),
            created_by: g.created_by.clone(),
        }
    }
}

/// `{"object": "agent_chat_grants", "data": […]}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrantListResponse {
    /// Always `agent_chat_grants`.
    pub object: String,
    /// The namespace's grants.
    pub data: Vec<GrantDto>,
}

/// What `DELETE …/grants/{grant_id}` answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrantDeletedDto {
    /// The revoked grant.
    pub id: String,
    /// Always true.
    pub deleted: bool,
}

/// `{"object": "agent_chat_grant_deleted", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GrantDeletedResponse {
    /// Always `agent_chat_grant_deleted`.
    pub object: String,
    /// The revoked grant.
    pub data: GrantDeletedDto,
}

/// One file a turn changed.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct ChangedFileDto {
    /// Path relative to the repository root (the new path of a rename).
    pub path: String,
    /// Old path, for renames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// `modified`, `added`, `deleted`, `renamed` or `binary`.
    pub status: String,
    /// Added lines.
    pub additions: u64,
    /// Deleted lines.
    pub deletions: u64,
}

impl From<&TurnFileChange> for ChangedFileDto {
    fn from(f: &TurnFileChange) -> Self {
        Self {
            path: f.path.clone(),
            old_path: f.old_path.clone(),
            status: f.status.clone(),
            additions: f.additions,
            deletions: f.deletions,
        }
    }
}

/// `{"object": "agent_chat_changed_files", "data": […]}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangedFilesResponse {
    /// Always `agent_chat_changed_files`.
    pub object: String,
    /// The changed files (empty when the turn captured no diff).
    pub data: Vec<ChangedFileDto>,
}

/// One changed file with its unified diff.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangedFileDiffDto {
    /// Path relative to the repository root.
    pub path: String,
    /// Old path, for renames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// `modified`, `added`, `deleted`, `renamed` or `binary`.
    pub status: String,
    /// Added lines.
    pub additions: u64,
    /// Deleted lines.
    pub deletions: u64,
    /// The stored unified diff block of this file.
    pub diff: String,
}

/// `{"object": "agent_chat_changed_file_diff", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangedFileDiffResponse {
    /// Always `agent_chat_changed_file_diff`.
    pub object: String,
    /// The file and its diff.
    pub data: ChangedFileDiffDto,
}

/// Body of `POST …/messages/{message_id}/revert`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({"paths": ["src/foo.go"]}))]
#[serde(deny_unknown_fields)]
pub struct RevertRequest {
    /// Paths to restore, among those the turn changed; empty or absent for all.
    #[serde(default)]
    pub paths: Vec<String>,
}

/// What a revert did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RevertDto {
    /// Whether anything was restored.
    pub reverted: bool,
    /// The paths restored.
    pub paths: Vec<String>,
    /// What still differs from the turn's baseline among the captured paths.
    pub diff_stat: String,
    /// Remaining changes among the captured paths.
    pub files: Vec<ChangedFileDto>,
}

impl From<&RevertResult> for RevertDto {
    fn from(r: &RevertResult) -> Self {
        Self {
            reverted: r.reverted,
            paths: r.paths.clone(),
            diff_stat: r.diff_stat.clone(),
            files: r.files.iter().map(ChangedFileDto::from).collect(),
        }
    }
}

/// `{"object": "agent_chat_revert", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RevertResponse {
    /// Always `agent_chat_revert`.
    pub object: String,
    /// What was restored.
    pub data: RevertDto,
}

/// One pending approval of the namespace, as the approvals inbox lists it: a
/// session's question (resolved through `…/sessions/{id}/approvals/…/resolve`) or
/// a task's gate (through `/hecate/v1/tasks/{id}/approvals/…/resolve`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InboxApprovalDto {
    /// `session` or `task`.
    pub kind: String,
    /// Approval id (`appr_…` or `tappr_…`).
    pub approval_id: String,
    /// The session that asks (session approvals).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// That session's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_title: Option<String>,
    /// The task whose run is gated (task approvals).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The turn (`run_…`) or task run (`trun_…`) that waits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// What is asked: the tool's name or title, or the gate's reason.
    pub tool_name: String,
    /// The tool's kind, or the gate's kind for a task.
    pub tool_kind: String,
    /// The options offered, each with at least `id` and `name` (a session
    /// approval's are the agent's, verbatim).
    #[schema(value_type = Vec<Object>)]
    pub options: Value,
    /// The scopes a decision may take (session approvals; empty for a task gate).
    pub scope_choices: Vec<String>,
    /// When it was asked.
    pub created_at: String,
    /// When it times out, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// `{"object": "approvals", "data": […]}`: the namespace's pending approvals, oldest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InboxResponse {
    /// Always `approvals`.
    pub object: String,
    /// The pending approvals.
    pub data: Vec<InboxApprovalDto>,
}

/// A manifest file that was skipped when the catalog was read.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdapterManifestErrorDto {
    /// The manifest file (a path for the operator's own manifests).
    pub file: String,
    /// 1-based line of the problem, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}
