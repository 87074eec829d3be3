//! Long-term recall, the engine's half: which messages are indexed (user prompts
//! and completed answers with text, queued off the turn's path), searches within
//! one memory scope, what recall reports about itself, and the recalled messages
//! a model turn gets when its session asks for `recall = k`.

use super::recall_state::RecallStatus;
use crate::adapters::providers::Embedder;
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::SessionId;
use crate::domain::message::{Message, MessageStatus, Role};
use crate::domain::recall::{
    Degraded, MAX_EMBED_CHARS, MemoryEntry, RecallHit, RecallQuery, invalid, recall_context,
    valid_k, valid_user,
};
use crate::domain::session::Session;
use crate::engine::Memory;
use crate::store::VectorSearch;
use serde::Serialize;
use std::time::Duration;

/// How long a search waits for the messages queued before it to be indexed.
const SEARCH_FLUSH_LIMIT: Duration = Duration::from_secs(10);

/// How long a turn waits for its recalled messages before going on without.
const TURN_RECALL_LIMIT: Duration = Duration::from_secs(5);

/// How long shutdown waits for the last batches.
const SHUTDOWN_FLUSH_LIMIT: Duration = Duration::from_secs(15);

/// A search as a surface asks it.
#[derive(Debug, Clone, Default)]
pub struct MemorySearch {
    /// What to look for.
    pub query: String,
    /// The user whose memory is searched; absent: the namespace's shared memory.
    pub user: Option<String>,
    /// Only this session's messages.
    pub session: Option<String>,
    /// How many results (1 to 100, default 5).
    pub k: Option<i64>,
}

/// A search's answer: the results and recall's state when it ran (a degraded
/// recall answers no results, not an error).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemorySearchAnswer {
    /// Recall's state.
    pub status: RecallStatus,
    /// The nearest messages, closest first.
    pub results: Vec<RecallHit>,
}

/// What a recall attempt for a turn came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TurnRecall {
    /// The session asks for none, or nothing close was found.
    Nothing,
    /// The recalled messages, as one system message, and what was recalled.
    Recalled(Box<Message>, Vec<RecallHit>),
    /// Recall could not run; the turn goes on without it.
    Degraded(Degraded),
}

impl<'e> Memory<'e> {
    /// What recall reports about itself.
    pub fn status(self) -> RecallStatus {
        self.engine.inner.recall.status()
    }

    /// Asks the embeddings model for one vector now and reports recall's status
    /// with what it answered (the counters are this process's).
    pub async fn probe(self) -> RecallStatus {
        let recall = &self.engine.inner.recall;
        if let (Some(embedder), Some(indexer)) = (&recall.settings.embedder, &recall.indexer) {
            let answered = embedder.embed(&["recall probe".to_string()]).await;
            indexer.stats().set_failing(
                answered
                    .err()
                    .map(|e| e.into_hecate(embedder.provider(), embedder.model()).message),
            );
        }
        self.status()
    }

    /// Queues a stored message of `session` for indexing (user prompts and
    /// completed answers with text); returns at once.
    pub(crate) fn index_message(self, session: &Session, m: &Message) {
        let Some(indexer) = &self.engine.inner.recall.indexer else {
            return;
        };
        let indexed_role = matches!(m.role, Role::User)
            || (m.role == Role::Assistant && m.status == MessageStatus::Completed);
        let text = m.content.trim();
        if !indexed_role || m.is_summary || text.is_empty() {
            return;
        }
        indexer.queue(
            MemoryEntry {
                namespace: session.namespace.clone(),
                user: session.memory.user_key().to_string(),
                session_id: session.id.clone(),
                message_id: m.id.clone(),
                sequence: m.sequence,
                role: m.role,
                text: text.to_string(),
                created_at: m.created_at.clone(),
            }
            .clipped(),
        );
    }

    /// Sends the queued batches and waits for them (process exit).
    pub(crate) async fn flush_recall(self) {
        if let Some(indexer) = &self.engine.inner.recall.indexer
            && tokio::time::timeout(SHUTDOWN_FLUSH_LIMIT, indexer.flush())
                .await
                .is_err()
        {
            tracing::warn!("recall indexing did not finish before shutdown");
        }
    }

