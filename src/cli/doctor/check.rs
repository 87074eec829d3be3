//! One line of `hecate doctor`: what was checked, its status (ok / warn / error),
//! what was found and, when it is not ok, how to fix it. Whether a check is required
//! (a failure makes doctor exit non-zero) or advisory is recorded on the line.

use serde::Serialize;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Works.
    Ok,
    /// Works partly, or an optional piece is missing.
    Warn,
    /// Broken.
    Error,
}

impl Status {
    /// The word printed in the text report.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Error => "error",
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked: `config`, `store`, `node`, `adapter codex`, `provider fix`, ...
    pub name: String,
    /// How it came out.
    pub status: Status,
    /// A failure of a required check makes doctor exit non-zero.
    pub required: bool,
    /// What was found (never a secret; URLs redacted).
    pub message: String,
    /// What to do about it, when the status is not ok.
    pub fix: Option<String>,
}

impl Check {
    /// An advisory check that passed.
    pub fn ok(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: Status::Ok,
            required: false,
            message: message.into(),
            fix: None,
        }
    }

    /// An advisory check that found something to improve.
    pub fn warn(
        name: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            status: Status::Warn,
            fix: Some(fix.into()),
            ..Self::ok(name, message)
        }
    }

    /// A check that found something broken.
    pub fn error(
        name: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            status: Status::Error,
            fix: Some(fix.into()),
            ..Self::ok(name, message)
        }
    }

    /// Marks the check as required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Whether this is a required check that did not pass.
    pub fn is_blocking(&self) -> bool {
        self.required && self.status == Status::Error
    }
}
