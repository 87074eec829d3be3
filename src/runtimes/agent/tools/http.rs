//! The `http_request` tool: one HTTP request to a URL the egress policy allows,
//! sent straight to the address that was checked (no proxy, no redirects
//! followed, the resolved address pinned so the name cannot be re-resolved
//! elsewhere), answered with the status, the headers and the body up to the
//! cap (the cap and the full size recorded in the result).

use super::http_policy::non_public;
use super::{ToolEnv, ToolError, ToolOutcome};
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use tokio_util::sync::CancellationToken;

/// Most body bytes of a response the model is given.
pub const BODY_CAP_BYTES: usize = 32 * 1024;

/// Arguments of `http_request`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HttpRequestArgs {
    #[serde(default)]
    method: Option<String>,
    url: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: Option<String>,
}

/// The addresses `url`'s host stands for, checked against the policy: every
/// one must be public unless the matching pattern names the host literally.
async fn checked_address(env: &ToolEnv, url: &reqwest::Url) -> Result<SocketAddr, ToolError> {
    let shown = crate::domain::redact::redact_url(url.as_str());
    let Some(pattern) = env.http.matching(url.as_str()) else {
        let why = if env.http.is_empty() {
            "no URL is allowed: [tasks] http_allow is empty".to_string()
        } else {
            format!("{shown} matches no [tasks] http_allow pattern")
        };
        return Err(ToolError::Refused(format!("refused: {why}")));
    };
    let host = url
        .host_str()
        .ok_or_else(|| ToolError::Refused(format!("refused: {shown} has no host")))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url
        .port_or_known_default()
        .ok_or_else(|| ToolError::Refused(format!("refused: {shown} has no port")))?;
    let addrs: Vec<SocketAddr> = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| ToolError::Refused(format!("cannot resolve {host}: {e}")))?
            .collect(),
    };
    if !pattern.explicit_host
        && let Some((addr, kind)) = addrs
            .iter()
            .find_map(|a| non_public(a.ip()).map(|k| (a, k)))
    {
        return Err(ToolError::Refused(format!(
            "refused: {host} resolves to {} ({kind}); a non-public address is allowed only by an http_allow pattern that names the host (matched {:?})",
            addr.ip(),
            pattern.raw
        )));
    }
    addrs
        .first()
        .copied()
        .ok_or_else(|| ToolError::Refused(format!("{host} resolves to no address")))
}

pub(super) async fn http_request(
    env: &ToolEnv,
    a: HttpRequestArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let url = reqwest::Url::parse(&a.url)
        .map_err(|e| ToolError::Refused(format!("url {:?} is not a URL: {e}", a.url)))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::Refused(format!(
            "refused: only http and https URLs, not {}",
            url.scheme()
        )));
    }
    let method = a.method.as_deref().unwrap_or("GET").to_ascii_uppercase();
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| ToolError::Refused(format!("method {method:?} is not an HTTP method")))?;
    let addr = checked_address(env, &url).await?;
    let host = url.host_str().unwrap_or_default().to_string();
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .resolve(&host, addr)
        .timeout(env.timeout)
        .build()
        .map_err(|e| ToolError::Refused(format!("cannot build the HTTP client: {e}")))?;
    let mut req = client.request(method.clone(), url.clone());
    for (k, v) in &a.headers {
        req = req.header(k, v);
    }
    if let Some(body) = a.body {
        req = req.body(body);
    }
    let send = async {
        let mut resp = req.send().await?;
        let status = resp.status();
        let headers: BTreeMap<String, String> = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into()))
            .collect();
        let mut body = Vec::new();
        let mut total = 0usize;
        while let Some(chunk) = resp.chunk().await? {
            total += chunk.len();
            let room = BODY_CAP_BYTES.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        Ok::<_, reqwest::Error>((status, headers, body, total))
    };
    let (status, headers, body, total) = tokio::select! {
        r = send => r.map_err(|e| ToolError::Refused(format!(
            "{method} {} failed: {}", crate::domain::redact::redact_url(url.as_str()),
            crate::domain::redact::redact_urls_in(&e.to_string())
        )))?,
        _ = cancel.cancelled() => return Ok(ToolOutcome { cancelled: true, is_error: true,
            ..ToolOutcome::text("cancelled".into()) }),
    };
    let result = json!({
        "status": status.as_u16(),
        "headers": headers,
        "body": String::from_utf8_lossy(&body),
        "body_bytes": total,
        "body_cap_bytes": BODY_CAP_BYTES,
        "truncated": total > body.len(),
    });
    Ok(ToolOutcome::text(result.to_string()))
}
