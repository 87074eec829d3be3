//! The permission bridge: an engine approval for a thread's turn becomes the
//! editor's `session/request_permission` with the agent's options intact, and the
//! editor's choice resolves the approval.

use super::render::permission_tool_call;
use super::state::Shared;
use crate::domain::approval::{Approval, Decision, Scope};
use crate::domain::event::EngineEvent;
use crate::domain::ids::ApprovalId;
use crate::domain::permission::{PermissionKind, PermissionOption};
use crate::engine::bus::{Received, Subscription};
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption as AcpOption, RequestPermissionOutcome, RequestPermissionRequest,
};
use std::sync::Arc;

fn acp_options(approval: &Approval) -> Vec<AcpOption> {
    let options: Vec<PermissionOption> =
        serde_json::from_value(approval.options.clone()).unwrap_or_default();
    options
        .iter()
        .filter_map(|o| {
            serde_json::from_value(serde_json::json!({
                "optionId": o.id, "name": o.name, "kind": o.kind,
            }))
            .ok()
        })
        .collect()
}

fn decision_for(approval: &Approval, option_id: &str) -> Option<(Decision, Scope)> {
    let options: Vec<PermissionOption> =
        serde_json::from_value(approval.options.clone()).unwrap_or_default();
    let kind = options.iter().find(|o| o.id == option_id)?.kind;
    Some(match kind {
        PermissionKind::AllowOnce => (Decision::Approve, Scope::Once),
        PermissionKind::AllowAlways => (Decision::Approve, Scope::Session),
        PermissionKind::RejectOnce => (Decision::Reject, Scope::Once),
        PermissionKind::RejectAlways => (Decision::Reject, Scope::Session),
    })
}

/// Waits until `approval` is resolved by someone other than the editor (a
/// timeout, a cancelled turn, another process); never returns otherwise.
async fn resolved_elsewhere(mut events: Subscription, approval: &ApprovalId) {
    while let Some(r) = events.recv().await {
        if let Received::Event(EngineEvent::ApprovalResolved { approval: a, .. }) = r
            && &a.id == approval
        {
            return;
        }
    }
    std::future::pending::<()>().await;
}

/// Applies the editor's answer to `approval`.
async fn apply(shared: &Shared, approval: &Approval, outcome: Option<RequestPermissionOutcome>) {
    let ns = &shared.config.namespace;
    let decision = match outcome {
        Some(RequestPermissionOutcome::Selected(s)) => decision_for(approval, &s.option_id.0),
        _ => None,
    };
    let result = match decision {
        Some((d, scope)) => shared
            .engine
            .approvals()
            .resolve(ns, &approval.id, d, scope)
            .await
            .map(|_| ()),
        None => shared
            .engine
            .approvals()
            .cancel(ns, &approval.id)
            .await
            .map(|_| ()),
    };
    if let Err(e) = result {
        // Someone else (a grant, a timeout, another terminal) answered first.
        tracing::debug!(error = %e, "permission answer not applied");
    }
}

/// Asks the editor about `approval` and resolves it with the answer (in a task, so
/// the connection keeps flowing while the user decides). When the approval is
/// resolved elsewhere first, the editor's request is withdrawn.
pub fn forward(
    shared: Arc<Shared>,
    cx: ConnectionTo<Client>,
    approval: Approval,
    tool_call_id: Option<String>,
) {
    tokio::spawn(async move {
        let call_id = tool_call_id.unwrap_or_else(|| approval.id.to_string());
        let Some(tool_call) =
            permission_tool_call(&call_id, &approval.tool_name, &approval.tool_kind)
        else {
            return;
        };
        let request = RequestPermissionRequest::new(
            approval.session_id.to_string(),
            tool_call,
            acp_options(&approval),
        );
        let events = shared
            .engine
            .bus()
            .subscribe(Some(approval.session_id.clone()));
        let answer = cx.send_request(request).block_task();
        let outcome = tokio::select! {
            a = answer => match a {
                Ok(resp) => Some(resp.outcome),
                Err(e) => {
                    tracing::warn!(error = ?e, "the client did not answer the permission request");
                    None
                }
            },
            // Dropping the pending request withdraws it from the editor.
            _ = resolved_elsewhere(events, &approval.id) => return,
        };
        apply(&shared, &approval, outcome).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn approval() -> Approval {
        serde_json::from_value(json!({
            "id": "apr_1", "session_id": "s", "status": "pending",
            "tool_kind": "edit", "tool_name": "Write b.txt", "created_at": "now",
            "options": [
                {"id": "ok", "name": "Allow", "kind": "allow_once"},
                {"id": "always", "name": "Always", "kind": "allow_always"},
                {"id": "no", "name": "Reject", "kind": "reject_once"},
                {"id": "never", "name": "Never", "kind": "reject_always"}
            ]
        }))
        .expect("approval")
    }

    #[test]
    fn the_agents_options_pass_verbatim_and_answers_map_by_kind() {
        let a = approval();
        let ids: Vec<String> = acp_options(&a)
            .iter()
            .map(|o| o.option_id.0.to_string())
            .collect();
        assert_eq!(ids, ["ok", "always", "no", "never"]);
        assert_eq!(
            decision_for(&a, "ok"),
            Some((Decision::Approve, Scope::Once))
        );
        assert_eq!(
            decision_for(&a, "always"),
            Some((Decision::Approve, Scope::Session))
        );
        assert_eq!(
            decision_for(&a, "no"),
            Some((Decision::Reject, Scope::Once))
        );
        assert_eq!(
            decision_for(&a, "never"),
            Some((Decision::Reject, Scope::Session))
        );
        assert_eq!(decision_for(&a, "made-up"), None);
    }
}
