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
