//! The one error type of the Hecate library, whose `type` codes are stable and shared
//! by every surface. How a surface presents them (the CLI's exit codes, the HTTP
//! statuses, ACP and MCP error data) is decided in that surface, not here.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The stable machine code of an error; clients branch on this, never on text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorType {
    /// Request fields, parameters or arguments are invalid.
    #[serde(rename = "invalid_request")]
    InvalidRequest,
    /// The named resource does not exist (in this namespace).
    #[serde(rename = "not_found")]
    NotFound,
    /// The resource changed state or the transition is not valid now.
    #[serde(rename = "conflict")]
    Conflict,
    /// Hecate or an upstream failed in a way not classified more precisely.
    #[serde(rename = "gateway_error")]
    GatewayError,
    /// An upstream server Hecate signs in to (an OAuth-protected MCP server)
    /// refused it for want of a sign-in: none is stored, it expired and could not
    /// be refreshed, or it was revoked. `server` names the upstream; the fix is
    /// `hecate mcp login NAME`. This is never about Hecate's own authentication
    /// (a missing or wrong token for Hecate's API is the HTTP 401 `unauthorized`).
    #[serde(rename = "auth_required")]
    AuthRequired,
    /// A provider or local limiter rejected the request for rate.
    #[serde(rename = "rate_limit_exceeded")]
    RateLimitExceeded,
    /// The selected model is not configured or not reported by its provider.
    #[serde(rename = "model_not_configured")]
    ModelNotConfigured,
    /// No configured provider can serve the request.
    #[serde(rename = "route_impossible")]
    RouteImpossible,
    /// The store could not be opened, migrated, read or written.
    #[serde(rename = "store_error")]
    StoreError,
    /// A turn is already active in this session.
    #[serde(rename = "agent_chat.agent_session_busy")]
    AgentSessionBusy,
    /// Another Hecate process holds the session's owner lease.
    #[serde(rename = "agent_chat.session_busy_elsewhere")]
    SessionBusyElsewhere,
    /// The runtime needs a workspace directory and none (or no valid one) was given.
    #[serde(rename = "agent_chat.workspace_required")]
    WorkspaceRequired,
    /// The runtime needs an explicit model.
    #[serde(rename = "agent_chat.model_required")]
    ModelRequired,
    /// The runtime kind is not `model`, `agent` or `external_agent`.
    #[serde(rename = "agent_chat.runtime_kind_invalid")]
    RuntimeKindInvalid,
    /// A working-memory strategy name is not `buffer_window`, `summary_buffer` or
    /// `token_budget`.
    #[serde(rename = "agent_chat.history_strategy_invalid")]
    HistoryStrategyInvalid,
    /// The requested runtime does not match the session's kind.
    #[serde(rename = "agent_chat.runtime_mismatch")]
    RuntimeMismatch,
    /// Tools are on, but the model's capabilities say it does not call tools.
    #[serde(rename = "agent_chat.model_capability_required")]
    ModelCapabilityRequired,
    /// The named external-agent adapter is not registered.
    #[serde(rename = "agent_chat.adapter_not_found")]
    AdapterNotFound,
    /// The session is still cancelling or closing.
    #[serde(rename = "agent_chat.session_stopping")]
    SessionStopping,
    /// A stop was requested while no turn was running.
    #[serde(rename = "agent_chat.session_not_running")]
    SessionNotRunning,
    /// The per-session turn limit was reached.
    #[serde(rename = "agent_chat.session_limit_exceeded")]
    SessionLimitExceeded,
    /// The per-session wall-clock limit was reached.
    #[serde(rename = "agent_chat.session_duration_limit_exceeded")]
    SessionDurationLimitExceeded,
    /// The session was idle beyond the configured timeout.
    #[serde(rename = "agent_chat.session_idle_timeout")]
    SessionIdleTimeout,
    /// No flow file defines the agent a chat names.
    #[serde(rename = "chat.agent_not_found")]
    ChatAgentNotFound,
    /// The agent's flow file exists but did not load.
    #[serde(rename = "chat.flow_invalid")]
    ChatFlowInvalid,
    /// No chat has this id for this caller.
    #[serde(rename = "chat.chat_not_found")]
    ChatNotFound,
    /// The chat reached an end stage and takes no more messages.
    #[serde(rename = "chat.chat_ended")]
    ChatEnded,
    /// A `respond` payload does not match the current stage's schema.
    #[serde(rename = "chat.respond_invalid")]
    ChatRespondInvalid,
    /// The app key or user token matches no configured app or user.
    #[serde(rename = "chat.identity_invalid")]
    ChatIdentityInvalid,
    /// A memory search or a session's memory field is invalid (`field` names it).
    #[serde(rename = "memory.request_invalid")]
    MemoryRequestInvalid,
}

