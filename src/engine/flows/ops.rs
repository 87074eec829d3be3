//! The four client-hosted chat operations (`startChat`, `sendChatMessage`,
//! `processChatResponse`, `saveChatSummary`) and reading a chat back. The caller
//! runs the model; the engine compiles what it sends, checks what comes back,
//! stores it in one transaction per call and routes between stages.

use super::compile::{self, DEFAULT_SUMMARY_PROMPT, HistoryEntry};
use super::identity::ChatCredentials;
use super::settings::FlowSettings;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::flow::{
    ANONYMOUS_USER, AgentFlow, ChatIdentity, Conversation, FlowChat, FlowChatMessage,
    FlowChatWrite, FlowPosition, FlowRole, NewFlowChatMessage, Reroute, Stage, check_respond,
    reroute, respond_tools, route,
};
use crate::domain::memory::DEFAULT_SUMMARIZE_EVERY;
use crate::domain::time::now_rfc3339;
use crate::engine::Flows;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;
use utoipa::ToSchema;

/// Largest user message or summary accepted, in bytes.
pub const MAX_CHAT_TEXT_BYTES: usize = 256 * 1024;

/// `startChat` input.
#[derive(Debug, Clone, Default)]
pub struct StartChat {
    /// The agent (flow file stem).
    pub agent_id: String,
    /// The end user, for app callers.
    pub user_id: Option<String>,
    /// Start in this conversation instead of the welcome one.
    pub conversation_name: Option<String>,
}

/// `startChat` output.
#[derive(Debug, Clone)]
pub struct ChatStarted {
    /// The new chat.
    pub chat_id: String,
    /// The compiled system message.
    pub system_message: String,
    /// The `respond` tool list.
    pub tools: Value,
    /// The conversation it starts in.
    pub conversation_name: String,
    /// The stage it starts in.
    pub stage_name: String,
}

/// A summary the caller should produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummarizationNeeded {
    /// Messages in the chat so far.
    pub message_count: u64,
    /// What to ask the model.
    pub prompt: String,
}

/// `sendChatMessage` output.
#[derive(Debug, Clone)]
pub struct ChatTurn {
    /// The recompiled system message.
    pub system_message: String,
    /// The `respond` tool list for the current stage.
    pub tools: Value,
    /// The history before the message just sent (from the last summary on).
    pub message_history: Vec<HistoryEntry>,
    /// Set when a summary is due.
    pub summarization_needed: Option<SummarizationNeeded>,
    /// The conversation this turn runs in (after any re-route).
    pub conversation_name: String,
    /// The stage this turn runs in (after any re-route).
    pub stage_name: String,
    /// The move this message caused, when the chat drifted or sat in a fallback.
    pub reroute: Option<Reroute>,
}

/// `processChatResponse` output.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChatProcessedDto)]
#[schemars(rename = "ChatProcessedDto")]
pub struct ChatProcessed {
    /// The text to show the user.
    pub display_message: String,
    /// Whether the next turn runs in another stage.
    pub stage_transitioned: bool,
    /// That stage.
    pub new_stage_name: Option<String>,
    /// The conversation an edge handed off to.
    pub conversation_handoff: Option<String>,
    /// False when the model said the conversation drifted.
    pub on_track: bool,
    /// Its explanation.
    pub off_track_reason: Option<String>,
    /// Whether the chat reached an end stage.
    pub chat_ended: bool,
    /// The fields stored from this reply.
    pub extracted_data: Map<String, Value>,
    /// Everything known about the user for this agent now.
    pub data: Map<String, Value>,
}

/// A chat read back: header, messages and the owner's data.
#[derive(Debug, Clone)]
pub struct ChatView {
    /// The header.
    pub chat: FlowChat,
    /// Every message, summaries included, in order.
    pub messages: Vec<FlowChatMessage>,
    /// The owner's data for this agent.
    pub data: Map<String, Value>,
}

fn chat_not_found(id: &str) -> HecateError {
    HecateError::new(ErrorType::ChatNotFound, format!("chat {id} not found"))
        .with_detail("chatId", id)
}

fn text_arg(name: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(HecateError::invalid(format!("`{name}` is empty")).with_detail("field", name));
    }
    if value.len() > MAX_CHAT_TEXT_BYTES {
        return Err(
            HecateError::invalid(format!("`{name}` is over {MAX_CHAT_TEXT_BYTES} bytes"))
                .with_detail("field", name),
        );
    }
    Ok(())
}

