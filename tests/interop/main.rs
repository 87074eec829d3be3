//! Interoperability tests against third-party software installed (pinned,
//! offline, under `target/test-deps`) by `scripts/test-deps`: the real coding
//! agents, real ACP clients (acpx, the TypeScript and Python SDK examples), real
//! MCP peers and the MCP conformance suite, and Schemathesis against the served
//! OpenAPI document. A missing install fails the test naming its script.
//! Hermetic tests are in `tests/e2e`.

#[path = "../support/mod.rs"]
mod support;

mod a2a_real_clients;
mod a2a_remote_agents;
mod acp_options_real_agents;
mod acp_options_real_clients;
mod acp_real_clients;
mod acp_titles_real_clients;
mod acp_ts_sdk2;
mod agent_mcp_real_peers;
mod console_browser;
mod gateway_sdks;
mod http_openapi_conformance;
mod idp_tokens;
mod mcp_2026;
mod mcp_flow_chats;
mod mcp_oauth;
mod mcp_real_peers;
mod real_agents;
