//! The durable task runtime: tasks and their runs, decided here and kept in the
//! store, executed by workers that claim runs from the store's leased queue (so
//! several Hecate processes on one store share the work, each run executing
//! once), with approval gates before anything runs and an event log every
//! surface can follow and replay.

mod chain;
mod client_events;
pub(super) mod control;
pub(super) mod execute;
mod live_text;
mod patches;
mod run_view;
mod runtime;
mod worker;

pub use super::agent::FINAL_ANSWER_KIND;
pub use client_events::MAX_CLIENT_EVENTS;
pub use control::StartOptions;
pub use live_text::LivePiece;
pub use patches::{PatchContent, PatchRef, patch_content};
pub use run_view::{ARTIFACT_PREVIEW_BYTES, RunView};
pub use runtime::{DEFAULT_LEASE, TaskConfig, TaskRuntime};
