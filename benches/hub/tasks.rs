//! `tasks`: the task runtime's queue and its overhead. `shell` runs of `true`
//! drained by one process with 1, 2 and 4 workers and by two pools with their own
//! store handles on one store (as two `hecate serve` processes share one store):
//! runs per second, how many times each run started (exactly once is the
//! contract), and create-to-terminal latency; and one `shell` task against
//! spawning the same command directly, unconfined and under bubblewrap. A SQLite
//! file by default; `--store postgres://…` runs the same on PostgreSQL.

use crate::support::{TempDir, num, summarize};
use hecate::adapters::sandbox::bwrap_path;
use hecate::domain::task::TaskEventFilter;
use hecate::domain::task::{ApprovalPolicy, ExecutionKind, TaskSpec};
use hecate::engine::tasks::{StartOptions, TaskConfig, TaskRuntime};
use hecate::store::{PostgresStore, SqliteStore, Store};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Arguments of the `tasks` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct TasksArgs {
    /// Runs drained per queue measurement.
    #[arg(long, default_value_t = 1000)]
    pub runs: usize,
    /// Single tasks timed against the direct command.
    #[arg(long, default_value_t = 100)]
    pub single: usize,
    /// Worker counts of one process the queue is drained with, one measurement each.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pub workers: Vec<usize>,
    /// The database: `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (an empty
    /// database; its tables are created) or, by default, a temporary SQLite file.
    #[arg(long)]
    pub store: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Where the benchmark's runtimes keep their store: each call of [`Db::open`] is
/// one more handle with its own connections, as another process has.
struct Db {
    url: Option<String>,
    file: std::path::PathBuf,
}

impl Db {
    async fn open(&self) -> anyhow::Result<Arc<dyn Store>> {
        Ok(match &self.url {
            Some(u) => Arc::new(PostgresStore::connect(u).await?),
            None => Arc::new(SqliteStore::open(&self.file)?),
        })
    }
}

/// A task runtime on its own store handle with `workers` workers.
async fn runtime(db: &Db, data: &Path, owner: &str, workers: usize) -> anyhow::Result<TaskRuntime> {
    let store = db.open().await?;
    let config = TaskConfig {
        approval_policy: ApprovalPolicy::parse("")?,
        data_dir: data.to_path_buf(),
        poll: Duration::from_millis(20),
        workers,
        ..TaskConfig::default()
    };
    let models = hecate::runtimes::model::ModelRuntime::default();
    Ok(TaskRuntime::new(store, models, config, owner.to_string()))
}

fn shell_true(network: bool, dir: &Path) -> TaskSpec {
    TaskSpec {
        execution_kind: Some(ExecutionKind::Shell),
        shell_command: "true".into(),
        sandbox_network: network,
        workspace_mode: hecate::domain::task::WorkspaceMode::InPlace,
        working_directory: dir.display().to_string(),
        ..TaskSpec::default()
    }
}

/// Creates and starts `n` tasks in namespace `ns` on `front`, waits until `pools`
/// drained them, and reports the rate, the latencies and how often each run
/// started.
async fn drain(
    front: &TaskRuntime,
    pools: &[TaskRuntime],
    ns: &str,
    n: usize,
    dir: &Path,
) -> anyhow::Result<Value> {
    let stop = CancellationToken::new();
    let mut events = front.subscribe();
    let mut created = HashMap::new();
    let started = Instant::now();
    for _ in 0..n {
        let task = front.create_task(ns, shell_true(true, dir)).await?;
        let run = front.start(ns, &task.id, StartOptions::default()).await?;
        created.insert(run.id.clone(), Instant::now());
    }
    let workers: Vec<_> = pools
        .iter()
        .flat_map(|p| p.start_workers(stop.clone()))
        .collect();
    let mut latencies = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(600);
    // Runs finished by another pool are only seen through the store.
    while latencies.len() < n && Instant::now() < deadline {
        let done = front
            .list_events(TaskEventFilter {
                namespace: ns.into(),
                event_types: vec!["run.finished".into(), "run.failed".into()],
                limit: usize::MAX,
                ..Default::default()
            })
            .await?;
        for e in &done {
            if let Some(t) = created.remove(&e.run_id) {
                latencies.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let _ = tokio::time::timeout(Duration::from_millis(20), events.recv()).await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    stop.cancel();
    for w in workers {
        let _ = w.await;
    }
    let starts = front
        .list_events(TaskEventFilter {
            namespace: ns.into(),
            event_types: vec!["run.started".into()],
            limit: usize::MAX,
            ..Default::default()
        })
        .await?
        .len();
    let failed = front
        .list_events(TaskEventFilter {
            namespace: ns.into(),
            event_types: vec!["run.failed".into()],
            limit: usize::MAX,
            ..Default::default()
        })
        .await?
        .len();
    anyhow::ensure!(created.is_empty(), "{} runs did not finish", created.len());
    Ok(json!({
        "runs": n,
        "pools": pools.len(),
        "runs_per_s": n as f64 / elapsed,
        "run_started_events": starts,
        "failed": failed,
        "exactly_once": starts == n,
        "create_to_terminal_ms": summarize(latencies),
    }))
}

/// The same command spawned directly.
async fn direct(program: &str, args: &[&str], dir: &Path) -> anyhow::Result<()> {
    let status = tokio::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .await?;
    anyhow::ensure!(status.success(), "{program} failed");
    Ok(())
}

/// One task through the runtime (its workers already running), to its end.
async fn one_task(rt: &TaskRuntime, spec: TaskSpec) -> anyhow::Result<()> {
    let mut events = rt.subscribe();
    let task = rt.create_task("bench", spec).await?;
    let run = rt.start("bench", &task.id, StartOptions::default()).await?;
    loop {
        let e = events.recv().await?;
        if e.run_id == run.id
            && e.event_type.starts_with("run.")
            && e.event_type != "run.created"
            && e.event_type != "run.queued"
            && e.event_type != "run.started"
        {
            anyhow::ensure!(e.event_type == "run.finished", "{e:?}");
            return Ok(());
        }
    }
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &TasksArgs) -> anyhow::Result<Value> {
    let tmp = TempDir::new("tasks")?;
    let dir = tmp.path().join("ws");
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;

    let db = Db {
        url: args.store.clone(),
        file: tmp.path().join("bench.db"),
    };
    // Each measurement drains its own namespace, unique to this run, so one
    // database serves them all (and a database used before does not count).
    let tag = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let mut by_workers = Vec::new();
    for &n in &args.workers {
        let rt = runtime(&db, tmp.path(), &format!("pool-w{n}"), n).await?;
        let ns = format!("bench-w{n}-{tag}");
        let mut report = drain(&rt, std::slice::from_ref(&rt), &ns, args.runs, &dir).await?;
        report["workers"] = json!(n);
        by_workers.push(report);
    }

    let a = runtime(&db, tmp.path(), "pool-a", 2).await?;
    let b = runtime(&db, tmp.path(), "pool-b", 2).await?;
    let two = format!("bench-two-{tag}");
    let two_pools = drain(&a, &[a.clone(), b], &two, args.runs, &dir).await?;

    // Overhead of one task against the same command spawned directly.
    let rt = runtime(&db, tmp.path(), "pool-s", 2).await?;
    let stop = CancellationToken::new();
    let workers = rt.start_workers(stop.clone());
    let bwrap = bwrap_path();
    let mut direct_ms = Vec::new();
    let mut hecate_ms = Vec::new();
    let mut direct_bwrap_ms = Vec::new();
    let mut confined_ms = Vec::new();
    let bwrap_args = |d: &Path| {
        let ws = d.display().to_string();
        vec![
            "--bind".to_string(),
            "/".into(),
            "/".into(),
            "--dev".into(),
            "/dev".into(),
            "--proc".into(),
            "/proc".into(),
            "--bind".into(),
            ws.clone(),
            ws.clone(),
            "--unshare-net".into(),
            "--unshare-pid".into(),
            "--die-with-parent".into(),
            "--new-session".into(),
            "--chdir".into(),
            ws,
            "--".into(),
            "/bin/sh".into(),
            "-c".into(),
            "true".into(),
        ]
    };
    for i in 0..=args.single {
        let t = Instant::now();
        direct("/bin/sh", &["-c", "true"], &dir).await?;
        let d = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        one_task(&rt, shell_true(true, &dir)).await?;
        let h = t.elapsed().as_secs_f64() * 1e3;
        if i > 0 {
            direct_ms.push(d);
            hecate_ms.push(h);
        }
        if let Some(bw) = &bwrap {
            let argv = bwrap_args(&dir);
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let t = Instant::now();
            direct(&bw.display().to_string(), &argv, &dir).await?;
            let d = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            one_task(&rt, shell_true(false, &dir)).await?;
            let h = t.elapsed().as_secs_f64() * 1e3;
            if i > 0 {
                direct_bwrap_ms.push(d);
                confined_ms.push(h);
            }
        }
    }
    stop.cancel();
    for w in workers {
        let _ = w.await;
    }
    let (d, h) = (summarize(direct_ms), summarize(hecate_ms));
    let added = num(&h, "median") - num(&d, "median");
    let backend = if db.url.is_some() {
        "postgres"
    } else {
        "sqlite"
    };
    let mut report = json!({
        "benchmark": "tasks",
        "backend": backend,
        "queue_by_workers": by_workers,
        "queue_two_pools": two_pools,
        "single": args.single,
        "direct_sh_ms": d,
        "task_unconfined_ms": h,
        "median_added_ms_unconfined": added,
        "note": "Queue: runs created and started first, then drained by one TaskRuntime per worker count (--workers); two pools = two TaskRuntimes of 2 workers with their own store connections on one store. Single: create + start + claim + workspace + spawn + capture + finish, to run.finished, vs tokio::process spawning the same command.",
    });
    if bwrap.is_some() {
        let (bd, bh) = (summarize(direct_bwrap_ms), summarize(confined_ms));
        report["direct_bwrap_ms"] = bd.clone();
        report["task_confined_ms"] = bh.clone();
        report["median_added_ms_confined"] = json!(num(&bh, "median") - num(&bd, "median"));
    }
    Ok(report)
}
