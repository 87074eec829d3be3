//! The earlier transcript as plain text, for an agent that starts without it
//! (a fresh native session, a hand-off from another target): one paragraph per
//! message, naming its role and whether it ended early.

use crate::domain::message::{Message, MessageStatus, Role};

/// `earlier` as `Role: content` paragraphs, each followed by a blank line.
pub(crate) fn transcript_text(earlier: &[Message]) -> String {
    let mut out = String::new();
    for m in earlier {
        let who = match m.role {
            Role::User => "User",
            Role::Assistant => "Assistant",
            Role::System => "System",
            Role::Tool => "Tool",
        };
        let note = match m.status {
            MessageStatus::Completed | MessageStatus::Running => "",
            MessageStatus::Failed => " (failed, partial)",
            MessageStatus::Cancelled => " (cancelled, partial)",
        };
        out.push_str(&format!("{who}{note}: {}\n\n", m.content));
    }
    out
}
