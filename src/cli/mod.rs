//! The `hecate` command: parses arguments, builds the engine, hands it to a bridge
//! or prints what the store holds. No business logic lives here.

mod acp;
mod adapters;
mod approvals;
mod chat;
mod chat_sessions;
mod context;
mod doctor;
mod global;
mod keys;
mod mcp;
mod memory;
mod output;
mod serve;
mod sessions;
mod spinner;
mod store;
mod store_copy;
mod store_target;
mod tasks;
pub mod telemetry;

use clap::{Parser, Subcommand};

pub use context::{AppContext, CLI_ACTOR, DB_FILE};
pub use global::GlobalArgs;
pub use output::Format;

/// Hecate: one local hub between editors, coding agents, tool servers and models.
#[derive(Debug, Parser)]
#[command(name = "hecate", version, about, propagate_version = true)]
pub struct Cli {
    /// The options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Whether this command serves one client over stdio, where a single-threaded
    /// runtime answers faster than a work-stealing one (no cross-thread wake-ups
    /// per message); store work still runs on the blocking pool.
    pub fn serves_one_stdio_client(&self) -> bool {
        matches!(
            &self.command,
            Command::Mcp(mcp::McpArgs {
                command: None | Some(mcp::McpCommand::Serve)
            })
        )
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve ACP on stdio: Hecate as an agent for Zed, JetBrains and other editors.
    Acp(acp::AcpArgs),
    /// Serve MCP on stdio (Hecate's tools and upstream servers); probe upstreams.
    Mcp(mcp::McpArgs),
    /// Run the HTTP server (REST + SSE) on loopback.
    Serve(serve::ServeArgs),
    /// Talk to a model or an agent in an Agent Chat session; the answer streams
    /// to stdout.
    Chat(chat::ChatArgs),
    /// List, show, export and delete Agent Chat sessions.
    #[command(subcommand)]
    Sessions(sessions::SessionsCommand),
    /// Gateway conversations: list, show and delete what the model gateway
    /// (`/v1`) recorded under a session id (the API's `chat/sessions`).
    #[command(subcommand, visible_alias = "conversations")]
    ChatSessions(chat_sessions::ChatSessionsCommand),
    /// External coding agents: list the catalog, probe one.
    #[command(subcommand)]
    Adapters(adapters::AdaptersCommand),
    /// List, resolve and cancel permission requests.
    #[command(subcommand)]
    Approvals(approvals::ApprovalsCommand),
    /// List and revoke standing grants.
    #[command(subcommand)]
    Grants(approvals::GrantsCommand),
    /// Durable tasks: create, start, follow, cancel, retry, resume, approve.
    #[command(subcommand)]
    Tasks(tasks::TasksCommand),
    /// Report configuration, data directory, store health and provider readiness.
    Doctor(doctor::DoctorArgs),
    /// The store's schema: apply migrations, show what is applied.
    #[command(subcommand)]
    Store(store::StoreCommand),
    /// Long-term recall: search memory by meaning, report whether recall works.
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// Named API keys of a shared hub: create (with a scope and a lifetime), list, revoke.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
}

/// Runs the process watchdog when this process was started as one (hidden first
/// argument) and returns its exit code; otherwise lets the children this process
/// starts be guarded by a watchdog re-executed from this same binary, and returns
/// `None`.
pub fn process_watchdog() -> Option<i32> {
    use crate::adapters::process::watchdog;
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == watchdog::HELPER_ARG)
    {
        return Some(watchdog::run_helper());
    }
    // On Linux the running image itself, even if its file was replaced since.
    let program = if cfg!(target_os = "linux") && std::path::Path::new("/proc/self").is_dir() {
        Some(std::path::PathBuf::from("/proc/self/exe"))
    } else {
        std::env::current_exe().ok()
    };
    if let Some(program) = program {
        watchdog::enable(program);
    }
    None
}

/// Runs the parsed command and returns the process exit code.
pub async fn run(cli: Cli) -> i32 {
    let result = match cli.command {
        Command::Serve(ref a) => serve::run(&cli.global, a).await,
        Command::Acp(ref a) => acp::run(&cli.global, a).await,
        Command::Mcp(ref a) => mcp::run(&cli.global, a).await,
        Command::Chat(ref a) => chat::run(&cli.global, a).await,
        Command::Sessions(ref c) => sessions::run(&cli.global, c).await,
        Command::ChatSessions(ref c) => chat_sessions::run(&cli.global, c).await,
        Command::Memory(ref c) => memory::run(&cli.global, c).await,
        Command::Adapters(ref c) => adapters::run(&cli.global, c).await,
        Command::Approvals(ref c) => approvals::run_approvals(&cli.global, c).await,
        Command::Grants(ref c) => approvals::run_grants(&cli.global, c).await,
        Command::Tasks(ref c) => tasks::run(&cli.global, c).await,
        Command::Doctor(ref a) => doctor::run(&cli.global, a).await,
        Command::Store(ref c) => store::run(&cli.global, c).await,
        Command::Keys(ref c) => keys::run(&cli.global, c).await,
    };
    match result {
        Ok(code) => code,
        Err(e) => output::report_error(&e),
    }
}
