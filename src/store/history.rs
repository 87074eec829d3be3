//! History loading strategies: what part of a stored transcript a runtime sees.
//! Each strategy reads only what it needs from SQL instead of loading everything.

use crate::domain::error::Result;
use crate::domain::ids::SessionId;
use crate::domain::message::Message;
use crate::store::MessageStore;
use serde::{Deserialize, Serialize};

/// How many messages between two summarization-needed flags.
pub const SUMMARIZE_EVERY: u64 = 20;

/// Upper bound on what the summary strategy loads when no checkpoint exists.
pub const SUMMARY_SAFETY_LIMIT: usize = 100;

/// A history loading strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "strategy", rename_all = "snake_case")]
pub enum HistoryStrategy {
    /// The last `window` messages.
    BufferWindow {
        /// Window size.
        window: usize,
    },
    /// From the newest summary message on; the last `SUMMARY_SAFETY_LIMIT` messages
    /// when the session has no summary yet.
    SummaryCheckpoint,
}

impl Default for HistoryStrategy {
    fn default() -> Self {
        Self::BufferWindow { window: 100 }
    }
}

impl HistoryStrategy {
    /// Loads the messages this strategy gives a runtime, in sequence order.
    pub async fn load(
        &self,
        store: &dyn MessageStore,
        session: &SessionId,
    ) -> Result<Vec<Message>> {
        match *self {
            Self::BufferWindow { window } => store.last_messages(session, window).await,
            Self::SummaryCheckpoint => match store.last_summary_sequence(session).await? {
                Some(seq) => {
                    store
                        .list_messages(session, Some(seq - 1), usize::MAX)
                        .await
                }
                None => store.last_messages(session, SUMMARY_SAFETY_LIMIT).await,
            },
        }
    }
}

/// Whether a session that now holds `count` messages, after appending `added`, has
/// crossed a multiple of `SUMMARIZE_EVERY` (the turn result carries this flag).
pub fn summarization_needed(count: u64, added: u64) -> bool {
    let before = count.saturating_sub(added);
    count / SUMMARIZE_EVERY > before / SUMMARIZE_EVERY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_every_twentieth_message() {
        assert!(!summarization_needed(18, 2));
        assert!(summarization_needed(20, 2));
        assert!(summarization_needed(21, 2));
        assert!(!summarization_needed(22, 1));
        assert!(summarization_needed(40, 2));
    }
}
