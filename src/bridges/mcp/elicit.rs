//! Permission requests put to the MCP client's user by elicitation (a form with
//! one choice), for delegated agents' approvals and for proxied calls whose
//! policy requires approval; task approvals use the same choices
//! (`tasks/elicit.rs`). A form reaches the user as the client's revision
//! allows ([`Reach`]): an `elicitation/create` request on the session
//! (2025-11-25), or a question in a round of the multi round-trip call
//! (2026-07-28), where the server may not send requests.

use super::modern::is_modern;
use super::modern::rounds::Asker;
use crate::domain::approval::{Approval, Decision, Scope};
use crate::engine::ApprovalPrompter;
use futures::future::BoxFuture;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    InputRequest, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use std::time::Duration;

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

/// Why an elicitation got no result from the client.
#[derive(Debug, thiserror::Error)]
pub enum ElicitError {
    /// The request could not be sent or was answered with an error.
    #[error("elicitation failed: {0}")]
    Request(String),
    /// The client answered something that is not an elicitation result.
    #[error("the client's answer is not an elicitation result: {0}")]
    Answer(String),
    /// The client gave no answer (the round ended without one, or the time ran out).
    #[error("the client gave no answer")]
    Unanswered,
}

/// How a form reaches the user of the client that made a request.
#[derive(Clone)]
pub enum Reach {
    /// An `elicitation/create` request on the client's session (2025-11-25).
    Session(Peer<RoleServer>),
    /// A question in the next round of the multi round-trip call (2026-07-28).
    Rounds(Asker),
}

impl Reach {
    /// How to reach the user behind `context`'s request, or `None` when its
    /// client did not declare elicitation (in the request's `_meta` or its
    /// handshake) or cannot be asked in this request.
    pub fn of(context: &RequestContext<RoleServer>) -> Option<Reach> {
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        if !declared {
            return None;
        }
        match context.extensions.get::<Asker>() {
            Some(asker) => Some(Reach::Rounds(asker.clone())),
            None if !is_modern(context) => Some(Reach::Session(context.peer.clone())),
            None => None,
        }
    }

    /// Puts the form `params` to the user and waits at most `timeout` (when
    /// given) for the result.
    pub async fn elicit(
        &self,
        params: ElicitRequestParams,
        timeout: Option<Duration>,
    ) -> Result<ElicitResult, ElicitError> {
        let request = ElicitRequest::new(params);
        match self {
            Reach::Session(peer) => {
                let options = timeout.map_or_else(
                    PeerRequestOptions::no_options,
                    PeerRequestOptions::with_timeout,
                );
                let handle = peer
                    .send_request_with_option(ServerRequest::ElicitRequest(request), options)
                    .await
                    .map_err(|e| ElicitError::Request(e.to_string()))?;
                match handle.await_response().await {
                    Ok(ClientResult::ElicitResult(r)) => Ok(r),
                    Ok(other) => Err(ElicitError::Answer(format!("{other:?}"))),
                    Err(e) => Err(ElicitError::Request(e.to_string())),
                }
            }
            Reach::Rounds(asker) => {
                let asked = asker.ask("approval", InputRequest::Elicitation(request));
                let answer = match timeout {
                    Some(t) => tokio::time::timeout(t, asked).await.ok().flatten(),
                    None => asked.await,
                };
                let answer = answer.ok_or(ElicitError::Unanswered)?;
                serde_json::from_value(answer).map_err(|e| ElicitError::Answer(e.to_string()))
            }
        }
    }
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

/// The elicitation parameters of a form (`message`, `requestedSchema`,
/// optional `_meta`), or `None` when the form is not a valid elicitation.
pub fn form_params(params: Value) -> Option<ElicitRequestParams> {
    match serde_json::from_value::<ElicitRequestParams>(params) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!(error = %e, "an approval form is not a valid elicitation");
            None
        }
    }
}

/// Asks the client's user about `approval` and waits for the answer.
pub async fn ask(reach: &Reach, approval: &Approval) -> ElicitAnswer {
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
    let Some(params) = form_params(params) else {
        return ElicitAnswer::Failed;
    };
    match reach.elicit(params, None).await {
        Ok(r) => match r.action {
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
        Err(ElicitError::Unanswered) => ElicitAnswer::Dismissed,
        Err(e) => {
            tracing::warn!(error = %e, "elicitation for an approval failed");
            ElicitAnswer::Failed
        }
    }
}

/// The engine's approval prompter backed by one client's elicitation.
pub struct ElicitingPrompter {
    /// How the client's user is reached.
    pub reach: Reach,
}

impl ApprovalPrompter for ElicitingPrompter {
    fn prompt(&self, approval: Approval) -> BoxFuture<'static, Option<(Decision, Scope)>> {
        let reach = self.reach.clone();
        Box::pin(async move {
            match ask(&reach, &approval).await {
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
