//! The shared vocabulary of Hecate: ids, sessions, messages, events, activities,
//! approvals and the error type. Plain data and pure functions; depends on nothing
//! else in the crate.

pub mod a2a_task;
pub mod activity;
pub mod agent_probe;
pub mod api_key;
pub mod approval;
pub mod budget;
pub mod capability;
pub mod error;
pub mod event;
pub mod file_change;
pub mod flow;
pub mod gateway_conversation;
pub mod git_command;
pub mod ids;
pub mod loopback;
pub mod mcp;
pub mod memory;
pub mod message;
pub mod partial;
pub mod permission;
pub mod plan;
pub mod prompt_content;
pub mod provider_call;
pub mod provider_readiness;
pub mod recall;
pub mod redact;
pub mod run;
pub mod segment;
pub mod session;
pub mod session_title;
pub mod sign_in;
pub mod task;
pub mod time;
pub mod timing;
pub mod workspace;

pub use error::{ErrorType, HecateError};
