//! The one error type of sandboxed work.

/// Why sandboxed work could not be done (before or while it ran).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The request cannot be honoured (a path outside the root, a missing dir).
    #[error("{0}")]
    Invalid(String),
    /// Confinement was asked for and bubblewrap is not available here.
    #[error(
        "this task asks for confinement (no network or a read-only view) but bubblewrap is not installed; install the bubblewrap package (apt-get install bubblewrap) or allow the task network access"
    )]
    BwrapMissing,
    /// The command could not be started.
    #[error("could not start {program}: {message}")]
    Spawn {
        /// What was started.
        program: String,
        /// Why it failed.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
}
