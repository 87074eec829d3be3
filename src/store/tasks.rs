//! The task runtime's persistence contract: tasks, runs, steps, artifacts,
//! approvals, the process-wide event log and the leased queue. Every state change
//! and the events that tell it are written in one transaction, so a reader that
//! follows the event log never sees a state the log does not explain.

use crate::domain::error::Result;
use crate::domain::ids::{TaskApprovalId, TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use crate::domain::task::{
    Task, TaskApproval, TaskApprovalStatus, TaskArtifact, TaskEvent, TaskEventFilter,
    TaskListFilter, TaskRun, TaskRunStatus, TaskStep,
};
use async_trait::async_trait;
use serde_json::Value;

/// An event to append: its type and data (the store numbers and times it).
#[derive(Debug, Clone, PartialEq)]
pub struct NewTaskEvent {
    /// Event type, e.g. `run.queued`.
    pub event_type: String,
    /// Event data.
    pub data: Value,
}

impl NewTaskEvent {
    /// An event of `event_type` with `data`.
    pub fn new(event_type: &str, data: Value) -> Self {
        Self {
            event_type: event_type.to_string(),
            data,
        }
    }

    /// The event as the log keeps it: numbered `sequence` in run `run_id` of
    /// task `task_id`, appended at `occurred_at`.
    pub(crate) fn stored(
        self,
        sequence: i64,
        task_id: &TaskId,
        run_id: &TaskRunId,
        occurred_at: String,
    ) -> TaskEvent {
        TaskEvent {
            sequence,
            task_id: task_id.clone(),
            run_id: run_id.clone(),
            event_type: self.event_type,
            data: self.data,
            occurred_at,
        }
    }
}

/// A new run to store with its first state: queued (and enqueued) or awaiting an
/// approval stored with it.
#[derive(Debug, Clone)]
pub struct NewTaskRun {
    /// The run; its `number` is assigned by the store.
    pub run: TaskRun,
    /// Queue priority (higher first).
    pub priority: i64,
    /// The gate it waits on, when its status is `awaiting_approval`.
    pub approval: Option<TaskApproval>,
    /// Events telling what happened.
    pub events: Vec<NewTaskEvent>,
}

/// How full the shared task queue is, across every process on the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueDepth {
    /// Runs waiting for a worker (never claimed, or their lease expired).
    pub waiting: u64,
    /// Runs a worker holds a live lease on.
    pub leased: u64,
}

/// A run a worker claimed from the queue.
#[derive(Debug, Clone)]
pub struct ClaimedRun {
    /// Its task.
    pub task: Task,
    /// The run, now `running` under the worker's lease.
    pub run: TaskRun,
    /// True when another worker held it before and its lease expired.
    pub reclaimed: bool,
    /// The events the claim appended (`run.started`, after `gap.run_disconnected`
    /// when reclaimed).
    pub events: Vec<TaskEvent>,
}

/// The end of a step: its final row, its artifacts and events.
#[derive(Debug, Clone)]
pub struct FinishedStep {
    /// The step as it ended.
    pub step: TaskStep,
    /// Its artifacts.
    pub artifacts: Vec<TaskArtifact>,
    /// Events telling it.
    pub events: Vec<NewTaskEvent>,
}

/// The spend of a run so far and what it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCost {
    /// This run's model spend in micro-USD.
    pub total_cost_micros_usd: i64,
    /// Model used.
    pub model: String,
    /// Provider used.
    pub provider: String,
}

/// What an agent loop stores between its steps, in one transaction under the
/// worker's lease: a finished step, the step that starts next, artifacts that
/// replace the run's ones of the same kind and name (the conversation so far,
/// the final answer), the run's cost and events.
#[derive(Debug, Clone)]
pub struct RunCheckpoint {
    /// The run.
    pub run_id: TaskRunId,
    /// The worker that must still hold its lease.
    pub owner: String,
    /// A step that ended.
    pub step: Option<FinishedStep>,
    /// A step that starts now (inserted running, after `step` ended).
    pub start: Option<TaskStep>,
    /// Artifacts that replace the run's ones of the same kind and name.
    pub replace: Vec<TaskArtifact>,
    /// The run's spend so far.
    pub cost: Option<RunCost>,
    /// Events telling it.
    pub events: Vec<NewTaskEvent>,
}

