//! Correlation ids on every response: `X-Request-Id` (the client's, when it sent a
//! sane one, else a fresh `req_…`) and `X-Trace-Id` (the OpenTelemetry trace id
//! when tracing exports one, else a fresh 32-hex id), and the request's server
//! span. Also the place where error bodies get those ids (see
//! `envelope::finalize`).

use super::envelope::finalize;
use crate::domain::ids::RequestId;
use crate::telemetry::span_ids;
use crate::telemetry::spans::{http_request, http_response};
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

/// The request-id header, read from clients and set on every response.
pub const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// The trace-id header set on every response.
pub const X_TRACE_ID: HeaderName = HeaderName::from_static("x-trace-id");

/// Longest client-supplied request id that is echoed rather than replaced.
const MAX_CLIENT_ID_LEN: usize = 128;

/// The correlation ids of one request, available to handlers as an extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestIds {
    /// The request id (`X-Request-Id`).
    pub request_id: String,
    /// The trace id (`X-Trace-Id`).
    pub trace_id: String,
}

/// Whether `path` belongs to the enveloped, guarded API (`/hecate/v1`). The MCP
/// endpoint (`/mcp`, nested beside this router) has its own guard and framing.
pub fn is_api_path(path: &str) -> bool {
    path == "/hecate/v1" || path.starts_with("/hecate/v1/")
}

/// Assigns the ids, runs the request inside a tracing span carrying them, sets the
/// response headers and fills error envelopes.
pub async fn middleware(mut req: Request, next: Next) -> Response {
    let request_id = req
        .headers()
        .get(&X_REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| acceptable_client_id(v))
        .map(str::to_string)
        .unwrap_or_else(|| RequestId::generate().0);
    let span = http_request(req.method().as_str(), req.uri().path(), &request_id);
    let trace_id = span_ids(&span)
        .map(|ids| ids.trace_id)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    let api_path = is_api_path(req.uri().path());
    req.extensions_mut().insert(RequestIds {
        request_id: request_id.clone(),
        trace_id: trace_id.clone(),
    });
    let response = next.run(req).instrument(span.clone()).await;
    http_response(&span, response.status().as_u16());
    let mut response = finalize(response, api_path, &request_id, &trace_id);
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        headers.insert(X_REQUEST_ID, v);
    }
    if let Ok(v) = HeaderValue::from_str(&trace_id) {
        headers.insert(X_TRACE_ID, v);
    }
    response
}

/// A client id is echoed when it is short and made of `[A-Za-z0-9._:-]`.
fn acceptable_client_id(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= MAX_CLIENT_ID_LEN
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sane_client_ids_are_echoed() {
        assert!(acceptable_client_id("req_abc-1.2:3"));
        assert!(!acceptable_client_id(""));
        assert!(!acceptable_client_id("has space"));
        assert!(!acceptable_client_id(&"x".repeat(129)));
    }

    #[test]
    fn api_paths_are_the_versioned_namespace() {
        assert!(is_api_path("/hecate/v1/system/stats"));
        assert!(is_api_path("/hecate/v1"));
        assert!(!is_api_path("/hecate/v10"));
        assert!(!is_api_path("/healthz"));
        assert!(!is_api_path("/mcp"));
    }
}
