//! What Hecate serves an agent during a turn: the routes from a native session to
//! its turn (`routes`), file reads and writes confined to the workspace (`fs`, with
//! the path rules of `adapters/sandbox/paths.rs`) or forwarded to the editor
//! (`editor`), PTY terminals (`terminal`) and the bubblewrap sandbox they may run
//! in (`terminal_sandbox`), and the agent's elicitations relayed to the editor
//! (`elicitation`).

pub mod editor;
pub mod elicitation;
pub mod fs;
pub mod routes;
pub mod terminal;
pub mod terminal_sandbox;
