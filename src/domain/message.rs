//! Messages: entries of a session's ordered stream, with rich content blocks that
//! survive provider switches (thinking with signatures, tool calls, tool errors).

use crate::domain::ids::{CallId, MessageId, RunId, SegmentId, SessionId};
use crate::domain::session::RuntimeKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who authored a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A system instruction.
    System,
    /// The person (or client) prompting.
    User,
    /// The model or agent answering.
    Assistant,
    /// A tool result.
    Tool,
}

impl Role {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
        }
    }

    /// Parses a stored role.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "system" => Some(Self::System),
            "user" => Some(Self::User),
            "assistant" => Some(Self::Assistant),
            "tool" => Some(Self::Tool),
            _ => None,
        }
    }
}

/// One typed piece of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Model reasoning, with the provider's signature when it gave one.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// Opaque provider signature needed to replay the block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A request by the model to call a tool.
    ToolUse {
        /// Tool call id.
        id: String,
        /// Tool name.
        name: String,
        /// Tool arguments.
        input: Value,
    },
    /// The result of a tool call.
    ToolResult {
        /// The id of the call this answers.
        tool_use_id: String,
        /// Result content.
        content: String,
        /// Whether the tool failed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// An image, inline as base64 or by URI.
    Image {
        /// MIME type.
        mime_type: String,
        /// Base64 data, when inline.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// A URI, when referenced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    },
    /// Audio, inline as base64.
    Audio {
        /// MIME type.
        mime_type: String,
        /// Base64 data.
        data: String,
    },
    /// An embedded resource or a link to one.
    Resource {
        /// The resource URI.
        uri: String,
        /// Inline text, when embedded as text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Inline base64 contents, when embedded as binary.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blob: Option<String>,
        /// MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

/// A tool call as the OpenAI-compatible message shape carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as a JSON string, verbatim from the model.
    pub arguments: String,
}

/// Whether a message is complete, still streaming, or cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// Fully written.
    Completed,
    /// The turn producing it is still running.
    Running,
    /// The turn failed; content is whatever arrived before the failure.
    Failed,
    /// The turn was cancelled; content is partial.
    Cancelled,
}

impl MessageStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Running => "running",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// The runtime that produced (or received) a message, snapshotted on the message so
/// history renders correctly after the session switches runtime or model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeSnapshot {
    /// The runtime kind.
    pub runtime_kind: RuntimeKind,
    /// The segment this message belongs to.
    pub segment_id: SegmentId,
    /// Provider, for model and agent turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model, for model and agent turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Adapter id, for external-agent turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// The `agent_loop` task backing a Hecate Agent turn (assistant messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The task run that answered a Hecate Agent turn (assistant messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_run_id: Option<String>,
    /// The model's effective capabilities when the turn ran (model and agent turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<crate::domain::capability::ModelCapabilities>,
}

impl RuntimeSnapshot {
    /// Whether two snapshots describe the same runtime target (segment id aside).
    pub fn same_target(&self, other: &RuntimeSnapshot) -> bool {
        self.runtime_kind == other.runtime_kind
            && self.provider == other.provider
            && self.model == other.model
            && self.adapter_id == other.adapter_id
    }
}

/// A complete entry of a session's message stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Message id.
    pub id: MessageId,
    /// Owning session.
    pub session_id: SessionId,
    /// Monotonic, gap-free position in the session (assigned by the store).
    pub sequence: i64,
    /// Author.
    pub role: Role,
    /// The plain-text rendering of the content.
    pub content: String,
    /// Rich content, when richer than plain text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content_blocks: Vec<ContentBlock>,
    /// Tool calls requested by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For tool messages, the call answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool messages, whether the tool failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool_error: bool,
    /// The provider call that emitted this message, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub produced_by_call_id: Option<CallId>,
    /// The turn this message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    /// Completion status.
    pub status: MessageStatus,
    /// Error type when the producing turn failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether this message is a summary checkpoint for history loading.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_summary: bool,
    /// The runtime snapshot.
    #[serde(flatten)]
    pub runtime: RuntimeSnapshot,
    /// Creation time.
    pub created_at: String,
}

/// A message not yet stored: the store assigns its sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    /// Pre-generated id, so callers can refer to it before it is stored.
    pub id: MessageId,
    /// Author.
    pub role: Role,
    /// Plain-text content.
    pub content: String,
    /// Rich content.
    pub content_blocks: Vec<ContentBlock>,
    /// Tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// Tool call answered.
    pub tool_call_id: Option<String>,
    /// Tool failed.
    pub tool_error: bool,
    /// Emitting provider call (must be in the same append or already stored).
    pub produced_by_call_id: Option<CallId>,
    /// Owning turn.
    pub run_id: Option<RunId>,
    /// Status.
    pub status: MessageStatus,
    /// Error type, when failed.
    pub error: Option<String>,
    /// Summary checkpoint flag.
    pub is_summary: bool,
    /// Runtime snapshot.
    pub runtime: RuntimeSnapshot,
}

impl NewMessage {
    /// A completed plain-text message from `role` under `runtime`.
    pub fn text(role: Role, content: impl Into<String>, runtime: RuntimeSnapshot) -> Self {
        Self {
            id: MessageId::generate(),
            role,
            content: content.into(),
            content_blocks: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_error: false,
            produced_by_call_id: None,
            run_id: None,
            status: MessageStatus::Completed,
            error: None,
            is_summary: false,
            runtime,
        }
    }
}

impl NewMessage {
    /// The message as stored at `sequence` of session `session_id`, created at
    /// `created_at`.
    pub fn into_message(self, session_id: SessionId, sequence: i64, created_at: String) -> Message {
        Message {
            id: self.id,
            session_id,
            sequence,
            role: self.role,
            content: self.content,
            content_blocks: self.content_blocks,
            tool_calls: self.tool_calls,
            tool_call_id: self.tool_call_id,
            tool_error: self.tool_error,
            produced_by_call_id: self.produced_by_call_id,
            run_id: self.run_id,
            status: self.status,
            error: self.error,
            is_summary: self.is_summary,
            runtime: self.runtime,
            created_at,
        }
    }
}

impl Message {
    /// A completed message that belongs to no stored session (an agent loop's
    /// conversation), built only to be rendered to a provider.
    pub fn unstored(role: Role, content: impl Into<String>) -> Self {
        let runtime = RuntimeSnapshot {
            runtime_kind: RuntimeKind::Agent,
            segment_id: SegmentId::generate(),
            provider: None,
            model: None,
            adapter_id: None,
            task_id: None,
            task_run_id: None,
            capabilities: None,
        };
        NewMessage::text(role, content, runtime).into_message(
            SessionId::generate(),
            0,
            String::new(),
        )
    }
}

/// Concatenates the text blocks of `blocks`, the plain rendering of rich content.
pub fn plain_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_blocks_round_trip_with_signatures() {
        let blocks = vec![
            ContentBlock::Thinking {
                thinking: "hmm".into(),
                signature: Some("sig".into()),
            },
            ContentBlock::Text { text: "Hi".into() },
            ContentBlock::ToolUse {
                id: "t1".into(),
                name: "read".into(),
                input: serde_json::json!({"p": 1}),
            },
        ];
        let v = serde_json::to_value(&blocks).expect("serializes");
        assert_eq!(v[0]["type"], "thinking");
        assert_eq!(v[0]["signature"], "sig");
        let back: Vec<ContentBlock> = serde_json::from_value(v).expect("deserializes");
        assert_eq!(back, blocks);
        assert_eq!(plain_text(&back), "Hi");
    }
}