    /// Searches the memory of a user (or the namespace's shared memory) in
    /// `namespace` by meaning. Bad fields are `memory.request_invalid` naming the
    /// field; a session of another namespace is `not_found`. When embeddings or
    /// vector search are unavailable the answer is degraded with no results.
    pub async fn search(self, namespace: &str, req: MemorySearch) -> Result<MemorySearchAnswer> {
        let query = req.query.trim();
        if query.is_empty() {
            return Err(invalid("query", "query must not be empty"));
        }
        if query.chars().count() > MAX_EMBED_CHARS {
            return Err(invalid(
                "query",
                format!("query must be at most {MAX_EMBED_CHARS} characters"),
            ));
        }
        let user = valid_user("user", req.user.as_deref())?;
        let k = valid_k("k", req.k)?;
        let session = match req
            .session
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            Some(id) => {
                let id = SessionId::from(id);
                self.engine
                    .get_session(namespace, &id)
                    .await
                    .map_err(|e| e.with_detail("field", "session"))?;
                Some(id)
            }
            None => None,
        };
        let recall = &self.engine.inner.recall;
        let Some(embedder) = &recall.settings.embedder else {
            return Ok(self.degraded_answer());
        };
        if let Some(indexer) = &recall.indexer {
            // A search sees what this process queued before it.
            let _ = tokio::time::timeout(SEARCH_FLUSH_LIMIT, indexer.flush()).await;
        }
        let hits = self
            .nearest(
                embedder,
                RecallQuery {
                    namespace: namespace.to_string(),
                    user: user.unwrap_or_default(),
                    model: embedder.model().to_string(),
                    embedding: Vec::new(),
                    session,
                    exclude_session: None,
                    k,
                },
                query,
            )
            .await?;
        Ok(match hits {
            Ok(results) => MemorySearchAnswer {
                status: self.status(),
                results,
            },
            Err(_) => self.degraded_answer(),
        })
    }

    fn degraded_answer(self) -> MemorySearchAnswer {
        MemorySearchAnswer {
            status: self.status(),
            results: Vec::new(),
        }
    }

    /// Embeds `text` into `query` and searches; the inner error is why recall is
    /// degraded (also remembered for the status). Store failures are errors.
    async fn nearest(
        self,
        embedder: &Embedder,
        mut query: RecallQuery,
        text: &str,
    ) -> Result<std::result::Result<Vec<RecallHit>, Degraded>> {
        let recall = &self.engine.inner.recall;
        let vectors = match embedder.embed(&[text.to_string()]).await {
            Ok(v) => v,
            Err(e) => {
                let why = e.into_hecate(embedder.provider(), embedder.model()).message;
                if let Some(indexer) = &recall.indexer {
                    indexer.stats().set_failing(Some(why.clone()));
                }
                return Ok(Err(Degraded::embeddings(why)));
            }
        };
        query.embedding = vectors.into_iter().next().unwrap_or_default();
        match self.engine.store().search_memory(&query).await? {
            VectorSearch::Hits(hits) => {
                recall.set_search_failing(None);
                Ok(Ok(hits))
            }
            VectorSearch::Unavailable(why) => {
                recall.set_search_failing(Some(why.clone()));
                Ok(Err(Degraded::vector_search(why)))
            }
        }
    }

    /// The recalled messages a model turn of `session` gets for `prompt`: the
    /// `recall` nearest messages of the session's memory scope from its other
    /// sessions, those with no similarity left out. Never fails the turn, and
    /// never holds it longer than five seconds.
    pub(crate) async fn recall_for_turn(self, session: &Session, prompt: &str) -> TurnRecall {
        let k = session
            .memory
            .recall
            .unwrap_or(self.engine.inner.config.memory.default_recall) as usize;
        let prompt = prompt.trim();
        if k == 0 || prompt.is_empty() {
            return TurnRecall::Nothing;
        }
        let Some(embedder) = &self.engine.inner.recall.settings.embedder else {
            return TurnRecall::Degraded(Degraded::not_configured());
        };
        let text: String = prompt.chars().take(MAX_EMBED_CHARS).collect();
        let query = RecallQuery {
            namespace: session.namespace.clone(),
            user: session.memory.user_key().to_string(),
            model: embedder.model().to_string(),
            embedding: Vec::new(),
            session: None,
            exclude_session: Some(session.id.clone()),
            k,
        };
        let found = tokio::time::timeout(TURN_RECALL_LIMIT, self.nearest(embedder, query, &text));
        let Ok(found) = found.await else {
            return TurnRecall::Degraded(Degraded::embeddings(format!(
                "recall took longer than {} s; the turn went on without it",
                TURN_RECALL_LIMIT.as_secs()
            )));
        };
        match found {
            Ok(Ok(mut hits)) => {
                // Unrelated messages (no similarity at all) are not context.
                hits.retain(|h| h.score > 0.0);
                if hits.is_empty() {
                    TurnRecall::Nothing
                } else {
                    TurnRecall::Recalled(
                        Box::new(Message::unstored(Role::System, recall_context(&hits))),
                        hits,
                    )
                }
            }
            Ok(Err(d)) => TurnRecall::Degraded(d),
            Err(e) => TurnRecall::Degraded(Degraded::vector_search(store_failure(&e))),
        }
    }
}

/// A store failure during recall, as the degraded reason's sentence.
fn store_failure(e: &HecateError) -> String {
    format!("the store failed during the recall search: {}", e.message)
}
