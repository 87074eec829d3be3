//! The gateway's trace table: its columns and how a row becomes a `GatewayTrace`.

use super::StoredRow;
use crate::domain::gateway_conversation::{GatewayTrace, TraceCostBy, TraceCostGroup};

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const TRACE_COLUMNS: &str = "request_id, trace_id, namespace, session_id, client_format, \
     requested_model, provider, model, status, prompt_tokens, completion_tokens, total_tokens, \
     cost_micros_usd, duration_ms, error_type, error_message, started_at, route_reason, \
     route_candidates_json";

/// A gateway trace from a row that starts with its columns.
pub(crate) fn trace<R: StoredRow>(r: &R) -> Result<GatewayTrace, R::Error> {
    Ok(GatewayTrace {
        request_id: r.col(0)?,
        trace_id: r.col(1)?,
        namespace: r.col(2)?,
        session_id: r.col(3)?,
        client_format: r.col(4)?,
        requested_model: r.col(5)?,
        provider: r.col(6)?,
        model: r.col(7)?,
        status: r.col(8)?,
        usage: r.usage(9)?,
        cost_micros_usd: r.col(12)?,
        duration_ms: r.col(13)?,
        error_type: r.col(14)?,
        error_message: r.col(15)?,
        started_at: r.col(16)?,
        route_reason: r.col(17)?,
        route_candidates: r.json(18)?,
    })
}

/// The select list and grouping of a cost summary by `by`, to follow with
/// `FROM gateway_traces WHERE …` and then [`cost_group_tail`]; the same SQL on
/// both backends.
pub(crate) fn cost_group_head(by: TraceCostBy) -> String {
    let key = match by {
        TraceCostBy::Day => "substr(started_at, 1, 10)",
        TraceCostBy::Provider => "COALESCE(NULLIF(provider, ''), '(no provider)')",
        TraceCostBy::Model => {
            "COALESCE(NULLIF(model, ''), NULLIF(requested_model, ''), '(no model)')"
        }
    };
    format!(
        "SELECT {key} AS group_key, CAST(COUNT(*) AS BIGINT), \
         CAST(SUM(CASE WHEN cost_micros_usd IS NULL THEN 1 ELSE 0 END) AS BIGINT), \
         CAST(COALESCE(SUM(total_tokens), 0) AS BIGINT), \
         CAST(COALESCE(SUM(cost_micros_usd), 0) AS BIGINT)"
    )
}

/// The grouping and order that close a cost summary: days ascending, other
/// groups dearest first (then by name).
pub(crate) fn cost_group_tail(by: TraceCostBy) -> &'static str {
    match by {
        TraceCostBy::Day => " GROUP BY group_key ORDER BY group_key ASC",
        _ => " GROUP BY group_key ORDER BY 5 DESC, group_key ASC",
    }
}

/// One group of a cost summary from a row that [`cost_group_head`] selected.
pub(crate) fn cost_group<R: StoredRow>(r: &R) -> Result<TraceCostGroup, R::Error> {
    let count = |i: usize| r.col::<i64>(i).map(|n| n.max(0) as u64);
    Ok(TraceCostGroup {
        key: r.col(0)?,
        requests: count(1)?,
        unpriced: count(2)?,
        tokens: count(3)?,
        cost_micros_usd: r.col(4)?,
    })
}
