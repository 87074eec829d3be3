//! Access control shared by every HTTP surface (`/hecate/v1`, `/v1`, `/acp` and
//! `/mcp`): the size of the request head, DNS-rebinding protection (Host and
//! Origin must name loopback when the server is bound to loopback), then who is
//! calling: the static bearer token (compared in constant time) is the admin
//! identity, a named API key acts with its scope (its role must cover what the
//! request does, [`super::roles`], and its namespaces the server's), and so does
//! an access token of the configured identity provider ([`super::idp`]) with the
//! scope its granted `hecate:*` scopes map to. [`Guard::admit`] answers with the
//! [`Identity`] or a typed [`Denial`]; each surface renders the denial in its own
//! envelope, and [`Guard::with_challenge`] points a refused OAuth client at the
//! RFC 9728 metadata.

use super::idp::{IdentityProvider, TokenRefusal};
use super::roles::{Surface, required_role};
use crate::domain::api_key::{self, Identity, Role};
use crate::engine::Engine;
use crate::engine::keys::KeyRefusal;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use std::net::IpAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// Most header fields a request may carry (more gets 431).
pub const MAX_HEADER_FIELDS: usize = 100;
/// Largest request head, URI and header fields together, in bytes (more gets 431).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The header Anthropic SDKs send their API key in.
pub const X_API_KEY: header::HeaderName = header::HeaderName::from_static("x-api-key");

/// Type code of a request without the configured bearer token (HTTP 401).
pub const UNAUTHORIZED: &str = "unauthorized";
/// Type code of a request refused by Host or Origin validation (HTTP 403).
pub const FORBIDDEN: &str = "forbidden";
/// Type code of a malformed or oversized request (400, 408, 413, 431).
pub const INVALID_REQUEST: &str = "invalid_request";

/// Why a request was refused before reaching a handler.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denial {
    /// A token is configured and no `Authorization` header was sent.
    #[error("the Authorization header is missing")]
    MissingToken,
    /// The `Authorization` header is not `Bearer <token>`.
    #[error("the Authorization header is not `Bearer <token>`")]
    NotBearer,
    /// The bearer token does not match.
    #[error("the bearer token is wrong")]
    WrongToken,
    /// A key-shaped token that no key has (or whose secret does not match).
    #[error("the API key is not valid on this hub")]
    UnknownKey,
    /// The key was revoked.
    #[error("the API key {name:?} was revoked at {at}")]
    RevokedKey {
        /// Key name.
        name: String,
        /// When.
        at: String,
    },
    /// The key's lifetime ended.
    #[error("the API key {name:?} expired at {at}")]
    ExpiredKey {
        /// Key name.
        name: String,
        /// When.
        at: String,
    },
    /// The key may not be used on this server's namespace.
    #[error(
        "the API key {key:?} is limited to namespaces {allowed:?}; this server serves {namespace:?}"
    )]
    NamespaceNotAllowed {
        /// Key name.
        key: String,
        /// The server's namespace.
        namespace: String,
        /// The key's namespaces.
        allowed: Vec<String>,
    },
    /// The key's role does not cover the request.
    #[error("the API key {key:?} has the {role} role; this request needs {needed}")]
    RoleTooLow {
        /// Key name.
        key: String,
        /// The key's role.
        role: Role,
        /// The role the request needs.
        needed: Role,
    },
    /// The keys could not be read from the store.
    #[error("the API key could not be checked: {0}")]
    KeysUnavailable(String),
    /// An access token of the identity provider was refused.
    #[error("{0}")]
    AccessToken(TokenRefusal),
    /// The access token's scope names other namespaces than the server's.
    #[error(
        "the access token of {holder} is limited to namespaces {allowed:?}; this server serves {namespace:?}"
    )]
    TokenNamespaceNotAllowed {
        /// The holder as recorded (`idp:SUBJECT`).
        holder: String,
        /// The server's namespace.
        namespace: String,
        /// The token's namespaces.
        allowed: Vec<String>,
    },
    /// The access token's role does not cover the request.
    #[error("the access token of {holder} has the {role} role; this request needs {needed}")]
    TokenRoleTooLow {
        /// The holder as recorded (`idp:SUBJECT`).
        holder: String,
        /// The role its scopes grant.
        role: Role,
        /// The role the request needs.
        needed: Role,
    },
    /// The Host header names something other than loopback.
    #[error(
        "Host {0:?} is not a loopback name; this server only answers requests addressed to loopback"
    )]
    ForeignHost(String),
    /// The Origin header is not a loopback origin.
    #[error("Origin {0:?} is not a loopback origin")]
    ForeignOrigin(String),
    /// The request head is over [`MAX_HEADER_FIELDS`] or [`MAX_HEAD_BYTES`].
    #[error(
        "the request head is too large: {fields} header fields and {bytes} bytes \
         (at most {MAX_HEADER_FIELDS} fields and {MAX_HEAD_BYTES} bytes)"
    )]
    HeadTooLarge {
        /// Header fields sent.
        fields: usize,
        /// Bytes of the URI and header fields.
        bytes: usize,
    },
}

