//! Runs and run-event logs.

use super::cached::CachedStatements;
use super::{OpResult, PostgresStore, conflict, is_unique_violation};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::{Run, RunEvent, RunStatus};
use crate::domain::time::{now_millis, now_rfc3339, parse_millis};
use crate::store::rows::runs::{self as decode, RUN_COLUMNS};
use crate::store::{NewRunEvent, RunEnd, RunStatusUpdate, RunStore};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use serde_json::Value;
use tokio_postgres::Row;

/// Inserts a run.
pub(super) const INSERT_RUN: &str = "INSERT INTO runs (id, session_id, status, error_type, \
     error_message, request_id, trace_id, started_at, started_ms, span_id) \
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)";
/// Ends a run (`$6` is now in milliseconds).
pub(super) const FINISH_RUN: &str = "UPDATE runs SET status = $2, error_type = $3, \
     error_message = $4, completed_at = $5, duration_ms = GREATEST(0, $6 - started_ms) \
     WHERE id = $1";
/// Inserts a run's events (`$2`..`$5` are arrays, one element per event).
pub(super) const INSERT_EVENTS: &str = "INSERT INTO run_events (run_id, sequence, type, \
     data_json, occurred_at) SELECT $1, * FROM UNNEST($2::bigint[], $3::text[], $4::text[], \
     $5::text[])";

/// The statement that reads one run.
pub(super) fn select_sql() -> String {
    format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1")
}

/// Inserts a run.
pub(super) async fn insert<C: GenericClient>(c: &C, run: &Run) -> OpResult<()> {
    let started_ms = parse_millis(&run.started_at).unwrap_or_else(now_millis);
    c.execute_cached(
        INSERT_RUN,
        &[
            &run.id.as_str(),
            &run.session_id.as_str(),
            &run.status.as_str(),
            &run.error_type,
            &run.error_message,
            &run.request_id,
            &run.trace_id,
            &run.started_at,
            &started_ms,
            &run.span_id,
        ],
    )
    .await?;
    Ok(())
}

/// Marks a run terminal with an optional (type, message) error; `not_found` when
/// there is no such run.
pub(super) async fn finish<C: GenericClient>(
    c: &C,
    run_id: &RunId,
    status: RunStatus,
    error: Option<&(String, String)>,
) -> OpResult<()> {
    let n = c
        .execute_cached(
            FINISH_RUN,
            &[
                &run_id.as_str(),
                &status.as_str(),
                &error.map(|e| e.0.as_str()),
                &error.map(|e| e.1.as_str()),
                &now_rfc3339(),
                &now_millis(),
            ],
        )
        .await?;
    if n == 0 {
        return Err(HecateError::not_found("run", run_id.as_str()).into());
    }
    Ok(())
}

/// Reads one run, or `not_found`.
pub(super) async fn select<C: GenericClient>(c: &C, run_id: &RunId) -> OpResult<Run> {
    match c
        .query_opt_cached(&select_sql(), &[&run_id.as_str()])
        .await?
    {
        Some(row) => decode::run(&row),
        None => Err(HecateError::not_found("run", run_id.as_str()).into()),
    }
}

/// Inserts run events under the sequences they carry, inside the caller's
/// transaction; a sequence the run already has is a `conflict`.
pub(super) async fn insert_events<C: GenericClient>(
    tx: &C,
    run_id: &RunId,
    events: &[NewRunEvent],
) -> OpResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let data = events
        .iter()
        .map(|e| serde_json::to_string(&e.data))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let sequences: Vec<i64> = events.iter().map(|e| e.sequence).collect();
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    let times: Vec<&str> = events.iter().map(|e| e.occurred_at.as_str()).collect();
    // One statement for the batch: one round trip, and it stores all or none.
    let inserted = tx
        .execute_cached(
            INSERT_EVENTS,
            &[&run_id.as_str(), &sequences, &types, &data, &times],
        )
        .await;
    match inserted {
        Ok(_) => {}
        Err(err) if is_unique_violation(&err) => {
            let (first, last) = (sequences[0], sequences[sequences.len() - 1]);
            return Err(conflict(format!(
                "run {run_id} already has an event among sequences {first}..={last}"
            ))
            .into());
        }
        Err(err) => return Err(err.into()),
    }
    Ok(())
}

#[async_trait]
impl RunStore for PostgresStore {
    async fn create_run(&self, run: &Run) -> Result<()> {
        let c = self.client().await?;
        let r = insert(&c, run).await;
        self.done(r)
    }

