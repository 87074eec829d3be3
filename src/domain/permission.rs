//! Permission requests from a runtime to whoever can answer them, and the handle a
//! runtime uses to ask. The engine implements the handle (approvals, grants, modes);
//! runtimes and adapters only ask and wait.

use crate::domain::ids::{RunId, SessionId};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What choosing an option means, independent of the agent's own option ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionKind {
    /// Allow this one call.
    AllowOnce,
    /// Allow this and similar future calls.
    AllowAlways,
    /// Reject this one call.
    RejectOnce,
    /// Reject this and similar future calls.
    RejectAlways,
}

impl PermissionKind {
    /// Whether the option allows the call.
    pub fn allows(self) -> bool {
        matches!(self, Self::AllowOnce | Self::AllowAlways)
    }
}

/// One option an agent offers, with its id kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionOption {
    /// The agent's own option id (never interpreted, only echoed back).
    pub id: String,
    /// Human label.
    pub name: String,
    /// What it means.
    pub kind: PermissionKind,
}

/// A runtime asking permission for a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    /// Hecate session.
    pub session_id: SessionId,
    /// Hecate run.
    pub run_id: RunId,
    /// The tool call the request is about.
    pub tool_call_id: String,
    /// Human title of the call (e.g. "Write src/main.rs").
    pub title: String,
    /// Tool kind when the agent says (read, edit, delete, move, search, execute, fetch, other).
    pub tool_kind: Option<String>,
    /// The raw tool-call fields as the agent sent them.
    pub raw: Value,
    /// The options offered.
    pub options: Vec<PermissionOption>,
}

/// The answer to a permission request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PermissionOutcome {
    /// One of the offered options was chosen (its id verbatim).
    Selected {
        /// The chosen option id.
        option_id: String,
    },
    /// Nobody chose: the request timed out or was cancelled.
    Cancelled,
}

/// The handle a runtime uses to ask permission; it resolves when someone (or a
/// grant, a mode, a timeout) answers.
pub trait PermissionAsker: Send + Sync {
    /// Asks and waits for the outcome.
    fn ask(&self, request: PermissionRequest) -> BoxFuture<'static, PermissionOutcome>;
}

/// An asker that always picks the first option of the wanted polarity, or cancels;
/// used where no one can be asked (probes, tests).
#[derive(Debug, Clone, Copy)]
pub struct FixedAnswer {
    /// Whether to allow.
    pub allow: bool,
}

impl PermissionAsker for FixedAnswer {
    fn ask(&self, request: PermissionRequest) -> BoxFuture<'static, PermissionOutcome> {
        let wanted = self.allow;
        let pick = request
            .options
            .iter()
            .find(|o| {
                o.kind.allows() == wanted
                    && matches!(
                        o.kind,
                        PermissionKind::AllowOnce | PermissionKind::RejectOnce
                    )
            })
            .or_else(|| request.options.iter().find(|o| o.kind.allows() == wanted))
            .map(|o| o.id.clone());
        Box::pin(async move {
            match pick {
                Some(option_id) => PermissionOutcome::Selected { option_id },
                None => PermissionOutcome::Cancelled,
            }
        })
    }
}
