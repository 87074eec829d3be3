//! `hecate tasks …`: the durable task runtime from a terminal, against the same
//! store as every other surface. Runs are executed by `hecate serve` workers;
//! `start --wait` runs workers in this process until the run ends, so a task can
//! run end to end without a server.

use super::output::{Format, print_resource, print_text};
use super::{AppContext, GlobalArgs};
use crate::bridges::resources::tasks::{
    CreateTaskRequest, TaskApprovalDto, TaskArtifactDto, TaskDto, TaskEventDto, TaskPatchDto,
    TaskRunDto, TaskStepDto,
};
use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
use crate::domain::task::{TaskEvent, TaskRun};
use crate::domain::task::{TaskEventFilter, TaskListFilter};
use crate::engine::tasks::{StartOptions, TaskRuntime, patch_content};
use serde_json::json;
use std::fmt::Write as _;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often `--follow` looks for new events.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

/// The `tasks` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TasksCommand {
    /// Create a task (it runs once started).
    Create(Box<CreateArgs>),
    /// List tasks, newest first.
    List {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Show a task with its runs.
    Show {
        /// Task id.
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Start a new run of a task.
    Start {
        /// Task id.
        id: String,
        /// Execute it in this process and follow its events until it ends.
        #[arg(long)]
        wait: bool,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Cancel a run.
    Cancel(RunRef),
    /// Retry a failed or cancelled run in a fresh workspace.
    Retry(RunRef),
    /// Resume an ended run in its workspace (an agent_loop run goes on from
    /// its conversation).
    Resume(RunRef),
    /// Continue an ended agent_loop run's conversation with a follow-up prompt.
    Continue {
        /// The run.
        #[command(flatten)]
        run: RunRef,
        /// The follow-up instruction.
        #[arg(long)]
        prompt: String,
    },
    /// Retry an ended agent_loop run from its Nth model turn (1-based).
    RetryFromTurn {
        /// The run.
        #[command(flatten)]
        run: RunRef,
        /// The model turn the new run takes again.
        #[arg(long)]
        turn: u32,
    },
    /// Print a run's events (after a cursor; --follow until the run ends).
    Events {
        /// Task id.
        task: String,
        /// Run id.
        run: String,
        /// Only events after this sequence.
        #[arg(long, default_value_t = 0)]
        after: i64,
        /// Keep printing until the run ends.
        #[arg(long)]
        follow: bool,
        /// Output format (JSON: one event envelope per line).
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// A run's patches, its steps and output artifacts.
    Patches(RunRef),
    /// Approve a pending approval (the run is queued).
    Approve(ApprovalRef),
    /// Reject a pending approval (the run fails).
    Reject(ApprovalRef),
}

/// A run named on the command line.
#[derive(Debug, clap::Args)]
pub struct RunRef {
    /// Task id.
    pub task: String,
    /// Run id.
    pub run: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

impl RunRef {
    /// The task and run ids.
    fn ids(&self) -> (TaskId, TaskRunId) {
        (
            TaskId::from(self.task.as_str()),
            TaskRunId::from(self.run.as_str()),
        )
    }
}

/// An approval named on the command line.
#[derive(Debug, clap::Args)]
pub struct ApprovalRef {
    /// Task id.
    pub task: String,
    /// Approval id.
    pub approval: String,
    /// A note kept on the approval.
    #[arg(long)]
    pub note: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// `hecate tasks create`: the fields of `POST /hecate/v1/tasks`.
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// shell, git, file (or agent_loop).
    #[arg(long)]
    pub kind: Option<String>,
    /// repo_local or coding_agent.
    #[arg(long)]
    pub profile: Option<String>,
    /// The command of a shell task.
    #[arg(long = "shell")]
    pub shell_command: Option<String>,
    /// The arguments of a git task.
    #[arg(long = "git")]
    pub git_command: Option<String>,
    /// The file of a file task.
    #[arg(long = "file")]
    pub file_path: Option<String>,
    /// What a file task writes.
    #[arg(long = "content")]
    pub file_content: Option<String>,
    /// write, append or delete.
    #[arg(long = "operation")]
    pub file_operation: Option<String>,
    /// Working directory (absolute).
    #[arg(long = "dir")]
    pub working_directory: Option<String>,
    /// ephemeral, persistent or in_place.
    #[arg(long = "workspace")]
    pub workspace_mode: Option<String>,
    /// Repository to clone into the workspace.
    #[arg(long)]
    pub repo: Option<String>,
    /// Branch to clone.
    #[arg(long)]
    pub branch: Option<String>,
    /// Allow network access (otherwise commands run without network).
    #[arg(long)]
    pub network: bool,
    /// Everything outside the workspace read-only: the default now, still
    /// accepted so existing scripts keep working.
    #[arg(long, conflicts_with = "writable_root")]
    pub read_only: bool,
    /// Loosen the default confinement: the whole filesystem writable to the
    /// task's commands (by default only the workspace and a private /tmp are).
    #[arg(long)]
    pub writable_root: bool,
    /// Loosen the default confinement: the workspace's .git writable and git
    /// hooks on.
    #[arg(long)]
    pub git_writable: bool,
    /// Directory every path must stay under.
    #[arg(long)]
    pub allowed_root: Option<String>,
    /// Step time limit in milliseconds.
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Higher runs first.
    #[arg(long)]
    pub priority: Option<i64>,
    /// What the task is for.
    #[arg(long)]
    pub prompt: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// `path` made absolute against this shell's directory (the engine refuses
/// relative directories: they would be the server's).
fn absolute(path: &Option<String>) -> Option<String> {
    let path = path.as_ref()?;
    match std::env::current_dir() {
        Ok(here) => Some(here.join(path).display().to_string()),
        Err(_) => Some(path.clone()),
    }
}

impl CreateArgs {
    /// `--dir` made absolute against this shell's directory; with a profile and no
    /// `--dir`, this directory (`repo_local` works on the repository you are in).
    fn working_directory(&self) -> Option<String> {
        match (&self.working_directory, &self.profile) {
            (None, Some(_)) => absolute(&Some(".".to_string())),
            (dir, _) => absolute(dir),
        }
    }

    fn request(&self) -> CreateTaskRequest {
        CreateTaskRequest {
            execution_kind: self.kind.clone(),
            execution_profile: self.profile.clone(),
            prompt: self.prompt.clone(),
            shell_command: self.shell_command.clone(),
            git_command: self.git_command.clone(),
            file_path: self.file_path.clone(),
            file_content: self.file_content.clone(),
            file_operation: self.file_operation.clone(),
            working_directory: self.working_directory(),
            workspace_mode: self.workspace_mode.clone(),
            repo: self.repo.clone(),
            base_branch: self.branch.clone(),
            sandbox_allowed_root: absolute(&self.allowed_root),
            sandbox_read_only: Some(!self.writable_root),
            sandbox_git_writable: Some(self.git_writable),
            sandbox_network: Some(self.network),
            timeout_ms: self.timeout_ms,
            priority: self.priority,
            ..CreateTaskRequest::default()
        }
    }
}

fn run_line(r: &TaskRun) -> String {
    format!(
        "{}  #{} {:<17}{}\n",
        r.id,
        r.number,
        r.status.as_str(),
        r.error_type
            .as_ref()
            .map(|t| format!(" {t}: {}", r.error_message.as_deref().unwrap_or("")))
            .unwrap_or_default()
    )
}

fn print_run(r: &TaskRun, format: Format) -> anyhow::Result<()> {
    match format {
        Format::Json => print_resource("task_run", &TaskRunDto::from(r)),
        Format::Text => print_text(&run_line(r)),
    }
}

fn event_line(e: &TaskEvent) -> String {
    format!(
        "{:>6}  {}  {:<22} {}\n",
        e.sequence, e.occurred_at, e.event_type, e.data
    )
}

/// Prints a run's events after `after` until it ends (`follow`) or once.
async fn print_events(
    tasks: &TaskRuntime,
    ns: &str,
    task: &TaskId,
    run: &TaskRunId,
    mut after: i64,
    follow: bool,
    format: Format,
) -> anyhow::Result<TaskRun> {
    loop {
        // Read the state first: a run already over has all its events below.
        let state = tasks.get_run(ns, task, run).await?;
        let events = tasks
            .list_events(TaskEventFilter {
                namespace: ns.to_string(),
                task_id: Some(task.clone()),
                run_id: Some(run.clone()),
                after_sequence: after,
                limit: 1000,
                ..Default::default()
            })
            .await?;
        let mut out = String::new();
        for e in &events {
            after = e.sequence;
            match format {
                Format::Json => {
                    let _ = writeln!(out, "{}", serde_json::to_string(&TaskEventDto::from(e))?);
                }
                Format::Text => out.push_str(&event_line(e)),
            }
        }
        print_text(&out)?;
        if events.len() == 1000 {
            continue;
        }
        if !follow || state.status.is_terminal() {
            return Ok(state);
        }
        tokio::time::sleep(FOLLOW_POLL).await;
    }
}

/// Runs a `tasks` subcommand.
pub async fn run(cli: &GlobalArgs, cmd: &TasksCommand) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    let ns = ctx.namespace.as_str();
    let tasks = ctx.engine.tasks();
    match cmd {
        TasksCommand::Create(args) => {
            let spec = args.request().into_spec()?;
            let task = tasks.create_task(ns, spec).await?;
            match args.format {
                Format::Json => print_resource("task", &TaskDto::from(&task))?,
                Format::Text => print_text(&format!("{}\n", task.id))?,
            }
        }
        TasksCommand::List { limit, format } => {
            let filter = TaskListFilter {
                namespace: ns.to_string(),
                limit: *limit,
                ..TaskListFilter::default()
            };
            let list = tasks.list_tasks(filter).await?;
            match format {
                Format::Json => {
                    print_resource("tasks", &list.iter().map(TaskDto::from).collect::<Vec<_>>())?
                }
                Format::Text => {
                    let mut out = String::new();
                    for t in &list {
                        let _ = writeln!(
                            out,
                            "{}  {:<6} {}",
                            t.id,
                            t.spec.execution_kind.map(|k| k.as_str()).unwrap_or(""),
                            t.latest_run_id
                                .as_ref()
                                .map(|r| format!("latest run {r}"))
                                .unwrap_or_else(|| "never started".into())
                        );
                    }
                    if list.is_empty() {
                        out.push_str("no tasks\n");
                    }
                    print_text(&out)?;
                }
            }
        }
        TasksCommand::Show { id, format } => {
            let id = TaskId::from(id.as_str());
            let task = tasks.get_task(ns, &id).await?;
            let runs = tasks.list_runs(ns, &id).await?;
            let approvals = tasks.list_approvals(ns, &id).await?;
            match format {
                Format::Json => print_resource(
                    "task",
                    &json!({
                        "task": TaskDto::from(&task),
                        "runs": runs.iter().map(TaskRunDto::from).collect::<Vec<_>>(),
                        "approvals": approvals.iter().map(TaskApprovalDto::from).collect::<Vec<_>>(),
                    }),
                )?,
                Format::Text => {
                    let mut out = format!(
                        "{}  {}\n",
                        task.id,
                        serde_json::to_string(&TaskDto::from(&task))?
                    );
                    for r in &runs {
                        out.push_str("  run ");
                        out.push_str(&run_line(r));
                    }
                    for a in &approvals {
                        let _ = writeln!(
                            out,
                            "  approval {}  {} {}  {}",
                            a.id,
                            a.kind.as_str(),
                            a.status.as_str(),
                            a.reason
                        );
                    }
                    print_text(&out)?;
                }
            }
        }
        TasksCommand::Start { id, wait, format } => {
            let id = TaskId::from(id.as_str());
            let workers = CancellationToken::new();
            let handles = if *wait {
                tasks.start_workers(workers.clone())
            } else {
                Vec::new()
            };
            let opts = StartOptions {
                started_by: Some(super::CLI_ACTOR.into()),
                ..StartOptions::default()
            };
            let run = tasks.start(ns, &id, opts).await?;
            if !*wait {
                print_run(&run, *format)?;
                return Ok(0);
            }
            let pending = tasks.list_approvals(ns, &id).await?;
            if let Some(a) = pending.iter().find(|a| a.run_id == run.id) {
                eprintln!(
                    "waiting for approval {} ({}): hecate tasks approve {} {}",
                    a.id, a.reason, id, a.id
                );
            }
            let end = print_events(tasks, ns, &id, &run.id, 0, true, *format).await;
            workers.cancel();
            for h in handles {
                let _ = h.await;
            }
            let end = end?;
            if *format == Format::Text {
                print_text(&run_line(&end))?;
            }
            return Ok(if end.status.as_str() == "completed" {
                0
            } else {
                1
            });
        }
        TasksCommand::Cancel(r) => {
            let (task, source) = r.ids();
            let run = tasks.cancel(ns, &task, &source).await?;
            print_run(&run, r.format)?;
        }
        TasksCommand::Retry(r) => {
            let (task, source) = r.ids();
            let run = tasks.retry(ns, &task, &source, None).await?;
            print_run(&run, r.format)?;
        }
        TasksCommand::Resume(r) => {
            let (task, source) = r.ids();
            let run = tasks.resume(ns, &task, &source, None).await?;
            print_run(&run, r.format)?;
        }
        TasksCommand::Continue { run: r, prompt } => {
            let (task, source) = r.ids();
            let run = tasks
                .continue_run(ns, &task, &source, prompt.clone(), None)
                .await?;
            print_run(&run, r.format)?;
        }
        TasksCommand::RetryFromTurn { run: r, turn } => {
            let (task, source) = r.ids();
            let run = tasks
                .retry_from_turn(ns, &task, &source, *turn, None)
                .await?;
            print_run(&run, r.format)?;
        }
        TasksCommand::Events {
            task,
            run,
            after,
            follow,
            format,
        } => {
            let (task, run) = (TaskId::from(task.as_str()), TaskRunId::from(run.as_str()));
            print_events(tasks, ns, &task, &run, *after, *follow, *format).await?;
        }
        TasksCommand::Patches(r) => {
            let (task, run) = r.ids();
            let patches = tasks.list_patches(ns, &task, Some(&run)).await?;
            let steps = tasks.list_steps(ns, &task, &run).await?;
            let artifacts = tasks.list_artifacts(ns, &task, Some(&run)).await?;
            let patch_dtos = patches
                .iter()
                .map(|p| Ok(TaskPatchDto::new(p, patch_content(p)?)))
                .collect::<Result<Vec<_>, crate::domain::HecateError>>()?;
            match r.format {
                Format::Json => print_resource(
                    "task_run_output",
                    &json!({
                        "steps": steps.iter().map(TaskStepDto::from).collect::<Vec<_>>(),
                        "artifacts": artifacts.iter().map(TaskArtifactDto::from).collect::<Vec<_>>(),
                        "patches": patch_dtos,
                    }),
                )?,
                Format::Text => {
                    let mut out = String::new();
                    for s in &steps {
                        let _ = writeln!(
                            out,
                            "step {} {} {}{}",
                            s.index,
                            s.kind,
                            s.status.as_str(),
                            s.exit_code
                                .map(|c| format!(" exit {c}"))
                                .unwrap_or_default()
                        );
                    }
                    for a in artifacts.iter().filter(|a| a.kind != "patch") {
                        let _ = writeln!(
                            out,
                            "--- {} ({} bytes{})\n{}",
                            a.name,
                            a.size_bytes,
                            if a.truncated { ", truncated" } else { "" },
                            a.content
                        );
                    }
                    for p in &patch_dtos {
                        let _ = writeln!(out, "patch {} {} {}", p.id, p.status, p.path);
                    }
                    print_text(&out)?;
                }
            }
        }
        TasksCommand::Approve(a) | TasksCommand::Reject(a) => {
            let approve = matches!(cmd, TasksCommand::Approve(_));
            let got = tasks
                .resolve_approval_as(
                    ns,
                    &TaskId::from(a.task.as_str()),
                    &TaskApprovalId::from(a.approval.as_str()),
                    approve,
                    a.note.clone(),
                    Some(super::CLI_ACTOR.into()),
                )
                .await?;
            match a.format {
                Format::Json => print_resource("task_approval", &TaskApprovalDto::from(&got))?,
                Format::Text => print_text(&format!("{} {}\n", got.id, got.status.as_str()))?,
            }
        }
    }
    Ok(0)
}
