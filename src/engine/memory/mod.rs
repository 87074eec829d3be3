//! Working memory: the session's strategy decides what a turn loads (inside
//! `begin_turn`, see `store::history`), and here, when the strategy asks for one,
//! a summary is written into the message stream after the turn that crossed the
//! boundary, off the turn's path.

mod summarize;

pub use summarize::{SUMMARY_INSTRUCTION, SUMMARY_PREFIX};
