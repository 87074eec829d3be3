//! `hecate approvals list|resolve|cancel` and `hecate grants list|create|revoke`: decide
//! permission requests from any terminal against the same store.

use super::output::{Format, print_json, print_resource, print_text};
use super::{AppContext, CLI_ACTOR, GlobalArgs};
use crate::bridges::resources::agent::{DecisionName, ScopeName};
use crate::bridges::resources::tasks::TaskApprovalDto;
use crate::domain::approval::{ApprovalStatus, Scope};
use crate::domain::ids::{ApprovalId, GrantId, SessionId, TaskApprovalId};
use crate::domain::time::format_rfc3339;
use crate::engine::grants::GrantRequest;
use std::fmt::Write as _;

/// The `approvals` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ApprovalsCommand {
    /// List approvals (pending only unless --all).
    List {
        /// Only this session's.
        #[arg(long)]
        session: Option<String>,
        /// Include resolved ones.
        #[arg(long)]
        all: bool,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Decide a pending approval.
    Resolve {
        /// Approval id.
        id: String,
        /// approve or reject.
        #[arg(long, value_enum)]
        decision: DecisionName,
        /// How far the decision reaches; anything but once becomes a grant.
        #[arg(long, value_enum, default_value = "once")]
        scope: ScopeName,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Cancel a pending approval (the agent is told nobody decided).
    Cancel {
        /// Approval id.
        id: String,
    },
}

/// The `grants` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum GrantsCommand {
    /// List standing grants.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Record a standing grant directly, optionally expiring.
    Create {
        /// How far it reaches.
        #[arg(long, value_enum)]
        scope: GrantScopeArg,
        /// The session (session scope).
        #[arg(long)]
        session: Option<String>,
        /// The workspace directory (workspace-tool scope).
        #[arg(long)]
        workspace: Option<String>,
        /// The adapter (adapter-tool scope).
        #[arg(long)]
        adapter: Option<String>,
        /// The tool kind covered (edit, execute, read, ...).
        #[arg(long)]
        tool_kind: String,
        /// approve or reject.
        #[arg(long, value_enum)]
        decision: DecisionName,
        /// Expire after this long (`90m`, `8h`, `7d`).
        #[arg(long, value_parser = humantime::parse_duration, conflicts_with = "expires_at")]
        expires_in: Option<std::time::Duration>,
        /// Expire at this RFC 3339 time.
        #[arg(long)]
        expires_at: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Delete a grant.
    Revoke {
        /// Grant id.
        id: String,
    },
}

/// The scope of a grant created on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum GrantScopeArg {
    /// This tool kind for the rest of one session.
    Session,
    /// This tool kind in one workspace.
    WorkspaceTool,
    /// This tool kind for one adapter.
    AdapterTool,
}

impl From<GrantScopeArg> for Scope {
    fn from(s: GrantScopeArg) -> Self {
        match s {
            GrantScopeArg::Session => Scope::Session,
            GrantScopeArg::WorkspaceTool => Scope::WorkspaceTool,
            GrantScopeArg::AdapterTool => Scope::AdapterTool,
        }
    }
}

