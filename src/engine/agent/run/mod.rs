//! Executing an `agent_loop` run: call the model with the built-in tool catalog
//! and the run's MCP tools, run each tool call it asks for as a step, feed the results back, until the
//! model answers without tool calls, the turn limit or the budget. Approval
//! gates park the run with its conversation stored. What a step did (its end,
//! events, artifacts and the conversation with its result) is stored in one
//! transaction with the start of the step that follows it, before that step
//! runs, so a tool call is recorded as started before it runs and a reclaimed
//! or requeued run goes on from its last completed step without calling a tool
//! twice, in two writes per model turn and tool call pair.

mod audit;
mod gate;
mod mcp;
mod steps;
pub mod turn_trace;

use crate::adapters::process::env::{current_env, sanitized_env};
use crate::adapters::providers::ToolDefinition;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::TaskStepId;
use crate::domain::task::{
    SystemLayers, Task, TaskArtifact, TaskRun, TaskSpec, TaskStep, TaskStepStatus,
};
use crate::engine::gateway::routing::route;
use crate::engine::tasks::TaskRuntime;
use crate::engine::tasks::control::confinement_of;
use crate::engine::tasks::execute::{RunEnd, StepEnd, artifact};
use crate::runtimes::agent::catalog;
use crate::runtimes::agent::conversation::Conversation;
use crate::runtimes::agent::mcp::McpToolset;
use crate::runtimes::agent::tools::{self, HttpPolicy, ToolEnv};
use crate::runtimes::model::ModelTarget;
use crate::store::tasks::{FinishedStep, NewTaskEvent, RunCheckpoint, RunCost};
use crate::telemetry::{self, spans};
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// Kind of the artifact that holds a run's conversation.
pub const CONVERSATION_KIND: &str = "agent_conversation";
/// Kind of the artifact that holds a run's final answer.
pub const FINAL_ANSWER_KIND: &str = "final_answer";

/// One run of the loop in progress.
struct Loop<'a> {
    rt: &'a TaskRuntime,
    task: &'a Task,
    run: &'a TaskRun,
    /// The model the next turn asks first: the first candidate, then the one
    /// that last answered.
    target: ModelTarget,
    /// Every candidate for the task's model, in routing order.
    targets: Vec<ModelTarget>,
    conversation: Conversation,
    cost: i64,
    env: ToolEnv,
    /// The run's MCP tools.
    mcp: McpToolset,
    /// Steps stored before this worker took the run (a dead worker's included).
    earlier: Vec<TaskStep>,
    next_index: i64,
    /// What was done since the last write.
    unsaved: Unsaved,
    /// The cost and the model as last stored (`None` before the first write).
    saved_cost: Option<(i64, ModelTarget)>,
}

/// What the loop did since its last write, stored with the next step's start
/// or when the loop stops.
#[derive(Default)]
struct Unsaved {
    /// Whether anything (the conversation included) changed.
    dirty: bool,
    step: Option<FinishedStep>,
    events: Vec<NewTaskEvent>,
    artifacts: Vec<TaskArtifact>,
}

impl TaskRuntime {
    /// The models an `agent_loop` task may run on, in the order they are tried:
    /// its own model or the configured default, resolved by the gateway's
    /// routing (one for `provider/model`, every provider serving a bare model);
    /// `model_not_configured` when neither is set or nothing serves it.
    pub(in crate::engine) async fn agent_models(
        &self,
        spec: &TaskSpec,
    ) -> Result<Vec<ModelTarget>> {
        let model = match spec.requested_model.trim() {
            "" => self.inner.config.default_model.trim(),
            m => m,
        };
        if model.is_empty() {
            return Err(HecateError::new(
                ErrorType::ModelNotConfigured,
                "this agent_loop task names no requested_model and no default model is configured",
            )
            .with_detail("field", "requested_model")
            .with_operator_action(
                "Create the task with requested_model, or set [tasks] default_model (HECATE_TASK_DEFAULT_MODEL).",
            ));
        }
        let requested = match spec.requested_provider.trim() {
            "" => model.to_string(),
            provider => format!("{provider}/{model}"),
        };
        let routes = route::route_candidates(&self.inner.models, Some(&requested), None)
            .await
            .map_err(|e| HecateError {
                error_type: ErrorType::ModelNotConfigured,
                ..e
            })?;
        Ok(routes
            .into_iter()
            .map(|r| ModelTarget {
                provider: r.provider,
                model: r.model,
            })
            .collect())
    }

