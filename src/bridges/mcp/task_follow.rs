//! Following a task run for an MCP caller: its events become
//! `notifications/progress` (when the request has a progressToken) until the
//! run ends or waits for an approval. When the caller asked to wait and no
//! worker runs in this process (`hecate mcp` on stdio), one is started for the
//! duration of the call, so a stdio client can run a task end to end without
//! `hecate serve`.

use super::server::HecateMcp;
use super::task_args::{ArtifactSummary, RunStateOut};
use crate::bridges::http::wire::tasks::{TaskApprovalDto, TaskRunDto, TaskStepDto};
use crate::domain::error::Result;
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::TaskEventFilter;
use crate::domain::task::{TaskEvent, TaskRunStatus};
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
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

impl HecateMcp {
    /// A run with its steps, artifact summaries and approvals.
    pub(crate) async fn run_state(&self, task: &TaskId, run: &TaskRunId) -> Result<RunStateOut> {
        let tasks = self.engine.tasks();
        let r = tasks.get_run(self.ns(), task, run).await?;
        let steps = tasks.list_steps(self.ns(), task, run).await?;
        let artifacts = tasks.list_artifacts(self.ns(), task, Some(run)).await?;
        let approvals = tasks.list_approvals(self.ns(), task).await?;
        Ok(RunStateOut {
            run: TaskRunDto::from(&r),
            steps: steps.iter().map(TaskStepDto::from).collect(),
            artifacts: artifacts.iter().map(ArtifactSummary::from).collect(),
            approvals: approvals
                .iter()
                .filter(|a| &a.run_id == run)
                .map(TaskApprovalDto::from)
                .collect(),
        })
    }

    /// Follows a run: with `wait`, until it ends or waits for an approval
    /// (starting a worker here for the call when none runs in this process);
    /// without, only when the request has a progressToken and a worker runs
    /// here. Events are sent as progress when there is a token; cancelling the
    /// request cancels the run.
    pub(crate) async fn follow_run(
        &self,
        task: &TaskId,
        run: &TaskRunId,
        wait: bool,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<()> {
        let tasks = self.engine.tasks();
        let token = ctx.meta.get_progress_token();
        let here = tasks.workers_running();
        let follow = wait || (token.is_some() && here);
        if !follow {
            return Ok(());
        }
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
        loop {
            // Checked on every round: workers of an earlier call may still be
            // on their way out when this one starts.
            if wait && local_workers.is_none() && !tasks.workers_running() {
                let stop = CancellationToken::new();
                tasks.start_workers(stop.clone());
                local_workers = Some(stop.drop_guard());
            }
            // Read before the page: a run already over has all its events in it.
            let status = tasks.get_run(self.ns(), task, run).await?.status;
            let page = tasks.list_events(filter.clone()).await?;
            for e in &page {
                filter.after_sequence = e.sequence;
                if let Some(token) = &token {
                    progress += 1.0;
                    let p = ProgressNotificationParam::new(token.clone(), progress)
                        .with_message(describe(e));
                    if ctx.peer.notify_progress(p).await.is_err() {
                        tracing::debug!("task progress could not be delivered");
                    }
                }
            }
            if page.len() == PAGE {
                continue;
            }
            if status.is_terminal() || status == TaskRunStatus::AwaitingApproval {
                return Ok(());
            }
            tokio::select! {
                _ = wake.recv() => {}
                _ = tokio::time::sleep(POLL) => {}
                _ = ctx.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    if let Err(e) = tasks.cancel(self.ns(), task, run).await {
                        tracing::debug!(error = %e, "cancel after the MCP request was cancelled");
                    }
                }
            }
        }
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
