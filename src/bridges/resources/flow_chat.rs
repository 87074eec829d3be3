//! Wire types of the client-hosted chat API (`/hecate/v1/chats`) and of the
//! `h-chat-*` MCP tools, which answer the same shapes: the seed's camelCase
//! field names (`chatId`, `systemMessage`, `tools`, `messageHistory`, ...).

use crate::domain::flow::RerouteCause;
use crate::engine::flows::{
    ChatProcessed, ChatStarted, ChatTurn, ChatView, HistoryEntry, SummarizationNeeded,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// `startChat` input (`POST /hecate/v1/chats`).
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartChatRequest {
    /// The agent: the stem of its flow file in `flows/`.
    pub agent_id: String,
    /// The end user's id; app callers pass it so personal memory is keyed on (app, user).
    #[serde(default)]
    pub user_id: Option<String>,
    /// Start in this conversation instead of the agent's welcome conversation.
    #[serde(default)]
    pub conversation_name: Option<String>,
}

/// `sendChatMessage` input (`POST /hecate/v1/chats/{chatId}/messages`).
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SendChatMessageRequest {
    /// The user's message.
    pub user_message: String,
}

/// `processChatResponse` input (`POST /hecate/v1/chats/{chatId}/responses`): the
/// arguments of the model's `respond` tool call, as they came.
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
pub struct ProcessChatResponseRequest {
    /// The reply text the model produced.
    pub message: String,
    /// Extracted fields of the current stage, each of its declared type.
    #[serde(default)]
    pub data: Option<Map<String, Value>>,
    /// The stage the model asks to move to.
    #[serde(default)]
    pub next_stage: Option<String>,
    /// False when the model says the conversation drifted.
    #[serde(default, rename = "onTrack")]
    pub on_track: Option<bool>,
    /// Why it drifted.
    #[serde(default, rename = "offTrackReason")]
    pub off_track_reason: Option<String>,
}

/// `saveChatSummary` input (`POST /hecate/v1/chats/{chatId}/summary`).
#[derive(Debug, Clone, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveChatSummaryRequest {
    /// The summary the model wrote for `summarizationNeeded.prompt`.
    pub summary: String,
}

/// `startChat` output.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatStartedDto {
    /// Pass to every later call.
    pub chat_id: String,
    /// The compiled system prompt for the model.
    pub system_message: String,
    /// The tool list with the `respond` function; pass it to the model as is.
    pub tools: Value,
    /// The conversation the chat started in.
    pub conversation_name: String,
    /// The starting stage.
    pub stage_name: String,
}

impl From<ChatStarted> for ChatStartedDto {
    fn from(s: ChatStarted) -> Self {
        Self {
            chat_id: s.chat_id,
            system_message: s.system_message,
            tools: s.tools,
            conversation_name: s.conversation_name,
            stage_name: s.stage_name,
        }
    }
}

/// One history entry.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct ChatHistoryMessageDto {
    /// `user`, `assistant`, or `system` for a summary checkpoint.
    pub role: String,
    /// The text.
    pub content: String,
}

impl From<HistoryEntry> for ChatHistoryMessageDto {
    fn from(h: HistoryEntry) -> Self {
        Self {
            role: h.role,
            content: h.content,
        }
    }
}

/// A summary the caller should produce and save.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummarizationNeededDto {
    /// Messages in the chat so far.
    pub message_count: u64,
    /// What to ask the model.
    pub prompt: String,
}

impl From<SummarizationNeeded> for SummarizationNeededDto {
    fn from(s: SummarizationNeeded) -> Self {
        Self {
            message_count: s.message_count,
            prompt: s.prompt,
        }
    }
}

/// `sendChatMessage` output.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatTurnDto {
    /// The recompiled system message for the current stage.
    pub system_message: String,
    /// The `respond` tool list for the current stage.
    pub tools: Value,
    /// The chat before the message just sent, from the last summary on; send it
    /// with the user message appended.
    pub message_history: Vec<ChatHistoryMessageDto>,
    /// Non-null once 20 messages arrived since the last summary.
    pub summarization_needed: Option<SummarizationNeededDto>,
    /// The conversation this turn runs in, after any re-route.
    pub conversation_name: String,
    /// The stage this turn runs in, after any re-route.
    pub stage_name: String,
    /// The move this message caused (a drifting chat, or one in a fallback
    /// conversation, follows the user's message); null when the chat stayed.
    pub reroute: Option<ChatRerouteDto>,
}

