//! Gateway traces (`GET /hecate/v1/traces`): one record per `/v1` request,
//! filtered by request id, chat session, time, model, provider and status,
//! newest first; and what they cost per day, provider or model
//! (`GET /hecate/v1/traces/costs`), summed by the store. A status other than
//! `completed`, `failed` or `cancelled` is a 400 `invalid_request` naming the
//! accepted values.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::ApiQuery;
use crate::bridges::resources::chat::{TraceDto, TraceListResponse, TraceStatus, TracesQuery};
use crate::bridges::resources::page_size;
use crate::bridges::resources::trace_costs::{TraceCostsQuery, TraceCostsResponse};
use crate::domain::gateway_conversation::TraceFilter;
use axum::Json;
use axum::extract::State;

/// Default page of `GET /hecate/v1/traces`.
const DEFAULT_LIMIT: u32 = 50;

/// The filter both trace queries share: session, time bounds, model, provider
/// (blank ones ignored) and status; no page.
fn narrowed(
    session_id: Option<String>,
    since: Option<String>,
    until: Option<String>,
    model: Option<String>,
    provider: Option<String>,
    status: Option<TraceStatus>,
) -> TraceFilter {
    TraceFilter {
        session_id,
        since,
        until,
        model: model.filter(|m| !m.is_empty()),
        provider: provider.filter(|p| !p.is_empty()),
        status: status.map(|s| s.as_str().to_string()),
        ..TraceFilter::default()
    }
}

/// Lists gateway traces.
#[utoipa::path(
    get,
    path = "/hecate/v1/traces",
    operation_id = "list_traces",
    tag = "observability",
    params(TracesQuery),
    responses(
        (status = 200, description = "Traces, newest first", body = TraceListResponse),
        (status = 400, description = "Bad query (a limit out of range, a time that is not RFC 3339, an unknown status)", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<TracesQuery>,
) -> Result<Json<TraceListResponse>, ApiError> {
    let filter = TraceFilter {
        request_id: q.request_id,
        limit: page_size(q.limit, DEFAULT_LIMIT)?,
        offset: q.offset.unwrap_or(0) as usize,
        ..narrowed(
            q.session_id,
            q.since,
            q.until,
            q.model,
            q.provider,
            q.status,
        )
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

/// Sums what the traces a filter selects cost, per day, provider or model.
#[utoipa::path(
    get,
    path = "/hecate/v1/traces/costs",
    operation_id = "trace_costs",
    tag = "observability",
    params(TraceCostsQuery),
    responses(
        (status = 200, description = "The cost of the selected traces per group, with their total", body = TraceCostsResponse),
        (status = 400, description = "Bad query (a time that is not RFC 3339, an unknown status or grouping)", body = ErrorEnvelope)
    )
)]
pub async fn costs(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<TraceCostsQuery>,
) -> Result<Json<TraceCostsResponse>, ApiError> {
    let by = q.by.unwrap_or_default();
    let filter = narrowed(
        q.session_id,
        q.since,
        q.until,
        q.model,
        q.provider,
        q.status,
    );
    let (until, groups) = state
        .engine
        .gateway()
        .trace_costs(&state.namespace, filter, by.into())
        .await?;
    Ok(Json(TraceCostsResponse::new(by, until, &groups)))
}
