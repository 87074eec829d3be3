//! The error of a flow file that cannot be used.

use std::path::{Path, PathBuf};

/// A flow file that cannot be used, naming the file and the field at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {field}: {message}", file.display())]
pub struct FlowError {
    /// The flow file.
    pub file: PathBuf,
    /// The field path, e.g. `conversations[welcome].stages[greet].fields[age].type`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl FlowError {
    /// An error at `field` of `file`.
    pub fn new(file: &Path, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            field: field.into(),
            message: message.into(),
        }
    }
}
