//! What an external agent is prompted with for one turn.

use crate::domain::message::{ContentBlock, Message, MessageStatus, Role};

pub(super) fn has_earlier_turns(history: &[Message]) -> bool {
    history.len() > 1
}

/// The prompt for this turn: the newest user message, preceded (when priming a fresh
/// native session) by the earlier transcript so no context is silently lost, and
/// by the messages recalled from the user's other sessions when there are any.
pub(super) fn prompt_blocks(
    history: &[Message],
    primed: bool,
    recalled: Option<&str>,
) -> Vec<ContentBlock> {
    let Some((last, earlier)) = history.split_last() else {
        return Vec::new();
    };
    let mut blocks = Vec::new();
    if let Some(text) = recalled {
        blocks.push(ContentBlock::Text {
            text: text.to_string(),
        });
    }
    if primed && !earlier.is_empty() {
        let mut context = String::from(
            "Context: this conversation continues an earlier session whose agent process \
             was restarted. The transcript so far:\n\n",
        );
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
            context.push_str(&format!("{who}{note}: {}\n\n", m.content));
        }
        context.push_str("The new message follows.");
        blocks.push(ContentBlock::Text { text: context });
    }
    if last.content_blocks.is_empty() {
        blocks.push(ContentBlock::Text {
            text: last.content.clone(),
        });
    } else {
        blocks.extend(last.content_blocks.iter().cloned());
    }
    blocks
}