impl Denial {
    /// The HTTP status of this refusal.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::MissingToken
            | Self::NotBearer
            | Self::WrongToken
            | Self::UnknownKey
            | Self::RevokedKey { .. }
            | Self::ExpiredKey { .. }
            | Self::AccessToken(_) => StatusCode::UNAUTHORIZED,
            Self::ForeignHost(_)
            | Self::ForeignOrigin(_)
            | Self::NamespaceNotAllowed { .. }
            | Self::RoleTooLow { .. }
            | Self::TokenNamespaceNotAllowed { .. }
            | Self::TokenRoleTooLow { .. } => StatusCode::FORBIDDEN,
            Self::HeadTooLarge { .. } => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Self::KeysUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The stable type code (`unauthorized`, `forbidden`, `store_error` or
    /// `invalid_request`).
    pub fn code(&self) -> &'static str {
        match self.status() {
            StatusCode::UNAUTHORIZED => UNAUTHORIZED,
            StatusCode::FORBIDDEN => FORBIDDEN,
            StatusCode::SERVICE_UNAVAILABLE => "store_error",
            _ => INVALID_REQUEST,
        }
    }

    /// A short summary safe to show to a user.
    pub fn user_message(&self) -> &'static str {
        match self {
            Self::RevokedKey { .. } => "This API key was revoked.",
            Self::ExpiredKey { .. } => "This API key has expired.",
            Self::UnknownKey => "This API key is not valid on this Hecate server.",
            Self::NamespaceNotAllowed { .. } => {
                "This API key may not be used on this server's namespace."
            }
            Self::RoleTooLow { .. } => "This API key may not do that.",
            Self::KeysUnavailable(_) => "The API key could not be checked right now.",
            Self::AccessToken(r) => r.user_message(),
            Self::TokenNamespaceNotAllowed { .. } => {
                "This access token may not be used on this server's namespace."
            }
            Self::TokenRoleTooLow { .. } => "This access token may not do that.",
            _ => match self.status() {
                StatusCode::UNAUTHORIZED => "This Hecate server requires an API token.",
                StatusCode::FORBIDDEN => "The request did not come from an allowed host or origin.",
                _ => "The request headers are too large.",
            },
        }
    }

    /// The recommended next step for an operator.
    pub fn operator_action(&self) -> &'static str {
        match self {
            Self::RevokedKey { .. } | Self::ExpiredKey { .. } | Self::UnknownKey => {
                "Ask an admin for a new key (`hecate keys create NAME --scope ...`) and send it as `Authorization: Bearer <key>`."
            }
            Self::NamespaceNotAllowed { .. } => {
                "Use a key whose scope names this server's namespace, or the replica serving the key's namespace."
            }
            Self::RoleTooLow { .. } => {
                "Use a key with the needed role (`hecate keys create NAME --scope operator` or `admin`)."
            }
            Self::KeysUnavailable(_) => "Check the store with `hecate doctor`; then retry.",
            Self::AccessToken(r) => r.operator_action(),
            Self::TokenNamespaceNotAllowed { .. } => {
                "Ask the identity provider's admin for the scope `hecate:namespace:NAME` of this server's namespace."
            }
            Self::TokenRoleTooLow { .. } => {
                "Request the needed role from the identity provider as a scope (`hecate:operator` or `hecate:admin`)."
            }
            _ => match self.status() {
                StatusCode::UNAUTHORIZED => {
                    "Send `Authorization: Bearer <token>` with the token from `[server] token` or HECATE_TOKEN, or a key from `hecate keys create`."
                }
                StatusCode::FORBIDDEN => {
                    "Call the server through a loopback address (127.0.0.1, [::1] or localhost)."
                }
                _ => "Send fewer or shorter headers.",
            },
        }
    }

    /// The detail field that names the refused value, when there is one.
    pub fn detail(&self) -> Option<(&'static str, String)> {
        match self {
            Self::ForeignHost(h) => Some(("host", h.clone())),
            Self::ForeignOrigin(o) => Some(("origin", o.clone())),
            Self::RevokedKey { name, .. } | Self::ExpiredKey { name, .. } => {
                Some(("key", name.clone()))
            }
            Self::NamespaceNotAllowed { namespace, .. }
            | Self::TokenNamespaceNotAllowed { namespace, .. } => {
                Some(("namespace", namespace.clone()))
            }
            Self::RoleTooLow { needed, .. } | Self::TokenRoleTooLow { needed, .. } => {
                Some(("required_role", needed.to_string()))
            }
            Self::AccessToken(r) => Some(("reason", r.code().to_string())),
            _ => None,
        }
    }
}

