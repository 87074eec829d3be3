//! The store floor of the `agent-loop` benchmark: the writes a crash-safe
//! agent loop cannot skip, made alone on the same kind of SQLite file, with no
//! model, no tools and no event followers. Per loop: the task, its run, the
//! claim and the workspace; per model turn and tool call the two checkpoints
//! the loop writes (a step's end with the next step's start and the
//! conversation so far, growing as the loop's does); the final answer and the
//! run's end. Unfolded, each step's start is a transaction of its own (as the
//! loop wrote them before starts were folded into checkpoints): four writes
//! per model turn and tool call instead of two.

use hecate::domain::ids::{TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use hecate::domain::message::ToolCall;
use hecate::domain::task::{
    ExecutionKind, Task, TaskArtifact, TaskRun, TaskRunStatus, TaskSpec, TaskStep, TaskStepStatus,
};
use hecate::domain::time::now_rfc3339;
use hecate::runtimes::agent::conversation::Conversation;
use hecate::store::Store;
use hecate::store::tasks::{
    FinishedStep, NewTaskEvent, NewTaskRun, RunCheckpoint, RunCost, TaskRunEnd,
};
use serde_json::json;
use std::time::Instant;

/// The worker name the floor claims runs as.
const OWNER: &str = "floor";

/// What one floor loop took.
pub struct FloorLoop {
    /// Wall time of the loop, milliseconds.
    pub ms: f64,
    /// Write transactions it made.
    pub writes: usize,
}

/// One loop's store work: `turns` tool-calling turns and an answer; with
/// `folded`, each step starts in the checkpoint that ends the one before it.
pub async fn floor_loop(
    store: &dyn Store,
    turns: usize,
    folded: bool,
) -> anyhow::Result<FloorLoop> {
    let started = Instant::now();
    let now = now_rfc3339();
    let task = Task {
        id: TaskId::generate(),
        namespace: "bench".into(),
        spec: TaskSpec {
            execution_kind: Some(ExecutionKind::AgentLoop),
            prompt: "work on notes.txt".into(),
            ..TaskSpec::default()
        },
        latest_run_id: None,
        latest_run_status: None,
        created_at: now.clone(),
        updated_at: now.clone(),
    };
    store.create_task(&task).await?;
    let run = TaskRun {
        id: TaskRunId::generate(),
        task_id: task.id.clone(),
        number: 0,
        status: TaskRunStatus::Queued,
        error_type: None,
        error_message: None,
        resumed_from_run_id: None,
        workspace: None,
        total_cost_micros_usd: 0,
        prior_cost_micros_usd: 0,
        model: None,
        provider: None,
        cancel_requested: false,
        created_at: now,
        started_at: None,
        finished_at: None,
    };
    store
        .create_task_run(NewTaskRun {
            run,
            priority: 0,
            approval: None,
            events: vec![NewTaskEvent::new("run.queued", json!({}))],
        })
        .await?;
    let claimed = store
        .claim_task_run(OWNER, 30_000)
        .await?
        .ok_or_else(|| anyhow::anyhow!("the floor's run was not claimable"))?;
    let run = claimed.run;
    store.set_task_run_workspace(&run.id, "/tmp/floor").await?;
    let mut floor = Floor {
        store,
        task: &task,
        run: &run,
        conversation: Conversation::new("work on notes.txt"),
        index: 0,
        open: None,
        folded,
        writes: 4,
    };
    for turn in 0..turns {
        floor.write(Some("model")).await?;
        let call = ToolCall {
            id: format!("call_{turn}"),
            name: "read_file".into(),
            arguments: json!({"path": "notes.txt"}).to_string(),
        };
        floor.conversation.push_assistant(String::new(), vec![call]);
        floor.write(Some("tool")).await?;
        let result = "alpha\nsecond line\n".to_string();
        floor
            .conversation
            .push_result(&format!("call_{turn}"), result, false);
    }
    floor.write(Some("model")).await?;
    floor
        .conversation
        .push_assistant("The loop is done.".into(), Vec::new());
    floor.write(None).await?;
    store
        .finish_task_run(TaskRunEnd {
            run_id: run.id.clone(),
            owner: OWNER.to_owned(),
            status: TaskRunStatus::Completed,
            error: None,
            events: vec![NewTaskEvent::new("run.finished", json!({}))],
        })
        .await?;
    Ok(FloorLoop {
        ms: started.elapsed().as_secs_f64() * 1e3,
        writes: floor.writes + 1,
    })
}

/// A loop's store state: the step that is open, the conversation and the
/// writes made so far.
struct Floor<'a> {
    store: &'a dyn Store,
    task: &'a Task,
    run: &'a TaskRun,
    conversation: Conversation,
    index: i64,
    open: Option<TaskStep>,
    folded: bool,
    writes: usize,
}

impl Floor<'_> {
    /// The open step ends with the conversation replaced, and a step of `kind`
    /// starts (when given): in the same checkpoint when folded, else in a
    /// transaction of its own before it (the first start has no checkpoint).
    async fn write(&mut self, kind: Option<&str>) -> anyhow::Result<()> {
        let ended = self.open.take().map(|s| FinishedStep {
            step: TaskStep {
                status: TaskStepStatus::Completed,
                finished_at: Some(now_rfc3339()),
                ..s
            },
            artifacts: Vec::new(),
            events: vec![NewTaskEvent::new("step.finished", json!({}))],
        });
        let start = kind.map(|kind| {
            self.index += 1;
            TaskStep {
                id: TaskStepId::generate(),
                run_id: self.run.id.clone(),
                task_id: self.task.id.clone(),
                index: self.index,
                kind: kind.into(),
                status: TaskStepStatus::Running,
                input: json!({"index": self.index}),
                exit_code: None,
                error_type: None,
                error_message: None,
                started_at: now_rfc3339(),
                finished_at: None,
            }
        });
        let started: Vec<NewTaskEvent> = start
            .iter()
            .map(|s| NewTaskEvent::new("step.started", json!({"step_id": s.id})))
            .collect();
        let (with_start, events) = if self.folded {
            (start.clone(), started)
        } else {
            if ended.is_some() {
                self.checkpoint(ended, None, Vec::new()).await?;
            }
            if let Some(s) = &start {
                self.store.start_task_step(s, started).await?;
                self.writes += 1;
            }
            self.open = start;
            return Ok(());
        };
        self.checkpoint(ended, with_start, events).await?;
        self.open = start;
        Ok(())
    }

    /// One checkpoint with the conversation as it is now.
    async fn checkpoint(
        &mut self,
        ended: Option<FinishedStep>,
        start: Option<TaskStep>,
        events: Vec<NewTaskEvent>,
    ) -> anyhow::Result<()> {
        let content = serde_json::to_string(&self.conversation)?;
        let conversation = TaskArtifact {
            id: TaskArtifactId::generate(),
            task_id: self.task.id.clone(),
            run_id: self.run.id.clone(),
            step_id: None,
            kind: "agent_conversation".into(),
            name: "conversation".into(),
            size_bytes: content.len() as i64,
            content,
            truncated: false,
            status: None,
            created_at: now_rfc3339(),
        };
        self.store
            .checkpoint_task_run(RunCheckpoint {
                run_id: self.run.id.clone(),
                owner: OWNER.into(),
                step: ended,
                start,
                replace: vec![conversation],
                cost: Some(RunCost {
                    total_cost_micros_usd: 0,
                    model: "loop-model".into(),
                    provider: "bench".into(),
                }),
                events,
            })
            .await?;
        self.writes += 1;
        Ok(())
    }
}
