//! Failures of the outbound ACP adapter, and their mapping onto Hecate's stable
//! error envelope.

use crate::adapters::process::SpawnError;
use crate::domain::error::{ErrorType, HecateError};

pub use crate::domain::agent_probe::Stage;

/// Why talking to an external ACP agent failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AcpError {
    /// The agent's executable was not found (neither on PATH nor managed).
    #[error("agent not installed: {0}")]
    NotInstalled(String),
    /// The process could not be started.
    #[error("could not start {0}")]
    Spawn(#[from] SpawnError),
    /// The handshake failed in a way that is not a JSON-RPC error.
    #[error("initialize failed: {0}")]
    Initialize(String),
    /// The agent needs credentials.
    #[error("agent requires authentication at {stage}: {message}")]
    AuthRequired {
        /// Where the agent said so.
        stage: Stage,
        /// The agent's words, verbatim.
        message: String,
    },
    /// The agent answered with a JSON-RPC error.
    #[error("agent error {code} at {stage}: {message}")]
    Protocol {
        /// Where it happened.
        stage: Stage,
        /// JSON-RPC error code.
        code: i32,
        /// The agent's message, verbatim.
        message: String,
    },
    /// The agent process ended.
    #[error("agent exited (code {code:?}); stderr tail: {stderr_tail}")]
    Exited {
        /// Exit code, when it exited normally.
        code: Option<i32>,
        /// The last lines the agent wrote to stderr.
        stderr_tail: String,
    },
    /// A stage did not finish in time.
    #[error("agent timed out at {stage}")]
    Timeout {
        /// Which stage.
        stage: Stage,
    },
    /// A path an agent asked for is outside the session workspace.
    #[error("path {path} is outside the workspace: {reason}")]
    PathOutsideWorkspace {
        /// The path as requested.
        path: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The caller asked for something the agent does not offer (e.g. session/load).
    #[error("not supported by the agent: {0}")]
    Unsupported(String),
    /// The caller passed something invalid (workspace, MCP server spec, ...).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

impl AcpError {
    /// A short stable reason code used in error details (`details.reason`).
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NotInstalled(_) => "agent_not_installed",
            Self::Spawn(_) => "agent_spawn_failed",
            Self::Initialize(_) | Self::Protocol { .. } => "agent_protocol_error",
            Self::AuthRequired { .. } => "agent_auth_required",
            Self::Exited { .. } => "agent_exited",
            Self::Timeout { .. } => "agent_timeout",
            Self::PathOutsideWorkspace { .. } => "path_outside_workspace",
            Self::Unsupported(_) => "agent_unsupported",
            Self::InvalidRequest(_) => "invalid_request",
        }
    }

    /// Converts to the domain error for `adapter_id`, with human copy, a repair hint
    /// and structured details (reason, stage, code, stderr tail).
    pub fn into_hecate(self, adapter_id: &str) -> HecateError {
        let message = format!("{adapter_id}: {self}");
        let reason = self.reason();
        let (error_type, user, action): (ErrorType, String, String) = match &self {
            Self::NotInstalled(_) => (
                ErrorType::AdapterNotFound,
                format!("The external agent {adapter_id} is not installed."),
                format!(
                    "Install the agent's command or its managed package, then run `hecate adapters probe {adapter_id}`."
                ),
            ),
            Self::Spawn(_) => (
                ErrorType::GatewayError,
                format!("The external agent {adapter_id} could not be started."),
                "Check that the agent's executable runs from a shell, then probe it again.".into(),
            ),
            Self::AuthRequired { .. } => (
                ErrorType::GatewayError,
                format!("The external agent {adapter_id} needs you to sign in."),
                format!(
                    "Log in with the agent's own CLI or provide its API key (see `hecate adapters show {adapter_id}`)."
                ),
            ),
            Self::Exited { .. } => (
                ErrorType::GatewayError,
                format!("The external agent {adapter_id} stopped unexpectedly."),
                "Read the stderr tail in the error details; fix the agent's setup and retry."
                    .into(),
            ),
            Self::Timeout { .. } => (
                ErrorType::GatewayError,
                format!("The external agent {adapter_id} did not answer in time."),
                "Retry; if it persists, probe the agent and check its login and network.".into(),
            ),
            Self::Initialize(_) | Self::Protocol { .. } => (
                ErrorType::GatewayError,
                format!("The external agent {adapter_id} answered with an error."),
                "Check the agent's version against the tested range, then retry.".into(),
            ),
            Self::PathOutsideWorkspace { .. } | Self::InvalidRequest(_) => (
                ErrorType::InvalidRequest,
                "The request to the external agent is invalid.".into(),
                "Fix the request (workspace, paths, MCP servers) and retry.".into(),
            ),
            Self::Unsupported(_) => (
                ErrorType::GatewayError,
                format!("The external agent {adapter_id} does not support this."),
                "Start a new session instead, or upgrade the agent.".into(),
            ),
        };
        let mut e = HecateError::new(error_type, message)
            .with_user_message(user)
            .with_operator_action(action)
            .with_detail("reason", reason)
            .with_detail("adapter_id", adapter_id);
        match self {
            Self::AuthRequired { stage, message } => {
                e = e
                    .with_detail("stage", stage.as_str())
                    .with_detail("agent_message", message);
            }
            Self::Protocol { stage, code, .. } => {
                e = e
                    .with_detail("stage", stage.as_str())
                    .with_detail("code", code);
            }
            Self::Exited { code, stderr_tail } => {
                e = e
                    .with_detail("exit_code", code)
                    .with_detail("stderr_tail", stderr_tail);
            }
            Self::Timeout { stage } => e = e.with_detail("stage", stage.as_str()),
            _ => {}
        }
        e
    }
}

