//! Runs and run-event logs.

use super::reads::{all, one};
use super::run_ids::json_ids;
use super::{OpResult, SqliteStore};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::{Run, RunEvent, RunStatus};
use crate::domain::time::{now_millis, now_rfc3339, parse_millis};
use crate::store::rows::runs::{self as decode, RUN_COLUMNS};
use crate::store::{NewRunEvent, RunEnd, RunStatusUpdate, RunStore};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde_json::Value;

/// Inserts a run.
pub(super) fn insert(c: &Connection, run: &Run) -> OpResult<()> {
    let started_ms = parse_millis(&run.started_at).unwrap_or_else(now_millis);
    c.prepare_cached(
        "INSERT INTO runs (id, session_id, status, error_type, error_message, request_id, \
         trace_id, started_at, started_ms, span_id) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
    )?
    .execute(params![
        run.id.as_str(),
        run.session_id.as_str(),
        run.status.as_str(),
        run.error_type,
        run.error_message,
        run.request_id,
        run.trace_id,
        run.started_at,
        started_ms,
        run.span_id,
    ])?;
    Ok(())
}

/// Marks a run terminal with an optional (type, message) error; `not_found` when
/// there is no such run.
pub(super) fn finish(
    c: &Connection,
    run_id: &RunId,
    status: RunStatus,
    error: Option<&(String, String)>,
) -> OpResult<()> {
    let n = c
        .prepare_cached(
            "UPDATE runs SET status = ?2, error_type = ?3, error_message = ?4, \
         completed_at = ?5, duration_ms = MAX(0, ?6 - started_ms) WHERE id = ?1",
        )?
        .execute(params![
            run_id.as_str(),
            status.as_str(),
            error.map(|e| e.0.as_str()),
            error.map(|e| e.1.as_str()),
            now_rfc3339(),
            now_millis(),
        ])?;
    if n == 0 {
        return Err(HecateError::not_found("run", run_id.as_str()).into());
    }
    Ok(())
}

/// The runs `sql` selects with `params`, in the order selected.
fn select_runs(c: &Connection, sql: &str, params: impl rusqlite::Params) -> OpResult<Vec<Run>> {
    all(c, sql, params, |r| decode::run(r))
}

/// Reads one run, or `not_found`.
pub(super) fn select(c: &Connection, run_id: &RunId) -> OpResult<Run> {
    one(
        c,
        &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
        params![run_id.as_str()],
        |r| decode::run(r),
        "run",
        run_id.as_str(),
    )
}

/// Inserts run events under the sequences they carry, inside the caller's
/// transaction; a sequence the run already has is a `conflict`.
pub(super) fn insert_events(
    tx: &Connection,
    run_id: &RunId,
    events: &[NewRunEvent],
) -> OpResult<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO run_events (run_id, sequence, type, data_json, occurred_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for e in events {
        let inserted = insert.execute(params![
            run_id.as_str(),
            e.sequence,
            e.event_type,
            serde_json::to_string(&e.data)?,
            e.occurred_at
        ]);
        if let Err(err) = inserted {
            let taken = matches!(&err, rusqlite::Error::SqliteFailure(f, _)
                if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY);
            if taken {
                return Err(HecateError::new(
                    ErrorType::Conflict,
                    format!("run {run_id} already has an event {}", e.sequence),
                )
                .into());
            }
            return Err(err.into());
        }
    }
    Ok(())
}

#[async_trait]
impl RunStore for SqliteStore {
    async fn create_run(&self, run: &Run) -> Result<()> {
        let run = run.clone();
        self.write(move |c| insert(c, &run)).await
    }

    async fn finish_run(&self, end: RunEnd<'_>) -> Result<()> {
        let (run_id, status) = (end.run_id.clone(), end.status);
        let error = end.error.map(|(t, m)| (t.to_owned(), m.to_owned()));
        self.write(move |c| finish(c, &run_id, status, error.as_ref()))
            .await
    }

