//! Recall's state in the engine: its `[memory]` settings, the indexer (when an
//! embeddings model is configured), the last vector-search failure, and what
//! recall reports about itself.

use super::indexer::{Batching, Indexer};
use crate::adapters::providers::Embedder;
use crate::domain::recall::{Degraded, RecallState};
use crate::store::Store;
use schemars::JsonSchema;
use serde::Serialize;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use utoipa::ToSchema;

/// The `[memory]` settings the engine runs recall with.
#[derive(Debug, Clone)]
pub struct RecallSettings {
    /// The embeddings model; `None` turns recall off (reported as degraded).
    pub embedder: Option<Embedder>,
    /// Messages per embeddings request.
    pub batch_size: usize,
    /// Gather time of a batch.
    pub batch_delay: Duration,
    /// Recalled messages per turn for sessions created without `recall`.
    pub default_recall: u32,
}

impl Default for RecallSettings {
    fn default() -> Self {
        Self {
            embedder: None,
            batch_size: 32,
            batch_delay: Duration::from_millis(250),
            default_recall: 0,
        }
    }
}

/// Whether recall works, and its counters in this process.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
#[schema(as = RecallStatusDto)]
#[schemars(rename = "RecallStatusDto")]
pub struct RecallStatus {
    /// `ready` or `degraded` (chat goes on either way).
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub state: RecallState,
    /// Why it is degraded: `embeddings_not_configured`, `embeddings_unavailable`
    /// or `vector_search_unavailable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened and what to do, when degraded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The embeddings model, `provider/model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<String>,
    /// Messages queued in this process and not yet indexed.
    pub pending: u64,
    /// Messages this process indexed since it started.
    pub indexed: u64,
    /// Messages this process dropped unindexed.
    pub dropped: u64,
    /// Embeddings requests this process sent since it started.
    pub batches: u64,
}

impl fmt::Display for RecallState {
    /// The stable name: `ready` or `degraded`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecallState::Ready => "ready",
            RecallState::Degraded => "degraded",
        })
    }
}

/// The engine's recall state: the indexer (when configured) and the last
/// vector-search failure.
pub(crate) struct Recall {
    pub(super) settings: RecallSettings,
    pub(super) indexer: Option<Indexer>,
    search_failing: Mutex<Option<String>>,
}

impl Recall {
    /// Starts the indexer when an embeddings model is configured.
    pub(crate) fn start(store: Arc<dyn Store>, settings: RecallSettings) -> Self {
        let indexer = settings.embedder.clone().map(|e| {
            Indexer::start(
                store,
                e,
                Batching {
                    size: settings.batch_size.max(1),
                    delay: settings.batch_delay,
                },
            )
        });
        Self {
            settings,
            indexer,
            search_failing: Mutex::new(None),
        }
    }

    pub(super) fn set_search_failing(&self, why: Option<String>) {
        *self
            .search_failing
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = why;
    }

    pub(super) fn status(&self) -> RecallStatus {
        let stats = self.indexer.as_ref().map(Indexer::stats);
        let count = |f: fn(&super::indexer::IndexStats) -> u64| stats.map_or(0, f);
        let degraded = match (&self.settings.embedder, stats.and_then(|s| s.failing())) {
            (None, _) => Some(Degraded::not_configured()),
            (Some(_), Some(why)) => Some(Degraded::embeddings(why)),
            (Some(_), None) => self
                .search_failing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone()
                .map(Degraded::vector_search),
        };
        let state = if degraded.is_some() {
            RecallState::Degraded
        } else {
            RecallState::Ready
        };
        let (reason, message) = degraded.map(|d| (d.reason, d.message)).unzip();
        RecallStatus {
            state,
            reason,
            message,
            embeddings: self.settings.embedder.as_ref().map(Embedder::name),
            pending: count(|s| s.pending.load(Ordering::Relaxed)),
            indexed: count(|s| s.indexed.load(Ordering::Relaxed)),
            dropped: count(|s| s.dropped.load(Ordering::Relaxed)),
            batches: count(|s| s.batches.load(Ordering::Relaxed)),
        }
    }
}
