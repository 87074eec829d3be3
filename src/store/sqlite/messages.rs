//! The message and provider-call streams, and message artifacts.

use super::reads::{all, one};
use super::run_ids::json_ids;
use super::{OpResult, SqliteStore};
use crate::domain::error::Result;
use crate::domain::ids::{MessageId, RunId, SessionId};
use crate::domain::message::{Message, NewMessage};
use crate::domain::provider_call::ProviderCall;
use crate::domain::time::now_rfc3339;
use crate::store::history::{BUDGET_PAGE, BudgetPages, HistoryStrategy};
use crate::store::rows::messages::{self as decode, MESSAGE_COLUMNS, PROVIDER_CALL_COLUMNS};
use crate::store::{LoadOptions, MessageCursor, MessageStore, NewArtifact};
use async_trait::async_trait;
use rusqlite::{Connection, TransactionBehavior, params};

/// The messages `sql` selects with `params`, in the order selected.
fn select_messages(
    c: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> OpResult<Vec<Message>> {
    all(c, sql, params, |r| decode::message(r))
}

fn insert_call(tx: &Connection, call: &ProviderCall) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO provider_calls (id, session_id, run_id, request_id, provider, model, \
         prompt_tokens, completion_tokens, total_tokens, cost_micros_usd, duration_ms, created_at) \
         VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
    )?
    .execute(params![
        call.id.as_str(),
        call.session_id.as_str(),
        call.run_id.as_ref().map(|r| r.as_str()),
        call.request_id,
        call.provider,
        call.model,
        call.usage.prompt_tokens as i64,
        call.usage.completion_tokens as i64,
        call.usage.total_tokens as i64,
        call.cost_micros_usd,
        call.duration_ms,
        call.created_at,
    ])?;
    Ok(())
}

/// Appends `messages` (assigning the next gap-free sequences) and, when given, the
/// provider call that produced them, inside the caller's transaction.
pub(super) fn append(
    tx: &Connection,
    session_id: &SessionId,
    messages: Vec<NewMessage>,
    call: Option<&ProviderCall>,
) -> OpResult<Vec<Message>> {
    if let Some(call) = call {
        insert_call(tx, call)?;
    }
    let mut next: i64 = tx
        .prepare_cached(
            "SELECT COALESCE(MAX(sequence), -1) + 1 FROM messages WHERE session_id = ?1",
        )?
        .query_row(params![session_id.as_str()], |r| r.get(0))?;
    let now = now_rfc3339();
    let mut stored = Vec::with_capacity(messages.len());
    {
        let mut insert = tx.prepare_cached(&format!(
            "INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"
        ))?;
        for m in messages {
            let (message, body_json) = decode::appended(m, session_id, next, &now)?;
            insert.execute(params![
                message.id.as_str(),
                message.session_id.as_str(),
                message.sequence,
                message.role.as_str(),
                message.content,
                message.produced_by_call_id.as_ref().map(|c| c.as_str()),
                message.run_id.as_ref().map(|r| r.as_str()),
                message.status.as_str(),
                message.is_summary as i64,
                body_json,
                message.created_at,
            ])?;
            stored.push(message);
            next += 1;
        }
    }
    tx.prepare_cached("UPDATE sessions SET updated_at = ?2 WHERE id = ?1")?
        .execute(params![session_id.as_str(), now])?;
    Ok(stored)
}

/// Stores one artifact on a message.
pub(super) fn insert_artifact(
    c: &Connection,
    message_id: &MessageId,
    artifact: &NewArtifact,
) -> OpResult<()> {
    let NewArtifact { kind, path, data } = artifact;
    c.prepare_cached(
        "INSERT INTO message_artifacts (message_id, kind, path, data, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        message_id.as_str(),
        kind,
        path,
        data,
        now_rfc3339()
    ])?;
    Ok(())
}

/// Number of messages in a session.
pub(super) fn count(c: &Connection, session_id: &SessionId) -> OpResult<u64> {
    let n: i64 = c
        .prepare_cached("SELECT COUNT(*) FROM messages WHERE session_id = ?1")?
        .query_row(params![session_id.as_str()], |r| r.get(0))?;
    Ok(n as u64)
}

