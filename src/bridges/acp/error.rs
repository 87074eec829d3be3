//! The error that ends an ACP connection.

/// Errors that end the ACP connection (protocol errors are answered to the peer).
#[derive(Debug, thiserror::Error)]
pub enum AcpBridgeError {
    /// The connection failed.
    #[error("ACP connection failed: {0}")]
    Connection(String),
}
