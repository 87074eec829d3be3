//! The message and provider-call streams, and message artifacts. Appending locks
//! the session's row first, so concurrent appends (from any replica) take their
//! sequences one after the other: gap-free, never duplicated.

use super::cached::CachedStatements;
use super::{OpResult, PostgresStore, big, limit, sessions};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::{MessageId, RunId, SessionId};
use crate::domain::message::{Message, NewMessage};
use crate::domain::provider_call::ProviderCall;
use crate::domain::time::now_rfc3339;
use crate::store::history::{BUDGET_PAGE, BudgetPages, HistoryStrategy};
use crate::store::rows::messages::{self as decode, MESSAGE_COLUMNS, PROVIDER_CALL_COLUMNS};
use crate::store::{LoadOptions, MessageCursor, MessageStore, NewArtifact};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

fn to_messages(rows: &[Row]) -> OpResult<Vec<Message>> {
    rows.iter().map(decode::message).collect()
}

fn to_provider_calls(rows: &[Row]) -> OpResult<Vec<ProviderCall>> {
    rows.iter().map(decode::provider_call).collect()
}

/// The rows `select` reads for what `runs` of session `session_id` wrote; its
/// `$1` is the session and `$2` the run ids.
async fn of_runs<C: GenericClient>(
    c: &C,
    select: &str,
    session_id: &SessionId,
    runs: &[RunId],
) -> OpResult<Vec<Row>> {
    let runs: Vec<&str> = runs.iter().map(RunId::as_str).collect();
    Ok(c.query_cached(select, &[&session_id.as_str(), &runs])
        .await?)
}

/// The statement that inserts one provider call.
pub(super) const INSERT_CALL: &str = "INSERT INTO provider_calls (id, session_id, run_id, request_id, \
     provider, model, prompt_tokens, completion_tokens, total_tokens, cost_micros_usd, \
     duration_ms, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)";

async fn insert_call<C: GenericClient>(tx: &C, call: &ProviderCall) -> OpResult<()> {
    tx.execute_cached(
        INSERT_CALL,
        &[
            &call.id.as_str(),
            &call.session_id.as_str(),
            &call.run_id.as_ref().map(|r| r.as_str()),
            &call.request_id,
            &call.provider,
            &call.model,
            &big(call.usage.prompt_tokens),
            &big(call.usage.completion_tokens),
            &big(call.usage.total_tokens),
            &call.cost_micros_usd,
            &call.duration_ms,
            &call.created_at,
        ],
    )
    .await?;
    Ok(())
}

/// Locks the session's row until the transaction ends, so its messages get their
/// sequences one writer at a time.
pub(super) const LOCK_SESSION: &str = "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE";
/// The sequence the session's next message gets (read under its row lock).
pub(super) const NEXT_SEQUENCE: &str =
    "SELECT COALESCE(MAX(sequence), -1) + 1 FROM messages WHERE session_id = $1";

/// The statement that inserts one message.
pub(super) fn insert_message_sql() -> String {
    format!("INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)")
}

/// The statement that reads a session's newest messages (`$2` of them).
pub(super) fn last_messages_sql() -> String {
    format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 \
         ORDER BY sequence DESC LIMIT $2"
    )
}

/// The sequence session `session_id`'s next message gets; call it holding the
/// session's row lock.
pub(super) async fn next_sequence<C: GenericClient>(
    tx: &C,
    session_id: &SessionId,
) -> OpResult<i64> {
    Ok(tx
        .query_one_cached(NEXT_SEQUENCE, &[&session_id.as_str()])
        .await?
        .try_get(0)?)
}

