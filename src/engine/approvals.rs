//! The approval coordinator: answers a runtime's permission requests from grants,
//! the approval mode, or a person (in this process or another one through the
//! store), with a timeout; records every request and how it was resolved.

use super::{Approvals, Engine};
use crate::domain::approval::{
    Approval, ApprovalMode, ApprovalStatus, Decision, Grant, Scope, pick_option, scope_choices,
};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::event::EngineEvent;
use crate::domain::ids::{ApprovalId, GrantId, RunId, SessionId};
use crate::domain::permission::{
    PermissionAsker, PermissionOption, PermissionOutcome, PermissionRequest,
};
use crate::domain::run::RunStatus;
use crate::domain::time::{format_rfc3339, now_rfc3339};
use crate::store::{ApprovalQuery, RunStatusUpdate};
use crate::telemetry::metrics;
use futures::future::BoxFuture;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// How often a waiting request re-reads the store for a resolution written by
/// another process.
const STORE_POLL: Duration = Duration::from_millis(300);

/// Resolution paths recorded on approvals.
mod path {
    pub const OPERATOR: &str = "operator";
    pub const GRANT: &str = "grant";
    pub const DEFAULT_MODE: &str = "default_mode";
    pub const TIMEOUT: &str = "timeout";
    pub const REQUEST_CANCELLED: &str = "request_cancelled";
}

/// The permission handle the engine gives a runtime for one turn.
#[derive(Clone)]
pub(crate) struct TurnAsker {
    pub engine: Engine,
    pub namespace: String,
    pub adapter_id: Option<String>,
    pub workspace: Option<String>,
    pub mode: ApprovalMode,
    pub timeout: Duration,
    pub cancel: CancellationToken,
    /// The span approvals are noted on (the turn's, or the MCP call's).
    pub span: tracing::Span,
}

impl PermissionAsker for TurnAsker {
    fn ask(&self, request: PermissionRequest) -> BoxFuture<'static, PermissionOutcome> {
        let this = self.clone();
        Box::pin(async move {
            match this.decide(request).await {
                Ok(outcome) => outcome,
                Err(e) => {
                    tracing::error!(error = %e, "approval could not be recorded; cancelling the request");
                    PermissionOutcome::Cancelled
                }
            }
        })
    }
}

fn outcome_of(approval: &Approval) -> PermissionOutcome {
    match (&approval.status, &approval.selected_option) {
        (ApprovalStatus::Approved | ApprovalStatus::Rejected, Some(id)) => {
            PermissionOutcome::Selected {
                option_id: id.clone(),
            }
        }
        _ => PermissionOutcome::Cancelled,
    }
}

/// Resolves `approval` now with `decision` and `scope`, reached by `how`: the
/// option that answers it, or cancelled when none does.
fn settle(
    approval: &mut Approval,
    options: &[PermissionOption],
    decision: Decision,
    scope: Scope,
    how: &str,
) {
    let selected = pick_option(options, decision, scope);
    approval.status = match (&selected, decision) {
        (None, _) => ApprovalStatus::Cancelled,
        (Some(_), Decision::Approve) => ApprovalStatus::Approved,
        (Some(_), Decision::Reject) => ApprovalStatus::Rejected,
    };
    approval.decision = Some(decision.as_str().into());
    approval.scope = Some(scope.as_str().into());
    approval.path = Some(how.into());
    approval.selected_option = selected;
    approval.resolved_at = Some(now_rfc3339());
}

fn options_of(approval: &Approval) -> Vec<PermissionOption> {
    serde_json::from_value(approval.options.clone()).unwrap_or_default()
}

impl TurnAsker {
    fn grant_matches(&self, g: &Grant, session_id: &SessionId, tool_kind: &str) -> bool {
        if g.tool_kind != tool_kind {
            return false;
        }
        if let Some(exp) = g
            .expires_at
            .as_deref()
            .and_then(crate::domain::time::parse_millis)
            && exp < crate::domain::time::now_millis()
        {
            return false;
        }
        match g.scope.as_str() {
            "session" => g.session_id.as_ref() == Some(session_id),
            "workspace_tool" => g.workspace.is_some() && g.workspace == self.workspace,
            "adapter_tool" => g.adapter_id.is_some() && g.adapter_id == self.adapter_id,
            _ => false,
        }
    }

