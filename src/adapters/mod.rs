//! Outbound clients: each translates an engine need into a protocol spoken to the
//! world (model provider HTTP APIs, Git for workspace diffs; ACP agents and MCP
//! servers later).

pub mod git;
pub mod providers;
