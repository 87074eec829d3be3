//! A2A push notifications: webhooks a client registers for a task, by the
//! Create/Get/List/Delete operations (`ops.rs`) or inline in a send's
//! `configuration.taskPushNotificationConfig`. A config is checked before it is
//! kept (`validate.rs`), stored with its task (`stored.rs`, at most ten per
//! task, so they are still listed after a restart or on another replica),
//! kept in memory with a task live in this process (`set.rs`), and posted to
//! by a worker of its own (`deliver.rs`): the task's status changes and its answer's last piece,
//! each a `StreamResponse`, asynchronously, with a time limit and a few
//! retries. See docs/a2a.md.

mod deliver;
pub mod ops;
mod set;
mod validate;

pub use deliver::Notifier;
pub use set::{MAX_PER_TASK, PushSet};
pub use validate::{bind, checked};
