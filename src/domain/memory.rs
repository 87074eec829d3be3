//! Working-memory strategies: which part of a session's stored transcript a turn
//! sees. Every message stays stored; a strategy only chooses what is read back.
//! Summaries are ordinary messages flagged `is_summary`, never rewrites. Also a
//! session's long-term memory settings (`domain::recall` has the rest).

use crate::domain::error::{ErrorType, HecateError};
use serde::{Deserialize, Serialize};

/// How many messages between two summarization-needed flags.
pub const SUMMARIZE_EVERY: u64 = 20;

/// Upper bound on what the summary buffer loads when no checkpoint exists.
pub const SUMMARY_SAFETY_LIMIT: usize = 100;

/// The window `buffer_window` uses when none is given.
pub const DEFAULT_WINDOW: usize = 100;

/// The budget `token_budget` uses when none is given (a common small context).
pub const DEFAULT_MAX_TOKENS: usize = 8192;

/// A working-memory strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "strategy", rename_all = "snake_case")]
pub enum HistoryStrategy {
    /// The last `window` messages.
    BufferWindow {
        /// Window size.
        window: usize,
    },
    /// The newest summary message and everything after it; the last
    /// `SUMMARY_SAFETY_LIMIT` messages while the session has no summary yet.
    #[serde(alias = "summary_checkpoint")]
    SummaryBuffer,
    /// As many of the newest messages as fit `max_tokens` by [`estimate_tokens`];
    /// the newest message is always included.
    TokenBudget {
        /// The budget, such as a model's context size.
        max_tokens: usize,
    },
}

impl Default for HistoryStrategy {
    fn default() -> Self {
        Self::BufferWindow {
            window: DEFAULT_WINDOW,
        }
    }
}

impl HistoryStrategy {
    /// The strategy's wire name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::BufferWindow { .. } => "buffer_window",
            Self::SummaryBuffer => "summary_buffer",
            Self::TokenBudget { .. } => "token_budget",
        }
    }

    /// Builds a strategy from its name (`summary_checkpoint` is the old name of
    /// `summary_buffer`) and optional sizes; zero sizes count as one. An unknown
    /// name is `history_strategy_invalid` naming `field`.
    pub fn from_parts(
        field: &str,
        name: &str,
        window: Option<usize>,
        max_tokens: Option<usize>,
    ) -> Result<Self, HecateError> {
        match name {
            "buffer_window" => Ok(Self::BufferWindow {
                window: window.unwrap_or(DEFAULT_WINDOW).max(1),
            }),
            "summary_buffer" | "summary_checkpoint" => Ok(Self::SummaryBuffer),
            "token_budget" => Ok(Self::TokenBudget {
                max_tokens: max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1),
            }),
            other => Err(HecateError::new(
                ErrorType::HistoryStrategyInvalid,
                format!(
                    "{field} {other:?} is not one of buffer_window, summary_buffer, token_budget"
                ),
            )
            .with_detail("field", field)),
        }
    }

    /// Whether this strategy wants a summary written once `summarization_needed`
    /// fires.
    pub fn summarizes(&self) -> bool {
        matches!(self, Self::SummaryBuffer)
    }
}

/// The memory settings of a session: whose long-term memory it writes to and
/// reads from, and how many recalled messages each of its turns gets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMemory {
    /// The user within the namespace; `None` is the namespace's shared scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Recalled messages injected into each turn; `None` takes `[memory] recall`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<u32>,
}

impl SessionMemory {
    /// Whether nothing is set (stored as NULL).
    pub fn is_default(&self) -> bool {
        self.user.is_none() && self.recall.is_none()
    }

    /// The scope's user key: the user, or `""` for the namespace's shared scope.
    pub fn user_key(&self) -> &str {
        self.user.as_deref().unwrap_or("")
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

    #[test]
    fn names_parse_with_the_old_alias_and_unknown_names_fail_naming_the_field() {
        let s = HistoryStrategy::from_parts("history.strategy", "summary_checkpoint", None, None);
        assert_eq!(s.expect("alias"), HistoryStrategy::SummaryBuffer);
        let s = HistoryStrategy::from_parts("history.strategy", "token_budget", None, Some(0));
        assert_eq!(
            s.expect("ok"),
            HistoryStrategy::TokenBudget { max_tokens: 1 }
        );
        let e = HistoryStrategy::from_parts("history.strategy", "lru", None, None)
            .expect_err("unknown");
        assert_eq!(e.error_type, ErrorType::HistoryStrategyInvalid);
        assert!(e.message.contains("history.strategy"));
    }
}
