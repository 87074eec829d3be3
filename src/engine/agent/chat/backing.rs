//! The task behind a Hecate Chat session: the latest `agent_loop` task of its
//! trailing Hecate Agent segment. While that task's latest run is queued,
//! running or awaiting approval the whole session is busy
//! (`agent_chat.agent_session_busy` with the task, run and status); once it
//! ended, a Hecate Agent follow-up continues it.

use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{SessionId, TaskId, TaskRunId};
use crate::domain::session::{RuntimeKind, Session};
use crate::engine::Engine;

/// How many of the latest messages are searched for the backing task.
const LOOK_BACK: usize = 50;

/// The `agent_chat.agent_session_busy` error naming the backing task's run.
fn busy(session_id: &SessionId, task: &TaskId, run: &TaskRunId, status: &str) -> HecateError {
    HecateError::new(
        ErrorType::AgentSessionBusy,
        format!("session {session_id} is busy: its task {task} run {run} is {status}"),
    )
    .with_detail("task_id", task.as_str())
    .with_detail("latest_run_id", run.as_str())
    .with_detail("run_status", status)
    .with_operator_action(
        "Wait for the run to end, resolve its pending approval, or cancel the turn (or the task run) before sending another prompt.",
    )
}

impl Engine {
    /// The ended run a Hecate Agent follow-up continues: the latest run of the
    /// task named by the session's trailing Hecate Agent messages. `None` when
    /// the latest segment is not Hecate Agent (or has no task yet); busy when
    /// that run has not ended.
    pub(in crate::engine) async fn backing_run(
        &self,
        namespace: &str,
        session: &Session,
    ) -> Result<Option<(TaskId, TaskRunId)>> {
        // The header keeps the last turn's runtime: only a Hecate Agent one
        // can have a task behind it.
        if session.runtime_kind != RuntimeKind::Agent {
            return Ok(None);
        }
        let session_id = &session.id;
        let recent = self.store().last_messages(session_id, LOOK_BACK).await?;
        let task = recent
            .iter()
            .rev()
            .take_while(|m| m.runtime.runtime_kind == RuntimeKind::Agent)
            .find_map(|m| m.runtime.task_id.clone());
        let Some(task) = task.map(TaskId::from) else {
            return Ok(None);
        };
        let tasks = self.tasks();
        let found = match tasks.get_task(namespace, &task).await {
            Ok(t) => t,
            // A task deleted through the task API: the next turn starts a new one.
            Err(e) if e.error_type == ErrorType::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(run) = found.latest_run_id else {
            return Ok(None);
        };
        let status = tasks.get_run(namespace, &task, &run).await?.status;
        if !status.is_terminal() {
            return Err(busy(session_id, &task, &run, status.as_str()));
        }
        Ok(Some((task, run)))
    }

    /// The busy error for a session whose turn runs in this process, naming
    /// the task run it follows when it follows one.
    pub(in crate::engine) async fn busy_turn(
        &self,
        namespace: &str,
        session_id: &SessionId,
        backing: Option<(TaskId, TaskRunId)>,
    ) -> HecateError {
        let plain = HecateError::new(
            ErrorType::AgentSessionBusy,
            format!("session {session_id} is already running a turn"),
        );
        let Some((task, run)) = backing else {
            return plain;
        };
        match self.tasks().get_run(namespace, &task, &run).await {
            Ok(r) => busy(session_id, &task, &run, r.status.as_str()),
            Err(_) => plain,
        }
    }
}
