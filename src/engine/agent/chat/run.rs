//! One Hecate Agent turn: start the session's `agent_loop` task (the first
//! prompt, or the first after a model segment) or continue its latest ended run
//! with the prompt, then follow the run to its end: its tool calls, patches and
//! narration stream as runtime events, its approval gates are asked as the
//! session's permission requests, and its final answer is the turn's answer.
//! When no worker claims runs in this process (`hecate chat`), workers run for
//! the turn.

use super::ask::{approves, permission_request};
use super::events::{Projection, model_turn};
use super::live_order::LiveOrder;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::event::RuntimeEvent;
use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
use crate::domain::message::{ContentBlock, Message, MessageStatus, Role};
use crate::domain::permission::{PermissionAsker, PermissionOutcome};
use crate::domain::task::{
    ContextMessage, ExecutionKind, TaskApproval, TaskApprovalStatus, TaskEventFilter, TaskRun,
    TaskRunStatus, TaskSpec, WorkspaceMode,
};
use crate::engine::Engine;
use crate::engine::approvals::TurnAsker;
use crate::engine::tasks::{FINAL_ANSWER_KIND, LivePiece, StartOptions, patch_content};
use crate::runtimes::{TurnContext, TurnEnd, TurnReport, TurnTarget};
use crate::telemetry::current_context;
use futures::future::BoxFuture;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the follower re-reads the store when nothing woke it (runs other
/// processes' workers drive only show this way).
const POLL: Duration = Duration::from_millis(250);

/// Task events read per store page.
const PAGE: usize = 500;

/// What a followed task's model says live.
type Heard = tokio::sync::mpsc::UnboundedReceiver<LivePiece>;

/// The note kept on a task approval nobody answered in time.
const UNANSWERED_NOTE: &str = "nobody answered the chat's permission request in time";

/// A permission request in flight: how to withdraw it, and its answer.
struct Asking {
    withdraw: CancellationToken,
    answer: BoxFuture<'static, (TaskApproval, PermissionOutcome)>,
}

/// What the session chose for its agent's tasks; a task created with other
/// choices is not continued.
#[derive(Clone, Copy)]
struct Chosen<'a> {
    /// The reasoning effort its turns ask for.
    effort: &'a Option<String>,
    /// The tools it offers.
    tool_access: crate::domain::task::ToolAccess,
    /// The additional directories it may use.
    roots: &'a [String],
}

/// What a turn follows.
struct Followed<'a> {
    ctx: &'a TurnContext,
    asker: &'a TurnAsker,
    task: &'a TaskId,
    run: &'a TaskRunId,
}

impl Engine {
    /// Runs a Hecate Agent turn to its end; never fails outside its report.
    pub(in crate::engine) async fn run_agent(
        &self,
        ctx: TurnContext,
        asker: Arc<TurnAsker>,
    ) -> TurnReport {
        let started = match self.start_backing(&ctx, &asker.namespace).await {
            Ok(s) => s,
            Err(e) => return TurnReport::ended(TurnEnd::Failed(e)),
        };
        let (task, run, mut heard) = started;
        if let Some(turn) = self.active().get(&ctx.session_id) {
            *turn.backing.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((task.clone(), run.clone()));
        }
        let followed = Followed {
            ctx: &ctx,
            asker: &asker,
            task: &task,
            run: &run,
        };
        let mut report = match self.follow(&followed, &mut heard).await {
            Ok(r) => r,
            Err(e) => TurnReport::ended(TurnEnd::Failed(e)),
        };
        self.tasks().forget_trace_parent(&task);
        self.tasks().forget_live(&task);
        report.backing_task = Some((task, run));
        report
    }