impl From<KeyRefusal> for Denial {
    fn from(r: KeyRefusal) -> Self {
        match r {
            KeyRefusal::Unknown => Self::UnknownKey,
            KeyRefusal::Revoked { name, at } => Self::RevokedKey { name, at },
            KeyRefusal::Expired { name, at } => Self::ExpiredKey { name, at },
            KeyRefusal::Store(e) => Self::KeysUnavailable(e.message),
        }
    }
}

/// What a request presented as its credential.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Presented {
    /// The static token, or nothing on a server without one.
    Admin,
    /// A named key's token, still to be checked.
    Key(String),
    /// A JWT for the identity provider, still to be checked.
    Token(String),
}

/// Which Host and Origin values the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostPolicy {
    /// Bound to loopback: Host and any browser Origin must be loopback names.
    Loopback,
    /// Bound elsewhere (`--allow-remote`, which requires a token): any Host.
    Any,
}

impl HostPolicy {
    /// The policy for a server bound to `ip`.
    pub fn for_bound(ip: IpAddr) -> Self {
        if ip.is_loopback() {
            Self::Loopback
        } else {
            Self::Any
        }
    }
}

/// Where named keys are checked: the engine's keys and the namespace the
/// server serves.
#[derive(Clone)]
struct KeyCheck {
    engine: Engine,
    namespace: Arc<str>,
}

/// The access rules of one server.
#[derive(Clone)]
pub struct Guard {
    token: Option<Arc<str>>,
    hosts: HostPolicy,
    keys: Option<KeyCheck>,
    idp: Option<Arc<IdentityProvider>>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("hosts", &self.hosts)
            .field("keys", &self.keys.as_ref().map(|k| k.namespace.clone()))
            .field("idp", &self.idp)
            .finish()
    }
}

impl Guard {
    /// Rules requiring `token` (when set and not empty) and applying `hosts`.
    pub fn new(token: Option<String>, hosts: HostPolicy) -> Self {
        Self {
            token: token.filter(|t| !t.is_empty()).map(Arc::from),
            hosts,
            keys: None,
            idp: None,
        }
    }

    /// The same rules, also accepting the access tokens of `idp` when set; a
    /// server with an identity provider refuses requests without a credential.
    pub fn with_idp(mut self, idp: Option<Arc<IdentityProvider>>) -> Self {
        self.idp = idp;
        self
    }

    /// The identity provider whose tokens the guard accepts, if any.
    pub fn idp(&self) -> Option<&Arc<IdentityProvider>> {
        self.idp.as_ref()
    }

    /// The same rules, also accepting the named keys stored on `engine`, on a
    /// server serving `namespace`.
    pub fn with_keys(mut self, engine: Engine, namespace: &str) -> Self {
        self.keys = Some(KeyCheck {
            engine,
            namespace: Arc::from(namespace),
        });
        self
    }

    /// Checks one request's head: its size, then Host and Origin, then the
    /// static token (a named key's token is refused here: see [`Guard::admit`]).
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Denial> {
        match self.check_with(uri, headers, false)? {
            Presented::Admin => Ok(()),
            Presented::Key(_) | Presented::Token(_) => Err(Denial::WrongToken),
        }
    }

