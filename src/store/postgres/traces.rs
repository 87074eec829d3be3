//! Gateway traces: one row per `/v1` request, filtered by request id, session and
//! time, newest first.

use super::{OpResult, big, limit};
use crate::domain::chat::{GatewayTrace, TraceFilter};
use crate::domain::provider_call::Usage;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

const COLUMNS: &str = "request_id, trace_id, namespace, session_id, client_format, \
     requested_model, provider, model, status, prompt_tokens, completion_tokens, total_tokens, \
     cost_micros_usd, duration_ms, error_type, error_message, started_at, route_reason, \
     route_candidates_json";

fn row_to_trace(r: &Row) -> OpResult<GatewayTrace> {
    Ok(GatewayTrace {
        request_id: r.try_get(0)?,
        trace_id: r.try_get(1)?,
        namespace: r.try_get(2)?,
        session_id: r.try_get(3)?,
        client_format: r.try_get(4)?,
        requested_model: r.try_get(5)?,
        provider: r.try_get(6)?,
        model: r.try_get(7)?,
        status: r.try_get(8)?,
        usage: Usage {
            prompt_tokens: r.try_get::<_, i64>(9)?.max(0) as u64,
            completion_tokens: r.try_get::<_, i64>(10)?.max(0) as u64,
            total_tokens: r.try_get::<_, i64>(11)?.max(0) as u64,
        },
        cost_micros_usd: r.try_get(12)?,
        duration_ms: r.try_get(13)?,
        error_type: r.try_get(14)?,
        error_message: r.try_get(15)?,
        started_at: r.try_get(16)?,
        route_reason: r.try_get(17)?,
        route_candidates: serde_json::from_str(r.try_get::<_, &str>(18)?)?,
    })
}

/// Inserts a trace inside `tx`; a request id seen before replaces its row (a
/// client may reuse its own `X-Request-Id`).
pub(super) async fn insert_trace<C: GenericClient>(tx: &C, t: &GatewayTrace) -> OpResult<()> {
    let updates = COLUMNS
        .split(", ")
        .skip(1)
        .map(|c| format!("{c} = EXCLUDED.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let stmt = tx
        .prepare_cached(&format!(
            "INSERT INTO gateway_traces ({COLUMNS}) VALUES \
             ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19) \
             ON CONFLICT (request_id) DO UPDATE SET {updates}"
        ))
        .await?;
    let candidates = serde_json::to_string(&t.route_candidates)?;
    tx.execute(
        &stmt,
        &[
            &t.request_id,
            &t.trace_id,
            &t.namespace,
            &t.session_id,
            &t.client_format,
            &t.requested_model,
            &t.provider,
            &t.model,
            &t.status,
            &big(t.usage.prompt_tokens),
            &big(t.usage.completion_tokens),
            &big(t.usage.total_tokens),
            &t.cost_micros_usd,
            &t.duration_ms,
            &t.error_type,
            &t.error_message,
            &t.started_at,
            &t.route_reason,
            &candidates,
        ],
    )
    .await?;
    Ok(())
}

/// What the traces of `namespace` since `since` (RFC 3339, inclusive) cost, in
/// micro-USD (unknown costs count as nothing).
pub(super) async fn spend_since<C: GenericClient>(
    c: &C,
    namespace: &str,
    since: &str,
) -> OpResult<i64> {
    let row = c
        .query_one(
            "SELECT COALESCE(SUM(cost_micros_usd), 0)::BIGINT FROM gateway_traces \
             WHERE namespace = $1 AND started_at >= $2",
            &[&namespace, &since],
        )
        .await?;
    Ok(row.try_get(0)?)
}

/// The traces of `namespace` that `filter` selects, newest first.
pub(super) async fn select_traces<C: GenericClient>(
    c: &C,
    namespace: &str,
    filter: &TraceFilter,
) -> OpResult<Vec<GatewayTrace>> {
    let mut sql = format!("SELECT {COLUMNS} FROM gateway_traces WHERE namespace = $1");
    let mut texts: Vec<String> = vec![namespace.to_owned()];
    for (column, op, value) in [
        ("request_id", "=", &filter.request_id),
        ("session_id", "=", &filter.session_id),
        ("started_at", ">=", &filter.since),
        ("started_at", "<", &filter.until),
    ] {
        if let Some(v) = value {
            texts.push(v.clone());
            sql.push_str(&format!(" AND {column} {op} ${}", texts.len()));
        }
    }
    let (lim, off) = (limit(filter.limit), limit(filter.offset));
    sql.push_str(&format!(
        " ORDER BY started_at DESC, request_id DESC LIMIT ${} OFFSET ${}",
        texts.len() + 1,
        texts.len() + 2
    ));
    let mut params: Vec<&(dyn ToSql + Sync)> =
        texts.iter().map(|t| t as &(dyn ToSql + Sync)).collect();
    params.push(&lim);
    params.push(&off);
    let rows = c.query(sql.as_str(), &params).await?;
    rows.iter().map(row_to_trace).collect()
}