    async fn decide(&self, req: PermissionRequest) -> Result<PermissionOutcome> {
        let tool_kind = req.tool_kind.clone().unwrap_or_else(|| "other".into());
        let now = now_rfc3339();
        let mut approval = Approval {
            id: ApprovalId::generate(),
            session_id: req.session_id.clone(),
            run_id: Some(req.run_id.clone()),
            status: ApprovalStatus::Pending,
            tool_kind: tool_kind.clone(),
            tool_name: req.title.clone(),
            options: serde_json::to_value(&req.options).unwrap_or_default(),
            decision: None,
            scope: None,
            path: None,
            selected_option: None,
            created_at: now.clone(),
            expires_at: None,
            resolved_at: None,
            resolved_by: None,
        };

        // 1. A standing grant answers without asking.
        let grants = self.engine.store().list_grants(&self.namespace).await?;
        if let Some(g) = grants
            .iter()
            .find(|g| self.grant_matches(g, &req.session_id, &tool_kind))
        {
            let decision = if g.decision == "reject" {
                Decision::Reject
            } else {
                Decision::Approve
            };
            let scope = match g.scope.as_str() {
                "session" => Scope::Session,
                "workspace_tool" => Scope::WorkspaceTool,
                _ => Scope::AdapterTool,
            };
            return self
                .record_immediate(approval, &req.options, decision, scope, path::GRANT)
                .await;
        }
        // 2. Auto and deny modes answer without asking.
        match self.mode {
            ApprovalMode::Auto => {
                return self
                    .record_immediate(
                        approval,
                        &req.options,
                        Decision::Approve,
                        Scope::Once,
                        path::DEFAULT_MODE,
                    )
                    .await;
            }
            ApprovalMode::Deny => {
                return self
                    .record_immediate(
                        approval,
                        &req.options,
                        Decision::Reject,
                        Scope::Once,
                        path::DEFAULT_MODE,
                    )
                    .await;
            }
            ApprovalMode::Prompt => {}
        }
        // 3. Ask, and wait for an answer from this process or the store.
        let deadline = time::OffsetDateTime::now_utc()
            + time::Duration::milliseconds(self.timeout.as_millis() as i64);
        approval.expires_at = Some(format_rfc3339(deadline));
        let (tx, mut rx) = oneshot::channel();
        self.engine.waiters().insert(approval.id.clone(), tx);
        self.engine.store().create_approval(&approval).await?;
        metrics::approval_requested(&tool_kind, self.adapter_id.as_deref());
        self.engine
            .approvals()
            .set_run_status(&req.session_id, &req.run_id, RunStatus::AwaitingApproval)
            .await;
        self.engine
            .emit(EngineEvent::ApprovalRequested {
                session_id: req.session_id.clone(),
                tool_call_id: Some(req.tool_call_id.clone()),
                approval: Box::new(approval.clone()),
                adapter_id: self.adapter_id.clone(),
                scope_choices: scope_choices(self.workspace.is_some(), self.adapter_id.is_some()),
            })
            .await;
        let sleep = tokio::time::sleep(self.timeout);
        tokio::pin!(sleep);
        let resolved = loop {
            tokio::select! {
                Ok(a) = &mut rx => break a,
                _ = tokio::time::sleep(STORE_POLL) => {
                    let current = self.engine.store().get_approval(&approval.id).await?;
                    if current.status != ApprovalStatus::Pending {
                        self.engine
                            .emit(EngineEvent::ApprovalResolved {
                                session_id: req.session_id.clone(),
                                approval: Box::new(current.clone()),
                            })
                            .await;
                        break current;
                    }
                }
                _ = &mut sleep => {
                    break self.close_unanswered(&approval, ApprovalStatus::TimedOut, path::TIMEOUT).await?;
                }
                _ = self.cancel.cancelled() => {
                    break self.close_unanswered(&approval, ApprovalStatus::Cancelled, path::REQUEST_CANCELLED).await?;
                }
            }
        };
        self.engine.waiters().remove(&approval.id);
        self.engine
            .approvals()
            .set_run_status(&req.session_id, &req.run_id, RunStatus::Running)
            .await;
        self.count_resolved(&resolved);
        Ok(outcome_of(&resolved))
    }

