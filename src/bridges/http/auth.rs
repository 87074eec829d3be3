//! Access control for the API paths (`/hecate/v1/*`): DNS-rebinding protection
//! (Host and Origin must name loopback when the server is bound to loopback) and
//! the bearer token, compared in constant time. `/healthz` is open. [`Guard`] is
//! public so other HTTP surfaces (the MCP endpoint) can apply the same rules.

use super::envelope::ApiError;
use super::request_id::is_api_path;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::IpAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq;

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

/// The access rules of one server.
#[derive(Debug, Clone)]
pub struct Guard {
    token: Option<Arc<str>>,
    hosts: HostPolicy,
}

impl Guard {
    /// Rules requiring `token` (when set) and applying `hosts`.
    pub fn new(token: Option<String>, hosts: HostPolicy) -> Self {
        Self {
            token: token.filter(|t| !t.is_empty()).map(Arc::from),
            hosts,
        }
    }

    /// Checks one request's headers; the error is the response to send.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        if self.hosts == HostPolicy::Loopback {
            if let Some(host) = header_str(headers, header::HOST)
                && !is_loopback_name(host_name(host))
            {
                return Err(ApiError::forbidden(format!(
                    "Host {host:?} is not a loopback name; this server only answers requests addressed to loopback"
                ))
                .with_detail("host", host));
            }
            if let Some(origin) = header_str(headers, header::ORIGIN)
                && !origin_is_loopback(origin)
            {
                return Err(ApiError::forbidden(format!(
                    "Origin {origin:?} is not a loopback origin"
                ))
                .with_detail("origin", origin));
            }
        }
        let Some(expected) = &self.token else {
            return Ok(());
        };
        let Some(value) = header_str(headers, header::AUTHORIZATION) else {
            return Err(ApiError::unauthorized(
                "the Authorization header is missing",
            ));
        };
        let presented = value
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        match presented {
            Some(t) if bool::from(t.as_bytes().ct_eq(expected.as_bytes())) => Ok(()),
            Some(_) => Err(ApiError::unauthorized("the bearer token is wrong")),
            None => Err(ApiError::unauthorized(
                "the Authorization header is not `Bearer <token>`",
            )),
        }
    }
}

/// Applies the guard to API paths; other paths (`/healthz`) pass untouched.
pub async fn middleware(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    if is_api_path(req.uri().path())
        && let Err(e) = guard.check(req.headers())
    {
        let unauthorized = e.status == axum::http::StatusCode::UNAUTHORIZED;
        let mut response = e.into_response();
        if unauthorized {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        return response;
    }
    next.run(req).await
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

/// `localhost`, a `*.localhost` name, or a loopback IP literal.
pub fn is_loopback_name(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
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

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn loopback_names_and_authorities() {
        assert_eq!(host_name("127.0.0.1:8765"), "127.0.0.1");
        assert_eq!(host_name("[::1]:80"), "::1");
        assert_eq!(host_name("localhost"), "localhost");
        assert!(is_loopback_name("LOCALHOST."));
        assert!(is_loopback_name("app.localhost"));
        assert!(is_loopback_name("127.1.2.3"));
        assert!(!is_loopback_name("evil.example"));
        assert!(!is_loopback_name("localhost.evil.example"));
        assert!(origin_is_loopback("http://localhost:3000"));
        assert!(origin_is_loopback("https://[::1]"));
        assert!(!origin_is_loopback("null"));
        assert!(!origin_is_loopback("https://evil.example"));
    }

    #[test]
    fn token_and_host_rules() {
        let g = Guard::new(Some("s3cret".into()), HostPolicy::Loopback);
        let ok = headers(&[
            (header::HOST, "127.0.0.1:1"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert!(g.check(&ok).is_ok());
        let wrong = headers(&[(header::AUTHORIZATION, "bearer nope")]);
        assert_eq!(g.check(&wrong).map_err(|e| e.status.as_u16()), Err(401));
        let missing = headers(&[]);
        assert_eq!(g.check(&missing).map_err(|e| e.status.as_u16()), Err(401));
        let foreign = headers(&[
            (header::HOST, "rebind.example:8765"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert_eq!(g.check(&foreign).map_err(|e| e.status.as_u16()), Err(403));
        let open = Guard::new(None, HostPolicy::Any);
        assert!(open.check(&foreign).is_ok());
    }
}
