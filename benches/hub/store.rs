//! `store`: append throughput (single messages and batches), the time to load a
//! session's last 50 messages across session sizes (as ratios against the
//! smallest session in the same run), and concurrent appends from several store
//! handles on one database, as replicas make them (none lost, none numbered
//! twice). SQLite in a temporary file by default; `--store postgres://…` runs
//! the same on PostgreSQL.

use crate::support::{TempDir, num, summarize};
use hecate::domain::ids::{SegmentId, SessionId};
use hecate::domain::message::{NewMessage, Role, RuntimeSnapshot};
use hecate::domain::session::{RuntimeKind, Session};
use hecate::store::{PostgresStore, SqliteStore, Store};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Arguments of the `store` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// Session sizes to load from (messages).
    #[arg(long, value_delimiter = ',', default_value = "1000,100000,1000000")]
    pub sizes: Vec<usize>,
    /// Single-message appends to time.
    #[arg(long, default_value_t = 2000)]
    pub single: usize,
    /// Messages per batch for the batched-append figure.
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// Store handles appending at once to one session, as replicas do.
    #[arg(long, default_value_t = 3)]
    pub replicas: usize,
    /// Appends each of them makes, all concurrently.
    #[arg(long, default_value_t = 1000)]
    pub concurrent: usize,
    /// The database: `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (an empty
    /// database; its tables are created) or, by default, a temporary SQLite file.
    #[arg(long)]
    pub store: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Loads of the last 50 messages timed per session size.
const LOADS: usize = 200;

async fn new_session(store: &dyn Store) -> anyhow::Result<Session> {
    let s = Session {
        provider: Some("bench".into()),
        model: Some("bench".into()),
        ..Session::new_idle("bench", SessionId::generate(), "bench", RuntimeKind::Model)
    };
    store.create_session(&s).await?;
    Ok(s)
}

fn message(i: usize) -> NewMessage {
    let role = if i.is_multiple_of(2) {
        Role::User
    } else {
        Role::Assistant
    };
    NewMessage::text(
        role,
        format!("message {i}: a typical short chat line of about eighty bytes for the benchmark."),
        RuntimeSnapshot {
            runtime_kind: RuntimeKind::Model,
            segment_id: SegmentId::from("seg_bench"),
            provider: Some("bench".into()),
            model: Some("bench".into()),
            adapter_id: None,
            task_id: None,
            task_run_id: None,
            capabilities: None,
        },
    )
}

/// One handle on the benchmark's database (each with its own connections).
pub(crate) async fn open(url: Option<&str>, file: &Path) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match url {
        Some(u) => Arc::new(PostgresStore::connect(u).await?),
        None => Arc::new(SqliteStore::open(file)?),
    })
}

/// `replicas` handles each appending `each` single messages to one session, all
/// at once; reports the rate and checks that every message got one sequence.
async fn concurrent_appends(
    url: Option<&str>,
    file: &Path,
    replicas: usize,
    each: usize,
) -> anyhow::Result<Value> {
    let mut handles = Vec::new();
    for _ in 0..replicas {
        handles.push(open(url, file).await?);
    }
    let s = new_session(handles[0].as_ref()).await?;
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (r, store) in handles.iter().enumerate() {
        for i in 0..each {
            let (store, id) = (store.clone(), s.id.clone());
            tasks.spawn(async move {
                store
                    .append_exchange(&id, vec![message(r * each + i)], None)
                    .await
            });
        }
    }
    let mut failed = 0;
    while let Some(done) = tasks.join_next().await {
        if !matches!(done, Ok(Ok(_))) {
            failed += 1;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let stored = handles[0].list_messages(&s.id, None, usize::MAX).await?;
    let sequences: HashSet<i64> = stored.iter().map(|m| m.sequence).collect();
    let expected = replicas * each;
    Ok(json!({
        "replicas": replicas,
        "appends": expected,
        "failed": failed,
        "stored": stored.len(),
        "lost": expected.saturating_sub(stored.len()),
        "duplicated_sequences": stored.len() - sequences.len(),
        "gap_free": stored.windows(2).all(|w| w[1].sequence == w[0].sequence + 1),
        "appends_per_s": expected as f64 / elapsed,
    }))
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &StoreArgs) -> anyhow::Result<Value> {
    let (single, batch) = (args.single, args.batch.max(1));
    let dir = TempDir::new("store")?;
    let file = dir.path().join("bench.db");
    let url = args.store.as_deref();
    let store = open(url, &file).await?;
    let s = new_session(store.as_ref()).await?;
    let started = Instant::now();
    for i in 0..single {
        store.append_exchange(&s.id, vec![message(i)], None).await?;
    }
    let single_rate = single as f64 / started.elapsed().as_secs_f64();
    let batched_total = (single * 10).max(batch);
    let started = Instant::now();
    let mut i = 0;
    while i < batched_total {
        let n = batch.min(batched_total - i);
        store
            .append_exchange(&s.id, (i..i + n).map(message).collect(), None)
            .await?;
        i += n;
    }
    let batched_rate = batched_total as f64 / started.elapsed().as_secs_f64();

    let mut loads = Vec::new();
    let mut base_median = None;
    for &size in &args.sizes {
        let s = new_session(store.as_ref()).await?;
        let fill = Instant::now();
        let mut i = 0;
        while i < size {
            let n = 10_000.min(size - i);
            store
                .append_exchange(&s.id, (i..i + n).map(message).collect(), None)
                .await?;
            i += n;
        }
        let fill_s = fill.elapsed().as_secs_f64();
        let mut samples = Vec::new();
        for _ in 0..LOADS {
            let t = Instant::now();
            let got = store.last_messages(&s.id, 50).await?;
            samples.push(t.elapsed().as_secs_f64() * 1e6);
            anyhow::ensure!(got.len() == 50.min(size), "loaded {} messages", got.len());
        }
        let summary = summarize(samples);
        let median = num(&summary, "median");
        let base = *base_median.get_or_insert(median);
        loads.push(json!({
            "session_messages": size,
            "fill_seconds": fill_s,
            "load_last_50_us": summary,
            "ratio_vs_smallest": if base > 0.0 { median / base } else { 0.0 },
        }));
    }
    let health = store.health().await?;
    let replicas = concurrent_appends(url, &file, args.replicas.max(1), args.concurrent).await?;
    Ok(json!({
        "benchmark": "store",
        "backend": health.backend,
        "concurrent_appends": replicas,
        "single_append_msgs_per_s": single_rate,
        "batched_append_msgs_per_s": batched_rate,
        "batch_size": batch,
        "batched_vs_single_ratio": batched_rate / single_rate,
        "load_last_50": loads,
        "database_bytes": health.size_bytes,
    }))
}
