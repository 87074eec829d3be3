//! ACP `session/update` → Hecate runtime events. Pure functions: every update kind
//! maps to zero or more [`RuntimeEvent`]s; what has no normalized form is kept raw.

use crate::domain::event::RuntimeEvent;
use crate::domain::provider_call::ReportedCost;
use crate::domain::session_title;
use agent_client_protocol::v1::schema::{
    ContentBlock, SessionInfoUpdate, SessionNotification, SessionUpdate, ToolCall, ToolCallUpdate,
};
use serde::Serialize;
use serde_json::{Map, Value, json};

fn to_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The snake_case wire name of a serde unit enum (tool kind, status), if any.
fn wire_name<T: Serialize>(v: &T) -> Option<String> {
    match to_json(v) {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// The raw form of an update that has no normalized form.
pub fn raw_update(update: &SessionUpdate) -> RuntimeEvent {
    RuntimeEvent::Raw {
        data: json!({ "source": "acp", "method": "session/update", "update": to_json(update) }),
    }
}

/// The raw frame of a whole notification, kept for diagnostics next to the
/// normalized events.
pub fn raw_frame(notification: &SessionNotification) -> RuntimeEvent {
    RuntimeEvent::Raw {
        data: json!({ "source": "acp", "method": "session/update", "params": to_json(notification) }),
    }
}

fn text_of(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(t) => Some(t.text.as_str()),
        _ => None,
    }
}

fn tool_call_started(call: &ToolCall) -> RuntimeEvent {
    let mut input = Map::new();
    input.insert(
        "raw_input".into(),
        call.raw_input.clone().unwrap_or(Value::Null),
    );
    input.insert("locations".into(), to_json(&call.locations));
    input.insert("content".into(), to_json(&call.content));
    if let Some(status) = wire_name(&call.status) {
        input.insert("status".into(), Value::String(status));
    }
    if let Some(name) = &call.name {
        input.insert("tool_name".into(), Value::String(name.clone()));
    }
    RuntimeEvent::ToolCallStarted {
        id: call.tool_call_id.0.to_string(),
        name: call.title.clone(),
        kind: wire_name(&call.kind),
        input: Value::Object(input),
    }
}

fn tool_call_updated(update: &ToolCallUpdate) -> RuntimeEvent {
    let f = &update.fields;
    let mut out = Map::new();
    if let Some(title) = &f.title {
        out.insert("title".into(), Value::String(title.clone()));
    }
    if let Some(name) = &f.name {
        out.insert("tool_name".into(), Value::String(name.clone()));
    }
    if let Some(kind) = f.kind.as_ref().and_then(wire_name) {
        out.insert("kind".into(), Value::String(kind));
    }
    if let Some(content) = &f.content {
        out.insert("content".into(), to_json(content));
    }
    if let Some(locations) = &f.locations {
        out.insert("locations".into(), to_json(locations));
    }
    if let Some(raw_input) = &f.raw_input {
        out.insert("raw_input".into(), raw_input.clone());
    }
    if let Some(raw_output) = &f.raw_output {
        out.insert("raw_output".into(), raw_output.clone());
    }
    RuntimeEvent::ToolCallUpdated {
        id: update.tool_call_id.0.to_string(),
        status: f.status.as_ref().and_then(wire_name),
        output: if out.is_empty() {
            Value::Null
        } else {
            Value::Object(out)
        },
    }
}

/// An agent's `session_info_update` as a title change: the title tidied to one
/// line, the last-activity time kept. `None` when it names neither (a title
/// cleared with `null` leaves Hecate's own).
fn session_info(u: &SessionInfoUpdate) -> Option<RuntimeEvent> {
    let title = u.title.value().and_then(|t| session_title::tidy(t));
    let updated_at = u.updated_at.value().cloned();
    if title.is_none() && updated_at.is_none() {
        return None;
    }
    Some(RuntimeEvent::SessionInfo { title, updated_at })
}

/// Normalizes one update. Text chunks become deltas (non-text chunks stay raw),
/// tool calls, plans, commands, modes, config options, context usage and
/// session info get their own events; anything newer stays raw.
pub fn normalize(update: &SessionUpdate) -> Vec<RuntimeEvent> {
    let event = match update {
        SessionUpdate::AgentMessageChunk(chunk) => match text_of(&chunk.content) {
            Some(text) => RuntimeEvent::TextDelta { text: text.into() },
            None => raw_update(update),
        },
        SessionUpdate::AgentThoughtChunk(chunk) => match text_of(&chunk.content) {
            Some(text) => RuntimeEvent::ThoughtDelta { text: text.into() },
            None => raw_update(update),
        },
        SessionUpdate::UserMessageChunk(chunk) => match text_of(&chunk.content) {
            Some(text) => RuntimeEvent::UserMessage { text: text.into() },
            None => raw_update(update),
        },
        SessionUpdate::ToolCall(call) => tool_call_started(call),
        SessionUpdate::ToolCallUpdate(u) => tool_call_updated(u),
        SessionUpdate::Plan(plan) => RuntimeEvent::Plan {
            entries: to_json(&plan.entries),
        },
        SessionUpdate::AvailableCommandsUpdate(u) => RuntimeEvent::AvailableCommands {
            commands: to_json(&u.available_commands),
        },
        SessionUpdate::CurrentModeUpdate(u) => RuntimeEvent::ModeChanged {
            mode_id: u.current_mode_id.0.to_string(),
        },
        SessionUpdate::ConfigOptionUpdate(u) => RuntimeEvent::ConfigChanged {
            options: to_json(&u.config_options),
        },
        SessionUpdate::UsageUpdate(u) => RuntimeEvent::ContextUsage {
            used: u.used,
            size: u.size,
            cost: u.cost.as_ref().map(|c| ReportedCost {
                amount: c.amount,
                currency: c.currency.clone(),
            }),
        },
        SessionUpdate::SessionInfoUpdate(u) => {
            session_info(u).unwrap_or_else(|| raw_update(update))
        }
        _ => raw_update(update),
    };
    vec![event]
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        AvailableCommand, AvailableCommandsUpdate, ConfigOptionUpdate, ContentChunk,
        CurrentModeUpdate, Diff, ImageContent, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
        ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdateFields, ToolKind,
        UsageUpdate,
    };

    fn one(update: SessionUpdate) -> RuntimeEvent {
        let mut v = normalize(&update);
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    #[test]
    fn chunks() {
        let text = ContentChunk::new(ContentBlock::from("hi"));
        assert_eq!(
            one(SessionUpdate::AgentMessageChunk(text.clone())),
            RuntimeEvent::TextDelta { text: "hi".into() }
        );
        assert_eq!(
            one(SessionUpdate::AgentThoughtChunk(text.clone())),
            RuntimeEvent::ThoughtDelta { text: "hi".into() }
        );
        assert_eq!(
            one(SessionUpdate::UserMessageChunk(text)),
            RuntimeEvent::UserMessage { text: "hi".into() }
        );
        let image = ContentChunk::new(ContentBlock::Image(ImageContent::new("AAA", "image/png")));
        match one(SessionUpdate::AgentMessageChunk(image)) {
            RuntimeEvent::Raw { data } => {
                assert_eq!(data["update"]["sessionUpdate"], "agent_message_chunk");
                assert_eq!(data["update"]["content"]["type"], "image");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn tool_calls_carry_input_locations_and_diffs() {
        let call = ToolCall::new("call_1", "Edit a.txt")
            .kind(ToolKind::Edit)
            .status(ToolCallStatus::Pending)
            .locations(vec![ToolCallLocation::new("/w/a.txt").line(3)])
            .raw_input(json!({"path": "a.txt"}))
            .content(vec![ToolCallContent::Diff(
                Diff::new("/w/a.txt", "new").old_text("old"),
            )]);
        match one(SessionUpdate::ToolCall(call)) {
            RuntimeEvent::ToolCallStarted {
                id,
                name,
                kind,
                input,
            } => {
                assert_eq!(id, "call_1");
                assert_eq!(name, "Edit a.txt");
                assert_eq!(kind.as_deref(), Some("edit"));
                assert_eq!(input["raw_input"]["path"], "a.txt");
                assert_eq!(input["locations"][0]["line"], 3);
                assert_eq!(input["content"][0]["type"], "diff");
                assert_eq!(input["content"][0]["oldText"], "old");
                assert_eq!(input["status"], "pending");
            }
            other => panic!("unexpected {other:?}"),
        }
        let upd = ToolCallUpdate::new(
            "call_1",
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::Completed)
                .content(vec![ToolCallContent::Diff(Diff::new("/w/a.txt", "new"))]),
        );
        match one(SessionUpdate::ToolCallUpdate(upd)) {
            RuntimeEvent::ToolCallUpdated { id, status, output } => {
                assert_eq!(id, "call_1");
                assert_eq!(status.as_deref(), Some("completed"));
                assert_eq!(output["content"][0]["newText"], "new");
                assert!(output.get("title").is_none());
            }
            other => panic!("unexpected {other:?}"),
        }
        let bare = ToolCallUpdate::new("c", ToolCallUpdateFields::new());
        assert_eq!(
            one(SessionUpdate::ToolCallUpdate(bare)),
            RuntimeEvent::ToolCallUpdated {
                id: "c".into(),
                status: None,
                output: Value::Null
            }
        );
    }

    #[test]
    fn plan_commands_mode_config_and_the_rest() {
        let plan = Plan::new(vec![PlanEntry::new(
            "step",
            PlanEntryPriority::High,
            PlanEntryStatus::Pending,
        )]);
        match one(SessionUpdate::Plan(plan)) {
            RuntimeEvent::Plan { entries } => assert_eq!(entries[0]["content"], "step"),
            other => panic!("unexpected {other:?}"),
        }
        let cmds = AvailableCommandsUpdate::new(vec![AvailableCommand::new("review", "Review")]);
        match one(SessionUpdate::AvailableCommandsUpdate(cmds)) {
            RuntimeEvent::AvailableCommands { commands } => {
                assert_eq!(commands[0]["name"], "review")
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            one(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                "plan"
            ))),
            RuntimeEvent::ModeChanged {
                mode_id: "plan".into()
            }
        );
        assert_eq!(
            one(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                vec![]
            ))),
            RuntimeEvent::ConfigChanged { options: json!([]) }
        );
        assert_eq!(
            one(SessionUpdate::UsageUpdate(UsageUpdate::new(10, 100))),
            RuntimeEvent::ContextUsage {
                used: 10,
                size: 100,
                cost: None
            }
        );
    }

    #[test]
    fn an_agents_session_info_becomes_a_tidy_title() {
        let info = SessionInfoUpdate::new()
            .title("  Fix the\n login bug ".to_string())
            .updated_at("2026-01-02T03:04:05Z".to_string());
        assert_eq!(
            one(SessionUpdate::SessionInfoUpdate(info)),
            RuntimeEvent::SessionInfo {
                title: Some("Fix the login bug".into()),
                updated_at: Some("2026-01-02T03:04:05Z".into()),
            }
        );
        let cleared = SessionInfoUpdate::new().title(None::<String>);
        assert!(matches!(
            one(SessionUpdate::SessionInfoUpdate(cleared)),
            RuntimeEvent::Raw { .. }
        ));
    }
}
