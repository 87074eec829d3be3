//! Engine events and stored transcripts rendered as ACP `session/update`s.

use crate::domain::event::RuntimeEvent;
use crate::domain::message::{ContentBlock, Message, MessageStatus, Role};
use agent_client_protocol::v1::schema::{
    ContentBlock as AcpBlock, ContentChunk, Cost, SessionInfoUpdate, SessionUpdate, ToolCallUpdate,
    UsageUpdate,
};
use serde_json::{Value, json};

fn update(v: Value) -> Option<SessionUpdate> {
    match serde_json::from_value::<SessionUpdate>(v.clone()) {
        Ok(u) => Some(u),
        Err(e) => {
            tracing::debug!(error = %e, update = %v, "update not representable in ACP");
            None
        }
    }
}

/// Who a text chunk comes from.
#[derive(Clone, Copy)]
enum Chunk {
    User,
    Agent,
    Thought,
}

/// A text chunk, built directly (the hot path of every streamed answer).
fn chunk(kind: Chunk, text: &str) -> SessionUpdate {
    let content = ContentChunk::new(AcpBlock::from(text));
    match kind {
        Chunk::User => SessionUpdate::UserMessageChunk(content),
        Chunk::Agent => SessionUpdate::AgentMessageChunk(content),
        Chunk::Thought => SessionUpdate::AgentThoughtChunk(content),
    }
}

/// The ACP update for a runtime event, when it has one (diagnostics and events
/// about the agent's own modes stay inside Hecate).
pub fn runtime_event(ev: &RuntimeEvent) -> Option<SessionUpdate> {
    match ev {
        RuntimeEvent::TextDelta { text } => Some(chunk(Chunk::Agent, text)),
        RuntimeEvent::ThoughtDelta { text } => Some(chunk(Chunk::Thought, text)),
        RuntimeEvent::ToolCallStarted {
            id,
            name,
            kind,
            input,
        } => {
            let mut v = json!({
                "sessionUpdate": "tool_call",
                "toolCallId": id,
                "title": input.get("title").and_then(Value::as_str).unwrap_or(name),
                "status": input.get("status").cloned().unwrap_or(json!("pending")),
            });
            if let Some(k) = kind {
                v["kind"] = json!(k);
            }
            for (from, to) in [
                ("content", "content"),
                ("locations", "locations"),
                ("raw_input", "rawInput"),
            ] {
                if let Some(x) = input.get(from).filter(|x| !x.is_null()) {
                    v[to] = x.clone();
                }
            }
            if input.get("raw_input").is_none()
                && !input.is_null()
                && input.get("content").is_none()
                && input.get("title").is_none()
            {
                v["rawInput"] = input.clone();
            }
            update(v)
        }
        RuntimeEvent::ToolCallUpdated { id, status, output } => {
            let mut v = json!({"sessionUpdate": "tool_call_update", "toolCallId": id});
            if let Some(s) = status {
                v["status"] = json!(s);
            }
            for (from, to) in [
                ("title", "title"),
                ("kind", "kind"),
                ("content", "content"),
                ("locations", "locations"),
                ("raw_input", "rawInput"),
                ("raw_output", "rawOutput"),
            ] {
                if let Some(x) = output.get(from).filter(|x| !x.is_null()) {
                    v[to] = x.clone();
                }
            }
            update(v)
        }
        RuntimeEvent::Plan { entries } => {
            update(json!({"sessionUpdate": "plan", "entries": entries}))
        }
        RuntimeEvent::AvailableCommands { commands } => update(json!({
            "sessionUpdate": "available_commands_update",
            "availableCommands": commands,
        })),
        RuntimeEvent::ContextUsage { used, size, cost } => Some(SessionUpdate::UsageUpdate(
            UsageUpdate::new(*used, *size).cost(
                cost.as_ref()
                    .map(|c| Cost::new(c.amount, c.currency.clone())),
            ),
        )),
        RuntimeEvent::SessionInfo { title, updated_at } => {
            Some(session_info(title.as_deref(), updated_at.as_deref()))
        }
        RuntimeEvent::FileChanged { .. }
        | RuntimeEvent::Usage { .. }
        | RuntimeEvent::UserMessage { .. }
        | RuntimeEvent::ModeChanged { .. }
        | RuntimeEvent::ConfigChanged { .. }
        | RuntimeEvent::Raw { .. }
        | RuntimeEvent::OutputCapped { .. }
        | RuntimeEvent::TaskLinked { .. } => None,
    }
}

/// A `session_info_update` carrying what is known of the title and the last
/// activity (fields left out are unchanged for the editor).
pub fn session_info(title: Option<&str>, updated_at: Option<&str>) -> SessionUpdate {
    let mut info = SessionInfoUpdate::new();
    if let Some(t) = title {
        info = info.title(t.to_string());
    }
    if let Some(u) = updated_at {
        info = info.updated_at(u.to_string());
    }
    SessionUpdate::SessionInfoUpdate(info)
}

