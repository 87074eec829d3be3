//! The wire formats the gateway speaks: Chat Completions and Messages on
//! either side, the Responses API on the client side only.

/// A wire format: what a client sent or what a provider expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
    /// OpenAI Responses (`POST /v1/responses`); clients only: it is
    /// translated through Chat Completions for either kind of provider.
    Responses,
}

impl WireFormat {
    /// The short name used in logs and error details.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Responses => "openai_responses",
        }
    }
}
