//! `hecate chat`: one turn against a model, an external agent or, with
//! `--tools`, Hecate's own agent (an `agent_loop` task in the workspace),
//! streamed to stdout, with permission requests asked on this terminal.

use super::output::{Format, print_resource, print_text};
use super::{AppContext, GlobalArgs};
use crate::domain::approval::{ApprovalMode, Decision, Scope};
use crate::domain::event::{EngineEvent, RuntimeEvent};
use crate::domain::ids::ApprovalId;
use crate::domain::ids::SessionId;
use crate::domain::memory::{HistoryParts, HistoryStrategy};
use crate::domain::recall::{SessionMemory, valid_recall, valid_user};
use crate::domain::run::RunStatus;
use crate::domain::session::RuntimeKind;
use crate::engine::bus::Received;
use crate::engine::{CreateSession, SendMessage};
use anyhow::Context;
use serde_json::json;
use std::io::Read;

/// Arguments of `hecate chat`.
#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    /// Model as PROVIDER/MODEL (required for a new session; with --session, the next
    /// turn runs on it, handing an external agent's session over to the model).
    #[arg(long, conflicts_with = "agent")]
    pub model: Option<String>,
    /// External agent adapter id (codex, claude_code, cursor_agent, gemini, opencode, ...);
    /// with --session, hands the session to that agent (primed with the transcript).
    #[arg(long)]
    pub agent: Option<String>,
    /// Run Hecate's own agent with its tools in --workspace (the model given by
    /// --model, or the session's); a follow-up with --session continues its task.
    #[arg(long, conflicts_with = "agent")]
    pub tools: bool,
    /// How the agent's permission requests are answered: ask here, allow, or reject.
    #[arg(long, value_enum)]
    pub approval: Option<ApprovalArg>,
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
    /// Working-memory strategy of a new session: buffer_window, summary_buffer or
    /// token_budget (the config's `[history]` when absent).
    #[arg(long, conflicts_with = "session")]
    pub history: Option<String>,
    /// Window size for `--history buffer_window`.
    #[arg(long, requires = "history")]
    pub history_window: Option<usize>,
    /// Token budget for `--history token_budget`.
    #[arg(long, requires = "history")]
    pub history_max_tokens: Option<usize>,
    /// Messages between two summaries for `--history summary_buffer` (default 20).
    #[arg(long, requires = "history")]
    pub history_summarize_every: Option<u64>,
    /// Messages `--history summary_buffer` loads before the first summary
    /// (default 100).
    #[arg(long, requires = "history")]
    pub history_max_messages: Option<usize>,
    /// The user whose long-term memory a new session uses (absent: the
    /// namespace's shared memory).
    #[arg(long, conflicts_with = "session")]
    pub user: Option<String>,
    /// Messages recalled from the user's other sessions into each turn of a new
    /// session, 0 to 50 (`[memory] recall` when absent).
    #[arg(long, conflicts_with = "session", allow_negative_numbers = true)]
    pub recall: Option<i64>,
    /// `text` streams the answer; `json` prints the finished turn as JSON.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// The prompt; `-` reads it from stdin.
    pub prompt: String,
}

/// `--approval` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ApprovalArg {
    /// Ask on this terminal (or let another terminal answer with `hecate approvals resolve`).
    Prompt,
    /// Allow once without asking.
    Auto,
    /// Reject without asking.
    Deny,
}

impl From<ApprovalArg> for ApprovalMode {
    fn from(a: ApprovalArg) -> Self {
        match a {
            ApprovalArg::Prompt => ApprovalMode::Prompt,
            ApprovalArg::Auto => ApprovalMode::Auto,
            ApprovalArg::Deny => ApprovalMode::Deny,
        }
    }
}

/// Lines typed on stdin, read on a thread so the turn keeps streaming meanwhile.
fn stdin_lines() -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut line = String::new();
        while stdin.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if tx.send(line.trim().to_string()).is_err() {
                break;
            }
            line.clear();
        }
    });
    rx
}

fn approval_choice(line: &str) -> Option<(Decision, Scope)> {
    match line.to_ascii_lowercase().as_str() {
        "a" | "y" | "yes" | "approve" | "once" => Some((Decision::Approve, Scope::Once)),
        "s" | "session" => Some((Decision::Approve, Scope::Session)),
        "w" | "workspace" | "workspace_tool" => Some((Decision::Approve, Scope::WorkspaceTool)),
        "t" | "adapter" | "adapter_tool" => Some((Decision::Approve, Scope::AdapterTool)),
        "r" | "n" | "no" | "reject" => Some((Decision::Reject, Scope::Once)),
        _ => None,
    }
}

/// The runtime this turn asks for: Hecate's agent with `--tools`, an external
/// agent with `--agent`, a model with `--model` alone; the session's own
/// otherwise. On an existing `--session` a different one hands the session off
/// (the new target gets the transcript).
fn turn_runtime(args: &ChatArgs) -> Option<RuntimeKind> {
    if args.tools {
        Some(RuntimeKind::Agent)
    } else if args.agent.is_some() {
        Some(RuntimeKind::ExternalAgent)
    } else if args.model.is_some() {
        Some(RuntimeKind::Model)
    } else {
        None
    }
}

