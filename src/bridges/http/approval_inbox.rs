//! The approvals inbox: every pending approval of the namespace in one list, the
//! sessions' questions and the task runs' gates, for the console's Approvals page
//! and any script that answers them. The engine decides what is listed; this
//! renders it.

use super::HttpState;
use super::envelope::ApiError;
use crate::bridges::resources::agent::{InboxApprovalDto, InboxResponse};
use crate::engine::PendingApproval;
use axum::Json;
use axum::extract::State;
use serde_json::json;

fn render(p: PendingApproval) -> InboxApprovalDto {
    match p {
        PendingApproval::Session {
            approval,
            session_title,
            scope_choices,
        } => {
            let a = *approval;
            InboxApprovalDto {
                kind: "session".to_string(),
                approval_id: a.id.to_string(),
                session_id: Some(a.session_id.to_string()),
                session_title,
                task_id: None,
                run_id: a.run_id.as_ref().map(|r| r.to_string()),
                tool_name: a.tool_name,
                tool_kind: a.tool_kind,
                options: a.options,
                scope_choices: scope_choices
                    .iter()
                    .map(|s| s.as_str().to_string())
                    .collect(),
                created_at: a.created_at,
                expires_at: a.expires_at,
            }
        }
        PendingApproval::Task(gate) => InboxApprovalDto {
            kind: "task".to_string(),
            approval_id: gate.id.to_string(),
            session_id: None,
            session_title: None,
            task_id: Some(gate.task_id.to_string()),
            run_id: Some(gate.run_id.to_string()),
            tool_kind: gate.kind.as_str().to_string(),
            tool_name: gate.reason,
            options: json!([{"id": "approve", "name": "Approve"}, {"id": "reject", "name": "Reject"}]),
            scope_choices: Vec::new(),
            created_at: gate.created_at,
            expires_at: None,
        },
    }
}

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
    let pending = state.engine.pending_approvals(&state.namespace).await?;
    Ok(Json(InboxResponse {
        object: "approvals".to_string(),
        data: pending.into_iter().map(render).collect(),
    }))
}
