//! The A2A server's tables: their columns, and how a row becomes a stored
//! task or one of its push notification configs.

use super::StoredRow;
use crate::domain::a2a_task::{A2aPushConfigRow, A2aTaskRow};
use crate::domain::ids::SessionId;

/// The columns of `a2a_tasks`, in the order `task` reads them.
pub(crate) const TASK_COLUMNS: &str = "namespace, id, agent, context_id, session_id, state, \
     terminal, record_json, version, created_at, updated_at";

/// The columns `push_config` reads from `a2a_push_configs`, in its order.
pub(crate) const PUSH_CONFIG_COLUMNS: &str =
    "namespace, task_id, config_id, config_json, created_at";

/// The task in a row of `TASK_COLUMNS`; a record that is not JSON is corrupt.
pub(crate) fn task<R: StoredRow>(r: &R) -> Result<A2aTaskRow, R::Error> {
    Ok(A2aTaskRow {
        namespace: r.col(0)?,
        id: r.col(1)?,
        agent: r.col(2)?,
        context_id: r.col(3)?,
        session_id: SessionId::from(r.col::<String>(4)?),
        state: r.col(5)?,
        terminal: r.col(6)?,
        record: r.json(7)?,
        version: r.col(8)?,
        created_at: r.col(9)?,
        updated_at: r.col(10)?,
    })
}

/// The push notification config in a row of `PUSH_CONFIG_COLUMNS`.
pub(crate) fn push_config<R: StoredRow>(r: &R) -> Result<A2aPushConfigRow, R::Error> {
    Ok(A2aPushConfigRow {
        namespace: r.col(0)?,
        task_id: r.col(1)?,
        config_id: r.col(2)?,
        config: r.json(3)?,
        created_at: r.col(4)?,
    })
}
