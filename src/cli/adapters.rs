//! `hecate adapters list|health|probe|install|login`: the external-agent
//! catalog, readiness checks, managed launcher installs and an agent's
//! terminal sign-in.

use super::output::{Format, print_resource, print_text};
use super::spinner::Spinner;
use super::{AppContext, GlobalArgs};
use crate::adapters::acp::{AgentProbe, ProbeStatus};
use crate::bridges::resources::agent::ProbeDto;
use std::fmt::Write as _;

/// The `adapters` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum AdaptersCommand {
    /// Every catalog agent with availability, path, version and tested range.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Start an agent in a temporary workspace and classify whether it is ready
    /// (stage, path, error and what to do next).
    Health {
        /// Adapter id.
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Install or refresh an agent's managed launcher: its pinned npm package in
    /// Hecate's cache (`[agents] cache_dir`), no global `npm install -g` needed.
    Install {
        /// Adapter id.
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Start an agent in a temporary workspace and classify whether it is ready.
    Probe {
        /// Adapter id.
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Sign in to an agent in this terminal with its terminal sign-in method:
    /// the agent is asked for its methods, then run again with the method's
    /// arguments; exits with the sign-in's exit code.
    Login {
        /// Adapter id.
        id: String,
        /// The agent's method id (needed only when it offers several).
        method: Option<String>,
    },
}

pub async fn run(cli: &GlobalArgs, cmd: &AdaptersCommand) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    match cmd {
        AdaptersCommand::List { format } => {
            let list = ctx.engine.agents().list().await?;
            match format {
                Format::Json => print_resource("agent_adapters", &list)?,
                Format::Text => {
                    let mut out = String::new();
                    for a in &list {
                        let _ = writeln!(
                            out,
                            "{:<13} {:<9} {:<10} {}{}",
                            a.id,
                            a.status,
                            a.availability.version.as_deref().unwrap_or("-"),
                            a.availability
                                .path
                                .as_ref()
                                .map(|p| p.display().to_string())
                                .unwrap_or_else(|| format!("({} not found)", a.command)),
                            if a.availability.version_outside_range {
                                format!(
                                    "  [outside tested range {}]",
                                    a.tested_range.as_deref().unwrap_or("?")
                                )
                            } else {
                                String::new()
                            }
                        );
                        if a.status != "available" && a.package.is_some() {
                            let _ = writeln!(
                                out,
                                "{:<13} install: hecate adapters install {}",
                                "", a.id
                            );
                        }
                        if let Some(e) = &a.auth_error {
                            let _ = writeln!(
                                out,
                                "{:<13} auth: {}: {e}",
                                "",
                                serde_json::to_value(a.auth_status)?.as_str().unwrap_or("?")
                            );
                        }
                    }
                    print_text(&out)?;
                }
            }
            Ok(0)
        }
        AdaptersCommand::Health { id, format } => {
            let report = ctx.engine.agents().probe(id).await?;
            print_probe(&report, "agent_adapter_health", *format)
        }
        AdaptersCommand::Install { id, format } => {
            let package = ctx
                .engine
                .agents()
                .list()
                .await?
                .into_iter()
                .find(|a| &a.id == id)
                .and_then(|a| a.package);
            // Unknown adapters and ones without a package fail at once, unspun.
            let Some(package) = package else {
                ctx.engine.agents().install(id).await?;
                return Ok(0);
            };
            let spinner = Spinner::start(format!("installing {id} ({package}) with npm"));
            match ctx.engine.agents().install(id).await {
                Ok(row) => {
                    spinner.finish(&format!("installed {id}")).await;
                    match format {
                        Format::Json => print_resource("agent_adapter", &row)?,
                        Format::Text => print_text(&format!(
                            "{id} {} at {}\n",
                            row.availability
                                .version
                                .as_deref()
                                .unwrap_or("(no version)"),
                            row.availability
                                .path
                                .as_ref()
                                .map(|p| p.display().to_string())
                                .unwrap_or_default()
                        ))?,
                    }
                    Ok(0)
                }
                Err(e) => {
                    spinner.finish(&format!("install of {id} failed")).await;
                    Err(e.into())
                }
            }
        }
        AdaptersCommand::Probe { id, format } => {
            let report = ctx.engine.agents().probe(id).await?;
            print_probe(&report, "agent_adapter_probe", *format)
        }
        AdaptersCommand::Login { id, method } => {
            let cwd = std::env::current_dir()?;
            let agents = ctx.engine.agents();
            let m = agents.terminal_method(id, method.as_deref(), &cwd).await?;
            eprintln!("signing in to {id}: {} ({})", m.name, m.id);
            let env: Vec<(String, String)> = m.env.into_iter().collect();
            let done = agents.terminal_login(id, &m.args, &env).await?;
            if done.exit_code == 0 {
                eprintln!("signed in to {id}; open a new thread on agent:{id}");
            } else {
                eprintln!("the sign-in of {id} failed ({})", done.ended);
            }
            Ok(done.exit_code)
        }
    }
}

/// Prints a probe's verdict as `object` and exits 0 when ready, 9 otherwise.
fn print_probe(report: &AgentProbe, object: &str, format: Format) -> anyhow::Result<i32> {
    match format {
        Format::Json => print_resource(object, &ProbeDto::from(report))?,
        Format::Text => {
            let mut out = format!(
                "{}: {} at stage {} in {} ms\n",
                report.adapter_id,
                serde_json::to_value(report.status)?.as_str().unwrap_or("?"),
                report.stage,
                report.duration_ms
            );
            if let Some(p) = &report.path {
                let _ = writeln!(out, "path: {p}");
            }
            if let Some(e) = &report.error {
                let _ = writeln!(out, "error: {e}");
            }
            if let Some(t) = &report.stderr_tail {
                let _ = writeln!(out, "stderr tail:\n{t}");
            }
            if let Some(h) = report.hint() {
                let _ = writeln!(out, "next step: {h}");
            }
            print_text(&out)?;
        }
    }
    Ok(if report.status == ProbeStatus::Ready {
        0
    } else {
        9
    })
}
