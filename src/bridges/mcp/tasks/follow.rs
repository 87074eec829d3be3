//! Following a task run for an MCP caller: its events become
//! `notifications/progress` (when the request has a progressToken) until the
//! run ends or waits for an approval nobody here can answer. A caller that
//! waits and declared the elicitation capability is asked about the run's
//! pending approvals (`task_elicit.rs`) while the events keep flowing, and the
//! answer resolves them. When the caller asked to wait and no worker runs in
//! this process (`hecate mcp` on stdio), one is started for the duration of
//! the call, so a stdio client can run a task end to end without
//! `hecate serve`.

use super::args::{ArtifactSummary, RunStateOut};
use super::elicit::{TaskVerdict, ask_task};
use crate::bridges::mcp::elicit::Reach;
use crate::bridges::mcp::modern::progress::progress_target;
use crate::bridges::mcp::server::HecateMcp;
use crate::bridges::resources::tasks::{TaskApprovalDto, TaskRunDto, TaskStepDto};
use crate::domain::error::Result;
use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
use crate::domain::task::TaskEventFilter;
use crate::domain::task::{TaskApproval, TaskApprovalStatus, TaskEvent, TaskRunStatus};
use futures::future::BoxFuture;
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use std::collections::HashSet;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a follower re-reads the store when nothing woke it (events of
/// workers in other processes only reach it this way).
const POLL: Duration = Duration::from_millis(250);

/// Events read per store page.
const PAGE: usize = 500;

/// Longest event data shown in a progress message, in characters.
const MESSAGE_DATA_CHARS: usize = 300;

/// A progress message for a run event: its type and compact data.
fn describe(e: &TaskEvent) -> String {
    let data = match &e.data {
        serde_json::Value::Null => String::new(),
        serde_json::Value::Object(m) if m.is_empty() => String::new(),
        d => d.to_string(),
    };
    if data.is_empty() {
        return e.event_type.clone();
    }
    let mut chars = data.chars();
    let shown: String = chars.by_ref().take(MESSAGE_DATA_CHARS).collect();
    let more = if chars.next().is_some() { "…" } else { "" };
    format!("{} {shown}{more}", e.event_type)
}

/// How a call follows a run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Follow {
    /// Wait until the run ends or waits for an approval nobody here answers,
    /// running workers here for the call when none run in this process.
    pub wait: bool,
    /// Whether cancelling the request cancels the run; otherwise it only stops
    /// following it.
    pub cancel_with_request: bool,
}

impl Follow {
    /// How a call that started the run follows it: waiting when asked to, and a
    /// cancelled request cancels the run.
    pub(crate) fn started(wait: Option<bool>) -> Self {
        Self {
            wait: wait.unwrap_or(false),
            cancel_with_request: true,
        }
    }
}

/// An approval question put to the client: how to take it back, and its answer.
type Asking = (
    CancellationToken,
    BoxFuture<'static, (TaskApproval, TaskVerdict)>,
);

/// What a run waiting for `pending` tells the caller to do.
fn approval_hint(run: &TaskRunId, pending: &[String]) -> String {
    format!(
        "run {run} waits for approval {}; resolve_task_approval (task_id, approval_id, decision approve or reject) resolves it",
        pending.join(", ")
    )
}

impl HecateMcp {
    /// A run with its steps, artifact summaries and approvals; a run waiting
    /// for an approval also names the pending ones and how to resolve them.
    pub(crate) async fn run_state(&self, task: &TaskId, run: &TaskRunId) -> Result<RunStateOut> {
        let tasks = self.engine.tasks();
        let r = tasks.get_run(self.ns(), task, run).await?;
        let steps = tasks.list_steps(self.ns(), task, run).await?;
        let artifacts = tasks.list_artifacts(self.ns(), task, Some(run)).await?;
        let approvals: Vec<TaskApproval> = tasks
            .list_approvals(self.ns(), task)
            .await?
            .into_iter()
            .filter(|a| &a.run_id == run)
            .collect();
        let pending: Vec<String> = approvals
            .iter()
            .filter(|a| a.status == TaskApprovalStatus::Pending)
            .map(|a| a.id.to_string())
            .collect();
        let waiting = r.status == TaskRunStatus::AwaitingApproval && !pending.is_empty();
        Ok(RunStateOut {
            run: TaskRunDto::from(&r),
            steps: steps.iter().map(TaskStepDto::from).collect(),
            artifacts: artifacts.iter().map(ArtifactSummary::from).collect(),
            approvals: approvals.iter().map(TaskApprovalDto::from).collect(),
            hint: waiting.then(|| approval_hint(run, &pending)),
            pending_approval_ids: pending,
        })
    }

