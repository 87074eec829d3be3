//! The session engine: the only place that decides. Sessions, turns, the busy rule,
//! guardrails, owner leases, runtime switching, event fan-out and reconciliation.
//! It knows no wire format.

pub mod a2a_tasks;
mod agent;
mod agent_reaper;
pub mod agent_roots;
mod agent_settings;
mod agent_signin;
mod approval_inbox;
mod approvals;
mod batch_writer;
pub mod bus;
mod core;
pub mod deferred;
pub mod diffs;
mod emit;
mod external;
pub mod flows;
pub mod gateway;
pub mod grants;
pub mod guardrails;
pub mod keys;
pub mod mcp;
pub mod memory;
pub mod owner;
mod owner_id;
mod queries;
pub mod session_choices;
mod session_usage;
mod sessions;
pub mod targets;
pub mod tasks;
mod transcript;
mod turns;
pub mod workspace;

pub use crate::adapters::acp::agent::catalog::ManifestError;
pub use crate::runtimes::external::{
    AgentSettings, InstallJob, InstallState, LiveProcess, OptionValue,
};
pub use approval_inbox::PendingApproval;
pub use external::{AdapterFacts, AdapterStatus};
pub use mcp::{
    ApprovalPrompter, MAX_TOOL_NAME, McpCallOptions, McpCatalog, McpChange, ToolLoading,
    ToolPolicy, UpstreamFailure, UpstreamNotice, UpstreamServer, UpstreamTool, expose_names,
};
pub use session_usage::SessionUsage;
pub use sessions::CreateSession;
pub use transcript::{Transcript, TranscriptPage, TranscriptWindow, turn_transcript};
pub use turns::events::TurnEvents;
pub use turns::{
    MAX_PROMPT_BYTES, SendMessage, StoredTurn, TurnHandle, TurnResult, validate_prompt,
};

pub use self::core::{
    Agents, Approvals, DEFAULT_APPROVAL_TIMEOUT, Engine, EngineConfig, Flows, Gateway,
    LEASE_TTL_MS, Mcp, Memory, Runtimes,
};
