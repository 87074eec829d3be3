//! Hecate's own MCP tools: sessions and transcripts, turns, approvals and
//! grants, adapters, delegation and upstream status. Each calls the engine only;
//! failures are tool results with `isError: true`.

use super::args::*;
use super::errors::fail;
use super::server::HecateMcp;
use crate::bridges::resources::agent::{ApprovalDto, GrantDto};
use crate::bridges::resources::{
    MessageDto, SessionDto, SessionSummaryDto, TranscriptPageDto, TranscriptQuery, UsageDto,
};
use crate::domain::approval::{ApprovalStatus, Decision, Scope};
use crate::domain::error::HecateError;
use crate::domain::ids::{ApprovalId, GrantId, SessionId};
use crate::domain::message::Role;
use crate::domain::session::RuntimeKind;
use crate::engine::CreateSession;
use crate::engine::mcp::ServerState;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, tool, tool_router};
use serde_json::json;

/// Sessions searched by `search_sessions` (newest first).
const SEARCH_WINDOW: usize = 200;

#[tool_router(router = own_tools, vis = "pub(crate)")]
impl HecateMcp {
    #[tool(
        description = "List Hecate Chat sessions (shared with the CLI and HTTP API), newest first.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_sessions(
        &self,
        Parameters(a): Parameters<ListSessionsArgs>,
    ) -> Result<Json<SessionsOut>, CallToolResult> {
        let limit = a.limit.unwrap_or(50).clamp(1, 500) as usize;
        let list = self
            .engine
            .list_sessions(self.ns(), limit)
            .await
            .map_err(fail)?;
        Ok(Json(SessionsOut {
            sessions: list.iter().map(SessionSummaryDto::from).collect(),
        }))
    }

    #[tool(
        description = "Find sessions whose title, id or messages contain the query (case-insensitive).",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_sessions(
        &self,
        Parameters(a): Parameters<SearchSessionsArgs>,
    ) -> Result<Json<SessionsOut>, CallToolResult> {
        let needle = a.query.to_lowercase();
        if needle.trim().is_empty() {
            return Err(fail(HecateError::invalid("the query is empty")));
        }
        let limit = a.limit.unwrap_or(20).clamp(1, 200) as usize;
        let list = self
            .engine
            .list_sessions(self.ns(), SEARCH_WINDOW)
            .await
            .map_err(fail)?;
        let mut found = Vec::new();
        for s in &list {
            if found.len() >= limit {
                break;
            }
            let head = format!("{} {}", s.session.title, s.session.id).to_lowercase();
            let hit = head.contains(&needle)
                || match self.engine.transcript(self.ns(), &s.session.id).await {
                    Ok(t) => t
                        .messages
                        .iter()
                        .any(|m| m.content.to_lowercase().contains(&needle)),
                    Err(_) => false,
                };
            if hit {
                found.push(SessionSummaryDto::from(s));
            }
        }
        Ok(Json(SessionsOut { sessions: found }))
    }

    #[tool(
        description = "Read one session's header (runtime, model or agent, workspace, status).",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_session(
        &self,
        Parameters(a): Parameters<SessionArgs>,
    ) -> Result<Json<SessionOut>, CallToolResult> {
        let s = self
            .engine
            .get_session(self.ns(), &SessionId::from(a.session_id.as_str()))
            .await
            .map_err(fail)?;
        Ok(Json(SessionOut {
            session: SessionDto::from(&s),
        }))
    }

    #[tool(
        description = "Read a session's transcript a page at a time: its newest 200 messages in order, or `limit` of them before `before_sequence` or after `after_sequence`, of some roles only with `role` (`user,assistant`; `page` says whether more exist either side).",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_transcript(
        &self,
        Parameters(a): Parameters<TranscriptArgs>,
    ) -> Result<Json<TranscriptOut>, CallToolResult> {
        let query = TranscriptQuery {
            limit: a.limit.or(a.last),
            before_sequence: a.before_sequence,
            after_sequence: a.after_sequence,
            role: a.role,
        };
        let window = query.window().map_err(fail)?;
        let t = self
            .engine
            .transcript_window(self.ns(), &SessionId::from(a.session_id.as_str()), window)
            .await
            .map_err(fail)?;
        Ok(Json(TranscriptOut {
            session: SessionDto::from(&t.session),
            page: TranscriptPageDto::from(&t),
            messages: t
                .messages
                .iter()
                .map(|m| {
                    let mut dto = MessageDto::from(m);
                    // An answer carries the ids of the turn that produced it.
                    if m.role == Role::Assistant
                        && let Some(run) = t.runs.iter().find(|r| Some(&r.id) == m.run_id.as_ref())
                    {
                        dto.trace_id = run.trace_id.clone();
                        dto.span_id = run.span_id.clone();
                    }
                    dto.usage = m
                        .produced_by_call_id
                        .as_ref()
                        .and_then(|id| t.provider_calls.iter().find(|c| &c.id == id))
                        .map(UsageDto::from);
                    TranscriptMessage::from(dto)
                })
                .collect(),
        }))
    }

    #[tool(
        description = "Create a session answered by a model (`model`: provider/model) or an external coding agent (`agent`: adapter id, with a `workspace`).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn create_session(
        &self,
        Parameters(a): Parameters<CreateSessionArgs>,
    ) -> Result<Json<SessionOut>, CallToolResult> {
        let req = match (&a.agent, &a.model) {
            (Some(_), Some(_)) => {
                return Err(fail(HecateError::invalid(
                    "give either `model` or `agent`, not both",
                )));
            }
            (Some(agent), None) => CreateSession {
                title: a.title,
                runtime_kind: Some(RuntimeKind::ExternalAgent),
                adapter_id: Some(agent.clone()),
                workspace: a.workspace,
                ..Default::default()
            },
            (None, model) => CreateSession {
                title: a.title,
                model: model.clone(),
                workspace: a.workspace,
                system_prompt: a.system_prompt,
                ..Default::default()
            },
        };
        let s = self
            .engine
            .create_session(self.ns(), req)
            .await
            .map_err(fail)?;
        Ok(Json(SessionOut {
            session: SessionDto::from(&s),
        }))
    }

    #[tool(
        description = "Send a prompt to a session and wait for the turn to end. Streams progress notifications when the request carries a progressToken; cancelling the request cancels the turn. Returns the answer and the files the turn changed.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn send_message(
        &self,
        Parameters(a): Parameters<SendMessageArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<TurnOut>, CallToolResult> {
        let sid = SessionId::from(a.session_id.as_str());
        self.run_turn(&sid, a.content, a.approval_mode, &ctx)
            .await
            .map(Json)
            .map_err(fail)
    }

    #[tool(
        description = "Delegate a task to another agent (`agent:ID`, see list_adapters), a model (`model:PROVIDER/MODEL`) or Hecate's own agent with its tools (`hecate:PROVIDER/MODEL`, or `hecate` for the default model), in a workspace. Runs one turn with progress notifications; the agent's permission requests are put to you by elicitation when your client supports it. Returns the answer, the session id (pass it back to continue) and the files changed.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn ask_agent(
        &self,
        Parameters(a): Parameters<AskAgentArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<TurnOut>, CallToolResult> {
        self.delegate(a, &ctx).await.map(Json).map_err(fail)
    }

    #[tool(
        description = "Cancel the running turn of a session.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn cancel_turn(
        &self,
        Parameters(a): Parameters<SessionArgs>,
    ) -> Result<Json<DoneOut>, CallToolResult> {
        self.engine
            .cancel(self.ns(), &SessionId::from(a.session_id.as_str()))
            .await
            .map_err(fail)?;
        Ok(Json(DoneOut { ok: true }))
    }

    #[tool(
        description = "List permission requests (pending by default) from agents' turns and proxied tool calls.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_approvals(
        &self,
        Parameters(a): Parameters<ListApprovalsArgs>,
    ) -> Result<Json<ApprovalsOut>, CallToolResult> {
        let sid = a.session_id.as_deref().map(SessionId::from);
        let status = (!a.all.unwrap_or(false)).then_some(ApprovalStatus::Pending);
        let list = self
            .engine
            .approvals()
            .list(self.ns(), sid.as_ref(), status)
            .await
            .map_err(fail)?;
        Ok(Json(ApprovalsOut {
            approvals: list.iter().map(ApprovalDto::from).collect(),
        }))
    }

    #[tool(
        description = "Approve or reject a pending permission request; a scope wider than `once` also creates a grant.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn resolve_approval(
        &self,
        Parameters(a): Parameters<ResolveApprovalArgs>,
    ) -> Result<Json<ApprovalOut>, CallToolResult> {
        let decision = Decision::from(a.decision);
        let scope = a.scope.map(Scope::from).unwrap_or_default();
        let approval = self
            .engine
            .approvals()
            .resolve(
                self.ns(),
                &ApprovalId::from(a.approval_id.as_str()),
                decision,
                scope,
            )
            .await
            .map_err(fail)?;
        Ok(Json(ApprovalOut {
            approval: ApprovalDto::from(&approval),
        }))
    }

    #[tool(
        description = "List standing grants that pre-answer permission requests.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_grants(
        &self,
        Parameters(_): Parameters<NoArgs>,
    ) -> Result<Json<GrantsOut>, CallToolResult> {
        let list = self
            .engine
            .approvals()
            .list_grants(self.ns())
            .await
            .map_err(fail)?;
        Ok(Json(GrantsOut {
            grants: list.iter().map(GrantDto::from).collect(),
        }))
    }

    #[tool(
        description = "Revoke a standing grant.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn revoke_grant(
        &self,
        Parameters(a): Parameters<RevokeGrantArgs>,
    ) -> Result<Json<DoneOut>, CallToolResult> {
        self.engine
            .approvals()
            .revoke_grant(self.ns(), &GrantId::from(a.grant_id.as_str()))
            .await
            .map_err(fail)?;
        Ok(Json(DoneOut { ok: true }))
    }

    #[tool(
        description = "List the external coding agents Hecate can drive (codex, claude_code, gemini, opencode, ...) and whether each is installed.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_adapters(
        &self,
        Parameters(_): Parameters<NoArgs>,
    ) -> Result<Json<AdaptersOut>, CallToolResult> {
        let list = self.engine.agents().list().await.map_err(fail)?;
        let adapters = list
            .iter()
            .map(|a| serde_json::to_value(a).unwrap_or_default())
            .collect();
        Ok(Json(AdaptersOut { adapters }))
    }

    #[tool(
        description = "Start an external agent in a scratch workspace and report whether it is ready (installed, authenticated, answering).",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = true)
    )]
    async fn probe_adapter(
        &self,
        Parameters(a): Parameters<ProbeAdapterArgs>,
    ) -> Result<Json<ProbeOut>, CallToolResult> {
        let report = self
            .engine
            .agents()
            .probe(&a.adapter_id)
            .await
            .map_err(fail)?;
        Ok(Json(ProbeOut {
            report: serde_json::to_value(&report).unwrap_or_default(),
        }))
    }

    #[tool(
        description = "Upstream MCP servers aggregated by this hub (policy, tools, state: ok, auth_required or failed, with the error) and the client pool's entries / in use / idle.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn upstream_status(
        &self,
        Parameters(_): Parameters<NoArgs>,
    ) -> Result<Json<UpstreamStatusOut>, CallToolResult> {
        let catalog = self.engine.mcp().tools().await;
        let servers = self
            .engine
            .mcp()
            .servers()
            .iter()
            .map(|s| {
                let error = catalog
                    .failures
                    .iter()
                    .find(|f| f.server == s.name)
                    .map(|f| f.error.clone())
                    .or_else(|| self.engine.mcp().sign_in_refusal(&s.name));
                json!({
                    "name": s.name,
                    "policy": s.policy.as_str(),
                    "state": ServerState::of(error.as_ref()).as_str(),
                    "tools": catalog.tools.iter().filter(|t| t.server == s.name).count(),
                    "error": error,
                })
            })
            .collect();
        Ok(Json(UpstreamStatusOut {
            servers,
            pool: serde_json::to_value(self.engine.mcp().pool_stats()).unwrap_or_default(),
        }))
    }
}
