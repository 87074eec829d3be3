//! What the caller's model sees: the system message compiled from the agent's
//! persona, the conversation, its goals, the current stage's instructions and
//! fields, what is known, the allowed next stages and the route so far; and the
//! message history from the last summary checkpoint on.

use crate::domain::flow::respond::next_stage_choices;
use crate::domain::flow::{
    AgentFlow, Conversation, FlowChatMessage, FlowPosition, FlowRole, Stage,
};
use serde_json::{Map, Value};
use std::fmt::Write;

/// The prompt for a summary when the flow names none.
pub const DEFAULT_SUMMARY_PROMPT: &str = "Summarize the conversation so far in a few sentences \
     for your own later reference: who the user is, what they asked for, what was decided and \
     what is still open. Answer with the summary only.";

/// One entry of the history handed to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// `user`, `assistant`, or `system` for a summary checkpoint.
    pub role: String,
    /// The text.
    pub content: String,
}

/// The system message for a chat at `position` of `flow`, knowing `data`.
pub fn system_message(
    flow: &AgentFlow,
    conversation: &Conversation,
    stage: &Stage,
    position: &FlowPosition,
    data: &Map<String, Value>,
) -> String {
    let mut s = String::new();
    if !flow.persona.trim().is_empty() {
        let _ = writeln!(s, "{}\n", flow.persona.trim());
    }
    let _ = writeln!(s, "You are the agent \"{}\".", flow.display_name());
    let _ = writeln!(s, "\n## Conversation: {}", conversation.name);
    if !conversation.description.trim().is_empty() {
        let _ = writeln!(s, "{}", conversation.description.trim());
    }
    let goals: Vec<&String> = flow.goals.iter().chain(&conversation.goals).collect();
    if !goals.is_empty() {
        let _ = writeln!(s, "\n## Goals");
        for g in goals {
            let _ = writeln!(s, "- {g}");
        }
    }
    let _ = writeln!(s, "\n## Current stage: {}", stage.name);
    if !stage.instructions.trim().is_empty() {
        let _ = writeln!(s, "{}", stage.instructions.trim());
    }
    if !stage.fields.is_empty() {
        let _ = writeln!(
            s,
            "\n## Data to extract in this stage (put what the user told you in `data`)"
        );
        for f in &stage.fields {
            let _ = write!(s, "- {} ({})", f.name, f.kind);
            if !f.values.is_empty() {
                let _ = write!(s, " one of {}", f.values.join(", "));
            }
            if !f.description.is_empty() {
                let _ = write!(s, ": {}", f.description);
            }
            let _ = writeln!(s);
        }
    }
    if !data.is_empty() {
        let _ = writeln!(s, "\n## What is known about the user");
        for (k, v) in data {
            let _ = writeln!(s, "- {k}: {v}");
        }
    }
    let choices = next_stage_choices(conversation, stage);
    if choices.len() > 1 {
        let _ = writeln!(
            s,
            "\n## Stages you may ask to move to (`next_stage`)\n{}",
            choices.join(", ")
        );
    }
    if position.route.len() > 1 {
        let _ = writeln!(s, "\n## Route so far\n{}", position.route.join(" -> "));
    }
    if !position.on_track {
        let _ = writeln!(
            s,
            "\n## Note\nYour last reply drifted off track ({}). Steer back to this stage's purpose.",
            position
                .off_track_reason
                .as_deref()
                .unwrap_or("no reason given")
        );
    }
    let _ = write!(
        s,
        "\nAlways answer by calling the `respond` tool with your reply in `message`."
    );
    s
}

/// The history from the last summary on: the summary as a `system` entry, then
/// every later message; everything when there is no summary.
pub fn history(messages: &[FlowChatMessage]) -> Vec<HistoryEntry> {
    let from = messages
        .iter()
        .rposition(|m| m.role == FlowRole::Summary)
        .unwrap_or(0);
    messages[from..]
        .iter()
        .map(|m| match m.role {
            FlowRole::Summary => HistoryEntry {
                role: "system".into(),
                content: format!("Summary of the conversation so far:\n{}", m.content),
            },
            r => HistoryEntry {
                role: r.as_str().into(),
                content: m.content.clone(),
            },
        })
        .collect()
}

/// When a summary is due: the number of (non-summary) messages in the chat,
/// when at least `every` arrived since the last summary.
pub fn summary_due(messages: &[FlowChatMessage], every: u64) -> Option<u64> {
    let total = messages
        .iter()
        .filter(|m| m.role != FlowRole::Summary)
        .count() as u64;
    let since = messages
        .iter()
        .rev()
        .take_while(|m| m.role != FlowRole::Summary)
        .count() as u64;
    (since >= every.max(1)).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(seq: i64, role: FlowRole) -> FlowChatMessage {
        FlowChatMessage {
            sequence: seq,
            role,
            content: format!("m{seq}"),
            stage: "s".into(),
            data: None,
            created_at: String::new(),
        }
    }

    #[test]
    fn a_summary_is_due_every_twenty_messages_and_cuts_the_history() {
        let mut ms: Vec<_> = (1..=19)
            .map(|i| {
                msg(
                    i,
                    if i % 2 == 1 {
                        FlowRole::Assistant
                    } else {
                        FlowRole::User
                    },
                )
            })
            .collect();
        assert_eq!(summary_due(&ms, 20), None);
        assert_eq!(summary_due(&ms, 5), Some(19), "a flow's own interval");
        ms.push(msg(20, FlowRole::User));
        assert_eq!(summary_due(&ms, 20), Some(20));
        ms.push(msg(21, FlowRole::Summary));
        assert_eq!(summary_due(&ms, 20), None);
        assert_eq!(summary_due(&ms, 1), None, "a summary just arrived");
        ms.push(msg(22, FlowRole::Assistant));
        let h = history(&ms);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].role, "system");
        assert!(h[0].content.ends_with("m21"));
        assert_eq!(h[1].content, "m22");
        assert_eq!(history(&ms[..3]).len(), 3);
    }
}
