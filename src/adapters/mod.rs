//! Outbound clients: each translates an engine need into a protocol spoken to the
//! world (ACP agents, remote A2A agents, MCP servers, model provider HTTP APIs, git), `process`,
//! through which every child process they start is spawned and supervised, and
//! `sandbox`, where task runs execute commands and file operations.

pub mod a2a;
pub mod acp;
pub mod gateway;
pub mod git;
pub mod mcp;
pub mod process;
pub mod providers;
pub mod sandbox;