    /// Records a request answered on the spot (grant or mode).
    async fn record_immediate(
        &self,
        mut approval: Approval,
        options: &[PermissionOption],
        decision: Decision,
        scope: Scope,
        how: &str,
    ) -> Result<PermissionOutcome> {
        settle(&mut approval, options, decision, scope, how);
        self.engine.store().create_approval(&approval).await?;
        self.count_resolved(&approval);
        self.engine
            .emit(EngineEvent::ApprovalResolved {
                session_id: approval.session_id.clone(),
                approval: Box::new(approval.clone()),
            })
            .await;
        Ok(outcome_of(&approval))
    }

    /// Counts how a request ended, and notes it on the turn's span.
    fn count_resolved(&self, approval: &Approval) {
        let path = approval.path.as_deref().unwrap_or("operator");
        metrics::approval_resolved(
            &approval.tool_kind,
            self.adapter_id.as_deref(),
            approval.status.as_str(),
            path,
        );
        self.span.in_scope(|| {
            tracing::info!(
                hecate.approval.id = %approval.id,
                hecate.approval.status = approval.status.as_str(),
                hecate.approval.path = path,
                hecate.approval.tool_kind = %approval.tool_kind,
                "approval resolved"
            );
        });
    }

    /// Times out or cancels a pending request, unless someone answered meanwhile.
    async fn close_unanswered(
        &self,
        approval: &Approval,
        status: ApprovalStatus,
        how: &str,
    ) -> Result<Approval> {
        let mut closed = approval.clone();
        closed.status = status;
        closed.path = Some(how.into());
        closed.resolved_at = Some(now_rfc3339());
        let store = self.engine.store();
        let result = match store.resolve_approval(&closed).await {
            Ok(()) => closed,
            Err(e) if e.error_type == ErrorType::Conflict => {
                store.get_approval(&approval.id).await?
            }
            Err(e) => return Err(e),
        };
        self.engine
            .emit(EngineEvent::ApprovalResolved {
                session_id: approval.session_id.clone(),
                approval: Box::new(result.clone()),
            })
            .await;
        Ok(result)
    }
}

impl<'e> Approvals<'e> {
    /// Approvals of a namespace, optionally of one session and one status.
    pub async fn list(
        self,
        namespace: &str,
        session_id: Option<&SessionId>,
        status: Option<ApprovalStatus>,
    ) -> Result<Vec<Approval>> {
        self.engine
            .store()
            .list_approvals(ApprovalQuery {
                namespace,
                session_id,
                status,
            })
            .await
    }

    /// One approval, if its session is in `namespace`.
    pub async fn get(self, namespace: &str, id: &ApprovalId) -> Result<Approval> {
        let approval = self.engine.store().get_approval(id).await?;
        self.engine
            .get_session(namespace, &approval.session_id)
            .await
            .map_err(|_| HecateError::not_found("approval", id.as_str()))?;
        Ok(approval)
    }

    /// Decides a pending approval (from any process): picks the agent option by kind,
    /// records the decision, turns a wider scope into a grant, and wakes the waiter.
    pub async fn resolve(
        self,
        namespace: &str,
        id: &ApprovalId,
        decision: Decision,
        scope: Scope,
    ) -> Result<Approval> {
        self.resolve_as(namespace, id, decision, scope, None).await
    }

