//! Activities: the compact, human-facing projection of a run's events.

use crate::domain::plan::{self, PlanEntry};
use crate::domain::run::{RunEvent, RunStatus};
use serde::{Deserialize, Serialize};

/// One row of the compact timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    /// `thinking`, `tool_call`, `plan`, `approval`, `files_changed`,
    /// `final_answer`, `run_result`, `files_reverted` or `output_capped`; external-agent turns also `started`,
    /// `running`, `output`, `completed`, `failed` and `cancelled`.
    #[serde(rename = "type")]
    pub activity_type: String,
    /// `running`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Short title.
    pub title: String,
    /// Optional detail line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the first event behind this row happened.
    pub created_at: String,
}

/// Projects a run's ordered events (and its terminal status) into activities:
/// consecutive thought deltas fold into one `thinking` row, tool calls into one row
/// each, plans into one `plan` row showing the latest, file changes into one
/// `files_changed` row, text into `final_answer`.
pub fn project(events: &[RunEvent], status: RunStatus) -> Vec<Activity> {
    let mut out: Vec<Activity> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut files_at: Option<String> = None;
    let mut answer_at: Option<String> = None;
    let mut reverts: Vec<Activity> = Vec::new();
    let mut last_turn_event: Option<&RunEvent> = None;
    for e in events {
        if e.event_type == "files_reverted" {
            // A revert comes after the turn ended; it is its own row, last.
            let paths: Vec<&str> = e.data["paths"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str())
                .collect();
            reverts.push(Activity {
                activity_type: "files_reverted".into(),
                status: "completed".into(),
                title: "Files reverted".into(),
                detail: Some(format!(
                    "{} file(s) reverted: {}",
                    paths.len(),
                    paths.join(", ")
                )),
                created_at: e.occurred_at.clone(),
            });
            continue;
        }
        last_turn_event = Some(e);
        match e.event_type.as_str() {
            "thought_delta" if out.last().map(|a| a.activity_type.as_str()) != Some("thinking") => {
                out.push(Activity {
                    activity_type: "thinking".into(),
                    status: "completed".into(),
                    title: "Thinking".into(),
                    detail: None,
                    created_at: e.occurred_at.clone(),
                });
            }
            "tool_call_started" => out.push(Activity {
                activity_type: "tool_call".into(),
                status: "running".into(),
                title: e.data["name"].as_str().unwrap_or("tool").to_string(),
                detail: e.data["id"].as_str().map(str::to_string),
                created_at: e.occurred_at.clone(),
            }),
            "tool_call_updated" => {
                let id = e.data["id"].as_str();
                if let (Some(id), Some(st)) = (id, e.data["status"].as_str())
                    && let Some(row) = out
                        .iter_mut()
                        .rev()
                        .find(|a| a.activity_type == "tool_call" && a.detail.as_deref() == Some(id))
                {
                    row.status = st.to_string();
                }
            }
            "plan" => {
                let entries: Vec<PlanEntry> =
                    serde_json::from_value(e.data["entries"].clone()).unwrap_or_default();
                let status = if plan::is_done(&entries) {
                    "completed"
                } else {
                    "running"
                };
                let detail = Some(plan::summary(&entries));
                match out.iter_mut().find(|a| a.activity_type == "plan") {
                    Some(row) => {
                        row.status = status.into();
                        row.detail = detail;
                    }
                    None => out.push(Activity {
                        activity_type: "plan".into(),
                        status: status.into(),
                        title: "Plan".into(),
                        detail,
                        created_at: e.occurred_at.clone(),
                    }),
                }
            }
            "file_changed" => {
                if let Some(p) = e.data["path"].as_str()
                    && !files.iter().any(|f| f == p)
                {
                    files.push(p.to_string());
                }
                files_at.get_or_insert_with(|| e.occurred_at.clone());
            }
            "text_delta" => {
                answer_at.get_or_insert_with(|| e.occurred_at.clone());
            }
            "output_capped" => out.push(Activity {
                activity_type: "output_capped".into(),
                status: "completed".into(),
                title: "Output cut".into(),
                detail: Some(format!(
                    "the text passed the per-turn limit of {} bytes; the rest was dropped",
                    e.data["limit_bytes"].as_u64().unwrap_or_default()
                )),
                created_at: e.occurred_at.clone(),
            }),
            _ => {}
        }
    }
    if let Some(at) = files_at {
        out.push(Activity {
            activity_type: "files_changed".into(),
            status: "completed".into(),
            title: "Files changed".into(),
            detail: Some(format!("{} file(s) changed", files.len())),
            created_at: at,
        });
    }
    if let Some(at) = answer_at {
        out.push(Activity {
            activity_type: "final_answer".into(),
            status: if status == RunStatus::Completed {
                "completed".into()
            } else {
                status.as_str().into()
            },
            title: "Final answer".into(),
            detail: None,
            created_at: at,
        });
    }
    if status.is_terminal() {
        out.push(Activity {
            activity_type: "run_result".into(),
            status: status.as_str().into(),
            title: format!("Run {}", status.as_str()),
            detail: None,
            created_at: last_turn_event
                .map(|e| e.occurred_at.clone())
                .unwrap_or_default(),
        });
    }
    out.extend(reverts);
    out
}

