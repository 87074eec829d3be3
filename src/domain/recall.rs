//! Long-term recall: a namespace's messages, embedded as vectors per memory scope
//! (the namespace and a user within it), searched by meaning across sessions. The
//! types here are what the store keeps and answers, what a search asks, and how
//! recalled messages are shown to a model. Plain data and pure functions.

use crate::domain::error::{ErrorType, HecateError};
use crate::domain::ids::{MessageId, SessionId};
pub use crate::domain::memory::SessionMemory;
use crate::domain::message::Role;
use serde::{Deserialize, Serialize};

/// Most recalled messages a turn can ask for (`recall` on a session).
pub const MAX_RECALL: u32 = 50;

/// Most results one search answers.
pub const MAX_SEARCH_K: usize = 100;

/// Results a search answers when it names no `k`.
pub const DEFAULT_SEARCH_K: usize = 5;

/// Longest user name of a memory scope, in bytes.
pub const MAX_USER_BYTES: usize = 128;

/// Longest text embedded for one message, in characters (the rest is cut).
pub const MAX_EMBED_CHARS: usize = 8000;

/// Checks a user name given in `field`: 1 to 128 bytes, no control characters.
/// An empty name counts as absent.
pub fn valid_user(field: &str, user: Option<&str>) -> Result<Option<String>, HecateError> {
    let Some(user) = user.map(str::trim).filter(|u| !u.is_empty()) else {
        return Ok(None);
    };
    if user.len() > MAX_USER_BYTES || user.chars().any(char::is_control) {
        return Err(invalid(
            field,
            format!("{field} must be 1 to {MAX_USER_BYTES} bytes without control characters"),
        ));
    }
    Ok(Some(user.to_string()))
}

/// Checks a per-turn recall count given in `field`.
pub fn valid_recall(field: &str, recall: Option<i64>) -> Result<Option<u32>, HecateError> {
    match recall {
        None => Ok(None),
        Some(k) if (0..=MAX_RECALL as i64).contains(&k) => Ok(Some(k as u32)),
        Some(k) => Err(invalid(
            field,
            format!("{field} must be between 0 and {MAX_RECALL}, got {k}"),
        )),
    }
}

/// Checks a search's result count given in `field` (default [`DEFAULT_SEARCH_K`]).
pub fn valid_k(field: &str, k: Option<i64>) -> Result<usize, HecateError> {
    match k {
        None => Ok(DEFAULT_SEARCH_K),
        Some(k) if (1..=MAX_SEARCH_K as i64).contains(&k) => Ok(k as usize),
        Some(k) => Err(invalid(
            field,
            format!("{field} must be between 1 and {MAX_SEARCH_K}, got {k}"),
        )),
    }
}

/// A `memory.request_invalid` error naming `field`.
pub fn invalid(field: &str, message: impl Into<String>) -> HecateError {
    HecateError::new(ErrorType::MemoryRequestInvalid, message).with_detail("field", field)
}

/// One message as long-term memory keeps it: its place and its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntry {
    /// The namespace it belongs to.
    pub namespace: String,
    /// The user within the namespace (`""`: the shared scope).
    pub user: String,
    /// The session it was said in.
    pub session_id: SessionId,
    /// The message.
    pub message_id: MessageId,
    /// Its sequence in the session.
    pub sequence: i64,
    /// Who said it.
    pub role: Role,
    /// The text that was embedded.
    pub text: String,
    /// When the message was written.
    pub created_at: String,
}

impl MemoryEntry {
    /// The text cut to [`MAX_EMBED_CHARS`] characters (what is embedded and kept).
    pub fn clipped(mut self) -> Self {
        if let Some((cut, _)) = self.text.char_indices().nth(MAX_EMBED_CHARS) {
            self.text.truncate(cut);
        }
        self
    }
}

/// An entry with its vector, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryVector {
    /// What was embedded.
    pub entry: MemoryEntry,
    /// The embeddings model that made the vector (vectors of two models are
    /// never compared).
    pub model: String,
    /// The vector.
    pub embedding: Vec<f32>,
}

/// A nearest-neighbour search within one memory scope.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallQuery {
    /// The namespace searched (never crossed).
    pub namespace: String,
    /// The user searched (`""`: the shared scope).
    pub user: String,
    /// Only vectors of this model are compared.
    pub model: String,
    /// The query's vector.
    pub embedding: Vec<f32>,
    /// Only this session's messages, when given.
    pub session: Option<SessionId>,
    /// Never this session's messages, when given (recall into a turn skips the
    /// session's own transcript, which its history already holds).
    pub exclude_session: Option<SessionId>,
    /// At most this many results.
    pub k: usize,
}

