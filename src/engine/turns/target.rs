//! What answers a turn: a model (routed as the gateway routes it), Hecate's own
//! agent in the session's workspace, or the session's external agent.

use super::SendMessage;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::session::{RuntimeKind, Session};
use crate::engine::Engine;
use crate::runtimes::TurnTarget;

impl Engine {
    /// Resolves what answers a turn of `kind` in `session` with `req`'s overrides;
    /// `workspace_checked` says the session's workspace was just canonicalised,
    /// and `backing` is the ended task run a Hecate Agent follow-up continues.
    pub(super) async fn turn_target(
        &self,
        session: &Session,
        kind: RuntimeKind,
        req: &SendMessage,
        workspace_checked: bool,
        backing: Option<(TaskId, TaskRunId)>,
    ) -> Result<TurnTarget> {
        match kind {
            RuntimeKind::Model => {
                let t = self.turn_model(session, req).await?;
                let named = req
                    .provider
                    .as_deref()
                    .is_some_and(|p| !p.trim().is_empty());
                Ok(TurnTarget::Model {
                    provider: t.provider,
                    model: t.model,
                    pinned: named || req.model.as_deref().is_some_and(|m| m.contains('/')),
                })
            }
            RuntimeKind::Agent => {
                let workspace = session.workspace.clone().ok_or_else(|| {
                    HecateError::new(
                        ErrorType::WorkspaceRequired,
                        "Hecate Agent turns need a workspace",
                    )
                    .with_operator_action(
                        "Create the session with a workspace, or send this prompt with one.",
                    )
                })?;
                let workspace = if workspace_checked {
                    workspace
                } else {
                    crate::engine::workspace::canonical_workspace(&workspace)?
                };
                let t = self.turn_model(session, req).await?;
                Ok(TurnTarget::Agent {
                    provider: t.provider,
                    model: t.model,
                    workspace,
                    continue_from: backing,
                    mcp_servers: req.mcp_servers.clone(),
                })
            }
            RuntimeKind::ExternalAgent => {
                let adapter_id = session.adapter_id.clone().unwrap_or_default();
                self.agents().check_adapter(&adapter_id)?;
                let workspace = session.workspace.clone().ok_or_else(|| {
                    HecateError::new(
                        ErrorType::WorkspaceRequired,
                        "external agents need a workspace",
                    )
                })?;
                // A stored workspace must still exist and be a directory.
                let workspace = if workspace_checked {
                    workspace
                } else {
                    crate::engine::workspace::canonical_workspace(&workspace)?
                };
                Ok(TurnTarget::External {
                    adapter_id,
                    workspace,
                    native_session_id: session.native_session_id.clone(),
                    mcp_servers: req.mcp_servers.clone(),
                })
            }
        }
    }

    /// The provider model of a model or Hecate Agent turn: the request's
    /// override, else the session's.
    async fn turn_model(
        &self,
        session: &Session,
        req: &SendMessage,
    ) -> Result<crate::runtimes::model::ModelTarget> {
        match req.model.as_deref() {
            Some(m) => self.gateway().route_model(req.provider.as_deref(), m).await,
            None => {
                self.gateway()
                    .route_model(
                        req.provider.as_deref().or(session.provider.as_deref()),
                        session.model.as_deref().unwrap_or_default(),
                    )
                    .await
            }
        }
    }
}