    /// Checks a request on `surface` and answers who it acts as: the head and
    /// Host/Origin rules, then the static token or a named key, whose role must
    /// cover the request and whose namespaces the server's. The gateway also
    /// takes the credential as `x-api-key` (how the Anthropic SDKs send it).
    pub async fn admit(
        &self,
        surface: Surface,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<Identity, Denial> {
        let presented = self.check_with(uri, headers, surface == Surface::Gateway)?;
        let identity = match (presented, &self.keys) {
            (Presented::Admin, _) => return Ok(Identity::Admin),
            (Presented::Token(token), keys) => {
                let idp = self.idp.as_ref().ok_or(Denial::WrongToken)?;
                let holder = idp.verify(&token).await.map_err(|r| {
                    tracing::debug!(reason = r.code(), refusal = %r, "an access token was refused");
                    Denial::AccessToken(r)
                })?;
                if let Some(check) = keys
                    && !holder.scope.allows_namespace(&check.namespace)
                {
                    return Err(Denial::TokenNamespaceNotAllowed {
                        holder: format!("idp:{}", holder.subject),
                        namespace: check.namespace.to_string(),
                        allowed: holder.scope.namespaces.clone(),
                    });
                }
                Identity::Token(Arc::new(holder))
            }
            (Presented::Key(_), None) if self.token.is_none() => return Ok(Identity::Admin),
            (Presented::Key(_), None) => return Err(Denial::WrongToken),
            (Presented::Key(token), Some(check)) => {
                let identity = check.engine.keys().authenticate(&token).await?;
                if let Identity::Key(key) = &identity
                    && !key.scope.allows_namespace(&check.namespace)
                {
                    return Err(Denial::NamespaceNotAllowed {
                        key: key.name.clone(),
                        namespace: check.namespace.to_string(),
                        allowed: key.scope.namespaces.clone(),
                    });
                }
                identity
            }
        };
        let needed = required_role(surface, method, uri.path());
        match &identity {
            Identity::Key(key) if key.scope.role < needed => Err(Denial::RoleTooLow {
                key: key.name.clone(),
                role: key.scope.role,
                needed,
            }),
            Identity::Token(t) if t.scope.role < needed => Err(Denial::TokenRoleTooLow {
                holder: identity.label(),
                role: t.scope.role,
                needed,
            }),
            _ => Ok(identity),
        }
    }

    /// `response`, the rendering of `denial` on `surface`, with the RFC 9728 /
    /// RFC 6750 challenge when the guard trusts an identity provider: a 401
    /// names the surface's protected-resource metadata (`resource_metadata`,
    /// and `error="invalid_token"` for a refused access token), an access
    /// token's role refusal asks for the scope it lacks (`insufficient_scope`).
    pub fn with_challenge(
        &self,
        mut response: Response,
        denial: &Denial,
        surface: Surface,
        headers: &HeaderMap,
    ) -> Response {
        let Some(idp) = &self.idp else {
            return response;
        };
        let suffix = match surface {
            Surface::Mcp => "/mcp",
            Surface::Api => "/hecate/v1",
            Surface::Gateway | Surface::Acp => "",
        };
        let metadata = format!(
            "resource_metadata=\"{}\"",
            idp.metadata_url(suffix, headers)
        );
        let value = match denial {
            Denial::AccessToken(_) => format!("Bearer error=\"invalid_token\", {metadata}"),
            Denial::TokenRoleTooLow { needed, .. } => format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}{needed}\", {metadata}",
                idp.settings().scope_prefix
            ),
            d if d.status() == StatusCode::UNAUTHORIZED => format!("Bearer {metadata}"),
            _ => return response,
        };
        if let Ok(v) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }

    /// Checks only the head's size and its Host and Origin, not the token: for the
    /// console's page and files, which must load before the page can ask for one.
    pub fn check_host(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Denial> {
        check_head_size(uri, headers)?;
        if self.hosts == HostPolicy::Loopback {
            if let Some(host) = header_str(headers, header::HOST)
                && !is_loopback_name(host_name(host))
            {
                return Err(Denial::ForeignHost(host.to_string()));
            }
            if let Some(origin) = header_str(headers, header::ORIGIN)
                && !origin_is_loopback(origin)
            {
                return Err(Denial::ForeignOrigin(origin.to_string()));
            }
        }
        Ok(())
    }

    fn check_with(
        &self,
        uri: &Uri,
        headers: &HeaderMap,
        api_key: bool,
    ) -> Result<Presented, Denial> {
        self.check_host(uri, headers)?;
        let presented = match header_str(headers, X_API_KEY).filter(|_| api_key) {
            Some(key) => Some(Ok(key.trim())),
            None => header_str(headers, header::AUTHORIZATION).map(|value| {
                value
                    .split_once(' ')
                    .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                    .map(|(_, token)| token.trim())
                    .ok_or(Denial::NotBearer)
            }),
        };
        let expected = self.token.as_deref();
        // A credential is needed when there is a token or an identity provider.
        let required = expected.is_some() || self.idp.is_some();
        match (presented, expected) {
            (None, _) if !required => Ok(Presented::Admin),
            (None, _) => Err(Denial::MissingToken),
            // A server without a credential ignores a malformed Authorization header.
            (Some(Err(_)), _) if !required => Ok(Presented::Admin),
            (Some(Err(d)), _) => Err(d),
            (Some(Ok(t)), Some(e)) if bool::from(t.as_bytes().ct_eq(e.as_bytes())) => {
                Ok(Presented::Admin)
            }
            (Some(Ok(t)), _) if api_key::looks_like_key(t) => Ok(Presented::Key(t.to_string())),
            (Some(Ok(t)), _) if self.idp.is_some() && looks_like_jwt(t) => {
                Ok(Presented::Token(t.to_string()))
            }
            (Some(Ok(_)), _) if required => Err(Denial::WrongToken),
            (Some(Ok(_)), _) => Ok(Presented::Admin),
        }
    }
}

