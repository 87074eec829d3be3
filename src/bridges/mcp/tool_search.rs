//! `search_tools`: a search over every upstream tool the hub aggregates (their
//! names, descriptions and servers), answering definitions with the names
//! `tools/call` takes. With `[mcp] tool_loading = "search"` it is how a client
//! finds upstream tools at all, since `tools/list` then holds Hecate's own only.

use super::errors::fail;
use super::server::HecateMcp;
use crate::domain::api_key::Identity;
use crate::domain::error::HecateError;
use crate::engine::mcp::search::{search, searchable};
use rmcp::handler::server::common::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most tools one search answers.
const MAX_RESULTS: i64 = 50;

/// `search_tools` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchToolsArgs {
    /// Words to find in a tool's name, description or server (every word must
    /// match somewhere; case does not matter).
    pub query: String,
    /// Only the tools of this upstream server.
    pub server: Option<String>,
    /// How many tools, 1 to 50 (default 10).
    pub limit: Option<i64>,
}

/// One tool found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FoundTool {
    /// The name to pass to `tools/call`.
    pub name: String,
    /// The upstream server it belongs to.
    pub server: String,
    /// Its own name on that server.
    pub tool: String,
    /// What it does, as the server describes it.
    pub description: String,
    /// Its input schema, verbatim.
    pub input_schema: Value,
    /// Its annotations, when the server gives any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// The hub's policy for it: `auto` or `require_approval`.
    pub policy: String,
}

/// `search_tools` result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchToolsOut {
    /// The best matches, best first.
    pub tools: Vec<FoundTool>,
    /// How many tools matched in all (more than `tools` holds when the limit
    /// cut them).
    pub matched: usize,
    /// How many upstream tools the hub aggregates.
    pub catalog_size: usize,
    /// Upstream servers that could not be listed, so their tools were not searched.
    pub unavailable: Vec<String>,
}

#[tool_router(router = tool_search_tools, vis = "pub(crate)")]
impl HecateMcp {
    #[tool(
        description = "Search the tools of every upstream MCP server the hub aggregates by words in their name, description or server; answers each match's callable name (for tools/call), input schema and annotations, best first.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_tools(
        &self,
        Parameters(a): Parameters<SearchToolsArgs>,
        Extension(identity): Extension<Identity>,
    ) -> Result<Json<SearchToolsOut>, CallToolResult> {
        if !searchable(&a.query) {
            return Err(fail(
                HecateError::invalid("query holds no word to search for")
                    .with_detail("field", "query"),
            ));
        }
        let limit = match a.limit {
            None => 10,
            Some(n) if (1..=MAX_RESULTS).contains(&n) => n as usize,
            Some(n) => {
                return Err(fail(
                    HecateError::invalid(format!("limit must be 1 to {MAX_RESULTS}, got {n}"))
                        .with_detail("field", "limit"),
                ));
            }
        };
        let mut catalog = self.engine.mcp().tools().await;
        // A key searches only the tools its scope lets it see.
        catalog
            .tools
            .retain(|t| identity.allows_tool(&t.server, &t.tool));
        if let Some(s) = &a.server
            && !self.engine.mcp().servers().iter().any(|u| u.name == *s)
        {
            return Err(fail(
                HecateError::not_found("MCP server", s).with_detail("field", "server"),
            ));
        }
        let (found, matched) = search(&catalog.tools, &a.query, a.server.as_deref(), limit);
        let tools = found
            .into_iter()
            .map(|t| FoundTool {
                name: t.exposed.clone(),
                server: t.server.clone(),
                tool: t.tool.clone(),
                description: t
                    .definition
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                input_schema: t
                    .definition
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"type": "object"})),
                annotations: t.definition.get("annotations").cloned(),
                policy: t.policy.as_str().to_string(),
            })
            .collect();
        Ok(Json(SearchToolsOut {
            tools,
            matched,
            catalog_size: catalog.tools.len(),
            unavailable: catalog.failures.iter().map(|f| f.server.clone()).collect(),
        }))
    }
}
