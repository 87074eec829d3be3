//! Named API keys of a hub shared by a team, and the identity a request acts as.
//!
//! A key has a role (read-only, operator or admin) and optional limits: the
//! namespaces it may be used on and the upstream MCP servers and tools it sees.
//! Its secret is shown once at creation; only a SHA-256 of the whole token is
//! stored (the secret is 244 random bits, so a slow hash adds nothing). The
//! single static token of `[server] token` keeps working as the admin identity.
//! An access token of the team's identity provider (`[server.idp]`) acts with
//! the scope its granted `hecate:*` scopes map to ([`IdpSettings`]).

use super::ids::ApiKeyId;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The server name Hecate's own MCP tools are listed under in a key's scope
/// (`server:hecate`, `tool:hecate/list_sessions`).
pub const OWN_TOOLS_SERVER: &str = "hecate";

/// What a key may do, each role including the ones before it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads (`GET`), lists tools and calls tools marked read-only.
    #[default]
    Read,
    /// Also acts: sends messages, answers approvals, runs tasks, calls models and tools.
    Operator,
    /// Also manages the hub: keys, tool policies, capability overrides, installs.
    Admin,
}

impl Role {
    /// The wire name (`read`, `operator`, `admin`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Operator => "operator",
            Self::Admin => "admin",
        }
    }

    /// The role a wire name names.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "read" | "read_only" | "read-only" => Some(Self::Read),
            "operator" => Some(Self::Operator),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a scope could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// An item is none of the known forms.
    #[error(
        "unknown scope item {0:?}: use read, operator, admin, namespace:NAME, server:NAME or tool:SERVER/TOOL"
    )]
    Unknown(String),
    /// Two roles were given.
    #[error("the scope names two roles ({0} and {1}); give one")]
    TwoRoles(Role, Role),
    /// A `namespace:`, `server:` or `tool:` item has an empty or malformed value.
    #[error("scope item {0:?} has no usable value (tool items are tool:SERVER/TOOL)")]
    Empty(String),
}

/// A key's role and limits; an empty list sets no limit on that axis.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KeyScope {
    /// What the key may do.
    pub role: Role,
    /// Namespaces the key may be used on (a server serves one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// Upstream MCP servers whose tools the key sees (`hecate` names Hecate's own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<String>,
    /// Single tools the key sees beside its servers, as `SERVER/TOOL`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

impl KeyScope {
    /// Reads scope items (`operator`, `namespace:team-a`, `server:github`,
    /// `tool:linear/create_issue`); a comma-separated item counts as several.
    /// No role item means `read`.
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Self, ScopeError> {
        let mut scope = Self::default();
        let mut role: Option<Role> = None;
        let parts = items
            .iter()
            .flat_map(|i| i.as_ref().split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty());
        for item in parts {
            if let Some(r) = Role::parse(item) {
                match role {
                    Some(prev) if prev != r => return Err(ScopeError::TwoRoles(prev, r)),
                    _ => role = Some(r),
                }
                continue;
            }
            let (kind, value) = item
                .split_once(':')
                .ok_or_else(|| ScopeError::Unknown(item.to_string()))?;
            let value = value.trim();
            if value.is_empty() {
                return Err(ScopeError::Empty(item.to_string()));
            }
            let list = match kind.trim() {
                "namespace" | "ns" => &mut scope.namespaces,
                "server" => &mut scope.servers,
                "tool" => {
                    if !value
                        .split_once('/')
                        .is_some_and(|(s, t)| !s.is_empty() && !t.is_empty())
                    {
                        return Err(ScopeError::Empty(item.to_string()));
                    }
                    &mut scope.tools
                }
                _ => return Err(ScopeError::Unknown(item.to_string())),
            };
            if !list.iter().any(|v| v == value) {
                list.push(value.to_string());
            }
        }
        scope.role = role.unwrap_or_default();
        Ok(scope)
    }

    /// Reads the scope items an identity provider granted: like [`KeyScope::parse`],
    /// except that several roles are no error and the highest one counts.
    pub fn from_granted<S: AsRef<str>>(items: &[S]) -> Result<Self, ScopeError> {
        let mut role: Option<Role> = None;
        let mut limits = Vec::new();
        for item in items.iter().map(|i| i.as_ref().trim()) {
            match Role::parse(item) {
                Some(r) => role = role.max(Some(r)),
                None if !item.is_empty() => limits.push(item),
                None => {}
            }
        }
        let mut scope = Self::parse(&limits)?;
        scope.role = role.unwrap_or_default();
        Ok(scope)
    }