/// Whether `raw` is shaped like a JWS compact serialization: three base64url
/// segments, the header and claims not empty (the signature of `alg: none` is).
fn looks_like_jwt(raw: &str) -> bool {
    let segments: Vec<&str> = raw.split('.').collect();
    let b64url = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'='))
    };
    segments.len() == 3
        && !segments[0].is_empty()
        && !segments[1].is_empty()
        && segments.iter().all(|s| b64url(s))
}

fn check_head_size(uri: &Uri, headers: &HeaderMap) -> Result<(), Denial> {
    let fields = headers.len();
    let bytes = uri.to_string().len()
        + headers
            .iter()
            .map(|(k, v)| k.as_str().len() + v.len() + 4)
            .sum::<usize>();
    if fields > MAX_HEADER_FIELDS || bytes > MAX_HEAD_BYTES {
        return Err(Denial::HeadTooLarge { fields, bytes });
    }
    Ok(())
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// The host part of a `Host` value or URL authority: brackets and port removed.
pub fn host_name(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match a.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => a,
    }
}

/// `localhost`, a `*.localhost` name (a trailing dot allowed), or a loopback IP
/// literal (any of 127.0.0.0/8, `::1`).
pub fn is_loopback_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    crate::domain::loopback::is_loopback_host(&name)
}