    /// Runs the loop of an `agent_loop` run in `workspace`.
    pub(in crate::engine) async fn run_agent(
        &self,
        task: &Task,
        run: &TaskRun,
        workspace: PathBuf,
        cancel: &CancellationToken,
    ) -> RunEnd {
        let targets = match self.agent_models(&task.spec).await {
            Ok(t) if !t.is_empty() => t,
            Ok(_) => {
                return RunEnd::Finish(StepEnd::failed(
                    ErrorType::ModelNotConfigured.code(),
                    "no provider serves the task's model".into(),
                ));
            }
            Err(e) => return RunEnd::Finish(StepEnd::failed(e.error_type.code(), e.message)),
        };
        let target = targets[0].clone();
        let (mut conversation, earlier) = match self.agent_state(task, run).await {
            Ok(s) => s,
            Err(e) => return RunEnd::Finish(StepEnd::failed("store_error", e.to_string())),
        };
        // The layers are fixed when a conversation starts: a resumed or
        // continued run keeps the ones its conversation was begun with.
        let new_layers = conversation.system.is_none();
        if new_layers {
            conversation.system = Some(SystemLayers {
                global: self.inner.config.system_prompt.clone(),
                profile: task.spec.profile_prompt.clone(),
                task: task.spec.system_prompt.clone(),
            });
        }
        let spec = &task.spec;
        let allowed_root = if spec.sandbox_allowed_root.is_empty() {
            workspace.clone()
        } else {
            PathBuf::from(&spec.sandbox_allowed_root)
        };
        let additional = granted_directories(&spec.additional_directories);
        let span = spans::agent_loop_run(
            task.id.as_str(),
            run.id.as_str(),
            &target.provider,
            &target.model,
            &workspace.display().to_string(),
        );
        if let Some(parent) = self.trace_parent(&task.id) {
            // A session turn follows this task here: its runs are in the turn's trace.
            telemetry::adopt(&span, parent);
        }
        // A run whose tool access offers no MCP tool connects to no server.
        let (mcp, mcp_events) = if spec.tool_access.takes_mcp() {
            self.agent_mcp(task, &workspace).await
        } else {
            (McpToolset::default(), Vec::new())
        };
        let mut l = Loop {
            rt: self,
            task,
            run,
            target,
            targets,
            conversation,
            cost: run.total_cost_micros_usd,
            env: ToolEnv {
                workspace,
                allowed_root,
                additional,
                confinement: confinement_of(spec),
                env: sanitized_env(&current_env(), &[], &[]),
                timeout: Duration::from_millis(spec.effective_timeout_ms()),
                http: HttpPolicy::new(&self.inner.config.http_allow),
                access: spec.tool_access,
            },
            mcp,
            next_index: earlier.len() as i64 + 1,
            earlier,
            unsaved: Unsaved::default(),
            saved_cost: None,
        };
        if !mcp_events.is_empty() || new_layers {
            l.record(None, mcp_events, Vec::new());
        }
        let end = match l.drive(cancel).instrument(span.clone()).await {
            Ok(end) => l.flush(None).await.map(|()| end),
            Err(e) => Err(e),
        };
        let end =
            end.unwrap_or_else(|e| RunEnd::Finish(StepEnd::failed("store_error", e.to_string())));
        let (status, error) = match &end {
            RunEnd::Parked => ("awaiting_approval", None),
            RunEnd::Finish(step) => (
                step.status.as_str(),
                step.error.as_ref().map(|(k, m)| (k.as_str(), m.as_str())),
            ),
        };
        spans::agent_loop_end(&span, status, l.conversation.turns, error);
        end
    }

