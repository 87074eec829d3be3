//! The two wire formats the gateway speaks, on either side.

use crate::adapters::providers::ProviderKind;

/// A wire format: what a client sent or what a provider expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
}

impl WireFormat {
    /// The format a provider of `kind` speaks.
    pub fn of_provider(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::Openai => Self::OpenAi,
            ProviderKind::Anthropic => Self::Anthropic,
        }
    }

    /// The short name used in logs and error details.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }
}