/// Whether a browser `Origin` (`scheme://host[:port]`) names a loopback host.
pub fn origin_is_loopback(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or("");
    is_loopback_name(host_name(authority))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    fn check(g: &Guard, h: &HeaderMap) -> Result<(), u16> {
        g.check(&Uri::from_static("/mcp"), h)
            .map_err(|e| e.status().as_u16())
    }

    #[test]
    fn loopback_names_and_authorities() {
        assert_eq!(host_name("127.0.0.1:8765"), "127.0.0.1");
        assert_eq!(host_name("[::1]:80"), "::1");
        assert_eq!(host_name("localhost"), "localhost");
        for name in [
            "LOCALHOST.",
            "localhost.",
            "app.localhost",
            "foo.localhost.",
            "127.1.2.3",
            "::1",
        ] {
            assert!(is_loopback_name(name), "{name}");
        }
        for name in [
            "evil.example",
            "localhost.evil.example",
            "localhost..",
            "10.0.0.1",
            "",
        ] {
            assert!(!is_loopback_name(name), "{name}");
        }
        assert!(origin_is_loopback("http://localhost:3000"));
        assert!(origin_is_loopback("https://[::1]"));
        assert!(!origin_is_loopback("null"));
        assert!(!origin_is_loopback("https://evil.example"));
    }

    #[test]
    fn token_host_origin_and_size_rules() {
        let g = Guard::new(Some("s3cret".into()), HostPolicy::Loopback);
        let ok = headers(&[
            (header::HOST, "127.0.0.1:1"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert_eq!(check(&g, &ok), Ok(()));
        let wrong = headers(&[(header::AUTHORIZATION, "bearer nope")]);
        assert_eq!(check(&g, &wrong), Err(401));
        assert_eq!(check(&g, &headers(&[])), Err(401));
        let foreign = headers(&[
            (header::HOST, "rebind.example:8765"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert_eq!(check(&g, &foreign), Err(403));
        let origin = headers(&[
            (header::ORIGIN, "https://evil.example"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert_eq!(check(&g, &origin), Err(403));
        let open = Guard::new(None, HostPolicy::Any);
        assert_eq!(check(&open, &foreign), Ok(()));
        let mut many = HeaderMap::new();
        for i in 0..=MAX_HEADER_FIELDS {
            many.insert(
                header::HeaderName::try_from(format!("x-h{i}")).expect("name"),
                HeaderValue::from_static("1"),
            );
        }
        assert_eq!(check(&open, &many), Err(431));
        let long = headers(&[(header::COOKIE, &"c".repeat(MAX_HEAD_BYTES))]);
        assert_eq!(check(&open, &long), Err(431));
        assert_eq!(Denial::WrongToken.code(), "unauthorized");
        let key = headers(&[(X_API_KEY, "s3cret")]);
        assert_eq!(
            check(&g, &key),
            Err(401),
            "x-api-key is for the gateway only"
        );
        let gw = |h: &HeaderMap| {
            g.check_with(&Uri::from_static("/v1/messages"), h, true)
                .map(|p| assert_eq!(p, Presented::Admin))
        };
        assert_eq!(gw(&key), Ok(()));
        assert_eq!(
            gw(&headers(&[(X_API_KEY, "nope")])),
            Err(Denial::WrongToken)
        );
        assert_eq!(gw(&ok), Ok(()));
        assert_eq!(Denial::ForeignHost("x".into()).code(), "forbidden");
    }

    #[test]
    fn an_identity_provider_needs_a_credential_and_takes_jwt_shaped_bearers() {
        use crate::domain::api_key::{DEFAULT_TOKEN_ALGORITHMS, IdpSettings};
        use std::time::Duration;
        let idp = IdentityProvider::new(IdpSettings {
            issuer: "https://idp.example".into(),
            audience: "https://hecate.example/mcp".into(),
            jwks_url: None,
            algorithms: DEFAULT_TOKEN_ALGORITHMS.map(String::from).to_vec(),
            scope_claim: "scope".into(),
            scope_prefix: "hecate:".into(),
            leeway: Duration::from_secs(60),
            jwks_cache: Duration::from_secs(300),
            jwks_refresh: Duration::from_secs(10),
            fetch_timeout: Duration::from_secs(1),
            resource_name: "Hecate".into(),
        });
        let g = Guard::new(None, HostPolicy::Loopback).with_idp(Some(Arc::new(idp)));
        let uri = Uri::from_static("/mcp");
        assert_eq!(
            g.check_with(&uri, &headers(&[]), false),
            Err(Denial::MissingToken),
            "no token configured, but the provider needs a credential"
        );
        let bearer = |t: &str| headers(&[(header::AUTHORIZATION, &format!("Bearer {t}"))]);
        assert_eq!(
            g.check_with(&uri, &bearer("eyJh.eyJp.c2ln"), false),
            Ok(Presented::Token("eyJh.eyJp.c2ln".into()))
        );
        assert_eq!(
            g.check_with(&uri, &bearer("eyJh.eyJp."), false),
            Ok(Presented::Token("eyJh.eyJp.".into())),
            "an unsigned token reaches the verifier, which names its alg"
        );
        assert_eq!(
            g.check_with(&uri, &bearer("s3cret"), false),
            Err(Denial::WrongToken)
        );
        assert!(!looks_like_jwt("a.b") && !looks_like_jwt("a..c") && !looks_like_jwt("a.b.c d"));
        let r = g.with_challenge(
            Response::new(axum::body::Body::empty()),
            &Denial::MissingToken,
            Surface::Mcp,
            &HeaderMap::new(),
        );
        assert_eq!(
            r.headers()
                .get(header::WWW_AUTHENTICATE)
                .map(|v| v.to_str().unwrap_or("")),
            Some(
                "Bearer resource_metadata=\"https://hecate.example/.well-known/oauth-protected-resource/mcp\""
            )
        );
    }
}
