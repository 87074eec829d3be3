//! Every approval of a namespace still waiting for a decision, in one list: the
//! sessions' questions and the gates of standalone task runs. A gate of a task
//! behind a Hecate Agent chat is asked on its session, so it is listed once, as
//! the session's. The approvals inbox and the pending count read this one list.

use super::Engine;
use crate::domain::approval::{Approval, ApprovalStatus, Scope, scope_choices};
use crate::domain::error::Result;
use crate::domain::ids::{SessionId, TaskId};
use crate::domain::task::TaskApproval;
use std::collections::HashMap;

/// One approval waiting for a decision.
#[derive(Debug, Clone)]
pub enum PendingApproval {
    /// A session's question (an external agent's or Hecate's agent's).
    Session {
        /// The approval.
        approval: Box<Approval>,
        /// Its session's title (absent when the session is gone).
        session_title: Option<String>,
        /// The scopes a decision may take on that session.
        scope_choices: Vec<Scope>,
    },
    /// A standalone task run's gate.
    Task(TaskApproval),
}

impl PendingApproval {
    /// When it was asked (RFC 3339), the list's order.
    pub fn created_at(&self) -> &str {
        match self {
            Self::Session { approval, .. } => &approval.created_at,
            Self::Task(gate) => &gate.created_at,
        }
    }
}

impl Engine {
    /// The namespace's pending approvals, oldest first.
    pub async fn pending_approvals(&self, namespace: &str) -> Result<Vec<PendingApproval>> {
        let asked = self
            .approvals()
            .list(namespace, None, Some(ApprovalStatus::Pending))
            .await?;
        let mut sessions: HashMap<SessionId, Option<(String, Vec<Scope>)>> = HashMap::new();
        let mut out = Vec::with_capacity(asked.len());
        for approval in asked {
            if !sessions.contains_key(&approval.session_id) {
                let found = self.get_session(namespace, &approval.session_id).await.ok();
                let facts = found.map(|s| {
                    let scopes = scope_choices(s.workspace.is_some(), s.adapter_id.is_some());
                    (s.title, scopes)
                });
                sessions.insert(approval.session_id.clone(), facts);
            }
            let facts = sessions.get(&approval.session_id).cloned().flatten();
            out.push(PendingApproval::Session {
                session_title: facts.as_ref().map(|(title, _)| title.clone()),
                scope_choices: facts
                    .map(|(_, scopes)| scopes)
                    .unwrap_or_else(|| scope_choices(false, false)),
                approval: Box::new(approval),
            });
        }
        let mut behind_chat: HashMap<TaskId, bool> = HashMap::new();
        for gate in self.tasks().namespace_approvals(namespace, false).await? {
            let chat = match behind_chat.get(&gate.task_id) {
                Some(chat) => *chat,
                None => {
                    let task = self.tasks().get_task(namespace, &gate.task_id).await?;
                    let chat = task.spec.session_sequence.is_some();
                    behind_chat.insert(gate.task_id.clone(), chat);
                    chat
                }
            };
            if !chat {
                out.push(PendingApproval::Task(gate));
            }
        }
        out.sort_by(|a, b| a.created_at().cmp(b.created_at()));
        Ok(out)
    }

    /// How many approvals of `namespace` wait for a decision: the length of
    /// [`Engine::pending_approvals`].
    pub async fn pending_approval_count(&self, namespace: &str) -> Result<usize> {
        Ok(self.pending_approvals(namespace).await?.len())
    }
}
