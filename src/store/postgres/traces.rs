//! Gateway traces: one row per `/v1` request, filtered by request id, session,
//! time, model, provider and status, newest first.

use super::{OpResult, big, limit};
use crate::domain::gateway_conversation::{GatewayTrace, TraceCostBy, TraceCostGroup, TraceFilter};
use crate::store::rows::traces::{self as decode, TRACE_COLUMNS};
use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

/// Inserts a trace inside `tx`; a request id seen before replaces its row (a
/// client may reuse its own `X-Request-Id`).
pub(super) async fn insert_trace<C: GenericClient>(tx: &C, t: &GatewayTrace) -> OpResult<()> {
    let updates = TRACE_COLUMNS
        .split(", ")
        .skip(1)
        .map(|c| format!("{c} = EXCLUDED.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let stmt = tx
        .prepare_cached(&format!(
            "INSERT INTO gateway_traces ({TRACE_COLUMNS}) VALUES \
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

/// The `WHERE` clause (from `FROM gateway_traces` on) of the traces of
/// `namespace` that `filter` selects, with its text arguments (`$1`…); its page
/// is not part of it.
fn filtered(namespace: &str, filter: &TraceFilter) -> (String, Vec<String>) {
    let mut sql = String::from(" FROM gateway_traces WHERE namespace = $1");
    let mut texts: Vec<String> = vec![namespace.to_owned()];
    for (column, op, value) in [
        ("request_id", "=", &filter.request_id),
        ("session_id", "=", &filter.session_id),
        ("started_at", ">=", &filter.since),
        ("started_at", "<", &filter.until),
        ("provider", "=", &filter.provider),
        ("status", "=", &filter.status),
        ("client_format", "<>", &filter.except_client_format),
    ] {
        if let Some(v) = value {
            texts.push(v.clone());
            sql.push_str(&format!(" AND {column} {op} ${}", texts.len()));
        }
    }
    if let Some(m) = &filter.model {
        texts.push(m.clone());
        let n = texts.len();
        sql.push_str(&format!(" AND (model = ${n} OR requested_model = ${n})"));
    }
    (sql, texts)
}

/// The traces of `namespace` that `filter` selects, newest first.
pub(super) async fn select_traces<C: GenericClient>(
    c: &C,
    namespace: &str,
    filter: &TraceFilter,
) -> OpResult<Vec<GatewayTrace>> {
    let (rest, texts) = filtered(namespace, filter);
    let (lim, off) = (limit(filter.limit), limit(filter.offset));
    let sql = format!(
        "SELECT {TRACE_COLUMNS}{rest} ORDER BY started_at DESC, request_id DESC \
         LIMIT ${} OFFSET ${}",
        texts.len() + 1,
        texts.len() + 2
    );
    let mut params: Vec<&(dyn ToSql + Sync)> =
        texts.iter().map(|t| t as &(dyn ToSql + Sync)).collect();
    params.push(&lim);
    params.push(&off);
    let rows = c.query(sql.as_str(), &params).await?;
    rows.iter().map(decode::trace).collect()
}

/// What the traces of `namespace` that `filter` selects cost, per group of `by`.
pub(super) async fn select_trace_costs<C: GenericClient>(
    c: &C,
    namespace: &str,
    filter: &TraceFilter,
    by: TraceCostBy,
) -> OpResult<Vec<TraceCostGroup>> {
    let (rest, texts) = filtered(namespace, filter);
    let sql = format!(
        "{}{rest}{}",
        decode::cost_group_head(by),
        decode::cost_group_tail(by)
    );
    let params: Vec<&(dyn ToSql + Sync)> = texts.iter().map(|t| t as &(dyn ToSql + Sync)).collect();
    let rows = c.query(sql.as_str(), &params).await?;
    rows.iter().map(decode::cost_group).collect()
}
