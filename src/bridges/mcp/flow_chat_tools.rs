//! The MCP face of client-hosted chats: `h-chat-start`, `h-chat-send`,
//! `h-chat-process` and `h-chat-summary`, answering the HTTP API's shapes. The
//! caller's identity comes from the optional `appKey` / `userToken` arguments
//! (anonymous without them).

use super::errors::fail;
use super::server::HecateMcp;
use crate::bridges::resources::flow_chat::{
    ChatProcessedDto, ChatStartedDto, ChatSummarySavedDto, ChatTurnDto,
};
use crate::domain::error::Result as HecateResult;
use crate::domain::flow::ChatIdentity;
use crate::engine::flows::{ChatCredentials, StartChat};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{Json, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// `h-chat-start` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChatStartArgs {
    /// The agent: the stem of its flow file in `flows/`.
    pub agent_id: String,
    /// The end user's id (app callers).
    pub user_id: Option<String>,
    /// Start in this conversation instead of the welcome one.
    pub conversation_name: Option<String>,
    /// An app key from `[chat.apps.NAME]`.
    pub app_key: Option<String>,
    /// A user token from `[chat.users.NAME]`.
    pub user_token: Option<String>,
}

/// `h-chat-send` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChatSendArgs {
    /// The chat.
    pub chat_id: String,
    /// The user's message.
    pub user_message: String,
    /// The app key the chat was started with.
    pub app_key: Option<String>,
    /// The user token the chat was started with.
    pub user_token: Option<String>,
}

/// `h-chat-process` arguments: the chat and the model's `respond` call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatProcessArgs {
    /// The chat.
    #[serde(rename = "chatId")]
    pub chat_id: String,
    /// The reply text the model produced.
    pub message: String,
    /// Extracted fields of the current stage.
    pub data: Option<Map<String, Value>>,
    /// The stage the model asks to move to.
    pub next_stage: Option<String>,
    /// False when the conversation drifted.
    #[serde(rename = "onTrack")]
    pub on_track: Option<bool>,
    /// Why it drifted.
    #[serde(rename = "offTrackReason")]
    pub off_track_reason: Option<String>,
    /// The app key the chat was started with.
    #[serde(rename = "appKey")]
    pub app_key: Option<String>,
    /// The user token the chat was started with.
    #[serde(rename = "userToken")]
    pub user_token: Option<String>,
}

/// `h-chat-summary` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChatSummaryArgs {
    /// The chat.
    pub chat_id: String,
    /// The summary the model wrote.
    pub summary: String,
    /// The app key the chat was started with.
    pub app_key: Option<String>,
    /// The user token the chat was started with.
    pub user_token: Option<String>,
}

impl HecateMcp {
    fn chat_caller(
        &self,
        app_key: Option<String>,
        user_token: Option<String>,
    ) -> HecateResult<ChatIdentity> {
        self.engine.flows().identify(&ChatCredentials {
            app_key,
            user_token,
        })
    }
}

#[tool_router(router = flow_chat_tools, vis = "pub(crate)")]
impl HecateMcp {
    #[tool(
        name = "h-chat-start",
        description = "Open a client-hosted chat with an agent defined by a flow file. Answers chatId, the compiled systemMessage and tools (the `respond` function schema). Run one model turn with them and no user message (the welcome turn), then pass the model's respond call to h-chat-process.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn h_chat_start(
        &self,
        Parameters(a): Parameters<ChatStartArgs>,
    ) -> Result<Json<ChatStartedDto>, CallToolResult> {
        let who = self.chat_caller(a.app_key, a.user_token).map_err(fail)?;
        let started = self
            .engine
            .flows()
            .start(
                self.ns(),
                &who,
                StartChat {
                    agent_id: a.agent_id,
                    user_id: a.user_id,
                    conversation_name: a.conversation_name,
                },
            )
            .await
            .map_err(fail)?;
        Ok(Json(started.into()))
    }

    #[tool(
        name = "h-chat-send",
        description = "Store the user's next message in a client-hosted chat. Answers the recompiled systemMessage, tools, messageHistory (the chat before this message; append the user message) and summarizationNeeded ({messageCount, prompt} every 20 messages: run the prompt and call h-chat-summary).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn h_chat_send(
        &self,
        Parameters(a): Parameters<ChatSendArgs>,
    ) -> Result<Json<ChatTurnDto>, CallToolResult> {
        let who = self.chat_caller(a.app_key, a.user_token).map_err(fail)?;
        let turn = self
            .engine
            .flows()
            .send_message(self.ns(), &who, &a.chat_id, &a.user_message)
            .await
            .map_err(fail)?;
        Ok(Json(turn.into()))
    }

    #[tool(
        name = "h-chat-process",
        description = "Hand Hecate the model's `respond` tool call (message, data, next_stage, onTrack, offTrackReason) for a client-hosted chat. It is checked against the current stage's schema, the data is stored in the user's memory and the stage edges are evaluated. Answers displayMessage, stageTransitioned, newStageName, conversationHandoff, onTrack, chatEnded and the data.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn h_chat_process(
        &self,
        Parameters(a): Parameters<ChatProcessArgs>,
    ) -> Result<Json<ChatProcessedDto>, CallToolResult> {
        let who = self.chat_caller(a.app_key, a.user_token).map_err(fail)?;
        let mut payload = json!({ "message": a.message });
        if let Some(d) = a.data {
            payload["data"] = Value::Object(d);
        }
        if let Some(s) = a.next_stage {
            payload["next_stage"] = json!(s);
        }
        if let Some(t) = a.on_track {
            payload["onTrack"] = json!(t);
        }
        if let Some(r) = a.off_track_reason {
            payload["offTrackReason"] = json!(r);
        }
        let processed = self
            .engine
            .flows()
            .process_response(self.ns(), &who, &a.chat_id, &payload)
            .await
            .map_err(fail)?;
        Ok(Json(processed))
    }

    #[tool(
        name = "h-chat-summary",
        description = "Store the summary the model wrote for a client-hosted chat after h-chat-send returned summarizationNeeded; later histories start from it.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    async fn h_chat_summary(
        &self,
        Parameters(a): Parameters<ChatSummaryArgs>,
    ) -> Result<Json<ChatSummarySavedDto>, CallToolResult> {
        let who = self.chat_caller(a.app_key, a.user_token).map_err(fail)?;
        self.engine
            .flows()
            .save_summary(self.ns(), &who, &a.chat_id, &a.summary)
            .await
            .map_err(fail)?;
        Ok(Json(ChatSummarySavedDto { saved: true }))
    }
}
