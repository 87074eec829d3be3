//! The load-time checks of re-routing: `fallback` keys that name a conversation
//! marked `is_fallback`, one default fallback, goal signals that are non-empty,
//! unique across the flow and only on conversations they can lead to, and no
//! re-route target whose start stage would end the chat before the model speaks.

use super::error::FlowError;
use super::model::{AgentFlow, Conversation};
use super::signal::words;
use std::collections::HashMap;
use std::path::Path;

/// Checks the fallback and goal-signal settings of `flow` (read from `file`),
/// whose conversations already passed their own checks.
pub fn check_rerouting(flow: &AgentFlow, file: &Path) -> Result<(), FlowError> {
    let err = |field: String, message: String| FlowError::new(file, field, message);
    if let Some(name) = &flow.fallback {
        fallback_target(flow, name).map_err(|m| err("fallback".into(), m))?;
    } else {
        let marked: Vec<&str> = flow
            .conversations
            .iter()
            .filter(|c| c.is_fallback)
            .map(|c| c.name.as_str())
            .collect();
        if marked.len() > 1 {
            return Err(err(
                "fallback".into(),
                format!(
                    "{} conversations are marked `is_fallback` ({}); name the one drifting chats \
                     go to with the flow's `fallback` key",
                    marked.len(),
                    marked.join(", ")
                ),
            ));
        }
    }
    let mut owners: HashMap<Vec<String>, &str> = HashMap::new();
    for c in &flow.conversations {
        let at = format!("conversations[{}]", c.name);
        if let Some(name) = &c.fallback {
            if c.is_fallback {
                return Err(err(
                    format!("{at}.fallback"),
                    "a fallback conversation takes no `fallback`: a chat in it is never moved \
                     to another fallback"
                        .into(),
                ));
            }
            fallback_target(flow, name).map_err(|m| err(format!("{at}.fallback"), m))?;
        }
        if c.is_fallback && !c.goal_signals.is_empty() {
            return Err(err(
                format!("{at}.goal_signals"),
                "a fallback conversation is never entered by goal signal; move these signals to \
                 the conversation they lead to"
                    .into(),
            ));
        }
        for (i, signal) in c.goal_signals.iter().enumerate() {
            let key = words(signal);
            if key.is_empty() {
                return Err(err(
                    format!("{at}.goal_signals[{i}]"),
                    format!("goal signal {signal:?} has no words (letters or digits) to match"),
                ));
            }
            if let Some(owner) = owners.insert(key, &c.name) {
                let message = if owner == c.name {
                    format!(
                        "duplicate goal signal {signal:?} (signals match ignoring case and punctuation)"
                    )
                } else {
                    format!(
                        "goal signal {signal:?} is also a signal of conversation `{owner}`; a \
                         message it matches would always go to the first of them"
                    )
                };
                return Err(err(format!("{at}.goal_signals[{i}]"), message));
            }
        }
        if c.is_fallback || !c.goal_signals.is_empty() {
            starts_live(c).map_err(|m| err(format!("{at}.start"), m))?;
        }
    }
    Ok(())
}

/// The conversation `name` when it is marked `is_fallback`, else why not.
fn fallback_target<'a>(flow: &'a AgentFlow, name: &str) -> Result<&'a Conversation, String> {
    let c = flow
        .conversation(name)
        .ok_or_else(|| format!("no conversation is named `{name}`"))?;
    if !c.is_fallback {
        return Err(format!(
            "conversation `{name}` is not a fallback conversation; mark it `is_fallback = true`"
        ));
    }
    Ok(c)
}

/// A re-route target must start in a stage that does not end the chat: the move
/// happens on `sendChatMessage`, and an ended chat takes no model reply.
fn starts_live(c: &Conversation) -> Result<(), String> {
    let start = c
        .start_stage()
        .ok_or_else(|| format!("conversation `{}` has no start stage", c.name))?;
    if start.end {
        let why = if c.is_fallback {
            "a fallback conversation"
        } else {
            "a conversation with goal signals"
        };
        return Err(format!(
            "{why} cannot start in an end stage (`{}`): a chat moved there would end before \
             the model answers",
            start.name
        ));
    }
    Ok(())
}