/// The last `n` messages of a session in sequence order.
pub(super) fn last(c: &Connection, session_id: &SessionId, n: usize) -> OpResult<Vec<Message>> {
    let mut out = select_messages(
        c,
        &format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?1 \
             ORDER BY sequence DESC LIMIT ?2"
        ),
        params![session_id.as_str(), n as i64],
    )?;
    out.reverse();
    Ok(out)
}

/// Up to `limit` messages of a session after sequence `after`, in order.
pub(super) fn since(
    c: &Connection,
    session_id: &SessionId,
    after: Option<i64>,
    limit: usize,
) -> OpResult<Vec<Message>> {
    select_messages(
        c,
        &format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?1 AND sequence > ?2 \
             ORDER BY sequence LIMIT ?3"
        ),
        params![
            session_id.as_str(),
            after.unwrap_or(-1),
            limit.min(i64::MAX as usize) as i64
        ],
    )
}

/// The sequence of a session's newest summary message, if it has one.
pub(super) fn last_summary(c: &Connection, session_id: &SessionId) -> OpResult<Option<i64>> {
    Ok(c.prepare_cached(
        "SELECT MAX(sequence) FROM messages WHERE session_id = ?1 AND is_summary = 1",
    )?
    .query_row(params![session_id.as_str()], |r| r.get(0))?)
}

/// Up to `n` messages of a session before sequence `before` (all when `None`),
/// newest first.
fn page_before(
    c: &Connection,
    session_id: &SessionId,
    before: Option<i64>,
    n: usize,
) -> OpResult<Vec<Message>> {
    select_messages(
        c,
        &format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?1 AND sequence < ?2 \
             ORDER BY sequence DESC LIMIT ?3"
        ),
        params![session_id.as_str(), before.unwrap_or(i64::MAX), n as i64],
    )
}

/// The messages `o` selects, in sequence order. Without roles it is the plain
/// range read; with roles the same read keeps only those roles.
pub(super) fn load(
    c: &Connection,
    session_id: &SessionId,
    o: &LoadOptions,
) -> OpResult<Vec<Message>> {
    let limit = o.limit.min(i64::MAX as usize) as i64;
    if o.roles.is_empty() {
        return match o.cursor {
            MessageCursor::After(after) => since(c, session_id, after, o.limit),
            MessageCursor::Before(before) => {
                let mut page = page_before(c, session_id, before, o.limit)?;
                page.reverse();
                Ok(page)
            }
        };
    }
    let roles = serde_json::Value::from(o.role_names()).to_string();
    let (bound, order) = match o.cursor {
        MessageCursor::After(after) => (after.unwrap_or(-1), "sequence > ?2 ORDER BY sequence"),
        MessageCursor::Before(before) => (
            before.unwrap_or(i64::MAX),
            "sequence < ?2 ORDER BY sequence DESC",
        ),
    };
    let mut out = select_messages(
        c,
        &format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?1 \
             AND role IN (SELECT value FROM json_each(?4)) AND {order} LIMIT ?3"
        ),
        params![session_id.as_str(), bound, limit, roles],
    )?;
    if matches!(o.cursor, MessageCursor::Before(_)) {
        out.reverse();
    }
    Ok(out)
}

/// The newest messages that fit `max_tokens`, read a page at a time from the end,
/// in sequence order.
fn within_budget(
    c: &Connection,
    session_id: &SessionId,
    max_tokens: usize,
) -> OpResult<Vec<Message>> {
    let mut pages = BudgetPages::new(max_tokens);
    loop {
        let page = page_before(c, session_id, pages.next_before(), BUDGET_PAGE)?;
        if let Some(out) = pages.offer(page) {
            return Ok(out);
        }
    }
}

/// The messages `strategy` gives a runtime, in sequence order.
pub(super) fn history(
    c: &Connection,
    session_id: &SessionId,
    strategy: HistoryStrategy,
) -> OpResult<Vec<Message>> {
    match strategy {
        HistoryStrategy::BufferWindow { window } => last(c, session_id, window),
        HistoryStrategy::SummaryBuffer { max_messages, .. } => match last_summary(c, session_id)? {
            Some(seq) => since(c, session_id, Some(seq - 1), usize::MAX),
            None => last(c, session_id, max_messages),
        },
        HistoryStrategy::TokenBudget { max_tokens } => within_budget(c, session_id, max_tokens),
    }
}