    /// The scope as items [`KeyScope::parse`] reads back.
    pub fn items(&self) -> Vec<String> {
        let mut out = vec![self.role.as_str().to_string()];
        out.extend(self.namespaces.iter().map(|n| format!("namespace:{n}")));
        out.extend(self.servers.iter().map(|s| format!("server:{s}")));
        out.extend(self.tools.iter().map(|t| format!("tool:{t}")));
        out
    }

    /// Whether the key may be used on a server serving `namespace`.
    pub fn allows_namespace(&self, namespace: &str) -> bool {
        self.namespaces.is_empty() || self.namespaces.iter().any(|n| n == namespace)
    }

    /// Whether the key limits which tools it sees at all.
    pub fn limits_tools(&self) -> bool {
        !(self.servers.is_empty() && self.tools.is_empty())
    }

    /// Whether the key sees `tool` of `server` (`hecate` for Hecate's own tools).
    pub fn allows_tool(&self, server: &str, tool: &str) -> bool {
        if !self.limits_tools() {
            return true;
        }
        self.servers.iter().any(|s| s == server)
            || self.tools.iter().any(|t| {
                t.split_once('/')
                    .is_some_and(|(s, name)| s == server && name == tool)
            })
    }

    /// Whether the key sees anything of `server` (its resources and prompts).
    pub fn allows_server(&self, server: &str) -> bool {
        !self.limits_tools()
            || self.servers.iter().any(|s| s == server)
            || self
                .tools
                .iter()
                .any(|t| t.split_once('/').is_some_and(|(s, _)| s == server))
    }
}

/// A stored key, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKey {
    /// Key id; the token starts with it.
    pub id: ApiKeyId,
    /// Its unique name among keys not revoked.
    pub name: String,
    /// Role and limits.
    pub scope: KeyScope,
    /// The identity that created it.
    pub created_by: String,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// When it stops working, if ever (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// When it was revoked (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// When it was last used, to the minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
}

/// Whether a key works now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyState {
    /// It opens the hub.
    Active,
    /// Its expiry passed.
    Expired,
    /// It was revoked.
    Revoked,
}

impl ApiKey {
    /// The key's state at `now_ms` (milliseconds since the epoch).
    pub fn state(&self, now_ms: i64) -> KeyState {
        if self.revoked_at.is_some() {
            return KeyState::Revoked;
        }
        match self
            .expires_at
            .as_deref()
            .and_then(super::time::parse_millis)
        {
            Some(at) if at <= now_ms => KeyState::Expired,
            _ => KeyState::Active,
        }
    }
}

/// A key's whole token, `ID.SECRET`, split; `None` when `raw` is not shaped so.
pub fn split_token(raw: &str) -> Option<(ApiKeyId, &str)> {
    let (id, secret) = raw.split_once('.')?;
    let well_formed = id.starts_with(ApiKeyId::PREFIX)
        && id.len() > ApiKeyId::PREFIX.len()
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !secret.is_empty();
    well_formed.then(|| (ApiKeyId::from(id), secret))
}

/// Whether `raw` is shaped like a key's token (rather than the static token).
pub fn looks_like_key(raw: &str) -> bool {
    split_token(raw).is_some()
}

/// A fresh token for key `id`: the id, a dot and 244 random bits in hex.
pub fn new_token(id: &ApiKeyId) -> String {
    format!(
        "{id}.{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The stored form of a token: its SHA-256, in hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The holder of an access token the configured identity provider issued
/// (`[server.idp]`), once its signature and claims were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenHolder {
    /// The token's subject (`sub`): a person, or a client for a machine grant.
    pub subject: String,
    /// The issuer that signed it (`iss`).
    pub issuer: String,
    /// The role and limits its granted scopes map to.
    pub scope: KeyScope,
}

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// The static token's holder, or anyone on a server without a token.
    Admin,
    /// The holder of a named key.
    Key(Arc<ApiKey>),
    /// The holder of an identity provider's access token.
    Token(Arc<TokenHolder>),
}

impl Identity {
    /// The role the identity acts with.
    pub fn role(&self) -> Role {
        match self {
            Self::Admin => Role::Admin,
            Self::Key(k) => k.scope.role,
            Self::Token(t) => t.scope.role,
        }
    }

    /// How the identity is recorded: `admin`, `key:NAME` or `idp:SUBJECT`.
    pub fn label(&self) -> String {
        match self {
            Self::Admin => "admin".to_string(),
            Self::Key(k) => format!("key:{}", k.name),
            Self::Token(t) => format!("idp:{}", t.subject),
        }
    }