    /// Continues the session's ended run with the prompt, or creates and starts
    /// a new task; answers the task and its new run, and what its model says
    /// live when a worker of this process runs it.
    async fn start_backing(
        &self,
        ctx: &TurnContext,
        namespace: &str,
    ) -> Result<(TaskId, TaskRunId, Heard)> {
        let TurnTarget::Agent {
            provider,
            model,
            workspace,
            continue_from,
            mcp_servers,
        } = &ctx.target
        else {
            return Err(HecateError::new(
                ErrorType::RuntimeMismatch,
                "the Hecate Agent runtime answers agent turns only",
            ));
        };
        // The prompt is the last user message; what the session's strategy
        // loaded before it is the conversation's context.
        let at = ctx.history.iter().rposition(|m| m.role == Role::User);
        let said = at
            .map(|i| ctx.history[i].content.clone())
            .unwrap_or_default();
        let prior = &ctx.history[..at.unwrap_or(0)];
        // Messages recalled from the user's other sessions come first, as they
        // come before the prompt in a model turn.
        let prompt = match &ctx.recalled {
            Some(recalled) => format!("{recalled}\n\n{said}"),
            None => said,
        };
        let tasks = self.tasks();
        // What the editor chose for the session's agent: the reasoning effort
        // its turns ask for and the tools it offers (a task keeps those it was
        // created with, so a changed choice starts a fresh task).
        let effort = ctx.reasoning_effort.clone();
        let tool_access = self.stored_hecate_choices(&ctx.session_id).await?.tools;
        // The directories the editor granted beside the workspace (a task
        // keeps those it was created with, so other ones start a fresh task).
        let roots = self.agent_directories(&ctx.session_id);
        let chosen = Chosen {
            effort: &effort,
            tool_access,
            roots: &roots,
        };
        let continued = match continue_from {
            Some((task, _)) => {
                self.window_reaches(namespace, task, prior).await?
                    && self.keeps_choices(namespace, task, chosen).await?
            }
            None => false,
        };
        if let Some((task, run)) = continue_from.as_ref().filter(|_| continued) {
            // The task's runs join this turn's trace (when this process runs them).
            tasks.set_trace_parent(task, current_context());
            // Heard from before the run exists, so its first words are not missed.
            let heard = tasks.listen_live(task);
            let reason = Some("agent chat follow-up".to_string());
            match tasks
                .continue_run(namespace, task, run, prompt.clone(), reason)
                .await
            {
                Ok(next) => return Ok((task.clone(), next.id, heard)),
                // An ended run without a conversation (it failed before its
                // first model turn): the prompt starts a new task.
                Err(e) if e.error_type == ErrorType::InvalidRequest => {
                    tasks.forget_live(task);
                    tracing::info!(error = %e, "the session's task cannot be continued; starting a new one");
                }
                Err(e) => return Err(e),
            }
        }
        let (entries, skipped) = crate::engine::mcp::entry::from_session_servers(mcp_servers);
        for server in skipped {
            tracing::warn!(%server, "an SSE MCP server cannot join a task; skipped");
        }
        let spec = TaskSpec {
            execution_kind: Some(ExecutionKind::AgentLoop),
            prompt,
            system_prompt: ctx.system.clone().unwrap_or_default(),
            working_directory: workspace.clone(),
            workspace_mode: WorkspaceMode::InPlace,
            requested_provider: provider.clone(),
            requested_model: model.clone(),
            mcp_servers: entries,
            context: prior.iter().filter_map(context_message).collect(),
            // Where the loaded window starts: the task is carried on while
            // the strategy still loads from there.
            session_sequence: prior
                .first()
                .or(at.map(|i| &ctx.history[i]))
                .map(|m| m.sequence),
            session_id: Some(ctx.session_id.to_string()),
            reasoning_effort: effort,
            tool_access,
            additional_directories: roots,
            ..Default::default()
        };
        let task = tasks.create_task(namespace, spec).await?;
        tasks.set_trace_parent(&task.id, current_context());
        let heard = tasks.listen_live(&task.id);
        let run = tasks
            .start(namespace, &task.id, StartOptions::default())
            .await?;
        Ok((task.id, run.id, heard))
    }

    /// Whether what the session's strategy loaded before the prompt (`prior`)
    /// still reaches back to where `task`'s conversation starts (its context's
    /// first message); when it does not (the window slid past it, or a summary
    /// now stands in for it) the turn starts a fresh task primed with what was
    /// loaded, so the model never sees more than the strategy loads. A task
    /// with no recorded start always reaches.
    async fn window_reaches(
        &self,
        namespace: &str,
        task: &TaskId,
        prior: &[Message],
    ) -> Result<bool> {
        let started = self
            .tasks()
            .get_task(namespace, task)
            .await?
            .spec
            .session_sequence;
        let Some(started) = started else {
            return Ok(true);
        };
        let reaches = prior.first().is_some_and(|m| m.sequence <= started);
        if !reaches {
            tracing::info!(%task, started, "the session's memory strategy no longer loads the start of its task: a fresh task primed with what it loads");
        }
        Ok(reaches)
    }

    /// Whether `task` was created with the reasoning effort, tool access and
    /// additional directories the session's turn now asks for; when it was
    /// not, the turn starts a fresh task primed with what the strategy loads.
    async fn keeps_choices(
        &self,
        namespace: &str,
        task: &TaskId,
        chosen: Chosen<'_>,
    ) -> Result<bool> {
        let spec = self.tasks().get_task(namespace, task).await?.spec;
        let keeps = spec.reasoning_effort == *chosen.effort
            && spec.tool_access == chosen.tool_access
            && spec.additional_directories == chosen.roots;
        if !keeps {
            tracing::info!(%task, "the session's thought level, tools or additional directories changed: a fresh task primed with what it loads");
        }
        Ok(keeps)
    }

