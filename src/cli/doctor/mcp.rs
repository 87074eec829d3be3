//! The MCP lines of `hecate doctor`: for each configured HTTP upstream that
//! sends no `Authorization` header of its own, whether its OAuth sign-in is
//! usable. A stored sign-in is read from the store (never shown); without one,
//! an unauthenticated request tells whether the server asks for one. A server
//! that needs a sign-in is `auth_required` (the error type and server state the
//! hub reports for it), with `hecate mcp login NAME` as the fix, worded as the
//! error's `operator_action`.

use super::check::Check;
use crate::adapters::mcp::ServerSpec;
use crate::adapters::mcp::oauth::{SignIn, VaultEntry, login_fix, read_sign_in};
use crate::config::Config;
use crate::domain::ErrorType;
use crate::domain::redact::redact_url;
use crate::store::Store;
use std::sync::Arc;
use std::time::Duration;

/// One line per OAuth-capable HTTP upstream of `config` (none without a store).
pub async fn sign_ins(
    config: Option<&Config>,
    store: Option<Arc<dyn Store>>,
    timeout: Duration,
) -> Vec<Check> {
    let (Some(config), Some(store)) = (config, store) else {
        return Vec::new();
    };
    let Ok(servers) = config.mcp_servers() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in servers {
        let ServerSpec::Http { url, .. } = &s.spec else {
            continue;
        };
        if !s.spec.signs_in() {
            continue;
        }
        out.push(line(&s.name, url, store.as_ref(), timeout).await);
    }
    out
}

/// A `warn` line saying `name` needs a sign-in, prefixed with the stable type.
fn auth_required(check: String, name: &str, why: String) -> Check {
    Check::warn(
        check,
        format!("{}: {why}", ErrorType::AuthRequired.code()),
        login_fix(name),
    )
}

async fn line(name: &str, url: &str, store: &dyn Store, timeout: Duration) -> Check {
    let check = format!("mcp {name}");
    let entry = match store.load_mcp_token(name).await {
        Ok(e) => e.map(|r| VaultEntry {
            server: r.server,
            issuer: r.issuer,
            client_id: r.client_id,
            credentials: r.credentials,
        }),
        Err(e) => {
            return Check::warn(
                check,
                format!("sign-in not read: {e}"),
                "Check the store line above.",
            );
        }
    };
    match read_sign_in(entry) {
        Err(e) => auth_required(check, name, e.to_string()),
        Ok(SignIn::Rejected { issuer }) => auth_required(
            check,
            name,
            format!("the sign-in with {issuer} was revoked or could not be refreshed"),
        ),
        Ok(SignIn::SignedIn {
            issuer,
            refreshable,
            expires_in,
        }) => {
            if expires_in.is_some_and(|s| s <= 0) && !refreshable {
                auth_required(
                    check,
                    name,
                    format!("the token from {issuer} expired and cannot be refreshed"),
                )
            } else {
                let refresh = if refreshable {
                    ", refreshed as needed"
                } else {
                    ""
                };
                Check::ok(check, format!("signed in with {issuer}{refresh}"))
            }
        }
        Ok(SignIn::Missing) => match asks_for_sign_in(url, timeout).await {
            Some(true) => auth_required(
                check,
                name,
                format!("{} asks for an OAuth sign-in", redact_url(url)),
            ),
            Some(false) => Check::ok(check, format!("{} needs no sign-in", redact_url(url))),
            None => Check::warn(
                check,
                format!("{} did not answer", redact_url(url)),
                "Check that the server runs and its URL is right.",
            ),
        },
    }
}

/// Whether the server answers an unauthenticated request with 401 (`None`
/// when it does not answer at all).
async fn asks_for_sign_in(url: &str, timeout: Duration) -> Option<bool> {
    let client = reqwest::Client::builder().timeout(timeout).build().ok()?;
    let answer = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}))
        .send()
        .await
        .ok()?;
    Some(answer.status() == reqwest::StatusCode::UNAUTHORIZED)
}
