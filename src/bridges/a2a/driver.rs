//! Follows one turn for its task: the answer's text as artifact pieces, a
//! pending approval as `input-required` (and back to `working` once decided),
//! and the turn's end as the task's final state with the whole answer and one
//! artifact per file the turn changed.

use super::files::changed_files;
use super::state::A2aState;
use super::stored;
use super::tasks::{ANSWER_ARTIFACT, TaskRecord, agent_message, task_state};
use crate::a2a_wire::{
    Artifact, Part, StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent,
};
use crate::domain::approval::Approval;
use crate::domain::event::{EngineEvent, RuntimeEvent};
use crate::domain::ids::SessionId;
use crate::domain::time::now_rfc3339;
use crate::engine::TurnHandle;
use crate::engine::bus::{Received, Subscription};
use serde_json::json;

/// The status event of `record` as it is now.
pub fn status_event(record: &TaskRecord) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: record.id.clone(),
        context_id: record.context_id.clone(),
        status: record.status(),
    })
}

/// Follows `turn` of session `session_id` (its own events, and the session's
/// approvals on `approvals`) until it ends, keeping task `task_id` in the
/// registry up to date; at the end the task gets the files the turn changed.
/// A change of state and the end are stored as they happen (awaited here, so
/// they reach the store in order); the streamed pieces are not.
pub async fn drive(
    a2a: A2aState,
    session_id: SessionId,
    task_id: String,
    mut turn: TurnHandle,
    mut approvals: Subscription,
) {
    let registry = a2a.registry.clone();
    let mut streamed = false;
    loop {
        tokio::select! {
            ev = turn.events.recv() => match ev {
                Some(Received::Event(EngineEvent::Runtime {
                    update: RuntimeEvent::TextDelta { text },
                    ..
                })) => {
                    let append = streamed;
                    streamed = true;
                    // A piece of the answer is not stored: the end stores it whole.
                    let _ = registry.update(&task_id, |r| {
                        r.answer.push_str(&text);
                        vec![piece(r, text, append, false)]
                    });
                }
                Some(_) => {}
                None => break,
            },
            ev = approvals.recv() => match ev {
                Some(Received::Event(EngineEvent::ApprovalRequested { approval, .. })) => {
                    let now = registry.update(&task_id, |r| asked(r, &approval));
                    stored::save(&a2a, now).await;
                }
                Some(Received::Event(EngineEvent::ApprovalResolved { approval, .. })) => {
                    let now = registry.update(&task_id, |r| decided(r, &approval));
                    stored::save(&a2a, now).await;
                }
                Some(_) => {}
                // The bus closed: the engine is stopping; the turn ends too.
                None => {
                    while turn.events.recv().await.is_some() {}
                    break;
                }
            },
        }
    }
    let result = turn.wait().await;
    let files = match &result.assistant {
        Some(m) => changed_files(&a2a, &session_id, &m.id).await,
        None => Vec::new(),
    };
    let state = task_state(result.run.status);
    let answer = result.assistant.as_ref().map(|m| m.content.clone());
    let error = result
        .error
        .as_ref()
        .map(|e| format!("{} ({})", e.message, e.error_type.code()));
    let end = registry.update(&task_id, |r| {
        if let Some(a) = answer.filter(|a| !a.is_empty()) {
            r.answer = a;
        }
        r.state = state;
        r.pending_approval = None;
        r.timestamp = now_rfc3339();
        let said = match (&error, state) {
            (Some(e), _) => Some(e.clone()),
            (None, TaskState::Completed) => Some(r.answer.clone()),
            (None, TaskState::Canceled) => Some("the turn was cancelled".to_string()),
            _ => None,
        };
        r.status_message = said
            .filter(|s| !s.is_empty())
            .map(|s| agent_message(&r.context_id, &r.id, vec![Part::text(s)]));
        if let (TaskState::Completed, Some(m)) = (state, &r.status_message) {
            r.history.push(m.clone());
        }
        let mut events = Vec::new();
        if !r.answer.is_empty() {
            events.push(piece(r, r.answer.clone(), false, true));
        }
        // Each changed file is one whole artifact, sent before the final status.
        for file in &files {
            events.push(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: r.id.clone(),
                context_id: r.context_id.clone(),
                artifact: file.clone(),
                append: false,
                last_chunk: true,
            }));
        }
        r.files = files;
        events.push(status_event(r));
        events
    });
    stored::save(&a2a, end).await;
}

