//! Memory. Working memory: the session's strategy decides what a turn loads
//! (inside `begin_turn`, see `store::history`), and here, when the strategy asks
//! for one, a summary is written into the message stream after the turn that
//! crossed the boundary, off the turn's path. Long-term recall: messages are
//! embedded in batches off the turn's path (`indexer`) and searched, or recalled
//! into a model turn, by meaning (`recall`).

mod indexer;
mod recall;
mod recall_state;
mod summarize;

pub(crate) use recall::TurnRecall;
pub use recall::{MemorySearch, MemorySearchAnswer};
pub(crate) use recall_state::Recall;
pub use recall_state::{RecallSettings, RecallStatus};

pub use summarize::{SUMMARY_INSTRUCTION, SUMMARY_PREFIX};