/// A stored transcript replayed as updates (for `session/load`): user chunks,
/// thoughts, answers, and a note on answers that did not complete.
pub fn transcript(messages: &[Message]) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    for m in messages {
        match m.role {
            Role::User => out.push(chunk(Chunk::User, &m.content)),
            Role::Assistant => {
                for b in &m.content_blocks {
                    if let ContentBlock::Thinking { thinking, .. } = b {
                        out.push(chunk(Chunk::Thought, thinking));
                    }
                }
                if !m.content.is_empty() {
                    out.push(chunk(Chunk::Agent, &m.content));
                }
                let note = match m.status {
                    MessageStatus::Failed => Some(format!(
                        "\n\n[this answer failed: {}]",
                        m.error.as_deref().unwrap_or("error")
                    )),
                    MessageStatus::Cancelled => Some("\n\n[cancelled]".to_string()),
                    _ => None,
                };
                if let Some(n) = note {
                    out.push(chunk(Chunk::Agent, &n));
                }
            }
            _ => {}
        }
    }
    out
}

/// A tool-call reference for a permission request.
pub fn permission_tool_call(tool_call_id: &str, title: &str, kind: &str) -> Option<ToolCallUpdate> {
    // A narrowed grant kind (`execute:git`) shows as its ACP kind.
    let kind = kind.split(':').next().unwrap_or(kind);
    serde_json::from_value(json!({"toolCallId": tool_call_id, "title": title, "kind": kind}))
        .or_else(|_| serde_json::from_value(json!({"toolCallId": tool_call_id, "title": title})))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrowed_grant_kind_shows_as_its_acp_kind() {
        let call = permission_tool_call("c", "git status", "execute:git").expect("call");
        let v = serde_json::to_value(&call).expect("json");
        assert_eq!(v["kind"], "execute", "{v}");
        let call = permission_tool_call("c", "x", "mcp:fs_read").expect("call");
        assert!(
            serde_json::to_value(&call)
                .expect("json")
                .get("kind")
                .is_none_or(|k| k != "mcp")
        );
    }

    #[test]
    fn every_visible_runtime_event_becomes_an_acp_update() {
        let evs = [
            RuntimeEvent::TextDelta { text: "a".into() },
            RuntimeEvent::ThoughtDelta { text: "b".into() },
            RuntimeEvent::ToolCallStarted {
                id: "t".into(),
                name: "Edit".into(),
                kind: Some("edit".into()),
                input: json!({"raw_input": {"p": 1}, "locations": [{"path": "/x"}], "content": [], "status": "pending"}),
            },
            RuntimeEvent::ToolCallUpdated {
                id: "t".into(),
                status: Some("completed".into()),
                output: json!({"content": [{"type": "diff", "path": "/x", "oldText": null, "newText": "y"}]}),
            },
            RuntimeEvent::Plan {
                entries: json!([{"content": "s", "priority": "high", "status": "pending"}]),
            },
            RuntimeEvent::AvailableCommands {
                commands: json!([{"name": "x", "description": "y"}]),
            },
            RuntimeEvent::ContextUsage {
                used: 5,
                size: 10,
                cost: None,
            },
            RuntimeEvent::SessionInfo {
                title: Some("Fix the bug".into()),
                updated_at: None,
            },
        ];
        for ev in &evs {
            assert!(runtime_event(ev).is_some(), "{ev:?}");
        }
        assert!(runtime_event(&RuntimeEvent::Raw { data: json!({}) }).is_none());
        let titled = runtime_event(&RuntimeEvent::ToolCallStarted {
            id: "c".into(),
            name: "file_edit".into(),
            kind: Some("edit".into()),
            input: json!({"title": "Edit a.txt", "raw_input": {"path": "a.txt"}, "status": "in_progress"}),
        });
        assert!(
            matches!(&titled, Some(SessionUpdate::ToolCall(c)) if c.title == "Edit a.txt"),
            "{titled:?}"
        );
        assert!(permission_tool_call("t1", "Write", "edit").is_some());
    }

    #[test]
    fn session_info_carries_only_what_is_known() {
        let v = serde_json::to_value(session_info(Some("Fix the bug"), None)).expect("json");
        assert_eq!(v["sessionUpdate"], "session_info_update");
        assert_eq!(v["title"], "Fix the bug");
        assert!(v.get("updatedAt").is_none(), "{v}");
        let v =
            serde_json::to_value(session_info(None, Some("2026-01-01T00:00:00Z"))).expect("json");
        assert!(v.get("title").is_none(), "{v}");
        assert_eq!(v["updatedAt"], "2026-01-01T00:00:00Z");
    }
}