/// A move of a chat on `sendChatMessage`, also appended to its `route`.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatRerouteDto {
    /// The conversation the chat left.
    pub from_conversation: String,
    /// The stage the chat left.
    pub from_stage: String,
    /// The conversation it moved to (its start stage is `stageName`).
    pub conversation_handoff: String,
    /// `goal_signal` (the message matched `goalSignal`) or `fallback` (the chat
    /// drifted and matched nothing).
    pub reason: String,
    /// The goal signal that matched, as the flow file writes it.
    pub goal_signal: Option<String>,
}

impl From<ChatTurn> for ChatTurnDto {
    fn from(t: ChatTurn) -> Self {
        Self {
            system_message: t.system_message,
            tools: t.tools,
            message_history: t.message_history.into_iter().map(Into::into).collect(),
            summarization_needed: t.summarization_needed.map(Into::into),
            conversation_name: t.conversation_name,
            stage_name: t.stage_name,
            reroute: t.reroute.map(|r| ChatRerouteDto {
                reason: r.cause.as_str().to_string(),
                goal_signal: match r.cause {
                    RerouteCause::GoalSignal(s) => Some(s),
                    RerouteCause::Fallback => None,
                },
                from_conversation: r.from_conversation,
                from_stage: r.from_stage,
                conversation_handoff: r.conversation,
            }),
        }
    }
}

/// `processChatResponse` output: the engine's answer is the wire shape.
pub type ChatProcessedDto = ChatProcessed;

/// `saveChatSummary` output.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct ChatSummarySavedDto {
    /// Always true.
    pub saved: bool,
}

/// A stored chat message.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct ChatStoredMessageDto {
    /// From 1, gap-free.
    pub sequence: i64,
    /// `user`, `assistant` or `summary`.
    pub role: String,
    /// The text.
    pub content: String,
    /// The stage the chat was in.
    pub stage: String,
    /// Fields extracted with an assistant message.
    pub data: Option<Map<String, Value>>,
    /// Stored at (RFC 3339).
    pub created_at: String,
}

/// A chat read back (`GET /hecate/v1/chats/{chatId}`).
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatDto {
    /// The chat.
    pub chat_id: String,
    /// Its agent.
    pub agent_id: String,
    /// The app that opened it (null when none).
    pub app_id: Option<String>,
    /// The end user.
    pub user_id: String,
    /// The current conversation.
    pub conversation_name: String,
    /// The current stage.
    pub stage_name: String,
    /// Whether it reached an end stage.
    pub chat_ended: bool,
    /// Stages entered, oldest first, as `conversation/stage`; a re-route on
    /// `sendChatMessage` adds its cause: `billing/ask (goal signal "refund")`,
    /// `help/triage (fallback)`.
    pub route: Vec<String>,
    /// Every message, summaries included.
    pub messages: Vec<ChatStoredMessageDto>,
    /// The user's data for this agent.
    pub data: Map<String, Value>,
    /// Created at (RFC 3339).
    pub created_at: String,
    /// Last write at (RFC 3339).
    pub updated_at: String,
}

