//! How engine errors reach MCP clients: tool failures become results with
//! `isError: true` (text is the error envelope as JSON), protocol errors keep
//! JSON-RPC codes and carry the stable `type` in `data`.

use crate::domain::error::{ErrorType, HecateError};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode};
use serde_json::json;

/// Failures of the MCP bridge itself (serving, not answering).
#[derive(Debug, thiserror::Error)]
pub enum McpBridgeError {
    /// The MCP handshake with the client failed.
    #[error("MCP initialize with the client failed: {0}")]
    Initialize(String),
    /// The connection task ended abnormally.
    #[error("the MCP connection ended abnormally: {0}")]
    Connection(String),
}

/// A tool error result carrying `{"error": {type, message, ...}}` as its text.
pub fn tool_error(e: &HecateError) -> CallToolResult {
    let body = json!({ "error": e });
    CallToolResult::error(vec![ContentBlock::text(body.to_string())])
}

/// `tool_error` taking the error by value, for `map_err` in the tools.
pub fn fail(e: HecateError) -> CallToolResult {
    tool_error(&e)
}

/// A protocol error with the stable error type in `data.type`.
pub fn protocol_error(e: &HecateError) -> ErrorData {
    let code = match e.error_type {
        ErrorType::NotFound | ErrorType::InvalidRequest => ErrorCode::INVALID_PARAMS,
        // An upstream's sign-in, not this client's: the transport's 401 stays for
        // Hecate's own token. `data.type` carries `auth_required` and the fix.
        ErrorType::AuthRequired => ErrorCode::INTERNAL_ERROR,
        _ => ErrorCode::INTERNAL_ERROR,
    };
    ErrorData::new(
        code,
        e.message.clone(),
        Some(json!({ "type": e.error_type.code(), "error": e })),
    )
}

/// `resources/read` of an unknown URI: the MCP resource-not-found code.
pub fn resource_not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("resource {uri} not found"),
        Some(json!({ "type": ErrorType::NotFound.code(), "uri": uri })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign_in_needed() -> HecateError {
        HecateError::new(
            ErrorType::AuthRequired,
            "upstream MCP server \"gh\" needs a sign-in",
        )
        .with_detail("server", "gh")
        .with_operator_action("Run `hecate mcp login gh`.")
    }

    #[test]
    fn an_upstream_sign_in_keeps_its_type_and_fix_in_tool_and_protocol_errors() {
        let result = tool_error(&sign_in_needed());
        assert_eq!(result.is_error, Some(true));
        let text = result.content[0]
            .as_text()
            .expect("a text block")
            .text
            .clone();
        let body: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(body["error"]["type"], "auth_required");
        assert_eq!(body["error"]["server"], "gh");
        assert_eq!(
            body["error"]["operator_action"],
            "Run `hecate mcp login gh`."
        );

        let e = protocol_error(&sign_in_needed());
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
        assert_eq!(e.data.expect("data")["type"], "auth_required");
    }
}
