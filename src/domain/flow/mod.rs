//! Client-hosted conversations as data: one flow file per agent (conversations,
//! stages with instructions and fields to extract, edges with conditions, goals,
//! a welcome conversation, fallback conversations and goal signals), its
//! validation, the `respond` tool schema and the check of a payload against it,
//! stage routing, re-routing of drifting chats, and the stored chat records.

pub mod chat;
pub mod error;
pub mod model;
pub mod parse;
pub mod reroute;
mod reroute_rules;
pub mod respond;
pub mod route;
pub mod signal;
pub mod validate;

pub use chat::{
    ANONYMOUS_USER, ChatIdentity, FlowChat, FlowChatMessage, FlowChatWrite, FlowPosition, FlowRole,
    MemoryOwner, NewFlowChatMessage,
};
pub use error::FlowError;
pub use model::{AgentFlow, Condition, Conversation, Edge, Field, FieldType, Stage};
pub use parse::parse_flow;
pub use reroute::{Reroute, RerouteCause, reroute};
pub use respond::{RESPOND_TOOL, RespondError, RespondPayload, check_respond, respond_tools};
pub use route::{Routed, route};

#[cfg(test)]
mod tests;
