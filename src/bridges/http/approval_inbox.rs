//! The approvals inbox: every pending approval of the namespace in one list, the
//! sessions' questions and the task runs' gates, for the console's Approvals page
//! and any script that answers them.

use super::HttpState;
use super::envelope::ApiError;
use crate::bridges::resources::agent::{InboxApprovalDto, InboxResponse};
use crate::domain::approval::{ApprovalStatus, scope_choices};
use crate::domain::ids::SessionId;
use crate::domain::session::Session;
use axum::Json;
use axum::extract::State;
use serde_json::json;
use std::collections::HashMap;

/// Every pending approval of the namespace, oldest first. A gate of a task that
/// backs a Hecate Agent chat is asked on its session, so it is listed once, as the
/// session's.
#[utoipa::path(
    get,
    path = "/hecate/v1/approvals",
    operation_id = "list_pending_approvals",
    tag = "approvals",
    responses(
        (status = 200, description = "The namespace's pending approvals", body = InboxResponse)
    )
)]
pub async fn list(State(state): State<HttpState>) -> Result<Json<InboxResponse>, ApiError> {
    let ns = &*state.namespace;
    let engine = &state.engine;
    let asked = engine
        .approvals()
        .list(ns, None, Some(ApprovalStatus::Pending))
        .await?;
    let mut sessions: HashMap<SessionId, Option<Session>> = HashMap::new();
    let mut data = Vec::with_capacity(asked.len());
    for a in &asked {
        if !sessions.contains_key(&a.session_id) {
            let session = engine.get_session(ns, &a.session_id).await.ok();
            sessions.insert(a.session_id.clone(), session);
        }
        let session = sessions.get(&a.session_id).and_then(Option::as_ref);
        let scopes = scope_choices(
            session.is_some_and(|s| s.workspace.is_some()),
            session.is_some_and(|s| s.adapter_id.is_some()),
        );
        data.push(InboxApprovalDto {
            kind: "session".to_string(),
            approval_id: a.id.to_string(),
            session_id: Some(a.session_id.to_string()),
            session_title: session.map(|s| s.title.clone()),
            task_id: None,
            run_id: a.run_id.as_ref().map(|r| r.to_string()),
            tool_name: a.tool_name.clone(),
            tool_kind: a.tool_kind.clone(),
            options: a.options.clone(),
            scope_choices: scopes.iter().map(|s| s.as_str().to_string()).collect(),
            created_at: a.created_at.clone(),
            expires_at: a.expires_at.clone(),
        });
    }
    for gate in engine.tasks().namespace_approvals(ns, false).await? {
        let task = engine.tasks().get_task(ns, &gate.task_id).await?;
        if task.spec.session_sequence.is_some() {
            continue;
        }
        data.push(InboxApprovalDto {
            kind: "task".to_string(),
            approval_id: gate.id.to_string(),
            session_id: None,
            session_title: None,
            task_id: Some(gate.task_id.to_string()),
            run_id: Some(gate.run_id.to_string()),
            tool_name: gate.reason.clone(),
            tool_kind: gate.kind.as_str().to_string(),
            options: json!([{"id": "approve", "name": "Approve"}, {"id": "reject", "name": "Reject"}]),
            scope_choices: Vec::new(),
            created_at: gate.created_at.clone(),
            expires_at: None,
        });
    }
    data.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    Ok(Json(InboxResponse {
        object: "approvals".to_string(),
        data,
    }))
}
