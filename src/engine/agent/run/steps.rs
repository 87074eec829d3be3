//! The two kinds of step of an `agent_loop` run: a model turn (`model`), ending
//! with `turn.completed` and its cost, and a tool call (`tool`), ending with
//! `tool.call.finished`, its output and patch artifacts. A step's start is
//! stored with the end of the one before it, its end with the next start.

use super::Loop;
use super::audit::{CallEnd, CallStart};
use super::turn_trace::TurnTrace;
use crate::adapters::providers::StreamDelta;
use crate::domain::error::Result;
use crate::domain::ids::TaskStepId;
use crate::domain::message::ToolCall;
use crate::domain::task::{SystemLayers, TaskStep, TaskStepStatus, additional_directories_note};
use crate::domain::time::now_rfc3339;
use crate::engine::gateway::routing::health::retry_after_secs;
use crate::engine::tasks::LivePiece;
use crate::engine::tasks::execute::{RunEnd, StepEnd, output_artifacts, patch_artifact};
use crate::runtimes::agent::{llm, tools};
use crate::runtimes::model::ModelTarget;
use crate::store::tasks::{FinishedStep, NewTaskEvent};
use crate::telemetry::spans;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// The most result text a `tool.call.finished` event carries.
const EVENT_RESULT_BYTES: usize = 4096;

