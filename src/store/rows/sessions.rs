//! The sessions table: its columns and how a row becomes a `Session`.

use super::{Corrupt, StoredRow};
use crate::domain::ids::SessionId;
use crate::domain::session::{Guardrails, RuntimeKind, Session, SessionStatus, SessionSummary};

/// The columns `session` reads, in its order.
pub(crate) const SESSION_COLUMNS: &str = "namespace, id, title, runtime_kind, provider, model, \
     adapter_id, workspace, system_prompt, status, native_session_id, max_turns, \
     max_duration_ms, idle_timeout_ms, turns_used, session_started_at, last_activity_at, \
     created_at, updated_at, history_json, memory_json";

/// The session in a row that starts with `SESSION_COLUMNS`.
pub(crate) fn session<R: StoredRow>(r: &R) -> Result<Session, R::Error> {
    let kind: String = r.col(3)?;
    let status: String = r.col(9)?;
    Ok(Session {
        namespace: r.col(0)?,
        id: SessionId(r.col(1)?),
        title: r.col(2)?,
        runtime_kind: kind
            .parse::<RuntimeKind>()
            .map_err(|e| r.corrupt(3, Corrupt::Refused(e)))?,
        provider: r.col(4)?,
        model: r.col(5)?,
        adapter_id: r.col(6)?,
        workspace: r.col(7)?,
        system_prompt: r.col(8)?,
        status: SessionStatus::parse(&status),
        native_session_id: r.col(10)?,
        guardrails: Guardrails {
            max_turns: r.col::<Option<i64>>(11)?.map(|v| v as u32),
            max_duration_ms: r.col::<Option<i64>>(12)?.map(|v| v as u64),
            idle_timeout_ms: r.col::<Option<i64>>(13)?.map(|v| v as u64),
        },
        turns_used: r.col::<i64>(14)? as u32,
        session_started_at: r.col(15)?,
        last_activity_at: r.col(16)?,
        created_at: r.col(17)?,
        updated_at: r.col(18)?,
        history: r.opt_json(19)?,
        memory: r.opt_json(20)?.unwrap_or_default(),
    })
}

/// The session summary in a row of `SESSION_COLUMNS` followed by its message
/// count, provider call count and total cost.
pub(crate) fn summary<R: StoredRow>(r: &R) -> Result<SessionSummary, R::Error> {
    Ok(SessionSummary {
        session: session(r)?,
        message_count: r.col::<i64>(21)? as u64,
        provider_call_count: r.col::<i64>(22)? as u64,
        total_cost_micros_usd: r.col(23)?,
    })
}

/// The `history_json` and `memory_json` columns of `s`: NULL when it has no
/// strategy of its own, and when its memory settings are the defaults.
pub(crate) fn json_columns(s: &Session) -> serde_json::Result<(Option<String>, Option<String>)> {
    let history = s.history.as_ref().map(serde_json::to_string).transpose()?;
    let memory = (!s.memory.is_default())
        .then(|| serde_json::to_string(&s.memory))
        .transpose()?;
    Ok((history, memory))
}