    /// Follows a run: with `wait`, until it ends or waits for an approval
    /// nobody here answers (starting a worker here for the call when none runs
    /// in this process); without, only when the request has a progressToken and
    /// a worker runs here. Events are sent as progress when there is a token.
    /// A waiting caller that supports elicitation is asked about each pending
    /// approval of the run once, while the events keep flowing.
    pub(crate) async fn follow_run(
        &self,
        task: &TaskId,
        run: &TaskRunId,
        how: Follow,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<()> {
        let tasks = self.engine.tasks();
        let here = tasks.workers_running();
        let follow = how.wait || (progress_target(ctx).is_some() && here);
        if !follow {
            return Ok(());
        }
        let elicit = how.wait && Reach::of(ctx).is_some();
        // Workers started for this call, stopped when it ends, however it ends.
        let mut local_workers = None;
        let mut wake = tasks.subscribe();
        let mut filter = TaskEventFilter {
            namespace: self.ns().to_string(),
            task_id: Some(task.clone()),
            run_id: Some(run.clone()),
            limit: PAGE,
            ..Default::default()
        };
        let mut progress = 0.0_f64;
        let mut cancelled = false;
        // The request was cancelled and the run goes on without this caller.
        let mut stopped = false;
        let mut asked: HashSet<TaskApprovalId> = HashSet::new();
        let mut asking: Option<Asking> = None;
        loop {
            // Checked on every round: workers of an earlier call may still be
            // on their way out when this one starts.
            if how.wait && local_workers.is_none() && !tasks.workers_running() {
                let stop = CancellationToken::new();
                tasks.start_workers(stop.clone());
                local_workers = Some(stop.drop_guard());
            }
            // Read before the page: a run already over has all its events in it.
            let status = tasks.get_run(self.ns(), task, run).await?.status;
            let page = tasks.list_events(filter.clone()).await?;
            for e in &page {
                filter.after_sequence = e.sequence;
                // Looked up each time: a call in rounds reports to the current round.
                if let Some((peer, token)) = progress_target(ctx) {
                    progress += 1.0;
                    let p =
                        ProgressNotificationParam::new(token, progress).with_message(describe(e));
                    if peer.notify_progress(p).await.is_err() {
                        tracing::debug!("task progress could not be delivered");
                    }
                }
            }
            if page.len() == PAGE {
                continue;
            }
            let waiting = status == TaskRunStatus::AwaitingApproval;
            match &asking {
                // Answered elsewhere, or nobody waits for the answer any more.
                Some((withdraw, _)) if !waiting || stopped => withdraw.cancel(),
                Some(_) => {}
                None if status.is_terminal() || stopped => return Ok(()),
                None if waiting => {
                    let next = if elicit {
                        self.unasked_approval(task, run, &asked).await?
                    } else {
                        None
                    };
                    let Some(approval) = next else {
                        return Ok(());
                    };
                    asked.insert(approval.id.clone());
                    asking = Some(self.ask_about(approval, ctx));
                }
                None => {}
            }
            tokio::select! {
                _ = wake.recv() => {}
                _ = tokio::time::sleep(POLL) => {}
                (approval, verdict) = async {
                    match asking.as_mut() {
                        Some((_, answer)) => answer.await,
                        None => std::future::pending().await,
                    }
                } => {
                    asking = None;
                    self.apply_verdict(&approval, verdict).await?;
                }
                _ = ctx.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    if !how.cancel_with_request {
                        stopped = true;
                    } else if let Err(e) = tasks.cancel(self.ns(), task, run).await {
                        tracing::debug!(error = %e, "cancel after the MCP request was cancelled");
                    }
                }
            }
        }
    }

    /// The first pending approval of the run not asked about yet.
    async fn unasked_approval(
        &self,
        task: &TaskId,
        run: &TaskRunId,
        asked: &HashSet<TaskApprovalId>,
    ) -> Result<Option<TaskApproval>> {
        let approvals = self.engine.tasks().list_approvals(self.ns(), task).await?;
        Ok(approvals.into_iter().find(|a| {
            &a.run_id == run && a.status == TaskApprovalStatus::Pending && !asked.contains(&a.id)
        }))
    }

    /// Puts `approval` to the client, at most for the approval timeout.
    fn ask_about(&self, approval: TaskApproval, ctx: &RequestContext<RoleServer>) -> Asking {
        let withdraw = CancellationToken::new();
        let reach = Reach::of(ctx);
        let timeout = self.engine.config().approval_timeout;
        let stop = withdraw.clone();
        let answer = Box::pin(async move {
            let verdict = match reach {
                Some(reach) => ask_task(&reach, &approval, timeout, &stop).await,
                None => TaskVerdict::Unanswered,
            };
            (approval, verdict)
        });
        (withdraw, answer)
    }

    /// Resolves `approval` as the client's user decided; an approval resolved
    /// elsewhere first is left as it is.
    async fn apply_verdict(&self, approval: &TaskApproval, verdict: TaskVerdict) -> Result<()> {
        let (approve, note) = match verdict {
            TaskVerdict::Approve(note) => (true, note),
            TaskVerdict::Reject(note) => (false, Some(note)),
            TaskVerdict::Unanswered | TaskVerdict::Withdrawn => return Ok(()),
        };
        self.engine
            .tasks()
            .answer_approval(self.ns(), approval, approve, note)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(data: serde_json::Value) -> TaskEvent {
        TaskEvent {
            sequence: 1,
            task_id: TaskId::from("task_1"),
            run_id: TaskRunId::from("trun_1"),
            event_type: "step.finished".into(),
            data,
            occurred_at: String::new(),
        }
    }

    #[test]
    fn a_waiting_run_names_its_approvals_and_the_tool_that_resolves_them() {
        let hint = approval_hint(
            &TaskRunId::from("trun_1"),
            &["tappr_1".to_string(), "tappr_2".to_string()],
        );
        for part in ["trun_1", "tappr_1, tappr_2", "resolve_task_approval"] {
            assert!(hint.contains(part), "{part} in {hint}");
        }
    }

    #[test]
    fn progress_messages_name_the_event_and_cap_its_data() {
        assert_eq!(describe(&event(json!({}))), "step.finished");
        assert_eq!(
            describe(&event(json!({"exit_code": 0}))),
            "step.finished {\"exit_code\":0}"
        );
        let long = describe(&event(json!({"x": "y".repeat(1000)})));
        assert!(long.ends_with('…'), "{long}");
        assert!(long.chars().count() < 400, "{long}");
    }
}
