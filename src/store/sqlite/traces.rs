//! Gateway traces: one row per `/v1` request, filtered by request id, session,
//! time, model, provider and status, newest first.

use super::OpResult;
use crate::domain::gateway_conversation::{GatewayTrace, TraceCostBy, TraceCostGroup, TraceFilter};
use crate::store::rows::traces::{self as decode, TRACE_COLUMNS};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Transaction, params, params_from_iter};

/// Inserts a trace inside `tx`; a request id seen before replaces its row (a
/// client may reuse its own `X-Request-Id`).
pub(super) fn insert_trace(tx: &Transaction<'_>, t: &GatewayTrace) -> OpResult<()> {
    tx.prepare_cached(&format!(
        "INSERT OR REPLACE INTO gateway_traces ({TRACE_COLUMNS}) VALUES \
         (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19)"
    ))?
    .execute(params![
        t.request_id,
        t.trace_id,
        t.namespace,
        t.session_id,
        t.client_format,
        t.requested_model,
        t.provider,
        t.model,
        t.status,
        t.usage.prompt_tokens as i64,
        t.usage.completion_tokens as i64,
        t.usage.total_tokens as i64,
        t.cost_micros_usd,
        t.duration_ms,
        t.error_type,
        t.error_message,
        t.started_at,
        t.route_reason,
        serde_json::to_string(&t.route_candidates)?,
    ])?;
    Ok(())
}

/// What the traces of `namespace` since `since` (RFC 3339, inclusive) cost, in
/// micro-USD (unknown costs count as nothing).
pub(super) fn spend_since(c: &Connection, namespace: &str, since: &str) -> OpResult<i64> {
    Ok(c.prepare_cached(
        "SELECT COALESCE(SUM(cost_micros_usd), 0) FROM gateway_traces \
         WHERE namespace = ?1 AND started_at >= ?2",
    )?
    .query_row(params![namespace, since], |r| r.get(0))?)
}

/// The `WHERE` clause (from `FROM gateway_traces` on) of the traces of
/// `namespace` that `filter` selects, with its arguments; its page is not part
/// of it.
fn filtered(namespace: &str, filter: &TraceFilter) -> (String, Vec<SqlValue>) {
    let mut sql = String::from(" FROM gateway_traces WHERE namespace = ?");
    let mut args: Vec<SqlValue> = vec![namespace.to_owned().into()];
    for (clause, value) in [
        (" AND request_id = ?", &filter.request_id),
        (" AND session_id = ?", &filter.session_id),
        (" AND started_at >= ?", &filter.since),
        (" AND started_at < ?", &filter.until),
        (" AND provider = ?", &filter.provider),
        (" AND status = ?", &filter.status),
        (" AND client_format <> ?", &filter.except_client_format),
    ] {
        if let Some(v) = value {
            sql.push_str(clause);
            args.push(v.clone().into());
        }
    }
    if let Some(m) = &filter.model {
        sql.push_str(" AND (model = ? OR requested_model = ?)");
        args.push(m.clone().into());
        args.push(m.clone().into());
    }
    (sql, args)
}

/// The traces of `namespace` that `filter` selects, newest first.
pub(super) fn select_traces(
    c: &Connection,
    namespace: &str,
    filter: &TraceFilter,
) -> OpResult<Vec<GatewayTrace>> {
    let (rest, mut args) = filtered(namespace, filter);
    let mut sql = format!("SELECT {TRACE_COLUMNS}{rest}");
    sql.push_str(" ORDER BY started_at DESC, request_id DESC LIMIT ? OFFSET ?");
    args.push((filter.limit as i64).into());
    args.push((filter.offset as i64).into());
    let mut stmt = c.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| decode::trace(r))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// What the traces of `namespace` that `filter` selects cost, per group of `by`.
pub(super) fn select_trace_costs(
    c: &Connection,
    namespace: &str,
    filter: &TraceFilter,
    by: TraceCostBy,
) -> OpResult<Vec<TraceCostGroup>> {
    let (rest, args) = filtered(namespace, filter);
    let sql = format!(
        "{}{rest}{}",
        decode::cost_group_head(by),
        decode::cost_group_tail(by)
    );
    let mut stmt = c.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| decode::cost_group(r))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