pub async fn run(cli: &GlobalArgs, args: &ChatArgs) -> anyhow::Result<i32> {
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
            let create = match (&args.agent, &args.model) {
                (None, Some(model)) if args.tools => CreateSession {
                    title: args.title.clone(),
                    runtime_kind: Some(RuntimeKind::Agent),
                    model: Some(model.clone()),
                    workspace: Some(args.workspace.clone().ok_or_else(|| {
                        crate::domain::HecateError::new(
                            crate::domain::ErrorType::WorkspaceRequired,
                            "Hecate's agent (--tools) needs --workspace DIR",
                        )
                    })?),
                    system_prompt: args.system.clone(),
                    ..Default::default()
                },
                (Some(agent), _) => CreateSession {
                    title: args.title.clone(),
                    runtime_kind: Some(RuntimeKind::ExternalAgent),
                    adapter_id: Some(agent.clone()),
                    workspace: Some(args.workspace.clone().ok_or_else(|| {
                        crate::domain::HecateError::new(
                            crate::domain::ErrorType::WorkspaceRequired,
                            "an external agent needs --workspace DIR",
                        )
                    })?),
                    ..Default::default()
                },
                (None, Some(model)) => CreateSession {
                    title: args.title.clone(),
                    model: Some(model.clone()),
                    workspace: args.workspace.clone(),
                    system_prompt: args.system.clone(),
                    ..Default::default()
                },
                (None, None) => {
                    return Err(crate::domain::HecateError::new(
                        crate::domain::ErrorType::ModelRequired,
                        "a new chat needs --model PROVIDER/MODEL or --agent ADAPTER_ID",
                    )
                    .into());
                }
            };
            let history = args
                .history
                .as_deref()
                .map(|name| {
                    HistoryStrategy::from_parts(
                        |key| match key {
                            "strategy" => "--history".to_string(),
                            k => format!("--history-{}", k.replace('_', "-")),
                        },
                        HistoryParts {
                            strategy: name,
                            window: args.history_window,
                            max_tokens: args.history_max_tokens,
                            summarize_every: args.history_summarize_every,
                            max_messages: args.history_max_messages,
                        },
                    )
                })
                .transpose()?;
            let memory = SessionMemory {
                user: valid_user("--user", args.user.as_deref())?,
                recall: valid_recall("--recall", args.recall)?,
            };
            let s = engine
                .create_session(
                    ns,
                    CreateSession {
                        history,
                        memory,
                        ..create
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
                runtime_kind: turn_runtime(args),
                adapter_id: args.session.as_ref().and(args.agent.clone()),
                model: model_override,
                workspace: args.session.as_ref().and(args.workspace.clone()),
                system_prompt: args.session.as_ref().and(args.system.clone()),
                approval_mode: args.approval.map(Into::into),
                ..Default::default()
            },
        )
        .await?;
    let stream = args.format == Format::Text;
    let mut wrote_text = false;
    let mut answers = (args.prompt != "-").then(stdin_lines);
    let mut pending: Vec<ApprovalId> = Vec::new();
    loop {
        tokio::select! {
            received = turn.events.recv() => match received {
                Some(Received::Event(EngineEvent::Runtime { update, .. })) if stream => match update {
                    RuntimeEvent::TextDelta { text } => {
                        print_text(&text)?;
                        wrote_text = true;
                    }
                    RuntimeEvent::ThoughtDelta { text } => eprint!("{text}"),
                    RuntimeEvent::ToolCallStarted { name, kind, .. } => {
                        eprintln!("[tool: {name}{}]", kind.map(|k| format!(" ({k})")).unwrap_or_default())
                    }
                    RuntimeEvent::ToolCallUpdated { id, status: Some(st), .. } => eprintln!("[tool {id}: {st}]"),
                    RuntimeEvent::Plan { entries } => eprintln!("[plan: {entries}]"),
                    RuntimeEvent::FileChanged { path, change } => eprintln!("[{change}: {path}]"),
                    _ => {}
                },
                Some(Received::Event(EngineEvent::ApprovalRequested { approval, .. })) => {
                    eprintln!(
                        "\npermission requested: {} ({})\n  answer [a]pprove once, approve for the [s]ession, this [w]orkspace's tool, this agen[t]'s tool, or [r]eject;\n  or from another terminal: hecate approvals resolve {} --decision approve|reject",
                        approval.tool_name, approval.tool_kind, approval.id
                    );
                    pending.push(approval.id);
                }
                Some(Received::Event(EngineEvent::ApprovalResolved { approval, .. })) => {
                    pending.retain(|id| id != &approval.id);
                    eprintln!(
                        "[permission {}: {}{}]",
                        approval.status.as_str(),
                        approval.path.as_deref().unwrap_or(""),
                        approval.selected_option.as_ref().map(|o| format!(", option {o}")).unwrap_or_default()
                    );
                }
                Some(Received::Event(EngineEvent::TurnFinished { .. })) | None => break,
                Some(Received::Lagged(n)) => eprintln!("[{n} updates skipped]"),
                Some(_) => {}
            },
            Some(line) = next_line(&mut answers), if !pending.is_empty() => {
                match approval_choice(&line) {
                    Some((decision, scope)) => {
                        let id = pending.remove(0);
                        if let Err(e) = engine.approvals().resolve(ns, &id, decision, scope).await {
                            eprintln!("could not resolve {id}: {}", e.message);
                        }
                    }
                    None => eprintln!("answer a, s, w, t or r"),
                }
            }
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
    if let Some(m) = &result.assistant
        && let Ok(files) = engine.message_files(ns, &session_id, &m.id).await
        && !files.is_empty()
    {
        eprintln!("files changed by this turn (message {}):", m.id);
        for f in &files {
            eprintln!(
                "  {:<9} +{} -{} {}",
                f.status, f.additions, f.deletions, f.path
            );
        }
    }
    engine.shutdown().await;
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
            super::output::exit_code(e.error_type)
        }
        _ => 1,
    })
}

async fn next_line(
    rx: &mut Option<tokio::sync::mpsc::UnboundedReceiver<String>>,
) -> Option<String> {
    match rx {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}
