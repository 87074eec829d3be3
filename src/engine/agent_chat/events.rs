//! Task events of an `agent_loop` run as the runtime events an Agent Chat turn
//! streams: tool calls, refusals, file changes and the model's words between
//! tool calls.

use crate::domain::event::RuntimeEvent;
use crate::domain::task::TaskEvent;
use serde_json::{Value, json};

/// The ACP-style kind of a built-in tool (`other` for MCP and unknown tools).
pub(super) fn tool_kind(tool: &str) -> &'static str {
    match tool {
        "read_file" | "list_dir" => "read",
        "file_write" | "file_edit" => "edit",
        "shell_exec" | "git_exec" => "execute",
        "http_request" => "fetch",
        _ => "other",
    }
}

fn text(data: &Value, key: &str) -> String {
    data[key].as_str().unwrap_or_default().to_string()
}

/// The runtime event a task event shows as, if any.
pub(super) fn runtime_event(e: &TaskEvent) -> Option<RuntimeEvent> {
    let d = &e.data;
    match e.event_type.as_str() {
        "tool.call.started" => {
            let tool = text(d, "tool");
            Some(RuntimeEvent::ToolCallStarted {
                id: text(d, "tool_call_id"),
                kind: Some(tool_kind(&tool).to_string()),
                name: tool,
                input: d["arguments"].clone(),
            })
        }
        "tool.call.finished" => Some(RuntimeEvent::ToolCallUpdated {
            id: text(d, "tool_call_id"),
            status: Some(
                if d["is_error"].as_bool().unwrap_or(false) {
                    "failed"
                } else {
                    "completed"
                }
                .to_string(),
            ),
            output: json!({"result": d["result"], "step_id": d["step_id"]}),
        }),
        "tool.call.refused" | "tool.call.interrupted" => Some(RuntimeEvent::ToolCallUpdated {
            id: text(d, "tool_call_id"),
            status: Some("failed".to_string()),
            output: json!({"reason": e.event_type, "note": d["note"]}),
        }),
        "tool.file.applied" | "tool.file.proposed" => {
            let change = if e.event_type == "tool.file.proposed" {
                "proposed"
            } else if d["created"].as_bool().unwrap_or(false) {
                "added"
            } else if d["deleted"].as_bool().unwrap_or(false) {
                "deleted"
            } else {
                "modified"
            };
            Some(RuntimeEvent::FileChanged {
                path: text(d, "path"),
                change: change.to_string(),
            })
        }
        // The words a model says before its tool calls; the final answer is
        // the turn's text, sent when the run ends.
        "turn.completed" => {
            let said = text(d, "text");
            let calls = d["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
            (calls && !said.trim().is_empty()).then(|| RuntimeEvent::ThoughtDelta {
                text: format!("{said}\n"),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{TaskId, TaskRunId};

    fn event(event_type: &str, data: Value) -> TaskEvent {
        TaskEvent {
            sequence: 1,
            task_id: TaskId::from("task_1"),
            run_id: TaskRunId::from("trun_1"),
            event_type: event_type.into(),
            data,
            occurred_at: String::new(),
        }
    }

    #[test]
    fn tool_calls_and_patches_become_runtime_events() {
        let started = runtime_event(&event(
            "tool.call.started",
            json!({"tool_call_id": "c1", "tool": "file_edit", "arguments": {"path": "a"}}),
        ));
        assert_eq!(
            started,
            Some(RuntimeEvent::ToolCallStarted {
                id: "c1".into(),
                name: "file_edit".into(),
                kind: Some("edit".into()),
                input: json!({"path": "a"}),
            })
        );
        let failed = runtime_event(&event(
            "tool.call.finished",
            json!({"tool_call_id": "c1", "is_error": true, "result": "no"}),
        ));
        assert!(
            matches!(failed, Some(RuntimeEvent::ToolCallUpdated { status: Some(s), .. }) if s == "failed")
        );
        let patch = runtime_event(&event(
            "tool.file.applied",
            json!({"path": "a", "created": true, "deleted": false}),
        ));
        assert_eq!(
            patch,
            Some(RuntimeEvent::FileChanged {
                path: "a".into(),
                change: "added".into()
            })
        );
        assert_eq!(runtime_event(&event("step.started", json!({}))), None);
    }

    #[test]
    fn only_words_before_tool_calls_are_thoughts() {
        let before = event(
            "turn.completed",
            json!({"text": "reading", "tool_calls": ["read_file"]}),
        );
        assert!(matches!(
            runtime_event(&before),
            Some(RuntimeEvent::ThoughtDelta { .. })
        ));
        let last = event("turn.completed", json!({"text": "done", "tool_calls": []}));
        assert_eq!(runtime_event(&last), None);
    }
}