    /// Follows the run until it ends, streaming its events and asking its
    /// approvals; a cancelled turn cancels the run and waits for its end.
    async fn follow(&self, f: &Followed<'_>, heard: &mut Heard) -> Result<TurnReport> {
        let ns = f.asker.namespace.as_str();
        // Faces link the running answer to its task before the run ends.
        let _ = f.ctx.events.send(RuntimeEvent::TaskLinked {
            task_id: f.task.to_string(),
            task_run_id: f.run.to_string(),
        });
        let tasks = self.tasks();
        let mut local_workers = None;
        let mut wake = tasks.subscribe();
        let mut filter = TaskEventFilter {
            namespace: ns.to_string(),
            task_id: Some(f.task.clone()),
            run_id: Some(f.run.clone()),
            limit: PAGE,
            ..Default::default()
        };
        let mut requested: HashMap<String, Value> = HashMap::new();
        let mut asked: HashSet<TaskApprovalId> = HashSet::new();
        let mut asking: Option<Asking> = None;
        let mut cancelling = false;
        let workspace = match &f.ctx.target {
            TurnTarget::Agent { workspace, .. } => workspace.as_str(),
            _ => "",
        };
        let mut projection = Projection::new(workspace);
        let mut order = LiveOrder::default();
        loop {
            // Checked every round: another turn's workers may be on their way out.
            if local_workers.is_none() && !tasks.workers_running() {
                let stop = CancellationToken::new();
                tasks.start_workers(stop.clone());
                local_workers = Some(stop.drop_guard());
            }
            // Read before the page: a run already over has all its events in it.
            let run = tasks.get_run(ns, f.task, f.run).await?;
            let page = tasks.list_events(filter.clone()).await?;
            // What the model said before the page's events (a model turn ends
            // after its words); words of a turn whose start is not yet
            // projected wait for it.
            while let Ok(piece) = heard.try_recv() {
                if let Some(piece) = order.heard(piece) {
                    let _ = f.ctx.events.send(projection.live(piece));
                }
            }
            for e in &page {
                filter.after_sequence = e.sequence;
                if e.event_type == "approval.requested"
                    && let Some(id) = e.data["approval_id"].as_str()
                {
                    requested.insert(id.to_string(), e.data.clone());
                }
                let patch = match Projection::wants_patch(e) {
                    Some(id) => tasks
                        .get_artifact(ns, f.task, Some(f.run), &id)
                        .await
                        .and_then(|a| patch_content(&a))
                        .map_err(|e| tracing::debug!(error = %e, "a patch the turn shows unread"))
                        .ok(),
                    None => None,
                };
                for ev in projection.project(e, patch.as_ref()) {
                    let _ = f.ctx.events.send(ev);
                }
                if e.event_type == "step.started" && e.data["kind"] == "model" {
                    for piece in order.turn_started(model_turn(&e.data)) {
                        let _ = f.ctx.events.send(projection.live(piece));
                    }
                }
            }
            if page.len() == PAGE {
                continue;
            }
            let waiting = run.status == TaskRunStatus::AwaitingApproval;
            match &asking {
                Some(a) if !waiting || cancelling => a.withdraw.cancel(),
                Some(_) => {}
                None if run.status.is_terminal() => {
                    return self.ended(f, &run, projection.answer_streamed()).await;
                }
                None if waiting && !cancelling => {
                    let next = tasks
                        .list_approvals(ns, f.task)
                        .await?
                        .into_iter()
                        .find(|a| {
                            &a.run_id == f.run
                                && a.status == TaskApprovalStatus::Pending
                                && !asked.contains(&a.id)
                        });
                    if let Some(approval) = next {
                        asked.insert(approval.id.clone());
                        let data = requested.get(approval.id.as_str());
                        asking = Some(ask(f, approval, data));
                    }
                }
                None => {}
            }
            // Live words are passed on as they come, without a store read.
            loop {
                tokio::select! {
                    Some(piece) = heard.recv() => {
                        if let Some(piece) = order.heard(piece) {
                            let _ = f.ctx.events.send(projection.live(piece));
                            continue;
                        }
                        // Held: its turn's start is stored by now, so read it.
                    }
                    _ = wake.recv() => {}
                    _ = tokio::time::sleep(POLL) => {}
                    (approval, outcome) = async {
                        match asking.as_mut() {
                            Some(a) => (&mut a.answer).await,
                            None => std::future::pending().await,
                        }
                    } => {
                        let withdrawn = asking.take().is_some_and(|a| a.withdraw.is_cancelled());
                        self.answer_task(ns, &approval, &outcome, withdrawn || cancelling).await?;
                    }
                    _ = f.ctx.cancel.cancelled(), if !cancelling => {
                        cancelling = true;
                        if let Err(e) = tasks.cancel(ns, f.task, f.run).await {
                            tracing::debug!(error = %e, "cancelling the task run of a cancelled turn");
                        }
                    }
                }
                break;
            }
        }
    }

