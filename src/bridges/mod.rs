//! Inbound surfaces. Each translates its protocol into engine calls and engine
//! events back into its protocol; none touches the store or a child process.

pub mod a2a;
pub mod access;
pub mod acp;
pub mod http;
pub mod idp;
pub mod mcp;
pub mod resources;
pub mod roles;
pub mod serve;
