//! Working-memory strategies: which part of a session's stored transcript a turn
//! sees. Every message stays stored; a strategy only chooses what is read back.
//! Summaries are ordinary messages flagged `is_summary`, never rewrites. Also a
//! session's long-term memory settings (`domain::recall` has the rest).

use crate::domain::error::{ErrorType, HecateError};
use serde::{Deserialize, Serialize};

/// How many messages between two summarization-needed flags unless a
/// `summary_buffer` strategy sets `summarize_every`.
pub const DEFAULT_SUMMARIZE_EVERY: u64 = 20;

/// How many messages `summary_buffer` loads while a session has no summary yet,
/// unless it sets `max_messages`.
pub const DEFAULT_MAX_MESSAGES: usize = 100;

/// The largest `summarize_every` and `max_messages` accepted.
pub const MAX_SUMMARY_SETTING: u64 = 10_000;

/// The window `buffer_window` uses when none is given.
pub const DEFAULT_WINDOW: usize = 100;

/// The budget `token_budget` uses when none is given (a common small context).
pub const DEFAULT_MAX_TOKENS: usize = 8192;

fn default_summarize_every() -> u64 {
    DEFAULT_SUMMARIZE_EVERY
}

fn default_max_messages() -> usize {
    DEFAULT_MAX_MESSAGES
}

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
    /// `max_messages` messages while the session has no summary yet.
    #[serde(alias = "summary_checkpoint")]
    SummaryBuffer {
        /// Messages between two summaries.
        #[serde(default = "default_summarize_every")]
        summarize_every: u64,
        /// The most messages loaded while the session has no summary yet.
        #[serde(default = "default_max_messages")]
        max_messages: usize,
    },
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

/// A strategy as a client or the config names it, before it is checked.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryParts<'a> {
    /// The strategy's name.
    pub strategy: &'a str,
    /// Window size for `buffer_window`.
    pub window: Option<usize>,
    /// Token budget for `token_budget`.
    pub max_tokens: Option<usize>,
    /// Messages between two summaries, for `summary_buffer`.
    pub summarize_every: Option<u64>,
    /// Messages loaded before the first summary, for `summary_buffer`.
    pub max_messages: Option<usize>,
}

impl HistoryStrategy {
    /// `summary_buffer` with the default interval and limit.
    pub const fn summary_buffer() -> Self {
        Self::SummaryBuffer {
            summarize_every: DEFAULT_SUMMARIZE_EVERY,
            max_messages: DEFAULT_MAX_MESSAGES,
        }
    }

