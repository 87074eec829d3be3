//! Long-term recall over HTTP: search the namespace's memory by meaning
//! (`GET /hecate/v1/memory/search`) and recall's status (`GET
//! /hecate/v1/memory/status`). A degraded recall answers 200 with its reason and
//! no results; bad fields are 400 `memory.request_invalid` naming the field.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::ApiQuery;
use crate::bridges::resources::memory::{
    MemorySearchDto, MemorySearchQuery, MemorySearchResponse, RecallStatusResponse,
};
use crate::engine::memory::MemorySearch;
use axum::Json;
use axum::extract::State;

/// Searches the memory of a user (or the namespace's shared memory) for the
/// messages closest in meaning to `query`, across sessions.
#[utoipa::path(
    get,
    path = "/hecate/v1/memory/search",
    operation_id = "search_memory",
    tag = "memory",
    params(MemorySearchQuery),
    responses(
        (status = 200, description = "The nearest messages, or none with a degraded status", body = MemorySearchResponse),
        (status = 400, description = "A field is invalid (`memory.request_invalid` names it)", body = ErrorEnvelope),
        (status = 404, description = "The session filter names no session of this namespace", body = ErrorEnvelope)
    )
)]
pub async fn search(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<MemorySearchQuery>,
) -> Result<Json<MemorySearchResponse>, ApiError> {
    let answer = state
        .engine
        .memory()
        .search(
            &state.namespace,
            MemorySearch {
                query: q.query.unwrap_or_default(),
                user: q.user,
                session: q.session,
                k: q.k,
            },
        )
        .await?;
    Ok(Json(MemorySearchResponse {
        object: "memory_search".to_string(),
        data: MemorySearchDto::from(&answer),
    }))
}

/// Whether recall works (and why not), with this process's indexing counters.
#[utoipa::path(
    get,
    path = "/hecate/v1/memory/status",
    operation_id = "memory_status",
    tag = "memory",
    responses((status = 200, description = "Recall's status", body = RecallStatusResponse))
)]
pub async fn status(State(state): State<HttpState>) -> Json<RecallStatusResponse> {
    Json(RecallStatusResponse {
        object: "memory_status".to_string(),
        data: state.engine.memory().status(),
    })
}
