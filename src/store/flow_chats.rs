//! The contract for client-hosted chats: headers addressed by (namespace, id),
//! their gap-free message stream, and per-owner memory of extracted data. Every
//! turn's writes (message, memory, position) land in one transaction, or none.

use crate::domain::error::Result;
use crate::domain::flow::{FlowChat, FlowChatMessage, FlowChatWrite, MemoryOwner};
use async_trait::async_trait;
use serde_json::{Map, Value};

/// Client-hosted chats and the memory their extracted data goes to.
#[async_trait]
pub trait FlowChatStore: Send + Sync {
    /// Stores a new chat header (version as given).
    async fn create_flow_chat(&self, chat: &FlowChat) -> Result<()>;
    /// Reads a chat header, or `not_found`.
    async fn get_flow_chat(&self, namespace: &str, id: &str) -> Result<FlowChat>;
    /// The chats of agent `agent_id` in `namespace`, most recently updated first,
    /// at most `limit`.
    async fn list_flow_chats(
        &self,
        namespace: &str,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<FlowChat>>;
    /// The chat's messages in sequence order (empty for an unknown chat).
    async fn list_flow_chat_messages(
        &self,
        namespace: &str,
        chat_id: &str,
    ) -> Result<Vec<FlowChatMessage>>;
    /// Appends the message (next sequence), merges the memory fields and moves
    /// the chat, bumping its version, in one transaction; `conflict` with
    /// nothing written when the chat is no longer at `expected_version`,
    /// `not_found` when it does not exist. Answers the updated header and the
    /// stored message.
    async fn write_flow_chat(&self, write: FlowChatWrite) -> Result<(FlowChat, FlowChatMessage)>;
    /// The fields stored for `owner` in `namespace` (empty when none).
    async fn flow_memory(&self, namespace: &str, owner: &MemoryOwner)
    -> Result<Map<String, Value>>;
}
