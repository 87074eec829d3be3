//! Model provider HTTP APIs: OpenAI-compatible Chat Completions and Anthropic
//! Messages, both streaming, plus model listing, embeddings and a small pricebook.

mod anthropic;
mod chat;
mod embeddings;
mod error;
mod http;
mod openai;
pub mod pricing;
mod sse;

pub use chat::{
    ChatFailure, ChatOutcome, ChatRequest, ProviderConfig, ProviderKind, StreamDelta,
    ToolDefinition,
};
pub use embeddings::{EMBED_TIMEOUT, Embedder};
pub use error::ProviderError;
pub(crate) use http::{join_url, model_ids, send_chat, status_error};

use crate::telemetry::spans::{Inference, InferenceEnd};
use std::time::Duration;
use tracing::Instrument as _;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_urls_and_parses_kinds() {
        assert_eq!(ProviderKind::parse("OpenAI"), Some(ProviderKind::Openai));
        assert_eq!(ProviderKind::parse("gemini"), None);
    }
}