/// Appends `messages` (assigning the next gap-free sequences under the session's
/// row lock) and, when given, the provider call that produced them, inside the
/// caller's transaction.
pub(super) async fn append<C: GenericClient>(
    tx: &C,
    session_id: &SessionId,
    messages: Vec<NewMessage>,
    call: Option<&ProviderCall>,
) -> OpResult<Vec<Message>> {
    tx.execute_cached(LOCK_SESSION, &[&session_id.as_str()])
        .await?;
    let next = next_sequence(tx, session_id).await?;
    let now = now_rfc3339();
    let stored = append_at(tx, session_id, messages, call, next, &now).await?;
    sessions::touch(tx, session_id, &now).await?;
    Ok(stored)
}

/// Inserts `messages` from sequence `next` on (and the provider call that
/// produced them), sent together; the caller holds the session's row lock and
/// read `next` under it. The session's `updated_at` is the caller's to write.
pub(super) async fn append_at<C: GenericClient>(
    tx: &C,
    session_id: &SessionId,
    messages: Vec<NewMessage>,
    call: Option<&ProviderCall>,
    next: i64,
    now: &str,
) -> OpResult<Vec<Message>> {
    // Both prepared before either is sent, so the call goes first (its messages
    // refer to it) even on a connection that has not prepared them yet.
    let insert_sql = insert_message_sql();
    let insert = match call {
        Some(_) => {
            futures::try_join!(
                tx.prepare_cached(&insert_sql),
                tx.prepare_cached(INSERT_CALL)
            )?
            .0
        }
        None => tx.prepare_cached(&insert_sql).await?,
    };
    let mut stored = Vec::with_capacity(messages.len());
    let mut bodies = Vec::with_capacity(messages.len());
    for (m, sequence) in messages.into_iter().zip(next..) {
        let (message, body_json) = decode::appended(m, session_id, sequence, now)?;
        stored.push(message);
        bodies.push(body_json);
    }
    let insert = &insert;
    let inserts = stored
        .iter()
        .zip(&bodies)
        .map(|(message, body_json)| async move {
            tx.execute(
                insert,
                &[
                    &message.id.as_str(),
                    &message.session_id.as_str(),
                    &message.sequence,
                    &message.role.as_str(),
                    &message.content,
                    &message.produced_by_call_id.as_ref().map(|c| c.as_str()),
                    &message.run_id.as_ref().map(|r| r.as_str()),
                    &message.status.as_str(),
                    &message.is_summary,
                    body_json,
                    &message.created_at,
                ],
            )
            .await
        });
    // The call first: its messages refer to it.
    match call {
        Some(call) => {
            futures::try_join!(insert_call(tx, call), async {
                futures::future::try_join_all(inserts)
                    .await
                    .map_err(Into::into)
            })?;
        }
        None => {
            futures::future::try_join_all(inserts).await?;
        }
    }
    Ok(stored)
}

/// Stores one artifact on a message.
pub(super) async fn insert_artifact<C: GenericClient>(
    c: &C,
    message_id: &MessageId,
    artifact: &NewArtifact,
) -> OpResult<()> {
    let NewArtifact { kind, path, data } = artifact;
    c.execute(
        "INSERT INTO message_artifacts (message_id, kind, path, data, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
        &[&message_id.as_str(), kind, path, data, &now_rfc3339()],
    )
    .await?;
    Ok(())
}

/// Number of messages in a session.
pub(super) async fn count<C: GenericClient>(c: &C, session_id: &SessionId) -> OpResult<u64> {
    let n: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM messages WHERE session_id = $1",
            &[&session_id.as_str()],
        )
        .await?
        .try_get(0)?;
    Ok(n as u64)
}

/// The last `n` messages of a session in sequence order.
pub(super) async fn last<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    n: usize,
) -> OpResult<Vec<Message>> {
    let stmt = c.prepare_cached(&last_messages_sql()).await?;
    let rows = c.query(&stmt, &[&session_id.as_str(), &limit(n)]).await?;
    let mut out = to_messages(&rows)?;
    out.reverse();
    Ok(out)
}