    /// The strategy's wire name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::BufferWindow { .. } => "buffer_window",
            Self::SummaryBuffer { .. } => "summary_buffer",
            Self::TokenBudget { .. } => "token_budget",
        }
    }

    /// Builds a strategy from its parts (`summary_checkpoint` is the old name of
    /// `summary_buffer`); zero window and budget sizes count as one. `field`
    /// names a key for errors (`"strategy"` → `history.strategy`). An unknown name
    /// is `history_strategy_invalid`; a summary setting out of its range (1 to
    /// [`MAX_SUMMARY_SETTING`]) or given to another strategy is `invalid_request`.
    pub fn from_parts(
        field: impl Fn(&str) -> String,
        parts: HistoryParts<'_>,
    ) -> Result<Self, HecateError> {
        let summary_buffer = matches!(parts.strategy, "summary_buffer" | "summary_checkpoint");
        if !summary_buffer && !matches!(parts.strategy, "buffer_window" | "token_budget") {
            return Err(HecateError::new(
                ErrorType::HistoryStrategyInvalid,
                format!(
                    "{} {:?} is not one of buffer_window, summary_buffer, token_budget",
                    field("strategy"),
                    parts.strategy
                ),
            )
            .with_detail("field", field("strategy")));
        }
        let setting = |key: &str, v: Option<u64>, default: u64| match v {
            Some(_) if !summary_buffer => Err(HecateError::invalid(format!(
                "{} applies to the summary_buffer strategy only, not {:?}",
                field(key),
                parts.strategy
            ))
            .with_detail("field", field(key))),
            Some(n) if !(1..=MAX_SUMMARY_SETTING).contains(&n) => {
                Err(HecateError::invalid(format!(
                    "{} must be between 1 and {MAX_SUMMARY_SETTING}, got {n}",
                    field(key)
                ))
                .with_detail("field", field(key)))
            }
            Some(n) => Ok(n),
            None => Ok(default),
        };
        let summarize_every = setting(
            "summarize_every",
            parts.summarize_every,
            DEFAULT_SUMMARIZE_EVERY,
        )?;
        let max_messages = setting(
            "max_messages",
            parts.max_messages.map(|n| n as u64),
            DEFAULT_MAX_MESSAGES as u64,
        )?;
        Ok(match parts.strategy {
            "buffer_window" => Self::BufferWindow {
                window: parts.window.unwrap_or(DEFAULT_WINDOW).max(1),
            },
            "token_budget" => Self::TokenBudget {
                max_tokens: parts.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1),
            },
            _ => Self::SummaryBuffer {
                summarize_every,
                max_messages: max_messages as usize,
            },
        })
    }

    /// Whether this strategy wants a summary written once `summarization_needed`
    /// fires.
    pub fn summarizes(&self) -> bool {
        matches!(self, Self::SummaryBuffer { .. })
    }

    /// How many messages lie between two summarization-needed flags: the
    /// `summary_buffer` setting, else [`DEFAULT_SUMMARIZE_EVERY`].
    pub fn summarize_every(&self) -> u64 {
        match *self {
            Self::SummaryBuffer {
                summarize_every, ..
            } => summarize_every.max(1),
            _ => DEFAULT_SUMMARIZE_EVERY,
        }
    }

    /// Whether a session that now holds `count` messages, after appending
    /// `added`, has crossed a multiple of [`Self::summarize_every`] (the turn
    /// result carries this flag).
    pub fn summarization_needed(&self, count: u64, added: u64) -> bool {
        let every = self.summarize_every();
        let before = count.saturating_sub(added);
        count / every > before / every
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a strategy under HTTP field names.
    fn parts(p: HistoryParts<'_>) -> Result<HistoryStrategy, HecateError> {
        HistoryStrategy::from_parts(|k| format!("history.{k}"), p)
    }

    #[test]
    fn flags_every_twentieth_message_by_default() {
        let s = HistoryStrategy::default();
        assert!(!s.summarization_needed(18, 2));
        assert!(s.summarization_needed(20, 2));
        assert!(s.summarization_needed(21, 2));
        assert!(!s.summarization_needed(22, 1));
        assert!(s.summarization_needed(40, 2));
    }

    #[test]
    fn a_summary_buffer_flags_at_its_own_interval() {
        let s = HistoryStrategy::SummaryBuffer {
            summarize_every: 6,
            max_messages: 10,
        };
        assert!(!s.summarization_needed(4, 2));
        assert!(s.summarization_needed(6, 2));
        assert!(!s.summarization_needed(8, 2));
        assert!(s.summarization_needed(12, 2));
        assert!(!s.summarization_needed(20, 2), "20 is no multiple of 6");
    }

    #[test]
    fn names_parse_with_the_old_alias_and_unknown_names_fail_naming_the_field() {
        let s = parts(HistoryParts {
            strategy: "summary_checkpoint",
            ..HistoryParts::default()
        });
        assert_eq!(s.expect("alias"), HistoryStrategy::summary_buffer());
        let s = parts(HistoryParts {
            strategy: "token_budget",
            max_tokens: Some(0),
            ..HistoryParts::default()
        });
        assert_eq!(
            s.expect("ok"),
            HistoryStrategy::TokenBudget { max_tokens: 1 }
        );
        let e = parts(HistoryParts {
            strategy: "lru",
            ..HistoryParts::default()
        })
        .expect_err("unknown");
        assert_eq!(e.error_type, ErrorType::HistoryStrategyInvalid);
        assert!(e.message.contains("history.strategy"));
    }

    #[test]
    fn summary_settings_are_bounded_and_belong_to_summary_buffer_only() {
        let s = parts(HistoryParts {
            strategy: "summary_buffer",
            summarize_every: Some(4),
            max_messages: Some(30),
            ..HistoryParts::default()
        });
        assert_eq!(
            s.expect("valid"),
            HistoryStrategy::SummaryBuffer {
                summarize_every: 4,
                max_messages: 30
            }
        );
        for (p, field) in [
            (
                HistoryParts {
                    strategy: "summary_buffer",
                    summarize_every: Some(0),
                    ..HistoryParts::default()
                },
                "history.summarize_every",
            ),
            (
                HistoryParts {
                    strategy: "summary_buffer",
                    max_messages: Some(10_001),
                    ..HistoryParts::default()
                },
                "history.max_messages",
            ),
            (
                HistoryParts {
                    strategy: "buffer_window",
                    max_messages: Some(5),
                    ..HistoryParts::default()
                },
                "history.max_messages",
            ),
        ] {
            let e = parts(p).expect_err(field);
            assert_eq!(e.error_type, ErrorType::InvalidRequest, "{field}");
            assert!(e.message.contains(field), "{}", e.message);
            assert_eq!(e.details["field"], field);
        }
    }

    #[test]
    fn a_stored_summary_buffer_without_settings_reads_with_the_defaults() {
        let s: HistoryStrategy =
            serde_json::from_str(r#"{"strategy":"summary_buffer"}"#).expect("old row");
        assert_eq!(s, HistoryStrategy::summary_buffer());
        let s: HistoryStrategy = serde_json::from_str(
            r#"{"strategy":"summary_buffer","summarize_every":3,"max_messages":7}"#,
        )
        .expect("new row");
        assert_eq!(
            s,
            HistoryStrategy::SummaryBuffer {
                summarize_every: 3,
                max_messages: 7
            }
        );
    }
}
