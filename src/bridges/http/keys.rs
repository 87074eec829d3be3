//! `/hecate/v1/keys`: named API keys of a shared hub, managed by an admin (the
//! static token or a key with the `admin` role).

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiPath};
use super::path_params::KeyPath;
use crate::bridges::resources::keys::{
    CreateKeyRequest, CreatedKeyResponse, KeyDto, KeyListResponse, KeyResponse,
};
use crate::domain::HecateError;
use crate::domain::api_key::{Identity, KeyScope};
use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};

/// Every key, newest first, revoked and expired ones included.
#[utoipa::path(
    get,
    path = "/hecate/v1/keys",
    operation_id = "list_keys",
    tag = "keys",
    responses(
        (status = 200, description = "The keys", body = KeyListResponse),
        (status = 403, description = "The caller is not an admin", body = ErrorEnvelope)
    )
)]
pub async fn list(State(state): State<HttpState>) -> Result<Json<KeyListResponse>, ApiError> {
    let keys = state.engine.keys().list().await?;
    Ok(Json(KeyListResponse {
        object: "api_keys".into(),
        data: keys.iter().map(KeyDto::from).collect(),
    }))
}

/// Creates a key; the answer holds its token, which is shown only here.
#[utoipa::path(
    post,
    path = "/hecate/v1/keys",
    operation_id = "create_key",
    tag = "keys",
    request_body = CreateKeyRequest,
    responses(
        (status = 201, description = "The key and its token", body = CreatedKeyResponse),
        (status = 400, description = "A malformed name, scope item or lifetime", body = ErrorEnvelope),
        (status = 403, description = "The caller is not an admin", body = ErrorEnvelope),
        (status = 409, description = "A live key already has this name", body = ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<HttpState>,
    identity: Option<Extension<Identity>>,
    ApiJson(req): ApiJson<CreateKeyRequest>,
) -> Result<(StatusCode, Json<CreatedKeyResponse>), ApiError> {
    let scope = KeyScope::parse(&req.scope)
        .map_err(|e| HecateError::invalid(e.to_string()).with_detail("field", "scope"))?;
    let expires_in = req
        .expires_in
        .as_deref()
        .map(humantime::parse_duration)
        .transpose()
        .map_err(|e| {
            HecateError::invalid(format!(
                "expires_in is not a duration like 90m, 12h or 30d: {e}"
            ))
            .with_detail("field", "expires_in")
        })?;
    let by = identity.map_or_else(|| Identity::Admin.label(), |Extension(i)| i.label());
    let issued = state
        .engine
        .keys()
        .create(&req.name, scope, expires_in, &by)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedKeyResponse {
            object: "api_key".into(),
            data: KeyDto::from(&issued.key),
            token: issued.token,
        }),
    ))
}

/// Revokes a key (by id or name): requests presenting it get 401 from now on.
#[utoipa::path(
    delete,
    path = "/hecate/v1/keys/{key}",
    operation_id = "revoke_key",
    tag = "keys",
    params(KeyPath),
    responses(
        (status = 200, description = "The revoked key", body = KeyResponse),
        (status = 403, description = "The caller is not an admin", body = ErrorEnvelope),
        (status = 404, description = "No such key", body = ErrorEnvelope)
    )
)]
pub async fn revoke(
    State(state): State<HttpState>,
    ApiPath(KeyPath { key }): ApiPath<KeyPath>,
) -> Result<Json<KeyResponse>, ApiError> {
    let key = state.engine.keys().revoke(&key).await?;
    Ok(Json(KeyResponse {
        object: "api_key".into(),
        data: KeyDto::from(&key),
    }))
}
