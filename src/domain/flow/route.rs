//! Routing after a `respond`: the first edge out of the current stage whose
//! condition holds (against the user's data and the model's `next_stage`) moves
//! the chat; otherwise it stays.

use super::model::{AgentFlow, Condition};
use serde_json::{Map, Value};

/// Where a chat is after routing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routed {
    /// The conversation the next turn runs in.
    pub conversation: String,
    /// The stage the next turn runs in.
    pub stage: String,
    /// Whether the stage (or conversation) changed.
    pub transitioned: bool,
    /// The conversation handed off to, when an edge left the conversation.
    pub handoff: Option<String>,
    /// Whether the new stage ends the chat.
    pub ended: bool,
}

/// Whether `c` holds for `data` and the model's `next_stage` toward `target`.
pub fn condition_holds(
    c: &Condition,
    data: &Map<String, Value>,
    next_stage: Option<&str>,
    target: Option<&str>,
) -> bool {
    let filled = c
        .filled
        .iter()
        .all(|f| data.get(f).is_some_and(|v| !is_empty(v)));
    let equals = c.equals.iter().all(|(k, v)| data.get(k) == Some(v));
    let suggested = !c.suggested || (next_stage.is_some() && next_stage == target);
    filled && equals && suggested
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Routes a chat in `stage` of `conversation` of `flow`, given the user's data
/// after this turn's extraction and the model's `next_stage`.
pub fn route(
    flow: &AgentFlow,
    conversation: &str,
    stage: &str,
    data: &Map<String, Value>,
    next_stage: Option<&str>,
) -> Routed {
    let stay = Routed {
        conversation: conversation.to_string(),
        stage: stage.to_string(),
        transitioned: false,
        handoff: None,
        ended: flow.stage(conversation, stage).is_some_and(|s| s.end),
    };
    let Some(conv) = flow.conversation(conversation) else {
        return stay;
    };
    for edge in conv.edges_from(stage) {
        if !condition_holds(&edge.when, data, next_stage, edge.to.as_deref()) {
            continue;
        }
        let (to_conv, to_stage, handoff) = match (&edge.to, &edge.to_conversation) {
            (Some(to), _) => (conversation.to_string(), to.clone(), None),
            (None, Some(other)) => {
                let Some(start) = flow.conversation(other).and_then(|c| c.start_stage()) else {
                    continue;
                };
                (other.clone(), start.name.clone(), Some(other.clone()))
            }
            (None, None) => continue,
        };
        let ended = flow.stage(&to_conv, &to_stage).is_some_and(|s| s.end);
        let transitioned = to_conv != conversation || to_stage != stage;
        return Routed {
            conversation: to_conv,
            stage: to_stage,
            transitioned,
            handoff,
            ended,
        };
    }
    stay
}
