//! Turns run for MCP callers (`send_message`, `ask_agent`): progress
//! notifications while the turn runs (when the request has a progressToken),
//! MCP cancellation turned into an engine cancel, approvals put to the caller by
//! elicitation, and the answer with the files the turn changed.

use super::args::{ApprovalModeArg, AskAgentArgs, TurnOut};
use super::elicit::{self, ElicitAnswer};
use super::modern::progress::progress_target;
use super::server::HecateMcp;
use crate::bridges::resources::agent::ChangedFileDto;
use crate::domain::approval::ApprovalMode;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::event::{EngineEvent, RuntimeEvent};
use crate::domain::ids::SessionId;
use crate::domain::session::RuntimeKind;
use crate::engine::bus::Received;
use crate::engine::{CreateSession, SendMessage};
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;

/// Who answers an `ask_agent` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An external agent adapter.
    Agent(String),
    /// A model, `provider/model`.
    Model(String),
    /// Hecate's own agent on a model (`provider/model`; `None`: the default model).
    Hecate(Option<String>),
}

/// Parses `agent:ID`, `model:PROVIDER/MODEL`, `hecate` or `hecate:PROVIDER/MODEL`.
pub fn parse_target(s: &str) -> Result<Target> {
    match s.split_once(':') {
        Some(("agent", id)) if !id.trim().is_empty() => Ok(Target::Agent(id.trim().to_string())),
        Some(("model", m)) if m.contains('/') => Ok(Target::Model(m.trim().to_string())),
        Some(("hecate", m)) if m.contains('/') => Ok(Target::Hecate(Some(m.trim().to_string()))),
        None if s.trim() == "hecate" => Ok(Target::Hecate(None)),
        _ => Err(HecateError::invalid(format!(
            "target {s:?} is not `agent:ID`, `model:PROVIDER/MODEL`, `hecate` or `hecate:PROVIDER/MODEL`"
        ))
        .with_detail("target", s)),
    }
}

/// A one-line progress message for a runtime event, when it is worth one.
fn describe(update: &RuntimeEvent) -> Option<String> {
    match update {
        RuntimeEvent::TextDelta { text } => Some(text.clone()),
        RuntimeEvent::ThoughtDelta { text } => Some(format!("(thinking) {text}")),
        RuntimeEvent::ToolCallStarted { name, kind, .. } => Some(match kind {
            Some(k) => format!("[tool: {name} ({k})]"),
            None => format!("[tool: {name}]"),
        }),
        RuntimeEvent::ToolCallUpdated {
            id,
            status: Some(st),
            ..
        } => Some(format!("[tool {id}: {st}]")),
        RuntimeEvent::FileChanged { path, change } => Some(format!("[{change}: {path}]")),
        RuntimeEvent::Plan { .. } => Some("[plan updated]".into()),
        _ => None,
    }
}

