//! `hecate chat`: one turn against a model session, streamed to stdout.

use super::output::{Format, print_resource, print_text};
use super::{AppContext, Cli};
use crate::domain::event::{EngineEvent, RuntimeEvent};
use crate::domain::ids::SessionId;
use crate::domain::run::RunStatus;
use crate::engine::bus::Received;
use crate::engine::{CreateSession, SendMessage};
use anyhow::Context;
use serde_json::json;
use std::io::Read;

/// Arguments of `hecate chat`.
#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    /// Model as PROVIDER/MODEL (required for a new session; switches model when given with --session).
    #[arg(long)]
    pub model: Option<String>,
    /// Continue this session instead of creating one.
    #[arg(long)]
    pub session: Option<String>,
    /// Workspace directory recorded on the session.
    #[arg(long)]
    pub workspace: Option<String>,
    /// System prompt for the session.
    #[arg(long)]
    pub system: Option<String>,
    /// Title of a new session.
    #[arg(long)]
    pub title: Option<String>,
    /// `text` streams the answer; `json` prints the finished turn as JSON.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// The prompt; `-` reads it from stdin.
    pub prompt: String,
}

pub async fn run(cli: &Cli, args: &ChatArgs) -> anyhow::Result<i32> {
    let prompt = if args.prompt == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading the prompt from stdin")?;
        s
    } else {
        args.prompt.clone()
    };
    crate::engine::validate_prompt(&prompt)?;
    let ctx = AppContext::build(cli).await?;
    let engine = &ctx.engine;
    let ns = ctx.namespace.as_str();
    let (session_id, model_override) = match &args.session {
        Some(id) => {
            let id = SessionId::from(id.as_str());
            engine.get_session(ns, &id).await?;
            (id, args.model.clone())
        }
        None => {
            let Some(model) = args.model.clone() else {
                return Err(crate::domain::HecateError::new(
                    crate::domain::ErrorType::ModelRequired,
                    "a new chat needs --model PROVIDER/MODEL",
                )
                .into());
            };
            let s = engine
                .create_session(
                    ns,
                    CreateSession {
                        title: args.title.clone(),
                        model: Some(model),
                        workspace: args.workspace.clone(),
                        system_prompt: args.system.clone(),
                        ..Default::default()
                    },
                )
                .await?;
            (s.id, None)
        }
    };
    eprintln!("session: {session_id}");
    let mut turn = engine
        .send_message(
            ns,
            &session_id,
            SendMessage {
                content: prompt,
                model: model_override,
                workspace: args.session.as_ref().and(args.workspace.clone()),
                system_prompt: args.session.as_ref().and(args.system.clone()),
                ..Default::default()
            },
        )
        .await?;
    let stream = args.format == Format::Text;
    let mut wrote_text = false;
    loop {
        tokio::select! {
            received = turn.events.recv() => match received {
                Some(Received::Event(EngineEvent::Runtime { update, .. })) if stream => match update {
                    RuntimeEvent::TextDelta { text } => {
                        print_text(&text)?;
                        wrote_text = true;
                    }
                    RuntimeEvent::ThoughtDelta { text } => eprint!("{text}"),
                    RuntimeEvent::ToolCallStarted { name, .. } => eprintln!("[tool call: {name}]"),
                    _ => {}
                },
                Some(Received::Event(EngineEvent::TurnFinished { .. })) | None => break,
                Some(Received::Lagged(n)) => eprintln!("[{n} updates skipped]"),
                Some(_) => {}
            },
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ncancelling…");
                let _ = engine.cancel(ns, &session_id).await;
            }
        }
    }
    let result = turn.wait().await;
    if wrote_text {
        print_text("\n")?;
    }
    if args.format == Format::Json {
        print_resource(
            "agent_chat_turn",
            &json!({
                "session_id": session_id,
                "run": result.run,
                "assistant": result.assistant,
                "error": result.error,
                "summarization_needed": result.summarization_needed,
            }),
        )?;
    }
    Ok(match (result.run.status, &result.error) {
        (RunStatus::Completed, _) => 0,
        (RunStatus::Cancelled, _) => 130,
        (_, Some(e)) => {
            if args.format == Format::Text {
                super::output::report_error(&anyhow::Error::new(e.clone()));
            }
            e.error_type.exit_code()
        }
        _ => 1,
    })
}
