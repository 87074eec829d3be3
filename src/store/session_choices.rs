//! The contract for what editors chose for a session's options: one row per
//! (session, scope, kind, name) holding the chosen value, so a choice outlives
//! the process that took it. The scope says whose option it is: `hecate` for
//! Hecate's own (`thought_level`, `tools`), `agent:ID` for an external agent's
//! (its config options and its mode). Rows hang off their session (deleted
//! with it) and, like its messages, are reached through the session's
//! namespace gate, which every engine read passes first.

use crate::domain::error::Result;
use crate::domain::ids::SessionId;
use async_trait::async_trait;
use serde_json::Value;

/// What a stored choice sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChoiceKind {
    /// The session mode (`session/set_mode`); its name is empty.
    Mode,
    /// A config option (`session/set_config_option`); its name is the option id.
    Option,
}

impl ChoiceKind {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mode => "mode",
            Self::Option => "option",
        }
    }

    /// The kind stored as `s`, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "mode" => Some(Self::Mode),
            "option" => Some(Self::Option),
            _ => None,
        }
    }
}

/// One stored choice.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionChoice {
    /// The session it belongs to.
    pub session_id: SessionId,
    /// Whose option it is: `hecate`, or `agent:ID` for an external agent's.
    pub scope: String,
    /// A mode or a config option.
    pub kind: ChoiceKind,
    /// The option id (empty for a mode).
    pub name: String,
    /// The value: a string (a value id, a mode id) or a boolean.
    pub value: Value,
    /// When it was chosen (RFC 3339).
    pub chosen_at: String,
}

/// Stored choices of sessions' options.
#[async_trait]
pub trait SessionChoiceStore: Send + Sync {
    /// The choices of `session_id` under `scope`, in the order they were last
    /// set (a choice set again moves last).
    async fn list_session_choices(
        &self,
        session_id: &SessionId,
        scope: &str,
    ) -> Result<Vec<SessionChoice>>;
    /// Inserts or replaces the choice of (session, scope, kind, name), placing
    /// it last; `not_found` when the session does not exist.
    async fn put_session_choice(&self, choice: &SessionChoice) -> Result<()>;
    /// Deletes the choice of (session, scope, kind, name); answers whether one
    /// was stored.
    async fn delete_session_choice(
        &self,
        session_id: &SessionId,
        scope: &str,
        kind: ChoiceKind,
        name: &str,
    ) -> Result<bool>;
}
