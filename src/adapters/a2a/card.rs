//! A remote agent's card: fetched from its URL, checked (a JSON card, an
//! interface Hecate can speak), and cached until a use of it fails.

use super::RemoteAgentSpec;
use super::error::A2aClientError;
use crate::a2a_wire::{AgentCard, AgentInterface, BINDING_HTTP_JSON, BINDING_JSONRPC};
use std::sync::Mutex;

/// The binding an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP, the URL taking every method.
    JsonRpc,
    /// HTTP+JSON (REST): `/message:send`, `/tasks/{id}` … under the URL.
    HttpJson,
}

impl Binding {
    /// The card's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Self::JsonRpc => BINDING_JSONRPC,
            Self::HttpJson => BINDING_HTTP_JSON,
        }
    }
}

/// Where and how to call the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The interface's URL.
    pub url: String,
    /// Its binding.
    pub binding: Binding,
}

/// What Hecate keeps of a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteCard {
    /// The agent's name.
    pub name: String,
    /// What it says it does.
    pub description: String,
    /// The interface chosen.
    pub endpoint: Endpoint,
    /// Whether it streams (`capabilities.streaming`).
    pub streaming: bool,
}

/// Reads a card's text: a JSON agent card with an interface Hecate can speak
/// (JSON-RPC first, then HTTP+JSON, at protocol version 1.x or unstated).
pub fn parse_card(url: &str, body: &str) -> Result<RemoteCard, A2aClientError> {
    let card: AgentCard = serde_json::from_str(body).map_err(|e| A2aClientError::CardInvalid {
        url: url.to_string(),
        message: format!("not a JSON agent card ({e}); it starts {:?}", head(body)),
    })?;
    let speakable = |i: &&AgentInterface, binding: &str| {
        i.protocol_binding.eq_ignore_ascii_case(binding)
            && i.protocol_version
                .as_deref()
                .is_none_or(|v| v == "1" || v.starts_with("1."))
            && (i.url.starts_with("http://") || i.url.starts_with("https://"))
    };
    let pick = [Binding::JsonRpc, Binding::HttpJson]
        .into_iter()
        .find_map(|b| {
            let name = b.name();
            card.supported_interfaces
                .iter()
                .find(|i| speakable(i, name))
                .map(|i| Endpoint {
                    url: i.url.trim_end_matches('/').to_string(),
                    binding: b,
                })
        });
    let Some(endpoint) = pick else {
        let offered: Vec<String> = card
            .supported_interfaces
            .iter()
            .map(|i| {
                format!(
                    "{} {} at {}",
                    i.protocol_binding,
                    i.protocol_version.as_deref().unwrap_or("?"),
                    i.url
                )
            })
            .collect();
        return Err(A2aClientError::NoUsableInterface {
            url: url.to_string(),
            offered: if offered.is_empty() {
                "none".into()
            } else {
                offered.join(", ")
            },
        });
    };
    Ok(RemoteCard {
        name: card.name,
        description: card.description,
        endpoint,
        streaming: card.capabilities.streaming.unwrap_or(false),
    })
}

/// The first characters of a body, for an error.
fn head(body: &str) -> String {
    body.trim_start().chars().take(40).collect()
}

/// Fetches and reads `spec`'s card.
pub async fn fetch_card(
    http: &reqwest::Client,
    spec: &RemoteAgentSpec,
) -> Result<RemoteCard, A2aClientError> {
    let url = spec.card_url.clone();
    let timeout = spec.card_timeout;
    let fetch = async {
        let resp = http
            .get(&url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| A2aClientError::CardUnreachable {
                url: url.clone(),
                message: e.to_string(),
            })?;
        let status = resp.status();
        let kind = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = resp
            .text()
            .await
            .map_err(|e| A2aClientError::CardUnreachable {
                url: url.clone(),
                message: e.to_string(),
            })?;
        if !status.is_success() {
            return Err(A2aClientError::CardInvalid {
                url: url.clone(),
                message: format!("HTTP {}", status.as_u16()),
            });
        }
        if kind.contains("html") {
            return Err(A2aClientError::CardInvalid {
                url: url.clone(),
                message: format!("an HTML page ({kind}), not JSON"),
            });
        }
        parse_card(&url, &body)
    };
    match tokio::time::timeout(timeout, fetch).await {
        Ok(r) => r,
        Err(_) => Err(A2aClientError::CardTimeout {
            url: spec.card_url.clone(),
            secs: timeout.as_secs().max(1),
        }),
    }
}

/// A card fetched once and kept until [`CardCache::forget`].
#[derive(Debug, Default)]
pub struct CardCache {
    card: Mutex<Option<RemoteCard>>,
}

impl CardCache {
    /// The cached card, else the card fetched now (and cached when it reads).
    pub async fn get(
        &self,
        http: &reqwest::Client,
        spec: &RemoteAgentSpec,
    ) -> Result<RemoteCard, A2aClientError> {
        if let Some(c) = self.lock().clone() {
            return Ok(c);
        }
        let card = fetch_card(http, spec).await?;
        *self.lock() = Some(card.clone());
        Ok(card)
    }

    /// Drops the cached card, so the next use fetches it again.
    pub fn forget(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<RemoteCard>> {
        self.card.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_rpc_is_preferred_and_http_json_taken_otherwise() {
        let both = r#"{"name":"a","supportedInterfaces":[
            {"url":"http://h/rest/","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},
            {"url":"http://h/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
            "capabilities":{"streaming":true}}"#;
        let c = parse_card("u", both).expect("card");
        assert_eq!(c.endpoint.binding, Binding::JsonRpc);
        assert!(c.streaming);
        let rest = r#"{"name":"a","supportedInterfaces":[
            {"url":"http://h/rest/","protocolBinding":"HTTP+JSON"}]}"#;
        let c = parse_card("u", rest).expect("card");
        assert_eq!(c.endpoint.url, "http://h/rest");
        assert!(!c.streaming);
    }

    #[test]
    fn html_and_unusable_cards_are_refused_with_their_reason() {
        let e = parse_card("u", "<!doctype html><p>hi").expect_err("html");
        assert_eq!(e.reason(), "card_invalid");
        let grpc = r#"{"name":"a","supportedInterfaces":[
            {"url":"http://h","protocolBinding":"GRPC","protocolVersion":"1.0"},
            {"url":"http://h","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}"#;
        let e = parse_card("u", grpc).expect_err("no interface");
        assert_eq!(e.reason(), "no_usable_interface");
        assert!(e.to_string().contains("GRPC 1.0"), "{e}");
    }
}
