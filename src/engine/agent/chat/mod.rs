//! Agent Chat's Hecate Agent runtime (`runtime_kind="agent"`): each turn is an
//! `agent_loop` task run. `backing.rs` finds the session's task (the busy rule
//! and what a follow-up continues), `run.rs` starts or continues the run and
//! follows it to its end, `ask.rs` puts the run's approval gates to the session
//! as permission requests, `events.rs` projects task events into the
//! runtime events sessions stream, `live_order.rs` holds the model's live
//! words until the events before them are shown, and `roots.rs` keeps the additional
//! directories an editor gave each session for the tasks its turns start.

mod ask;
mod backing;
mod events;
mod live_order;
mod roots;
mod run;
