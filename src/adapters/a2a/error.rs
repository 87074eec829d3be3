//! The typed errors of talking to a remote A2A agent, each with a stable reason
//! that readiness rows and failed turns carry.

/// What went wrong reaching or using a remote A2A agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum A2aClientError {
    /// The card URL could not be reached (refused, DNS, TLS).
    #[error("the agent card at {url} cannot be reached: {message}")]
    CardUnreachable {
        /// The card URL.
        url: String,
        /// The transport's words.
        message: String,
    },
    /// The card URL did not answer in time.
    #[error("the agent card at {url} did not answer within {secs} s")]
    CardTimeout {
        /// The card URL.
        url: String,
        /// The limit.
        secs: u64,
    },
    /// The card URL answered something that is not a JSON agent card (an HTML
    /// page, an error status).
    #[error("the agent card at {url} is not an A2A agent card: {message}")]
    CardInvalid {
        /// The card URL.
        url: String,
        /// What it answered instead.
        message: String,
    },
    /// The card offers no interface Hecate can speak (JSON-RPC or HTTP+JSON at
    /// protocol version 1.x).
    #[error(
        "the agent card at {url} offers no usable interface (JSONRPC or HTTP+JSON, version 1.x): {offered}"
    )]
    NoUsableInterface {
        /// The card URL.
        url: String,
        /// What it offers.
        offered: String,
    },
    /// The agent's endpoint could not be reached or broke off.
    #[error("the agent at {url} cannot be reached: {message}")]
    Unreachable {
        /// The endpoint.
        url: String,
        /// The transport's words.
        message: String,
    },
    /// The agent did not answer (or stream the next event) in time.
    #[error("the agent did not answer within {secs} s")]
    Timeout {
        /// The limit.
        secs: u64,
    },
    /// The agent refused the credentials (HTTP 401 or 403).
    #[error("the agent refused the credentials (HTTP {status})")]
    Unauthorized {
        /// The HTTP status.
        status: u16,
    },
    /// The agent answered an A2A or JSON-RPC error.
    #[error("the agent answered an error ({code}): {message}")]
    Remote {
        /// The JSON-RPC code, or the HTTP status of the HTTP+JSON binding.
        code: i64,
        /// The agent's message.
        message: String,
    },
    /// The agent answered something that is not an A2A response.
    #[error("the agent's answer is not an A2A response: {0}")]
    Malformed(String),
}

impl A2aClientError {
    /// The stable reason of the error (`card_unreachable`, `card_timeout`,
    /// `card_invalid`, `no_usable_interface`, `unreachable`, `timeout`,
    /// `unauthorized`, `remote_error`, `malformed_response`).
    pub fn reason(&self) -> &'static str {
        match self {
            Self::CardUnreachable { .. } => "card_unreachable",
            Self::CardTimeout { .. } => "card_timeout",
            Self::CardInvalid { .. } => "card_invalid",
            Self::NoUsableInterface { .. } => "no_usable_interface",
            Self::Unreachable { .. } => "unreachable",
            Self::Timeout { .. } => "timeout",
            Self::Unauthorized { .. } => "unauthorized",
            Self::Remote { .. } => "remote_error",
            Self::Malformed(_) => "malformed_response",
        }
    }

    /// Whether the card should be fetched again before the next use (the
    /// agent moved, or never answered properly).
    pub fn stales_card(&self) -> bool {
        !matches!(self, Self::Remote { .. } | Self::Unauthorized { .. })
    }
}
