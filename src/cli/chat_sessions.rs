//! `hecate chat-sessions list|show|delete`: the chat sessions the model gateway
//! recorded from `/v1` requests carrying a session id (the agent-chat sessions
//! stay under `hecate sessions`). JSON output uses the HTTP API's shapes.

use super::output::{Format, print_resource, print_text};
use super::{AppContext, GlobalArgs};
use crate::bridges::resources::chat::{ChatSessionDto, ChatSessionSummaryDto};
use crate::domain::provider_call::format_usd;
use crate::engine::gateway::conversations::GatewayConversationView;
use serde_json::Value;
use std::fmt::Write as _;

/// The `chat-sessions` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ChatSessionsCommand {
    /// List chat sessions, most recently updated first.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Skip this many.
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// Print a chat session's messages and provider calls.
    Show {
        /// Chat session id.
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Delete a chat session with its messages and provider calls.
    Delete {
        /// Chat session id.
        id: String,
    },
}

/// Runs a `chat-sessions` subcommand.
pub async fn run(cli: &GlobalArgs, cmd: &ChatSessionsCommand) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    let ns = ctx.namespace.as_str();
    match cmd {
        ChatSessionsCommand::List {
            format,
            limit,
            offset,
        } => {
            let list = ctx
                .engine
                .gateway()
                .list_conversations(ns, *limit, *offset)
                .await?;
            let rows: Vec<ChatSessionSummaryDto> =
                list.iter().map(ChatSessionSummaryDto::from).collect();
            match format {
                Format::Json => print_resource("chat_sessions", &rows)?,
                Format::Text => {
                    let mut out = String::new();
                    for r in &rows {
                        let _ = writeln!(
                            out,
                            "{}  {:>4} msgs {:>3} calls  {}/{}  {}",
                            r.id,
                            r.message_count,
                            r.provider_call_count,
                            r.last_provider.as_deref().unwrap_or("-"),
                            r.last_model.as_deref().unwrap_or("-"),
                            r.updated_at
                        );
                    }
                    if rows.is_empty() {
                        out.push_str("no chat sessions\n");
                    }
                    print_text(&out)?;
                }
            }
        }
        ChatSessionsCommand::Show { id, format } => {
            let v = ctx.engine.gateway().conversation(ns, id).await?;
            match format {
                Format::Json => print_resource(
                    "chat_session",
                    &ChatSessionDto::new(&v.session, &v.messages, &v.provider_calls),
                )?,
                Format::Text => print_text(&render(&v))?,
            }
        }
        ChatSessionsCommand::Delete { id } => {
            ctx.engine.gateway().delete_conversation(ns, id).await?;
            print_text(&format!("deleted {id}\n"))?;
        }
    }
    Ok(0)
}

/// The session as text: each message with its role, then its provider call.
fn render(v: &GatewayConversationView) -> String {
    let mut out = format!("chat session {}\n", v.session.id);
    for m in &v.messages {
        let role = m.message["role"].as_str().unwrap_or("?");
        let text = match &m.message["content"] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let partial = if m.is_partial() { " (partial)" } else { "" };
        let _ = writeln!(out, "[{}] {role}{partial}: {text}", m.sequence);
        for c in m.message["tool_calls"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "    tool call {} {}({})",
                c["id"].as_str().unwrap_or(""),
                c["function"]["name"].as_str().unwrap_or(""),
                c["function"]["arguments"].as_str().unwrap_or("")
            );
        }
        let call = m
            .produced_by_call_id
            .as_ref()
            .and_then(|id| v.provider_calls.iter().find(|c| &c.id == id));
        if let Some(c) = call {
            let cost = c
                .cost_micros_usd
                .map(|m| format!("${}", format_usd(m)))
                .unwrap_or_else(|| "cost unknown".into());
            let _ = writeln!(
                out,
                "    {}/{}  {} in / {} out tokens  {cost}  {}",
                c.provider, c.model, c.usage.prompt_tokens, c.usage.completion_tokens, c.request_id
            );
        }
    }
    out
}