    async fn set_run_status(&self, update: RunStatusUpdate<'_>) -> Result<()> {
        let (session_id, run_id) = (update.session_id.clone(), update.run_id.clone());
        let status = update.status;
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.prepare_cached("UPDATE runs SET status = ?2 WHERE id = ?1 AND status IN ('running','awaiting_approval')")?.execute(
                params![run_id.as_str(), status.as_str()],
            )?;
            tx.prepare_cached("UPDATE sessions SET status = ?2 WHERE id = ?1 AND status IN ('running','awaiting_approval')")?.execute(
                params![session_id.as_str(), status.as_str()],
            )?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn get_run(&self, run_id: &RunId) -> Result<Run> {
        let run_id = run_id.clone();
        self.read(move |c| select(c, &run_id)).await
    }

    async fn list_runs(&self, session_id: &SessionId) -> Result<Vec<Run>> {
        let session_id = session_id.clone();
        self.read(move |c| {
            select_runs(
                c,
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs WHERE session_id = ?1 \
                     ORDER BY started_ms, rowid"
                ),
                params![session_id.as_str()],
            )
        })
        .await
    }

    async fn last_run(&self, session_id: &SessionId) -> Result<Option<Run>> {
        let session_id = session_id.clone();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE session_id = ?1 \
                 ORDER BY started_ms DESC, rowid DESC LIMIT 1"
            ))?;
            Ok(stmt
                .query_row(params![session_id.as_str()], |r| decode::run(r))
                .optional()?)
        })
        .await
    }

    // `+session_id`: look the runs up by key, not by scanning the session's runs.
    async fn list_runs_by_id(&self, session_id: &SessionId, ids: &[RunId]) -> Result<Vec<Run>> {
        let (session_id, ids) = (session_id.clone(), json_ids(ids));
        self.read(move |c| {
            select_runs(
                c,
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs \
                     WHERE id IN (SELECT value FROM json_each(?2)) AND +session_id = ?1 \
                     ORDER BY started_ms, rowid"
                ),
                params![session_id.as_str(), ids],
            )
        })
        .await
    }

    async fn append_run_events(&self, run_id: &RunId, events: &[NewRunEvent]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let (run_id, events) = (run_id.clone(), events.to_vec());
        self.write_inline(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            insert_events(&tx, &run_id, &events)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn list_run_events(&self, run_id: &RunId, after: Option<i64>) -> Result<Vec<RunEvent>> {
        let run_id = run_id.clone();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT run_id, sequence, type, data_json, occurred_at FROM run_events \
                 WHERE run_id = ?1 AND sequence > ?2 ORDER BY sequence",
            )?;
            let rows =
                stmt.query_map(params![run_id.as_str(), after.unwrap_or(0)], row_to_event)?;
            collect_events(rows)
        })
        .await
    }

    async fn list_session_run_events(
        &self,
        session_id: &SessionId,
        delta_data: bool,
    ) -> Result<Vec<RunEvent>> {
        let session_id = session_id.clone();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT run_id, sequence, type, \
                   CASE WHEN ?2 OR type NOT IN ('text_delta', 'thought_delta') \
                     THEN data_json END, occurred_at \
                 FROM run_events WHERE run_id IN (SELECT id FROM runs WHERE session_id = ?1) \
                 ORDER BY run_id, sequence",
            )?;
            let rows = stmt.query_map(params![session_id.as_str(), delta_data], row_to_event)?;
            collect_events(rows)
        })
        .await
    }
}

type EventRow = (String, i64, String, Option<String>, String);

fn row_to_event(r: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

fn collect_events(
    rows: impl Iterator<Item = rusqlite::Result<EventRow>>,
) -> std::result::Result<Vec<RunEvent>, super::StoreOpError> {
    let mut out = Vec::new();
    for row in rows {
        let (run, sequence, event_type, data, occurred_at) = row?;
        out.push(RunEvent {
            run_id: RunId(run),
            sequence,
            event_type,
            data: match data {
                Some(d) => serde_json::from_str(&d)?,
                None => Value::Null,
            },
            occurred_at,
        });
    }
    Ok(out)
}
