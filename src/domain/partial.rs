//! The answer a turn has streamed so far, rebuilt from its runtime events: what a
//! cancelled, failed or interrupted turn keeps as its assistant message.

use crate::domain::event::RuntimeEvent;
use crate::domain::message::ContentBlock;

/// Text and reasoning gathered from a turn's deltas, in arrival order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartialAnswer {
    text: String,
    thinking: String,
}

impl PartialAnswer {
    /// Takes in one runtime event; only text and reasoning deltas count.
    pub fn push(&mut self, event: &RuntimeEvent) {
        match event {
            RuntimeEvent::TextDelta { text } => self.text.push_str(text),
            RuntimeEvent::ThoughtDelta { text } => self.thinking.push_str(text),
            _ => {}
        }
    }

    /// Whether nothing has arrived yet.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.thinking.is_empty()
    }

    /// The answer text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The answer as content blocks: reasoning first, then text; empty ones left out.
    pub fn blocks(&self) -> Vec<ContentBlock> {
        let mut blocks = Vec::new();
        if !self.thinking.is_empty() {
            blocks.push(ContentBlock::Thinking {
                thinking: self.thinking.clone(),
                signature: None,
            });
        }
        if !self.text.is_empty() {
            blocks.push(ContentBlock::Text {
                text: self.text.clone(),
            });
        }
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_join_in_order_and_other_events_are_ignored() {
        let mut p = PartialAnswer::default();
        assert!(p.is_empty() && p.blocks().is_empty());
        p.push(&RuntimeEvent::ThoughtDelta { text: "hm".into() });
        p.push(&RuntimeEvent::TextDelta { text: "Hel".into() });
        p.push(&RuntimeEvent::ToolCallStarted {
            id: "c1".into(),
            name: "read".into(),
            kind: None,
            input: serde_json::Value::Null,
        });
        p.push(&RuntimeEvent::TextDelta { text: "lo".into() });
        assert_eq!(p.text(), "Hello");
        assert_eq!(
            p.blocks(),
            vec![
                ContentBlock::Thinking {
                    thinking: "hm".into(),
                    signature: None
                },
                ContentBlock::Text {
                    text: "Hello".into()
                }
            ]
        );
    }
}
