//! The shape of one agent's flow file: conversations made of stages, the data
//! fields each stage extracts, the edges between stages with their conditions,
//! goals, and which conversation welcomes a new chat.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One agent's flow, as written in `flows/<agent>.toml` (the agent id is the file stem).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentFlow {
    /// The agent id (the file stem; not written in the file).
    #[serde(skip)]
    pub id: String,
    /// Display name; the id when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Who the agent is and how it speaks; opens every system message.
    #[serde(default)]
    pub persona: String,
    /// The conversation a chat starts in when the caller names none.
    pub welcome: String,
    /// Goals that hold in every conversation.
    #[serde(default)]
    pub goals: Vec<String>,
    /// The prompt the caller runs when a summary is due; a default when absent.
    #[serde(default)]
    pub summary_prompt: Option<String>,
    /// How many messages arrive between summaries (`summarizationNeeded`);
    /// [`crate::domain::memory::DEFAULT_SUMMARIZE_EVERY`] when absent.
    #[serde(default)]
    pub summarize_every: Option<u64>,
    /// The fallback conversation a drifting chat moves to when its own conversation
    /// names none; the only `is_fallback` conversation when absent.
    #[serde(default)]
    pub fallback: Option<String>,
    /// The conversations, in file order.
    pub conversations: Vec<Conversation>,
}

/// A conversation: a graph of stages with one start.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    /// Unique within the agent.
    pub name: String,
    /// What the conversation is for (shown to the model).
    #[serde(default)]
    pub description: String,
    /// The first stage; the first stage in the file when absent.
    #[serde(default)]
    pub start: Option<String>,
    /// Goals of this conversation, shown with the agent's own.
    #[serde(default)]
    pub goals: Vec<String>,
    /// Words or phrases that, in the user's message of a drifting chat or of a chat
    /// in a fallback conversation, move the chat to this conversation's start.
    #[serde(default)]
    pub goal_signals: Vec<String>,
    /// Whether this is a fallback conversation: where drifting chats go, never
    /// entered by goal signal.
    #[serde(default)]
    pub is_fallback: bool,
    /// The fallback conversation a chat drifting here moves to, instead of the flow's.
    #[serde(default)]
    pub fallback: Option<String>,
    /// The stages, in file order.
    pub stages: Vec<Stage>,
    /// The edges between stages, evaluated in file order.
    #[serde(default)]
    pub edges: Vec<Edge>,
}

/// One stage: what the model is told to do and what it should extract.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stage {
    /// Unique within the conversation.
    pub name: String,
    /// What the model should do in this stage.
    #[serde(default)]
    pub instructions: String,
    /// Data the model extracts in this stage through `respond`'s `data`.
    #[serde(default)]
    pub fields: Vec<Field>,
    /// Whether reaching this stage ends the chat.
    #[serde(default)]
    pub end: bool,
}

/// A data field to extract, with its type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// The key in `respond`'s `data` and in the user's memory.
    pub name: String,
    /// One of [`FieldType::NAMES`].
    #[serde(rename = "type")]
    pub kind: String,
    /// What the value means (shown to the model and in the schema).
    #[serde(default)]
    pub description: String,
    /// The allowed values of an `enum` field.
    #[serde(default)]
    pub values: Vec<String>,
}

/// The type of a data field, checked on every `respond` payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Any JSON string.
    String,
    /// A whole number.
    Integer,
    /// Any JSON number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// One of the field's `values`.
    Enum,
    /// A list of strings.
    List,
}

impl FieldType {
    /// The names a flow file may use.
    pub const NAMES: [&'static str; 6] = ["string", "integer", "number", "boolean", "enum", "list"];

    /// The type named `name`, if it is one of [`Self::NAMES`].
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            "enum" => Self::Enum,
            "list" => Self::List,
            _ => return None,
        })
    }
}

impl Field {
    /// The field's type; flow files are validated on load, so an unknown name reads as `string`.
    pub fn field_type(&self) -> FieldType {
        FieldType::parse(&self.kind).unwrap_or(FieldType::String)
    }
}

/// A way out of a stage: to another stage of the conversation, or to another
/// conversation's start (a hand-off).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    /// The stage the edge leaves.
    pub from: String,
    /// The stage it enters, in the same conversation.
    #[serde(default)]
    pub to: Option<String>,
    /// The conversation it hands off to (its start stage).
    #[serde(default)]
    pub to_conversation: Option<String>,
    /// When it fires; always when empty.
    #[serde(default)]
    pub when: Condition,
}

/// What must hold for an edge to fire; every part given must hold.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// Fields that must have a value in the user's data.
    #[serde(default)]
    pub filled: Vec<String>,
    /// Fields that must hold exactly these values.
    #[serde(default)]
    pub equals: BTreeMap<String, Value>,
    /// The model must have asked for this edge's target as `next_stage`.
    #[serde(default)]
    pub suggested: bool,
}

impl AgentFlow {
    /// The display name: `name`, else the id.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }

    /// The conversation named `name`.
    pub fn conversation(&self, name: &str) -> Option<&Conversation> {
        self.conversations.iter().find(|c| c.name == name)
    }

    /// The stage `stage` of conversation `conversation`.
    pub fn stage(&self, conversation: &str, stage: &str) -> Option<&Stage> {
        self.conversation(conversation)?.stage(stage)
    }

    /// The fallback conversation a chat drifting in `conversation` moves to: its
    /// own `fallback`, else the flow's, else the only `is_fallback` conversation.
    pub fn fallback_for(&self, conversation: &Conversation) -> Option<&Conversation> {
        if let Some(name) = conversation.fallback.as_ref().or(self.fallback.as_ref()) {
            return self.conversation(name);
        }
        let mut marked = self.conversations.iter().filter(|c| c.is_fallback);
        match (marked.next(), marked.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    }
}

impl Conversation {
    /// The stage named `name`.
    pub fn stage(&self, name: &str) -> Option<&Stage> {
        self.stages.iter().find(|s| s.name == name)
    }

    /// The stage a chat enters this conversation at.
    pub fn start_stage(&self) -> Option<&Stage> {
        match &self.start {
            Some(s) => self.stage(s),
            None => self.stages.first(),
        }
    }

    /// The edges leaving `stage`, in file order.
    pub fn edges_from<'a>(&'a self, stage: &'a str) -> impl Iterator<Item = &'a Edge> + 'a {
        self.edges.iter().filter(move |e| e.from == stage)
    }
}
