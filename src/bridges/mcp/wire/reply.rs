//! Error responses of the Streamable HTTP endpoint that Hecate writes itself
//! (access refusals, unknown endpoints, body limits and timeouts, a busy
//! server): a JSON-RPC error object with `"id": null`, the HTTP status telling
//! the failure, and Hecate's stable type code in `error.data.type`.

use crate::bridges::access::Denial;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

/// JSON-RPC code of every transport-level refusal (the implementation-defined
/// server-error range, as the MCP SDKs use for their own HTTP refusals).
pub const TRANSPORT_ERROR: i64 = -32000;

/// A JSON-RPC error response with `status`, type code `error_type` and `message`;
/// `details` are merged into `error.data`.
pub fn error(
    status: StatusCode,
    error_type: &str,
    message: &str,
    details: Map<String, Value>,
) -> Response {
    let mut data = Map::new();
    data.insert("type".into(), error_type.into());
    data.insert("status".into(), status.as_u16().into());
    data.extend(details);
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": TRANSPORT_ERROR, "message": message, "data": data},
    });
    (status, axum::Json(body)).into_response()
}

/// The response to a request the access guard refused (401 carries
/// `WWW-Authenticate: Bearer`).
pub fn denial(d: &Denial) -> Response {
    let mut details = Map::new();
    details.insert("user_message".into(), d.user_message().into());
    details.insert("operator_action".into(), d.operator_action().into());
    if let Some((key, value)) = d.detail() {
        details.insert(key.into(), value.into());
    }
    let mut r = error(d.status(), d.code(), &d.to_string(), details);
    if d.status() == StatusCode::UNAUTHORIZED {
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_denial_is_a_json_rpc_error_with_a_null_id() {
        let r = denial(&Denial::ForeignHost("evil.example".into()));
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 16)
            .await
            .expect("body");
        let v: Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(v["id"].is_null() && v.as_object().is_some_and(|o| o.contains_key("id")));
        assert_eq!(v["error"]["code"], TRANSPORT_ERROR);
        assert_eq!(v["error"]["data"]["type"], "forbidden");
        assert_eq!(v["error"]["data"]["host"], "evil.example");
    }
}
