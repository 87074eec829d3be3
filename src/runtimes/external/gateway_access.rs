//! How supervised agents that opted in reach Hecate's own model gateway.

/// Where supervised agents reach Hecate's model gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayAccess {
    /// `http://HOST:PORT`, without a path.
    pub base_url: String,
    /// What the agent sends as its API key (the HTTP token, or a placeholder).
    pub api_key: String,
}

impl GatewayAccess {
    /// The gateway at `base_url`, taking `token` as the agents' API key (a
    /// placeholder when it takes none: SDKs insist on a key).
    pub fn new(base_url: &str, token: Option<&str>) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: token.unwrap_or("hecate").to_string(),
        }
    }
}
