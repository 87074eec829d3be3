//! The upstream call: a request body prepared for the provider's format (the
//! client's body with the model rewritten, or its translation), sent with the
//! provider's credentials; a refusal is classified as a `ProviderError`.

use super::{TranslateError, WireFormat};
use super::{
    anthropic_request_to_openai, openai_request_to_anthropic, responses_request_to_openai,
};
use crate::adapters::providers::{
    ProviderConfig, ProviderError, ProviderKind, join_url, status_error,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

/// The Anthropic API version sent when the client named none.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The body to send a provider speaking `target` for a client that sent `body`
/// in `ingress`, asking for the provider's `model`. A Responses request is
/// translated to Chat Completions first (and on to Messages for Anthropic).
pub fn prepare_body(
    ingress: WireFormat,
    target: WireFormat,
    body: &Value,
    model: &str,
) -> Result<Value, TranslateError> {
    match (ingress, target) {
        (WireFormat::Responses, WireFormat::Anthropic) => {
            openai_request_to_anthropic(&responses_request_to_openai(body, model)?, model)
        }
        (WireFormat::Responses, _) => responses_request_to_openai(body, model),
        (WireFormat::OpenAi, WireFormat::Anthropic) => openai_request_to_anthropic(body, model),
        (WireFormat::Anthropic, WireFormat::OpenAi) => anthropic_request_to_openai(body, model),
        _ => {
            let mut out = body.clone();
            out["model"] = json!(model);
            Ok(out)
        }
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
    ) -> Result<reqwest::Response, ProviderError> {
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
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_format_bodies_pass_with_the_model_rewritten() {
        let body = json!({"model": "fix/m", "messages": [], "custom_field": 1});
        let out = prepare_body(WireFormat::OpenAi, WireFormat::OpenAi, &body, "m").expect("ok");
        assert_eq!(
            out,
            json!({"model": "m", "messages": [], "custom_field": 1})
        );
        let cross = prepare_body(
            WireFormat::Anthropic,
            WireFormat::OpenAi,
            &json!({"model": "x", "max_tokens": 1, "messages": []}),
            "m",
        )
        .expect("ok");
        assert_eq!(cross["model"], "m");
        assert!(cross.get("custom_field").is_none());
    }
}
