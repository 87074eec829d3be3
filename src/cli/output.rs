//! Output helpers: text or JSON on stdout, errors on stderr (URLs in them redacted)
//! with stable exit codes.

use crate::domain::redact::redact_urls_in;
use crate::domain::{ErrorType, HecateError};
use serde::Serialize;
use std::io::Write;

/// Output format of listing and reading commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human-readable text.
    Text,
    /// JSON in the HTTP API's resource shapes (`{"object": ..., "data": ...}`).
    Json,
}

/// Writes `{"object": object, "data": data}` as pretty JSON to stdout.
pub fn print_resource<T: Serialize>(object: &str, data: &T) -> anyhow::Result<()> {
    print_json(&serde_json::json!({ "object": object, "data": data }))
}

/// Writes one JSON value to stdout, pretty-printed.
pub fn print_json(v: &serde_json::Value) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, v)?;
    writeln!(out)?;
    Ok(())
}

/// Writes text to stdout.
pub fn print_text(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Prints an error to stderr and returns its exit code: a classified Hecate error
/// exits with its type's code, anything else with 1.
pub fn report_error(e: &anyhow::Error) -> i32 {
    match e.downcast_ref::<HecateError>() {
        Some(h) => {
            eprintln!("error [{}]: {}", h.error_type, redact_urls_in(&h.message));
            eprintln!("  {}", h.user_message);
            eprintln!("  next step: {}", h.operator_action);
            let suggested: Vec<&str> = h
                .details
                .get("suggested_models")
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
                .filter_map(|m| m.as_str())
                .collect();
            if !suggested.is_empty() {
                eprintln!("  suggested models: {}", suggested.join(", "));
            }
            exit_code(h.error_type)
        }
        None => {
            eprintln!("error: {}", redact_urls_in(&format!("{e:#}")));
            1
        }
    }
}

/// The process exit code the CLI uses for an error type, so scripts can branch:
/// 2 invalid input, 3 not found, 4 busy or conflicting, 5 nothing can serve it,
/// 6 upstream failure (an upstream MCP server that wants a sign-in, `auth_required`,
/// included: the upstream refused, and `hecate mcp login NAME` is the fix named on
/// stderr), 7 a guardrail stopped the session, 8 the store failed.
pub fn exit_code(t: ErrorType) -> i32 {
    match t {
        ErrorType::InvalidRequest
        | ErrorType::WorkspaceRequired
        | ErrorType::ModelRequired
        | ErrorType::RuntimeKindInvalid
        | ErrorType::HistoryStrategyInvalid
        | ErrorType::RuntimeMismatch
        | ErrorType::ChatRespondInvalid
        | ErrorType::ChatIdentityInvalid
        | ErrorType::MemoryRequestInvalid => 2,
        ErrorType::NotFound
        | ErrorType::AdapterNotFound
        | ErrorType::ChatAgentNotFound
        | ErrorType::ChatNotFound => 3,
        ErrorType::ChatEnded
        | ErrorType::Conflict
        | ErrorType::AgentSessionBusy
        | ErrorType::SessionBusyElsewhere
        | ErrorType::SessionStopping
        | ErrorType::SessionNotRunning => 4,
        ErrorType::ModelNotConfigured
        | ErrorType::RouteImpossible
        | ErrorType::ModelCapabilityRequired
        | ErrorType::ChatFlowInvalid => 5,
        ErrorType::RateLimitExceeded | ErrorType::GatewayError | ErrorType::AuthRequired => 6,
        ErrorType::SessionLimitExceeded
        | ErrorType::SessionDurationLimitExceeded
        | ErrorType::SessionIdleTimeout => 7,
        ErrorType::StoreError => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_types_map_to_stable_exit_codes() {
        let by_code: [(i32, &[ErrorType]); 7] = [
            (2, &[ErrorType::InvalidRequest, ErrorType::ModelRequired]),
            (3, &[ErrorType::NotFound, ErrorType::AdapterNotFound]),
            (4, &[ErrorType::AgentSessionBusy]),
            (5, &[ErrorType::RouteImpossible]),
            (6, &[ErrorType::GatewayError, ErrorType::AuthRequired]),
            (7, &[ErrorType::SessionLimitExceeded]),
            (8, &[ErrorType::StoreError]),
        ];
        for (code, types) in by_code {
            for &t in types {
                assert_eq!(exit_code(t), code, "{t:?}");
            }
        }
    }

    #[test]
    fn a_classified_error_exits_with_its_code_and_others_with_one() {
        let e = anyhow::Error::new(HecateError::new(ErrorType::NotFound, "gone"));
        assert_eq!(report_error(&e), 3);
        assert_eq!(report_error(&anyhow::anyhow!("plain")), 1);
    }
}
