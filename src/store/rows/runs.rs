//! The runs table: its columns and how a row becomes a `Run`.

use super::StoredRow;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::{Run, RunStatus};

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const RUN_COLUMNS: &str = "id, session_id, status, error_type, error_message, request_id, \
     trace_id, started_at, completed_at, duration_ms, span_id";

/// A session run from a row that starts with its columns.
pub(crate) fn run<R: StoredRow>(r: &R) -> Result<Run, R::Error> {
    let status: String = r.col(2)?;
    Ok(Run {
        id: RunId(r.col(0)?),
        session_id: SessionId(r.col(1)?),
        status: RunStatus::parse(&status),
        error_type: r.col(3)?,
        error_message: r.col(4)?,
        request_id: r.col(5)?,
        trace_id: r.col(6)?,
        started_at: r.col(7)?,
        completed_at: r.col(8)?,
        duration_ms: r.col(9)?,
        span_id: r.col(10)?,
    })
}