fn clip(text: &str) -> String {
    let mut end = text.len().min(EVENT_RESULT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// A call's arguments as JSON (the raw text when they are not JSON).
pub(super) fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

fn step_event(step: &TaskStep) -> NewTaskEvent {
    let event_type = match step.status {
        TaskStepStatus::Completed => "step.finished",
        TaskStepStatus::Cancelled => "step.cancelled",
        TaskStepStatus::Running => "step.started",
        TaskStepStatus::Failed => "step.failed",
    };
    json_event(
        event_type,
        json!({"step_id": step.id, "index": step.index, "kind": step.kind,
               "status": step.status.as_str(), "exit_code": step.exit_code,
               "error_type": step.error_type, "error_message": step.error_message}),
    )
}

fn json_event(event_type: &str, data: Value) -> NewTaskEvent {
    NewTaskEvent::new(event_type, data)
}

impl Loop<'_> {
    /// Stores a new running step of `kind` with `input` and its events, with
    /// what the loop did before it.
    async fn start_step(
        &mut self,
        kind: &str,
        input: Value,
        mut events: Vec<NewTaskEvent>,
    ) -> Result<TaskStep> {
        let step = TaskStep {
            id: TaskStepId::generate(),
            run_id: self.run.id.clone(),
            task_id: self.task.id.clone(),
            index: self.next_index,
            kind: kind.to_string(),
            status: TaskStepStatus::Running,
            input,
            exit_code: None,
            error_type: None,
            error_message: None,
            started_at: now_rfc3339(),
            finished_at: None,
        };
        self.next_index += 1;
        // A model step names its turn, so a follower knows which live words
        // may be shown after it.
        let mut started = json!({"step_id": step.id, "index": step.index, "kind": kind});
        if let Some(turn) = step.input.get("turn") {
            started["turn"] = turn.clone();
        }
        events.insert(0, json_event("step.started", started));
        self.flush(Some((step.clone(), events))).await?;
        Ok(step)
    }

    /// Runs one tool call as a step; answers whether it was cancelled.
    pub(super) async fn tool_step(
        &mut self,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> Result<bool> {
        let args = arguments(call);
        let input = json!({"tool_call_id": call.id, "tool": call.name, "arguments": args,
                           "workspace": self.env.workspace.display().to_string()});
        let started = json_event(
            "tool.call.started",
            json!({"tool_call_id": call.id, "tool": call.name, "arguments": args}),
        );
        let step = self.start_step("tool", input, vec![started]).await?;
        let call_start = CallStart::now();
        let traced = spans::ToolCall::start(
            &call.name,
            &call.id,
            self.mcp.get(&call.name).is_some() || self.mcp.is_blocked(&call.name),
        );
        let outcome = match self.mcp.get(&call.name) {
            Some(tool) => {
                self.mcp
                    .call(tool, call, cancel)
                    .instrument(traced.span().clone())
                    .await
            }
            None if self.mcp.is_blocked(&call.name) => tools::ToolOutcome {
                is_error: true,
                ..tools::ToolOutcome::text(format!(
                    "tool {} is blocked by its MCP server's approval_policy; it was not called",
                    call.name
                ))
            },
            None => {
                tools::run(&self.env, call, cancel)
                    .instrument(traced.span().clone())
                    .await
            }
        };
        let decision = if self.mcp.is_blocked(&call.name) {
            "blocked"
        } else if self.conversation.approvals.contains_key(&call.id) {
            "approved"
        } else {
            "allowed"
        };
        let outcome_word = match (decision, outcome.cancelled, outcome.is_error) {
            ("blocked", _, _) => "not_called",
            (_, true, _) => "cancelled",
            (_, _, true) => "tool_error",
            _ => "ok",
        };
        traced.finish(
            decision,
            outcome_word,
            outcome
                .is_error
                .then(|| outcome.content.lines().next().unwrap_or_default()),
        );
        self.audit_mcp_call(
            call,
            call_start,
            CallEnd {
                decision,
                outcome: outcome_word,
                error: outcome
                    .is_error
                    .then(|| outcome.content.lines().next().unwrap_or_default()),
            },
        );
        let mut artifacts = Vec::new();
        let mut events = Vec::new();
        if let Some(out) = &outcome.command {
            artifacts.extend(output_artifacts(self.task, self.run, &step.id, out));
        }
        if let Some(p) = &outcome.patch {
            let (a, e) = patch_artifact(self.task, self.run, &step.id, &p.change, p.proposed);
            artifacts.push(a);
            events.push(e);
        }
        if let Some(plan) = &outcome.plan {
            events.push(json_event(
                "agent.plan",
                json!({"tool_call_id": call.id, "step_id": step.id, "entries": plan}),
            ));
        }
        events.push(json_event(
            "tool.call.finished",
            json!({"tool_call_id": call.id, "tool": call.name, "step_id": step.id,
                   "is_error": outcome.is_error, "result": clip(&outcome.content)}),
        ));
        let (status, error) = if outcome.cancelled {
            (TaskStepStatus::Cancelled, None)
        } else if outcome.is_error {
            let first = outcome.content.lines().next().unwrap_or_default();
            (
                TaskStepStatus::Failed,
                Some(("tool_error".to_string(), clip(first))),
            )
        } else {
            (TaskStepStatus::Completed, None)
        };
        let finished = TaskStep {
            status,
            exit_code: outcome
                .command
                .as_ref()
                .and_then(|o| o.exit.and_then(|e| e.code)),
            error_type: error.as_ref().map(|e| e.0.clone()),
            error_message: error.map(|e| e.1),
            finished_at: Some(now_rfc3339()),
            ..step
        };
        events.push(step_event(&finished));
        self.conversation
            .push_result(&call.id, outcome.content, outcome.is_error);
        let end = FinishedStep {
            step: finished,
            artifacts,
            events: Vec::new(),
        };
        self.record(Some(end), events, Vec::new());
        Ok(outcome.cancelled)
    }

    /// Takes one model turn as a step; answers the run's end when the turn
    /// ended it (a provider error, a cancel).
    pub(super) async fn model_step(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Option<RunEnd>> {
        let turn = self.conversation.turns + 1;
        let mut traced = TurnTrace::start();
        let input = json!({"turn": turn, "provider": self.target.provider,
                           "model": self.target.model,
                           "messages": self.conversation.entries.len(),
                           "request_id": traced.request_id});
        let step = self.start_step("model", input, Vec::new()).await?;
        let mut system = self
            .conversation
            .system
            .as_ref()
            .map(SystemLayers::compose)
            .unwrap_or_default();
        // The directories granted beside the workspace, named every turn (not
        // stored with the layers: a run works with the ones its task has).
        if let Some(note) = additional_directories_note(&self.env.additional) {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(&note);
        }
        // A provider that fails the turn (429, 5xx, unreachable, ...) hands it
        // to the next candidate serving the model; the one that answers takes
        // the following turns first. A provider the gateway's health says is
        // cooling down (learnt here, on `/v1` or by another replica) is passed
        // over while another candidate is not.
        let mut tried = vec![self.target.clone()];
        let mut failovers = Vec::new();
        let answered = loop {
            self.pass_over_cooling(turn, &step.id, &mut tried, &mut failovers);
            // What the model says streams to the turn following the task here.
            let (live, task) = (&self.rt.inner.live, &self.task.id);
            let mut say = |d: StreamDelta| match d {
                StreamDelta::Text(text) => live.say(task, LivePiece::Text { turn, text }),
                StreamDelta::Thinking(text) => live.say(task, LivePiece::Thinking { turn, text }),
                StreamDelta::ToolCallStarted { .. } => {}
            };
            let ask = llm::Ask {
                system: Some(system.clone()),
                conversation: &self.conversation,
                tools: self.tool_definitions(),
                reasoning_effort: self.task.spec.reasoning_effort.clone(),
            };
            let answer =
                llm::call(&self.rt.inner.models, &self.target, ask, cancel, &mut say).await;
            self.teach_health(answer.as_ref());
            let next = self.targets.iter().find(|t| !tried.contains(t)).cloned();
            match (answer, next) {
                (Some(Err(f)), Some(next)) if f.provider_side => {
                    let reason = f.error.details.get("reason").and_then(Value::as_str);
                    traced.failed_over(&self.target, reason, &f.error.message);
                    failovers.push(json_event(
                        "turn.failover",
                        json!({"turn": turn, "step_id": step.id,
                               "from": {"provider": self.target.provider, "model": self.target.model},
                               "to": {"provider": next.provider, "model": next.model},
                               "error_type": f.error.error_type.code(),
                               "reason": f.error.details.get("reason"),
                               "message": f.error.message}),
                    ));
                    tracing::info!(from = %self.target.provider, to = %next.provider, error = %f.error.message, "agent turn fails over to the next provider");
                    tried.push(next.clone());
                    self.target = next;
                }
                (answer, _) => break answer.map(|r| r.map_err(|f| f.error)),
            }
        };
        self.rt
            .record_trace(traced.finish(self.task, &self.target, answered.as_ref()));
        let mut finished = TaskStep {
            finished_at: Some(now_rfc3339()),
            ..step
        };
        let reply = match answered {
            None => {
                finished.status = TaskStepStatus::Cancelled;
                let mut events = failovers;
                events.push(step_event(&finished));
                self.end_step(finished, events);
                return Ok(Some(RunEnd::Finish(StepEnd {
                    status: TaskStepStatus::Cancelled,
                    exit_code: None,
                    error: None,
                    artifacts: Vec::new(),
                    events: Vec::new(),
                })));
            }
            Some(Err(e)) => {
                finished.status = TaskStepStatus::Failed;
                finished.error_type = Some(e.error_type.code().to_string());
                finished.error_message = Some(e.message.clone());
                let mut events = failovers;
                events.push(step_event(&finished));
                self.end_step(finished, events);
                return Ok(Some(RunEnd::Finish(StepEnd::failed(
                    e.error_type.code(),
                    e.message,
                ))));
            }
            Some(Ok(r)) => r,
        };
        self.cost += reply.cost_micros_usd.unwrap_or(0);
        self.conversation.turns = turn;
        let calls: Vec<&str> = reply.tool_calls.iter().map(|c| c.name.as_str()).collect();
        let completed = json_event(
            "turn.completed",
            json!({"turn": turn, "step_id": finished.id, "provider": self.target.provider,
                   "model": self.target.model, "usage": reply.usage.map(|u| json!({
                       "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
                       "total_tokens": u.total_tokens})),
                   "cost_micros_usd": reply.cost_micros_usd,
                   "total_cost_micros_usd": self.cost,
                   "prior_cost_micros_usd": self.run.prior_cost_micros_usd,
                   "stop_reason": reply.stop_reason, "tool_calls": calls, "text": reply.text}),
        );
        finished.status = TaskStepStatus::Completed;
        let mut events = failovers;
        events.extend([completed, step_event(&finished)]);
        self.conversation
            .push_assistant(reply.text, reply.tool_calls);
        self.end_step(finished, events);
        Ok(None)
    }

    /// Moves the turn off a provider that is cooling down, to the first untried
    /// candidate that is not, recording a `turn.failover` with `skipped` and
    /// the cooldown's reason; stays when every other candidate cools down too.
    fn pass_over_cooling(
        &mut self,
        turn: u32,
        step_id: &TaskStepId,
        tried: &mut Vec<ModelTarget>,
        failovers: &mut Vec<NewTaskEvent>,
    ) {
        let Some(health) = self.rt.inner.provider_health.get() else {
            return;
        };
        let Some(blocked) = health.blocked(&self.target.provider) else {
            return;
        };
        let Some(next) = self
            .targets
            .iter()
            .find(|t| !tried.contains(t) && health.blocked(&t.provider).is_none())
            .cloned()
        else {
            return;
        };
        failovers.push(json_event(
            "turn.failover",
            json!({"turn": turn, "step_id": step_id, "skipped": true,
                   "from": {"provider": self.target.provider, "model": self.target.model},
                   "to": {"provider": next.provider, "model": next.model},
                   "reason": blocked.reason,
                   "message": format!("{} is cooling down for {:.1} s", self.target.provider,
                                      blocked.remaining.as_secs_f64())}),
        ));
        tried.push(next.clone());
        self.target = next;
    }

    /// Tells the gateway's provider health how the turn's provider did: an
    /// answer clears its failures, a 429 cools it down (for its `retry-after`),
    /// another provider-side failure counts toward its circuit.
    fn teach_health(&self, answer: Option<&std::result::Result<llm::ModelTurn, llm::TurnFailure>>) {
        let Some(health) = self.rt.inner.provider_health.get() else {
            return;
        };
        let provider = &self.target.provider;
        match answer {
            Some(Ok(_)) => health.succeeded(provider),
            Some(Err(f)) if f.status == Some(429) => health.rate_limited(
                provider,
                f.retry_after.as_deref().and_then(retry_after_secs),
            ),
            Some(Err(f)) if f.provider_side => health.failed(provider),
            _ => {}
        }
    }

    /// Records a step's end, to be stored with the conversation.
    fn end_step(&mut self, step: TaskStep, events: Vec<NewTaskEvent>) {
        let end = FinishedStep {
            step,
            artifacts: Vec::new(),
            events: Vec::new(),
        };
        self.record(Some(end), events, Vec::new());
    }
}