/// An artifact event carrying `text` of the answer.
fn piece(r: &TaskRecord, text: String, append: bool, last_chunk: bool) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: r.id.clone(),
        context_id: r.context_id.clone(),
        artifact: Artifact {
            artifact_id: ANSWER_ARTIFACT.into(),
            name: Some("answer".into()),
            description: None,
            parts: vec![Part::text(text)],
            metadata: None,
        },
        append,
        last_chunk,
    })
}

/// The task waits for `approval`: `input-required`, saying what is asked and how
/// to answer.
fn asked(r: &mut TaskRecord, approval: &Approval) -> Vec<StreamResponse> {
    if r.state.is_terminal() {
        return Vec::new();
    }
    r.state = TaskState::InputRequired;
    r.pending_approval = Some(approval.id.clone());
    r.timestamp = now_rfc3339();
    let text = format!(
        "Approval needed: the agent asks to use {} ({}). Answer this task with \"approve\" or \
         \"reject\" (or a data part {{\"decision\": \"approve\", \"scope\": \"once\"}}).",
        approval.tool_name, approval.tool_kind
    );
    let data = json!({"approval": {
        "id": approval.id.to_string(),
        "toolName": approval.tool_name,
        "toolKind": approval.tool_kind,
        "options": approval.options,
        "expiresAt": approval.expires_at,
        "decisions": ["approve", "reject"],
        "scopes": ["once", "session"],
    }});
    r.status_message = Some(agent_message(
        &r.context_id,
        &r.id,
        vec![Part::text(text), Part::data(data)],
    ));
    vec![status_event(r)]
}

/// `approval` was decided (here or elsewhere): back to `working`.
fn decided(r: &mut TaskRecord, approval: &Approval) -> Vec<StreamResponse> {
    if r.state != TaskState::InputRequired || r.pending_approval.as_ref() != Some(&approval.id) {
        return Vec::new();
    }
    r.state = TaskState::Working;
    r.pending_approval = None;
    r.status_message = None;
    r.timestamp = now_rfc3339();
    vec![status_event(r)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{ApprovalId, SessionId};
    use crate::domain::run::RunStatus;

    #[test]
    fn run_statuses_map_to_task_states() {
        assert_eq!(task_state(RunStatus::Running), TaskState::Working);
        assert_eq!(
            task_state(RunStatus::AwaitingApproval),
            TaskState::InputRequired
        );
        assert_eq!(task_state(RunStatus::Completed), TaskState::Completed);
        assert_eq!(task_state(RunStatus::Failed), TaskState::Failed);
        assert_eq!(task_state(RunStatus::Cancelled), TaskState::Canceled);
    }

    #[test]
    fn an_approval_is_input_required_until_decided() {
        let mut r = TaskRecord {
            id: "t".into(),
            agent: "hecate".into(),
            context_id: "c".into(),
            session_id: SessionId::from("s"),
            state: TaskState::Working,
            status_message: None,
            timestamp: String::new(),
            answer: String::new(),
            files: Vec::new(),
            history: Vec::new(),
            pending_approval: None,
            order: 1,
            version: 1,
        };
        let approval: Approval = serde_json::from_value(json!({
            "id": "ap1", "session_id": "s", "status": "pending", "tool_kind": "edit",
            "tool_name": "file_write", "options": [], "created_at": "",
        }))
        .expect("an approval");
        let evs = asked(&mut r, &approval);
        assert_eq!(evs[0].state(), Some(TaskState::InputRequired));
        let msg = r.status_message.clone().expect("asks");
        assert_eq!(
            msg.parts[1].data.as_ref().expect("data")["approval"]["id"],
            "ap1"
        );
        let mut other = approval.clone();
        other.id = ApprovalId::from("ap2");
        assert!(decided(&mut r, &other).is_empty(), "another approval");
        assert_eq!(
            decided(&mut r, &approval)[0].state(),
            Some(TaskState::Working)
        );
        assert!(r.pending_approval.is_none());
    }
}
