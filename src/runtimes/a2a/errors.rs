//! A remote agent's failures as Hecate errors: `gateway_error` with a stable
//! `reason`, the agent id, and what the operator can do.

use crate::adapters::a2a::A2aClientError;
use crate::domain::error::{ErrorType, HecateError};

/// `e`, met while talking to remote agent `agent_id`, as a Hecate error.
pub fn into_hecate(e: &A2aClientError, agent_id: &str) -> HecateError {
    let action = match e {
        A2aClientError::CardUnreachable { .. }
        | A2aClientError::CardTimeout { .. }
        | A2aClientError::Unreachable { .. } => {
            "Check that the remote agent runs and that its card_url in [a2a_agents] is right."
        }
        A2aClientError::CardInvalid { .. } | A2aClientError::NoUsableInterface { .. } => {
            "Point card_url in [a2a_agents] at the agent's /.well-known/agent-card.json (an A2A 1.x card with a JSONRPC or HTTP+JSON interface)."
        }
        A2aClientError::Unauthorized { .. } => {
            "Set the agent's token (token_env in [a2a_agents]) to one the agent accepts."
        }
        A2aClientError::Timeout { .. } => {
            "Retry; raise request_timeout_secs in [a2a_agents] if the agent is slow."
        }
        A2aClientError::Remote { .. } | A2aClientError::Malformed(_) => {
            "Read the agent's message in the error; fix the request or the agent and retry."
        }
    };
    HecateError::new(ErrorType::GatewayError, format!("{agent_id}: {e}"))
        .with_user_message(format!(
            "The remote A2A agent {agent_id} could not answer: {e}"
        ))
        .with_operator_action(action)
        .with_detail("reason", e.reason())
        .with_detail("adapter_id", agent_id)
        .with_detail("driver_kind", "a2a")
}
