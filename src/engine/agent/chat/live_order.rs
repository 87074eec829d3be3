//! Keeps a run's live words in step with its stored events. The model's words
//! arrive on their own channel, and the next model turn may start talking
//! before the follower has read the events that end the turn before it (its
//! tool calls finishing). So a piece is passed on only once the follower has
//! projected the stored start of the model turn it belongs to; until then it
//! is held.

use crate::engine::tasks::LivePiece;
use std::collections::VecDeque;

/// The pieces held back until their model turn's stored start is seen.
#[derive(Debug, Default)]
pub(super) struct LiveOrder {
    /// The newest model turn whose stored start was projected (0: none yet).
    started: u32,
    /// Pieces of later turns, in the order they were heard.
    held: VecDeque<LivePiece>,
}

impl LiveOrder {
    /// A piece heard now: it is given back to pass on at once when its turn
    /// has started in the projected events, and held otherwise.
    pub(super) fn heard(&mut self, piece: LivePiece) -> Option<LivePiece> {
        if self.held.is_empty() && piece.turn() <= self.started {
            Some(piece)
        } else {
            self.held.push_back(piece);
            None
        }
    }

    /// The follower projected the stored start of model turn `turn`: the held
    /// pieces that may follow it now, in order. A start stored without its
    /// turn number (by an older build) releases every held piece.
    pub(super) fn turn_started(&mut self, turn: Option<u32>) -> Vec<LivePiece> {
        self.started = self.started.max(turn.unwrap_or(u32::MAX));
        let ready = self
            .held
            .iter()
            .take_while(|p| p.turn() <= self.started)
            .count();
        self.held.drain(..ready).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(turn: u32, text: &str) -> LivePiece {
        LivePiece::Text {
            turn,
            text: text.into(),
        }
    }

    #[test]
    fn words_of_a_turn_not_yet_started_wait_for_its_start() {
        let mut order = LiveOrder::default();
        assert_eq!(order.turn_started(Some(1)), []);
        assert_eq!(order.heard(text(1, "reading")), Some(text(1, "reading")));
        // Turn 2 talks before the follower read turn 1's tool call finishing.
        assert_eq!(order.heard(text(2, "All")), None);
        assert_eq!(
            order.heard(LivePiece::Thinking {
                turn: 2,
                text: "hm".into()
            }),
            None
        );
        assert_eq!(
            order.turn_started(Some(2)),
            [
                text(2, "All"),
                LivePiece::Thinking {
                    turn: 2,
                    text: "hm".into()
                }
            ]
        );
        assert_eq!(order.heard(text(2, " done.")), Some(text(2, " done.")));
    }

    #[test]
    fn a_start_releases_only_its_own_and_earlier_turns() {
        let mut order = LiveOrder::default();
        assert_eq!(order.heard(text(1, "a")), None);
        assert_eq!(order.heard(text(2, "b")), None);
        assert_eq!(order.turn_started(Some(1)), [text(1, "a")]);
        // Held pieces keep their order: a later piece of a started turn waits
        // behind them.
        assert_eq!(order.heard(text(2, "c")), None);
        assert_eq!(order.turn_started(Some(2)), [text(2, "b"), text(2, "c")]);
    }

    #[test]
    fn a_start_without_a_turn_number_releases_everything() {
        let mut order = LiveOrder::default();
        assert_eq!(order.heard(text(3, "x")), None);
        assert_eq!(order.turn_started(None), [text(3, "x")]);
        assert_eq!(order.heard(text(4, "y")), Some(text(4, "y")));
    }
}
