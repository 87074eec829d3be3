//! Permission requests put to the MCP client's user by elicitation (a form with
//! one choice), for delegated agents' approvals and for proxied calls whose
//! policy requires approval; task approvals use the same choices
//! (`task_elicit.rs`).

use crate::domain::approval::{Approval, Decision, Scope};
use crate::engine::ApprovalPrompter;
use futures::future::BoxFuture;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ServerRequest,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

/// The user's answer to an approval elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitAnswer {
    /// They chose.
    Decided(Decision, Scope),
    /// They dismissed the form.
    Dismissed,
    /// The client could not be asked (error, closed connection).
    Failed,
}

/// Whether the client advertised the elicitation capability.
pub fn supports_elicitation(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|i| i.capabilities.elicitation.is_some())
}

/// Maps the form's `decision` value to a decision and scope.
pub fn parse_choice(choice: &str) -> Option<(Decision, Scope)> {
    match choice {
        "approve_once" => Some((Decision::Approve, Scope::Once)),
        "approve_session" => Some((Decision::Approve, Scope::Session)),
        "reject" => Some((Decision::Reject, Scope::Once)),
        _ => None,
    }
}

/// The form's `decision` field: one of `choices`, described by `description`.
pub fn decision_field(description: &str, choices: &[&str]) -> Value {
    json!({
        "type": "string",
        "title": "Decision",
        "description": description,
        "enum": choices,
    })
}

/// The `elicitation/create` request for a form (`message`, `requestedSchema`,
/// optional `_meta`), or `None` when the form is not a valid elicitation.
pub fn form_request(params: Value) -> Option<ServerRequest> {
    match serde_json::from_value::<ElicitRequestParams>(params) {
        Ok(p) => Some(ServerRequest::ElicitRequest(ElicitRequest::new(p))),
        Err(e) => {
            tracing::warn!(error = %e, "an approval form is not a valid elicitation");
            None
        }
    }
}

/// Asks the client's user about `approval` and waits for the answer.
pub async fn ask(peer: &Peer<RoleServer>, approval: &Approval) -> ElicitAnswer {
    let params = json!({
        "message": format!(
            "Hecate: permission requested for \"{}\" ({}). Allow it?",
            approval.tool_name, approval.tool_kind
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": decision_field(
                    "approve_once, approve_session (a grant for the rest of the session) or reject",
                    &["approve_once", "approve_session", "reject"],
                )
            },
            "required": ["decision"]
        }
    });
    let Some(request) = form_request(params) else {
        return ElicitAnswer::Failed;
    };
    match peer.send_request(request).await {
        Ok(ClientResult::ElicitResult(r)) => match r.action {
            ElicitationAction::Accept => r
                .content
                .as_ref()
                .and_then(|c| c.get("decision"))
                .and_then(|d| d.as_str())
                .and_then(parse_choice)
                .map(|(d, s)| ElicitAnswer::Decided(d, s))
                .unwrap_or(ElicitAnswer::Dismissed),
            ElicitationAction::Decline => ElicitAnswer::Decided(Decision::Reject, Scope::Once),
            _ => ElicitAnswer::Dismissed,
        },
        Ok(_) => ElicitAnswer::Failed,
        Err(e) => {
            tracing::warn!(error = %e, "elicitation for an approval failed");
            ElicitAnswer::Failed
        }
    }
}

/// The engine's approval prompter backed by one client's elicitation.
pub struct ElicitingPrompter {
    /// The client.
    pub peer: Peer<RoleServer>,
}

impl ApprovalPrompter for ElicitingPrompter {
    fn prompt(&self, approval: Approval) -> BoxFuture<'static, Option<(Decision, Scope)>> {
        let peer = self.peer.clone();
        Box::pin(async move {
            match ask(&peer, &approval).await {
                ElicitAnswer::Decided(d, s) => Some((d, s)),
                ElicitAnswer::Dismissed | ElicitAnswer::Failed => None,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_map_to_decisions() {
        assert_eq!(
            parse_choice("approve_once"),
            Some((Decision::Approve, Scope::Once))
        );
        assert_eq!(
            parse_choice("approve_session"),
            Some((Decision::Approve, Scope::Session))
        );
        assert_eq!(
            parse_choice("reject"),
            Some((Decision::Reject, Scope::Once))
        );
        assert_eq!(parse_choice("maybe"), None);
    }

    #[test]
    fn the_form_deserializes_as_an_elicitation() {
        let v = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {"decision": {"type": "string", "enum": ["a"]}}}});
        assert!(serde_json::from_value::<ElicitRequestParams>(v).is_ok());
    }
}
