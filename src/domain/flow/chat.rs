//! A client-hosted chat as stored: its header (agent, caller identity, where it
//! is in the flow), its messages, and the writes a turn makes in one transaction.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The user id of a caller without identity.
pub const ANONYMOUS_USER: &str = "anonymous";

/// Who is calling: anonymous, an app (by its key) acting for its users, or a
/// user (by bearer token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatIdentity {
    /// No credentials: `user_id` is `anonymous`.
    Anonymous,
    /// An app key: the app passes each end user's id.
    App {
        /// The configured app id.
        app_id: String,
        /// Agents the app may use (empty: all).
        agents: Vec<String>,
    },
    /// A user token.
    User {
        /// The configured user id.
        user_id: String,
    },
}

impl ChatIdentity {
    /// The app id chats and memory are keyed on (empty when no app).
    pub fn app_id(&self) -> &str {
        match self {
            Self::App { app_id, .. } => app_id,
            _ => "",
        }
    }
}

/// Whose memory extracted data lands in: (app_id, user_id) per agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryOwner {
    /// The app (empty for user and anonymous callers).
    pub app_id: String,
    /// The end user; an anonymous chat keeps its data to itself as `anonymous:<chatId>`.
    pub user_id: String,
    /// The agent the data was extracted for.
    pub agent_id: String,
}

/// Where a chat stands in its flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowPosition {
    /// The current conversation.
    pub conversation: String,
    /// The current stage.
    pub stage: String,
    /// Whether the chat reached an end stage.
    pub ended: bool,
    /// False when the model's last turn said the conversation drifted.
    pub on_track: bool,
    /// The model's explanation when off track.
    pub off_track_reason: Option<String>,
    /// The stages entered, oldest first, as `conversation/stage`; a re-route adds
    /// its cause (see [`super::reroute::Reroute::route_entry`]).
    pub route: Vec<String>,
}

/// A chat header: (namespace, id), its agent, its caller and its position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowChat {
    /// Namespace.
    pub namespace: String,
    /// Chat id.
    pub id: String,
    /// The agent (flow file stem).
    pub agent_id: String,
    /// The app that opened it (empty when none).
    pub app_id: String,
    /// The end user.
    pub user_id: String,
    /// Where it stands.
    pub position: FlowPosition,
    /// Bumped by every write; a write naming an older version changes nothing.
    pub version: i64,
    /// Created at (RFC 3339).
    pub created_at: String,
    /// Last write at (RFC 3339).
    pub updated_at: String,
}

impl FlowChat {
    /// Whose memory this chat's extracted data goes to.
    pub fn memory_owner(&self) -> MemoryOwner {
        let user_id = if self.app_id.is_empty() && self.user_id == ANONYMOUS_USER {
            format!("{ANONYMOUS_USER}:{}", self.id)
        } else {
            self.user_id.clone()
        };
        MemoryOwner {
            app_id: self.app_id.clone(),
            user_id,
            agent_id: self.agent_id.clone(),
        }
    }
}

/// The role of a stored chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowRole {
    /// The end user's message.
    User,
    /// The model's reply (through `respond`).
    Assistant,
    /// A summary the caller produced; a checkpoint, never a rewrite.
    Summary,
}

impl FlowRole {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Summary => "summary",
        }
    }

    /// The role named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "user" => Self::User,
            "assistant" => Self::Assistant,
            "summary" => Self::Summary,
            _ => return None,
        })
    }
}

/// A stored chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowChatMessage {
    /// Position in the chat, from 1, gap-free.
    pub sequence: i64,
    /// Who said it.
    pub role: FlowRole,
    /// The text.
    pub content: String,
    /// The stage the chat was in.
    pub stage: String,
    /// The data extracted with an assistant message.
    pub data: Option<Map<String, Value>>,
    /// Stored at (RFC 3339).
    pub created_at: String,
}

/// A message to append.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFlowChatMessage {
    /// Who said it.
    pub role: FlowRole,
    /// The text.
    pub content: String,
    /// The stage the chat was in.
    pub stage: String,
    /// The data extracted with it.
    pub data: Option<Map<String, Value>>,
}

/// Everything one chat operation writes, in one transaction: the message, the
/// extracted data merged into the owner's memory, and the new position.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowChatWrite {
    /// Namespace of the chat.
    pub namespace: String,
    /// The chat.
    pub chat_id: String,
    /// The version the caller read; another value means someone wrote since.
    pub expected_version: i64,
    /// The message to append.
    pub message: NewFlowChatMessage,
    /// Fields to merge into this owner's memory.
    pub memory: Option<(MemoryOwner, Map<String, Value>)>,
    /// The new position, when it changes.
    pub position: Option<FlowPosition>,
}

impl FlowChatWrite {
    /// Appends `message` to `chat` at the version it was read at, leaving the
    /// owner's memory and the chat's position as they are.
    pub fn append(chat: &FlowChat, message: NewFlowChatMessage) -> Self {
        Self {
            namespace: chat.namespace.clone(),
            chat_id: chat.id.clone(),
            expected_version: chat.version,
            message,
            memory: None,
            position: None,
        }
    }
}
