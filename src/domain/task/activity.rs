//! A run's compact timeline (the seed's `TaskActivityItem`s): its events folded
//! into the rows a person reads — the model's words between tool calls, tool
//! calls and command steps, patches, approvals (with `needs_action` while one
//! waits), the files changed, the final answer and the run's result.

use super::approval::{TaskApproval, TaskApprovalStatus};
use super::run::{TaskEvent, TaskRun};
use super::tool_title::tool_title;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// The most characters of text (an answer, a tool's result) a row carries.
const DETAIL_CHARS: usize = 2000;

/// One row of a run's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct TaskActivityItem {
    /// Stable within the run: the tool call, step, approval or artifact id it
    /// follows, or the type for the rows a run has once.
    pub id: String,
    /// `thinking`, `tool_call`, `patch`, `approval`, `changed_files`,
    /// `final_answer` or `run_result`.
    #[serde(rename = "type")]
    pub activity_type: String,
    /// `running`, `completed`, `failed`, `cancelled`, `pending`, `approved`,
    /// `rejected`, or for a patch `applied`, `proposed` or `reverted`.
    pub status: String,
    /// Short title.
    pub title: String,
    /// More text: what the model said, a result, a reason, an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The approval a row of type `approval` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// Whether a person must decide before the run goes on.
    pub needs_action: bool,
    /// The patch or answer artifact behind the row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// The step behind the row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// Workspace paths the row is about.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// When its first event happened.
    pub created_at: String,
    /// The sequence of the last event that changed it.
    pub sequence: i64,
}

impl TaskActivityItem {
    fn new(id: impl Into<String>, kind: &str, status: &str, title: String, e: &TaskEvent) -> Self {
        Self {
            id: id.into(),
            activity_type: kind.to_string(),
            status: status.to_string(),
            title,
            detail: None,
            approval_id: None,
            needs_action: false,
            artifact_id: None,
            step_id: None,
            paths: Vec::new(),
            created_at: e.occurred_at.clone(),
            sequence: e.sequence,
        }
    }
}

fn text<'a>(d: &'a Value, key: &str) -> &'a str {
    d[key].as_str().unwrap_or_default()
}

/// `s` cut to [`DETAIL_CHARS`] characters, `None` when empty.
fn detail(s: &str) -> Option<String> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    match s.char_indices().nth(DETAIL_CHARS) {
        Some((at, _)) => Some(format!("{}…", &s[..at])),
        None => Some(s.to_string()),
    }
}