impl ErrorType {
    /// The stable code string, e.g. `agent_chat.agent_session_busy`.
    pub fn code(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::GatewayError => "gateway_error",
            Self::AuthRequired => "auth_required",
            Self::RateLimitExceeded => "rate_limit_exceeded",
            Self::ModelNotConfigured => "model_not_configured",
            Self::RouteImpossible => "route_impossible",
            Self::StoreError => "store_error",
            Self::AgentSessionBusy => "agent_chat.agent_session_busy",
            Self::SessionBusyElsewhere => "agent_chat.session_busy_elsewhere",
            Self::WorkspaceRequired => "agent_chat.workspace_required",
            Self::ModelRequired => "agent_chat.model_required",
            Self::RuntimeKindInvalid => "agent_chat.runtime_kind_invalid",
            Self::HistoryStrategyInvalid => "agent_chat.history_strategy_invalid",
            Self::RuntimeMismatch => "agent_chat.runtime_mismatch",
            Self::ModelCapabilityRequired => "agent_chat.model_capability_required",
            Self::AdapterNotFound => "agent_chat.adapter_not_found",
            Self::SessionStopping => "agent_chat.session_stopping",
            Self::SessionNotRunning => "agent_chat.session_not_running",
            Self::SessionLimitExceeded => "agent_chat.session_limit_exceeded",
            Self::SessionDurationLimitExceeded => "agent_chat.session_duration_limit_exceeded",
            Self::SessionIdleTimeout => "agent_chat.session_idle_timeout",
            Self::ChatAgentNotFound => "chat.agent_not_found",
            Self::ChatFlowInvalid => "chat.flow_invalid",
            Self::ChatNotFound => "chat.chat_not_found",
            Self::ChatEnded => "chat.chat_ended",
            Self::ChatRespondInvalid => "chat.respond_invalid",
            Self::ChatIdentityInvalid => "chat.identity_invalid",
            Self::MemoryRequestInvalid => "memory.request_invalid",
        }
    }

    fn default_user_message(self) -> &'static str {
        match self {
            Self::InvalidRequest => "The request is invalid.",
            Self::NotFound => "The requested resource does not exist.",
            Self::Conflict => "The resource is not in a state that allows this.",
            Self::GatewayError => "Hecate or an upstream failed.",
            Self::AuthRequired => "An upstream server needs a sign-in.",
            Self::RateLimitExceeded => "The provider is rate limiting requests.",
            Self::ModelNotConfigured => "The selected model is not available.",
            Self::RouteImpossible => "No configured provider can serve this request.",
            Self::StoreError => "Hecate's data store failed.",
            Self::AgentSessionBusy => "This session is already running a turn.",
            Self::SessionBusyElsewhere => "Another Hecate process is driving this session.",
            Self::WorkspaceRequired => "This session needs a workspace directory.",
            Self::ModelRequired => "Choose a model first.",
            Self::RuntimeKindInvalid => "The runtime kind is not recognised.",
            Self::HistoryStrategyInvalid => "The memory strategy is not recognised.",
            Self::RuntimeMismatch => "This session cannot switch to that runtime.",
            Self::AdapterNotFound => "The external agent is not registered.",
            Self::SessionStopping => "The session is still stopping.",
            Self::SessionNotRunning => "No turn is running in this session.",
            Self::SessionLimitExceeded => "The session reached its turn limit.",
            Self::SessionDurationLimitExceeded => "The session reached its time limit.",
            Self::SessionIdleTimeout => "The session was idle for too long.",
            Self::ModelCapabilityRequired => {
                "Tools are on, but this model is marked as not calling tools."
            }
            Self::ChatAgentNotFound => "That agent does not exist.",
            Self::ChatFlowInvalid => "That agent's conversation flow is broken.",
            Self::ChatNotFound => "That chat does not exist.",
            Self::ChatEnded => "This chat has ended.",
            Self::ChatRespondInvalid => "The model's reply did not match the expected shape.",
            Self::ChatIdentityInvalid => "The app key or user token is not recognised.",
            Self::MemoryRequestInvalid => "The memory request is invalid.",
        }
    }

    fn default_operator_action(self) -> &'static str {
        match self {
            Self::InvalidRequest => "Fix the request and retry.",
            Self::NotFound => "Check the id (and namespace) and retry.",
            Self::Conflict => "Refresh the resource state and retry if still relevant.",
            Self::GatewayError => "Check `hecate doctor` and the logs, then retry.",
            Self::AuthRequired => {
                "Run `hecate mcp login NAME` for the server named in `server`, then retry."
            }
            Self::RateLimitExceeded => "Wait for the provider's cooldown or route elsewhere.",
            Self::ModelNotConfigured => {
                "Choose a model the provider reports (see `hecate doctor`) or fix provider discovery."
            }
            Self::RouteImpossible => {
                "Configure a provider in the config file or PROVIDER_<NAME>_* env vars (see `hecate doctor`)."
            }
            Self::StoreError => {
                "Check the database file named in the message, its permissions and free disk space."
            }
            Self::AgentSessionBusy => {
                "Wait for the running turn to finish or cancel it, then retry."
            }
            Self::SessionBusyElsewhere => {
                "Use the process that owns the session, or wait until its lease expires."
            }
            Self::WorkspaceRequired => "Pass an existing workspace directory.",
            Self::ModelRequired => "Pass a model as PROVIDER/MODEL.",
            Self::RuntimeKindInvalid => "Use one of model, agent or external_agent.",
            Self::HistoryStrategyInvalid => {
                "Use one of buffer_window, summary_buffer or token_budget."
            }
            Self::RuntimeMismatch => "Start a new session for that runtime.",
            Self::AdapterNotFound => "Run `hecate adapters list` to see registered agents.",
            Self::SessionStopping => "Retry after the session settles.",
            Self::SessionNotRunning => "Nothing to cancel.",
            Self::SessionLimitExceeded => "Start a new session or raise max_turns_per_session.",
            Self::SessionDurationLimitExceeded => {
                "Start a new session or raise max_session_duration."
            }
            Self::SessionIdleTimeout => "Start a new session or raise idle_timeout.",
            Self::ModelCapabilityRequired => {
                "Turn tools off for this model, choose a tool-capable model, or change its \
                 capability override (PUT /hecate/v1/model-capabilities/overrides)."
            }
            Self::ChatAgentNotFound => {
                "Add `flows/<agent>.toml` beside the config file, or use an agent id that exists."
            }
            Self::ChatFlowInvalid => "Fix the flow file named in the message and restart Hecate.",
            Self::ChatNotFound => {
                "Check the chatId and that the same app key or user token is sent."
            }
            Self::ChatEnded => "Start a new chat.",
            Self::ChatRespondInvalid => {
                "Send the model's `respond` tool call arguments as they match the `tools` schema."
            }
            Self::ChatIdentityInvalid => {
                "Send a key from `[chat.apps.NAME] key` or a token from `[chat.users.NAME] token`."
            }
            Self::MemoryRequestInvalid => "Fix the field named in `field` and retry.",
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A classified failure: a stable type, a detailed message, short human copy, a
/// repair hint and optional structured fields (e.g. `turns_used`, `limit_ms`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{error_type}: {message}")]
pub struct HecateError {
    /// The stable machine code.
    #[serde(rename = "type")]
    pub error_type: ErrorType,
    /// The detailed message; may include upstream wording.
    pub message: String,
    /// A short summary safe to show to a user.
    pub user_message: String,
    /// The recommended next step for an operator.
    pub operator_action: String,
    /// Extra fields that help repair the failure (boxed to keep `Result`s small).
    #[serde(flatten, default, skip_serializing_if = "no_details")]
    pub details: Box<Map<String, Value>>,
}

impl HecateError {
    /// Builds an error of `error_type` with the default human copy for that type.
    pub fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        Self {
            error_type,
            message: message.into(),
            user_message: error_type.default_user_message().to_string(),
            operator_action: error_type.default_operator_action().to_string(),
            details: Box::default(),
        }
    }

    /// Replaces the short user-facing summary.
    pub fn with_user_message(mut self, s: impl Into<String>) -> Self {
        self.user_message = s.into();
        self
    }

    /// Replaces the operator repair hint.
    pub fn with_operator_action(mut self, s: impl Into<String>) -> Self {
        self.operator_action = s.into();
        self
    }

    /// Attaches one structured detail field.
    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    /// Shorthand for an `invalid_request` error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorType::InvalidRequest, message)
    }

    /// Shorthand for a `not_found` error naming what was missing.
    pub fn not_found(what: &str, id: &str) -> Self {
        Self::new(ErrorType::NotFound, format!("{what} {id} not found"))
    }

    /// Shorthand for a `store_error`.
    pub fn store(message: impl Into<String>) -> Self {
        Self::new(ErrorType::StoreError, message)
    }

    /// Shorthand for a `gateway_error`.
    pub fn gateway(message: impl Into<String>) -> Self {
        Self::new(ErrorType::GatewayError, message)
    }
}

fn no_details(d: &Map<String, Value>) -> bool {
    d.is_empty()
}

/// The result type of the Hecate library.
pub type Result<T, E = HecateError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_with_stable_type_code_and_details() {
        let e = HecateError::new(ErrorType::SessionLimitExceeded, "3 of 3 turns used")
            .with_detail("turns_used", 3);
        let v = serde_json::to_value(&e).expect("serializes");
        assert_eq!(v["type"], "agent_chat.session_limit_exceeded");
        assert_eq!(v["turns_used"], 3);
        assert!(v["operator_action"].as_str().is_some_and(|s| !s.is_empty()));
        let back: HecateError = serde_json::from_value(v).expect("deserializes");
        assert_eq!(back, e);
    }

    #[test]
    fn code_matches_serde_name() {
        for t in [
            ErrorType::AgentSessionBusy,
            ErrorType::SessionBusyElsewhere,
            ErrorType::ModelNotConfigured,
            ErrorType::StoreError,
            ErrorType::AuthRequired,
        ] {
            let v = serde_json::to_value(t).expect("serializes");
            assert_eq!(v, t.code());
        }
    }
}
