//! Projects an engine transcript (plus run events) into the wire transcript:
//! per-assistant-message run metadata, usage, activities and raw output, and the
//! live assistant message of a running turn synthesized from its events.

use crate::bridges::resources::chat::TraceDto;
use crate::bridges::resources::{
    ActivityDto, MessageDto, ProviderCallDto, RunDto, SegmentDto, SessionDto, TranscriptDto,
    TranscriptPageDto, UsageDto,
};
use crate::domain::activity::{ExternalTurn, project, project_external};
use crate::domain::approval::{Approval, ApprovalStatus};
use crate::domain::ids::{CallId, RunId};
use crate::domain::message::{ContentBlock, Role};
use crate::domain::provider_call::ProviderCall;
use crate::domain::run::{Run, RunEvent};
use crate::engine::Transcript;
use serde_json::Value;
use std::collections::HashMap;

/// Builds the wire transcript. `events` holds the stored events of the runs whose
/// messages are rendered; `live` (run id and its events so far) overrides them for
/// a running turn, whose assistant message is synthesized.
pub fn transcript_dto(
    t: &Transcript,
    events: &HashMap<RunId, Vec<RunEvent>>,
    live: Option<(&RunId, &[RunEvent])>,
) -> TranscriptDto {
    let runs: HashMap<&RunId, &Run> = t.runs.iter().map(|r| (&r.id, r)).collect();
    let calls: HashMap<&CallId, &ProviderCall> =
        t.provider_calls.iter().map(|c| (&c.id, c)).collect();
    let mut messages: Vec<MessageDto> = t
        .messages
        .iter()
        .map(|m| {
            let mut dto = MessageDto::from(m);
            if m.role == Role::Assistant
                && let Some(run) = m.run_id.as_ref().and_then(|id| runs.get(id))
            {
                let evs = events.get(&run.id).map(Vec::as_slice).unwrap_or(&[]);
                decorate(&mut dto, run, evs);
            }
            dto.timing = t.timings.get(&m.id).cloned();
            dto.diff_stat = t.diff_stats.get(&m.id).cloned();
            if let Some(call) = m.produced_by_call_id.as_ref().and_then(|id| calls.get(id)) {
                dto.usage = Some(UsageDto::from(*call));
            }
            if m.role == Role::Assistant {
                describe_adapter(&mut dto, t, m.runtime.adapter_id.as_deref());
                if let Some(run) = m.run_id.as_ref().and_then(|id| runs.get(id)) {
                    let evs = events.get(&run.id).map(Vec::as_slice).unwrap_or(&[]);
                    lifecycle(&mut dto, run, evs);
                    approval_rows(&mut dto, t.approvals.get(&run.id));
                }
            }
            dto
        })
        .collect();
    if let Some(run) = t.runs.last().filter(|r| !r.status.is_terminal())
        && !t
            .messages
            .iter()
            .any(|m| m.role == Role::Assistant && m.run_id.as_ref() == Some(&run.id))
    {
        let evs = match live {
            Some((id, evs)) if id == &run.id => evs,
            _ => events.get(&run.id).map(Vec::as_slice).unwrap_or(&[]),
        };
        messages.push(running_message(t, run, evs));
    }
    TranscriptDto {
        session: SessionDto::from(&t.session),
        latest_run_id: t.runs.last().map(|r| r.id.to_string()),
        messages,
        provider_calls: t.provider_calls.iter().map(ProviderCallDto::from).collect(),
        runs: t.runs.iter().map(RunDto::from).collect(),
        segments: t.segments.iter().map(SegmentDto::from).collect(),
        gateway_calls: t.gateway_calls.iter().map(TraceDto::from).collect(),
        page: TranscriptPageDto::from(t),
    }
}

/// Adds a turn's metadata, activities and raw output to its assistant message.
fn decorate(dto: &mut MessageDto, run: &Run, events: &[RunEvent]) {
    dto.request_id = Some(run.request_id.clone());
    dto.trace_id = run.trace_id.clone();
    dto.span_id = run.span_id.clone();
    dto.started_at = Some(run.started_at.clone());
    dto.completed_at = run.completed_at.clone();
    dto.duration_ms = run.duration_ms;
    dto.error_message = run.error_message.clone();
    dto.activities = Some(
        project(events, run.status)
            .iter()
            .map(ActivityDto::from)
            .collect(),
    );
    dto.raw_output = raw_output(events);
}

/// The adapter facts of an external-agent answer: name, driver and cost mode from
/// the catalog, the workspace, and the native session id while the session still
/// runs that adapter.
fn describe_adapter(dto: &mut MessageDto, t: &Transcript, adapter_id: Option<&str>) {
    let Some(id) = adapter_id else {
        return;
    };
    if let Some(f) = t.adapters.get(id) {
        dto.adapter_name = Some(f.name.clone());
        dto.driver_kind = Some(f.driver_kind.clone());
        dto.cost_mode = Some(f.cost_mode.clone());
    }
    dto.workspace = t.session.workspace.clone();
    if t.session.adapter_id.as_deref() == Some(id) {
        dto.native_session_id = t.session.native_session_id.clone();
    }
}

