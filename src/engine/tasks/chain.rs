//! Runs that carry an `agent_loop` conversation on: continue (the source's
//! conversation plus a follow-up prompt) and retry-from-turn N (the source's
//! conversation cut right before its Nth model turn), both in the source's
//! workspace with its cost carried; and the starting conversation of a chained
//! run, rebuilt when its worker first takes it from the source's
//! `agent_conversation` artifact and the mode its `run.resumed_from_event`
//! recorded (resume hydrates the history as it was).

use super::TaskRuntime;
use super::control::StartOptions;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::{ExecutionKind, Task, TaskEventFilter, TaskRun};
use crate::engine::agent::CONVERSATION_KIND;
use crate::runtimes::agent::conversation::Conversation;

impl TaskRuntime {
    /// The conversation of an ended `agent_loop` run; `conflict` while the run
    /// is active, `invalid_request` for another kind or a run without one.
    async fn ended_conversation(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<Conversation> {
        let task = self.store().get_task(namespace, id).await?;
        let source = self.store().get_task_run(id, run_id).await?;
        if task.spec.execution_kind != Some(ExecutionKind::AgentLoop) {
            return Err(HecateError::invalid(format!(
                "task {id} is not an agent_loop task; only agent_loop runs carry a conversation"
            )));
        }
        if !source.status.is_terminal() {
            return Err(HecateError::new(
                ErrorType::Conflict,
                format!(
                    "run {run_id} is {}; wait for it to end (or cancel it) first",
                    source.status.as_str()
                ),
            ));
        }
        self.conversation_of(id, run_id).await?.ok_or_else(|| {
            HecateError::invalid(format!(
                "run {run_id} has no agent_conversation artifact to carry on from"
            ))
        })
    }

    /// A run's stored conversation, if it has one; unreadable is an error.
    pub(in crate::engine) async fn conversation_of(
        &self,
        id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<Option<Conversation>> {
        let artifacts = self.store().list_task_artifacts(id, Some(run_id)).await?;
        match artifacts.iter().find(|a| a.kind == CONVERSATION_KIND) {
            Some(a) => serde_json::from_str(&a.content).map(Some).map_err(|e| {
                HecateError::invalid(format!(
                    "the agent_conversation artifact of run {run_id} is malformed: {e}"
                ))
            }),
            None => Ok(None),
        }
    }

    /// A new run that goes on from an ended `agent_loop` run's conversation
    /// with a follow-up `prompt`, in its workspace, carrying its cost.
    pub async fn continue_run(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
        prompt: String,
        reason: Option<String>,
    ) -> Result<TaskRun> {
        if prompt.trim().is_empty() {
            return Err(HecateError::invalid("prompt is empty").with_detail("field", "prompt"));
        }
        self.ended_conversation(namespace, id, run_id).await?;
        let opts = StartOptions {
            from: Some(run_id.clone()),
            resume: true,
            reason,
            prompt: Some(prompt),
            ..StartOptions::default()
        };
        self.start(namespace, id, opts).await
    }

    /// A new run whose conversation is the ended run's cut right before its
    /// `turn`-th model turn (1-based), which the model takes again; in the
    /// source's workspace, carrying its cost. A turn out of range is
    /// `invalid_request` naming the range.
    pub async fn retry_from_turn(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
        turn: u32,
        reason: Option<String>,
    ) -> Result<TaskRun> {
        let conversation = self.ended_conversation(namespace, id, run_id).await?;
        let turns = conversation.assistant_turns();
        if conversation.before_turn(turn as usize).is_none() {
            return Err(HecateError::invalid(format!(
                "turn {turn} is out of range: run {run_id} took {turns} model turns (1..={turns})"
            ))
            .with_detail("field", "turn")
            .with_detail("turns", turns));
        }
        let opts = StartOptions {
            from: Some(run_id.clone()),
            resume: true,
            reason,
            from_turn: Some(turn),
            ..StartOptions::default()
        };
        self.start(namespace, id, opts).await
    }

    /// The conversation a chained run starts from (`None` for a run that
    /// starts from the task's prompt: no source, a plain retry, or a source
    /// without a conversation).
    pub(in crate::engine) async fn chained_conversation(
        &self,
        task: &Task,
        run: &TaskRun,
    ) -> Result<Option<Conversation>> {
        let Some(source) = &run.resumed_from_run_id else {
            return Ok(None);
        };
        let link = self
            .store()
            .list_task_events(TaskEventFilter {
                namespace: task.namespace.clone(),
                run_id: Some(run.id.clone()),
                event_types: vec!["run.resumed_from_event".into()],
                limit: 1,
                ..Default::default()
            })
            .await?;
        let Some(link) = link.first() else {
            return Ok(None);
        };
        let mode = link.data["mode"].as_str().unwrap_or("retry");
        if mode == "retry" {
            return Ok(None);
        }
        let Some(from) = self.conversation_of(&task.id, source).await? else {
            return Ok(None);
        };
        Ok(match mode {
            "continue" => {
                let mut c = from.hydrated();
                c.push_user(link.data["prompt"].as_str().unwrap_or_default());
                Some(c)
            }
            "retry_from_turn" => link.data["turn"]
                .as_u64()
                .and_then(|t| from.before_turn(t as usize)),
            _ => Some(from.hydrated()),
        })
    }
}
