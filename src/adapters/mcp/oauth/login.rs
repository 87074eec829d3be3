//! `hecate mcp login`: the authorization-code flow with PKCE against an
//! upstream's authorization server, completed on a one-shot loopback redirect
//! (127.0.0.1, the configured `redirect_port` or a random one). Discovery
//! starts from the server's `401` challenge; the client is the configured
//! `client_id`, else a client ID metadata document the server accepts, else a
//! dynamically registered one ([`choose_client`]); the redirect's `state` must
//! be the one this login sent (others are refused and the wait goes on) and
//! its `iss`, when the server sends one, must be the discovered issuer.

use super::client::{ClientChoice, OAuthClientSettings, ServerOffers, choose_client};
use super::credentials::VaultCredentials;
use super::vault::{OAuthError, TokenVault};
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What a login needs besides the vault.
#[derive(Debug, Clone)]
pub struct LoginOptions {
    /// The configured server name.
    pub server: String,
    /// Its Streamable HTTP endpoint.
    pub url: String,
    /// Scopes to ask for (the server's advertised ones when empty).
    pub scopes: Vec<String>,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    /// The configured client (`[mcp_servers.NAME.oauth]`); its `scopes` are
    /// not read here: the caller puts the ones to ask for in `scopes`.
    pub client: OAuthClientSettings,
}

/// A completed login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginOutcome {
    /// The issuer that signed the tokens.
    pub issuer: String,
    /// The client id the tokens belong to.
    pub client_id: String,
    /// How the client was identified.
    pub client: ClientChoice,
}

fn flow(server: &str) -> impl Fn(AuthError) -> OAuthError + '_ {
    move |e| OAuthError::Flow {
        server: server.to_string(),
        message: e.to_string(),
    }
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated request.
async fn challenge(opts: &LoginOptions) -> Result<Option<String>, OAuthError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| OAuthError::Flow {
            server: opts.server.clone(),
            message: format!("HTTP client: {e}"),
        })?;
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "hecate", "version": env!("CARGO_PKG_VERSION")}}
    });
    let answer = client
        .post(&opts.url)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| OAuthError::Flow {
            server: opts.server.clone(),
            message: format!(
                "cannot reach {}: {e}",
                crate::domain::redact::redact_url(&opts.url)
            ),
        })?;
    if answer.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(answer
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string))
}

/// Signs in to `opts.server`: prints nothing itself, hands the authorization
/// URL to `show` (which prints it and may open a browser), waits for the
/// redirect, exchanges the code and stores the tokens in `vault`.
pub async fn login(
    opts: &LoginOptions,
    vault: Arc<dyn TokenVault>,
    show: impl FnOnce(&str),
) -> Result<LoginOutcome, OAuthError> {
    let server = opts.server.as_str();
    let secret = opts.client.secret(server)?;
    let port = opts.client.redirect_port.unwrap_or(0);
    let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
        match opts.client.redirect_port {
            Some(port) => OAuthError::RedirectPort {
                server: server.to_string(),
                port,
                message: e.to_string(),
            },
            None => OAuthError::Redirect {
                server: server.to_string(),
                message: format!("cannot listen on loopback for the redirect: {e}"),
            },
        }
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| OAuthError::Redirect {
            server: server.to_string(),
            message: e.to_string(),
        })?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");

    let www_authenticate = challenge(opts).await?;
    let mut manager = AuthorizationManager::new(opts.url.as_str())
        .await
        .map_err(flow(server))?;
    manager.set_credential_store(VaultCredentials::new(server, vault.clone()));
    let resolution = manager
        .resolve_metadata_from_challenge(www_authenticate.as_deref())
        .await
        .map_err(flow(server))?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(OAuthError::Flow {
            server: server.to_string(),
            message: "the server publishes no OAuth metadata (no protected-resource or \
                      authorization-server document): it does not take an OAuth sign-in"
                .into(),
        });
    }
    let issuer = resolution.metadata.issuer.clone().unwrap_or_default();
    let choice = choose_client(
        server,
        &issuer,
        &opts.client,
        ServerOffers::of(&resolution.metadata),
    )?;
    manager.set_metadata(resolution.metadata);

    // Only the chosen identity goes into the request, so rmcp's own order
    // (pre-registered, metadata document, registration) picks the same one.
    let mut request = AuthorizationRequest::new(redirect_uri.clone());
    request = match &choice {
        ClientChoice::Preregistered { client_id, .. } => {
            let request = request.with_preregistered_client(client_id.clone());
            match &secret {
                Some(secret) => request.with_client_secret(secret.expose()),
                None => request,
            }
        }
        ClientChoice::MetadataDocument { url } => request.with_client_metadata_url(url.clone()),
        ClientChoice::DynamicRegistration => request.with_client_name("Hecate"),
    };
    if !opts.scopes.is_empty() {
        request = request.with_scopes(opts.scopes.iter().cloned());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| flow(server)(e))?;
    let auth_url = session.get_authorization_url().to_string();
    let expected_state = reqwest::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| OAuthError::Flow {
            server: server.to_string(),
            message: "the authorization URL carries no state".into(),
        })?;
    show(&auth_url);

    let callback = tokio::time::timeout(
        opts.timeout,
        wait_for_redirect(&listener, server, &expected_state),
    )
    .await
    .map_err(|_| OAuthError::Redirect {
        server: server.to_string(),
        message: format!(
            "no redirect came back within {} s; run `hecate mcp login {server}` again",
            opts.timeout.as_secs()
        ),
    })??;
    let (callback, stream) = callback;
    let exchanged = session
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await;
    let (status, page) = match &exchanged {
        Ok(_) => (
            "200 OK",
            "Signed in. You can close this tab and return to Hecate.",
        ),
        Err(_) => (
            "400 Bad Request",
            "The sign-in failed; see Hecate's output.",
        ),
    };
    respond(stream, status, page).await;
    exchanged.map_err(flow(server))?;
    let client_id = vault
        .load(server)
        .await?
        .map(|e| e.client_id)
        .unwrap_or_default();
    Ok(LoginOutcome {
        issuer,
        client_id,
        client: choice,
    })
}