    /// The identity as a refusal names it: `the API key "NAME"` or
    /// `the access token of idp:SUBJECT`.
    pub fn describe(&self) -> String {
        match self {
            Self::Admin => "the admin".to_string(),
            Self::Key(k) => format!("the API key {:?}", k.name),
            Self::Token(_) => format!("the access token of {}", self.label()),
        }
    }

    /// The key's or token's limits, `None` for the admin identity.
    pub fn scope(&self) -> Option<&KeyScope> {
        match self {
            Self::Admin => None,
            Self::Key(k) => Some(&k.scope),
            Self::Token(t) => Some(&t.scope),
        }
    }

    /// Whether the identity sees `tool` of `server`.
    pub fn allows_tool(&self, server: &str, tool: &str) -> bool {
        self.scope().is_none_or(|s| s.allows_tool(server, tool))
    }

    /// Whether the identity sees anything of `server`.
    pub fn allows_server(&self, server: &str) -> bool {
        self.scope().is_none_or(|s| s.allows_server(server))
    }
}

/// JWS algorithms an identity provider's tokens may be signed with: asymmetric
/// only, never `none` and never an HMAC (whose secret a JWKS would publish).
pub const TOKEN_ALGORITHMS: [&str; 9] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

/// The algorithms accepted when `[server.idp] algorithms` is not set.
pub const DEFAULT_TOKEN_ALGORITHMS: [&str; 3] = ["RS256", "ES256", "EdDSA"];

/// The identity provider whose access tokens a server accepts (`[server.idp]`,
/// checked): who issues them, for which resource, and how their scopes map to a
/// [`KeyScope`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdpSettings {
    /// The issuer a token's `iss` must equal exactly.
    pub issuer: String,
    /// This server's resource identifier, which a token's `aud` must contain.
    pub audience: String,
    /// Where the signing keys are; `None`: from the issuer's discovery document.
    pub jwks_url: Option<String>,
    /// The JWS algorithms accepted, a subset of [`TOKEN_ALGORITHMS`].
    pub algorithms: Vec<String>,
    /// The claim holding the granted scopes (a space-separated string or an array).
    pub scope_claim: String,
    /// The prefix that marks a granted scope as Hecate's (`hecate:`).
    pub scope_prefix: String,
    /// Clock skew tolerated on `exp` and `nbf`.
    pub leeway: Duration,
    /// How long fetched keys are used before they are fetched again.
    pub jwks_cache: Duration,
    /// The least time between two fetches of the keys (an unknown `kid`, a failure).
    pub jwks_refresh: Duration,
    /// The limit on each request to the identity provider.
    pub fetch_timeout: Duration,
    /// The name the protected-resource metadata gives this server.
    pub resource_name: String,
}

impl IdpSettings {
    /// The scope a token's granted scopes map to: the items under the prefix, the
    /// prefix removed (`hecate:operator`, `hecate:server:github`); other scopes
    /// (`openid`, `email`) are ignored and no role item means `read`.
    pub fn granted_scope<S: AsRef<str>>(&self, granted: &[S]) -> Result<KeyScope, ScopeError> {
        let ours: Vec<&str> = granted
            .iter()
            .filter_map(|g| g.as_ref().trim().strip_prefix(self.scope_prefix.as_str()))
            .collect();
        KeyScope::from_granted(&ours)
    }

    /// The role scopes a token may carry (`hecate:read`, `hecate:operator`,
    /// `hecate:admin`), as the protected-resource metadata lists them.
    pub fn scopes_supported(&self) -> Vec<String> {
        [Role::Read, Role::Operator, Role::Admin]
            .iter()
            .map(|r| format!("{}{r}", self.scope_prefix))
            .collect()
    }
}

