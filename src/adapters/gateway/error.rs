//! Why a client's request cannot be forwarded as it is.

/// A request the gateway refuses before calling a provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranslateError {
    /// The body is not the shape the wire format requires (a missing or mistyped field).
    #[error("{0}")]
    Invalid(String),
    /// The body asks for something the other wire format cannot express.
    #[error("{0}")]
    Unsupported(String),
}
