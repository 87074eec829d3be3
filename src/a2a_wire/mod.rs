//! The A2A (Agent2Agent) 1.x wire types as JSON, depending on nothing else of
//! Hecate's: the ProtoJSON shape the official SDKs send (`lowerCamelCase`
//! fields, `TASK_STATE_*` / `ROLE_*` enum names, a one-of as a single present
//! key; requests also accept the proto's `snake_case` names). Messages and parts
//! (`message.rs`), tasks, their events and `StreamResponse` (`task.rs`), the
//! operations' parameters and answers (`requests.rs`), push notification
//! configs (`push.rs`) and agent cards (`card.rs`). Hecate's A2A server
//! (`bridges/a2a/`) and its client for remote agents (`adapters/a2a/`) both use
//! it, as the gateway and the providers use `model_wire/`.

pub mod card;
pub mod message;
pub mod push;
pub mod requests;
pub mod task;

pub use card::{
    AGENT_CARD_PATH, AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentProvider,
    AgentSkill, BINDING_HTTP_JSON, BINDING_JSONRPC,
};
pub use message::{Message, Part, Role, parts_text};
pub use push::{
    AuthenticationInfo, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, NOTIFICATION_CONTENT_TYPE, NOTIFICATION_TOKEN_HEADER,
    TaskPushNotificationConfig, TaskPushNotificationConfigRequest,
};
pub use requests::{
    ListTasksRequest, ListTasksResponse, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, TaskIdRequest,
};
pub use task::{
    Artifact, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

/// The A2A protocol version Hecate speaks, on both sides: the version of every
/// interface its server publishes and the `A2A-Version` its client asks for.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The header a client names the protocol version it speaks in (lowercase;
/// header names are case-insensitive).
pub const VERSION_HEADER: &str = "a2a-version";
