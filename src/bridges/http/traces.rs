//! Gateway traces (`GET /hecate/v1/traces`): one record per `/v1` request,
//! filtered by request id, chat session and time, newest first.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::ApiQuery;
use crate::bridges::resources::chat::{TraceDto, TraceListResponse, TracesQuery};
use crate::bridges::resources::page_size;
use crate::domain::gateway_conversation::TraceFilter;
use axum::Json;
use axum::extract::State;

/// Default page of `GET /hecate/v1/traces`.
const DEFAULT_LIMIT: u32 = 50;

/// Lists gateway traces.
#[utoipa::path(
    get,
    path = "/hecate/v1/traces",
    operation_id = "list_traces",
    tag = "observability",
    params(TracesQuery),
    responses(
        (status = 200, description = "Traces, newest first", body = TraceListResponse),
        (status = 400, description = "Bad query", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<TracesQuery>,
) -> Result<Json<TraceListResponse>, ApiError> {
    let filter = TraceFilter {
        request_id: q.request_id,
        session_id: q.session_id,
        since: q.since,
        until: q.until,
        limit: page_size(q.limit, DEFAULT_LIMIT)?,
        offset: q.offset.unwrap_or(0) as usize,
        except_client_format: None,
    };
    let traces = state
        .engine
        .gateway()
        .traces(&state.namespace, filter)
        .await?;
    Ok(Json(TraceListResponse {
        object: "traces".to_string(),
        data: traces.iter().map(TraceDto::from).collect(),
    }))
}
