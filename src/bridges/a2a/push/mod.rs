//! A2A push notifications: webhooks a client registers for a task, by the
//! Create/Get/List/Delete operations (`ops.rs`) or inline in a send's
//! `configuration.taskPushNotificationConfig`. A config is checked before it is
//! kept (`validate.rs`), kept with its task in the registry (`set.rs`, at most
//! ten per task, in memory like the tasks), and posted to by a worker of its
//! own (`deliver.rs`): the task's status changes and its answer's last piece,
//! each a `StreamResponse`, asynchronously, with a time limit and a few
//! retries. See docs/a2a.md.

mod deliver;
pub mod ops;
mod set;
mod validate;

pub use deliver::Notifier;
pub use set::PushSet;
pub use validate::{bind, checked};
