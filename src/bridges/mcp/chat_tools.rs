//! The MCP face of the gateway's chat sessions: `list_chat_sessions`, the
//! sessions SDK clients recorded through `/v1` with a session id, in the HTTP
//! API's summary shape.

use super::errors::fail;
use super::server::HecateMcp;
use crate::bridges::resources::chat::ChatSessionSummaryDto;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `list_chat_sessions` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListChatSessionsArgs {
    /// At most this many sessions, most recently updated first (default 50, at most 500).
    pub limit: Option<u32>,
    /// Skip this many sessions of that order (default 0).
    pub offset: Option<u32>,
}

/// `list_chat_sessions` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ChatSessionsOut {
    /// The sessions, with message and provider-call counts and the newest call.
    pub chat_sessions: Vec<ChatSessionSummaryDto>,
}

#[tool_router(router = chat_session_tools, vis = "pub(crate)")]
impl HecateMcp {
    #[tool(
        description = "List the chat sessions the model gateway (/v1) recorded from SDK requests carrying a session id, most recently updated first, with message and provider-call counts and the newest call's provider, model, cost and request id.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_chat_sessions(
        &self,
        Parameters(a): Parameters<ListChatSessionsArgs>,
    ) -> Result<Json<ChatSessionsOut>, CallToolResult> {
        let limit = a.limit.unwrap_or(50).clamp(1, 500) as usize;
        let offset = a.offset.unwrap_or(0) as usize;
        let list = self
            .engine
            .gateway()
            .list_conversations(self.ns(), limit, offset)
            .await
            .map_err(fail)?;
        Ok(Json(ChatSessionsOut {
            chat_sessions: list.iter().map(ChatSessionSummaryDto::from).collect(),
        }))
    }
}