/// Up to `n` messages of a session after sequence `after`, in order.
pub(super) async fn since<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    after: Option<i64>,
    n: usize,
) -> OpResult<Vec<Message>> {
    let stmt = c
        .prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND sequence > $2 \
             ORDER BY sequence LIMIT $3"
        ))
        .await?;
    let rows = c
        .query(
            &stmt,
            &[&session_id.as_str(), &after.unwrap_or(-1), &limit(n)],
        )
        .await?;
    to_messages(&rows)
}

/// The sequence of a session's newest summary message, if it has one.
pub(super) async fn last_summary<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
) -> OpResult<Option<i64>> {
    Ok(c.query_one(
        "SELECT MAX(sequence) FROM messages WHERE session_id = $1 AND is_summary",
        &[&session_id.as_str()],
    )
    .await?
    .try_get(0)?)
}

/// Up to `n` messages of a session before sequence `before` (all when `None`),
/// newest first.
async fn page_before<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    before: Option<i64>,
    n: usize,
) -> OpResult<Vec<Message>> {
    let stmt = c
        .prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND sequence < $2 \
             ORDER BY sequence DESC LIMIT $3"
        ))
        .await?;
    let rows = c
        .query(
            &stmt,
            &[&session_id.as_str(), &before.unwrap_or(i64::MAX), &limit(n)],
        )
        .await?;
    to_messages(&rows)
}

/// The messages `o` selects, in sequence order. Without roles it is the plain
/// range read; with roles the same read keeps only those roles.
pub(super) async fn load<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    o: &LoadOptions,
) -> OpResult<Vec<Message>> {
    if o.roles.is_empty() {
        return match o.cursor {
            MessageCursor::After(after) => since(c, session_id, after, o.limit).await,
            MessageCursor::Before(before) => {
                let mut page = page_before(c, session_id, before, o.limit).await?;
                page.reverse();
                Ok(page)
            }
        };
    }
    let (bound, order) = match o.cursor {
        MessageCursor::After(after) => (after.unwrap_or(-1), "sequence > $2 ORDER BY sequence"),
        MessageCursor::Before(before) => (
            before.unwrap_or(i64::MAX),
            "sequence < $2 ORDER BY sequence DESC",
        ),
    };
    let stmt = c
        .prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 \
             AND role = ANY($4) AND {order} LIMIT $3"
        ))
        .await?;
    let rows = c
        .query(
            &stmt,
            &[
                &session_id.as_str(),
                &bound,
                &limit(o.limit),
                &o.role_names(),
            ],
        )
        .await?;
    let mut out = to_messages(&rows)?;
    if matches!(o.cursor, MessageCursor::Before(_)) {
        out.reverse();
    }
    Ok(out)
}

/// The newest messages that fit `max_tokens`, read a page at a time from the end,
/// in sequence order.
async fn within_budget<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    max_tokens: usize,
) -> OpResult<Vec<Message>> {
    let mut pages = BudgetPages::new(max_tokens);
    loop {
        let page = page_before(c, session_id, pages.next_before(), BUDGET_PAGE).await?;
        if let Some(out) = pages.offer(page) {
            return Ok(out);
        }
    }
}

/// The messages `strategy` gives a runtime, in sequence order.
pub(super) async fn history<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    strategy: HistoryStrategy,
) -> OpResult<Vec<Message>> {
    match strategy {
        HistoryStrategy::BufferWindow { window } => last(c, session_id, window).await,
        HistoryStrategy::SummaryBuffer { max_messages, .. } => {
            match last_summary(c, session_id).await? {
                Some(seq) => since(c, session_id, Some(seq - 1), usize::MAX).await,
                None => last(c, session_id, max_messages).await,
            }
        }
        HistoryStrategy::TokenBudget { max_tokens } => {
            within_budget(c, session_id, max_tokens).await
        }
    }
}

