//! The typed error of reading and interpreting configuration: the file could not be
//! read, does not parse for the schema, or holds a value that cannot be used.

use std::path::PathBuf;

/// Errors reading or interpreting configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML for this schema.
    #[error("invalid config file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What and where (line and column).
        message: String,
    },
    /// A value is present but unusable.
    #[error("invalid provider {name}: {message}")]
    Provider {
        /// Provider name.
        name: String,
        /// What is wrong.
        message: String,
    },
}