/// Classifies a JSON-RPC error the agent answered at `stage`: every -32000, every
/// `data.authRequired`, and every message about authentication or API keys means
/// the agent needs credentials; anything else is a protocol error.
pub fn classify_rpc_error(
    stage: Stage,
    code: i32,
    message: &str,
    data: Option<&serde_json::Value>,
) -> AcpError {
    let lower = message.to_ascii_lowercase();
    let data_says_auth = data
        .and_then(|d| d.get("authRequired"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let text_says_auth = lower.contains("authentication")
        || lower.contains("api key")
        || lower.contains("not authenticated")
        || lower.contains("unauthenticated")
        || lower.contains("login required");
    if code == -32000 || data_says_auth || text_says_auth {
        AcpError::AuthRequired {
            stage,
            message: message.to_string(),
        }
    } else {
        AcpError::Protocol {
            stage,
            code,
            message: message.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_is_recognised_by_code_data_or_wording() {
        let by_code = classify_rpc_error(Stage::NewSession, -32000, "whatever", None);
        assert!(matches!(
            by_code,
            AcpError::AuthRequired {
                stage: Stage::NewSession,
                ..
            }
        ));
        let data = serde_json::json!({"authRequired": true});
        let by_data = classify_rpc_error(Stage::Prompt, -32603, "nope", Some(&data));
        assert!(matches!(by_data, AcpError::AuthRequired { .. }));
        let by_text = classify_rpc_error(
            Stage::Prompt,
            -32603,
            "Gemini API key is missing or not configured.",
            None,
        );
        assert!(matches!(by_text, AcpError::AuthRequired { .. }));
        let other = classify_rpc_error(Stage::Prompt, -32603, "Internal error", None);
        assert!(matches!(other, AcpError::Protocol { code: -32603, .. }));
    }

    #[test]
    fn hecate_mapping_carries_reason_and_stderr() {
        let e = AcpError::Exited {
            code: Some(3),
            stderr_tail: "boom".into(),
        }
        .into_hecate("codex");
        assert_eq!(e.error_type, ErrorType::GatewayError);
        assert_eq!(e.details["reason"], "agent_exited");
        assert_eq!(e.details["stderr_tail"], "boom");
        assert_eq!(e.details["exit_code"], 3);
        let nf = AcpError::NotInstalled("codex-acp".into()).into_hecate("codex");
        assert_eq!(nf.error_type, ErrorType::AdapterNotFound);
        let auth = AcpError::AuthRequired {
            stage: Stage::NewSession,
            message: "Authentication required".into(),
        }
        .into_hecate("codex");
        assert_eq!(auth.details["reason"], "agent_auth_required");
        assert_eq!(auth.details["stage"], "new_session");
        let t = AcpError::Timeout {
            stage: Stage::Prompt,
        }
        .into_hecate("gemini");
        assert_eq!(t.details["reason"], "agent_timeout");
        let p = AcpError::Protocol {
            stage: Stage::Prompt,
            code: -32603,
            message: "x".into(),
        }
        .into_hecate("gemini");
        assert_eq!(p.details["reason"], "agent_protocol_error");
    }
}
