//! The outbound ACP adapter: launches an external coding agent (Codex, Claude
//! Code, Cursor Agent, Gemini CLI, opencode, ...) as a child process, drives it as
//! an ACP client, serves its fs/terminal/permission requests inside the session
//! workspace, and turns its updates into domain events. A leaf module: it uses
//! only `crate::domain`.

pub mod agent;
mod client;
pub mod convert;
pub mod error;
mod handlers;
mod lifecycle;
pub mod normalize;
pub mod services;
mod signin;
pub mod transport;
mod turn;

pub use crate::adapters::sandbox::paths;
pub use agent::{auth, catalog, install, install_error, launcher, probe, process};

pub use catalog::{AgentManifest, Catalog, ManifestError};
pub use client::{
    AcpOptions, AgentConnection, AgentInfo, AuthMethodInfo, NativeSession, OptionValue,
};
pub use convert::StopReason;
pub use error::{AcpError, Stage};
pub use launcher::{Availability, LaunchSource, LaunchSpec, LauncherOptions};
pub use probe::{AgentProbe, ProbeOptions, ProbeStatus, probe};
pub use services::terminal_sandbox::{SandboxMode, SandboxUnavailable, TerminalSandbox};
pub use turn::{PromptOutcome, TurnIo};
