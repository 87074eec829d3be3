//! The task API (`/hecate/v1/tasks`): tasks (`crud`), their runs, steps and
//! artifacts (`runs`), continue and retry-from-turn (`chain`), patches with apply
//! and revert (`patches`), approval gates (`approvals`), and the event lists and
//! SSE streams with a durable replay cursor (`events`). Handlers only call the
//! engine's task runtime.

pub mod approvals;
pub mod chain;
pub mod crud;
pub mod events;
pub mod patches;
pub mod runs;
mod shared;