    /// The run's stored conversation (when it has none yet: the one its chain
    /// hands it, or a fresh one from the prompt) and its steps so far.
    async fn agent_state(
        &self,
        task: &Task,
        run: &TaskRun,
    ) -> Result<(Conversation, Vec<TaskStep>)> {
        let conversation = match self.conversation_of(&task.id, &run.id).await? {
            Some(c) => c,
            None => match self.chained_conversation(task, run).await? {
                Some(c) => c,
                None => Conversation::primed(&task.spec.context, &task.spec.prompt),
            },
        };
        let steps = self.store().list_task_steps(&run.id).await?;
        Ok((conversation, steps))
    }
}

/// The task's additional directories as the run uses them: canonical, those no
/// longer there left out (a path in them is then refused like any other).
fn granted_directories(dirs: &[String]) -> Vec<PathBuf> {
    dirs.iter()
        .filter_map(|d| match std::fs::canonicalize(d) {
            Ok(real) if real.is_dir() => Some(real),
            _ => {
                tracing::warn!(directory = %d, "an additional directory of the task is gone; left out");
                None
            }
        })
        .collect()
}

fn cancelled() -> RunEnd {
    RunEnd::Finish(StepEnd {
        status: TaskStepStatus::Cancelled,
        exit_code: None,
        error: None,
        artifacts: Vec::new(),
        events: Vec::new(),
    })
}

/// What the gate says about a call.
pub(super) enum Verdict {
    /// Run it.
    Run,
    /// The operator refused it; its result is stored.
    Refused,
    /// The run now waits for an approval.
    Parked,
}