    async fn finish_run(&self, end: RunEnd<'_>) -> Result<()> {
        let error = end.error.map(|(t, m)| (t.to_owned(), m.to_owned()));
        let c = self.client().await?;
        let r = finish(&c, end.run_id, end.status, error.as_ref()).await;
        self.done(r)
    }

    async fn set_run_status(&self, update: RunStatusUpdate<'_>) -> Result<()> {
        let mut c = self.client().await?;
        let r: OpResult<()> = async {
            let tx = c.transaction().await?;
            tx.execute(
                "UPDATE runs SET status = $2 WHERE id = $1 \
                 AND status IN ('running','awaiting_approval')",
                &[&update.run_id.as_str(), &update.status.as_str()],
            )
            .await?;
            tx.execute(
                "UPDATE sessions SET status = $2 WHERE id = $1 \
                 AND status IN ('running','awaiting_approval')",
                &[&update.session_id.as_str(), &update.status.as_str()],
            )
            .await?;
            tx.commit().await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn get_run(&self, run_id: &RunId) -> Result<Run> {
        let c = self.client().await?;
        let r = select(&c, run_id).await;
        self.done(r)
    }

    async fn list_runs(&self, session_id: &SessionId) -> Result<Vec<Run>> {
        let c = self.client().await?;
        let r = async {
            let sql = format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE session_id = $1 ORDER BY started_ms, seq"
            );
            let rows = c.query_cached(&sql, &[&session_id.as_str()]).await?;
            rows.iter().map(decode::run).collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn last_run(&self, session_id: &SessionId) -> Result<Option<Run>> {
        let c = self.client().await?;
        let r = async {
            let sql = format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE session_id = $1 \
                 ORDER BY started_ms DESC, seq DESC LIMIT 1"
            );
            let row = c.query_opt_cached(&sql, &[&session_id.as_str()]).await?;
            row.as_ref().map(decode::run).transpose()
        }
        .await;
        self.done(r)
    }

    async fn list_runs_by_id(&self, session_id: &SessionId, ids: &[RunId]) -> Result<Vec<Run>> {
        let c = self.client().await?;
        let ids: Vec<&str> = ids.iter().map(RunId::as_str).collect();
        let r = async {
            let sql = format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE id = ANY($2) AND session_id = $1 \
                 ORDER BY started_ms, seq"
            );
            let rows = c.query_cached(&sql, &[&session_id.as_str(), &ids]).await?;
            rows.iter().map(decode::run).collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn append_run_events(&self, run_id: &RunId, events: &[NewRunEvent]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let mut c = self.client().await?;
        let r: OpResult<()> = async {
            let tx = c.transaction().await?;
            insert_events(&tx, run_id, events).await?;
            tx.commit().await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn list_run_events(&self, run_id: &RunId, after: Option<i64>) -> Result<Vec<RunEvent>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    "SELECT run_id, sequence, type, data_json, occurred_at FROM run_events \
                     WHERE run_id = $1 AND sequence > $2 ORDER BY sequence",
                    &[&run_id.as_str(), &after.unwrap_or(0)],
                )
                .await?;
            to_events(&rows)
        }
        .await;
        self.done(r)
    }

    async fn list_session_run_events(
        &self,
        session_id: &SessionId,
        delta_data: bool,
    ) -> Result<Vec<RunEvent>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    "SELECT run_id, sequence, type, \
                       CASE WHEN $2::BOOLEAN OR type NOT IN ('text_delta', 'thought_delta') \
                         THEN data_json END, occurred_at \
                     FROM run_events WHERE run_id IN (SELECT id FROM runs WHERE session_id = $1) \
                     ORDER BY run_id, sequence",
                    &[&session_id.as_str(), &delta_data],
                )
                .await?;
            to_events(&rows)
        }
        .await;
        self.done(r)
    }
}

fn to_events(rows: &[Row]) -> OpResult<Vec<RunEvent>> {
    rows.iter()
        .map(|r| {
            let data: Option<String> = r.try_get(3)?;
            Ok(RunEvent {
                run_id: RunId(r.try_get(0)?),
                sequence: r.try_get(1)?,
                event_type: r.try_get(2)?,
                data: match data {
                    Some(d) => serde_json::from_str(&d)?,
                    None => Value::Null,
                },
                occurred_at: r.try_get(4)?,
            })
        })
        .collect()
}