/// The `raw` frames of a run as one JSON array text, when there are any.
fn raw_output(events: &[RunEvent]) -> Option<String> {
    let raw: Vec<&Value> = events
        .iter()
        .filter(|e| e.event_type == "raw")
        .map(|e| e.data.get("data").unwrap_or(&e.data))
        .collect();
    (!raw.is_empty()).then(|| serde_json::to_string(&raw).unwrap_or_default())
}

/// The assistant message of a turn still running: text and reasoning so far.
fn running_message(t: &Transcript, run: &Run, events: &[RunEvent]) -> MessageDto {
    let mut text = String::new();
    let mut thinking = String::new();
    for e in events {
        let piece = e.data.get("text").and_then(Value::as_str).unwrap_or("");
        match e.event_type.as_str() {
            "text_delta" => text.push_str(piece),
            "thought_delta" => thinking.push_str(piece),
            _ => {}
        }
    }
    let user = t
        .messages
        .iter()
        .rev()
        .find(|m| m.run_id.as_ref() == Some(&run.id));
    let runtime = user.map(|m| m.runtime.clone());
    let mut blocks = Vec::new();
    if !thinking.is_empty() {
        blocks.push(ContentBlock::Thinking {
            thinking,
            signature: None,
        });
        blocks.push(ContentBlock::Text { text: text.clone() });
    }
    let mut dto = MessageDto {
        id: format!("pending_{}", run.id),
        sequence: t.messages.last().map_or(0, |m| m.sequence + 1),
        role: Role::Assistant.as_str().to_string(),
        content: text,
        content_blocks: blocks
            .iter()
            .map(|b| serde_json::to_value(b).unwrap_or(Value::Null))
            .collect(),
        status: "running".to_string(),
        runtime_kind: runtime
            .as_ref()
            .map_or(t.session.runtime_kind, |r| r.runtime_kind)
            .as_str()
            .to_string(),
        segment_id: runtime
            .as_ref()
            .map(|r| r.segment_id.to_string())
            .unwrap_or_default(),
        provider: runtime
            .as_ref()
            .and_then(|r| r.provider.clone())
            .or_else(|| t.session.provider.clone()),
        model: runtime
            .as_ref()
            .and_then(|r| r.model.clone())
            .or_else(|| t.session.model.clone()),
        adapter_id: runtime.as_ref().and_then(|r| r.adapter_id.clone()),
        run_id: Some(run.id.to_string()),
        created_at: run.started_at.clone(),
        ..MessageDto::default()
    };
    if let Some(link) = events.iter().find(|e| e.event_type == "task_linked") {
        let id = |key: &str| {
            link.data
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        dto.task_id = id("task_id");
        dto.task_run_id = id("task_run_id");
    }
    decorate(&mut dto, run, events);
    let adapter = dto.adapter_id.clone();
    describe_adapter(&mut dto, t, adapter.as_deref());
    lifecycle(&mut dto, run, events);
    approval_rows(&mut dto, t.approvals.get(&run.id));
    dto
}

/// Adds a row per permission request of the turn, in time order among the
/// others: what was asked, how it was answered and by whom, and whether it
/// still waits for a person.
fn approval_rows(dto: &mut MessageDto, approvals: Option<&Vec<Approval>>) {
    let (Some(rows), Some(approvals)) = (dto.activities.as_mut(), approvals) else {
        return;
    };
    for a in approvals {
        let pending = a.status == ApprovalStatus::Pending;
        let detail = match (&a.decision, &a.path, &a.scope) {
            _ if pending => Some(format!("asked about {} ({})", a.tool_name, a.tool_kind)),
            (Some(d), Some(p), Some(s)) => Some(format!("{d} by {p}, scope {s}")),
            (Some(d), Some(p), None) => Some(format!("{d} by {p}")),
            (_, Some(p), _) => Some(format!("{} ({p})", a.status.as_str())),
            _ => None,
        };
        let row = ActivityDto {
            activity_type: "approval".into(),
            status: a.status.as_str().to_string(),
            title: format!("Approval: {}", a.tool_name),
            detail,
            created_at: a.created_at.clone(),
            approval_id: Some(a.id.to_string()),
            needs_action: Some(pending),
        };
        let at = rows
            .iter()
            .position(|r| r.created_at > row.created_at)
            .unwrap_or(rows.len());
        rows.insert(at, row);
    }
}

/// The activities of an external agent's answer in the lifecycle vocabulary
/// (started, output, running or its end); other answers keep [`project`]'s.
fn lifecycle(dto: &mut MessageDto, run: &Run, events: &[RunEvent]) {
    let Some(adapter) = dto.adapter_id.as_deref() else {
        return;
    };
    let turn = ExternalTurn {
        adapter_name: dto.adapter_name.as_deref().unwrap_or(adapter),
        workspace: dto.workspace.as_deref().unwrap_or_default(),
        started_at: &run.started_at,
        error: run.error_message.as_deref(),
    };
    dto.activities = Some(
        project_external(events, run.status, turn)
            .iter()
            .map(ActivityDto::from)
            .collect(),
    );
}

/// The highest event sequence in `events` (0 when there are none).
pub fn last_sequence(events: &[RunEvent]) -> i64 {
    events.last().map_or(0, |e| e.sequence)
}
