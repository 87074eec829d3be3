//! Hecate's own agent (`agent_loop`), the parts that do not decide: the
//! conversation a run carries, the built-in tool catalog and the tools
//! themselves (confined to the run's workspace through the sandbox), the MCP
//! tools of a run (called through the pooled connections it holds), and one
//! tool-enabled model turn. The loop, its gates, budgets and persistence are the
//! task runtime's (`engine/tasks/agent`).

pub mod catalog;
pub mod conversation;
pub mod llm;
pub mod mcp;
pub mod tools;