/// A run a worker parks until an approval is resolved (see
/// [`TaskStore::await_task_approval`]): the approval to store and the events telling it.
#[derive(Debug, Clone)]
pub struct TaskRunPark {
    /// The run.
    pub run_id: TaskRunId,
    /// The worker that must still hold its lease.
    pub owner: String,
    /// The approval the run waits for.
    pub approval: TaskApproval,
    /// Events telling it.
    pub events: Vec<NewTaskEvent>,
}

/// How a run a worker holds ends (see [`TaskStore::finish_task_run`]): its
/// terminal status, the error as (type, message) and the events telling it.
#[derive(Debug, Clone)]
pub struct TaskRunEnd {
    /// The run.
    pub run_id: TaskRunId,
    /// The worker that must still hold its lease.
    pub owner: String,
    /// The terminal status.
    pub status: TaskRunStatus,
    /// Error type and message, when it did not complete.
    pub error: Option<(String, String)>,
    /// Events telling it.
    pub events: Vec<NewTaskEvent>,
}

/// A patch artifact's move from one status to another (see
/// [`TaskStore::set_task_patch_status`]), with the events telling it.
#[derive(Debug, Clone)]
pub struct PatchMove {
    /// The task the patch belongs to.
    pub task_id: TaskId,
    /// The patch artifact.
    pub id: TaskArtifactId,
    /// The status it must still have, such as `proposed`.
    pub from: String,
    /// The status it gets, such as `applied`.
    pub to: String,
    /// Events telling it.
    pub events: Vec<NewTaskEvent>,
}

/// The decision on a pending task approval (see
/// [`TaskStore::resolve_task_approval`]), with the note that came with it.
#[derive(Debug, Clone)]
pub struct TaskApprovalDecision {
    /// The task the approval belongs to.
    pub task_id: TaskId,
    /// The approval.
    pub id: TaskApprovalId,
    /// `approved` or `rejected`.
    pub decision: TaskApprovalStatus,
    /// A note from whoever decided.
    pub note: Option<String>,
    /// Who decided (`admin`, `key:NAME`, `cli`), recorded on the event.
    pub by: Option<String>,
}