/// The conversation and stage of `position` in `flow`, or `chat.flow_invalid`
/// when the flow changed under the chat.
fn place<'a>(
    flow: &'a AgentFlow,
    position: &FlowPosition,
) -> Result<(&'a Conversation, &'a Stage)> {
    flow.conversation(&position.conversation)
        .and_then(|c| Some((c, c.stage(&position.stage)?)))
        .ok_or_else(|| {
            HecateError::new(
                ErrorType::ChatFlowInvalid,
                format!(
                    "agent {} no longer has stage {}/{}",
                    flow.id, position.conversation, position.stage
                ),
            )
        })
}

/// The system message and `respond` tool list of `stage`, compiled for a chat
/// at `position` whose owner knows `data`.
fn stage_prompt(
    flow: &AgentFlow,
    conversation: &Conversation,
    stage: &Stage,
    position: &FlowPosition,
    data: &Map<String, Value>,
) -> (String, Value) {
    (
        compile::system_message(flow, conversation, stage, position, data),
        respond_tools(conversation, stage),
    )
}

impl<'e> Flows<'e> {
    fn settings(self) -> &'e FlowSettings {
        &self.engine.config().flows
    }

    /// The identity `creds` prove, or `chat.identity_invalid`.
    pub fn identify(self, creds: &ChatCredentials) -> Result<ChatIdentity> {
        self.settings().access.identify(creds)
    }

    /// Whether `token` is a configured user token.
    pub fn is_user_token(self, token: &str) -> bool {
        self.settings().access.is_user_token(token)
    }

    /// The flow of `agent_id` as `who` may use it.
    fn agent_flow(self, who: &ChatIdentity, agent_id: &str) -> Result<Arc<AgentFlow>> {
        let missing = || {
            HecateError::new(
                ErrorType::ChatAgentNotFound,
                format!("no agent `{agent_id}` (no flows/{agent_id}.toml)"),
            )
            .with_detail("agentId", agent_id)
        };
        if let ChatIdentity::App { agents, .. } = who
            && !agents.is_empty()
            && !agents.iter().any(|a| a == agent_id)
        {
            return Err(missing());
        }
        match self.settings().catalog.get(agent_id) {
            Ok(Some(f)) => Ok(f),
            Ok(None) => Err(missing()),
            Err(e) => Err(HecateError::new(ErrorType::ChatFlowInvalid, e.to_string())
                .with_detail("agentId", agent_id)
                .with_detail("file", e.file.display().to_string())
                .with_detail("field", e.field.clone())),
        }
    }

    /// The chat `id` of `namespace` as `who` may see it, with its flow.
    async fn owned_chat(
        self,
        namespace: &str,
        who: &ChatIdentity,
        id: &str,
    ) -> Result<(FlowChat, Arc<AgentFlow>)> {
        let chat = match self.engine.store().get_flow_chat(namespace, id).await {
            Ok(c) => c,
            Err(e) if e.error_type == ErrorType::NotFound => return Err(chat_not_found(id)),
            Err(e) => return Err(e),
        };
        let visible = match who {
            ChatIdentity::Anonymous => chat.app_id.is_empty() && chat.user_id == ANONYMOUS_USER,
            ChatIdentity::App { app_id, .. } => &chat.app_id == app_id,
            ChatIdentity::User { user_id } => chat.app_id.is_empty() && &chat.user_id == user_id,
        };
        if !visible {
            return Err(chat_not_found(id));
        }
        let flow = self.agent_flow(who, &chat.agent_id)?;
        Ok((chat, flow))
    }

    /// A chat of the caller that has not ended, with its flow; an ended chat is
    /// `chat.chat_ended`.
    async fn live_chat(
        self,
        namespace: &str,
        who: &ChatIdentity,
        chat_id: &str,
    ) -> Result<(FlowChat, Arc<AgentFlow>)> {
        let (chat, flow) = self.owned_chat(namespace, who, chat_id).await?;
        if chat.position.ended {
            return Err(HecateError::new(
                ErrorType::ChatEnded,
                format!("chat {chat_id} has ended"),
            )
            .with_detail("chatId", chat_id));
        }
        Ok((chat, flow))
    }

    /// `startChat`: opens a chat with an agent in its welcome conversation (or
    /// the one named) and compiles the first system message and `respond` schema.
    pub async fn start(
        self,
        namespace: &str,
        who: &ChatIdentity,
        req: StartChat,
    ) -> Result<ChatStarted> {
        let flow = self.agent_flow(who, &req.agent_id)?;
        let user_id = match (who, req.user_id) {
            (ChatIdentity::App { .. }, Some(u)) => {
                text_arg("userId", &u)?;
                u
            }
            (ChatIdentity::App { .. }, None) => ANONYMOUS_USER.to_string(),
            (ChatIdentity::User { user_id }, Some(u)) if &u != user_id => {
                return Err(HecateError::invalid(
                    "`userId` must be the user of the bearer token (or left out)",
                )
                .with_detail("field", "userId"));
            }
            (ChatIdentity::User { user_id }, _) => user_id.clone(),
            (ChatIdentity::Anonymous, Some(_)) => {
                return Err(HecateError::invalid(
                    "`userId` needs an app key or a user token; anonymous chats have no personal memory",
                )
                .with_detail("field", "userId"));
            }
            (ChatIdentity::Anonymous, None) => ANONYMOUS_USER.to_string(),
        };
        let conv_name = req
            .conversation_name
            .unwrap_or_else(|| flow.welcome.clone());
        let conversation = flow.conversation(&conv_name).ok_or_else(|| {
            HecateError::invalid(format!(
                "agent {} has no conversation `{conv_name}`",
                flow.id
            ))
            .with_detail("field", "conversationName")
        })?;
        let stage = conversation.start_stage().ok_or_else(|| {
            HecateError::new(
                ErrorType::ChatFlowInvalid,
                format!("conversation {conv_name} has no stage"),
            )
        })?;
        let now = now_rfc3339();
        let position = FlowPosition {
            conversation: conversation.name.clone(),
            stage: stage.name.clone(),
            ended: stage.end,
            on_track: true,
            off_track_reason: None,
            route: vec![format!("{}/{}", conversation.name, stage.name)],
        };
        let chat = FlowChat {
            namespace: namespace.to_string(),
            id: format!("chat_{}", uuid::Uuid::now_v7().simple()),
            agent_id: flow.id.clone(),
            app_id: who.app_id().to_string(),
            user_id,
            position,
            version: 1,
            created_at: now.clone(),
            updated_at: now,
        };
        let data = self
            .engine
            .store()
            .flow_memory(namespace, &chat.memory_owner())
            .await?;
        self.engine.store().create_flow_chat(&chat).await?;
        let (system_message, tools) =
            stage_prompt(&flow, conversation, stage, &chat.position, &data);
        Ok(ChatStarted {
            system_message,
            tools,
            conversation_name: conversation.name.clone(),
            stage_name: stage.name.clone(),
            chat_id: chat.id,
        })
    }

    /// `sendChatMessage`: re-routes a drifting chat (or one in a fallback
    /// conversation) by the user's message, stores the message (and the move, in
    /// the same transaction) and answers the recompiled system message, the
    /// schema and the history before it.
    pub async fn send_message(
        self,
        namespace: &str,
        who: &ChatIdentity,
        chat_id: &str,
        user_message: &str,
    ) -> Result<ChatTurn> {
        text_arg("userMessage", user_message)?;
        let (chat, flow) = self.live_chat(namespace, who, chat_id).await?;
        place(&flow, &chat.position)?;
        let moved = reroute(&flow, &chat.position, user_message);
        let position = moved.as_ref().map(|r| r.moved(&flow, &chat.position));
        let (conversation, stage) = place(&flow, position.as_ref().unwrap_or(&chat.position))?;
        let store = self.engine.store();
        let mut messages = store.list_flow_chat_messages(namespace, chat_id).await?;
        let history = compile::history(&messages);
        let data = store.flow_memory(namespace, &chat.memory_owner()).await?;
        let message = NewFlowChatMessage {
            role: FlowRole::User,
            content: user_message.to_string(),
            stage: stage.name.clone(),
            data: None,
        };
        let (chat, stored) = store
            .write_flow_chat(FlowChatWrite {
                position,
                ..FlowChatWrite::append(&chat, message)
            })
            .await?;
        messages.push(stored);
        let every = flow.summarize_every.unwrap_or(DEFAULT_SUMMARIZE_EVERY);
        let summarization_needed =
            compile::summary_due(&messages, every).map(|n| SummarizationNeeded {
                message_count: n,
                prompt: flow
                    .summary_prompt
                    .clone()
                    .unwrap_or_else(|| DEFAULT_SUMMARY_PROMPT.to_string()),
            });
        let (system_message, tools) =
            stage_prompt(&flow, conversation, stage, &chat.position, &data);
        Ok(ChatTurn {
            system_message,
            tools,
            message_history: history,
            summarization_needed,
            conversation_name: conversation.name.clone(),
            stage_name: stage.name.clone(),
            reroute: moved,
        })
    }

    /// `processChatResponse`: checks the model's `respond` payload against the
    /// current stage, then stores the reply, merges its data into the user's
    /// memory and moves the chat along the first edge that holds, in one
    /// transaction (nothing stored when the payload does not match).
    pub async fn process_response(
        self,
        namespace: &str,
        who: &ChatIdentity,
        chat_id: &str,
        payload: &Value,
    ) -> Result<ChatProcessed> {
        let (chat, flow) = self.live_chat(namespace, who, chat_id).await?;
        let (conversation, stage) = place(&flow, &chat.position)?;
        let reply = check_respond(conversation, stage, payload).map_err(|e| {
            HecateError::new(
                ErrorType::ChatRespondInvalid,
                format!("respond payload: {e}"),
            )
            .with_detail("field", e.field.clone())
        })?;
        let owner = chat.memory_owner();
        let mut data = self.engine.store().flow_memory(namespace, &owner).await?;
        data.extend(reply.data.clone());
        let routed = route(
            &flow,
            &chat.position.conversation,
            &chat.position.stage,
            &data,
            reply.next_stage.as_deref(),
        );
        let mut position = FlowPosition {
            conversation: routed.conversation.clone(),
            stage: routed.stage.clone(),
            ended: routed.ended,
            on_track: reply.on_track,
            off_track_reason: if reply.on_track {
                None
            } else {
                reply.off_track_reason.clone()
            },
            route: chat.position.route.clone(),
        };
        if routed.transitioned {
            position
                .route
                .push(format!("{}/{}", routed.conversation, routed.stage));
        }
        let extracted = reply.data.clone();
        let message = NewFlowChatMessage {
            role: FlowRole::Assistant,
            content: reply.message.clone(),
            stage: stage.name.clone(),
            data: (!extracted.is_empty()).then(|| extracted.clone()),
        };
        self.engine
            .store()
            .write_flow_chat(FlowChatWrite {
                memory: (!extracted.is_empty()).then(|| (owner, extracted.clone())),
                position: Some(position),
                ..FlowChatWrite::append(&chat, message)
            })
            .await?;
        Ok(ChatProcessed {
            display_message: reply.message,
            stage_transitioned: routed.transitioned,
            new_stage_name: routed.transitioned.then(|| routed.stage.clone()),
            conversation_handoff: routed.handoff,
            on_track: reply.on_track,
            off_track_reason: reply.off_track_reason,
            chat_ended: routed.ended,
            extracted_data: extracted,
            data,
        })
    }

    /// `saveChatSummary`: stores the caller's summary as a checkpoint message;
    /// later histories start from it.
    pub async fn save_summary(
        self,
        namespace: &str,
        who: &ChatIdentity,
        chat_id: &str,
        summary: &str,
    ) -> Result<()> {
        text_arg("summary", summary)?;
        let (chat, _flow) = self.owned_chat(namespace, who, chat_id).await?;
        let message = NewFlowChatMessage {
            role: FlowRole::Summary,
            content: summary.to_string(),
            stage: chat.position.stage.clone(),
            data: None,
        };
        self.engine
            .store()
            .write_flow_chat(FlowChatWrite::append(&chat, message))
            .await?;
        Ok(())
    }

    /// A chat with its messages and the owner's data, as `who` may see it.
    pub async fn view(
        self,
        namespace: &str,
        who: &ChatIdentity,
        chat_id: &str,
    ) -> Result<ChatView> {
        let (chat, _flow) = self.owned_chat(namespace, who, chat_id).await?;
        let store = self.engine.store();
        let messages = store.list_flow_chat_messages(namespace, chat_id).await?;
        let data = store.flow_memory(namespace, &chat.memory_owner()).await?;
        Ok(ChatView {
            chat,
            messages,
            data,
        })
    }
}
