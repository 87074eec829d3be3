//! Outbound clients: each translates an engine need into a protocol spoken to the
//! world (model provider HTTP APIs today; ACP agents and MCP servers later).

pub mod acp;
pub mod git;
pub mod mcp;
pub mod providers;
