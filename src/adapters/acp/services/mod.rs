//! What Hecate serves an agent during a turn: the routes from a native session to
//! its turn (`routes`), file reads and writes confined to the workspace (`fs`,
//! `paths`) or forwarded to the editor (`editor`), and PTY terminals (`terminal`).

pub mod editor;
pub mod fs;
pub mod paths;
pub mod routes;
pub mod terminal;
