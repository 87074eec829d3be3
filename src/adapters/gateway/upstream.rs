//! The upstream call: a body already prepared for the provider's format (by
//! `model_wire::requests::prepare`) sent with the provider's credentials; a
//! refusal is classified as a `ProviderError`.

use super::relay::UpstreamAnswer;
use crate::adapters::providers::{
    ProviderConfig, ProviderError, ProviderKind, join_url, status_error,
};
use crate::model_wire::format::WireFormat;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

/// The Anthropic API version sent when the client named none.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The wire format a provider of `kind` speaks.
pub fn wire_format(kind: ProviderKind) -> WireFormat {
    match kind {
        ProviderKind::Openai => WireFormat::OpenAi,
        ProviderKind::Anthropic => WireFormat::Anthropic,
    }
}

/// Sends gateway requests to providers over one shared HTTP client.
#[derive(Debug, Clone)]
pub struct Upstream {
    http: reqwest::Client,
    /// Each provider's generation endpoint (with the kind it is for) by its
    /// base URL, parsed once.
    endpoints: Arc<RwLock<HashMap<String, (ProviderKind, reqwest::Url)>>>,
}

impl Upstream {
    /// An upstream caller over `http`.
    pub fn new(http: reqwest::Client) -> Self {
        Self {
            http,
            endpoints: Arc::default(),
        }
    }

    /// The generation endpoint of `config`: parsed on first use, then reused
    /// (a URL parse is a measurable part of a relayed request).
    fn endpoint(&self, config: &ProviderConfig) -> Result<reqwest::Url, ProviderError> {
        let known = self
            .endpoints
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(config.base_url.as_str())
            .filter(|(kind, _)| *kind == config.kind)
            .map(|(_, url)| url.clone());
        if let Some(url) = known {
            return Ok(url);
        }
        let path = match config.kind {
            ProviderKind::Openai => "chat/completions",
            ProviderKind::Anthropic => "v1/messages",
        };
        let joined = join_url(&config.base_url, path);
        let url = reqwest::Url::parse(&joined).map_err(|e| {
            ProviderError::Unreachable(format!("the provider URL {joined:?} is not valid: {e}"))
        })?;
        self.endpoints
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(config.base_url.clone(), (config.kind, url.clone()));
        Ok(url)
    }

    /// Posts `body` to the provider's generation endpoint. `anthropic_headers`
    /// are the client's `anthropic-version` / `anthropic-beta` values, sent on
    /// to an Anthropic provider. A non-2xx answer is an error.
    pub async fn send(
        &self,
        config: &ProviderConfig,
        body: &Value,
        anthropic_headers: &[(String, String)],
    ) -> Result<UpstreamAnswer, ProviderError> {
        let endpoint = self.endpoint(config)?;
        let rb = match config.kind {
            ProviderKind::Openai => {
                let rb = self.http.post(endpoint);
                match &config.api_key {
                    Some(k) if !k.is_empty() => rb.bearer_auth(k),
                    _ => rb,
                }
            }
            ProviderKind::Anthropic => {
                let mut rb = self.http.post(endpoint);
                if !anthropic_headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("anthropic-version"))
                {
                    rb = rb.header("anthropic-version", ANTHROPIC_VERSION);
                }
                for (k, v) in anthropic_headers {
                    rb = rb.header(k.as_str(), v.as_str());
                }
                match &config.api_key {
                    Some(k) if !k.is_empty() => rb.header("x-api-key", k),
                    _ => rb,
                }
            }
        };
        let resp = rb.json(body).send().await?;
        if !resp.status().is_success() {
            return Err(status_error(resp).await);
        }
        Ok(UpstreamAnswer(resp))
    }
}
