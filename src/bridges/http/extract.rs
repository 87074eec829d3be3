//! Extractors whose rejections are error envelopes instead of axum's plain text:
//! JSON bodies (malformed, wrong content type, missing fields → 400; over the body
//! limit → 413; stopped arriving → 408), path parameters and query strings.

use super::envelope::ApiError;
use crate::bridges::serve::is_body_timeout;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// A JSON request body, rejected with the error envelope.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        axum::Json::<T>::from_request(req, state)
            .await
            .map(|axum::Json(v)| Self(v))
            .map_err(json_rejection)
    }
}

fn json_rejection(rej: JsonRejection) -> ApiError {
    if is_body_timeout(&rej) {
        return ApiError::invalid(
            "the request body stopped arriving before the body read timeout ([server] body_read_timeout_secs)",
        )
        .with_status(StatusCode::REQUEST_TIMEOUT);
    }
    if rej.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::invalid(format!(
            "the request body is over the limit of {MAX_BODY_BYTES} bytes"
        ))
        .with_status(StatusCode::PAYLOAD_TOO_LARGE)
        .with_detail("limit_bytes", MAX_BODY_BYTES);
    }
    match rej {
        JsonRejection::MissingJsonContentType(_) => {
            ApiError::invalid("the body must be JSON sent with `Content-Type: application/json`")
        }
        JsonRejection::JsonSyntaxError(e) => {
            ApiError::invalid(format!("the body is not valid JSON: {}", e.body_text()))
        }
        JsonRejection::JsonDataError(e) => ApiError::invalid(format!(
            "the JSON body does not have the expected fields: {}",
            e.body_text()
        )),
        other => ApiError::invalid(format!("the body could not be read: {}", other.body_text())),
    }
}

/// Path parameters, rejected with the error envelope.
#[derive(Debug, Clone)]
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(v)| Self(v))
            .map_err(|e: PathRejection| {
                ApiError::invalid(format!("bad path parameter: {}", e.body_text()))
            })
    }
}

/// A query string, rejected with the error envelope.
#[derive(Debug, Clone)]
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(v)| Self(v))
            .map_err(|e: QueryRejection| {
                ApiError::invalid(format!("bad query string: {}", e.body_text()))
            })
    }
}

/// A JSON body that may be left out (an empty body is `T::default()`), rejected
/// with the error envelope like [`ApiJson`].
#[derive(Debug, Clone)]
pub struct ApiOptionalJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiOptionalJson<T>
where
    T: DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|rej| {
                if rej.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::invalid(format!(
                        "the request body is over the limit of {MAX_BODY_BYTES} bytes"
                    ))
                    .with_status(StatusCode::PAYLOAD_TOO_LARGE)
                    .with_detail("limit_bytes", MAX_BODY_BYTES)
                } else {
                    ApiError::invalid(format!("the body could not be read: {}", rej.body_text()))
                }
            })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(T::default()));
        }
        serde_json::from_slice(&bytes).map(Self).map_err(|e| {
            ApiError::invalid(format!(
                "the JSON body does not have the expected fields: {e}"
            ))
        })
    }
}
