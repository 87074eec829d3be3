//! The Streamable HTTP client of an OAuth-capable upstream: rmcp's `AuthClient`
//! (the stored token as the bearer, refreshed before expiry and once more when
//! the server rejects it) wrapped so that a refusal the user must fix is
//! remembered on the connection, which then reports `auth_required`.

use super::client::OAuthClientSettings;
use super::credentials::VaultCredentials;
use super::vault::{OAuthError, TokenVault};
use axum::http::{HeaderName, HeaderValue};
use futures::future::Either;
use futures::stream::BoxStream;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationManager, OAuthClientConfig};
use rmcp::transport::streamable_http_client::SseError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The first sign-in failure a connection met, if any.
#[derive(Debug, Default, Clone)]
pub(crate) struct AuthFlag(Arc<Mutex<Option<String>>>);

impl AuthFlag {
    fn set(&self, reason: String) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(reason);
        }
    }

    /// Why the upstream refused the sign-in, once it has.
    pub(crate) fn reason(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The server an HTTP upstream signs in as, where its tokens are, and the
/// configured client (whose secret a refresh needs).
#[derive(Clone)]
pub(crate) struct OAuthTarget {
    pub(crate) server: String,
    pub(crate) vault: Arc<dyn TokenVault>,
    pub(crate) client: OAuthClientSettings,
}

/// What the pool needs to sign requests to OAuth-capable HTTP upstreams: the
/// vault, by URL the configured name whose sign-in applies, and by name the
/// configured client (whose secret a refresh needs).
#[derive(Clone)]
pub struct OAuthSettings {
    /// The token vault.
    pub vault: Arc<dyn TokenVault>,
    /// Configured server name by endpoint URL.
    pub names: HashMap<String, String>,
    /// `[mcp_servers.NAME.oauth]` by server name (absent: the defaults).
    pub clients: HashMap<String, OAuthClientSettings>,
}

impl OAuthSettings {
    /// The sign-in the endpoint `url` uses, if it belongs to a configured server.
    pub(crate) fn target(&self, url: &str) -> Option<OAuthTarget> {
        self.names.get(url).map(|server| OAuthTarget {
            server: server.clone(),
            vault: self.vault.clone(),
            client: self.clients.get(server).cloned().unwrap_or_default(),
        })
    }
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("names", &self.names)
            .field("clients", &self.clients)
            .finish_non_exhaustive()
    }
}

/// Whether an rmcp error means the user must sign in (again), and why.
fn is_auth_failure<E: std::error::Error + Send + Sync + 'static>(
    e: &StreamableHttpError<E>,
) -> Option<String> {
    match e {
        StreamableHttpError::AuthRequired(_) => {
            Some("the server answered 401 to the request".into())
        }
        StreamableHttpError::InsufficientScope(_) => {
            Some("the server answered 403 insufficient_scope".into())
        }
        StreamableHttpError::Auth(a) => match a {
            AuthError::AuthorizationRequired => Some("no usable token is stored".into()),
            AuthError::TokenRefreshRejected(_) => {
                Some("the authorization server rejected the refresh token".into())
            }
            AuthError::TokenRefreshFailed(m) => Some(format!("the token refresh failed: {m}")),
            AuthError::TokenExpired => Some("the token expired".into()),
            _ => None,
        },
        _ => None,
    }
}

/// The client underneath: rmcp's `AuthClient` when a sign-in is stored, else
/// plain requests (no store read per request for servers that need no sign-in).
#[derive(Clone)]
enum Inner {
    Signed(AuthClient<reqwest::Client>),
    Plain(reqwest::Client),
}

/// An HTTP client that remembers the sign-in failures it saw.
#[derive(Clone)]
pub(crate) struct TrackedClient {
    inner: Inner,
    flag: AuthFlag,
}

impl TrackedClient {
    /// Runs one request of the client underneath and remembers a refusal the
    /// user must fix; the answer is passed on as it is.
    async fn tracked<T>(
        &self,
        request: impl Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        let r = request.await;
        if let Err(e) = &r
            && let Some(reason) = is_auth_failure(e)
        {
            self.flag.set(reason);
        }
        r
    }
}

/// Sends the same request through whichever client is underneath (the signed
/// one attaches the token, refreshing and retrying once as rmcp's `AuthClient`
/// does), tracked by [`TrackedClient::tracked`].
macro_rules! tracked {
    ($self:ident, $c:ident => $call:expr) => {
        $self
            .tracked(match &$self.inner {
                Inner::Signed($c) => Either::Left($call),
                Inner::Plain($c) => Either::Right($call),
            })
            .await
    };
}

impl StreamableHttpClient for TrackedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        tracked!(self, c => c.post_message(uri, message, session_id, auth_header, custom_headers))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        tracked!(self, c => c.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        ))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        tracked!(self, c => c.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        ))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        tracked!(self, c => c.delete_session(uri, session_id, auth_header, custom_headers))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        tracked!(self, c => c.get_stream(uri, session_id, last_event_id, auth_header, custom_headers))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        tracked!(self, c => c.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        ))
    }
}

/// The HTTP client of `url` signed in as `target.server`: with a stored
/// sign-in, discovery runs first (to check its issuer still serves the
/// resource) and the token is the bearer; without one, requests go out
/// unauthenticated and the server's `401` is remembered on `flag`.
pub(crate) async fn authorized_client(
    target: &OAuthTarget,
    url: &str,
    http: reqwest::Client,
    flag: AuthFlag,
) -> Result<TrackedClient, OAuthError> {
    let flow = |e: AuthError| OAuthError::Flow {
        server: target.server.clone(),
        message: e.to_string(),
    };
    let Some(entry) = target.vault.load(&target.server).await? else {
        return Ok(TrackedClient {
            inner: Inner::Plain(http),
            flag,
        });
    };
    let mut manager = AuthorizationManager::new(url).await.map_err(flow)?;
    manager.set_credential_store(VaultCredentials::new(&target.server, target.vault.clone()));
    match manager.initialize_from_store().await {
        Ok(true) => confidential_refresh(target, &entry.client_id, url, &mut manager)?,
        Ok(false) => {
            flag.set("the stored sign-in was issued by another authorization server".into())
        }
        Err(e) => return Err(flow(e)),
    }
    Ok(TrackedClient {
        inner: Inner::Signed(AuthClient::new(http, manager)),
        flag,
    })
}

/// Gives `manager` the secret of a confidential pre-registered client, read
/// from its variable now, so that a refresh authenticates at the token endpoint
/// (`client_secret_basic` or `_post`, as the server's metadata says). Tokens of
/// another client (the configuration changed since the login) are refreshed as
/// they were issued. An unset variable is logged by name; the refresh then
/// fails and the server reports `auth_required`.
fn confidential_refresh(
    target: &OAuthTarget,
    stored_client_id: &str,
    url: &str,
    manager: &mut AuthorizationManager,
) -> Result<(), OAuthError> {
    let Some(client_id) = target.client.client_id.as_deref() else {
        return Ok(());
    };
    if client_id != stored_client_id {
        return Ok(());
    }
    let secret = match target.client.secret(&target.server) {
        Ok(Some(secret)) => secret,
        Ok(None) => return Ok(()),
        Err(e) => {
            tracing::warn!(server = %target.server, "{e}; the sign-in cannot be refreshed");
            return Ok(());
        }
    };
    manager
        .configure_client(
            OAuthClientConfig::new(client_id, url).with_client_secret(secret.expose()),
        )
        .map_err(|e| OAuthError::Flow {
            server: target.server.clone(),
            message: e.to_string(),
        })
}