/// Serves the loopback listener until a redirect with `expected_state` comes;
/// other requests (a foreign `state`, another path) get an error page.
async fn wait_for_redirect(
    listener: &TcpListener,
    server: &str,
    expected_state: &str,
) -> Result<(AuthorizationCallback, TcpStream), OAuthError> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| OAuthError::Redirect {
            server: server.to_string(),
            message: format!("the loopback listener failed: {e}"),
        })?;
        let Some(target) = read_request_target(&mut stream).await else {
            respond(stream, "400 Bad Request", "Not an HTTP request.").await;
            continue;
        };
        let url = format!("http://127.0.0.1{target}");
        let Ok(parsed) = reqwest::Url::parse(&url) else {
            respond(stream, "400 Bad Request", "Bad request target.").await;
            continue;
        };
        if parsed.path() != "/callback" {
            respond(stream, "404 Not Found", "Not found.").await;
            continue;
        }
        let param = |name: &str| {
            parsed
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if param("state").as_deref() != Some(expected_state) {
            tracing::warn!(
                server,
                "refused an OAuth redirect whose state is not this login's"
            );
            respond(
                stream,
                "400 Bad Request",
                "This redirect does not belong to the sign-in Hecate is waiting for.",
            )
            .await;
            continue;
        }
        if let Some(error) = param("error") {
            respond(stream, "400 Bad Request", "The sign-in was refused.").await;
            let detail = param("error_description").unwrap_or_default();
            return Err(OAuthError::Flow {
                server: server.to_string(),
                message: format!("the authorization server answered {error}: {detail}"),
            });
        }
        match AuthorizationCallback::from_redirect_url(&url) {
            Ok(cb) => return Ok((cb, stream)),
            Err(e) => {
                respond(stream, "400 Bad Request", "The redirect carries no code.").await;
                return Err(flow(server)(e));
            }
        }
    }
}

/// The request target of the request line, read with a size and time bound.
async fn read_request_target(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let read = async {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()??;
    let text = String::from_utf8_lossy(&buf);
    let line = text.lines().next()?;
    let mut parts = line.split_whitespace();
    if parts.next()? != "GET" {
        return None;
    }
    let target = parts.next()?;
    target.starts_with('/').then(|| target.to_string())
}

async fn respond(mut stream: TcpStream, status: &str, page: &str) {
    let body = format!("<!doctype html><title>Hecate</title><p>{page}</p>\n");
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}