    /// Resolves the task approval as the session's answer said; no answer
    /// rejects it unless the question was withdrawn. An approval resolved
    /// elsewhere first is left as it is.
    async fn answer_task(
        &self,
        namespace: &str,
        approval: &TaskApproval,
        outcome: &PermissionOutcome,
        withdrawn: bool,
    ) -> Result<()> {
        let (approve, note) = match approves(outcome) {
            Some(yes) => (yes, None),
            None if withdrawn => return Ok(()),
            None => (false, Some(UNANSWERED_NOTE.to_string())),
        };
        self.tasks()
            .answer_approval(namespace, approval, approve, note)
            .await
    }

    /// The report of an ended run: its final answer (sent here unless the
    /// model's words `streamed` live, which then are the answer), or its error.
    async fn ended(&self, f: &Followed<'_>, run: &TaskRun, streamed: bool) -> Result<TurnReport> {
        let ns = f.asker.namespace.as_str();
        let end = match run.status {
            TaskRunStatus::Completed => TurnEnd::Completed,
            TaskRunStatus::Cancelled => TurnEnd::Cancelled,
            _ => TurnEnd::Failed(run_error(run)),
        };
        let mut report = TurnReport::ended(end);
        report.cost_micros_usd = Some(run.total_cost_micros_usd - run.prior_cost_micros_usd);
        let artifacts = self.tasks().list_artifacts(ns, f.task, Some(f.run)).await?;
        // Streamed live, the answer is what the model said, in order, as the
        // faces showed it (no blocks: the turn keeps its streamed text).
        if let Some(answer) = artifacts.iter().find(|a| a.kind == FINAL_ANSWER_KIND)
            && !streamed
        {
            let _ = f.ctx.events.send(RuntimeEvent::TextDelta {
                text: answer.content.clone(),
            });
            report.blocks = vec![ContentBlock::Text {
                text: answer.content.clone(),
            }];
        }
        Ok(report)
    }
}

/// Puts a task approval to the session through the turn's asker; the question
/// is withdrawn (closed as cancelled) when the approval is resolved elsewhere.
fn ask(f: &Followed<'_>, approval: TaskApproval, requested: Option<&Value>) -> Asking {
    let withdraw = f.ctx.cancel.child_token();
    let mut asker = f.asker.clone();
    asker.cancel = withdraw.clone();
    let request = permission_request(&f.ctx.session_id, &f.ctx.run_id, &approval, requested);
    let answer = Box::pin(async move {
        let outcome = asker.ask(request).await;
        (approval, outcome)
    });
    Asking { withdraw, answer }
}

/// A loaded message as a task's starting context: user messages, completed
/// assistant answers and summaries (other system messages and partial answers
/// are not part of the conversation a model is given).
fn context_message(m: &Message) -> Option<ContextMessage> {
    let kept = match m.role {
        Role::User => true,
        Role::Assistant => m.status == MessageStatus::Completed,
        Role::System => m.is_summary,
        Role::Tool => false,
    };
    kept.then(|| ContextMessage {
        role: m.role,
        content: m.content.clone(),
        is_summary: m.is_summary,
    })
}

/// A failed run's error as the turn's: its stable type when it is one of
/// Hecate's, otherwise a gateway error naming the run's own type.
fn run_error(run: &TaskRun) -> HecateError {
    let code = run.error_type.clone().unwrap_or_else(|| "failed".into());
    let message = run
        .error_message
        .clone()
        .unwrap_or_else(|| format!("task run {} ended {}", run.id, run.status.as_str()));
    let known = serde_json::from_value::<ErrorType>(Value::String(code.clone())).ok();
    HecateError::new(known.unwrap_or(ErrorType::GatewayError), message)
        .with_detail("task_id", run.task_id.as_str())
        .with_detail("task_run_id", run.id.as_str())
        .with_detail("task_error_type", code)
}
