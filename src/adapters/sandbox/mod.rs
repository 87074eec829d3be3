//! Where the task runtime's deterministic work touches the machine: commands run
//! in the run's workspace through the process module (own process group,
//! sanitized environment, a time limit, capped output), confined with bubblewrap
//! when the task asks for no network or a read-only view; file operations stay
//! inside the allowed root and come back as before/after patches. The engine
//! decides what runs; this module only runs it. The bubblewrap command line
//! (`bwrap`) and the rules that keep an agent-supplied path inside a workspace
//! (`paths`) are shared with the ACP adapter's terminals and file services.

mod bwrap;
mod command;
mod error;
mod files;
mod git_call;
pub mod paths;
mod repo;
mod workspace;

pub use bwrap::{
    BWRAP_LOCATIONS, BwrapError, Jail, SYSTEM_DIRS, View, bwrap_path, find_bwrap, try_sandbox,
};
pub use command::{CommandOutcome, CommandRun, Confinement, OUTPUT_CAP_BYTES, run, run_with_roots};
pub use error::SandboxError;
pub use files::{
    SandboxFileChange, apply_file_operation, apply_file_operation_in, git_data_refused,
    is_git_data, write_back,
};
pub use git_call::{GitRun, prepare_git};
pub use repo::{RepoDirs, repo_dirs};
pub use workspace::{WorkspaceRequest, prepare};
