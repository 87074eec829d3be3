//! Task events of an `agent_loop` run as the runtime events an Agent Chat turn
//! streams: tool calls (announced when gated or started, with a title, the
//! workspace paths they touch, their arguments, and on finishing their result
//! or the diffs of the files they changed), refusals, file changes, the plan
//! the model shares (its `update_plan` calls show as the plan, not as tool
//! calls) and the model's words between tool calls. The `input`/`output` objects use the same
//! keys as an external agent's tool calls (`title`, `raw_input`, `locations`,
//! `content`), so every surface renders both alike.

use crate::domain::event::RuntimeEvent;
use crate::domain::ids::TaskArtifactId;
use crate::domain::task::{TaskEvent, tool_title};
use crate::engine::tasks::{LivePiece, PatchContent};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

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

/// The kind a gated call of `tool` is asked about, which a session grant
/// ("approve always") covers: the ACP kind, except that `git_exec` is
/// `execute:git`, so approving git for good never approves `shell_exec`.
pub(super) fn grant_kind(tool: &str) -> &'static str {
    match tool {
        "git_exec" => "execute:git",
        _ => tool_kind(tool),
    }
}

fn text(data: &Value, key: &str) -> String {
    data[key].as_str().unwrap_or_default().to_string()
}

/// A text block as a tool call's content item.
fn text_content(t: &str) -> Value {
    json!({"type": "content", "content": {"type": "text", "text": t}})
}

/// The run's model turn a task event names (`turn.completed`, a model step's
/// `step.started`).
pub(super) fn model_turn(data: &Value) -> Option<u32> {
    data["turn"].as_u64().and_then(|t| u32::try_from(t).ok())
}

/// The built-in tool whose calls show as the plan they share.
const PLAN_TOOL: &str = "update_plan";

/// Projects one run's task events, in order, into runtime events. It
/// remembers which tool calls were announced (a gated call is shown before its
/// step starts), which call's step runs now, the diffs each call made, and the
/// plan calls that are shown only as their plan.
#[derive(Debug)]
pub(super) struct Projection {
    workspace: PathBuf,
    announced: HashSet<String>,
    current: Option<String>,
    diffs: HashMap<String, Vec<Value>>,
    quiet: HashSet<String>,
    /// What each model turn said live so far, by turn.
    heard: HashMap<u32, String>,
    /// Whether the last ended model turn's words were streamed live.
    last_heard: bool,
}

impl Projection {
    /// A projection for a run working in `workspace` (paths shown absolute).
    pub(super) fn new(workspace: &str) -> Self {
        Self {
            workspace: PathBuf::from(workspace),
            announced: HashSet::new(),
            current: None,
            diffs: HashMap::new(),
            quiet: HashSet::new(),
            heard: HashMap::new(),
            last_heard: false,
        }
    }

    /// The runtime event a piece the model says now shows as: its answer text
    /// streams as text, its reasoning as thought.
    pub(super) fn live(&mut self, piece: LivePiece) -> RuntimeEvent {
        match piece {
            LivePiece::Text { turn, text } => {
                self.heard.entry(turn).or_default().push_str(&text);
                RuntimeEvent::TextDelta { text }
            }
            LivePiece::Thinking { text, .. } => RuntimeEvent::ThoughtDelta { text },
        }
    }

    /// Whether the final answer already streamed as the model said it (the
    /// last model turn was heard live).
    pub(super) fn answer_streamed(&self) -> bool {
        self.last_heard
    }

    /// The patch artifact whose content [`Self::project`] wants with `e`.
    pub(super) fn wants_patch(e: &TaskEvent) -> Option<TaskArtifactId> {
        matches!(
            e.event_type.as_str(),
            "tool.file.applied" | "tool.file.proposed"
        )
        .then(|| e.data["artifact_id"].as_str().map(TaskArtifactId::from))
        .flatten()
    }

    fn absolute(&self, path: &str) -> String {
        self.workspace.join(path).display().to_string()
    }

