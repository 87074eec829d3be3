//! `hecate sessions list|show|export|delete`.

use super::output::{Format, print_resource, print_text};
use super::{AppContext, GlobalArgs};
use crate::bridges::resources::TranscriptQuery;
use crate::domain::ids::{MessageId, SessionId};
use crate::domain::message::Role;
use crate::domain::provider_call::format_usd;
use crate::engine::Transcript;
use std::fmt::Write as _;

/// The `sessions` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SessionsCommand {
    /// List sessions, newest first.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Print a transcript with per-message provider, model, tokens and cost.
    Show {
        /// Session id.
        id: String,
        /// At most this many messages (1–1000): the newest unless a cursor is given.
        #[arg(long, default_value_t = 200)]
        limit: u32,
        /// Only messages older than this sequence (the page before one whose first
        /// message has it).
        #[arg(long, conflicts_with = "after")]
        before: Option<i64>,
        /// Only messages newer than this sequence (the page after one whose last
        /// message has it).
        #[arg(long)]
        after: Option<i64>,
        /// Only messages of these roles, comma-separated (system, user, assistant,
        /// tool).
        #[arg(long)]
        role: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Export a session as JSON or Markdown.
    Export {
        /// Session id.
        id: String,
        /// `json` or `md`.
        #[arg(long, value_enum, default_value = "json")]
        format: ExportFormat,
    },
    /// Delete a session and everything stored about it.
    Delete {
        /// Session id.
        id: String,
    },
    /// Restore the files a message's turn changed to their state before the turn.
    Revert {
        /// Session id.
        session: String,
        /// Assistant message id whose turn captured the diff.
        message: String,
        /// Only these captured paths (default: all of them).
        paths: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// List the files a message's turn changed.
    Files {
        /// Session id.
        session: String,
        /// Assistant message id.
        message: String,
        /// Print this file's diff instead of the list.
        #[arg(long)]
        diff: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The transcript resource as JSON.
    Json,
    /// A Markdown document.
    Md,
}

pub async fn run(cli: &GlobalArgs, cmd: &SessionsCommand) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    let ns = ctx.namespace.as_str();
    match cmd {
        SessionsCommand::List { format, limit } => {
            let list = ctx.engine.list_sessions(ns, *limit).await?;
            match format {
                Format::Json => print_resource("agent_chat_sessions", &list)?,
                Format::Text => {
                    let mut out = String::new();
                    for s in &list {
                        let target = match (&s.session.provider, &s.session.model) {
                            (Some(p), Some(m)) => format!("{p}/{m}"),
                            _ => s.session.adapter_id.clone().unwrap_or_default(),
                        };
                        let _ = writeln!(
                            out,
                            "{}  {:<10} {:<9} {:>4} msgs  {}  {}",
                            s.session.id,
                            s.session.status.as_str(),
                            s.session.runtime_kind.as_str(),
                            s.message_count,
                            target,
                            s.session.title
                        );
                    }
                    if list.is_empty() {
                        out.push_str("no sessions\n");
                    }
                    print_text(&out)?;
                }
            }
        }
        SessionsCommand::Show {
            id,
            limit,
            before,
            after,
            role,
            format,
        } => {
            let window = TranscriptQuery {
                limit: Some(*limit),
                before_sequence: *before,
                after_sequence: *after,
                role: role.clone(),
            }
            .window()?;
            let t = ctx
                .engine
                .transcript_window(ns, &SessionId::from(id.as_str()), window)
                .await?;
            match format {
                Format::Json => print_resource("agent_chat_session", &t)?,
                Format::Text => print_text(&render_text(&t))?,
            }
        }
        SessionsCommand::Export { id, format } => {
            let t = ctx
                .engine
                .transcript(ns, &SessionId::from(id.as_str()))
                .await?;
            match format {
                ExportFormat::Json => print_resource("agent_chat_session", &t)?,
                ExportFormat::Md => print_text(&render_markdown(&t))?,
            }
        }
        SessionsCommand::Revert {
            session,
            message,
            paths,
            format,
        } => {
            let r = ctx
                .engine
                .revert_message(
                    ns,
                    &SessionId::from(session.as_str()),
                    &MessageId::from(message.as_str()),
                    paths,
                )
                .await?;
            match format {
                Format::Json => print_resource("agent_chat_revert", &r)?,
                Format::Text => print_text(&format!("reverted {}\n", r.paths.join(", ")))?,
            }
        }
        SessionsCommand::Files {
            session,
            message,
            diff,
            format,
        } => {
            let (sid, mid) = (
                SessionId::from(session.as_str()),
                MessageId::from(message.as_str()),
            );
            match diff {
                Some(path) => {
                    let (change, text) = ctx.engine.message_file_diff(ns, &sid, &mid, path).await?;
                    match format {
                        Format::Json => print_resource(
                            "agent_chat_changed_file_diff",
                            &serde_json::json!({"path": change.path, "status": change.status,
                                "additions": change.additions, "deletions": change.deletions, "diff": text}),
                        )?,
                        Format::Text => print_text(&text)?,
                    }
                }
                None => {
                    let files = ctx.engine.message_files(ns, &sid, &mid).await?;
                    match format {
                        Format::Json => print_resource("agent_chat_changed_files", &files)?,
                        Format::Text => {
                            let mut out = String::new();
                            for f in &files {
                                let _ = writeln!(
                                    out,
                                    "{:<9} +{:<4} -{:<4} {}",
                                    f.status, f.additions, f.deletions, f.path
                                );
                            }
                            print_text(&out)?;
                        }
                    }
                }
            }
        }
        SessionsCommand::Delete { id } => {
            ctx.engine
                .delete_session(ns, &SessionId::from(id.as_str()))
                .await?;
            eprintln!("deleted {id}");
        }
    }
    Ok(0)
}

/// Per-message call details: provider/model, tokens, cost (or "cost unknown").
fn call_line(t: &Transcript, m: &crate::domain::message::Message) -> Option<String> {
    let id = m.produced_by_call_id.as_ref()?;
    let c = t.provider_calls.iter().find(|c| &c.id == id)?;
    let cost = c
        .cost_micros_usd
        .map(|m| format!("${}", format_usd(m)))
        .unwrap_or_else(|| "cost unknown".into());
    Some(format!(
        "{}/{} · {} in / {} out tokens · {} · {} ms",
        c.provider, c.model, c.usage.prompt_tokens, c.usage.completion_tokens, cost, c.duration_ms
    ))
}

fn render_text(t: &Transcript) -> String {
    let s = &t.session;
    let mut out = String::new();
    let _ = writeln!(out, "{}  {}", s.id, s.title);
    let _ = writeln!(
        out,
        "runtime {} · status {} · turns {} · created {}",
        s.runtime_kind.as_str(),
        s.status.as_str(),
        s.turns_used,
        s.created_at
    );
    if let Some(h) = &s.history {
        let _ = writeln!(out, "memory {}", h.name());
    }
    if let Some(line) = gateway_line(t) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(first) = t.messages.first().filter(|_| t.page.older) {
        let _ = writeln!(
            out,
            "\n… older messages: hecate sessions show {} --before {}",
            s.id, first.sequence
        );
    }
    for m in &t.messages {
        let status = match m.status.as_str() {
            "completed" => String::new(),
            other => format!(
                " [{other}{}]",
                m.error
                    .as_ref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ),
        };
        let _ = writeln!(out, "\n#{} {}{}", m.sequence, m.role.as_str(), status);
        if let Some(line) = call_line(t, m) {
            let _ = writeln!(out, "  ({line})");
        }
        if let Some(line) = trace_line(t, m) {
            let _ = writeln!(out, "  ({line})");
        }
        let _ = writeln!(out, "{}", m.content);
    }
    if let Some(last) = t.messages.last().filter(|_| t.page.newer) {
        let _ = writeln!(
            out,
            "\n… newer messages: hecate sessions show {} --after {}",
            s.id, last.sequence
        );
    }
    out
}

/// The model calls the session's agent made through `/v1`: how many, tokens, cost.
fn gateway_line(t: &Transcript) -> Option<String> {
    let calls = &t.gateway_calls;
    if calls.is_empty() {
        return None;
    }
    let input: u64 = calls.iter().map(|c| c.usage.prompt_tokens).sum();
    let output: u64 = calls.iter().map(|c| c.usage.completion_tokens).sum();
    let cost = if calls.iter().all(|c| c.cost_micros_usd.is_some()) {
        let micros: i64 = calls.iter().filter_map(|c| c.cost_micros_usd).sum();
        format!("${}", format_usd(micros))
    } else {
        "cost unknown".to_string()
    };
    Some(format!(
        "model calls through the gateway: {} · {input} in / {output} out tokens · {cost}",
        calls.len()
    ))
}

/// The trace and span of the turn that produced an answer, when it was traced.
fn trace_line(t: &Transcript, m: &crate::domain::message::Message) -> Option<String> {
    if m.role != Role::Assistant {
        return None;
    }
    let run = t.runs.iter().find(|r| Some(&r.id) == m.run_id.as_ref())?;
    let trace = run.trace_id.as_deref()?;
    Some(match &run.span_id {
        Some(span) => format!("trace {trace} · span {span}"),
        None => format!("trace {trace}"),
    })
}

fn render_markdown(t: &Transcript) -> String {
    let s = &t.session;
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", s.title);
    let _ = writeln!(out, "- Session: `{}`", s.id);
    let _ = writeln!(out, "- Runtime: {}", s.runtime_kind.as_str());
    let _ = writeln!(out, "- Created: {}\n", s.created_at);
    for m in &t.messages {
        let _ = writeln!(out, "## {} (#{})\n", m.role.as_str(), m.sequence);
        if let Some(line) = call_line(t, m) {
            let _ = writeln!(out, "_{line}_\n");
        }
        if m.status.as_str() != "completed" {
            let _ = writeln!(out, "> status: {}\n", m.status.as_str());
        }
        let _ = writeln!(out, "{}\n", m.content);
    }
    out
}
