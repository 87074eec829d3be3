//! A run as it is now, in one read: the run, its steps, its artifacts (their
//! text cut to a preview), its approvals and its activity timeline. The run's
//! stream sends it with every frame, so a client follows a run without refetching.

use super::TaskRuntime;
use crate::domain::error::Result;
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::{
    TaskActivityItem, TaskApproval, TaskArtifact, TaskEventFilter, TaskRun, TaskStep,
    project_activity,
};

/// The most bytes of an artifact's text a view carries: the end of captured
/// output, the start of anything else.
pub const ARTIFACT_PREVIEW_BYTES: usize = 4 * 1024;

/// Events read per page while building the timeline.
const EVENT_PAGE: usize = 5000;

/// A run with everything a person watching it needs.
#[derive(Debug, Clone)]
pub struct RunView {
    /// The run.
    pub run: TaskRun,
    /// Its steps, in order.
    pub steps: Vec<TaskStep>,
    /// Its artifacts; a text over [`ARTIFACT_PREVIEW_BYTES`] is cut and marked
    /// `truncated`.
    pub artifacts: Vec<TaskArtifact>,
    /// The approvals asked in this run.
    pub approvals: Vec<TaskApproval>,
    /// The compact timeline.
    pub activity: Vec<TaskActivityItem>,
}

/// `a` with its content cut to the preview.
fn preview(mut a: TaskArtifact) -> TaskArtifact {
    let len = a.content.len();
    if len <= ARTIFACT_PREVIEW_BYTES {
        return a;
    }
    let output = a.kind == "stdout" || a.kind == "stderr";
    let mut at = if output {
        len - ARTIFACT_PREVIEW_BYTES
    } else {
        ARTIFACT_PREVIEW_BYTES
    };
    while !a.content.is_char_boundary(at) {
        at = if output { at + 1 } else { at - 1 };
    }
    a.content = if output {
        a.content[at..].to_string()
    } else {
        a.content[..at].to_string()
    };
    a.truncated = true;
    a
}

impl TaskRuntime {
    /// The run `run_id` of task `id` as it is now; 404 when either is unknown.
    pub async fn run_view(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<RunView> {
        let run = self.get_run(namespace, id, run_id).await?;
        let store = self.store();
        let steps = store.list_task_steps(run_id).await?;
        let artifacts = store.list_task_artifacts(id, Some(run_id)).await?;
        let mut approvals = store.list_task_approvals(id).await?;
        approvals.retain(|a| &a.run_id == run_id);
        let mut events = Vec::new();
        let mut filter = TaskEventFilter {
            namespace: namespace.to_string(),
            task_id: Some(id.clone()),
            run_id: Some(run_id.clone()),
            event_types: Vec::new(),
            after_sequence: 0,
            limit: EVENT_PAGE,
            newest_first: false,
        };
        loop {
            let page = store.list_task_events(filter.clone()).await?;
            let full = page.len() == EVENT_PAGE;
            if let Some(last) = page.last() {
                filter.after_sequence = last.sequence;
            }
            events.extend(page);
            if !full {
                break;
            }
        }
        let activity = project_activity(&run, &events, &approvals);
        Ok(RunView {
            run,
            steps,
            artifacts: artifacts.into_iter().map(preview).collect(),
            approvals,
            activity,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{TaskArtifactId, TaskId, TaskRunId};

    fn artifact(kind: &str, content: String) -> TaskArtifact {
        TaskArtifact {
            id: TaskArtifactId::from("tart_1"),
            task_id: TaskId::from("task_1"),
            run_id: TaskRunId::from("trun_1"),
            step_id: None,
            kind: kind.into(),
            name: "x".into(),
            size_bytes: content.len() as i64,
            content,
            truncated: false,
            status: None,
            created_at: "t".into(),
        }
    }

    #[test]
    fn output_keeps_its_end_and_other_text_its_start() {
        let long = format!("{}é{}", "a".repeat(ARTIFACT_PREVIEW_BYTES), "z".repeat(100));
        let out = preview(artifact("stdout", long.clone()));
        assert!(
            out.truncated
                && out.content.ends_with('z')
                && out.content.len() <= ARTIFACT_PREVIEW_BYTES
        );
        let patch = preview(artifact("patch", long));
        assert!(patch.truncated && patch.content.starts_with('a'));
        assert!(patch.content.len() <= ARTIFACT_PREVIEW_BYTES);
        let short = preview(artifact("stdout", "hi".into()));
        assert!(!short.truncated && short.content == "hi");
    }
}
