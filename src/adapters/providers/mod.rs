//! Model provider HTTP APIs: OpenAI-compatible Chat Completions and Anthropic
//! Messages, both streaming, plus model listing, embeddings and a small pricebook.

mod anthropic;
mod embeddings;
mod error;
mod openai;
pub mod pricing;
mod sse;

pub use embeddings::{EMBED_TIMEOUT, Embedder};
pub use error::ProviderError;

use crate::adapters::telemetry::spans::{Inference, InferenceEnd};
use crate::domain::message::{ContentBlock, Message, ToolCall};
use crate::domain::provider_call::Usage;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tracing::Instrument as _;

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

/// A client for one configured provider.
#[derive(Debug, Clone)]
pub struct ProviderClient {
    http: reqwest::Client,
    config: ProviderConfig,
}

/// How long to wait for a provider to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

impl ProviderClient {
    /// Builds a client for `config` sharing the given HTTP client.
    pub fn new(http: reqwest::Client, config: ProviderConfig) -> Self {
        Self { http, config }
    }

    /// Builds the HTTP client providers share (rustls must have a provider installed).
    pub fn default_http() -> Result<reqwest::Client, ProviderError> {
        reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| ProviderError::Unreachable(e.to_string()))
    }

    /// The provider's configuration.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// The shared HTTP client.
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Streams one generation, calling `on_delta` as output arrives.
    /// The call is traced as a `chat {model}` span with its usage, and counted
    /// in the `gen_ai.client.*` metrics.
    pub async fn stream_chat(
        &self,
        req: &ChatRequest,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatOutcome, ChatFailure> {
        let call = Inference::start(
            self.config.kind.as_str(),
            &self.config.name,
            &req.model,
            &self.config.base_url,
        );
        let result = match self.config.kind {
            ProviderKind::Openai => {
                openai::stream_chat(&self.http, &self.config, req, on_delta)
                    .instrument(call.span().clone())
                    .await
            }
            ProviderKind::Anthropic => {
                anthropic::stream_chat(&self.http, &self.config, req, on_delta)
                    .instrument(call.span().clone())
                    .await
            }
        };
        let (outcome, error) = match &result {
            Ok(o) => (o, None),
            Err(f) => (
                &f.partial,
                Some((f.error.error_type(), f.error.to_string())),
            ),
        };
        call.finish(InferenceEnd {
            response_model: None,
            tokens: outcome
                .usage
                .map(|u| (u.prompt_tokens, u.completion_tokens)),
            finish_reason: outcome.stop_reason.as_deref(),
            error: error.as_ref().map(|(k, m)| (k.as_str(), m.as_str())),
        });
        result
    }

    /// Lists the models the provider reports.
    pub async fn list_models(&self) -> Result<Vec<String>, ProviderError> {
        match self.config.kind {
            ProviderKind::Openai => openai::list_models(&self.http, &self.config).await,
            ProviderKind::Anthropic => anthropic::list_models(&self.http, &self.config).await,
        }
    }
}

/// Joins a base URL and a path with exactly one slash between them.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// Reads an error response body (capped) for the error message.
pub(crate) async fn error_body(resp: reqwest::Response) -> String {
    let text = resp.text().await.unwrap_or_default();
    let mut end = text.len().min(2000);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// Sends a model-listing request and returns the `data[].id` values, the shape both
/// the OpenAI and the Anthropic listings share.
pub(crate) async fn model_ids(
    request: reqwest::RequestBuilder,
) -> Result<Vec<String>, ProviderError> {
    let resp = request.send().await?;
    if !resp.status().is_success() {
        return Err(status_error(resp).await);
    }
    let v: serde_json::Value = resp
        .json()
        .await
        .map_err(|e| ProviderError::Malformed(e.to_string()))?;
    Ok(v["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect())
}

/// Classifies a failed HTTP response.
pub(crate) async fn status_error(resp: reqwest::Response) -> ProviderError {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = error_body(resp).await;
    ProviderError::Status {
        status,
        body,
        retry_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_urls_and_parses_kinds() {
        assert_eq!(join_url("http://x/v1/", "/models"), "http://x/v1/models");
        assert_eq!(ProviderKind::parse("OpenAI"), Some(ProviderKind::Openai));
        assert_eq!(ProviderKind::parse("gemini"), None);
    }
}