/// A named key's identity with `scope`, for tests of what a scope allows.
#[cfg(test)]
pub(crate) fn test_key_identity(scope: &[&str]) -> Identity {
    Identity::Key(Arc::new(ApiKey {
        id: ApiKeyId::generate(),
        name: "k".into(),
        scope: KeyScope::parse(scope).expect("scope"),
        created_by: "admin".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        expires_at: None,
        revoked_at: None,
        last_used_at: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_and_print_back() {
        let s = KeyScope::parse(&["operator", "server:github,tool:linear/create_issue"])
            .expect("scope");
        assert_eq!(s.role, Role::Operator);
        assert_eq!(s.servers, ["github"]);
        assert_eq!(s.tools, ["linear/create_issue"]);
        assert_eq!(KeyScope::parse(&s.items()).expect("again"), s);
        assert_eq!(
            KeyScope::parse::<&str>(&[]).expect("empty").role,
            Role::Read
        );
        assert!(matches!(
            KeyScope::parse(&["read", "admin"]),
            Err(ScopeError::TwoRoles(Role::Read, Role::Admin))
        ));
        assert!(matches!(
            KeyScope::parse(&["root"]),
            Err(ScopeError::Unknown(_))
        ));
        for bad in ["tool:github", "tool:/x", "server:", "namespace: "] {
            assert!(
                matches!(KeyScope::parse(&[bad]), Err(ScopeError::Empty(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn tool_and_namespace_limits() {
        let open = KeyScope::default();
        assert!(open.allows_tool("any", "thing") && open.allows_namespace("x"));
        let s = KeyScope::parse(&["namespace:team-a", "server:github", "tool:linear/list"])
            .expect("scope");
        assert!(s.allows_namespace("team-a") && !s.allows_namespace("team-b"));
        assert!(s.allows_tool("github", "anything"));
        assert!(s.allows_tool("linear", "list") && !s.allows_tool("linear", "delete"));
        assert!(!s.allows_tool(OWN_TOOLS_SERVER, "list_sessions"));
        assert!(s.allows_server("linear") && !s.allows_server("jira"));
        assert!(Role::Read < Role::Operator && Role::Operator < Role::Admin);
    }

    #[test]
    fn granted_scopes_map_to_a_key_scope() {
        let idp = IdpSettings {
            issuer: "https://idp.example".into(),
            audience: "https://hecate.example/mcp".into(),
            jwks_url: None,
            algorithms: DEFAULT_TOKEN_ALGORITHMS.map(String::from).to_vec(),
            scope_claim: "scope".into(),
            scope_prefix: "hecate:".into(),
            leeway: Duration::from_secs(60),
            jwks_cache: Duration::from_secs(300),
            jwks_refresh: Duration::from_secs(10),
            fetch_timeout: Duration::from_secs(5),
            resource_name: "Hecate".into(),
        };
        let s = idp
            .granted_scope(&[
                "openid",
                "hecate:read",
                "hecate:operator",
                "hecate:server:fx",
            ])
            .expect("scope");
        assert_eq!(s.role, Role::Operator, "the highest role granted counts");
        assert_eq!(s.servers, ["fx"]);
        assert_eq!(
            idp.granted_scope(&["email"]).expect("none").role,
            Role::Read
        );
        assert!(matches!(
            idp.granted_scope(&["hecate:server:"]),
            Err(ScopeError::Empty(_))
        ));
        assert!(matches!(
            idp.granted_scope(&["hecate:root"]),
            Err(ScopeError::Unknown(_))
        ));
        assert_eq!(
            idp.scopes_supported(),
            ["hecate:read", "hecate:operator", "hecate:admin"]
        );
        let holder = Identity::Token(Arc::new(TokenHolder {
            subject: "alice".into(),
            issuer: idp.issuer.clone(),
            scope: s,
        }));
        assert_eq!(holder.label(), "idp:alice");
        assert_eq!(holder.role(), Role::Operator);
        assert!(holder.allows_tool("fx", "echo") && !holder.allows_tool("gx", "echo"));
        assert_eq!(holder.describe(), "the access token of idp:alice");
    }

    #[test]
    fn tokens_split_and_hash() {
        let id = ApiKeyId::generate();
        let token = new_token(&id);
        let (got, secret) = split_token(&token).expect("split");
        assert_eq!(got, id);
        assert_eq!(secret.len(), 64);
        assert!(!looks_like_key("s3cret") && !looks_like_key("key_.x"));
        assert!(!looks_like_key("key_a b.x"));
        assert_ne!(token_hash(&token), token_hash(&new_token(&id)));
        assert_eq!(token_hash("a").len(), 64);
    }

    #[test]
    fn key_states() {
        let mut k = ApiKey {
            id: ApiKeyId::generate(),
            name: "ci".into(),
            scope: KeyScope::default(),
            created_by: "admin".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            expires_at: Some("2026-01-02T00:00:00Z".into()),
            revoked_at: None,
            last_used_at: None,
        };
        let day1 = super::super::time::parse_millis("2026-01-01T12:00:00Z").expect("t");
        assert_eq!(k.state(day1), KeyState::Active);
        assert_eq!(k.state(day1 + 86_400_000), KeyState::Expired);
        k.revoked_at = Some("2026-01-01T13:00:00Z".into());
        assert_eq!(k.state(day1), KeyState::Revoked);
        assert_eq!(Identity::Key(Arc::new(k)).label(), "key:ci");
        assert_eq!(Identity::Admin.role(), Role::Admin);
    }
}
