//! The message history of an `agent_loop` run, as it is stored in the run's
//! `agent_conversation` artifact after every turn and tool call, and rendered
//! to a provider.

use crate::domain::message::{Message, Role, ToolCall};
use crate::domain::task::ContextMessage;
use crate::domain::task::SystemLayers;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One entry of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// `user`, `assistant` or `tool`.
    pub role: Role,
    /// Text (the prompt, the model's text, or a tool's result).
    pub content: String,
    /// Tool calls of an assistant entry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool entry answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Whether a tool entry is an error result.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Whether a system entry is a summary standing in for older messages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_summary: bool,
}

impl Entry {
    /// A text entry of `role` (no calls, not a result, not a summary).
    fn text(role: Role, content: &str) -> Self {
        Self {
            role,
            content: content.to_string(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            is_summary: false,
        }
    }
}

/// The conversation of a run: entries in order, the LLM turns taken, and the
/// approvals asked for gated calls (call id to approval id).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// Entries in order.
    pub entries: Vec<Entry>,
    /// LLM turns this run has taken.
    #[serde(default)]
    pub turns: u32,
    /// Approval ids by the tool call they gate.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub approvals: BTreeMap<String, String>,
    /// How many leading entries are the task's starting context (earlier chat
    /// messages), which are not this chain's model turns.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context: usize,
    /// The system prompt's three layers as the run composed them (absent in
    /// conversations stored before the layers were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemLayers>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Conversation {
    /// A conversation that starts with the user's prompt.
    pub fn new(prompt: &str) -> Self {
        Self::primed(&[], prompt)
    }

    /// A conversation that starts with `context` (earlier messages, such as
    /// what a chat session's memory strategy loaded), then the user's prompt.
    pub fn primed(context: &[ContextMessage], prompt: &str) -> Self {
        let mut entries: Vec<Entry> = context
            .iter()
            .map(|m| Entry {
                is_summary: m.is_summary,
                ..Entry::text(m.role, &m.content)
            })
            .collect();
        entries.push(Entry::text(Role::User, prompt));
        Self {
            entries,
            context: context.len(),
            ..Self::default()
        }
    }

    /// Appends a user message (a follow-up prompt).
    pub fn push_user(&mut self, prompt: &str) {
        self.entries.push(Entry::text(Role::User, prompt));
    }

    /// How many assistant entries (model turns) the conversation holds after
    /// its starting context.
    pub fn assistant_turns(&self) -> usize {
        self.entries[self.context_len()..]
            .iter()
            .filter(|e| e.role == Role::Assistant)
            .count()
    }

    /// The starting context's length, bounded by the entries held.
    fn context_len(&self) -> usize {
        self.context.min(self.entries.len())
    }

    /// The history a new run in a chain starts from: the entries, every call
    /// left unanswered closed with an error result (so the provider never sees a
    /// call without its result), no turns taken yet and no approvals.
    pub fn hydrated(&self) -> Self {
        let mut c = Self {
            entries: self.entries.clone(),
            context: self.context,
            ..Self::default()
        };
        for call in c.pending_calls() {
            c.push_result(
                &call.id,
                "not run: the run that asked for this call ended before it ran".into(),
                true,
            );
        }
        c
    }

    /// The history cut right before the `turn`-th assistant entry (1-based),
    /// ready for a new run to take that turn again; `None` when there is no
    /// such turn.
    pub fn before_turn(&self, turn: usize) -> Option<Self> {
        let at = self
            .entries
            .iter()
            .enumerate()
            .skip(self.context_len())
            .filter(|(_, e)| e.role == Role::Assistant)
            .nth(turn.checked_sub(1)?)?
            .0;
        Some(Self {
            entries: self.entries[..at].to_vec(),
            context: self.context,
            ..Self::default()
        })
    }

    /// Appends the model's answer of one turn.
    pub fn push_assistant(&mut self, text: String, tool_calls: Vec<ToolCall>) {
        self.entries.push(Entry {
            tool_calls,
            ..Entry::text(Role::Assistant, &text)
        });
    }

    /// Appends a tool's result for `call_id`.
    pub fn push_result(&mut self, call_id: &str, content: String, is_error: bool) {
        self.entries.push(Entry {
            tool_call_id: Some(call_id.to_string()),
            is_error,
            ..Entry::text(Role::Tool, &content)
        });
    }