/// Who ran an external-agent turn and how it ended, for its lifecycle rows.
#[derive(Debug, Clone, Copy)]
pub struct ExternalTurn<'a> {
    /// The adapter's display name.
    pub adapter_name: &'a str,
    /// The workspace it ran in.
    pub workspace: &'a str,
    /// When the turn started.
    pub started_at: &'a str,
    /// The failure message of a failed turn.
    pub error: Option<&'a str>,
}

/// The activities of an external-agent turn in the seed's lifecycle vocabulary:
/// `started`, the rows of [`project`] (thinking, tool calls, files changed) with
/// the agent's text as `output`, then `running` while the turn goes on or its
/// end (`completed`, `failed` or `cancelled`), then any `files_reverted`.
pub fn project_external(
    events: &[RunEvent],
    status: RunStatus,
    turn: ExternalTurn<'_>,
) -> Vec<Activity> {
    let mut rows = vec![Activity {
        activity_type: "started".into(),
        status: "completed".into(),
        title: "Starting external agent".into(),
        detail: Some(format!("{} in {}", turn.adapter_name, turn.workspace)),
        created_at: turn.started_at.to_string(),
    }];
    for row in project(events, status) {
        match row.activity_type.as_str() {
            "final_answer" => rows.push(Activity {
                activity_type: "output".into(),
                title: "Agent output".into(),
                ..row
            }),
            "run_result" => {
                let (kind, title) = match status {
                    RunStatus::Failed => ("failed", "Run failed"),
                    RunStatus::Cancelled => ("cancelled", "Cancelled"),
                    _ => ("completed", "Final answer"),
                };
                rows.push(Activity {
                    activity_type: kind.into(),
                    status: status.as_str().into(),
                    title: title.into(),
                    detail: turn.error.map(str::to_string),
                    ..row
                });
            }
            _ => rows.push(row),
        }
    }
    if !status.is_terminal() {
        rows.push(Activity {
            activity_type: "running".into(),
            status: "running".into(),
            title: "Agent working".into(),
            detail: None,
            created_at: events
                .last()
                .map_or_else(|| turn.started_at.to_string(), |e| e.occurred_at.clone()),
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::RunId;
    use serde_json::json;

    fn ev(seq: i64, t: &str, data: serde_json::Value) -> RunEvent {
        RunEvent {
            run_id: RunId::from("run_x"),
            sequence: seq,
            event_type: t.into(),
            data,
            occurred_at: format!("2026-01-01T00:00:{seq:02}Z"),
        }
    }

    #[test]
    fn folds_events_into_compact_rows() {
        let events = vec![
            ev(1, "thought_delta", json!({"text": "a"})),
            ev(2, "thought_delta", json!({"text": "b"})),
            ev(
                3,
                "tool_call_started",
                json!({"id": "t1", "name": "Edit a.rs"}),
            ),
            ev(
                4,
                "tool_call_updated",
                json!({"id": "t1", "status": "completed"}),
            ),
            ev(
                5,
                "file_changed",
                json!({"path": "a.rs", "change": "modified"}),
            ),
            ev(6, "text_delta", json!({"text": "done"})),
        ];
        let rows = project(&events, RunStatus::Completed);
        let kinds: Vec<_> = rows.iter().map(|r| r.activity_type.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "thinking",
                "tool_call",
                "files_changed",
                "final_answer",
                "run_result"
            ]
        );
        assert_eq!(rows[1].status, "completed");
    }

    #[test]
    fn plans_fold_into_one_row_showing_the_latest() {
        let entry =
            |status: &str| json!({"content": "Edit a.rs", "priority": "high", "status": status});
        let events = vec![
            ev(
                1,
                "plan",
                json!({"type": "plan", "entries": [entry("in_progress")]}),
            ),
            ev(
                2,
                "tool_call_started",
                json!({"id": "t1", "name": "Edit a.rs"}),
            ),
            ev(
                3,
                "plan",
                json!({"type": "plan", "entries": [entry("completed")]}),
            ),
        ];
        let rows = project(&events[..1], RunStatus::Running);
        assert_eq!(
            (rows[0].activity_type.as_str(), rows[0].status.as_str()),
            ("plan", "running")
        );
        assert_eq!(
            rows[0].detail.as_deref(),
            Some("0 of 1 done; now: Edit a.rs")
        );
        let rows = project(&events, RunStatus::Completed);
        let kinds: Vec<_> = rows.iter().map(|r| r.activity_type.as_str()).collect();
        assert_eq!(kinds, ["plan", "tool_call", "run_result"]);
        assert_eq!(
            (
                rows[0].status.as_str(),
                rows[0].detail.as_deref(),
                rows[0].created_at.as_str()
            ),
            ("completed", Some("1 of 1 done"), "2026-01-01T00:00:01Z")
        );
    }

    #[test]
    fn an_external_turn_reads_as_started_output_and_its_end() {
        let turn = ExternalTurn {
            adapter_name: "Codex",
            workspace: "/ws",
            started_at: "2026-01-01T00:00:00Z",
            error: None,
        };
        let events = vec![
            ev(1, "tool_call_started", json!({"id": "t1", "name": "Edit"})),
            ev(
                2,
                "file_changed",
                json!({"path": "a.rs", "change": "modified"}),
            ),
            ev(3, "text_delta", json!({"text": "done"})),
            ev(9, "files_reverted", json!({"paths": ["a.rs"]})),
        ];
        let kinds = |rows: Vec<Activity>| -> Vec<String> {
            rows.into_iter().map(|r| r.activity_type).collect()
        };
        assert_eq!(
            kinds(project_external(&events, RunStatus::Completed, turn)),
            [
                "started",
                "tool_call",
                "files_changed",
                "output",
                "completed",
                "files_reverted"
            ]
        );
        let rows = project_external(&events[..1], RunStatus::Running, turn);
        assert_eq!(kinds(rows.clone()), ["started", "tool_call", "running"]);
        assert_eq!(rows[0].detail.as_deref(), Some("Codex in /ws"));
        let failed = ExternalTurn {
            error: Some("agent exited"),
            ..turn
        };
        let rows = project_external(&events[..1], RunStatus::Failed, failed);
        let last = rows.last().expect("end");
        assert_eq!(
            (
                last.activity_type.as_str(),
                last.status.as_str(),
                last.detail.as_deref()
            ),
            ("failed", "failed", Some("agent exited"))
        );
        let rows = project_external(&[], RunStatus::Cancelled, turn);
        assert_eq!(kinds(rows), ["started", "cancelled"]);
    }

    #[test]
    fn a_revert_after_the_turn_is_its_own_last_row() {
        let events = vec![
            ev(
                1,
                "file_changed",
                json!({"path": "a.rs", "change": "modified"}),
            ),
            ev(2, "text_delta", json!({"text": "done"})),
            ev(9, "files_reverted", json!({"paths": ["a.rs"]})),
        ];
        let rows = project(&events, RunStatus::Completed);
        let kinds: Vec<_> = rows.iter().map(|r| r.activity_type.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "files_changed",
                "final_answer",
                "run_result",
                "files_reverted"
            ]
        );
        assert_eq!(rows[2].created_at, "2026-01-01T00:00:02Z", "the turn's end");
        assert_eq!(rows[3].detail.as_deref(), Some("1 file(s) reverted: a.rs"));
    }
}
