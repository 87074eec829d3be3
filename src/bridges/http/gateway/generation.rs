//! What a `/v1` generation handler reads from its request (the correlation ids,
//! the headers, the body), and the OpenAPI description of the one header all
//! three generation operations document.

use super::super::request_id::RequestIds;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::HeaderMap;
use std::convert::Infallible;

/// A generation request as the handlers take it. Reading it never fails: a body
/// that could not be read is kept as its rejection, answered later in the
/// client's error shape.
pub struct GenerationRequest {
    /// The request's correlation ids, when the middleware set them.
    pub ids: Option<RequestIds>,
    /// The request's headers.
    pub headers: HeaderMap,
    /// The body, or why it could not be read.
    pub body: Result<Bytes, BytesRejection>,
}

impl<S: Send + Sync> FromRequest<S> for GenerationRequest {
    type Rejection = Infallible;

    async fn from_request(req: Request, state: &S) -> Result<Self, Infallible> {
        let ids = req.extensions().get::<RequestIds>().cloned();
        let headers = req.headers().clone();
        let body = Bytes::from_request(req, state).await;
        Ok(Self { ids, headers, body })
    }
}

/// The chat session header of a generation request, as the OpenAPI document
/// lists it. Only its description is used; `handlers` reads the header itself.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct ChatSessionHeader {
    /// Record the exchange in this chat session (1 to 128 of letters, digits, `_.:-`)
    #[param(rename = "X-Hecate-Session-Id", pattern = "^[A-Za-z0-9_.:-]{1,128}$")]
    session_id: Option<String>,
}