/// One result: the entry and how close it is to the query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallHit {
    /// The recalled message.
    #[serde(flatten)]
    pub entry: MemoryEntry,
    /// Cosine similarity to the query, 1 for the same direction.
    pub score: f32,
}

/// Whether recall works right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecallState {
    /// Embeddings and vector search both answer.
    Ready,
    /// Something is missing or failing; chat goes on without recall.
    Degraded,
}

/// Why recall is degraded, as a stable reason and a sentence naming the fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Degraded {
    /// `embeddings_not_configured`, `embeddings_unavailable` or
    /// `vector_search_unavailable`.
    pub reason: String,
    /// What happened and what to do.
    pub message: String,
}

impl Degraded {
    /// No `[memory] embeddings` is configured.
    pub fn not_configured() -> Self {
        Self {
            reason: "embeddings_not_configured".into(),
            message:
                "recall is off: set [memory] embeddings = \"PROVIDER/MODEL\" in the config file"
                    .into(),
        }
    }

    /// The embeddings call failed with `why`.
    pub fn embeddings(why: impl Into<String>) -> Self {
        Self {
            reason: "embeddings_unavailable".into(),
            message: why.into(),
        }
    }

    /// The store cannot search vectors (`why` names the fix).
    pub fn vector_search(why: impl Into<String>) -> Self {
        Self {
            reason: "vector_search_unavailable".into(),
            message: why.into(),
        }
    }
}

/// The text that opens the recalled-messages context.
pub const RECALL_HEADER: &str = "Recalled from earlier conversations (most relevant first; \
     context only, not part of this conversation):";

/// Renders recalled messages as the one system message a turn gets: the
/// header, then one line per hit, `[n] (ROLE, DATE) TEXT`, with line breaks in
/// the text turned into spaces.
pub fn recall_context(hits: &[RecallHit]) -> String {
    let mut out = RECALL_HEADER.to_string();
    for (i, h) in hits.iter().enumerate() {
        let date = h.entry.created_at.get(..10).unwrap_or(&h.entry.created_at);
        let text = h
            .entry
            .text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!(
            "\n[{}] ({}, {date}) {text}",
            i + 1,
            h.entry.role.as_str()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(role: Role, text: &str) -> RecallHit {
        RecallHit {
            entry: MemoryEntry {
                namespace: "default".into(),
                user: String::new(),
                session_id: SessionId::from("ses_1"),
                message_id: MessageId::from("msg_1"),
                sequence: 0,
                role,
                text: text.into(),
                created_at: "2026-11-27T07:00:00Z".into(),
            },
            score: 0.5,
        }
    }

    #[test]
    fn recalled_messages_render_as_numbered_lines_under_the_header() {
        let text = recall_context(&[
            hit(Role::User, "my cat is\ncalled Miso"),
            hit(Role::Assistant, "noted"),
        ]);
        assert_eq!(
            text,
            format!(
                "{RECALL_HEADER}\n[1] (user, 2026-11-27) my cat is called Miso\n[2] (assistant, 2026-11-27) noted"
            )
        );
    }

    #[test]
    fn fields_are_checked_and_errors_name_them() {
        assert_eq!(valid_user("user", Some("  ")).expect("blank"), None);
        assert_eq!(
            valid_user("user", Some("alice")).expect("ok"),
            Some("alice".into())
        );
        let e = valid_user("user", Some("a\u{7}")).expect_err("control");
        assert_eq!(e.error_type, ErrorType::MemoryRequestInvalid);
        assert_eq!(e.details["field"], "user");
        assert_eq!(valid_k("k", None).expect("default"), DEFAULT_SEARCH_K);
        assert_eq!(
            valid_k("k", Some(0)).expect_err("zero").details["field"],
            "k"
        );
        assert_eq!(
            valid_recall("recall", Some(51)).expect_err("big").details["field"],
            "recall"
        );
        assert_eq!(valid_recall("recall", Some(0)).expect("zero"), Some(0));
    }

    #[test]
    fn long_texts_are_clipped_on_a_character_boundary() {
        let mut e = hit(Role::User, "").entry;
        e.text = "é".repeat(MAX_EMBED_CHARS + 5);
        assert_eq!(e.clipped().text.chars().count(), MAX_EMBED_CHARS);
    }
}
