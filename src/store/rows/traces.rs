//! The gateway's trace table: its columns and how a row becomes a `GatewayTrace`.

use super::StoredRow;
use crate::domain::gateway_conversation::GatewayTrace;

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
