//! What an `agent_loop` run's model says, as it says it, for the session turn
//! of this process that follows the task. Nothing of it is stored: the turn
//! streams the pieces to its faces, and the words are recorded when the model
//! turn ends (its `turn.completed` event). A run executed by another process's
//! worker has no listener here; its turn shows each model turn's words when
//! that turn ends.

use crate::domain::ids::TaskId;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::mpsc;

/// One piece of what a run's model is saying in its model turn `turn` (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LivePiece {
    /// Answer text.
    Text {
        /// The run's model turn.
        turn: u32,
        /// The piece.
        text: String,
    },
    /// Reasoning text.
    Thinking {
        /// The run's model turn.
        turn: u32,
        /// The piece.
        text: String,
    },
}

impl LivePiece {
    /// The run's model turn the piece belongs to.
    pub fn turn(&self) -> u32 {
        match self {
            Self::Text { turn, .. } | Self::Thinking { turn, .. } => *turn,
        }
    }
}

/// The listeners of the tasks whose runs a turn of this process follows.
#[derive(Debug, Default)]
pub struct LiveText {
    listeners: Mutex<HashMap<TaskId, mpsc::UnboundedSender<LivePiece>>>,
}

impl LiveText {
    fn listeners(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<TaskId, mpsc::UnboundedSender<LivePiece>>> {
        self.listeners.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts hearing what `task`'s runs say (replacing an earlier listener).
    /// A model turn's pieces are bounded by its output token limit.
    pub fn listen(&self, task: &TaskId) -> mpsc::UnboundedReceiver<LivePiece> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.listeners().insert(task.clone(), tx);
        rx
    }

    /// Stops hearing `task`.
    pub fn forget(&self, task: &TaskId) {
        self.listeners().remove(task);
    }

    /// Hands `piece` to `task`'s listener, when it has one.
    pub fn say(&self, task: &TaskId, piece: LivePiece) {
        let mut listeners = self.listeners();
        if let Some(tx) = listeners.get(task)
            && tx.send(piece).is_err()
        {
            listeners.remove(task);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> LivePiece {
        LivePiece::Text {
            turn: 1,
            text: t.into(),
        }
    }

    #[test]
    fn only_a_listened_task_hears_and_a_dropped_listener_is_forgotten() {
        let live = LiveText::default();
        let (a, b) = (TaskId::from("task_a"), TaskId::from("task_b"));
        live.say(&a, text("nobody hears this"));
        let mut rx = live.listen(&a);
        live.say(&a, text("hi"));
        live.say(&b, text("not for a"));
        assert_eq!(rx.try_recv(), Ok(text("hi")));
        assert!(rx.try_recv().is_err());
        drop(rx);
        live.say(&a, text("gone"));
        assert!(live.listeners().is_empty(), "a closed listener is dropped");
        let _rx = live.listen(&b);
        live.forget(&b);
        assert!(live.listeners().is_empty());
    }
}
