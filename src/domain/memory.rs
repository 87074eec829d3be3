//! Working-memory strategies: which part of a session's stored transcript a turn
//! sees. Every message stays stored; a strategy only chooses what is read back.
//! Summaries are ordinary messages flagged `is_summary`, never rewrites.

use crate::domain::error::{ErrorType, HecateError};
use crate::domain::message::Message;
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

/// Estimated tokens of a message: one per four characters of its text and tool
/// calls (rounded up) plus four for the message's framing. A deliberate
/// over-estimate for English text that needs no tokenizer.
pub fn estimate_tokens(message: &Message) -> usize {
    let chars = message.content.chars().count()
        + message
            .tool_calls
            .iter()
            .map(|c| c.name.chars().count() + c.arguments.chars().count())
            .sum::<usize>();
    4 + chars.div_ceil(4)
}

/// Fills a token budget with messages offered newest first.
#[derive(Debug, Clone, Copy)]
pub struct BudgetFill {
    budget: usize,
    used: usize,
    taken: usize,
}

impl BudgetFill {
    /// An empty fill of `budget` tokens.
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            used: 0,
            taken: 0,
        }
    }

    /// Takes the next-older message if it still fits (the first one always does);
    /// `false` means this and every older message stays out.
    pub fn admit(&mut self, message: &Message) -> bool {
        let cost = estimate_tokens(message);
        if self.taken > 0 && self.used + cost > self.budget {
            return false;
        }
        self.used += cost;
        self.taken += 1;
        true
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
    use crate::domain::ids::{MessageId, SegmentId, SessionId};
    use crate::domain::message::{MessageStatus, Role, RuntimeSnapshot};
    use crate::domain::session::RuntimeKind;

    fn msg(text: &str) -> Message {
        Message {
            id: MessageId("m".into()),
            session_id: SessionId("s".into()),
            sequence: 0,
            role: Role::User,
            content: text.into(),
            content_blocks: vec![],
            tool_calls: vec![],
            tool_call_id: None,
            tool_error: false,
            produced_by_call_id: None,
            run_id: None,
            status: MessageStatus::Completed,
            is_summary: false,
            error: None,
            runtime: RuntimeSnapshot {
                runtime_kind: RuntimeKind::Model,
                segment_id: SegmentId("g".into()),
                provider: None,
                model: None,
                adapter_id: None,
                task_id: None,
                task_run_id: None,
            },
            created_at: String::new(),
        }
    }

    #[test]
    fn flags_every_twentieth_message() {
        assert!(!summarization_needed(18, 2));
        assert!(summarization_needed(20, 2));
        assert!(summarization_needed(21, 2));
        assert!(!summarization_needed(22, 1));
        assert!(summarization_needed(40, 2));
    }

    #[test]
    fn estimates_a_quarter_token_per_char_plus_framing() {
        assert_eq!(estimate_tokens(&msg("")), 4);
        assert_eq!(estimate_tokens(&msg("abcd")), 5);
        assert_eq!(estimate_tokens(&msg("abcde")), 6);
    }

    #[test]
    fn budget_stops_at_the_first_message_that_does_not_fit() {
        let mut fill = BudgetFill::new(20);
        assert!(fill.admit(&msg(&"x".repeat(40)))); // 14
        assert!(fill.admit(&msg("abcd"))); // 19
        assert!(!fill.admit(&msg("abcd"))); // 24 > 20
    }

    #[test]
    fn the_newest_message_is_taken_even_over_budget() {
        let mut fill = BudgetFill::new(1);
        assert!(fill.admit(&msg(&"x".repeat(400))));
        assert!(!fill.admit(&msg("")));
    }

    #[test]
    fn names_parse_with_the_old_alias_and_unknown_names_fail_naming_the_field() {
        let s = HistoryStrategy::from_parts("history.strategy", "summary_checkpoint", None, None);
        assert_eq!(s.expect("alias"), HistoryStrategy::SummaryBuffer);
        let s = HistoryStrategy::from_parts("history.strategy", "token_budget", None, Some(0));
        assert_eq!(s.expect("ok"), HistoryStrategy::TokenBudget { max_tokens: 1 });
        let e = HistoryStrategy::from_parts("history.strategy", "lru", None, None)
            .expect_err("unknown");
        assert_eq!(e.error_type, ErrorType::HistoryStrategyInvalid);
        assert!(e.message.contains("history.strategy"));
    }
}
