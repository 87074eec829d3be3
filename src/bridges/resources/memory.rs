//! Long-term recall on the wire: the search query, its results and recall's
//! status, shared by `GET /hecate/v1/memory/search`, `GET /hecate/v1/memory/status`,
//! the `search_memory` MCP tool and `hecate memory`.

use crate::domain::recall::RecallHit;
use crate::engine::memory::{MemorySearchAnswer, RecallStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Query of `GET /hecate/v1/memory/search`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MemorySearchQuery {
    /// What to look for (at most 8,000 characters). Required; its absence is
    /// answered `memory.request_invalid` naming `query`.
    #[param(required = true)]
    pub query: Option<String>,
    /// The user whose memory is searched (1 to 128 bytes); absent: the
    /// namespace's shared memory.
    pub user: Option<String>,
    /// Only this session's messages.
    pub session: Option<String>,
    /// How many results, 1 to 100 (default 5).
    #[param(minimum = 1, maximum = 100)]
    pub k: Option<i64>,
}

/// One recalled message.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct MemoryHitDto {
    /// The session it was said in.
    pub session_id: String,
    /// The message.
    pub message_id: String,
    /// Its sequence in the session.
    pub sequence: i64,
    /// `user` or `assistant`.
    pub role: String,
    /// The text that was embedded.
    pub text: String,
    /// When the message was written.
    pub created_at: String,
    /// Cosine similarity to the query (1: same direction).
    pub score: f32,
}

impl From<&RecallHit> for MemoryHitDto {
    fn from(h: &RecallHit) -> Self {
        Self {
            session_id: h.entry.session_id.to_string(),
            message_id: h.entry.message_id.to_string(),
            sequence: h.entry.sequence,
            role: h.entry.role.as_str().to_string(),
            text: h.entry.text.clone(),
            created_at: h.entry.created_at.clone(),
            score: h.score,
        }
    }
}

/// Whether recall works, and its counters in this process: the engine's
/// report is the wire shape.
pub type RecallStatusDto = RecallStatus;

impl From<&RecallStatus> for RecallStatusDto {
    /// The wire form of a borrowed status: a copy of it.
    fn from(s: &RecallStatus) -> Self {
        s.clone()
    }
}

/// A search's answer: recall's status and the nearest messages, closest first
/// (none when degraded).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct MemorySearchDto {
    /// Recall's status when the search ran.
    pub status: RecallStatusDto,
    /// The results.
    pub results: Vec<MemoryHitDto>,
}

impl From<&MemorySearchAnswer> for MemorySearchDto {
    fn from(a: &MemorySearchAnswer) -> Self {
        Self {
            status: a.status.clone(),
            results: a.results.iter().map(MemoryHitDto::from).collect(),
        }
    }
}

/// `GET /hecate/v1/memory/search` answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MemorySearchResponse {
    /// Always `memory_search`.
    pub object: String,
    /// The answer.
    pub data: MemorySearchDto,
}

/// `GET /hecate/v1/memory/status` answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecallStatusResponse {
    /// Always `memory_status`.
    pub object: String,
    /// The status.
    pub data: RecallStatusDto,
}
