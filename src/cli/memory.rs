//! `hecate memory search|status`: long-term recall from the command line. A
//! degraded recall is not a failure: the search prints its reason on stderr and
//! exits 0 with no results. JSON output uses the HTTP API's shapes.

use super::output::{Format, print_resource, print_text};
use super::{AppContext, GlobalArgs};
use crate::bridges::resources::memory::{MemorySearchDto, RecallStatusDto};
use crate::engine::memory::MemorySearch;
use std::fmt::Write as _;

/// The `memory` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum MemoryCommand {
    /// Search long-term memory by meaning, across sessions.
    Search {
        /// What to look for.
        query: String,
        /// The user whose memory is searched (absent: the namespace's shared memory).
        #[arg(long)]
        user: Option<String>,
        /// Only this session's messages.
        #[arg(long)]
        session: Option<String>,
        /// How many results, 1 to 100.
        #[arg(long, default_value_t = 5, allow_negative_numbers = true)]
        k: i64,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Whether recall works: asks the embeddings model once and reports.
    Status {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

/// Runs a `memory` subcommand.
pub async fn run(cli: &GlobalArgs, cmd: &MemoryCommand) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    let ns = ctx.namespace.as_str();
    match cmd {
        MemoryCommand::Search {
            query,
            user,
            session,
            k,
            format,
        } => {
            let answer = ctx
                .engine
                .memory()
                .search(
                    ns,
                    MemorySearch {
                        query: query.clone(),
                        user: user.clone(),
                        session: session.clone(),
                        k: Some(*k),
                    },
                )
                .await?;
            let dto = MemorySearchDto::from(&answer);
            warn_if_degraded(&dto.status);
            match format {
                Format::Json => print_resource("memory_search", &dto)?,
                Format::Text => {
                    let mut out = String::new();
                    for (i, h) in dto.results.iter().enumerate() {
                        let _ = writeln!(
                            out,
                            "{}. {:.3}  {} #{} {}  {}",
                            i + 1,
                            h.score,
                            h.session_id,
                            h.sequence,
                            h.role,
                            h.text.split_whitespace().collect::<Vec<_>>().join(" ")
                        );
                    }
                    if dto.results.is_empty() {
                        out.push_str("no results\n");
                    }
                    print_text(&out)?;
                }
            }
        }
        MemoryCommand::Status { format } => {
            let dto = RecallStatusDto::from(&ctx.engine.memory().probe().await);
            match format {
                Format::Json => print_resource("memory_status", &dto)?,
                Format::Text => {
                    let mut out = format!("recall: {}\n", dto.state);
                    if let Some(e) = &dto.embeddings {
                        let _ = writeln!(out, "embeddings: {e}");
                    }
                    if let (Some(r), Some(m)) = (&dto.reason, &dto.message) {
                        let _ = writeln!(out, "reason: {r}: {m}");
                    }
                    print_text(&out)?;
                }
            }
        }
    }
    ctx.engine.shutdown().await;
    Ok(0)
}

/// Says on stderr why recall is degraded, when it is.
fn warn_if_degraded(s: &RecallStatusDto) {
    if let (Some(reason), Some(message)) = (&s.reason, &s.message) {
        eprintln!("recall degraded ({reason}): {message}");
    }
}
