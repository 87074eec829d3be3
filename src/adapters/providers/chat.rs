//! What Hecate asks a provider and what comes back: the provider's configuration,
//! a chat request, the streamed deltas and the answer, and why a call failed.

use super::error::ProviderError;
use crate::domain::message::{ContentBlock, Message, ToolCall};
use crate::domain::provider_call::Usage;
use serde::{Deserialize, Serialize};

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (OpenAI, Ollama, LM Studio, llama.cpp, vLLM, OpenRouter).
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    /// Parses `openai` or `anthropic`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai_compatible" | "openai-compatible" => Some(Self::Openai),
            "anthropic" => Some(Self::Anthropic),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }
}

/// One configured provider with resolved credentials.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// The provider's name, used in `provider/model` references.
    pub name: String,
    /// Its protocol.
    pub kind: ProviderKind,
    /// Base URL (for OpenAI-compatible providers it includes `/v1`).
    pub base_url: String,
    /// API key, when the provider needs one.
    pub api_key: Option<String>,
    /// Models the operator declared; empty means "whatever the provider lists".
    pub models: Vec<String>,
}

/// A provider request: the context the engine chose, rendered per protocol.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// Model as the provider names it.
    pub model: String,
    /// System prompt, if any.
    pub system: Option<String>,
    /// The conversation, in order.
    pub messages: Vec<Message>,
    /// Output token cap.
    pub max_tokens: u32,
    /// Tools the model may call (none: a plain chat request).
    pub tools: Vec<ToolDefinition>,
    /// Reasoning effort (`low`, `medium`, `high`), when asked for: OpenAI's
    /// `reasoning_effort`, Anthropic's extended thinking with a budget to match.
    pub reasoning_effort: Option<String>,
}

#[cfg(test)]
impl ChatRequest {
    /// A request to model `m` with system prompt `sys`, `messages` and one
    /// `read_file` tool, for the protocols' rendering tests.
    pub(crate) fn read_file_example(messages: Vec<Message>) -> Self {
        Self {
            model: "m".into(),
            system: Some("sys".into()),
            messages,
            max_tokens: 10,
            tools: vec![ToolDefinition {
                name: "read_file".into(),
                description: "Reads".into(),
                parameters: serde_json::json!({"type": "object"}),
            }],
            reasoning_effort: None,
        }
    }
}

/// A tool offered to the model: its name, what it does and the JSON schema of
/// its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema (an object schema) of its arguments.
    pub parameters: serde_json::Value,
}

/// A piece of streamed output.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    /// Answer text.
    Text(String),
    /// Reasoning text.
    Thinking(String),
    /// A tool call began.
    ToolCallStarted {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
}

/// What a provider returned (or had returned before it failed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatOutcome {
    /// Content in order: thinking, text, tool use.
    pub blocks: Vec<ContentBlock>,
    /// Tool calls in OpenAI shape (arguments as JSON text).
    pub tool_calls: Vec<ToolCall>,
    /// Token usage, when reported.
    pub usage: Option<Usage>,
    /// Why generation stopped, as the provider said it.
    pub stop_reason: Option<String>,
}

impl ChatOutcome {
    /// Appends streamed text to the last block of the same kind, or opens one.
    pub(crate) fn push_text(&mut self, text: &str) {
        if let Some(ContentBlock::Text { text: t }) = self.blocks.last_mut() {
            t.push_str(text);
        } else {
            self.blocks.push(ContentBlock::Text {
                text: text.to_string(),
            });
        }
    }

    /// Appends streamed reasoning to the last thinking block, or opens one.
    pub(crate) fn push_thinking(&mut self, text: &str) {
        if let Some(ContentBlock::Thinking { thinking, .. }) = self.blocks.last_mut() {
            thinking.push_str(text);
        } else {
            self.blocks.push(ContentBlock::Thinking {
                thinking: text.to_string(),
                signature: None,
            });
        }
    }
}

/// A failed call: the classified error and whatever arrived before it.
#[derive(Debug)]
pub struct ChatFailure {
    /// What went wrong.
    pub error: ProviderError,
    /// The partial output.
    pub partial: ChatOutcome,
}