impl HecateMcp {
    /// `ask_agent`: reuses or creates the session for `target`, then runs a turn.
    pub(crate) async fn delegate(
        &self,
        a: AskAgentArgs,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<TurnOut> {
        let target = parse_target(&a.target)?;
        let sid = match &a.session_id {
            Some(id) => {
                let sid = SessionId::from(id.as_str());
                self.engine.get_session(self.ns(), &sid).await?;
                sid
            }
            None => {
                let title = format!(
                    "Delegated by MCP: {}",
                    a.prompt.chars().take(60).collect::<String>()
                );
                let req = match &target {
                    Target::Agent(id) => CreateSession {
                        title: Some(title),
                        runtime_kind: Some(RuntimeKind::ExternalAgent),
                        adapter_id: Some(id.clone()),
                        workspace: a.workspace.clone(),
                        ..Default::default()
                    },
                    Target::Model(m) => CreateSession {
                        title: Some(title),
                        model: Some(m.clone()),
                        workspace: a.workspace.clone(),
                        ..Default::default()
                    },
                    Target::Hecate(m) => CreateSession {
                        title: Some(title),
                        runtime_kind: Some(RuntimeKind::Agent),
                        model: m.clone(),
                        workspace: a.workspace.clone(),
                        ..Default::default()
                    },
                };
                self.engine.create_session(self.ns(), req).await?.id
            }
        };
        self.run_turn(&sid, a.prompt, a.approval_mode, ctx).await
    }

    /// Runs one turn of `sid`, streaming progress and answering approvals by
    /// elicitation when the caller supports it.
    pub(crate) async fn run_turn(
        &self,
        sid: &SessionId,
        content: String,
        mode: Option<ApprovalModeArg>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<TurnOut> {
        let reach = elicit::Reach::of(ctx);
        let can_elicit = reach.is_some();
        let approval_mode = match mode {
            Some(ApprovalModeArg::Auto) => Some(ApprovalMode::Auto),
            Some(ApprovalModeArg::Deny) => Some(ApprovalMode::Deny),
            Some(ApprovalModeArg::Prompt) => Some(ApprovalMode::Prompt),
            None if can_elicit => Some(ApprovalMode::Prompt),
            None => None,
        };
        let elicit_approvals = can_elicit && approval_mode == Some(ApprovalMode::Prompt);
        let mut turn = self
            .engine
            .send_message(
                self.ns(),
                sid,
                SendMessage {
                    content,
                    approval_mode,
                    ..Default::default()
                },
            )
            .await?;
        let mut step = 0.0_f64;
        let mut cancelled = false;
        loop {
            tokio::select! {
                ev = turn.events.recv() => match ev {
                    Some(Received::Event(EngineEvent::Runtime { update, .. })) => {
                        // Looked up each time: a call in rounds reports to the current round.
                        if let (Some(message), Some((peer, token))) = (describe(&update), progress_target(ctx)) {
                            step += 1.0;
                            let p = ProgressNotificationParam::new(token, step).with_message(message);
                            if peer.notify_progress(p).await.is_err() {
                                tracing::debug!("progress could not be delivered");
                            }
                        }
                    }
                    Some(Received::Event(EngineEvent::ApprovalRequested { approval, .. })) if elicit_approvals => {
                        let Some(reach) = reach.clone() else { continue };
                        let engine = self.engine.clone();
                        let ns = self.ns().to_string();
                        tokio::spawn(async move {
                            let result = match elicit::ask(&reach, &approval).await {
                                ElicitAnswer::Decided(d, s) => engine.approvals().resolve(&ns, &approval.id, d, s).await.map(|_| ()),
                                ElicitAnswer::Dismissed => engine.approvals().cancel(&ns, &approval.id).await.map(|_| ()),
                                ElicitAnswer::Failed => Ok(()),
                            };
                            if let Err(e) = result
                                && e.error_type != ErrorType::Conflict
                            {
                                tracing::warn!(error = %e, "could not apply the elicited approval");
                            }
                        });
                    }
                    Some(Received::Event(EngineEvent::TurnFinished { .. })) | None => break,
                    Some(_) => {}
                },
                _ = ctx.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    if let Err(e) = self.engine.cancel(self.ns(), sid).await {
                        tracing::debug!(error = %e, "cancel after the MCP request was cancelled");
                    }
                }
            }
        }
        let result = turn.wait().await;
        let files_changed = match &result.assistant {
            Some(m) => self
                .engine
                .message_files(self.ns(), sid, &m.id)
                .await
                .unwrap_or_default()
                .iter()
                .map(ChangedFileDto::from)
                .collect(),
            None => Vec::new(),
        };
        Ok(TurnOut {
            session_id: sid.to_string(),
            run_id: result.run.id.to_string(),
            status: result.run.status.as_str().to_string(),
            answer: result
                .assistant
                .as_ref()
                .map(|m| m.content.clone())
                .unwrap_or_default(),
            files_changed,
            error: result
                .error
                .as_ref()
                .and_then(|e| serde_json::to_value(e).ok()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_an_agent_or_a_model() {
        assert_eq!(
            parse_target("agent:codex").ok(),
            Some(Target::Agent("codex".into()))
        );
        assert_eq!(
            parse_target("model:fix/m1").ok(),
            Some(Target::Model("fix/m1".into()))
        );
        assert!(parse_target("model:nomodel").is_err());
        assert!(parse_target("codex").is_err());
        assert_eq!(
            parse_target("hecate:fix/m").expect("hecate on a model"),
            Target::Hecate(Some("fix/m".into()))
        );
        assert_eq!(
            parse_target("hecate").expect("default"),
            Target::Hecate(None)
        );
        assert!(parse_target("hecate:m").is_err());
        assert!(parse_target("agent:").is_err());
    }
}