    /// [`Approvals::resolve`], recording who decided (`admin`, `key:NAME`, `cli`)
    /// on the approval and on the grant a wider scope makes.
    pub async fn resolve_as(
        self,
        namespace: &str,
        id: &ApprovalId,
        decision: Decision,
        scope: Scope,
        by: Option<&str>,
    ) -> Result<Approval> {
        let mut approval = self.get(namespace, id).await?;
        if approval.status != ApprovalStatus::Pending {
            return Err(HecateError::new(
                ErrorType::Conflict,
                format!("approval {id} is already {}", approval.status.as_str()),
            )
            .with_detail("status", approval.status.as_str()));
        }
        let session = self
            .engine
            .get_session(namespace, &approval.session_id)
            .await?;
        let options = options_of(&approval);
        settle(&mut approval, &options, decision, scope, path::OPERATOR);
        approval.resolved_by = by.map(str::to_string);
        let grant = (scope != Scope::Once).then(|| Grant {
            id: GrantId::generate(),
            namespace: namespace.to_string(),
            scope: scope.as_str().into(),
            session_id: (scope == Scope::Session).then(|| session.id.clone()),
            adapter_id: (scope == Scope::AdapterTool)
                .then(|| session.adapter_id.clone())
                .flatten(),
            workspace: (scope == Scope::WorkspaceTool)
                .then(|| session.workspace.clone())
                .flatten(),
            tool_kind: approval.tool_kind.clone(),
            decision: decision.as_str().into(),
            created_at: now_rfc3339(),
            expires_at: None,
            created_by: by.map(str::to_string),
        });
        if let Some(g) = &grant
            && g.session_id.is_none()
            && g.adapter_id.is_none()
            && g.workspace.is_none()
        {
            return Err(HecateError::invalid(format!(
                "scope {} needs a session with {}",
                scope.as_str(),
                if scope == Scope::AdapterTool {
                    "an adapter"
                } else {
                    "a workspace"
                }
            )));
        }
        self.engine.store().resolve_approval(&approval).await?;
        if let Some(g) = &grant {
            self.engine.store().create_grant(g).await?;
        }
        self.announce_resolution(&approval);
        Ok(approval)
    }

    /// Cancels a pending approval: the agent gets the cancelled outcome.
    pub async fn cancel(self, namespace: &str, id: &ApprovalId) -> Result<Approval> {
        let mut approval = self.get(namespace, id).await?;
        if approval.status != ApprovalStatus::Pending {
            return Err(HecateError::new(
                ErrorType::Conflict,
                format!("approval {id} is already {}", approval.status.as_str()),
            ));
        }
        approval.status = ApprovalStatus::Cancelled;
        approval.path = Some(path::OPERATOR.into());
        approval.resolved_at = Some(now_rfc3339());
        self.engine.store().resolve_approval(&approval).await?;
        self.announce_resolution(&approval);
        Ok(approval)
    }

    /// Tells a stored resolution to whoever waits on the approval in this process
    /// and to every surface following its session.
    fn announce_resolution(self, approval: &Approval) {
        if let Some(tx) = self.engine.waiters().remove(&approval.id) {
            let _ = tx.send(approval.clone());
        }
        self.engine.emit_detached(EngineEvent::ApprovalResolved {
            session_id: approval.session_id.clone(),
            approval: Box::new(approval.clone()),
        });
    }

    /// Grants of a namespace.
    pub async fn list_grants(self, namespace: &str) -> Result<Vec<Grant>> {
        self.engine.store().list_grants(namespace).await
    }

    /// Deletes a grant.
    pub async fn revoke_grant(self, namespace: &str, id: &GrantId) -> Result<()> {
        self.engine.store().revoke_grant(namespace, id).await
    }

    /// Marks a run (and its session) as running or awaiting approval; best effort.
    async fn set_run_status(self, session_id: &SessionId, run_id: &RunId, status: RunStatus) {
        if let Err(e) = self
            .engine
            .store()
            .set_run_status(RunStatusUpdate {
                session_id,
                run_id,
                status,
            })
            .await
        {
            tracing::warn!(error = %e, "could not update run status");
        }
    }
}