    /// The calls of the last assistant entry that have no result yet, in order.
    pub fn pending_calls(&self) -> Vec<ToolCall> {
        let Some(at) = self.entries.iter().rposition(|e| e.role == Role::Assistant) else {
            return Vec::new();
        };
        let answered: Vec<&str> = self.entries[at + 1..]
            .iter()
            .filter_map(|e| e.tool_call_id.as_deref())
            .collect();
        self.entries[at]
            .tool_calls
            .iter()
            .filter(|c| !answered.contains(&c.id.as_str()))
            .cloned()
            .collect()
    }

    /// The text of the last assistant entry, when it asked for no tools.
    pub fn final_answer(&self) -> Option<&str> {
        self.entries
            .last()
            .filter(|e| e.role == Role::Assistant && e.tool_calls.is_empty())
            .map(|e| e.content.as_str())
    }

    /// The entries as provider messages.
    pub fn to_messages(&self) -> Vec<Message> {
        self.entries
            .iter()
            .map(|e| {
                let mut m = Message::unstored(e.role, e.content.clone());
                m.tool_calls = e.tool_calls.clone();
                m.tool_call_id = e.tool_call_id.clone();
                m.tool_error = e.is_error;
                m.is_summary = e.is_summary;
                m
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn pending_calls_are_the_unanswered_calls_of_the_last_turn() {
        let mut c = Conversation::new("go");
        assert!(c.pending_calls().is_empty());
        c.push_assistant(String::new(), vec![call("a"), call("b")]);
        assert_eq!(c.pending_calls().len(), 2);
        c.push_result("a", "ok".into(), false);
        assert_eq!(c.pending_calls(), vec![call("b")]);
        c.push_result("b", "no".into(), true);
        assert!(c.pending_calls().is_empty() && c.final_answer().is_none());
        c.push_assistant("done".into(), Vec::new());
        assert_eq!(c.final_answer(), Some("done"));
        let back: Conversation =
            serde_json::from_str(&serde_json::to_string(&c).expect("json")).expect("parse");
        assert_eq!(back, c);
        let m = c.to_messages();
        assert_eq!(
            (m[3].tool_call_id.as_deref(), m[3].tool_error),
            (Some("b"), true)
        );
    }

    #[test]
    fn chains_cut_before_a_turn_and_close_unanswered_calls() {
        let mut c = Conversation::new("go");
        c.push_assistant(String::new(), vec![call("a")]);
        c.push_result("a", "ok".into(), false);
        c.push_assistant(String::new(), vec![call("b")]);
        c.turns = 2;
        c.approvals.insert("b".into(), "approval".into());
        assert_eq!(c.assistant_turns(), 2);
        let second = c.before_turn(2).expect("turn 2");
        assert_eq!((second.entries.len(), second.turns), (3, 0));
        assert_eq!(c.before_turn(1).expect("turn 1").entries.len(), 1);
        assert!(c.before_turn(0).is_none() && c.before_turn(3).is_none());
        let mut h = c.hydrated();
        assert!(h.pending_calls().is_empty() && h.approvals.is_empty());
        assert!(h.entries.last().expect("closed").is_error);
        h.push_user("more");
        assert_eq!(h.entries.last().expect("user").role, Role::User);
    }

    #[test]
    fn a_primed_conversation_counts_turns_after_its_context() {
        let context = [
            ContextMessage {
                role: Role::System,
                content: "Summary: the user likes tea".into(),
                is_summary: true,
            },
            ContextMessage {
                role: Role::User,
                content: "hello".into(),
                is_summary: false,
            },
            ContextMessage {
                role: Role::Assistant,
                content: "hi".into(),
                is_summary: false,
            },
        ];
        let mut c = Conversation::primed(&context, "go");
        assert_eq!((c.entries.len(), c.context, c.assistant_turns()), (4, 3, 0));
        let m = c.to_messages();
        assert!(m[0].is_summary && m[0].role == Role::System && !m[1].is_summary);
        assert_eq!(m[3].content, "go");
        assert!(c.before_turn(1).is_none());
        c.push_assistant("done".into(), Vec::new());
        assert_eq!(c.assistant_turns(), 1);
        let again = c.before_turn(1).expect("turn 1");
        assert_eq!((again.entries.len(), again.context), (4, 3));
        let back: Conversation =
            serde_json::from_str(&serde_json::to_string(&c).expect("json")).expect("parse");
        assert_eq!(back, c);
        assert_eq!(c.hydrated().context, 3);
    }
}