#[async_trait]
impl MessageStore for PostgresStore {
    async fn append_exchange(
        &self,
        session_id: &SessionId,
        messages: Vec<NewMessage>,
        call: Option<&ProviderCall>,
    ) -> Result<Vec<Message>> {
        let mut c = self.client().await?;
        let r = async {
            let tx = c.transaction().await?;
            let stored = append(&tx, session_id, messages, call).await?;
            tx.commit().await?;
            Ok(stored)
        }
        .await;
        self.done(r)
    }

    async fn load_messages(
        &self,
        session_id: &SessionId,
        options: &LoadOptions,
    ) -> Result<Vec<Message>> {
        let c = self.client().await?;
        let r = load(&c, session_id, options).await;
        self.done(r)
    }

    async fn get_message(&self, session_id: &SessionId, id: &MessageId) -> Result<Message> {
        let c = self.client().await?;
        let r = async {
            let row = c
                .query_opt(
                    &format!(
                        "SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = $1 AND session_id = $2"
                    ),
                    &[&id.as_str(), &session_id.as_str()],
                )
                .await?;
            match row {
                Some(row) => decode::message(&row),
                None => Err(HecateError::not_found("message", id.as_str()).into()),
            }
        }
        .await;
        self.done(r)
    }

    async fn last_messages(&self, session_id: &SessionId, n: usize) -> Result<Vec<Message>> {
        let c = self.client().await?;
        let r = last(&c, session_id, n).await;
        self.done(r)
    }

    async fn last_summary_sequence(&self, session_id: &SessionId) -> Result<Option<i64>> {
        let c = self.client().await?;
        let r = last_summary(&c, session_id).await;
        self.done(r)
    }

    async fn load_history(
        &self,
        session_id: &SessionId,
        strategy: HistoryStrategy,
    ) -> Result<Vec<Message>> {
        let c = self.client().await?;
        let r = history(&c, session_id, strategy).await;
        self.done(r)
    }

    async fn count_messages(&self, session_id: &SessionId) -> Result<u64> {
        let c = self.client().await?;
        let r = count(&c, session_id).await;
        self.done(r)
    }

    async fn list_provider_calls(&self, session_id: &SessionId) -> Result<Vec<ProviderCall>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    &format!(
                        "SELECT {PROVIDER_CALL_COLUMNS} FROM provider_calls \
                         WHERE session_id = $1 ORDER BY created_at, seq"
                    ),
                    &[&session_id.as_str()],
                )
                .await?;
            to_provider_calls(&rows)
        }
        .await;
        self.done(r)
    }

    async fn list_run_messages(
        &self,
        session_id: &SessionId,
        runs: &[RunId],
    ) -> Result<Vec<Message>> {
        let c = self.client().await?;
        let select = format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages \
             WHERE run_id = ANY($2) AND session_id = $1 ORDER BY sequence"
        );
        let r = of_runs(&c, &select, session_id, runs).await;
        self.done(r.and_then(|rows| to_messages(&rows)))
    }

    async fn list_run_provider_calls(
        &self,
        session_id: &SessionId,
        runs: &[RunId],
    ) -> Result<Vec<ProviderCall>> {
        let c = self.client().await?;
        let select = format!(
            "SELECT {PROVIDER_CALL_COLUMNS} FROM provider_calls \
             WHERE run_id = ANY($2) AND session_id = $1 ORDER BY created_at, seq"
        );
        let r = of_runs(&c, &select, session_id, runs).await;
        self.done(r.and_then(|rows| to_provider_calls(&rows)))
    }

    async fn add_artifact(&self, message_id: &MessageId, artifact: NewArtifact) -> Result<()> {
        let c = self.client().await?;
        let r = insert_artifact(&c, message_id, &artifact).await;
        self.done(r)
    }

    async fn list_artifacts(
        &self,
        message_id: &MessageId,
    ) -> Result<Vec<(String, String, String)>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    "SELECT kind, path, data FROM message_artifacts WHERE message_id = $1 \
                     ORDER BY id",
                    &[&message_id.as_str()],
                )
                .await?;
            rows.iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
                .collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }
}