impl From<ChatView> for ChatDto {
    fn from(v: ChatView) -> Self {
        let c = v.chat;
        Self {
            chat_id: c.id,
            agent_id: c.agent_id,
            app_id: (!c.app_id.is_empty()).then_some(c.app_id),
            user_id: c.user_id,
            conversation_name: c.position.conversation,
            stage_name: c.position.stage,
            chat_ended: c.position.ended,
            route: c.position.route,
            messages: v
                .messages
                .into_iter()
                .map(|m| ChatStoredMessageDto {
                    sequence: m.sequence,
                    role: m.role.as_str().to_string(),
                    content: m.content,
                    stage: m.stage,
                    data: m.data,
                    created_at: m.created_at,
                })
                .collect(),
            data: v.data,
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

/// Defines a `{"object", "data"}` answer of the chat API, written like the
/// struct with `object`'s fixed value, and its constructor, which sets it.
macro_rules! response {
    (
        $(#[$doc:meta])* $name:ident {
            $(#[$object_doc:meta])* object: $object:literal,
            $(#[$data_doc:meta])* data: $data:ty $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, ToSchema)]
        pub struct $name {
            $(#[$object_doc])*
            pub object: String,
            $(#[$data_doc])*
            pub data: $data,
        }

        impl $name {
            #[doc = concat!("The `", $object, "` answer carrying `data`.")]
            pub fn new(data: $data) -> Self {
                Self {
                    object: $object.to_string(),
                    data,
                }
            }
        }
    };
}

response!(
    /// `{"object": "chat.started", "data": ...}`.
    ChatStartedResponse {
        /// `chat.started`.
        object: "chat.started",
        /// The new chat.
        data: ChatStartedDto,
    }
);
response!(
    /// `{"object": "chat.turn", "data": ...}`.
    ChatTurnResponse {
        /// `chat.turn`.
        object: "chat.turn",
        /// What to send the model next.
        data: ChatTurnDto,
    }
);
response!(
    /// `{"object": "chat.processed", "data": ...}`.
    ChatProcessedResponse {
        /// `chat.processed`.
        object: "chat.processed",
        /// What to render and where the chat went.
        data: ChatProcessedDto,
    }
);
response!(
    /// `{"object": "chat.summary", "data": {"saved": true}}`.
    ChatSummaryResponse {
        /// `chat.summary`.
        object: "chat.summary",
        /// The outcome.
        data: ChatSummarySavedDto,
    }
);
response!(
    /// `{"object": "chat", "data": ...}`.
    ChatResponse {
        /// `chat`.
        object: "chat",
        /// The chat.
        data: ChatDto,
    }
);

/// One conversation of an agent's flow.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowConversationDto {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// How many stages it has.
    pub stage_count: u64,
    /// Whether it is a fallback conversation (where drifting chats go).
    pub is_fallback: bool,
    /// The words or phrases that move a drifting chat here.
    pub goal_signals: Vec<String>,
}

/// An agent whose flow file loaded.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowAgentDto {
    /// The agent id (the file stem).
    pub id: String,
    /// Its display name (the id when the file names none).
    pub name: String,
    /// The conversation a chat starts in.
    pub welcome: String,
    /// Its conversations, in file order.
    pub conversations: Vec<FlowConversationDto>,
}

/// A flow file that did not load.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowLoadErrorDto {
    /// The agent id the file would have defined.
    pub agent_id: String,
    /// The file.
    pub file: String,
    /// The field at fault.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// The flow catalog as it loaded at start.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowCatalogDto {
    /// The agents that loaded, by id.
    pub agents: Vec<FlowAgentDto>,
    /// The files that did not load, by agent id.
    pub errors: Vec<FlowLoadErrorDto>,
}

impl From<&crate::engine::flows::FlowCatalog> for FlowCatalogDto {
    fn from(c: &crate::engine::flows::FlowCatalog) -> Self {
        Self {
            agents: c
                .agents()
                .map(|a| FlowAgentDto {
                    id: a.id.clone(),
                    name: a.name.clone().unwrap_or_else(|| a.id.clone()),
                    welcome: a.welcome.clone(),
                    conversations: a
                        .conversations
                        .iter()
                        .map(|c| FlowConversationDto {
                            name: c.name.clone(),
                            description: c.description.clone(),
                            stage_count: c.stages.len() as u64,
                            is_fallback: c.is_fallback,
                            goal_signals: c.goal_signals.clone(),
                        })
                        .collect(),
                })
                .collect(),
            errors: c
                .errors_by_agent()
                .map(|(id, e)| FlowLoadErrorDto {
                    agent_id: id.to_string(),
                    file: e.file.display().to_string(),
                    field: e.field.clone(),
                    message: e.message.clone(),
                })
                .collect(),
        }
    }
}

/// `GET /hecate/v1/flows`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowCatalogResponse {
    /// Always `flow_catalog`.
    pub object: String,
    /// The catalog.
    pub data: FlowCatalogDto,
}

/// A client-hosted chat as an operator lists it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowChatSummaryDto {
    /// Chat id.
    pub id: String,
    /// Its agent.
    pub agent_id: String,
    /// The app that opened it (empty for a user or anonymous chat).
    pub app_id: String,
    /// The user it belongs to.
    pub user_id: String,
    /// The current conversation.
    pub conversation: String,
    /// The current stage.
    pub stage: String,
    /// Whether it reached an end stage.
    pub ended: bool,
    /// Whether the model's last turn said it was on track.
    pub on_track: bool,
    /// Writes so far (one per stored message).
    pub version: i64,
    /// Created.
    pub created_at: String,
    /// Last changed.
    pub updated_at: String,
}

impl From<&crate::domain::flow::FlowChat> for FlowChatSummaryDto {
    fn from(c: &crate::domain::flow::FlowChat) -> Self {
        Self {
            id: c.id.clone(),
            agent_id: c.agent_id.clone(),
            app_id: c.app_id.clone(),
            user_id: c.user_id.clone(),
            conversation: c.position.conversation.clone(),
            stage: c.position.stage.clone(),
            ended: c.position.ended,
            on_track: c.position.on_track,
            version: c.version,
            created_at: c.created_at.clone(),
            updated_at: c.updated_at.clone(),
        }
    }
}

/// `GET /hecate/v1/flows/{agent_id}/chats`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowChatListResponse {
    /// Always `flow_chats`.
    pub object: String,
    /// Most recently updated first.
    pub data: Vec<FlowChatSummaryDto>,
}

/// Query of `GET /hecate/v1/flows/{agent_id}/chats`.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct FlowChatsQuery {
    /// At most this many (1–1000, default 50).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}