impl Loop<'_> {
    /// The tools the model is given: the built-ins the run's tool access
    /// offers, then the MCP tools.
    fn tool_definitions(&self) -> Vec<ToolDefinition> {
        let mut defs = catalog::definitions_for(self.env.access);
        defs.extend(self.mcp.definitions());
        defs
    }

    /// Alternates tool calls and model turns until the run ends or parks.
    async fn drive(&mut self, cancel: &CancellationToken) -> Result<RunEnd> {
        loop {
            for call in self.conversation.pending_calls() {
                if cancel.is_cancelled() {
                    return Ok(cancelled());
                }
                if self.interrupted(&call.id) {
                    let text = "interrupted: the worker running this call stopped before it finished; check the workspace before calling it again";
                    self.conversation.push_result(&call.id, text.into(), true);
                    let event = NewTaskEvent::new(
                        "tool.call.interrupted",
                        serde_json::json!({"tool_call_id": call.id, "tool": call.name}),
                    );
                    self.record(None, vec![event], Vec::new());
                    continue;
                }
                // A call refused whatever the operator says (git that runs
                // programs, a write into .git) runs straight to its refusal:
                // no approval is asked, so no grant can cover it.
                let refused = self.mcp.get(&call.name).is_none()
                    && tools::refusal(&self.env, &call).is_some();
                if !refused {
                    match self.gate(&call).await? {
                        Verdict::Run => {}
                        Verdict::Refused => continue,
                        Verdict::Parked => return Ok(RunEnd::Parked),
                    }
                }
                if self.tool_step(&call, cancel).await? {
                    return Ok(cancelled());
                }
            }
            if let Some(answer) = self.conversation.final_answer().map(str::to_string) {
                return self.finish(answer).await;
            }
            if let Some(stop) = self.stop_reason() {
                return Ok(RunEnd::Finish(stop));
            }
            if let Some(end) = self.model_step(cancel).await? {
                return Ok(end);
            }
            if self.over_budget() {
                return Ok(RunEnd::Finish(self.budget_stop()));
            }
        }
    }

    /// Whether a dead worker started `call_id` (a step exists, but its result
    /// never reached the conversation).
    fn interrupted(&self, call_id: &str) -> bool {
        self.earlier
            .iter()
            .any(|s| s.kind == "tool" && s.input["tool_call_id"] == call_id)
    }

    fn over_budget(&self) -> bool {
        let budget = self.task.spec.budget_micros_usd;
        budget > 0 && self.run.prior_cost_micros_usd + self.cost > budget
    }

    fn budget_stop(&self) -> StepEnd {
        StepEnd::failed(
            "budget_exceeded",
            format!(
                "the run spent {} micro-USD (with {} before it in its chain), over the task's budget of {}",
                self.cost, self.run.prior_cost_micros_usd, self.task.spec.budget_micros_usd
            ),
        )
    }

    /// Why no further model turn may be taken, if one may not.
    fn stop_reason(&self) -> Option<StepEnd> {
        let max = self.task.spec.effective_max_turns();
        if self.conversation.turns >= max {
            return Some(StepEnd::failed(
                "max_turns_exceeded",
                format!("the run took its {max} model turns without a final answer"),
            ));
        }
        let budget = self.task.spec.budget_micros_usd;
        (budget > 0 && self.run.prior_cost_micros_usd + self.cost >= budget)
            .then(|| self.budget_stop())
    }

    /// Stores the final answer and ends the run completed.
    async fn finish(&mut self, answer: String) -> Result<RunEnd> {
        let step = TaskStepId::generate();
        let mut a = artifact(self.task, self.run, &step, FINAL_ANSWER_KIND, "answer");
        a.step_id = None;
        a.size_bytes = answer.len() as i64;
        a.content = answer.clone();
        let event = NewTaskEvent::new(
            "agent.final_answer",
            serde_json::json!({"artifact_id": a.id, "text": answer}),
        );
        self.record(None, vec![event], vec![a]);
        Ok(RunEnd::Finish(StepEnd {
            status: TaskStepStatus::Completed,
            exit_code: None,
            error: None,
            artifacts: Vec::new(),
            events: Vec::new(),
        }))
    }

    /// The conversation as the run's artifact.
    fn conversation_artifact(&self) -> Result<TaskArtifact> {
        let step = TaskStepId::generate();
        let mut a = artifact(
            self.task,
            self.run,
            &step,
            CONVERSATION_KIND,
            "conversation",
        );
        a.step_id = None;
        a.content = serde_json::to_string(&self.conversation)
            .map_err(|e| HecateError::store(e.to_string()))?;
        a.size_bytes = a.content.len() as i64;
        Ok(a)
    }

    /// Notes what a step (or the loop) did: an ended step, `extra` artifacts
    /// (replacing the run's ones of the same kind and name) and events, to be
    /// stored with the conversation by the next [`Loop::flush`]. A second ended
    /// step is never held: `step` is only given right before a flush.
    fn record(
        &mut self,
        step: Option<FinishedStep>,
        events: Vec<NewTaskEvent>,
        extra: Vec<TaskArtifact>,
    ) {
        let u = &mut self.unsaved;
        debug_assert!(step.is_none() || u.step.is_none(), "two unsaved step ends");
        u.dirty = true;
        if step.is_some() {
            u.step = step;
        }
        u.events.extend(events);
        u.artifacts.extend(extra);
    }

    /// Stores what was recorded, the conversation, the cost so far and `start`
    /// (a step about to run, with its events) in one transaction, and
    /// publishes the events; without `start` and with nothing recorded it
    /// writes nothing.
    async fn flush(&mut self, start: Option<(TaskStep, Vec<NewTaskEvent>)>) -> Result<()> {
        if start.is_none() && !self.unsaved.dirty {
            return Ok(());
        }
        let Unsaved {
            step,
            mut events,
            artifacts,
            ..
        } = std::mem::take(&mut self.unsaved);
        let start = start.map(|(step, started)| {
            events.extend(started);
            step
        });
        let mut replace = vec![self.conversation_artifact()?];
        replace.extend(artifacts);
        let unchanged = matches!(&self.saved_cost, Some((cost, target)) if *cost == self.cost && *target == self.target);
        let cost = (!unchanged).then(|| RunCost {
            total_cost_micros_usd: self.cost,
            model: self.target.model.clone(),
            provider: self.target.provider.clone(),
        });
        let stored = self
            .rt
            .store()
            .checkpoint_task_run(RunCheckpoint {
                run_id: self.run.id.clone(),
                owner: self.rt.inner.owner.clone(),
                step,
                start,
                replace,
                cost,
                events,
            })
            .await?;
        self.saved_cost = Some((self.cost, self.target.clone()));
        self.rt.publish(stored);
        Ok(())
    }
}