/// Storage of the task runtime.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Inserts a task.
    async fn create_task(&self, task: &Task) -> Result<()>;
    /// Reads one task, or `not_found`.
    async fn get_task(&self, namespace: &str, id: &TaskId) -> Result<Task>;
    /// The tasks `filter` selects, newest first.
    async fn list_tasks(&self, filter: TaskListFilter) -> Result<Vec<Task>>;
    /// Deletes a task and everything it owns; `conflict` while a run is active.
    async fn delete_task(&self, namespace: &str, id: &TaskId) -> Result<()>;

    /// Stores a new run (numbered after the task's last), makes it the task's
    /// latest, enqueues it when queued, with its approval and events.
    async fn create_task_run(&self, new: NewTaskRun) -> Result<(TaskRun, Vec<TaskEvent>)>;
    /// Reads one run of a task, or `not_found`.
    async fn get_task_run(&self, task_id: &TaskId, run_id: &TaskRunId) -> Result<TaskRun>;
    /// Runs of a task, oldest first.
    async fn list_task_runs(&self, task_id: &TaskId) -> Result<Vec<TaskRun>>;

    /// Claims the next queued (or lease-expired) run for `owner`, marks it
    /// running and appends `run.started` (and `gap.run_disconnected` when it was
    /// reclaimed).
    async fn claim_task_run(&self, owner: &str, lease_ms: i64) -> Result<Option<ClaimedRun>>;
    /// How many queued runs wait for a worker and how many are leased now.
    async fn task_queue_depth(&self) -> Result<QueueDepth>;
    /// Extends `owner`'s lease on a run; answers whether a cancel was asked for,
    /// `conflict` when the lease is no longer the owner's.
    async fn renew_task_lease(
        &self,
        run_id: &TaskRunId,
        owner: &str,
        lease_ms: i64,
    ) -> Result<bool>;
    /// Records where a running run works.
    async fn set_task_run_workspace(&self, run_id: &TaskRunId, workspace: &str) -> Result<()>;
    /// Inserts a running step with its events.
    async fn start_task_step(
        &self,
        step: &TaskStep,
        events: Vec<NewTaskEvent>,
    ) -> Result<Vec<TaskEvent>>;
    /// Stores a step's end, artifacts and events.
    async fn finish_task_step(&self, end: FinishedStep) -> Result<Vec<TaskEvent>>;
    /// Stores an agent loop's progress; `conflict` when the lease on the run is
    /// no longer `owner`'s (nothing is written then).
    async fn checkpoint_task_run(&self, checkpoint: RunCheckpoint) -> Result<Vec<TaskEvent>>;
    /// Parks a run `park.owner` holds until `park.approval` is resolved: the run
    /// waits in `awaiting_approval`, its queue item is removed, the approval and
    /// events are stored. `conflict` when the lease is no longer held.
    async fn await_task_approval(&self, park: TaskRunPark) -> Result<Vec<TaskEvent>>;
    /// Ends a run `end.owner` holds: terminal status, error, queue item removed, events.
    async fn finish_task_run(&self, end: TaskRunEnd) -> Result<Vec<TaskEvent>>;
    /// Cancels a run: a queued or waiting one ends now (its pending approval
    /// cancelled); a running one is flagged for its worker. `conflict` when
    /// terminal. Answers the run as it is afterwards and the events appended.
    async fn cancel_task_run(
        &self,
        task_id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<(TaskRun, Vec<TaskEvent>)>;

    /// Steps of a run in order.
    async fn list_task_steps(&self, run_id: &TaskRunId) -> Result<Vec<TaskStep>>;
    /// One step of a run, or `not_found`.
    async fn get_task_step(&self, run_id: &TaskRunId, step_id: &TaskStepId) -> Result<TaskStep>;
    /// Artifacts of a run, or of every run of the task when `run_id` is absent.
    async fn list_task_artifacts(
        &self,
        task_id: &TaskId,
        run_id: Option<&TaskRunId>,
    ) -> Result<Vec<TaskArtifact>>;
    /// One artifact of a task, or `not_found`.
    async fn get_task_artifact(
        &self,
        task_id: &TaskId,
        id: &TaskArtifactId,
    ) -> Result<TaskArtifact>;

    /// Moves a patch artifact from status `from` to `to` with its events, in one
    /// transaction; `conflict` when it is not in `from` any more.
    async fn set_task_patch_status(
        &self,
        change: PatchMove,
    ) -> Result<(TaskArtifact, Vec<TaskEvent>)>;

    /// Approvals of a task, oldest first.
    async fn list_task_approvals(&self, task_id: &TaskId) -> Result<Vec<TaskApproval>>;
    /// Approvals of every task of a namespace, oldest first; only pending ones
    /// when `pending_only`.
    async fn list_namespace_task_approvals(
        &self,
        namespace: &str,
        pending_only: bool,
    ) -> Result<Vec<TaskApproval>>;
    /// One approval of a task, or `not_found`.
    async fn get_task_approval(
        &self,
        task_id: &TaskId,
        id: &TaskApprovalId,
    ) -> Result<TaskApproval>;
    /// Resolves a pending approval: approved requeues its run, rejected fails it
    /// (an `agent_loop_tool_call` requeues it either way: the loop tells the
    /// model about a refusal).
    /// `conflict` when it is not pending or its run no longer waits. Answers the
    /// approval and the events appended.
    async fn resolve_task_approval(
        &self,
        decision: TaskApprovalDecision,
    ) -> Result<(TaskApproval, Vec<TaskEvent>)>;

    /// Events matching `filter`, in sequence order.
    async fn list_task_events(&self, filter: TaskEventFilter) -> Result<Vec<TaskEvent>>;

    /// Appends `events` to run `run_id` of task `task_id` (events a client
    /// reports; no state changes with them); `not_found` when the run is not the
    /// task's.
    async fn append_task_events(
        &self,
        task_id: &TaskId,
        run_id: &TaskRunId,
        events: Vec<NewTaskEvent>,
    ) -> Result<Vec<TaskEvent>>;
}
