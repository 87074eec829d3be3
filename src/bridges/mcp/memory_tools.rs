//! The MCP face of long-term recall: `search_memory`, the messages of the
//! namespace's memory (or a user's) closest in meaning to a query, across
//! sessions, in the HTTP API's shape. A degraded recall answers its reason and
//! no results; bad arguments are tool errors naming the field.

use super::errors::fail;
use super::server::HecateMcp;
use crate::bridges::resources::memory::MemorySearchDto;
use crate::engine::memory::MemorySearch;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// `search_memory` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchMemoryArgs {
    /// What to look for.
    pub query: String,
    /// The user whose memory is searched; absent: the namespace's shared memory.
    pub user: Option<String>,
    /// Only this session's messages.
    pub session: Option<String>,
    /// How many results, 1 to 100 (default 5).
    pub k: Option<i64>,
}

#[tool_router(router = memory_tools, vis = "pub(crate)")]
impl HecateMcp {
    #[tool(
        description = "Search long-term memory: the user and assistant messages of this namespace's sessions (or of one user's sessions) closest in meaning to a query, across sessions, closest first, with their session, role, date and a similarity score. When embeddings or vector search are unavailable the answer says recall is degraded, and why, with no results.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_memory(
        &self,
        Parameters(a): Parameters<SearchMemoryArgs>,
    ) -> Result<Json<MemorySearchDto>, CallToolResult> {
        let answer = self
            .engine
            .memory()
            .search(
                self.ns(),
                MemorySearch {
                    query: a.query,
                    user: a.user,
                    session: a.session,
                    k: a.k,
                },
            )
            .await
            .map_err(fail)?;
        Ok(Json(MemorySearchDto::from(&answer)))
    }
}
