//! Hecate's own agent on the engine's side. `run/` executes an `agent_loop` task
//! run on the durable task runtime (the model, its tool calls as steps, approval
//! gates, MCP tools); `chat/` is Agent Chat's Hecate Agent runtime, whose every
//! turn is such a run. The model calls and the built-in tools themselves are the
//! runtime layer's `runtimes/agent/`.

mod chat;
mod run;

pub use run::{CONVERSATION_KIND, FINAL_ANSWER_KIND};
