//! What a remote agent is sent for one turn: the newest user message, preceded
//! (when the session has no A2A context yet but earlier turns, a hand-off from
//! another target) by the transcript so far, and by recalled messages.

use crate::domain::message::Message;
use crate::runtimes::handoff::transcript_text;

/// The text of this turn's message; `fresh` says the agent has no context of
/// this conversation yet.
pub(super) fn prompt_text(history: &[Message], fresh: bool, recalled: Option<&str>) -> String {
    let Some((last, earlier)) = history.split_last() else {
        return String::new();
    };
    let mut out = String::new();
    if let Some(r) = recalled {
        out.push_str(r);
        out.push_str("\n\n");
    }
    if fresh && !earlier.is_empty() {
        out.push_str(
            "Context: this conversation continues an earlier one held with another agent. \
             The transcript so far:\n\n",
        );
        out.push_str(&transcript_text(earlier));
        out.push_str("The new message follows.\n\n");
    }
    out.push_str(&last.content);
    out
}
