//! The outbound ACP adapter: launches an external coding agent (Codex, Claude
//! Code, Cursor Agent, Gemini CLI, opencode, ...) as a child process, drives it as
//! an ACP client, serves its fs/terminal/permission requests inside the session
//! workspace, and turns its updates into domain events. A leaf module: it uses
//! only `crate::domain`.

pub mod catalog;
mod client;
pub mod convert;
mod editor;
pub mod error;
mod fs;
mod handlers;
pub mod launcher;
pub mod normalize;
pub mod paths;
pub mod probe;
pub mod process;
mod routes;
mod terminal;
pub mod transport;
mod turn;

pub use catalog::{AgentManifest, Catalog, ManifestError};
pub use client::{AcpOptions, AgentConnection, AgentInfo, AuthMethodInfo, NativeSession};
pub use convert::StopReason;
pub use error::{AcpError, Stage};
pub use launcher::{Availability, LaunchSource, LaunchSpec, LauncherOptions};
pub use probe::{ProbeOptions, ProbeReport, ProbeStatus, probe};
pub use turn::TurnIo;