/// The timeline of `run` from its events (oldest first) and its approvals
/// (whose stored status wins over the events: a cancelled run cancels its
/// pending gate without an event of its own).
pub fn project_activity(
    run: &TaskRun,
    events: &[TaskEvent],
    approvals: &[TaskApproval],
) -> Vec<TaskActivityItem> {
    let mut rows: Vec<TaskActivityItem> = Vec::new();
    let mut changed: Vec<String> = Vec::new();
    let find = |rows: &mut Vec<TaskActivityItem>, id: &str| rows.iter().rposition(|r| r.id == id);
    for e in events.iter().filter(|e| e.run_id == run.id) {
        let d = &e.data;
        match e.event_type.as_str() {
            "turn.completed" => {
                let calls = d["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
                if calls && let Some(said) = detail(text(d, "text")) {
                    let turn = d["turn"].as_u64().unwrap_or(0);
                    let mut row = TaskActivityItem::new(
                        format!("turn_{turn}"),
                        "thinking",
                        "completed",
                        format!("Model turn {turn}"),
                        e,
                    );
                    row.detail = Some(said);
                    row.step_id = d["step_id"].as_str().map(String::from);
                    rows.push(row);
                }
            }
            "tool.call.started" => {
                let id = text(d, "tool_call_id");
                if text(d, "tool") == "update_plan" {
                    continue;
                }
                let title = tool_title(text(d, "tool"), &d["arguments"]);
                match find(&mut rows, id) {
                    Some(i) => {
                        rows[i].status = "running".into();
                        rows[i].title = title;
                        rows[i].sequence = e.sequence;
                    }
                    None => {
                        let mut row = TaskActivityItem::new(id, "tool_call", "running", title, e);
                        row.step_id = d["step_id"].as_str().map(String::from);
                        if let Some(p) = d["arguments"]["path"].as_str() {
                            row.paths.push(p.to_string());
                        }
                        rows.push(row);
                    }
                }
            }
            "tool.call.finished" | "tool.call.refused" | "tool.call.interrupted" => {
                if let Some(i) = find(&mut rows, text(d, "tool_call_id")) {
                    let failed = e.event_type != "tool.call.finished"
                        || d["is_error"].as_bool().unwrap_or(false);
                    rows[i].status = if failed { "failed" } else { "completed" }.into();
                    rows[i].detail = match e.event_type.as_str() {
                        "tool.call.finished" => detail(text(d, "result")),
                        "tool.call.refused" => Some(match d["note"].as_str() {
                            Some(n) if !n.is_empty() => format!("refused: {n}"),
                            _ => "refused".to_string(),
                        }),
                        _ => Some("interrupted".to_string()),
                    };
                    rows[i].sequence = e.sequence;
                }
            }
            "step.started" if matches!(text(d, "kind"), "shell" | "git" | "file") => {
                let mut row = TaskActivityItem::new(
                    text(d, "step_id"),
                    "tool_call",
                    "running",
                    format!("{} step {}", text(d, "kind"), d["index"]),
                    e,
                );
                row.step_id = d["step_id"].as_str().map(String::from);
                rows.push(row);
            }
            "step.finished" | "step.failed" | "step.cancelled" => {
                if let Some(i) = find(&mut rows, text(d, "step_id")) {
                    rows[i].status = text(d, "status").to_string();
                    rows[i].detail = match (d["exit_code"].as_i64(), d["error_message"].as_str()) {
                        (_, Some(m)) => Some(m.to_string()),
                        (Some(code), None) => Some(format!("exit code {code}")),
                        (None, None) => None,
                    };
                    rows[i].sequence = e.sequence;
                }
            }
            "tool.file.applied" | "tool.file.proposed" | "tool.file.reverted" => {
                let path = text(d, "path").to_string();
                let artifact = text(d, "artifact_id").to_string();
                let status = e.event_type.trim_start_matches("tool.file.");
                if !path.is_empty() && !changed.contains(&path) && status != "reverted" {
                    changed.push(path.clone());
                }
                match find(&mut rows, &artifact) {
                    Some(i) if !artifact.is_empty() => {
                        rows[i].status = status.to_string();
                        rows[i].sequence = e.sequence;
                    }
                    _ => {
                        let verb = match status {
                            "applied" => "Changed",
                            "proposed" => "Proposed a change to",
                            _ => "Reverted",
                        };
                        let mut row = TaskActivityItem::new(
                            artifact.clone(),
                            "patch",
                            status,
                            format!("{verb} {path}"),
                            e,
                        );
                        row.artifact_id = (!artifact.is_empty()).then_some(artifact);
                        row.paths.push(path);
                        rows.push(row);
                    }
                }
            }
            "approval.requested" => {
                let id = text(d, "approval_id");
                let mut row = TaskActivityItem::new(
                    id,
                    "approval",
                    "pending",
                    format!("Approval: {}", text(d, "kind")),
                    e,
                );
                row.detail = detail(text(d, "reason"));
                row.approval_id = Some(id.to_string());
                row.needs_action = true;
                rows.push(row);
            }
            "approval.resolved" => {
                if let Some(i) = find(&mut rows, text(d, "approval_id")) {
                    rows[i].status = text(d, "decision").to_string();
                    rows[i].needs_action = false;
                    if let Some(note) = d["note"].as_str().filter(|n| !n.is_empty()) {
                        rows[i].detail = Some(note.to_string());
                    }
                    rows[i].sequence = e.sequence;
                }
            }
            "agent.final_answer" => {
                let mut row = TaskActivityItem::new(
                    "final_answer",
                    "final_answer",
                    "completed",
                    "Final answer".into(),
                    e,
                );
                row.detail = detail(text(d, "text"));
                row.artifact_id = d["artifact_id"].as_str().map(String::from);
                rows.push(row);
            }
            "run.finished" | "run.failed" | "run.cancelled" => {
                if !changed.is_empty() {
                    let mut row = TaskActivityItem::new(
                        "changed_files",
                        "changed_files",
                        "completed",
                        format!("{} file(s) changed", changed.len()),
                        e,
                    );
                    row.paths = std::mem::take(&mut changed);
                    rows.push(row);
                }
                let status = text(d, "status");
                let mut row = TaskActivityItem::new(
                    "run_result",
                    "run_result",
                    status,
                    format!("Run {status}"),
                    e,
                );
                row.detail = d["error_message"].as_str().map(String::from);
                rows.push(row);
            }
            _ => {}
        }
    }
    for a in approvals.iter().filter(|a| a.run_id == run.id) {
        if let Some(row) = rows
            .iter_mut()
            .find(|r| r.approval_id.as_deref() == Some(a.id.as_str()))
        {
            row.status = a.status.as_str().to_string();
            row.needs_action = a.status == TaskApprovalStatus::Pending;
        }
    }
    // A row still running in a run that is over did not finish.
    if run.status.is_terminal() {
        for row in rows.iter_mut().filter(|r| r.status == "running") {
            row.status = "cancelled".into();
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
    use crate::domain::task::{TaskApprovalKind, TaskRunStatus};
    use serde_json::json;

    fn run(status: TaskRunStatus) -> TaskRun {
        serde_json::from_value(json!({
            "id": "trun_1", "task_id": "task_1", "number": 1, "status": status.as_str(),
            "total_cost_micros_usd": 0, "prior_cost_micros_usd": 0,
            "cancel_requested": false, "created_at": "t0"
        }))
        .expect("a run")
    }

    fn events(list: &[(&str, Value)]) -> Vec<TaskEvent> {
        list.iter()
            .enumerate()
            .map(|(i, (t, d))| TaskEvent {
                sequence: i as i64 + 1,
                task_id: TaskId::from("task_1"),
                run_id: TaskRunId::from("trun_1"),
                event_type: t.to_string(),
                occurred_at: format!("t{i}"),
                data: d.clone(),
            })
            .collect()
    }

    fn approval(status: TaskApprovalStatus) -> TaskApproval {
        TaskApproval {
            id: TaskApprovalId::from("tappr_1"),
            task_id: TaskId::from("task_1"),
            run_id: TaskRunId::from("trun_1"),
            kind: TaskApprovalKind::ShellCommand,
            status,
            reason: "run ls".into(),
            note: None,
            created_at: "t0".into(),
            resolved_at: None,
        }
    }

    #[test]
    fn a_gated_shell_run_reads_as_approval_step_and_result() {
        let evs = events(&[
            ("run.created", json!({})),
            (
                "approval.requested",
                json!({"approval_id": "tappr_1", "kind": "shell_exec", "reason": "run ls"}),
            ),
        ]);
        let waiting = project_activity(
            &run(TaskRunStatus::AwaitingApproval),
            &evs,
            &[approval(TaskApprovalStatus::Pending)],
        );
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].activity_type, "approval");
        assert_eq!(waiting[0].approval_id.as_deref(), Some("tappr_1"));
        assert!(waiting[0].needs_action);

        let evs = events(&[
            (
                "approval.requested",
                json!({"approval_id": "tappr_1", "kind": "shell_exec", "reason": "run ls"}),
            ),
            (
                "approval.resolved",
                json!({"approval_id": "tappr_1", "decision": "approved", "note": "ok"}),
            ),
            (
                "step.started",
                json!({"step_id": "tstep_1", "index": 1, "kind": "shell"}),
            ),
            (
                "step.finished",
                json!({"step_id": "tstep_1", "index": 1, "status": "completed", "exit_code": 0}),
            ),
            ("run.finished", json!({"status": "completed"})),
        ]);
        let done = project_activity(
            &run(TaskRunStatus::Completed),
            &evs,
            &[approval(TaskApprovalStatus::Approved)],
        );
        let kinds: Vec<_> = done
            .iter()
            .map(|r| (r.activity_type.as_str(), r.status.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("approval", "approved"),
                ("tool_call", "completed"),
                ("run_result", "completed")
            ]
        );
        assert!(!done[0].needs_action);
        assert_eq!(done[1].detail.as_deref(), Some("exit code 0"));
    }

    #[test]
    fn an_agent_run_reads_as_words_tools_patches_files_and_answer() {
        let evs = events(&[
            (
                "turn.completed",
                json!({"turn": 1, "text": "I will edit", "tool_calls": ["file_write"]}),
            ),
            (
                "tool.call.started",
                json!({"tool_call_id": "c1", "tool": "file_write", "arguments": {"path": "a.txt"}}),
            ),
            (
                "tool.file.applied",
                json!({"artifact_id": "tart_1", "path": "a.txt"}),
            ),
            (
                "tool.call.finished",
                json!({"tool_call_id": "c1", "result": "wrote a.txt"}),
            ),
            (
                "tool.call.started",
                json!({"tool_call_id": "c2", "tool": "update_plan", "arguments": {}}),
            ),
            (
                "tool.file.reverted",
                json!({"artifact_id": "tart_1", "path": "a.txt"}),
            ),
            (
                "turn.completed",
                json!({"turn": 2, "text": "done", "tool_calls": []}),
            ),
            (
                "agent.final_answer",
                json!({"artifact_id": "tart_2", "text": "done"}),
            ),
            ("run.finished", json!({"status": "completed"})),
        ]);
        let rows = project_activity(&run(TaskRunStatus::Completed), &evs, &[]);
        let kinds: Vec<_> = rows
            .iter()
            .map(|r| (r.activity_type.as_str(), r.status.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("thinking", "completed"),
                ("tool_call", "completed"),
                ("patch", "reverted"),
                ("final_answer", "completed"),
                ("changed_files", "completed"),
                ("run_result", "completed"),
            ]
        );
        assert_eq!(rows[1].title, "Write a.txt");
        assert_eq!(rows[2].artifact_id.as_deref(), Some("tart_1"));
        assert_eq!(rows[4].paths, ["a.txt"]);
    }

    #[test]
    fn a_cancelled_run_leaves_nothing_running_or_waiting() {
        let evs = events(&[
            (
                "approval.requested",
                json!({"approval_id": "tappr_1", "kind": "shell_exec"}),
            ),
            (
                "tool.call.started",
                json!({"tool_call_id": "c1", "tool": "shell_exec", "arguments": {"command": "sleep 9"}}),
            ),
            ("run.cancelled", json!({"status": "cancelled"})),
        ]);
        let rows = project_activity(
            &run(TaskRunStatus::Cancelled),
            &evs,
            &[approval(TaskApprovalStatus::Cancelled)],
        );
        assert_eq!(rows[0].status, "cancelled");
        assert!(!rows[0].needs_action);
        assert_eq!(rows[1].status, "cancelled");
        assert_eq!(rows[2].activity_type, "run_result");
    }

    #[test]
    fn long_text_is_cut() {
        let long = "x".repeat(DETAIL_CHARS + 10);
        assert_eq!(
            detail(&long).map(|d| d.chars().count()),
            Some(DETAIL_CHARS + 1)
        );
        assert_eq!(detail("  "), None);
    }
}