#[async_trait]
impl MessageStore for SqliteStore {
    async fn append_exchange(
        &self,
        session_id: &SessionId,
        messages: Vec<NewMessage>,
        call: Option<&ProviderCall>,
    ) -> Result<Vec<Message>> {
        let (session_id, call) = (session_id.clone(), call.cloned());
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let stored = append(&tx, &session_id, messages, call.as_ref())?;
            tx.commit()?;
            Ok(stored)
        })
        .await
    }

    async fn load_messages(
        &self,
        session_id: &SessionId,
        options: &LoadOptions,
    ) -> Result<Vec<Message>> {
        let (session_id, options) = (session_id.clone(), options.clone());
        self.read(move |c| load(c, &session_id, &options)).await
    }

    async fn get_message(&self, session_id: &SessionId, id: &MessageId) -> Result<Message> {
        let (session_id, id) = (session_id.clone(), id.clone());
        self.read(move |c| {
            one(
                c,
                &format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1 AND session_id = ?2"
                ),
                params![id.as_str(), session_id.as_str()],
                |r| decode::message(r),
                "message",
                id.as_str(),
            )
        })
        .await
    }

    async fn last_messages(&self, session_id: &SessionId, n: usize) -> Result<Vec<Message>> {
        let session_id = session_id.clone();
        self.read(move |c| last(c, &session_id, n)).await
    }

    async fn last_summary_sequence(&self, session_id: &SessionId) -> Result<Option<i64>> {
        let session_id = session_id.clone();
        self.read(move |c| last_summary(c, &session_id)).await
    }

    async fn load_history(
        &self,
        session_id: &SessionId,
        strategy: HistoryStrategy,
    ) -> Result<Vec<Message>> {
        let session_id = session_id.clone();
        self.read(move |c| history(c, &session_id, strategy)).await
    }

    async fn count_messages(&self, session_id: &SessionId) -> Result<u64> {
        let session_id = session_id.clone();
        self.read(move |c| count(c, &session_id)).await
    }

    async fn list_provider_calls(&self, session_id: &SessionId) -> Result<Vec<ProviderCall>> {
        let session_id = session_id.clone();
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {PROVIDER_CALL_COLUMNS} FROM provider_calls \
                     WHERE session_id = ?1 ORDER BY created_at, rowid"
                ),
                params![session_id.as_str()],
                |r| decode::provider_call(r),
            )
        })
        .await
    }

    // `INDEXED BY`: with the session's own index on `session_id` to choose, the
    // planner would scan every message of a long session to find one turn's.
    async fn list_run_messages(
        &self,
        session_id: &SessionId,
        runs: &[RunId],
    ) -> Result<Vec<Message>> {
        let (session_id, runs) = (session_id.clone(), json_ids(runs));
        self.read(move |c| {
            select_messages(
                c,
                &format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages INDEXED BY messages_by_run \
                     WHERE run_id IN (SELECT value FROM json_each(?2)) AND session_id = ?1 \
                     ORDER BY sequence"
                ),
                params![session_id.as_str(), runs],
            )
        })
        .await
    }

    async fn list_run_provider_calls(
        &self,
        session_id: &SessionId,
        runs: &[RunId],
    ) -> Result<Vec<ProviderCall>> {
        let (session_id, runs) = (session_id.clone(), json_ids(runs));
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {PROVIDER_CALL_COLUMNS} FROM provider_calls \
                     INDEXED BY provider_calls_by_run \
                     WHERE run_id IN (SELECT value FROM json_each(?2)) AND session_id = ?1 \
                     ORDER BY created_at, rowid"
                ),
                params![session_id.as_str(), runs],
                |r| decode::provider_call(r),
            )
        })
        .await
    }

    async fn add_artifact(&self, message_id: &MessageId, artifact: NewArtifact) -> Result<()> {
        let message_id = message_id.clone();
        self.write(move |c| insert_artifact(c, &message_id, &artifact))
            .await
    }

    async fn list_artifacts(
        &self,
        message_id: &MessageId,
    ) -> Result<Vec<(String, String, String)>> {
        let message_id = message_id.clone();
        self.read(move |c| {
            all(
                c,
                "SELECT kind, path, data FROM message_artifacts WHERE message_id = ?1 ORDER BY id",
                params![message_id.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
        })
        .await
    }
}
