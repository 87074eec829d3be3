//! The task API (`/hecate/v1/tasks`): tasks (`crud`), their runs, steps and
//! artifacts (`runs`), continue and retry-from-turn (`chain`), patches with apply and revert (`patches`), approval gates (`approvals`), and the event lists and SSE
//! streams with a durable replay cursor (`events`). Handlers only call the
//! engine's task runtime.

pub mod approvals;
pub mod chain;
pub mod crud;
pub mod events;
pub mod patches;
pub mod runs;

use crate::domain::ids::{TaskId, TaskRunId};

/// Path parameters `{id}` and `{run_id}`.
pub(super) fn ids(id: String, run_id: String) -> (TaskId, TaskRunId) {
    (TaskId::from(id), TaskRunId::from(run_id))
}