    /// The tool call `data` names, first shown with `status`.
    fn started(&mut self, data: &Value, status: &str) -> RuntimeEvent {
        let id = text(data, "tool_call_id");
        let tool = text(data, "tool");
        let args = &data["arguments"];
        let mut input = Map::new();
        input.insert("title".into(), json!(tool_title(&tool, args)));
        input.insert("raw_input".into(), args.clone());
        input.insert("status".into(), json!(status));
        let path = match (tool.as_str(), args["path"].as_str()) {
            (_, Some(p)) => Some(p),
            ("list_dir", None) => Some("."),
            _ => None,
        };
        if let Some(p) = path {
            input.insert("locations".into(), json!([{"path": self.absolute(p)}]));
        }
        self.announced.insert(id.clone());
        RuntimeEvent::ToolCallStarted {
            id,
            kind: Some(tool_kind(&tool).to_string()),
            name: tool,
            input: Value::Object(input),
        }
    }

    /// The runtime events `e` shows as; `patch` is the content of the patch a
    /// `tool.file.*` event names (see [`Self::wants_patch`]), when read.
    pub(super) fn project(
        &mut self,
        e: &TaskEvent,
        patch: Option<&PatchContent>,
    ) -> Vec<RuntimeEvent> {
        let d = &e.data;
        match e.event_type.as_str() {
            "approval.requested" if !self.announced.contains(&text(d, "tool_call_id")) => {
                vec![self.started(d, "pending")]
            }
            "tool.call.started" => {
                let id = text(d, "tool_call_id");
                self.current = Some(id.clone());
                if text(d, "tool") == PLAN_TOOL && !self.announced.contains(&id) {
                    self.quiet.insert(id);
                    Vec::new()
                } else if self.announced.contains(&id) {
                    // The title again: a permission request may have retitled it.
                    let title = tool_title(&text(d, "tool"), &d["arguments"]);
                    vec![RuntimeEvent::ToolCallUpdated {
                        id,
                        status: Some("in_progress".into()),
                        output: json!({ "title": title }),
                    }]
                } else {
                    vec![self.started(d, "in_progress")]
                }
            }
            "tool.call.finished" => {
                let id = text(d, "tool_call_id");
                if self.current.as_ref() == Some(&id) {
                    self.current = None;
                }
                if self.quiet.remove(&id) {
                    return Vec::new();
                }
                let failed = d["is_error"].as_bool().unwrap_or(false);
                let result = text(d, "result");
                let content = match self.diffs.remove(&id) {
                    Some(diffs) if !failed => Value::Array(diffs),
                    _ if result.is_empty() => json!([]),
                    _ => json!([text_content(&result)]),
                };
                vec![RuntimeEvent::ToolCallUpdated {
                    id,
                    status: Some(if failed { "failed" } else { "completed" }.to_string()),
                    output: json!({"result": d["result"], "step_id": d["step_id"],
                                   "content": content}),
                }]
            }
            "tool.call.refused" | "tool.call.interrupted" => {
                let note = match (e.event_type.as_str(), d["note"].as_str()) {
                    ("tool.call.refused", Some(n)) if !n.is_empty() => format!("refused: {n}"),
                    ("tool.call.refused", _) => "refused".to_string(),
                    _ => "interrupted".to_string(),
                };
                vec![RuntimeEvent::ToolCallUpdated {
                    id: text(d, "tool_call_id"),
                    status: Some("failed".to_string()),
                    output: json!({"reason": e.event_type, "note": d["note"],
                                   "content": [text_content(&note)]}),
                }]
            }
            "tool.file.applied" | "tool.file.proposed" => {
                let path = text(d, "path");
                let change = if e.event_type == "tool.file.proposed" {
                    "proposed"
                } else if d["created"].as_bool().unwrap_or(false) {
                    "added"
                } else if d["deleted"].as_bool().unwrap_or(false) {
                    "deleted"
                } else {
                    "modified"
                };
                if let (Some(p), Some(call)) = (patch, &self.current) {
                    let diff = json!({"type": "diff", "path": self.absolute(&p.path),
                                      "oldText": p.before,
                                      "newText": p.after.clone().unwrap_or_default()});
                    self.diffs.entry(call.clone()).or_default().push(diff);
                }
                vec![RuntimeEvent::FileChanged {
                    path,
                    change: change.to_string(),
                }]
            }
            "agent.plan" => vec![RuntimeEvent::Plan {
                entries: d["entries"].clone(),
            }],
            // The words a model says before its tool calls; the final answer is
            // the turn's text, sent when the run ends. Words heard live were
            // shown as text already: only what the live pieces missed follows,
            // and a line break before the tool calls.
            "turn.completed" => {
                let said = text(d, "text");
                let calls = d["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
                let heard = model_turn(d)
                    .and_then(|t| self.heard.remove(&t))
                    .unwrap_or_default();
                self.last_heard = !heard.is_empty();
                if self.last_heard {
                    let mut rest = said.strip_prefix(&heard).unwrap_or_default().to_string();
                    if calls && !said.ends_with('\n') {
                        rest.push('\n');
                    }
                    return if rest.is_empty() {
                        Vec::new()
                    } else {
                        vec![RuntimeEvent::TextDelta { text: rest }]
                    };
                }
                if calls && !said.trim().is_empty() {
                    vec![RuntimeEvent::ThoughtDelta {
                        text: format!("{said}\n"),
                    }]
                } else {
                    Vec::new()
                }
            }
            _ => Vec::new(),
        }
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
    fn a_gated_edit_is_announced_once_and_finishes_with_its_diff() {
        let mut p = Projection::new("/ws");
        let args = json!({"path": "a.txt", "old_string": "x", "new_string": "y"});
        let asked = p.project(
            &event(
                "approval.requested",
                json!({"tool_call_id": "c1", "tool": "file_edit", "arguments": args}),
            ),
            None,
        );
        let [
            RuntimeEvent::ToolCallStarted {
                id, kind, input, ..
            },
        ] = asked.as_slice()
        else {
            panic!("announced: {asked:?}");
        };
        assert_eq!((id.as_str(), kind.as_deref()), ("c1", Some("edit")));
        assert_eq!(input["title"], "Edit a.txt");
        assert_eq!(input["status"], "pending");
        assert_eq!(input["locations"], json!([{"path": "/ws/a.txt"}]));
        assert_eq!(input["raw_input"], args);

        let started = p.project(
            &event(
                "tool.call.started",
                json!({"tool_call_id": "c1", "tool": "file_edit", "arguments": args}),
            ),
            None,
        );
        assert!(
            matches!(started.as_slice(), [RuntimeEvent::ToolCallUpdated { status: Some(s), output, .. }]
                if s == "in_progress" && output["title"] == "Edit a.txt"),
            "{started:?}"
        );
        let applied = event(
            "tool.file.applied",
            json!({"artifact_id": "art_1", "path": "a.txt", "created": false, "deleted": false}),
        );
        assert_eq!(
            Projection::wants_patch(&applied),
            Some(TaskArtifactId::from("art_1"))
        );
        let patch = PatchContent {
            path: "a.txt".into(),
            before: Some("x\n".into()),
            after: Some("y\n".into()),
        };
        assert_eq!(
            p.project(&applied, Some(&patch)),
            [RuntimeEvent::FileChanged {
                path: "a.txt".into(),
                change: "modified".into()
            }]
        );
        let finished = p.project(
            &event(
                "tool.call.finished",
                json!({"tool_call_id": "c1", "is_error": false, "result": "edited"}),
            ),
            None,
        );
        let [RuntimeEvent::ToolCallUpdated { status, output, .. }] = finished.as_slice() else {
            panic!("{finished:?}");
        };
        assert_eq!(status.as_deref(), Some("completed"));
        assert_eq!(
            output["content"],
            json!([{"type": "diff", "path": "/ws/a.txt", "oldText": "x\n", "newText": "y\n"}])
        );
    }

    #[test]
    fn ungated_calls_start_in_progress_and_finish_with_their_result() {
        let mut p = Projection::new("/ws");
        let started = p.project(
            &event(
                "tool.call.started",
                json!({"tool_call_id": "c2", "tool": "shell_exec", "arguments": {"command": "ls\nrm"}}),
            ),
            None,
        );
        let [RuntimeEvent::ToolCallStarted { kind, input, .. }] = started.as_slice() else {
            panic!("{started:?}");
        };
        assert_eq!(kind.as_deref(), Some("execute"));
        assert_eq!(input["title"], "Run ls");
        assert_eq!(input["status"], "in_progress");
        assert!(input.get("locations").is_none());
        let failed = p.project(
            &event(
                "tool.call.finished",
                json!({"tool_call_id": "c2", "is_error": true, "result": "no"}),
            ),
            None,
        );
        let [RuntimeEvent::ToolCallUpdated { status, output, .. }] = failed.as_slice() else {
            panic!("{failed:?}");
        };
        assert_eq!(status.as_deref(), Some("failed"));
        assert_eq!(output["content"][0]["content"]["text"], "no");
        let refused = p.project(
            &event(
                "tool.call.refused",
                json!({"tool_call_id": "c3", "note": "not now"}),
            ),
            None,
        );
        assert!(
            matches!(&refused[..], [RuntimeEvent::ToolCallUpdated { output, .. }]
                if output["content"][0]["content"]["text"] == "refused: not now"),
            "{refused:?}"
        );
        assert!(
            p.project(&event("step.started", json!({})), None)
                .is_empty()
        );
    }

    #[test]
    fn a_plan_call_shows_as_its_plan_unless_it_was_announced_for_approval() {
        let mut p = Projection::new("/ws");
        let entries = json!([{"content": "Read", "priority": "high", "status": "pending"}]);
        let call = json!({"tool_call_id": "c1", "tool": "update_plan",
                          "arguments": {"entries": entries}});
        assert!(
            p.project(&event("tool.call.started", call.clone()), None)
                .is_empty()
        );
        let plan = p.project(
            &event(
                "agent.plan",
                json!({"tool_call_id": "c1", "entries": entries}),
            ),
            None,
        );
        assert_eq!(
            plan,
            [RuntimeEvent::Plan {
                entries: entries.clone()
            }]
        );
        let done = json!({"tool_call_id": "c1", "is_error": false, "result": "plan updated"});
        assert!(
            p.project(&event("tool.call.finished", done.clone()), None)
                .is_empty()
        );
        let mut gated = Projection::new("/ws");
        assert_eq!(
            gated
                .project(&event("approval.requested", call.clone()), None)
                .len(),
            1
        );
        assert_eq!(
            gated.project(&event("tool.call.started", call), None).len(),
            1
        );
        assert_eq!(
            gated
                .project(&event("tool.call.finished", done), None)
                .len(),
            1
        );
    }

    #[test]
    fn a_grant_for_git_never_covers_shell() {
        assert_eq!(grant_kind("git_exec"), "execute:git");
        assert_eq!(grant_kind("shell_exec"), "execute");
        assert_ne!(grant_kind("git_exec"), grant_kind("shell_exec"));
        assert_eq!(grant_kind("file_write"), "edit");
    }

    #[test]
    fn titles_name_the_tool_and_its_target() {
        assert_eq!(tool_title("read_file", &json!({"path": "n"})), "Read n");
        assert_eq!(tool_title("list_dir", &json!({})), "List .");
        assert_eq!(
            tool_title("git_exec", &json!({"args": ["status", "-s"]})),
            "git status -s"
        );
        assert_eq!(
            tool_title("http_request", &json!({"url": "http://x"})),
            "Fetch http://x"
        );
        assert_eq!(tool_title("mcp__fs__read", &json!({})), "mcp__fs__read");
        assert_eq!(tool_title("file_write", &json!({})), "file_write");
    }

    #[test]
    fn only_words_before_tool_calls_are_thoughts() {
        let mut p = Projection::new("/ws");
        let before = event(
            "turn.completed",
            json!({"text": "reading", "tool_calls": ["read_file"]}),
        );
        assert!(matches!(
            p.project(&before, None).as_slice(),
            [RuntimeEvent::ThoughtDelta { .. }]
        ));
        let last = event("turn.completed", json!({"text": "done", "tool_calls": []}));
        assert!(p.project(&last, None).is_empty());
    }
}