pub async fn run_approvals(cli: &GlobalArgs, cmd: &ApprovalsCommand) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    let ns = ctx.namespace.as_str();
    match cmd {
        ApprovalsCommand::List {
            session,
            all,
            format,
        } => {
            let sid = session.as_deref().map(SessionId::from);
            let status = (!all).then_some(ApprovalStatus::Pending);
            let list = ctx
                .engine
                .approvals()
                .list(ns, sid.as_ref(), status)
                .await?;
            // Task approvals (the task runtime's gates) belong to no session.
            let task_gates = if session.is_none() {
                ctx.engine.tasks().namespace_approvals(ns, *all).await?
            } else {
                Vec::new()
            };
            match format {
                Format::Json => {
                    let tasks: Vec<TaskApprovalDto> =
                        task_gates.iter().map(TaskApprovalDto::from).collect();
                    print_json(&serde_json::json!({
                        "object": "agent_chat_approvals",
                        "data": list,
                        "task_approvals": tasks,
                    }))?;
                }
                Format::Text => {
                    let mut out = String::new();
                    for a in &list {
                        let _ = writeln!(
                            out,
                            "{}  {:<9} {:<10} {}  session {}{}",
                            a.id,
                            a.status.as_str(),
                            a.tool_kind,
                            a.tool_name,
                            a.session_id,
                            a.path
                                .as_ref()
                                .map(|p| format!("  ({p})"))
                                .unwrap_or_default()
                        );
                    }
                    for a in &task_gates {
                        let _ = writeln!(
                            out,
                            "{}  {:<9} {:<10} {}  task {} run {}",
                            a.id,
                            a.status.as_str(),
                            a.kind.as_str(),
                            a.reason,
                            a.task_id,
                            a.run_id
                        );
                    }
                    if list.is_empty() && task_gates.is_empty() {
                        out.push_str("no approvals\n");
                    }
                    print_text(&out)?;
                }
            }
        }
        ApprovalsCommand::Resolve {
            id,
            decision,
            scope: _,
            format,
        } if id.starts_with(TaskApprovalId::PREFIX) => {
            // A task's gate: approve queues its run, reject fails it (no scope).
            let approve = matches!(decision, DecisionName::Approve);
            let a = ctx
                .engine
                .tasks()
                .resolve_approval_by_id(ns, &TaskApprovalId::from(id.as_str()), approve, None)
                .await?;
            match format {
                Format::Json => print_resource("task_approval", &TaskApprovalDto::from(&a))?,
                Format::Text => print_text(&format!("{} {}\n", a.id, a.status.as_str()))?,
            }
        }
        ApprovalsCommand::Resolve {
            id,
            decision,
            scope,
            format,
        } => {
            let a = ctx
                .engine
                .approvals()
                .resolve_as(
                    ns,
                    &ApprovalId::from(id.as_str()),
                    (*decision).into(),
                    (*scope).into(),
                    Some(CLI_ACTOR),
                )
                .await?;
            match format {
                Format::Json => print_resource("agent_chat_approval", &a)?,
                Format::Text => print_text(&format!(
                    "{} {} (option {})\n",
                    a.id,
                    a.status.as_str(),
                    a.selected_option.as_deref().unwrap_or("none")
                ))?,
            }
        }
        ApprovalsCommand::Cancel { id } => {
            let a = ctx
                .engine
                .approvals()
                .cancel(ns, &ApprovalId::from(id.as_str()))
                .await?;
            print_text(&format!("{} {}\n", a.id, a.status.as_str()))?;
        }
    }
    Ok(0)
}

pub async fn run_grants(cli: &GlobalArgs, cmd: &GrantsCommand) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    let ns = ctx.namespace.as_str();
    match cmd {
        GrantsCommand::List { format } => {
            let list = ctx.engine.approvals().list_grants(ns).await?;
            match format {
                Format::Json => print_resource("agent_chat_grants", &list)?,
                Format::Text => {
                    let mut out = String::new();
                    for g in &list {
                        let target = g
                            .session_id
                            .as_ref()
                            .map(|s| format!("session {s}"))
                            .or_else(|| g.workspace.as_ref().map(|w| format!("workspace {w}")))
                            .or_else(|| g.adapter_id.as_ref().map(|a| format!("adapter {a}")))
                            .unwrap_or_default();
                        let until = g
                            .expires_at
                            .as_deref()
                            .map(|e| format!("  until {e}"))
                            .unwrap_or_default();
                        let _ = writeln!(
                            out,
                            "{}  {:<7} {:<14} {:<10} {}{}",
                            g.id, g.decision, g.scope, g.tool_kind, target, until
                        );
                    }
                    if list.is_empty() {
                        out.push_str("no grants\n");
                    }
                    print_text(&out)?;
                }
            }
        }
        GrantsCommand::Create {
            scope,
            session,
            workspace,
            adapter,
            tool_kind,
            decision,
            expires_in,
            expires_at,
            format,
        } => {
            let expires_at = match (expires_in, expires_at) {
                (Some(d), _) => Some(format_rfc3339(
                    time::OffsetDateTime::now_utc() + time::Duration::try_from(*d)?,
                )),
                (None, at) => at.clone(),
            };
            let g = ctx
                .engine
                .approvals()
                .create_grant(
                    ns,
                    GrantRequest {
                        scope: (*scope).into(),
                        session_id: session.as_deref().map(SessionId::from),
                        workspace: workspace.clone(),
                        adapter_id: adapter.clone(),
                        tool_kind: tool_kind.clone(),
                        decision: (*decision).into(),
                        expires_at,
                        created_by: Some(CLI_ACTOR.into()),
                    },
                )
                .await?;
            match format {
                Format::Json => print_resource("agent_chat_grant", &g)?,
                Format::Text => print_text(&format!(
                    "{} {} {} {}{}\n",
                    g.id,
                    g.decision,
                    g.scope,
                    g.tool_kind,
                    g.expires_at
                        .as_deref()
                        .map(|e| format!(" until {e}"))
                        .unwrap_or_default()
                ))?,
            }
        }
        GrantsCommand::Revoke { id } => {
            ctx.engine
                .approvals()
                .revoke_grant(ns, &GrantId::from(id.as_str()))
                .await?;
            eprintln!("revoked {id}");
        }
    }
    Ok(0)
}
